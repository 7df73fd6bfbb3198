//! Training reduces the loss and overfits a small window; corrupt shards are skipped.

use martian_model::{Checkpoint, ModelConfig};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::GameState;
use martian_search::{MctsConfig, UniformEvaluator};
use martian_selfplay::{pack_samples, play_games, write_shard, PlayParams, SelfplayConfig};
use martian_train::{OptimizerKind, ReplayWindow, TrainConfig, Trainer};
use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::Device;

fn make_window(dir: &std::path::Path, positions: usize) -> ReplayWindow {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let cfg = SelfplayConfig {
        games_in_flight: 4,
        simulations: 16,
        cheap_simulations: 16,
        full_search_prob: 1.0,
        ..Default::default()
    };
    let params = PlayParams { start: &start, games: 6, first_game_id: 0, seed: 1, model_name: "uniform".into() };
    let mut games = Vec::new();
    play_games(&params, &cfg, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
        games.push(g);
        Ok(())
    })
    .unwrap();
    let samples: Vec<_> = games.iter().flat_map(|g| g.samples.iter().map(move |s| (g.record.game_id, s))).collect();
    let data = pack_samples(&samples, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS);
    write_shard(&dir.join("a.npz"), &data).unwrap();
    std::fs::write(dir.join("b.npz"), b"corrupt").unwrap();
    ReplayWindow::load(dir, positions, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS)
}

#[test]
fn overfitting_a_small_window_raises_accuracy_and_lowers_loss() {
    let dir = tempfile::tempdir().unwrap();
    let window = make_window(dir.path(), 64);
    assert_eq!(window.len(), 64);
    assert_eq!(window.skipped.len(), 1, "the corrupt shard is reported and skipped");
    let model = ModelConfig {
        blocks: 1,
        channels: 32,
        batch_norm: true,
        global_pooling: false,
        policy_channels: 8,
        value_hidden: 32,
    };
    let mut ck = Checkpoint::new_random::<MartianChess>(&MartianRules::default(), &model, Device::Cpu, 1).unwrap();
    let cfg = TrainConfig {
        batch_size: 64,
        replay_window: 64,
        optimizer: OptimizerKind::Adamw,
        learning_rate: 0.003,
        weight_decay: 0.0,
        ..Default::default()
    };
    let mut tr = Trainer::new(&ck, &cfg, Device::Cpu).unwrap();
    let mut rng = StdRng::seed_from_u64(1);
    let first = tr.step(&mut ck, &window, cfg.learning_rate, &mut rng).unwrap();
    let mut last = first;
    for _ in 0..150 {
        last = tr.step(&mut ck, &window, cfg.learning_rate, &mut rng).unwrap();
    }
    assert_eq!(ck.meta.step, 151);
    assert!(last.total_loss < 0.6 * first.total_loss, "loss {} -> {}", first.total_loss, last.total_loss);
    assert!(
        last.policy_accuracy > first.policy_accuracy + 0.3,
        "accuracy {} -> {}",
        first.policy_accuracy,
        last.policy_accuracy
    );
    assert!(last.value_mse < first.value_mse, "value mse {} -> {}", first.value_mse, last.value_mse);
}
