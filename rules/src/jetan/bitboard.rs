//! A 100-square bitboard in a `u128` (bit `sq = file + 10*(rank-1)`, spec §1).

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

/// A set of squares of the 10×10 board (spec §1): bit `sq` is square `sq`.
/// Bits 100..127 are always zero in values produced by this module.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bitboard(pub u128);

/// All 100 squares.
pub const BOARD: u128 = (1u128 << 100) - 1;
/// File a (spec §1).
pub const FILE_A: u128 = {
    let mut b = 0u128;
    let mut r = 0;
    while r < 10 {
        b |= 1u128 << (10 * r);
        r += 1;
    }
    b
};
/// File j (spec §1).
pub const FILE_J: u128 = FILE_A << 9;

impl Bitboard {
    /// The empty set.
    pub const EMPTY: Bitboard = Bitboard(0);
    /// Every square of the board.
    pub const FULL: Bitboard = Bitboard(BOARD);

    /// The set holding only `sq` (0..100).
    #[inline]
    pub const fn from_square(sq: u8) -> Bitboard {
        Bitboard(1u128 << sq)
    }

    /// Whether `sq` is in the set.
    #[inline]
    pub const fn contains(self, sq: u8) -> bool {
        (self.0 >> sq) & 1 != 0
    }

    /// Number of squares in the set.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The complement within the board.
    #[inline]
    pub const fn complement(self) -> Bitboard {
        Bitboard(!self.0 & BOARD)
    }

    /// Iterates over the squares, lowest first.
    #[inline]
    pub fn squares(self) -> Squares {
        Squares(self.0)
    }
}

/// Iterator over the squares of a bitboard, lowest index first.
#[derive(Clone, Debug)]
pub struct Squares(pub u128);

impl Iterator for Squares {
    type Item = u8;
    #[inline]
    fn next(&mut self) -> Option<u8> {
        if self.0 == 0 {
            None
        } else {
            let sq = self.0.trailing_zeros() as u8;
            self.0 &= self.0 - 1;
            Some(sq)
        }
    }
}

macro_rules! binop {
    ($tr:ident, $f:ident, $atr:ident, $af:ident, $op:tt) => {
        impl $tr for Bitboard {
            type Output = Bitboard;
            #[inline]
            fn $f(self, rhs: Bitboard) -> Bitboard {
                Bitboard(self.0 $op rhs.0)
            }
        }
        impl $atr for Bitboard {
            #[inline]
            fn $af(&mut self, rhs: Bitboard) {
                self.0 = self.0 $op rhs.0;
            }
        }
    };
}
binop!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
binop!(BitOr, bitor, BitOrAssign, bitor_assign, |);
binop!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn not(self) -> Bitboard {
        self.complement()
    }
}
