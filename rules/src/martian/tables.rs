//! The 4 x 8 board (martian-chess spec §1): its geometry (shared with the
//! four-player board, [`crate::pyramids::Board`]) and the zone masks.

use super::bitboard::Bitboard;
use crate::pyramids::Board;

/// The 4 x 8 board: 4 files, 32 squares in a `u32` (spec §1).
pub(crate) type Board4x8 = Board<u32, 4, 32>;

/// South zone, ranks 1-4 (spec §1).
pub const SOUTH_ZONE: u32 = 0x0000_FFFF;
/// North zone, ranks 5-8 (spec §1).
pub const NORTH_ZONE: u32 = 0xFFFF_0000;
/// Zone masks indexed by `Side::index()`.
pub const ZONES: [Bitboard; 2] = [Bitboard(SOUTH_ZONE), Bitboard(NORTH_ZONE)];
