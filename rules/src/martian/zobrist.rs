//! Zobrist keys (martian-chess spec §10 state): piece placement, side to move,
//! scores, the active no-undo ban (spec §8) and the clock state (spec §9.2).
//! The quiet and ply counters are not hashed.
//!
//! Keys come from a fixed SplitMix64 stream, computed at compile time.

const fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

const fn key(stream: u64, i: u64) -> u64 {
    splitmix(stream.wrapping_mul(0x1_0000_0001).wrapping_add(i).wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

/// `PIECE[kind][sq]` with kind 0 Pawn, 1 Drone, 2 Queen (spec §2).
pub const PIECE: [[u64; 32]; 3] = {
    let mut t = [[0u64; 32]; 3];
    let mut k = 0;
    while k < 3 {
        let mut s = 0;
        while s < 32 {
            t[k][s] = key(1 + k as u64, s as u64);
            s += 1;
        }
        k += 1;
    }
    t
};

/// XORed in when North is to move.
pub const NORTH_TO_MOVE: u64 = key(10, 0);

/// `BAN[from * 32 + to]`: the banned move `from -> to` of spec §8 is in force.
pub const BAN: [u64; 1024] = {
    let mut t = [0u64; 1024];
    let mut i = 0;
    while i < 1024 {
        t[i] = key(11, i as u64);
        i += 1;
    }
    t
};

/// `CLOCK[c]`: clock state, `c = 0` not called, `c = 1 + countdown` when called
/// (countdown 0..=7, spec §9.2).
pub const CLOCK: [u64; 9] = {
    let mut t = [0u64; 9];
    let mut i = 1; // "not called" hashes as 0
    while i < 9 {
        t[i] = key(12, i as u64);
        i += 1;
    }
    t
};

/// Key of `side` (0 South, 1 North) having score `score` (0 for a zero score).
#[inline]
pub const fn score(side: usize, score: u32) -> u64 {
    if score == 0 {
        0
    } else {
        key(13 + side as u64, score as u64)
    }
}
