//! `martian-zero report`: `R/report.md` and a self-contained `R/report.html`
//! (inline SVG charts drawn with plotters' SVG backend, which writes `<text>`
//! elements, so no font files are needed) from the files of a run directory:
//!
//! * Elo of each generation with 95% intervals: a Bradley-Terry fit over all
//!   games of the run (`eval/*.json`, `final-eval.json`), anchored at
//!   `alphabeta:depth=1`, else `random`, else generation 0 (= 0), next to the
//!   chain of gate matches (each generation's gate Elo added to its opponent's);
//! * losses and policy accuracy over training steps (`train.jsonl`);
//! * self-play game length and result mix by reason per generation (`games/*.jsonl`);
//! * the crosstable of all matches and the settings (`config.toml`).
//!
//! The SVG files are also written to `R/report/` (linked from `report.md`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use martian_evaluate::{fit_ratings, PairResult, Ratings};
use plotters::prelude::*;
use serde_json::Value;

use crate::rundir::write_atomic;

/// Standard deviation (Elo) of the weak Gaussian prior of the report's rating
/// fit: it keeps players with only wins or only losses finite and barely moves
/// the others.
pub const PRIOR_SD_ELO: f64 = 1000.0;

/// Arguments of `report`.
#[derive(clap::Args)]
pub struct Args {
    /// Run directory.
    #[arg(long)]
    run_dir: PathBuf,
    /// Player rated 0 (default: `alphabeta:depth=1`, else `random`, else generation 0).
    #[arg(long)]
    anchor: Option<String>,
}

/// Runs `report`.
pub fn run(a: Args) -> Result<()> {
    let (md, html) = write_report(&a.run_dir, a.anchor.as_deref())?;
    println!("wrote {} and {}", md.display(), html.display());
    Ok(())
}

