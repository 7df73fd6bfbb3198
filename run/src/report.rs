//! The report of a run directory (`martian-zero report`): `R/report.md` and a self-contained `R/report.html`
//! (inline SVG charts drawn with plotters' SVG backend, which writes `<text>`
//! elements, so no font files or scripts are needed; the charts scale with
//! the window) from the files of a run directory:
//!
//! * the ladder Elo of the promoted network by generation, wall time,
//!   self-play games and training steps (`eval/ladder-gen*.json`);
//! * Elo of every player with 95% intervals: a Bradley-Terry fit over all
//!   games of the run (`eval/*.json`, `final-eval.json`), anchored at
//!   `alphabeta:depth=1`, else `random`, else generation 0 (= 0); players
//!   with no games linking them to the anchor are rated within their own
//!   group and flagged, players that won (lost) every game are shown as a
//!   bound (`> +X`), next to the chain of gate matches;
//! * training curves over steps with generation boundaries (`train.jsonl`):
//!   losses, policy accuracy, learning rate, value MSE, replay window, training
//!   samples/s;
//! * per generation (`generations.jsonl`, `games/*.jsonl`): self-play
//!   positions/s and network evaluations/s, the held-out check (loss of
//!   network `g - 1` on generation `g`'s fresh games, policy entropy,
//!   KL(target || network), value calibration), first-player win rate, draw
//!   rate, end reasons, game lengths and their histogram;
//! * the gate matches with the reason of each promotion, the crosstable of all
//!   matches and the settings (`config.toml`).
//!
//! The SVG files are also written to `R/report/` (linked from `report.md`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};
use martian_evaluate::{elo_estimate, fit_ratings, PairResult, Rating, Ratings};
use plotters::prelude::*;
use serde_json::Value;

use martian_evaluate::MatchResult;
use martian_model::CheckpointMeta;
use martian_rules::{with_game, GameState};
use martian_selfplay::names::{find_generation, parse_generation_prefix};
use martian_selfplay::GameRecord;
use martian_train::Metrics;

use crate::io::write_atomic;
use crate::ladder::LadderRecord;
use crate::metrics::GenerationMetrics;
use crate::records::{self, Skipped};
use crate::results::{FinalEval, GateRecord, GauntletRecord, PRIOR_SD_ELO};

/// Rewrites the report of `root`, printing a warning instead of failing
/// (used by the pipeline after each evaluation).
pub fn refresh(root: &Path) {
    match write_report(root, None) {
        Ok((_, html)) => eprintln!("report: {}", crate::io::shown(&html)),
        Err(e) => eprintln!("warning: report not written: {e:#}"),
    }
}

/// One match found in the run's evaluation files.
#[derive(Clone, Debug)]
struct Match {
    a: String,
    b: String,
    wins: u32,
    draws: u32,
    losses: u32,
}

/// A gate record's essentials.
#[derive(Clone, Debug)]
struct Gate {
    generation: u32,
    candidate: String,
    best: String,
    promoted: bool,
    /// W/D/L of the candidate.
    wdl: Option<(u32, u32, u32)>,
    reason: String,
}

/// Self-play games of one generation.
#[derive(Default)]
struct GenGames {
    lengths: Vec<u32>,
    results: BTreeMap<String, u32>,
    first_wins: u32,
    second_wins: u32,
    draws: u32,
    models: BTreeSet<String>,
}

/// A checkpoint's sidecar essentials.
#[derive(Clone, Copy, Debug)]
struct Ckpt {
    step: u64,
    created: f64,
}

/// Everything the report shows.
struct RunData {
    config: String,
    train: Vec<BTreeMap<String, f64>>,
    games: BTreeMap<u32, GenGames>,
    matches: Vec<Match>,
    gates: Vec<Gate>,
    gens: BTreeMap<u32, GenerationMetrics>,
    ckpts: BTreeMap<u32, Ckpt>,
    ladder: Vec<LadderRecord>,
    /// Input the report could not read and left out, one line per file
    /// (`FILE: N damaged lines skipped (line L: why; ...)`, `FILE is damaged: why; left out`).
    unreadable: Vec<String>,
}

/// The promotion rule of the run's config (for gate records without a reason).
#[derive(Clone, Debug, PartialEq)]
enum GateRule {
    Score(f64),
    Sprt,
    Unknown,
}

/// `genNNNN` in a name, as a number.
fn generation_of(name: &str) -> Option<u32> {
    find_generation(name).map(|(_, g, _)| g)
}

/// The name with its generation number replaced by `*` (players of one kind
/// across generations, e.g. `mcts:model=gen*.safetensors,visits=32`).
fn family_of(name: &str) -> String {
    match find_generation(name) {
        Some((i, _, digits)) => format!("{}gen*{}", &name[..i], &name[i + 3 + digits..]),
        None => name.to_string(),
    }
}

/// A short form of a player name for tables and legends.
fn short(name: &str) -> String {
    name.replace("mcts:model=", "").replace(".safetensors", "")
}

/// A record of `eval/` or `final-eval.json`, read by its type (the writers'
/// own structs, so that a field renamed there cannot be misread here).
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum EvalRecord {
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
    /// The matches the record holds.
    fn matches(&self) -> Vec<&MatchResult> {
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

fn sorted_files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == ext)).collect()
        })
        .unwrap_or_default();
    v.retain(|p| !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.')));
    v.sort();
    v
}

/// The side name of the first mover of a recorded game (`Black`, `South`,
/// `SW+NE`, ...: [`GameState::side_name`]), from its start position under its
/// rules; `None` when the position does not load.
fn first_mover(rec: &GameRecord) -> Option<&'static str> {
    with_game!(rec.game, G => {
        let rules: <G as GameState>::Rules =
            rec.rules.clone().and_then(|r| serde_json::from_value(r).ok()).unwrap_or_default();
        G::from_position(&rec.start, &rules).ok().map(|s| G::side_name(s.side_to_move()))
    })
}

fn gate_rule(config: &str) -> GateRule {
    let Ok(v) = config.parse::<toml::Table>() else { return GateRule::Unknown };
    let e = v.get("evaluate").and_then(|e| e.as_table());
    if e.and_then(|e| e.get("gate")).and_then(|g| g.as_str()) == Some("sprt") {
        return GateRule::Sprt;
    }
    let score = e.and_then(|e| e.get("gate_score")).and_then(|x| x.as_float().or(x.as_integer().map(|i| i as f64)));
    // The config's default gate score.
    GateRule::Score(score.unwrap_or(crate::config::EvaluateConfig::default().gate_score))
}

