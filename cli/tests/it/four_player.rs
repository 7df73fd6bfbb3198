//! The four-player game (`martian-chess-4p`, spec §14) through the whole
//! command line: a micro team-game pipeline, export, the engine protocol,
//! `show`, `perft`, `evaluate` with the alpha-beta baseline, and the game's
//! name in errors. Learning results are measured runs (BENCHMARKS.md), not
//! asserted here.

use crate::common::{edited, micro, mz, mz_stdin, Size};

/// [`Size::Pipeline`] for the four-player game: seed 5, 60 plies, four training steps,
/// one generation and a depth-1 alpha-beta ladder after it.
fn config() -> String {
    edited(
        &micro(Size::Pipeline, "martian-chess-4p", 5),
        &[
            ("rules.max_plies", "60"),
            ("train.steps_per_generation", "4"),
            ("train.checkpoint_every", "2"),
            ("evaluate.ladder", r#"["alphabeta:depth=1"]"#),
            ("pipeline.generations", "1"),
        ],
        &["evaluate.ladder_every"],
    )
}

fn engine(args: &[&str], input: &str) -> String {
    let out = mz_stdin(&[&["engine"], args].concat(), input);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn team_game_trains_exports_and_plays_through_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("micro4.toml");
    std::fs::write(&cfg, config()).unwrap();
    let run = dir.path().join("run");
    let (c, r) = (cfg.to_str().unwrap(), run.to_str().unwrap());
    let out = mz(&["pipeline", "--config", c, "--run-dir", r]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(run.join("models/gen0001.safetensors").exists(), "{err}");
    let meta = std::fs::read_to_string(run.join("models/gen0001.json")).unwrap();
    assert!(
        meta.contains("\"game\": \"martian-chess-4p\"") || meta.contains("\"game\":\"martian-chess-4p\""),
        "{meta}"
    );
    // The record of every game names the game and ends with a result.
    let games: Vec<_> = std::fs::read_dir(run.join("games")).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(!games.is_empty());
    for g in &games {
        for line in std::fs::read_to_string(g).unwrap().lines() {
            assert!(line.contains("\"game\":\"martian-chess-4p\""), "{line}");
        }
    }
    assert!(run.join("final-eval.json").exists());
    // `evaluate` takes the run directory as a player: its promoted checkpoint.
    let m = dir.path().join("m.json");
    let out = mz(&["evaluate", "--config", c, "--a", r, "--b", "random", "--games", "2", "--out", m.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let best = std::fs::read_to_string(run.join("best")).unwrap();
    assert!(std::fs::read_to_string(&m).unwrap().contains(best.trim()), "the match names {best}");

    // Export: model.json names the game, its 8192 actions and 19 x 8 x 8 input.
    let bundle = dir.path().join("bundle");
    let out = mz(&["export", "--checkpoint", r, "--out", bundle.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let mj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("model.json")).unwrap()).unwrap();
    let text = mj.to_string();
    assert!(text.contains("martian-chess-4p"), "{text}");
    assert!(text.contains("8192"), "{text}");

    // The engine with the bundle: the model's game is selected, a legal move comes back.
    let o = engine(
        &["--model", bundle.to_str().unwrap()],
        "hello\nposition startpos moves c2d3\ngo visits 16\nisready\nquit\n",
    );
    assert!(o.contains("games martian-chess-4p"), "{o}");
    let best = o.lines().find_map(|l| l.strip_prefix("bestmove ")).expect("a bestmove");
    // After SW's c2d3, NW moves: its pieces are in a5-d8.
    let show = mz(&["show", "--game", "martian-chess-4p", "--moves", "c2d3", best]);
    assert!(show.status.success(), "bestmove {best} is not legal for NW: {}", String::from_utf8_lossy(&show.stderr));
}

#[test]
fn engine_speaks_the_four_player_game_without_a_network() {
    let o = engine(
        &["--engine", "alphabeta"],
        "game martian-chess-4p\nposition startpos\nshow\ngo depth 2\nposition startpos moves a1a1\ngame martian-chess4p\nquit\n",
    );
    assert!(o.contains("info string side SW+NE"), "{o}");
    assert!(
        o.contains("info string position QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP2PPD/QDP2PDQ/QQD2DQQ SW 0 0 0 0 - 0 0"),
        "{o}"
    );
    let best = o.lines().find_map(|l| l.strip_prefix("bestmove ")).expect("a bestmove");
    let legal = o.lines().find_map(|l| l.strip_prefix("info string legal ")).expect("legal moves");
    assert!(legal.split(' ').any(|m| m == best), "{best} not in {legal}");
    assert!(o.contains("error move 1 (\"a1a1\")"), "{o}");
    assert!(o.contains("unknown game \"martian-chess4p\": expected jetan, martian-chess, martian-chess-4p"), "{o}");
}

#[test]
fn perft_show_and_evaluate_know_the_four_player_game() {
    // Spec §14.10: perft 1..3 from the initial position.
    let out = mz(&["perft", "--game", "martian-chess-4p", "--depth", "3"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("perft(3) = 1353"));
    let out = mz(&["show", "--game", "martian-chess-4p", "--moves", "c2d3"]);
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("NW to move"), "{s}");
    let out = mz(&["show", "--game", "martian-chess-4p", "--moves", "c2d3", "c2d3"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("illegal move c2d3"));
    let out = mz(&["perft", "--game", "martian-chess4", "--depth", "1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("martian-chess-4p"));

    // A team match: alpha-beta depth 1 (A + A) against random moves (B + B).
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("micro4.toml");
    std::fs::write(&cfg, config()).unwrap();
    let out = mz(&[
        "evaluate",
        "--config",
        cfg.to_str().unwrap(),
        "--a",
        "alphabeta:depth=1",
        "--b",
        "random",
        "--games",
        "4",
        "--out",
        dir.path().join("m.json").to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("m.json")).unwrap()).unwrap();
    let games = m["games"].as_array().expect("games");
    assert_eq!(games.len(), 4);
    // Pairs swap the teams: A plays each team (and so each seat) equally often.
    let sides: Vec<&str> = games.iter().map(|g| g["a_side"].as_str().unwrap()).collect();
    assert_eq!(sides.iter().filter(|s| **s == "South").count(), 2, "{sides:?}");
}

/// The analysis engine names the seat to move as `currentPlayer` and its
/// team as `currentTeam` (the side the values are for).
#[test]
fn analysis_names_the_seat_to_move_and_its_team() {
    let input = "{\"id\":1,\"maxVisits\":4}\n{\"id\":2,\"maxVisits\":4,\"moves\":[]}\n";
    let o = mz_stdin(&["analysis", "--game", "martian-chess-4p", "--model", "none"], input);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().expect("an answer")).unwrap();
    assert_eq!(first["rootInfo"]["currentPlayer"], "SW", "{first}");
    assert_eq!(first["rootInfo"]["currentTeam"], "SW+NE", "{first}");
    let best = first["bestMove"].as_str().expect("a best move");
    let after = format!("{{\"id\":3,\"maxVisits\":4,\"moves\":[\"{best}\"]}}\n");
    let o = mz_stdin(&["analysis", "--game", "martian-chess-4p", "--model", "none"], &after);
    let a: serde_json::Value = serde_json::from_str(String::from_utf8(o.stdout).unwrap().trim()).unwrap();
    assert_ne!(a["rootInfo"]["currentPlayer"], "SW", "the next seat moves: {a}");
    assert_eq!(a["rootInfo"]["currentTeam"], "NW+SE", "{a}");
}

/// `play` in the free-for-all gives the person one seat and the engine the
/// other three (martian-chess §14.1): the intro names the seat, the engine
/// moves for NW, NE and SE before the person moves again, and `--second`
/// gives the second seat. The team game keeps the team.
#[test]
fn play_gives_the_person_one_seat_of_the_free_for_all() {
    let ffa = ["play", "--game", "martian-chess-4p", "--rules", "teams=false", "--model", "none", "--visits", "4"];
    let o = mz_stdin(&ffa, "c2d1\nquit\n");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("You play SW against"), "{text}");
    let engine_seats: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once("engine plays ").map(|(_, rest)| rest))
        .map(|l| l.split_whitespace().nth(2).unwrap_or(""))
        .collect();
    assert_eq!(engine_seats, ["NW", "NE", "SE"], "{text}");
    assert!(text.contains("ply 4"), "the person moves again at ply 4: {text}");

    let mut second = ffa.to_vec();
    second.push("--second");
    let o = mz_stdin(&second, "quit\n");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("You play NW against"), "{text}");
    assert_eq!(text.matches("engine plays ").count(), 1, "SW moves first: {text}");

    let o = mz_stdin(&["play", "--game", "martian-chess-4p", "--model", "none", "--visits", "4"], "quit\n");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(text.contains("You play SW+NE against"), "the team game keeps the team: {text}");
}

/// `analyse` names the seat to move in the four-player games, not its team
/// (martian-chess §14.3).
#[test]
fn analyse_names_the_seat_to_move() {
    for rules in ["teams=true", "teams=false"] {
        let o = mz(&["analyse", "--game", "martian-chess-4p", "--rules", rules, "--model", "none", "--visits", "8"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        assert!(text.contains("SW to move;"), "{rules}: {text}");
        assert!(!text.contains("SW+NE to move"), "{rules}: {text}");
    }
}
