//! Bitboards of both Martian Chess boards (spec §1: 4 x 8 in `u32`, §14.1:
//! 8 x 8 in `u64`; bit `sq = file + files * (rank - 1)`): the one-step shifts,
//! the Pawn, Drone and Queen reach (§5) and the precomputed tables, written
//! once for any board width.

use std::fmt::Debug;
use std::hash::Hash;
use std::marker::PhantomData;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not, Shl, Shr, Sub};

use super::{Piece, DRONE, PAWN, QUEEN};

/// An unsigned integer used as a set of squares (bit `sq` = square `sq`).
pub(crate) trait Word:
    Copy
    + Eq
    + Hash
    + Debug
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
    + Shl<u32, Output = Self>
    + Shr<u32, Output = Self>
    + Sub<Output = Self>
    + BitAndAssign
    + BitOrAssign
    + BitXorAssign
    + 'static
{
    /// The empty set.
    const ZERO: Self;
    /// Every square.
    const MAX: Self;
    /// Width in bits.
    const BITS: u32;
    /// The low bits of `x` (tables are computed as `u64`).
    fn from_u64(x: u64) -> Self;
    /// Number of squares in the set.
    fn count_ones(self) -> u32;
    /// The lowest square of a non-empty set.
    fn trailing_zeros(self) -> u32;
    /// `BITS - 1 -` the highest square of a non-empty set.
    fn leading_zeros(self) -> u32;

    /// The set holding only `sq`.
    #[inline(always)]
    fn bit(sq: u32) -> Self {
        Self::from_u64(1) << sq
    }

    /// Whether `sq` is in the set.
    #[inline(always)]
    fn has(self, sq: u8) -> bool {
        (self >> u32::from(sq)) & Self::from_u64(1) != Self::ZERO
    }

    /// Calls `f` on every square of the set, lowest first.
    #[inline(always)]
    fn for_each_square(self, mut f: impl FnMut(u32)) {
        let mut b = self;
        while b != Self::ZERO {
            f(b.trailing_zeros());
            b &= b - Self::from_u64(1);
        }
    }
}

macro_rules! word {
    ($t:ty) => {
        impl Word for $t {
            const ZERO: $t = 0;
            const MAX: $t = <$t>::MAX;
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn from_u64(x: u64) -> $t {
                x as $t
            }
            #[inline(always)]
            fn count_ones(self) -> u32 {
                <$t>::count_ones(self)
            }
            #[inline(always)]
            fn trailing_zeros(self) -> u32 {
                <$t>::trailing_zeros(self)
            }
            #[inline(always)]
            fn leading_zeros(self) -> u32 {
                <$t>::leading_zeros(self)
            }
        }
    };
}

word!(u32);
word!(u64);

/// The placement as one bitboard per kind (Pawns, Drones, Queens): what
/// both games store.
pub(crate) trait Pieces<W: Word> {
    /// All occupied squares.
    fn occupied(&self) -> W;
    /// Kind index of an occupied square (Queen if it holds no Pawn or Drone).
    fn kind_at(&self, sq: u8) -> usize;
    /// The piece on `sq`, if any (`None` off the board).
    fn piece_at(&self, sq: u8) -> Option<Piece>;
    /// Zobrist hash of the placement under `keys[kind][sq]`.
    fn hash_with<const N: usize>(&self, keys: &[[u64; N]; 3]) -> u64;
    /// Pips of all pieces on the board.
    fn pips_on_board(&self) -> u32;
}

impl<W: Word> Pieces<W> for [W; 3] {
    #[inline(always)]
    fn occupied(&self) -> W {
        self[0] | self[1] | self[2]
    }

    #[inline(always)]
    fn kind_at(&self, sq: u8) -> usize {
        if self[PAWN].has(sq) {
            PAWN
        } else if self[DRONE].has(sq) {
            DRONE
        } else {
            QUEEN
        }
    }

    #[inline]
    fn piece_at(&self, sq: u8) -> Option<Piece> {
        if u32::from(sq) >= W::BITS || !self.occupied().has(sq) {
            None
        } else {
            Some(Piece::from_index(self.kind_at(sq)))
        }
    }

    fn hash_with<const N: usize>(&self, keys: &[[u64; N]; 3]) -> u64 {
        let mut h = 0u64;
        for (k, &b) in self.iter().enumerate() {
            b.for_each_square(|sq| h ^= keys[k][sq as usize]);
        }
        h
    }

