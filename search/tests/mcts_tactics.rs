//! MCTS with the uniform evaluator (no network): tactics, visit accounting,
//! reproducibility. Positions from the rules specs (jetan E3, martian-chess MC12).

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Move};
use martian_search::{Evaluation, Evaluator, Mcts, MctsConfig, UniformEvaluator};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn search<G: GameState>(pos: &G, sims: u32, seed: u64, noise: bool) -> (Mcts<G>, Move) {
    let mut tree = Mcts::new(MctsConfig::default(), pos.clone());
    let mut rng = StdRng::seed_from_u64(seed);
    let res = tree.search(&mut UniformEvaluator, sims, noise, &mut rng).unwrap();
    let best = res.best_move().unwrap();
    (tree, best)
}

/// True if the side to move after `mv` has a move that wins at once.
fn allows_win_in_one<G: GameState>(pos: &G, mv: Move) -> bool {
    let mut s = pos.clone();
    s.play_unchecked(mv);
    if s.outcome().is_some() {
        return false;
    }
    let me = s.side_to_move();
    let mut moves = Vec::new();
    s.legal_moves(&mut moves);
    moves.iter().any(|&m| {
        let mut t = s.clone();
        t.play_unchecked(m);
        t.outcome().is_some_and(|o| o.winner == Some(me))
    })
}

#[test]
fn jetan_finds_princess_capture_in_one() {
    // Spec E3: the Black Panthan on e7 takes the Princess on e8.
    let pos = Jetan::from_position("C9/10/4P5/4n5/10/10/10/10/10/c8p b OB - 0 0", &JetanRules::default()).unwrap();
    let (_, best) = search(&pos, 400, 1, false);
    assert_eq!(pos.move_to_string(best), "e7e8");
}

#[test]
fn jetan_avoids_loss_in_one() {
    // Same position, Orange to move: anything that leaves the Princess on e8 loses at once.
    let pos = Jetan::from_position("C9/10/4P5/4n5/10/10/10/10/10/c8p o OB - 0 0", &JetanRules::default()).unwrap();
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    assert!(moves.iter().any(|&m| allows_win_in_one(&pos, m)), "the test needs losing moves");
    let (_, best) = search(&pos, 20_000, 2, false);
    assert!(!allows_win_in_one(&pos, best), "chose {}", pos.move_to_string(best));
}

#[test]
fn martian_finds_winning_tiebreak_capture() {
    // Spec MC12: a4xb5 makes it 6-6 and the last mover wins the tie; a4-a5..a8 lose.
    let pos = MartianChess::from_position("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0", &MartianRules::default()).unwrap();
    let (_, best) = search(&pos, 400, 3, false);
    assert_eq!(pos.move_to_string(best), "a4b5");
}

#[test]
fn martian_avoids_loss_in_one() {
    // North to move after South's a4-b4 in MC12's position: check the chosen move gives no immediate win.
    let pos = MartianChess::from_position("3Q/2D1/4/1P2/1Q2/4/4/4 N 5 6 - - 0 0", &MartianRules::default()).unwrap();
    let (_, best) = search(&pos, 800, 4, false);
    assert!(!allows_win_in_one(&pos, best), "chose {}", pos.move_to_string(best));
}

#[test]
fn visit_counts_sum_to_simulations() {
    for sims in [1u32, 7, 64, 300] {
        let pos = MartianChess::new_game(&MartianRules::default()).unwrap();
        let (tree, _) = search(&pos, sims, 5, true);
        assert_eq!(tree.root_children().iter().map(|c| c.visits).sum::<u32>(), sims);
        let pos = Jetan::new_game(&JetanRules::default()).unwrap();
        let (tree, _) = search(&pos, sims, 5, true);
        assert_eq!(tree.root_children().iter().map(|c| c.visits).sum::<u32>(), sims);
    }
}

