//! Network encoding of the four-player game (spec §14.9, "suggested").
//!
//! # Orientation
//! Everything is written in the canonical orientation of the seat to move:
//! the board is turned so that the mover's corner is a1 (SW: unchanged; NW: a
//! quarter turn counterclockwise, `(x, y) -> (7 - y, x)`; NE: a half turn,
//! `sq -> 63 - sq`; SE: a quarter turn clockwise, `(x, y) -> (y, 7 - x)`). It
//! is always a rotation, never a reflection, so the direction of play is kept:
//! the mover's quadrant is a1-d4, and under the clockwise order the next seat's
//! quadrant is a5-d8 (counterclockwise: e1-h4).
//!
//! # Policy
//! `from' * 64 + to'` in canonical squares: 4096 actions, + 4096 for a move
//! that calls the clock under the `Manual` clock (§14.5), so
//! [`NUM_ACTIONS_MC4`] = 8192 covers every mode. Only `from'` in a1-d4
//! occurs.
//!
//! # Input planes
//! Shape `[19, 8, 8]` = `[plane][row][col]`, row = canonical rank index, col =
//! canonical file index (`sq' = 8 * row + col`). Seat order: the mover, the
//! next seat, the seat after that (the partner with teams), the previous seat
//! (in turn order).
//!
//! | planes | content |
//! |---|---|
//! | 0-11 | for each seat in that order, 3 planes (P, D, Q): 1 where that piece stands in that seat's quadrant |
//! | 12-15 | constant: the four scores / 36, same seat order |
//! | 16 | constant: clock countdown / `clock_plies` (0 when not called) |
//! | 17 | constant: min(quiet, `clock_plies`) / `clock_plies` |
//! | 18 | constant: min(ply / `max_plies`, 1) (1 if `max_plies` = 0) |
//!
//! `teams`, `turn_order` and the clock mode are fixed for a run and get no
//! planes (§14.9).

use super::tables::{rotate_square, ROTATE};
use super::{MartianChess4, Seat, CALL_CLOCK};
use crate::game::{GameState, Move};
use crate::PackedPlane;

/// Number of policy actions: `from' * 64 + to'`, + 4096 with the clock call
/// (§14.9). Outside `Manual` only the first 4096 occur.
pub const NUM_ACTIONS_MC4: usize = 8192;

/// Number of input planes (see the module documentation).
pub const INPUT_PLANES: usize = 19;

/// Bound on the number of legal moves in any position: at most 16 pieces
/// stand in the mover's quadrant, and no piece has more than 27 destinations
/// (a Queen, 27 from d4/e4/d5/e5 on an empty board; Drone 8, Pawn 4), so
/// 16 * 27 = 432; doubled for the clock-call twins under `Manual` (§14.5).
pub const MAX_MOVES_MC4: usize = 864;

/// Version of the rules specification (`docs/rules/martian-chess.md`,
/// "Status: v2") this implementation follows; exported model descriptions
/// record it.
pub const RULES_SPEC_VERSION: &str = "v2";

/// The canonical orientation in words (for exported model descriptions).
pub const ORIENTATION: &str = "the board is turned so that the corner of the seat to move is a1 (spec section \
14.9): SW to move: unchanged; NW: a quarter turn counterclockwise, (x, y) -> (7 - y, x), sq' = 8 * (sq mod 8) + \
7 - floor(sq / 8); NE: a half turn, sq' = 63 - sq; SE: a quarter turn clockwise, (x, y) -> (y, 7 - x), sq' = 56 - \
8 * (sq mod 8) + floor(sq / 8). Seats are listed as: mover, next seat, the seat after that, previous seat (in turn \
order).";

