//! Jetan, the 10×10 game of E. R. Burroughs' *The Chessmen of Mars*.
//!
//! `docs/rules/jetan.md` is the specification; section numbers (§) refer to it.
//! [`Jetan`] is the game state (it implements [`GameState`]) and [`JetanRules`]
//! holds the rules switches of §13.
//!
//! Representation: one `u128` bitboard per side and piece type, plus a mailbox
//! for piece lookup; path pieces use precomputed `(required-empty, destinations)`
//! tables (module `tables`), jumpers fixed destination masks.

mod bitboard;
mod encode;
mod eval;
mod movegen;
mod notation;
mod piece;
mod rules;
mod tables;
mod zobrist;

use std::fmt;

pub use bitboard::{Bitboard, Squares};
pub use encode::{plane_descriptions, ACTION_ENCODING, PLANE_DESCRIPTIONS, RULES_SPEC_VERSION};
pub use eval::{JetanEval, JetanValues};
pub use piece::Piece;
pub use rules::{
    ChiefCapture, Escape, FirstPlayer, JetanRules, NoLegalMoves, PrincessPath, Repetition, Setup, SmallMaterial,
    StepCount, Thoat, Warrior,
};
pub use tables::for_each_path;

use crate::error::RulesError;
use crate::game::{mix_key, EncodingDescription, EndReason, GameKind, GameState, Move, Outcome, Side};

use tables::{tables, K_THOAT_EITHER, K_THOAT_JUMPING, K_THOAT_KNIGHT, K_THOAT_ORTH_FIRST};

/// Length of the small-material countdown (§8.4).
pub const COUNTDOWN_PLIES: u8 = 10;

/// The copyable part of the state: placement and counters (§10.3).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Pos {
    /// `pieces[side][piece]`: bitboards.
    pieces: [[u128; 8]; 2],
    /// Occupancy per side.
    occ: [u128; 2],
    /// Mailbox: 0 empty, else `1 + side*8 + piece`.
    board: [u8; 100],
    /// Side to move.
    stm: Side,
    /// Escape rights per side (§6).
    escape: [bool; 2],
    /// Small-material countdown (§8.4): `None` while inactive, else the plies
    /// left; `Some(0)` once it ran out (a finished game, §10.3 field 4).
    countdown: Option<u8>,
    /// Plies since the last capture (§8.5).
    quiet: u32,
    /// Plies since the start (§8.5).
    ply: u32,
    /// Incremental Zobrist hash (§8.3 key).
    hash: u64,
    /// Result, computed after each ply (§8).
    outcome: Option<Outcome>,
}

/// A Jetan game state (spec §1–§10): the position plus the repetition history.
///
/// The history holds the hashes of the positions since the last irreversible
/// ply (capture, Escape or forward Panthan step), the current one last; that is
/// all the threefold rule of §8.3 needs. [`Clone::clone_from`] reuses its allocation.
pub struct Jetan {
    pos: Pos,
    rules: JetanRules,
    thoat_kind: u8,
    history: Vec<u64>,
}

impl Clone for Jetan {
    fn clone(&self) -> Self {
        let mut history = Vec::with_capacity(self.history.len().max(16));
        history.extend_from_slice(&self.history);
        Jetan { pos: self.pos, rules: self.rules, thoat_kind: self.thoat_kind, history }
    }

    fn clone_from(&mut self, source: &Self) {
        self.pos = source.pos;
        self.rules = source.rules;
        self.thoat_kind = source.thoat_kind;
        self.history.clear();
        self.history.extend_from_slice(&source.history);
    }
}

impl fmt::Debug for Jetan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Jetan({:?})", self.to_position())
    }
}

/// Standard initial position (§10.3).
pub const INITIAL_POSITION: &str = "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0";
/// Initial placement under `Setup::ManatorFacing` (§2.1): Orange's rows mirror Black's.
pub const MANATOR_PLACEMENT: &str = "WLDFCPFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw";

impl Jetan {
    /// An empty board with the given counters; pieces are added with `put`.
    fn empty(rules: &JetanRules, stm: Side) -> Jetan {
        let thoat_kind = match rules.thoat {
            Thoat::EitherOrder => K_THOAT_EITHER,
            Thoat::OrthogonalFirst => K_THOAT_ORTH_FIRST,
            Thoat::KnightOnly => K_THOAT_KNIGHT,
            Thoat::Jumping => K_THOAT_JUMPING,
        } as u8;
        Jetan {
            pos: Pos {
                pieces: [[0; 8]; 2],
                occ: [0; 2],
                board: [0; 100],
                stm,
                escape: [true; 2],
                countdown: None,
                quiet: 0,
                ply: 0,
                hash: 0,
                outcome: None,
            },
            rules: *rules,
            thoat_kind,
            history: Vec::with_capacity(64),
        }
    }

