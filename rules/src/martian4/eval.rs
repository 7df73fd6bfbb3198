//! The four-player Martian Chess evaluation of the alpha-beta baseline and
//! its [`AbGame`] hooks.
//!
//! The baseline plays the **team view** of the game (module docs of
//! [`super`]): the side to move is the mover's team, consecutive plies
//! belong to different teams (§14.3), so the alpha-beta search is plain
//! negamax over the team value, exactly as in a two-player game. In
//! free-for-all the same search plays for its team's summed value (a
//! documented simplification: it is a yardstick, not a max^n search).

use super::{MartianChess4, Seat, QUADS};
use crate::ab::{mix, AbGame, StaticEval};
use crate::game::{GameState, Move, Side};
use crate::pyramids;

/// Four-player evaluation in centi-pips for the side to move's team:
/// `score` per pip of team score difference (§14.7: team scores add) plus
/// `zone_material` per pip of material in the team's two quadrants minus the
/// other team's.
#[derive(Clone, Debug, PartialEq)]
pub struct Martian4Eval {
    /// Per pip of team score difference.
    pub score: i32,
    /// Per pip of material in the team's quadrants.
    pub zone_material: i32,
}

impl Default for Martian4Eval {
    fn default() -> Self {
        Martian4Eval { score: 100, zone_material: 15 }
    }
}

/// The two quadrants of `team` (SW + NE for South, NW + SE for North).
#[inline]
fn team_zone(team: Side) -> u64 {
    Seat::ALL.iter().filter(|s| s.team() == team).fold(0, |m, s| m | QUADS[s.index()])
}

impl StaticEval<MartianChess4> for Martian4Eval {
    #[inline]
    fn evaluate(&self, s: &MartianChess4) -> i32 {
        let zones = [team_zone(Side::South), team_zone(Side::North)];
        pyramids::score_and_material(s, zones, self.score, self.zone_material)
    }
}

impl AbGame for MartianChess4 {
    type Eval = Martian4Eval;

    /// Depths 1 and 2 (four plies of a four-player game are one round).
    const LADDER_DEPTHS: &'static [u32] = &[1, 2];

    #[inline]
    fn search_key(&self) -> u64 {
        let mut h = self.hash();
        let r = self.rules();
        match self.clock_countdown() {
            None => h = mix(h, 0x300 + self.quiet().min(r.clock_plies) as u64),
            Some(c) => h = mix(h, 0x400 + c as u64),
        }
        let left = r.max_plies.saturating_sub(self.ply());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pyramids::PyramidState;

    #[test]
    fn initial_position_is_balanced_and_captures_are_scored() {
        let s = MartianChess4::new_game(&Default::default()).unwrap();
        assert_eq!(Martian4Eval::default().evaluate(&s), 0);
        // SW's zone has 18 pips, like every quadrant (§14.2).
        assert_eq!(pyramids::pips(&s.view().bb, QUADS[Seat::SW.index()]), 18);
        assert_eq!(pyramids::pips(&s.view().bb, team_zone(Side::South)), 36);
        let mut moves = Vec::new();
        s.legal_moves(&mut moves);
        for m in moves {
            // No capture is possible from the initial position.
            assert_eq!(s.capture_values(m), None, "{}", s.move_to_string(m));
        }
        // SW's Pawn on d4 (from c3) can take the NE Pawn on e5 (from f6; a
        // capture, 1 pip) or step to c5 outside its quadrant (not a capture).
        let p = MartianChess4::from_position(
            "QQD2DQQ/QDP2PDQ/DPP3PD/4P3/3P4/DP3PPD/QDP2PDQ/QQD2DQQ SW 0 0 0 0 - 0 0",
            &Default::default(),
        )
        .unwrap();
        assert_eq!(p.capture_values(p.parse_move("d4e5").unwrap()), Some((100, 1)));
        assert_eq!(p.capture_values(p.parse_move("d4c5").unwrap()), None);
        // After the capture SW's team leads by one pip.
        let mut q = p;
        q.play(p.parse_move("d4e5").unwrap()).unwrap();
        assert_eq!(q.team_scores(), [1, 0]);
    }
}
