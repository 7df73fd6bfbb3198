//! Looney's Martian Chess for four players on the 8 x 8 board
//! (`docs/rules/martian-chess.md` §14 and §15, "the spec"; §2-§7 give the
//! pieces, their moves and field promotion, shared with the two-player game).
//!
//! * [`MartianChess4`]: the game state, a small `Copy` value built on three
//!   `u64` bitboards (one per piece kind; pieces have no owner, §2; a seat
//!   controls the pieces in its quadrant, §14.1), implementing [`GameState`].
//! * [`Martian4Rules`]: the switches of §15 that apply to four players
//!   (first seat, turn order, teams, field promotion, clock mode and plies,
//!   empty-quadrant tie, move cap).
//! * [`Seat`]: SW, NW, NE, SE, named after their corners (§14.1).
//!
//! Squares are `file + 8 * (rank - 1)` (§14.1: a1 = 0, h1 = 7, a8 = 56,
//! h8 = 63). Quadrants: SW a1-d4, NW a5-d8, NE e5-h8, SE e1-h4.
//!
//! # Teams and the two-valued [`Side`]
//! [`GameState`] knows two sides, and its search negates values between plies
//! of different sides. In the **team game** (the default, §14.7) the side to
//! move is the mover's **team**:
//!
//! * [`Side::South`] = team **SW + NE** (the team of the default first seat);
//! * [`Side::North`] = team **NW + SE**.
//!
//! In both turn orders the teams alternate (§14.3: the partner is two seats
//! after you), so consecutive plies belong to different sides, exactly as in a
//! two-player game, and [`Outcome::value_for`] gives the §14.7 result values
//! (+1 / -1 per team, 0 for a draw). The seat itself is
//! [`MartianChess4::seat_to_move`]; the scores per seat are
//! [`MartianChess4::scores`].
//!
//! In **free-for-all** (`teams = false`) a result is a value per seat
//! ([`MartianChess4::seat_values`], §14.7: `(4p - 1) / 3` for a share `p` of the
//! win, summing to 0), which a two-sided interface cannot express. The
//! [`GameState`] methods then still give a well-defined **team view**:
//! [`GameState::side_to_move`] is the mover's team as above, and
//! [`GameState::outcome`]'s winner is the team whose two seats' free-for-all
//! values add up to more (a draw when both sums are 0); for example a sole
//! winner's team wins, and a win shared by SW and NW is a draw.
//! [`GameState::final_score_difference`] is the team score difference in both
//! modes. The vector-valued search uses [`GameState::num_players`] (4),
//! [`GameState::player_to_move`] (the seat index) and
//! [`GameState::player_values`] (= [`MartianChess4::seat_values`]).
//!
//! # Clock flag
//! Under [`ClockMode::Manual`] a move may call the clock (§14.5): such a move
//! is the [`Move`] with [`CALL_CLOCK`] added to `to`; its text ends with `*`
//! and its policy index is the plain move's + 4096.

mod encode;
mod eval;
mod movegen;
mod notation;
mod rules;
mod tables;
mod zobrist;

pub use crate::pyramids::notation::MAX_SCORE;
pub use crate::pyramids::{ClockMode, EmptyZoneTie as EmptyQuadrantTie, Piece, CALL_CLOCK};
pub use encode::{
    canonical_square, ACTION_ENCODING, INPUT_PLANES, MAX_MOVES_MC4, NUM_ACTIONS_MC4, ORIENTATION, PLANE_DESCRIPTIONS,
    RULES_SPEC_VERSION, SQUARES_TEXT,
};
pub use eval::Martian4Eval;
pub use rules::{Martian4Rules, TurnOrder};
pub use tables::{reflect_diagonal, rotate_square, QUADS};

use serde::{Deserialize, Serialize};

use crate::error::RulesError;
use crate::game::{is_legal, mix_key, EncodingDescription, EndReason, GameKind, GameState, Move, Outcome, Side};
use crate::pyramids::{self, Pieces, PyramidState, View};
use tables::{rotate_set, Board8x8, ROTATE};

