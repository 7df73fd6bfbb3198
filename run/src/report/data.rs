//! Reading a run directory for the report: its matches, gate records, games,
//! checkpoints and training log, typed (the writers' own record structs).

use crate::ladder::LadderRecord;
use crate::metrics::GenerationMetrics;
use crate::records::{self, Skipped};
use crate::results::{FinalEval, GateRecord, GauntletRecord};
use anyhow::{bail, Result};
use martian_evaluate::elo_estimate;
use martian_evaluate::MatchResult;
use martian_model::CheckpointMeta;
use martian_rules::{with_game, GameState};
use martian_selfplay::names::{find_generation, parse_generation_prefix};
use martian_selfplay::GameRecord;
use martian_train::Metrics;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One match found in the run's evaluation files.
#[derive(Clone, Debug)]
pub(super) struct Match {
    pub(super) a: String,
    pub(super) b: String,
    pub(super) wins: u32,
    pub(super) draws: u32,
    pub(super) losses: u32,
}

/// A gate record's essentials.
#[derive(Clone, Debug)]
pub(super) struct Gate {
    pub(super) generation: u32,
    pub(super) candidate: String,
    pub(super) best: String,
    pub(super) promoted: bool,
    /// W/D/L of the candidate.
    pub(super) wdl: Option<(u32, u32, u32)>,
    pub(super) reason: String,
}

/// Self-play games of one generation.
#[derive(Default)]
pub(super) struct GenGames {
    pub(super) lengths: Vec<u32>,
    pub(super) results: BTreeMap<String, u32>,
    pub(super) first_wins: u32,
    pub(super) second_wins: u32,
    pub(super) draws: u32,
    pub(super) models: BTreeSet<String>,
}

/// A checkpoint's sidecar essentials.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ckpt {
    pub(super) step: u64,
    pub(super) created: f64,
}

/// Everything the report shows.
pub(super) struct RunData {
    pub(super) config: String,
    pub(super) train: Vec<BTreeMap<String, f64>>,
    pub(super) games: BTreeMap<u32, GenGames>,
    pub(super) matches: Vec<Match>,
    pub(super) gates: Vec<Gate>,
    pub(super) gens: BTreeMap<u32, GenerationMetrics>,
    pub(super) ckpts: BTreeMap<u32, Ckpt>,
    pub(super) ladder: Vec<LadderRecord>,
    /// Input the report could not read and left out, one line per file
    /// (`FILE: N damaged lines skipped (line L: why; ...)`, `FILE is damaged: why; left out`).
    pub(super) unreadable: Vec<String>,
}

/// The promotion rule of the run's config (for gate records without a reason).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum GateRule {
    Score(f64),
    Sprt,
    Unknown,
}

/// `genNNNN` in a name, as a number.
pub(super) fn generation_of(name: &str) -> Option<u32> {
    find_generation(name).map(|(_, g, _)| g)
}

/// The name with its generation number replaced by `*` (players of one kind
/// across generations, e.g. `mcts:model=gen*.safetensors,visits=32`).
pub(super) fn family_of(name: &str) -> String {
    match find_generation(name) {
        Some((i, _, digits)) => format!("{}gen*{}", &name[..i], &name[i + 3 + digits..]),
        None => name.to_string(),
    }
}

/// A short form of a player name for tables and legends.
pub(super) fn short(name: &str) -> String {
    name.replace("mcts:model=", "").replace(".safetensors", "")
}

/// A record of `eval/` or `final-eval.json`, read by its type (the writers'
/// own structs, so that a field renamed there cannot be misread here).
#[derive(serde::Deserialize)]
#[serde(untagged)]
pub(super) enum EvalRecord {
    /// `eval/genNNNN.json`.
    Gate(Box<GateRecord>),
    /// `final-eval.json`.
    Final(Box<FinalEval>),
    /// `eval/ladder-genNNNN.json`.
    Ladder(Box<LadderRecord>),
    /// `eval/ladder-calibration.json`.
    Calibration(Box<crate::ladder::Calibration>),
    /// `eval/gauntlet-*.json`.
    Gauntlet(Box<GauntletRecord>),
    /// `eval/match-*.json`.
    Match(Box<MatchResult>),
}

