//! Looney's Martian Chess, two players on a 4 x 8 board
//! (`docs/rules/martian-chess.md`, "the spec").
//!
//! * [`MartianChess`]: the game state, a small `Copy` value built on three `u32`
//!   bitboards (one per piece kind; pieces have no owner, spec §2), implementing
//!   [`GameState`].
//! * [`MartianRules`]: the two-player switches of spec §15.
//!
//! Squares are `file + 4 * (rank - 1)` (spec §1); South owns ranks 1-4 and by
//! default moves first (spec §3).

mod bitboard;
mod encode;
mod eval;
mod movegen;
pub(crate) mod notation;
mod rules;
mod tables;
mod zobrist;

pub use crate::pyramids::notation::MAX_SCORE;
pub use crate::pyramids::{ClockMode, EmptyZoneTie, Piece};
pub use bitboard::{Bitboard, Squares};
pub use encode::{
    plane_descriptions, ACTION_ENCODING, INPUT_PLANES, MAX_MOVES_MC, NUM_ACTIONS_MC, PLANE_DESCRIPTIONS,
    RULES_SPEC_VERSION,
};
pub use eval::MartianEval;
pub use rules::MartianRules;

use crate::error::RulesError;
use crate::game::{is_legal, mix_key, EncodingDescription, EndReason, GameKind, GameState, Move, Outcome, Side};
use crate::pyramids::{self, Geometry, Pieces, PyramidState, View, DRONE, NONE, PAWN};
use tables::{Board4x8, ZONES};

/// A two-player Martian Chess game state (spec §1-§10): placement, side to move,
/// scores, the previous ply (for the no-undo rule, spec §8), the deadlock clock
/// (spec §9.2), the quiet and ply counters, the incremental Zobrist hash and the
/// stored outcome. It is `Copy` and about 64 bytes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MartianChess {
    /// Bitboards of Pawns, Drones, Queens.
    bb: [u32; 3],
    scores: [u32; 2],
    hash: u64,
    ply: u32,
    quiet: u32,
    rules: MartianRules,
    /// Previous ply `(from, to)`, `NONE` if none.
    last_from: u8,
    last_to: u8,
    /// 0 = clock not called, `1 + countdown` when called (spec §9.2).
    clock: u8,
    side: Side,
    outcome: Option<Outcome>,
}

/// The initial position string (spec §10).
pub const INITIAL_POSITION: &str = "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0";

impl MartianChess {
    /// The set of squares holding `piece`.
    #[inline]
    pub fn pieces(&self, piece: Piece) -> Bitboard {
        Bitboard(self.bb[piece as usize])
    }

    /// All occupied squares.
    #[inline]
    pub fn occupied(&self) -> Bitboard {
        Bitboard(self.bb.occupied())
    }

    /// The piece on `sq` (`sq < 32`), if any.
    #[inline]
    pub fn piece_at(&self, sq: u8) -> Option<Piece> {
        self.bb.piece_at(sq)
    }

    /// Occupied squares of the opponent's zone that a piece in `side`'s zone
    /// reaches in one move (spec §5, §6): the captures `side` would have if it
    /// were to move, ignoring the no-undo ban (spec §8). For evaluation heuristics.
    pub fn capture_targets(&self, side: Side) -> Bitboard {
        let occ = self.bb.occupied();
        let zone = ZONES[side.index()].0;
        let enemy = occ & !zone;
        let mut acc = 0u32;
        for sq in Bitboard(occ & zone).squares() {
            let s = sq as usize;
            acc |= match self.bb.kind_at(sq) {
                PAWN => Board4x8::pawn_steps(s),
                DRONE => Board4x8::drone_attacks(s, occ),
                _ => Board4x8::queen_attacks(s, occ),
            };
        }
        Bitboard(acc & enemy)
    }

    /// Squares of the zone of `side` (spec §1).
    #[inline]
    pub fn zone(side: Side) -> Bitboard {
        ZONES[side.index()]
    }

    /// The previous ply, which the no-undo rule (spec §8) refers to.
    #[inline]
    pub fn last_move(&self) -> Option<Move> {
        (self.last_from != NONE).then(|| Move::new(self.last_from, self.last_to))
    }

    /// Scores (pips captured, spec §6), indexed by [`Side::index`].
    #[inline]
    pub fn scores(&self) -> [u32; 2] {
        self.scores
    }

