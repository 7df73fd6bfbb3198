//! Draw aversion (`search.draw_aversion`): a draw is worth `-a` to both
//! sides, so the search is not zero-sum: each node holds its chooser's own
//! utility (`docs/experiments/2026-12-05-jetan-draw-aversion.md`: both sides dislike the early
//! Chief-capture draw).

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::{GameState, Move, Side};
use martian_search::{EvalError, Evaluation, Evaluator, Mcts, MctsConfig, SearchResult, UniformEvaluator};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// Jetan spec E2: Black's Dwar on e5 can take the Orange Chief on e8 (`e5e8`),
/// a draw under the standard rules; no other move ends the game or lets
/// Orange win at once.
const E2: &str = "P9/10/4C5/10/10/4d5/10/10/10/c8p b OB - 0 0";

fn search<E: Evaluator<Jetan>>(
    pos: &Jetan,
    a: f32,
    eval: &mut E,
    visits: u32,
    seed: u64,
) -> (Mcts<Jetan>, SearchResult) {
    let cfg = MctsConfig { draw_aversion: a, ..MctsConfig::default() };
    let mut tree = Mcts::new(cfg, pos.clone());
    let result = tree.search(eval, visits, false, &mut StdRng::seed_from_u64(seed)).unwrap();
    (tree, result)
}

/// Uniform priors, value `v` for Orange to move (`-v` for Black), and a
/// draw probability `d`, at every position.
struct Fixed {
    orange: f32,
    draw: f32,
}

impl Evaluator<Jetan> for Fixed {
    fn evaluate(
        &mut self,
        positions: &[&Jetan],
        moves: &[&[Move]],
        out: &mut Vec<Evaluation>,
    ) -> Result<(), EvalError> {
        UniformEvaluator.evaluate(positions, moves, out)?;
        for (e, p) in out.iter_mut().zip(positions) {
            e.value = if p.side_to_move() == Side::North { self.orange } else { -self.orange };
            e.draw = self.draw;
        }
        Ok(())
    }
}

/// The drawing capture's Q (its exact value for Black), and that it stays a
/// proven draw in the game's terms.
fn draw_q(r: &SearchResult, draw: Move) -> Option<f32> {
    let i = r.visits.iter().position(|&(m, _)| m == draw).unwrap();
    assert_eq!(r.exact[i], Some(0.0), "a proven draw whatever the aversion");
    r.q[i]
}

/// With even values everywhere Black declines the Chief's capture, which is
/// worth `-a` to it; when every other move looks lost (-0.9) the same draw
/// is a rescue and Black takes it.
#[test]
fn an_even_draw_is_declined_and_a_rescue_taken() {
    let pos = Jetan::from_position(E2, &JetanRules::default()).unwrap();
    assert_eq!(pos.side_to_move(), Side::South, "Black moves in E2");
    let draw = pos.parse_move("e5e8").unwrap();
    for seed in 0..10 {
        let (_, r) = search(&pos, 0.3, &mut UniformEvaluator, 200, seed);
        assert_ne!(r.best_move(), Some(draw), "seed {seed}: an even draw is declined");
        if let Some(q) = draw_q(&r, draw) {
            assert!((q + 0.3).abs() < 1e-6, "the draw is worth -0.3 to Black, got {q}");
        }
        let (_, r) = search(&pos, 0.3, &mut Fixed { orange: 0.9, draw: 0.0 }, 200, seed);
        assert_eq!(r.best_move(), Some(draw), "seed {seed}: the draw rescues Black from -0.9");
        let q = draw_q(&r, draw).expect("the best move is visited");
        assert!((q + 0.3).abs() < 1e-6, "the draw is worth -0.3 to Black, got {q}");
    }
}

/// Not zero-sum: with every position rated a sure draw (D = 1) each node's Q
/// is `-a` for its chooser at every depth (zero-sum contempt would give
/// `-c` and `+c` on alternate plies), the root's value is `-a` for its side
/// to move, and a half-drawish network costs half as much.
#[test]
fn a_sure_draw_costs_both_sides() {
    let start = Jetan::new_game(&JetanRules::default()).unwrap();
    for (a, d) in [(0.25f32, 1.0f32), (0.4, 0.5), (0.0, 1.0)] {
        let want = -a * d;
        let (mut tree, r) = search(&start, a, &mut Fixed { orange: 0.0, draw: d }, 400, 3);
        assert!((r.root_value - want).abs() < 1e-4, "a {a}, d {d}: root value {} (want {want})", r.root_value);
        let (best, _) = *r.visits.iter().max_by_key(|&&(_, n)| n).unwrap();
        for (q, &(_, n)) in r.q.iter().zip(&r.visits) {
            if n > 0 {
                let q = q.expect("a visited move has a Q");
                assert!((q - want).abs() < 1e-4, "a root move's Q {q} for the first player, want {want}");
            }
        }
        // One ply down, the other side's moves: the same cost, not its negation.
        tree.advance(best);
        let mut seen = 0;
        for c in tree.root_children().iter().filter(|c| c.visits > 0) {
            let q = c.q().expect("visited");
            assert!((q - want).abs() < 1e-4, "a reply's Q {q} for the second player, want {want}");
            seen += 1;
        }
        assert!(seen > 0, "the most visited move has visited replies");
    }
}

/// With aversion off the rescue is the same move and the drawing move's Q
/// is exactly 0 (the plain negamax values).
#[test]
fn aversion_off_leaves_the_draw_at_zero() {
    let pos = Jetan::from_position(E2, &JetanRules::default()).unwrap();
    let draw = pos.parse_move("e5e8").unwrap();
    let (_, r) = search(&pos, 0.0, &mut Fixed { orange: 0.9, draw: 0.0 }, 200, 1);
    assert_eq!(r.best_move(), Some(draw));
    assert_eq!(draw_q(&r, draw), Some(0.0));
}

/// The config's range, and free-for-all refuses it (two players only).
#[test]
fn draw_aversion_is_checked() {
    let ok = MctsConfig { draw_aversion: 0.5, ..MctsConfig::default() };
    assert!(ok.validate().is_ok());
    for bad in [-0.1f32, 0.6, f32::NAN] {
        let e = MctsConfig { draw_aversion: bad, ..MctsConfig::default() }.validate().unwrap_err();
        assert!(e.contains("search.draw_aversion"), "{e}");
    }
    let e = ok.validate_for_players(4).unwrap_err();
    assert!(e.contains("search.draw_aversion") && e.contains("set it to 0"), "{e}");
}
