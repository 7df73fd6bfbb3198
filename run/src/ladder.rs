//! The strength ladder (`docs/evaluation.md`): a fixed yardstick that every run measures.
//!
//! The ladder is a list of deterministic alpha-beta players
//! (`[evaluate] ladder`, default per game in [`EvaluateConfig::ladder_specs`]).
//! Once per run they are *calibrated*: a round robin among them from the run's
//! opening book, fitted with Bradley-Terry and anchored at the first player
//! (rated 0) — `eval/ladder-calibration.json`. Every `ladder_every`
//! generations and after the last one, the promoted network (MCTS at
//! `[evaluate] simulations` visits) plays each ladder player, and its Elo is
//! fitted with the ladder's ratings held fixed ([`rate_against_fixed`]):
//! `eval/ladder-genNNNN.json`. Since alpha-beta at a fixed depth is
//! deterministic and versioned ([`ALPHABETA_VERSION`]), the ratings of runs,
//! configs and code versions with the same ladder, openings and version lie
//! on one scale, as engine rating lists rate against fixed engines.
//!
//! Both files are written atomically once complete; a kill replays the match
//! that was being played.

use std::path::PathBuf;

use anyhow::{Context, Result};
use martian_evaluate::{fit_ratings, rate_against_fixed, FixedAnchorRating, MatchResult, PairResult, Ratings};
use martian_search::{AbGame, ALPHABETA_VERSION};
use serde::{Deserialize, Serialize};
use tch::Device;

use crate::config::{EvaluateConfig, RunConfig};
use crate::io::write_atomic;
use crate::ops::{describe_match, run_match_with, PlayerSpec};
use crate::rundir::RunDir;

/// Prior standard deviation (Elo) of the calibration fit: keeps a ladder step
/// that wins every game finite.
const CALIBRATION_PRIOR_SD_ELO: f64 = 800.0;

/// `eval/ladder-calibration.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Calibration {
    /// [`ALPHABETA_VERSION`] of the players.
    pub alphabeta_version: u32,
    /// The ladder's specs, in order; the first is the anchor (0).
    pub ladder: Vec<String>,
    /// Game pairs per match.
    pub pairs: u32,
    /// The round-robin matches.
    pub matches: Vec<MatchResult>,
    /// The fitted ratings.
    pub ratings: Ratings,
}

/// `eval/ladder-genNNNN.json`: the promoted network of a generation against the ladder.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LadderRecord {
    /// Generation after which the ladder was played.
    pub generation: u32,
    /// The network's checkpoint file (the promoted `best` at that time).
    pub network: String,
    /// [`ALPHABETA_VERSION`] of the ladder.
    pub alphabeta_version: u32,
    /// The anchor (rated 0).
    pub anchor: String,
    /// `(spec, fixed Elo)` of each ladder player.
    pub opponents: Vec<(String, f64)>,
    /// The matches, one per ladder player.
    pub matches: Vec<MatchResult>,
    /// The network's Elo on the ladder's scale.
    pub rating: FixedAnchorRating,
    /// The rules the matches were played under (the run's `[rules]`, as
    /// JSON); empty in records written before it was recorded.
    #[serde(default)]
    pub rules: String,
}

/// True when generation `g` of `generations` plays the ladder.
pub fn due(e: &EvaluateConfig, g: u32, generations: u32) -> bool {
    e.ladder_every > 0 && (g.is_multiple_of(e.ladder_every) || g == generations)
}

fn calibration_path(run: &RunDir) -> PathBuf {
    run.root().join(crate::layout::EVAL).join(crate::layout::LADDER_CALIBRATION)
}

/// The ladder record path of generation `g`.
pub fn record_path(run: &RunDir, g: u32) -> PathBuf {
    run.root().join(crate::layout::EVAL).join(format!("ladder-{}.json", martian_selfplay::names::generation_prefix(g)))
}