impl EvalRecord {
    /// Reads the record `path` as the kind its file name says (so that an
    /// error names the field at fault, which the untagged fallback cannot);
    /// a name of no known kind is read as whichever kind it parses as.
    ///
    /// # Errors
    /// As [`records::read_json`]: one line naming the file and the problem.
    pub(super) fn read(path: &std::path::Path) -> anyhow::Result<EvalRecord> {
        use crate::layout::{FINAL_EVAL, LADDER_CALIBRATION, LADDER_PREFIX};
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        Ok(if name == FINAL_EVAL {
            EvalRecord::Final(records::read_json(path, "a final evaluation record")?)
        } else if name == LADDER_CALIBRATION {
            EvalRecord::Calibration(records::read_json(path, "a ladder calibration record")?)
        } else if name.starts_with(LADDER_PREFIX) {
            EvalRecord::Ladder(records::read_json(path, "a ladder record")?)
        } else if let Some((g, ".json")) = martian_selfplay::names::parse_generation_prefix(name) {
            EvalRecord::Gate(Box::new(GateRecord::read(path, g)?))
        } else if name.starts_with("gauntlet-") {
            EvalRecord::Gauntlet(records::read_json(path, "a gauntlet record")?)
        } else if name.starts_with("match-") {
            EvalRecord::Match(records::read_json(path, "a match record")?)
        } else {
            records::read_json(path, "an evaluation record")?
        })
    }

    /// The matches the record holds.
    pub(super) fn matches(&self) -> Vec<&MatchResult> {
        match self {
            EvalRecord::Gate(g) => vec![&g.result],
            EvalRecord::Final(f) => vec![&f.vs_untrained, &f.vs_random],
            EvalRecord::Ladder(l) => l.matches.iter().collect(),
            EvalRecord::Calibration(c) => c.matches.iter().collect(),
            EvalRecord::Gauntlet(g) => g.matches.iter().collect(),
            EvalRecord::Match(m) => vec![m.as_ref()],
        }
    }
}

pub(super) fn sorted_files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == ext)).collect()
        })
        .unwrap_or_default();
    v.retain(|p| !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.')));
    v.sort();
    v
}

/// The names of the first mover of a recorded game, from its start position
/// under its rules: its side (`Black`, `South`, the team `SW+NE`, ...:
/// [`GameState::side_name`]) and its player ([`GameState::player_name`]: the
/// seat in four-player free-for-all); `None` when the position does not load.
pub(super) fn first_mover(rec: &GameRecord) -> Option<(&'static str, &'static str)> {
    with_game!(rec.game, G => {
        let rules: <G as GameState>::Rules =
            rec.rules.clone().and_then(|r| serde_json::from_value(r).ok()).unwrap_or_default();
        G::from_position(&rec.start, &rules)
            .ok()
            .map(|s| (G::side_name(s.side_to_move()), s.player_name(s.player_to_move())))
    })
}

/// Whether the record's `winner` names the first mover `(side, player)`: the
/// side (two-player games, teams, and free-for-all records written before
/// seats were named), or one of the seats of a free-for-all win (`NW`,
/// `SW,NE`: a shared win counts for each seat that shares it).
pub(super) fn won_by(winner: &str, (side, player): (&str, &str)) -> bool {
    winner == side || winner.split(',').any(|w| w == player)
}

/// The gate rule of the run's config (typed: [`crate::config::RunConfig`]);
/// `Unknown` for a config this version cannot read.
pub(super) fn gate_rule(config: &str) -> GateRule {
    match crate::config::RunConfig::parse(config) {
        Ok(c) => match c.evaluate.gate {
            crate::config::GateKind::Sprt => GateRule::Sprt,
            crate::config::GateKind::Score => GateRule::Score(c.evaluate.gate_score),
        },
        Err(_) => GateRule::Unknown,
    }
}

