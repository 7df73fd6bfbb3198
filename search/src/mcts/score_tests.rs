//! The score utility (KataGo's static and dynamic score utility, Wu,
//! "Accelerating Self-Play Learning in Go", arXiv:1902.10565, §4.2) on a
//! real Martian Chess tree with a fake evaluator whose values and scores are
//! known: each root move's subtree has one value and one expected final
//! point difference everywhere, so each root move's mean utility is the
//! formula's number and the move the search prefers is the formula's.

use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::GameState;
use rand::rngs::StdRng;
use rand::SeedableRng;

use super::tree::Mcts;
use crate::config::MctsConfig;
use crate::evaluator::Evaluation;

/// Per root move `j`: `(value, score)` for the root's side to move of
/// every position below it (the first two root moves; the others get
/// `OTHERS`). The root itself: value 0, score `root_score`.
const SUBTREES: [(f32, f32); 2] = [(0.1, -10.0), (0.0, 10.0)];
const OTHERS: (f32, f32) = (-0.5, 0.0);

fn f(x: f32) -> f32 {
    std::f32::consts::FRAC_2_PI * x.atan()
}

/// Runs `sims` simulations from the start position with the fake
/// evaluator (scores given when `with_scores`); returns the tree.
fn search(cfg: MctsConfig, sims: u32, with_scores: bool, root_score: f32) -> Mcts<MartianChess> {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let root_side = start.side_to_move();
    let mut t = Mcts::new(cfg, start);
    let mut rng = StdRng::seed_from_u64(11);
    t.begin_search(false, sims, &mut rng);
    while t.child_visits() < sims {
        t.gather(1, &mut rng);
        let first = t.nodes[0].first_child;
        let evals: Vec<Evaluation> = (0..t.num_pending())
            .map(|k| {
                let p = &t.pending[k];
                let n = p.len;
                let (v, s, priors) = if p.path.len() == 1 {
                    // The root: the first two moves share 0.8 of the prior.
                    let rest = 0.2 / (n - 2) as f32;
                    let priors = (0..n).map(|i| if i < 2 { 0.4 } else { rest }).collect();
                    (0.0, root_score, priors)
                } else {
                    let j = (p.path[1] - first) as usize;
                    let (v, s) = SUBTREES.get(j).copied().unwrap_or(OTHERS);
                    (v, s, vec![1.0 / n as f32; n])
                };
                // For the leaf's side to move.
                let sign = if p.state.side_to_move() == root_side { 1.0 } else { -1.0 };
                Evaluation { priors, value: sign * v, score: with_scores.then_some(sign * s), ..Evaluation::default() }
            })
            .collect();
        t.apply_evaluations(&evals, &mut rng);
    }
    t
}

/// The most visited root move: 0 or 1 (the two moves of `SUBTREES`).
fn preferred(t: &Mcts<MartianChess>) -> usize {
    let children = t.root_children();
    let best = t.best_move().unwrap();
    let j = children.iter().position(|c| c.mv == best).unwrap();
    assert!(j < 2, "one of the two good moves is played, got {j}");
    j
}

/// The static utility `value + w f(score / scale)`: move 0 (value 0.1,
/// score -10) against move 1 (value 0, score +10) at scale 10 is
/// `0.1 - w/2` against `w/2`, so move 1 is preferred from `w = 0.1`; each
/// move's mean utility is the formula's number and its plain value and
/// score lead are reported as they are.
#[test]
fn static_score_utility_changes_the_move_as_the_formula_says() {
    let plain = search(MctsConfig::default(), 400, true, 0.0);
    assert_eq!(preferred(&plain), 0, "without the utility the higher value wins");
    for (w, want) in [(0.05, 0), (0.2, 1)] {
        let cfg = MctsConfig { static_score_utility: w, ..MctsConfig::default() };
        let t = search(cfg, 400, true, 0.0);
        assert_eq!(preferred(&t), want, "w_static = {w}");
        let children = t.root_children();
        for (j, &(v, s)) in SUBTREES.iter().enumerate() {
            let c = &children[j];
            assert!(c.visits > 0);
            let utility = v + w * f(s / 10.0);
            assert!((c.q().unwrap() - utility).abs() < 1e-4, "move {j}: utility {} vs {utility}", c.q().unwrap());
            assert!((c.value_q().unwrap() - v).abs() < 1e-4, "move {j}: value {}", c.value_q().unwrap());
            assert!((c.score_lead().unwrap() - s).abs() < 1e-3, "move {j}: score {}", c.score_lead().unwrap());
        }
        let r = t.result();
        assert!((r.q[0].unwrap() - 0.1).abs() < 1e-4 && r.q[1].unwrap().abs() < 1e-4, "plain values: {:?}", &r.q[..2]);
        assert!((r.scores[0].unwrap() + 10.0).abs() < 1e-3 && (r.scores[1].unwrap() - 10.0).abs() < 1e-3);
        let lead = r.root_score.unwrap();
        assert!((-10.0..=10.0).contains(&lead), "root score lead {lead}");
        assert!(r.root_value.abs() <= 1.0);
    }
}

