//! Zobrist keys of the four-player game (spec §14.8 state): piece placement,
//! the seat to move, the four scores and the clock state (§14.5). The quiet
//! and ply counters are not hashed (they do not decide legal moves; the
//! input key mixes them in).
//!
//! Keys come from the stream of [`crate::pyramids::zobrist`] under this
//! game's salt, the piece keys computed at compile time, the score and clock
//! keys on demand.

use crate::pyramids::zobrist::{self, key};

/// This game's salt of the key stream.
const SALT: u64 = 0x4D43_3450;

/// `PIECE[kind][sq]` with kind 0 Pawn, 1 Drone, 2 Queen (spec §2).
pub const PIECE: [[u64; 64]; 3] = zobrist::piece_keys(SALT);

/// `SEAT[seat]`: the seat to move (0 for SW).
pub const SEAT: [u64; 4] = [0, key(SALT, 10, 1), key(SALT, 10, 2), key(SALT, 10, 3)];

/// Key of `seat` (index 0 SW .. 3 SE) having score `score` (0 for a zero score).
#[inline]
pub const fn score(seat: usize, score: u32) -> u64 {
    zobrist::score(SALT, 20, seat, score)
}

/// Key of the clock state `clock` (0 = not called, `1 + countdown` when
/// called; 0 for "not called").
#[inline]
pub const fn clock(clock: u32) -> u64 {
    zobrist::clock(SALT, clock)
}
