//! `martian-zero pipeline`: the generation loop, resumable.
//!
//! ```text
//! gen 0: random network -> best
//! for g in 1..=generations:
//!     self-play games_per_generation games with best     (counts games already recorded)
//!     train gen g from gen g-1 on the replay window       (resumes gen<g>-partial)
//!     gate: gen g vs best from R/openings.json; promote if score >= gate_score,
//!           or (gate = "sprt") if the SPRT accepts H1 (skipped if eval/gen<g>.json exists)
//!     every evaluate.ladder_every generations and after the last: best vs the alpha-beta
//!           ladder -> eval/ladder-gen<g>.json (ratings on the ladder's fixed scale)
//!     refresh R/report.md and R/report.html
//! final: newest generation vs gen 0 and vs random -> final-eval.json
//! ```
//!
//! Every phase reads and writes only files of the run directory, so running
//! the same command again continues where it stopped.
//!
//! Roles (`--role`, `docs/distributed.md`): `all` (the default) is the loop
//! above; `trainer` is the loop without its self-play: it waits until the
//! workers have recorded `games_per_generation` games of the generation
//! (looking every `--poll-seconds`), then trains, gates and promotes;
//! `selfplay` is a worker (`selfplay --worker-index N` without `--games`).
//! A run directory given as a URL is worked on through a local working copy
//! ([`crate::mirror::Mirror`]): pulled at the start, pushed after every phase;
//! the trainer holds `trainer.lease`, so a second trainer refuses to start.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use martian_model::{Checkpoint, ConfigModel};
use martian_search::AbGame;
use martian_selfplay::names::parse_generation_prefix;

use crate::checkpoints::load_checkpoint;
use crate::config::{GateKind, RunConfig};
use crate::io::shown;
use crate::io::write_atomic;
use crate::ops::{describe_match, run_match_with, selfplay_games, train_generation, PlayerSpec};
use crate::results::{FinalEval, GateRecord};
use crate::rundir::RunDir;
use crate::spool::WorkerLock;
use crate::with_game;

/// What a `pipeline` process does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Self-play, training, gating and promotion in one process.
    All,
    /// Training, gating and promotion on the games of separate workers.
    Trainer,
    /// A self-play worker (needs a worker index).
    Selfplay,
}

/// What a `pipeline` process does (the options of `martian-zero pipeline`).
#[derive(Clone, Debug)]
pub struct PipelineOptions {
    /// Run configuration (TOML).
    pub config: PathBuf,
    /// Run directory (created, or resumed if it exists): a path, or a URL
    /// (`s3://bucket/prefix`, `gs://`, `az://`, `file:///abs/path`; credentials
    /// and endpoint from the environment, e.g. `AWS_*`).
    pub run_dir: PathBuf,
    /// What this process does: everything, only training, or only self-play.
    pub role: Role,
    /// The worker and storage options.
    pub dist: crate::selfplay::WorkerOptions,
    /// Stop after this many generations of this invocation (for tests and
    /// staged runs; the config's `pipeline.generations` is the total).
    pub stop_after: Option<u32>,
}

/// Runs `pipeline`: the generation loop above, or one of its roles.
///
/// # Errors
/// A bad config or option (named), a run directory or store that cannot be
/// opened, a damaged record that a phase needs (named with its fix), or I/O errors.
pub fn pipeline(a: PipelineOptions) -> Result<()> {
    // A stop during start-up (opening a store, the first pull) still releases what was claimed.
    crate::interrupt::install(|| eprintln!("\ninterrupted during start-up: claims released, nothing else to keep"));
    let cfg = RunConfig::load(&a.config)?;
    if a.role == Role::Selfplay {
        return crate::selfplay::role_selfplay(&a.config, &a.run_dir, &a.dist);
    }
    if a.dist.worker_index.is_some() {
        bail!("--worker-index is for --role selfplay (the trainer and the all-in-one pipeline have no index)");
    }
    with_game!(cfg.game, G => run_game::<G>(&a, &cfg))
}

/// A run directory URL opened by the trainer: the store, the trainer's lease
/// and the working copy the pipeline runs in.
struct Remote {
    mirror: std::sync::Arc<crate::mirror::Mirror>,
    lease: crate::store::Lease,
    /// A `file://` run's claims on its directory ([`local_claims`]).
    _claims: Vec<WorkerLock>,
    /// Pushes `pipeline.log` when the process is interrupted.
    _push_log: crate::interrupt::Registered,
}

/// The claims a pipeline process of `role` takes in the local directory of
/// its run (a path, or a `file://` URL's path; [`crate::store::local_dir`]):
/// `workers/wtrainer.lock` for every process that trains (roles `all` and
/// `trainer`: one process trains a run, however the directory is named), and
/// `workers/w0.lock` for `all`, which also plays as self-play worker 0.
///
/// # Errors
/// A live process holds one of them (named), or I/O errors.
fn local_claims(dir: &Path, role: Role) -> Result<Vec<WorkerLock>> {
    let mut claims = vec![WorkerLock::acquire(dir, crate::spool::TRAINER)?];
    if role == Role::All {
        claims.push(WorkerLock::acquire(dir, "0").context("the pipeline plays as self-play worker 0")?);
    }
    Ok(claims)
}