/// The dynamic utility `w f((score - c) / scale)` is centred on the root's
/// expected score `c` (here the root's own evaluation, +20): move 0 gets
/// `0.1 + w f(-3)`, move 1 `w f(-1)`, so move 1 is preferred from
/// `w = 0.1 / (f(-1) - f(-3)) = 0.34`, not from 0.1 as without the centre.
#[test]
fn dynamic_score_utility_is_centred_on_the_root_score() {
    let threshold = 0.1 / (f(-1.0) - f(-3.0));
    assert!((0.33..0.35).contains(&threshold));
    for (w, want) in [(0.2, 0), (0.6, 1)] {
        let cfg = MctsConfig { dynamic_score_utility: w, ..MctsConfig::default() };
        let t = search(cfg, 400, true, 20.0);
        assert_eq!(t.score_center(), Some(20.0));
        assert_eq!(preferred(&t), want, "w_dynamic = {w}");
        let c = &t.root_children()[0];
        let utility = 0.1 + w * f(-3.0);
        assert!((c.q().unwrap() - utility).abs() < 1e-4, "utility {} vs {utility}", c.q().unwrap());
    }
}

/// The nodes of two trees: move, visits, value sum (bits), children.
fn nodes(t: &Mcts<MartianChess>) -> Vec<(martian_rules::Move, u32, u32, u32, u32)> {
    t.nodes.iter().map(|n| (n.mv, n.visits, n.value_sum.to_bits(), n.first_child, n.num_children)).collect()
}

/// With both weights at 0 (the default) a search whose evaluator gives
/// scores builds, node for node and bit for bit, the tree of a search
/// without scores, and so does a search with weights but no scores; the
/// reported values are the same, only the score leads are added.
#[test]
fn with_the_weights_at_zero_the_search_is_unchanged() {
    let before = search(MctsConfig::default(), 300, false, 5.0);
    assert!(before.num_nodes() > 300);
    let zero = MctsConfig {
        static_score_utility: 0.0,
        dynamic_score_utility: 0.0,
        score_utility_scale: 3.0,
        ..MctsConfig::default()
    };
    let scored = search(zero, 300, true, 5.0);
    assert_eq!(nodes(&scored), nodes(&before));
    let (a, b) = (before.result(), scored.result());
    assert_eq!((a.root_value.to_bits(), &a.visits, &a.q), (b.root_value.to_bits(), &b.visits, &b.q));
    assert_eq!((a.root_score, b.root_score.is_some()), (None, true));
    assert!(a.scores.iter().all(Option::is_none) && b.scores.iter().any(Option::is_some));
    let on = MctsConfig { static_score_utility: 0.5, dynamic_score_utility: 0.5, ..MctsConfig::default() };
    let unscored = search(on, 300, false, 5.0);
    assert_eq!(nodes(&unscored), nodes(&before), "no score, no utility");
}

/// The settings are checked by name, and refused with more than two value players.
#[test]
fn score_utility_settings_are_checked_by_name() {
    let bad = MctsConfig { static_score_utility: 1.5, ..MctsConfig::default() };
    assert!(bad.validate().unwrap_err().starts_with("search.static_score_utility"));
    let bad = MctsConfig { dynamic_score_utility: -0.1, ..MctsConfig::default() };
    assert!(bad.validate().unwrap_err().starts_with("search.dynamic_score_utility"));
    let bad = MctsConfig { score_utility_scale: 0.0, ..MctsConfig::default() };
    assert!(bad.validate().unwrap_err().starts_with("search.score_utility_scale"));
    let four = MctsConfig { static_score_utility: 0.1, ..MctsConfig::default() };
    assert!(four.validate_for_players(4).unwrap_err().starts_with("search.static_score_utility"));
    assert!(four.validate_for_players(2).is_ok());
}

/// The root moves' value spread ([`Mcts::root_value_stddev`]) counts every
/// value backed up through each move, without the score utility: its mean
/// is the move's plain value ([`Node::value_q`](super::Node::value_q)), not
/// its utility, and a subtree of one value everywhere has no spread.
#[test]
fn the_root_spread_counts_the_plain_values() {
    let cfg = MctsConfig { static_score_utility: 0.5, ..MctsConfig::default() };
    let t = search(cfg, 200, true, 0.0);
    let sd = t.root_value_stddev();
    let mut checked = 0;
    for (k, c) in t.root_children().iter().enumerate() {
        let [n, sum, _] = t.root_spread.get(k).copied().unwrap_or([0.0; 3]);
        assert_eq!(n, f64::from(c.visits), "every visit counted");
        if c.visits >= 2 {
            let (q, u) = (c.value_q().unwrap(), c.q().unwrap());
            assert!(((sum / n) as f32 - q).abs() < 1e-5, "the plain value's mean {} vs {q}", sum / n);
            assert!((q - u).abs() > 1e-3, "the utility differs here ({u} vs {q}), so the test tells them apart");
            assert!(sd[k].is_some_and(|s| s < 1e-3), "one value everywhere: no spread ({:?})", sd[k]);
            checked += 1;
        } else {
            assert_eq!(sd[k], None, "fewer than two values");
        }
    }
    assert!(checked >= 2, "the two favoured moves are visited");
}
