//! Network encoding of Martian Chess (spec §10 "Policy encoding" and
//! "Canonical orientation").
//!
//! # Orientation
//! Everything is written from the point of view of the side to move: when North
//! is to move the board is rotated by 180 degrees (`sq -> 31 - sq`), so the
//! mover's zone is always rows 0-3 and the scores are given as (mover, opponent).
//!
//! # Policy
//! [`NUM_ACTIONS_MC`] = 1024 actions: `action = from' * 32 + to'` where `from'`
//! and `to'` are the squares in the canonical orientation.
//!
//! # Input planes
//! Shape `[11, 8, 4]` = `[plane][row][col]`, row = rank index in the canonical
//! orientation (row 0 = the mover's back rank, rows 0-3 = the mover's zone),
//! col = file index in the canonical orientation (`sq' = 4 * row + col`).
//!
//! | plane | content |
//! |---|---|
//! | 0 | 1 on every Pawn (pieces have no owner, spec §2; the row implies the zone) |
//! | 1 | 1 on every Drone |
//! | 2 | 1 on every Queen |
//! | 3 | side-to-move score / 18, every cell |
//! | 4 | opponent score / 18, every cell |
//! | 5 | 1 everywhere if the deadlock clock is called (spec §9.2) |
//! | 6 | countdown / 7 everywhere (0 if the clock is not called) |
//! | 7 | min(quiet / 7, 1) everywhere |
//! | 8 | min(ply / max_plies, 1) everywhere (1 if `max_plies` = 0) |
//! | 9 | one-hot: the square of the piece the no-undo ban restricts (spec §8), else all 0 |
//! | 10 | one-hot: the square that piece may not return to, else all 0 |

use super::MartianChess;
use crate::game::{EncodingDescription, GameState, Move, Side};
use crate::PackedPlane;

/// Number of policy actions (spec §10): `from' * 32 + to'`.
pub const NUM_ACTIONS_MC: usize = 1024;

/// Number of input planes (see the module documentation).
pub const INPUT_PLANES: usize = 11;

/// Bound on the number of legal moves in any position (spec §4-§5): at most 16
/// pieces stand in the mover's zone and no piece has more than 16 destinations
/// (Queen 16 from b4/c4-like squares, Drone 8, Pawn 4), so 16 * 16 = 256.
pub const MAX_MOVES_MC: usize = 256;

/// Version of the rules specification (`docs/rules/martian-chess.md`,
/// "Status: v1") this implementation follows; exported model descriptions record it.
pub const RULES_SPEC_VERSION: &str = "v1";

/// The input planes of the module documentation as `(name, meaning)` pairs,
/// in plane order (written into exported model descriptions).
pub const PLANE_DESCRIPTIONS: [(&str, &str); INPUT_PLANES] = [
    ("pawns", "1.0 on every Pawn (pieces have no owner, spec section 2; rows 0-3 are the side to move's zone)"),
    ("drones", "1.0 on every Drone"),
    ("queens", "1.0 on every Queen"),
    ("mover_score", "all equal to the side to move's score / 18"),
    ("opponent_score", "all equal to the opponent's score / 18"),
    ("clock_called", "all 1.0 if the deadlock clock has been called (spec section 9.2), else 0"),
    ("clock_countdown", "all equal to the clock countdown / 7 (0 if the clock is not called)"),
    ("quiet_plies", "all equal to min(quiet plies / 7, 1)"),
    ("ply", "all equal to min(ply / rules.max_plies, 1) (1 if max_plies = 0)"),
    ("ban_from", "one-hot: the square of the piece the no-undo ban restricts (spec section 8), else all 0"),
    ("ban_to", "one-hot: the square that piece may not move back to, else all 0"),
];

/// The input planes as `(name, meaning)` pairs ([`PLANE_DESCRIPTIONS`]).
pub fn plane_descriptions() -> &'static [(&'static str, &'static str)] {
    &PLANE_DESCRIPTIONS
}

/// The policy index formula of the module documentation, in words.
pub const ACTION_ENCODING: &str = "1024 actions: index = from' * 32 + to', where from' and to' are the \
origin and destination squares (index = file + 4 * (rank - 1), a1 = 0) in the canonical orientation of the \
side to move (South to move: unchanged; North to move: sq' = 31 - sq).";

/// What an exported network bundle says about Martian Chess's encoding
/// ([`GameState::ENCODING`](crate::GameState::ENCODING)).
pub const ENCODING: EncodingDescription = EncodingDescription {
    rules_document: "docs/rules/martian-chess.md",
    rules_version: RULES_SPEC_VERSION,
    orientation: "side to move at the bottom: South ('S') to move: squares unchanged; North ('N') to move: the \
                  board is rotated 180 degrees (sq' = 31 - sq), so rows 0-3 are always the mover's zone; scores \
                  are given as (mover, opponent)",
    planes: &PLANE_DESCRIPTIONS,
    action_encoding: ACTION_ENCODING,
    squares: "files a-d, ranks 1-8, sq = file + 4 * (rank - 1) (a1 = 0, d8 = 31); a move is written <from><to>, \
              e.g. d3d5",
};

