//! `martian-zero analysis` (docs/protocol.md, "Analysis engine"): one query,
//! ten at once, malformed lines between queries, an illegal move, a bad
//! position, a finished position, the best move against `engine`'s, and the
//! documentation's Python client.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::common::{err, mz_stdin, mz_stdin_bytes, out};

/// Runs `analysis args` on `input` (the queries, one a line) and returns the
/// answers, one JSON object a line, after checking a clean exit.
fn analyse(args: &[&str], input: &str) -> Vec<Value> {
    analyse_bytes(args, input.as_bytes())
}

/// [`analyse`] with any bytes as input.
fn analyse_bytes(args: &[&str], input: &[u8]) -> Vec<Value> {
    let mut full = vec!["analysis"];
    full.extend_from_slice(args);
    // Without a network unless the test names one (not the game's bundled model).
    if !args.contains(&"--model") {
        full.extend_from_slice(&["--model", "none"]);
    }
    let o = mz_stdin_bytes(&full, input);
    assert!(o.status.success(), "analysis failed: {}", err(&o));
    out(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("an answer that is not JSON ({e}): {l}")))
        .collect()
}

/// The answers by id (each id once).
fn by_id(answers: &[Value]) -> BTreeMap<String, Value> {
    let mut m = BTreeMap::new();
    for a in answers {
        let id = a["id"].to_string();
        assert!(m.insert(id.clone(), a.clone()).is_none(), "id {id} answered twice");
    }
    m
}

/// The checks every search answer passes: visits, moves in order, lines starting with their move.
fn check_search_answer(a: &Value, visits: u64) {
    assert!(a.get("error").is_none(), "{a}");
    assert_eq!(a["rootInfo"]["visits"], visits, "{a}");
    let v = a["rootInfo"]["value"].as_f64().unwrap();
    assert!((-1.0..=1.0).contains(&v), "{a}");
    let moves = a["moveInfos"].as_array().unwrap();
    assert!(!moves.is_empty(), "{a}");
    assert_eq!(moves[0]["move"], a["bestMove"], "the first move is the move to play: {a}");
    let mut last = u64::MAX;
    for (k, m) in moves.iter().enumerate() {
        assert_eq!(m["order"], k as u64);
        let n = m["visits"].as_u64().unwrap();
        assert!(n <= last, "most visited first: {a}");
        last = n;
        assert_eq!(m["pv"][0], m["move"], "a line starts with its move: {a}");
        let p = m["prior"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p));
    }
    let total: u64 = moves.iter().map(|m| m["visits"].as_u64().unwrap()).sum();
    assert!(total <= visits, "{a}");
}

/// `engine`'s move for `position` after `go visits N`: the go is sent alone and
/// `quit` only after `bestmove` (a `quit` read during the search would end it early).
fn engine_best(args: &[&str], position: &str, visits: u32) -> String {
    let mut e = crate::engine_protocol::Engine::start(args);
    e.send(position);
    e.send(&format!("go visits {visits}"));
    let lines = e.until("bestmove ");
    let best = lines.last().and_then(|l| l.strip_prefix("bestmove ")).expect("a bestmove line").trim().to_string();
    e.send("quit");
    assert_eq!(e.wait_exit(), 0);
    best
}

#[test]
fn one_query_answers_with_visits_moves_and_lines() {
    let a = analyse(
        &["--game", "martian-chess"],
        "{\"id\":\"q1\",\"game\":\"martian-chess\",\"maxVisits\":120,\"maxMoves\":3,\"includePolicy\":true}\n",
    );
    assert_eq!(a.len(), 1, "{a:?}");
    let a = &a[0];
    assert_eq!(a["id"], "q1");
    assert_eq!(a["turnNumber"], 0);
    check_search_answer(a, 120);
    assert!(a["moveInfos"].as_array().unwrap().len() <= 3);
    let policy = a["policy"].as_array().unwrap();
    let sum: f64 = policy.iter().map(|p| p["prior"].as_f64().unwrap()).sum();
    assert!((sum - 1.0).abs() < 1e-3, "priors sum to 1: {sum}");
    assert_eq!(a["rootInfo"]["currentPlayer"], "South");
}