/// A seat of the four-player game, named after its corner (§14.1). The
/// discriminant is the index used for scores and quadrants: the clockwise
/// order from SW.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Seat {
    /// South-west: quadrant a1-d4, corner a1.
    SW = 0,
    /// North-west: quadrant a5-d8, corner a8.
    NW = 1,
    /// North-east: quadrant e5-h8, corner h8.
    NE = 2,
    /// South-east: quadrant e1-h4, corner h1.
    SE = 3,
}

impl Seat {
    /// The four seats in index order (also the clockwise turn order from SW).
    pub const ALL: [Seat; 4] = [Seat::SW, Seat::NW, Seat::NE, Seat::SE];

    /// 0 SW, 1 NW, 2 NE, 3 SE: the order of the score fields (§14.8).
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The seat with index `i % 4`.
    #[inline(always)]
    pub const fn from_index(i: usize) -> Seat {
        match i % 4 {
            0 => Seat::SW,
            1 => Seat::NW,
            2 => Seat::NE,
            _ => Seat::SE,
        }
    }

    /// The seat's team as a [`Side`] (module docs): SW and NE are
    /// [`Side::South`], NW and SE are [`Side::North`].
    #[inline(always)]
    pub const fn team(self) -> Side {
        if (self as usize).is_multiple_of(2) {
            Side::South
        } else {
            Side::North
        }
    }

    /// The partner in the opposite corner (§14.1).
    #[inline(always)]
    pub const fn partner(self) -> Seat {
        Seat::from_index(self as usize + 2)
    }

    /// The seat's quadrant as a set of squares (§14.1).
    #[inline(always)]
    pub const fn quadrant(self) -> u64 {
        QUADS[self as usize]
    }

    /// The seat whose quadrant holds `sq` (`sq < 64`).
    #[inline(always)]
    pub const fn of_square(sq: u8) -> Seat {
        let east = sq % 8 >= 4;
        let north = sq >= 32;
        match (north, east) {
            (false, false) => Seat::SW,
            (true, false) => Seat::NW,
            (true, true) => Seat::NE,
            (false, true) => Seat::SE,
        }
    }

    /// `SW`, `NW`, `NE` or `SE` (the mover field of §14.8).
    pub const fn name(self) -> &'static str {
        match self {
            Seat::SW => "SW",
            Seat::NW => "NW",
            Seat::NE => "NE",
            Seat::SE => "SE",
        }
    }

    /// The seat that `quarter_turns` counterclockwise quarter turns of the
    /// board take this seat's quadrant to (SW -> SE -> NE -> NW -> SW).
    #[inline(always)]
    pub const fn rotated(self, quarter_turns: u8) -> Seat {
        Seat::from_index(self as usize + 4 - quarter_turns as usize % 4)
    }
}

impl std::fmt::Display for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A four-player Martian Chess state (§14): placement, seat to move, the four
/// scores, the deadlock clock (§14.5), the quiet and ply counters, the rules,
/// the incremental Zobrist hash and the stored outcome. It is `Copy` and
/// about 100 bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MartianChess4 {
    seat: Seat,
    /// Bitboards of Pawns, Drones, Queens.
    bb: [u64; 3],
    hash: u64,
    /// Scores of SW, NW, NE, SE.
    scores: [u32; 4],
    /// 0 = clock not called, `1 + countdown` when called (§14.5).
    clock: u32,
    ply: u32,
    quiet: u32,
    rules: Martian4Rules,
    outcome: Option<Outcome>,
}

/// The initial position string (§14.2, §14.8), SW to move.
pub const INITIAL_POSITION: &str = "QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP2PPD/QDP2PDQ/QQD2DQQ SW 0 0 0 0 - 0 0";

impl MartianChess4 {
    /// The set of squares holding `piece` (bit `sq`).
    #[inline]
    pub fn pieces(&self, piece: Piece) -> u64 {
        self.bb[piece as usize]
    }

    /// All occupied squares.
    #[inline]
    pub fn occupied(&self) -> u64 {
        self.bb.occupied()
    }

    /// The piece on `sq`, if any (`None` for `sq >= 64`).
    #[inline]
    pub fn piece_at(&self, sq: u8) -> Option<Piece> {
        self.bb.piece_at(sq)
    }

