//! The play-time tactical check ([`Veto`], [`Session::with_veto`]) on Jetan
//! positions: a move the MCTS chose that loses the Princess by force is
//! replaced by one that does not; when every move loses, the MCTS move stays;
//! a depth of 0 changes nothing. The losses are computed here by plain
//! minimax over the rules (every move played), independently of the
//! alpha-beta search the check runs.

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::{GameState, Move};
use martian_search::{
    AlphaBeta, AlphaBetaConfig, EvalError, Evaluation, Evaluator, Limits, MctsConfig, SearchLimits, Session, Veto,
};

/// The position after `moves` (text, space-separated) from the start.
fn after(moves: &str) -> Jetan {
    let mut g = Jetan::new_game(&JetanRules::default()).unwrap();
    for m in moves.split_whitespace() {
        let mv = g.parse_move(m).unwrap_or_else(|e| panic!("{m}: {e}"));
        g.play_unchecked(mv);
    }
    g
}

fn legal(g: &Jetan) -> Vec<Move> {
    let mut v = Vec::new();
    g.legal_moves(&mut v);
    v
}

fn play(g: &Jetan, m: Move) -> Jetan {
    let mut s = g.clone();
    s.play_unchecked(m);
    s
}

/// Plain minimax: the side to move forces a win within `plies` (odd).
fn forces_win(g: &Jetan, plies: u32) -> bool {
    if g.outcome().is_some() {
        return false;
    }
    let me = g.side_to_move();
    legal(g).into_iter().any(|m| {
        let a = play(g, m);
        if let Some(o) = a.outcome() {
            return o.winner == Some(me);
        }
        plies >= 3 && {
            let replies = legal(&a);
            !replies.is_empty()
                && replies.into_iter().all(|r| {
                    let b = play(&a, r);
                    match b.outcome() {
                        Some(o) => o.winner == Some(me),
                        None => forces_win(&b, plies - 2),
                    }
                })
        }
    })
}

/// Whether the opponent forces a win within three plies after `m`.
fn loses_within_3(g: &Jetan, m: Move) -> bool {
    let a = play(g, m);
    match a.outcome() {
        Some(o) => o.winner == Some(a.side_to_move()),
        None => forces_win(&a, 3),
    }
}

/// T3 of `jetan_traps.rs`: Black's `i4b6` walks into a three-ply trap (Orange
/// then forces the capture of the Princess), ten moves are safe.
fn t3() -> Jetan {
    after("e10b8 f1i4 g9g8 i2h3 f10g7")
}

/// Priors that put 0.9 on one move (when legal) and share the rest; value 0.
/// A network that likes a blunder.
struct Likes(Move);

impl Evaluator<Jetan> for Likes {
    fn evaluate(&mut self, _: &[&Jetan], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        out.clear();
        for m in moves {
            let n = m.len();
            let priors = if m.contains(&self.0) && n > 1 {
                m.iter().map(|&x| if x == self.0 { 0.9 } else { 0.1 / (n - 1) as f32 }).collect()
            } else {
                vec![1.0 / n.max(1) as f32; n]
            };
            out.push(Evaluation { priors, value: 0.0, draw: 0.0, values: Vec::new(), score: None });
        }
        Ok(())
    }
}

/// An MCTS session that plays the blunder it likes: few visits and no trap
/// proofs of its own (`trap_plies = 0`), so only the check can see the trap.
fn blunderer(pos: &Jetan, likes: Move) -> Session<'static, Jetan, Likes> {
    let cfg = MctsConfig { trap_plies: 0, ..MctsConfig::default() };
    Session::mcts(cfg, Likes(likes), pos.clone())
}

#[test]
fn a_move_that_loses_the_princess_is_vetoed() {
    let g = t3();
    let trap = g.parse_move("i4b6").unwrap();
    assert!(loses_within_3(&g, trap), "the trap");
    assert!(legal(&g).iter().any(|&m| !loses_within_3(&g, m)), "safe moves exist");
    for visits in [1, 8, 32] {
        // Without the check the search plays the trap (the premise).
        let plain = blunderer(&g, trap).go(&SearchLimits::visits(visits), |_| {}).unwrap();
        assert_eq!(plain.best_move, Some(trap), "{visits} visits without the check");
        assert_eq!(plain.vetoed, None);
        for depth in [2, 3, 4] {
            let mut s = blunderer(&g, trap).with_veto(depth).unwrap();
            let info = s.go(&SearchLimits::visits(visits), |_| {}).unwrap();
            let played = info.best_move.unwrap();
            assert_eq!(info.vetoed, Some(trap), "{visits} visits, depth {depth}");
            assert!(
                !loses_within_3(&g, played),
                "{visits} visits, depth {depth}: the replacement {} loses too",
                g.move_to_string(played)
            );
            assert_eq!(info.pv.first(), Some(&played), "the line starts with the move played");
            // The most visited move that is not lost: no safe move has more visits.
            let visits_of = |m: Move| info.root_moves.iter().find(|r| r.mv == m).unwrap().visits;
            let best_safe = legal(&g).into_iter().filter(|&m| !loses_within_3(&g, m)).map(visits_of).max().unwrap();
            assert_eq!(visits_of(played), best_safe, "{visits} visits, depth {depth}");
        }
    }
}