fn load(root: &Path) -> Result<RunData> {
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
        skipped.lines(&f, &lines.bad);
        for (_, rec) in lines.records {
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
                (Some(w), Some(f)) if w == f => e.first_wins += 1,
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
        let rec: EvalRecord = match records::read_json(f, "an evaluation record") {
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
fn derived_reason(rule: &GateRule, wdl: Option<(u32, u32, u32)>, promoted: bool, llr: Option<f64>) -> String {
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
fn split_camel(s: &str) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
    }
    out
}

/// Players of the anchor's group (not themselves perfect) that are linked to
/// the anchor only through one-sided pairings (one player won every game
/// between them): their distance from the anchor has no finite
/// maximum-likelihood value and is set by the prior.
fn prior_placed(matches: &[Match], anchor: &str, r: &Ratings) -> Vec<String> {
    let pair = pairings(matches);
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (&(a, b), &(s, n)) in &pair {
        if n > 0 && s > 0.0 && s < n as f64 {
            adj.entry(a).or_default().push(b);
            adj.entry(b).or_default().push(a);
        }
    }
    let mut seen = BTreeSet::from([anchor]);
    let mut stack = vec![anchor];
    while let Some(p) = stack.pop() {
        for &q in adj.get(p).map(|v| v.as_slice()).unwrap_or(&[]) {
            if seen.insert(q) {
                stack.push(q);
            }
        }
    }
    r.players
        .iter()
        .filter(|p| p.relative_to.is_none() && !p.perfect && !seen.contains(p.name.as_str()))
        .map(|p| p.name.clone())
        .collect()
}

/// Aggregated pairings `(a, b) -> (points of a, games)` with `a < b`.
fn pairings(matches: &[Match]) -> BTreeMap<(&str, &str), (f64, u32)> {
    let mut pair: BTreeMap<(&str, &str), (f64, u32)> = BTreeMap::new();
    for m in matches {
        let (k, s) = if m.a <= m.b {
            ((m.a.as_str(), m.b.as_str()), m.wins as f64 + 0.5 * m.draws as f64)
        } else {
            ((m.b.as_str(), m.a.as_str()), m.losses as f64 + 0.5 * m.draws as f64)
        };
        let e = pair.entry(k).or_default();
        e.0 += s;
        e.1 += m.wins + m.draws + m.losses;
    }
    pair
}

/// The players of the largest group linked by informative pairings (neither
/// side won every game: their distances are measured, not set by the prior);
/// most players, then most games. With no informative pairing, by any games.
fn largest_group(matches: &[Match]) -> BTreeSet<String> {
    let pairs = pairings(matches);
    let informative = pairs.values().any(|&(s, n)| n > 0 && s > 0.0 && s < n as f64);
    let mut adj: BTreeMap<&str, Vec<(&str, u32)>> = BTreeMap::new();
    for (&(a, b), &(s, n)) in &pairs {
        if n > 0 && (!informative || (s > 0.0 && s < n as f64)) {
            adj.entry(a).or_default().push((b, n));
            adj.entry(b).or_default().push((a, n));
        }
    }
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut best: (BTreeSet<String>, u32) = (BTreeSet::new(), 0);
    for &start in adj.keys() {
        if !seen.insert(start) {
            continue;
        }
        let mut group = BTreeSet::from([start.to_string()]);
        let mut games = 0;
        let mut stack = vec![start];
        while let Some(p) = stack.pop() {
            for &(q, n) in &adj[p] {
                games += n;
                if seen.insert(q) {
                    group.insert(q.to_string());
                    stack.push(q);
                }
            }
        }
        if (group.len(), games) > (best.0.len(), best.1) {
            best = (group, games);
        }
    }
    best.0
}

/// The anchor: `wanted` (which must be a player), else from the largest
/// group of players linked by informative results ([`largest_group`]):
/// `alphabeta:depth=1`, else `random`, else generation 0, else its first
/// player (one that won or lost every game only as a last resort).
fn choose_anchor(players: &[String], matches: &[Match], wanted: Option<&str>) -> Result<Option<String>> {
    if let Some(w) = wanted {
        if players.iter().any(|p| p == w) {
            return Ok(Some(w.to_string()));
        }
        if players.is_empty() {
            bail!("--anchor {w}: the run has no evaluation matches yet");
        }
        bail!("--anchor {w}: no such player in the run's matches; players: {}", players.join(", "));
    }
    let main = largest_group(matches);
    // A player that won or lost every game is a poor anchor: the others'
    // distance from it would rest on the prior.
    let mixed = |p: &str| {
        let (mut pts, mut n) = (0.0, 0u32);
        for m in matches {
            let g = m.wins + m.draws + m.losses;
            if m.a == p {
                pts += m.wins as f64 + 0.5 * m.draws as f64;
            } else if m.b == p {
                pts += m.losses as f64 + 0.5 * m.draws as f64;
            } else {
                continue;
            }
            n += g;
        }
        n > 0 && pts > 0.0 && pts < n as f64
    };
    let gen0 = main.iter().find(|p| generation_of(p) == Some(0)).cloned();
    let order: Vec<String> = ["alphabeta:depth=1".to_string(), "random".to_string()]
        .into_iter()
        .chain(gen0)
        .chain(main.iter().cloned())
        .filter(|p| main.contains(p))
        .collect();
    Ok(order.iter().find(|p| mixed(p)).or(order.first()).or(players.first()).cloned())
}

// ---------------------------------------------------------------- charts

/// The report charts: (file stem, section, title, SVG).
type Chart = (&'static str, &'static str, &'static str, String);

const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Size of every chart (the HTML scales it to the page width).
const CHART_W: u32 = 900;
const CHART_H: u32 = 380;
/// Width of the legend column right of the plot (legends never cover data).
const LEGEND_W: u32 = 230;

macro_rules! pe {
    ($e:expr) => {
        $e.map_err(|e| anyhow!("chart: {e}"))?
    };
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mark {
    /// Line through the points, with a dot on each.
    Line,
    /// Points with vertical 95% bars (`err`).
    ErrorBars,
    /// Filled rectangles (`rects`).
    Bars,
    /// A horizontal line across the plot at `pts[0].1`.
    HLine,
    /// A dashed line (e.g. the diagonal of perfect calibration).
    Dashed,
}

/// One series of a chart.
struct Series {
    name: String,
    mark: Mark,
    color: RGBColor,
    pts: Vec<(f64, f64)>,
    /// `(x, y, low, high)` for [`Mark::ErrorBars`].
    err: Vec<(f64, f64, f64, f64)>,
    /// `(x, bound, above)`: only a lower (`above`) or upper bound is known:
    /// a triangle at the bound and a bar to the edge of the plot.
    open: Vec<(f64, f64, bool)>,
    rects: Vec<(f64, f64, f64, f64)>,
}

impl Series {
    fn new(name: impl Into<String>, mark: Mark, i: usize) -> Series {
        Series {
            name: name.into(),
            mark,
            color: PALETTE[i % PALETTE.len()],
            pts: Vec::new(),
            err: Vec::new(),
            open: Vec::new(),
            rects: Vec::new(),
        }
    }

    fn with(mut self, pts: Vec<(f64, f64)>) -> Series {
        self.pts = pts.into_iter().filter(|p| p.0.is_finite() && p.1.is_finite()).collect();
        self
    }

    fn is_empty(&self) -> bool {
        self.pts.is_empty() && self.err.is_empty() && self.open.is_empty() && self.rects.is_empty()
    }
}

/// What a chart shows besides its series.
struct Spec<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    /// The x axis counts (generations): integer labels only.
    x_int: bool,
    /// Fixed y range ends.
    y_min: Option<f64>,
    y_max: Option<f64>,
    x_min: Option<f64>,
    x_max: Option<f64>,
    /// Dashed vertical lines (generation boundaries on a step axis).
    vlines: Vec<f64>,
    empty: &'a str,
}

impl<'a> Spec<'a> {
    fn new(title: &'a str, x_desc: &'a str, y_desc: &'a str) -> Spec<'a> {
        Spec {
            title,
            x_desc,
            y_desc,
            x_int: false,
            y_min: None,
            y_max: None,
            x_min: None,
            x_max: None,
            vlines: Vec::new(),
            empty: "no data yet",
        }
    }
}

/// A tick label: integers without decimals, no `-0`, at most 3 decimals.
fn tick(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    let r = v.round();
    if (v - r).abs() < 1e-9 * v.abs().max(1.0) {
        let i = r as i64;
        return if i.abs() >= 100_000 { format!("{:.0}k", r / 1000.0) } else { i.to_string() };
    }
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.').to_string();
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// A tick label of a counting axis: integers only (other ticks unlabelled).
fn int_tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        tick(v)
    } else {
        String::new()
    }
}

fn padded(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if hi <= lo {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return (lo - pad, hi + pad);
    }
    let pad = (hi - lo) * 0.06;
    (lo - pad, hi + pad)
}

/// Replaces the marker texts `@@OPEN:name@@` and `@@CLOSE@@` by `<g class="name">` and `</g>`.
fn wrap_groups(svg: &str) -> String {
    let mut out = String::with_capacity(svg.len());
    let mut rest = svg;
    while let Some(m) = rest.find("@@") {
        let Some(t0) = rest[..m].rfind("<text") else { break };
        let Some(t1) = rest[m..].find("</text>").map(|i| m + i + "</text>".len()) else { break };
        let inner = rest[m + 2..].split("@@").next().unwrap_or("");
        out.push_str(&rest[..t0]);
        match inner.strip_prefix("OPEN:") {
            Some(name) => {
                let _ = write!(out, "<g class=\"{name}\">");
            }
            None => out.push_str("</g>"),
        }
        rest = &rest[t1..];
    }
    out.push_str(rest);
    out
}

/// Draws a chart: plot on the left, legend in its own column on the right.
fn chart(spec: &Spec, series: &[Series]) -> Result<String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (CHART_W, CHART_H)).into_drawing_area();
        pe!(root.fill(&WHITE));
        let (plot, legend) = root.split_horizontally(CHART_W - LEGEND_W);
        let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
        let mut see = |x: Option<f64>, y: Option<f64>| {
            if let Some(x) = x.filter(|x| x.is_finite()) {
                x0 = x0.min(x);
                x1 = x1.max(x);
            }
            if let Some(y) = y.filter(|y| y.is_finite()) {
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
        };
        for s in series {
            for &(x, y) in &s.pts {
                see((s.mark != Mark::HLine).then_some(x), Some(y));
            }
            for &(x, y, lo, hi) in &s.err {
                see(Some(x), Some(y));
                see(None, Some(lo));
                see(None, Some(hi));
            }
            for &(x, b, _) in &s.open {
                see(Some(x), Some(b));
            }
            for &(a, b, c, d) in &s.rects {
                see(Some(a), Some(b));
                see(Some(c), Some(d));
            }
        }
        let any = series.iter().any(|s| !s.is_empty() && s.mark != Mark::HLine);
        let (mut xa, mut xb) = if spec.x_int && x0.is_finite() { (x0 - 0.5, x1 + 0.5) } else { padded(x0, x1) };
        let (mut ya, mut yb) = padded(y0, y1);
        if let Some(v) = spec.x_min {
            xa = v;
        }
        if let Some(v) = spec.x_max {
            xb = v;
        }
        if let Some(v) = spec.y_min {
            ya = v;
        }
        if let Some(v) = spec.y_max {
            yb = v.max(ya + 1e-9);
        }
        if !any {
            (xa, xb, ya, yb) = (0.0, 1.0, 0.0, 1.0);
        }
        let mut ch = pe!(ChartBuilder::on(&plot)
            .caption(spec.title, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(xa..xb, ya..yb));
        let span = xb - xa;
        let x_labels = if spec.x_int { (span.round() as usize + 1).clamp(2, 12) } else { 10 };
        let fx = |x: &f64| if spec.x_int { int_tick(*x) } else { tick(*x) };
        let fy = |y: &f64| tick(*y);
        pe!(ch
            .configure_mesh()
            .x_labels(x_labels)
            .y_labels(8)
            .x_label_formatter(&fx)
            .y_label_formatter(&fy)
            .x_desc(spec.x_desc)
            .y_desc(spec.y_desc)
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 14))
            .draw());
        if !any {
            pe!(plot.draw(&Text::new(spec.empty.to_string(), (280, 180), ("sans-serif", 18))));
            pe!(root.present());
            drop(ch);
        } else {
            let grey = RGBColor(150, 150, 150);
            for &v in &spec.vlines {
                pe!(ch.draw_series(DashedLineSeries::new([(v, ya), (v, yb)], 4, 4, grey.stroke_width(1))));
            }
            pe!(plot.draw(&Text::new("@@OPEN:data@@", (0, 0), ("sans-serif", 1))));
            for s in series {
                let c = s.color;
                match s.mark {
                    Mark::Line => {
                        pe!(ch.draw_series(LineSeries::new(s.pts.iter().copied(), c.stroke_width(2))));
                        pe!(ch.draw_series(s.pts.iter().map(|&p| Circle::new(p, 3, c.filled()))));
                    }
                    Mark::ErrorBars => {
                        pe!(ch.draw_series(s.err.iter().map(|&(x, y, lo, hi)| ErrorBar::new_vertical(
                            x,
                            lo,
                            y,
                            hi,
                            c.stroke_width(2),
                            8
                        ))));
                        pe!(ch.draw_series(s.err.iter().map(|&(x, y, _, _)| Circle::new((x, y), 4, c.filled()))));
                    }
                    Mark::Bars => {
                        pe!(ch.draw_series(
                            s.rects.iter().map(|&(a, b, cc, d)| Rectangle::new([(a, b), (cc, d)], c.filled()))
                        ));
                    }
                    Mark::HLine => {
                        if let Some(&(_, y)) = s.pts.first() {
                            pe!(ch.draw_series(LineSeries::new([(xa, y), (xb, y)], c.stroke_width(1))));
                        }
                    }
                    Mark::Dashed => {
                        pe!(ch.draw_series(DashedLineSeries::new(s.pts.iter().copied(), 6, 4, c.stroke_width(1))));
                    }
                }
                for &(x, b, above) in &s.open {
                    let end = if above { yb } else { ya };
                    pe!(ch.draw_series(LineSeries::new([(x, b), (x, end)], c.stroke_width(2))));
                    pe!(ch.draw_series([TriangleMarker::new((x, b), 6, c.filled())]));
                }
            }
            pe!(plot.draw(&Text::new("@@CLOSE@@", (0, 0), ("sans-serif", 1))));
            // Legend column.
            pe!(legend.draw(&Text::new("@@OPEN:legend@@", (0, 0), ("sans-serif", 1))));
            let mut y = 44;
            let entries = series.iter().filter(|s| !s.is_empty() && !s.name.is_empty());
            for s in entries {
                let c = s.color;
                let yc = y + 7;
                match s.mark {
                    Mark::Bars => pe!(legend.draw(&Rectangle::new([(6, yc - 6), (20, yc + 6)], c.filled()))),
                    Mark::ErrorBars => pe!(legend.draw(&Circle::new((13, yc), 4, c.filled()))),
                    _ => pe!(legend.draw(&PathElement::new(vec![(4, yc), (24, yc)], c.stroke_width(2)))),
                }
                let mut name: String = s.name.chars().take(28).collect();
                if s.name.chars().count() > 28 {
                    name.push('…');
                }
                pe!(legend.draw(&Text::new(name, (30, y), ("sans-serif", 13))));
                y += 20;
                if y > CHART_H as i32 - 30 {
                    break;
                }
            }
            if series.iter().any(|s| !s.open.is_empty()) {
                pe!(legend.draw(&TriangleMarker::new((13, y + 7), 6, BLACK.filled())));
                pe!(legend.draw(&Text::new("bound only (all won/lost)", (30, y), ("sans-serif", 13))));
                y += 20;
            }
            if !spec.vlines.is_empty() {
                let g = RGBColor(150, 150, 150);
                pe!(legend.draw(&PathElement::new(vec![(4, y + 7), (24, y + 7)], g.stroke_width(1))));
                pe!(legend.draw(&Text::new("generation boundary", (30, y), ("sans-serif", 13))));
            }
            pe!(legend.draw(&Text::new("@@CLOSE@@", (0, 0), ("sans-serif", 1))));
            pe!(root.present());
        }
    }
    Ok(wrap_groups(&buf))
}