    /// The seat to move (§14.3). [`GameState::side_to_move`] is its team.
    #[inline]
    pub fn seat_to_move(&self) -> Seat {
        self.seat
    }

    /// The seat that made the previous ply: the seat before the mover in turn
    /// order (§14.6), also in a loaded position.
    #[inline]
    pub fn last_mover(&self) -> Seat {
        self.rules.previous_seat(self.seat)
    }

    /// Consecutive plies, of any seats, without a capture (§14.5).
    #[inline]
    pub fn quiet(&self) -> u32 {
        self.quiet
    }

    /// Scores (pips captured, §14.4) of SW, NW, NE, SE, indexed by [`Seat::index`].
    #[inline]
    pub fn scores(&self) -> [u32; 4] {
        self.scores
    }

    /// Team scores (§14.7), indexed by [`Side::index`]: `[SW + NE, NW + SE]`.
    #[inline]
    pub fn team_scores(&self) -> [u32; 2] {
        let s = self.scores;
        [s[0] + s[2], s[1] + s[3]]
    }

    /// The deadlock-clock countdown (§14.5): `None` while the clock is not
    /// called, else `Some(clock_plies..=1)`, or `Some(0)` once it ran out.
    #[inline]
    pub fn clock_countdown(&self) -> Option<u32> {
        (self.clock != 0).then(|| self.clock - 1)
    }

    /// The per-seat result values of a finished game (§14.7), indexed by
    /// [`Seat::index`], or `None` while the game is not over.
    ///
    /// * Teams: +1 for both seats of the winning team, -1 for both losers, 0
    ///   for all four on a draw.
    /// * Free-for-all: `(4p - 1) / 3` for a seat's share `p` of the win (1 for
    ///   a sole winner, `1/k` for each of `k` seats sharing it, else 0): a
    ///   sole winner +1 and the others -1/3, two sharing +1/3 each, and so on.
    ///
    /// The four values add up to 0 (up to `f32` rounding in free-for-all).
    pub fn seat_values(&self) -> Option<[f32; 4]> {
        let o = self.outcome?;
        if self.rules.teams {
            Some(Seat::ALL.map(|s| o.value_for(s.team())))
        } else {
            let (winners, count) = self.ffa_winners(o.reason, self.last_mover());
            Some(Seat::ALL.map(|s| {
                let p = if winners >> s.index() & 1 != 0 { 1.0 / count as f32 } else { 0.0 };
                (4.0 * p - 1.0) / 3.0
            }))
        }
    }

    /// The free-for-all winners of a game ended by `reason` (§14.7) as a bit
    /// set of seat indices and their number: the seats tied for the top, or
    /// the last mover alone when an empty quadrant ended the game under
    /// `LastMoverWins` and it is among them.
    fn ffa_winners(&self, reason: EndReason, last_mover: Seat) -> (u32, u32) {
        let top = self.scores.iter().copied().max().unwrap_or(0);
        let tied = (0..4).filter(|&i| self.scores[i] == top).fold(0u32, |m, i| m | 1 << i);
        let last = last_mover.index();
        if reason == EndReason::EmptyZone
            && self.rules.tie_on_empty_zone == EmptyQuadrantTie::LastMoverWins
            && tied >> last & 1 != 0
        {
            (1 << last, 1)
        } else {
            (tied, tied.count_ones())
        }
    }

    /// The game scored with `reason` (§14.7), `last_mover` having made the
    /// final ply; in free-for-all the team view of the module docs.
    pub(crate) fn scored(&self, reason: EndReason, last_mover: Seat) -> Outcome {
        let winner = if self.rules.teams {
            let [a, b] = self.team_scores();
            let tie = (reason == EndReason::EmptyZone
                && self.rules.tie_on_empty_zone == EmptyQuadrantTie::LastMoverWins)
                .then(|| last_mover.team());
            pyramids::higher_score(a, b, tie)
        } else {
            // Team value sum of SW + NE: (4 (p_SW + p_NE) - 2) / 3, which has
            // the sign of 2 (p_SW + p_NE) - 1 = (2 c - k) / k with c of the k
            // winners in that team.
            let (winners, k) = self.ffa_winners(reason, last_mover);
            let c = (winners & 0b0101).count_ones();
            pyramids::higher_score(2 * c, k, None)
        };
        Outcome { winner, reason }
    }

