//! `StaticValueEvaluator` (`mcts:static=SCALE`): uniform priors and the game's
//! alpha-beta evaluation as the leaf value, for the side to move (a diagnostic:
//! what MCTS does when its value knows material).

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::{GameState, Move};
use martian_search::{Evaluation, Evaluator, StaticValueEvaluator};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// Jetan spec E2's pieces: Black has a Dwar more than Orange (both keep a
/// Chief and a Princess).
const E2: &str = "P9/10/4C5/10/10/4d5/10/10/10/c8p b OB - 0 0";

fn value(ev: &mut StaticValueEvaluator<Jetan>, pos: &Jetan) -> Evaluation {
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    let mut out = Vec::new();
    ev.evaluate(&[pos], &[&moves[..]], &mut out).unwrap();
    out.pop().unwrap()
}

/// The side a Dwar ahead is valued above 0 to move, and the same placement
/// with the other side to move below 0; priors stay uniform, no draw.
#[test]
fn the_side_ahead_in_material_is_valued_above_zero() {
    let mut ev = StaticValueEvaluator::<Jetan>::new(600.0, None).unwrap();
    let black = Jetan::from_position(E2, &JetanRules::default()).unwrap();
    let orange = Jetan::from_position(&E2.replace(" b ", " o "), &JetanRules::default()).unwrap();
    let (b, o) = (value(&mut ev, &black), value(&mut ev, &orange));
    assert!(b.value > 0.3, "Black, a Dwar ahead, to move: {}", b.value);
    assert!(o.value < -0.3, "Orange, a Dwar behind, to move: {}", o.value);
    let mut moves = Vec::new();
    black.legal_moves(&mut moves);
    let n = moves.len();
    assert!(b.priors.iter().all(|&p| (p - 1.0 / n as f32).abs() < 1e-6));
    assert_eq!((b.draw, o.draw), (0.0, 0.0));
}

/// Values stay inside (-1, 1) over random games, and the start position is
/// level (equal material, mirrored placement).
#[test]
fn values_are_bounded_and_the_start_is_level() {
    let mut ev = StaticValueEvaluator::<Jetan>::new(600.0, None).unwrap();
    let start = Jetan::new_game(&JetanRules::default()).unwrap();
    assert!(value(&mut ev, &start).value.abs() < 0.05, "{}", value(&mut ev, &start).value);
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..20 {
        let mut pos = start.clone();
        for _ in 0..60 {
            if pos.outcome().is_some() {
                break;
            }
            let v = value(&mut ev, &pos).value;
            assert!(v.is_finite() && v.abs() < 1.0, "{v}");
            let mut moves: Vec<Move> = Vec::new();
            pos.legal_moves(&mut moves);
            pos.play(*moves.choose(&mut rng).unwrap()).unwrap();
        }
    }
}

/// A scale that is not a positive number is refused by name.
#[test]
fn a_bad_scale_is_refused() {
    for bad in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let e = StaticValueEvaluator::<Jetan>::new(bad, None).unwrap_err().to_string();
        assert!(e.contains("static value scale"), "{bad}: {e}");
    }
}

/// With a policy temperature the priors follow the one-ply evaluation: in
/// positions of random games where the mover can win at once, the winning
/// moves hold almost all of the prior; the priors are a distribution.
#[test]
fn the_static_policy_puts_its_weight_on_winning_moves() {
    let mut ev = StaticValueEvaluator::<Jetan>::new(600.0, Some(100.0)).unwrap();
    let start = Jetan::new_game(&JetanRules::default()).unwrap();
    let mut rng = StdRng::seed_from_u64(5);
    let mut found = 0;
    for _ in 0..400 {
        let mut pos = start.clone();
        while pos.outcome().is_none() && found < 10 {
            let mut moves: Vec<Move> = Vec::new();
            pos.legal_moves(&mut moves);
            if pos.has_winning_move() {
                let e = value(&mut ev, &pos);
                let sum: f32 = e.priors.iter().sum();
                assert!((sum - 1.0).abs() < 1e-4, "{sum}");
                let winning: f32 = moves
                    .iter()
                    .zip(&e.priors)
                    .filter(|(&m, _)| {
                        let mut c = pos.clone();
                        c.play_unchecked(m);
                        c.outcome().is_some_and(|o| o.winner == Some(pos.side_to_move()))
                    })
                    .map(|(_, &p)| p)
                    .sum();
                assert!(winning > 0.99, "winning moves hold {winning} of the prior");
                found += 1;
            }
            pos.play(*moves.choose(&mut rng).unwrap()).unwrap();
        }
        if found >= 10 {
            break;
        }
    }
    assert_eq!(found, 10, "positions with a winning move in the random games");
    let e = StaticValueEvaluator::<Jetan>::new(600.0, Some(0.0)).unwrap_err().to_string();
    assert!(e.contains("static policy temperature"), "{e}");
}
