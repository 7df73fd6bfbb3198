//! `martian-zero analysis`: a JSON analysis engine for frontends, after
//! KataGo's analysis engine (`docs/protocol.md`, "Analysis engine"): one JSON
//! query a line on stdin, one JSON answer a line on stdout (flushed), many
//! queries in flight at once.
//!
//! Every query in flight is an MCTS search ([`martian_search::MctsJob`]);
//! each round, every running search gathers its next batch of leaves and all
//! of them go to the network in **one** evaluator call
//! ([`martian_search::search_together`]), so ten queries at once share the
//! network's batches as KataGo's do. A search with the same position, visits
//! and `--batch` builds the same tree as `engine`'s `go visits N`, so both
//! play the same move. A line that is not a query (not JSON, an unknown
//! field, an illegal move, a position that does not parse) gets an error
//! answer, with the query's `id` when it could be read, and the engine goes on.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Result;
use martian_rules::{GameKind, GameState};
use martian_run::checkpoints::{model_and_game, model_rules, LoadedModel};
use martian_search::{search_together, AbGame, MctsConfig, MctsJob, Pace, SearchLimits};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::think::Priors;
use crate::with_game;

/// Arguments of `analysis`.
#[derive(clap::Args)]
pub struct Args {
    /// Which game (default: the model's game; required without --model).
    #[arg(long, value_parser = crate::game_parser())]
    game: Option<GameKind>,
    /// Network: a checkpoint `.safetensors`, an exported bundle directory or a
    /// run directory (its promoted checkpoint); its rules are used. Without
    /// it: uniform priors and value 0 (network-free MCTS).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Device for the network: auto, cpu, cuda, cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    /// Visits of a query without `maxVisits` (at least 1).
    #[arg(long, default_value_t = 400, value_parser = clap::value_parser!(u32).range(1..))]
    visits: u32,
    /// Leaves each search gathers per round (as `engine --batch`), 1..=256.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=256))]
    batch: u32,
    /// Queries searched at once (their leaves share one network batch); more wait their turn.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1024))]
    max_in_flight: u32,
    /// libtorch intra-op CPU threads (0 = all cores), as `engine --threads`.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=1024))]
    threads: u32,
}

/// Longest principal variation of a move, unless the query asks for another (`pvLength`).
const PV_LEN: usize = 16;
/// Moves reported unless the query says otherwise (`maxMoves`; 0 = every visited move).
const MAX_MOVES: usize = 10;

/// One query, as sent (KataGo's field names where they fit; `docs/protocol.md`).
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Query {
    /// Echoed in the answer (a string or a number).
    #[allow(dead_code)]
    id: Value,
    /// The game's name; must be the engine's game.
    game: Option<String>,
    /// A position string of the game (default: the initial position).
    position: Option<String>,
    /// Moves played from `position` before the search.
    #[serde(default, deserialize_with = "null_as_default")]
    moves: Vec<String>,
    /// Visit limit (default: `--visits`).
    #[serde(default, deserialize_with = "whole")]
    max_visits: Option<u32>,
    /// Time limit in milliseconds (with the visit limit: the first reached).
    #[serde(default, deserialize_with = "whole")]
    movetime: Option<u64>,
    /// Moves reported, most visited first (default 10; 0 = every visited move).
    #[serde(default, deserialize_with = "whole")]
    max_moves: Option<usize>,
    /// Report every legal move's prior (`policy`).
    #[serde(default, deserialize_with = "null_as_default")]
    include_policy: bool,
    /// Longest line per move (default 16).
    #[serde(default, deserialize_with = "whole")]
    pv_length: Option<usize>,
}

/// The fields a query may have: any other gets a `warning` answer naming it,
/// and the query is analysed without it (as KataGo's analysis engine does).
const QUERY_FIELDS: [&str; 9] =
    ["id", "game", "position", "moves", "maxVisits", "movetime", "maxMoves", "includePolicy", "pvLength"];

