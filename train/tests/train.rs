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
    // libtorch's thread count is global to the process and the tests run in
    // parallel: every test sets the same count before its first tensor
    // operation, so bit-exact comparisons never mix reduction orders.
    tch::set_num_threads(1);
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let cfg = SelfplayConfig {
        games_in_flight: 4,
        simulations: 16,
        cheap_simulations: 16,
        full_search_prob: 1.0,
        ..Default::default()
    };
    let params = PlayParams { start: &start, game_ids: &[0, 1, 2, 3, 4, 5], seed: 1, model_name: "uniform".into() };
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
        ..Default::default()
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

fn small_model() -> ModelConfig {
    ModelConfig {
        blocks: 1,
        channels: 16,
        batch_norm: true,
        global_pooling: true,
        policy_channels: 4,
        value_hidden: 16,
        ..Default::default()
    }
}

fn weights(ck: &Checkpoint) -> Vec<(String, Vec<f32>)> {
    let mut v: Vec<(String, Vec<f32>)> =
        ck.vs.variables().into_iter().map(|(n, t)| (n, Vec::<f32>::try_from(t.flatten(0, -1)).unwrap())).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// Kill-and-resume of a training generation: the optimizer state saved with a
/// partial checkpoint, and batches drawn from per-step generators, give the
/// weights of an uninterrupted run bit for bit (issue: "a resumed training
/// generation is not the uninterrupted one").
#[test]
fn optimizer_state_round_trip_resumes_training_exactly() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let window = make_window(dir.path(), 200);
    let rules = MartianRules::default();
    for optimizer in [OptimizerKind::Sgd, OptimizerKind::Adamw] {
        let cfg = TrainConfig {
            batch_size: 16,
            replay_window: 200,
            optimizer,
            learning_rate: 0.01,
            weight_decay: 1e-3,
            grad_clip: 0.5,
            ..Default::default()
        };
        let step_rng = |s: u64| StdRng::seed_from_u64(1000 + s);
        // Both runs start from one saved network (`new_random` seeds libtorch's
        // global generator, which tests running in parallel also draw from).
        let init = dir.path().join(format!("{optimizer:?}-init.safetensors"));
        Checkpoint::new_random::<MartianChess>(&rules, &small_model(), Device::Cpu, 3).unwrap().save(&init).unwrap();
        let load = || Checkpoint::load::<MartianChess>(&init, &rules, None, Device::Cpu).unwrap();
        // Uninterrupted: 6 steps.
        let mut a = load();
        let mut ta = Trainer::new(&a, &cfg, Device::Cpu).unwrap();
        for s in 0..6 {
            ta.step(&mut a, &window, cfg.learning_rate, &mut step_rng(s)).unwrap();
        }
        // Interrupted after 3 steps: weights and optimizer state to disk, then a fresh process state.
        let mut b = load();
        let mut tb = Trainer::new(&b, &cfg, Device::Cpu).unwrap();
        for s in 0..3 {
            tb.step(&mut b, &window, cfg.learning_rate, &mut step_rng(s)).unwrap();
        }
        let ckpt = dir.path().join(format!("{optimizer:?}.safetensors"));
        let state = dir.path().join(format!("{optimizer:?}.optim"));
        b.save(&ckpt).unwrap();
        tb.save_state(&state).unwrap();
        drop((b, tb));
        let mut c = Checkpoint::load::<MartianChess>(&ckpt, &rules, None, Device::Cpu).unwrap();
        let mut tc = Trainer::new(&c, &cfg, Device::Cpu).unwrap();
        tc.load_state(&state).unwrap();
        for s in 3..6 {
            tc.step(&mut c, &window, cfg.learning_rate, &mut step_rng(s)).unwrap();
        }
        assert_eq!(c.meta.step, a.meta.step);
        assert!(weights(&c) == weights(&a), "{optimizer:?}: resumed weights differ from the uninterrupted run");
        // Without the optimizer state the resumed weights differ: the test can fail.
        let mut d = Checkpoint::load::<MartianChess>(&ckpt, &rules, None, Device::Cpu).unwrap();
        let mut td = Trainer::new(&d, &cfg, Device::Cpu).unwrap();
        for s in 3..6 {
            td.step(&mut d, &window, cfg.learning_rate, &mut step_rng(s)).unwrap();
        }
        assert!(weights(&d) != weights(&a), "{optimizer:?}: fresh optimizer state gave the same weights");
        // A state file of the other optimizer is refused, naming the tensors.
        let other = TrainConfig {
            optimizer: if optimizer == OptimizerKind::Sgd { OptimizerKind::Adamw } else { OptimizerKind::Sgd },
            ..cfg.clone()
        };
        let e = Trainer::new(&d, &other, Device::Cpu).unwrap().load_state(&state).unwrap_err().to_string();
        assert!(e.contains("missing") && e.contains(&state.display().to_string()), "{e}");
    }
}