/// Rewrites the report of `root`, printing a warning instead of failing
/// (used by the pipeline after each evaluation).
pub fn refresh(root: &Path) {
    match write_report(root, None) {
        Ok((_, html)) => eprintln!("report: {}", html.display()),
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
    elo: Option<(f64, f64, f64)>,
}

#[derive(Default)]
struct GenGames {
    lengths: Vec<u32>,
    results: BTreeMap<String, u32>,
}

/// Everything the report shows.
struct RunData {
    config: String,
    train: Vec<BTreeMap<String, f64>>,
    games: BTreeMap<u32, GenGames>,
    matches: Vec<Match>,
    gates: Vec<Gate>,
}

/// `genNNNN` in a name, as a number.
fn generation_of(name: &str) -> Option<u32> {
    let i = name.find("gen")?;
    let digits: String = name[i + 3..].chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() {
        None
    } else {
        digits.parse().ok()
    }
}

fn find_matches(v: &Value, out: &mut Vec<Match>) {
    match v {
        Value::Object(m) => {
            let get_u = |k: &str| m.get(k).and_then(Value::as_u64).map(|x| x as u32);
            if let (Some(a), Some(b), Some(w), Some(d), Some(l)) = (
                m.get("a").and_then(Value::as_str),
                m.get("b").and_then(Value::as_str),
                get_u("wins"),
                get_u("draws"),
                get_u("losses"),
            ) {
                out.push(Match { a: a.to_string(), b: b.to_string(), wins: w, draws: d, losses: l });
                return;
            }
            m.values().for_each(|x| find_matches(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| find_matches(x, out)),
        _ => {}
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

fn load(root: &Path) -> Result<RunData> {
    if !root.is_dir() {
        bail!("{} is not a directory", root.display());
    }
    let config = std::fs::read_to_string(root.join("config.toml")).unwrap_or_else(|_| "(no config.toml)".into());
    let mut train = Vec::new();
    if let Ok(text) = std::fs::read_to_string(root.join("train.jsonl")) {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(Value::Object(m)) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            train.push(m.iter().filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x))).collect());
        }
    }
    let mut games: BTreeMap<u32, GenGames> = BTreeMap::new();
    for f in sorted_files(&root.join("games"), "jsonl") {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let g = generation_of(name).unwrap_or(0);
        let text = std::fs::read_to_string(&f).with_context(|| format!("reading {}", f.display()))?;
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let e = games.entry(g).or_default();
            if let Some(p) = v.get("plies").and_then(Value::as_u64) {
                e.lengths.push(p as u32);
            }
            let reason = v.get("reason").and_then(Value::as_str).unwrap_or("?").replace('_', " ");
            let reason = split_camel(&reason);
            let key = match v.get("winner").and_then(Value::as_str) {
                Some(_) => format!("win: {reason}"),
                None => format!("draw: {reason}"),
            };
            *e.results.entry(key).or_default() += 1;
        }
    }
    let mut matches = Vec::new();
    let mut gates = Vec::new();
    let mut files = sorted_files(&root.join("eval"), "json");
    files.push(root.join("final-eval.json"));
    for f in files.iter().filter(|f| f.exists()) {
        let text = std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        let v: Value = serde_json::from_str(&text).with_context(|| format!("parsing {}", f.display()))?;
        find_matches(&v, &mut matches);
        if let (Some(g), Some(c), Some(b)) =
            (v.get("generation").and_then(Value::as_u64), v.get("candidate"), v.get("best"))
        {
            let elo = v.get("result").and_then(|r| r.get("elo")).and_then(|e| {
                Some((e.get("elo")?.as_f64()?, e.get("elo_low")?.as_f64()?, e.get("elo_high")?.as_f64()?))
            });
            gates.push(Gate {
                generation: g as u32,
                candidate: c.as_str().unwrap_or("?").to_string(),
                best: b.as_str().unwrap_or("?").to_string(),
                promoted: v.get("promoted").and_then(Value::as_bool).unwrap_or(false),
                elo,
            });
        }
    }
    gates.sort_by_key(|g| g.generation);
    Ok(RunData { config, train, games, matches, gates })
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

fn choose_anchor(players: &[String], wanted: Option<&str>) -> Option<String> {
    if let Some(w) = wanted {
        return Some(w.to_string());
    }
    for pref in ["alphabeta:depth=1", "random"] {
        if players.iter().any(|p| p == pref) {
            return Some(pref.to_string());
        }
    }
    players.iter().find(|p| generation_of(p) == Some(0)).or(players.first()).cloned()
}

/// The report charts: (file stem, title, SVG).
type Chart = (&'static str, &'static str, String);

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

fn range(lo: f64, hi: f64) -> std::ops::Range<f64> {
    if !(lo.is_finite() && hi.is_finite()) || hi <= lo {
        let c = if lo.is_finite() { lo } else { 0.0 };
        return (c - 1.0)..(c + 1.0);
    }
    let pad = (hi - lo) * 0.08;
    (lo - pad)..(hi + pad)
}

macro_rules! pe {
    ($e:expr) => {
        $e.map_err(|e| anyhow!("chart: {e}"))?
    };
}

/// A line chart of `series` (name, points).
fn line_chart(title: &str, x_desc: &str, y_desc: &str, series: &[(String, Vec<(f64, f64)>)]) -> Result<String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (900, 380)).into_drawing_area();
        pe!(root.fill(&WHITE));
        let pts = series.iter().flat_map(|(_, p)| p.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        let mut chart = pe!(ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(range(x0, x1), range(y0, y1)));
        pe!(chart.configure_mesh().x_desc(x_desc).y_desc(y_desc).draw());
        let mut any = false;
        for (i, (name, p)) in series.iter().enumerate() {
            if p.is_empty() {
                continue;
            }
            any = true;
            let c = PALETTE[i % PALETTE.len()];
            pe!(chart.draw_series(LineSeries::new(p.iter().copied(), c.stroke_width(2))))
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
            pe!(chart.draw_series(p.iter().map(|&(x, y)| Circle::new((x, y), 2, c.filled()))));
        }
        if any {
            pe!(chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw());
        } else {
            pe!(root.draw(&Text::new("no data yet", (400, 190), ("sans-serif", 18))));
        }
        pe!(root.present());
    }
    Ok(buf)
}

