//! The operations that subcommands and the pipeline share: self-play into
//! shard files, one generation of training, matches between player specs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
pub use martian_evaluate::PlayerSpec;
use martian_evaluate::{
    play_match_book, AlphaBetaPlayer, GreedyPlayer, MatchResult, MctsParts, MctsPlayer, OpeningBook, Player,
    RandomPlayer, SprtDecision, SprtParams, SprtState,
};
use martian_model::{Checkpoint, ConfigModel, NetBackend, NetEvaluator, NetReplica};
use martian_rules::GameState;
use martian_search::{AbGame, AlphaBetaConfig, StaticValueEvaluator, UniformEvaluator};
use martian_selfplay::{pack_samples, play_games, play_games_on_devices, FinishedGame, PlayParams, SelfplayStats};
use martian_train::{MetricsLog, ReplayWindow, TrainError, Trainer};
use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::Device;

use crate::checkpoints::load_checkpoint;
use crate::config::RunConfig;
use crate::io::append_line;
use crate::rundir::RunDir;
use crate::spool::{self, SelfplayOut, SpooledGame};

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(&format!(
            "{what} {{bar:30}} {{pos}}/{{len}} [{{elapsed_precise}}<{{eta}}] {{msg}}"
        ))
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    pb
}

/// Plays `games` self-play games with `model` (or the uniform evaluator when
/// `None`) as the worker and generation of `out`, the network on `devices`
/// (one replica per device, `selfplay.groups` game groups each; the overlapped
/// driver `martian_selfplay::play_games_on_devices`): first repairs the output of
/// an earlier kill ([`spool::recover`]), then plays the lowest game ids not yet
/// done ([`SelfplayOut::next_ids`]), spools every finished game at once, and
/// merges the spool into a shard plus a record file every `games_per_shard`
/// games and at the end.
///
/// With `replay_done` (the pipeline's resume of a generation, when
/// `selfplay.exact_resume` is on and `fixed_batch` is 0), the games already
/// done are played again with the others, in id order, and their output is
/// not written a second time: the batches are then those of the first
/// attempt, so every game is the one an uninterrupted run plays.
///
/// # Errors
/// Evaluation or I/O errors.
pub fn selfplay_games<G: martian_search::AbGame>(
    cfg: &RunConfig,
    rules: &G::Rules,
    model: Option<(&Checkpoint, &str)>,
    devices: &[Device],
    games: u64,
    out: &SelfplayOut,
    replay_done: bool,
) -> Result<SelfplayStats> {
    let start = G::new_game(rules)?;
    let label = cfg.selfplay.label_params();
    if label.depth > 0 && start.num_players() > 2 {
        bail!(
            "selfplay.label_depth needs a two-sided game: the alpha-beta plays the team view, \
             not the {} value players of free-for-all",
            start.num_players()
        );
    }
    let mut pending = spool::recover(out, G::INPUT_SHAPE, G::NUM_ACTIONS)?;
    let mut seq = out.next_seq();
    let per_shard = cfg.selfplay.games_per_shard as usize;
    if pending.len() >= per_shard {
        spool::merge(out, &mut pending, &mut seq)?;
    }
    let done_now = out.done_ids()?;
    let mut ids = out.next_ids(&done_now, games)?;
    let done = if replay_done { done_now } else { Default::default() };
    if !done.is_empty() {
        eprintln!(
            "self-play: replaying the {} games already done with the {} missing ones (selfplay.exact_resume)",
            done.len(),
            ids.len()
        );
        ids.extend(done.iter().copied());
        ids.sort_unstable();
    }
    let model_name = model.map(|(_, n)| n.to_string()).unwrap_or_else(|| "uniform".into());
    let params = PlayParams { start: &start, game_ids: &ids, seed: cfg.seed, model_name };
    let pb = progress(ids.len() as u64, "self-play");
    let mut io_err: Option<anyhow::Error> = None;
    let mut label_points: Vec<(i32, f32)> = Vec::new();
    let mut on_game = |mut g: FinishedGame, st: &SelfplayStats| -> Result<(), String> {
        pb.inc(1);
        if done.contains(&g.record.game_id) {
            return Ok(());
        }
        label_points.extend(martian_selfplay::label_game::<G>(&mut g, rules, &label)?);
        let samples: Vec<(u64, &martian_selfplay::Sample)> = g.samples.iter().map(|s| (g.record.game_id, s)).collect();
        let data = pack_samples(&samples, G::INPUT_SHAPE, G::NUM_ACTIONS);
        let sg = SpooledGame { data, record: g.record };
        let r = spool::spool_game(out, &sg).and_then(|()| {
            pending.push(sg);
            if pending.len() >= per_shard {
                spool::merge(out, &mut pending, &mut seq)?;
            }
            Ok(())
        });
        if let Err(e) = r {
            let msg = e.to_string();
            io_err = Some(e);
            return Err(msg);
        }
        let s = st.seconds.max(1e-9);
        pb.set_message(format!("{:.2} games/s, {:.1} positions/s", st.games as f64 / s, st.moves as f64 / s));
        Ok(())
    };
    let stats = match model {
        Some((ckpt, _)) => {
            let mut backends = net_backends(cfg, ckpt, devices)?;
            play_games_on_devices(&params, &cfg.selfplay, &cfg.search, &mut backends, &mut on_game)
        }
        None => {
            let mut ev = UniformEvaluator;
            play_games(&params, &cfg.selfplay, &cfg.search, &mut ev, &mut on_game)
        }
    };
    // `on_game` (which borrows `io_err`) is not used past this point.
    if let Some(e) = io_err {
        return Err(e);
    }
    let stats = stats.map_err(|e| anyhow!("self-play: {e}"))?;
    spool::merge(out, &mut pending, &mut seq)?;
    pb.finish_and_clear();
    if label.depth > 0 {
        let fit = martian_selfplay::fit_score_scale(&label_points)
            .map_or_else(|| "no fit (too few points, or no decisive result)".to_string(), |s| format!("{s:.0}"));
        eprintln!(
            "self-play labels: {} positions by alphabeta:depth={}; label_score_scale fitted to their results: {fit} \
             (the config's: {})",
            label_points.len(),
            label.depth,
            label.score_scale
        );
    }
    Ok(stats)
}