#[test]
fn ten_queries_at_once_share_the_batches_and_each_is_answered_as_alone() {
    // Ten positions: the start and after each of nine first moves (numbered ids).
    let first = analyse(&["--game", "jetan"], "{\"id\":0,\"maxVisits\":1,\"includePolicy\":true}\n");
    let moves: Vec<String> =
        first[0]["policy"].as_array().unwrap().iter().take(9).map(|m| m["move"].as_str().unwrap().into()).collect();
    assert_eq!(moves.len(), 9, "{first:?}");
    let queries: Vec<String> = (0..10)
        .map(|i| match i {
            0 => "{\"id\":0,\"maxVisits\":60}".to_string(),
            i => format!("{{\"id\":{i},\"moves\":[\"{}\"],\"maxVisits\":60}}", moves[i - 1]),
        })
        .collect();
    let together = by_id(&analyse(&["--game", "jetan", "--max-in-flight", "10"], &(queries.join("\n") + "\n")));
    assert_eq!(together.len(), 10);
    for (i, q) in queries.iter().enumerate() {
        let a = &together[&i.to_string()];
        check_search_answer(a, 60);
        assert_eq!(a["turnNumber"], if i == 0 { 0 } else { 1 });
        // The same search alone gives the same answer (the batches shared, the trees not).
        let alone = analyse(&["--game", "jetan", "--max-in-flight", "1"], &format!("{q}\n"));
        assert_eq!(alone[0]["moveInfos"], a["moveInfos"], "query {i}");
        assert_eq!(alone[0]["bestMove"], a["bestMove"], "query {i}");
    }
}

#[test]
fn bad_lines_get_error_answers_and_the_engine_goes_on() {
    let input = [
        "{\"id\":\"a\",\"maxVisits\":20}",
        "this is not json",
        "{\"maxVisits\":20}",
        "{\"id\":\"b\",\"maxVisits\":20,\"maxVisit\":3}",
        "{\"id\":\"c\",\"moves\":[\"a1a1\"]}",
        "{\"id\":\"d\",\"position\":\"QQD1/QDP1 x\"}",
        "{\"id\":\"e\",\"game\":\"jetan\"}",
        "{\"id\":\"f\",\"maxVisits\":0}",
        "{\"id\":\"h\",\"maxVisits\":-5}",
        "{\"id\":\"i\",\"moves\":\"d3d5\"}",
        "",
        "{\"id\":\"g\",\"maxVisits\":20}",
    ]
    .join("\n")
        + "\n";
    let all = analyse(&["--game", "martian-chess"], &input);
    // An unknown field gets a warning naming it, and the query is analysed
    // without it (KataGo's analysis engine does the same).
    let (warnings, answers): (Vec<Value>, Vec<Value>) = all.into_iter().partition(|a| a.get("warning").is_some());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!((warnings[0]["id"].as_str(), warnings[0]["field"].as_str()), (Some("b"), Some("maxVisit")));
    assert_eq!(answers.len(), 11, "one answer per non-empty line: {answers:?}");
    let errors: Vec<&Value> = answers.iter().filter(|a| a.get("error").is_some()).collect();
    assert_eq!(errors.len(), 8, "{answers:?}");
    let no_id: Vec<&&Value> = errors.iter().filter(|a| a.get("id").is_none()).collect();
    assert_eq!(no_id.len(), 2, "the non-JSON line and the query without an id: {errors:?}");
    assert!(no_id.iter().any(|a| a["error"].as_str().unwrap().contains("not JSON")));
    assert!(no_id.iter().any(|a| a["field"] == "id"));
    let m = by_id(&answers.iter().filter(|a| a.get("id").is_some()).cloned().collect::<Vec<_>>());
    let field = |id: &str| m[&format!("\"{id}\"")]["field"].as_str().unwrap_or("").to_string();
    let message = |id: &str| m[&format!("\"{id}\"")]["error"].as_str().unwrap_or("").to_string();
    check_search_answer(&m["\"b\""], 20);
    assert_eq!(field("c"), "moves");
    assert!(message("c").contains("moves[0] \"a1a1\""), "{}", message("c"));
    assert_eq!(field("d"), "position");
    assert_eq!(field("e"), "game");
    assert!(message("e").contains("martian-chess"), "{}", message("e"));
    assert_eq!(field("f"), "maxVisits");
    assert_eq!(field("h"), "maxVisits", "a negative number: {}", message("h"));
    assert_eq!(field("i"), "moves", "a string for a list: {}", message("i"));
    check_search_answer(&m["\"a\""], 20);
    check_search_answer(&m["\"g\""], 20);
}