// ---------------------------------------------------------------- tables

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A table built once, written as Markdown and as HTML (numbers right-aligned).
struct Table {
    head: Vec<(String, bool)>,
    rows: Vec<Vec<String>>,
    /// Columns holding code (player names).
    code: Vec<bool>,
}

impl Table {
    /// `cols`: (header, numeric).
    fn new(cols: &[(&str, bool)]) -> Table {
        Table {
            head: cols.iter().map(|c| (c.0.to_string(), c.1)).collect(),
            rows: Vec::new(),
            code: vec![false; cols.len()],
        }
    }

    fn code(mut self, col: usize) -> Table {
        self.code[col] = true;
        self
    }

    fn md(&self) -> String {
        let mut s = String::from("|");
        for (h, _) in &self.head {
            let _ = write!(s, " {h} |");
        }
        s.push_str("\n|");
        for (_, num) in &self.head {
            s.push_str(if *num { "---:|" } else { "---|" });
        }
        s.push('\n');
        for r in &self.rows {
            s.push('|');
            for (i, c) in r.iter().enumerate() {
                if self.code[i] && !c.is_empty() {
                    let _ = write!(s, " `{c}` |");
                } else {
                    let _ = write!(s, " {} |", c.replace('|', "\\|"));
                }
            }
            s.push('\n');
        }
        s
    }

    fn html(&self) -> String {
        let mut s = String::from("<div class=\"scroll\"><table><tr>");
        for (h, num) in &self.head {
            let _ = write!(s, "<th{}>{}</th>", if *num { " class=\"num\"" } else { "" }, esc(h));
        }
        s.push_str("</tr>\n");
        for r in &self.rows {
            s.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                let cls = if self.head[i].1 { " class=\"num\"" } else { "" };
                if self.code[i] {
                    let _ = write!(s, "<td{cls}><code>{}</code></td>", esc(c));
                } else {
                    let _ = write!(s, "<td{cls}>{}</td>", esc(c));
                }
            }
            s.push_str("</tr>\n");
        }
        s.push_str("</table></div>\n");
        s
    }
}

// ---------------------------------------------------------------- the report

/// What the report computed, shared by the Markdown and HTML writers.
struct View {
    name: String,
    summary: String,
    warnings: Vec<String>,
    notes: Vec<String>,
    sections: Vec<(String, String, Vec<Table>)>,
    charts: Vec<Chart>,
    crosstable: Table,
    crosstable_key: Table,
    config: String,
}

/// Builds and writes the report; returns the paths of `report.md` and `report.html`.
///
/// # Errors
/// Unreadable run files, an `anchor` that is not a player, or failed writes.
pub fn write_report(root: &Path, anchor: Option<&str>) -> Result<(PathBuf, PathBuf)> {
    let d = load(root)?;
    let v = build(root, &d, anchor)?;
    let svg_dir = root.join(crate::layout::REPORT_DIR);
    for (stem, _, _, svg) in &v.charts {
        write_atomic(&svg_dir.join(format!("{stem}.svg")), svg.as_bytes())?;
    }
    let md_path = root.join(crate::layout::REPORT_MD);
    write_atomic(&md_path, markdown(&v).as_bytes())?;
    let html_path = root.join(crate::layout::REPORT_HTML);
    write_atomic(&html_path, html(&v).as_bytes())?;
    Ok((md_path, html_path))
}

fn mean(v: &[u32]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
    }
}

