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
//! play the same move. A line that is not a query (not JSON, an illegal
//! move, a position that does not parse) gets an error answer, with the
//! query's `id` when it could be read, and the engine goes on; an unknown
//! field gets a warning and the query is analysed without it.
//!
//! Besides queries, a line may be an **action** (KataGo's special action
//! queries): `query_version`, `query_models`, `clear_cache`, `terminate` and
//! `terminate_all`. The searches advance a round at a time on this thread
//! and stdin is read between rounds, so a `terminate` stops a search after
//! the round under way, and the reports of `reportDuringSearchEvery` are
//! written between rounds too.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Result;
use martian_rules::{GameKind, GameState};
use martian_run::checkpoints::{model_and_game, model_rules, LoadedModel};
use martian_search::mcts::NodeKind;
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
    #[command(flatten)]
    rules: super::RulesArgs,
    /// libtorch intra-op CPU threads (0 = all cores), as `engine --threads`.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=1024))]
    threads: u32,
    /// A search stops when its tree holds this many nodes (bounds each
    /// query's memory, as `engine --max-nodes`), at least 1000.
    #[arg(long, default_value_t = 10_000_000, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1000..))]
    max_nodes: u64,
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
    /// The turns to analyse, each answered on its own: 0 is `position`, `k`
    /// the position after `moves[k - 1]` (default: the last, after every move).
    #[serde(default, deserialize_with = "whole_list")]
    analyze_turns: Option<Vec<u64>>,
    /// Seconds between the answers written while a turn is searched
    /// (`isDuringSearch: true`); none without it.
    report_during_search_every: Option<f64>,
    /// Seconds before the first of those answers (default: `reportDuringSearchEvery`).
    first_report_during_search_after: Option<f64>,
}

/// The fields a query may have: any other gets a `warning` answer naming it,
/// and the query is analysed without it (as KataGo's analysis engine does).
const QUERY_FIELDS: [&str; 13] = [
    "id",
    "game",
    "position",
    "moves",
    "maxVisits",
    "movetime",
    "maxMoves",
    "includePolicy",
    "pvLength",
    "analyzeTurns",
    "reportDuringSearchEvery",
    "firstReportDuringSearchAfter",
    "action",
];

/// The actions a line may ask for instead of a search (`"action"`), as KataGo's analysis engine names them.
const ACTIONS: [&str; 5] = ["query_version", "query_models", "clear_cache", "terminate", "terminate_all"];

/// The longest `reportDuringSearchEvery` and `firstReportDuringSearchAfter`, seconds (KataGo's bound).
const MAX_REPORT_SECONDS: f64 = 1e6;
/// The shortest `reportDuringSearchEvery`, seconds (KataGo's bound).
const MIN_REPORT_SECONDS: f64 = 0.001;

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
    let n = whole_number(&v).map_err(D::Error::custom)?;
    T::try_from(n).map(Some).map_err(|_| D::Error::custom(format!("{n} is out of range")))
}

/// A list of counts, each read as [`whole`] reads one; `null` = absent.
fn whole_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<u64>>, D::Error> {
    use serde::de::Error;
    let Some(v) = Option::<Vec<serde_json::Number>>::deserialize(d)? else { return Ok(None) };
    v.iter().map(whole_number).collect::<Result<Vec<_>, _>>().map(Some).map_err(D::Error::custom)
}

