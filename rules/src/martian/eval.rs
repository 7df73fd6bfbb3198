//! The two-player Martian Chess evaluation of the alpha-beta baseline and
//! its [`AbGame`] hooks.

use super::tables::ZONES;
use super::{MartianChess, Piece as MPiece};
use crate::ab::{mix, AbGame, StaticEval};
use crate::game::{GameState, Move};
use crate::pyramids;

/// Martian Chess evaluation: score difference (100 per pip) + material in the
/// own zone + pieces capturable next move (a bonus for the side to move's
/// best capture, a penalty for its own pieces en prise).
#[derive(Clone, Debug, PartialEq)]
pub struct MartianEval {
    /// Per pip of score difference.
    pub score: i32,
    /// Per pip of material in the own zone.
    pub zone_material: i32,
    /// Per pip of the best capture the side to move has.
    pub threat: i32,
    /// Per pip of the best capture the opponent would have.
    pub en_prise: i32,
}

impl Default for MartianEval {
    fn default() -> Self {
        MartianEval { score: 100, zone_material: 15, threat: 50, en_prise: 25 }
    }
}

#[inline]
fn mc_max_pips(s: &MartianChess, squares: u32) -> i32 {
    for p in [MPiece::Queen, MPiece::Drone, MPiece::Pawn] {
        if s.pieces(p).0 & squares != 0 {
            return p.value() as i32;
        }
    }
    0
}

impl StaticEval<MartianChess> for MartianEval {
    #[inline]
    fn evaluate(&self, s: &MartianChess) -> i32 {
        let (me, op) = (s.side_to_move(), s.side_to_move().opponent());
        let zones = [ZONES[0].0, ZONES[1].0];
        let mut v = pyramids::score_and_material(s, zones, self.score, self.zone_material);
        v += self.threat * mc_max_pips(s, s.capture_targets(me).0);
        v -= self.en_prise * mc_max_pips(s, s.capture_targets(op).0);
        v
    }
}

impl AbGame for MartianChess {
    type Eval = MartianEval;

    /// Depths 1, 2, 3: a quick run reaches depth 3 within an hour on 2 cores.
    const LADDER_DEPTHS: &'static [u32] = &[1, 2, 3];

    #[inline]
    fn search_key(&self) -> u64 {
        let mut h = self.hash();
        if self.clock_countdown().is_none() {
            // The clock is called after 7 quiet plies (spec §9.2).
            h = mix(h, 0x300 + self.quiet().min(7) as u64);
        }
        let left = self.rules().max_plies.saturating_sub(self.ply());
        if left <= 64 {
            h = mix(h, 0x2000 + left as u64);
        }
        h
    }

    #[inline]
    fn capture_values(&self, mv: Move) -> Option<(i32, i32)> {
        pyramids::capture_values(self, mv)
    }
}