/// One network backend per self-play device: a replica of `ckpt` on the
/// device, `selfplay.fixed_batch` or `max_batch` rows per pass, the config's
/// `torch_threads` on its thread, in `model.precision` (a reduced-precision
/// copy of the replica's weights for bf16 and fp16).
///
/// # Errors
/// A replica that cannot be made (e.g. the device is out of memory), or fp16
/// on a device other than CUDA.
pub fn net_backends(cfg: &RunConfig, ckpt: &Checkpoint, devices: &[Device]) -> Result<Vec<NetBackend<NetReplica>>> {
    devices
        .iter()
        .map(|&d| {
            let r = ckpt.replica(d)?;
            let b = match cfg.selfplay.fixed_batch {
                0 => NetBackend::new(r, d, cfg.selfplay.max_batch as usize),
                b => NetBackend::fixed(r, d, b as usize),
            };
            Ok(b.with_torch_threads(cfg.torch_threads).with_precision(cfg.model.precision)?)
        })
        .collect()
}

/// Seed of the batch sampler at global step `step` of generation `g`: every
/// step draws its batch from its own generator, so a resumed generation draws
/// the batches of an uninterrupted one with no generator state to save.
pub fn batch_seed(seed: u64, g: u32, step: u64) -> u64 {
    let mut x = seed ^ ((g as u64) << 48) ^ step.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // splitmix64 finaliser
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Plays the missing games of the bootstrap from the baseline
/// (`pipeline.bootstrap_games`, see [`crate::config::PipelineConfig`]) into
/// generation 1's shards and records as worker `boot`: `bootstrap_player`
/// against itself after `evaluate.opening_plies` random plies (a generator
/// seeded by the run's seed and the game id, so a resumed run plays the same
/// games), every later position a sample with the teacher's move as a
/// one-hot policy target and the result as the value target. Finished games
/// go through the spool like self-play games, so a kill loses nothing
/// finished and ids never repeat. Returns the games played now.
///
/// # Errors
/// A bad `bootstrap_player` spec, or I/O errors writing shards and records.
pub fn bootstrap_games<G: AbGame>(cfg: &RunConfig, rules: &G::Rules, run: &RunDir, device: Device) -> Result<u64> {
    use rand::seq::SliceRandom;
    let want = cfg.pipeline.bootstrap_games as u64;
    let out = run.selfplay_out(1, "boot");
    let mut pending = spool::recover(&out, G::INPUT_SHAPE, G::NUM_ACTIONS)?;
    let mut seq = out.next_seq();
    let per_shard = cfg.selfplay.games_per_shard as usize;
    let done = out.done_ids()?;
    let have = done.len() as u64;
    if have >= want {
        spool::merge(&out, &mut pending, &mut seq)?;
        return Ok(0);
    }
    let ids = out.next_ids(&done, want - have)?;
    let spec = PlayerSpec::parse(&cfg.pipeline.bootstrap_player)?;
    let mut teacher = make_player::<G>(cfg, &spec, &None, device, cfg.seed)?;
    let start = G::new_game(rules)?;
    let pb = progress(ids.len() as u64, "bootstrap");
    let [c, h, w] = G::INPUT_SHAPE;
    let mut moves = Vec::new();
    for &id in &ids {
        let mut rng = StdRng::seed_from_u64(cfg.seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut s = start.clone();
        let mut played = Vec::new();
        let mut samples: Vec<(martian_selfplay::Sample, martian_rules::Side, usize)> = Vec::new();
        while s.outcome().is_none() {
            let mv = if played.len() < cfg.evaluate.opening_plies as usize {
                s.legal_moves(&mut moves);
                if moves.iter().any(|&m| s.is_opening_move(m)) {
                    moves.retain(|&m| s.is_opening_move(m)); // no Escape spent (GameState::is_opening_move)
                }
                *moves.choose(&mut rng).context("a position without an outcome has legal moves")?
            } else {
                let mv = teacher.choose_move(&s).map_err(|e| anyhow!("bootstrap teacher: {e}"))?;
                s.legal_moves(&mut moves);
                let mut planes = vec![0.0; c * h * w];
                s.encode(&mut planes);
                let legal = moves.iter().map(|&m| s.action_index(m) as u32).collect();
                let policy = vec![(s.action_index(mv) as u32, 1.0)];
                let sample = martian_selfplay::Sample::new(planes, legal, policy, s.ply());
                samples.push((sample, s.side_to_move(), s.player_to_move()));
                mv
            };
            played.push(s.move_to_string(mv));
            s.play(mv).map_err(|e| anyhow!("bootstrap: the teacher played an illegal move: {e}"))?;
        }
        let outcome = s.outcome().context("finished game")?;
        let samples: Vec<martian_selfplay::Sample> = samples
            .into_iter()
            .map(|(mut x, side, mover)| {
                // The result, plies left and final points, as in self-play.
                martian_selfplay::set_end_targets(&mut x, side, mover, &s);
                x
            })
            .collect();
        let record = martian_selfplay::GameRecord {
            format_version: martian_selfplay::record::RECORD_FORMAT_VERSION,
            game: G::KIND,
            rules: serde_json::to_value(s.rules()).ok(),
            game_id: id,
            start: start.to_position(),
            moves: played,
            winner: martian_selfplay::winner_name(&s),
            reason: outcome.reason,
            plies: s.ply(),
            samples: samples.len() as u32,
            model: format!("{} (bootstrap)", cfg.pipeline.bootstrap_player),
            contempt: None,
            draw_aversion: None,
            label_scores: Vec::new(),
        };
        let refs: Vec<(u64, &martian_selfplay::Sample)> = samples.iter().map(|x| (id, x)).collect();
        let sg = SpooledGame { data: pack_samples(&refs, G::INPUT_SHAPE, G::NUM_ACTIONS), record };
        spool::spool_game(&out, &sg)?;
        pending.push(sg);
        if pending.len() >= per_shard {
            spool::merge(&out, &mut pending, &mut seq)?;
        }
        pb.inc(1);
    }
    spool::merge(&out, &mut pending, &mut seq)?;
    pb.finish_and_clear();
    Ok(ids.len() as u64)
}

/// Trains generation `g` of a run: starts from generation `g - 1`'s checkpoint
/// (or resumes the newest complete partial checkpoint `gen<g>-partial-<step>`
/// with its optimizer state), runs `steps_per_generation` steps (fewer with
/// `train.samples_per_new_position`) on the replay
/// window, and writes `models/gen<g>.safetensors`.
///
/// Resuming is exact: the optimizer state is saved with each partial
/// checkpoint, each step's batch comes from a generator seeded by
/// [`batch_seed`], and the replay window does not depend on file times, so a
/// killed and resumed generation ends with the weights of an uninterrupted one
/// (on the CPU with a fixed thread count). `train.jsonl` is cut back to the
/// resume step first, so every step is logged once.
///
/// # Errors
/// Missing parent checkpoint, empty replay window, a NaN/infinite loss (the
/// weights before it are kept as a partial checkpoint), libtorch or I/O errors.
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
    let parent_step =
        Checkpoint::read_meta(&parent_path).with_context(|| format!("parent checkpoint of generation {g}"))?.step;
    let t = &cfg.train;
    // With `train.replay_window_min`, KataGo's window that grows with the positions produced.
    let size = if t.replay_window_min > 0 {
        t.window_for(martian_train::total_positions(&run.shards()))
    } else {
        t.replay_window as usize
    };
    let window = ReplayWindow::load(&run.shards(), size, G::INPUT_SHAPE, G::NUM_ACTIONS);
    // Each damaged shard once per process (a pipeline loads a window per generation).
    static WARNED: std::sync::Mutex<BTreeSet<String>> = std::sync::Mutex::new(BTreeSet::new());
    let mut warned = WARNED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for s in window.skipped.iter().filter(|s| warned.insert(s.to_string())) {
        eprintln!("warning: skipped {s} (not said again in this process's later windows)");
    }
    drop(warned);
    for s in &window.warnings {
        eprintln!("warning: {s}");
    }
    if window.len() < t.batch_size as usize {
        bail!(
            "replay window holds {} positions, fewer than train.batch_size ({}): play more self-play games first",
            window.len(),
            t.batch_size
        );
    }
    // The newest partial checkpoint whose three files load; a damaged one (a
    // missing, truncated or garbled file) is named in a warning and skipped.
    let mut resumed = None;
    let partials = run.partial_checkpoints(g);
    for (step, p) in partials.iter().rev() {
        let shown = crate::io::shown(p);
        if let Some(problem) = RunDir::partial_problem(p, *step) {
            eprintln!("warning: not resuming from {shown}: {problem}");
            continue;
        }
        let ck = match load_checkpoint::<G>(p, rules, ConfigModel::Fixed(&cfg.model), device) {
            Ok(ck) => ck,
            Err(e) => {
                eprintln!("warning: not resuming from {shown}: {e:#}");
                continue;
            }
        };
        let mut tr = Trainer::new(&ck, t, device)?.with_precision(cfg.model.precision)?;
        match tr.load_state(&RunDir::optimizer_state(p)) {
            Ok(()) => {
                resumed = Some((ck, tr, p.clone()));
                break;
            }
            Err(e) => eprintln!("warning: not resuming from {shown}: {e}"),
        }
    }
    let (mut ckpt, mut trainer, mut last_partial) = match resumed {
        Some((ck, tr, p)) => {
            eprintln!("generation {g}: resuming training at step {} from {}", ck.meta.step, crate::io::shown(&p));
            (ck, tr, Some(p))
        }
        None => {
            if !partials.is_empty() {
                eprintln!(
                    "generation {g}: training starts again from {} (no partial checkpoint of generation {g} \
                     can be resumed; they are removed)",
                    crate::io::shown(&parent_path)
                );
            }
            let mut ck = load_checkpoint::<G>(&parent_path, rules, ConfigModel::Fixed(&cfg.model), device)?;
            ck.meta.parent = parent_path.file_name().and_then(|n| n.to_str()).map(String::from);
            let tr = Trainer::new(&ck, t, device)?.with_precision(cfg.model.precision)?;
            (ck, tr, None)
        }
    };
    // Partial files of other steps are leftovers of a kill.
    for (_, p) in run.partial_checkpoints(g) {
        if Some(&p) != last_partial.as_ref() {
            RunDir::remove_partial(&p);
        }
    }
    run.truncate_train_log(ckpt.meta.step)?;
    // With `train.samples_per_new_position`, fewer steps when the generation brought few new positions.
    let steps_total = t.steps_for(window.newest_generation_len) as u64;
    let done = ckpt.meta.step.saturating_sub(parent_step);
    let total_run = t.steps_per_generation as u64 * cfg.pipeline.generations.max(g) as u64;
    let pb = progress(steps_total, "train");
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "train {bar:30} {pos}/{len} steps ({per_sec}) [{elapsed_precise}<{eta}] {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    pb.set_position(done);
    let mut log = MetricsLog::default();
    let save_partial = |ckpt: &mut Checkpoint, trainer: &Trainer, last: &mut Option<PathBuf>| -> Result<PathBuf> {
        let _writing = crate::interrupt::writing();
        let p = run.partial_checkpoint(g, ckpt.meta.step);
        // Optimizer state and weights first; the sidecar, written last, marks the partial complete.
        trainer.save_state(&RunDir::optimizer_state(&p))?;
        ckpt.meta.created_unix_s = now_s();
        ckpt.save(&p)?;
        if let Some(old) = last.replace(p.clone()) {
            if old != p {
                RunDir::remove_partial(&old);
            }
        }
        Ok(p)
    };
    for _ in done..steps_total {
        let lr = t.lr_at(ckpt.meta.step, total_run);
        let mut rng = StdRng::seed_from_u64(batch_seed(cfg.seed, g, ckpt.meta.step));
        let st = match trainer.step(&mut ckpt, &window, lr, &mut rng) {
            Ok(st) => st,
            Err(e @ TrainError::NonFiniteLoss { .. }) => {
                pb.finish_and_clear();
                let kept = save_partial(&mut ckpt, &trainer, &mut last_partial)?;
                bail!(
                    "generation {g}: {e}. Training stopped; the last good weights are in {} \
                     (running the command again resumes from them)",
                    crate::io::shown(&kept)
                );
            }
            Err(e) => return Err(e.into()),
        };
        log.add(&st);
        pb.inc(1);
        let local = ckpt.meta.step - parent_step;
        if local % t.log_every as u64 == 0 || local == steps_total {
            let m = log.take(ckpt.meta.step, g, lr, t.batch_size, window.len());
            pb.set_message(format!(
                "loss {:.3} (policy {:.3}, value {:.3}), acc {:.2}",
                m.total_loss, m.policy_loss, m.value_loss, m.policy_accuracy
            ));
            append_line(&run.train_log(), &serde_json::to_string(&m)?)?;
            crate::tensorboard::train_metrics(run.root(), &m);
        }
        if local % t.checkpoint_every as u64 == 0 && local < steps_total {
            save_partial(&mut ckpt, &trainer, &mut last_partial)?;
        }
    }
    pb.finish_and_clear();
    ckpt.meta.created_unix_s = now_s();
    {
        let _writing = crate::interrupt::writing();
        ckpt.save(&target)?;
    }
    if let Some(p) = last_partial {
        RunDir::remove_partial(&p);
    }
    Ok(target)
}

fn now_s() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Loads the checkpoint of a player spec, if it has one, under the
/// architecture rule of a config without a fixed architecture
/// ([`ConfigModel::Default`] of `cfg.model`, see [`load_checkpoint`]), and
/// warms it up with the config's `torch_threads` on the starting position
/// ([`crate::runtime::warm_up`]), so that no game's first move pays for
/// libtorch's first pass.
///
/// # Errors
/// Unloadable checkpoint, or a failed warm-up pass.
pub fn load_player_checkpoint<G: GameState>(
    cfg: &RunConfig,
    s: &PlayerSpec,
    rules: &G::Rules,
    device: Device,
) -> Result<Option<Checkpoint>> {
    let Some(p) = s.checkpoint() else { return Ok(None) };
    let ck = load_checkpoint::<G>(p, rules, ConfigModel::Default(&cfg.model), device)
        .with_context(|| format!("loading player {}", p.display()))?;
    crate::runtime::warm_up(&ck.net, device, cfg.torch_threads, &G::new_game(rules)?)
        .with_context(|| format!("player {}", p.display()))?;
    Ok(Some(ck))
}

/// The opening lines of a match: the run's stored book when `book` is given
/// (created there on first use), else a book generated in memory from the
/// config's seed (so repeated commands see the same openings).
///
/// # Errors
/// An unreadable or foreign book.
pub fn opening_lines<G: AbGame>(
    cfg: &RunConfig,
    start: &G,
    book: Option<&Path>,
    pairs: u32,
) -> Result<Vec<Vec<martian_rules::Move>>> {
    let n = (pairs.max(cfg.evaluate.pairs).max(cfg.evaluate.final_pairs) as usize).max(1);
    let plies = cfg.evaluate.opening_plies;
    let b = match book {
        Some(p) => OpeningBook::load_or_create(p, start, n.max(64), plies, cfg.seed).map_err(anyhow::Error::msg)?,
        None => OpeningBook::generate(start, n, plies, cfg.seed),
    };
    b.lines(start).map_err(anyhow::Error::msg)
}

/// Plays a match between two player specs with the `[evaluate]` settings,
/// from the run's opening book `book` (or in-memory openings, see
/// [`opening_lines`]), with an optional SPRT that may end the match early (it
/// is evaluated on the pentanomial pair counts after each pair); returns the
/// final SPRT state too.
///
/// # Errors
/// Unloadable checkpoints or book, player errors.
#[allow(clippy::too_many_arguments)]
pub fn run_match_with<G: AbGame>(
    cfg: &RunConfig,
    rules: &G::Rules,
    a: &PlayerSpec,
    b: &PlayerSpec,
    pairs: u32,
    device: Device,
    book: Option<&Path>,
    sprt: Option<SprtParams>,
) -> Result<(MatchResult, Option<SprtState>)> {
    let (ca, cb) =
        (load_player_checkpoint::<G>(cfg, a, rules, device)?, load_player_checkpoint::<G>(cfg, b, rules, device)?);
    if let (Some(sa), Some(sb)) = (mcts_side(cfg, a, &ca, device)?, mcts_side(cfg, b, &cb, device)?) {
        return run_match_batched::<G>(cfg, rules, sa, sb, pairs, book, sprt);
    }
    let mut pa = make_player::<G>(cfg, a, &ca, device, cfg.seed ^ 0xA)?;
    let mut pb_ = make_player::<G>(cfg, b, &cb, device, cfg.seed ^ 0xB)?;
    let start = G::new_game(rules)?;
    let lines = opening_lines(cfg, &start, book, pairs)?;
    let bar = progress(pairs as u64 * 2, "match");
    let stop = |m: &MatchResult| sprt.is_some_and(|p| p.pentanomial(&m.pentanomial).decision != SprtDecision::Continue);
    let res = play_match_book(&start, pa.as_mut(), pb_.as_mut(), &lines, pairs, |_| bar.inc(1), stop)
        .map_err(|e| anyhow!("match: {e}"))?;
    bar.finish_and_clear();
    let state = sprt.map(|p| p.pentanomial(&res.pentanomial));
    Ok((res, state))
}

/// The evaluator of an MCTS player in a batched match.
enum SideEval<'a, G> {
    Net(NetEvaluator<'a, G>),
    Uniform,
}

impl<G: GameState> martian_search::Evaluator<G> for SideEval<'_, G> {
    fn evaluate(
        &mut self,
        p: &[&G],
        m: &[&[martian_rules::Move]],
        out: &mut Vec<martian_search::Evaluation>,
    ) -> Result<(), martian_search::EvalError> {
        match self {
            SideEval::Net(n) => n.evaluate(p, m, out),
            SideEval::Uniform => UniformEvaluator.evaluate(p, m, out),
        }
    }
}

