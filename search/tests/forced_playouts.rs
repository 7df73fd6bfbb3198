//! Forced playouts and policy target pruning (Wu 2019, arXiv:1902.10565,
//! §3.1; `search.forced_playouts_k`, `Mcts::pruned_visits`).

use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Move, Side};
use martian_search::{EvalError, Evaluation, Evaluator, Mcts, MctsConfig};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// Uniform priors; the value says the root mover is winning (0.9) wherever
/// the dominant move's trace is on the board (its origin empty, its
/// destination occupied) and losing (-0.9) elsewhere, so that PUCT alone
/// gives every other root move its first visit and no more.
struct Dominant {
    root_mover: Side,
    mv: Move,
}

impl Evaluator<MartianChess> for Dominant {
    fn evaluate(
        &mut self,
        states: &[&MartianChess],
        moves: &[&[Move]],
        out: &mut Vec<Evaluation>,
    ) -> Result<(), EvalError> {
        out.clear();
        for (s, m) in states.iter().zip(moves) {
            let traced = s.piece_at(self.mv.from).is_none() && s.piece_at(self.mv.to).is_some();
            let for_root = if traced { 0.9 } else { -0.9 };
            let value = if s.side_to_move() == self.root_mover { for_root } else { -for_root };
            out.push(Evaluation {
                priors: vec![1.0 / m.len().max(1) as f32; m.len()],
                value,
                draw: 0.0,
                values: Vec::new(),
                score: None,
            });
        }
        Ok(())
    }
}

const SIMS: u32 = 400;

/// A 400-visit search with root noise from the Martian Chess start, the
/// middle legal move being the dominant one.
fn search(k: f32, seed: u64) -> (Mcts<MartianChess>, Move) {
    let pos = MartianChess::new_game(&MartianRules::default()).unwrap();
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    let mv = moves[moves.len() / 2];
    let mut ev = Dominant { root_mover: pos.side_to_move(), mv };
    let cfg = MctsConfig { forced_playouts_k: k, ..MctsConfig::default() };
    let mut tree = Mcts::new(cfg, pos);
    tree.search(&mut ev, SIMS, true, &mut StdRng::seed_from_u64(seed)).unwrap();
    (tree, mv)
}

/// `n_forced(c) = sqrt(k P(c) N)` with the search's (noised) prior and the root children's visits.
fn n_forced(tree: &Mcts<MartianChess>, k: f32, prior: f32) -> f32 {
    (k * prior * tree.child_visits() as f32).sqrt()
}

#[test]
fn every_visited_child_reaches_its_forced_count() {
    for seed in 0..10 {
        let (tree, dominant) = search(2.0, seed);
        assert!(tree.forced_playouts());
        assert_eq!(tree.child_visits(), SIMS);
        let children = tree.root_children();
        let top = children.iter().max_by_key(|c| c.visits).unwrap();
        assert_eq!(top.mv, dominant, "seed {seed}: the dominant move gets the most visits");
        let visited = children.iter().filter(|c| c.visits > 0).count();
        assert!(visited >= 5, "seed {seed}: only {visited} children visited");
        for c in children.iter().filter(|c| c.visits > 0) {
            // Forcing is checked at each selection against the total at that
            // time; by the end every visited child holds at least floor(n_forced).
            let need = n_forced(&tree, 2.0, c.prior);
            assert!(
                c.visits as f32 >= need.floor(),
                "seed {seed}: {:?} has {} visits, n_forced {need:.2}",
                c.mv,
                c.visits
            );
        }
    }
}

#[test]
fn without_forcing_children_stay_below_their_forced_count() {
    // The same searches with k = 0: PUCT alone leaves visited children below
    // what k = 2 would force (so the test above can fail).
    let mut short = 0;
    for seed in 0..10 {
        let (tree, _) = search(0.0, seed);
        assert!(!tree.forced_playouts());
        short += tree
            .root_children()
            .iter()
            .filter(|c| c.visits > 0 && (c.visits as f32) < n_forced(&tree, 2.0, c.prior).floor())
            .count();
    }
    assert!(short >= 10, "only {short} visited children below their forced count without forcing");
}

#[test]
fn pruning_takes_the_forced_visits_out_of_the_target() {
    for seed in 0..10 {
        let (tree, dominant) = search(2.0, seed);
        let children = tree.root_children();
        let pruned = tree.pruned_visits();
        assert_eq!(pruned.len(), children.len());
        let best = children.iter().position(|c| c.mv == dominant).unwrap();
        assert_eq!(pruned[best], children[best].visits, "seed {seed}: the best child keeps its full count");
        let kept: u32 = pruned.iter().sum();
        let others = (kept - pruned[best]) as f32 / kept as f32;
        let before = (SIMS - children[best].visits) as f32 / SIMS as f32;
        // The others held their forced visits; pruned, they are (near) zero.
        assert!(before > 0.1, "seed {seed}: the others had {before:.3} of the visits: the test needs forcing");
        // A child whose noised prior is large earns a second visit from PUCT
        // itself; those stay, so "near" zero.
        assert!(others < 0.03, "seed {seed}: the others keep {others:.3} of the target after pruning");
        let removed = pruned.iter().enumerate().filter(|&(i, &n)| i != best && n == 0).count();
        assert!(removed * 3 >= (children.len() - 1) * 2, "seed {seed}: only {removed} children removed: {pruned:?}");
        for (i, c) in children.iter().enumerate() {
            assert!(pruned[i] <= c.visits);
            assert!(pruned[i] != 1, "a child left with one visit is removed");
        }
    }
    // Without forced playouts in the search, nothing is pruned.
    let (tree, _) = search(0.0, 1);
    let plain: Vec<u32> = tree.root_children().iter().map(|c| c.visits).collect();
    assert_eq!(tree.pruned_visits(), plain);
}

#[test]
fn no_forcing_without_noise() {
    // Forced playouts belong to searches with root noise (self-play's full searches).
    let pos = MartianChess::new_game(&MartianRules::default()).unwrap();
    let cfg = MctsConfig { forced_playouts_k: 2.0, ..MctsConfig::default() };
    let plain = MctsConfig::default();
    let mut ev = Dominant { root_mover: Side::South, mv: Move::new(0, 0) };
    let mut a = Mcts::new(cfg, pos);
    a.search(&mut ev, 200, false, &mut StdRng::seed_from_u64(3)).unwrap();
    let mut b = Mcts::new(plain, pos);
    b.search(&mut ev, 200, false, &mut StdRng::seed_from_u64(3)).unwrap();
    assert!(!a.forced_playouts());
    assert_eq!(a.result().visits, b.result().visits);
}