    /// End checks in the order of §14.6, `last_mover` being the seat that
    /// made the previous ply.
    fn compute_outcome(&self, last_mover: Seat) -> Option<Outcome> {
        let occ = self.occupied();
        let empty_quadrant = QUADS.iter().any(|&quad| occ & quad == 0);
        let reason = pyramids::end_reason(empty_quadrant, self.rules.switches(), self.clock, self.ply, || {
            self.has_legal_move()
        })?;
        Some(self.scored(reason, last_mover))
    }

    /// Computes the hash from scratch (§14.8 state minus the counters).
    fn full_hash(&self) -> u64 {
        let clock = zobrist::clock(self.clock);
        let h = pyramids::zobrist::position_hash(&self.bb, &zobrist::PIECE, &self.scores, zobrist::score, clock);
        h ^ zobrist::SEAT[self.seat.index()]
    }

    /// Builds a state from its parts (used by the parser, `new_game` and the
    /// rotations) and fills in the hash and the outcome.
    pub(crate) fn from_parts(
        bb: [u64; 3],
        seat: Seat,
        scores: [u32; 4],
        clock: u32,
        quiet: u32,
        ply: u32,
        rules: Martian4Rules,
    ) -> MartianChess4 {
        let mut s = MartianChess4 { bb, hash: 0, scores, ply, quiet, clock, rules, seat, outcome: None };
        s.hash = s.full_hash();
        s.outcome = s.compute_outcome(s.last_mover());
        s
    }

    /// The position turned `quarter_turns` quarter turns counterclockwise
    /// (§14.9): every piece moved to [`rotate_square`], each score moved with
    /// its quadrant ([`Seat::rotated`]), the mover likewise; counters, clock
    /// and rules unchanged. Its legal moves are exactly the rotated legal
    /// moves, and its perft is the same.
    pub fn rotated(&self, quarter_turns: u8) -> MartianChess4 {
        let k = quarter_turns % 4;
        let bb = self.bb.map(|b| rotate_set(k, b));
        let mut scores = [0u32; 4];
        for s in Seat::ALL {
            scores[s.rotated(k).index()] = self.scores[s.index()];
        }
        MartianChess4::from_parts(bb, self.seat.rotated(k), scores, self.clock, self.quiet, self.ply, self.rules)
    }

    /// The position in the canonical orientation of the seat to move (§14.9):
    /// [`MartianChess4::rotated`] by the mover's index, so that the mover is SW.
    pub fn canonical(&self) -> MartianChess4 {
        self.rotated(self.seat.index() as u8)
    }

    /// The mirror image in the a1-h8 diagonal ([`reflect_diagonal`]) played
    /// under the other turn order (§14.10): SW and NE keep their quadrants,
    /// NW and SE swap quadrants and scores. Its legal moves are exactly the
    /// reflected legal moves, and its perft is the same.
    pub fn reflected(&self) -> MartianChess4 {
        let reflect = |b: u64| {
            let mut out = 0u64;
            let mut rest = b;
            while rest != 0 {
                out |= 1u64 << reflect_diagonal(rest.trailing_zeros() as u8);
                rest &= rest - 1;
            }
            out
        };
        let swap = |s: Seat| match s {
            Seat::NW => Seat::SE,
            Seat::SE => Seat::NW,
            s => s,
        };
        let [a, b, c, d] = self.scores;
        let mut rules = self.rules;
        rules.turn_order = match rules.turn_order {
            TurnOrder::Clockwise => TurnOrder::Counterclockwise,
            TurnOrder::Counterclockwise => TurnOrder::Clockwise,
        };
        rules.first_seat = swap(rules.first_seat);
        MartianChess4::from_parts(
            self.bb.map(reflect),
            swap(self.seat),
            [a, d, c, b],
            self.clock,
            self.quiet,
            self.ply,
            rules,
        )
    }