impl Remote {
    /// Opens `url` for the trainer (`role`): says whether the store has
    /// conditional updates, claims `trainer.lease`, pulls the run.
    fn open(url: &Path, role: Role, dist: &crate::selfplay::WorkerOptions) -> Result<Remote> {
        use std::sync::Arc;
        let url = url.to_str().context("the run directory URL is not UTF-8")?;
        let store = Arc::new(crate::store::RunStore::open(url, dist.poll()?)?);
        if store.conditional_updates() {
            eprintln!("storage: {url} (create-only puts and conditional updates)");
        } else {
            eprintln!(
                "storage: {url} has create-only puts but no conditional updates: `best` and the logs are \
                 overwritten, and only {} (create-only) keeps a second trainer out: run one trainer",
                crate::layout::TRAINER_LEASE
            );
        }
        // The claims of a plain path on the same directory first: `/r` and `file:///r` are one run.
        let claims = match crate::store::local_dir(url.as_ref()) {
            Some(dir) => local_claims(&dir, role)?,
            None => Vec::new(),
        };
        let lease =
            crate::store::Lease::acquire(store.clone(), crate::layout::TRAINER_LEASE, "the trainer", dist.lease()?)?;
        let workers = match role {
            Role::All => vec!["0".to_string(), "boot".to_string()],
            _ => vec!["boot".to_string()],
        };
        let mirror = Arc::new(crate::mirror::Mirror::new(store, crate::mirror::Owner::Trainer { workers })?);
        // Interrupted, the `interrupted:` line of pipeline.log reaches the store before the working
        // copy goes (registered after the copy's removal, so it runs before it; bounded to 5 s).
        let push_log = {
            let m = mirror.clone();
            crate::interrupt::on_interrupt(move || {
                let (tx, rx) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    let _ = m.push_matching(|n| n == crate::layout::PIPELINE_LOG);
                    let _ = tx.send(());
                });
                let _ = rx.recv_timeout(std::time::Duration::from_secs(5));
            })
        };
        let n = mirror
            .pull(|n| {
                crate::layout::under(n, crate::layout::SPOOL).is_none()
                    && crate::layout::under(n, crate::layout::WORKERS).is_none()
            })?
            .len();
        if n > 0 {
            eprintln!(
                "storage: pulled {n} objects of {url} into a working copy under {}",
                crate::mirror::cache_root().display()
            );
        }
        Ok(Remote { mirror, lease, _claims: claims, _push_log: push_log })
    }

    /// Pushes what the trainer wrote (after checking that it still holds its lease).
    fn push(&self) -> Result<()> {
        self.lease.check()?;
        self.mirror.push()?;
        Ok(())
    }

    /// Pulls the workers' new shards and records.
    fn pull_games(&self) -> Result<usize> {
        Ok(self
            .mirror
            .pull(|n| {
                crate::layout::under(n, crate::layout::SHARDS).is_some()
                    || crate::layout::under(n, crate::layout::GAMES).is_some()
            })?
            .len())
    }
}

/// Pushes the working copy of a URL run (nothing for a local run directory).
fn sync(remote: &Option<Remote>) -> Result<()> {
    remote.as_ref().map_or(Ok(()), Remote::push)
}

fn file_name(p: &Path) -> String {
    p.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string()
}

