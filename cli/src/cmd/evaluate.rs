//! `martian-zero evaluate`: a match between two players, or a gauntlet (one
//! player against a ladder of opponents) with a Bradley-Terry rating fit.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use martian_evaluate::{fit_ratings, gauntlet, MatchResult, PairResult, Player};
use martian_search::AbGame;

use crate::with_game;
use martian_run::config::RunConfig;
use martian_run::io::write_atomic;
use martian_run::ops::{
    describe_match, load_player_checkpoint, make_player, opening_lines, progress, run_match_with, PlayerSpec,
};
use martian_run::results::GauntletRecord;
use martian_run::rundir::RunDir;

/// Arguments of `evaluate`.
#[derive(clap::Args)]
pub struct Args {
    /// Run configuration (TOML): game, rules, `[search]` and `[evaluate]`.
    #[arg(long)]
    config: PathBuf,
    /// Player A: a model (checkpoint, bundle directory or run directory),
    /// `mcts:model=PATH,visits=N,movetime=MS` (either limit, or both: whichever comes first;
    /// `level=L` instead of visits: a strength level, with the game's bundled network unless
    /// `model=` is given; `model=none`: no network), `uniform`,
    /// `mcts:static=SCALE` (the alpha-beta evaluation as the value; `static_policy=T`: and
    /// one-ply priors), `random`, `greedy`, or `alphabeta:depth=N` / `alphabeta:movetime=MS` /
    /// `alphabeta:nodes=N`.
    #[arg(long)]
    a: String,
    /// Player B (same forms); with --gauntlet a comma-separated list, e.g.
    /// `alphabeta:depth=1,alphabeta:depth=2,alphabeta:depth=3`.
    #[arg(long, required_unless_present = "ladder")]
    b: Option<String>,
    /// Play A against every player of --b in turn and fit ratings.
    #[arg(long, conflicts_with = "ladder")]
    gauntlet: bool,
    /// Play A against the run directory's alpha-beta ladder (its rungs with
    /// their calibrated ratings, as the pipeline's ladder) and print A's
    /// ladder Elo on that fixed scale, `--games` games a rung; needs a run
    /// directory (--run-dir, or A's checkpoint inside one). Without --b.
    #[arg(long, conflicts_with = "b")]
    ladder: bool,
    /// Games per match, rounded up to whole groups from one opening: pairs
    /// with colours swapped (an even number); in four-player free-for-all
    /// groups of 4 with A once in each seat (a multiple of 4).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    games: u32,
    /// Run directory: take the openings from R/openings.json (created on first
    /// use) and store the result under R/eval/ for `report`. Found
    /// automatically when A is a checkpoint inside R/models/.
    #[arg(long, value_parser = martian_run::store::parse_local_run_dir)]
    run_dir: Option<PathBuf>,
    /// Rating anchor (rated 0) of the gauntlet fit; default: the first opponent.
    #[arg(long, requires = "gauntlet")]
    anchor: Option<String>,
    /// Write the full result (every game) as JSON here (refused when the file
    /// exists, unless --force).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace existing result files (--out, and the result stored in the run
    /// directory) instead of refusing (--out) or storing beside them (`-2`, `-3`, ...).
    #[arg(long)]
    force: bool,
}

/// Where to store a result meant for `path` without replacing an earlier one:
/// `path` itself when it is free (or with `force`), else the first free
/// `<stem>-2.json`, `<stem>-3.json`, ... beside it.
fn free_path(path: &Path, force: bool) -> PathBuf {
    if force || !path.exists() {
        return path.to_path_buf();
    }
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("result").to_string();
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("json").to_string();
    (2u32..)
        .map(|i| path.with_file_name(format!("{stem}-{i}.{ext}")))
        .find(|p| !p.exists())
        .unwrap_or_else(|| path.to_path_buf())
}