/// A loss that is NaN or infinite stops training with a clear error and leaves
/// the weights as they were.
#[test]
fn non_finite_loss_is_an_error_and_the_weights_are_kept() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let window = make_window(dir.path(), 100);
    let rules = MartianRules::default();
    let mut ck = Checkpoint::new_random::<MartianChess>(&rules, &small_model(), Device::Cpu, 4).unwrap();
    {
        let _g = tch::no_grad_guard();
        let mut vars = ck.vs.variables();
        let mut names: Vec<String> =
            vars.keys().filter(|n| n.contains("value") && n.ends_with("weight")).cloned().collect();
        names.sort();
        let t = vars.get_mut(&names[0]).unwrap();
        let _ = t.fill_(f64::NAN);
    }
    let before = weights(&ck);
    let cfg = TrainConfig { batch_size: 16, replay_window: 100, ..Default::default() };
    let mut tr = Trainer::new(&ck, &cfg, Device::Cpu).unwrap();
    let e = tr.step(&mut ck, &window, 0.01, &mut StdRng::seed_from_u64(1)).unwrap_err();
    assert!(matches!(e, martian_train::TrainError::NonFiniteLoss { step: 1, .. }), "{e}");
    assert!(e.to_string().contains("NaN"), "{e}");
    assert_eq!(ck.meta.step, 0);
    let after = weights(&ck);
    let same = before
        .iter()
        .zip(&after)
        .all(|(a, b)| a.0 == b.0 && a.1.iter().zip(&b.1).all(|(x, y)| x.to_bits() == y.to_bits()));
    assert!(same, "weights changed by a step whose loss was NaN");
}

/// Samples that cannot be learned from are left out with a warning naming the
/// file; a shard whose samples all have the same planes is skipped.
#[test]
fn bad_samples_and_degenerate_shards_are_left_out_with_warnings() {
    use martian_selfplay::read_shard;
    let dir = tempfile::tempdir().unwrap();
    let good = make_window(dir.path(), 10_000);
    let n = good.len();
    assert!(n > 10);
    let path = dir.path().join("a.npz");
    let data = read_shard(&path, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS).unwrap();
    // Row 0: NaN plane; row 1: policy sums to 0.5; row 2: value inf; row 3: constant planes.
    let mut bad = data.clone();
    bad.planes[[0, 0, 0, 0]] = f32::NAN;
    let legal1 = (0..MartianChess::NUM_ACTIONS).find(|&a| bad.policy[[1, a]] > 0.0).unwrap();
    bad.policy.row_mut(1).fill(0.0);
    bad.policy[[1, legal1]] = 0.5;
    bad.value[2] = f32::INFINITY;
    bad.planes.index_axis_mut(ndarray::Axis(0), 3).fill(0.0);
    std::fs::remove_file(&path).unwrap();
    write_shard(&dir.path().join("gen0002-w0-000000.npz"), &bad).unwrap();
    // A shard of one position repeated.
    let mut same = data.clone();
    let first = same.planes.index_axis(ndarray::Axis(0), 0).to_owned();
    for mut r in same.planes.outer_iter_mut() {
        r.assign(&first);
    }
    write_shard(&dir.path().join("gen0003-w0-000000.npz"), &same).unwrap();
    let w = ReplayWindow::load(dir.path(), 10_000, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS);
    assert_eq!(w.len(), n - 4, "four bad rows left out");
    assert_eq!(w.warnings.len(), 1, "{:?}", w.warnings);
    let warn = &w.warnings[0];
    for what in
        ["gen0002-w0-000000.npz", "4 of", "non-finite planes", "does not sum to 1", "value target", "constant planes"]
    {
        assert!(warn.contains(what), "{warn:?} lacks {what:?}");
    }
    assert!(
        w.skipped.iter().any(|s| s.contains("gen0003-w0-000000.npz") && s.contains("identical input planes")),
        "{:?}",
        w.skipped
    );
}

