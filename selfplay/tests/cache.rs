//! The evaluation cache changes nothing but speed: self-play with the cache on
//! and off plays the same games, for an evaluator whose output depends on
//! every input plane (a hash of the encoded planes).

use martian_rules::jetan::{Jetan, JetanRules, INITIAL_POSITION};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{mix64, GameState, Move};
use martian_search::{CachedEvaluator, EvalError, Evaluation, Evaluator, MctsConfig};
use martian_selfplay::{play_games, FinishedGame, PlayParams, SelfplayConfig};

/// Priors and value from a hash of the encoded planes: any difference in any
/// plane (repetition, counters) gives another evaluation. Counts its calls.
#[derive(Default)]
struct PlaneHash {
    planes: Vec<f32>,
    positions: u64,
}

impl<G: GameState> Evaluator<G> for PlaneHash {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        let [c, h, w] = G::INPUT_SHAPE;
        self.planes.resize(c * h * w, 0.0);
        out.resize_with(positions.len(), Evaluation::default);
        for ((p, m), e) in positions.iter().zip(moves).zip(out.iter_mut()) {
            self.positions += 1;
            p.encode(&mut self.planes);
            let x = self.planes.iter().fold(0u64, |x, v| mix64(x ^ u64::from(v.to_bits())));
            let unit = |y: u64| (y >> 40) as f32 / (1u64 << 24) as f32;
            e.priors.clear();
            e.priors.extend(m.iter().map(|&mv| 1.0 + 3.0 * unit(mix64(x ^ p.action_index(mv) as u64))));
            let sum: f32 = e.priors.iter().sum();
            e.priors.iter_mut().for_each(|q| *q /= sum);
            e.value = 1.6 * unit(mix64(!x)) - 0.8;
        }
        Ok(())
    }
}

fn games<G: GameState, E: Evaluator<G>>(start: &G, ev: &mut E, n: u64) -> Vec<FinishedGame> {
    let cfg = SelfplayConfig {
        games_in_flight: 8,
        simulations: 24,
        cheap_simulations: 6,
        full_search_prob: 0.5,
        ..Default::default()
    };
    let mcts = MctsConfig { leaves_per_batch: 2, ..Default::default() };
    let ids: Vec<u64> = (0..n).collect();
    let params = PlayParams { start, game_ids: &ids, seed: 11, model_name: "planehash".into() };
    let mut out = Vec::new();
    play_games(&params, &cfg, &mcts, ev, |g, _| {
        out.push(g);
        Ok(())
    })
    .unwrap();
    out.sort_by_key(|g| g.record.game_id);
    out
}

fn check<G: GameState>(start: G, n: u64) {
    let mut plain = PlaneHash::default();
    let off = games(&start, &mut plain, n);
    let mut cached = CachedEvaluator::new(PlaneHash::default(), 200_000);
    let on = games(&start, &mut cached, n);
    let (hits, lookups) = cached.stats();
    assert!(hits > 50, "the cache must be used: {hits} hits of {lookups}");
    assert_eq!(off.len(), on.len());
    let differ: Vec<u64> =
        off.iter().zip(&on).filter(|(a, b)| a.record != b.record).map(|(a, _)| a.record.game_id).collect();
    assert!(differ.is_empty(), "games {differ:?} of {} differ with the cache on", off.len());
    for (a, b) in off.iter().zip(&on) {
        // Compared whole, reported briefly (a sample holds thousands of planes).
        assert!(a.samples == b.samples, "samples of game {} differ with the cache on", a.record.game_id);
    }
    // Every lookup is either a hit or one evaluation of the wrapped evaluator.
    assert_eq!(cached.inner_mut().positions + hits, plain.positions);
}

#[test]
fn jetan_selfplay_is_the_same_with_and_without_the_cache() {
    // With the cache keyed by the Zobrist hash alone, games from each start
    // differed: positions met again (repetition planes) or at another ply.
    let rules = JetanRules { max_plies: 200, ..Default::default() };
    for start in [INITIAL_POSITION, "P8C/10/2D4F2/10/10/10/10/2d4f2/10/p8c o OB - 0 0"] {
        check(Jetan::from_position(start, &rules).unwrap(), 32);
    }
}

#[test]
fn martian_selfplay_is_the_same_with_and_without_the_cache() {
    check(MartianChess::new_game(&MartianRules { max_plies: 150, ..Default::default() }).unwrap(), 32);
}

#[test]
fn a_full_cache_is_cleared_and_stays_correct() {
    // A tiny cache is cleared many times during the games; results stay exact.
    let start = MartianChess::new_game(&MartianRules { max_plies: 60, ..Default::default() }).unwrap();
    let off = games(&start, &mut PlaneHash::default(), 16);
    let mut cached = CachedEvaluator::new(PlaneHash::default(), 50);
    let on = games(&start, &mut cached, 16);
    assert!(cached.len() <= 50);
    for (a, b) in off.iter().zip(&on) {
        assert_eq!(a.record, b.record);
    }
}
