//! Mixed precision (`model.precision`, BENCHMARKS.md "Mixed precision") on this machine's CPU
//! with bf16: the outputs of a bf16 pass stay close to fp32's on 1,000
//! self-play positions of each game (policy KL below 1e-3 nats, value
//! difference below 1e-2), a bf16 training run lowers the loss as fp32 does
//! and leaves the weights fp32, and fp16 is refused on the CPU.

use martian_model::{compare_outputs, Checkpoint, ModelConfig, NetBackend, OutputDifference, Precision};
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::GameState;
use martian_search::{Backend, DeviceBatch, MctsConfig, UniformEvaluator};
use martian_selfplay::{pack_samples, play_games, write_shard, FinishedGame, PlayParams, SelfplayConfig};
use martian_train::{OptimizerKind, ReplayWindow, TrainConfig, Trainer};
use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::{Device, Kind};

/// At least `n` self-play games' worth of positions (uniform evaluator, 8
/// simulations, every position a sample).
fn games<G: GameState>(rules: &G::Rules, n: usize) -> Vec<FinishedGame> {
    let start = G::new_game(rules).unwrap();
    let cfg = SelfplayConfig {
        games_in_flight: 8,
        simulations: 8,
        cheap_simulations: 8,
        full_search_prob: 1.0,
        ..Default::default()
    };
    let mut out: Vec<FinishedGame> = Vec::new();
    let mut next = 0u64;
    while out.iter().map(|g| g.samples.len()).sum::<usize>() < n {
        let ids: Vec<u64> = (next..next + 8).collect();
        next += 8;
        let params = PlayParams { start: &start, game_ids: &ids, seed: 5, model_name: "uniform".into() };
        play_games(&params, &cfg, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
            out.push(g);
            Ok(())
        })
        .unwrap();
    }
    out
}

/// The first `n` positions of `games` as one device batch (planes and legal moves).
fn device_batch<G: GameState>(games: &[FinishedGame], n: usize) -> DeviceBatch {
    let mut b = DeviceBatch::default();
    b.clear::<G>();
    for s in games.iter().flat_map(|g| &g.samples).take(n) {
        b.push_dense_row(&s.planes, &s.legal).unwrap();
    }
    assert_eq!(b.rows, n);
    b
}

/// A replay window over `games` (one shard in `dir`).
fn window<G: GameState>(dir: &std::path::Path, games: &[FinishedGame]) -> ReplayWindow {
    let samples: Vec<_> = games.iter().flat_map(|g| g.samples.iter().map(move |s| (g.record.game_id, s))).collect();
    write_shard(&dir.join("a.npz"), &pack_samples(&samples, G::INPUT_SHAPE, G::NUM_ACTIONS)).unwrap();
    ReplayWindow::load(dir, usize::MAX, G::INPUT_SHAPE, G::NUM_ACTIONS)
}

/// Trains the default architecture a little in fp32 (so that the batch-norm
/// statistics are the data's), then runs 1,000 positions through fp32 and bf16.
fn bf16_against_fp32<G: GameState>(rules: &G::Rules) -> OutputDifference {
    tch::set_num_threads(1);
    let games = games::<G>(rules, 1000);
    let dir = tempfile::tempdir().unwrap();
    let window = window::<G>(dir.path(), &games);
    let model = ModelConfig::default();
    let mut ck = Checkpoint::new_random::<G>(rules, &model, Device::Cpu, 3).unwrap();
    let cfg =
        TrainConfig { batch_size: 32, optimizer: OptimizerKind::Adamw, learning_rate: 1e-3, ..Default::default() };
    let mut tr = Trainer::new(&ck, &cfg, Device::Cpu).unwrap();
    let mut rng = StdRng::seed_from_u64(1);
    for _ in 0..12 {
        tr.step(&mut ck, &window, cfg.learning_rate, &mut rng).unwrap();
    }
    let reference = {
        let mut b = device_batch::<G>(&games, 1000);
        NetBackend::new(&ck.net, Device::Cpu, 250).run(&mut b).unwrap();
        b
    };
    let mut reduced = device_batch::<G>(&games, 1000);
    let mut backend = NetBackend::new(&ck.net, Device::Cpu, 250).with_precision(Precision::Bf16).unwrap();
    assert_eq!(backend.precision(), Precision::Bf16);
    backend.run(&mut reduced).unwrap();
    let d = compare_outputs(&reference, &reduced).unwrap();
    eprintln!("{}: bf16 against fp32 on {} positions: {d:?}", G::KIND, d.positions);
    // The bf16 pass really ran in bf16 (else the difference would be 0) ...
    assert!(d.mean_policy_kl > 0.0 && d.max_value_diff > 0.0, "{d:?}");
    // ... and stays within the bounds.
    assert!(d.mean_policy_kl < 1e-3, "{}: policy KL {:.3e} nats", G::KIND, d.mean_policy_kl);
    assert!(d.mean_value_diff < 1e-2, "{}: value difference {:.3e}", G::KIND, d.mean_value_diff);
    // fp32 through `with_precision` is the network itself, bit for bit.
    let mut again = device_batch::<G>(&games, 1000);
    NetBackend::new(&ck.net, Device::Cpu, 250).with_precision(Precision::Fp32).unwrap().run(&mut again).unwrap();
    assert_eq!((again.logits, again.wdl), (reference.logits.clone(), reference.wdl.clone()));
    d
}

