//! Free-for-all value targets (four-player Martian Chess, `teams = false`):
//! every sample carries the four seats' §14.7 results in mover-relative
//! order, and they survive the shard round trip; shards without them load.

use martian_rules::martian4::{Martian4Rules, MartianChess4};
use martian_rules::GameState;
use martian_search::{MctsConfig, UniformEvaluator};
use martian_selfplay::{pack_samples, play_games, read_shard, write_shard, PlayParams, SelfplayConfig, ShardData};

#[test]
fn ffa_samples_carry_rotated_seat_values_through_the_shard() {
    let rules = Martian4Rules { teams: false, max_plies: 16, ..Martian4Rules::default() };
    let start = MartianChess4::new_game(&rules).unwrap();
    let cfg = SelfplayConfig {
        games_in_flight: 2,
        simulations: 4,
        cheap_simulations: 4,
        full_search_prob: 1.0,
        ..SelfplayConfig::default()
    };
    let params = PlayParams { start: &start, game_ids: &[0, 1], seed: 3, model_name: "uniform".into() };
    let mut games = Vec::new();
    play_games(&params, &cfg, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
        games.push(g);
        Ok(())
    })
    .unwrap();
    assert_eq!(games.len(), 2);
    for g in &games {
        let end = g.record.replay::<MartianChess4>(&rules).unwrap();
        let seat_values = end.seat_values().unwrap();
        assert!((seat_values.iter().sum::<f32>()).abs() < 1e-5);
        for smp in &g.samples {
            // The mover of ply p is seat p % 4 (clockwise from SW, no opening).
            let mover = smp.ply as usize % 4;
            assert_eq!(smp.values.len(), 4);
            for k in 0..4 {
                assert_eq!(smp.values[k], seat_values[(mover + k) % 4], "ply {} k {k}", smp.ply);
            }
            assert_eq!(smp.value, smp.values[0]);
        }
    }
    let samples: Vec<_> = games.iter().flat_map(|g| g.samples.iter().map(move |s| (g.record.game_id, s))).collect();
    let data = pack_samples(&samples, MartianChess4::INPUT_SHAPE, MartianChess4::NUM_ACTIONS);
    let values = data.values.as_ref().expect("a values array");
    assert_eq!(values.shape(), [data.len(), 4]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ffa.npz");
    write_shard(&path, &data).unwrap();
    let back = read_shard(&path, MartianChess4::INPUT_SHAPE, MartianChess4::NUM_ACTIONS).unwrap();
    assert_eq!(back, data);
    // A shard without the array (two-player layout) still loads.
    let old = ShardData { values: None, ..data.clone() };
    write_shard(&path, &old).unwrap();
    assert_eq!(read_shard(&path, MartianChess4::INPUT_SHAPE, MartianChess4::NUM_ACTIONS).unwrap().values, None);
    // Joining keeps the array when every part has it.
    let joined = ShardData::concat(&[&data, &data]).unwrap();
    assert_eq!(joined.values.unwrap().nrows(), 2 * data.len());
    assert_eq!(ShardData::concat(&[&data, &old]).unwrap().values, None);
    // Out-of-range per-player targets are left out.
    let mut bad = data.clone();
    bad.values.as_mut().unwrap()[[0, 2]] = 1.5;
    let c = martian_selfplay::check_samples(&bad);
    assert!(!c.ok[0] && c.ok[1..].iter().all(|&o| o), "{:?}", c.describe());
}

/// The team game keeps the two-player layout: no per-player targets.
#[test]
fn team_samples_have_no_values() {
    let rules = Martian4Rules { max_plies: 8, ..Martian4Rules::default() };
    let start = MartianChess4::new_game(&rules).unwrap();
    let cfg = SelfplayConfig { games_in_flight: 1, simulations: 2, cheap_simulations: 2, ..SelfplayConfig::default() };
    let params = PlayParams { start: &start, game_ids: &[0], seed: 1, model_name: "uniform".into() };
    let mut n = 0;
    play_games(&params, &cfg, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
        assert!(g.samples.iter().all(|s| s.values.is_empty()));
        n += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(n, 1);
}
