//! The operations that subcommands and the pipeline share: self-play into
//! shard files, one generation of training, matches between player specs.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use martian_evaluate::{play_match, GreedyPlayer, MatchResult, MctsPlayer, Player, RandomPlayer};
use martian_model::{Checkpoint, NetEvaluator};
use martian_rules::GameState;
use martian_search::{CachedEvaluator, UniformEvaluator};
use martian_selfplay::{pack_samples, play_games, write_shard, FinishedGame, PlayParams, SelfplayStats};
use martian_train::{Metrics, ReplayWindow, Trainer};
use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::Device;

use crate::config::RunConfig;
use crate::rundir::{append_line, write_atomic, RunDir};

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!("{what} {{bar:30}} {{pos}}/{{len}} [{{elapsed_precise}}<{{eta}}] {{msg}}"))
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

/// Where self-play output goes.
pub struct SelfplayOut<'a> {
    /// Shard directory.
    pub shards: &'a Path,
    /// Game-record directory.
    pub games: &'a Path,
    /// File-name prefix, e.g. `gen0001-w0`.
    pub prefix: String,
    /// First shard sequence number.
    pub first_seq: u32,
}

fn flush<G: GameState>(pending: &mut Vec<FinishedGame>, out: &SelfplayOut<'_>, seq: &mut u32) -> Result<()> {
    if pending.is_empty() {
        return Ok(());
    }
    let samples: Vec<(u64, &martian_selfplay::Sample)> =
        pending.iter().flat_map(|g| g.samples.iter().map(move |s| (g.record.game_id, s))).collect();
    let data = pack_samples(&samples, G::INPUT_SHAPE, G::NUM_ACTIONS);
    let stem = format!("{}-{:06}", out.prefix, seq);
    write_shard(&out.shards.join(format!("{stem}.npz")), &data)?;
    let mut lines = String::new();
    for g in pending.iter() {
        lines.push_str(&serde_json::to_string(&g.record)?);
        lines.push('\n');
    }
    write_atomic(&out.games.join(format!("{stem}.jsonl")), lines.as_bytes())?;
    *seq += 1;
    pending.clear();
    Ok(())
}

/// Plays `games` self-play games with `model` (or the uniform evaluator when
/// `None`) and writes a shard plus a record file every `games_per_shard` games.
///
/// # Errors
/// Evaluation or I/O errors.
pub fn selfplay_games<G: GameState>(
    cfg: &RunConfig,
    rules: &G::Rules,
    model: Option<(&Checkpoint, &str)>,
    device: Device,
    games: u64,
    first_game_id: u64,
    out: &SelfplayOut<'_>,
) -> Result<SelfplayStats> {
    let start = G::new_game(rules)?;
    let seed = cfg.seed ^ first_game_id.wrapping_mul(0x2545_F491_4F6C_DD1D);
    let model_name = model.map(|(_, n)| n.to_string()).unwrap_or_else(|| "uniform".into());
    let params = PlayParams { start: &start, games, first_game_id, seed, model_name };
    let pb = progress(games, "self-play");
    let per_shard = cfg.selfplay.games_per_shard as usize;
    let mut pending: Vec<FinishedGame> = Vec::new();
    let mut seq = out.first_seq;
    let mut io_err: Option<anyhow::Error> = None;
    let mut on_game = |g: FinishedGame, st: &SelfplayStats| -> Result<(), String> {
        pending.push(g);
        pb.inc(1);
        let s = st.seconds.max(1e-9);
        pb.set_message(format!("{:.2} games/s, {:.1} positions/s", st.games as f64 / s, st.moves as f64 / s));
        if pending.len() >= per_shard {
            if let Err(e) = flush::<G>(&mut pending, out, &mut seq) {
                let msg = e.to_string();
                io_err = Some(e);
                return Err(msg);
            }
        }
        Ok(())
    };
    let stats = match model {
        Some((ckpt, _)) => {
            let net = NetEvaluator::<G>::new(&ckpt.net, device, cfg.selfplay.max_batch as usize);
            let mut ev = CachedEvaluator::new(net, cfg.selfplay.cache_size);
            play_games(&params, &cfg.selfplay, &cfg.search, &mut ev, &mut on_game)
        }
        None => {
            let mut ev = UniformEvaluator;
            play_games(&params, &cfg.selfplay, &cfg.search, &mut ev, &mut on_game)
        }
    };
    drop(on_game);
    if let Some(e) = io_err {
        return Err(e);
    }
    let stats = stats.map_err(|e| anyhow!("self-play: {e}"))?;
    flush::<G>(&mut pending, out, &mut seq)?;
    pb.finish_and_clear();
    Ok(stats)
}

