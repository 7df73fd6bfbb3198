//! The MCTS-solver (Winands et al. 2008) and Gumbel root search (Danihelka et al. 2022), with the
//! uniform evaluator or a small hand-made one. Positions with a forced win in
//! 3 plies were found by exhaustive 3-ply search from random games and are
//! checked again here by brute force.

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Move, Side};
use martian_search::{EvalError, Evaluation, Evaluator, Mcts, MctsConfig, RootSelection, UniformEvaluator};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// Martian Chess, North to move: b6a5 forces a win in 3 plies (16 legal moves).
const MC_MATE3: &str = "QQDQ/1DP1/1P2/4/2PP/1DDD/P2Q/PQQ1 N 0 2 b2b3 2 5 17";
/// Jetan, Black to move: c4f5 forces a win in 3 plies (95 legal moves).
const JETAN_MATE3: &str = "WLD3FD1W/T1NN1NN1N1/3N3NL1/3N4C1/1t2T1P3/p5f3/n1c7/3nnn1n2/1wn4nnt/1ldf2Fdlw b - - 53 53";

fn legal<G: GameState>(s: &G) -> Vec<Move> {
    let mut v = Vec::new();
    s.legal_moves(&mut v);
    v
}

fn wins_now<G: GameState>(s: &G, me: Side) -> bool {
    legal(s).iter().any(|&m| {
        let mut t = s.clone();
        t.play_unchecked(m);
        t.outcome().is_some_and(|o| o.winner == Some(me))
    })
}

/// True if `mv` wins by force within 3 plies for the side to move in `s`.
fn forces_win_in_3<G: GameState>(s: &G, mv: Move) -> bool {
    let me = s.side_to_move();
    let mut t = s.clone();
    t.play_unchecked(mv);
    if let Some(o) = t.outcome() {
        return o.winner == Some(me);
    }
    legal(&t).iter().all(|&r| {
        let mut u = t.clone();
        u.play_unchecked(r);
        match u.outcome() {
            Some(o) => o.winner == Some(me),
            None => wins_now(&u, me),
        }
    })
}

fn cfg(solver: bool, root: RootSelection) -> MctsConfig {
    MctsConfig { solver, root_selection: root, ..MctsConfig::default() }
}

fn check_mate3<G: GameState>(pos: &G, sims: u32) {
    assert!(!wins_now(pos, pos.side_to_move()), "the position must have no win in one");
    assert!(legal(pos).iter().any(|&m| forces_win_in_3(pos, m)), "the position must have a forced win in 3");
    let mut tree = Mcts::new(cfg(true, RootSelection::Puct), pos.clone());
    let res = tree.search(&mut UniformEvaluator, sims, false, &mut StdRng::seed_from_u64(1)).unwrap();
    assert_eq!(tree.root_exact(), Some(1.0), "the root is a proven win");
    let best = res.best_move().unwrap();
    assert!(forces_win_in_3(pos, best), "played {}, which does not force the win", pos.move_to_string(best));
    let i = res.visits.iter().position(|v| v.0 == best).unwrap();
    assert_eq!(res.exact[i], Some(1.0), "the move played is reported as a proven win");
    // Every proven loss among the root moves really allows a win in one... or loses at once.
    // Without the solver nothing is reported as proven.
    let mut plain = Mcts::new(cfg(false, RootSelection::Puct), pos.clone());
    let res = plain.search(&mut UniformEvaluator, sims, false, &mut StdRng::seed_from_u64(1)).unwrap();
    assert_eq!(plain.root_exact(), None);
    assert!(res.exact.iter().all(Option::is_none));
}

#[test]
fn solver_proves_martian_chess_win_in_3() {
    let pos = MartianChess::from_position(MC_MATE3, &MartianRules::default()).unwrap();
    check_mate3(&pos, 3000);
}

#[test]
fn solver_proves_jetan_win_in_3() {
    let pos = Jetan::from_position(JETAN_MATE3, &JetanRules::default()).unwrap();
    check_mate3(&pos, 20_000);
}

#[test]
fn solver_proves_the_loss_for_the_side_that_cannot_escape() {
    // After the forcing move, every reply loses: the root (the defender) is a proven loss.
    let mut pos = MartianChess::from_position(MC_MATE3, &MartianRules::default()).unwrap();
    pos.play(pos.parse_move("b6a5").unwrap()).unwrap();
    let mut tree = Mcts::new(cfg(true, RootSelection::Puct), pos);
    let res = tree.search(&mut UniformEvaluator, 2000, false, &mut StdRng::seed_from_u64(2)).unwrap();
    assert_eq!(tree.root_exact(), Some(-1.0));
    assert!(res.exact.iter().all(|e| *e == Some(-1.0)), "{:?}", res.exact);
    // A proven loss still has a move to play.
    assert!(res.best_move().is_some());
}

