//! The Jetan positions T1-T5 where the network-free search lost (Princess traps three plies deep, the
//! longest resistance): the network-free search (`UniformEvaluator`, the
//! default settings, as `engine --engine mcts-uniform` and `mcts:` players
//! without a model run it) plays a good move at 100 and 400 visits over 20
//! seeds. The good-move sets are computed here by plain minimax over the
//! rules (every move played), and checked against the sets the issue gives.

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::{GameState, Move};
use martian_search::{Mcts, MctsConfig, UniformEvaluator};
use rand::rngs::StdRng;
use rand::SeedableRng;

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

/// Plain minimax: the side to move forces a win within `plies` (odd),
/// every move played (the last ply by playing every move, too).
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

/// Plies within which the opponent forces a win after `m` (1 or 3), or
/// `None` when it does not within three (the move itself not counted).
fn loses_within(g: &Jetan, m: Move) -> Option<u32> {
    let a = play(g, m);
    if let Some(o) = a.outcome() {
        return (o.winner == Some(a.side_to_move())).then_some(0);
    }
    [1, 3].into_iter().find(|&p| forces_win(&a, p))
}

/// Moves after which the opponent has no forced win within three plies.
fn safe_moves(g: &Jetan) -> Vec<String> {
    legal(g).into_iter().filter(|&m| loses_within(g, m).is_none_or(|p| p > 3)).map(|m| g.move_to_string(m)).collect()
}

/// When every move loses within three plies: the moves that lose last.
fn longest_resistance(g: &Jetan) -> Vec<String> {
    let plies: Vec<(Move, Option<u32>)> = legal(g).into_iter().map(|m| (m, loses_within(g, m))).collect();
    assert!(plies.iter().all(|(_, p)| p.is_some_and(|p| p <= 3)), "not every move loses within three plies");
    let long = plies.iter().filter_map(|(_, p)| *p).max().unwrap();
    plies.iter().filter(|(_, p)| *p == Some(long)).map(|(m, _)| g.move_to_string(*m)).collect()
}