fn run_game<G: AbGame>(a: &PipelineOptions, cfg: &RunConfig) -> Result<()> {
    let rules = cfg.rules::<G>()?;
    // The self-play games' rules ([selfplay_rules] on top of [rules]); every match plays `rules`.
    let sp_rules = cfg.selfplay_rules::<G>()?;
    let remote = if crate::store::is_url(&a.run_dir) { Some(Remote::open(&a.run_dir, a.role, &a.dist)?) } else { None };
    let root = remote.as_ref().map_or(a.run_dir.clone(), |r| r.mirror.local().to_path_buf());
    let resuming = root.join(crate::layout::CONFIG).exists();
    // A local run: its claims before anything is written (a refused second trainer must not
    // rewrite the running one's config.toml); a URL run took them in Remote::open.
    let _claims = if remote.is_none() {
        RunDir::check_target(&root)?;
        local_claims(&root, a.role)?
    } else {
        Vec::new()
    };
    let total = cfg.pipeline.generations;
    if resuming {
        // A config with fewer generations than the run has would evaluate an older one as final
        // (after the config check, whose error says more).
        RunDir::check_config(&root, cfg)?;
        refuse_fewer_generations(&root, total, &a.config)?;
    }
    let run = RunDir::open(&root, cfg)?;
    let device = crate::runtime::setup_runtime(cfg)?;
    let sp_devices = crate::runtime::selfplay_devices(cfg)?;
    let per_gen = cfg.pipeline.games_per_generation as u64;
    if resuming {
        repair_best(&run)?;
        // This process's own spooled games of the generation it continues, checked before
        // they are counted (an unreadable one is removed and played again).
        let next = (1..=total).find(|&g| !run.gate_result(g).exists());
        if let Some(g) = next.filter(|&g| a.role == Role::All && !RunDir::complete(&run.checkpoint(g))) {
            // An error here (a corrupt record file) is the self-play phase's to report, if it runs.
            if let Err(e) = crate::spool::recover(&run.selfplay_out(g, "0"), G::INPUT_SHAPE, G::NUM_ACTIONS) {
                eprintln!("warning: {e:#}");
            }
        }
        eprintln!("resuming {}: {}", shown(run.root()), run_state(&run, total, per_gen));
    }
    install_interrupt_handler(run.root(), total, per_gen);
    let log = Log { path: run.root().join(crate::layout::PIPELINE_LOG) };
    // Temporaries of writes a kill interrupted (the pipeline owns these directories).
    for d in [
        run.root().to_path_buf(),
        run.models(),
        run.root().join(crate::layout::EVAL),
        run.root().join(crate::layout::REPORT_DIR),
    ] {
        crate::spool::remove_temporaries(&d, None);
    }
    let t0 = std::time::Instant::now();
    let out_of_time = || cfg.pipeline.max_minutes > 0.0 && t0.elapsed().as_secs_f64() > cfg.pipeline.max_minutes * 60.0;
    if !RunDir::complete(&run.checkpoint(0)) {
        let ck = Checkpoint::new_random::<G>(&rules, &cfg.model, device, cfg.seed as i64)?;
        let _writing = crate::interrupt::writing();
        ck.save(&run.checkpoint(0))?;
        eprintln!("generation 0: initialised {}", shown(&run.checkpoint(0)));
    }
    if run.best().is_none() {
        run.set_best(&run.checkpoint(0))?;
    }
    sync(&remote)?;
    let mut ran = 0;
    // Wall time of the generations run by this invocation (for the ETA), and of the run's
    // earlier ones (the ETA of a resumed run's first generation).
    let mut gen_seconds = 0.0;
    let earlier = crate::metrics::earlier_generation_seconds(run.root());
    for g in 1..=cfg.pipeline.generations {
        if run.gate_result(g).exists() {
            // Finished earlier; make sure a promotion decided there took effect.
            let rec = read_gate_record(&run, g)?;
            if rec.promoted && run.best().map(|b| file_name(&b)) < Some(rec.candidate.clone()) {
                run.set_best(&run.models().join(&rec.candidate))?;
            }
            if g == cfg.pipeline.generations || !run.gate_result(g + 1).exists() {
                rebuild_eval_log(&run)?;
            }
            // A kill between the gate and the ladder: play the ladder now.
            if crate::ladder::due(&cfg.evaluate, g, cfg.pipeline.generations) && !crate::ladder::record_usable(&run, g)
            {
                ladder_step::<G>(cfg, &rules, &run, g, device, true)?;
            }
            continue;
        }
        if a.stop_after.is_some_and(|n| ran >= n) {
            eprintln!("stopping before generation {g} (run the same command to continue)");
            finish(&run, total, t0, ran, &log);
            return sync(&remote);
        }
        if out_of_time() {
            // pipeline.max_minutes: the run ends here, measured like a finished one.
            eprintln!(
                "pipeline.max_minutes ({}) reached before generation {g}: final evaluation and ladder of generation {} \
                 (run the same command with a larger limit to continue)",
                cfg.pipeline.max_minutes,
                g - 1
            );
            final_evaluation::<G>(cfg, &rules, &run, device)?;
            if g > 1 && cfg.evaluate.ladder_every > 0 {
                // The last generation's ladder (its record when its generation
                // played it), printed once as the run's result.
                let rec = ladder_step::<G>(cfg, &rules, &run, g - 1, device, false)?;
                println!("final {}", crate::ladder::describe(&rec));
            }
            finish(&run, total, t0, ran, &log);
            return sync(&remote);
        }
        let best = run.best().context("run has no best checkpoint")?;
        let t_gen = std::time::Instant::now();
        let limit = (cfg.pipeline.max_minutes > 0.0).then_some(cfg.pipeline.max_minutes * 60.0);
        let mut line = generation_line(g, total, t0.elapsed().as_secs_f64(), (ran, gen_seconds), earlier, limit);
        if cfg.pipeline.max_minutes > 0.0 {
            line.push_str(&format!(
                "; no generation starts after {} (pipeline.max_minutes)",
                duration_text(cfg.pipeline.max_minutes * 60.0)
            ));
        }
        eprintln!("{line}");
        // A network trained before its gate (by `train`, or an invocation stopped after
        // training): its self-play and training are done; the gate comes next.
        let trained_before = RunDir::complete(&run.checkpoint(g));
        if trained_before {
            eprintln!(
                "generation {g}: {} is already trained (by `train` or an earlier invocation); its gate comes next",
                file_name(&run.checkpoint(g))
            );
        }
        // 0. The bootstrap from the baseline (not zero; off by default): part
        // or all of generation 1's games come from the alpha-beta teacher.
        if g == 1 && cfg.pipeline.bootstrap_games > 0 && !trained_before {
            let n = crate::ops::bootstrap_games::<G>(cfg, &sp_rules, &run, device)?;
            if n > 0 {
                eprintln!(
                    "generation 1: {n} bootstrap games by {} (pipeline.bootstrap_games: this run is not from zero)",
                    cfg.pipeline.bootstrap_player
                );
            }
        }
        sync(&remote)?;
        // 1. Self-play (the trainer waits for the workers' games instead).
        let want = cfg.pipeline.games_per_generation as u64;
        if let Some(r) = &remote {
            if !trained_before {
                r.pull_games()?;
            }
        }
        let mut have = run.games_done(g);
        if a.role == Role::All && !trained_before && have >= want {
            // All played, but a kill may have come between spooling the last games and their
            // merge: no self-play resumes them, so they go into a shard before training.
            let n = crate::spool::flush(&run.selfplay_out(g, "0"), G::INPUT_SHAPE, G::NUM_ACTIONS)?;
            if n > 0 {
                eprintln!("generation {g}: {n} spooled games went into a shard");
            }
        }
        let mut played = None;
        if trained_before {
            // Nothing to play: the games of a generation train its network, which is trained.
            have = have.max(want);
        }
        if a.role == Role::Trainer && have < want {
            eprintln!("generation {g}: waiting for the self-play workers ({have} of {want} games recorded)");
            let poll = a.dist.poll()?;
            while have < want {
                std::thread::sleep(poll);
                if let Some(r) = &remote {
                    r.lease.check()?;
                    r.pull_games()?;
                }
                have = run.games_done(g);
            }
            eprintln!("generation {g}: {have} games recorded by the workers");
        }
        if have < want {
            eprintln!("generation {g}: self-play {} games with {}", want - have, file_name(&best));
            let ck = load_checkpoint::<G>(&best, &rules, ConfigModel::Fixed(&cfg.model), device)?;
            let out = run.selfplay_out(g, "0");
            let name = file_name(&best);
            let replay = cfg.selfplay.exact_resume && cfg.selfplay.fixed_batch == 0;
            let gen_rules = cfg.selfplay_rules_at::<G>(g)?;
            let st = selfplay_games::<G>(cfg, &gen_rules, Some((&ck, &name)), &sp_devices, want - have, &out, replay)?;
            let (h, top, kl, ln_legal) = st.targets.means();
            eprintln!(
                "generation {g}: {} games, {} positions, {:.1} positions/s, network {:.0}% of the time; \
                 policy targets: entropy {h:.2} nats (uniform {ln_legal:.2}), top {top:.3}, KL to the prior {kl:.3}",
                st.games,
                st.moves,
                st.moves as f64 / st.seconds.max(1e-9),
                100.0 * st.eval_seconds / st.seconds.max(1e-9)
            );
            played = Some((st.moves, st.seconds));
            crate::metrics::after_selfplay::<G>(cfg, &rules, &run, g, &st, device);
            sync(&remote)?;
            if let Some(r) = &remote {
                r.pull_games()?;
            }
        }
        // 2. Train.
        if !trained_before {
            eprintln!("generation {g}: training");
        }
        let step_before = training_step(&run, g);
        let t_train = std::time::Instant::now();
        let cand = train_generation::<G>(cfg, &rules, &run, g, device)?;
        let trained = (step_before, training_step(&run, g), t_train.elapsed().as_secs_f64());
        sync(&remote)?;
        // 3. Gate.
        eprintln!("generation {g}: gate {} vs {}", file_name(&cand), file_name(&best));
        let sprt = (cfg.evaluate.gate == GateKind::Sprt).then(|| cfg.evaluate.sprt());
        let (m, sprt_state) = run_match_with::<G>(
            cfg,
            &rules,
            &PlayerSpec::Net(cand.clone()),
            &PlayerSpec::Net(best.clone()),
            cfg.evaluate.pairs,
            device,
            Some(&run.openings()),
            sprt,
        )?;
        let score = m.elo.map(|e| e.score).unwrap_or(0.0);
        let promoted = match &sprt_state {
            Some(st) => {
                eprintln!(
                    "generation {g}: SPRT LLR {:.2} in [{:.2}, {:.2}]: {:?}",
                    st.llr, st.lower, st.upper, st.decision
                );
                st.decision == martian_evaluate::SprtDecision::AcceptH1
            }
            None => score >= cfg.evaluate.gate_score,
        };
        let reason = promotion_reason(cfg, score, sprt_state.as_ref(), promoted);
        eprintln!(
            "generation {g}: {} -> {} ({reason})",
            describe_match(&m),
            if promoted { "promoted" } else { "not promoted" }
        );
        crate::metrics::after_gate(&run, g, &m, promoted);
        let rec = GateRecord {
            generation: g,
            candidate: file_name(&cand),
            best: file_name(&best),
            promoted,
            reason,
            result: m,
            sprt: sprt_state,
        };
        write_atomic(&run.gate_result(g), serde_json::to_string_pretty(&rec)?.as_bytes())?;
        rebuild_eval_log(&run)?;
        if promoted {
            run.set_best(&cand)?;
        }
        sync(&remote)?;
        let gate = format!(
            "gate +{} ={} -{} -> {}",
            rec.result.wins,
            rec.result.draws,
            rec.result.losses,
            if promoted { "promoted" } else { "not promoted" }
        );
        if crate::ladder::due(&cfg.evaluate, g, cfg.pipeline.generations) {
            ladder_step::<G>(cfg, &rules, &run, g, device, true)?;
        }
        write_report_quietly(run.root());
        ran += 1;
        gen_seconds += t_gen.elapsed().as_secs_f64();
        let summary = GenerationSummary {
            generation: g,
            total,
            games: run.games_done(g),
            selfplay: played,
            training: trained,
            loss: last_loss(&run, g),
            gate,
            seconds: t_gen.elapsed().as_secs_f64(),
        };
        log.line(&summary.to_string());
        sync(&remote)?;
    }
    final_evaluation::<G>(cfg, &rules, &run, device)?;
    sync(&remote)?;
    let newest = (1..=cfg.pipeline.generations).rev().find(|&g| crate::ladder::record_path(&run, g).exists());
    if let Some(g) = newest {
        let rec = crate::ladder::play::<G>(cfg, &rules, &run, g, &run.checkpoint(g), device)?;
        println!("final {}", crate::ladder::describe(&rec));
    }
    finish(&run, total, t0, ran, &log);
    sync(&remote)
}

