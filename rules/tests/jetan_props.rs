//! Properties checked over seeded random play (spec §8.3 hash, §10.3 round
//! trip, §10.4 encoding, point symmetry of the standard setup).

#[path = "common/jetan_util.rs"]
mod jetan_util;

use std::collections::HashSet;

use jetan_util::*;
use martian_rules::jetan::{Jetan, JetanRules, Piece, Setup};
use martian_rules::{EndReason, GameState, Move, Side};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Positions (as states) from seeded random games; every other game avoids captures 90% of the time.
fn random_states(seed: u64, games: usize, rules: &JetanRules, mut f: impl FnMut(&Jetan)) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut mv = Vec::with_capacity(Jetan::MAX_MOVES);
    for game in 0..games {
        let mut g = Jetan::new_game(rules).unwrap();
        loop {
            f(&g);
            g.legal_moves(&mut mv);
            if mv.is_empty() {
                break;
            }
            let quiet: Vec<Move> = mv.iter().filter(|m| g.piece_at(m.to).is_none()).copied().collect();
            let pick = if game % 2 == 1 && !quiet.is_empty() && rng.gen_bool(0.9) {
                quiet[rng.gen_range(0..quiet.len())]
            } else {
                mv[rng.gen_range(0..mv.len())]
            };
            g.play_unchecked(pick);
        }
    }
}

#[test]
fn hash_roundtrip_and_move_bound() {
    let mut n = 0;
    let mut max_moves = 0;
    random_states(1, 200, &JetanRules::default(), |g| {
        n += 1;
        assert_eq!(g.hash(), g.recompute_hash(), "{g:?}");
        let s = g.to_position();
        let back = match Jetan::from_position(&s, g.rules()) {
            Ok(b) => b,
            Err(e) => {
                // Only a finished game may lack a Princess or Chief.
                let reason = g.outcome().map(|o| o.reason);
                assert!(
                    matches!(
                        reason,
                        Some(
                            EndReason::PrincessCaptured
                                | EndReason::ChiefCapturedByChief
                                | EndReason::ChiefCapturedByNonChief
                        )
                    ),
                    "{s}: {e}"
                );
                return;
            }
        };
        assert_eq!(back.to_position(), s);
        assert_eq!(back.hash(), g.hash());
        let c = g.count_legal_moves();
        assert!(c <= Jetan::MAX_MOVES);
        max_moves = max_moves.max(c);
        if g.outcome().is_none() {
            assert_eq!(back.count_legal_moves(), c);
        }
        let mut c2 = back.clone();
        c2.clone_from(g);
        assert_eq!(c2.to_position(), s);
        assert_eq!(c2.hash(), g.hash());
        assert_eq!(c2.outcome(), g.outcome());
    });
    assert!(n > 10_000, "{n} positions");
    assert!(max_moves > 78);
}

#[test]
fn move_bound_in_a_crowded_position() {
    // Princess with Escape in an almost empty board plus a full, spread army.
    let g = load("C8P/10/1t1l1f1d2/10/n1n1n1n1n1/10/n1n1n1w1w1/10/1t1l1f1d2/c8p b OB - 0 0");
    let c = g.count_legal_moves();
    assert!(c <= Jetan::MAX_MOVES, "{c}");
    assert_eq!(c, moves(&g).len());
}