pub(super) fn load(root: &Path) -> Result<RunData> {
    if !root.is_dir() {
        bail!("{} is not a directory", root.display());
    }
    let mut skipped = Skipped::default();
    let config = match std::fs::read(root.join(crate::layout::CONFIG)) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(_) => format!("(no {})", crate::layout::CONFIG),
    };
    let rule = gate_rule(&config);
    // One line per step, in step order: a log that repeats steps (written by a
    // version that kept the lines of an interrupted generation) keeps the last
    // line of each step, so that no curve runs back on itself.
    let mut by_step: BTreeMap<u64, BTreeMap<String, f64>> = BTreeMap::new();
    let train_log = root.join(crate::layout::TRAIN_LOG);
    match records::read_json_lines::<Metrics>(&train_log, "a training log line") {
        Ok(lines) => {
            skipped.lines(&train_log, &lines.bad);
            for (_, m) in lines.records {
                // The typed line as (name, number) pairs for the charts.
                let row: BTreeMap<String, f64> = match serde_json::to_value(&m) {
                    Ok(Value::Object(o)) => o.iter().filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x))).collect(),
                    _ => BTreeMap::new(),
                };
                by_step.insert(m.step, row);
            }
        }
        Err(e) => skipped.file(&e),
    }
    let train: Vec<BTreeMap<String, f64>> = by_step.into_values().collect();
    let mut games: BTreeMap<u32, GenGames> = BTreeMap::new();
    for f in sorted_files(&root.join(crate::layout::GAMES), "jsonl") {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let g = generation_of(name).unwrap_or(0);
        let lines = match records::read_game_records(&f) {
            Ok(l) => l,
            Err(e) => {
                skipped.file(&e);
                continue;
            }
        };
        // A record of another generation (a file copied under this name) is
        // named and left out: game ids carry their generation.
        let mut bad = lines.bad;
        let mut kept = Vec::new();
        for (line, rec) in lines.records {
            match crate::spool::generation_of_game(rec.game_id) {
                made if g > 0 && made != g => bad.push(records::BadLine {
                    line,
                    why: format!("game {} was played in generation {made}, not {g}", rec.game_id),
                }),
                _ => kept.push(rec),
            }
        }
        skipped.lines(&f, &bad);
        for rec in kept {
            let e = games.entry(g).or_default();
            e.lengths.push(rec.plies);
            e.models.insert(rec.model.clone());
            let reason = split_camel(&format!("{:?}", rec.reason));
            let winner = rec.winner.as_deref();
            let key = match winner {
                Some(_) => format!("win: {reason}"),
                None => format!("draw: {reason}"),
            };
            *e.results.entry(key).or_default() += 1;
            let first = first_mover(&rec);
            match (winner, first) {
                (None, _) => e.draws += 1,
                (Some(w), Some(f)) if won_by(w, f) => e.first_wins += 1,
                (Some(_), Some(_)) => e.second_wins += 1,
                (Some(_), None) => {}
            }
        }
    }
    let mut matches = Vec::new();
    let mut gates = Vec::new();
    let mut files = sorted_files(&root.join(crate::layout::EVAL), "json");
    files.push(root.join(crate::layout::FINAL_EVAL));
    for f in files.iter().filter(|f| f.exists()) {
        let rec: EvalRecord = match EvalRecord::read(f) {
            Ok(r) => r,
            Err(e) => {
                skipped.file(&e);
                continue;
            }
        };
        matches.extend(rec.matches().into_iter().map(|m| Match {
            a: m.a.clone(),
            b: m.b.clone(),
            wins: m.wins,
            draws: m.draws,
            losses: m.losses,
        }));
        if let EvalRecord::Gate(v) = rec {
            let r = &v.result;
            let wdl = Some((r.wins, r.draws, r.losses));
            let reason = if v.reason.is_empty() {
                derived_reason(&rule, wdl, v.promoted, v.sprt.as_ref().map(|s| s.llr))
            } else {
                v.reason.clone()
            };
            gates.push(Gate {
                generation: v.generation,
                candidate: v.candidate.clone(),
                best: v.best.clone(),
                promoted: v.promoted,
                wdl,
                reason,
            });
        }
    }
    gates.sort_by_key(|g| g.generation);
    let mut ckpts = BTreeMap::new();
    for f in sorted_files(&root.join(crate::layout::MODELS), "json") {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let Some(g) = parse_generation_prefix(name).filter(|&(_, rest)| rest == ".json").map(|(g, _)| g) else {
            continue;
        };
        match records::read_json::<CheckpointMeta>(&f, "a checkpoint sidecar") {
            Ok(v) => {
                ckpts.insert(g, Ckpt { step: v.step, created: v.created_unix_s as f64 });
            }
            Err(e) => skipped.file(&e),
        }
    }
    let gens = crate::metrics::read_reporting(root, &mut skipped);
    let unreadable = skipped.notes().to_vec();
    Ok(RunData { config, train, games, matches, gates, gens, ckpts, ladder: crate::ladder::records(root), unreadable })
}

/// The reason of a gate record written before records kept one, from the config's rule.
pub(super) fn derived_reason(
    rule: &GateRule,
    wdl: Option<(u32, u32, u32)>,
    promoted: bool,
    llr: Option<f64>,
) -> String {
    let score = wdl.and_then(|(w, d, l)| elo_estimate(w, d, l)).map(|e| e.score);
    match rule {
        GateRule::Sprt => match llr {
            Some(l) => format!("SPRT: LLR {l:.2}, {}", if promoted { "H1 accepted" } else { "H1 not accepted" }),
            None => "SPRT".into(),
        },
        GateRule::Score(s) if *s <= 0.0 => format!("always promote: gate_score = {s}, the score is not checked"),
        GateRule::Score(s) => match score {
            Some(x) => format!("score {x:.3} {} gate_score {s}", if promoted { ">=" } else { "<" }),
            None => format!("gate_score {s}"),
        },
        GateRule::Unknown => String::new(),
    }
}

/// `PrincessCaptured` -> `princess captured`.
pub(super) fn split_camel(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out
}
