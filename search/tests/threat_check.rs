//! The two-ply threat check at leaves (`search.leaf_threat_check`, alone: the
//! trap proofs of `search.trap_plies`, which include it, are off here): positions
//! where one move avoids an immediate loss and every other move allows it.
//! The positions come from seeded random games (side to move without a
//! winning move of its own, exactly one move that does not hand the opponent
//! a win at once).

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Move};
use martian_search::{Mcts, MctsConfig, UniformEvaluator};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// Whether `mv` loses at once: it ends the game with the mover's loss, or the
/// opponent then has a winning move (checked by brute force).
fn loses<G: GameState>(g: &G, mv: Move) -> bool {
    let mut s = g.clone();
    s.play_unchecked(mv);
    match s.outcome() {
        Some(o) => o.winner == Some(s.side_to_move()),
        None => martian_rules::has_winning_move_by_play(&s),
    }
}

/// `(position, the one saving move)`; the test checks that claim by brute force.
const JETAN: [(&str, &str); 3] = [
    ("WLD4DLW/F1NN2NN1T/1C1NF1N2P/1TN6N/6c3/10/tn8/5p4/1n1nnnn1nt/wldf2fdlw o - - 11 50", "j8g10"),
    ("WLD2C1D1W/4NNN2N/T5N1L1/3N2F3/8F1/N8n/2fn6/1dn4n2/t1P1nc2nt/wlp4dlw o - - 4 72", "c2a4"),
    ("WLD3LDCW/FNTN4N1/2N1N1NN2/P2N1T4/7f2/2c5t1/6F1n1/nn1n2n1nw/1t1n3np1/wldf3dl1 o - - 60 60", "a7d10"),
];
const MARTIAN: [(&str, &str); 4] = [
    ("2D1/1Q1D/Q2P/P3/3D/PQP1/D2Q/1DQ1 N 5 2 b2b3 2 5 29", "b7b3"),
    ("Q1DP/QDQ1/DPP1/2P1/2P1/1DP1/1QDQ/D3 S 0 3 d5c6 2 12 18", "d2d8"),
    ("D2P/2Q1/1QD1/4/2D1/P2P/Q2P/1DQQ S 3 6 a7c7 2 5 30", "c4c6"),
    ("2DP/1QQ1/4/4/2DQ/P2P/3P/1DQQ S 5 6 c6c4 2 5 36", "d4d8"),
];

/// In how many of `seeds` searches of `sims` simulations (uniform evaluator,
/// tie seed and root noise varying with the seed) the move played is `save`.
fn found<G: GameState>(pos: &G, save: Move, check: bool, sims: u32, seeds: u64, solver: bool) -> u64 {
    let cfg = MctsConfig { leaf_threat_check: check, solver, trap_plies: 0, ..MctsConfig::default() };
    (0..seeds)
        .filter(|&seed| {
            let mut tree = Mcts::new(cfg.clone(), pos.clone());
            tree.set_tie_seed(seed);
            let res =
                tree.search(&mut UniformEvaluator, sims, seed % 2 == 1, &mut StdRng::seed_from_u64(seed)).unwrap();
            res.best_move() == Some(save)
        })
        .count() as u64
}

fn check_position<G: GameState>(pos: &G, save: &str) -> Move {
    let save = pos.parse_move(save).unwrap();
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    assert!(!pos.has_winning_move(), "{}: the mover could win at once", pos.to_position());
    let safe: Vec<Move> = moves.iter().copied().filter(|&m| !loses(pos, m)).collect();
    assert_eq!(safe, vec![save], "{}: exactly one saving move", pos.to_position());
    let mut after = pos.clone();
    after.play_unchecked(save);
    assert!(after.outcome().is_none(), "the saving move does not end the game (terminal_children would see it)");
    assert!(moves.len() >= 20, "{}: only {} moves", pos.to_position(), moves.len());
    save
}