#[test]
fn depth_zero_changes_nothing() {
    let g = t3();
    let trap = g.parse_move("i4b6").unwrap();
    for visits in [1, 8, 64] {
        let plain = blunderer(&g, trap).go(&SearchLimits::visits(visits), |_| {}).unwrap();
        let zero = blunderer(&g, trap).with_veto(0).unwrap().go(&SearchLimits::visits(visits), |_| {}).unwrap();
        let key = |i: &martian_search::Info| (i.best_move, i.pv.clone(), i.root_moves.clone(), i.vetoed);
        assert_eq!(key(&zero), key(&plain), "{visits} visits");
    }
    // The network-free search at its defaults, from the start: the same move and info.
    let start = Jetan::new_game(&JetanRules::default()).unwrap();
    let uniform =
        |d| Session::mcts(MctsConfig::default(), martian_search::UniformEvaluator, start.clone()).with_veto(d).unwrap();
    let plain = uniform(0).go(&SearchLimits::visits(100), |_| {}).unwrap();
    let checked = uniform(3).go(&SearchLimits::visits(100), |_| {}).unwrap();
    assert_eq!(checked.vetoed, None, "no opening move loses within 3 plies");
    assert_eq!((checked.best_move, checked.pv), (plain.best_move, plain.pv));
}

#[test]
fn when_every_move_loses_the_mcts_move_stays() {
    // Black forces the capture of Orange's Princess (a7, Escape spent): after
    // Black's best move every Orange move loses within two plies.
    let pos = Jetan::from_position("C9/t2t6/10/P2w6/10/10/10/10/10/c8p b B - 0 0", &JetanRules::default()).unwrap();
    let mut ab = AlphaBeta::<Jetan>::new(AlphaBetaConfig { tt_mib: 1, ..AlphaBetaConfig::default() });
    let best = ab.search(&pos, &Limits::depth(3)).best_move.unwrap();
    let lost = play(&pos, best);
    assert!(legal(&lost).iter().all(|&m| loses_within_3(&lost, m)), "every Orange move loses");
    let cfg = MctsConfig { trap_plies: 0, solver: false, ..MctsConfig::default() };
    for visits in [1, 16, 200] {
        let limits = SearchLimits::visits(visits);
        let plain = Session::mcts(cfg.clone(), martian_search::UniformEvaluator, lost.clone()).go(&limits, |_| {});
        let mut s = Session::mcts(cfg.clone(), martian_search::UniformEvaluator, lost.clone()).with_veto(4).unwrap();
        let checked = s.go(&limits, |_| {}).unwrap();
        let plain = plain.unwrap();
        assert_eq!(checked.vetoed, None, "{visits} visits");
        assert_eq!(checked.best_move, plain.best_move, "{visits} visits: the MCTS move stays");
    }
    // The check itself: every move proven lost, the chosen one kept.
    let mut v = Veto::<Jetan>::new(2).unwrap();
    let moves = legal(&lost);
    assert!(moves.iter().all(|&m| v.proven_loss(&lost, m)));
    let ranked: Vec<(Move, Option<f32>)> = moves.iter().map(|&m| (m, None)).collect();
    let out = v.check(&lost, moves[moves.len() - 1], &ranked);
    assert_eq!((out.played, out.vetoed), (moves[moves.len() - 1], None));
    assert_eq!(out.searches as usize, moves.len(), "each move searched once");
}

#[test]
fn the_check_trusts_the_solver_and_refuses_bad_depths() {
    let g = t3();
    let trap = g.parse_move("i4b6").unwrap();
    let safe = g.parse_move("i4c3").unwrap();
    let mut v = Veto::<Jetan>::new(3).unwrap();
    assert!(v.proven_loss(&g, trap));
    assert!(!v.proven_loss(&g, safe));
    // A move the solver proved lost is not searched again, and is no replacement.
    let other = g.parse_move("i4b5").unwrap();
    assert!(legal(&g).contains(&other));
    let ranked = vec![(trap, None), (other, Some(-1.0)), (safe, None)];
    let out = v.check(&g, trap, &ranked);
    assert_eq!((out.played, out.vetoed, out.searches), (safe, Some(trap), 2));
    // A proven win is kept without a search.
    let out = v.check(&g, trap, &[(trap, Some(1.0))]);
    assert_eq!((out.played, out.vetoed, out.searches), (trap, None, 0));
    for bad in [0, 9, u32::MAX] {
        assert!(Veto::<Jetan>::new(bad).is_err(), "{bad}");
    }
    let e = Session::mcts(MctsConfig::default(), martian_search::UniformEvaluator, g).with_veto(9).err().unwrap();
    assert!(e.contains("0..=8"), "{e}");
}
