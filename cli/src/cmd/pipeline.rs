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

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use martian_model::{Checkpoint, ConfigModel};
use martian_search::AbGame;
use serde::{Deserialize, Serialize};

use crate::checkpoints::load_checkpoint;
use crate::config::{GateKind, RunConfig};
use crate::ops::{describe_match, run_match_with, selfplay_games, train_generation, PlayerSpec};
use crate::rundir::{write_atomic, RunDir};
use crate::with_game;

/// Arguments of `pipeline`.
#[derive(clap::Args)]
pub struct Args {
    /// Run configuration (TOML).
    #[arg(long)]
    config: PathBuf,
    /// Run directory (created, or resumed if it exists).
    #[arg(long)]
    run_dir: PathBuf,
    /// Stop after this many generations of this invocation (for tests and
    /// staged runs; the config's `pipeline.generations` is the total).
    #[arg(long)]
    stop_after: Option<u32>,
}

/// `eval/gen<g>.json`: the gate match of a generation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateRecord {
    /// Generation.
    pub generation: u32,
    /// Candidate checkpoint file.
    pub candidate: String,
    /// Best checkpoint file at the time.
    pub best: String,
    /// Whether the candidate was promoted.
    pub promoted: bool,
    /// The match.
    pub result: martian_evaluate::MatchResult,
    /// The SPRT state at the end of the match (`gate = "sprt"` only).
    #[serde(default)]
    pub sprt: Option<martian_evaluate::SprtState>,
}

/// Runs `pipeline`.
pub fn run(a: Args) -> Result<()> {
    let cfg = RunConfig::load(&a.config)?;
    with_game!(cfg.game, G => run_game::<G>(&a, &cfg))
}

fn file_name(p: &Path) -> String {
    p.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string()
}

fn run_game<G: AbGame>(a: &Args, cfg: &RunConfig) -> Result<()> {
    let rules = cfg.rules::<G>()?;
    let run = RunDir::open(&a.run_dir, cfg)?;
    let device = super::setup_runtime(cfg)?;
    let _worker =
        crate::spool::WorkerLock::acquire(run.root(), "0").context("the pipeline plays as self-play worker 0")?;
    // Temporaries of writes a kill interrupted (the pipeline owns these directories).
    for d in [run.root().to_path_buf(), run.models(), run.root().join("eval"), run.root().join("report")] {
        crate::spool::remove_temporaries(&d, None);
    }
    let t0 = std::time::Instant::now();
    let out_of_time = || cfg.pipeline.max_minutes > 0.0 && t0.elapsed().as_secs_f64() > cfg.pipeline.max_minutes * 60.0;
    if !RunDir::complete(&run.checkpoint(0)) {
        let ck = Checkpoint::new_random::<G>(&rules, &cfg.model, device, cfg.seed as i64)?;
        ck.save(&run.checkpoint(0))?;
        eprintln!("generation 0: initialised {}", run.checkpoint(0).display());
    }
    if run.best().is_none() {
        run.set_best(&run.checkpoint(0))?;
    }
    let mut ran = 0;
    for g in 1..=cfg.pipeline.generations {
        if run.gate_result(g).exists() {
            // Finished earlier; make sure a promotion decided there took effect.
            let rec: GateRecord =
                serde_json::from_str(&std::fs::read_to_string(run.gate_result(g))?).with_context(|| {
                    format!("reading {} (delete it to play generation {g}'s gate again)", run.gate_result(g).display())
                })?;
            if rec.promoted && run.best().map(|b| file_name(&b)) < Some(rec.candidate.clone()) {
                run.set_best(&run.models().join(&rec.candidate))?;
            }
            if g == cfg.pipeline.generations || !run.gate_result(g + 1).exists() {
                rebuild_eval_log(&run)?;
            }
            // A kill between the gate and the ladder: play the ladder now.
            if crate::ladder::due(&cfg.evaluate, g, cfg.pipeline.generations)
                && !crate::ladder::record_path(&run, g).exists()
            {
                ladder_step::<G>(cfg, &rules, &run, g, device)?;
            }
            continue;
        }
        if a.stop_after.is_some_and(|n| ran >= n) {
            eprintln!("stopping before generation {g} (run the same command to continue)");
            return Ok(());
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
                let rec = ladder_step::<G>(cfg, &rules, &run, g - 1, device)?;
                println!("{}", crate::ladder::describe(&rec));
            }
            return Ok(());
        }
        let best = run.best().context("run has no best checkpoint")?;
        // 1. Self-play.
        let want = cfg.pipeline.games_per_generation as u64;
        let have = run.games_done(g);
        if have < want {
            eprintln!("generation {g}: self-play {} games with {}", want - have, file_name(&best));
            let ck = load_checkpoint::<G>(&best, &rules, ConfigModel::Fixed(&cfg.model), device)?;
            let out = run.selfplay_out(g, "0");
            let name = file_name(&best);
            let replay = cfg.selfplay.exact_resume && cfg.selfplay.fixed_batch == 0;
            let st = selfplay_games::<G>(cfg, &rules, Some((&ck, &name)), device, want - have, &out, replay)?;
            let (h, top, kl, ln_legal) = st.targets.means();
            eprintln!(
                "generation {g}: {} games, {} positions, {:.1} positions/s, network {:.0}% of the time; \
                 policy targets: entropy {h:.2} nats (uniform {ln_legal:.2}), top {top:.3}, KL to the prior {kl:.3}",
                st.games,
                st.moves,
                st.moves as f64 / st.seconds.max(1e-9),
                100.0 * st.eval_seconds / st.seconds.max(1e-9)
            );
        }
        // 2. Train.
        eprintln!("generation {g}: training");
        let cand = train_generation::<G>(cfg, &rules, &run, g, device)?;
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
        eprintln!("generation {g}: {} -> {}", describe_match(&m), if promoted { "promoted" } else { "not promoted" });
        let rec = GateRecord {
            generation: g,
            candidate: file_name(&cand),
            best: file_name(&best),
            promoted,
            result: m,
            sprt: sprt_state,
        };
        write_atomic(&run.gate_result(g), serde_json::to_string_pretty(&rec)?.as_bytes())?;
        rebuild_eval_log(&run)?;
        if promoted {
            run.set_best(&cand)?;
        }
        if crate::ladder::due(&cfg.evaluate, g, cfg.pipeline.generations) {
            ladder_step::<G>(cfg, &rules, &run, g, device)?;
        }
        super::report::refresh(run.root());
        ran += 1;
    }
    final_evaluation::<G>(cfg, &rules, &run, device)?;
    let newest = (1..=cfg.pipeline.generations).rev().find(|&g| crate::ladder::record_path(&run, g).exists());
    if let Some(g) = newest {
        let rec = crate::ladder::play::<G>(cfg, &rules, &run, g, &run.checkpoint(g), device)?;
        println!("{}", crate::ladder::describe(&rec));
    }
    Ok(())
}

