//! `martian-zero selfplay`: plays games and writes shards and records.
//!
//! With `--run-dir`, the worker plays for the run's current generation with
//! its `best` checkpoint, in chunks of `games_per_shard` games, and re-reads
//! `best` between chunks (KataGo-style shared directory; any number of
//! workers with distinct `--worker` ids may run at once).
//!
//! With `--worker-index N` (or `JOB_COMPLETION_INDEX` / `SLURM_ARRAY_TASK_ID`
//! when neither `--worker` nor `--worker-index` is given) the worker id is
//! `i<N>`; without `--games` such a worker plays until the run's last
//! generation is trained, following the newest generation and `best`. A run
//! directory given as a URL is worked on through the storage layer
//! ([`worker_loop`], `docs/distributed.md`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use martian_model::{Checkpoint, ConfigModel};
use martian_rules::GameState;
use martian_selfplay::names::{generation_prefix, parse_generation_prefix};

use crate::checkpoints::load_checkpoint;
use crate::config::RunConfig;
use crate::mirror::{Mirror, Owner};
use crate::ops::selfplay_games;
use crate::rundir::RunDir;
use crate::spool::SelfplayOut;
use crate::store::{Lease, RunStore};
use crate::with_game;

/// What a `selfplay` process plays (the options of `martian-zero selfplay`).
#[derive(Clone, Debug)]
pub struct SelfplayOptions {
    /// Run configuration (TOML).
    pub config: PathBuf,
    /// Checkpoint (`.safetensors`), `uniform` (no network) or `best` (the run's best; needs --run-dir).
    pub model: String,
    /// Games to play. Without it (a worker with --worker-index, or a run
    /// directory URL), play until the run's last generation is trained.
    pub games: Option<u64>,
    /// Run directory to write into (shards/, games/): a path, or a URL
    /// (`s3://bucket/prefix`, `gs://`, `az://`, `file:///abs/path`). Without it, use --out.
    pub run_dir: Option<PathBuf>,
    /// Output directory when not writing into a run directory (a local path).
    pub out: Option<PathBuf>,
    /// Worker id, part of every file name and game id. One process per id at
    /// a time (`workers/w<id>.lock`); the pipeline is worker `0`. Default `0`.
    pub worker: Option<String>,
    /// The worker and storage options.
    pub dist: WorkerOptions,
    /// Generation the games count for (default: 1 + the newest trained generation).
    pub generation: Option<u32>,
}

/// The options of a distributed self-play worker (shared with `pipeline --role selfplay`).
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// Worker index (worker id `i<N>`, its own game ids and seeds). Default:
    /// `JOB_COMPLETION_INDEX` (Kubernetes Indexed Job) or `SLURM_ARRAY_TASK_ID`
    /// (Slurm array), when set and no --worker is given. At most 32767: each
    /// index has its own game-id tag (`spool::worker_tag`).
    pub worker_index: Option<u32>,
    /// Seconds between looks at the store for new shards, checkpoints and
    /// `best` (the listing cache's lifetime) and between waits.
    pub poll_seconds: f64,
    /// Seconds after which a claim on a run directory URL (`trainer.lease`,
    /// `workers/wi<N>.lease`) not renewed is taken over; renewed every quarter
    /// of it.
    pub lease_seconds: f64,
}

impl WorkerOptions {
    /// The poll interval.
    ///
    /// # Errors
    /// Not a positive finite number of seconds.
    pub fn poll(&self) -> Result<Duration> {
        seconds(self.poll_seconds, "--poll-seconds")
    }

    /// The lease's staleness limit.
    ///
    /// # Errors
    /// Not a positive finite number of seconds.
    pub fn lease(&self) -> Result<Duration> {
        seconds(self.lease_seconds, "--lease-seconds")
    }

    /// The worker index: the flag, else `JOB_COMPLETION_INDEX`, else
    /// `SLURM_ARRAY_TASK_ID` (a variable set to an empty string counts as
    /// unset, as a shell's `VAR=` leaves it).
    ///
    /// # Errors
    /// An environment variable that is set but not a number of
    /// `0..=MAX_WORKER_INDEX` (named).
    pub fn index(&self) -> Result<Option<u32>> {
        match self.worker_index {
            Some(i) => Ok(Some(i)),
            None => index_from_env(|v| std::env::var(v).ok()),
        }
    }
}

/// [`WorkerOptions::index`] without the flag, the variables read through `var`.
fn index_from_env(var: impl Fn(&str) -> Option<String>) -> Result<Option<u32>> {
    for name in ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"] {
        let Some(v) = var(name).filter(|v| !v.trim().is_empty()) else { continue };
        let i = v
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|&i| i <= MAX_WORKER_INDEX)
            .with_context(|| format!("{name}={v:?} is not a worker index (0..={MAX_WORKER_INDEX})"))?;
        return Ok(Some(i));
    }
    Ok(None)
}

