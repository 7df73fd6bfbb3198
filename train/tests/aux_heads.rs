//! Training the auxiliary heads: their losses fall on a fixed batch, shards
//! without their targets still train (the terms are masked), mirroring keeps
//! the targets with their samples, and the metrics name the terms only when
//! the heads are on.

use martian_model::{Checkpoint, ModelConfig};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::GameState;
use martian_search::{MctsConfig, UniformEvaluator};
use martian_selfplay::{pack_samples, play_games, read_shard, write_shard, PlayParams, SelfplayConfig, ShardData};
use martian_train::{Batch, Metrics, OptimizerKind, ReplayWindow, TrainConfig, Trainer};
use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::Device;

const SHAPE: [usize; 3] = MartianChess::INPUT_SHAPE;
const ACTIONS: usize = MartianChess::NUM_ACTIONS;

/// Self-play shard data of Martian Chess games capped at `max_plies`.
fn games(max_plies: u32) -> ShardData {
    tch::set_num_threads(1);
    let start = MartianChess::new_game(&MartianRules { max_plies, ..Default::default() }).unwrap();
    let cfg = SelfplayConfig {
        games_in_flight: 4,
        simulations: 8,
        cheap_simulations: 8,
        full_search_prob: 1.0,
        ..Default::default()
    };
    let params = PlayParams { start: &start, game_ids: &[0, 1, 2, 3, 4, 5], seed: 2, model_name: "uniform".into() };
    let mut out = Vec::new();
    play_games(&params, &cfg, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
        out.push(g);
        Ok(())
    })
    .unwrap();
    let samples: Vec<_> = out.iter().flat_map(|g| g.samples.iter().map(move |s| (g.record.game_id, s))).collect();
    pack_samples(&samples, SHAPE, ACTIONS)
}

fn heads() -> ModelConfig {
    ModelConfig {
        blocks: 1,
        channels: 16,
        batch_norm: true,
        global_pooling: true,
        policy_channels: 4,
        value_hidden: 16,
        moves_left_head: true,
        score_head: true,
        ..Default::default()
    }
}

fn rules() -> MartianRules {
    MartianRules { max_plies: 60, ..Default::default() }
}

