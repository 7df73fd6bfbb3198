//! Zobrist keys of the four-player game (spec §14.8 state): piece placement,
//! the seat to move, the four scores and the clock state (§14.5). The quiet
//! and ply counters are not hashed (they do not decide legal moves; the
//! input key mixes them in).
//!
//! Keys come from a fixed SplitMix64 stream (Steele, Lea and Flood, OOPSLA
//! 2014), the piece keys computed at compile time, the score and clock keys on
//! demand.

const fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

const fn key(stream: u64, i: u64) -> u64 {
    splitmix(stream.wrapping_mul(0x1_0000_0001).wrapping_add(i).wrapping_mul(0xD6E8_FEB8_6659_FD93) ^ 0x4D43_3450)
}

/// `PIECE[kind][sq]` with kind 0 Pawn, 1 Drone, 2 Queen (spec §2).
pub const PIECE: [[u64; 64]; 3] = {
    let mut t = [[0u64; 64]; 3];
    let mut k = 0;
    while k < 3 {
        let mut s = 0;
        while s < 64 {
            t[k][s] = key(1 + k as u64, s as u64);
            s += 1;
        }
        k += 1;
    }
    t
};

/// `SEAT[seat]`: the seat to move (0 for SW).
pub const SEAT: [u64; 4] = [0, key(10, 1), key(10, 2), key(10, 3)];

/// Key of `seat` (index 0 SW .. 3 SE) having score `score` (0 for a zero score).
#[inline]
pub const fn score(seat: usize, score: u32) -> u64 {
    if score == 0 {
        0
    } else {
        key(20 + seat as u64, score as u64)
    }
}

/// Key of the clock state `clock` (0 = not called, `1 + countdown` when
/// called; 0 for "not called").
#[inline]
pub const fn clock(clock: u32) -> u64 {
    if clock == 0 {
        0
    } else {
        key(12, clock as u64)
    }
}