fn build(root: &Path, d: &RunData, anchor: Option<&str>) -> Result<View> {
    let name = std::fs::canonicalize(root)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| root.display().to_string());
    let mut warnings: Vec<String> = d.unreadable.clone();
    let mut notes = Vec::new();
    // Ratings.
    let results: Vec<PairResult> = d
        .matches
        .iter()
        .map(|m| PairResult { a: m.a.clone(), b: m.b.clone(), wins: m.wins, draws: m.draws, losses: m.losses })
        .collect();
    let mut players: Vec<String> = d.matches.iter().flat_map(|m| [m.a.clone(), m.b.clone()]).collect();
    players.sort();
    players.dedup();
    let anchor = choose_anchor(&players, &d.matches, anchor)?;
    let (ratings, fit_note) = match &anchor {
        Some(a) if !results.is_empty() => match fit_ratings(&results, a, PRIOR_SD_ELO) {
            Ok(r) => (Some(r), String::new()),
            Err(e) => {
                warnings.push(format!("no rating fit: {e}"));
                (None, format!("no rating fit: {e}"))
            }
        },
        _ => (None, "no evaluation matches yet".to_string()),
    };
    let anchor_text = anchor.clone().unwrap_or_else(|| "-".into());
    let one_sided = ratings.as_ref().map(|r| prior_placed(&d.matches, &anchor_text, r)).unwrap_or_default();
    if let Some(r) = &ratings {
        let mut groups: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for p in r.disconnected() {
            groups.entry(p.relative_to.as_deref().unwrap_or("?")).or_default().push(&p.name);
        }
        for (reference, members) in groups {
            warnings.push(format!(
                "{} player(s) have no games linking them to the anchor `{anchor_text}`: {}. They are rated relative to \
                 `{reference}` (= 0) within their own group; their Elo is not comparable with the others'.",
                members.len(),
                members.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
            ));
        }
        if !one_sided.is_empty() {
            notes.push(format!(
                "{} are linked to the anchor `{anchor_text}` only through matches that one side won (or lost) \
                 entirely: how far apart the two sides are rests on the prior (sd {PRIOR_SD_ELO} Elo), not on the \
                 games; their ratings relative to the anchor are not measured, only the order.",
                one_sided.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
            ));
        }
        let perfect: Vec<&Rating> = r.players.iter().filter(|p| p.perfect).collect();
        if !perfect.is_empty() {
            notes.push(format!(
                "{} won or lost every game: such a result has no finite Elo, so only a one-sided 95% bound is shown \
                 (`> +X`: every game won, a result with probability 5% at +X with the opponents at their \
                 ratings; `< X` the same for every game lost); the fit places them with its prior alone (sd \
                 {PRIOR_SD_ELO} Elo).",
                perfect.iter().map(|p| format!("`{}`", p.name)).collect::<Vec<_>>().join(", ")
            ));
        }
    }
    let always = d.gates.iter().filter(|g| g.reason.starts_with("always promote")).count();
    if always > 0 {
        warnings.push(format!(
            "{always} gate(s) promoted the candidate whatever the result (`[evaluate] gate_score = 0`: always promote), \
             also when it lost the gate match."
        ));
    }
    let n_games: usize = d.games.values().map(|g| g.lengths.len()).sum();
    let n_match_games: u32 = d.matches.iter().map(|m| m.wins + m.draws + m.losses).sum();
    let last_step = d.train.iter().filter_map(|m| m.get("step")).fold(0f64, |a, &b| a.max(b));
    let rated = ratings.as_ref().map(|r| r.players.len()).unwrap_or(0);
    let summary = format!(
        "{n_games} self-play games in {} generations; {} training steps ({} log lines); {} evaluation matches \
         ({n_match_games} games) among {} players, {rated} rated.",
        d.games.len(),
        last_step as u64,
        d.train.len(),
        d.matches.len(),
        players.len(),
    );
    let mut sections = Vec::new();

    // Ladder table.
    if !d.ladder.is_empty() {
        let mut t = Table::new(&[
            ("generation", true),
            ("network", false),
            ("ladder Elo (95%)", true),
            ("games", true),
            ("score", true),
            ("alpha-beta version", true),
        ])
        .code(1);
        for r in &d.ladder {
            t.rows.push(vec![
                r.generation.to_string(),
                r.network.clone(),
                crate::ladder::rating_text(&r.rating),
                r.rating.games.to_string(),
                format!("{:.3}", r.rating.score),
                r.alphabeta_version.to_string(),
            ]);
        }
        sections.push((
            "Elo against the alpha-beta ladder".to_string(),
            format!(
                "The promoted network (MCTS, `[evaluate] simulations` visits) against the fixed alpha-beta players, \
                 rated with their calibrated ratings held fixed (anchor `{}` = 0; `docs/evaluation.md`).",
                d.ladder[0].anchor
            ),
            vec![t],
        ));
    }
    // Ratings table.
    let mut t =
        Table::new(&[("player", false), ("Elo (95%)", true), ("games", true), ("score", true), ("note", false)])
            .code(0);
    if let Some(r) = &ratings {
        for p in &r.players {
            let mut note = Vec::new();
            if p.name == anchor_text {
                note.push("anchor".to_string());
            }
            if let Some(x) = p.relative_to.as_ref().filter(|x| **x != p.name) {
                note.push(format!("not connected to the anchor: relative to {x}"));
            }
            if p.perfect {
                note.push(if p.score > 0.5 { "won every game".into() } else { "lost every game".into() });
            }
            if one_sided.contains(&p.name) {
                note.push("distance from the anchor set by the prior".into());
            }
            if p.relative_to.as_deref() == Some(p.name.as_str()) {
                note.push("reference of its group".to_string());
            }
            let elo = rating_cell(p, &anchor_text);
            t.rows.push(vec![p.name.clone(), elo, p.games.to_string(), format!("{:.3}", p.score), note.join("; ")]);
        }
    }
    sections.push((
        "Ratings".to_string(),
        format!(
            "Bradley-Terry fit over all games, anchor `{anchor_text}` = 0, 95% intervals (weak prior, sd {PRIOR_SD_ELO} \
             Elo). {fit_note}"
        ),
        vec![t],
    ));
    // Gate table.
    let mut t = Table::new(&[
        ("generation", true),
        ("candidate", false),
        ("best", false),
        ("result", true),
        ("Elo (95%)", true),
        ("promoted", false),
        ("why", false),
    ]);
    for g in &d.gates {
        let (res, e) = match g.wdl {
            Some((w, dr, l)) => {
                (format!("+{w} ={dr} -{l}"), elo_estimate(w, dr, l).map(|e| e.text()).unwrap_or_else(|| "-".into()))
            }
            None => ("-".into(), "-".into()),
        };
        t.rows.push(vec![
            g.generation.to_string(),
            g.candidate.clone(),
            g.best.clone(),
            res,
            e,
            if g.promoted { "yes" } else { "no" }.into(),
            g.reason.clone(),
        ]);
    }
    sections.push((
        "Gate matches".to_string(),
        "Each candidate against the best network of its time, and why it was promoted or not.".to_string(),
        vec![t],
    ));
    // Self-play by generation.
    let mut t = Table::new(&[
        ("generation", true),
        ("played by", false),
        ("games", true),
        ("first-player wins", true),
        ("draws", true),
        ("mean plies", true),
        ("positions/s", true),
        ("NN evals/s", true),
    ]);
    for (&g, gg) in &d.games {
        let n = gg.lengths.len().max(1) as f64;
        let sp = d.gens.get(&g).and_then(|m| m.selfplay.as_ref());
        t.rows.push(vec![
            g.to_string(),
            gg.models.iter().map(|m| short(m)).collect::<Vec<_>>().join(", "),
            gg.lengths.len().to_string(),
            format!("{:.1}%", 100.0 * gg.first_wins as f64 / n),
            format!("{:.1}%", 100.0 * gg.draws as f64 / n),
            format!("{:.1}", mean(&gg.lengths)),
            sp.map(|s| format!("{:.0}", s.positions_per_s())).unwrap_or_else(|| "-".into()),
            sp.map(|s| format!("{:.0}", s.nn_evals_per_s())).unwrap_or_else(|| "-".into()),
        ]);
    }
    sections.push((
        "Self-play by generation".to_string(),
        "Generation g's games were played by the best network after generation g-1 (generation g-1 itself if it \
         was promoted) and are the newest training data of generation g."
            .to_string(),
        vec![t],
    ));

    let charts = charts(d, ratings.as_ref(), &one_sided)?;

    // Crosstable: players numbered in rating order.
    let order: Vec<String> = match &ratings {
        Some(r) => {
            let mut o: Vec<String> = r.players.iter().map(|p| p.name.clone()).collect();
            o.extend(players.iter().filter(|p| r.get(p).is_none()).cloned());
            o
        }
        None => players.clone(),
    };
    let mut cross: BTreeMap<(String, String), (u32, u32, u32)> = BTreeMap::new();
    for m in &d.matches {
        let e = cross.entry((m.a.clone(), m.b.clone())).or_default();
        *e = (e.0 + m.wins, e.1 + m.draws, e.2 + m.losses);
        let e = cross.entry((m.b.clone(), m.a.clone())).or_default();
        *e = (e.0 + m.losses, e.1 + m.draws, e.2 + m.wins);
    }
    let heads: Vec<String> = (1..=order.len()).map(|i| format!("#{i}")).collect();
    let mut cols: Vec<(&str, bool)> = vec![("", false)];
    cols.extend(heads.iter().map(|h| (h.as_str(), true)));
    let mut crosstable = Table::new(&cols);
    for (i, r) in order.iter().enumerate() {
        let mut row = vec![format!("#{}", i + 1)];
        for c in &order {
            row.push(cross.get(&(r.clone(), c.clone())).map(|(w, d, l)| format!("+{w} ={d} -{l}")).unwrap_or_default());
        }
        crosstable.rows.push(row);
    }
    let mut crosstable_key = Table::new(&[("#", true), ("player", false), ("Elo (95%)", true)]).code(1);
    for (i, p) in order.iter().enumerate() {
        let e =
            ratings.as_ref().and_then(|r| r.get(p)).map(|r| rating_cell(r, &anchor_text)).unwrap_or_else(|| "-".into());
        crosstable_key.rows.push(vec![(i + 1).to_string(), p.clone(), e]);
    }
    Ok(View { name, summary, warnings, notes, sections, charts, crosstable, crosstable_key, config: d.config.clone() })
}

/// A rating as table text: `0 (fixed)` for the anchor and group references
/// (rated 0 by definition), else [`Rating::text`].
fn rating_cell(p: &Rating, anchor: &str) -> String {
    if p.name == anchor || p.relative_to.as_deref() == Some(p.name.as_str()) {
        "0 (fixed)".to_string()
    } else {
        p.text()
    }
}