fn head_weights(ck: &Checkpoint, aux: bool) -> Vec<(String, Vec<f32>)> {
    let mut v: Vec<(String, Vec<f32>)> = ck
        .vs
        .variables()
        .into_iter()
        .filter(|(n, _)| (n.starts_with("moves_left.") || n.starts_with("score.")) == aux)
        .map(|(n, t)| (n, Vec::<f32>::try_from(t.flatten(0, -1)).unwrap()))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn head_losses_fall_when_trained_on_a_fixed_batch() {
    let dir = tempfile::tempdir().unwrap();
    let data = games(60);
    assert!(data.score.as_ref().unwrap().iter().any(|&s| s != 0.0), "some nonzero score target");
    write_shard(&dir.path().join("gen0001-w0-000000.npz"), &data).unwrap();
    let window = ReplayWindow::load(dir.path(), 10_000, SHAPE, ACTIONS);
    let mut ck = Checkpoint::new_random::<MartianChess>(&rules(), &heads(), Device::Cpu, 1).unwrap();
    let cfg = TrainConfig {
        batch_size: 32,
        replay_window: 10_000,
        optimizer: OptimizerKind::Adamw,
        learning_rate: 0.003,
        weight_decay: 0.0,
        moves_left_loss_weight: 1.0,
        score_loss_weight: 1.0,
        ..Default::default()
    };
    let mut tr = Trainer::new(&ck, &cfg, Device::Cpu).unwrap();
    // The same generator seed every step: the same batch every step.
    let fixed = || StdRng::seed_from_u64(17);
    let first = tr.step(&mut ck, &window, cfg.learning_rate, &mut fixed()).unwrap();
    let mut last = first;
    for _ in 0..60 {
        last = tr.step(&mut ck, &window, cfg.learning_rate, &mut fixed()).unwrap();
    }
    let (m0, m1) = (first.moves_left_loss.unwrap(), last.moves_left_loss.unwrap());
    let (s0, s1) = (first.score_loss.unwrap(), last.score_loss.unwrap());
    eprintln!("moves-left loss {m0:.4} -> {m1:.4}, score loss {s0:.4} -> {s1:.4}");
    assert!(m1 < 0.5 * m0, "moves-left loss {m0} -> {m1}");
    assert!(s1 < 0.5 * s0, "score loss {s0} -> {s1}");
    // The total counts them with their weights.
    let main = last.policy_loss + cfg.value_loss_weight * last.value_loss;
    assert!((last.total_loss - main - m1 - s1).abs() < 1e-4, "{last:?}");
}

#[test]
fn shards_without_the_targets_train_with_the_terms_masked() {
    let dir = tempfile::tempdir().unwrap();
    let data = games(30);
    let old = ShardData { moves_left: None, score: None, ..data };
    write_shard(&dir.path().join("gen0001-w0-000000.npz"), &old).unwrap();
    let back = read_shard(&dir.path().join("gen0001-w0-000000.npz"), SHAPE, ACTIONS).unwrap();
    assert!(back.moves_left.is_none() && back.score.is_none());
    let window = ReplayWindow::load(dir.path(), 10_000, SHAPE, ACTIONS);
    assert!(window.skipped.is_empty() && window.warnings.is_empty() && window.len() == old.len());
    let r = MartianRules { max_plies: 30, ..Default::default() };
    let mut ck = Checkpoint::new_random::<MartianChess>(&r, &heads(), Device::Cpu, 2).unwrap();
    let cfg = TrainConfig { batch_size: 16, replay_window: 10_000, weight_decay: 0.0, ..Default::default() };
    let mut tr = Trainer::new(&ck, &cfg, Device::Cpu).unwrap();
    let (aux0, main0) = (head_weights(&ck, true), head_weights(&ck, false));
    for s in 0..3 {
        let st = tr.step(&mut ck, &window, 0.05, &mut StdRng::seed_from_u64(s)).unwrap();
        assert_eq!((st.moves_left_loss, st.score_loss), (Some(0.0), Some(0.0)));
        assert!(st.total_loss.is_finite());
    }
    assert!(head_weights(&ck, true) == aux0, "no target, no gradient: the heads did not move");
    assert!(head_weights(&ck, false) != main0, "the rest of the network trained");
}

#[test]
fn mirroring_keeps_each_samples_targets() {
    let dir = tempfile::tempdir().unwrap();
    let mut data = games(30);
    let n = data.len();
    // Mark each row: value r / n, moves left r, score -r.
    for r in 0..n {
        data.value[r] = r as f32 / n as f32;
        data.moves_left.as_mut().unwrap()[r] = r as f32;
        data.score.as_mut().unwrap()[r] = -(r as f32);
    }
    write_shard(&dir.path().join("gen0001-w0-000000.npz"), &data).unwrap();
    let window = ReplayWindow::load(dir.path(), 10_000, SHAPE, ACTIONS);
    let mut b = Batch::default();
    window.fill_batch(&mut StdRng::seed_from_u64(3), 400, Some(martian_rules::GameKind::MartianChess), &mut b);
    let mut planes_changed = 0;
    let ps = SHAPE.iter().product::<usize>();
    for i in 0..400 {
        let r = (b.value[i] * n as f32).round() as usize;
        assert_eq!((b.moves_left[i], b.score[i]), (r as f32, -(r as f32)), "row {i}");
        assert_eq!((b.moves_left_mask[i], b.score_mask[i]), (1.0, 1.0));
        let flat = data.planes.as_slice().unwrap();
        planes_changed += usize::from(b.planes[i * ps..(i + 1) * ps] != flat[r * ps..(r + 1) * ps]);
    }
    assert!(planes_changed > 100, "about half the samples are mirrored ({planes_changed} of 400)");
}

#[test]
fn metrics_name_the_head_losses_only_when_the_heads_are_on() {
    let mut m = Metrics {
        step: 1,
        generation: 1,
        lr: 0.1,
        policy_loss: 1.0,
        value_loss: 1.0,
        total_loss: 2.0,
        policy_accuracy: 0.5,
        value_mse: 0.3,
        moves_left_loss: None,
        score_loss: None,
        loss_scale: None,
        skipped_steps: None,
        samples_per_s: 10.0,
        window: 5,
    };
    let off = serde_json::to_string(&m).unwrap();
    assert!(!off.contains("moves_left_loss") && !off.contains("score_loss"), "{off}");
    assert!(!off.contains("loss_scale") && !off.contains("skipped_steps"), "fp32 and bf16 lines have no scaler: {off}");
    m.moves_left_loss = Some(0.25);
    m.score_loss = Some(0.5);
    let on = serde_json::to_string(&m).unwrap();
    assert!(on.contains("\"moves_left_loss\":0.25") && on.contains("\"score_loss\":0.5"), "{on}");
    // Lines written before the terms existed read back without them.
    let back: Metrics = serde_json::from_str(&off).unwrap();
    assert_eq!(back.moves_left_loss, None);
}

/// A head whose loss is NaN stops training like the main losses do, and the
/// error names the head's term.
#[test]
fn a_non_finite_head_loss_is_named_and_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    write_shard(&dir.path().join("gen0001-w0-000000.npz"), &games(20)).unwrap();
    let window = ReplayWindow::load(dir.path(), 10_000, SHAPE, ACTIONS);
    let r = MartianRules { max_plies: 20, ..Default::default() };
    let mut ck = Checkpoint::new_random::<MartianChess>(&r, &heads(), Device::Cpu, 5).unwrap();
    {
        let _g = tch::no_grad_guard();
        let _ = ck.vs.variables().get_mut("moves_left.fc2.bias").unwrap().fill_(f64::NAN);
    }
    let before = (head_weights(&ck, true), head_weights(&ck, false));
    let cfg = TrainConfig { batch_size: 16, replay_window: 10_000, ..Default::default() };
    let mut tr = Trainer::new(&ck, &cfg, Device::Cpu).unwrap();
    let e = tr.step(&mut ck, &window, 0.01, &mut StdRng::seed_from_u64(1)).unwrap_err().to_string();
    assert!(e.contains("moves left NaN") && e.contains(", score "), "{e}");
    let after = (head_weights(&ck, true), head_weights(&ck, false));
    // NaN != NaN: compare bit patterns.
    let bits = |w: &Vec<(String, Vec<f32>)>| -> Vec<Vec<u32>> {
        w.iter().map(|(_, v)| v.iter().map(|x| x.to_bits()).collect()).collect()
    };
    assert!(bits(&after.0) == bits(&before.0) && bits(&after.1) == bits(&before.1), "weights changed");
}