/// Refuses to continue the run at `root` with a config of `generations`
/// generations when the run already has a later one (its gate record or its
/// trained checkpoint): the final evaluation, the ladder and `final-eval.json`
/// would then describe an older generation than the run's best. Nothing is
/// changed.
///
/// # Errors
/// The run has a generation beyond `generations` (naming it, the file that
/// shows it, and the two ways on).
fn refuse_fewer_generations(root: &Path, generations: u32, config: &Path) -> Result<()> {
    let Ok(run) = RunDir::existing(root) else { return Ok(()) };
    if let Some((g, evidence)) = run.generation_beyond(generations) {
        bail!(
            "run directory {} already has generation {g} ({}), more than pipeline.generations = {generations} in {}; \
             nothing was changed. To continue or re-evaluate this run set pipeline.generations to {g} or more; \
             for a run of {generations} generations give a new --run-dir",
            shown(root),
            shown(&evidence),
            config.display()
        );
    }
    Ok(())
}

/// The checkpoint `best` should name, rebuilt from the gate records
/// `eval/gen*.json`: the newest promoted generation whose checkpoint is
/// complete, else generation 0 (if it is complete).
///
/// # Errors
/// An unreadable gate record (named).
fn best_from_gate_records(run: &RunDir) -> Result<Option<PathBuf>> {
    let mut best = Some(run.checkpoint(0)).filter(|p| RunDir::complete(p));
    for rec in gate_records(run)? {
        let cand = run.models().join(&rec.candidate);
        if rec.promoted && RunDir::complete(&cand) {
            best = Some(cand);
        }
    }
    Ok(best)
}

