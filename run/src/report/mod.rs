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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use martian_evaluate::{elo_estimate, fit_ratings, PairResult, Rating};

use crate::io::write_atomic;
use crate::results::PRIOR_SD_ELO;

mod charts;
mod data;
mod plot;
mod ratings;
mod render;

use charts::*;
use data::*;
use plot::*;
use ratings::*;
use render::*;

/// Rewrites the report of `root`, printing a warning instead of failing
/// (used by the pipeline after each evaluation).
pub fn refresh(root: &Path) {
    match write_report(root, None) {
        Ok((_, html)) => eprintln!("report: {}", crate::io::shown(&html)),
        Err(e) => eprintln!("warning: report not written: {e:#}"),
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use martian_model::CheckpointMeta;
    use martian_selfplay::GameRecord;
    use martian_train::Metrics;

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
            contempt: None,
            draw_aversion: None,
            label_scores: Vec::new(),
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
                let id = crate::spool::game_id(g, 0, i as u64);
                lines.push_str(&record_line(id, w, r, p, &format!("gen{:04}.safetensors", g - 1)));
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

    /// A gate record with a number out of range is left out naming its file
    /// and the field (it was serde's "did not match any variant of untagged
    /// enum", naming neither the kind nor the field).
    #[test]
    fn a_damaged_record_is_named_by_kind_and_field() {
        let tmp = tempfile::tempdir().unwrap();
        fixture(tmp.path());
        let gate = tmp.path().join("eval/gen0002.json");
        let text = std::fs::read_to_string(&gate).unwrap().replace("\"wins\":1", "\"wins\":-1");
        std::fs::write(&gate, text).unwrap();
        let data = data::load(tmp.path()).unwrap();
        let note = data.unreadable.iter().find(|n| n.contains("gen0002.json")).expect("the gate record is left out");
        assert!(note.contains("not a gate record (field result.wins: invalid value: integer `-1`"), "{note}");
        assert_eq!(data.gates.len(), 1, "the other gate record is kept");
        // Generation 1's game records copied under generation 2's name: not counted twice.
        std::fs::copy(
            tmp.path().join("games/gen0001-w0-000000.jsonl"),
            tmp.path().join("games/gen0002-w9-000000.jsonl"),
        )
        .unwrap();
        let data = data::load(tmp.path()).unwrap();
        let note = data.unreadable.iter().find(|n| n.contains("gen0002-w9")).expect("the copy is named");
        assert!(note.contains(&format!("game {} was played in generation 1, not 2", 1u64 << 40)), "{note}");
        assert_eq!(data.games[&2].lengths.len(), 3, "generation 2 keeps its own games only");
        // A record that contradicts its name, or names a file outside the models folder.
        let text = std::fs::read_to_string(tmp.path().join("eval/gen0001.json")).unwrap();
        for (edit, want) in [
            (text.replace("\"generation\":1", "\"generation\":7"), "it records generation 7, its name generation 1"),
            (
                text.replace("\"candidate\":\"gen0001", "\"candidate\":\"../gen0001"),
                "its candidate \"../gen0001.safetensors\" is not a checkpoint file name",
            ),
        ] {
            assert_ne!(edit, text);
            std::fs::write(tmp.path().join("eval/gen0001.json"), edit).unwrap();
            let data = data::load(tmp.path()).unwrap();
            let note = data.unreadable.iter().find(|n| n.contains("gen0001.json")).expect("left out");
            assert!(note.contains(want), "{note}");
            assert!(data.gates.is_empty());
        }
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
        let games = record_line(1 << 40, None, martian_rules::EndReason::MoveCap, 12, "uniform") + "not json\n";
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
        assert_eq!(first_mover(&rec("jetan", JETAN_START)), Some(("Orange", "Orange")));
        assert_eq!(
            first_mover(&rec("martian-chess", "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ N 0 0 - - 0 0")),
            Some(("North", "North"))
        );
        let mc4 = "QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP2PPD/QDP2PDQ/QQD2DQQ NW 0 0 0 0 - 0 0";
        assert_eq!(first_mover(&rec("martian-chess-4p", mc4)), Some(("NW+SE", "NW+SE")));
        // Free-for-all: the first mover is the seat, and a winner names seats.
        let mut ffa = rec("martian-chess-4p", mc4);
        ffa.rules = Some(serde_json::json!({ "teams": false }));
        let first = first_mover(&ffa).unwrap();
        assert_eq!(first, ("NW+SE", "NW"));
        assert!(
            won_by("NW", first) && won_by("SW,NW", first) && won_by("NW+SE", first),
            "the seat, a share, an old team record"
        );
        assert!(!won_by("SE", first) && !won_by("SW,NE", first) && !won_by("NW,", ("Orange", "Orange")));
        assert!(won_by("Orange", ("Orange", "Orange")) && !won_by("Black", ("Orange", "Orange")));
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
        assert_eq!(gate_rule("game = \"jetan\"\n[evaluate]\ngate_score = 0.0\n"), GateRule::Score(0.0));
        assert_eq!(gate_rule("game = \"jetan\"\n[evaluate]\ngate = \"sprt\"\n"), GateRule::Sprt);
        let default = crate::config::EvaluateConfig::default().gate_score;
        assert_eq!(gate_rule("game = \"jetan\"\n"), GateRule::Score(default));
        assert_eq!(gate_rule("game = \"jetan\"\n[evaluate]\ngate_scroe = 0.5\n"), GateRule::Unknown);
        assert!(derived_reason(&GateRule::Score(0.0), Some((0, 0, 4)), true, None).starts_with("always promote"));
        assert_eq!(
            derived_reason(&GateRule::Score(0.55), Some((1, 0, 3)), false, None),
            "score 0.250 < gate_score 0.55"
        );
    }
}
