//! Self-play at temperature 0 breaks ties between equally good root moves with
//! the game's seeded generator, not by legal-move order.

use std::collections::BTreeSet;

use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::GameState;
use martian_search::{MctsConfig, UniformEvaluator};
use martian_selfplay::{play_games, PlayParams, SelfplayConfig};

/// `(game id, first move, whether the first move had the most visits)` of
/// `games` two-ply games from the Martian Chess start with uniform priors,
/// 20 simulations, no noise, temperature 0.
fn first_moves(start: &MartianChess, games: u64, seed: u64) -> Vec<(u64, String, bool)> {
    let cfg = SelfplayConfig {
        games_in_flight: 8,
        simulations: 20,
        cheap_simulations: 20,
        full_search_prob: 1.0,
        temperature_plies: 0,
        final_temperature: 0.0,
        root_noise: false,
        ..Default::default()
    };
    let ids: Vec<u64> = (0..games).collect();
    let params = PlayParams { start, game_ids: &ids, seed, model_name: "uniform".into() };
    let mut out = Vec::new();
    play_games(&params, &cfg, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
        let first = start.parse_move(&g.record.moves[0]).unwrap();
        // The ply-0 sample's policy target is the root's visit distribution.
        let policy = &g.samples[0].policy;
        let top = policy.iter().map(|p| p.1).fold(0.0, f32::max);
        let share = policy.iter().find(|p| p.0 as usize == start.action_index(first)).map_or(0.0, |p| p.1);
        out.push((g.record.game_id, g.record.moves[0].clone(), share == top));
        Ok(())
    })
    .unwrap();
    out.sort_by_key(|a| a.0);
    out
}

#[test]
fn temperature_zero_ties_follow_the_seed_not_generator_order() {
    let start = MartianChess::new_game(&MartianRules { max_plies: 2, ..Default::default() }).unwrap();
    let a = first_moves(&start, 50, 1);
    assert_eq!(a.len(), 50);
    assert!(a.iter().all(|g| g.2), "every first move had the most visits: {a:?}");
    let distinct: BTreeSet<&str> = a.iter().map(|g| g.1.as_str()).collect();
    assert!(distinct.len() > 2, "50 games opened with only {distinct:?}");
    assert_eq!(a, first_moves(&start, 50, 1), "same seed, same games");
}