/// Elo per generation: the fit (points with 95% bars), the gate chain, and
/// horizontal lines for the non-generation players (baselines).
fn elo_chart(ratings: Option<&Ratings>, chain: &[(f64, f64, f64, f64)]) -> Result<String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (900, 420)).into_drawing_area();
        pe!(root.fill(&WHITE));
        let gens: Vec<(f64, f64, f64, f64)> = ratings
            .map(|r| {
                r.players
                    .iter()
                    .filter_map(|p| generation_of(&p.name).map(|g| (g as f64, p.elo, p.low, p.high)))
                    .collect()
            })
            .unwrap_or_default();
        let base: Vec<(String, f64)> = ratings
            .map(|r| {
                r.players.iter().filter(|p| generation_of(&p.name).is_none()).map(|p| (p.name.clone(), p.elo)).collect()
            })
            .unwrap_or_default();
        let xs = gens.iter().map(|g| g.0).chain(chain.iter().map(|c| c.0));
        let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| (a.min(x), b.max(x)));
        let ys = gens
            .iter()
            .flat_map(|g| [g.2, g.3])
            .chain(chain.iter().flat_map(|c| [c.2, c.3]))
            .chain(base.iter().map(|b| b.1))
            .filter(|y| y.is_finite());
        let (y0, y1) = ys.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), y| (a.min(y), b.max(y)));
        let (x0, x1) = if x0.is_finite() { (x0 - 0.5, x1 + 0.5) } else { (0.0, 1.0) };
        let mut chart = pe!(ChartBuilder::on(&root)
            .caption("Elo of each generation (95% intervals)", ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, range(y0, y1)));
        pe!(chart.configure_mesh().x_desc("generation").y_desc("Elo").draw());
        let c0 = PALETTE[0];
        if !gens.is_empty() {
            pe!(chart.draw_series(gens.iter().map(|&(g, e, lo, hi)| ErrorBar::new_vertical(
                g,
                lo.max(y0 - 1e9),
                e,
                hi.min(y1 + 1e9),
                c0.stroke_width(2),
                8
            ))))
            .label("Bradley-Terry fit over all games")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c0.stroke_width(2)));
        }
        let c1 = PALETTE[1];
        if !chain.is_empty() {
            pe!(chart.draw_series(LineSeries::new(chain.iter().map(|c| (c.0 + 0.1, c.1)), c1.stroke_width(2))))
                .label("gate chain (gen g vs best)")
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c1.stroke_width(2)));
            pe!(chart.draw_series(chain.iter().map(|&(g, e, lo, hi)| ErrorBar::new_vertical(
                g + 0.1,
                lo,
                e,
                hi,
                c1,
                6
            ))));
        }
        for (i, (name, e)) in base.iter().enumerate() {
            let c = PALETTE[(i + 2) % PALETTE.len()];
            pe!(chart.draw_series(LineSeries::new([(x0, *e), (x1, *e)], c.stroke_width(1))))
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(1)));
        }
        if gens.is_empty() && chain.is_empty() && base.is_empty() {
            pe!(root.draw(&Text::new("no evaluation yet", (380, 200), ("sans-serif", 18))));
        } else {
            pe!(chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw());
        }
        pe!(root.present());
    }
    Ok(buf)
}

/// Stacked bars: share of self-play results by reason, per generation.
fn results_chart(games: &BTreeMap<u32, GenGames>) -> Result<String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (900, 400)).into_drawing_area();
        pe!(root.fill(&WHITE));
        let mut cats: Vec<String> = games.values().flat_map(|g| g.results.keys().cloned()).collect();
        cats.sort();
        cats.dedup();
        let (x0, x1) = match (games.keys().next(), games.keys().last()) {
            (Some(&a), Some(&b)) => (a as f64 - 0.6, b as f64 + 0.6),
            _ => (0.0, 1.0),
        };
        let mut chart = pe!(ChartBuilder::on(&root)
            .caption("Self-play results by reason (share of games)", ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, 0f64..1.0));
        pe!(chart.configure_mesh().x_desc("generation").y_desc("share").draw());
        for (ci, cat) in cats.iter().enumerate() {
            let c = PALETTE[ci % PALETTE.len()];
            let bars: Vec<Rectangle<(f64, f64)>> = games
                .iter()
                .filter_map(|(&g, gg)| {
                    let total: u32 = gg.results.values().sum();
                    if total == 0 {
                        return None;
                    }
                    let below: u32 = cats[..ci].iter().map(|k| gg.results.get(k).copied().unwrap_or(0)).sum();
                    let mine = gg.results.get(cat).copied().unwrap_or(0);
                    let (b, t) = (below as f64 / total as f64, (below + mine) as f64 / total as f64);
                    Some(Rectangle::new([(g as f64 - 0.35, b), (g as f64 + 0.35, t)], c.filled()))
                })
                .collect();
            pe!(chart.draw_series(bars))
                .label(cat.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
        }
        if cats.is_empty() {
            pe!(root.draw(&Text::new("no self-play games yet", (360, 200), ("sans-serif", 18))));
        } else {
            pe!(chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .draw());
        }
        pe!(root.present());
    }
    Ok(buf)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Builds and writes the report; returns the paths of `report.md` and `report.html`.