/// Gives every position the same value except the one after `good` from the
/// root, which is bad for its side to move (so `good` is the root's best move).
struct OneGoodMove {
    bad_hash: u64,
}

impl<G: GameState> Evaluator<G> for OneGoodMove {
    fn evaluate(&mut self, states: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        out.clear();
        for (s, m) in states.iter().zip(moves) {
            let value = if s.hash() == self.bad_hash { -0.8 } else { 0.0 };
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

#[test]
fn gumbel_finds_a_winning_move_among_many_with_2_simulations() {
    // MC12 (spec): a4b5 wins at once; with two simulations and Gumbel noise
    // over uniform priors, the move is found for every seed.
    let pos = MartianChess::from_position("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0", &MartianRules::default()).unwrap();
    // And in Jetan's spec E3 position, Black's e7e8 takes the Princess among 30+ moves.
    let jetan = Jetan::from_position("C9/10/4P5/4n5/10/10/10/10/10/c8p b OB - 0 0", &JetanRules::default()).unwrap();
    assert!(legal(&jetan).len() >= 5);
    for seed in 0..20 {
        let mut tree = Mcts::new(cfg(false, RootSelection::Gumbel), pos);
        let res = tree.search(&mut UniformEvaluator, 2, true, &mut StdRng::seed_from_u64(seed)).unwrap();
        assert_eq!(pos.move_to_string(res.best_move().unwrap()), "a4b5", "seed {seed}");
        let mut tree = Mcts::new(cfg(false, RootSelection::Gumbel), jetan.clone());
        let res = tree.search(&mut UniformEvaluator, 2, true, &mut StdRng::seed_from_u64(seed)).unwrap();
        assert_eq!(jetan.move_to_string(res.best_move().unwrap()), "e7e8", "seed {seed}");
    }
}

#[test]
fn gumbel_sequential_halving_keeps_the_best_move_and_spends_the_budget() {
    // The start position: no tactics within reach of the search, so the
    // evaluator's one good move is the only difference between moves.
    let pos = Jetan::new_game(&JetanRules::default()).unwrap();
    let moves = legal(&pos);
    assert!(moves.len() >= 30);
    let good = moves[moves.len() / 2];
    let mut after = pos.clone();
    after.play_unchecked(good);
    let mut ev = OneGoodMove { bad_hash: after.hash() };
    // A budget above the number of moves, so that every move is a candidate.
    const N: u32 = 200;
    let c = MctsConfig { gumbel_considered: 1024, ..cfg(false, RootSelection::Gumbel) };
    // Without noise (play): deterministic, and the good move is chosen.
    let mut tree = Mcts::new(c.clone(), pos.clone());
    let res = tree.search(&mut ev, N, false, &mut StdRng::seed_from_u64(0)).unwrap();
    let total: u32 = res.visits.iter().map(|v| v.1).sum();
    assert_eq!(total, N);
    let show = |m: Option<Move>| res.visits.iter().zip(&res.q).find(|(v, _)| Some(v.0) == m).map(|(v, q)| (v.1, *q));
    assert_eq!(res.chosen, Some(good), "{:?} {:?}", show(res.chosen), show(Some(good)));
    assert_eq!(res.best_move(), Some(good));
    // Halving: `gumbel_considered` moves got a first visit, and the good one the most.
    let visited = res.visits.iter().filter(|v| v.1 >= 1).count();
    assert_eq!(visited, moves.len(), "{:?}", res.visits);
    let most = res.visits.iter().map(|v| v.1).max().unwrap();
    assert_eq!(res.visits.iter().find(|v| v.0 == good).unwrap().1, most);
    let again = Mcts::new(c.clone(), pos.clone()).search(&mut ev, N, false, &mut StdRng::seed_from_u64(9)).unwrap();
    assert_eq!(again.visits, res.visits);
    // With Gumbel noise (self-play) the choice is a sample that favours the
    // good move: with N simulations over all its moves, most of the time.
    let hits = (0..40)
        .filter(|&seed| {
            let mut tree = Mcts::new(c.clone(), pos.clone());
            tree.search(&mut ev, N, true, &mut StdRng::seed_from_u64(seed)).unwrap().best_move() == Some(good)
        })
        .count();
    assert!(hits >= 30, "the good move was chosen in {hits} of 40 searches");
    // PUCT with the same budget spreads its visits by prior instead (control).
    let mut tree = Mcts::new(cfg(false, RootSelection::Puct), pos.clone());
    let res = tree.search(&mut ev, N, false, &mut StdRng::seed_from_u64(0)).unwrap();
    assert_eq!(res.chosen, None);
}