    fn pips_on_board(&self) -> u32 {
        self.iter().zip(Piece::ALL).map(|(&b, p)| b.count_ones() * p.value()).sum()
    }
}

/// The geometry of a board: shifts and piece reach. Implemented once, by
/// [`Board`], for both boards.
pub(crate) trait Geometry: Copy + 'static {
    /// The bitboard word.
    type W: Word;
    /// Files (the board has 8 ranks).
    const FILES: u8;
    /// File a.
    fn file_a() -> Self::W;
    /// The last file (d or h).
    fn file_last() -> Self::W;

    /// Diagonal neighbours of `sq`: the Pawn's steps (spec §5).
    fn pawn_steps(sq: usize) -> Self::W;
    /// Orthogonal neighbours of `sq`: the Drone's first step (spec §5).
    fn ortho_steps(sq: usize) -> Self::W;
    /// All eight neighbours of `sq` (a Queen's one-step moves).
    fn king_steps(sq: usize) -> Self::W;
    /// Every square from `sq` (exclusive) to the edge in direction `dir`
    /// (numbering of [`Tables::new`]).
    fn ray(dir: usize, sq: usize) -> Self::W;

    /// One step north (rank + 1).
    #[inline(always)]
    fn north(b: Self::W) -> Self::W {
        b << u32::from(Self::FILES)
    }
    /// One step south (rank - 1).
    #[inline(always)]
    fn south(b: Self::W) -> Self::W {
        b >> u32::from(Self::FILES)
    }
    /// One step east (file + 1).
    #[inline(always)]
    fn east(b: Self::W) -> Self::W {
        (b & !Self::file_last()) << 1
    }
    /// One step west (file - 1).
    #[inline(always)]
    fn west(b: Self::W) -> Self::W {
        (b & !Self::file_a()) >> 1
    }
    /// One step north-east.
    #[inline(always)]
    fn north_east(b: Self::W) -> Self::W {
        (b & !Self::file_last()) << (u32::from(Self::FILES) + 1)
    }
    /// One step north-west.
    #[inline(always)]
    fn north_west(b: Self::W) -> Self::W {
        (b & !Self::file_a()) << (u32::from(Self::FILES) - 1)
    }
    /// One step south-east.
    #[inline(always)]
    fn south_east(b: Self::W) -> Self::W {
        (b & !Self::file_last()) >> (u32::from(Self::FILES) - 1)
    }
    /// One step south-west.
    #[inline(always)]
    fn south_west(b: Self::W) -> Self::W {
        (b & !Self::file_a()) >> (u32::from(Self::FILES) + 1)
    }

    /// Queen attacks from `sq` with occupancy `occ`: every square along the
    /// eight lines up to and including the first occupied one (spec §5; with
    /// four players a line may cross both canals, §14.4).
    #[inline(always)]
    fn queen_attacks(sq: usize, occ: Self::W) -> Self::W {
        let mut att = Self::W::ZERO;
        // Directions 0..4 increase the index: the first blocker is the lowest bit.
        for d in 0..4 {
            let ray = Self::ray(d, sq);
            let blk = ray & occ;
            att |= if blk != Self::W::ZERO { ray ^ Self::ray(d, blk.trailing_zeros() as usize) } else { ray };
        }
        // Directions 4..8 decrease it: the first blocker is the highest bit.
        for d in 4..8 {
            let ray = Self::ray(d, sq);
            let blk = ray & occ;
            let highest = (Self::W::BITS - 1 - blk.leading_zeros()) as usize;
            att |= if blk != Self::W::ZERO { ray ^ Self::ray(d, highest) } else { ray };
        }
        att
    }

    /// Drone destinations from `sq` with occupancy `occ`: the four
    /// orthogonal neighbours, plus the second square where the first is
    /// empty (spec §5).
    #[inline(always)]
    fn drone_attacks(sq: usize, occ: Self::W) -> Self::W {
        let b = Self::W::bit(sq as u32);
        let empty = !occ;
        let (n, s, e, w) = (Self::north(b), Self::south(b), Self::east(b), Self::west(b));
        n | s | e | w | Self::north(n & empty) | Self::south(s & empty) | Self::east(e & empty) | Self::west(w & empty)
    }

    /// Square index from 0-based file and rank.
    #[inline(always)]
    fn square(file: u8, rank: u8) -> u8 {
        file + Self::FILES * rank
    }

    /// 0-based file of a square.
    #[inline(always)]
    fn file_of(sq: u8) -> u8 {
        sq % Self::FILES
    }

    /// 0-based rank of a square.
    #[inline(always)]
    fn rank_of(sq: u8) -> u8 {
        sq / Self::FILES
    }
}