#[test]
fn sixteen_simulations_find_the_saving_move_with_the_check_and_not_without() {
    const SEEDS: u64 = 20;
    let mut report = Vec::new();
    let mut off_total = 0;
    let mut check = |text: &str, on: u64, off: u64, solver_on: u64| {
        report.push(format!("{text}: with the check {on}/{SEEDS}, without {off}/{SEEDS}"));
        assert_eq!(on, SEEDS, "{text}: with the check, the saving move in only {on} of {SEEDS} searches");
        assert_eq!(solver_on, SEEDS, "{text}: with the check and the solver, {solver_on} of {SEEDS}");
        assert!(off < SEEDS, "{text}: without the check, found in every search: not a test of it");
        off_total += off;
    };
    for (text, save) in JETAN {
        let pos = Jetan::from_position(text, &JetanRules::default()).unwrap();
        let save = check_position(&pos, save);
        let on = found(&pos, save, true, 16, SEEDS, false);
        let off = found(&pos, save, false, 16, SEEDS, false);
        check(text, on, off, found(&pos, save, true, 16, SEEDS, true));
    }
    for (text, save) in MARTIAN {
        let pos = MartianChess::from_position(text, &MartianRules::default()).unwrap();
        let save = check_position(&pos, save);
        let on = found(&pos, save, true, 16, SEEDS, false);
        let off = found(&pos, save, false, 16, SEEDS, false);
        check(text, on, off, found(&pos, save, true, 16, SEEDS, true));
    }
    eprintln!("{}", report.join("\n"));
    let searches = SEEDS * (JETAN.len() + MARTIAN.len()) as u64;
    assert!(
        off_total * 2 <= searches,
        "without the check the saving move was found in {off_total} of {searches} searches"
    );
}

/// Positions where every move hands the opponent an immediate win.
const ALL_LOST: [(&str, bool); 2] = [
    ("WLDF1C1DLW/T1NNN1NNNT/1N4N3/5F4/10/p9/1t1f6/5n4/1nnnn1nnnt/wldfcP1dlw o - - 8 8", true),
    ("1QD1/2D1/Q1Q1/P1P1/2P1/P1D1/PP1Q/D2Q S 2 5 d6c5 2 5 26", false),
];

/// Root value and proven root value after `sims` simulations.
fn root_after<G: GameState>(pos: &G, check: bool, solver: bool, sims: u32) -> (f32, Option<f32>) {
    let cfg = MctsConfig { leaf_threat_check: check, solver, trap_plies: 0, ..MctsConfig::default() };
    let mut tree = Mcts::new(cfg, pos.clone());
    let res = tree.search(&mut UniformEvaluator, sims, false, &mut StdRng::seed_from_u64(1)).unwrap();
    (res.root_value, tree.root_exact())
}

fn check_all_lost<G: GameState>(pos: &G) {
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    assert!(moves.len() >= 10);
    for &m in &moves {
        let mut s = pos.clone();
        s.play_unchecked(m);
        assert!(
            s.outcome().is_none() && loses(pos, m),
            "{}: {} does not lose at once",
            pos.to_position(),
            pos.move_to_string(m)
        );
    }
    // One simulation: the root's expansion and one child. With the check the
    // root is valued -1 at expansion and the child confirms it; without, the
    // uniform evaluator's 0 and the child's -1 average to -0.5.
    assert_eq!(root_after(pos, true, false, 1), (-1.0, None));
    assert_eq!(root_after(pos, false, false, 1), (-0.5, None));
    // With the solver, the root is proven lost at its expansion.
    assert_eq!(root_after(pos, true, true, 1), (-1.0, Some(-1.0)));
    assert_eq!(root_after(pos, false, true, 1).1, None);
}

#[test]
fn a_node_whose_every_move_loses_in_two_plies_is_lost() {
    for (text, jetan) in ALL_LOST {
        if jetan {
            check_all_lost(&Jetan::from_position(text, &JetanRules::default()).unwrap());
        } else {
            check_all_lost(&MartianChess::from_position(text, &MartianRules::default()).unwrap());
        }
    }
}

/// After the root's expansion, the children that hand the opponent a win are
/// exactly those the check marked (a win for the child's side to move).
fn check_marks<G: GameState>(pos: &G) {
    for check in [true, false] {
        let cfg = MctsConfig { leaf_threat_check: check, trap_plies: 0, solver: false, ..MctsConfig::default() };
        let mut tree = Mcts::new(cfg, pos.clone());
        tree.search(&mut UniformEvaluator, 1, false, &mut StdRng::seed_from_u64(1)).unwrap();
        let mut marked = 0;
        for c in tree.root_children() {
            let mut s = pos.clone();
            s.play_unchecked(c.mv);
            let threat = s.outcome().is_none() && martian_rules::has_winning_move_by_play(&s);
            let want = (check && threat).then_some(1.0);
            assert_eq!(c.solved, want, "{} {} (check {check})", pos.to_position(), pos.move_to_string(c.mv));
            marked += usize::from(c.solved.is_some());
        }
        assert_eq!(marked > 0, check);
    }
}

#[test]
fn the_check_marks_exactly_the_moves_that_hand_over_a_win() {
    for (text, _) in JETAN {
        check_marks(&Jetan::from_position(text, &JetanRules::default()).unwrap());
    }
    for (text, _) in MARTIAN {
        check_marks(&MartianChess::from_position(text, &MartianRules::default()).unwrap());
    }
}