/// The network evaluator of a match player: `max_batch` positions per pass,
/// in the config's `model.precision`.
///
/// # Errors
/// fp16 on a device other than CUDA.
fn match_evaluator<'a, G: GameState>(
    cfg: &RunConfig,
    ck: &'a Checkpoint,
    device: Device,
    max_batch: usize,
) -> Result<NetEvaluator<'a, G>> {
    Ok(NetEvaluator::new(&ck.net, device, max_batch).with_precision(cfg.model.precision)?)
}

/// `(name, evaluator, simulations)` of a spec that is an MCTS player with a
/// fixed visit count (`None` otherwise: other players, and movetime players,
/// which the batched match cannot time).
///
/// # Errors
/// fp16 on a device other than CUDA; a network player whose checkpoint is not loaded.
#[allow(clippy::type_complexity)]
fn mcts_side<'a, G: GameState>(
    cfg: &RunConfig,
    s: &PlayerSpec,
    c: &'a Option<Checkpoint>,
    device: Device,
) -> Result<Option<(String, SideEval<'a, G>, u32)>> {
    // Timed players, strength levels (sampled moves), static values and the
    // play-time check play in the sequential arena.
    let Some(MctsParts { name, model, visits, movetime: None, temperature, statics, veto_depth }) =
        s.mcts_parts(cfg.evaluate.simulations)
    else {
        return Ok(None);
    };
    if temperature > 0.0 || statics.is_some() || veto_depth > 0 {
        return Ok(None);
    }
    let ev = match (model, c) {
        (Some(_), Some(ck)) => SideEval::Net(match_evaluator(cfg, ck, device, 1024)?),
        (Some(p), None) => bail!("player {}: checkpoint not loaded", p.display()),
        (None, _) => SideEval::Uniform,
    };
    Ok(Some((name, ev, visits)))
}