/// Trains generation `g` of a run: starts from generation `g - 1`'s checkpoint
/// (or resumes `gen<g>-partial`), runs `steps_per_generation` steps on the
/// replay window, and writes `models/gen<g>.safetensors`.
///
/// # Errors
/// Missing parent checkpoint, empty replay window, libtorch or I/O errors.
pub fn train_generation<G: GameState>(
    cfg: &RunConfig,
    rules: &G::Rules,
    run: &RunDir,
    g: u32,
    device: Device,
) -> Result<PathBuf> {
    let target = run.checkpoint(g);
    if RunDir::complete(&target) {
        return Ok(target);
    }
    let parent_path = run.checkpoint(g - 1);
    let partial = run.partial_checkpoint(g);
    let parent_step = Checkpoint::read_meta(&parent_path)
        .with_context(|| format!("parent checkpoint of generation {g}"))?
        .step;
    let (mut ckpt, resumed) = if RunDir::complete(&partial) {
        (Checkpoint::load::<G>(&partial, rules, Some(&cfg.model), device)?, true)
    } else {
        (Checkpoint::load::<G>(&parent_path, rules, Some(&cfg.model), device)?, false)
    };
    if !resumed {
        ckpt.meta.parent = parent_path.file_name().and_then(|n| n.to_str()).map(String::from);
    }
    let t = &cfg.train;
    let window = ReplayWindow::load(&run.shards(), t.replay_window as usize, G::INPUT_SHAPE, G::NUM_ACTIONS);
    for s in &window.skipped {
        eprintln!("warning: skipped {s}");
    }
    if window.len() < t.batch_size as usize {
        bail!(
            "replay window holds {} positions, fewer than train.batch_size ({}): play more self-play games first",
            window.len(),
            t.batch_size
        );
    }
    let steps_total = t.steps_per_generation as u64;
    let done = ckpt.meta.step.saturating_sub(parent_step);
    let total_run = steps_total * cfg.pipeline.generations.max(g) as u64;
    let mut trainer = Trainer::new(&ckpt, t, device)?;
    let mut rng = StdRng::seed_from_u64(cfg.seed ^ (g as u64) << 20 ^ ckpt.meta.step);
    let pb = progress(steps_total, "train");
    pb.set_position(done);
    let mut acc = [0f64; 5];
    let mut n_acc = 0u32;
    let mut t_log = std::time::Instant::now();
    for _ in done..steps_total {
        let lr = t.lr_at(ckpt.meta.step, total_run);
        let st = trainer.step(&mut ckpt, &window, lr, &mut rng)?;
        for (a, v) in acc.iter_mut().zip([st.policy_loss, st.value_loss, st.total_loss, st.policy_accuracy, st.value_mse]) {
            *a += v;
        }
        n_acc += 1;
        pb.inc(1);
        let local = ckpt.meta.step - parent_step;
        if local % t.log_every as u64 == 0 || local == steps_total {
            let n = n_acc as f64;
            let m = Metrics {
                step: ckpt.meta.step,
                generation: g,
                lr,
                policy_loss: acc[0] / n,
                value_loss: acc[1] / n,
                total_loss: acc[2] / n,
                policy_accuracy: acc[3] / n,
                value_mse: acc[4] / n,
                samples_per_s: n * t.batch_size as f64 / t_log.elapsed().as_secs_f64().max(1e-9),
                window: window.len(),
            };
            pb.set_message(format!("loss {:.3} (policy {:.3}, value {:.3}), acc {:.2}", m.total_loss, m.policy_loss, m.value_loss, m.policy_accuracy));
            append_line(&run.train_log(), &serde_json::to_string(&m)?)?;
            acc = [0.0; 5];
            n_acc = 0;
            t_log = std::time::Instant::now();
        }
        if local % t.checkpoint_every as u64 == 0 && local < steps_total {
            ckpt.meta.created_unix_s = now_s();
            ckpt.save(&partial)?;
        }
    }
    pb.finish_and_clear();
    ckpt.meta.created_unix_s = now_s();
    ckpt.save(&target)?;
    let _ = std::fs::remove_file(&partial);
    let _ = std::fs::remove_file(partial.with_extension("json"));
    Ok(target)
}

