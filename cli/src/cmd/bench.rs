//! `martian-zero bench`: speed figures for BENCHMARKS.md.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Subcommand;
use martian_model::Checkpoint;
use martian_rules::{perft, GameKind, GameState, Move};
use martian_search::{Mcts, MctsConfig, UniformEvaluator};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use crate::config::RunConfig;
use crate::ops::{selfplay_games, train_generation};
use crate::rundir::RunDir;
use crate::spool::SelfplayOut;
use crate::{with_game, GameArg};

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
        #[arg(long, value_enum)]
        game: GameArg,
        /// Depth.
        #[arg(long)]
        depth: u32,
    },
    /// MCTS simulations per second with the uniform evaluator (search overhead alone, one thread).
    Mcts {
        /// Which game.
        #[arg(long, value_enum)]
        game: GameArg,
        /// Simulations per search.
        #[arg(long, default_value_t = 800)]
        simulations: u32,
        /// Searches (positions along a random game).
        #[arg(long, default_value_t = 20)]
        searches: u32,
        /// Search with the two-ply threat check at leaves (`search.leaf_threat_check`).
        #[arg(long)]
        leaf_threat_check: bool,
        /// Forced playouts' k (`search.forced_playouts_k`; the searches have root noise).
        #[arg(long, default_value_t = 0.0)]
        forced_playouts_k: f32,
    },
    /// Alpha-beta nodes per second: fixed-depth searches along a random game (one thread).
    Alphabeta {
        /// Which game.
        #[arg(long, value_enum)]
        game: GameArg,
        /// Search depth in plies.
        #[arg(long, default_value_t = 4)]
        depth: u32,
        /// Searches (positions along a random game).
        #[arg(long, default_value_t = 10)]
        searches: u32,
    },
    /// Self-play with the config's (untrained) network: positions/s, evaluations/s, network share.
    Selfplay {
        /// Run configuration.
        #[arg(long)]
        config: PathBuf,
        /// Games.
        #[arg(long, default_value_t = 16)]
        games: u64,
    },
    /// Training samples per second on shards from uniform self-play.
    Train {
        /// Run configuration.
        #[arg(long)]
        config: PathBuf,
        /// Optimizer steps.
        #[arg(long, default_value_t = 50)]
        steps: u32,
    },
}

/// Runs `bench`.
pub fn run(a: Args) -> Result<()> {
    match a.what {
        What::Perft { game, depth } => with_game!(GameKind::from(game), G => bench_perft::<G>(depth)),
        What::Mcts { game, simulations, searches, leaf_threat_check, forced_playouts_k } => {
            let cfg = MctsConfig { leaf_threat_check, forced_playouts_k, ..MctsConfig::default() };
            cfg.validate().map_err(anyhow::Error::msg)?;
            with_game!(GameKind::from(game), G => bench_mcts::<G>(cfg, simulations, searches))
        }
        What::Alphabeta { game, depth, searches } => {
            with_game!(GameKind::from(game), G => bench_alphabeta::<G>(depth, searches))
        }
        What::Selfplay { config, games } => {
            let cfg = RunConfig::load(&config)?;
            with_game!(cfg.game, G => bench_selfplay::<G>(&cfg, games))
        }
        What::Train { config, steps } => {
            let cfg = RunConfig::load(&config)?;
            with_game!(cfg.game, G => bench_train::<G>(&cfg, steps))
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

fn bench_mcts<G: GameState>(cfg: MctsConfig, simulations: u32, searches: u32) -> Result<()> {
    let mut pos = G::new_game(&G::Rules::default())?;
    let mut rng = StdRng::seed_from_u64(7);
    let levers = format!(
        "{}{}",
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
        tree.search(&mut ev, simulations, true, &mut rng)?;
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

fn bench_alphabeta<G: martian_search::AbGame>(depth: u32, searches: u32) -> Result<()> {
    anyhow::ensure!(depth >= 1, "--depth must be >= 1");
    let start = G::new_game(&G::Rules::default())?;
    let mut pos = start.clone();
    let mut rng = StdRng::seed_from_u64(7);
    let mut engine: martian_search::AlphaBeta<G> =
        martian_search::AlphaBeta::new(martian_search::AlphaBetaConfig::default());
    let mut moves = Vec::new();
    let (mut nodes, mut secs, mut depth_sum) = (0u64, 0f64, 0u64);
    for _ in 0..searches {
        if pos.outcome().is_some() {
            pos = start.clone();
        }
        let r = engine.search(&pos, &martian_search::Limits::depth(depth));
        nodes += r.nodes;
        secs += r.elapsed.as_secs_f64();
        depth_sum += r.depth as u64;
        // Advance along a random game (two random plies) for the next search.
        for _ in 0..2 {
            pos.legal_moves(&mut moves);
            if let Some(&m) = moves.choose(&mut rng) {
                pos.play_unchecked(m);
            }
        }
    }
    println!(
        "{} alpha-beta depth {depth}: {:.0} nodes/s ({nodes} nodes in {secs:.2} s, {searches} searches, mean depth {:.1}, one thread, 16 MiB TT)",
        G::KIND,
        nodes as f64 / secs.max(1e-9),
        depth_sum as f64 / searches.max(1) as f64
    );
    Ok(())
}

fn bench_selfplay<G: GameState>(cfg: &RunConfig, games: u64) -> Result<()> {
    let device = super::setup_runtime(cfg)?;
    let rules = cfg.rules::<G>()?;
    let ck = Checkpoint::new_random::<G>(&rules, &cfg.model, device, 1)?;
    let dir = std::env::temp_dir().join(format!("mz-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let out = SelfplayOut::new(&dir, 1, "bench");
    let st = selfplay_games::<G>(cfg, &rules, Some((&ck, "random-init")), device, games, &out, false)?;
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{} self-play ({} blocks x {} channels, {} games in flight, {}/{} simulations): {:.1} positions/s, {:.0} NN evaluations/s (mean batch {:.1}, fixed_batch {}), network {:.0}% of wall time, writing games {:.1}%",
        G::KIND,
        cfg.model.blocks,
        cfg.model.channels,
        cfg.selfplay.games_in_flight,
        cfg.selfplay.simulations,
        cfg.selfplay.cheap_simulations,
        st.moves as f64 / st.seconds,
        st.evaluations as f64 / st.seconds,
        st.evaluations as f64 / st.batches.max(1) as f64,
        cfg.selfplay.fixed_batch,
        100.0 * st.eval_seconds / st.seconds,
        100.0 * st.output_seconds / st.seconds
    );
    Ok(())
}

fn bench_train<G: GameState>(cfg: &RunConfig, steps: u32) -> Result<()> {
    let device = super::setup_runtime(cfg)?;
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
        selfplay_games::<G>(&sp, &rules, None, device, 8, &out, false)?;
    }
    let t = Instant::now();
    train_generation::<G>(&c, &rules, &run, 1, device)?;
    let s = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{} training ({} blocks x {} channels, batch {}): {:.0} samples/s ({steps} steps in {s:.1} s, incl. loading)",
        G::KIND,
        c.model.blocks,
        c.model.channels,
        c.train.batch_size,
        (steps as u64 * c.train.batch_size as u64) as f64 / s
    );
    Ok(())
}