/// Games in flight in a batched match.
const MATCH_GAMES_IN_FLIGHT: usize = 64;

/// A match between two MCTS players with many games in flight and batched
/// evaluation ([`martian_evaluate::play_match_mcts`]); the same games as the
/// sequential arena, much faster. With an SPRT it plays chunks of 4 pairs and
/// stops at a decision.
fn run_match_batched<G: AbGame>(
    cfg: &RunConfig,
    rules: &G::Rules,
    (na, mut ea, sa): (String, SideEval<'_, G>, u32),
    (nb, mut eb, sb): (String, SideEval<'_, G>, u32),
    pairs: u32,
    book: Option<&Path>,
    sprt: Option<SprtParams>,
) -> Result<(MatchResult, Option<SprtState>)> {
    let start = G::new_game(rules)?;
    let lines = opening_lines(cfg, &start, book, pairs)?;
    let mut search = cfg.search.clone();
    search.leaves_per_batch = search.leaves_per_batch.max(4);
    let bar = progress(pairs as u64 * 2, "match");
    let chunk = if sprt.is_some() { 4 } else { pairs.max(1) };
    let mut games = Vec::new();
    let mut off = 0u32;
    while off < pairs {
        let n = chunk.min(pairs - off);
        let sub: Vec<Vec<martian_rules::Move>> = if lines.is_empty() {
            Vec::new()
        } else {
            (off..off + n).map(|p| lines[p as usize % lines.len()].clone()).collect()
        };
        let r = martian_evaluate::play_match_mcts(
            &start,
            martian_evaluate::MctsSide { name: na.clone(), evaluator: &mut ea, simulations: sa },
            martian_evaluate::MctsSide { name: nb.clone(), evaluator: &mut eb, simulations: sb },
            &search,
            &sub,
            n,
            MATCH_GAMES_IN_FLIGHT,
            |_| bar.inc(1),
        )
        .map_err(|e| anyhow!("match: {e}"))?;
        games.extend(r.games.into_iter().map(|mut g| {
            g.pair += off;
            g
        }));
        off += n;
        let so_far = martian_evaluate::summarize_games(na.clone(), nb.clone(), games.clone());
        if sprt.is_some_and(|p| p.pentanomial(&so_far.pentanomial).decision != SprtDecision::Continue) {
            break;
        }
    }
    bar.finish_and_clear();
    let res = martian_evaluate::summarize_games(na, nb, games);
    let state = sprt.map(|p| p.pentanomial(&res.pentanomial));
    Ok((res, state))
}

/// Builds the player of a spec (`c` is its loaded checkpoint, if it has one).
///
/// # Errors
/// A bad evaluation option of an alpha-beta spec.
pub fn make_player<'a, G: AbGame>(
    cfg: &RunConfig,
    s: &PlayerSpec,
    c: &'a Option<Checkpoint>,
    device: Device,
    seed: u64,
) -> Result<Box<dyn Player<G> + 'a>> {
    let mut search = cfg.search.clone();
    search.leaves_per_batch = search.leaves_per_batch.max(4);
    Ok(match s {
        PlayerSpec::Greedy => Box::new(GreedyPlayer::new(seed)),
        PlayerSpec::AlphaBeta { limits, tt_mib, eval_options, text } => {
            let mut eval = G::Eval::default();
            for (k, v) in eval_options {
                G::eval_option(&mut eval, k, v).map_err(|e| anyhow!("player {text:?}: {e}"))?;
            }
            let abc = AlphaBetaConfig { tt_mib: *tt_mib, seed, ..AlphaBetaConfig::default() };
            let player =
                AlphaBetaPlayer::<G>::try_with_eval(abc, *limits, eval).map_err(|e| anyhow!("player {text:?}: {e}"))?;
            Box::new(player.with_name(text.clone()))
        }
        PlayerSpec::Random => Box::new(RandomPlayer::new(seed)),
        PlayerSpec::Net(_) | PlayerSpec::Mcts { .. } | PlayerSpec::Uniform => {
            let Some(MctsParts { name, model, visits, movetime, temperature, statics, veto_depth }) =
                s.mcts_parts(cfg.evaluate.simulations)
            else {
                bail!("player {s:?} is not an MCTS player");
            };
            match (model, c) {
                (Some(_), Some(ck)) => timed(
                    MctsPlayer::new(name, match_evaluator::<G>(cfg, ck, device, 256)?, search, visits, seed)
                        .with_temperature(temperature),
                    movetime,
                    veto_depth,
                )?,
                (Some(p), None) => bail!("player {}: checkpoint not loaded", p.display()),
                (None, _) => match statics {
                    Some(st) => timed(
                        MctsPlayer::new(
                            name,
                            StaticValueEvaluator::<G>::new(st.scale as f32, st.policy.map(|t| t as f32))?,
                            search,
                            visits,
                            seed,
                        )
                        .with_temperature(temperature),
                        movetime,
                        veto_depth,
                    )?,
                    None => timed(
                        MctsPlayer::new(name, UniformEvaluator, search, visits, seed).with_temperature(temperature),
                        movetime,
                        veto_depth,
                    )?,
                },
            }
        }
    })
}