/// `null` is the field left out (JSON clients write `null` for "none").
fn null_as_default<'de, D: serde::Deserializer<'de>, T: Default + Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A count: a JSON integer, or a number with no fractional part (`1.0`,
/// which JSON writers such as Python's produce for floats); `null` = absent.
/// A fraction, a negative number or one out of range is refused.
fn whole<'de, D: serde::Deserializer<'de>, T: TryFrom<u64>>(d: D) -> Result<Option<T>, D::Error> {
    use serde::de::Error;
    let Some(v) = Option::<serde_json::Number>::deserialize(d)? else { return Ok(None) };
    let n = match (v.as_u64(), v.as_f64()) {
        (Some(n), _) => n,
        (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => f as u64,
        _ => return Err(D::Error::custom(format!("expected a whole number >= 0, got {v}"))),
    };
    T::try_from(n).map(Some).map_err(|_| D::Error::custom(format!("{n} is out of range")))
}

/// A line's first character may be a UTF-8 byte order mark (some editors
/// and Windows tools write one): it is not part of the JSON.
fn strip_bom(line: &str) -> &str {
    line.strip_prefix('\u{feff}').unwrap_or(line)
}

/// The query's `id` from the start of a line that is not a whole JSON
/// object (too long, or not UTF-8): the value after the first `"id":`, when
/// it reads as a string or a number, so that the error answer carries it.
fn id_in_prefix(text: &str) -> Option<Value> {
    let at = text.find("\"id\"")?;
    let rest = text[at + 4..].trim_start().strip_prefix(':')?;
    let v = serde_json::Deserializer::from_str(rest).into_iter::<Value>().next()?.ok()?;
    (v.is_string() || v.is_number()).then_some(v)
}

/// An error answer: the message, the query's `id` when it was read, and the
/// field the error is about when there is one.
fn error_answer(id: Option<&Value>, field: Option<&str>, message: &str) -> Value {
    let mut a = json!({ "error": message });
    if let Some(id) = id {
        a["id"] = id.clone();
    }
    if let Some(f) = field {
        a["field"] = json!(f);
    }
    a
}

/// Writes one answer line and flushes; false once stdout is gone.
fn answer(v: &Value) -> bool {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{v}").and_then(|()| out.flush()).is_ok()
}

/// Runs `analysis`.
pub fn run(a: Args) -> Result<()> {
    // A closed stdout (the frontend went away) must end the engine, not kill it.
    let (model, device, game) = model_and_game(a.model.as_deref(), &a.device, a.game, true)?;
    tch::set_num_threads(if a.threads == 0 { tch::get_num_threads() } else { a.threads as i32 });
    with_game!(game, G => serve::<G>(&a, model.as_ref(), device))
}

/// A query being searched.
struct InFlight<G: GameState> {
    id: Value,
    query: Query,
    position: G,
    job: MctsJob<G>,
}

/// Reads queries from stdin on a thread of its own (bounded lines: `engine`'s
/// 1 MiB), so that searches go on while a frontend writes; `None` at the end.
fn read_lines() -> mpsc::Receiver<std::result::Result<String, (String, Option<Value>)>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        let mut buf = Vec::new();
        loop {
            let max = super::engine::MAX_LINE_BYTES;
            buf.clear();
            let line = match super::engine::read_line_bounded(&mut lock, &mut buf, max) {
                Ok((0, _)) | Err(_) => break,
                Ok((n, true)) => Err((
                    format!("a line of {n} bytes is longer than {max}; ignored"),
                    id_in_prefix(strip_bom(&String::from_utf8_lossy(&buf))),
                )),
                Ok((_, false)) => match std::str::from_utf8(&buf) {
                    Ok(s) => Ok(strip_bom(s).trim().to_string()),
                    Err(e) => Err((
                        format!("a line that is not UTF-8 (byte {}); ignored", e.valid_up_to()),
                        id_in_prefix(strip_bom(&String::from_utf8_lossy(&buf))),
                    )),
                },
            };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn serve<G: AbGame>(a: &Args, model: Option<&LoadedModel>, device: tch::Device) -> Result<()> {
    let rules: G::Rules = model_rules::<G>(model)?;
    let config = MctsConfig { leaves_per_batch: a.batch, ..MctsConfig::default() };
    let max_in_flight = a.max_in_flight as usize;
    let mut ev: Priors<G> = match model {
        Some(m) => Priors::Net(martian_model::NetEvaluator::new(&m.ck.net, device, a.batch as usize * max_in_flight)),
        None => Priors::Uniform,
    };
    let lines = read_lines();
    let mut waiting: VecDeque<InFlight<G>> = VecDeque::new();
    let mut running: Vec<InFlight<G>> = Vec::new();
    let mut evals = Vec::new();
    let mut open = true;
    let mut pace = Pace::default();
    loop {
        // New lines: all that have come; block only when there is nothing to search.
        loop {
            let next = if running.is_empty() && waiting.is_empty() && open {
                lines.recv().map_err(|_| mpsc::TryRecvError::Disconnected)
            } else {
                lines.try_recv()
            };
            match next {
                Ok(Ok(line)) if line.is_empty() => {}
                Ok(Ok(line)) => match start::<G>(&line, &rules, &config, a.visits, pace) {
                    Ok((q, warnings)) => {
                        if !warnings.iter().all(answer) {
                            return Ok(());
                        }
                        waiting.push_back(q);
                    }
                    Err(now) => {
                        if !answer(&now) {
                            return Ok(());
                        }
                    }
                },
                Ok(Err((message, id))) => {
                    if !answer(&error_answer(id.as_ref(), None, &message)) {
                        return Ok(());
                    }
                }
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        while running.len() < max_in_flight {
            let Some(q) = waiting.pop_front() else { break };
            running.push(q);
        }
        if running.is_empty() {
            if open {
                continue;
            }
            return Ok(());
        }
        {
            let mut jobs: Vec<&mut MctsJob<G>> = running.iter_mut().map(|q| &mut q.job).collect();
            search_together(&mut jobs, &mut ev, false, &mut evals);
        }
        let mut k = 0;
        while k < running.len() {
            if running[k].job.end().is_some() {
                let q = running.swap_remove(k);
                pace = q.job.pace();
                if !answer(&result_answer(&q)) {
                    return Ok(());
                }
            } else {
                k += 1;
            }
        }
    }
}

/// Reads a query line and sets up its search, with a `warning` answer for
/// each field it does not know (ignored); `Err` holds an answer to write at
/// once instead: an error (naming the field when there is one), or the
/// answer for a finished position (the answer's shape, with `gameOver`, no
/// moves and no `bestMove`).
fn start<G: AbGame>(
    line: &str,
    rules: &G::Rules,
    config: &MctsConfig,
    default_visits: u32,
    pace: Pace,
) -> std::result::Result<(InFlight<G>, Vec<Value>), Value> {
    let v: Value = serde_json::from_str(line)
        .map_err(|e| error_answer(None, None, &format!("the line is not JSON ({e}); ignored")))?;
    let id = v.get("id").cloned();
    let Some(id) = id.filter(|id| id.is_string() || id.is_number()) else {
        return Err(error_answer(None, Some("id"), "a query needs an \"id\" (a string or a number)"));
    };
    let Some(fields) = v.as_object() else {
        return Err(error_answer(Some(&id), None, "a query is a JSON object"));
    };
    let warnings: Vec<Value> = fields
        .keys()
        .filter(|k| !QUERY_FIELDS.contains(&k.as_str()))
        .map(|k| json!({ "id": id, "warning": format!("unknown field `{k}`: ignored"), "field": k }))
        .collect();
    let query: Query = serde_json::from_value(v.clone()).map_err(|e| {
        let field = bad_field(&v);
        error_answer(Some(&id), field.as_deref(), &format!("bad query: {e}"))
    })?;
    let bad = |field: &str, message: String| error_answer(Some(&id), Some(field), &message);
    if let Some(g) = &query.game {
        match g.parse::<GameKind>() {
            Ok(k) if k == G::KIND => {}
            Ok(k) => return Err(bad("game", format!("this engine analyses {}, not {k}", G::KIND))),
            Err(e) => return Err(bad("game", e.to_string())),
        }
    }
    let mut position = match &query.position {
        Some(text) => G::from_position(text, rules).map_err(|e| bad("position", format!("bad position: {e}")))?,
        None => G::new_game(rules).map_err(|e| bad("position", format!("no initial position: {e}")))?,
    };
    for (i, text) in query.moves.iter().enumerate() {
        if position.outcome().is_some() {
            return Err(bad("moves", format!("moves[{i}] {text:?}: the game is already over")));
        }
        let mv = position.parse_move(text).map_err(|e| bad("moves", format!("moves[{i}] {text:?}: {e}")))?;
        position.play(mv).map_err(|e| bad("moves", format!("moves[{i}] {text:?}: {e}")))?;
    }
    if query.max_visits == Some(0) {
        return Err(bad("maxVisits", "maxVisits must be at least 1".into()));
    }
    if let Some(o) = position.outcome() {
        let winner = martian_selfplay::winner_name(&position);
        let value = position_value(&position);
        let mut a = json!({
            "id": id,
            "turnNumber": position.ply(),
            "isDuringSearch": false,
            "gameOver": { "winner": winner, "reason": format!("{:?}", o.reason) },
            "rootInfo": {
                "visits": 0,
                "value": value,
                "winrate": (value + 1.0) / 2.0,
                "currentPlayer": position.mover_name(),
                "currentTeam": G::side_name(position.side_to_move()),
            },
            "moveInfos": [],
        });
        if query.include_policy {
            a["policy"] = json!([]);
        }
        return Err(a);
    }
    let limits = SearchLimits {
        visits: Some(query.max_visits.unwrap_or(default_visits)),
        movetime: query.movetime.map(Duration::from_millis),
        ..SearchLimits::default()
    };
    let job = MctsJob::new(config, position.clone(), limits, Instant::now(), pace)
        .map_err(|e| error_answer(Some(&id), None, &e.to_string()))?;
    Ok((InFlight { id, query, position, job }, warnings))
}

/// The field a query failed on: the first field that fails alone (with the
/// `id`), e.g. `maxVisits` for `-5` or `moves` for a string. (Unknown fields
/// never fail a query: they get a warning, [`QUERY_FIELDS`].)
fn bad_field(v: &Value) -> Option<String> {
    let fields = v.as_object()?;
    fields.keys().filter(|k| k.as_str() != "id").find_map(|k| {
        let alone = json!({ "id": fields["id"], k.as_str(): fields[k] });
        serde_json::from_value::<Query>(alone).is_err().then(|| k.clone())
    })
}

/// The value of a finished position for the side to move (+1 won, -1 lost, 0 drawn).
fn position_value<G: GameState>(s: &G) -> f32 {
    s.outcome().map_or(0.0, |o| o.value_for(s.side_to_move()))
}

/// The answer of a finished search.
fn result_answer<G: GameState>(q: &InFlight<G>) -> Value {
    let tree = q.job.tree();
    let info = q.job.info();
    let pos = &q.position;
    let value = info.score.map_or(0.0, |s| match s {
        martian_search::Score::Value(v) => v,
        _ => 0.0,
    }) + 0.0; // no `-0.0` in the answer
    let pv_len = q.query.pv_length.unwrap_or(PV_LEN);
    let max_moves = q.query.max_moves.unwrap_or(MAX_MOVES);
    let visited: Vec<_> = info.root_moves.iter().filter(|m| m.visits > 0 || Some(m.mv) == info.best_move).collect();
    let shown = if max_moves == 0 { visited.len() } else { visited.len().min(max_moves) };
    let move_infos: Vec<Value> = visited[..shown]
        .iter()
        .enumerate()
        .map(|(order, m)| {
            let line: Vec<String> = {
                let mut s = pos.clone();
                tree.move_variation(m.mv, pv_len)
                    .into_iter()
                    .map(|mv| {
                        let t = s.move_to_string(mv);
                        s.play_unchecked(mv);
                        t
                    })
                    .collect()
            };
            json!({
                "move": pos.move_to_string(m.mv),
                "order": order,
                "visits": m.visits,
                "value": m.value,
                "winrate": m.value.map(|v| (v + 1.0) / 2.0),
                "prior": m.prior,
                "pv": line,
            })
        })
        .collect();
    let mut a = json!({
        "id": q.id,
        "turnNumber": pos.ply(),
        "isDuringSearch": false,
        "rootInfo": {
            "visits": info.visits.unwrap_or(0),
            "value": value,
            "winrate": (value + 1.0) / 2.0,
            "currentPlayer": pos.mover_name(),
            "currentTeam": G::side_name(pos.side_to_move()),
        },
        "moveInfos": move_infos,
    });
    if let Some(best) = info.best_move {
        a["bestMove"] = json!(pos.move_to_string(best));
    }
    if let Some(martian_search::End::EvalError(e)) = &info.end {
        a["warning"] = json!(format!("the network failed during the search ({e}); the answer holds what was searched"));
    }
    if q.query.include_policy {
        let mut order: Vec<_> = info.root_moves.iter().collect();
        order.sort_by(|x, y| y.prior.total_cmp(&x.prior));
        a["policy"] =
            order.iter().map(|m| json!({ "move": pos.move_to_string(m.mv), "prior": m.prior })).collect::<Value>();
    }
    a
}
