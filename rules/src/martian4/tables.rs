//! The 8 x 8 board of the four-player game (martian-chess spec §14.1): its
//! geometry (shared with the two-player board, [`crate::pyramids::Board`]),
//! the quadrant masks and the quarter turns and reflection of §14.9-§14.10.
//! Bit `sq = file + 8 * (rank - 1)` (a1 = 0, h1 = 7, a8 = 56, h8 = 63).

use crate::pyramids::Board;

/// The 8 x 8 board: 8 files, 64 squares in a `u64` (§14.1).
pub(crate) type Board8x8 = Board<u64, 8, 64>;

/// Squares of the board.
pub const SQUARES: usize = 64;

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