/// The input planes of the module documentation as `(name, meaning)` pairs,
/// in plane order (written into exported model descriptions).
pub const PLANE_DESCRIPTIONS: [(&str, &str); INPUT_PLANES] = [
    ("mover_pawns", "1.0 on every Pawn in the quadrant of the seat to move"),
    ("mover_drones", "1.0 on every Drone in the quadrant of the seat to move"),
    ("mover_queens", "1.0 on every Queen in the quadrant of the seat to move"),
    ("next_pawns", "1.0 on every Pawn in the quadrant of the next seat in turn order"),
    ("next_drones", "1.0 on every Drone in the quadrant of the next seat"),
    ("next_queens", "1.0 on every Queen in the quadrant of the next seat"),
    ("third_pawns", "1.0 on every Pawn in the quadrant of the seat after the next (the partner with teams)"),
    ("third_drones", "1.0 on every Drone in the quadrant of the seat after the next"),
    ("third_queens", "1.0 on every Queen in the quadrant of the seat after the next"),
    ("previous_pawns", "1.0 on every Pawn in the quadrant of the previous seat"),
    ("previous_drones", "1.0 on every Drone in the quadrant of the previous seat"),
    ("previous_queens", "1.0 on every Queen in the quadrant of the previous seat"),
    ("mover_score", "all equal to the score of the seat to move / 36"),
    ("next_score", "all equal to the score of the next seat / 36"),
    ("third_score", "all equal to the score of the seat after the next / 36"),
    ("previous_score", "all equal to the score of the previous seat / 36"),
    ("clock_countdown", "all equal to the clock countdown / rules.clock_plies (0 if the clock is not called)"),
    ("quiet_plies", "all equal to min(quiet plies, rules.clock_plies) / rules.clock_plies"),
    ("ply", "all equal to min(ply / rules.max_plies, 1) (1 if max_plies = 0)"),
];

/// The policy index formula of the module documentation, in words.
pub const ACTION_ENCODING: &str = "8192 actions: index = from' * 64 + to', where from' and to' are the origin \
and destination squares (sq = file + 8 * (rank - 1), a1 = 0) in the canonical orientation of the seat to move; \
+ 4096 for a move that also calls the deadlock clock (rules.clock = Manual only; otherwise indices stay below \
4096). Only from' in a1-d4 occurs.";

/// Square numbering and move text (for exported model descriptions).
pub const SQUARES_TEXT: &str = "files a-h, ranks 1-8, sq = file + 8 * (rank - 1) (a1 = 0, h1 = 7, a8 = 56, h8 = \
63); a move is written <from><to>, e.g. c1e1, with '*' appended when it calls the clock";

/// `sq` in the canonical orientation of `seat` (§14.9): turned `seat.index()`
/// quarter turns counterclockwise.
#[inline(always)]
pub fn canonical_square(seat: Seat, sq: u8) -> u8 {
    ROTATE[seat.index()][sq as usize & 63]
}

/// Policy index of `mv` for `seat` to move.
#[inline]
pub(crate) fn action_index(seat: Seat, mv: Move) -> usize {
    let base = canonical_square(seat, mv.from) as usize * 64 + canonical_square(seat, mv.to & !CALL_CLOCK) as usize;
    if mv.to & CALL_CLOCK != 0 {
        base + 4096
    } else {
        base
    }
}

/// The move with policy index `index` for `seat` to move (not checked for legality).
#[inline]
pub(crate) fn move_of_action(seat: Seat, index: usize) -> Option<Move> {
    if index >= NUM_ACTIONS_MC4 {
        return None;
    }
    let flag = if index >= 4096 { CALL_CLOCK } else { 0 };
    let (f, t) = ((index % 4096 / 64) as u8, (index % 64) as u8);
    let back = 4 - seat.index() as u8;
    (f != t).then(|| Move::new(rotate_square(back, f), rotate_square(back, t) | flag))
}

/// Writes the planes described in the module documentation.
///
/// # Panics
/// If `out.len() != 19` (planes).
pub(crate) fn encode_packed(s: &MartianChess4, out: &mut [PackedPlane]) {
    const CELLS: usize = 64;
    assert_eq!(out.len(), INPUT_PLANES, "encode: wrong number of planes");
    out.fill(PackedPlane::default());
    let rules = s.rules();
    let mover = s.seat_to_move();
    let next = rules.next_seat(mover);
    let order = [mover, next, rules.next_seat(next), rules.previous_seat(mover)];
    let rot = &ROTATE[mover.index()];
    for (j, seat) in order.into_iter().enumerate() {
        for k in 0..3 {
            let plane = &mut out[3 * j + k];
            let mut b = s.bb[k] & seat.quadrant();
            while b != 0 {
                let sq = b.trailing_zeros() as usize;
                b &= b - 1;
                plane.set(rot[sq] as usize);
            }
        }
    }
    let fill = |v: f32| PackedPlane::filled(CELLS, v);
    let scores = s.scores();
    for (j, seat) in order.into_iter().enumerate() {
        out[12 + j] = fill(scores[seat.index()] as f32 / 36.0);
    }
    let n = rules.clock_plies as f32;
    if let Some(c) = s.clock_countdown() {
        out[16] = fill(c as f32 / n);
    }
    out[17] = fill(s.quiet().min(rules.clock_plies) as f32 / n);
    let max = rules.max_plies;
    let ply = if max == 0 { 1.0 } else { (s.ply() as f32 / max as f32).min(1.0) };
    out[18] = fill(ply);
}