    /// The deadlock-clock countdown (spec §9.2): `None` while the clock is not
    /// called, else `Some(7..=1)`, or `Some(0)` once it ran out.
    #[inline]
    pub fn clock_countdown(&self) -> Option<u8> {
        (self.clock != 0).then(|| self.clock - 1)
    }

    /// Consecutive plies without a capture (spec §9.2).
    #[inline]
    pub fn quiet(&self) -> u32 {
        self.quiet
    }

    /// The move banned this turn by the no-undo rule (spec §8), as `(from, to)`:
    /// the previous ply `(f, t)` bans `t -> f` when the rule is on and `t` holds a
    /// piece in the zone of the side to move.
    #[inline(always)]
    pub fn banned_move(&self) -> Option<Move> {
        self.active_ban().map(|(f, t)| Move::new(f, t))
    }

    #[inline(always)]
    pub(crate) fn active_ban(&self) -> Option<(u8, u8)> {
        let t = self.last_to;
        if !self.rules.no_undo || t == NONE {
            return None;
        }
        let own = self.bb.occupied() & ZONES[self.side.index()].0;
        (own >> t & 1 != 0).then_some((t, self.last_from))
    }

    /// End checks in the order of spec §9.5 (then §9.4), `last_mover` being the
    /// side that made the previous ply: the game scored (higher score wins),
    /// a tie on an empty zone decided by `tie_on_empty_zone`, other ties drawn.
    fn compute_outcome(&self, last_mover: Side) -> Option<Outcome> {
        let occ = self.bb.occupied();
        let empty_zone = occ & ZONES[0].0 == 0 || occ & ZONES[1].0 == 0;
        let reason = pyramids::end_reason(empty_zone, self.rules.switches(), self.clock.into(), self.ply, || {
            self.has_legal_move()
        })?;
        let tie = match (reason, self.rules.tie_on_empty_zone) {
            (EndReason::EmptyZone, EmptyZoneTie::LastMoverWins) => Some(last_mover),
            _ => None,
        };
        let [s, n] = self.scores;
        Some(Outcome { winner: pyramids::higher_score(s, n, tie), reason })
    }

    /// Computes the hash from scratch (spec §10 state minus the counters).
    fn full_hash(&self) -> u64 {
        let clock = zobrist::clock(self.clock);
        let mut h = pyramids::zobrist::position_hash(&self.bb, &zobrist::PIECE, &self.scores, zobrist::score, clock);
        if self.side == Side::North {
            h ^= zobrist::NORTH_TO_MOVE;
        }
        if let Some((f, t)) = self.active_ban() {
            h ^= zobrist::BAN[f as usize * 32 + t as usize];
        }
        h
    }

    /// Builds a state from its parts (used by the parser and `new_game`) and
    /// fills in the hash and the outcome.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        bb: [u32; 3],
        side: Side,
        scores: [u32; 2],
        last: Option<(u8, u8)>,
        clock: u8,
        quiet: u32,
        ply: u32,
        rules: MartianRules,
    ) -> MartianChess {
        let (last_from, last_to) = last.unwrap_or((NONE, NONE));
        let mut s =
            MartianChess { bb, hash: 0, scores, ply, quiet, rules, last_from, last_to, clock, side, outcome: None };
        s.hash = s.full_hash();
        s.outcome = s.compute_outcome(side.opponent());
        s
    }
}

impl GameState for MartianChess {
    type Rules = MartianRules;

    const KIND: GameKind = GameKind::MartianChess;
    /// Spec §10: `from * 32 + to` in the canonical orientation.
    const NUM_ACTIONS: usize = encode::NUM_ACTIONS_MC;
    /// See the [`encode`](self) module: 11 planes of 8 rows x 4 files.
    const INPUT_SHAPE: [usize; 3] = [encode::INPUT_PLANES, 8, 4];
    /// A proven bound, see [`MAX_MOVES_MC`].
    const MAX_MOVES: usize = encode::MAX_MOVES_MC;
    const ENCODING: EncodingDescription = encode::ENCODING;

    fn new_game(rules: &MartianRules) -> Result<Self, RulesError> {
        rules.validate()?;
        let mut s = Self::from_position(INITIAL_POSITION, rules)?;
        if s.side != rules.first_player {
            s = MartianChess::from_parts(s.bb, rules.first_player, [0, 0], None, 0, 0, 0, *rules);
        }
        Ok(s)
    }