/// A JSON number as a whole number >= 0 (`8` or `8.0`), or why it is not one.
fn whole_number(v: &serde_json::Number) -> Result<u64, String> {
    match (v.as_u64(), v.as_f64()) {
        (Some(n), _) => Ok(n),
        (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => Ok(f as u64),
        _ => Err(format!("expected a whole number >= 0, got {v}")),
    }
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

/// Stdout is gone (the frontend went away): the engine ends, without an error.
struct Gone;

/// Writes one answer line and flushes; [`Gone`] once stdout is gone.
fn answer(v: &Value) -> std::result::Result<(), Gone> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{v}").and_then(|()| out.flush()).map_err(|_| Gone)
}

/// Runs `analysis`.
pub fn run(a: Args) -> Result<()> {
    // A closed stdout (the frontend went away) must end the engine, not kill it.
    let (model, device, game) = model_and_game(a.model.as_deref(), &a.device, a.game, true, a.rules.rules.as_deref())?;
    with_game!(game, G => serve::<G>(&a, model.as_ref(), device))
}

/// What every query's search shares: the rules, the search's settings and limits.
struct Settings<G: GameState> {
    rules: G::Rules,
    config: MctsConfig,
    /// Visits of a query without `maxVisits` (`--visits`).
    default_visits: u32,
    /// `--max-nodes`.
    max_nodes: u64,
}

/// One turn of a query (the query itself without `analyzeTurns`), waiting for its search.
struct Turn<G> {
    id: Value,
    /// KataGo's turn number: the `moves` played from `position` before it.
    turn: u64,
    query: Rc<Query>,
    position: G,
}

/// A turn being searched.
struct Searching<G: GameState> {
    turn: Turn<G>,
    job: MctsJob<G>,
    /// With `reportDuringSearchEvery`: when the next `isDuringSearch` answer
    /// is due, and the interval after it.
    report: Option<(Instant, Duration)>,
}

/// What a line asks for.
enum Request<G> {
    /// A query: answers to write at once (warnings, finished positions), then the turns to search.
    Query { now: Vec<Value>, turns: Vec<Turn<G>> },
    /// An action: the line as read (its answer echoes it) and what it asks.
    Action(Value, Action),
}

/// An action line (`"action"`), after KataGo's analysis engine.
enum Action {
    /// `query_version`: the version and the commit built.
    Version,
    /// `query_models`: the network loaded.
    Models,
    /// `clear_cache`: the engine keeps no cache (each search builds its own tree).
    ClearCache,
    /// `terminate` (the queries with the id `target`) and `terminate_all`
    /// (`target` none: every query), of the turns `turns` only when given.
    Terminate { target: Option<Value>, turns: Option<Vec<u64>> },
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
    let settings = Settings::<G> {
        rules: model_rules::<G>(model, a.rules.rules.as_deref())?,
        config: MctsConfig { leaves_per_batch: a.batch, ..MctsConfig::default() },
        default_visits: a.visits,
        max_nodes: a.max_nodes,
    };
    let max_in_flight = a.max_in_flight as usize;
    let max_batch = a.batch as usize * max_in_flight;
    // Threads, and one pass before the first query is timed.
    let start = G::new_game(&settings.rules)?;
    martian_run::runtime::ready_network(model.map(|m| &m.ck.net), device, a.threads as usize, &start)?;
    let mut ev: Priors<G> = match model {
        Some(m) => Priors::Net(martian_model::NetEvaluator::new(&m.ck.net, device, max_batch)),
        None => Priors::Uniform,
    };
    let models = models_answer(model, device, max_batch);
    match serve_lines(&settings, &mut ev, &models, max_in_flight, read_lines()) {
        Ok(()) | Err(Gone) => Ok(()),
    }
}

/// The loop of [`serve`]: reads the lines that have come, starts waiting
/// turns up to `max_in_flight`, searches one round, answers the searches
/// that ended and the reports that are due; at the end of input, once every
/// turn is answered, it returns.
fn serve_lines<G: AbGame>(
    settings: &Settings<G>,
    ev: &mut Priors<G>,
    models: &Value,
    max_in_flight: usize,
    lines: mpsc::Receiver<std::result::Result<String, (String, Option<Value>)>>,
) -> std::result::Result<(), Gone> {
    let mut waiting: VecDeque<Turn<G>> = VecDeque::new();
    let mut running: Vec<Searching<G>> = Vec::new();
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
                Ok(Ok(line)) => match read_request::<G>(&line, settings) {
                    Ok(Request::Query { now, turns }) => {
                        for v in &now {
                            answer(v)?;
                        }
                        waiting.extend(turns);
                    }
                    Ok(Request::Action(echo, action)) => act(echo, action, &mut waiting, &mut running, models)?,
                    Err(e) => answer(&e)?,
                },
                Ok(Err((message, id))) => answer(&error_answer(id.as_ref(), None, &message))?,
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        while running.len() < max_in_flight {
            let Some(t) = waiting.pop_front() else { break };
            match begin(t, settings, pace) {
                Ok(s) => running.push(s),
                Err(e) => answer(&e)?,
            }
        }
        if running.is_empty() {
            if open || !waiting.is_empty() {
                continue;
            }
            return Ok(());
        }
        {
            let mut jobs: Vec<&mut MctsJob<G>> = running.iter_mut().map(|s| &mut s.job).collect();
            search_together(&mut jobs, ev, false, &mut evals);
        }
        let now = Instant::now();
        let mut k = 0;
        while k < running.len() {
            let s = &mut running[k];
            if s.job.end().is_some() {
                let s = running.swap_remove(k);
                pace = s.job.pace();
                answer(&result_answer(&s, false))?;
                continue;
            }
            if let Some((due, every)) = s.report {
                if due <= now {
                    answer(&result_answer(s, true))?;
                    s.report = Some((now + every, every));
                }
            }
            k += 1;
        }
    }
}