#[test]
fn rotation_symmetry_and_canonical_encoding() {
    let mut checked = 0;
    let mut a = vec![0f32; 2400];
    let mut b = vec![0f32; 2400];
    random_states(2, 40, &JetanRules::default(), |g| {
        if g.outcome().is_some() {
            return;
        }
        let s = g.to_position();
        let r = rotate_fen(&s);
        let g1 = load(&s);
        let g2 = load(&r);
        assert_eq!(g1.count_legal_moves(), g2.count_legal_moves(), "{s} vs {r}");
        // Same canonical view: identical action sets and planes.
        let acts = |g: &Jetan| -> Vec<usize> {
            let mut v: Vec<usize> = moves(g).iter().map(|&m| g.action_index(m)).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(acts(&g1), acts(&g2), "{s}");
        g1.encode(&mut a);
        g2.encode(&mut b);
        assert_eq!(a, b, "{s}");
        checked += 1;
    });
    assert!(checked > 1000);
}

#[test]
fn action_index_unique_and_invertible() {
    for rules in [JetanRules::default(), JetanRules { setup: Setup::ManatorFacing, ..JetanRules::default() }] {
        random_states(3, 20, &rules, |g| {
            let mut seen = HashSet::new();
            for m in moves(g) {
                let i = g.action_index(m);
                assert!(i < Jetan::NUM_ACTIONS);
                assert!(seen.insert(i), "duplicate action {i} in {g:?}");
                assert_eq!(g.move_for_action(i), Some(m));
                assert_eq!(i >= 4800, g.is_escape(m));
            }
        });
    }
}

#[test]
fn action_index_examples() {
    let g = Jetan::new_game(&JetanRules::default()).unwrap();
    // Orange to move: rotated. Panthan e9e8 → canonical f2f3: from 15, Δ(0,+1): disp = 2*7+3 = 17.
    assert_eq!(g.action_index(Move::new(sq("e9"), sq("e8"))), 15 * 48 + 17);
    // Princess e10 Escape to a5 → canonical j6 = 59.
    assert_eq!(g.action_index(Move::new(sq("e10"), sq("a5"))), 4800 + 59);
    let g = load("WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw b OB - 0 0");
    // Black, unrotated: b2c3 from 11, Δ(+1,+1): disp = 2*7 + 4 = 18 (before the centre, 24).
    assert_eq!(g.action_index(Move::new(sq("b2"), sq("c3"))), 11 * 48 + 18);
    // b2b1 would be Δ(0,−1): lin = 4*7 + 3 = 31 → 30 after skipping the centre.
    assert_eq!(g.action_index(Move::new(sq("c2"), sq("c1"))), 12 * 48 + 30);
    // Flier d1a4: Δ(−3,+3) → disp 0.
    assert_eq!(g.action_index(Move::new(sq("d1"), sq("a4"))), 3 * 48);
    assert_eq!(g.move_for_action(3 * 48), Some(Move::new(sq("d1"), sq("a4"))));
    assert_eq!(g.move_for_action(0), None);
}

#[test]
fn encode_initial_planes() {
    let g = Jetan::new_game(&JetanRules::default()).unwrap();
    let mut x = vec![0f32; 2400];
    g.encode(&mut x);
    let at = |p: usize, sqi: u8| x[p * 100 + sqi as usize];
    // Orange to move, rotated: Orange's Chief f10 → canonical 99-95 = 4 (e1), Princess e10 → f1.
    assert_eq!(at(Piece::Chief as usize, 4), 1.0);
    assert_eq!(at(Piece::Princess as usize, 5), 1.0);
    // Opponent (Black) Chief e1 → canonical 95 (f10), Panthans on canonical rank 9.
    assert_eq!(at(8 + Piece::Chief as usize, 95), 1.0);
    for f in 1..9 {
        assert_eq!(at(8 + Piece::Panthan as usize, 80 + f), 1.0);
        assert_eq!(at(Piece::Panthan as usize, 10 + f), 1.0);
    }
    let count = |p: usize| (0..100).map(|i| x[p * 100 + i]).sum::<f32>();
    let expected = [1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 8.0];
    for (i, e) in expected.iter().enumerate() {
        assert_eq!(count(i), *e, "plane {i}");
        assert_eq!(count(8 + i), *e, "plane {}", 8 + i);
    }
    assert_eq!(count(16), 100.0);
    assert_eq!(count(17), 100.0);
    for p in 18..24 {
        assert_eq!(count(p), 0.0, "plane {p}");
    }
    // Black to move: no rotation, Black's Chief e1 = 4 in plane 0.
    let mut y = vec![0f32; 2400];
    assert!(Jetan::from_position(
        "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw b B 5 37 250",
        &JetanRules::default()
    )
    .is_err());
    let gb2 = load("WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw b B - 37 250");
    gb2.encode(&mut y);
    assert_eq!(y[4], 1.0);
    assert_eq!(y[100 + 5], 1.0);
    assert_eq!(y[1600], 1.0); // Black holds its Escape.
    assert_eq!(y[1700], 0.0); // Orange does not.
    assert!((y[2000] - 0.37).abs() < 1e-6);
    assert!((y[2100] - 0.5).abs() < 1e-6);
    // Countdown planes.
    let gc = load("4PC4/10/10/10/9d/D9/10/10/10/4cp4 o OB 7 0 0");
    gc.encode(&mut y);
    assert_eq!(y[1800], 1.0);
    assert!((y[1900] - 0.7).abs() < 1e-6);
    // Repetition planes.
    let mut gr = Jetan::new_game(&JetanRules::default()).unwrap();
    play_all(&mut gr, "a9a8 a2a3 a8a9 a3a2");
    gr.encode(&mut y);
    assert_eq!((y[2200], y[2300]), (1.0, 0.0));
    play_all(&mut gr, "a9a8 a2a3 a8a9");
    gr.encode(&mut y);
    assert_eq!((y[2200], y[2300]), (1.0, 0.0));
    assert_eq!(gr.side_to_move(), Side::South);
}

#[test]
fn board_text_shape() {
    let g = Jetan::new_game(&JetanRules::default()).unwrap();
    let t = g.board_text();
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines[1], " 10  W L D F P C F D L W   Orange");
    assert_eq!(lines[10], "  1  w l d f c p f d l w   Black");
    assert!(t.contains("Orange to move"));
    assert_eq!(Jetan::side_name(Side::South), "Black");
    assert_eq!(Jetan::side_name(Side::North), "Orange");
    assert_eq!(g.board_text_from(Side::South), t, "South's view is the standard board");
    // Orange's view: Orange's home rank at the bottom, files reversed.
    let n = g.board_text_from(Side::North);
    let lines: Vec<&str> = n.lines().collect();
    assert_eq!(lines[0], "     j i h g f e d c b a");
    assert_eq!(lines[1], "  1  w l d f p c f d l w   Black");
    assert_eq!(lines[10], " 10  W L D F C P F D L W   Orange");
    assert!(n.contains("Orange to move"));
}

#[test]
fn board_text_of_a_finished_game_gives_the_result() {
    let rules = JetanRules { max_plies: 4, ..JetanRules::default() };
    let mut g = Jetan::new_game(&rules).unwrap();
    let mut moves = Vec::new();
    while g.outcome().is_none() {
        g.legal_moves(&mut moves);
        g.play_unchecked(moves[0]);
    }
    let t = g.board_text();
    let last = t.lines().last().unwrap();
    assert!(last.starts_with("game over: "), "{last}");
    assert!(!t.contains("to move"), "{t}");
}
