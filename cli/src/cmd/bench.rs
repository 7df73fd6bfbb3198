//! `martian-zero bench`: speed figures for BENCHMARKS.md.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Subcommand;
use martian_model::{Checkpoint, ConfigModel, NetBackend, Precision};
use martian_rules::{perft, GameKind, GameState, Move};
use martian_search::{
    Backend, BackendEvaluator, CachedEvaluator, DeviceBatch, Mcts, MctsConfig, SimWait, SimulatedDevice,
    UniformEvaluator,
};
use martian_selfplay::{play_games, play_games_on_devices, FinishedGame, PlayParams, SelfplayConfig, SelfplayStats};
use martian_train::Metrics;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use tch::Device;

use crate::with_game;
use martian_run::config::RunConfig;
use martian_run::ops::{selfplay_games, train_generation};
use martian_run::rundir::RunDir;
use martian_run::spool::SelfplayOut;

/// Arguments of `bench`.
#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand)]
enum What {
    /// Perft leaves per second from the initial position (one thread), and random-playout plies per second.
    Perft {
        /// Which game.
        #[arg(long, value_parser = crate::game_parser())]
        game: GameKind,
        /// Depth.
        #[arg(long)]
        depth: u32,
    },
    /// MCTS simulations per second with the uniform evaluator (search overhead alone, one thread).
    Mcts {
        /// Which game.
        #[arg(long, value_parser = crate::game_parser())]
        game: GameKind,
        /// Simulations per search.
        #[arg(long, default_value_t = 800, value_parser = clap::value_parser!(u32).range(1..))]
        simulations: u32,
        /// Searches (positions along a random game).
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
        searches: u32,
        /// Search with the two-ply threat check at leaves (`search.leaf_threat_check`).
        #[arg(long)]
        leaf_threat_check: bool,
        /// Forced playouts' k (`search.forced_playouts_k`; the searches have root noise).
        #[arg(long, default_value_t = 0.0)]
        forced_playouts_k: f32,
        /// Plies of the trap proofs (`search.trap_plies`: 0, 1 or 3; default the config default, 3).
        #[arg(long)]
        trap_plies: Option<u32>,
        /// The MCTS-solver (`search.solver`; default the config default, true).
        #[arg(long)]
        solver: Option<bool>,
        /// Prove every root move before the first simulation, as self-play's
        /// full searches do for their policy target (`Mcts::prove_root_moves_eagerly`).
        #[arg(long)]
        eager_root_proofs: bool,
    },
    /// Alpha-beta nodes per second and milliseconds per move: fixed-depth
    /// searches along a random game (one thread); with `--movetime MS`,
    /// searches of MS milliseconds each instead, and the node budget they
    /// reach (the `alphabeta:nodes=N` that stands in for
    /// `alphabeta:movetime=MS` on a ladder, where a time limit is refused as
    /// not reproducible: `docs/evaluation.md`).
    Alphabeta {
        /// Which game.
        #[arg(long, value_parser = crate::game_parser())]
        game: GameKind,
        /// Search depth in plies.
        #[arg(long, default_value_t = 4)]
        depth: u32,
        /// Milliseconds per search instead of a depth (1..=3600000).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=3_600_000))]
        movetime: Option<u64>,
        /// Searches (positions along a random game).
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
        searches: u32,
    },
    /// The play-time tactical check (`veto_depth`, `martian_search::Veto`):
    /// milliseconds per move of the check of the network-free MCTS's move
    /// (uniform evaluator, the default search) at positions along a random
    /// game (one thread; the MCTS's own time is not counted).
    Veto {
        /// Which game (two-player games).
        #[arg(long, value_parser = crate::game_parser())]
        game: GameKind,
        /// Depths of the check, plies after the move (comma-separated, 1..=8).
        #[arg(long, value_delimiter = ',', default_value = "2,3,4")]
        depths: Vec<u32>,
        /// Positions along a random game (the same positions at every depth).
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
        positions: u32,
        /// MCTS visits of the move the check checks.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
        visits: u32,
    },
    /// Self-play with the config's (untrained) network, or a simulated accelerator:
    /// positions/s, evaluations/s, device busy share, mean batch, CPU time per phase.
    Selfplay {
        /// Run configuration.
        #[arg(long)]
        config: PathBuf,
        /// Games.
        #[arg(long, default_value_t = 16)]
        games: u64,
        /// Instead of the network, a simulated accelerator on its own thread:
        /// `batch_ms=A,per_position_us=B[,max_batch=N][,output=hash|uniform][,softmax=device|host][,wait=sleep|deadline]`
        /// (A ms per forward pass plus B µs per position, asleep; outputs from a hash
        /// of the input, or exactly the uniform evaluator's with `output=uniform`;
        /// the softmax over the legal moves on the device, as the CUDA backend takes
        /// it, or on the host with `softmax=host`; with `wait=deadline` the device's
        /// thread does not sleep but hands each batch back at once with the instant
        /// its outputs are back, and the driver waits for that).
        #[arg(long, value_name = "SPEC")]
        simulate_device: Option<String>,
        /// Game groups per device (overrides `selfplay.groups`).
        #[arg(long)]
        groups: Option<u32>,
        /// Games in flight per device (overrides `selfplay.games_in_flight`).
        #[arg(long)]
        games_in_flight: Option<u32>,
        /// Simulated devices (with --simulate-device; default 1).
        #[arg(long, default_value_t = 1)]
        devices: usize,
        /// Also play the same games, in the same invocation, with the uniform
        /// evaluator (no network, no device: the search's own rate) and with the
        /// lockstep driver (the self-play before the overlapped driver: encode, device, decode in turn on one
        /// thread), and print the ratios. Games are not written in any run.
        #[arg(long)]
        compare: bool,
        /// Run only these drivers, in this order, each round (comma-separated:
        /// `uniform` (the search alone), `lockstep`, `overlapped`; default
        /// `overlapped`, or all three with --compare): e.g. `--drivers
        /// uniform,overlapped --rounds 15` for the ratio of the two on a noisy
        /// machine, or one driver under `perf record`. `lockstep` and
        /// `overlapped` need --simulate-device with `output=uniform` to play
        /// the uniform evaluator's games.
        #[arg(long, value_enum, value_delimiter = ',', conflicts_with = "compare")]
        drivers: Vec<Mode>,
        /// Rounds of the runs (each round runs every driver once, in turn: in
        /// the order given in odd rounds, reversed in even ones); the
        /// comparison uses the medians, and from 6 rounds on prints a 95 %
        /// interval of the median of the per-round ratios.
        #[arg(long, default_value_t = 1)]
        rounds: u32,
        /// Override a config key, `KEY=VALUE` (repeatable): e.g.
        /// `--set model.precision=bf16 --set train.batch_size=512`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Also write the figures as one JSON object to this file.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Training samples per second on shards from uniform self-play.
    Train {
        /// Run configuration.
        #[arg(long)]
        config: PathBuf,
        /// Optimizer steps.
        #[arg(long, default_value_t = 50)]
        steps: u32,
        /// Override a config key, `KEY=VALUE` (repeatable): e.g.
        /// `--set model.precision=bf16 --set train.batch_size=512`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Also write the figures as one JSON object to this file.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
    /// Mixed precision: the network's outputs in bf16 (and fp16 on CUDA)
    /// against fp32 on self-play positions (policy KL, value difference) and
    /// forward-pass speed in each precision.
    Precision {
        /// Run configuration (its game, `[model]` and device).
        #[arg(long)]
        config: PathBuf,
        /// Positions (from uniform self-play games of the config's game).
        #[arg(long, default_value_t = 1000)]
        positions: usize,
        /// Rows per forward pass (default: the config's `selfplay.max_batch`).
        #[arg(long)]
        batch: Option<usize>,
        /// Timed passes over all the positions per precision (after one untimed warm-up).
        #[arg(long, default_value_t = 3)]
        rounds: u32,
        /// A checkpoint to compare (`.safetensors`; default: the config's
        /// architecture, randomly initialised with seed 1).
        #[arg(long)]
        model: Option<PathBuf>,
        /// Override a config key, `KEY=VALUE` (repeatable): e.g.
        /// `--set model.precision=bf16 --set train.batch_size=512`.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Also write the figures as one JSON object to this file.
        #[arg(long, value_name = "FILE")]
        json: Option<PathBuf>,
    },
}

/// Runs `bench`.
pub fn run(a: Args) -> Result<()> {
    match a.what {
        What::Perft { game, depth } => with_game!(game, G => bench_perft::<G>(depth)),
        What::Mcts {
            game,
            simulations,
            searches,
            leaf_threat_check,
            forced_playouts_k,
            trap_plies,
            solver,
            eager_root_proofs,
        } => {
            let d = MctsConfig::default();
            let cfg = MctsConfig {
                leaf_threat_check,
                forced_playouts_k,
                trap_plies: trap_plies.unwrap_or(d.trap_plies),
                solver: solver.unwrap_or(d.solver),
                ..d
            };
            cfg.validate().map_err(anyhow::Error::msg)?;
            with_game!(game, G => bench_mcts::<G>(cfg, simulations, searches, eager_root_proofs))
        }
        What::Alphabeta { game, depth, movetime, searches } => {
            with_game!(game, G => bench_alphabeta::<G>(depth, movetime, searches))
        }
        What::Veto { game, depths, positions, visits } => {
            for &d in &depths {
                martian_search::check_veto_depth(d).map_err(|e| anyhow::anyhow!("--depths: {e}"))?;
                anyhow::ensure!(d >= 1, "--depths: a depth of 0 checks nothing");
            }
            with_game!(game, G => bench_veto::<G>(&depths, positions, visits))
        }
        What::Selfplay {
            config,
            games,
            simulate_device,
            groups,
            games_in_flight,
            devices,
            compare,
            drivers,
            rounds,
            set,
            json,
        } => {
            let mut cfg = RunConfig::load_with_overrides(&config, &set)?;
            cfg.selfplay.groups = groups.unwrap_or(cfg.selfplay.groups);
            cfg.selfplay.games_in_flight = games_in_flight.unwrap_or(cfg.selfplay.games_in_flight);
            cfg.selfplay.validate().map_err(|e| anyhow::anyhow!("{e} (--groups, --games-in-flight)"))?;
            anyhow::ensure!((1..=64).contains(&devices), "--devices must be in 1..=64, got {devices}");
            anyhow::ensure!(
                devices == 1 || simulate_device.is_some(),
                "--devices is for --simulate-device; the network's devices come from the config's `device`"
            );
            let sim = simulate_device.map(|s| SimulatedDevice::parse(&s)).transpose().map_err(anyhow::Error::msg)?;
            anyhow::ensure!((1..=100).contains(&rounds), "--rounds must be in 1..=100, got {rounds}");
            anyhow::ensure!(games >= 1, "--games must be >= 1");
            check_json_path(json.as_deref())?;
            let opts = SelfplayBench { games, sim, devices, compare, drivers, rounds, json };
            with_game!(cfg.game, G => bench_selfplay::<G>(&cfg, &opts))
        }
        What::Train { config, steps, set, json } => {
            let cfg = RunConfig::load_with_overrides(&config, &set)?;
            anyhow::ensure!(steps >= 1, "--steps must be >= 1");
            check_json_path(json.as_deref())?;
            with_game!(cfg.game, G => bench_train::<G>(&cfg, steps, json.as_deref()))
        }
        What::Precision { config, positions, batch, rounds, model, set, json } => {
            let cfg = RunConfig::load_with_overrides(&config, &set)?;
            anyhow::ensure!(
                (1..=1_000_000).contains(&positions),
                "--positions must be in 1..=1000000, got {positions}"
            );
            anyhow::ensure!((1..=100).contains(&rounds), "--rounds must be in 1..=100, got {rounds}");
            let batch = batch.unwrap_or(cfg.selfplay.max_batch as usize);
            anyhow::ensure!((1..=65536).contains(&batch), "--batch must be in 1..=65536, got {batch}");
            check_json_path(json.as_deref())?;
            let opts = PrecisionBench { positions, batch, rounds, model, json };
            with_game!(cfg.game, G => bench_precision::<G>(&cfg, &opts))
        }
    }
}

fn bench_perft<G: GameState>(depth: u32) -> Result<()> {
    let pos = G::new_game(&G::Rules::default())?;
    let mut best = 0.0f64;
    let mut nodes = 0;
    for _ in 0..3 {
        let t = Instant::now();
        nodes = perft(&pos, depth);
        best = best.max(nodes as f64 / t.elapsed().as_secs_f64());
    }
    println!("{} perft({depth}) = {nodes}: {:.1} M leaves/s (best of 3, one thread)", G::KIND, best / 1e6);
    let mut rng = StdRng::seed_from_u64(1);
    let mut moves: Vec<Move> = Vec::with_capacity(G::MAX_MOVES);
    let (mut plies, t) = (0u64, Instant::now());
    let mut s = pos.clone();
    while t.elapsed().as_secs_f64() < 2.0 {
        s.clone_from(&pos);
        while s.outcome().is_none() {
            s.legal_moves(&mut moves);
            let Some(&m) = moves.choose(&mut rng) else { break };
            s.play_unchecked(m);
            plies += 1;
        }
    }
    println!("{} random playouts: {:.2} M plies/s", G::KIND, plies as f64 / t.elapsed().as_secs_f64() / 1e6);
    Ok(())
}

fn bench_mcts<G: GameState>(cfg: MctsConfig, simulations: u32, searches: u32, eager_root_proofs: bool) -> Result<()> {
    let mut pos = G::new_game(&G::Rules::default())?;
    let mut rng = StdRng::seed_from_u64(7);
    let levers = format!(
        "{}, trap proofs {} plies{}{}{}",
        if cfg.solver { ", solver" } else { "" },
        cfg.trap_plies,
        if eager_root_proofs { " (root moves proven first)" } else { "" },
        if cfg.leaf_threat_check { ", leaf threat check" } else { "" },
        if cfg.forced_playouts_k > 0.0 {
            format!(", forced playouts k = {}", cfg.forced_playouts_k)
        } else {
            String::new()
        }
    );
    let mut tree = Mcts::new(cfg, pos.clone());
    let mut ev = UniformEvaluator;
    let mut moves = Vec::new();
    let (mut sims, t) = (0u64, Instant::now());
    for _ in 0..searches {
        if pos.outcome().is_some() {
            pos = G::new_game(&G::Rules::default())?;
        }
        tree.reset(pos.clone());
        tree.begin_search(true, simulations, &mut rng);
        if eager_root_proofs {
            tree.prove_root_moves_eagerly();
        }
        tree.search_more(&mut ev, simulations, &mut rng)?;
        sims += simulations as u64;
        pos.legal_moves(&mut moves);
        if let Some(&m) = moves.choose(&mut rng) {
            pos.play_unchecked(m);
        }
    }
    println!(
        "{} MCTS, uniform evaluator{levers}: {:.0} simulations/s ({searches} searches x {simulations}, one thread)",
        G::KIND,
        sims as f64 / t.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `bench alphabeta`: searches along a random game (two random plies
/// apart, a new game when one ends) at a fixed depth, or of `movetime`
/// milliseconds each; prints nodes per second, milliseconds per search and
/// the nodes per search (mean and median: the median of timed searches is
/// the node budget `alphabeta:nodes=N` that a ladder uses for a time rung).
fn bench_alphabeta<G: martian_search::AbGame>(depth: u32, movetime: Option<u64>, searches: u32) -> Result<()> {
    anyhow::ensure!(depth >= 1, "--depth must be >= 1");
    let limits = match movetime {
        Some(ms) => martian_search::Limits::movetime(std::time::Duration::from_millis(ms)),
        None => martian_search::Limits::depth(depth),
    };
    let start = G::new_game(&G::Rules::default())?;
    let mut pos = start.clone();
    let mut rng = StdRng::seed_from_u64(7);
    let mut engine: martian_search::AlphaBeta<G> =
        martian_search::AlphaBeta::new(martian_search::AlphaBetaConfig::default());
    let mut moves = Vec::new();
    let (mut secs, mut depth_sum) = (0f64, 0u64);
    let mut per_search: Vec<u64> = Vec::with_capacity(searches as usize);
    let mut max_ms = 0f64;
    for _ in 0..searches {
        if pos.outcome().is_some() {
            pos = start.clone();
        }
        let r = engine.search(&pos, &limits);
        per_search.push(r.nodes);
        secs += r.elapsed.as_secs_f64();
        max_ms = max_ms.max(r.elapsed.as_secs_f64() * 1e3);
        depth_sum += r.depth as u64;
        // Advance along a random game (two random plies) for the next search.
        for _ in 0..2 {
            pos.legal_moves(&mut moves);
            if let Some(&m) = moves.choose(&mut rng) {
                pos.play_unchecked(m);
            }
        }
    }
    let nodes: u64 = per_search.iter().sum();
    let n = per_search.len().max(1);
    per_search.sort_unstable();
    let median = per_search.get(per_search.len() / 2).copied().unwrap_or(0);
    let limit = match movetime {
        Some(ms) => format!("{ms} ms a search"),
        None => format!("depth {depth}"),
    };
    println!(
        "{} alpha-beta {limit}: {:.0} nodes/s ({nodes} nodes in {secs:.2} s, {searches} searches, mean depth {:.1}, \
         {:.1} ms a search (max {max_ms:.1}), nodes a search: mean {:.0}, median {median}; one thread, 16 MiB TT)",
        G::KIND,
        nodes as f64 / secs.max(1e-9),
        depth_sum as f64 / n as f64,
        secs * 1e3 / n as f64,
        nodes as f64 / n as f64,
    );
    Ok(())
}

/// `bench veto`: the check's milliseconds per move at each depth, over the
/// MCTS moves of `positions` positions along a random game (two random plies
/// apart, a new game when one ends).
fn bench_veto<G: martian_search::AbGame>(depths: &[u32], positions: u32, visits: u32) -> Result<()> {
    let start = G::new_game(&G::Rules::default())?;
    anyhow::ensure!(start.num_players() == 2, "the check is for two-player games");
    let mut rng = StdRng::seed_from_u64(7);
    let mut moves = Vec::new();
    // The positions and their MCTS moves first (the same for every depth).
    let mut cases = Vec::new();
    let mut pos = start.clone();
    while cases.len() < positions as usize {
        if pos.outcome().is_some() {
            pos = start.clone();
        }
        let mut tree = Mcts::new(MctsConfig::default(), pos.clone());
        let res = tree.search(&mut UniformEvaluator, visits, false, &mut StdRng::seed_from_u64(cases.len() as u64))?;
        if let Some(chosen) = res.best_move() {
            cases.push((pos.clone(), chosen, res.ranked()));
        }
        for _ in 0..2 {
            pos.legal_moves(&mut moves);
            if let Some(&m) = moves.choose(&mut rng) {
                pos.play_unchecked(m);
            }
        }
    }
    for &depth in depths {
        let mut veto = martian_search::Veto::<G>::new(depth).map_err(anyhow::Error::msg)?;
        let mut ms: Vec<f64> = Vec::with_capacity(cases.len());
        let (mut vetoes, mut searches) = (0u32, 0u64);
        for (p, chosen, ranked) in &cases {
            let t0 = Instant::now();
            let out = veto.check(p, *chosen, ranked);
            ms.push(t0.elapsed().as_secs_f64() * 1e3);
            vetoes += u32::from(out.vetoed.is_some());
            searches += u64::from(out.searches);
        }
        ms.sort_by(f64::total_cmp);
        let n = ms.len();
        let q = |f: f64| ms[((n - 1) as f64 * f).round() as usize];
        println!(
            "{} veto depth {depth}: {:.2} ms per move (median {:.2}, p90 {:.2}, max {:.1}; {n} positions, {vetoes} vetoed, {:.2} searches per move; MCTS {visits} visits, one thread, 4 MiB TT)",
            G::KIND,
            ms.iter().sum::<f64>() / n as f64,
            q(0.5),
            q(0.9),
            q(1.0),
            searches as f64 / n as f64
        );
    }
    Ok(())
}

/// Options of `bench selfplay`.
struct SelfplayBench {
    games: u64,
    sim: Option<SimulatedDevice>,
    devices: usize,
    compare: bool,
    /// The drivers to run (empty: `compare` decides).
    drivers: Vec<Mode>,
    rounds: u32,
    json: Option<PathBuf>,
}

/// The figures of a self-play run as JSON (`--json`).
fn stats_json(label: &str, st: &SelfplayStats) -> serde_json::Value {
    let s = st.seconds.max(1e-9);
    serde_json::json!({
        "label": label.trim(),
        "games": st.games,
        "positions": st.moves,
        "seconds": st.seconds,
        "positions_per_s": st.moves as f64 / s,
        "leaf_evaluations_per_s": st.evaluations as f64 / s,
        "batches": st.batches,
        "mean_batch": if st.devices > 0 {
            st.device_rows as f64 / st.batches.max(1) as f64
        } else {
            st.evaluations as f64 / st.batches.max(1) as f64
        },
        "device_rows_per_s": st.device_rows as f64 / s,
        "devices": st.devices,
        "device_busy_share": if st.devices > 0 { st.device_seconds / st.devices as f64 / s } else { st.eval_seconds / s },
        "cpu_thread_shares": {
            "tree": st.search_seconds / s,
            "cache_and_encode": st.encode_seconds / s,
            "decode": st.decode_seconds / s,
            "waiting_for_device": st.wait_seconds / s,
            "writing_games": st.output_seconds / s,
        },
    })
}

/// The settings every `--json` of a network bench records.
fn config_json(cfg: &RunConfig, device: Device) -> serde_json::Value {
    serde_json::json!({
        "game": cfg.game.to_string(),
        "device": cfg.device,
        "device_used": martian_run::runtime::device_name(device),
        "precision": cfg.model.precision.name(),
        "blocks": cfg.model.blocks,
        "channels": cfg.model.channels,
        "torch_threads": cfg.torch_threads,
        "cuda_devices": tch::Cuda::device_count(),
    })
}

/// Refuses a `--json` path that cannot be written before the benchmark
/// runs (not after minutes of it).
fn check_json_path(path: Option<&Path>) -> Result<()> {
    path.map_or(Ok(()), |p| martian_run::rundir::check_output_path("--json", p))
}

/// Writes `value` to `path` (pretty, atomically).
fn write_json(path: &Path, value: &serde_json::Value) -> Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    martian_model::checkpoint::write_atomic(path, text.as_bytes())
        .with_context(|| format!("writing the figures to {}", path.display()))
}

/// One line of figures of a self-play run.
fn selfplay_line(what: &str, st: &SelfplayStats) -> String {
    let s = st.seconds.max(1e-9);
    let pct = |x: f64| 100.0 * x / s;
    let mut line =
        format!("{what}: {:.1} positions/s, {:.0} leaf evaluations/s", st.moves as f64 / s, st.evaluations as f64 / s);
    if st.devices > 0 {
        line.push_str(&format!(
            ", {:.0} device rows/s (mean batch {:.1}), device busy {:.1}% ({} device{}); per worker thread: tree \
             (with decode, cache look-ups) {:.1}%, batch assembly (with encode) {:.1}%, cache inserts {:.1}%, waiting for the device {:.1}%, writing games {:.1}%",
            st.device_rows as f64 / s,
            st.device_rows as f64 / st.batches.max(1) as f64,
            pct(st.device_seconds / st.devices as f64),
            st.devices,
            if st.devices == 1 { "" } else { "s" },
            pct(st.search_seconds),
            pct(st.encode_seconds),
            pct(st.decode_seconds),
            pct(st.wait_seconds),
            pct(st.output_seconds)
        ));
    } else {
        line.push_str(&format!(
            " (mean batch {:.1}), evaluator {:.1}% of wall time; CPU thread: tree {:.1}%, writing games {:.1}%",
            st.evaluations as f64 / st.batches.max(1) as f64,
            pct(st.eval_seconds),
            pct(st.search_seconds),
            pct(st.output_seconds)
        ));
    }
    line
}

fn bench_selfplay<G: martian_search::AbGame>(cfg: &RunConfig, o: &SelfplayBench) -> Result<()> {
    let device = martian_run::runtime::setup_runtime(cfg)?;
    let rules = cfg.rules::<G>()?;
    let sp_rules = cfg.selfplay_rules::<G>()?;
    let sp = &cfg.selfplay;
    let what = format!(
        "{} self-play ({} games in flight per device{}, {} group{} per device, {}/{} simulations, {} leaves per batch per game, {} games)",
        G::KIND,
        (sp.games_in_flight as u64).min(o.games),
        // Fewer games than the configured games in flight: say both.
        if o.games < sp.games_in_flight as u64 {
            format!(" (of {} configured)", sp.games_in_flight)
        } else {
            String::new()
        },
        sp.groups,
        if sp.groups == 1 { "" } else { "s" },
        sp.simulations,
        sp.cheap_simulations,
        cfg.search.leaves_per_batch,
        o.games
    );
    if o.sim.is_none() && !o.compare && o.drivers.is_empty() && o.rounds == 1 {
        // The network, through the command's own path (games written to a spool).
        let ck = Checkpoint::new_random::<G>(&rules, &cfg.model, device, 1)?;
        let dir = std::env::temp_dir().join(format!("mz-bench-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let out = SelfplayOut::new(&dir, 1, "bench");
        let devices = martian_run::runtime::selfplay_devices(cfg)?;
        let st = selfplay_games::<G>(cfg, &sp_rules, Some((&ck, "random-init")), &devices, o.games, &out, false);
        let _ = std::fs::remove_dir_all(&dir);
        let st = st?;
        println!(
            "{what}, network {} blocks x {} channels in {}, fixed_batch {}",
            cfg.model.blocks, cfg.model.channels, cfg.model.precision, sp.fixed_batch
        );
        println!("{}", selfplay_line("  overlapped driver", &st));
        if let Some(path) = &o.json {
            let v = serde_json::json!({
                "bench": "selfplay",
                "config": config_json(cfg, device),
                "games_in_flight": sp.games_in_flight,
                "groups": sp.groups,
                "simulations": sp.simulations,
                "cheap_simulations": sp.cheap_simulations,
                "max_batch": sp.max_batch,
                "fixed_batch": sp.fixed_batch,
                "runs": [stats_json("overlapped driver", &st)],
            });
            write_json(path, &v)?;
        }
        return Ok(());
    }
    let start = G::new_game(&rules)?;
    let ids: Vec<u64> = (0..o.games).collect();
    let params = PlayParams { start: &start, game_ids: &ids, seed: cfg.seed, model_name: "bench".into() };
    let count = |_: FinishedGame, _: &SelfplayStats| -> Result<(), String> { Ok(()) };
    let ck = match &o.sim {
        None => Some(Checkpoint::new_random::<G>(&rules, &cfg.model, device, 1)?),
        Some(_) => None,
    };
    match (&o.sim, &ck) {
        (Some(d), _) => println!(
            "{what}, simulated device: {} ms per pass + {} µs per position, max_batch {}, output {:?}, softmax on the {}, \
             {}",
            d.batch_ms,
            d.per_position_us,
            if d.max_batch == usize::MAX { "unlimited".to_string() } else { d.max_batch.to_string() },
            d.output,
            if d.softmax_on_device { "device" } else { "host" },
            match d.wait {
                SimWait::Sleep => "its thread asleep for each pass",
                SimWait::Deadline => "outputs handed back with their ready time (no sleep on its thread)",
            }
        ),
        (None, _) => println!(
            "{what}, network {} blocks x {} channels in {}, fixed_batch {}",
            cfg.model.blocks, cfg.model.channels, cfg.model.precision, sp.fixed_batch
        ),
    }
    let run = |mode: Mode| -> Result<SelfplayStats> {
        let st = match (mode, &o.sim, &ck) {
            // On a thread of rayon's pool, as the overlapped driver runs: the
            // search alone without the hand-over to the pool and back.
            (Mode::Uniform, _, _) => {
                rayon::scope(|_| play_games(&params, sp, &cfg.search, &mut UniformEvaluator, count))
            }
            (Mode::Lockstep, Some(d), _) => {
                let mut ev = CachedEvaluator::new(BackendEvaluator::new(d.clone()), sp.cache_size);
                play_games(&params, sp, &cfg.search, &mut ev, count)
            }
            (Mode::Lockstep, None, Some(ck)) => {
                let net = match sp.fixed_batch {
                    0 => NetBackend::new(&ck.net, device, sp.max_batch as usize),
                    b => NetBackend::fixed(&ck.net, device, b as usize),
                };
                let mut ev = CachedEvaluator::new(BackendEvaluator::new(net), sp.cache_size);
                play_games(&params, sp, &cfg.search, &mut ev, count)
            }
            (Mode::Overlapped, Some(d), _) => {
                let mut devs = vec![d.clone(); o.devices];
                play_games_on_devices(&params, sp, &cfg.search, &mut devs, count)
            }
            (Mode::Overlapped, None, Some(ck)) => {
                let mut backends =
                    martian_run::ops::net_backends(cfg, ck, &martian_run::runtime::selfplay_devices(cfg)?)?;
                play_games_on_devices(&params, sp, &cfg.search, &mut backends, count)
            }
            (_, None, None) => unreachable!("a network without a simulated device"),
        };
        st.map_err(|e| anyhow::anyhow!("{e}"))
    };
    let mut modes: Vec<Mode> = match (o.compare, o.drivers.is_empty()) {
        (true, _) => vec![Mode::Uniform, Mode::Lockstep, Mode::Overlapped],
        (false, true) => vec![Mode::Overlapped],
        (false, false) => o.drivers.clone(),
    };
    // `--drivers a,b,a` runs each once, in the order first named.
    let mut seen = Vec::new();
    modes.retain(|m| {
        !seen.contains(m) && {
            seen.push(*m);
            true
        }
    });
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let mut runs: Vec<serde_json::Value> = Vec::new();
    // The overlapped driver's rate over the search's alone (JSON; null unless both ran).
    let mut ratio_json = serde_json::Value::Null;
    for round in 1..=o.rounds {
        // ABBA order: odd rounds run the drivers in the order given, even
        // rounds in reverse, so that neither driver always runs first (on
        // the heap and caches the other left) and a drift of the machine's
        // speed within a pair of rounds cancels out of the per-round ratios.
        let order: Vec<usize> =
            if round % 2 == 1 { (0..modes.len()).collect() } else { (0..modes.len()).rev().collect() };
        for k in order {
            let m = modes[k];
            let c0 = process_cpu_seconds();
            let st = run(m)?;
            let used = process_cpu_seconds().zip(c0).map(|(a, b)| a - b);
            let label =
                if o.rounds > 1 { format!("  round {round}, {}", m.label()) } else { format!("  {}", m.label()) };
            let mut line = selfplay_line(&label, &st);
            if let Some(c) = used {
                line.push_str(&format!("; process CPU {:.3} ms per position", 1e3 * c / st.moves.max(1) as f64));
                cpu[k].push(c / st.moves.max(1) as f64);
            }
            println!("{line}");
            rates[k].push(st.moves as f64 / st.seconds.max(1e-9));
            runs.push(stats_json(&label, &st));
        }
    }
    if modes.len() > 1 {
        let at = |m: Mode| modes.iter().position(|&x| x == m);
        let names: Vec<String> =
            modes.iter().zip(&rates).map(|(m, r)| format!("{} {:.1}", m.name(), median(r))).collect();
        println!(
            "  medians of {} round{}: {} positions/s",
            o.rounds,
            if o.rounds == 1 { "" } else { "s" },
            names.join(", ")
        );
        // A ratio per round (the two drivers ran minutes apart at most, on
        // the same machine state) and its median: steadier than the ratio
        // of the medians where the machine's speed drifts.
        let ratio = |a: usize, b: usize| -> (f64, f64, Vec<f64>) {
            let per: Vec<f64> = rates[a].iter().zip(&rates[b]).map(|(x, y)| x / y).collect();
            (median(&rates[a]) / median(&rates[b]), median(&per), per)
        };
        if let (Some(x), Some(u)) = (at(Mode::Overlapped), at(Mode::Uniform)) {
            let (of_medians, med, per) = ratio(x, u);
            let text: Vec<String> = per.iter().map(|r| format!("{:.1}", 100.0 * r)).collect();
            println!(
                "  overlapped / uniform: {:.1}% (ratio of the medians), {:.1}% (median of the per-round ratios: {})",
                100.0 * of_medians,
                100.0 * med,
                text.join(", ")
            );
            let interval = median_interval(&per);
            match interval {
                Some(i) => println!(
                    "  overlapped / uniform, median of the per-round ratios: {:.1}%, 95% interval {:.1}-{:.1}% \
                     (the {}smallest and largest of {} ratios: distribution-free, coverage {:.1}%)",
                    100.0 * med,
                    100.0 * i.low,
                    100.0 * i.high,
                    ordinal(i.rank),
                    per.len(),
                    100.0 * i.coverage
                ),
                None => println!(
                    "  overlapped / uniform: no 95% interval of the median from {} round{} (it takes {} or more)",
                    per.len(),
                    if per.len() == 1 { "" } else { "s" },
                    MIN_ROUNDS_FOR_INTERVAL
                ),
            }
            ratio_json = serde_json::json!({
                "per_round": per,
                "median": med,
                "ratio_of_medians": of_medians,
                "interval_95": interval.map(|i| serde_json::json!({
                    "low": i.low, "high": i.high, "coverage": i.coverage, "rank": i.rank,
                })),
            });
        }
        if let (Some(x), Some(l)) = (at(Mode::Overlapped), at(Mode::Lockstep)) {
            let (of_medians, med, _) = ratio(x, l);
            println!("  overlapped / lockstep: {of_medians:.2}x (ratio of the medians), {med:.2}x (median of the per-round ratios)");
        }
        if cpu.iter().all(|v| !v.is_empty()) {
            let names: Vec<String> =
                modes.iter().zip(&cpu).map(|(m, c)| format!("{} {:.3} ms", m.name(), 1e3 * median(c))).collect();
            let beyond = match (at(Mode::Overlapped), at(Mode::Uniform)) {
                (Some(x), Some(u)) => format!(
                    " (the overlapped driver's CPU work beyond the search's: {:+.1}%)",
                    100.0 * (median(&cpu[x]) / median(&cpu[u]) - 1.0)
                ),
                _ => String::new(),
            };
            println!("  process CPU per position (medians): {}{beyond}", names.join(", "));
        }
    }
    if let Some(path) = &o.json {
        let v = serde_json::json!({
            "bench": "selfplay",
            "config": config_json(cfg, device),
            "simulated_device": o.sim.as_ref().map(SimulatedDevice::spec),
            "games_in_flight": sp.games_in_flight,
            "groups": sp.groups,
            "simulations": sp.simulations,
            "cheap_simulations": sp.cheap_simulations,
            "max_batch": sp.max_batch,
            "fixed_batch": sp.fixed_batch,
            "runs": runs,
            "overlapped_over_uniform": ratio_json,
        });
        write_json(path, &v)?;
    }
    Ok(())
}

/// The median of `v` (the mean of the two middle values for an even
/// length; NaN for none).
fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

/// "2nd ", "3rd ", ... (with a space); "" for 1 (the smallest, not the 1st smallest).
fn ordinal(k: usize) -> String {
    let suffix = match (k % 10, k % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    if k == 1 {
        String::new()
    } else {
        format!("{k}{suffix} ")
    }
}

/// Fewest rounds that give a 95 % interval of the median ([`median_interval`]).
const MIN_ROUNDS_FOR_INTERVAL: usize = 6;

/// A distribution-free confidence interval of a median.
#[derive(Clone, Copy, Debug, PartialEq)]
struct MedianInterval {
    /// The `rank`-th smallest value.
    low: f64,
    /// The `rank`-th largest value.
    high: f64,
    /// `rank`, 1-based.
    rank: usize,
    /// Probability that the interval holds the true median: at least 0.95.
    coverage: f64,
}

/// The 95 % interval of the median of `v` from its order statistics (the
/// sign-test interval, e.g. Conover, *Practical Nonparametric Statistics*,
/// 3rd ed., §3.2): `[x_(k), x_(n+1-k)]` with the largest `k` such that
/// `P(B <= k - 1) <= 0.025` for `B ~ Binomial(n, 1/2)`, whose coverage
/// `1 - 2 P(B <= k - 1)` is then at least 0.95, whatever the distribution of
/// the values (independent rounds assumed). `None` below
/// [`MIN_ROUNDS_FOR_INTERVAL`] values (even `[min, max]` covers less than
/// 95 % there: 93.75 % for 5) or if any value is NaN.
fn median_interval(v: &[f64]) -> Option<MedianInterval> {
    let n = v.len();
    if n < MIN_ROUNDS_FOR_INTERVAL || v.iter().any(|x| x.is_nan()) {
        return None;
    }
    // p = P(B = k), built up from P(B = 0) = 2^-n; below = P(B <= k - 1).
    let (mut p, mut below, mut k) = (0.5f64.powi(n as i32), 0.0, 0);
    while below + p <= 0.025 {
        below += p;
        k += 1;
        p *= (n + 1 - k) as f64 / k as f64;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    Some(MedianInterval { low: s[k - 1], high: s[n - k], rank: k, coverage: 1.0 - 2.0 * below })
}

/// CPU seconds (user + system) this process has used, from `/proc/self/stat`
/// (Linux, 100 ticks per second; `None` elsewhere). Unlike wall time it does
/// not count the time other processes took from the cores.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // After the command name (in parentheses) come the state (field 3), ...,
    // utime and stime (fields 14 and 15), in clock ticks.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// The drivers `bench selfplay --compare` runs (`--drivers` picks some).
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Mode {
    /// The lockstep driver with the uniform evaluator: the search alone.
    Uniform,
    /// The lockstep driver with the device (the self-play before the overlapped driver).
    Lockstep,
    /// The overlapped driver with game groups.
    Overlapped,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Uniform => "uniform",
            Mode::Lockstep => "lockstep",
            Mode::Overlapped => "overlapped",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Mode::Uniform => "uniform evaluator, no device (the search alone)",
            Mode::Lockstep => "lockstep driver (one search per game in turn)",
            Mode::Overlapped => "overlapped driver",
        }
    }
}

fn bench_train<G: martian_search::AbGame>(cfg: &RunConfig, steps: u32, json: Option<&Path>) -> Result<()> {
    let device = martian_run::runtime::setup_runtime(cfg)?;
    let rules = cfg.rules::<G>()?;
    let dir = std::env::temp_dir().join(format!("mz-bench-train-{}", std::process::id()));
    let mut c = cfg.clone();
    c.train.steps_per_generation = steps;
    c.train.log_every = steps;
    c.train.checkpoint_every = steps.max(1);
    let run = RunDir::open(&dir, &c)?;
    Checkpoint::new_random::<G>(&rules, &c.model, device, 1)?.save(&run.checkpoint(0))?;
    let mut sp = c.clone();
    sp.selfplay.simulations = 2;
    sp.selfplay.cheap_simulations = 1;
    sp.selfplay.full_search_prob = 1.0;
    let out = run.selfplay_out(1, "bench");
    while martian_train::ReplayWindow::load(&run.shards(), usize::MAX, G::INPUT_SHAPE, G::NUM_ACTIONS).len()
        < c.train.batch_size as usize
    {
        selfplay_games::<G>(&sp, &rules, None, &[device], 8, &out, false)?;
    }
    let t = Instant::now();
    let trained = train_generation::<G>(&c, &rules, &run, 1, device);
    let s = t.elapsed().as_secs_f64();
    // The one metrics line (log_every = steps): the loss and the rate of the steps alone.
    let last: Option<Metrics> = std::fs::read_to_string(run.train_log())
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| serde_json::from_str(l).ok()));
    let _ = std::fs::remove_dir_all(&dir);
    trained?;
    let samples = steps as u64 * c.train.batch_size as u64;
    let steps_rate = last.as_ref().map(|m| m.samples_per_s);
    println!(
        "{} training ({} blocks x {} channels, batch {}, {}): {:.0} samples/s ({steps} steps in {s:.1} s, incl. \
         loading){}",
        G::KIND,
        c.model.blocks,
        c.model.channels,
        c.train.batch_size,
        c.model.precision,
        samples as f64 / s,
        steps_rate.map(|r| format!("; {r:.0} samples/s in the steps alone")).unwrap_or_default()
    );
    if let Some(path) = json {
        let v = serde_json::json!({
            "bench": "train",
            "config": config_json(&c, device),
            "batch_size": c.train.batch_size,
            "steps": steps,
            "seconds": s,
            "samples_per_s": samples as f64 / s,
            "samples_per_s_steps_alone": steps_rate,
            "final_total_loss": last.as_ref().map(|m| m.total_loss),
            "loss_scale": last.as_ref().and_then(|m| m.loss_scale),
            "skipped_steps": last.as_ref().and_then(|m| m.skipped_steps),
        });
        write_json(path, &v)?;
    }
    Ok(())
}

/// Options of `bench precision`.
struct PrecisionBench {
    positions: usize,
    batch: usize,
    rounds: u32,
    model: Option<PathBuf>,
    json: Option<PathBuf>,
}

/// At least `n` positions (encoded planes and legal moves) from uniform
/// self-play games of `G` under `rules` (8 simulations per move, every
/// position kept), as one device batch of exactly `n` rows.
fn selfplay_positions<G: GameState>(rules: &G::Rules, n: usize, seed: u64) -> Result<DeviceBatch> {
    let start = G::new_game(rules)?;
    let sp = SelfplayConfig {
        games_in_flight: 16,
        simulations: 8,
        cheap_simulations: 8,
        full_search_prob: 1.0,
        ..SelfplayConfig::default()
    };
    let mut b = DeviceBatch::default();
    b.clear::<G>();
    let mut next = 0u64;
    while b.rows < n {
        let ids: Vec<u64> = (next..next + 16).collect();
        next += 16;
        let params = PlayParams { start: &start, game_ids: &ids, seed, model_name: "uniform".into() };
        play_games(&params, &sp, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
            for s in &g.samples {
                if b.rows < n {
                    b.push_dense_row(&s.planes, &s.legal)?;
                }
            }
            Ok(())
        })
        .map_err(|e| anyhow::anyhow!("self-play for the positions: {e}"))?;
        anyhow::ensure!(next < 1 << 20, "self-play gave no positions");
    }
    Ok(b)
}

fn bench_precision<G: GameState>(cfg: &RunConfig, o: &PrecisionBench) -> Result<()> {
    let device = martian_run::runtime::setup_runtime(cfg)?;
    let rules = cfg.rules::<G>()?;
    let positions = selfplay_positions::<G>(&rules, o.positions, cfg.seed)?;
    let (ck, net_name) = match &o.model {
        Some(p) => {
            let ck = martian_run::checkpoints::load_checkpoint::<G>(p, &rules, ConfigModel::Absent, device)?;
            (ck, p.display().to_string())
        }
        None => (Checkpoint::new_random::<G>(&rules, &cfg.model, device, 1)?, "random-init network".to_string()),
    };
    let arch = &ck.meta.model;
    println!(
        "{} precision: {} ({} blocks x {} channels), {} self-play positions, passes of {} rows on {}, {} timed \
         round{}",
        G::KIND,
        net_name,
        arch.blocks,
        arch.channels,
        positions.rows,
        o.batch,
        martian_run::runtime::device_name(device),
        o.rounds,
        if o.rounds == 1 { "" } else { "s" }
    );
    let precisions: Vec<Precision> = Precision::ALL.into_iter().filter(|p| p.check_device(device).is_ok()).collect();
    let mut reference: Option<(DeviceBatch, f64)> = None;
    let mut results = Vec::new();
    for p in precisions {
        let mut backend = NetBackend::new(&ck.net, device, o.batch).with_precision(p)?;
        let mut b = positions.clone();
        backend.run(&mut b).map_err(|e| anyhow::anyhow!("{p} pass: {e}"))?;
        let t = Instant::now();
        for _ in 0..o.rounds {
            backend.run(&mut b).map_err(|e| anyhow::anyhow!("{p} pass: {e}"))?;
        }
        let rate = (o.rounds as usize * b.rows) as f64 / t.elapsed().as_secs_f64().max(1e-9);
        let mut line = format!("  {p}: {rate:.0} positions/s");
        let mut entry = serde_json::json!({ "precision": p.name(), "positions_per_s": rate });
        match &reference {
            None => reference = Some((b, rate)),
            Some((r, r_rate)) => {
                let d = martian_model::compare_outputs(r, &b).map_err(anyhow::Error::msg)?;
                line.push_str(&format!(
                    " ({:.2}x fp32); against fp32: policy KL mean {:.2e} max {:.2e} nats, value difference mean \
                     {:.2e} max {:.2e}",
                    rate / r_rate,
                    d.mean_policy_kl,
                    d.max_policy_kl,
                    d.mean_value_diff,
                    d.max_value_diff
                ));
                entry["speedup_over_fp32"] = serde_json::json!(rate / r_rate);
                entry["against_fp32"] = serde_json::to_value(&d)?;
            }
        }
        println!("{line}");
        results.push(entry);
    }
    if let Some(path) = &o.json {
        let v = serde_json::json!({
            "bench": "precision",
            "config": config_json(cfg, device),
            "network": net_name,
            "positions": positions.rows,
            "batch": o.batch,
            "rounds": o.rounds,
            "results": results,
        });
        write_json(path, &v)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// P(B <= j) for B ~ Binomial(n, 1/2), by exact counting.
    fn binomial_cdf(n: usize, j: usize) -> f64 {
        let mut c = 1u128; // C(n, i)
        let mut sum = 0u128;
        for i in 0..=j {
            sum += c;
            c = c * (n - i) as u128 / (i + 1) as u128;
        }
        sum as f64 / (1u128 << n) as f64
    }

    #[test]
    fn median_of_odd_and_even_lengths() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn median_interval_uses_the_sign_test_order_statistics() {
        // Nine rounds: P(B <= 1) = 10/512 <= 0.025 < P(B <= 2) = 46/512, so
        // the 2nd smallest and the 2nd largest, coverage 1 - 20/512.
        let v = [0.90, 0.80, 0.85, 0.95, 0.70, 0.88, 0.91, 0.99, 0.86];
        let i = median_interval(&v).unwrap();
        assert_eq!((i.low, i.high, i.rank), (0.80, 0.95, 2));
        assert!((i.coverage - (1.0 - 20.0 / 512.0)).abs() < 1e-12, "{i:?}");
        // Below six values no interval reaches 95 %; six give [min, max].
        assert_eq!(median_interval(&v[..5]), None);
        let i = median_interval(&v[..6]).unwrap();
        assert_eq!((i.low, i.high, i.rank), (0.70, 0.95, 1));
        assert_eq!(median_interval(&[f64::NAN; 9]), None);
    }

    #[test]
    fn median_interval_rank_is_the_largest_with_95_percent_coverage() {
        for n in MIN_ROUNDS_FOR_INTERVAL..=100 {
            let v: Vec<f64> = (0..n).map(|x| x as f64).collect();
            let i = median_interval(&v).unwrap();
            let k = i.rank;
            assert!(binomial_cdf(n, k - 1) <= 0.025, "n {n}: rank {k} covers too little");
            assert!(binomial_cdf(n, k) > 0.025, "n {n}: rank {} would also do", k + 1);
            assert!((i.coverage - (1.0 - 2.0 * binomial_cdf(n, k - 1))).abs() < 1e-9, "n {n}");
            assert_eq!((i.low, i.high), ((k - 1) as f64, (n - k) as f64), "n {n}");
        }
    }

    #[test]
    fn ordinals() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 111].iter().map(|&k| ordinal(k)).collect();
        assert_eq!(got, ["", "2nd ", "3rd ", "4th ", "11th ", "12th ", "13th ", "21st ", "22nd ", "23rd ", "111th "]);
    }
}