/// Every chart of the report.
fn charts(d: &RunData, ratings: Option<&Ratings>, prior_set: &[String]) -> Result<Vec<Chart>> {
    let mut out: Vec<Chart> = Vec::new();
    let gen_spec = |title: &'static str, y: &'static str| {
        let mut s = Spec::new(title, "generation", y);
        s.x_int = true;
        s
    };
    // Self-play charts: generation g's games come from the network of generation g - 1.
    let games_spec = |title: &'static str, y: &'static str| {
        let mut s = Spec::new(title, "generation (games played by the best network after g-1)", y);
        s.x_int = true;
        s
    };
    // Ladder Elo by generation, wall time, games and steps.
    let t0 = d.ckpts.get(&0).map(|c| c.created).filter(|&t| t > 0.0);
    let finished = |g: u32| -> Option<f64> {
        d.gens.get(&g).and_then(|m| m.finished_unix_s).or(d.ckpts.get(&g).map(|c| c.created)).filter(|&t| t > 0.0)
    };
    let games_until = |g: u32| -> f64 { d.games.range(..=g).map(|(_, x)| x.lengths.len() as f64).sum() };
    // Without ladder records: the Bradley-Terry Elo of the kind of generation
    // player with the most generations (e.g. the gate players).
    let has_ladder = !d.ladder.is_empty();
    let mut fit_fams: BTreeMap<String, Vec<&Rating>> = BTreeMap::new();
    for p in ratings.map(|r| r.players.iter()).into_iter().flatten() {
        if p.relative_to.is_none() && generation_of(&p.name).is_some() {
            fit_fams.entry(family_of(&p.name)).or_default().push(p);
        }
    }
    let main_fam = fit_fams.iter().max_by_key(|(_, v)| v.len());
    let ladder_series = |x_of: &dyn Fn(u32) -> Option<f64>| -> Series {
        let mut s = Series::new("network on the ladder", Mark::ErrorBars, 0);
        let mut add = |g: u32, elo: f64, low: f64, high: f64, perfect: bool, score: f64| {
            let Some(x) = x_of(g) else { return };
            if perfect {
                s.open.push((x, if score > 0.5 { low } else { high }, score > 0.5));
            } else {
                s.err.push((x, elo, low, high));
            }
        };
        if has_ladder {
            for r in &d.ladder {
                let f = &r.rating;
                add(r.generation, f.elo, f.low, f.high, f.perfect, f.score);
            }
        } else if let Some((fam, ps)) = main_fam {
            for p in ps {
                add(generation_of(&p.name).unwrap_or(0), p.elo, p.low, p.high, p.perfect, p.score);
            }
            s.name = format!("fit: {}", short(fam));
        }
        s
    };
    let baselines = |i0: usize| -> Vec<Series> {
        d.ladder
            .last()
            .map(|r| {
                r.opponents
                    .iter()
                    .enumerate()
                    .map(|(i, (name, e))| Series::new(name.clone(), Mark::HLine, i0 + i).with(vec![(0.0, *e)]))
                    .collect()
            })
            .unwrap_or_default()
    };
    let with_base = |mut v: Vec<Series>| {
        v.extend(baselines(2));
        v
    };
    let y_desc = if has_ladder { "Elo (ladder scale)" } else { "Elo (Bradley-Terry fit)" };
    let pick = |ladder: &'static str, fit: &'static str| if has_ladder { ladder } else { fit };
    let mut s = gen_spec(pick("Ladder Elo of the promoted network", "Elo of the generations (no ladder yet)"), y_desc);
    s.empty = "no ladder match or evaluation yet";
    let t = pick("Ladder Elo by generation", "Elo by generation");
    out.push(("ladder", "Strength", t, chart(&s, &with_base(vec![ladder_series(&|g| Some(g as f64))]))?));
    let t = pick("Ladder Elo against wall time", "Elo against wall time");
    let mut s = Spec::new(t, "minutes since the run started", y_desc);
    s.empty = "no ladder match or evaluation yet";
    let by_time = ladder_series(&|g| Some((finished(g)? - t0?) / 60.0));
    out.push(("ladder-time", "Strength", t, chart(&s, &with_base(vec![by_time]))?));
    let t = pick("Ladder Elo against self-play games", "Elo against self-play games");
    let mut s = Spec::new(t, "self-play games", y_desc);
    s.empty = "no ladder match or evaluation yet";
    s.x_int = true;
    let by_games = ladder_series(&|g| Some(games_until(g)));
    out.push(("ladder-games", "Strength", t, chart(&s, &with_base(vec![by_games]))?));
    let t = pick("Ladder Elo against training steps", "Elo against training steps");
    let mut s = Spec::new(t, "training step", y_desc);
    s.empty = "no ladder match or evaluation yet";
    s.x_int = true;
    let by_steps = ladder_series(&|g| d.ckpts.get(&g).map(|c| c.step as f64));
    out.push(("ladder-steps", "Strength", t, chart(&s, &with_base(vec![by_steps]))?));

    // Bradley-Terry Elo by generation: one series per kind of player, the gate chain, baselines.
    let mut series = Vec::new();
    let mut fams: BTreeMap<String, Vec<&Rating>> = BTreeMap::new();
    let mut base = Vec::new();
    if let Some(r) = ratings {
        for p in r.players.iter().filter(|p| p.relative_to.is_none()) {
            if generation_of(&p.name).is_some() {
                fams.entry(family_of(&p.name)).or_default().push(p);
            } else {
                base.push(p);
            }
        }
    }
    let nf = fams.len().max(1) as f64;
    for (i, (fam, ps)) in fams.iter().enumerate() {
        let dx = if nf > 1.0 { (i as f64 - (nf - 1.0) / 2.0) * 0.25 / nf } else { 0.0 };
        let mut s = Series::new(format!("fit: {}", short(fam)), Mark::ErrorBars, i);
        for p in ps {
            let x = generation_of(&p.name).unwrap_or(0) as f64 + dx;
            if p.perfect {
                s.open.push((x, if p.score > 0.5 { p.low } else { p.high }, p.score > 0.5));
            } else {
                s.err.push((x, p.elo, p.low, p.high));
            }
        }
        series.push(s);
    }
    // Gate chain: gen 0 = its fitted Elo (or 0); gen g = Elo(best) + gate Elo, while finite.
    let mut chain_elo: BTreeMap<u32, f64> = BTreeMap::new();
    let gen0 = ratings
        .and_then(|r| r.players.iter().find(|p| generation_of(&p.name) == Some(0) && p.relative_to.is_none()))
        .map(|p| p.elo)
        .unwrap_or(0.0);
    chain_elo.insert(0, gen0);
    let mut chain = Series::new("gate chain (gen g vs best)", Mark::Line, fams.len());
    for g in &d.gates {
        let (Some((w, dr, l)), Some(bg)) = (g.wdl, generation_of(&g.best)) else { continue };
        let (Some(e), Some(&b)) = (elo_estimate(w, dr, l), chain_elo.get(&bg)) else { continue };
        if !e.elo.is_finite() {
            continue;
        }
        chain_elo.insert(g.generation, b + e.elo);
        chain.pts.push((g.generation as f64, b + e.elo));
    }
    series.push(chain);
    for (i, p) in base.iter().enumerate() {
        // A bound is drawn at the bound; a rating set by the prior says so.
        let (label, y) = if p.perfect {
            (format!("{} ({})", short(&p.name), p.text()), if p.score > 0.5 { p.low } else { p.high })
        } else if prior_set.contains(&p.name) {
            (format!("{} (prior)", short(&p.name)), p.elo)
        } else {
            (short(&p.name), p.elo)
        };
        series.push(Series::new(label, Mark::HLine, fams.len() + 1 + i).with(vec![(0.0, y)]));
    }
    let mut s = gen_spec("Elo of each generation (Bradley-Terry fit, 95%)", "Elo");
    s.empty = "no evaluation yet";
    out.push(("elo", "Strength", "Elo of each generation", chart(&s, &series)?));

    // Training over steps, with generation boundaries.
    let series_of = |k: &str| -> Vec<(f64, f64)> {
        d.train.iter().filter_map(|m| Some((*m.get("step")?, *m.get(k)?))).filter(|p| p.1.is_finite()).collect()
    };
    let bounds: Vec<f64> = d
        .ckpts
        .iter()
        .filter(|(&g, _)| g >= 1)
        .filter_map(|(&g, _)| d.ckpts.get(&(g - 1)))
        .map(|c| c.step as f64)
        .filter(|&s| s > 0.0)
        .collect();
    let step_spec = |title: &'static str, y: &'static str| {
        let mut s = Spec::new(title, "training step", y);
        s.vlines = bounds.clone();
        s
    };
    let losses = vec![
        Series::new("total loss", Mark::Line, 0).with(series_of("total_loss")),
        Series::new("policy loss", Mark::Line, 1).with(series_of("policy_loss")),
        Series::new("value loss", Mark::Line, 2).with(series_of("value_loss")),
    ];
    out.push(("losses", "Training", "Training losses", chart(&step_spec("Training losses", "loss (nats)"), &losses)?));
    // The auxiliary heads' Huber losses (model.moves_left_head, model.score_head), when a run has them.
    let aux: Vec<Series> = [("moves-left loss", "moves_left_loss"), ("score loss", "score_loss")]
        .into_iter()
        .enumerate()
        .map(|(i, (label, key))| Series::new(label, Mark::Line, i).with(series_of(key)))
        .filter(|s| !s.pts.is_empty())
        .collect();
    if !aux.is_empty() {
        let mut s = step_spec("Auxiliary head losses (Huber, head units)", "loss");
        s.y_min = Some(0.0);
        out.push(("aux-losses", "Training", "Auxiliary head losses", chart(&s, &aux)?));
    }
    let mut s = step_spec("Policy accuracy (top-1 vs search target)", "accuracy");
    (s.y_min, s.y_max) = (Some(0.0), Some(1.0));
    let acc = vec![Series::new("policy accuracy", Mark::Line, 0).with(series_of("policy_accuracy"))];
    out.push(("accuracy", "Training", "Policy accuracy", chart(&s, &acc)?));
    let mut s = step_spec("Learning rate", "learning rate");
    s.y_min = Some(0.0);
    out.push((
        "lr",
        "Training",
        "Learning rate",
        chart(&s, &[Series::new("learning rate", Mark::Line, 0).with(series_of("lr"))])?,
    ));
    let mut s = step_spec("Value MSE (P(win) - P(loss) vs result)", "MSE");
    s.y_min = Some(0.0);
    out.push((
        "value-mse",
        "Training",
        "Value MSE",
        chart(&s, &[Series::new("value MSE", Mark::Line, 0).with(series_of("value_mse"))])?,
    ));
    let mut s = step_spec("Replay window", "positions");
    s.y_min = Some(0.0);
    out.push((
        "window",
        "Training",
        "Replay window",
        chart(&s, &[Series::new("window size", Mark::Line, 0).with(series_of("window"))])?,
    ));

    // Throughput.
    let per_gen = |f: &dyn Fn(&GenerationMetrics) -> Option<f64>| -> Vec<(f64, f64)> {
        d.gens.iter().filter_map(|(&g, m)| Some((g as f64, f(m)?))).collect()
    };
    let mut s = games_spec("Self-play positions per second", "positions/s");
    s.y_min = Some(0.0);
    let tp = vec![
        Series::new("positions/s", Mark::Line, 0).with(per_gen(&|m| Some(m.selfplay.as_ref()?.positions_per_s())))
    ];
    out.push(("selfplay-speed", "Throughput", "Self-play positions per second", chart(&s, &tp)?));
    let mut s = games_spec("Self-play network evaluations per second", "evaluations/s");
    s.y_min = Some(0.0);
    let tp =
        vec![Series::new("NN evaluations/s", Mark::Line, 1)
            .with(per_gen(&|m| Some(m.selfplay.as_ref()?.nn_evals_per_s())))];
    out.push(("nn-speed", "Throughput", "Self-play network evaluations per second", chart(&s, &tp)?));
    let mut s = step_spec("Training throughput", "samples per second");
    s.y_min = Some(0.0);
    out.push((
        "train-speed",
        "Throughput",
        "Training throughput",
        chart(&s, &[Series::new("training samples/s", Mark::Line, 0).with(series_of("samples_per_s"))])?,
    ));

    // Health.
    let mut s = gen_spec("Held-out loss (network g-1 on generation g's new games)", "loss (nats)");
    s.y_min = Some(0.0);
    let ho = vec![
        Series::new("held-out policy loss", Mark::Line, 0).with(per_gen(&|m| Some(m.heldout.as_ref()?.policy_loss))),
        Series::new("held-out value loss", Mark::Line, 1).with(per_gen(&|m| Some(m.heldout.as_ref()?.value_loss))),
        Series::new("held-out value MSE", Mark::Line, 2).with(per_gen(&|m| Some(m.heldout.as_ref()?.value_mse))),
    ];
    out.push(("heldout", "Health", "Held-out loss", chart(&s, &ho)?));
    let mut s = games_spec("Policy entropy and KL(target || network)", "nats");
    s.y_min = Some(0.0);
    let ent = vec![
        Series::new("network entropy (held-out)", Mark::Line, 0)
            .with(per_gen(&|m| Some(m.heldout.as_ref()?.policy_entropy))),
        Series::new("KL(target||net) (held-out)", Mark::Line, 1)
            .with(per_gen(&|m| Some(m.heldout.as_ref()?.kl_target_net))),
        Series::new("target entropy (self-play)", Mark::Line, 2)
            .with(per_gen(&|m| Some(m.selfplay.as_ref()?.target_entropy))),
        Series::new("KL(target||prior) (self-play)", Mark::Line, 3)
            .with(per_gen(&|m| Some(m.selfplay.as_ref()?.kl_target_net))),
    ];
    out.push(("entropy", "Health", "Policy entropy and KL", chart(&s, &ent)?));
    let latest = d.gens.iter().rev().find_map(|(&g, m)| Some((g, m.heldout.as_ref()?)));
    let mut s = Spec::new("Value calibration (newest held-out check)", "predicted P(win) - P(loss)", "mean result");
    (s.x_min, s.x_max, s.y_min, s.y_max) = (Some(-1.0), Some(1.0), Some(-1.0), Some(1.0));
    let mut cal = Vec::new();
    if let Some((g, h)) = latest {
        cal.push(
            Series::new(format!("network {} on gen {g}", short(&h.network)), Mark::Line, 0)
                .with(h.calibration.iter().map(|b| (b.predicted, b.outcome)).collect()),
        );
        cal.push(Series::new("perfect calibration", Mark::Dashed, 7).with(vec![(-1.0, -1.0), (1.0, 1.0)]));
    }
    out.push(("calibration", "Health", "Value calibration", chart(&s, &cal)?));
    let mut s = games_spec("First-player wins and draws in self-play", "share of games");
    (s.y_min, s.y_max) = (Some(0.0), Some(1.0));
    let share = |f: &dyn Fn(&GenGames) -> u32| -> Vec<(f64, f64)> {
        d.games
            .iter()
            .filter(|(_, g)| !g.lengths.is_empty())
            .map(|(&g, gg)| (g as f64, f(gg) as f64 / gg.lengths.len() as f64))
            .collect()
    };
    let fp = vec![
        Series::new("first player wins", Mark::Line, 0).with(share(&|g| g.first_wins)),
        Series::new("second player wins", Mark::Line, 1).with(share(&|g| g.second_wins)),
        Series::new("draws", Mark::Line, 2).with(share(&|g| g.draws)),
    ];
    out.push(("first-player", "Health", "First-player wins and draws", chart(&s, &fp)?));
    // Results by reason (stacked shares).
    let mut cats: Vec<String> = d.games.values().flat_map(|g| g.results.keys().cloned()).collect();
    cats.sort();
    cats.dedup();
    let mut rs = Vec::new();
    for (ci, cat) in cats.iter().enumerate() {
        let mut s = Series::new(cat.clone(), Mark::Bars, ci);
        for (&g, gg) in &d.games {
            let total: u32 = gg.results.values().sum();
            if total == 0 {
                continue;
            }
            let below: u32 = cats[..ci].iter().map(|k| gg.results.get(k).copied().unwrap_or(0)).sum();
            let mine = gg.results.get(cat).copied().unwrap_or(0);
            if mine > 0 {
                let (b, t) = (below as f64 / total as f64, (below + mine) as f64 / total as f64);
                s.rects.push((g as f64 - 0.35, b, g as f64 + 0.35, t));
            }
        }
        rs.push(s);
    }
    let mut s = games_spec("Self-play results by reason (share of games)", "share");
    (s.y_min, s.y_max) = (Some(0.0), Some(1.0));
    s.empty = "no self-play games yet";
    out.push(("results", "Health", "Self-play results by reason", chart(&s, &rs)?));
    let lengths = vec![
        Series::new("mean plies", Mark::Line, 0)
            .with(d.games.iter().map(|(&g, gg)| (g as f64, mean(&gg.lengths))).collect()),
        Series::new("shortest", Mark::Line, 1)
            .with(d.games.iter().filter_map(|(&g, gg)| Some((g as f64, *gg.lengths.iter().min()? as f64))).collect()),
        Series::new("longest", Mark::Line, 2)
            .with(d.games.iter().filter_map(|(&g, gg)| Some((g as f64, *gg.lengths.iter().max()? as f64))).collect()),
    ];
    let mut s = games_spec("Self-play game length", "plies");
    s.y_min = Some(0.0);
    out.push(("length", "Health", "Self-play game length", chart(&s, &lengths)?));
    // Histogram of game lengths: first, middle and newest generation.
    let maxlen = d.games.values().flat_map(|g| g.lengths.iter()).copied().max().unwrap_or(0);
    let bin = (maxlen as f64 / 20.0).ceil().max(1.0);
    let keys: Vec<u32> = d.games.keys().copied().collect();
    let mut picks: Vec<u32> =
        [keys.first(), keys.get(keys.len() / 2), keys.last()].into_iter().flatten().copied().collect();
    picks.dedup();
    let mut hist = Vec::new();
    for (i, g) in picks.iter().enumerate() {
        let l = &d.games[g].lengths;
        let mut counts = [0u32; 21];
        for &x in l {
            counts[((x as f64 / bin) as usize).min(20)] += 1;
        }
        let pts = counts
            .iter()
            .enumerate()
            .map(|(k, &c)| ((k as f64 + 0.5) * bin, c as f64 / l.len().max(1) as f64))
            .collect();
        hist.push(Series::new(format!("generation {g}"), Mark::Line, i).with(pts));
    }
    let mut s = Spec::new("Game length histogram", "plies", "share of games");
    s.y_min = Some(0.0);
    s.x_min = Some(0.0);
    out.push(("length-histogram", "Health", "Game length histogram", chart(&s, &hist)?));
    Ok(out)
}