    #[inline]
    fn side_to_move(&self) -> Side {
        self.side
    }

    #[inline]
    fn play_unchecked(&mut self, mv: Move) {
        debug_assert!(self.outcome.is_none(), "play_unchecked on a finished game");
        let me = self.side.index();
        let mut h = self.hash;
        if let Some((bf, bt)) = self.active_ban() {
            h ^= zobrist::BAN[bf as usize * 32 + bt as usize];
        }
        let (dh, capture) = pyramids::play_pieces(
            &mut self.bb,
            &mut self.scores,
            me,
            mv.from,
            mv.to,
            ZONES[me].0,
            &zobrist::PIECE,
            zobrist::score,
        );
        h ^= dh;
        let mover = self.side;
        self.side = mover.opponent();
        h ^= zobrist::NORTH_TO_MOVE;
        self.last_from = mv.from;
        self.last_to = mv.to;
        self.ply += 1;
        // Spec §9.2: quiet counter and clock (called after 7 quiet plies).
        self.quiet = if capture { 0 } else { self.quiet.saturating_add(1) };
        let old = self.clock;
        self.clock = pyramids::next_clock(self.rules.clock, old.into(), capture, self.quiet, 7, false) as u8;
        h ^= zobrist::clock(old) ^ zobrist::clock(self.clock);
        if let Some((bf, bt)) = self.active_ban() {
            h ^= zobrist::BAN[bf as usize * 32 + bt as usize];
        }
        self.hash = h;
        self.outcome = self.compute_outcome(mover);
    }

    /// The Zobrist hash (placement, side to move, scores, the active no-undo
    /// ban, the clock) mixed with what else the planes of the `encode` module
    /// show: quiet plies capped at 7 (plane 7), the ply capped at `max_plies`
    /// and `max_plies` itself (plane 8), and the clock state once more (planes
    /// 5-6; the hash holds it too, but the key does not rely on that).
    fn input_key(&self) -> u64 {
        let max = self.rules.max_plies;
        let counters = u64::from(self.ply.min(max)) | u64::from(self.quiet.min(7)) << 32 | u64::from(self.clock) << 40;
        mix_key(self.hash, counters, u64::from(max))
    }

    fn board_text(&self) -> String {
        notation::board_text_from(self, Side::South)
    }

    fn board_text_from(&self, bottom: Side) -> String {
        notation::board_text_from(self, bottom)
    }

    fn side_name(side: Side) -> &'static str {
        ["South", "North"][side.index()]
    }

    #[inline]
    fn action_index(&self, mv: Move) -> usize {
        encode::action_index(self.side, mv)
    }

    /// The pieces' moves (spec §5) and the zones (full ranks) are symmetric
    /// under file `f -> 3 - f`.
    fn mirror_action(action: usize) -> Option<usize> {
        encode::mirror_action(action)
    }

    /// Every bitboard, the no-undo ban's squares and the hash mirrored; the
    /// scores, counters and rules kept.
    fn mirrored(&self) -> Option<Self> {
        let mut m = *self;
        for bb in &mut m.bb {
            *bb = (0..32u8).filter(|&sq| *bb >> sq & 1 != 0).fold(0, |acc, sq| acc | 1 << encode::mirror_square(sq));
        }
        if m.last_from != NONE {
            m.last_from = encode::mirror_square(m.last_from);
            m.last_to = encode::mirror_square(m.last_to);
        }
        m.hash = m.recompute_hash();
        Some(m)
    }

    crate::pyramids::shared_game_state_methods!(MartianRules);
}

impl MartianChess {
    /// The legal move with policy index `index` (spec §10 policy encoding, the
    /// inverse of [`GameState::action_index`]), or `None` if that index names no
    /// legal move here.
    pub fn move_for_action(&self, index: usize) -> Option<Move> {
        encode::move_of_action(self.side, index).filter(|&mv| is_legal(self, mv))
    }
}

impl PyramidState for MartianChess {
    type Board = Board4x8;

    #[inline(always)]
    fn view(&self) -> View<u32> {
        View {
            bb: self.bb,
            zone: ZONES[self.side.index()].0,
            rules: self.rules.switches(),
            clock: self.clock.into(),
            scores: self.scores,
            ban: self.active_ban(),
            flag: 0,
        }
    }
}
