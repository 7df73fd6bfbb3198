//! Piece types and letters (spec §2).

use crate::game::Side;

/// A Jetan piece type (spec §2). The discriminant is the plane order of the
/// network encoding (see `encode`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Piece {
    /// Chief `C`/`c`: exactly 3 king steps, blocked (§4.7).
    Chief = 0,
    /// Princess `P`/`p`: 3 king steps, jumps, never captures, never stops on an attacked square (§4.8).
    Princess = 1,
    /// Flier `F`/`f`: exactly 3 diagonal steps, jumps (§4.6).
    Flier = 2,
    /// Dwar `D`/`d`: exactly 3 orthogonal steps, blocked (§4.5).
    Dwar = 3,
    /// Padwar `L`/`l`: exactly 2 diagonal steps, blocked (§4.4).
    Padwar = 4,
    /// Warrior `W`/`w`: exactly 2 orthogonal steps, blocked (§4.3).
    Warrior = 5,
    /// Thoat `T`/`t`: one orthogonal and one diagonal step (§4.2).
    Thoat = 6,
    /// Panthan `N`/`n`: one step forward, diagonally forward or sideways (§4.1).
    Panthan = 7,
}

impl Piece {
    /// All piece types in discriminant order.
    pub const ALL: [Piece; 8] = [
        Piece::Chief,
        Piece::Princess,
        Piece::Flier,
        Piece::Dwar,
        Piece::Padwar,
        Piece::Warrior,
        Piece::Thoat,
        Piece::Panthan,
    ];

    /// The piece with discriminant `i` (0..8).
    #[inline]
    pub fn from_index(i: usize) -> Piece {
        Piece::ALL[i & 7]
    }

    /// Index 0..8 (the discriminant).
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The spec's name of the piece (§2).
    pub const fn name(self) -> &'static str {
        match self {
            Piece::Chief => "Chief",
            Piece::Princess => "Princess",
            Piece::Flier => "Flier",
            Piece::Dwar => "Dwar",
            Piece::Padwar => "Padwar",
            Piece::Warrior => "Warrior",
            Piece::Thoat => "Thoat",
            Piece::Panthan => "Panthan",
        }
    }

    /// Uppercase letter (Orange's, §2).
    pub const fn upper_letter(self) -> char {
        match self {
            Piece::Chief => 'C',
            Piece::Princess => 'P',
            Piece::Flier => 'F',
            Piece::Dwar => 'D',
            Piece::Padwar => 'L',
            Piece::Warrior => 'W',
            Piece::Thoat => 'T',
            Piece::Panthan => 'N',
        }
    }

    /// The letter of this piece for `side`: uppercase Orange (North), lowercase Black (South) (§2).
    pub fn letter(self, side: Side) -> char {
        match side {
            Side::North => self.upper_letter(),
            Side::South => self.upper_letter().to_ascii_lowercase(),
        }
    }

    /// Parses a piece letter (§2): returns the piece and its side.
    pub fn from_letter(c: char) -> Option<(Piece, Side)> {
        let side = if c.is_ascii_uppercase() { Side::North } else { Side::South };
        let p = match c.to_ascii_uppercase() {
            'C' => Piece::Chief,
            'P' => Piece::Princess,
            'F' => Piece::Flier,
            'D' => Piece::Dwar,
            'L' => Piece::Padwar,
            'W' => Piece::Warrior,
            'T' => Piece::Thoat,
            'N' => Piece::Panthan,
            _ => return None,
        };
        if !c.is_ascii_alphabetic() {
            return None;
        }
        Some((p, side))
    }

    /// The most pieces of this type a side may have (§10.3 validity).
    pub const fn max_count(self) -> usize {
        match self {
            Piece::Chief | Piece::Princess => 1,
            Piece::Panthan => 8,
            _ => 2,
        }
    }

    /// Seed 000 value (§14); the Princess has none (0).
    pub const fn seed000_value(self) -> u32 {
        match self {
            Piece::Panthan => 1,
            Piece::Warrior => 2,
            Piece::Thoat => 3,
            Piece::Padwar => 4,
            Piece::Dwar => 5,
            Piece::Flier => 6,
            Piece::Chief => 7,
            Piece::Princess => 0,
        }
    }
}