    /// The legal move with policy index `index` (§14.9, the inverse of
    /// [`GameState::action_index`]), or `None` if that index names no legal
    /// move here.
    pub fn move_for_action(&self, index: usize) -> Option<Move> {
        encode::move_of_action(self.seat, index).filter(|&mv| is_legal(self, mv))
    }

    /// The text board (§14.2/§14.8 layout with the canals) turned
    /// `quarter_turns` quarter turns counterclockwise, so that e.g. the
    /// seat with index `k` sees its corner at the bottom left with
    /// `quarter_turns = k`; the file and rank labels turn with the squares.
    pub fn board_text_rotated(&self, quarter_turns: u8) -> String {
        notation::board_text(self, quarter_turns % 4)
    }

    /// `<from><to>` text of a move, `*` appended for the clock call (§14.4,
    /// §14.5), e.g. `c1e1`.
    pub fn move_text(mv: Move) -> String {
        notation::SYNTAX.move_text(mv)
    }

    /// `rotate_square` applied to both squares of `mv`, keeping the clock flag.
    pub fn rotate_move(quarter_turns: u8, mv: Move) -> Move {
        let k = (quarter_turns % 4) as usize;
        Move::new(ROTATE[k][mv.from as usize & 63], ROTATE[k][mv.to as usize & 63] | (mv.to & CALL_CLOCK))
    }
}

impl GameState for MartianChess4 {
    type Rules = Martian4Rules;

    /// `martian-chess-4p` in the registry.
    const KIND: GameKind = GameKind::MartianChess4p;
    /// §14.9 (the encoding module's constants).
    const ENCODING: EncodingDescription = EncodingDescription {
        rules_document: "docs/rules/martian-chess.md",
        rules_version: encode::RULES_SPEC_VERSION,
        orientation: encode::ORIENTATION,
        planes: &encode::PLANE_DESCRIPTIONS,
        action_encoding: encode::ACTION_ENCODING,
        squares: encode::SQUARES_TEXT,
    };
    /// §14.9: `from' * 64 + to'` in the canonical orientation, + 4096 for a
    /// move that calls the clock under `Manual`: 8192 so that every mode fits
    /// one policy head ([`Martian4Rules::num_actions`] is 4096 outside
    /// `Manual`; the upper half is then never used).
    const NUM_ACTIONS: usize = encode::NUM_ACTIONS_MC4;
    /// 19 planes of 8 x 8 (§14.9, [`PLANE_DESCRIPTIONS`]).
    const INPUT_SHAPE: [usize; 3] = [encode::INPUT_PLANES, 8, 8];
    /// A proven bound, see [`MAX_MOVES_MC4`].
    const MAX_MOVES: usize = encode::MAX_MOVES_MC4;

    fn new_game(rules: &Martian4Rules) -> Result<Self, RulesError> {
        rules.validate()?;
        let s = Self::from_position(INITIAL_POSITION, rules)?;
        // The setup is unchanged by quarter turns (§14.2): only the mover changes.
        Ok(MartianChess4::from_parts(s.bb, rules.first_seat, [0; 4], 0, 0, 0, *rules))
    }

    /// The mover's team (module docs): SW, NE -> South; NW, SE -> North.
    #[inline]
    fn side_to_move(&self) -> Side {
        self.seat.team()
    }