    /// Puts a piece on an empty square (no hash update).
    fn put(&mut self, side: Side, piece: Piece, sq: u8) {
        let b = 1u128 << sq;
        self.pos.pieces[side.index()][piece.index()] |= b;
        self.pos.occ[side.index()] |= b;
        self.pos.board[sq as usize] = 1 + (side.index() * 8 + piece.index()) as u8;
    }

    /// The piece on `sq` (0..100) and its side, if any (§1 square index).
    pub fn piece_at(&self, sq: u8) -> Option<(Piece, Side)> {
        let c = *self.pos.board.get(sq as usize)?;
        if c == 0 {
            return None;
        }
        let c = (c - 1) as usize;
        let side = if c >= 8 { Side::North } else { Side::South };
        Some((Piece::from_index(c % 8), side))
    }

    /// The squares of `side`'s pieces of type `piece` (§2).
    pub fn pieces(&self, side: Side, piece: Piece) -> Bitboard {
        Bitboard(self.pos.pieces[side.index()][piece.index()])
    }

    /// All squares occupied by `side` (§2).
    pub fn occupancy(&self, side: Side) -> Bitboard {
        Bitboard(self.pos.occ[side.index()])
    }

    /// Whether `side` still holds its Escape right (§6, field 3 of §10.3).
    pub fn escape_right(&self, side: Side) -> bool {
        self.pos.escape[side.index()]
    }

    /// Plies left on the small-material countdown (§8.4): `None` if inactive,
    /// `Some(1..=10)` while it runs, `Some(0)` once it ran out (the game is then
    /// over by [`EndReason::SmallMaterial`]; the position string carries it as
    /// countdown `0`, §10.3).
    pub fn countdown(&self) -> Option<u8> {
        self.pos.countdown
    }

    /// Consecutive plies without a capture (§10.3 field 5).
    pub fn quiet_plies(&self) -> u32 {
        self.pos.quiet
    }

    /// How often the current position occurred before in this game (§8.3);
    /// a loaded position has no history before it (§15).
    pub fn repetitions(&self) -> usize {
        let h = self.pos.hash;
        self.history.iter().filter(|&&x| x == h).count().saturating_sub(1)
    }

    /// Whether `mv` (assumed legal) is an Escape: a Princess move to a square at
    /// Chebyshev distance ≥ 4 (§6, §10.1).
    pub fn is_escape(&self, mv: Move) -> bool {
        matches!(self.piece_at(mv.from), Some((Piece::Princess, _)))
            && (mv.to as usize) < 100
            && tables().far[mv.from as usize % 100] >> mv.to & 1 != 0
    }

    /// Whether both sides have ≤ 3 pieces and, under `EqualValueOnly`, equal seed-000 material (§8.4).
    fn small_material_condition(&self) -> bool {
        if self.pos.occ[0].count_ones() > 3 || self.pos.occ[1].count_ones() > 3 {
            return false;
        }
        if self.rules.small_material == SmallMaterial::EqualValueOnly {
            return self.material_value(Side::South) == self.material_value(Side::North);
        }
        true
    }

    fn material_value(&self, side: Side) -> u32 {
        Piece::ALL.iter().map(|&p| p.seed000_value() * self.pos.pieces[side.index()][p.index()].count_ones()).sum()
    }

    /// The side ahead by seed 000's adjudication order (§8.4,
    /// `Seed000Adjudication`): more pieces; with equal counts, the first
    /// difference between the two sides' non-Princess piece values sorted from
    /// highest to lowest (seed-000 scale); `None` when everything is equal.
    pub fn seed000_leader(&self) -> Option<Side> {
        self.leader_by_material(&[Piece::Princess])
    }

    /// Seed 000's order over the pieces other than `skip`: more of them; with
    /// equal counts, the higher seed-000 values sorted from highest to lowest.
    fn leader_by_material(&self, skip: &[Piece]) -> Option<Side> {
        // Counts per seed-000 value (0..=7): the sorted lists first differ at the highest value
        // whose counts differ, and the side with more pieces of that value is ahead there.
        let counts = |side: Side| {
            let mut c = [0u32; 8];
            for p in Piece::ALL {
                if !skip.contains(&p) {
                    c[p.seed000_value() as usize] += self.pos.pieces[side.index()][p.index()].count_ones();
                }
            }
            c
        };
        let (cs, cn) = (counts(Side::South), counts(Side::North));
        let (ns, nn): (u32, u32) = (cs.iter().sum(), cn.iter().sum());
        if ns != nn {
            return Some(if ns > nn { Side::South } else { Side::North });
        }
        (0..8).rev().find(|&v| cs[v] != cn[v]).map(|v| if cs[v] > cn[v] { Side::South } else { Side::North })
    }