#[test]
fn bf16_outputs_stay_close_to_fp32_on_jetan_positions() {
    bf16_against_fp32::<Jetan>(&JetanRules { max_plies: 80, ..Default::default() });
}

#[test]
fn bf16_outputs_stay_close_to_fp32_on_martian_chess_positions() {
    bf16_against_fp32::<MartianChess>(&MartianRules { max_plies: 80, ..Default::default() });
}

#[test]
fn a_bf16_training_run_lowers_the_loss_as_fp32_does_and_keeps_fp32_weights() {
    tch::set_num_threads(1);
    let rules = MartianRules { max_plies: 60, ..Default::default() };
    let games = games::<MartianChess>(&rules, 64);
    let dir = tempfile::tempdir().unwrap();
    let window = window::<MartianChess>(dir.path(), &games);
    let model = ModelConfig {
        blocks: 1,
        channels: 32,
        global_pooling: true,
        policy_channels: 8,
        value_hidden: 32,
        ..Default::default()
    };
    let cfg = TrainConfig {
        batch_size: 64,
        optimizer: OptimizerKind::Adamw,
        learning_rate: 0.003,
        weight_decay: 0.0,
        ..Default::default()
    };
    let run = |p: Precision| {
        let mut ck = Checkpoint::new_random::<MartianChess>(&rules, &model, Device::Cpu, 1).unwrap();
        let before = ck.vs.variables()["policy.fc.weight"].copy();
        let mut tr = Trainer::new(&ck, &cfg, Device::Cpu).unwrap().with_precision(p).unwrap();
        assert_eq!(tr.precision(), p);
        let mut rng = StdRng::seed_from_u64(1);
        let first = tr.step(&mut ck, &window, cfg.learning_rate, &mut rng).unwrap();
        let mut last = first;
        for _ in 0..80 {
            last = tr.step(&mut ck, &window, cfg.learning_rate, &mut rng).unwrap();
            assert!(!last.skipped && last.loss_scale.is_none(), "no loss scaling in {p}");
        }
        for (name, t) in ck.vs.variables() {
            assert_eq!(t.kind(), Kind::Float, "{p}: the master weight {name} stays fp32");
        }
        let moved = (&ck.vs.variables()["policy.fc.weight"] - before).abs().max().double_value(&[]);
        assert!(moved > 1e-4, "{p}: the weights were trained ({moved})");
        (first.total_loss, last.total_loss)
    };
    let (f32_first, f32_last) = run(Precision::Fp32);
    let (bf_first, bf_last) = run(Precision::Bf16);
    eprintln!("loss fp32 {f32_first:.4} -> {f32_last:.4}, bf16 {bf_first:.4} -> {bf_last:.4}");
    assert!((bf_first - f32_first).abs() < 0.01 * f32_first, "same first batch: {bf_first} vs {f32_first}");
    assert!(f32_last < 0.6 * f32_first, "fp32 {f32_first} -> {f32_last}");
    assert!(bf_last < 0.6 * bf_first, "bf16 {bf_first} -> {bf_last}");
    assert!((bf_last - f32_last).abs() < 0.15 * f32_last, "bf16 ends at {bf_last}, fp32 at {f32_last}");
}

#[test]
fn fp16_is_refused_on_the_cpu() {
    let rules = MartianRules::default();
    let ck = Checkpoint::new_random::<MartianChess>(&rules, &ModelConfig::default(), Device::Cpu, 1).unwrap();
    let e = Trainer::new(&ck, &TrainConfig::default(), Device::Cpu)
        .unwrap()
        .with_precision(Precision::Fp16)
        .err()
        .expect("fp16 on the CPU must be refused")
        .to_string();
    assert!(e.contains("fp16") && e.contains("bf16"), "{e}");
    let e = NetBackend::new(&ck.net, Device::Cpu, 8).with_precision(Precision::Fp16).err().unwrap().to_string();
    assert!(e.contains("model.precision"), "{e}");
}