fn markdown(v: &View) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# MartianZero run report: {}\n", v.name);
    let _ = writeln!(md, "{} Open `{}` for the charts inline.\n", v.summary, crate::layout::REPORT_HTML);
    for w in &v.warnings {
        let _ = writeln!(md, "> **Warning:** {w}\n");
    }
    for n in &v.notes {
        let _ = writeln!(md, "> **Note:** {n}\n");
    }
    for (title, text, tables) in &v.sections {
        let _ = writeln!(md, "## {title}\n\n{text}\n");
        for t in tables {
            let _ = writeln!(md, "{}", t.md());
        }
    }
    let _ = writeln!(md, "## Charts\n");
    for (stem, _, title, _) in &v.charts {
        let _ = writeln!(md, "### {title}\n\n![{title}](report/{stem}.svg)\n");
    }
    let _ = writeln!(md, "## Crosstable\n\nRow player's wins, draws and losses against the column player.\n");
    let _ = writeln!(md, "{}\n{}", v.crosstable_key.md(), v.crosstable.md());
    let _ = writeln!(md, "## Settings\n\n```toml\n{}\n```", v.config.trim_end());
    md
}

/// The page's style: numbers right-aligned, wide tables scroll inside the
/// page, charts scale to the page width.
const CSS: &str = "body{font-family:sans-serif;margin:16px auto;max-width:1100px;padding:0 12px}\
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #bbb;padding:3px 8px;font-size:13px}\
th{background:#eee;text-align:left}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\
.scroll{max-width:100%;overflow-x:auto}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow-x:auto}\
.chart svg{width:100%;height:auto;display:block}.chart{margin:8px 0;max-width:960px}\
.grid{display:block}\
.warning{background:#fff3cd;border:1px solid #e0c060;padding:6px 10px;margin:6px 0}\
.note{background:#eef4fb;border:1px solid #9cc;padding:6px 10px;margin:6px 0}";