/// The value parser of `--out`: a local directory, never a URL.
pub fn parse_out_dir(s: &str) -> std::result::Result<PathBuf, String> {
    let p = crate::store::parse_run_dir(s)?;
    if crate::store::is_url(&p) {
        return Err(format!("{s} is a URL: --out takes a local directory (a run on a store is --run-dir URL)"));
    }
    Ok(p)
}

/// The largest worker index: indexes `0..=32767` get the distinct game-id
/// tags `0x8000 + N` (`spool::worker_tag`); a larger one would share a tag.
pub const MAX_WORKER_INDEX: u32 = 0x7FFF;

/// The value parser of `--poll-seconds` and `--lease-seconds`, so that a bad
/// value is refused before anything is opened or created.
pub fn parse_seconds(s: &str) -> std::result::Result<f64, String> {
    let x: f64 = s.trim().parse().map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(x.is_finite() && x > 0.0 && x < 1e7) {
        return Err(format!("a number of seconds above 0 and below 10000000 is needed, got {s}"));
    }
    Ok(x)
}

fn seconds(x: f64, flag: &str) -> Result<Duration> {
    if !(x.is_finite() && x > 0.0 && x < 1e7) {
        bail!("{flag} must be a number of seconds above 0 and below 10000000, got {x}");
    }
    Ok(Duration::from_secs_f64(x))
}

/// The worker id of index `i`.
pub fn index_worker(i: u32) -> String {
    format!("i{i}")
}

/// Runs `selfplay`: plays the games `a` asks for (module documentation).
///
/// # Errors
/// A bad config or option (named), a run directory or store that cannot be
/// opened, a checkpoint that cannot be loaded, or I/O errors.
pub fn selfplay(a: SelfplayOptions) -> Result<()> {
    // A stop during start-up (opening a store, the first pull) still releases what was claimed.
    crate::interrupt::install(|| eprintln!("\ninterrupted during start-up: claims released, nothing else to keep"));
    let cfg = RunConfig::load(&a.config)?;
    // An explicit --worker wins: the environment's index is not even read.
    let worker = match &a.worker {
        Some(w) => w.clone(),
        None => a.dist.index()?.map_or_else(|| "0".to_string(), index_worker),
    };
    if !worker.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || worker.is_empty() {
        bail!("--worker must be letters, digits or '_', got {worker:?}");
    }
    if a.games == Some(0) {
        bail!("--games must be >= 1 (leave it out to play until the run's last generation is trained)");
    }
    if let Some(url) = a.run_dir.as_deref().filter(|r| crate::store::is_url(r)) {
        if a.model != "best" || a.generation.is_some() {
            bail!("a worker on a run directory URL plays the run's best network for its newest generation: drop --model and --generation");
        }
        let url = url.to_str().context("the run directory URL is not UTF-8")?.to_string();
        return with_game!(cfg.game, G => worker_loop::<G>(&cfg, &url, &worker, a.games, &a.dist));
    }
    if a.games.is_none() && (a.run_dir.is_none() || a.generation.is_some() || a.model != "best") {
        bail!("give --games (only a worker playing a run's best network until the run ends may leave it out)");
    }
    with_game!(cfg.game, G => run_game::<G>(&a, &cfg, &worker))
}

/// `pipeline --role selfplay`: a worker of index `dist.index()` (required)
/// on the run at `run_dir` (a path or a URL) that plays the run's best
/// network until the run's last generation is trained.
///
/// # Errors
/// No worker index, or those of `selfplay`.
pub fn role_selfplay(config: &Path, run_dir: &Path, dist: &WorkerOptions) -> Result<()> {
    if dist.index()?.is_none() {
        bail!("--role selfplay needs --worker-index N (or JOB_COMPLETION_INDEX / SLURM_ARRAY_TASK_ID)");
    }
    selfplay(SelfplayOptions {
        config: config.to_path_buf(),
        model: "best".into(),
        games: None,
        run_dir: Some(run_dir.to_path_buf()),
        out: None,
        worker: None,
        dist: dist.clone(),
        generation: None,
    })
}

fn latest_generation(run: &RunDir) -> u32 {
    (0..10_000).take_while(|&g| RunDir::complete(&run.checkpoint(g))).last().unwrap_or(0)
}

