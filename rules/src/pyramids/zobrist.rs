//! Zobrist keys of both games: a fixed SplitMix64 stream ([`mix64`]; Steele,
//! Lea and Flood, OOPSLA 2014) indexed by a stream number and an index, and
//! salted per game, so that the two games' keys differ. The two-player game's
//! salt is 0.

use super::board::{Pieces, Word};
use crate::game::mix64;

/// Key number `i` of stream `stream` under `salt`.
pub(crate) const fn key(salt: u64, stream: u64, i: u64) -> u64 {
    mix64(stream.wrapping_mul(0x1_0000_0001).wrapping_add(i).wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ salt)
}

/// `PIECE[kind][sq]` with kind 0 Pawn, 1 Drone, 2 Queen (spec §2): streams
/// 1 to 3.
pub(crate) const fn piece_keys<const N: usize>(salt: u64) -> [[u64; N]; 3] {
    let mut t = [[0u64; N]; 3];
    let mut k = 0;
    while k < 3 {
        let mut s = 0;
        while s < N {
            t[k][s] = key(salt, 1 + k as u64, s as u64);
            s += 1;
        }
        k += 1;
    }
    t
}

/// Key of the clock state `clock` (0 = not called, hashed as 0; `1 +
/// countdown` once called): stream 12.
#[inline]
pub(crate) const fn clock(salt: u64, clock: u32) -> u64 {
    if clock == 0 {
        0
    } else {
        key(salt, 12, clock as u64)
    }
}

/// Key of player `player` having score `score` (0 for a zero score): stream
/// `first_stream + player`.
#[inline]
pub(crate) const fn score(salt: u64, first_stream: u64, player: usize, score: u32) -> u64 {
    if score == 0 {
        0
    } else {
        key(salt, first_stream + player as u64, score as u64)
    }
}

/// The hash of what both games' states hold: the placement `bb` under
/// `piece_keys`, every player's score under `score_key` and the clock
/// state's key `clock_key`. Each game adds the rest (the side or seat to
/// move, the no-undo ban).
pub(crate) fn position_hash<W: Word, const N: usize>(
    bb: &[W; 3],
    piece_keys: &[[u64; N]; 3],
    scores: &[u32],
    score_key: impl Fn(usize, u32) -> u64,
    clock_key: u64,
) -> u64 {
    let h = bb.hash_with(piece_keys) ^ clock_key;
    scores.iter().enumerate().fold(h, |h, (i, &s)| h ^ score_key(i, s))
}