/// The run's calibration: read when it matches the ladder, pairs and
/// version, else played (a round robin) and written.
///
/// # Errors
/// Bad ladder specs, match or I/O errors.
pub fn calibration<G: AbGame>(cfg: &RunConfig, rules: &G::Rules, run: &RunDir, device: Device) -> Result<Calibration> {
    let ladder = cfg.evaluate.ladder_specs(G::KIND);
    let pairs = cfg.evaluate.ladder_pairs;
    let path = calibration_path(run);
    if path.exists() {
        match crate::records::read_json::<Calibration>(&path, "a ladder calibration") {
            Ok(c) if c.ladder == ladder && c.pairs == pairs && c.alphabeta_version == ALPHABETA_VERSION => {
                return Ok(c)
            }
            Ok(_) => {
                eprintln!("ladder: {} is for another ladder or version; calibrating again", crate::io::shown(&path))
            }
            Err(e) => {
                let aside = crate::io::set_aside(&path)?;
                eprintln!("warning: {e:#}; set aside as {}; calibrating again", aside.display());
            }
        }
    }
    let specs: Vec<PlayerSpec> = ladder.iter().map(|s| PlayerSpec::parse(s)).collect::<Result<_, _>>()?;
    let mut matches = Vec::new();
    for i in 0..specs.len() {
        for j in i + 1..specs.len() {
            eprintln!("ladder calibration: {} vs {}", ladder[i], ladder[j]);
            let (m, _) =
                run_match_with::<G>(cfg, rules, &specs[i], &specs[j], pairs, device, Some(&run.openings()), None)?;
            eprintln!("ladder calibration: {}", describe_match(&m));
            matches.push(m);
        }
    }
    let results: Vec<PairResult> = matches
        .iter()
        .map(|m| PairResult { a: m.a.clone(), b: m.b.clone(), wins: m.wins, draws: m.draws, losses: m.losses })
        .collect();
    let ratings = if results.is_empty() {
        Ratings { anchor: ladder[0].clone(), players: Vec::new() }
    } else {
        fit_ratings(&results, &ladder[0], CALIBRATION_PRIOR_SD_ELO).map_err(anyhow::Error::msg)?
    };
    let c = Calibration { alphabeta_version: ALPHABETA_VERSION, ladder, pairs, matches, ratings };
    write_atomic(&path, serde_json::to_string_pretty(&c)?.as_bytes())?;
    Ok(c)
}

/// Plays (or reads) generation `g`'s ladder for the network `best`.
///
/// # Errors
/// Match, fit or I/O errors.
pub fn play<G: AbGame>(
    cfg: &RunConfig,
    rules: &G::Rules,
    run: &RunDir,
    g: u32,
    best: &std::path::Path,
    device: Device,
) -> Result<LadderRecord> {
    let path = record_path(run, g);
    if path.exists() {
        // A damaged record is set aside and the ladder played again (seeded: the same games).
        match crate::records::read_json(&path, "a ladder record") {
            Ok(rec) => return Ok(rec),
            Err(e) => {
                let aside = crate::io::set_aside(&path)?;
                eprintln!("warning: {e:#}; set aside as {}; playing generation {g}'s ladder again", aside.display());
            }
        }
    }
    let cal = calibration::<G>(cfg, rules, run, device)?;
    let elo_of = |name: &str| cal.ratings.get(name).map(|r| r.elo).unwrap_or(0.0);
    let mut matches = Vec::new();
    let mut opponents = Vec::new();
    for spec in &cal.ladder {
        eprintln!("generation {g}: ladder match against {spec}");
        let (m, _) = run_match_with::<G>(
            cfg,
            rules,
            &PlayerSpec::Net(best.to_path_buf()),
            &PlayerSpec::parse(spec)?,
            cfg.evaluate.ladder_pairs,
            device,
            Some(&run.openings()),
            None,
        )?;
        eprintln!("generation {g}: {}", describe_match(&m));
        opponents.push((spec.clone(), elo_of(spec)));
        matches.push(m);
    }
    let rows: Vec<(f64, u32, u32, u32)> =
        matches.iter().zip(&opponents).map(|(m, o)| (o.1, m.wins, m.draws, m.losses)).collect();
    let rating = rate_against_fixed(&rows).context("ladder: no games were played")?;
    let rec = LadderRecord {
        generation: g,
        network: best.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string(),
        alphabeta_version: ALPHABETA_VERSION,
        anchor: cal.ladder[0].clone(),
        opponents,
        matches,
        rating,
        rules: serde_json::to_string(rules).unwrap_or_default(),
    };
    write_atomic(&path, serde_json::to_string_pretty(&rec)?.as_bytes())?;
    Ok(rec)
}

