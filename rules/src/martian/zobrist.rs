//! Zobrist keys (martian-chess spec §10 state): piece placement, side to move,
//! scores, the active no-undo ban (spec §8) and the clock state (spec §9.2).
//! The quiet and ply counters are not hashed.
//!
//! Keys come from the stream of [`crate::pyramids::zobrist`] with salt 0,
//! computed at compile time where they are tables.

use crate::pyramids::zobrist::{self, key};

/// `PIECE[kind][sq]` with kind 0 Pawn, 1 Drone, 2 Queen (spec §2).
pub const PIECE: [[u64; 32]; 3] = zobrist::piece_keys(0);

/// XORed in when North is to move.
pub const NORTH_TO_MOVE: u64 = key(0, 10, 0);

/// `BAN[from * 32 + to]`: the banned move `from -> to` of spec §8 is in force.
pub const BAN: [u64; 1024] = {
    let mut t = [0u64; 1024];
    let mut i = 0;
    while i < 1024 {
        t[i] = key(0, 11, i as u64);
        i += 1;
    }
    t
};

/// Key of the clock state `c` (`0` not called, `1 + countdown` when called,
/// countdown 0..=7, spec §9.2).
#[inline]
pub const fn clock(c: u8) -> u64 {
    zobrist::clock(0, c as u32)
}

/// Key of `side` (0 South, 1 North) having score `score` (0 for a zero score).
#[inline]
pub const fn score(side: usize, score: u32) -> u64 {
    zobrist::score(0, 13, side, score)
}
