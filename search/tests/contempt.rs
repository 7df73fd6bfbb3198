//! Contempt (`search.contempt`): a draw worth `-c` to the contempt side and
//! `+c` to the other, in finished games and at every leaf through the value
//! head's draw probability (lc0's contempt; `docs/experiments/2026-12-05-jetan-contempt-and-draw-value.md`).

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::{GameState, Move, Side};
use martian_search::{ContemptMode, EvalError, Evaluation, Evaluator, Mcts, MctsConfig, UniformEvaluator};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// Jetan spec E2: Black's Dwar on e5 can take the Orange Chief on e8 (`e5e8`),
/// a draw under the standard rules; no other move ends the game or lets
/// Orange win at once.
const E2: &str = "P9/10/4C5/10/10/4d5/10/10/10/c8p b OB - 0 0";

fn search(pos: &Jetan, side: Side, c: f32, visits: u32) -> (Mcts<Jetan>, martian_search::SearchResult) {
    let mut tree = Mcts::new(MctsConfig::default(), pos.clone());
    tree.set_contempt(side, c);
    let result = tree.search(&mut UniformEvaluator, visits, false, &mut StdRng::seed_from_u64(7)).unwrap();
    (tree, result)
}

/// The side that wants a draw takes it; the side that does not, avoids it;
/// the drawing move's exact value for its chooser is the chooser's draw
/// utility (`+c` or `-c`).
#[test]
fn a_drawing_capture_follows_the_contempt_side() {
    let pos = Jetan::from_position(E2, &JetanRules::default()).unwrap();
    assert_eq!(pos.side_to_move(), Side::South, "Black moves in E2");
    let draw = pos.parse_move("e5e8").unwrap();
    // The drawing move's Q (its exact value, visited or not: the game value
    // in `exact` stays 0, a draw).
    let q_of = |r: &martian_search::SearchResult| {
        let i = r.visits.iter().position(|&(m, _)| m == draw).unwrap();
        assert_eq!(r.exact[i], Some(0.0), "a proven draw whatever the contempt");
        r.q[i]
    };
    // Orange is the contempt side: a draw is +0.3 to Black, who takes it.
    let (_, r) = search(&pos, Side::North, 0.3, 200);
    assert_eq!(r.best_move(), Some(draw));
    let e = q_of(&r).expect("the best move is visited");
    assert!((e - 0.3).abs() < 1e-6, "the draw is worth +0.3 to Black, got {e}");
    // Black is the contempt side: the draw is -0.3 to Black, who plays on.
    let (_, r) = search(&pos, Side::South, 0.3, 200);
    assert_ne!(r.best_move(), Some(draw));
    if let Some(e) = q_of(&r) {
        assert!((e + 0.3).abs() < 1e-6, "the draw is worth -0.3 to Black, got {e}");
    }
}

/// Without contempt an engine's tree makes the side to move of the searched
/// position the contempt side (lc0's convention) when the config sets one.
#[test]
fn the_config_contempt_applies_to_the_side_to_move_of_the_root() {
    let pos = Jetan::from_position(E2, &JetanRules::default()).unwrap();
    let draw = pos.parse_move("e5e8").unwrap();
    let cfg = MctsConfig { contempt: 0.2, ..MctsConfig::default() };
    let mut tree = Mcts::new(cfg.clone(), pos.clone());
    assert_eq!(tree.contempt(), (Side::South, 0.2));
    let r = tree.search(&mut UniformEvaluator, 200, false, &mut StdRng::seed_from_u64(7)).unwrap();
    assert_ne!(r.best_move(), Some(draw), "Black, the contempt side, avoids the draw");
    // A reset to a position with Orange to move makes Orange the contempt side.
    let orange = Jetan::from_position(&E2.replace(" b ", " o "), &JetanRules::default()).unwrap();
    tree.reset(orange);
    assert_eq!(tree.contempt(), (Side::North, 0.2));
    // With contempt 0 nothing changes: the draw is exactly 0.
    let mut tree = Mcts::new(MctsConfig::default(), pos.clone());
    let r = tree.search(&mut UniformEvaluator, 200, false, &mut StdRng::seed_from_u64(7)).unwrap();
    let i = r.visits.iter().position(|&(m, _)| m == draw).unwrap();
    assert_eq!(r.exact[i], Some(0.0));
}