fn run_game<G: martian_search::AbGame>(a: &SelfplayOptions, cfg: &RunConfig, worker: &str) -> Result<()> {
    let rules = cfg.rules::<G>()?;
    cfg.selfplay_rules::<G>()?;
    if let Some(g) = a.generation {
        // Games of generation g train network g: generation 0 (the initial
        // network) has none, and a run has no generation past its last.
        let last = if a.run_dir.is_some() { cfg.pipeline.generations } else { u32::MAX };
        anyhow::ensure!(
            (1..=last).contains(&g),
            "--generation {g} is out of range: the games of generation g train network g, so g is 1..={last}{}",
            if a.run_dir.is_some() { " (the run's pipeline.generations)" } else { "" }
        );
    }
    let (out_root, run) = match (&a.run_dir, &a.out) {
        (Some(r), _) => {
            // With the run's best network the worker continues a run: a
            // mistyped directory must not become a new one.
            if a.games.is_none() {
                wait_for_run(r, a.dist.poll()?);
            }
            let run = if a.model == "best" { RunDir::open_existing(r, cfg)? } else { RunDir::open(r, cfg)? };
            (r.clone(), Some(run))
        }
        (None, Some(o)) => {
            for sub in [crate::layout::SHARDS, crate::layout::GAMES] {
                std::fs::create_dir_all(o.join(sub))
                    .with_context(|| format!("--out {}: creating {}", o.display(), o.join(sub).display()))?;
            }
            (o.clone(), None)
        }
        (None, None) => bail!("give --run-dir or --out"),
    };
    let device = crate::runtime::setup_runtime(cfg)?;
    let sp_devices = crate::runtime::selfplay_devices(cfg)?;
    let out_root = out_root.as_path();
    let _worker = crate::spool::WorkerLock::acquire(out_root, worker)?;
    install_interrupt_handler(worker, format!("the games it finished are kept in {}", out_root.display()));
    let shards = out_root.join(crate::layout::SHARDS);
    let mut gen = a.generation.unwrap_or_else(|| run.as_ref().map(|r| latest_generation(r) + 1).unwrap_or(1));
    // Without --games: chunks until the run's last generation is trained.
    let until_done = a.games.is_none();
    let mut remaining = a.games.unwrap_or(u64::MAX);
    if until_done {
        flush_spools::<G>(out_root, worker)?;
    }
    let mut loaded: Option<(PathBuf, Checkpoint)> = None;
    let chunk = if run.is_some() { cfg.selfplay.games_per_shard as u64 } else { remaining };
    let t0 = std::time::Instant::now();
    let (mut games, mut moves) = (0u64, 0u64);
    while remaining > 0 {
        if let (true, Some(r)) = (until_done, &run) {
            let latest = latest_generation(r);
            if latest >= cfg.pipeline.generations {
                eprintln!("self-play: generation {latest} of {} is trained: the run is done", cfg.pipeline.generations);
                break;
            }
            gen = latest + 1;
        }
        let path: Option<PathBuf> = match a.model.as_str() {
            "uniform" => None,
            "best" => {
                let r = run.as_ref().context("--model best needs --run-dir")?;
                Some(r.best().ok_or_else(|| r.no_best_error())?)
            }
            p => Some(PathBuf::from(p)),
        };
        if let Some(p) = &path {
            if loaded.as_ref().map(|(lp, _)| lp != p).unwrap_or(true) {
                // Writing into a run directory: its config fixes the architecture.
                let arch =
                    if run.is_some() { ConfigModel::Fixed(&cfg.model) } else { ConfigModel::Default(&cfg.model) };
                let ck = load_checkpoint::<G>(p, &rules, arch, device)
                    .with_context(|| format!("loading model {}", p.display()))?;
                eprintln!("self-play model: {}", p.display());
                loaded = Some((p.clone(), ck));
            }
        }
        let n = remaining.min(chunk);
        let out = SelfplayOut::new(out_root, gen, worker);
        let name = path.as_ref().and_then(|p| p.file_name()).and_then(|n| n.to_str()).unwrap_or("uniform").to_string();
        let model = loaded.as_ref().filter(|_| path.is_some()).map(|(_, c)| (c, name.as_str()));
        let st = selfplay_games::<G>(cfg, &cfg.selfplay_rules_at::<G>(gen)?, model, &sp_devices, n, &out, false)?;
        games += st.games;
        moves += st.moves;
        remaining -= n;
    }
    let s = t0.elapsed().as_secs_f64();
    println!(
        "self-play: {games} games, {moves} positions in {s:.1} s ({:.2} games/s, {:.1} positions/s); shards in {}",
        games as f64 / s,
        moves as f64 / s,
        shards.display()
    );
    Ok(())
}