/// Plays generation `g`'s ladder with the promoted network and prints its rating.
fn ladder_step<G: AbGame>(
    cfg: &RunConfig,
    rules: &G::Rules,
    run: &RunDir,
    g: u32,
    device: tch::Device,
) -> Result<crate::ladder::LadderRecord> {
    let best = run.best().context("run has no best checkpoint")?;
    let rec = crate::ladder::play::<G>(cfg, rules, run, g, &best, device)?;
    eprintln!("generation {g}: {}", crate::ladder::describe(&rec));
    Ok(rec)
}

/// Rewrites `evals.jsonl` from the gate records `eval/gen*.json`, one line
/// each in generation order. The log is derived from the records, so a kill
/// between writing a record and the log can neither drop nor repeat a line.
///
/// # Errors
/// An unreadable gate record (named) or an I/O error.
fn rebuild_eval_log(run: &RunDir) -> Result<()> {
    let mut lines = String::new();
    for g in 1.. {
        let p = run.gate_result(g);
        if !p.exists() {
            break;
        }
        let rec: GateRecord = serde_json::from_str(&std::fs::read_to_string(&p)?)
            .with_context(|| format!("reading {} (delete it to play generation {g}'s gate again)", p.display()))?;
        lines.push_str(&serde_json::to_string(&rec)?);
        lines.push('\n');
    }
    write_atomic(&run.eval_log(), lines.as_bytes())
}

/// `final-eval.json`: the newest generation against the untrained network and random.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FinalEval {
    /// The trained checkpoint evaluated.
    pub trained: String,
    /// The best (promoted) checkpoint at the end.
    pub best: String,
    /// Trained vs the untrained generation 0.
    pub vs_untrained: martian_evaluate::MatchResult,
    /// Trained vs uniformly random moves.
    pub vs_random: martian_evaluate::MatchResult,
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
        let f: FinalEval = serde_json::from_str(&std::fs::read_to_string(&path)?)
            .with_context(|| format!("reading {} (delete it to play the final evaluation again)", path.display()))?;
        // A run extended with more generations evaluates its new newest one.
        if f.trained == file_name(&trained) {
            println!("final evaluation (from {}):", path.display());
            println!("  {}", describe_match(&f.vs_untrained));
            println!("  {}", describe_match(&f.vs_random));
            return Ok(());
        }
        eprintln!(
            "final evaluation: {} covers {}, not the newest {}; playing it again",
            path.display(),
            f.trained,
            file_name(&trained)
        );
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
    super::report::refresh(run.root());
    println!("final evaluation ({}):", path.display());
    println!("  {}", describe_match(&f.vs_untrained));
    println!("  {}", describe_match(&f.vs_random));
    Ok(())
}