    /// The team names `SW+NE` and `NW+SE` (module docs).
    fn side_name(side: Side) -> &'static str {
        ["SW+NE", "NW+SE"][side.index()]
    }

    /// The seat to move (§14.3), in both variants.
    fn mover_name(&self) -> &'static str {
        self.seat.name()
    }

    /// The team (as [`GameState::side_name`]) in the team game; the seat
    /// with index `player` in free-for-all.
    fn player_name(&self, player: usize) -> &'static str {
        if self.rules.teams {
            Self::side_name(Side::ALL[player % 2])
        } else {
            Seat::from_index(player).name()
        }
    }

    /// 2 in the team game (the value is per team), 4 in free-for-all (a
    /// value per seat, §14.7).
    #[inline]
    fn num_players(&self) -> usize {
        if self.rules.teams {
            2
        } else {
            4
        }
    }

    /// The team index in the team game; the seat index (SW 0, NW 1, NE 2,
    /// SE 3) in free-for-all.
    #[inline]
    fn player_to_move(&self) -> usize {
        if self.rules.teams {
            self.seat.team().index()
        } else {
            self.seat.index()
        }
    }

    /// Team game: the team values (South = SW + NE, North = NW + SE; +1, -1
    /// or 0 each). Free-for-all: [`MartianChess4::seat_values`] (§14.7).
    fn player_values(&self) -> Option<[f32; crate::game::MAX_PLAYERS]> {
        let o = self.outcome?;
        if self.rules.teams {
            Some([o.value_for(Side::South), o.value_for(Side::North), 0.0, 0.0])
        } else {
            self.seat_values()
        }
    }

    #[inline]
    fn play_unchecked(&mut self, mv: Move) {
        debug_assert!(self.outcome.is_none(), "play_unchecked on a finished game");
        let call = mv.to & CALL_CLOCK != 0;
        let to = mv.to & !CALL_CLOCK;
        let me = self.seat.index();
        let mut h = self.hash;
        let (dh, capture) = pyramids::play_pieces(
            &mut self.bb,
            &mut self.scores,
            me,
            mv.from,
            to,
            QUADS[me],
            &zobrist::PIECE,
            zobrist::score,
        );
        h ^= dh;
        let mover = self.seat;
        self.seat = self.rules.next_seat(mover);
        h ^= zobrist::SEAT[me] ^ zobrist::SEAT[self.seat.index()];
        self.ply += 1;
        // §14.5: quiet counter and clock.
        self.quiet = if capture { 0 } else { self.quiet.saturating_add(1) };
        let old = self.clock;
        self.clock = pyramids::next_clock(self.rules.clock, old, capture, self.quiet, self.rules.clock_plies, call);
        if old != self.clock {
            h ^= zobrist::clock(old) ^ zobrist::clock(self.clock);
        }
        self.hash = h;
        self.outcome = self.compute_outcome(mover);
    }

    /// The Zobrist hash (placement, seat to move, scores, clock) mixed with
    /// what else the planes of §14.9 show: quiet plies capped at
    /// `clock_plies` (plane 17), the ply capped at `max_plies` and
    /// `max_plies` itself (plane 18), the clock state once more and
    /// `clock_plies` (planes 16-17), and the turn order (the seat order of
    /// planes 0-15).
    fn input_key(&self) -> u64 {
        let r = &self.rules;
        let counters = u64::from(self.ply.min(r.max_plies)) | u64::from(self.quiet.min(r.clock_plies)) << 32;
        let config = u64::from(r.max_plies) | u64::from(r.clock_plies) << 32;
        let extra = u64::from(self.clock) | u64::from(r.turn_order == TurnOrder::Counterclockwise) << 32;
        mix_key(self.hash ^ crate::game::mix64(extra ^ 0x4D43_3443_4C4F_434B), counters, config)
    }

    fn board_text(&self) -> String {
        notation::board_text(self, 0)
    }

    /// `Side::South` (SW + NE): north at the top; `Side::North` (NW + SE): the
    /// board turned half a turn.
    fn board_text_from(&self, bottom: Side) -> String {
        notation::board_text(self, if bottom == Side::North { 2 } else { 0 })
    }

    #[inline]
    fn action_index(&self, mv: Move) -> usize {
        encode::action_index(self.seat, mv)
    }

    crate::pyramids::shared_game_state_methods!(Martian4Rules);
}

impl PyramidState for MartianChess4 {
    type Board = Board8x8;

    /// The mover's quadrant (§14.1), the team scores (§14.7), no ban
    /// (§14.4), the clock call flag while it may be called (§14.5).
    #[inline(always)]
    fn view(&self) -> View<u64> {
        View {
            zone: QUADS[self.seat.index()],
            bb: self.bb,
            clock: self.clock,
            rules: self.rules.switches(),
            scores: self.team_scores(),
            flag: if self.may_call_clock() { CALL_CLOCK } else { 0 },
            ban: None,
        }
    }
}