/// Stores `bytes` as the run directory's record `path` (see [`free_path`]),
/// saying where it went and whether an earlier result was kept or replaced.
/// Refuses, before any game is played, a run directory whose `eval/` folder
/// cannot take the result ([`store_in_run`]): not a folder, or no file can be
/// created in it (a read-only directory), as `--out` is checked up front.
///
/// # Errors
/// Naming the folder and why.
fn check_result_store(r: &Path) -> Result<()> {
    let eval = r.join(martian_run::layout::EVAL);
    let dir = if eval.exists() {
        anyhow::ensure!(
            eval.is_dir(),
            "run directory {}: {} is not a folder, so the result cannot be stored there; move it aside, or \
             evaluate with --out FILE and a checkpoint outside the run",
            r.display(),
            eval.display()
        );
        eval
    } else {
        r.to_path_buf()
    };
    tempfile::Builder::new().prefix(".probe-").tempfile_in(&dir).map(drop).with_context(|| {
        format!(
            "run directory {}: no file can be created in {} (read-only?), where evaluate stores its result; \
             nothing was played",
            r.display(),
            dir.display()
        )
    })
}

fn store_in_run(path: &Path, bytes: &[u8], force: bool) -> Result<()> {
    let existed = path.exists();
    let target = free_path(path, force);
    write_atomic(&target, bytes)?;
    match (existed, force) {
        (false, _) => println!("result stored in {}", target.display()),
        (true, true) => println!("result stored in {} (replacing the earlier result: --force)", target.display()),
        (true, false) => println!(
            "result stored in {}; the earlier result {} is kept (--force replaces it)",
            target.display(),
            path.display()
        ),
    }
    Ok(())
}

/// The human report of a match: the totals ([`describe_match`]), each
/// player's W/D/L per colour (side or free-for-all seat, as cutechess's
/// "playing White" lines: `random as South: +1 =0 -1 (0.500), as North: ...`)
/// and the pentanomial counts where the match has pairs (not in
/// free-for-all, whose groups of games are no pairs); lines after the first
/// indented by `indent` and two spaces more for the colours.
fn report_lines(m: &MatchResult, indent: &str) -> Vec<String> {
    let mut out = vec![describe_match(m)];
    out.extend(m.colour_lines().into_iter().map(|l| format!("{indent}  {l}")));
    if m.games.iter().any(|g| g.a_seat.is_none()) {
        out.push(format!("{indent}pentanomial (pair scores 0, 0.5, 1, 1.5, 2): {:?}", m.pentanomial));
    }
    out
}

/// Runs `evaluate`.
pub fn run(a: Args) -> Result<()> {
    let cfg = RunConfig::load(&a.config)?;
    with_game!(cfg.game, G => run_game::<G>(&a, &cfg))
}

/// The run directory holding `checkpoint` (`R/models/x.safetensors`), if any.
fn run_dir_of(checkpoint: Option<&Path>) -> Option<PathBuf> {
    // A bundle directory is no checkpoint of a run, even in a folder named models/.
    let models = checkpoint.filter(|c| c.is_file())?.parent()?;
    if models.file_name()? != martian_run::layout::MODELS {
        return None;
    }
    let root = models.parent()?;
    root.join(martian_run::layout::CONFIG).exists().then(|| root.to_path_buf())
}

fn stem(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect()
}

/// The player of spec `s` in a game of `game`, its model resolved as every
/// command resolves one ([`martian_run::checkpoints::resolve_model`]): a
/// checkpoint, an exported bundle directory, or a run directory (its promoted
/// checkpoint, `R/best`). `model=none` is no network. A strength level
/// without a model plays with the game's bundled network, as `play --level`
/// does (`docs/levels.md` measured the levels with it), said on stderr.
///
/// # Errors
/// A model path that is none of those, or a run without a promoted checkpoint.
fn resolve_player(s: PlayerSpec, game: martian_rules::GameKind) -> Result<PlayerSpec> {
    use martian_run::checkpoints::{bundled_model, resolve_model, NO_MODEL};
    let resolve = |p: PathBuf| resolve_model(&p).with_context(|| format!("player {}", p.display()));
    Ok(match s {
        PlayerSpec::Net(p) => PlayerSpec::Net(resolve(p)?),
        PlayerSpec::Mcts { model, visits, movetime, level, statics, veto_depth } => {
            let model = match model {
                Some(p) if p == Path::new(NO_MODEL) => None,
                Some(p) => Some(resolve(p)?),
                None if level.is_some() && statics.is_none() => {
                    let found = bundled_model(game);
                    let l = level.unwrap_or_default();
                    match &found {
                        Some(b) => eprintln!(
                            "player mcts:level={l}: using the bundled model {} (model={NO_MODEL} plays without a network)",
                            b.display()
                        ),
                        None => eprintln!("player mcts:level={l}: {game} has no bundled model; it plays without a network"),
                    }
                    found
                }
                None => None,
            };
            PlayerSpec::Mcts { model, visits, movetime, level, statics, veto_depth }
        }
        s => s,
    })
}