/// `p`, with a time limit per move when `movetime` (milliseconds) is given,
/// and the play-time check of `veto_depth` plies (0 = none).
///
/// # Errors
/// A `veto_depth` out of range (the message names the player).
fn timed<'a, G: AbGame, E: martian_search::Evaluator<G> + 'a>(
    p: MctsPlayer<G, E>,
    movetime: Option<u64>,
    veto_depth: u32,
) -> Result<Box<dyn Player<G> + 'a>> {
    let name = p.name();
    let p = p.with_veto(veto_depth).map_err(|e| anyhow!("player {name:?}: {e}"))?;
    Ok(match movetime {
        Some(ms) => Box::new(p.with_movetime(std::time::Duration::from_millis(ms))),
        None => Box::new(p),
    })
}

/// One line summary of a match.
pub fn describe_match(m: &MatchResult) -> String {
    let elo =
        m.elo.map(|e| format!("score {:.3}, Elo {} (95%)", e.score, e.text())).unwrap_or_else(|| "no games".into());
    let rates = m.per_100().map(|(w, l)| format!("; per 100 games {w:.1} won, {l:.1} lost")).unwrap_or_default();
    let points = m.point_difference().map(|(t, g, _)| format!("; points {t:+} ({g:+.2} a game)")).unwrap_or_default();
    format!("{} vs {}: +{} ={} -{} ({elo}{rates}{points})", m.a, m.b, m.wins, m.draws, m.losses)
}
