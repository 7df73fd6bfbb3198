//! A set of squares of the 4 x 8 board as a `u32` (martian-chess spec §1:
//! `sq = file + 4 * (rank - 1)`, a1 = bit 0, d8 = bit 31).

use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

/// A set of squares, one bit per square (spec §1 indexing).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Bitboard(pub u32);

impl Bitboard {
    /// The empty set.
    pub const EMPTY: Bitboard = Bitboard(0);
    /// All 32 squares.
    pub const ALL: Bitboard = Bitboard(u32::MAX);

    /// The set holding only `sq` (`sq < 32`).
    #[inline(always)]
    pub const fn from_square(sq: u8) -> Bitboard {
        Bitboard(1u32 << sq)
    }

    /// Whether `sq` is in the set.
    #[inline(always)]
    pub const fn has(self, sq: u8) -> bool {
        (self.0 >> sq) & 1 != 0
    }

    /// Whether the set is empty.
    #[inline(always)]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the set is not empty.
    #[inline(always)]
    pub const fn any(self) -> bool {
        self.0 != 0
    }

    /// Number of squares in the set.
    #[inline(always)]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// The lowest square of a non-empty set.
    #[inline(always)]
    pub const fn lowest(self) -> u8 {
        self.0.trailing_zeros() as u8
    }

    /// The highest square of a non-empty set.
    #[inline(always)]
    pub const fn highest(self) -> u8 {
        (31 - self.0.leading_zeros()) as u8
    }

    /// The set rotated by 180 degrees (`sq -> 31 - sq`, spec §10 canonical orientation).
    #[inline(always)]
    pub const fn rotate180(self) -> Bitboard {
        Bitboard(self.0.reverse_bits())
    }

    /// Iterates the squares, lowest first.
    #[inline(always)]
    pub fn squares(self) -> Squares {
        Squares(self.0)
    }
}

/// Iterator over the squares of a [`Bitboard`], lowest first.
#[derive(Copy, Clone, Debug)]
pub struct Squares(u32);

impl Iterator for Squares {
    type Item = u8;

    #[inline(always)]
    fn next(&mut self) -> Option<u8> {
        if self.0 == 0 {
            None
        } else {
            let sq = self.0.trailing_zeros() as u8;
            self.0 &= self.0 - 1;
            Some(sq)
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Squares {}

macro_rules! bitop {
    ($tr:ident, $f:ident, $atr:ident, $af:ident, $op:tt) => {
        impl $tr for Bitboard {
            type Output = Bitboard;
            #[inline(always)]
            fn $f(self, rhs: Bitboard) -> Bitboard {
                Bitboard(self.0 $op rhs.0)
            }
        }
        impl $atr for Bitboard {
            #[inline(always)]
            fn $af(&mut self, rhs: Bitboard) {
                self.0 = self.0 $op rhs.0;
            }
        }
    };
}

bitop!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bitop!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bitop!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for Bitboard {
    type Output = Bitboard;
    #[inline(always)]
    fn not(self) -> Bitboard {
        Bitboard(!self.0)
    }
}