/// On Ctrl-C, SIGTERM or SIGHUP: says what is kept and how to continue, then
/// releases the worker's claims and removes a URL run's working copy
/// ([`crate::interrupt`]) and ends the process (status 130).
fn install_interrupt_handler(worker: &str, kept: String) {
    let (worker, command) = (worker.to_string(), crate::interrupt::shell_command());
    crate::interrupt::install(move || {
        eprintln!("\ninterrupted: self-play worker {worker} stopped; {kept}; continue with:\n  {command}");
    });
}

/// Merges the games a killed run of worker `worker` left in its spools
/// (`spool/gen*-w<worker>/`) into shards of their generations: a worker that
/// follows the newest generation may not play the killed one's generation
/// again, so its spool is not recovered by the next self-play.
///
/// # Errors
/// I/O errors, corrupt record files.
fn flush_spools<G: GameState>(root: &Path, worker: &str) -> Result<()> {
    let Ok(rd) = std::fs::read_dir(root.join(crate::layout::SPOOL)) else { return Ok(()) };
    let suffix = format!("-w{worker}");
    for e in rd.filter_map(|e| e.ok()) {
        let n = e.file_name().to_string_lossy().to_string();
        let g = parse_generation_prefix(&n).filter(|&(_, rest)| rest == suffix).map(|(g, _)| g);
        let Some(g) = g else { continue };
        let out = SelfplayOut::new(root, g, worker);
        let n = crate::spool::flush(&out, G::INPUT_SHAPE, G::NUM_ACTIONS)?;
        if n > 0 {
            eprintln!("recovery: {n} spooled games of generation {g} went into a shard");
        }
    }
    Ok(())
}

/// Waits until `root` is a run directory (its trainer may start after its workers).
fn wait_for_run(root: &Path, poll: Duration) {
    let mut said = false;
    while !root.join(crate::layout::CONFIG).is_file() || !root.join(crate::layout::BEST).is_file() {
        if !said {
            eprintln!("self-play: waiting for the trainer to create the run in {}", root.display());
            said = true;
        }
        std::thread::sleep(poll);
    }
}

/// The newest generation whose checkpoint (weights and sidecar) is listed in the store.
fn latest_listed(index: &std::collections::BTreeMap<String, crate::store::Listed>) -> u32 {
    (0..10_000)
        .take_while(|g| {
            let stem = crate::layout::object(crate::layout::MODELS, &generation_prefix(*g));
            index.contains_key(&format!("{stem}.safetensors")) && index.contains_key(&format!("{stem}.json"))
        })
        .last()
        .unwrap_or(0)
}