fn run_game<G: AbGame>(a: &Args, cfg: &RunConfig) -> Result<()> {
    let spec_a = resolve_player(PlayerSpec::parse(&a.a)?, G::KIND)?;
    let b = a.b.as_deref().unwrap_or_default();
    let specs_b = match (a.ladder, a.gauntlet) {
        (true, _) => Vec::new(),
        (false, true) => PlayerSpec::parse_list(b)?,
        (false, false) => vec![PlayerSpec::parse(b)?],
    };
    let specs_b = specs_b.into_iter().map(|s| resolve_player(s, G::KIND)).collect::<Result<Vec<_>>>()?;
    let rules = cfg.rules::<G>()?;
    let players = G::new_game(&rules)?.num_players();
    let pairs = martian_evaluate::groups_for_games(a.games, players);
    let per_group = martian_evaluate::games_per_group(players);
    // In u64: 2^31 pairs of 2 games overflow u32.
    let total = u64::from(pairs) * u64::from(per_group);
    if total != u64::from(a.games) {
        let how = if players > 2 {
            format!("in groups of {per_group} from one opening, A once in each seat")
        } else {
            "in pairs, each opening once with either colour".to_string()
        };
        eprintln!("note: --games {} rounded up to {total}: games are played {how}", a.games);
    }
    if let Some(p) = a.out.as_deref() {
        martian_run::rundir::check_output_path("--out", p)?;
        if p.exists() && !a.force {
            bail!("--out {} exists: an earlier result; choose another file, or add --force to replace it", p.display());
        }
    }
    if let Some(r) = &a.run_dir {
        RunDir::check_is_run(r).context("--run-dir")?;
    }
    let device = martian_run::runtime::setup_runtime(cfg)?;
    let run_dir = a.run_dir.clone().or_else(|| run_dir_of(spec_a.checkpoint()));
    if let Some(r) = &run_dir {
        let run_game = RunConfig::load(&r.join(martian_run::layout::CONFIG))
            .with_context(|| format!("the {} of run directory {}", martian_run::layout::CONFIG, r.display()))?
            .game;
        if run_game != cfg.game {
            bail!(
                "run directory {} is a {run_game} run, and the config's game is {}: evaluate with the run's \
                 config ({}) or a config of the same game",
                r.display(),
                cfg.game,
                r.join(martian_run::layout::CONFIG).display()
            );
        }
    }
    if let (Some(r), false) = (&run_dir, a.ladder) {
        check_result_store(r)?;
    }
    let book = run_dir.as_ref().map(|r| r.join(martian_run::layout::OPENINGS));
    // Every result names the rules it was played under (a ladder: the run's).
    if !a.ladder {
        println!("rules: {}", serde_json::to_string(&rules)?);
    }
    if a.ladder {
        let Some(r) = &run_dir else {
            bail!("--ladder needs a run directory (its calibrated ladder): give --run-dir R, or a checkpoint in R/models/");
        };
        return ladder::<G>(a, r, &spec_a, pairs, device);
    }
    if !a.gauntlet {
        let (m, _) = run_match_with::<G>(cfg, &rules, &spec_a, &specs_b[0], pairs, device, book.as_deref(), None)?;
        println!("{}", report_lines(&m, "").join("\n"));
        if let Some(p) = &a.out {
            write_atomic(p, serde_json::to_string_pretty(&m)?.as_bytes())?;
            println!("result written to {}", p.display());
        }
        if let Some(r) = &run_dir {
            let p = r.join(martian_run::layout::EVAL).join(format!("match-{}-vs-{}.json", stem(&m.a), stem(&m.b)));
            store_in_run(&p, serde_json::to_string_pretty(&m)?.as_bytes(), a.force)?;
        }
        return Ok(());
    }
    // Gauntlet.
    let ca = load_player_checkpoint::<G>(cfg, &spec_a, &rules, device)?;
    let cbs =
        specs_b.iter().map(|s| load_player_checkpoint::<G>(cfg, s, &rules, device)).collect::<Result<Vec<_>>>()?;
    let mut pa = make_player::<G>(cfg, &spec_a, &ca, device, cfg.seed ^ 0xA)?;
    let mut opps: Vec<Box<dyn Player<G> + '_>> = specs_b
        .iter()
        .zip(&cbs)
        .enumerate()
        .map(|(i, (s, c))| make_player::<G>(cfg, s, c, device, cfg.seed ^ (0xB + i as u64)))
        .collect::<Result<_>>()?;
    // An anchor must be one of the players (checked before any game is played).
    if let Some(anchor) = &a.anchor {
        let names: Vec<String> = std::iter::once(pa.name()).chain(opps.iter().map(|o| o.name())).collect();
        if !names.contains(anchor) {
            bail!("--anchor {anchor:?} is not a player of this gauntlet; the players are: {}", names.join(", "));
        }
    }
    let start = G::new_game(&rules)?;
    let lines = opening_lines(cfg, &start, book.as_deref(), pairs)?;
    let bar = progress(pairs as u64 * 2 * opps.len() as u64, "gauntlet");
    let matches = gauntlet(&start, pa.as_mut(), &mut opps, &lines, pairs, |_, _| bar.inc(1))
        .map_err(|e| anyhow!("gauntlet: {e}"))?;
    bar.finish_and_clear();
    for m in &matches {
        println!("{}", report_lines(m, "  ").join("\n"));
    }
    let results: Vec<PairResult> = matches
        .iter()
        .map(|m| PairResult { a: m.a.clone(), b: m.b.clone(), wins: m.wins, draws: m.draws, losses: m.losses })
        .collect();
    let anchor = a.anchor.clone().unwrap_or_else(|| matches[0].b.clone());
    let ratings = match fit_ratings(&results, &anchor, martian_run::results::PRIOR_SD_ELO) {
        Ok(r) => {
            println!("Bradley-Terry ratings (anchor {anchor} = 0, 95% intervals):");
            for p in &r.players {
                let note = match &p.relative_to {
                    Some(x) => format!("; not connected to {anchor}: relative to {x}"),
                    None => String::new(),
                };
                println!("  {:>20}  {} ({} games, score {:.3}{note})", p.text(), p.name, p.games, p.score);
            }
            Some(r)
        }
        Err(e) => {
            eprintln!("warning: no rating fit: {e}");
            None
        }
    };
    let player = pa.name();
    let rec = GauntletRecord { player: player.clone(), matches, ratings };
    if let Some(p) = &a.out {
        write_atomic(p, serde_json::to_string_pretty(&rec)?.as_bytes())?;
        println!("result written to {}", p.display());
    }
    if let Some(r) = &run_dir {
        let p = r.join(martian_run::layout::EVAL).join(format!("gauntlet-{}.json", stem(&player)));
        store_in_run(&p, serde_json::to_string_pretty(&rec)?.as_bytes(), a.force)?;
    }
    Ok(())
}