/// Moves that start a forced win within `plies` (odd, the move included).
fn winning_moves(g: &Jetan, plies: u32) -> Vec<String> {
    let me = g.side_to_move();
    legal(g)
        .into_iter()
        .filter(|&m| {
            let a = play(g, m);
            match a.outcome() {
                Some(o) => o.winner == Some(me),
                None => {
                    plies >= 3
                        && legal(&a).into_iter().all(|r| {
                            let b = play(&a, r);
                            match b.outcome() {
                                Some(o) => o.winner == Some(me),
                                None => forces_win(&b, plies - 2),
                            }
                        })
                }
            }
        })
        .map(|m| g.move_to_string(m))
        .collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn words(s: &str) -> Vec<String> {
    sorted(s.split_whitespace().map(str::to_string).collect())
}

/// How many of 20 seeded searches (tie seed and generator) of `visits`
/// simulations play one of `good`; the moves played otherwise.
/// `trap_plies` as given (the default: 3).
fn searches_finding(g: &Jetan, good: &[String], visits: u32, trap_plies: u32) -> (usize, Vec<String>) {
    let mut bad = Vec::new();
    let mut found = 0;
    for seed in 0..20u64 {
        // Sequential, or 8 leaves a batch as `engine` and `analyse` search.
        let batch = if seed % 2 == 0 { 1 } else { 8 };
        let cfg = MctsConfig { leaves_per_batch: batch, trap_plies, ..MctsConfig::default() };
        let mut tree = Mcts::new(cfg, g.clone());
        tree.set_tie_seed(seed);
        let res = tree.search(&mut UniformEvaluator, visits, false, &mut StdRng::seed_from_u64(seed)).unwrap();
        let mv = g.move_to_string(res.best_move().unwrap());
        if good.contains(&mv) {
            found += 1;
        } else {
            bad.push(mv);
        }
    }
    (found, bad)
}

/// Self-play's move choice: searches with root noise, then a move sampled
/// at temperature 1 (`Mcts::choose_move`), 20 seeds; the moves played
/// that are not in `good`.
fn selfplay_misses(g: &Jetan, good: &[String], visits: u32) -> Vec<String> {
    let mut bad = Vec::new();
    for seed in 0..20u64 {
        let mut tree = Mcts::new(MctsConfig { leaves_per_batch: 4, ..MctsConfig::default() }, g.clone());
        tree.set_tie_seed(seed);
        let mut rng = StdRng::seed_from_u64(100 + seed);
        tree.search(&mut UniformEvaluator, visits, true, &mut rng).unwrap();
        let mv = g.move_to_string(tree.choose_move(1.0, &mut rng).unwrap());
        if !good.contains(&mv) {
            bad.push(mv);
        }
    }
    bad
}

fn check(name: &str, g: &Jetan, good: &[String]) {
    for visits in [100, 400] {
        let (found, bad) = searches_finding(g, good, visits, MctsConfig::default().trap_plies);
        assert_eq!(found, 20, "{name} at {visits} visits: a good move in {found} of 20 searches; played {bad:?}");
        let bad = selfplay_misses(g, good, visits);
        assert!(bad.is_empty(), "{name} at {visits} visits, self-play's choice: played {bad:?}");
    }
}

const T12: &str = "a9a8 c2d3 e10i6 i2h3 j9i7 d1g4 i6f8 g1d4 g9h8 d4g5 f8e6 e1c3 e6g7 c3d6";

#[test]
fn t1_takes_the_princess() {
    let g = after(&format!("{T12} f10e7"));
    let good = sorted(winning_moves(&g, 1));
    assert_eq!(good, words("d6e7 d6g7"));
    check("T1", &g, &good);
}

#[test]
fn t2_does_not_hang_the_princess() {
    let g = after(T12);
    let good = sorted(safe_moves(&g));
    assert_eq!(good, words("g7e10 g7i6 g7i8 g7j9"));
    check("T2", &g, &good);
}

#[test]
fn t3_avoids_a_three_ply_trap() {
    let g = after("e10b8 f1i4 g9g8 i2h3 f10g7");
    assert_eq!(legal(&g).len(), 58);
    let good = sorted(safe_moves(&g));
    assert_eq!(good, words("i4c3 i4c4 i4d3 i4e3 i4f1 i4f3 i4g3 i4i2 i4i3 i4j3"));
    assert!(!good.contains(&"i4b6".to_string()));
    check("T3", &g, &good);
}

#[test]
fn t4_springs_the_trap() {
    let g = after("e10b8 f1i4 g9g8 i2h3 f10g7 i4b6");
    assert!(winning_moves(&g, 1).is_empty());
    // Two moves win in three plies, four more in five.
    assert_eq!(sorted(winning_moves(&g, 3)), words("g7d5 g7d6"));
    let good = sorted(winning_moves(&g, 5));
    assert_eq!(good, words("g7d5 g7d6 g7e5 g7e6 g7f5 g7f6"));
    check("T4", &g, &good);
}

#[test]
fn t5_resists_longest() {
    let g = after("g9g8 f1e4 e10i8 g2g3 f10g7 e4h3 g7g5 h3c5 g5e5");
    assert!(safe_moves(&g).is_empty());
    let good = sorted(longest_resistance(&g));
    assert_eq!(good, words("c5a3 c5a4 c5a5 c5a6"));
    check("T5", &g, &good);
}

/// The same positions without the trap proofs (`trap_plies = 0`, the search
/// before the trap proofs): it misses T3 in some seeds, so the test above tests them.
#[test]
fn without_the_trap_proofs_t3_is_missed() {
    let g = after("e10b8 f1i4 g9g8 i2h3 f10g7");
    let good = sorted(safe_moves(&g));
    let (found, _) = searches_finding(&g, &good, 400, 0);
    let missed = 20 - found;
    assert!(missed > 0, "the search without trap proofs found a safe move in every seed");
}
