//! Precomputed tables for the 4 x 8 board (martian-chess spec §1, §5): zone
//! masks, one-step shifts, Pawn and Drone step tables, Queen rays.

use super::bitboard::Bitboard;

/// Files of the board (spec §1).
pub const FILES: u8 = 4;
/// Squares of the board.
pub const SQUARES: usize = 32;

/// File a (spec §1).
pub const FILE_A: u32 = 0x1111_1111;
/// File d (spec §1).
pub const FILE_D: u32 = 0x8888_8888;
/// South zone, ranks 1-4 (spec §1).
pub const SOUTH_ZONE: u32 = 0x0000_FFFF;
/// North zone, ranks 5-8 (spec §1).
pub const NORTH_ZONE: u32 = 0xFFFF_0000;
/// Zone masks indexed by `Side::index()`.
pub const ZONES: [Bitboard; 2] = [Bitboard(SOUTH_ZONE), Bitboard(NORTH_ZONE)];

/// One step north (rank + 1).
#[inline(always)]
pub const fn north(b: u32) -> u32 {
    b << 4
}
/// One step south (rank - 1).
#[inline(always)]
pub const fn south(b: u32) -> u32 {
    b >> 4
}
/// One step east (file + 1).
#[inline(always)]
pub const fn east(b: u32) -> u32 {
    (b & !FILE_D) << 1
}
/// One step west (file - 1).
#[inline(always)]
pub const fn west(b: u32) -> u32 {
    (b & !FILE_A) >> 1
}
/// One step north-east.
#[inline(always)]
pub const fn north_east(b: u32) -> u32 {
    (b & !FILE_D) << 5
}
/// One step north-west.
#[inline(always)]
pub const fn north_west(b: u32) -> u32 {
    (b & !FILE_A) << 3
}
/// One step south-east.
#[inline(always)]
pub const fn south_east(b: u32) -> u32 {
    (b & !FILE_D) >> 3
}
/// One step south-west.
#[inline(always)]
pub const fn south_west(b: u32) -> u32 {
    (b & !FILE_A) >> 5
}

/// One step in direction `dir` (0 N, 1 E, 2 NE, 3 NW, 4 S, 5 W, 6 SW, 7 SE).
/// Directions 0-3 increase the square index, 4-7 decrease it.
#[inline(always)]
pub const fn step(b: u32, dir: usize) -> u32 {
    match dir {
        0 => north(b),
        1 => east(b),
        2 => north_east(b),
        3 => north_west(b),
        4 => south(b),
        5 => west(b),
        6 => south_west(b),
        _ => south_east(b),
    }
}

/// Diagonal neighbours of each square: the Pawn's steps (spec §5).
pub const PAWN_STEPS: [u32; SQUARES] = {
    let mut t = [0u32; SQUARES];
    let mut s = 0;
    while s < SQUARES {
        let b = 1u32 << s;
        t[s] = north_east(b) | north_west(b) | south_east(b) | south_west(b);
        s += 1;
    }
    t
};

/// Orthogonal neighbours of each square: the Drone's first step (spec §5).
pub const ORTHO_STEPS: [u32; SQUARES] = {
    let mut t = [0u32; SQUARES];
    let mut s = 0;
    while s < SQUARES {
        let b = 1u32 << s;
        t[s] = north(b) | south(b) | east(b) | west(b);
        s += 1;
    }
    t
};

/// All eight neighbours of each square (a Queen's one-step moves).
pub const KING_STEPS: [u32; SQUARES] = {
    let mut t = [0u32; SQUARES];
    let mut s = 0;
    while s < SQUARES {
        t[s] = PAWN_STEPS[s] | ORTHO_STEPS[s];
        s += 1;
    }
    t
};

/// `RAYS[dir][sq]`: every square from `sq` (exclusive) to the edge in
/// direction `dir` (numbering of [`step`]).
pub const RAYS: [[u32; SQUARES]; 8] = {
    let mut t = [[0u32; SQUARES]; 8];
    let mut d = 0;
    while d < 8 {
        let mut s = 0;
        while s < SQUARES {
            let mut b = step(1u32 << s, d);
            let mut ray = 0u32;
            while b != 0 {
                ray |= b;
                b = step(b, d);
            }
            t[d][s] = ray;
            s += 1;
        }
        d += 1;
    }
    t
};

/// Queen attacks from `sq` with occupancy `occ`: every square along the eight
/// lines up to and including the first occupied one (spec §5).
#[inline(always)]
pub fn queen_attacks(sq: usize, occ: u32) -> u32 {
    let mut att = 0u32;
    // Directions 0..4 increase the index: the first blocker is the lowest bit.
    let mut d = 0;
    while d < 4 {
        let ray = RAYS[d][sq];
        let blk = ray & occ;
        att |= if blk != 0 { ray ^ RAYS[d][blk.trailing_zeros() as usize] } else { ray };
        d += 1;
    }
    // Directions 4..8 decrease it: the first blocker is the highest bit.
    while d < 8 {
        let ray = RAYS[d][sq];
        let blk = ray & occ;
        att |= if blk != 0 { ray ^ RAYS[d][(31 - blk.leading_zeros()) as usize] } else { ray };
        d += 1;
    }
    att
}

/// Drone destinations from `sq` with occupancy `occ`: the four orthogonal
/// neighbours, plus the second square where the first is empty (spec §5).
#[inline(always)]
pub fn drone_attacks(sq: usize, occ: u32) -> u32 {
    let b = 1u32 << sq;
    let empty = !occ;
    let n = north(b);
    let s = south(b);
    let e = east(b);
    let w = west(b);
    n | s | e | w | north(n & empty) | south(s & empty) | east(e & empty) | west(w & empty)
}

/// Square index from 0-based file and rank.
#[inline(always)]
pub const fn square(file: u8, rank: u8) -> u8 {
    file + FILES * rank
}

/// 0-based file of a square.
#[inline(always)]
pub const fn file_of(sq: u8) -> u8 {
    sq % FILES
}

/// 0-based rank of a square.
#[inline(always)]
pub const fn rank_of(sq: u8) -> u8 {
    sq / FILES
}