///
/// # Errors
/// Unreadable run files or failed writes.
pub fn write_report(root: &Path, anchor: Option<&str>) -> Result<(PathBuf, PathBuf)> {
    let d = load(root)?;
    // Ratings.
    let results: Vec<PairResult> = d
        .matches
        .iter()
        .map(|m| PairResult { a: m.a.clone(), b: m.b.clone(), wins: m.wins, draws: m.draws, losses: m.losses })
        .collect();
    let mut players: Vec<String> = d.matches.iter().flat_map(|m| [m.a.clone(), m.b.clone()]).collect();
    players.sort();
    players.dedup();
    let anchor = choose_anchor(&players, anchor);
    let (ratings, fit_note) = match &anchor {
        Some(a) if !results.is_empty() => match fit_ratings(&results, a, PRIOR_SD_ELO) {
            Ok(r) => (Some(r), String::new()),
            Err(e) => (None, format!("no rating fit: {e}")),
        },
        _ => (None, "no evaluation matches yet".to_string()),
    };
    // Gate chain: gen 0 = its fitted Elo (or 0); gen g = Elo(best) + gate Elo.
    let mut chain_elo: BTreeMap<u32, f64> = BTreeMap::new();
    let gen0 = ratings
        .as_ref()
        .and_then(|r| r.players.iter().find(|p| generation_of(&p.name) == Some(0)).map(|p| p.elo))
        .unwrap_or(0.0);
    chain_elo.insert(0, gen0);
    let mut chain = Vec::new();
    for g in &d.gates {
        let (Some((e, lo, hi)), Some(bg)) = (g.elo, generation_of(&g.best)) else {
            continue;
        };
        let Some(&base) = chain_elo.get(&bg) else {
            continue;
        };
        chain_elo.insert(g.generation, base + e);
        chain.push((g.generation as f64, base + e, base + lo, base + hi));
    }
    // Training curves.
    let series = |k: &str| -> Vec<(f64, f64)> {
        d.train.iter().filter_map(|m| Some((*m.get("step")?, *m.get(k)?))).filter(|p| p.1.is_finite()).collect()
    };
    let losses = vec![
        ("total loss".to_string(), series("total_loss")),
        ("policy loss".to_string(), series("policy_loss")),
        ("value loss".to_string(), series("value_loss")),
    ];
    let acc = vec![("policy accuracy".to_string(), series("policy_accuracy"))];
    let mean = |v: &[u32]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64
        }
    };
    let lengths = vec![
        ("mean plies".to_string(), d.games.iter().map(|(&g, gg)| (g as f64, mean(&gg.lengths))).collect::<Vec<_>>()),
        (
            "shortest".to_string(),
            d.games.iter().filter_map(|(&g, gg)| Some((g as f64, *gg.lengths.iter().min()? as f64))).collect(),
        ),
        (
            "longest".to_string(),
            d.games.iter().filter_map(|(&g, gg)| Some((g as f64, *gg.lengths.iter().max()? as f64))).collect(),
        ),
    ];
    let charts: Vec<Chart> = vec![
        ("elo", "Elo of each generation", elo_chart(ratings.as_ref(), &chain)?),
        ("losses", "Training losses", line_chart("Training losses", "step", "loss (nats)", &losses)?),
        (
            "accuracy",
            "Policy accuracy",
            line_chart("Policy accuracy (top-1 vs search target)", "step", "accuracy", &acc)?,
        ),
        ("length", "Self-play game length", line_chart("Self-play game length", "generation", "plies", &lengths)?),
        ("results", "Self-play results", results_chart(&d.games)?),
    ];
    // Crosstable (row player's W-D-L against the column player).
    let mut cross: BTreeMap<(String, String), (u32, u32, u32)> = BTreeMap::new();
    for m in &d.matches {
        let e = cross.entry((m.a.clone(), m.b.clone())).or_default();
        *e = (e.0 + m.wins, e.1 + m.draws, e.2 + m.losses);
        let e = cross.entry((m.b.clone(), m.a.clone())).or_default();
        *e = (e.0 + m.losses, e.1 + m.draws, e.2 + m.wins);
    }
    let cell = |r: &str, c: &str| {
        cross.get(&(r.to_string(), c.to_string())).map(|(w, d, l)| format!("+{w} ={d} -{l}")).unwrap_or_default()
    };
    let elo_of = |p: &str| {
        ratings
            .as_ref()
            .and_then(|r| r.get(p))
            .map(|r| format!("{:.0} [{:.0}, {:.0}]", r.elo, r.low, r.high))
            .unwrap_or_else(|| "-".into())
    };
    let n_games: usize = d.games.values().map(|g| g.lengths.len()).sum();
    let anchor_text = anchor.clone().unwrap_or_else(|| "-".into());

    // report/*.svg
    let svg_dir = root.join("report");
    for (stem, _, svg) in &charts {
        write_atomic(&svg_dir.join(format!("{stem}.svg")), svg.as_bytes())?;
    }
    // Markdown.
    let mut md = String::new();
    let _ = writeln!(md, "# MartianZero run report: {}\n", root.display());
    let _ = writeln!(
        md,
        "{} self-play games, {} training log lines, {} evaluation matches. Open `report.html` for the charts inline.\n",
        n_games,
        d.train.len(),
        d.matches.len()
    );
    let ladder = crate::ladder::records(root);
    if !ladder.is_empty() {
        let _ = writeln!(
            md,
            "## Elo against the alpha-beta ladder\n\nThe promoted network (MCTS, `[evaluate] simulations` visits) against the fixed \
             alpha-beta players, rated with their calibrated ratings held fixed (anchor `{}` = 0; `docs/evaluation.md`).\n\n\
             | generation | network | ladder Elo (95%) | games | score | alpha-beta version |\n|---:|---|---:|---:|---:|---:|",
            ladder[0].anchor
        );
        for r in &ladder {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {:.3} | {} |",
                r.generation,
                r.network,
                crate::ladder::rating_text(&r.rating),
                r.rating.games,
                r.rating.score,
                r.alphabeta_version
            );
        }
        let _ = writeln!(md);
    }
    let _ = writeln!(md, "## Ratings\n\nBradley-Terry fit over all games, anchor `{anchor_text}` = 0, 95% intervals (weak prior, sd {PRIOR_SD_ELO} Elo). {fit_note}\n");
    let _ = writeln!(md, "| player | Elo | 95% interval | games | score |\n|---|---:|---|---:|---:|");
    if let Some(r) = &ratings {
        for p in &r.players {
            let _ = writeln!(
                md,
                "| `{}` | {:.0} | [{:.0}, {:.0}] | {} | {:.3} |",
                p.name, p.elo, p.low, p.high, p.games, p.score
            );
        }
    }
    let _ = writeln!(
        md,
        "\n## Gate matches\n\n| generation | candidate | best | Elo (95%) | promoted |\n|---:|---|---|---|---|"
    );
    for g in &d.gates {
        let e = g.elo.map(|(e, lo, hi)| format!("{e:+.0} [{lo:+.0}, {hi:+.0}]")).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |",
            g.generation,
            g.candidate,
            g.best,
            e,
            if g.promoted { "yes" } else { "no" }
        );
    }
    let _ = writeln!(md, "\n## Charts\n");
    for (stem, title, _) in &charts {
        let _ = writeln!(md, "### {title}\n\n![{title}](report/{stem}.svg)\n");
    }
    let _ = writeln!(md, "## Crosstable\n\nRow player's wins, draws and losses against the column player.\n");
    let _ = write!(md, "| | Elo |");
    for p in &players {
        let _ = write!(md, " `{p}` |");
    }
    let _ = write!(md, "\n|---|---|");
    for _ in &players {
        let _ = write!(md, "---|");
    }
    md.push('\n');
    for r in &players {
        let _ = write!(md, "| `{r}` | {} |", elo_of(r));
        for c in &players {
            let _ = write!(md, " {} |", cell(r, c));
        }
        md.push('\n');
    }
    let _ = writeln!(md, "\n## Settings\n\n```toml\n{}\n```", d.config.trim_end());
    let md_path = root.join("report.md");
    write_atomic(&md_path, md.as_bytes())?;

    // HTML.
    let mut h = String::new();
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>MartianZero report</title>\n<style>body{{font-family:sans-serif;margin:24px;max-width:1000px}}table{{border-collapse:collapse;margin:8px 0}}td,th{{border:1px solid #bbb;padding:3px 8px;font-size:13px;white-space:nowrap}}th{{background:#eee}}pre{{background:#f6f6f6;padding:8px;font-size:12px}}.chart{{margin:12px 0}}</style></head><body>"
    );
    let _ = writeln!(h, "<h1>MartianZero run report</h1><p><code>{}</code>: {} self-play games, {} training log lines, {} evaluation matches.</p>", esc(&root.display().to_string()), n_games, d.train.len(), d.matches.len());
    if !ladder.is_empty() {
        let _ = writeln!(
            h,
            "<h2>Elo against the alpha-beta ladder</h2><p>The promoted network against the fixed alpha-beta players, rated with their calibrated ratings held fixed (anchor <code>{}</code> = 0).</p><table><tr><th>generation</th><th>network</th><th>ladder Elo (95%)</th><th>games</th><th>score</th><th>alpha-beta version</th></tr>",
            esc(&ladder[0].anchor)
        );
        for r in &ladder {
            let _ = writeln!(
                h,
                "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3}</td><td class=\"num\">{}</td></tr>",
                r.generation,
                esc(&r.network),
                esc(&crate::ladder::rating_text(&r.rating)),
                r.rating.games,
                r.rating.score,
                r.alphabeta_version
            );
        }
        let _ = writeln!(h, "</table>");
    }
    let _ = writeln!(h, "<h2>Ratings</h2><p>Bradley-Terry fit over all games, anchor <code>{}</code> = 0, 95% intervals (weak prior, sd {PRIOR_SD_ELO} Elo). {}</p>", esc(&anchor_text), esc(&fit_note));
    let _ = writeln!(h, "<table><tr><th>player</th><th>Elo</th><th>95% interval</th><th>games</th><th>score</th></tr>");
    if let Some(r) = &ratings {
        for p in &r.players {
            let _ = writeln!(
                h,
                "<tr><td><code>{}</code></td><td>{:.0}</td><td>[{:.0}, {:.0}]</td><td>{}</td><td>{:.3}</td></tr>",
                esc(&p.name),
                p.elo,
                p.low,
                p.high,
                p.games,
                p.score
            );
        }
    }
    let _ = writeln!(h, "</table>");
    for (stem, title, svg) in &charts {
        let _ = writeln!(h, "<h2 id=\"{stem}\">{}</h2><div class=\"chart\">{}</div>", esc(title), svg);
    }
    let _ = writeln!(h, "<h2>Gate matches</h2><table><tr><th>generation</th><th>candidate</th><th>best</th><th>Elo (95%)</th><th>promoted</th></tr>");
    for g in &d.gates {
        let e = g.elo.map(|(e, lo, hi)| format!("{e:+.0} [{lo:+.0}, {hi:+.0}]")).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            g.generation,
            esc(&g.candidate),
            esc(&g.best),
            e,
            if g.promoted { "yes" } else { "no" }
        );
    }
    let _ = writeln!(h, "</table><h2>Crosstable</h2><p>Row player's wins, draws and losses against the column player.</p><table><tr><th></th><th>Elo</th>");
    for p in &players {
        let _ = write!(h, "<th><code>{}</code></th>", esc(p));
    }
    let _ = writeln!(h, "</tr>");
    for r in &players {
        let _ = write!(h, "<tr><th><code>{}</code></th><td>{}</td>", esc(r), elo_of(r));
        for c in &players {
            let _ = write!(h, "<td>{}</td>", cell(r, c));
        }
        let _ = writeln!(h, "</tr>");
    }
    let _ = writeln!(h, "</table><h2>Settings</h2><pre>{}</pre></body></html>", esc(&d.config));
    let html_path = root.join("report.html");
    write_atomic(&html_path, h.as_bytes())?;
    Ok((md_path, html_path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(dir: &Path) {
        std::fs::create_dir_all(dir.join("games")).unwrap();
        std::fs::create_dir_all(dir.join("eval")).unwrap();
        std::fs::create_dir_all(dir.join("models")).unwrap();
        std::fs::write(dir.join("config.toml"), "game = \"jetan\"\nseed = 1\n[evaluate]\npairs = 2\n").unwrap();
        let mut train = String::new();
        for step in (10..=50).step_by(10) {
            let l = 5.0 - step as f64 / 20.0;
            train.push_str(&format!(
                "{{\"step\":{step},\"generation\":{},\"lr\":0.002,\"policy_loss\":{l},\"value_loss\":1.0,\"total_loss\":{},\"policy_accuracy\":{},\"value_mse\":0.5,\"samples_per_s\":100.0,\"window\":1000}}\n",
                1 + step / 30,
                l + 1.0,
                step as f64 / 100.0
            ));
        }
        std::fs::write(dir.join("train.jsonl"), train).unwrap();
        for g in 1..=2 {
            let mut lines = String::new();
            for (i, (w, r, p)) in [
                ("\"Orange\"", "PrincessCaptured", 40),
                ("null", "NoCaptureLimit", 90),
                ("\"Black\"", "ChiefCapturedByChief", 55),
            ]
            .iter()
            .enumerate()
            {
                lines.push_str(&format!("{{\"format_version\":1,\"game\":\"jetan\",\"game_id\":{i},\"start\":\"x\",\"moves\":[],\"winner\":{w},\"reason\":\"{r}\",\"plies\":{p},\"samples\":3,\"model\":\"gen0000.safetensors\"}}\n"));
            }
            std::fs::write(dir.join(format!("games/gen{g:04}-w0-000000.jsonl")), lines).unwrap();
        }
        let mr = |a: &str, b: &str, w: u32, d: u32, l: u32| {
            serde_json::json!({"a": a, "b": b, "wins": w, "draws": d, "losses": l, "pentanomial": [0,0,0,0,0],
                "elo": martian_evaluate::elo_estimate(w, d, l), "games": []})
        };
        for g in 1..=2u32 {
            let rec = serde_json::json!({"generation": g, "candidate": format!("gen{g:04}.safetensors"),
                "best": format!("gen{:04}.safetensors", g - 1), "promoted": true,
                "result": mr(&format!("mcts:model=gen{g:04}.safetensors,visits=8"), &format!("mcts:model=gen{:04}.safetensors,visits=8", g - 1), 3, 1, 2)});
            std::fs::write(dir.join(format!("eval/gen{g:04}.json")), rec.to_string()).unwrap();
        }
        let gauntlet = serde_json::json!({"player": "mcts:model=gen0002.safetensors,visits=8", "matches": [
            mr("mcts:model=gen0002.safetensors,visits=8", "alphabeta:depth=1", 2, 1, 1),
            mr("mcts:model=gen0002.safetensors,visits=8", "alphabeta:depth=2", 1, 1, 2)], "ratings": null});
        std::fs::write(dir.join("eval/gauntlet-x.json"), gauntlet.to_string()).unwrap();
    }

    #[test]
    fn report_renders_from_a_fixture_run() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        let (md, html) = write_report(tmp.path(), None).unwrap();
        let md = std::fs::read_to_string(md).unwrap();
        let html = std::fs::read_to_string(html).unwrap();
        for stem in ["elo", "losses", "accuracy", "length", "results"] {
            assert!(html.contains(&format!("id=\"{stem}\"")), "{stem} missing");
            assert!(md.contains(&format!("report/{stem}.svg")));
            let svg = std::fs::read_to_string(tmp.path().join(format!("report/{stem}.svg"))).unwrap();
            assert!(svg.starts_with("<svg") && svg.contains("<text"), "{stem}: no text");
        }
        assert_eq!(html.matches("<svg").count(), 5);
        // The anchor is alpha-beta depth 1; generations are rated.
        assert!(md.contains("anchor `alphabeta:depth=1` = 0"), "{md}");
        assert!(md.contains("mcts:model=gen0002.safetensors,visits=8"));
        assert!(html.contains("Self-play results by reason"));
        assert!(html.contains("win: princess captured") && html.contains("draw: no capture limit"));
        assert!(html.contains("Crosstable") && html.contains("+3 =1 -2"));
        assert!(html.contains("pairs = 2"));
        assert!(html.contains("Bradley-Terry fit over all games"));
    }

    #[test]
    fn report_of_an_empty_run_still_has_every_chart() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("models")).unwrap();
        let (_, html) = write_report(tmp.path(), None).unwrap();
        let html = std::fs::read_to_string(html).unwrap();
        assert_eq!(html.matches("<svg").count(), 5);
        assert!(write_report(&tmp.path().join("nope"), None).is_err());
    }

    #[test]
    fn generation_names() {
        assert_eq!(generation_of("mcts:model=gen0012.safetensors,visits=8"), Some(12));
        assert_eq!(generation_of("alphabeta:depth=1"), None);
        assert_eq!(split_camel("PrincessCaptured"), "princess captured");
    }
}