/// The window is a function of the samples, not of their grouping into files
/// or the files' times: the same samples split differently give the same
/// window in the same order (a resumed run groups its games differently).
#[test]
fn window_does_not_depend_on_file_grouping_or_times() {
    use martian_selfplay::{read_shard, ShardData};
    let dir = tempfile::tempdir().unwrap();
    make_window(dir.path(), 10);
    let data = read_shard(&dir.path().join("a.npz"), MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS).unwrap();
    let rows = |d: &ShardData, r: std::ops::Range<usize>| ShardData {
        planes: d.planes.slice(ndarray::s![r.clone(), .., .., ..]).to_owned(),
        policy: d.policy.slice(ndarray::s![r.clone(), ..]).to_owned(),
        legal: d.legal.slice(ndarray::s![r.clone(), ..]).to_owned(),
        value: d.value.slice(ndarray::s![r.clone()]).to_owned(),
        game_id: d.game_id.slice(ndarray::s![r.clone()]).to_owned(),
        ply: d.ply.slice(ndarray::s![r.clone()]).to_owned(),
        weight: d.weight.slice(ndarray::s![r.clone()]).to_owned(),
        moves_left: d.moves_left.as_ref().map(|a| a.slice(ndarray::s![r.clone()]).to_owned()),
        score: d.score.as_ref().map(|a| a.slice(ndarray::s![r.clone()]).to_owned()),
        values: d.values.as_ref().map(|a| a.slice(ndarray::s![r, ..]).to_owned()),
    };
    let n = data.len();
    let one = tempfile::tempdir().unwrap();
    write_shard(&one.path().join("gen0001-w0-000000.npz"), &data).unwrap();
    let two = tempfile::tempdir().unwrap();
    // Written in the other order, split elsewhere: newer file times for older rows.
    write_shard(&two.path().join("gen0001-w0-000001.npz"), &rows(&data, n / 3..n)).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    write_shard(&two.path().join("gen0001-w0-000000.npz"), &rows(&data, 0..n / 3)).unwrap();
    for window in [n / 2, n] {
        let a = ReplayWindow::load(one.path(), window, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS);
        let b = ReplayWindow::load(two.path(), window, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS);
        let mut ba = martian_train::Batch::default();
        let mut bb = martian_train::Batch::default();
        a.fill_batch(&mut StdRng::seed_from_u64(9), 64, None, &mut ba);
        b.fill_batch(&mut StdRng::seed_from_u64(9), 64, None, &mut bb);
        assert_eq!(a.len(), b.len());
        assert!(ba.planes == bb.planes && ba.policy == bb.policy && ba.value == bb.value, "window {window} differs");
    }
}

/// Policy surprise weighting: the window draws samples in proportion to their
/// weights (a weight of 0 is never drawn, a weight of 3 about three times as
/// often as a weight of 1), and shards whose weights are all 1 are drawn
/// uniformly, with the generator's stream of the unweighted window.
#[test]
fn weighted_samples_are_drawn_in_proportion_to_their_weights() {
    use martian_selfplay::read_shard;
    let dir = tempfile::tempdir().unwrap();
    make_window(dir.path(), 1000);
    let mut data = read_shard(&dir.path().join("a.npz"), MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS).unwrap();
    let n = data.len();
    assert!(n >= 20);
    // Mark rows by their value target and weigh them: rows 0..5 weigh 3, 5..10 weigh 0, the rest 1.
    for r in 0..n {
        data.value[r] = r as f32 / n as f32;
        data.weight[r] = if r < 5 {
            3.0
        } else if r < 10 {
            0.0
        } else {
            1.0
        };
    }
    let weighted = tempfile::tempdir().unwrap();
    write_shard(&weighted.path().join("gen0001-w0-000000.npz"), &data).unwrap();
    let w = ReplayWindow::load(weighted.path(), n, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS);
    let mut batch = martian_train::Batch::default();
    let mut rng = StdRng::seed_from_u64(5);
    let draws = 20_000;
    w.fill_batch(&mut rng, draws, None, &mut batch);
    let mut counts = vec![0u32; n];
    for &v in &batch.value {
        counts[(v * n as f32).round() as usize] += 1;
    }
    let total_weight = 15.0 + (n - 10) as f64;
    for (r, &got) in counts.iter().enumerate() {
        let want = draws as f64
            * if r < 5 {
                3.0
            } else if r < 10 {
                0.0
            } else {
                1.0
            }
            / total_weight;
        let got = got as f64;
        assert!((got - want).abs() <= 4.0 * want.sqrt() + 1.0, "row {r}: drew {got}, expected about {want:.0}");
    }
    // All-ones weights: uniform draws again (rows 5..10 come back), and the same seed the same batch.
    for r in 0..n {
        data.weight[r] = 1.0;
    }
    let plain = tempfile::tempdir().unwrap();
    write_shard(&plain.path().join("gen0001-w0-000000.npz"), &data).unwrap();
    let p = ReplayWindow::load(plain.path(), n, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS);
    let (mut a, mut b) = (martian_train::Batch::default(), martian_train::Batch::default());
    p.fill_batch(&mut StdRng::seed_from_u64(9), draws, None, &mut a);
    p.fill_batch(&mut StdRng::seed_from_u64(9), draws, None, &mut b);
    assert_eq!(a.value, b.value);
    let mut counts = vec![0u32; n];
    for &v in &a.value {
        counts[(v * n as f32).round() as usize] += 1;
    }
    let want = draws as f64 / n as f64;
    for (r, &c) in counts.iter().enumerate() {
        assert!((c as f64 - want).abs() <= 4.0 * want.sqrt() + 1.0, "row {r}: drew {c}, expected about {want:.0}");
    }
}
