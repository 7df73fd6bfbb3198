//! Precomputed tables for the 8 x 8 board of the four-player game
//! (martian-chess spec §14.1, §5): quadrant masks, one-step shifts, Pawn and
//! Drone step tables, Queen rays. Bit `sq = file + 8 * (rank - 1)` (a1 = 0,
//! h1 = 7, a8 = 56, h8 = 63).

/// Squares of the board.
pub const SQUARES: usize = 64;

/// File a.
pub const FILE_A: u64 = 0x0101_0101_0101_0101;
/// File h.
pub const FILE_H: u64 = 0x8080_8080_8080_8080;

/// Quadrant of SW: a1-d4 (§14.1).
pub const QUAD_SW: u64 = 0x0000_0000_0F0F_0F0F;
/// Quadrant of NW: a5-d8.
pub const QUAD_NW: u64 = 0x0F0F_0F0F_0000_0000;
/// Quadrant of NE: e5-h8.
pub const QUAD_NE: u64 = 0xF0F0_F0F0_0000_0000;
/// Quadrant of SE: e1-h4.
pub const QUAD_SE: u64 = 0x0000_0000_F0F0_F0F0;
/// Quadrant masks indexed by [`super::Seat::index`] (SW, NW, NE, SE).
pub const QUADS: [u64; 4] = [QUAD_SW, QUAD_NW, QUAD_NE, QUAD_SE];

/// One step north (rank + 1).
#[inline(always)]
pub const fn north(b: u64) -> u64 {
    b << 8
}
/// One step south (rank - 1).
#[inline(always)]
pub const fn south(b: u64) -> u64 {
    b >> 8
}
/// One step east (file + 1).
#[inline(always)]
pub const fn east(b: u64) -> u64 {
    (b & !FILE_H) << 1
}
/// One step west (file - 1).
#[inline(always)]
pub const fn west(b: u64) -> u64 {
    (b & !FILE_A) >> 1
}
/// One step north-east.
#[inline(always)]
pub const fn north_east(b: u64) -> u64 {
    (b & !FILE_H) << 9
}
/// One step north-west.
#[inline(always)]
pub const fn north_west(b: u64) -> u64 {
    (b & !FILE_A) << 7
}
/// One step south-east.
#[inline(always)]
pub const fn south_east(b: u64) -> u64 {
    (b & !FILE_H) >> 7
}
/// One step south-west.
#[inline(always)]
pub const fn south_west(b: u64) -> u64 {
    (b & !FILE_A) >> 9
}

/// One step in direction `dir` (0 N, 1 E, 2 NE, 3 NW, 4 S, 5 W, 6 SW, 7 SE).
/// Directions 0-3 increase the square index, 4-7 decrease it.
#[inline(always)]
pub const fn step(b: u64, dir: usize) -> u64 {
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

/// Diagonal neighbours of each square: the Pawn's steps (§5).
pub const PAWN_STEPS: [u64; SQUARES] = {
    let mut t = [0u64; SQUARES];
    let mut s = 0;
    while s < SQUARES {
        let b = 1u64 << s;
        t[s] = north_east(b) | north_west(b) | south_east(b) | south_west(b);
        s += 1;
    }
    t
};

/// `RAYS[dir][sq]`: every square from `sq` (exclusive) to the edge in
/// direction `dir` (numbering of [`step`]).
pub const RAYS: [[u64; SQUARES]; 8] = {
    let mut t = [[0u64; SQUARES]; 8];
    let mut d = 0;
    while d < 8 {
        let mut s = 0;
        while s < SQUARES {
            let mut b = step(1u64 << s, d);
            let mut ray = 0u64;
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
/// lines up to and including the first occupied one (§5). A line may cross
/// both canals and pass through three quadrants (§14.4).
#[inline(always)]
pub fn queen_attacks(sq: usize, occ: u64) -> u64 {
    let mut att = 0u64;
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
        att |= if blk != 0 { ray ^ RAYS[d][(63 - blk.leading_zeros()) as usize] } else { ray };
        d += 1;
    }
    att
}

/// Drone destinations from `sq` with occupancy `occ`: the four orthogonal
/// neighbours, plus the second square where the first is empty (§5).
#[inline(always)]
pub fn drone_attacks(sq: usize, occ: u64) -> u64 {
    let b = 1u64 << sq;
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
    file + 8 * rank
}

/// 0-based file of a square.
#[inline(always)]
pub const fn file_of(sq: u8) -> u8 {
    sq % 8
}

/// 0-based rank of a square.
#[inline(always)]
pub const fn rank_of(sq: u8) -> u8 {
    sq / 8
}

/// `sq` turned a quarter turn counterclockwise about the centre of the board
/// (north at the top): `(x, y) -> (7 - y, x)`, spec §14.9's rotation for NW.
#[inline(always)]
pub const fn rotate_ccw(sq: u8) -> u8 {
    8 * (sq % 8) + 7 - sq / 8
}

/// `sq` turned `quarter_turns` quarter turns counterclockwise (mod 4).
#[inline(always)]
pub const fn rotate_square(quarter_turns: u8, sq: u8) -> u8 {
    match quarter_turns % 4 {
        0 => sq,
        1 => rotate_ccw(sq),
        2 => 63 - sq,
        _ => 56 - 8 * (sq % 8) + sq / 8,
    }
}

/// `ROTATE[k][sq]`: [`rotate_square`]`(k, sq)` as a table.
pub const ROTATE: [[u8; SQUARES]; 4] = {
    let mut t = [[0u8; SQUARES]; 4];
    let mut k = 0;
    while k < 4 {
        let mut s = 0;
        while s < SQUARES {
            t[k][s] = rotate_square(k as u8, s as u8);
            s += 1;
        }
        k += 1;
    }
    t
};

/// A set of squares turned `quarter_turns` quarter turns counterclockwise.
#[inline]
pub fn rotate_set(quarter_turns: u8, b: u64) -> u64 {
    match quarter_turns % 4 {
        0 => b,
        2 => b.reverse_bits(),
        k => {
            let mut out = 0u64;
            let mut rest = b;
            while rest != 0 {
                let sq = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                out |= 1u64 << ROTATE[k as usize][sq];
            }
            out
        }
    }
}

/// The reflection of `sq` in the a1-h8 diagonal: `(x, y) -> (y, x)`. It keeps
/// the setup, swaps the quadrants of NW and SE and reverses the turn order
/// (§14.10).
#[inline(always)]
pub const fn reflect_diagonal(sq: u8) -> u8 {
    8 * (sq % 8) + sq / 8
}