/// The chart SVG with its fixed size replaced by the page width (the viewBox keeps the aspect).
fn responsive(svg: &str) -> String {
    svg.replacen(&format!("<svg width=\"{CHART_W}\" height=\"{CHART_H}\" "), "<svg ", 1)
}

fn md_inline(s: &str) -> String {
    // `code` spans to <code>, the rest escaped.
    let mut out = String::new();
    for (i, part) in s.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", esc(part));
        } else {
            out.push_str(&esc(part));
        }
    }
    out
}

fn html(v: &View) -> String {
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>MartianZero report: {}</title>\n<style>{CSS}</style></head><body>",
        esc(&v.name)
    );
    let _ = writeln!(h, "<h1>MartianZero run report: {}</h1><p>{}</p>", esc(&v.name), md_inline(&v.summary));
    for w in &v.warnings {
        let _ = writeln!(h, "<p class=\"warning\"><b>Warning:</b> {}</p>", md_inline(w));
    }
    for n in &v.notes {
        let _ = writeln!(h, "<p class=\"note\"><b>Note:</b> {}</p>", md_inline(n));
    }
    let mut chart_sections: Vec<&str> = Vec::new();
    for (_, sec, _, _) in &v.charts {
        if !chart_sections.contains(sec) {
            chart_sections.push(sec);
        }
    }
    let write_charts = |h: &mut String, sec: &str| {
        let _ = writeln!(h, "<h2>{}</h2><div class=\"grid\">", esc(sec));
        for (stem, s, title, svg) in &v.charts {
            if *s == sec {
                let _ = writeln!(
                    h,
                    "<div class=\"chart\" id=\"{stem}\" title=\"{}\">{}</div>",
                    esc(title),
                    responsive(svg)
                );
            }
        }
        let _ = writeln!(h, "</div>");
    };
    for (i, (title, text, tables)) in v.sections.iter().enumerate() {
        let _ = writeln!(h, "<h2>{}</h2><p>{}</p>", esc(title), md_inline(text));
        for t in tables {
            h.push_str(&t.html());
        }
        if i == 1 {
            // After the ladder and ratings tables: the strength charts.
            write_charts(&mut h, "Strength");
        }
    }
    for sec in chart_sections.iter().filter(|s| **s != "Strength") {
        write_charts(&mut h, sec);
    }
    let _ = writeln!(h, "<h2>Crosstable</h2><p>Row player's wins, draws and losses against the column player.</p>");
    h.push_str(&v.crosstable_key.html());
    h.push_str(&v.crosstable.html());
    let _ = writeln!(h, "<h2>Settings</h2><pre>{}</pre></body></html>", esc(&v.config));
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Jetan initial position (a start position every record can load).
    const JETAN_START: &str = "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0";

    /// One `train.jsonl` line, written by the trainer's own type.
    fn metrics_line(step: u64, generation: u32, total_loss: f64) -> String {
        let m = Metrics {
            step,
            generation,
            lr: 0.002,
            policy_loss: total_loss - 1.0,
            value_loss: 1.0,
            total_loss,
            policy_accuracy: step as f64 / 100.0,
            value_mse: 0.5,
            moves_left_loss: None,
            score_loss: None,
            loss_scale: None,
            skipped_steps: None,
            samples_per_s: 100.0,
            window: 1000,
        };
        serde_json::to_string(&m).unwrap() + "\n"
    }

    /// One game record line, written by self-play's own type.
    fn record_line(id: u64, winner: Option<&str>, reason: martian_rules::EndReason, plies: u32, model: &str) -> String {
        let r = GameRecord {
            format_version: martian_selfplay::record::RECORD_FORMAT_VERSION,
            game: martian_rules::GameKind::Jetan,
            rules: None,
            game_id: id,
            start: JETAN_START.into(),
            moves: Vec::new(),
            winner: winner.map(str::to_string),
            reason,
            plies,
            samples: 3,
            model: model.into(),
        };
        serde_json::to_string(&r).unwrap() + "\n"
    }

    fn fixture(dir: &Path) {
        std::fs::create_dir_all(dir.join("games")).unwrap();
        std::fs::create_dir_all(dir.join("eval")).unwrap();
        std::fs::create_dir_all(dir.join("models")).unwrap();
        std::fs::write(
            dir.join("config.toml"),
            "game = \"jetan\"\nseed = 1\n[evaluate]\npairs = 2\ngate_score = 0.0\n",
        )
        .unwrap();
        let mut train = String::new();
        for step in (10..=60).step_by(10) {
            train.push_str(&metrics_line(step, 1 + (step as u32 - 1) / 30, 6.0 - step as f64 / 20.0));
        }
        std::fs::write(dir.join("train.jsonl"), train).unwrap();
        for (g, step) in [(0u32, 0u64), (1, 30), (2, 60)] {
            let meta = CheckpointMeta {
                format_version: 2,
                game: martian_rules::GameKind::Jetan,
                rules: serde_json::json!({}),
                model: martian_model::ModelConfig::default(),
                input_shape: martian_rules::GameKind::Jetan.input_shape(),
                num_actions: martian_rules::GameKind::Jetan.num_actions(),
                step,
                created_unix_s: 1_800_000_000 + 60 * g as u64,
                parent: None,
                tensors: None,
                weights_crc64: None,
            };
            std::fs::write(dir.join(format!("models/gen{g:04}.json")), serde_json::to_string(&meta).unwrap()).unwrap();
        }
        for g in 1..=2 {
            use martian_rules::EndReason::*;
            let mut lines = String::new();
            for (i, (w, r, p)) in [
                (Some("Orange"), PrincessCaptured, 40),
                (None, NoCaptureLimit, 90),
                (Some("Black"), ChiefCapturedByChief, 55),
            ]
            .into_iter()
            .enumerate()
            {
                lines.push_str(&record_line(i as u64, w, r, p, &format!("gen{:04}.safetensors", g - 1)));
            }
            std::fs::write(dir.join(format!("games/gen{g:04}-w0-000000.jsonl")), lines).unwrap();
            crate::metrics::update(dir, g, |m| {
                m.selfplay = Some(crate::metrics::SelfplayMetrics {
                    games: 3,
                    positions: 185,
                    nn_evals: 1850,
                    seconds: 1.0,
                    target_entropy: 1.5,
                    kl_target_net: 0.4,
                });
                m.finished_unix_s = Some(1_800_000_000.0 + 60.0 * g as f64);
            })
            .unwrap();
        }
        let mr = |a: &str, b: &str, w: u32, d: u32, l: u32| {
            serde_json::json!({"a": a, "b": b, "wins": w, "draws": d, "losses": l, "pentanomial": [0,0,0,0,0],
                "elo": martian_evaluate::elo_estimate(w, d, l), "games": []})
        };
        for g in 1..=2u32 {
            // Gen 2 loses its gate and is promoted all the same (gate_score = 0), in a record without a reason.
            let (w, l) = if g == 1 { (3, 2) } else { (1, 4) };
            let rec = serde_json::json!({"generation": g, "candidate": format!("gen{g:04}.safetensors"),
                "best": format!("gen{:04}.safetensors", g - 1), "promoted": true,
                "result": mr(&format!("mcts:model=gen{g:04}.safetensors,visits=8"), &format!("mcts:model=gen{:04}.safetensors,visits=8", g - 1), w, 1, l)});
            std::fs::write(dir.join(format!("eval/gen{g:04}.json")), rec.to_string()).unwrap();
        }
        // A gauntlet at other visits: not connected to the gate players.
        let gauntlet = serde_json::json!({"player": "mcts:model=gen0002.safetensors,visits=64", "matches": [
            mr("mcts:model=gen0002.safetensors,visits=64", "alphabeta:depth=1", 2, 1, 1),
            mr("mcts:model=gen0002.safetensors,visits=64", "alphabeta:depth=2", 1, 1, 2)], "ratings": null});
        std::fs::write(dir.join("eval/gauntlet-x.json"), gauntlet.to_string()).unwrap();
        let fin = serde_json::json!({"trained": "gen0002.safetensors", "best": "gen0002.safetensors",
            "vs_untrained": mr("mcts:model=gen0002.safetensors,visits=8", "mcts:model=gen0000.safetensors,visits=8", 5, 1, 0),
            "vs_random": mr("mcts:model=gen0002.safetensors,visits=8", "random", 20, 0, 0)});
        std::fs::write(dir.join("final-eval.json"), fin.to_string()).unwrap();
    }

    #[test]
    fn report_renders_from_a_fixture_run() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        let (md, html) = write_report(tmp.path(), None).unwrap();
        let md = std::fs::read_to_string(md).unwrap();
        let html = std::fs::read_to_string(html).unwrap();
        for stem in [
            "elo",
            "ladder",
            "losses",
            "accuracy",
            "lr",
            "value-mse",
            "window",
            "selfplay-speed",
            "nn-speed",
            "train-speed",
            "heldout",
            "entropy",
            "calibration",
            "first-player",
            "length",
            "results",
            "length-histogram",
        ] {
            assert!(html.contains(&format!("id=\"{stem}\"")), "{stem} missing");
            assert!(md.contains(&format!("report/{stem}.svg")));
            let svg = std::fs::read_to_string(tmp.path().join(format!("report/{stem}.svg"))).unwrap();
            assert!(svg.starts_with("<svg") && svg.contains("<text"), "{stem}: no text");
            assert!(!svg.contains("@@"), "{stem}: marker left");
        }
        // Without ladder records the strength charts show the fit of the generations.
        assert!(md.contains("### Elo against wall time") && !md.contains("### Ladder Elo"), "{md}");
        let svg = std::fs::read_to_string(tmp.path().join("report/ladder-time.svg")).unwrap();
        assert!(svg.contains("<g class=\"data\">") && svg.contains("<circle"), "{svg}");
        assert!(svg.contains("fit: gen*,visits=8"));
        // Item 1: every player is rated; the gauntlet group is flagged. The anchor comes from the
        // largest group, and not `random`, which lost every game.
        assert!(md.contains("anchor `mcts:model=gen0000.safetensors,visits=8` = 0"), "{md}");
        assert!(md.contains("| `alphabeta:depth=1` | "), "{md}");
        for p in ["mcts:model=gen0000.safetensors,visits=8", "mcts:model=gen0001.safetensors,visits=8", "random"] {
            assert!(md.contains(&format!("| `{p}` |")), "{p} not rated:\n{md}");
        }
        assert!(md.contains("not connected to the anchor: relative to"), "{md}");
        assert!(md.contains("> **Warning:** 3 player(s) have no games linking them to the anchor"), "{md}");
        assert!(md.contains("6 evaluation matches (46 games) among 7 players, 7 rated"), "{md}");
        // Item 2: no zero-width interval; a perfect score is a bound.
        assert!(md.contains("| `random` | < "), "{md}");
        assert!(md.contains("lost every game"), "{md}");
        assert!(!md.contains("[+0, +0]"), "{md}");
        // Item 3: the always-promote gate is explained.
        assert!(md.contains("always promote: gate_score = 0"), "{md}");
        assert!(md.contains("> **Warning:** 2 gate(s) promoted the candidate whatever the result"), "{md}");
        // Self-play by generation: who played it, first-player share, throughput.
        assert!(md.contains("| 2 | gen0001 | 3 | 33.3% | 33.3% | 61.7 | 185 | 1850 |"), "{md}");
        assert!(html.contains("<title>MartianZero report: "));
        assert!(html.contains("class=\"num\""));
        assert!(html.contains("win: princess captured") && html.contains("draw: no capture limit"));
        assert!(html.contains("Crosstable") && html.contains("+3 =1 -2"));
        assert!(html.contains("gate_score = 0.0"));
        assert!(!html.contains("<svg width=\"900\""), "charts must scale with the page");
    }

    #[test]
    fn repeated_steps_do_not_loop_the_training_curves() {
        let tmp = tempfile::tempdir().unwrap();
        let line = |step: u64, loss: f64| metrics_line(step, 1, loss);
        // Steps 10..30, then a resume that logged 20 and 30 again.
        let text: String =
            [line(10, 3.0), line(20, 2.9), line(30, 2.8), line(20, 2.5), line(30, 2.4), line(40, 2.3)].concat();
        std::fs::write(tmp.path().join("train.jsonl"), text).unwrap();
        let d = load(tmp.path()).unwrap();
        let steps: Vec<f64> = d.train.iter().map(|m| m["step"]).collect();
        assert_eq!(steps, vec![10.0, 20.0, 30.0, 40.0]);
        assert_eq!(d.train[1]["total_loss"], 2.5, "the later line of a step wins");
    }

    #[test]
    fn unreadable_log_lines_are_left_out_with_a_warning_naming_file_and_line() {
        let tmp = tempfile::tempdir().unwrap();
        let text = metrics_line(10, 1, 3.0) + "{\"step\":20,\"tot\n\n" + &metrics_line(30, 1, 2.8);
        std::fs::write(tmp.path().join("train.jsonl"), text).unwrap();
        std::fs::create_dir_all(tmp.path().join("games")).unwrap();
        let games = record_line(0, None, martian_rules::EndReason::MoveCap, 12, "uniform") + "not json\n";
        std::fs::write(tmp.path().join("games/gen0001-w0-000000.jsonl"), games).unwrap();
        std::fs::create_dir_all(tmp.path().join("eval")).unwrap();
        std::fs::write(tmp.path().join("eval/notes.json"), "{\"a\": 1}").unwrap();
        // generations.jsonl cut in its second line (a truncated copy).
        std::fs::write(tmp.path().join("generations.jsonl"), "{\"generation\":1}\n{\"generation\":2,\"selfp").unwrap();
        let d = load(tmp.path()).unwrap();
        assert_eq!(d.train.len(), 2, "the readable lines are kept");
        assert_eq!(d.unreadable.len(), 4, "{:?}", d.unreadable);
        assert!(d.unreadable[2].contains("notes.json is damaged: it is JSON but not a"), "{:?}", d.unreadable);
        assert!(
            d.unreadable[3].contains("generations.jsonl: 1 damaged line skipped (line 2: not JSON"),
            "{:?}",
            d.unreadable
        );
        assert_eq!(d.gens.keys().copied().collect::<Vec<_>>(), vec![1]);
        assert!(
            d.unreadable[0].contains("train.jsonl: 1 damaged line skipped (line 2: not JSON"),
            "{:?}",
            d.unreadable
        );
        assert!(
            d.unreadable[1].contains("gen0001-w0-000000.jsonl: 1 damaged line skipped (line 2: not JSON"),
            "{:?}",
            d.unreadable
        );
        let v = build(tmp.path(), &d, None).unwrap();
        assert!(v.warnings.iter().any(|w| w.contains("train.jsonl: 1 damaged line")), "{:?}", v.warnings);
    }

    #[test]
    fn an_unknown_anchor_fails_and_names_the_players() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        let e = write_report(tmp.path(), Some("nosuch")).unwrap_err().to_string();
        assert!(e.contains("--anchor nosuch") && e.contains("alphabeta:depth=2"), "{e}");
        assert!(write_report(tmp.path(), Some("random")).is_ok());
        let empty = tempfile::tempdir().unwrap();
        assert!(write_report(empty.path(), Some("random")).unwrap_err().to_string().contains("no evaluation matches"));
    }

    #[test]
    fn report_of_an_empty_run_still_has_every_chart() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("models")).unwrap();
        let (_, html) = write_report(tmp.path(), None).unwrap();
        let html = std::fs::read_to_string(html).unwrap();
        assert_eq!(html.matches("<svg").count(), 20);
        assert!(write_report(&tmp.path().join("nope"), None).is_err());
    }

    #[test]
    fn names_ticks_and_groups() {
        assert_eq!(generation_of("mcts:model=gen0012.safetensors,visits=8"), Some(12));
        assert_eq!(generation_of("alphabeta:depth=1"), None);
        assert_eq!(family_of("mcts:model=gen0012.safetensors,visits=8"), "mcts:model=gen*.safetensors,visits=8");
        assert_eq!(split_camel("PrincessCaptured"), "princess captured");
        // The first mover comes from the record's start position under its rules, per game.
        let rec = |game: &str, start: &str| -> GameRecord {
            let mut r: GameRecord =
                serde_json::from_str(&record_line(0, None, martian_rules::EndReason::MoveCap, 1, "u")).unwrap();
            r.game = game.parse().unwrap();
            r.start = start.into();
            r
        };
        assert_eq!(first_mover(&rec("jetan", JETAN_START)), Some("Orange"));
        assert_eq!(
            first_mover(&rec("martian-chess", "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ N 0 0 - - 0 0")),
            Some("North")
        );
        let mc4 = "QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP2PPD/QDP2PDQ/QQD2DQQ NW 0 0 0 0 - 0 0";
        assert_eq!(first_mover(&rec("martian-chess-4p", mc4)), Some("NW+SE"));
        assert_eq!(first_mover(&rec("jetan", "x o OB - 0 0")), None, "a start that does not load");
        // Integer axes print integers, never -0.
        assert_eq!(tick(10.0), "10");
        assert_eq!(tick(-0.0), "0");
        assert_eq!(tick(-1e-12), "0");
        assert_eq!(tick(0.25), "0.25");
        assert_eq!(int_tick(2.5), "");
        assert_eq!(int_tick(3.0), "3");
        assert_eq!(
            wrap_groups("<a/><text x=\"1\">\n@@OPEN:legend@@\n</text><b/><text>\n@@CLOSE@@\n</text>"),
            "<a/><g class=\"legend\"><b/></g>"
        );
    }

    #[test]
    fn players_behind_one_sided_results_are_found() {
        let m = |a: &str, b: &str, w, d, l| Match { a: a.into(), b: b.into(), wins: w, draws: d, losses: l };
        // A-B informative; B beat C in every game; C-D informative: C and D hang on the prior.
        let ms = [m("A", "B", 3, 1, 2), m("B", "C", 5, 0, 0), m("D", "C", 2, 2, 2)];
        let results: Vec<PairResult> = ms
            .iter()
            .map(|x| PairResult { a: x.a.clone(), b: x.b.clone(), wins: x.wins, draws: x.draws, losses: x.losses })
            .collect();
        let r = fit_ratings(&results, "A", PRIOR_SD_ELO).unwrap();
        let mut found = prior_placed(&ms, "A", &r);
        found.sort();
        assert_eq!(found, vec!["C".to_string(), "D".to_string()]);
        // With one drawn game between B and C everything is measured.
        let ms = [m("A", "B", 3, 1, 2), m("B", "C", 5, 1, 0), m("D", "C", 2, 2, 2)];
        assert!(prior_placed(&ms, "A", &r).is_empty());
    }

    #[test]
    fn gate_reasons_follow_the_rule() {
        assert_eq!(gate_rule("[evaluate]\ngate_score = 0.0\n"), GateRule::Score(0.0));
        assert_eq!(gate_rule("[evaluate]\ngate = \"sprt\"\n"), GateRule::Sprt);
        assert!(derived_reason(&GateRule::Score(0.0), Some((0, 0, 4)), true, None).starts_with("always promote"));
        assert_eq!(
            derived_reason(&GateRule::Score(0.55), Some((1, 0, 3)), false, None),
            "score 0.250 < gate_score 0.55"
        );
    }
}
