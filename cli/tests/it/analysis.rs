//! `martian-zero analysis` (docs/protocol.md, "Analysis engine"): one query,
//! ten at once, malformed lines between queries, an illegal move, a bad
//! position, a finished position, the best move against `engine`'s, and the
//! documentation's Python client; the actions (`query_version`,
//! `query_models`, `clear_cache`, `terminate`, `terminate_all`, an unknown
//! one), `reportDuringSearchEvery`, `analyzeTurns` and the node cap.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

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
        "{\"id\":\"e\",\"game\":\"chess\"}",
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

/// A network with a score head (`model.score_head`) answers `scoreLead`
/// (KataGo's expected point difference for the side to move) in
/// `rootInfo` and for every move; a network without one does not.
#[test]
fn a_network_with_a_score_head_answers_the_score_lead() {
    use martian_rules::martian::MartianChess;
    let dir = tempfile::tempdir().unwrap();
    let plain = crate::common::tiny_checkpoint::<MartianChess>(dir.path(), 11);
    let scored = dir.path().join("scored.safetensors");
    {
        let cfg = martian_model::ModelConfig {
            blocks: 1,
            channels: 8,
            policy_channels: 2,
            value_hidden: 8,
            score_head: true,
            ..Default::default()
        };
        let _rng = crate::common::torch_rng();
        let ck = martian_model::Checkpoint::new_random::<MartianChess>(&Default::default(), &cfg, tch::Device::Cpu, 12)
            .expect("net");
        ck.save(&scored).expect("save");
    }
    for (weights, has) in [(&scored, true), (&plain, false)] {
        let w = weights.to_str().unwrap();
        let a = analyse(&["--model", w, "--device", "cpu"], "{\"id\":1,\"moves\":[],\"maxVisits\":50}\n");
        check_search_answer(&a[0], 50);
        let lead = &a[0]["rootInfo"]["scoreLead"];
        let moves = a[0]["moveInfos"].as_array().unwrap();
        if has {
            // Within the points the two sets hold.
            assert!(lead.as_f64().is_some_and(|x| x.abs() <= 36.0), "{}", a[0]);
            assert!(moves.iter().all(|m| m["scoreLead"].as_f64().is_some_and(|x| x.abs() <= 36.0)), "{}", a[0]);
        } else {
            assert!(lead.is_null() && moves.iter().all(|m| m["scoreLead"].is_null()), "{}", a[0]);
        }
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
    assert!(text.contains("stopped at") && text.contains("then: terminate"), "{text}");
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

/// An `analysis` process driven line by line (for the actions that act on
/// searches under way): queries written as they are needed, answers read as
/// they come.
struct Live {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: Receiver<Value>,
}

impl Live {
    /// Starts `analysis args` (without a network unless `args` names one).
    fn start(args: &[&str]) -> Live {
        let mut full = vec!["analysis"];
        full.extend_from_slice(args);
        if !args.contains(&"--model") {
            full.extend_from_slice(&["--model", "none"]);
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_martian-zero"))
            .args(&full)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("analysis starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("an answer that is not JSON ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Live { child, stdin, answers }
    }

    /// Writes one line.
    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").and_then(|()| stdin.flush()).expect("write to analysis");
    }

    /// The next answer (within two minutes: the machine may be loaded).
    fn next(&self) -> Value {
        self.answers.recv_timeout(Duration::from_secs(120)).expect("an answer in time (and no exit)")
    }

    /// Closes stdin and returns the answers still to come, after a clean exit.
    fn finish(mut self) -> Vec<Value> {
        drop(self.stdin.take());
        let rest: Vec<Value> = self.answers.iter().collect();
        assert!(self.child.wait().expect("wait").success(), "analysis exits cleanly");
        rest
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        // A failed test must not leave a search running.
        if self.stdin.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `query_version` (the crate's version and the commit built), `query_models`
/// (none here; the network's path and game with `--model`), `clear_cache`
/// (echoed) and the errors: an unknown action and a `terminate` without its
/// `terminateId`, each naming its field. Every answer echoes the action's
/// fields, as KataGo's analysis engine does.
#[test]
fn actions_answer_as_katagos_analysis_engine() {
    let input = [
        "{\"id\":\"v\",\"action\":\"query_version\"}",
        "{\"id\":\"m\",\"action\":\"query_models\"}",
        "{\"id\":\"c\",\"action\":\"clear_cache\"}",
        "{\"id\":\"x\",\"action\":\"fly\"}",
        "{\"id\":\"y\",\"action\":3}",
        "{\"id\":\"t\",\"action\":\"terminate\"}",
        "{\"id\":\"n\",\"action\":\"terminate\",\"terminateId\":\"nothing\",\"turnNumbers\":[1,2]}",
        "{\"id\":\"b\",\"action\":\"terminate_all\",\"turnNumbers\":\"all\"}",
        "{\"id\":\"q\",\"maxVisits\":8}",
    ]
    .join("\n")
        + "\n";
    let m = by_id(&analyse(&["--game", "martian-chess"], &input));
    let v = &m["\"v\""];
    assert_eq!((v["action"].as_str(), v["version"].as_str()), (Some("query_version"), Some(env!("CARGO_PKG_VERSION"))));
    assert!(!v["git_hash"].as_str().unwrap().is_empty(), "{v}");
    assert_eq!(m["\"m\""]["models"], serde_json::json!([]), "no network: {}", m["\"m\""]);
    assert_eq!(m["\"c\""], serde_json::json!({"id": "c", "action": "clear_cache"}));
    for (id, field) in [("x", "action"), ("y", "action"), ("t", "terminateId"), ("b", "turnNumbers")] {
        let a = &m[&format!("\"{id}\"")];
        assert!(a.get("error").is_some(), "{a}");
        assert_eq!(a["field"], field, "{a}");
    }
    assert!(m["\"x\""]["error"].as_str().unwrap().contains("query_version"), "the actions are listed: {}", m["\"x\""]);
    assert_eq!(m["\"n\""]["terminateId"], "nothing", "a terminate of nothing is answered: {}", m["\"n\""]);
    check_search_answer(&m["\"q\""], 8);

    // With a network: its file, game and rules.
    use martian_rules::martian::MartianChess;
    let dir = tempfile::tempdir().unwrap();
    let weights = crate::common::tiny_checkpoint::<MartianChess>(dir.path(), 5);
    let w = weights.to_str().unwrap();
    let a = analyse(&["--model", w, "--device", "cpu"], "{\"id\":1,\"action\":\"query_models\"}\n");
    let model = &a[0]["models"][0];
    assert_eq!(model["name"], w, "{}", a[0]);
    assert_eq!(model["game"], "martian-chess", "{}", a[0]);
    assert!(model["rules"].is_object(), "{}", a[0]);
}

/// `reportDuringSearchEvery`: answers with `isDuringSearch: true` while the
/// search runs (the final answer's shape, visits growing), then one final
/// answer with `false`, the last.
#[test]
fn reports_come_during_the_search_then_the_final_answer() {
    // A search of 600 ms (the movetime; the visit limit is not reached)
    // reported every 50 ms: at least two reports however loaded the machine.
    let q =
        "{\"id\":\"r\",\"maxVisits\":4294967295,\"movetime\":600,\"reportDuringSearchEvery\":0.05,\"maxMoves\":2}\n";
    let answers = analyse(&["--game", "martian-chess"], q);
    let (last, during) = answers.split_last().expect("answers");
    assert!(during.len() >= 2, "{} reports during the search", during.len());
    let mut visits = 0;
    for a in during {
        assert_eq!((a["id"].as_str(), a["isDuringSearch"].as_bool()), (Some("r"), Some(true)), "{a}");
        assert!(a["bestMove"].is_string() && !a["moveInfos"].as_array().unwrap().is_empty(), "{a}");
        let n = a["rootInfo"]["visits"].as_u64().unwrap();
        assert!(n >= visits, "visits grow: {a}");
        visits = n;
    }
    assert_eq!(last["isDuringSearch"], false, "{last}");
    let n = last["rootInfo"]["visits"].as_u64().unwrap();
    assert!(n >= visits, "{last}");
    check_search_answer(last, n);
    // Bad intervals name the field.
    let bad = by_id(&analyse(
        &["--game", "martian-chess"],
        "{\"id\":1,\"reportDuringSearchEvery\":0}\n{\"id\":2,\"reportDuringSearchEvery\":\"often\"}\n\
         {\"id\":3,\"reportDuringSearchEvery\":1,\"firstReportDuringSearchAfter\":-1}\n",
    ));
    assert_eq!(bad["1"]["field"], "reportDuringSearchEvery", "{}", bad["1"]);
    assert_eq!(bad["2"]["field"], "reportDuringSearchEvery", "{}", bad["2"]);
    assert_eq!(bad["3"]["field"], "firstReportDuringSearchAfter", "{}", bad["3"]);
}

/// `terminate` stops a search under way soon (its answer holds what it
/// found) and a query still waiting for its turn (`noResults`); every turn
/// it stops is answered before the terminate's own answer (the query
/// echoed); the engine goes on with the next query.
#[test]
fn terminate_stops_a_running_and_a_waiting_query() {
    let mut e = Live::start(&["--game", "martian-chess", "--max-in-flight", "1"]);
    e.send("{\"id\":\"long\",\"maxVisits\":4294967295,\"reportDuringSearchEvery\":0.05}");
    e.send("{\"id\":\"queued\",\"maxVisits\":4294967295}");
    let report = e.next();
    assert_eq!((report["id"].as_str(), report["isDuringSearch"].as_bool()), (Some("long"), Some(true)), "{report}");
    let sent = Instant::now();
    e.send("{\"id\":\"stop\",\"action\":\"terminate\",\"terminateId\":\"long\"}");
    let mut a = e.next();
    while a["isDuringSearch"] == true {
        a = e.next();
    }
    let took = sent.elapsed();
    assert_eq!((a["id"].as_str(), a["isDuringSearch"].as_bool()), (Some("long"), Some(false)), "{a}");
    assert!(a.get("noResults").is_none(), "a search under way answers what it found: {a}");
    let visits = a["rootInfo"]["visits"].as_u64().unwrap();
    assert!(visits > 0 && visits < 4_294_967_295, "{a}");
    check_search_answer(&a, visits);
    // Far above what was measured (a few ms, at most 74 ms on a loaded machine;
    // docs/protocol.md): a loaded machine may stall a process for long.
    assert!(took < Duration::from_secs(2), "terminate took {took:?}");
    let ack = e.next();
    assert_eq!(ack, serde_json::json!({"id": "stop", "action": "terminate", "terminateId": "long"}));
    // The waiting query now searches (or is about to): stopped, it has one
    // final answer, before the terminate's.
    e.send("{\"id\":\"stop2\",\"action\":\"terminate\",\"terminateId\":\"queued\",\"turnNumbers\":[0]}");
    let q = e.next();
    assert_eq!((q["id"].as_str(), q["isDuringSearch"].as_bool()), (Some("queued"), Some(false)), "{q}");
    assert_eq!(e.next()["id"], "stop2");
    // A query waiting behind another is stopped with `noResults`.
    e.send("{\"id\":\"first\",\"maxVisits\":4294967295}");
    e.send("{\"id\":\"second\",\"maxVisits\":4294967295}");
    e.send("{\"id\":\"stop3\",\"action\":\"terminate\",\"terminateId\":\"second\"}");
    assert_eq!(
        e.next(),
        serde_json::json!({"id": "second", "turnNumber": 0, "isDuringSearch": false, "noResults": true})
    );
    assert_eq!(e.next()["id"], "stop3");
    e.send("{\"id\":\"stop4\",\"action\":\"terminate\",\"terminateId\":\"first\"}");
    assert_eq!(e.next()["id"], "first");
    assert_eq!(e.next()["id"], "stop4");
    e.send("{\"id\":\"after\",\"maxVisits\":8}");
    let rest = e.finish();
    assert_eq!(rest.len(), 1, "{rest:?}");
    check_search_answer(&rest[0], 8);
}

/// `terminate_all` stops every query, searching or waiting, each answered
/// once, then itself.
#[test]
fn terminate_all_stops_every_query() {
    let mut e = Live::start(&["--game", "jetan", "--max-in-flight", "2"]);
    for id in 0..4 {
        e.send(&format!("{{\"id\":{id},\"maxVisits\":4294967295,\"reportDuringSearchEvery\":0.05}}"));
    }
    // Both searches under way have reported.
    let mut reported = std::collections::BTreeSet::new();
    while reported.len() < 2 {
        let a = e.next();
        assert_eq!(a["isDuringSearch"], true, "{a}");
        reported.insert(a["id"].as_u64().unwrap());
    }
    e.send("{\"id\":\"all\",\"action\":\"terminate_all\"}");
    let mut finals = BTreeMap::new();
    loop {
        let a = e.next();
        if a["id"] == "all" {
            assert_eq!(a["action"], "terminate_all");
            break;
        }
        if a["isDuringSearch"] == false {
            assert!(finals.insert(a["id"].as_u64().unwrap(), a).is_none(), "one final answer each");
        }
    }
    assert_eq!(finals.keys().copied().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    for (id, a) in &finals {
        if reported.contains(id) {
            assert!(a["rootInfo"]["visits"].as_u64().unwrap() > 0, "{a}");
        } else {
            assert_eq!(a["noResults"], true, "{a}");
        }
    }
    assert!(e.finish().is_empty());
}

/// `analyzeTurns` over a 20-ply game: one answer per turn, each with its
/// `turnNumber` (0 = the start, k = after `moves[k - 1]`), the same search
/// as a query of that position alone; turns out of range name the field.
#[test]
fn analyze_turns_answers_each_turn() {
    use martian_rules::jetan::Jetan;
    use martian_rules::GameState;
    let mut s = Jetan::new_game(&Default::default()).unwrap();
    let mut moves = Vec::new();
    let mut legal = Vec::new();
    let mut movers = Vec::new();
    for ply in 0..20 {
        movers.push(s.mover_name());
        s.legal_moves(&mut legal);
        let mv = legal[ply * 7 % legal.len()];
        moves.push(s.move_to_string(mv));
        s.play(mv).unwrap();
        assert!(s.outcome().is_none());
    }
    movers.push(s.mover_name());
    let list = serde_json::to_string(&moves).unwrap();
    let turns: Vec<u64> = (0..=20).collect();
    let q = format!("{{\"id\":\"game\",\"moves\":{list},\"maxVisits\":12,\"analyzeTurns\":{turns:?}}}\n");
    let answers = analyse(&["--game", "jetan", "--max-in-flight", "4"], &q);
    assert_eq!(answers.len(), 21, "{answers:?}");
    let mut seen: Vec<u64> = answers.iter().map(|a| a["turnNumber"].as_u64().unwrap()).collect();
    seen.sort_unstable();
    assert_eq!(seen, turns);
    for a in &answers {
        assert_eq!(a["id"], "game");
        check_search_answer(a, 12);
        let turn = a["turnNumber"].as_u64().unwrap() as usize;
        assert_eq!(a["rootInfo"]["currentPlayer"], movers[turn], "{a}");
    }
    for turn in [0usize, 7, 20] {
        let alone = serde_json::to_string(&moves[..turn]).unwrap();
        let one = analyse(&["--game", "jetan"], &format!("{{\"id\":1,\"moves\":{alone},\"maxVisits\":12}}\n"));
        let same = answers.iter().find(|a| a["turnNumber"] == turn as u64).unwrap();
        assert_eq!(one[0]["turnNumber"], turn as u64, "without analyzeTurns: the last turn");
        assert_eq!(one[0]["moveInfos"], same["moveInfos"], "turn {turn}");
    }
    let bad = by_id(&analyse(
        &["--game", "jetan"],
        &format!(
            "{{\"id\":1,\"moves\":{list},\"analyzeTurns\":[3,21]}}\n{{\"id\":2,\"analyzeTurns\":[]}}\n\
                  {{\"id\":3,\"analyzeTurns\":[-1]}}\n"
        ),
    ));
    for id in ["1", "2", "3"] {
        assert_eq!(bad[id]["field"], "analyzeTurns", "{}", bad[id]);
    }
}

/// A query with no limit but visits of 2^32 - 1 ends at `--max-nodes`
/// (the tree's node count) instead of growing until the engine is killed.
#[test]
fn a_huge_visit_limit_stops_at_the_node_cap() {
    let a =
        analyse(&["--game", "martian-chess", "--max-nodes", "3000"], "{\"id\":\"huge\",\"maxVisits\":4294967295}\n");
    assert_eq!(a.len(), 1, "{a:?}");
    let visits = a[0]["rootInfo"]["visits"].as_u64().unwrap();
    assert!(visits > 0 && visits < 3000, "{}", a[0]);
    check_search_answer(&a[0], visits);
    let o = mz_stdin(&["analysis", "--game", "martian-chess", "--model", "none", "--max-nodes", "999"], "");
    assert!(!o.status.success() && err(&o).contains("max-nodes"), "{}", err(&o));
}

/// KataGo's `priority`, `overrideSettings`, `avoidMoves` and `allowMoves`
/// with bad values: each an error naming the field, with the `id`, and the
/// engine goes on; a game that does not exist names `game`.
#[test]
fn bad_values_of_katagos_fields_name_the_field() {
    let input = [
        r#"{"id":"p","priority":1.5}"#,
        r#"{"id":"p2","priority":"high"}"#,
        r#"{"id":"o","overrideSettings":{"maxVisits":0}}"#,
        r#"{"id":"o2","overrideSettings":{"fpuReductionMax":"big"}}"#,
        r#"{"id":"o3","overrideSettings":[1]}"#,
        r#"{"id":"a","avoidMoves":[{"player":"Nobody","moves":["c3d4"],"untilDepth":1}]}"#,
        r#"{"id":"a2","avoidMoves":[{"player":"South","moves":["c3d4"]}]}"#,
        r#"{"id":"a3","avoidMoves":[{"player":"South","moves":["c3d4"],"untilDepth":1,"colour":1}]}"#,
        r#"{"id":"l","allowMoves":[{"player":"South","moves":["c3d4"],"untilDepth":1},{"player":"North","moves":[],"untilDepth":1}]}"#,
        r#"{"id":"v","includePVVisits":"yes"}"#,
        r#"{"id":"g","game":"go"}"#,
        r#"{"id":"g2","game":7}"#,
        r#"{"id":"ok","maxVisits":5,"priority":-2,"includePVVisits":true}"#,
    ]
    .join("\n")
        + "\n";
    let m = by_id(&analyse(&["--game", "martian-chess"], &input));
    let field = |id: &str| m[&format!("\"{id}\"")]["field"].as_str().unwrap_or("").to_string();
    for (id, f) in [
        ("p", "priority"),
        ("p2", "priority"),
        ("o", "overrideSettings"),
        ("o2", "overrideSettings"),
        ("o3", "overrideSettings"),
        ("a", "avoidMoves"),
        ("a2", "avoidMoves"),
        ("a3", "avoidMoves"),
        ("l", "allowMoves"),
        ("v", "includePVVisits"),
        ("g", "game"),
        ("g2", "game"),
    ] {
        assert_eq!(field(id), f, "{id}: {}", m[&format!("\"{id}\"")]);
        assert!(m[&format!("\"{id}\"")]["error"].is_string());
    }
    assert_eq!(m["\"o\""]["setting"], "maxVisits");
    assert_eq!(m["\"o2\""]["setting"], "fpuReductionMax");
    check_search_answer(&m["\"ok\""], 5);
    assert!(m["\"ok\""]["moveInfos"][0]["pvVisits"].is_array());
}

/// One process, two games with their own networks: a process of Jetan
/// (without a network: Jetan's standard rules have no bundled one) loads
/// Martian Chess's bundled network when a query first names that game, so
/// its priors are the network's, `query_models` lists it from then on, and
/// Jetan's queries stay network-free.
#[test]
fn a_query_of_another_game_loads_its_bundled_network() {
    let input = [
        r#"{"id":"m0","action":"query_models"}"#,
        r#"{"id":"j","maxVisits":8,"includePolicy":true}"#,
        r#"{"id":"mc","game":"martian-chess","maxVisits":8,"includePolicy":true}"#,
        r#"{"id":"m1","action":"query_models"}"#,
        r#"{"id":"j2","game":"jetan","maxVisits":8,"includePolicy":true}"#,
    ]
    .join("\n")
        + "\n";
    let o = mz_stdin(&["analysis", "--game", "jetan"], &input);
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("models/martian-chess"), "the bundled network is named: {}", err(&o));
    let answers: Vec<Value> = out(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let m = by_id(&answers);
    assert_eq!(m["\"m0\""]["models"], serde_json::json!([]), "no network before: {}", m["\"m0\""]);
    let models = m["\"m1\""]["models"].as_array().unwrap();
    assert_eq!(models.len(), 1, "{models:?}");
    assert_eq!(models[0]["game"], "martian-chess");
    let priors = |id: &str| -> Vec<f64> {
        m[&format!("\"{id}\"")]["policy"].as_array().unwrap().iter().map(|p| p["prior"].as_f64().unwrap()).collect()
    };
    let uniform = |p: &[f64]| p.windows(2).all(|w| (w[0] - w[1]).abs() < 1e-6);
    assert!(!uniform(&priors("mc")), "Martian Chess's network: {:?}", priors("mc"));
    assert!(uniform(&priors("j")) && uniform(&priors("j2")), "Jetan without a network");
    assert_eq!(m["\"mc\""]["rootInfo"]["currentPlayer"], "South");
    check_search_answer(&m["\"mc\""], 8);
    check_search_answer(&m["\"j2\""], 8);
}

/// The query fields of docs/protocol.md's table ("**Query**"), by name.
fn documented_query_fields() -> Vec<String> {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.md")).unwrap();
    let table = doc.split("| field | meaning | default |").nth(1).expect("the query table in docs/protocol.md");
    table
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with("| `"))
        .map(|l| l.trim_start_matches("| `").split('`').next().unwrap().to_string())
        .collect()
}

/// `null` counts as the field left out, for every field of a query (each
/// documented one, read from docs/protocol.md, and `action`) and for the
/// settings of `overrideSettings`: the answer is the one of the query
/// without them, with no warning and no error.
#[test]
fn null_is_absent_for_every_query_field() {
    let fields = documented_query_fields();
    assert!(fields.len() >= 17 && fields.contains(&"allowMoves".to_string()), "{fields:?}");
    let mut nulls = serde_json::Map::new();
    nulls.insert("id".into(), "nulls".into());
    for f in fields.iter().filter(|f| *f != "id").chain(std::iter::once(&"action".to_string())) {
        nulls.insert(f.clone(), Value::Null);
    }
    let settings = r#"{"id":"settings","overrideSettings":{"maxVisits":null,"maxNodes":null,"cpuctExploration":null}}"#;
    let input = format!("{}\n{settings}\n{{\"id\":\"plain\"}}\n", Value::Object(nulls));
    // `--visits 24`: the visits of a query whose maxVisits is left out.
    let all = analyse(&["--game", "martian-chess", "--visits", "24"], &input);
    assert_eq!(all.len(), 3, "one answer each, no warning: {all:?}");
    let m = by_id(&all);
    for id in ["nulls", "settings", "plain"] {
        check_search_answer(&m[&format!("\"{id}\"")], 24);
    }
    let plain = &m["\"plain\""];
    for id in ["nulls", "settings"] {
        let a = &m[&format!("\"{id}\"")];
        assert_eq!(
            (&a["moveInfos"], &a["bestMove"], a["turnNumber"].as_u64()),
            (&plain["moveInfos"], &plain["bestMove"], Some(0)),
            "{id}: {a}"
        );
        assert!(a.get("policy").is_none() && a["moveInfos"][0].get("pvVisits").is_none(), "{id}: {a}");
    }
}

/// A finished position answers in a search answer's shape: every key of
/// the answer and of its `rootInfo` that a search gives is there (the issue's
/// client read `rootInfo.winrate` and `policy`), `gameOver` added, no
/// `bestMove`; the finished game here is Martian Chess at its move cap.
#[test]
fn a_finished_position_has_the_search_answers_shape() {
    let input = "{\"id\":\"live\",\"maxVisits\":8,\"includePolicy\":true}\n\
                 {\"id\":\"over\",\"moves\":[\"d3d5\"],\"includePolicy\":true}\n";
    let m = by_id(&analyse(&["--game", "martian-chess", "--rules", "max_plies=1"], input));
    let (live, over) = (&m["\"live\""], &m["\"over\""]);
    check_search_answer(live, 8);
    assert!(over.get("error").is_none(), "{over}");
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<std::collections::BTreeSet<_>>();
    let mut want = keys(live);
    want.remove("bestMove");
    want.insert("gameOver".into());
    assert_eq!(keys(over), want, "{over}");
    assert_eq!(keys(&over["rootInfo"]), keys(&live["rootInfo"]), "{over}");
    assert_eq!(over["gameOver"]["reason"], "MoveCap", "{over}");
    assert_eq!((over["turnNumber"].as_u64(), over["isDuringSearch"].as_bool()), (Some(1), Some(false)), "{over}");
    let v = over["rootInfo"]["value"].as_f64().unwrap();
    assert_eq!(over["rootInfo"]["winrate"].as_f64(), Some((v + 1.0) / 2.0), "{over}");
    assert_eq!((over["policy"].clone(), over["moveInfos"].clone()), (serde_json::json!([]), serde_json::json!([])));
}

/// The node cap per query: `overrideSettings.maxNodes` ends a search of
/// 2^32 - 1 visits below the process's `--max-nodes` (here the default),
/// and a cap under 1000 is an error naming the setting.
#[test]
fn a_query_caps_its_own_tree_with_max_nodes() {
    let input = "{\"id\":\"capped\",\"maxVisits\":4294967295,\"overrideSettings\":{\"maxNodes\":2000}}\n\
                 {\"id\":\"small\",\"maxVisits\":4294967295,\"overrideSettings\":{\"maxNodes\":999}}\n\
                 {\"id\":\"frac\",\"overrideSettings\":{\"maxNodes\":1500.5}}\n";
    let m = by_id(&analyse(&["--game", "martian-chess"], input));
    let capped = &m["\"capped\""];
    let visits = capped["rootInfo"]["visits"].as_u64().unwrap();
    assert!(visits > 0 && visits < 2000, "{capped}");
    check_search_answer(capped, visits);
    for id in ["small", "frac"] {
        let a = &m[&format!("\"{id}\"")];
        assert_eq!((a["field"].as_str(), a["setting"].as_str()), (Some("overrideSettings"), Some("maxNodes")), "{a}");
    }
}

/// Per move: `edgeVisits` (the tree holds no transpositions: equal to
/// `visits`), `utility` (the mean utility the search maximises: the value,
/// with the score utility off) and `lcb` (`winrate - 1.96 * (stddev / 2) /
/// sqrt(visits)`, stddev the spread of the values backed up through the
/// move, 1 before two were counted), with a network whose values vary.
#[test]
fn moves_report_edge_visits_utility_and_lcb() {
    use martian_rules::martian::MartianChess;
    let dir = tempfile::tempdir().unwrap();
    let weights = crate::common::tiny_checkpoint::<MartianChess>(dir.path(), 11);
    let w = weights.to_str().unwrap();
    let a = analyse(&["--model", w, "--device", "cpu"], "{\"id\":1,\"maxVisits\":300,\"maxMoves\":0}\n");
    check_search_answer(&a[0], 300);
    let moves = a[0]["moveInfos"].as_array().unwrap();
    let mut spread = 0;
    for m in moves {
        let visits = m["visits"].as_u64().unwrap();
        assert_eq!(m["edgeVisits"], m["visits"], "{m}");
        if visits == 0 {
            assert!(m["utility"].is_null() && m["lcb"].is_null(), "unvisited: {m}");
            continue;
        }
        let (value, winrate) = (m["value"].as_f64().unwrap(), m["winrate"].as_f64().unwrap());
        assert!((m["utility"].as_f64().unwrap() - value).abs() < 1e-6, "no score utility: {m}");
        let gap = winrate - m["lcb"].as_f64().unwrap();
        let widest = 0.98 / (visits as f64).sqrt();
        if visits == 1 {
            assert!((gap - 0.98).abs() < 1e-6, "one value: the widest bound: {m}");
        } else {
            assert!((-1e-9..=widest + 1e-9).contains(&gap), "a stddev in [0, 1]: {m}");
            if gap > 1e-6 && gap < widest - 1e-6 {
                spread += 1;
            }
        }
    }
    assert!(spread > 0, "the network's values vary, so some bound lies strictly inside: {}", a[0]);
    // Without a network every value is 0: a spread of 0, the bound the winrate itself.
    let a = analyse(&["--game", "martian-chess"], "{\"id\":1,\"maxVisits\":200,\"maxMoves\":0}\n");
    for m in a[0]["moveInfos"].as_array().unwrap().iter().filter(|m| m["visits"].as_u64() >= Some(2)) {
        assert_eq!((m["lcb"].as_f64(), m["utility"].as_f64()), (Some(0.5), Some(0.0)), "{m}");
    }
}

/// `rootInfo`'s `rawWinrate` (the network's own value before the search;
/// 0.5 without a network), `rawPolicyEntropy` (of the priors, nats) and
/// `thisHash` (the game's Zobrist hash, 16 hex digits).
#[test]
fn root_info_reports_raw_winrate_policy_entropy_and_hash() {
    use martian_rules::martian::MartianChess;
    use martian_rules::GameState;
    let entropy = |a: &Value| -> f64 {
        a["policy"].as_array().unwrap().iter().map(|p| p["prior"].as_f64().unwrap()).map(|p| -p * p.ln()).sum()
    };
    let input = "{\"id\":\"start\",\"maxVisits\":20,\"includePolicy\":true}\n\
                 {\"id\":\"after\",\"moves\":[\"d3d5\"],\"maxVisits\":20,\"includePolicy\":true}\n";
    let m = by_id(&analyse(&["--game", "martian-chess"], input));
    let mut pos = MartianChess::new_game(&Default::default()).unwrap();
    for id in ["start", "after"] {
        let a = &m[&format!("\"{id}\"")];
        let root = &a["rootInfo"];
        assert_eq!(root["rawWinrate"], 0.5, "no network: value 0: {a}");
        let n = a["policy"].as_array().unwrap().len() as f64;
        assert!((root["rawPolicyEntropy"].as_f64().unwrap() - n.ln()).abs() < 1e-6, "uniform priors: ln n: {a}");
        assert_eq!(root["thisHash"], format!("{:016x}", pos.hash()), "{a}");
        if id == "start" {
            pos.play(pos.parse_move("d3d5").unwrap()).unwrap();
        }
    }
    assert_ne!(m["\"start\""]["rootInfo"]["thisHash"], m["\"after\""]["rootInfo"]["thisHash"]);
    let dir = tempfile::tempdir().unwrap();
    let weights = crate::common::tiny_checkpoint::<MartianChess>(dir.path(), 11);
    let w = weights.to_str().unwrap();
    let input = "{\"id\":\"few\",\"maxVisits\":10,\"includePolicy\":true}\n\
                 {\"id\":\"many\",\"maxVisits\":200,\"includePolicy\":true}\n";
    let m = by_id(&analyse(&["--model", w, "--device", "cpu"], input));
    let (few, many) = (&m["\"few\""], &m["\"many\""]);
    let raw = few["rootInfo"]["rawWinrate"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&raw) && raw != 0.5, "the network's value: {few}");
    let raw_many = many["rootInfo"]["rawWinrate"].as_f64().unwrap();
    assert!((raw_many - raw).abs() < 1e-5, "before the search: the same at any visits ({raw_many} vs {raw})");
    let h = few["rootInfo"]["rawPolicyEntropy"].as_f64().unwrap();
    assert!((h - entropy(few)).abs() < 1e-5, "-sum p ln p of the priors: {h} vs {}", entropy(few));
    let n = few["policy"].as_array().unwrap().len() as f64;
    assert!(h > 0.0 && h < n.ln(), "a network's priors are not uniform: {h}");
}

/// `--max-nodes-total`: the searches under way stop when their trees hold
/// that many nodes in all, so the two turns of one query (searched from the
/// same round on) get fewer visits each than under the same cap per tree
/// (`--max-nodes`); a cap under 1000 is refused.
#[test]
fn the_process_node_cap_bounds_every_search_together() {
    let two = "{\"id\":\"a\",\"moves\":[\"d3d5\"],\"analyzeTurns\":[0,1],\"maxVisits\":4294967295}\n";
    let visits = |answers: &[Value]| -> BTreeMap<u64, u64> {
        answers.iter().map(|a| (a["turnNumber"].as_u64().unwrap(), a["rootInfo"]["visits"].as_u64().unwrap())).collect()
    };
    let alone = visits(&analyse(&["--game", "martian-chess", "--max-nodes", "6000"], two));
    let answers = analyse(&["--game", "martian-chess", "--max-nodes-total", "6000"], two);
    assert_eq!(answers.len(), 2, "{answers:?}");
    for a in &answers {
        assert_eq!(a["isDuringSearch"], false, "{a}");
        check_search_answer(a, a["rootInfo"]["visits"].as_u64().unwrap());
    }
    let together = visits(&answers);
    for turn in [0, 1] {
        assert!(
            together[&turn] > 0 && together[&turn] < alone[&turn],
            "the cap shared: turn {turn}: {together:?} vs {alone:?} with a cap per tree"
        );
    }
    // A third query waits behind `--max-in-flight 2` and starts when the cap stops the two.
    let three = format!("{two}{{\"id\":\"c\",\"maxVisits\":50}}\n");
    let answers = analyse(&["--game", "martian-chess", "--max-nodes-total", "6000", "--max-in-flight", "2"], &three);
    let c: Vec<&Value> = answers.iter().filter(|a| a["id"] == "c").collect();
    assert_eq!(c.len(), 1, "{answers:?}");
    assert_eq!(c[0]["rootInfo"]["visits"], 50, "{}", c[0]);
    let o = mz_stdin(&["analysis", "--game", "martian-chess", "--model", "none", "--max-nodes-total", "999"], "");
    assert!(!o.status.success() && err(&o).contains("max-nodes-total"), "{}", err(&o));
}

/// Four-player free-for-all (`--rules teams=false`) has no teams:
/// `analysis` names the seat to move and no `currentTeam`, takes no team
/// name as a `player`, and `engine`'s `show` prints the seat as the side;
/// the team game keeps its team names.
#[test]
fn free_for_all_names_seats_not_teams() {
    let input = "{\"id\":\"q\",\"maxVisits\":20}\n\
                 {\"id\":\"team\",\"maxVisits\":20,\"avoidMoves\":[{\"player\":\"SW+NE\",\"moves\":[\"c2d1\"],\"untilDepth\":1}]}\n\
                 {\"id\":\"seat\",\"maxVisits\":20,\"avoidMoves\":[{\"player\":\"SW\",\"moves\":[\"c2d1\"],\"untilDepth\":1}]}\n";
    let ffa = by_id(&analyse(&["--game", "martian-chess-4p", "--rules", "teams=false"], input));
    let root = &ffa["\"q\""]["rootInfo"];
    assert_eq!(root["currentPlayer"], "SW", "{root}");
    assert!(root.get("currentTeam").is_none(), "no teams in free-for-all: {root}");
    assert_eq!(ffa["\"team\""]["field"], "avoidMoves", "a team is no player here: {}", ffa["\"team\""]);
    let seat = &ffa["\"seat\""];
    assert!(seat.get("error").is_none(), "{seat}");
    assert!(seat["moveInfos"].as_array().unwrap().iter().all(|m| m["move"] != "c2d1"), "{seat}");
    let teams = by_id(&analyse(&["--game", "martian-chess-4p"], input));
    assert_eq!(teams["\"q\""]["rootInfo"]["currentTeam"], "SW+NE", "{}", teams["\"q\""]);
    assert!(teams["\"team\""].get("error").is_none(), "{}", teams["\"team\""]);
    let show = |extra: &[&str]| {
        let mut args = vec!["engine", "--game", "martian-chess-4p", "--model", "none"];
        args.extend_from_slice(extra);
        let o = mz_stdin(&args, "show\nquit\n");
        out(&o).lines().find_map(|l| l.strip_prefix("info string side ").map(str::to_string)).expect("a side line")
    };
    assert_eq!(show(&["--rules", "teams=false"]), "SW");
    assert_eq!(show(&[]), "SW+NE");
}