#[test]
fn a_finished_position_answers_game_over() {
    // Jetan spec E2: the Dwar takes the Chief, a draw under the standard rules.
    let input = "{\"id\":\"over\",\"position\":\"P9/10/4C5/10/10/4d5/10/10/10/c8p b OB - 0 0\",\"moves\":[\"e5e8\"]}\n\
                 {\"id\":\"late\",\"position\":\"P9/10/4C5/10/10/4d5/10/10/10/c8p b OB - 0 0\",\"moves\":[\"e5e8\",\"a1a2\"]}\n\
                 {\"id\":\"policy\",\"position\":\"P9/10/4C5/10/10/4d5/10/10/10/c8p b OB - 0 0\",\"moves\":[\"e5e8\"],\"includePolicy\":true}\n";
    let answers = by_id(&analyse(&["--game", "jetan"], input));
    let over = &answers["\"over\""];
    assert!(over.get("error").is_none(), "{over}");
    assert_eq!(over["gameOver"]["winner"], Value::Null, "a draw: {over}");
    assert_eq!(over["gameOver"]["reason"], "ChiefCapturedByNonChief", "{over}");
    assert_eq!(over["rootInfo"]["value"], 0.0);
    assert_eq!(over["moveInfos"].as_array().unwrap().len(), 0);
    // The answer's shape of a search (what a client reads is there), with
    // `gameOver` added and no `bestMove`.
    assert_eq!(over["rootInfo"]["winrate"], 0.5, "{over}");
    assert_eq!(over["isDuringSearch"], false, "{over}");
    assert!(over.get("bestMove").is_none(), "{over}");
    assert_eq!(answers["\"policy\""]["policy"], serde_json::json!([]), "includePolicy: {}", answers["\"policy\""]);
    let late = &answers["\"late\""];
    assert_eq!(late["field"], "moves", "{late}");
    assert!(late["error"].as_str().unwrap().contains("already over"), "{late}");
}

#[test]
fn the_best_move_with_a_network_is_the_engine_protocols() {
    use martian_rules::martian::MartianChess;
    let dir = tempfile::tempdir().unwrap();
    let weights = crate::common::tiny_checkpoint::<MartianChess>(dir.path(), 11);
    let w = weights.to_str().unwrap();
    for moves in ["", " moves d3d5"] {
        let json_moves = if moves.is_empty() { "[]" } else { "[\"d3d5\"]" };
        let a = analyse(
            &["--model", w, "--device", "cpu"],
            &format!("{{\"id\":1,\"moves\":{json_moves},\"maxVisits\":100}}\n"),
        );
        check_search_answer(&a[0], 100);
        let best = engine_best(&["--model", w, "--device", "cpu"], &format!("position startpos{moves}"), 100);
        assert_eq!(a[0]["bestMove"], best, "{}", a[0]);
        // A network's priors differ by move (not the uniform 1/n).
        let priors: Vec<f64> =
            a[0]["moveInfos"].as_array().unwrap().iter().map(|m| m["prior"].as_f64().unwrap()).collect();
        assert!(priors.windows(2).any(|p| (p[0] - p[1]).abs() > 1e-6), "{priors:?}");
    }
}

#[test]
fn the_best_move_is_the_engine_protocols() {
    for (game, moves) in [("martian-chess", ""), ("jetan", "")] {
        let a = analyse(&["--game", game], "{\"id\":1,\"maxVisits\":200}\n");
        let best =
            engine_best(&["--engine", "mcts-uniform", "--game", game], &format!("position startpos{moves}"), 200);
        assert_eq!(a[0]["bestMove"], best, "{game}: {}", a[0]);
    }
}