/// `evaluate --ladder`: A against each rung of run `r`'s ladder (the run's own
/// config and calibration, `martian_run::ladder::calibration`), then A's Elo
/// with the rungs' ratings held fixed (`martian_evaluate::rate_against_fixed`,
/// the pipeline's ladder Elo).
///
/// # Errors
/// The run's config or calibration, a match, or no games.
fn ladder<G: AbGame>(a: &Args, r: &Path, spec_a: &PlayerSpec, pairs: u32, device: tch::Device) -> Result<()> {
    let run = RunDir::existing(r)?;
    let run_cfg = RunConfig::load(&r.join(martian_run::layout::CONFIG))?;
    let rules = run_cfg.rules::<G>()?;
    println!("rules (the run's): {}", serde_json::to_string(&rules)?);
    let cal = martian_run::ladder::calibration::<G>(&run_cfg, &rules, &run, device)?;
    let mut rows = Vec::new();
    let mut matches = Vec::new();
    for spec in &cal.ladder {
        let elo = cal.ratings.get(spec).map_or(0.0, |x| x.elo);
        let (m, _) = run_match_with::<G>(
            &run_cfg,
            &rules,
            spec_a,
            &PlayerSpec::parse(spec)?,
            pairs,
            device,
            Some(&run.openings()),
            None,
        )?;
        println!("{} (rung {elo:+.0})", report_lines(&m, "  ").join("\n"));
        rows.push((elo, m.wins, m.draws, m.losses));
        matches.push(m);
    }
    let rating = martian_evaluate::rate_against_fixed(&rows).context("--ladder: no games were played")?;
    let scale: Vec<String> =
        cal.ladder.iter().map(|s| format!("{s} = {:+.0}", cal.ratings.get(s).map_or(0.0, |x| x.elo))).collect();
    println!(
        "ladder Elo of {}: {} (95%), {} games; scale: {}",
        matches.first().map_or(String::new(), |m| m.a.clone()),
        martian_run::ladder::rating_text(&rating),
        rating.games,
        scale.join(", ")
    );
    if let Some(p) = &a.out {
        let rec = serde_json::json!({ "player": matches.first().map(|m| m.a.clone()), "rating": rating, "matches": matches, "scale": scale });
        write_atomic(p, serde_json::to_string_pretty(&rec)?.as_bytes())?;
        println!("result written to {}", p.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small real match between the uniform-prior MCTS and the random
    /// player, under `config` (TOML), with `games` games; its `--out` JSON
    /// (`dir/<name>.json`).
    fn evaluate_json(dir: &Path, name: &str, config: &str, games: u32) -> MatchResult {
        let cfg = dir.join(format!("{name}.toml"));
        std::fs::write(&cfg, config).expect("write config");
        let out = dir.join(format!("{name}.json"));
        let args = Args {
            config: cfg,
            a: "uniform".into(),
            b: Some("random".into()),
            gauntlet: false,
            ladder: false,
            games,
            run_dir: None,
            anchor: None,
            out: Some(out.clone()),
            force: false,
        };
        run(args).expect("evaluate");
        serde_json::from_slice(&std::fs::read(&out).expect("read result")).expect("a match result")
    }

    /// `(colour, games, wins + draws + losses)` of each colour.
    fn colours(c: &[martian_evaluate::ColourScore]) -> Vec<(String, u32, u32)> {
        c.iter().map(|c| (c.colour.clone(), c.games, c.wins + c.draws + c.losses)).collect()
    }

    /// Colour (or seat) matters to a result, so the JSON and the report give each player's W/D/L per
    /// colour, which add up to the totals; in free-for-all per seat.
    #[test]
    fn evaluate_reports_results_per_colour() {
        let dir = tempfile::tempdir().expect("tempdir");
        let two = "game = \"martian-chess\"\nthreads = 1\n[rules]\nmax_plies = 40\n\
                   [evaluate]\nopening_plies = 2\nsimulations = 8\n";
        let m = evaluate_json(dir.path(), "two", two, 4);
        assert_eq!((m.a.as_str(), m.b.as_str(), m.games.len()), ("mcts:uniform,visits=8", "random", 4));
        let sides = |n| vec![("South".to_string(), n, n), ("North".to_string(), n, n)];
        assert_eq!((colours(&m.a_colours), colours(&m.b_colours)), (sides(2), sides(2)));
        let sum = |f: fn(&martian_evaluate::ColourScore) -> u32| m.a_colours.iter().map(f).sum::<u32>();
        assert_eq!((sum(|c| c.wins), sum(|c| c.draws), sum(|c| c.losses)), (m.wins, m.draws, m.losses));
        // B's colours mirror A's: B as South played the games A played as North.
        let (a_north, b_south) = (&m.a_colours[1], &m.b_colours[0]);
        assert_eq!((a_north.wins, a_north.draws, a_north.losses), (b_south.losses, b_south.draws, b_south.wins));
        let lines = report_lines(&m, "");
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert!(
            lines[1].starts_with("  mcts:uniform,visits=8 as South: +") && lines[1].contains(", as North: +"),
            "{lines:?}"
        );
        assert!(lines[2].starts_with("  random as South: +"), "{lines:?}");

        let ffa = "game = \"martian-chess-4p\"\nthreads = 1\n[rules]\nteams = false\nmax_plies = 40\n\
                   [model]\nvalue_players = 4\n[evaluate]\nopening_plies = 2\nsimulations = 8\n";
        let m = evaluate_json(dir.path(), "ffa", ffa, 2);
        assert_eq!(m.games.len(), 4, "one opening, A in each seat");
        let seats = |n| ["SW", "NW", "NE", "SE"].map(|s| (s.to_string(), n, n)).to_vec();
        assert_eq!((colours(&m.a_colours), colours(&m.b_colours)), (seats(1), seats(3)));
        let json = std::fs::read_to_string(dir.path().join("ffa.json")).expect("read");
        assert!(json.contains("\"a_colour\": \"SW\"") && json.contains("\"scores\": ["), "{json}");
    }

    /// Four-player free-for-all: `--games N` plays N games rounded up to
    /// groups of 4 (A once in each seat), every game names its winning
    /// seat(s) and no side, and the report has no pentanomial line (no pairs).
    #[test]
    fn free_for_all_plays_the_games_asked_for_and_names_the_winning_seats() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ffa = "game = \"martian-chess-4p\"\nthreads = 1\n[rules]\nteams = false\nmax_plies = 40\n\
                   [model]\nvalue_players = 4\n[evaluate]\nopening_plies = 2\nsimulations = 4\n";
        let m = evaluate_json(dir.path(), "ffa8", ffa, 8);
        assert_eq!(m.games.len(), 8, "--games 8: two groups of 4, not 16");
        let m6 = evaluate_json(dir.path(), "ffa6", ffa, 6);
        assert_eq!(m6.games.len(), 8, "--games 6 rounds up to two groups");
        const SEATS: [&str; 4] = ["SW", "NW", "NE", "SE"];
        for g in &m.games {
            assert_eq!(g.a_side, None, "a seat is no side: {g:?}");
            assert_eq!(g.a_colour, SEATS[g.a_seat.expect("a seat") as usize]);
            let w = g.winner.as_deref().expect("every free-for-all game has winners");
            // The winners are the seats with the top score.
            let top = g.scores.iter().copied().fold(f64::MIN, f64::max);
            let want: Vec<&str> = (0..4).filter(|&i| g.scores[i] == top).map(|i| SEATS[i]).collect();
            assert_eq!(w, want.join(","), "{g:?}");
        }
        let json = std::fs::read_to_string(dir.path().join("ffa8.json")).expect("read");
        assert!(!json.contains("\"a_side\"") && json.contains("\"winner\": \""), "{json}");
        assert!(report_lines(&m, "").iter().all(|l| !l.contains("pentanomial")), "{:?}", report_lines(&m, ""));
        // Two-player games keep their side, winner and pentanomial line.
        let two = "game = \"martian-chess\"\nthreads = 1\n[rules]\nmax_plies = 40\n\
                   [evaluate]\nopening_plies = 2\nsimulations = 4\n";
        let m = evaluate_json(dir.path(), "two2", two, 2);
        assert!(m.games.iter().all(|g| g.a_side.is_some() && g.a_seat.is_none()));
        for g in &m.games {
            let want = match g.a_score {
                s if s > 0.75 => Some(g.a_colour.clone()),
                s if s < 0.25 => Some(if g.a_colour == "South" { "North" } else { "South" }.to_string()),
                _ => None,
            };
            assert_eq!(g.winner, want, "{g:?}");
        }
        assert!(report_lines(&m, "").iter().any(|l| l.contains("pentanomial")));
    }

    #[test]
    fn earlier_results_are_not_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("match-a-vs-b.json");
        assert_eq!(free_path(&p, false), p);
        std::fs::write(&p, "{}").expect("write");
        assert_eq!(free_path(&p, false), dir.path().join("match-a-vs-b-2.json"));
        assert_eq!(free_path(&p, true), p, "--force replaces");
        std::fs::write(dir.path().join("match-a-vs-b-2.json"), "{}").expect("write");
        assert_eq!(free_path(&p, false), dir.path().join("match-a-vs-b-3.json"));
    }
}