/// Checks `best` of a resumed run: one that names no usable checkpoint
/// (garbage, empty, a missing checkpoint), or a missing one in a run with
/// gate records, is rebuilt from the gate records with a warning that names
/// the problem.
///
/// # Errors
/// An unreadable gate record, or I/O errors writing `best`.
fn repair_best(run: &RunDir) -> Result<()> {
    let problem = match run.best_problem() {
        Some(p) => p,
        None if run.best().is_none() && run.gate_result(1).exists() => {
            format!("{} is missing", shown(&run.best_file()))
        }
        None => return Ok(()),
    };
    match best_from_gate_records(run)? {
        Some(p) => {
            run.set_best(&p)?;
            eprintln!(
                "warning: {problem}; rebuilt it from the gate records (eval/gen*.json): best is {}",
                file_name(&p)
            );
        }
        None => eprintln!("warning: {problem}; it is rewritten with generation 0 once that is initialised"),
    }
    Ok(())
}

/// Why a gate promoted or kept the candidate, in words.
pub fn promotion_reason(
    cfg: &RunConfig,
    score: f64,
    sprt: Option<&martian_evaluate::SprtState>,
    promoted: bool,
) -> String {
    match sprt {
        Some(st) => format!(
            "SPRT: LLR {:.2} {}",
            st.llr,
            match st.decision {
                martian_evaluate::SprtDecision::AcceptH1 => format!(">= {:.2}, H1 accepted", st.upper),
                martian_evaluate::SprtDecision::AcceptH0 => format!("<= {:.2}, H0 accepted", st.lower),
                martian_evaluate::SprtDecision::Continue =>
                    format!("undecided in ({:.2}, {:.2}) after all pairs: keep the best", st.lower, st.upper),
            }
        ),
        None if cfg.evaluate.gate_score <= 0.0 => {
            format!("always promote: gate_score = {}, the score is not checked", cfg.evaluate.gate_score)
        }
        None => {
            format!("score {score:.3} {} gate_score {}", if promoted { ">=" } else { "<" }, cfg.evaluate.gate_score)
        }
    }
}

/// Plays generation `g`'s ladder with the promoted network and prints its rating.
/// `announce`: print the rating line (else the caller prints it).
fn ladder_step<G: AbGame>(
    cfg: &RunConfig,
    rules: &G::Rules,
    run: &RunDir,
    g: u32,
    device: tch::Device,
    announce: bool,
) -> Result<crate::ladder::LadderRecord> {
    let best = run.best().context("run has no best checkpoint")?;
    let rec = crate::ladder::play::<G>(cfg, rules, run, g, &best, device)?;
    crate::metrics::after_ladder(run, &rec);
    if announce {
        eprintln!("generation {g}: {}", crate::ladder::describe(&rec));
    }
    Ok(rec)
}