    /// The result when the countdown runs out (§8.4).
    fn countdown_outcome(&self) -> Outcome {
        let winner = match self.rules.small_material {
            SmallMaterial::Seed000Adjudication => self.seed000_leader(),
            _ => None,
        };
        Outcome { winner, reason: EndReason::SmallMaterial }
    }

    /// The §8.5/§8.6 checks (move cap, no-capture limit, no legal moves).
    fn late_checks(&self) -> Option<Outcome> {
        if self.pos.ply >= self.rules.max_plies {
            return Some(Outcome { winner: None, reason: EndReason::MoveCap });
        }
        if let Some(n) = self.rules.no_capture_limit {
            if self.pos.quiet >= n {
                return Some(Outcome { winner: None, reason: EndReason::NoCaptureLimit });
            }
        }
        if !self.has_legal_move() {
            let winner = match self.rules.no_legal_moves {
                NoLegalMoves::Draw => None,
                NoLegalMoves::Loses => Some(self.pos.stm.opponent()),
            };
            return Some(Outcome { winner, reason: EndReason::NoLegalMoves });
        }
        None
    }

    /// Zobrist hash from scratch (§8.3 key).
    fn compute_hash(&self) -> u64 {
        let mut h = 0;
        for s in 0..2 {
            for p in 0..8 {
                let mut b = self.pos.pieces[s][p];
                while b != 0 {
                    let sq = b.trailing_zeros() as usize;
                    b &= b - 1;
                    h ^= zobrist::piece_key(s, p, sq);
                }
            }
            if self.pos.escape[s] {
                h ^= zobrist::escape_key(s);
            }
        }
        if self.pos.stm == Side::North {
            h ^= zobrist::side_key();
        }
        h
    }

    /// Finishes a freshly built position: hash, history, countdown start and the
    /// end checks that apply to a loaded position (§8.4, §8.5, §8.6, §10.3).
    ///
    /// A countdown of 0 is a game that the countdown ended: its result is the
    /// §8.4 result, checked before §8.5/§8.6 as after a ply, so a finished game
    /// loads back with the result it had when it was written.
    fn finish_setup(&mut self) {
        self.pos.hash = self.compute_hash();
        self.history.clear();
        self.history.push(self.pos.hash);
        if self.pos.countdown.is_none() && self.small_material_condition() {
            self.pos.countdown = Some(COUNTDOWN_PLIES);
        }
        self.pos.outcome =
            if self.pos.countdown == Some(0) { Some(self.countdown_outcome()) } else { self.late_checks() };
    }