fn now_s() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// A player named on the command line: a checkpoint path (MCTS with the
/// network), `uniform` (MCTS without a network), `random` or `greedy`.
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerSpec {
    /// MCTS with this checkpoint.
    Net(PathBuf),
    /// MCTS with the uniform evaluator.
    Uniform,
    /// Uniformly random moves.
    Random,
    /// One-ply greedy.
    Greedy,
}

impl PlayerSpec {
    /// Parses `random`, `greedy`, `uniform` or a checkpoint path.
    pub fn parse(s: &str) -> PlayerSpec {
        match s {
            "random" => PlayerSpec::Random,
            "greedy" => PlayerSpec::Greedy,
            "uniform" => PlayerSpec::Uniform,
            p => PlayerSpec::Net(PathBuf::from(p)),
        }
    }
}

/// Plays a match between two player specs with the `[evaluate]` settings.
///
/// # Errors
/// Unloadable checkpoints, player errors.
pub fn run_match<G: GameState>(
    cfg: &RunConfig,
    rules: &G::Rules,
    a: &PlayerSpec,
    b: &PlayerSpec,
    pairs: u32,
    device: Device,
) -> Result<MatchResult> {
    let load = |s: &PlayerSpec| -> Result<Option<Checkpoint>> {
        match s {
            PlayerSpec::Net(p) => Ok(Some(
                Checkpoint::load::<G>(p, rules, None, device).with_context(|| format!("loading player {}", p.display()))?,
            )),
            _ => Ok(None),
        }
    };
    let (ca, cb) = (load(a)?, load(b)?);
    let mut pa = make_player::<G>(cfg, a, &ca, device, cfg.seed ^ 0xA);
    let mut pb_ = make_player::<G>(cfg, b, &cb, device, cfg.seed ^ 0xB);
    let start = G::new_game(rules)?;
    let bar = progress(pairs as u64 * 2, "match");
    let res = play_match(&start, pa.as_mut(), pb_.as_mut(), pairs, cfg.evaluate.opening_plies, cfg.seed, |_| bar.inc(1))
        .map_err(|e| anyhow!("match: {e}"))?;
    bar.finish_and_clear();
    Ok(res)
}

fn make_player<'a, G: GameState>(
    cfg: &RunConfig,
    s: &PlayerSpec,
    c: &'a Option<Checkpoint>,
    device: Device,
    seed: u64,
) -> Box<dyn Player<G> + 'a> {
    let sims = cfg.evaluate.simulations;
    let mut search = cfg.search.clone();
    search.leaves_per_batch = search.leaves_per_batch.max(4);
    match (s, c) {
        (PlayerSpec::Net(p), Some(ck)) => Box::new(MctsPlayer::new(
            format!("mcts:model={},visits={sims}", p.file_name().and_then(|n| n.to_str()).unwrap_or("?")),
            NetEvaluator::<G>::new(&ck.net, device, 256),
            search,
            sims,
            seed,
        )),
        (PlayerSpec::Uniform, _) => {
            Box::new(MctsPlayer::new(format!("mcts:uniform,visits={sims}"), UniformEvaluator, search, sims, seed))
        }
        (PlayerSpec::Greedy, _) => Box::new(GreedyPlayer::new(seed)),
        _ => Box::new(RandomPlayer::new(seed)),
    }
}

/// One line summary of a match.
pub fn describe_match(m: &MatchResult) -> String {
    let elo = m
        .elo
        .map(|e| format!("score {:.3}, Elo {:+.0} [{:+.0}, {:+.0}] (95%)", e.score, e.elo, e.elo_low, e.elo_high))
        .unwrap_or_else(|| "no games".into());
    format!("{} vs {}: +{} ={} -{} ({elo})", m.a, m.b, m.wins, m.draws, m.losses)
}