/// A self-play worker on a run directory URL: claims `workers/w<worker>.lease`
/// (and, on a `file://` URL, `workers/w<worker>.lock` in its directory, the
/// claim of a worker given the plain path),
/// waits for the trainer to create the run, then plays `games` games (all
/// generations until the run's last is trained without it) in chunks of
/// `games_per_shard`, each with the run's current `best` for its newest
/// generation, and pushes each shard and record file (create-only) as it is
/// done. A restarted worker with the same id reads its record files back
/// from the store, so it plays exactly the game ids not yet recorded and
/// continues its shard numbering; a killed worker loses only the games of
/// its unfinished shard, which are played again under the same ids.
///
/// # Errors
/// Store errors, a live worker with the same id, a run with another config,
/// a `best` naming a missing checkpoint, self-play errors.
pub fn worker_loop<G: martian_search::AbGame>(
    cfg: &RunConfig,
    url: &str,
    worker: &str,
    games: Option<u64>,
    dist: &WorkerOptions,
) -> Result<()> {
    let rules = cfg.rules::<G>()?;
    cfg.selfplay_rules::<G>()?;
    let poll = dist.poll()?;
    let store = Arc::new(RunStore::open(url, poll)?);
    // `/r` and `file:///r` are one run: the plain path's claim first.
    let _claim = match crate::store::local_dir(Path::new(url)) {
        Some(dir) => Some(crate::spool::WorkerLock::acquire(&dir, worker)?),
        None => None,
    };
    let lease = Lease::acquire(
        store.clone(),
        &crate::layout::object(crate::layout::WORKERS, &format!("w{worker}.lease")),
        &format!("worker {worker}"),
        dist.lease()?,
    )?;
    let mirror = Mirror::new(store.clone(), Owner::Worker(worker.to_string()))?;
    install_interrupt_handler(
        worker,
        format!("its finished shards are in {url} (the games of its unfinished shard are played again)"),
    );
    let mut said = false;
    while !(store.index()?.contains_key(crate::layout::CONFIG) && store.index()?.contains_key(crate::layout::BEST)) {
        if !said {
            eprintln!("self-play: waiting for the trainer to create the run in {url}");
            said = true;
        }
        std::thread::sleep(poll);
    }
    mirror.fetch(crate::layout::CONFIG)?;
    let run = RunDir::open_existing(mirror.local(), cfg).with_context(|| format!("the run in {url}"))?;
    mirror.remove_orphan_shards()?;
    let device = crate::runtime::setup_runtime(cfg)?;
    let sp_devices = crate::runtime::selfplay_devices(cfg)?;
    let per_shard = cfg.selfplay.games_per_shard as u64;
    let mut remaining = games.unwrap_or(u64::MAX);
    let mut loaded: Option<(String, Checkpoint)> = None;
    let (mut played, mut moves) = (0u64, 0u64);
    let t0 = std::time::Instant::now();
    eprintln!("self-play worker {worker} on {url}");
    while remaining > 0 {
        lease.check()?;
        let index = store.index()?;
        let latest = latest_listed(&index);
        if games.is_none() && latest >= cfg.pipeline.generations {
            eprintln!("self-play: generation {latest} of {} is trained: the run is done", cfg.pipeline.generations);
            break;
        }
        let gen = latest + 1;
        let (bytes, _) = store.get(crate::layout::BEST)?.with_context(|| format!("{url}/best disappeared"))?;
        let name = String::from_utf8_lossy(&bytes).trim().to_string();
        let stem = name.strip_suffix(".safetensors").filter(|s| !s.contains('/') && !s.starts_with('.'));
        let Some(stem) = stem else { bail!("{url}/best names {name:?}, which is not a checkpoint file name") };
        if loaded.as_ref().map(|(n, _)| n != &name).unwrap_or(true) {
            for f in [".safetensors", ".json"]
                .map(|ext| crate::layout::object(crate::layout::MODELS, &format!("{stem}{ext}")))
            {
                if !run.root().join(&f).exists() && !mirror.fetch(&f)? {
                    bail!("{url}/best names {name:?}, but {url}/{f} is missing");
                }
            }
            let p = run.models().join(&name);
            let ck = load_checkpoint::<G>(&p, &rules, ConfigModel::Fixed(&cfg.model), device)
                .with_context(|| format!("loading model {url}/{}/{name}", crate::layout::MODELS))?;
            eprintln!("self-play model: {name} (generation {gen}'s games)");
            loaded = Some((name.clone(), ck));
        }
        // This worker's records of the generation: the ids done and the next shard number.
        let mine = crate::layout::object(crate::layout::GAMES, &format!("{}-w{worker}-", generation_prefix(gen)));
        mirror.pull(|n| n.starts_with(&mine))?;
        let n = remaining.min(per_shard);
        let out = SelfplayOut::new(run.root(), gen, worker);
        let ck = loaded.as_ref().map(|(n, c)| (c, n.as_str()));
        let st = selfplay_games::<G>(cfg, &cfg.selfplay_rules_at::<G>(gen)?, ck, &sp_devices, n, &out, false)?;
        lease.check()?;
        mirror.push()?;
        played += st.games;
        moves += st.moves;
        remaining -= n;
    }
    let s = t0.elapsed().as_secs_f64();
    println!(
        "self-play: {played} games, {moves} positions in {s:.1} s ({:.2} games/s); shards in {url}/shards",
        played as f64 / s.max(1e-9)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_index_from_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |n: &str| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string())
        };
        assert_eq!(index_from_env(env(&[])).unwrap(), None);
        assert_eq!(
            index_from_env(env(&[("JOB_COMPLETION_INDEX", "3"), ("SLURM_ARRAY_TASK_ID", "5")])).unwrap(),
            Some(3)
        );
        // Set but empty (`JOB_COMPLETION_INDEX=`): unset, so Slurm's index is taken.
        assert_eq!(
            index_from_env(env(&[("JOB_COMPLETION_INDEX", ""), ("SLURM_ARRAY_TASK_ID", " 5 ")])).unwrap(),
            Some(5)
        );
        assert_eq!(index_from_env(env(&[("SLURM_ARRAY_TASK_ID", "  ")])).unwrap(), None);
        for bad in ["x", "-1", "99999999999"] {
            let pairs: &'static [(&str, &str)] = Box::leak(vec![("SLURM_ARRAY_TASK_ID", bad)].into_boxed_slice());
            let e = index_from_env(env(pairs)).unwrap_err().to_string();
            assert!(e.contains("SLURM_ARRAY_TASK_ID") && e.contains("is not a worker index"), "{e}");
        }
    }
}