/// The left-right mirror of square `sq` (file `f` -> `3 - f`).
#[inline]
pub(crate) fn mirror_square(sq: u8) -> u8 {
    3 - sq % 4 + 4 * (sq / 4)
}

/// The left-right mirror of a policy index `from' * 32 + to'`: both squares
/// mirrored (it commutes with the half turn of the canonical orientation).
pub(crate) fn mirror_action(action: usize) -> Option<usize> {
    (action < NUM_ACTIONS_MC)
        .then(|| mirror_square((action / 32) as u8) as usize * 32 + mirror_square((action % 32) as u8) as usize)
}

/// `sq` in the canonical orientation of `side` (spec §10).
#[inline(always)]
pub(crate) fn orient(side: Side, sq: u8) -> u8 {
    match side {
        Side::South => sq,
        Side::North => 31 - sq,
    }
}

/// Policy index of `mv` for `side` to move.
#[inline]
pub(crate) fn action_index(side: Side, mv: Move) -> usize {
    orient(side, mv.from) as usize * 32 + orient(side, mv.to) as usize
}

/// The move with policy index `index` for `side` to move (not checked for legality).
#[inline]
pub(crate) fn move_of_action(side: Side, index: usize) -> Option<Move> {
    if index >= NUM_ACTIONS_MC {
        return None;
    }
    let (f, t) = ((index / 32) as u8, (index % 32) as u8);
    (f != t).then(|| Move::new(orient(side, f), orient(side, t)))
}

/// Writes the planes described in the module documentation.
///
/// # Panics
/// If `out.len() != 11` (planes).
pub(crate) fn encode_packed(s: &MartianChess, out: &mut [PackedPlane]) {
    const CELLS: usize = 32;
    assert_eq!(out.len(), INPUT_PLANES, "encode: wrong number of planes");
    out.fill(PackedPlane::default());
    let side = s.side_to_move();
    for (plane, &b) in out.iter_mut().zip(&s.bb) {
        // `orient` on a whole board: the 180° turn (31 - sq) is a bit reversal.
        let mask = match side {
            Side::South => b,
            Side::North => b.reverse_bits(),
        };
        if mask != 0 {
            *plane = PackedPlane { mask: u128::from(mask), value: 1.0 };
        }
    }
    let fill = |v: f32| PackedPlane::filled(CELLS, v);
    let scores = s.scores();
    let me = side.index();
    out[3] = fill(scores[me] as f32 / 18.0);
    out[4] = fill(scores[1 - me] as f32 / 18.0);
    if let Some(c) = s.clock_countdown() {
        out[5] = fill(1.0);
        out[6] = fill(c as f32 / 7.0);
    }
    out[7] = fill((s.quiet() as f32 / 7.0).min(1.0));
    let max = s.rules().max_plies;
    let ply = if max == 0 { 1.0 } else { (s.ply() as f32 / max as f32).min(1.0) };
    out[8] = fill(ply);
    if let Some(ban) = s.banned_move() {
        out[9].set(orient(side, ban.from) as usize);
        out[10].set(orient(side, ban.to) as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::martian::{MartianRules, Piece};
    use crate::mix64;

    /// The piece planes from whole bitboards equal the per-square form
    /// (`orient` of each occupied square), for both sides to move.
    #[test]
    fn piece_planes_equal_the_per_square_form() {
        let mut x = 11u64;
        let mut norths = 0;
        for _game in 0..30 {
            let mut g = MartianChess::new_game(&MartianRules::default()).unwrap();
            let mut moves = Vec::new();
            let mut planes = [PackedPlane::default(); INPUT_PLANES];
            for _ply in 0..150 {
                g.legal_moves(&mut moves);
                if moves.is_empty() || g.outcome().is_some() {
                    break;
                }
                encode_packed(&g, &mut planes);
                let side = g.side_to_move();
                norths += usize::from(side == Side::North);
                for (k, piece) in [Piece::Pawn, Piece::Drone, Piece::Queen].into_iter().enumerate() {
                    let mut want = PackedPlane::default();
                    for sq in 0..32u8 {
                        if g.piece_at(sq) == Some(piece) {
                            want.set(orient(side, sq) as usize);
                        }
                    }
                    assert_eq!(planes[k], want, "{piece:?} plane of {}", g.to_position());
                }
                x = mix64(x);
                g.play_unchecked(moves[x as usize % moves.len()]);
            }
        }
        assert!(norths > 100, "both sides to move are covered");
    }
}