/// True when generation `g`'s ladder record is there and reads (a damaged one
/// is played again by [`play`]).
pub fn record_usable(run: &RunDir, g: u32) -> bool {
    crate::records::read_json::<LadderRecord>(&record_path(run, g), "a ladder record").is_ok()
}

/// Every ladder record of the run directory `root`, by generation (damaged
/// files are left out: the report names them, the pipeline plays them again).
///
/// ```
/// use martian_run::{config::RunConfig, ladder, rundir::RunDir};
/// let dir = tempfile::tempdir()?;
/// let cfg = RunConfig::parse("game = \"jetan\"")?;
/// let run = RunDir::open(dir.path(), &cfg)?; // a new run directory: config.toml and its folders
/// assert!(RunDir::check_is_run(run.root()).is_ok());
/// assert!(ladder::records(run.root()).is_empty(), "no generation has met the ladder yet");
/// assert_eq!(run.best(), None);
/// # Ok::<(), anyhow::Error>(())
/// ```
pub fn records(root: &std::path::Path) -> Vec<LadderRecord> {
    let Ok(rd) = std::fs::read_dir(root.join(crate::layout::EVAL)) else { return Vec::new() };
    let mut v: Vec<LadderRecord> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(crate::layout::LADDER_PREFIX))
        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
        .filter_map(|e| crate::records::read_json(&e.path(), "a ladder record").ok())
        .collect();
    v.sort_by_key(|r| r.generation);
    v
}

/// The rating as table text: `+X [lo, hi]`, or `> +lo` / `< +hi` (the
/// one-sided 95% bound) for a perfect score.
pub fn rating_text(r: &FixedAnchorRating) -> String {
    if r.perfect {
        let won = r.score > 0.5;
        format!(
            "{} {:+.0} (all {})",
            if won { ">" } else { "<" },
            if won { r.low } else { r.high },
            if won { "won" } else { "lost" }
        )
    } else {
        format!("{:+.0} [{:+.0}, {:+.0}]", r.elo, r.low, r.high)
    }
}

/// One line: the network's ladder Elo with its interval and the scale,
/// then per rung its W/D/L and its wins and losses per 100 games (in a
/// drawish game such as Jetan under §8.2 a rung the network beats shows as
/// wins without losses while the score stays near 0.5), and the rules.
pub fn describe(rec: &LadderRecord) -> String {
    let r = &rec.rating;
    let value = if r.perfect { rating_text(r) } else { format!("{} (95%)", rating_text(r)) };
    let steps: Vec<String> = rec.opponents.iter().map(|(s, e)| format!("{s} = {e:+.0}")).collect();
    let rungs: Vec<String> = rec
        .matches
        .iter()
        .map(|m| {
            let (w, l) = m.per_100().unwrap_or((0.0, 0.0));
            let points = m.point_difference().map(|(_, g, _)| format!(", points {g:+.1} a game")).unwrap_or_default();
            format!("{}: +{} ={} -{} ({w:.0} won, {l:.0} lost per 100{points})", m.b, m.wins, m.draws, m.losses)
        })
        .collect();
    let rules = if rec.rules.is_empty() { String::new() } else { format!("; rules {}", rec.rules) };
    format!(
        "ladder Elo of {} after generation {}: {value}, {} games; scale: {} (alpha-beta v{}); {}{rules}",
        rec.network,
        rec.generation,
        r.games,
        steps.join(", "),
        rec.alphabeta_version,
        rungs.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ladder_defaults_and_schedule() {
        let e = crate::config::EvaluateConfig::default();
        assert_eq!(
            e.ladder_specs(martian_rules::GameKind::Jetan),
            ["alphabeta:depth=1", "alphabeta:depth=2", "alphabeta:depth=3"]
        );
        assert_eq!(e.ladder_specs(martian_rules::GameKind::MartianChess).len(), 3);
        let due_at: Vec<u32> = (1..=12).filter(|&g| due(&e, g, 12)).collect();
        assert_eq!(due_at, [5, 10, 12], "every 5 generations and the last");
        let off = crate::config::EvaluateConfig { ladder_every: 0, ..crate::config::EvaluateConfig::default() };
        assert!(!(1..=12).any(|g| due(&off, g, 12)));
    }
}