    /// Plays `mv` (legal) and applies the end checks of §8 in order.
    fn do_move(&mut self, mv: Move) {
        let (from, to) = (mv.from as usize, mv.to as usize);
        let code = self.pos.board[from];
        debug_assert!(code != 0, "no piece on the origin of {mv:?}");
        let c = (code.wrapping_sub(1)) as usize;
        let (s, p) = (c / 8, c % 8);
        debug_assert_eq!(s, self.pos.stm.index());
        let (fb, tb) = (1u128 << from, 1u128 << to);
        let mut h = self.pos.hash ^ zobrist::piece_key(s, p, from) ^ zobrist::piece_key(s, p, to);
        let mut irreversible = false;
        let mut captured = None;
        let cap = self.pos.board[to];
        if cap != 0 {
            let cc = (cap - 1) as usize;
            let (cs, cp) = (cc / 8, cc % 8);
            self.pos.pieces[cs][cp] &= !tb;
            self.pos.occ[cs] &= !tb;
            h ^= zobrist::piece_key(cs, cp, to);
            irreversible = true;
            captured = Some(Piece::from_index(cp));
        }
        self.pos.pieces[s][p] ^= fb | tb;
        self.pos.occ[s] ^= fb | tb;
        self.pos.board[from] = 0;
        self.pos.board[to] = code;
        if p == Piece::Princess.index() && tables().far[from] & tb != 0 {
            if self.pos.escape[s] {
                h ^= zobrist::escape_key(s);
            }
            self.pos.escape[s] = false;
            irreversible = true;
        }
        if p == Piece::Panthan.index() && from.abs_diff(to) != 1 {
            irreversible = true;
        }
        self.pos.quiet = if captured.is_some() { 0 } else { self.pos.quiet.saturating_add(1) };
        self.pos.ply = self.pos.ply.saturating_add(1);
        let mover = self.pos.stm;
        self.pos.stm = mover.opponent();
        h ^= zobrist::side_key();
        self.pos.hash = h;
        if irreversible {
            self.history.clear();
        }
        self.history.push(h);

        // Countdown bookkeeping (§8.4): decrement first, then start.
        let mut countdown_expired = false;
        match self.pos.countdown {
            Some(c) if c > 0 => {
                self.pos.countdown = Some(c - 1);
                countdown_expired = c == 1;
            }
            // Ran out: the game is over and no ply is played.
            Some(_) => {}
            None => {
                if self.small_material_condition() {
                    self.pos.countdown = Some(COUNTDOWN_PLIES);
                }
            }
        }

        // §8.1, §8.2.
        let outcome = match captured {
            Some(Piece::Princess) => Some(Outcome { winner: Some(mover), reason: EndReason::PrincessCaptured }),
            Some(Piece::Chief) if p == Piece::Chief.index() => {
                Some(Outcome { winner: Some(mover), reason: EndReason::ChiefCapturedByChief })
            }
            Some(Piece::Chief) => match self.rules.chief_captured_by_non_chief {
                ChiefCapture::CapturerWins => {
                    Some(Outcome { winner: Some(mover), reason: EndReason::ChiefCapturedByNonChief })
                }
                ChiefCapture::RemoveAndContinue => None,
                _ => Some(Outcome { winner: None, reason: EndReason::ChiefCapturedByNonChief }),
            },
            _ => None,
        };
        // §8.3 repetition, §8.4 countdown, §8.5, §8.6.
        self.pos.outcome = outcome
            .or_else(|| {
                (self.rules.repetition == Repetition::Threefold
                    && self.history.iter().filter(|&&x| x == h).count() >= 3)
                    .then_some(Outcome { winner: None, reason: EndReason::Repetition })
            })
            .or_else(|| countdown_expired.then(|| self.countdown_outcome()))
            .or_else(|| self.late_checks());
    }
}

impl GameState for Jetan {
    type Rules = JetanRules;

    const KIND: GameKind = GameKind::Jetan;
    /// §10.4: 100 × 48 displacement actions + 100 Escape destinations.
    const NUM_ACTIONS: usize = 4900;
    /// 24 planes of 10 × 10 (see the `encode` module).
    const INPUT_SHAPE: [usize; 3] = [24, 10, 10];
    /// Upper bound (§3 open-board reach): Chief 48 + Fliers 32 + Dwars 32 +
    /// Padwars 16 + Warriors 16 + Thoats 24 + Panthans 40 = 208, plus at most
    /// 79 Princess destinations (empty squares with ≥ 21 pieces on the board
    /// when all 19 others are present; fewer own pieces lower the other terms
    /// more than they raise this one): 287 ≤ 320.
    const MAX_MOVES: usize = 320;
    const ENCODING: EncodingDescription = encode::ENCODING;

    fn new_game(rules: &JetanRules) -> Result<Jetan, RulesError> {
        rules.validate()?;
        let placement = match rules.setup {
            Setup::Appendix => "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw",
            Setup::ManatorFacing => MANATOR_PLACEMENT,
        };
        let side = match rules.first_player {
            FirstPlayer::Orange => 'o',
            FirstPlayer::Black => 'b',
        };
        let esc = if rules.escape == Escape::None { "-" } else { "OB" };
        Jetan::from_position(&format!("{placement} {side} {esc} - 0 0"), rules)
    }

    fn from_position(text: &str, rules: &JetanRules) -> Result<Jetan, RulesError> {
        rules.validate()?;
        notation::parse_position(text, rules)
    }

    fn to_position(&self) -> String {
        notation::write_position(self)
    }

    fn rules(&self) -> &JetanRules {
        &self.rules
    }

    fn side_to_move(&self) -> Side {
        self.pos.stm
    }

    fn ply(&self) -> u32 {
        self.pos.ply
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        out.clear();
        if self.pos.outcome.is_none() {
            self.gen_moves(out);
        }
    }

    fn count_legal_moves(&self) -> usize {
        if self.pos.outcome.is_some() {
            0
        } else {
            self.count_moves()
        }
    }

    fn play_unchecked(&mut self, mv: Move) {
        self.do_move(mv);
    }