/// The gate records `eval/gen*.json` of generations 1, 2, ... up to the
/// first one missing, in generation order.
///
/// # Errors
/// An unreadable record, named, with how to replay its gate; an I/O error.
fn gate_records(run: &RunDir) -> Result<Vec<GateRecord>> {
    let mut out = Vec::new();
    for g in 1.. {
        let p = run.gate_result(g);
        if !p.exists() {
            break;
        }
        out.push(read_gate_record(run, g)?);
    }
    Ok(out)
}

/// Generation `g`'s gate record. A damaged one stops the run with an error
/// naming it and the fix (the gate decided a promotion that later generations
/// built on, so it is not played again behind the user's back).
///
/// # Errors
/// The record is missing, unreadable or damaged.
fn read_gate_record(run: &RunDir, g: u32) -> Result<GateRecord> {
    let p = run.gate_result(g);
    GateRecord::read(&p, g).with_context(|| {
        format!(
            "generation {g}'s gate record is unusable: restore {} from a copy, or move it away to play \
             generation {g}'s gate again against the current best network",
            p.display()
        )
    })
}

/// Rewrites `evals.jsonl` from the gate records `eval/gen*.json`, one line
/// each in generation order. The log is derived from the records, so a kill
/// between writing a record and the log can neither drop nor repeat a line.
///
/// # Errors
/// An unreadable gate record (named) or an I/O error.
fn rebuild_eval_log(run: &RunDir) -> Result<()> {
    let mut lines = String::new();
    for rec in gate_records(run)? {
        lines.push_str(&serde_json::to_string(&rec)?);
        lines.push('\n');
    }
    write_atomic(&run.eval_log(), lines.as_bytes())
}

fn final_evaluation<G: AbGame>(cfg: &RunConfig, rules: &G::Rules, run: &RunDir, device: tch::Device) -> Result<()> {
    if cfg.evaluate.final_pairs == 0 {
        eprintln!("final evaluation skipped (evaluate.final_pairs = 0)");
        return Ok(());
    }
    let path = run.final_eval();
    let last = (1..=cfg.pipeline.generations).rev().map(|g| run.checkpoint(g)).find(|p| RunDir::complete(p));
    let Some(trained) = last else { return Ok(()) };
    if path.exists() {
        // A damaged record is set aside and the evaluation played again (it is
        // seeded: the same games).
        let f: Option<FinalEval> = match crate::records::read_json(&path, "a final-evaluation record") {
            Ok(f) => Some(f),
            Err(e) => {
                let aside = crate::io::set_aside(&path)?;
                eprintln!("warning: {e:#}; set aside as {}; playing the final evaluation again", aside.display());
                None
            }
        };
        // A run extended with more generations evaluates its new newest one.
        match f {
            Some(f) if f.trained == file_name(&trained) => {
                println!("final evaluation (from {}):", shown(&path));
                println!("  {}", describe_match(&f.vs_untrained));
                println!("  {}", describe_match(&f.vs_random));
                return Ok(());
            }
            Some(f) => eprintln!(
                "final evaluation: {} covers {}, not the newest {}; playing it again",
                path.display(),
                f.trained,
                file_name(&trained)
            ),
            None => {}
        }
    }
    eprintln!("final evaluation: {} vs untrained and vs random", file_name(&trained));
    let n = cfg.evaluate.final_pairs;
    let book = Some(run.openings());
    let (vs_untrained, _) = run_match_with::<G>(
        cfg,
        rules,
        &PlayerSpec::Net(trained.clone()),
        &PlayerSpec::Net(run.checkpoint(0)),
        n,
        device,
        book.as_deref(),
        None,
    )?;
    let (vs_random, _) = run_match_with::<G>(
        cfg,
        rules,
        &PlayerSpec::Net(trained.clone()),
        &PlayerSpec::Random,
        n,
        device,
        book.as_deref(),
        None,
    )?;
    let best = run.best().map(|b| file_name(&b)).unwrap_or_default();
    let f = FinalEval { trained: file_name(&trained), best, vs_untrained, vs_random };
    write_atomic(&path, serde_json::to_string_pretty(&f)?.as_bytes())?;
    write_report_quietly(run.root());
    println!("final evaluation ({}):", shown(&path));
    println!("  {}", describe_match(&f.vs_untrained));
    println!("  {}", describe_match(&f.vs_random));
    Ok(())
}

