//! Strength levels' move choice (`SearchResult::sample_move`, `docs/levels.md`).

use martian_rules::Move;
use martian_search::SearchResult;
use rand::rngs::StdRng;
use rand::SeedableRng;

fn m(k: u8) -> Move {
    Move::new(k, k + 1)
}

/// Four root moves: 30, 10, 0 and 20 visits; the last a proven loss.
fn result() -> SearchResult {
    SearchResult {
        visits: vec![(m(1), 30), (m(2), 10), (m(3), 0), (m(4), 20)],
        priors: vec![0.1, 0.2, 0.6, 0.1],
        q: vec![Some(0.1), Some(0.0), None, Some(-1.0)],
        exact: vec![None, None, None, Some(-1.0)],
        exact_plies: vec![0, 0, 0, 2],
        ..SearchResult::default()
    }
}

fn counts(r: &SearchResult, t: f32, draws: usize) -> [usize; 4] {
    let mut rng = StdRng::seed_from_u64(9);
    let mut c = [0; 4];
    for _ in 0..draws {
        let mv = r.sample_move(t, &mut rng).unwrap();
        c[(mv.from - 1) as usize] += 1;
    }
    c
}

/// At temperature 1 the visited, unproven moves are drawn by visit share
/// (3 : 1), the unvisited move and the proven loss never; a low temperature
/// sharpens it (3^10 : 1); temperature 0 is the best move.
#[test]
fn visits_decide_the_draw_and_the_temperature_sharpens_it() {
    let r = result();
    let c = counts(&r, 1.0, 4000);
    assert_eq!((c[2], c[3]), (0, 0), "{c:?}");
    let share = c[0] as f64 / 4000.0;
    assert!((share - 0.75).abs() < 0.03, "{c:?}");
    let c = counts(&r, 0.1, 4000);
    assert!(c[0] >= 3990, "{c:?}");
    assert_eq!(counts(&r, 0.0, 50), [50, 0, 0, 0]);
}

/// With a single visit the policy decides (`prior^(1/T)`), the proven loss
/// still excluded; a proven win is always played; when every move is lost,
/// the longest resistance (as `best_move`).
#[test]
fn one_visit_samples_the_policy_and_proofs_are_obeyed() {
    let mut r = result();
    r.visits = vec![(m(1), 1), (m(2), 0), (m(3), 0), (m(4), 0)];
    let c = counts(&r, 1.0, 9000);
    assert_eq!(c[3], 0, "{c:?}");
    // Priors 0.1 : 0.2 : 0.6 over the three open moves.
    for (i, p) in [(0, 0.1 / 0.9), (1, 0.2 / 0.9), (2, 0.6 / 0.9)] {
        let share = c[i] as f64 / 9000.0;
        assert!((share - p).abs() < 0.03, "move {i}: {share} vs {p} ({c:?})");
    }
    let mut won = result();
    won.exact[1] = Some(1.0);
    won.exact_plies[1] = 3;
    assert_eq!(counts(&won, 1.0, 50), [0, 50, 0, 0]);
    let mut lost = result();
    lost.exact = vec![Some(-1.0); 4];
    lost.exact_plies = vec![2, 6, 2, 4];
    assert_eq!(counts(&lost, 1.0, 50), [0, 50, 0, 0]);
}