/// Starts the search of a turn (its `movetime` counts from now); `Err`: the error answer.
fn begin<G: AbGame>(t: Turn<G>, settings: &Settings<G>, pace: Pace) -> std::result::Result<Searching<G>, Value> {
    let q = &t.query;
    let limits = SearchLimits {
        visits: Some(q.max_visits.unwrap_or(settings.default_visits)),
        movetime: q.movetime.map(Duration::from_millis),
        nodes: Some(settings.max_nodes),
        ..SearchLimits::default()
    };
    let start = Instant::now();
    let job = MctsJob::new(&settings.config, t.position.clone(), limits, start, pace)
        .map_err(|e| error_answer(Some(&t.id), None, &e.to_string()))?;
    let report = q.report_during_search_every.map(|every| {
        let every = Duration::from_secs_f64(every);
        let first = q.first_report_during_search_after.map_or(every, Duration::from_secs_f64);
        (start + first, every)
    });
    Ok(Searching { turn: t, job, report })
}

/// Carries out an action and answers it: the line echoed, with what the
/// action reports added. `terminate` answers each turn it stops first: a
/// waiting one with `noResults`, a searching one with what its search found
/// (`noResults` when its root has no evaluation yet).
fn act<G: AbGame>(
    mut echo: Value,
    action: Action,
    waiting: &mut VecDeque<Turn<G>>,
    running: &mut Vec<Searching<G>>,
    models: &Value,
) -> std::result::Result<(), Gone> {
    match action {
        Action::Version => {
            echo["version"] = json!(env!("CARGO_PKG_VERSION"));
            echo["git_hash"] = json!(env!("MARTIAN_ZERO_GIT_COMMIT"));
        }
        Action::Models => echo["models"] = models.clone(),
        Action::ClearCache => {}
        Action::Terminate { target, turns } => {
            let hit = |id: &Value, turn: u64| {
                target.as_ref().is_none_or(|t| t == id) && turns.as_ref().is_none_or(|ts| ts.contains(&turn))
            };
            let mut kept = VecDeque::with_capacity(waiting.len());
            for t in waiting.drain(..) {
                if hit(&t.id, t.turn) {
                    answer(&no_results(&t))?;
                } else {
                    kept.push_back(t);
                }
            }
            *waiting = kept;
            let mut k = 0;
            while k < running.len() {
                if !hit(&running[k].turn.id, running[k].turn.turn) {
                    k += 1;
                    continue;
                }
                let mut s = running.remove(k);
                if s.job.tree().root().kind == NodeKind::Expanded {
                    // Between rounds no leaf is pending: this only marks the search stopped.
                    s.job.gather(true);
                    answer(&result_answer(&s, false))?;
                } else {
                    answer(&no_results(&s.turn))?;
                }
            }
        }
    }
    answer(&echo)
}

/// The answer of a turn stopped before its search found anything (KataGo's `noResults`).
fn no_results<G>(t: &Turn<G>) -> Value {
    json!({ "id": t.id, "turnNumber": t.turn, "isDuringSearch": false, "noResults": true })
}