/// `2h 05m`, `3m 07s`, `42s`.
pub fn duration_text(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// `generation 3/10 (elapsed 4m 10s; ETA 16m 00s for the run, 2m 00s per generation)`:
/// the ETA of the whole run, from the generations this invocation has run
/// (`ran` of them in `gen_seconds`), or before it has run one, from the
/// run's earlier generations (`earlier`: seconds a generation, from
/// `generations.jsonl`, [`crate::metrics::earlier_generation_seconds`]).
/// With `limit` (`pipeline.max_minutes` in seconds, counted from this
/// invocation's start, as `elapsed` is), the ETA stops at the generation
/// that starts last before the limit.
fn generation_line(
    g: u32,
    total: u32,
    elapsed: f64,
    (ran, gen_seconds): (u32, f64),
    earlier: Option<f64>,
    limit: Option<f64>,
) -> String {
    let per = if ran > 0 { Some(gen_seconds / ran as f64) } else { earlier };
    let eta = if let Some(per) = per {
        let mut left = per * (total + 1).saturating_sub(g) as f64;
        if let Some(l) = limit {
            left = left.min((l - elapsed).max(0.0) + per);
        }
        format!("ETA {} for the run, {} per generation", duration_text(left), duration_text(per))
    } else {
        "ETA after this generation".to_string()
    };
    format!("generation {g}/{total} (elapsed {}; {eta})", duration_text(elapsed))
}

/// The global training step that generation `g` has reached: its checkpoint's,
/// else its newest partial checkpoint's, else its parent's.
fn training_step(run: &RunDir, g: u32) -> u64 {
    let step = |p: &Path| Checkpoint::read_meta(p).ok().map(|m| m.step);
    if RunDir::complete(&run.checkpoint(g)) {
        if let Some(s) = step(&run.checkpoint(g)) {
            return s;
        }
    }
    run.resume_point(g).map(|(s, _)| s).or_else(|| step(&run.checkpoint(g.saturating_sub(1)))).unwrap_or(0)
}

/// The last total loss that `train.jsonl` logged for generation `g`.
fn last_loss(run: &RunDir, g: u32) -> Option<f64> {
    let lines = crate::records::read_json_lines::<serde_json::Value>(&run.train_log(), "a training log line").ok()?;
    lines
        .records
        .into_iter()
        .rev()
        .map(|(_, v)| v)
        .find_map(|v| (v.get("generation")?.as_u64()? == u64::from(g)).then(|| v.get("total_loss")?.as_f64()).flatten())
}

/// The one-line summary of a finished generation (terminal and `pipeline.log`).
struct GenerationSummary {
    generation: u32,
    total: u32,
    /// Self-play games of the generation.
    games: u64,
    /// Positions and seconds of the self-play this invocation ran, if any.
    selfplay: Option<(u64, f64)>,
    /// Global step before and after training, and its seconds.
    training: (u64, u64, f64),
    loss: Option<f64>,
    gate: String,
    seconds: f64,
}

impl std::fmt::Display for GenerationSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "generation {}/{} done: {} games", self.generation, self.total, self.games)?;
        match self.selfplay {
            Some((pos, secs)) => write!(f, ", {:.1} positions/s", pos as f64 / secs.max(1e-9))?,
            // A network trained before its self-play (by `train`) has no games of its generation.
            None if self.games == 0 => write!(f, " (its network was trained without them)")?,
            None => write!(f, " (played earlier)")?,
        }
        let (from, to, secs) = self.training;
        let steps = to.saturating_sub(from);
        write!(f, "; {steps} training steps, {:.1} steps/s", steps as f64 / secs.max(1e-9))?;
        if let Some(l) = self.loss {
            write!(f, ", loss {l:.3}")?;
        }
        write!(f, "; {}; {}", self.gate, duration_text(self.seconds))
    }
}

/// The run's `pipeline.log`: each generation's summary and the end of each
/// invocation, one line each, with a UTC time stamp.
struct Log {
    path: PathBuf,
}

impl Log {
    /// Prints `text` and appends it to the log (one write per line, in append
    /// mode, so a kill never leaves half a line; a failed write is a warning).
    fn line(&self, text: &str) {
        println!("{text}");
        if let Err(e) = crate::io::append_line(&self.path, &format!("{} {text}", utc_timestamp())) {
            eprintln!("warning: {e:#}");
        }
    }
}

/// Now as `2026-12-01T02:30:05Z`.
fn utc_timestamp() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    timestamp_of(secs)
}

/// `secs` since the Unix epoch as an ISO 8601 UTC time (civil-from-days, proleptic Gregorian).
fn timestamp_of(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, (rem % 3600) / 60, rem % 60)
}

/// Where a run stands, in words: what an interrupted pipeline has kept and
/// where running it again continues.
pub fn run_state(run: &RunDir, total: u32, games_per_generation: u64) -> String {
    let done = (1..=total).take_while(|&g| run.gate_result(g).exists()).count() as u32;
    let best = run.best().map_or_else(|| "none yet".to_string(), |b| file_name(&b));
    let mut s = format!("{done} of {total} generations finished, best network {best}");
    if done >= total {
        s.push_str(if run.final_eval().exists() {
            "; the final evaluation is done"
        } else {
            "; the final evaluation and ladder come next"
        });
        return s;
    }
    let g = done + 1;
    let games = run.games_done(g);
    let kept = if games >= games_per_generation {
        format!("generation {g}: all {games} self-play games kept")
    } else {
        format!("generation {g}: {games} of {games_per_generation} self-play games kept")
    };
    let next = if RunDir::complete(&run.checkpoint(g)) {
        format!("generation {g}'s network is trained; its gate match comes next")
    } else if let Some((step, _)) = run.resume_point(g) {
        format!("{kept}; training continues from step {step}")
    } else if games >= games_per_generation {
        format!("{kept}; training comes next")
    } else {
        kept
    };
    s.push_str("; ");
    s.push_str(&next);
    s
}