    /// Seed 000's order (§8.4) over the pieces other than the Chiefs and
    /// Princesses, so that a draw by a Chief's capture (§8.2) is judged by the
    /// rest of the material, not by the Chief it cost.
    fn draw_adjudication(&self) -> Option<Side> {
        match self.outcome() {
            Some(Outcome { winner: None, .. }) => self.material_leader(),
            _ => None,
        }
    }

    fn material_leader(&self) -> Option<Side> {
        self.leader_by_material(&[Piece::Chief, Piece::Princess])
    }

    fn outcome(&self) -> Option<Outcome> {
        self.pos.outcome
    }

    /// Only captures of the enemy Princess or Chief can win at once under the
    /// standard rules: see `winning_move_exists` (module `movegen`).
    fn has_winning_move(&self) -> bool {
        self.winning_move_exists()
    }

    fn threatens_win(&self) -> bool {
        self.threat_exists()
    }

    fn safe_reply(&self, moves: &[Move]) -> Option<Move> {
        self.safe_reply_in(moves)
    }

    fn safe_reply_from_board(&self) -> Option<Move> {
        self.safe_reply_from_board()
    }

    fn forcing_moves(&self, moves: &[Move], zugzwangs: bool, out: &mut Vec<Move>) {
        self.forcing_moves_into(moves, zugzwangs, out);
    }

    fn winning_replies(&self, moves: &[Move], out: &mut Vec<bool>) -> bool {
        self.winning_replies_into(moves, out)
    }

    /// Every move but an Escape (§6): a random opening keeps both Escapes.
    fn is_opening_move(&self, mv: Move) -> bool {
        !self.is_escape(mv)
    }

    fn hash(&self) -> u64 {
        self.pos.hash
    }

    fn recompute_hash(&self) -> u64 {
        self.compute_hash()
    }

    /// The Zobrist hash (placement, side to move, Escape rights) mixed with what
    /// else the planes of the `encode` module show: the countdown (planes
    /// 18-19), quiet plies capped at 100 (plane 20), the ply and `max_plies`
    /// (plane 21), the repetition count capped at 2 (planes 22-23), and
    /// `rules.setup`, which decides the orientation when Orange is to move.
    fn input_key(&self) -> u64 {
        let counters = u64::from(self.pos.ply)
            | u64::from(self.pos.quiet.min(100)) << 32
            | u64::from(self.pos.countdown.unwrap_or(u8::MAX)) << 40
            | (self.repetitions().min(2) as u64) << 48
            | u64::from(self.rules.setup == Setup::ManatorFacing) << 50;
        mix_key(self.pos.hash, counters, u64::from(self.rules.max_plies))
    }

    fn move_to_string(&self, mv: Move) -> String {
        notation::move_text(mv)
    }

    fn parse_move(&self, text: &str) -> Result<Move, RulesError> {
        crate::game::legal_move_or_error(self, notation::parse_move_text(text)?)
    }

    fn board_text(&self) -> String {
        notation::board_text(self)
    }

    fn board_text_from(&self, bottom: Side) -> String {
        notation::board_text_from(self, bottom)
    }

    fn side_name(side: Side) -> &'static str {
        match side {
            Side::South => "Black",
            Side::North => "Orange",
        }
    }

    fn action_index(&self, mv: Move) -> usize {
        encode::action_index(self, mv)
    }

    fn action_indices(&self, moves: &[Move], out: &mut Vec<u32>) {
        encode::action_indices(self, moves, out);
    }

    /// Jetan's moves are symmetric under file `f -> 9 - f` (spec §3: every
    /// piece moves alike to the west and the east); the mapping is in the encoding module.
    fn mirror_action(action: usize) -> Option<usize> {
        encode::mirror_action(action)
    }

    /// The mirror through the position string (§10.3): the placement's ranks
    /// reversed, the other fields (no square appears in them) kept. `None`
    /// only for a game ended by taking a Princess or Chief, which has no
    /// position string.
    fn mirrored(&self) -> Option<Self> {
        let text = self.to_position();
        let (placement, rest) = text.split_once(' ')?;
        Jetan::from_position(&format!("{} {rest}", crate::game::mirror_placement(placement)), &self.rules).ok()
    }

    fn encode_packed(&self, out: &mut [crate::PackedPlane]) {
        encode::encode_packed(self, out);
    }
}

impl Jetan {
    /// The legal move with policy index `index` (§10.4), if any: the inverse of
    /// [`GameState::action_index`] on legal moves.
    pub fn move_for_action(&self, index: usize) -> Option<Move> {
        let mut moves = Vec::with_capacity(Self::MAX_MOVES);
        self.legal_moves(&mut moves);
        moves.into_iter().find(|&m| encode::action_index(self, m) == index)
    }
}