/// The network loaded, for `query_models` (an empty list without one).
fn models_answer(model: Option<&LoadedModel>, device: tch::Device, max_batch: usize) -> Value {
    let Some(m) = model else { return json!([]) };
    let device = match device {
        tch::Device::Cpu => "cpu".to_string(),
        tch::Device::Cuda(n) => format!("cuda:{n}"),
        d => format!("{d:?}").to_lowercase(),
    };
    json!([{
        "name": m.source.display().to_string(),
        "game": m.game.to_string(),
        "rules": m.rules,
        "trainingSteps": m.ck.meta.step,
        "device": device,
        "maxBatchSize": max_batch,
    }])
}

/// Reads a line: a query (its turns to search, with a `warning` answer for
/// each field it does not know, ignored, and the answer of each turn whose
/// game is over: the answer's shape, with `gameOver`, no moves and no
/// `bestMove`) or an action; `Err` holds the error answer (naming the field
/// when there is one).
fn read_request<G: AbGame>(line: &str, settings: &Settings<G>) -> std::result::Result<Request<G>, Value> {
    let v: Value = serde_json::from_str(line)
        .map_err(|e| error_answer(None, None, &format!("the line is not JSON ({e}); ignored")))?;
    let id = v.get("id").cloned();
    let Some(id) = id.filter(|id| id.is_string() || id.is_number()) else {
        return Err(error_answer(None, Some("id"), "a query needs an \"id\" (a string or a number)"));
    };
    let Some(fields) = v.as_object() else {
        return Err(error_answer(Some(&id), None, "a query is a JSON object"));
    };
    if let Some(action) = fields.get("action").filter(|a| !a.is_null()) {
        let action = read_action(&v, &id, action)?;
        return Ok(Request::Action(v, action));
    }
    let mut now: Vec<Value> = fields
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
    for (field, value, min) in [
        ("reportDuringSearchEvery", query.report_during_search_every, MIN_REPORT_SECONDS),
        ("firstReportDuringSearchAfter", query.first_report_during_search_after, 0.0),
    ] {
        if let Some(x) = value.filter(|x| !(min..=MAX_REPORT_SECONDS).contains(x)) {
            return Err(bad(field, format!("{field} is {x}: seconds from {min} to {MAX_REPORT_SECONDS}")));
        }
    }
    let last = query.moves.len() as u64;
    let wanted: Vec<u64> = match &query.analyze_turns {
        None => vec![last],
        Some(t) if t.is_empty() => {
            return Err(bad("analyzeTurns", format!("analyzeTurns is empty: give turns from 0 to {last}")))
        }
        Some(t) => {
            if let Some(&far) = t.iter().find(|&&t| t > last) {
                return Err(bad(
                    "analyzeTurns",
                    format!("turn {far} is not in 0..={last} (0: `position`; {last}: after every move)"),
                ));
            }
            let mut t = t.clone();
            t.sort_unstable();
            t.dedup();
            t
        }
    };
    let mut position = match &query.position {
        Some(text) => {
            G::from_position(text, &settings.rules).map_err(|e| bad("position", format!("bad position: {e}")))?
        }
        None => G::new_game(&settings.rules).map_err(|e| bad("position", format!("no initial position: {e}")))?,
    };
    let mut want = wanted.iter().copied().peekable();
    let mut positions: Vec<(u64, G)> = Vec::with_capacity(wanted.len());
    if want.next_if_eq(&0).is_some() {
        positions.push((0, position.clone()));
    }
    for (i, text) in query.moves.iter().enumerate() {
        if position.outcome().is_some() {
            return Err(bad("moves", format!("moves[{i}] {text:?}: the game is already over")));
        }
        let mv = position.parse_move(text).map_err(|e| bad("moves", format!("moves[{i}] {text:?}: {e}")))?;
        position.play(mv).map_err(|e| bad("moves", format!("moves[{i}] {text:?}: {e}")))?;
        if want.next_if_eq(&(i as u64 + 1)).is_some() {
            positions.push((i as u64 + 1, position.clone()));
        }
    }
    if query.max_visits == Some(0) {
        return Err(bad("maxVisits", "maxVisits must be at least 1".into()));
    }
    let query = Rc::new(query);
    let mut turns = Vec::with_capacity(positions.len());
    for (turn, position) in positions {
        if position.outcome().is_some() {
            now.push(game_over_answer(&id, turn, &position, query.include_policy));
        } else {
            turns.push(Turn { id: id.clone(), turn, query: Rc::clone(&query), position });
        }
    }
    Ok(Request::Query { now, turns })
}