#[test]
fn virtual_loss_batches_keep_the_visit_count() {
    let pos = Jetan::new_game(&JetanRules::default()).unwrap();
    let cfg = MctsConfig { leaves_per_batch: 8, ..MctsConfig::default() };
    let mut tree = Mcts::new(cfg, pos);
    let mut rng = StdRng::seed_from_u64(9);
    tree.search(&mut UniformEvaluator, 200, false, &mut rng).unwrap();
    assert_eq!(tree.child_visits(), 200);
    assert!(tree.root_children().iter().all(|c| c.in_flight == 0));
}

#[test]
fn noise_is_seeded_and_reproducible() {
    let pos = Jetan::new_game(&JetanRules::default()).unwrap();
    let priors = |seed: u64| -> Vec<f32> {
        let (tree, _) = search(&pos, 50, seed, true);
        tree.root_children().iter().map(|c| c.prior).collect()
    };
    let a = priors(11);
    assert_eq!(a, priors(11), "same seed, same noise");
    assert_ne!(a, priors(12), "another seed, other noise");
    let uniform = 1.0 / a.len() as f32;
    assert!(a.iter().any(|&p| (p - uniform).abs() > 1e-4), "noise was mixed in");
    assert!((a.iter().sum::<f32>() - 1.0).abs() < 1e-4, "priors still sum to 1");
    let visits = |seed| -> Vec<u32> {
        let (tree, _) = search(&pos, 100, seed, true);
        tree.root_children().iter().map(|c| c.visits).collect()
    };
    assert_eq!(visits(3), visits(3));
}

#[test]
fn temperature_sampling_is_seeded() {
    let pos = MartianChess::new_game(&MartianRules::default()).unwrap();
    let (tree, best) = search(&pos, 100, 1, false);
    let pick = |seed| tree.choose_move(1.0, &mut StdRng::seed_from_u64(seed)).unwrap();
    assert_eq!(pick(5), pick(5));
    assert_eq!(tree.choose_move(0.0, &mut StdRng::seed_from_u64(5)), Some(best));
}

/// An evaluator whose value says "the side to move is winning" everywhere:
/// the root's value must then be negative for the root mover after one ply
/// of back-up (each edge's Q is for the side choosing it).
struct AlwaysWinning;

impl<G: GameState> Evaluator<G> for AlwaysWinning {
    fn evaluate(
        &mut self,
        p: &[&G],
        m: &[&[Move]],
        out: &mut Vec<Evaluation>,
    ) -> Result<(), martian_search::EvalError> {
        UniformEvaluator.evaluate(p, m, out)?;
        out.iter_mut().for_each(|e| e.value = 1.0);
        Ok(())
    }
}

#[test]
fn backup_negates_once_per_ply() {
    let pos = MartianChess::new_game(&MartianRules::default()).unwrap();
    let mut tree = Mcts::new(MctsConfig::default(), pos);
    let mut rng = StdRng::seed_from_u64(1);
    tree.search(&mut AlwaysWinning, 1, false, &mut rng).unwrap();
    // Root evaluated (+1 for its mover), one child evaluated (+1 for the child's mover = opponent).
    let child = tree.root_children().iter().find(|c| c.visits == 1).unwrap();
    assert_eq!(child.q(), Some(-1.0), "child Q is for the root mover, who is losing there");
}

#[test]
fn tree_reuse_keeps_the_subtree() {
    let pos = Jetan::new_game(&JetanRules::default()).unwrap();
    let (mut tree, best) = search(&pos, 300, 1, false);
    let kept = tree.root_children().iter().find(|c| c.mv == best).unwrap().visits;
    tree.advance(best);
    assert_eq!(tree.root().visits, kept);
    assert_eq!(tree.child_visits() + 1, kept, "the new root's children hold its visits but its own expansion");
    let mut rng = StdRng::seed_from_u64(2);
    tree.search(&mut UniformEvaluator, 50, false, &mut rng).unwrap();
    assert_eq!(tree.child_visits() + 1, kept + 50);
}
