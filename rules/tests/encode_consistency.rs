//! The policy index of a move and the input planes agree on where the moving
//! piece stands (same canonical orientation), for both games and both sides.

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Move};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// `from_of(action)` = canonical origin square of a non-Escape action, or None.
fn check<G: GameState>(start: G, from_of: impl Fn(usize) -> Option<usize>, own_planes: std::ops::Range<usize>) {
    let [c, h, w] = G::INPUT_SHAPE;
    let mut rng = StdRng::seed_from_u64(1);
    let mut planes = vec![0.0; c * h * w];
    let mut moves: Vec<Move> = Vec::new();
    let mut checked = 0;
    for _game in 0..30 {
        let mut s = start.clone();
        while s.outcome().is_none() {
            s.encode(&mut planes);
            s.legal_moves(&mut moves);
            for &m in &moves {
                let a = s.action_index(m);
                if let Some(sq) = from_of(a) {
                    let occupied = own_planes.clone().any(|p| planes[p * h * w + sq] == 1.0);
                    assert!(
                        occupied,
                        "{}: move {} -> action {a} from canonical square {sq}, no own piece there\n{}",
                        s.to_position(),
                        s.move_to_string(m),
                        s.board_text()
                    );
                    checked += 1;
                }
            }
            let &m = moves.choose(&mut rng).unwrap();
            s.play_unchecked(m);
        }
    }
    assert!(checked > 1000);
}

#[test]
fn jetan_actions_and_planes_agree() {
    check(Jetan::new_game(&JetanRules::default()).unwrap(), |a| (a < 4800).then_some(a / 48), 0..8);
}

#[test]
fn martian_actions_and_planes_agree() {
    // Martian Chess pieces have no owner: the origin must hold some piece (planes 0..3)
    // and lie in the mover's zone, rows 0..4 of the canonical board.
    check(
        MartianChess::new_game(&MartianRules::default()).unwrap(),
        |a| {
            let from = a / 32;
            assert!(from < 16, "origin {from} is not in the mover's (bottom) zone");
            Some(from)
        },
        0..3,
    );
}