/// Reads an action line (`action` the field's value); `Err`: the error
/// answer, naming `action` for an unknown one.
fn read_action(v: &Value, id: &Value, action: &Value) -> std::result::Result<Action, Value> {
    let bad = |field: &str, message: String| error_answer(Some(id), Some(field), &message);
    let Some(name) = action.as_str() else {
        return Err(bad("action", format!("`action` is a string, one of {}", ACTIONS.join(", "))));
    };
    let turns = || match v.get("turnNumbers").filter(|t| !t.is_null()) {
        None => Ok(None),
        Some(t) => serde_json::from_value::<Vec<serde_json::Number>>(t.clone())
            .map_err(|e| e.to_string())
            .and_then(|list| list.iter().map(whole_number).collect::<std::result::Result<Vec<_>, _>>())
            .map(Some)
            .map_err(|e| bad("turnNumbers", format!("turnNumbers is a list of turn numbers: {e}"))),
    };
    match name {
        "query_version" => Ok(Action::Version),
        "query_models" => Ok(Action::Models),
        "clear_cache" => Ok(Action::ClearCache),
        "terminate" => {
            let target = v.get("terminateId").filter(|t| t.is_string() || t.is_number()).cloned().ok_or_else(|| {
                bad("terminateId", "terminate needs a \"terminateId\": the id of the query to stop".into())
            })?;
            Ok(Action::Terminate { target: Some(target), turns: turns()? })
        }
        "terminate_all" => Ok(Action::Terminate { target: None, turns: turns()? }),
        other => Err(bad("action", format!("unknown action {other:?}: one of {}", ACTIONS.join(", ")))),
    }
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

/// The answer of a turn whose game is over: a search's shape with
/// `gameOver`, no moves, no `bestMove`, and `policy: []` with `includePolicy`.
fn game_over_answer<G: AbGame>(id: &Value, turn: u64, position: &G, include_policy: bool) -> Value {
    let reason = position.outcome().map(|o| format!("{:?}", o.reason));
    let value = position_value(position);
    let mut a = json!({
        "id": id,
        "turnNumber": turn,
        "isDuringSearch": false,
        "gameOver": { "winner": martian_selfplay::winner_name(position), "reason": reason },
        "rootInfo": {
            "visits": 0,
            "value": value,
            "winrate": (value + 1.0) / 2.0,
            "currentPlayer": position.mover_name(),
            "currentTeam": G::side_name(position.side_to_move()),
        },
        "moveInfos": [],
    });
    if include_policy {
        a["policy"] = json!([]);
    }
    a
}

/// The answer of a search: its final one (`during` false) or one written
/// while it runs (`isDuringSearch: true`, the same shape).
fn result_answer<G: GameState>(s: &Searching<G>, during: bool) -> Value {
    let tree = s.job.tree();
    let info = s.job.info();
    let pos = &s.turn.position;
    let query = &s.turn.query;
    let value = info.score.map_or(0.0, |s| match s {
        martian_search::Score::Value(v) => v,
        _ => 0.0,
    }) + 0.0; // no `-0.0` in the answer
    let pv_len = query.pv_length.unwrap_or(PV_LEN);
    let max_moves = query.max_moves.unwrap_or(MAX_MOVES);
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
        "id": s.turn.id,
        "turnNumber": s.turn.turn,
        "isDuringSearch": during,
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
    if query.include_policy {
        let mut order: Vec<_> = info.root_moves.iter().collect();
        order.sort_by(|x, y| y.prior.total_cmp(&x.prior));
        a["policy"] =
            order.iter().map(|m| json!({ "move": pos.move_to_string(m.mv), "prior": m.prior })).collect::<Value>();
    }
    a
}