/// The set of squares of file `file` on a board `files` wide with `n` squares.
const fn file_mask(file: u32, files: u32, n: usize) -> u64 {
    let mut m = 0u64;
    let mut s = file;
    while (s as usize) < n {
        m |= 1 << s;
        s += files;
    }
    m
}

/// The precomputed tables of a board `files` wide with `N` squares, as
/// `u64` (narrowed to the board's word on lookup).
pub(crate) struct Tables<const N: usize> {
    file_a: u64,
    file_last: u64,
    pawn: [u64; N],
    ortho: [u64; N],
    rays: [[u64; N]; 8],
}

impl<const N: usize> Tables<N> {
    /// One step in direction `dir` (0 N, 1 E, 2 NE, 3 NW, 4 S, 5 W, 6 SW,
    /// 7 SE; 0-3 increase the square index, 4-7 decrease it).
    const fn step(b: u64, dir: usize, files: u32) -> u64 {
        let board = if N == 64 { u64::MAX } else { (1u64 << N) - 1 };
        let not_a = !file_mask(0, files, N);
        let not_last = !file_mask(files - 1, files, N);
        let out = match dir {
            0 => b << files,
            1 => (b & not_last) << 1,
            2 => (b & not_last) << (files + 1),
            3 => (b & not_a) << (files - 1),
            4 => b >> files,
            5 => (b & not_a) >> 1,
            6 => (b & not_a) >> (files + 1),
            _ => (b & not_last) >> (files - 1),
        };
        out & board
    }

    /// The tables of a board `files` wide.
    pub(crate) const fn new(files: u32) -> Self {
        let mut t = Tables {
            file_a: file_mask(0, files, N),
            file_last: file_mask(files - 1, files, N),
            pawn: [0; N],
            ortho: [0; N],
            rays: [[0; N]; 8],
        };
        let mut s = 0;
        while s < N {
            let b = 1u64 << s;
            t.pawn[s] =
                Self::step(b, 2, files) | Self::step(b, 3, files) | Self::step(b, 6, files) | Self::step(b, 7, files);
            t.ortho[s] =
                Self::step(b, 0, files) | Self::step(b, 1, files) | Self::step(b, 4, files) | Self::step(b, 5, files);
            let mut d = 0;
            while d < 8 {
                let mut r = Self::step(b, d, files);
                let mut ray = 0u64;
                while r != 0 {
                    ray |= r;
                    r = Self::step(r, d, files);
                }
                t.rays[d][s] = ray;
                d += 1;
            }
            s += 1;
        }
        t
    }
}

/// A board of `FILES` files and 8 ranks, `N` squares, bitboards of word `W`:
/// `Board<u32, 4, 32>` for two players, `Board<u64, 8, 64>` for four.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Board<W, const FILES: u8, const N: usize>(PhantomData<W>);

impl<W: Word, const FILES: u8, const N: usize> Board<W, FILES, N> {
    const TABLES: Tables<N> = Tables::new(FILES as u32);
}

impl<W: Word, const FILES: u8, const N: usize> Geometry for Board<W, FILES, N> {
    type W = W;
    const FILES: u8 = FILES;

    #[inline(always)]
    fn file_a() -> W {
        W::from_u64(Self::TABLES.file_a)
    }

    #[inline(always)]
    fn file_last() -> W {
        W::from_u64(Self::TABLES.file_last)
    }

    #[inline(always)]
    fn pawn_steps(sq: usize) -> W {
        W::from_u64(Self::TABLES.pawn[sq])
    }

    #[inline(always)]
    fn ortho_steps(sq: usize) -> W {
        W::from_u64(Self::TABLES.ortho[sq])
    }

    #[inline(always)]
    fn king_steps(sq: usize) -> W {
        W::from_u64(Self::TABLES.pawn[sq] | Self::TABLES.ortho[sq])
    }

    #[inline(always)]
    fn ray(dir: usize, sq: usize) -> W {
        W::from_u64(Self::TABLES.rays[dir][sq])
    }
}