/// On Ctrl-C (SIGINT), SIGTERM (a service manager's or `kill`'s stop) or
/// SIGHUP (the terminal closed): says what the run has kept and the command that
/// continues it, then ends the process (killed by SIGINT, status 130). Stopping at once is safe: every
/// file of the run is written whole (temporary name and rename) or appended
/// one line at a time, and a resumed run repairs what a kill leaves (the same
/// as after `kill -9`).
fn install_interrupt_handler(root: &Path, total: u32, games_per_generation: u64) {
    let root = root.to_path_buf();
    let command = crate::interrupt::shell_command();
    crate::interrupt::install(move || {
        let state = match RunDir::existing(&root) {
            Ok(run) => run_state(&run, total, games_per_generation),
            Err(e) => format!("{e:#}"),
        };
        eprintln!("\ninterrupted: {state}");
        let run = shown(&root);
        if run == root.display().to_string() {
            eprintln!("everything finished is kept in {run}; continue the run with:\n  {command}");
        } else {
            eprintln!(
                "everything pushed to {run} is kept (pushed after each phase); continue the run with:\n  {command}"
            );
        }
        let _ = crate::io::append_line(
            &root.join(crate::layout::PIPELINE_LOG),
            &format!("{} interrupted: {state}", utc_timestamp()),
        );
        // Then the claims are released and a URL run's working copy removed (crate::interrupt).
    });
}

/// Rewrites the report, printing only a warning when that fails (the path is
/// printed once, at the end of the invocation).
fn write_report_quietly(root: &Path) {
    if let Err(e) = crate::report::write_report(root, None) {
        eprintln!("warning: report not written: {e:#}");
    }
}

/// The end of an invocation: the report (its path printed once), the wall
/// time and the best network.
fn finish(run: &RunDir, total: u32, t0: std::time::Instant, ran: u32, log: &Log) {
    crate::report::refresh(run.root());
    let done = (1..=total).take_while(|&g| run.gate_result(g).exists()).count();
    let best = match run.best() {
        Some(b) => {
            let name = file_name(&b);
            match parse_generation_prefix(&name).map(|(g, _)| g) {
                Some(0) => format!("{name} (the untrained generation 0: no generation was promoted)"),
                Some(g) => format!("{name} (generation {g})"),
                None => name,
            }
        }
        None => "none".into(),
    };
    log.line(&format!(
        "pipeline: {done}/{total} generations finished; this invocation ran {ran} in {}; best network {best}",
        duration_text(t0.elapsed().as_secs_f64())
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_timestamps() {
        assert_eq!(duration_text(0.4), "0s");
        assert_eq!(duration_text(59.4), "59s");
        assert_eq!(duration_text(187.0), "3m 07s");
        assert_eq!(duration_text(7500.0), "2h 05m");
        assert_eq!(timestamp_of(0), "1970-01-01T00:00:00Z");
        assert_eq!(timestamp_of(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(timestamp_of(1_798_079_405), "2026-12-24T02:30:05Z");
    }

    #[test]
    fn eta_from_the_generations_run() {
        assert_eq!(
            generation_line(1, 10, 3.0, (0, 0.0), None, None),
            "generation 1/10 (elapsed 3s; ETA after this generation)"
        );
        // A resumed run's first generation: the earlier generations' time; this
        // invocation's own, once it has run one.
        assert_eq!(
            generation_line(4, 10, 2.0, (0, 0.0), Some(60.0), None),
            "generation 4/10 (elapsed 2s; ETA 7m 00s for the run, 1m 00s per generation)"
        );
        assert_eq!(
            generation_line(5, 10, 130.0, (1, 120.0), Some(60.0), None),
            "generation 5/10 (elapsed 2m 10s; ETA 12m 00s for the run, 2m 00s per generation)"
        );
        // Two generations took 4 minutes: generations 3 to 10 are left, 2 minutes each.
        assert_eq!(
            generation_line(3, 10, 250.0, (2, 240.0), None, None),
            "generation 3/10 (elapsed 4m 10s; ETA 16m 00s for the run, 2m 00s per generation)"
        );
        // With a 10-minute limit: 5m 50s left, plus the last generation started before it.
        assert_eq!(
            generation_line(3, 200, 250.0, (2, 240.0), Some(30.0), Some(600.0)),
            "generation 3/200 (elapsed 4m 10s; ETA 7m 50s for the run, 2m 00s per generation)"
        );
    }

    #[test]
    fn summary_line() {
        let s = GenerationSummary {
            generation: 2,
            total: 5,
            games: 64,
            selfplay: Some((1280, 20.0)),
            training: (200, 400, 10.0),
            loss: Some(2.3456),
            gate: "gate +3 =1 -0 -> promoted".into(),
            seconds: 95.0,
        };
        assert_eq!(
            s.to_string(),
            "generation 2/5 done: 64 games, 64.0 positions/s; 200 training steps, 20.0 steps/s, loss 2.346; \
             gate +3 =1 -0 -> promoted; 1m 35s"
        );
    }
}
