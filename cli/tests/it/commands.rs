//! `play` and `analyse` end to end: they take the rules from
//! the network (checkpoint, bundle or run directory), `play` is a small REPL,
//! and the commands refuse bad input before they print or create anything.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{edited, err, micro, mz, mz_stdin, out, Size};

/// A Jetan run under non-default rules (as configs/jetan-quick.toml):
/// [`Size::Tiny`] with seed 2, two games in flight of four simulations, two
/// games a shard.
fn jetan() -> String {
    edited(
        &micro(Size::Tiny, "jetan", 2),
        &[
            ("rules.no_capture_limit", "80"),
            ("rules.max_plies", "300"),
            ("selfplay.games_in_flight", "2"),
            ("selfplay.simulations", "4"),
            ("selfplay.games_per_shard", "2"),
        ],
        &[],
    )
}

/// A Jetan run directory with its untrained, promoted generation 0.
fn jetan_run(dir: &Path) -> std::path::PathBuf {
    let cfg = dir.join("jetan.toml");
    std::fs::write(&cfg, jetan()).unwrap();
    let run = dir.join("run");
    let o =
        mz(&["pipeline", "--config", cfg.to_str().unwrap(), "--run-dir", run.to_str().unwrap(), "--stop-after", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(run.join("models/gen0000.safetensors").exists());
    run
}

#[test]
fn play_and_analyse_use_the_rules_of_the_network() {
    let dir = tempfile::tempdir().unwrap();
    let run = jetan_run(dir.path());
    let ck = run.join("models/gen0000.safetensors");
    let ck = ck.to_str().unwrap();
    let bundle = dir.path().join("bundle");
    let o = mz(&["export", "--checkpoint", ck, "--out", bundle.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    // A checkpoint, the run directory (its best) and a bundle, under the run's rules.
    let mut analyses = Vec::new();
    for model in [ck, run.to_str().unwrap(), bundle.to_str().unwrap()] {
        let o = mz_stdin(&["play", "--game", "jetan", "--engine", "mcts", "--model", model, "--visits", "4"], "quit\n");
        assert!(o.status.success(), "{model}: {}", err(&o));
        let text = out(&o);
        assert!(text.contains("You play Orange"), "{text}");
        assert!(text.contains("\"max_plies\":300") && text.contains("\"no_capture_limit\":80"), "{text}");
        let o = mz(&["analyse", "--model", model, "--visits", "16", "--top", "3"]);
        assert!(o.status.success(), "{model}: {}", err(&o));
        let text = out(&o);
        assert!(text.contains("Orange to move"), "the game comes from the model: {text}");
        let value = text.lines().find(|l| l.starts_with("value ")).expect("a value line");
        assert!(value.contains("16 visits"), "{value}");
        assert_eq!(text.lines().filter(|l| l.ends_with('%') || l.contains("% ")).count(), 3, "top 3 moves: {text}");
        let pv = text.lines().find(|l| l.starts_with("pv ")).expect("a pv line");
        let best = text.lines().find(|l| l.starts_with("bestmove ")).expect("bestmove");
        let first = pv.split_whitespace().nth(1).expect("a move");
        assert!(best.starts_with(&format!("bestmove {first} value ")), "{pv} / {best}");
        // The same network gives the same search, wherever it was loaded from.
        let same = |l: &&str| l.starts_with("pv ") || l.starts_with("bestmove ") || l.contains("% ");
        analyses.push(text.lines().filter(same).map(String::from).collect::<Vec<_>>());
    }
    assert_eq!(analyses[0], analyses[1]);
    assert_eq!(analyses[0], analyses[2]);
    // The engine takes a run directory too, and its game.
    let o = mz_stdin(&["engine", "--model", run.to_str().unwrap()], "hello\nquit\n");
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("engine mcts games jetan model "), "{}", out(&o));
    // The game of the network is checked.
    let o = mz(&["analyse", "--game", "martian-chess", "--model", ck]);
    assert!(!o.status.success());
    assert!(err(&o).contains("plays jetan"), "{}", err(&o));
    // A directory that is neither a run nor a bundle, and a missing path, are named.
    let o = mz(&["analyse", "--model", dir.path().to_str().unwrap()]);
    assert!(!o.status.success() && err(&o).contains("neither a model bundle"), "{}", err(&o));
    let o = mz(&["play", "--model", "/nonexistent/gen0001.safetensors"]);
    assert!(!o.status.success() && err(&o).contains("does not exist"), "{}", err(&o));
}

#[test]
fn play_is_a_small_repl() {
    // The person plays South (moves first); alpha-beta depth 1 answers at once.
    let input = "help\n\nmoves\nD3D5\nundo\nhint\nnonsense\nquit\n";
    let o = mz_stdin(&["play", "--game", "martian-chess", "--engine", "alphabeta", "--depth", "1"], input);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains("undo ") && text.contains("hint ") && text.contains("quit "), "help: {text}");
    assert!(text.contains("10 legal moves: "), "moves: {text}");
    let engine = text.lines().find(|l| l.contains("engine plays")).expect("the engine answered D3D5");
    assert!(engine.contains("score cp ") && engine.contains(" s"), "evaluation and time: {engine}");
    assert!(text.contains("took back your last move"), "{text}");
    assert!(text.lines().any(|l| l.contains("hint: ") && l.contains("score cp ")), "{text}");
    assert!(text.contains("bad move text \"nonsense\""), "{text}");
    // The empty line asked again: one prompt per input line, no error for it.
    assert_eq!(text.matches("your move>").count(), input.lines().count(), "{text}");
    // Leaving says so, with the result so far.
    assert!(text.contains("goodbye: the game is left unfinished after 0 plies"), "{text}");

    // The end of input leaves as `quit` does; a long line is not echoed whole.
    let long = "x".repeat(100_000);
    let o = mz_stdin(&["play", "--game", "martian-chess", "--engine", "greedy"], &format!("{long}\nd3d5\n"));
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains("a line of 100000 bytes is no move"), "{}", &text[..text.len().min(2000)]);
    assert!(text.len() < 20_000, "the line is not printed back: {} bytes", text.len());
    assert!(text.contains("goodbye: the game is left unfinished after 2 plies"), "{text}");

    // Martian Chess, the person second (North): the example move in the
    // introduction is one of North's (from ranks 5-8).
    let o = mz_stdin(&["play", "--game", "martian-chess", "--engine", "greedy", "--second"], "quit\n");
    let text = out(&o);
    let intro = text.lines().next().unwrap_or("");
    let example = intro.split("(e.g. ").nth(1).and_then(|t| t.split(')').next()).expect("an example move");
    let rank: u32 = example[1..2].parse().unwrap();
    assert!(rank >= 5, "North's pieces stand on ranks 5-8: {intro}");

    // Jetan, the person second (Black): Black's home rank is drawn at the bottom.
    let o = mz_stdin(&["play", "--game", "jetan", "--engine", "greedy", "--second"], "quit\n");
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    let ranks: Vec<&str> = text.lines().filter(|l| l.ends_with("Orange") || l.ends_with("Black")).collect();
    assert_eq!(ranks.len(), 2, "{text}");
    assert!(ranks[0].ends_with("Orange") && ranks[1].ends_with("Black"), "{text}");
    // Jetan, the person first (Orange): Orange at the bottom.
    let o = mz_stdin(&["play", "--game", "jetan", "--engine", "greedy"], "quit\n");
    let text = out(&o);
    let ranks: Vec<&str> = text.lines().filter(|l| l.ends_with("Orange") || l.ends_with("Black")).collect();
    assert!(ranks[0].ends_with("Black") && ranks[1].ends_with("Orange"), "{text}");
}

#[test]
fn a_finished_game_says_the_result() {
    // Martian Chess with max_plies = 2: the game ends after one move each.
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("mc");
    let cfg = dir.path().join("mc.toml");
    std::fs::write(
        &cfg,
        "game = \"martian-chess\"\nthreads = 1\n[rules]\nmax_plies = 2\n[model]\nblocks = 1\nchannels = 8\n\
         policy_channels = 2\nvalue_hidden = 8\n",
    )
    .unwrap();
    let o =
        mz(&["pipeline", "--config", cfg.to_str().unwrap(), "--run-dir", run.to_str().unwrap(), "--stop-after", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    let o = mz_stdin(&["play", "--model", run.to_str().unwrap(), "--visits", "2"], "d3d5\n");
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.last().expect("output");
    assert!(last.starts_with("game over: "), "{text}");
    assert!(!lines[lines.len() - 2].contains("to move"), "the status line gives the result: {text}");
}

#[test]
fn analyse_and_engine_print_one_score_unit() {
    let o = mz(&["analyse", "--game", "martian-chess", "--depth", "3"]);
    assert!(o.status.success(), "{}", err(&o));
    let best = out(&o).lines().find(|l| l.starts_with("bestmove")).expect("bestmove").to_string();
    // bestmove <m> score cp N (depth 3, ...)
    let score = best.split(" score ").nth(1).and_then(|s| s.split(" (").next()).expect("a score").to_string();
    assert!(score.starts_with("cp ") || score.starts_with("win ") || score.starts_with("loss "), "{best}");
    let e = mz_stdin(&["engine", "--engine", "alphabeta"], "game martian-chess\nposition startpos\ngo depth 3\n");
    assert!(e.status.success(), "{}", err(&e));
    let info = out(&e).lines().rev().find(|l| l.starts_with("info depth 3 ")).expect("depth 3 info line").to_string();
    assert!(info.contains(&format!("score {score} pv")), "analyse {best:?} vs engine {info:?}");
}

/// A flag that the chosen engine would not use is refused, naming it, rather
/// than silently ignored; so is `--device` without a network to put on it.
#[test]
fn flags_an_engine_does_not_use_are_refused() {
    let cases: [(&[&str], &str); 7] = [
        (&["play", "--game", "jetan", "--engine", "random", "--visits", "5"], "--visits"),
        (&["play", "--game", "jetan", "--engine", "alphabeta", "--visits", "5"], "--visits"),
        (&["play", "--game", "jetan", "--device", "cpu"], "--model"),
        (&["analyse", "--game", "jetan", "--device", "cpu"], "--model"),
        (&["analyse", "--game", "jetan", "--engine", "alphabeta", "--visits", "5"], "--visits"),
        (&["analyse", "--game", "jetan", "--depth", "3", "--top", "2"], "--top"),
        (&["analyse", "--game", "jetan", "--engine", "mcts", "--tt-mib", "8"], "--tt-mib"),
    ];
    for (args, needle) in cases {
        let o = mz_stdin(args, "quit\n");
        assert!(!o.status.success(), "{args:?} should fail: {}", out(&o));
        assert!(err(&o).contains(needle), "{args:?}: {}", err(&o));
        assert!(!err(&o).contains("panicked"), "{args:?}: {}", err(&o));
    }
    // The defaults still apply when the flags are left out.
    let o = mz_stdin(&["play", "--game", "jetan", "--engine", "random"], "quit\n");
    assert!(o.status.success(), "{}", err(&o));
    let o = mz(&["analyse", "--game", "martian-chess", "--engine", "mcts", "--visits", "8"]);
    assert!(o.status.success() && out(&o).contains("8 visits"), "{}{}", out(&o), err(&o));
}

/// `show --moves` takes separate arguments or one argument of moves
/// separated by spaces; an empty one is no move.
#[test]
fn show_takes_a_move_list_in_one_argument() {
    let separate = mz(&["show", "--game", "martian-chess", "--moves", "d3d5", "b6a5"]);
    assert!(separate.status.success(), "{}", err(&separate));
    let joined = mz(&["show", "--game", "martian-chess", "--moves", "d3d5 b6a5"]);
    assert!(joined.status.success(), "{}", err(&joined));
    assert_eq!(out(&separate), out(&joined));
    let none = mz(&["show", "--game", "martian-chess", "--moves", ""]);
    assert!(none.status.success(), "{}", err(&none));
    assert_eq!(out(&none), out(&mz(&["show", "--game", "martian-chess"])));
    assert_ne!(out(&none), out(&joined));
    let bad = mz(&["show", "--game", "martian-chess", "--moves", "d3d5 zz"]);
    assert!(!bad.status.success() && err(&bad).contains("move 2 (zz)"), "{}", err(&bad));
}

#[test]
fn commands_that_continue_a_run_refuse_other_directories() {
    let dir = tempfile::tempdir().unwrap();
    let run = jetan_run(dir.path());
    let cfg = dir.path().join("jetan.toml");
    let cfg = cfg.to_str().unwrap();
    let typo = dir.path().join("rnu");
    let t = typo.to_str().unwrap();
    for args in [
        vec!["train", "--config", cfg, "--run-dir", t],
        vec!["selfplay", "--config", cfg, "--run-dir", t, "--games", "1"],
        vec!["evaluate", "--config", cfg, "--a", "random", "--b", "greedy", "--games", "2", "--run-dir", t],
    ] {
        let o = mz(&args);
        assert!(!o.status.success(), "{args:?}");
        let e = err(&o);
        assert!(e.contains(t) && e.contains("does not exist") && e.contains("pipeline --config"), "{args:?}: {e}");
        assert!(!e.contains("martian-zero: device"), "no device banner before an argument error: {e}");
        assert!(!typo.exists(), "{args:?} created {t}");
    }
    // An existing directory that is not a run.
    let o = mz(&["train", "--config", cfg, "--run-dir", dir.path().to_str().unwrap()]);
    assert!(err(&o).contains("is not a run directory: it has no config.toml"), "{}", err(&o));
    // `report` writes only into runs; `pipeline` starts a run only in a new or
    // empty directory (or one a killed start left with run folders only).
    let o = mz(&["report", "--run-dir", dir.path().to_str().unwrap()]);
    assert!(!o.status.success() && err(&o).contains("not a run directory"), "{}", err(&o));
    assert!(!dir.path().join("report.md").exists());
    let o = mz(&["pipeline", "--config", cfg, "--run-dir", dir.path().to_str().unwrap()]);
    assert!(
        !o.status.success() && err(&o).contains("is not a run directory (no config.toml) and is not empty"),
        "{}",
        err(&o)
    );
    assert!(!dir.path().join("models").exists(), "nothing created in a foreign directory");
    let a_file = dir.path().join("jetan.toml");
    let o = mz(&["pipeline", "--config", cfg, "--run-dir", a_file.to_str().unwrap()]);
    assert!(!o.status.success() && err(&o).contains("is a file, not a directory"), "{}", err(&o));
    // The real run: train gets past the check (and stops: no self-play data yet).
    let o = mz(&["train", "--config", cfg, "--run-dir", run.to_str().unwrap()]);
    let e = err(&o);
    assert!(e.contains("replay window"), "{e}");
    let banner = e.lines().find(|l| l.starts_with("martian-zero: device ")).expect("device banner");
    assert!(
        banner.starts_with("martian-zero: device cpu ") || banner.starts_with("martian-zero: device cuda:"),
        "{banner}"
    );
}

#[test]
fn version_names_commit_and_libtorch() {
    let o = mz(&["--version"]);
    assert!(o.status.success());
    let v = out(&o);
    assert!(v.starts_with(&format!("martian-zero {} (commit ", env!("CARGO_PKG_VERSION"))), "{v}");
    let torch = v.split("libtorch ").nth(1).expect("libtorch version");
    assert!(torch.chars().next().is_some_and(|c| c.is_ascii_digit()), "a version number: {v}");
}

#[test]
fn evaluate_names_unknown_keys_and_keeps_earlier_results() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("mc.toml");
    std::fs::write(&cfg, "game = \"martian-chess\"\nthreads = 1\n[evaluate]\nopening_plies = 2\n").unwrap();
    let c = cfg.to_str().unwrap();
    let o = mz(&["evaluate", "--config", c, "--a", "random", "--b", "alphabeta:depht=2", "--games", "2"]);
    assert!(!o.status.success());
    assert!(err(&o).contains("unknown key \"depht\""), "{}", err(&o));
    let res = dir.path().join("r.json");
    let r = res.to_str().unwrap();
    let o = mz(&["evaluate", "--config", c, "--a", "random", "--b", "greedy", "--games", "2", "--out", r]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(!err(&o).contains("rounded up"), "{}", err(&o));
    let first = std::fs::read_to_string(&res).unwrap();
    // An odd number of games is rounded up to pairs, and says so.
    let odd = dir.path().join("odd.json");
    let o = mz(&[
        "evaluate",
        "--config",
        c,
        "--a",
        "random",
        "--b",
        "greedy",
        "--games",
        "3",
        "--out",
        odd.to_str().unwrap(),
    ]);
    assert!(o.status.success() && err(&o).contains("--games 3 rounded up to 4"), "{}", err(&o));
    std::fs::write(&res, "earlier").unwrap();
    let o = mz(&["evaluate", "--config", c, "--a", "random", "--b", "greedy", "--games", "2", "--out", r]);
    assert!(!o.status.success() && err(&o).contains("--force"), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(&res).unwrap(), "earlier", "the earlier result is kept");
    let o = mz(&["evaluate", "--config", c, "--a", "random", "--b", "greedy", "--games", "2", "--out", r, "--force"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(std::fs::read_to_string(&res).unwrap(), first, "replaced with --force (same seed, same games)");
}

/// A run directory that cannot take `evaluate`'s result is refused before
/// the first game (as `--out` is), not after the last: here its `eval`
/// folder is a file (a permission bit would not stop root, which CI may be);
/// without root, a read-only `eval` folder too.
#[test]
fn evaluate_refuses_a_run_directory_it_cannot_store_in_before_playing() {
    let dir = tempfile::tempdir().unwrap();
    let run = jetan_run(dir.path());
    let cfg = run.join("config.toml");
    let (c, r) = (cfg.to_str().unwrap(), run.to_str().unwrap());
    let args = ["evaluate", "--config", c, "--a", "random", "--b", "greedy", "--games", "2", "--run-dir", r];
    let eval = run.join("eval");
    let aside = dir.path().join("eval-aside");
    std::fs::create_dir_all(&eval).unwrap();
    std::fs::rename(&eval, &aside).unwrap();
    std::fs::write(&eval, "not a folder").unwrap();
    let o = mz(&args);
    assert!(!o.status.success(), "{}", out(&o));
    assert!(err(&o).contains("is not a folder"), "{}", err(&o));
    assert!(!out(&o).contains("score"), "no game is played: {}", out(&o));
    std::fs::remove_file(&eval).unwrap();
    std::fs::rename(&aside, &eval).unwrap();
    let root = std::process::Command::new("id").arg("-u").output().map(|o| out(&o).trim() == "0").unwrap_or(true);
    if !root {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&eval, std::fs::Permissions::from_mode(0o555)).unwrap();
        let o = mz(&args);
        std::fs::set_permissions(&eval, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!o.status.success() && err(&o).contains("no file can be created"), "{}", err(&o));
    }
    let o = mz(&args);
    assert!(o.status.success(), "a writable run directory: {}", err(&o));
    assert!(out(&o).contains("result stored in"), "{}", out(&o));
}

/// `evaluate --gauntlet --anchor X` with X not among the players fails before
/// any game, naming the players (as `report --anchor` does).
#[test]
fn gauntlet_anchor_must_be_a_player() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("mc.toml");
    std::fs::write(&cfg, "game = \"martian-chess\"\nthreads = 1\n[evaluate]\nopening_plies = 2\n").unwrap();
    let c = cfg.to_str().unwrap();
    let base =
        ["evaluate", "--config", c, "--a", "random", "--gauntlet", "--b", "greedy,alphabeta:depth=1", "--games", "2"];
    let o = mz(&[&base[..], &["--anchor", "nosuch"]].concat());
    assert!(!o.status.success());
    assert!(
        err(&o).contains("nosuch") && err(&o).contains("greedy") && err(&o).contains("alphabeta:depth=1"),
        "{}",
        err(&o)
    );
    let o = mz(&[&base[..], &["--anchor", "greedy"]].concat());
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("anchor greedy = 0"), "{}", out(&o));
}

/// A run small enough for a few seconds per generation: [`Size::Pipeline`] with one
/// thread, only full searches, 400 training steps, the default optimizer and
/// learning rate, no final evaluation and no ladder.
fn short_run() -> String {
    edited(
        &micro(Size::Pipeline, "martian-chess", 3),
        &[
            ("threads", "1"),
            ("selfplay.full_search_prob", "1.0"),
            ("train.steps_per_generation", "400"),
            ("evaluate.final_pairs", "0"),
        ],
        &[
            "train.optimizer",
            "train.learning_rate",
            "evaluate.ladder",
            "evaluate.ladder_every",
            "evaluate.ladder_pairs",
        ],
    )
}

#[test]
fn pipeline_terminal_summaries_log_and_interrupt() {
    use std::io::{BufRead, BufReader};
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("micro.toml");
    std::fs::write(&cfg, short_run()).unwrap();
    let run = dir.path().join("run");
    let (c, r) = (cfg.to_str().unwrap(), run.to_str().unwrap());
    let o = mz(&["pipeline", "--config", c, "--run-dir", r, "--stop-after", "1"]);
    assert!(o.status.success(), "{}", err(&o));
    let (e, s) = (err(&o), out(&o));
    assert!(e.contains("generation 1/2 (elapsed "), "{e}");
    let summary = s.lines().find(|l| l.starts_with("generation 1/2 done: 4 games, ")).expect("summary");
    for part in ["positions/s", "training steps", "steps/s", "loss ", "gate +", "promoted"] {
        assert!(summary.contains(part), "{part}: {summary}");
    }
    assert_eq!(e.matches("report: ").count(), 1, "report: once: {e}");
    assert!(s.contains("pipeline: 1/2 generations finished; this invocation ran 1 in "), "{s}");
    assert!(s.contains("best network gen0001.safetensors (generation 1)"), "{s}");
    let log = std::fs::read_to_string(run.join("pipeline.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].ends_with(summary) && lines[0].starts_with("20") && lines[0].contains("Z generation"), "{log}");

    // Resumed, then Ctrl-C during generation 2's training (400 steps).
    let mut child = Command::new(env!("CARGO_BIN_EXE_martian-zero"))
        .args(["pipeline", "--config", c, "--run-dir", r])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 {
        seen.push_str(&line);
        if line.starts_with("generation 2: training") {
            break;
        }
        line.clear();
    }
    assert!(seen.lines().nth(1).is_some_and(|l| l.starts_with("resuming ")), "said first: {seen}");
    assert!(seen.contains("1 of 2 generations finished, best network gen0001.safetensors"), "{seen}");
    assert!(seen.contains("generation 2: 0 of 4 self-play games kept"), "{seen}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let k = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(k.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(2), "ends as Ctrl-C does: {rest}");
    assert!(rest.contains("interrupted: 1 of 2 generations finished"), "{rest}");
    // Training had started: the games and perhaps a partial checkpoint are kept.
    assert!(rest.contains("generation 2: all 4 self-play games kept; training "), "{rest}");
    let resume = format!("pipeline --config {c} --run-dir {r}");
    assert!(rest.contains("continue the run with:") && rest.contains(&resume), "{rest}");
    assert!(!run.join("workers/w0.lock").exists(), "the worker claim is released");
    let log = std::fs::read_to_string(run.join("pipeline.log")).unwrap();
    assert!(log.lines().last().unwrap().contains("interrupted: "), "{log}");

    // A service manager's stop (SIGTERM) is handled as Ctrl-C: the same message.
    let mut child = Command::new(env!("CARGO_BIN_EXE_martian-zero"))
        .args(["pipeline", "--config", c, "--run-dir", r])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 {
        if line.starts_with("generation 2: training") {
            break;
        }
        line.clear();
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let k = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(k.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success(), "{rest}");
    assert!(rest.contains("interrupted: 1 of 2 generations finished"), "SIGTERM says what is kept: {rest}");
    assert!(rest.contains("continue the run with:"), "{rest}");
    assert!(!run.join("workers/w0.lock").exists(), "the worker claim is released");
}

/// Output that cannot be written ends a command without a panic: a full disk
/// (`/dev/full`) gives one error line and status 1; a closed pipe (`| head`)
/// ends it quietly.
#[test]
fn unwritable_output_ends_without_a_panic() {
    use std::io::{BufRead, BufReader};
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_martian-zero"))
        .args(["show", "--game", "jetan"])
        .env("RUST_BACKTRACE", "1")
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(err(&o).contains("cannot write the output"), "{}", err(&o));
    assert!(!err(&o).contains("panicked"), "{}", err(&o));
    let mut child = Command::new(env!("CARGO_BIN_EXE_martian-zero"))
        .args(["perft", "--game", "jetan", "--depth", "3", "--divide"])
        .env("RUST_BACKTRACE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(!first.is_empty());
    // The pipe is closed here (the reader is dropped); the rest of the output fails.
    let o = child.wait_with_output().unwrap();
    assert!(!err(&o).contains("panicked"), "{}", err(&o));
}

/// `evaluate --ladder`: A plays each rung of the run's ladder (calibrated once
/// and kept in the run), and gets its Elo on that fixed scale, the same
/// games and figure when run again (seeded); it needs a run directory and
/// takes no --b.
#[test]
fn evaluate_ladder_rates_a_player_on_the_runs_scale() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("mc.toml");
    let toml = edited(
        &micro(Size::Tiny, "martian-chess", 4),
        &[("evaluate.ladder", "[\"alphabeta:depth=1\", \"alphabeta:depth=2\"]"), ("evaluate.ladder_pairs", "1")],
        &[],
    );
    std::fs::write(&cfg, toml).unwrap();
    let (c, run) = (cfg.to_str().unwrap(), dir.path().join("run"));
    let o = mz(&["pipeline", "--config", c, "--run-dir", run.to_str().unwrap(), "--stop-after", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    let a = format!("mcts:model={},level=2", run.join("models/gen0000.safetensors").display());
    let args = ["evaluate", "--config", c, "--a", &a, "--ladder", "--games", "2"];
    let first = mz(&args);
    assert!(first.status.success(), "{}", err(&first));
    let text = out(&first);
    assert!(text.contains("vs alphabeta:depth=1") && text.contains("vs alphabeta:depth=2"), "{text}");
    let line = text.lines().find(|l| l.starts_with("ladder Elo of ")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("level=2") && line.contains("4 games") && line.contains("alphabeta:depth=1 = +0"), "{line}");
    // Per rung: W/D/L with wins and losses per 100 games; the rules named.
    assert!(text.contains("vs alphabeta:depth=2: +") && text.contains("; per 100 games "), "{text}");
    // Martian Chess has points: each match line and each rung give A's point difference.
    assert!(text.contains("; points ") && text.contains(" a game)"), "{text}");
    assert!(text.contains("rules (the run's): {\"players\":2,"), "{text}");
    assert!(run.join("eval").read_dir().unwrap().any(|e| e.unwrap().file_name().to_string_lossy().contains("calib")));
    assert_eq!(out(&mz(&args)), text, "seeded: the same games and rating");
    let o = mz(&["evaluate", "--config", c, "--a", "random", "--ladder", "--games", "2"]);
    assert!(!o.status.success() && err(&o).contains("--run-dir"), "{}", err(&o));
    let o = mz(&["evaluate", "--config", c, "--a", "random", "--b", "greedy", "--ladder", "--games", "2"]);
    assert!(!o.status.success() && err(&o).contains("--ladder"), "{}", err(&o));
}

/// `--threads` and `--veto-depth` are one argument set ([`SearchArgs`] in
/// the CLI) for every command that searches for a user: the same range
/// check and message, before anything is loaded or printed.
#[test]
fn play_analyse_and_engine_check_the_search_arguments_alike() {
    for cmd in ["play", "analyse", "engine"] {
        let o = mz(&[cmd, "--game", "jetan", "--veto-depth", "9"]);
        assert!(!o.status.success(), "{cmd} took --veto-depth 9");
        let e = err(&o);
        assert!(e.contains("--veto-depth") && e.contains("0..=8") && e.contains("got 9"), "{cmd}: {e}");
        assert!(out(&o).is_empty(), "{cmd} printed before refusing: {}", out(&o));
        let o = mz(&[cmd, "--game", "jetan", "--threads", "2000"]);
        assert!(!o.status.success(), "{cmd} took --threads 2000");
        assert!(err(&o).contains("--threads"), "{cmd}: {}", err(&o));
    }
}
