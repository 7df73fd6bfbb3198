//! Which charts the report draws, from the run's data.

use crate::metrics::GenerationMetrics;
use anyhow::Result;
use martian_evaluate::{elo_estimate, Rating, Ratings};
use std::collections::BTreeMap;

use super::*;

/// Every chart of the report.
pub(super) fn charts(d: &RunData, ratings: Option<&Ratings>, prior_set: &[String]) -> Result<Vec<Chart>> {
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
