//! `martian-zero export`: writes a model bundle for other frontends
//! (`docs/model-format.md`): `model.safetensors`, `model.json` and the traced
//! TorchScript module `model.pt`. `tools/export_onnx.py` adds `model.onnx`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use martian_evaluate::MatchResult;
use martian_model::export::{describe, export_bundle, read_description, EvalInfo, ONNX_FILE};
use martian_model::ConfigModel;
use martian_rules::GameState;
use martian_selfplay::names::{generation_prefix, parse_generation_prefix};

use crate::with_game;
use martian_run::checkpoints::{declared_rules, load_checkpoint, resolve_source, ModelSource};
use martian_run::results::{FinalEval, GateRecord};

/// Arguments of `export`.
#[derive(clap::Args)]
pub struct Args {
    /// Model to export: a checkpoint (`.safetensors` with its `.json` sidecar),
    /// a run directory (exports its best checkpoint), or an exported bundle
    /// directory (re-exported with its provenance and evaluations).
    #[arg(long)]
    checkpoint: PathBuf,
    /// Output directory (created; existing bundle files are replaced).
    #[arg(long)]
    out: PathBuf,
}

/// Runs `export`.
pub fn run(a: Args) -> Result<()> {
    check_out(&a.out)?;
    let source = resolve_source(&a.checkpoint)?;
    let (game, rules) = declared_rules(&source)?;
    with_game!(game, G => export_game::<G>(&source, &rules, &a.out))
}

fn export_game<G: GameState>(source: &ModelSource, rules: &serde_json::Value, out: &Path) -> Result<()> {
    let at = source.path();
    let rules: G::Rules = serde_json::from_value(rules.clone())
        .with_context(|| format!("the rules of {} are not valid {} rules", at.display(), G::KIND))?;
    let mut ck = load_checkpoint::<G>(at, &rules, ConfigModel::Absent, tch::Device::Cpu)?;
    // A bundle keeps the name of the checkpoint it was exported from, and its evaluations.
    let (name, evaluations) = match source {
        ModelSource::Checkpoint(weights) => (file_name(weights), evaluations_of(weights)),
        ModelSource::Bundle(dir) => {
            let d = read_description(dir)?;
            (d.training.source_checkpoint, d.evaluations)
        }
    };
    let desc = describe::<G>(&ck.meta, &name, evaluations)?;
    let report = export_bundle::<G>(&mut ck, &desc, out)?;
    println!(
        "exported {name} ({}, step {}) to {}: model.safetensors, model.pt, model.json",
        G::KIND,
        ck.meta.step,
        report.dir.display()
    );
    for (b, d) in &report.checks {
        println!("  TorchScript check, batch {b}: max |Rust - TorchScript| = {d:.3e}");
    }
    match &desc.elo {
        Some(e) => println!(
            "  last evaluation ({}): vs {}: +{} ={} -{}{}",
            e.source,
            e.opponent,
            e.wins,
            e.draws,
            e.losses,
            e.elo.map(|x| format!(", Elo {x:+.0}")).unwrap_or_default()
        ),
        None => println!("  no evaluation results found beside the checkpoint"),
    }
    let venv = std::env::var("MARTIAN_ZERO_VENV").unwrap_or_else(|_| "~/.cache/martian-zero/venv".into());
    if report.removed_onnx {
        println!(
            "  removed the earlier export's {ONNX_FILE} (another network's): write this one's with the line below"
        );
    }
    println!("  ONNX: {venv}/bin/python tools/export_onnx.py {}", report.dir.display());
    Ok(())
}

fn file_name(p: &Path) -> String {
    p.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string()
}

/// Result of `m` from the side of player A (`as_a`) or B.
fn eval_info(source: &str, opponent: &str, m: &MatchResult, as_a: bool) -> EvalInfo {
    let e = m.elo.as_ref();
    if as_a {
        EvalInfo {
            source: source.into(),
            opponent: opponent.into(),
            wins: m.wins,
            draws: m.draws,
            losses: m.losses,
            score: e.map(|e| e.score),
            elo: e.map(|e| e.elo).filter(|x| x.is_finite()),
            elo_low: e.map(|e| e.elo_low).filter(|x| x.is_finite()),
            elo_high: e.map(|e| e.elo_high).filter(|x| x.is_finite()),
        }
    } else {
        EvalInfo {
            source: source.into(),
            opponent: opponent.into(),
            wins: m.losses,
            draws: m.draws,
            losses: m.wins,
            score: e.map(|e| 1.0 - e.score),
            elo: e.map(|e| -e.elo).filter(|x| x.is_finite()),
            elo_low: e.map(|e| -e.elo_high).filter(|x| x.is_finite()),
            elo_high: e.map(|e| -e.elo_low).filter(|x| x.is_finite()),
        }
    }
}

/// Matches of the checkpoint at `weights` recorded in its run directory
/// (`R/models/<name>` with `R/eval/gen*.json` and `R/final-eval.json`), oldest
/// first; the final evaluation lists the match against random before the one
/// against the untrained network. Unreadable files are skipped.
fn evaluations_of(weights: &Path) -> Vec<EvalInfo> {
    let mut out = Vec::new();
    let name = file_name(weights);
    let Some(models) = weights.parent() else {
        return out;
    };
    if models.file_name().and_then(|n| n.to_str()) != Some(martian_run::layout::MODELS) {
        return out;
    }
    let Some(root) = models.parent() else {
        return out;
    };
    let mut gates: Vec<GateRecord> = std::fs::read_dir(root.join(martian_run::layout::EVAL))
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let g = e.file_name().to_str().and_then(parse_generation_prefix).filter(|(_, rest)| *rest == ".json")?.0;
            Some((g, e.path()))
        })
        .filter_map(|(g, path)| match GateRecord::read(&path, g) {
            Ok(g) => Some(g),
            Err(e) => {
                eprintln!("warning: {e:#}; its match is left out of model.json");
                None
            }
        })
        .collect();
    gates.sort_by_key(|g| g.generation);
    for g in &gates {
        let source = martian_run::layout::object(
            martian_run::layout::EVAL,
            &format!("{}.json", generation_prefix(g.generation)),
        );
        if g.candidate == name {
            out.push(eval_info(&source, &g.best, &g.result, true));
        } else if g.best == name {
            out.push(eval_info(&source, &g.candidate, &g.result, false));
        }
    }
    let final_path = root.join(martian_run::layout::FINAL_EVAL);
    let final_eval: Option<FinalEval> = match final_path.exists() {
        false => None,
        true => martian_run::records::read_json(&final_path, "a final-evaluation record")
            .map_err(|e| eprintln!("warning: {e:#}; its matches are left out of model.json"))
            .ok(),
    };
    if let Some(f) = final_eval.filter(|f| f.trained == name) {
        out.push(eval_info(martian_run::layout::FINAL_EVAL, "random", &f.vs_random, true));
        out.push(eval_info(martian_run::layout::FINAL_EVAL, "gen0000.safetensors (untrained)", &f.vs_untrained, true));
    }
    out
}

/// Checks that `dir` is not a file.
fn check_out(dir: &Path) -> Result<()> {
    if dir.is_file() {
        bail!("--out {} is a file, expected a directory", dir.display());
    }
    Ok(())
}
