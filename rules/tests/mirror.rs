//! The left-right symmetry of both games (`GameState::mirrored`,
//! `GameState::mirror_action`), checked against the rules themselves: along
//! random games, the mirrored actions of a position's legal moves are exactly
//! the actions of the mirrored position's legal moves, its input planes are
//! the planes with every row reversed, it has the same number of moves and
//! the same outcome, and mirroring twice gives the position back.

use std::collections::BTreeSet;

use martian_rules::jetan::{Jetan, JetanRules, Setup};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameKind, GameState, Move};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

fn check<G: GameState>(start: &G, games: usize) -> usize {
    let [c, h, w] = G::INPUT_SHAPE;
    let mut rng = StdRng::seed_from_u64(7);
    let (mut planes, mut mirrored_planes) = (vec![0.0; c * h * w], vec![0.0; c * h * w]);
    let (mut moves, mut mirrored_moves): (Vec<Move>, Vec<Move>) = (Vec::new(), Vec::new());
    let mut checked = 0;
    for _ in 0..games {
        let mut s = start.clone();
        while s.outcome().is_none() {
            // The mirror carries no history; compare with the history-free position.
            let p = G::from_position(&s.to_position(), s.rules()).unwrap();
            let m = p.mirrored().expect("both games are mirror-symmetric");
            assert_eq!(m.mirrored().unwrap().to_position(), p.to_position(), "mirroring twice");
            assert_eq!(m.hash(), m.recompute_hash());
            assert_eq!(m.side_to_move(), p.side_to_move());

            p.legal_moves(&mut moves);
            m.legal_moves(&mut mirrored_moves);
            let expected: BTreeSet<usize> =
                moves.iter().map(|&mv| G::mirror_action(p.action_index(mv)).unwrap()).collect();
            let got: BTreeSet<usize> = mirrored_moves.iter().map(|&mv| m.action_index(mv)).collect();
            assert_eq!(expected, got, "{} mirrored to {}", p.to_position(), m.to_position());
            assert_eq!(moves.len(), mirrored_moves.len());

            p.encode(&mut planes);
            m.encode(&mut mirrored_planes);
            for (row, mrow) in planes.chunks(w).zip(mirrored_planes.chunks(w)) {
                let reversed: Vec<f32> = row.iter().rev().copied().collect();
                assert_eq!(reversed, mrow, "planes of {} and its mirror", p.to_position());
            }
            checked += 1;

            s.legal_moves(&mut moves);
            let &mv = moves.choose(&mut rng).unwrap();
            s.play_unchecked(mv);
            // A finished game's mirror has the same result.
            if let (Some(o), Ok(q)) = (s.outcome(), G::from_position(&s.to_position(), s.rules())) {
                let mo = q.mirrored().unwrap().outcome();
                assert_eq!(mo.map(|x| x.winner), Some(o.winner), "{}", s.to_position());
            }
        }
    }
    checked
}

#[test]
fn jetan_mirror_matches_the_rules() {
    let n = check(&Jetan::new_game(&JetanRules::default()).unwrap(), 12);
    assert!(n > 500, "{n} positions");
    let facing = JetanRules { setup: Setup::ManatorFacing, ..JetanRules::default() };
    assert!(check(&Jetan::new_game(&facing).unwrap(), 4) > 100);
}

#[test]
fn martian_mirror_matches_the_rules() {
    let n = check(&MartianChess::new_game(&MartianRules::default()).unwrap(), 40);
    assert!(n > 500, "{n} positions");
}

#[test]
fn mirror_action_is_an_involution_on_every_index() {
    // The two-player games are left-right symmetric; the four-player game is
    // not (a reflection reverses the turn order, §14.3), so it has no mirror.
    assert_eq!(GameKind::MartianChess4p.mirror_action(0), None);
    for g in GameKind::ALL.into_iter().filter(|&g| g != GameKind::MartianChess4p) {
        let n = g.num_actions();
        for a in 0..n {
            let m = g.mirror_action(a).unwrap_or_else(|| panic!("{g}: action {a} has no mirror"));
            assert!(m < n);
            assert_eq!(g.mirror_action(m), Some(a), "{g} {a}");
        }
        assert_eq!(g.mirror_action(n), None, "{g}: out of range");
    }
}

#[test]
fn mirror_examples() {
    // Jetan a1 (sq 0) -> j1 (sq 9); displacement (+1, +1) (lin = 2 * 7 + 4 = 18)
    // -> (-1, +1) (lin = 16); Escape to c2 (sq 12) -> to h2 (sq 17).
    assert_eq!(Jetan::mirror_action(18), Some(9 * 48 + 16));
    assert_eq!(Jetan::mirror_action(4800 + 12), Some(4800 + 17));
    // Martian Chess b1 -> c2 (1 * 32 + 6) becomes c1 -> b2 (2 * 32 + 5).
    assert_eq!(MartianChess::mirror_action(32 + 6), Some(2 * 32 + 5));
}

#[test]
fn game_names_round_trip_and_unknown_names_are_errors() {
    for g in GameKind::ALL {
        assert_eq!(g.name().parse::<GameKind>().unwrap(), g);
        assert_eq!(g.to_string(), g.name());
    }
    let e = "chess".parse::<GameKind>().unwrap_err().to_string();
    assert!(e.contains("chess") && e.contains("jetan") && e.contains("martian-chess"), "{e}");
    assert_eq!(GameKind::Jetan.encoding().planes.len(), GameKind::Jetan.input_shape()[0]);
    assert_eq!(GameKind::MartianChess.encoding().planes.len(), GameKind::MartianChess.input_shape()[0]);
}