/// Uniform priors, value 0, and a draw probability `d` at every position.
struct Drawish(f32);

impl<G: GameState> Evaluator<G> for Drawish {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        UniformEvaluator.evaluate(positions, moves, out)?;
        for e in out.iter_mut() {
            e.draw = self.0;
        }
        Ok(())
    }
}

/// A leaf is worth `W - L + u D` to its side to move: with every position
/// rated a sure draw (D = 1) the root's value is the root side's draw
/// utility, `-c` for the contempt side, `+c` for the other, and 0 without
/// contempt, whatever the depth of the leaves (the utilities are zero-sum).
#[test]
fn the_draw_probability_enters_every_leaf_value() {
    let start = Jetan::new_game(&JetanRules::default()).unwrap();
    let (me, other) = (start.side_to_move(), start.side_to_move().opponent());
    for (side, c, want) in [(me, 0.25, -0.25), (other, 0.25, 0.25), (me, 0.0, 0.0)] {
        let mut tree = Mcts::new(MctsConfig::default(), start.clone());
        tree.set_contempt(side, c);
        let r = tree.search(&mut Drawish(1.0), 300, false, &mut StdRng::seed_from_u64(3)).unwrap();
        assert!(
            (r.root_value - want).abs() < 1e-4,
            "contempt {c} for {side:?}: root value {} (want {want})",
            r.root_value
        );
        // Every visited root move is worth the same: its Q is the draw utility.
        for (q, &(_, n)) in r.q.iter().zip(&r.visits) {
            if n > 0 {
                let q = q.expect("a visited move has a Q");
                assert!((q - want).abs() < 1e-4, "a root move's Q {q}, want {want}");
            }
        }
    }
    // A half-drawish network: the utility scales with D.
    let mut tree = Mcts::new(MctsConfig::default(), start);
    tree.set_contempt(me, 0.4);
    let r = tree.search(&mut Drawish(0.5), 300, false, &mut StdRng::seed_from_u64(3)).unwrap();
    assert!((r.root_value + 0.2).abs() < 1e-4, "root value {}", r.root_value);
}

/// The config's range, and free-for-all refuses it (two-player zero-sum).
#[test]
fn contempt_is_checked() {
    let ok = MctsConfig { contempt: 0.5, ..MctsConfig::default() };
    assert!(ok.validate().is_ok());
    for bad in [-0.1f32, 0.6, f32::NAN] {
        let e = MctsConfig { contempt: bad, ..MctsConfig::default() }.validate().unwrap_err();
        assert!(e.contains("search.contempt"), "{e}");
    }
    let e = ok.validate_for_players(4).unwrap_err();
    assert!(e.contains("search.contempt") && e.contains("set it to 0"), "{e}");
}

/// `contempt_mode = "material"`: the side ahead on material
/// (`GameState::material_leader`) is the one a draw costs. In E2 Black's
/// Dwar is the only piece besides the Chiefs and Princesses, so Black is
/// ahead and declines the Chief's capture; with an Orange Dwar on a3 the
/// material is level and the capture is an even draw (0), whatever the
/// contempt; the tree's side (`set_contempt`) plays no part.
#[test]
fn material_contempt_costs_the_side_ahead() {
    let cfg = MctsConfig { contempt: 0.3, contempt_mode: ContemptMode::Material, ..MctsConfig::default() };
    for (fen, want) in [(E2, -0.3f32), ("P9/10/4C5/10/10/4d5/10/D9/10/c8p b OB - 0 0", 0.0)] {
        let pos = Jetan::from_position(fen, &JetanRules::default()).unwrap();
        let draw = pos.parse_move("e5e8").unwrap();
        for side in [Side::South, Side::North] {
            let mut tree = Mcts::new(cfg.clone(), pos.clone());
            tree.set_contempt(side, 0.3);
            let r = tree.search(&mut UniformEvaluator, 200, false, &mut StdRng::seed_from_u64(7)).unwrap();
            let i = r.visits.iter().position(|&(m, _)| m == draw).unwrap();
            if want < 0.0 {
                assert_ne!(r.best_move(), Some(draw), "{fen}: Black is ahead and plays on");
            }
            if let Some(q) = r.q[i] {
                assert!((q - want).abs() < 1e-6, "{fen}: the draw's Q {q}, want {want}");
            }
        }
    }
}