#[test]
fn the_documented_python_client_runs() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md")).unwrap();
    let after = doc.split("<!-- analysis-client -->").nth(1).expect("the marked client in docs/protocol.md");
    let code = after.split("```python\n").nth(1).and_then(|c| c.split("```").next()).expect("a python block");
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(code)
        .env("MARTIAN_ZERO_BIN", env!("CARGO_BIN_EXE_martian-zero"))
        .output()
        .expect("python3 runs");
    let text = out(&o);
    assert!(o.status.success(), "{text}{}", err(&o));
    assert!(text.contains("start: 200 visits, best"), "{text}");
    assert!(text.contains("legal moves, best reply"), "{text}");
}

/// Without `--model` the game's bundled model (`models/martian-chess`,
/// `models/martian-chess-4p`) plays: stderr names it and the priors are the
/// network's (not `1/n`); `--model none` plays without a network (uniform
/// priors).
#[test]
fn the_bundled_model_is_used_without_a_model() {
    let q = "{\"id\":1,\"maxVisits\":16,\"includePolicy\":true}\n";
    let priors = |v: &Value| -> Vec<f64> {
        v["policy"].as_array().unwrap().iter().map(|p| p["prior"].as_f64().unwrap()).collect()
    };
    for game in ["martian-chess", "martian-chess-4p"] {
        let o = mz_stdin(&["analysis", "--game", game], q);
        assert!(o.status.success(), "{}", err(&o));
        let named = format!("models/{game}");
        assert!(err(&o).contains("using the bundled model") && err(&o).contains(&named), "{}", err(&o));
        let a: Value = serde_json::from_str(out(&o).lines().next().unwrap()).unwrap();
        let p = priors(&a);
        assert!(p.windows(2).any(|w| (w[0] - w[1]).abs() > 1e-6), "{game}: the bundled network's priors: {p:?}");
    }
    let o = mz_stdin(&["analysis", "--game", "martian-chess", "--model", "none"], q);
    assert!(o.status.success() && !err(&o).contains("bundled"), "{}", err(&o));
    let a: Value = serde_json::from_str(out(&o).lines().next().unwrap()).unwrap();
    let p = priors(&a);
    assert!(p.windows(2).all(|w| (w[0] - w[1]).abs() < 1e-6), "uniform priors: {p:?}");
}

/// What JSON clients write is taken as they mean it: a UTF-8 byte order mark
/// before a query, whole numbers written as floats (`8.0`, as Python's json
/// writes a float), `null` for a field left out; a fraction is refused; a
/// line that is not UTF-8 or is too long is answered with the query's `id`
/// when its start holds one.
#[test]
fn queries_are_read_as_json_clients_write_them() {
    let mut input = Vec::new();
    input.extend_from_slice(b"\xef\xbb\xbf{\"id\":\"bom\",\"maxVisits\":8}\n");
    input.extend_from_slice(b"{\"id\":\"float\",\"maxVisits\":8.0,\"maxMoves\":2.0,\"pvLength\":3.0}\n");
    input.extend_from_slice(
        b"{\"id\":\"nulls\",\"maxVisits\":8,\"moves\":null,\"includePolicy\":null,\"position\":null,\"game\":null}\n",
    );
    input.extend_from_slice(b"{\"id\":\"fraction\",\"maxVisits\":1.5}\n");
    input.extend_from_slice(b"{\"id\":\"bytes\",\"position\":\"QQD\xff\"}\n");
    input.extend_from_slice(b"{\"id\":17,\"position\":\"");
    input.extend(std::iter::repeat_n(b'x', 1_100_000));
    input.extend_from_slice(b"\"}\n");
    let m = by_id(&analyse_bytes(&["--game", "martian-chess"], &input));
    assert_eq!(m.len(), 6, "{m:?}");
    for id in ["bom", "float", "nulls"] {
        let a = &m[&format!("\"{id}\"")];
        assert!(a.get("error").is_none(), "{id}: {a}");
        check_search_answer(a, 8);
    }
    assert!(m["\"float\""]["moveInfos"].as_array().unwrap().len() <= 2);
    assert_eq!(m["\"fraction\""]["field"], "maxVisits", "{}", m["\"fraction\""]);
    assert!(m["\"bytes\""]["error"].as_str().unwrap().contains("not UTF-8"), "{}", m["\"bytes\""]);
    assert!(m["17"]["error"].as_str().unwrap().contains("longer than"), "{}", m["17"]);
}
