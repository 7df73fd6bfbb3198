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
//!
//! One process serves every game: each game a query names gets its own
//! [`GameServer`] (its rules, network, waiting and searching turns), started
//! on first use with the game's bundled network; [`Games`] reads the lines,
//! starts waiting turns by `priority` across games and runs a round of each
//! game in turn, so actions and reports work across games. A query may also
//! carry KataGo's `includePVVisits`, `priority`, `overrideSettings`,
//! `avoidMoves` and `allowMoves` (the last two through
//! [`martian_search::MoveFilter`]).

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use anyhow::Result;
use martian_rules::{GameKind, GameState, Move, Side};
use martian_run::checkpoints::{model_and_game, model_rules, LoadedModel, NO_MODEL};
use martian_search::mcts::NodeKind;
use martian_search::{search_together, AbGame, Evaluation, MctsConfig, MctsJob, Pace, SearchLimits};
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
    /// The searches under way stop when their trees hold this many nodes in
    /// all (every game's, summed after each round), each answering what it
    /// found; the waiting turns start once they have stopped. At least 1000;
    /// none by default (each query keeps its own `--max-nodes`).
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<u64>::new().range(1000..))]
    max_nodes_total: Option<u64>,
}

/// The z of [`lcb`]: a one-sided 97.5 % normal bound.
const LCB_Z: f64 = 1.96;

/// The lower confidence bound of a move's winrate (`moveInfos[].lcb`):
/// `winrate - LCB_Z * (stddev / 2) / sqrt(visits)`, where `stddev` is the
/// standard deviation of the values backed up through the move (in `[-1, 1]`
/// units, halved to winrate units; [`martian_search::Mcts::root_value_stddev`]),
/// taken as its largest possible value 1 before two values were counted.
/// `None` for an unvisited move. Not clamped: it may fall below 0.
fn lcb(winrate: Option<f64>, stddev: Option<f32>, visits: u32) -> Option<f64> {
    let w = winrate?;
    if visits == 0 {
        return None;
    }
    let sd = stddev.map_or(1.0, f64::from);
    Some(w - LCB_Z * (sd / 2.0) / f64::from(visits).sqrt())
}

/// The entropy of a policy, in nats: `-sum p ln p` over the priors,
/// normalised to sum to 1 (0 for an empty or all-zero policy).
fn policy_entropy(priors: impl Iterator<Item = f32> + Clone) -> f64 {
    let total: f64 = priors.clone().map(|p| f64::from(p.max(0.0))).sum();
    if total.is_nan() || total <= 0.0 || !total.is_finite() {
        return 0.0;
    }
    let h: f64 = priors.map(|p| f64::from(p.max(0.0)) / total).filter(|&p| p > 0.0).map(|p| -p * p.ln()).sum();
    h + 0.0
}

/// The position's Zobrist hash ([`GameState::hash`]) as 16 hex digits (`rootInfo.thisHash`).
fn hash_text<G: GameState>(pos: &G) -> String {
    format!("{:016x}", pos.hash())
}

/// Whether the game's sides are teams that `currentTeam` can name: every
/// game but four-player free-for-all (`teams=false`), where each seat plays
/// for itself (more than two value players).
fn has_sides<G: GameState>(pos: &G) -> bool {
    pos.num_players() <= 2
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
    /// The game's name (read by [`Games`]; default: the process's game).
    #[allow(dead_code)]
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
    /// Report each move's `pvVisits`: the visits of each position of its `pv`.
    #[serde(default, deserialize_with = "null_as_default", rename = "includePVVisits")]
    include_pv_visits: bool,
    /// Among the waiting turns, the highest priority starts first (default 0).
    #[serde(default, deserialize_with = "whole_signed")]
    priority: Option<i64>,
    /// Settings of this query's search ([`OVERRIDE_SETTINGS`]).
    #[serde(default)]
    override_settings: Option<serde_json::Map<String, Value>>,
    /// Moves the search must not consider.
    #[serde(default)]
    avoid_moves: Option<Vec<MoveRuleField>>,
    /// The only moves the search may consider (one entry).
    #[serde(default)]
    allow_moves: Option<Vec<MoveRuleField>>,
}

/// The fields a query may have: any other gets a `warning` answer naming it,
/// and the query is analysed without it (as KataGo's analysis engine does).
const QUERY_FIELDS: [&str; 18] = [
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
    "includePVVisits",
    "priority",
    "overrideSettings",
    "avoidMoves",
    "allowMoves",
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

/// A whole number of either sign (`-3`, `2.0`); `null` = absent. A fraction
/// or a number beyond 2^53 is refused.
fn whole_signed<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    use serde::de::Error;
    let Some(v) = Option::<serde_json::Number>::deserialize(d)? else { return Ok(None) };
    match (v.as_i64(), v.as_f64()) {
        (Some(n), _) => Ok(Some(n)),
        (None, Some(f)) if f.fract() == 0.0 && f.abs() <= 9.0e15 => Ok(Some(f as i64)),
        _ => Err(D::Error::custom(format!("expected a whole number, got {v}"))),
    }
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

/// Runs `analysis`: the process's game (`--game`, or the model's) is ready
/// before the first query; another game's network is loaded when a query
/// first names that game ([`Games`]).
pub fn run(a: Args) -> Result<()> {
    let (model, device, game) = model_and_game(a.model.as_deref(), &a.device, a.game, true, a.rules.rules.as_deref())?;
    let first = with_game!(game, G => {
        let s: Box<dyn GameServer> = Box::new(Server::<G>::start(&a, model, device, a.rules.rules.as_deref())?);
        s
    });
    let mut games = Games { args: &a, default: game, servers: vec![(game, Ok(first))], seq: 0 };
    // A closed stdout (the frontend went away) must end the engine, not kill it.
    match games.serve(read_lines()) {
        Ok(()) | Err(Gone) => Ok(()),
    }
}

/// What every query's search of one game shares: the rules, the search's settings and limits.
struct Settings<G: GameState> {
    rules: G::Rules,
    config: MctsConfig,
    /// Visits of a query without `maxVisits` (`--visits`).
    default_visits: u32,
    /// `--max-nodes`.
    max_nodes: u64,
}

/// How a query's turns are searched: the process's settings with the
/// query's `overrideSettings`, limits, `priority` and move restrictions on top.
struct Plan {
    /// The search's settings (`cpuctExploration`, ... of `overrideSettings`).
    config: MctsConfig,
    /// The visit limit (`maxVisits`).
    visits: u32,
    /// The time limit (`movetime`, or `maxTime` of `overrideSettings`).
    movetime: Option<Duration>,
    /// The node cap (`--max-nodes`, or `maxNodes` of `overrideSettings`).
    max_nodes: u64,
    /// `priority`: among the waiting turns, the highest starts first.
    priority: i64,
    /// `avoidMoves` and `allowMoves` (empty: every legal move).
    move_rules: Arc<Vec<MoveRule>>,
}

/// One entry of `avoidMoves` or `allowMoves`, as read.
#[derive(Deserialize, Debug)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MoveRuleField {
    /// The player whose moves it restricts (`currentPlayer`'s names).
    player: String,
    /// The moves, as the engine writes them.
    moves: Vec<String>,
    /// Plies from the analysed position in which it holds (1: its first move only).
    #[serde(default, deserialize_with = "whole")]
    until_depth: Option<u64>,
}

/// A move restriction of a search: at the nodes less than `until_depth`
/// plies below the root where `player` moves, the search expands only the
/// moves `moves` (`allow`) or every move but them.
#[derive(Debug)]
struct MoveRule {
    /// The player's name as given (compared without case).
    player: String,
    moves: HashSet<String>,
    until_depth: usize,
    allow: bool,
}

impl MoveRule {
    /// Whether the rule holds at `pos`, `depth` plies below the root.
    fn holds<G: GameState>(&self, pos: &G, depth: usize) -> bool {
        depth < self.until_depth
            && (self.player.eq_ignore_ascii_case(pos.mover_name())
                || (has_sides(pos) && self.player.eq_ignore_ascii_case(G::side_name(pos.side_to_move()))))
    }
}

/// Removes from `moves` those that `rules` forbid at `pos`, `depth` plies
/// below the root; when they would forbid every move, none is removed (a
/// position must keep a move; the analysed position itself is checked when
/// the query is read).
fn restrict<G: GameState>(rules: &[MoveRule], pos: &G, depth: usize, moves: &mut Vec<Move>) {
    let active: Vec<&MoveRule> = rules.iter().filter(|r| r.holds(pos, depth)).collect();
    if active.is_empty() {
        return;
    }
    let kept: Vec<Move> = moves
        .iter()
        .copied()
        .filter(|&mv| {
            let text = pos.move_to_string(mv);
            active.iter().all(|r| r.moves.contains(&text) == r.allow)
        })
        .collect();
    if !kept.is_empty() {
        *moves = kept;
    }
}

/// One turn of a query (the query itself without `analyzeTurns`), waiting for its search.
struct Turn<G> {
    id: Value,
    /// KataGo's turn number: the `moves` played from `position` before it.
    turn: u64,
    /// Read order (every turn of every query counts): among equal priorities, the first read starts first.
    seq: u64,
    query: Rc<Query>,
    plan: Rc<Plan>,
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

/// An action line (`"action"`), after KataGo's analysis engine.
enum Action {
    /// `query_version`: the version and the commit built.
    Version,
    /// `query_models`: the networks loaded.
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

/// One game's side of the engine, whatever the game: its queries, its
/// waiting and searching turns, its network. [`Games`] holds one per game
/// that a query has named and drives them all from one loop.
trait GameServer {
    /// Reads a query of this game (`v`, whose `id` is `id`): writes its
    /// warnings, its finished positions' answers or its error, and queues
    /// its turns, numbering them in read order from `seq`.
    fn query(&mut self, v: &Value, id: &Value, seq: &mut u64) -> std::result::Result<(), Gone>;
    /// The waiting turn to start next, as `(priority, read order)`: the
    /// highest priority, then the first read.
    fn next_waiting(&self) -> Option<(i64, u64)>;
    /// Starts the search of the turn [`GameServer::next_waiting`] names.
    fn start_next(&mut self) -> std::result::Result<(), Gone>;
    /// Turns being searched.
    fn searching(&self) -> usize;
    /// Turns waiting for their search.
    fn waiting(&self) -> usize;
    /// One round of every search under way (one network call), then the
    /// answers of the searches that ended and the reports that are due.
    fn round(&mut self) -> std::result::Result<(), Gone>;
    /// Stops the turns `hit` names: a waiting one answers `noResults`, a
    /// searching one what it found (`noResults` when its root has no
    /// evaluation yet).
    fn terminate(&mut self, hit: &dyn Fn(&Value, u64) -> bool) -> std::result::Result<(), Gone>;
    /// Its network, for `query_models` (`None` without one).
    fn model(&self) -> Option<Value>;
    /// The nodes of the trees of its turns being searched, in all.
    fn nodes(&self) -> u64;
    /// Stops every turn being searched, each answering what it found (as
    /// [`GameServer::terminate`] does), for `--max-nodes-total`.
    fn stop_searches(&mut self) -> std::result::Result<(), Gone>;
}

/// The analysis of game `G`.
struct Server<G: AbGame> {
    settings: Settings<G>,
    ev: Priors<'static, G>,
    /// The `query_models` entry of the network (`None` without one).
    model: Option<Value>,
    waiting: Vec<Turn<G>>,
    running: Vec<Searching<G>>,
    evals: Vec<Evaluation>,
    /// The speed measured by the last search that ended (for `movetime`).
    pace: Pace,
}

impl<G: AbGame> Server<G> {
    /// The analysis of `G` with `model` on `device` (its rules, with the
    /// `--rules` switches `switches`): the network's threads are set and one
    /// pass run before the first query is timed
    /// ([`martian_run::runtime::ready_network`]).
    fn start(a: &Args, model: Option<LoadedModel>, device: tch::Device, switches: Option<&str>) -> Result<Self> {
        let settings = Settings::<G> {
            rules: model_rules::<G>(model.as_ref(), switches)?,
            config: MctsConfig { leaves_per_batch: a.batch, ..MctsConfig::default() },
            default_visits: a.visits,
            max_nodes: a.max_nodes,
        };
        let max_batch = a.batch as usize * a.max_in_flight as usize;
        // Each game's network is loaded once and serves until the process ends.
        let model: Option<&'static LoadedModel> = model.map(|m| &*Box::leak(Box::new(m)));
        let start = G::new_game(&settings.rules)?;
        martian_run::runtime::ready_network(model.map(|m| &m.ck.net), device, a.threads as usize, &start)?;
        let ev: Priors<'static, G> = match model {
            Some(m) => Priors::Net(martian_model::NetEvaluator::new(&m.ck.net, device, max_batch)),
            None => Priors::Uniform,
        };
        Ok(Server {
            settings,
            ev,
            model: model.map(|m| model_entry(m, device, max_batch)),
            waiting: Vec::new(),
            running: Vec::new(),
            evals: Vec::new(),
            pace: Pace::default(),
        })
    }

    /// The index in `waiting` of the turn to start next.
    fn next_index(&self) -> Option<usize> {
        (0..self.waiting.len()).max_by_key(|&k| (self.waiting[k].plan.priority, std::cmp::Reverse(self.waiting[k].seq)))
    }
}

impl<G: AbGame> GameServer for Server<G> {
    fn query(&mut self, v: &Value, id: &Value, seq: &mut u64) -> std::result::Result<(), Gone> {
        match read_query::<G>(v, id, &self.settings, seq) {
            Ok((now, turns)) => {
                for a in &now {
                    answer(a)?;
                }
                self.waiting.extend(turns);
                Ok(())
            }
            Err(e) => answer(&e),
        }
    }

    fn next_waiting(&self) -> Option<(i64, u64)> {
        self.next_index().map(|k| (self.waiting[k].plan.priority, self.waiting[k].seq))
    }

    fn start_next(&mut self) -> std::result::Result<(), Gone> {
        let Some(k) = self.next_index() else { return Ok(()) };
        let t = self.waiting.remove(k);
        match begin(t, self.pace) {
            Ok(s) => self.running.push(s),
            Err(e) => answer(&e)?,
        }
        Ok(())
    }

    fn searching(&self) -> usize {
        self.running.len()
    }

    fn waiting(&self) -> usize {
        self.waiting.len()
    }

    fn round(&mut self) -> std::result::Result<(), Gone> {
        if self.running.is_empty() {
            return Ok(());
        }
        {
            let mut jobs: Vec<&mut MctsJob<G>> = self.running.iter_mut().map(|s| &mut s.job).collect();
            search_together(&mut jobs, &mut self.ev, false, &mut self.evals);
        }
        let now = Instant::now();
        let mut k = 0;
        while k < self.running.len() {
            let s = &mut self.running[k];
            if s.job.end().is_some() {
                let s = self.running.swap_remove(k);
                self.pace = s.job.pace();
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
        Ok(())
    }

    fn terminate(&mut self, hit: &dyn Fn(&Value, u64) -> bool) -> std::result::Result<(), Gone> {
        let mut kept = Vec::with_capacity(self.waiting.len());
        for t in self.waiting.drain(..) {
            if hit(&t.id, t.turn) {
                answer(&no_results(&t))?;
            } else {
                kept.push(t);
            }
        }
        self.waiting = kept;
        let mut k = 0;
        while k < self.running.len() {
            if !hit(&self.running[k].turn.id, self.running[k].turn.turn) {
                k += 1;
                continue;
            }
            stop(self.running.remove(k))?;
        }
        Ok(())
    }

    fn model(&self) -> Option<Value> {
        self.model.clone()
    }

    fn nodes(&self) -> u64 {
        self.running.iter().map(|s| s.job.tree().num_nodes() as u64).sum()
    }

    fn stop_searches(&mut self) -> std::result::Result<(), Gone> {
        for s in std::mem::take(&mut self.running) {
            stop(s)?;
        }
        Ok(())
    }
}

/// A game's analysis once a query has named it, or why it could not start.
type Started = std::result::Result<Box<dyn GameServer>, String>;

/// Every game's analysis in one process: the process's game
/// (`--game`) is started with the process, another when a query first names
/// it (with its bundled network, `models/`, or none under `--model none`).
/// One loop reads the lines, starts the waiting turns of every game by
/// priority up to `--max-in-flight` in all, and runs a round of each game
/// that has searches under way, so actions and reports work across games.
struct Games<'a> {
    args: &'a Args,
    /// The game of a query without `game`.
    default: GameKind,
    /// Each game a query has named, with its analysis, or why it could not
    /// start (answered to every query that names it).
    servers: Vec<(GameKind, Started)>,
    /// Turns read so far (the read order of [`Turn::seq`]).
    seq: u64,
}

impl Games<'_> {
    /// The index in `servers` of game `g`'s analysis, started now if no query named `g` before.
    fn open(&mut self, g: GameKind) -> usize {
        if let Some(k) = self.servers.iter().position(|(k, _)| *k == g) {
            return k;
        }
        let a = self.args;
        let made = (|| -> Result<Box<dyn GameServer>> {
            // `--model` names the process game's network; another game gets its
            // bundled one, or none under `--model none`.
            let path = a.model.as_deref().filter(|p| *p == Path::new(NO_MODEL));
            let (model, device, _) = model_and_game(path, &a.device, Some(g), true, None)?;
            Ok(with_game!(g, G => {
                let s: Box<dyn GameServer> = Box::new(Server::<G>::start(a, model, device, None)?);
                s
            }))
        })()
        .map_err(|e| format!("{e:#}"));
        self.servers.push((g, made));
        self.servers.len() - 1
    }

    /// Turns being searched, in every game.
    fn searching(&self) -> usize {
        self.servers.iter().filter_map(|(_, s)| s.as_ref().ok()).map(|s| s.searching()).sum()
    }

    /// The nodes of every tree being searched, in every game.
    fn nodes(&self) -> u64 {
        self.servers.iter().filter_map(|(_, s)| s.as_ref().ok()).map(|s| s.nodes()).sum()
    }

    /// Turns waiting, in every game.
    fn waiting(&self) -> usize {
        self.servers.iter().filter_map(|(_, s)| s.as_ref().ok()).map(|s| s.waiting()).sum()
    }

    /// The loop: reads the lines that have come, starts waiting turns up to
    /// `--max-in-flight` (highest priority first, then read order, across
    /// games), searches one round of each game, answers the searches that
    /// ended and the reports that are due; at the end of input, once every
    /// turn is answered, it returns.
    fn serve(
        &mut self,
        lines: mpsc::Receiver<std::result::Result<String, (String, Option<Value>)>>,
    ) -> std::result::Result<(), Gone> {
        let max_in_flight = self.args.max_in_flight as usize;
        let mut open = true;
        loop {
            // New lines: all that have come; block only when there is nothing to search.
            loop {
                let next = if open && self.searching() == 0 && self.waiting() == 0 {
                    lines.recv().map_err(|_| mpsc::TryRecvError::Disconnected)
                } else {
                    lines.try_recv()
                };
                match next {
                    Ok(Ok(line)) if line.is_empty() => {}
                    Ok(Ok(line)) => self.line(&line)?,
                    Ok(Err((message, id))) => answer(&error_answer(id.as_ref(), None, &message))?,
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => {
                        open = false;
                        break;
                    }
                }
            }
            while self.searching() < max_in_flight {
                let next = self
                    .servers
                    .iter_mut()
                    .filter_map(|(_, s)| s.as_mut().ok())
                    .filter_map(|s| s.next_waiting().map(|(p, seq)| ((p, std::cmp::Reverse(seq)), s)))
                    .max_by_key(|(key, _)| *key);
                let Some((_, s)) = next else { break };
                s.start_next()?;
            }
            if self.searching() == 0 {
                if open || self.waiting() > 0 {
                    continue;
                }
                return Ok(());
            }
            for (_, s) in &mut self.servers {
                if let Ok(s) = s {
                    s.round()?;
                }
            }
            // `--max-nodes-total`: at the cap, every search under way stops.
            if self.args.max_nodes_total.is_some_and(|cap| self.nodes() >= cap) {
                for (_, s) in &mut self.servers {
                    if let Ok(s) = s {
                        s.stop_searches()?;
                    }
                }
            }
        }
    }

    /// Answers a line: an action, or a query handed to its game's analysis.
    fn line(&mut self, line: &str) -> std::result::Result<(), Gone> {
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => return answer(&error_answer(None, None, &format!("the line is not JSON ({e}); ignored"))),
        };
        let Some(id) = v.get("id").filter(|id| id.is_string() || id.is_number()).cloned() else {
            return answer(&error_answer(None, Some("id"), "a query needs an \"id\" (a string or a number)"));
        };
        if let Some(action) = v.get("action").filter(|a| !a.is_null()) {
            return match read_action(&v, &id, action) {
                Ok(action) => self.act(v.clone(), action),
                Err(e) => answer(&e),
            };
        }
        let game = match v.get("game").filter(|g| !g.is_null()) {
            None => self.default,
            Some(g) => match g.as_str().map(str::parse::<GameKind>) {
                Some(Ok(k)) => k,
                Some(Err(e)) => return answer(&error_answer(Some(&id), Some("game"), &e.to_string())),
                None => {
                    let names = GameKind::names().join(", ");
                    return answer(&error_answer(
                        Some(&id),
                        Some("game"),
                        &format!("`game` is a string, one of {names}"),
                    ));
                }
            },
        };
        let k = self.open(game);
        match &mut self.servers[k].1 {
            Ok(s) => s.query(&v, &id, &mut self.seq),
            Err(e) => answer(&error_answer(Some(&id), Some("game"), &format!("{game} cannot be analysed: {e}"))),
        }
    }

    /// Carries out an action and answers it: the line echoed, with what the
    /// action reports added. `terminate` answers each turn it stops first
    /// ([`GameServer::terminate`]), in every game.
    fn act(&mut self, mut echo: Value, action: Action) -> std::result::Result<(), Gone> {
        match action {
            Action::Version => {
                echo["version"] = json!(env!("CARGO_PKG_VERSION"));
                echo["git_hash"] = json!(env!("MARTIAN_ZERO_GIT_COMMIT"));
            }
            Action::Models => {
                let models: Vec<Value> =
                    self.servers.iter().filter_map(|(_, s)| s.as_ref().ok().and_then(|s| s.model())).collect();
                echo["models"] = json!(models);
            }
            Action::ClearCache => {}
            Action::Terminate { target, turns } => {
                let hit = |id: &Value, turn: u64| {
                    target.as_ref().is_none_or(|t| t == id) && turns.as_ref().is_none_or(|ts| ts.contains(&turn))
                };
                for (_, s) in &mut self.servers {
                    if let Ok(s) = s {
                        s.terminate(&hit)?;
                    }
                }
            }
        }
        answer(&echo)
    }
}

/// Starts the search of a turn (its `movetime` counts from now); `Err`: the error answer.
fn begin<G: AbGame>(t: Turn<G>, pace: Pace) -> std::result::Result<Searching<G>, Value> {
    let q = &t.query;
    let plan = &t.plan;
    let limits = SearchLimits {
        visits: Some(plan.visits),
        movetime: plan.movetime,
        nodes: Some(plan.max_nodes),
        ..SearchLimits::default()
    };
    let start = Instant::now();
    let mut job = MctsJob::new(&plan.config, t.position.clone(), limits, start, pace)
        .map_err(|e| error_answer(Some(&t.id), None, &e.to_string()))?;
    if !plan.move_rules.is_empty() {
        let rules = Arc::clone(&plan.move_rules);
        job.set_move_filter(Some(Box::new(move |pos: &G, depth: usize, moves: &mut Vec<Move>| {
            restrict(&rules, pos, depth, moves)
        })));
    }
    let report = q.report_during_search_every.map(|every| {
        let every = Duration::from_secs_f64(every);
        let first = q.first_report_during_search_after.map_or(every, Duration::from_secs_f64);
        (start + first, every)
    });
    Ok(Searching { turn: t, job, report })
}

/// Stops a running search and answers it: what it found (a final answer,
/// as KataGo answers a terminated search that has results), or `noResults`
/// when its root was not expanded yet.
fn stop<G: AbGame>(mut s: Searching<G>) -> std::result::Result<(), Gone> {
    if s.job.tree().root().kind == NodeKind::Expanded {
        // Between rounds no leaf is pending: this only marks the search stopped.
        s.job.gather(true);
        answer(&result_answer(&s, false))
    } else {
        answer(&no_results(&s.turn))
    }
}

/// The answer of a turn stopped before its search found anything (KataGo's `noResults`).
fn no_results<G>(t: &Turn<G>) -> Value {
    json!({ "id": t.id, "turnNumber": t.turn, "isDuringSearch": false, "noResults": true })
}

/// A network loaded, as `query_models` lists it.
fn model_entry(m: &LoadedModel, device: tch::Device, max_batch: usize) -> Value {
    json!({
        "name": m.source.display().to_string(),
        "game": m.game.to_string(),
        "rules": m.rules,
        "trainingSteps": m.ck.meta.step,
        "device": martian_run::runtime::device_name(device),
        "maxBatchSize": max_batch,
    })
}

/// Reads a query of game `G` (`v`, whose `id` is `id`): the answers to write
/// at once (a `warning` for each field or setting it does not know, ignored,
/// and the answer of each turn whose game is over: the answer's shape, with
/// `gameOver`, no moves and no `bestMove`), and its turns to search,
/// numbered in read order from `seq`; `Err` holds the error answer (naming
/// the field).
fn read_query<G: AbGame>(
    v: &Value,
    id: &Value,
    settings: &Settings<G>,
    seq: &mut u64,
) -> std::result::Result<(Vec<Value>, Vec<Turn<G>>), Value> {
    let Some(fields) = v.as_object() else {
        return Err(error_answer(Some(id), None, "a query is a JSON object"));
    };
    let mut now: Vec<Value> = fields
        .keys()
        .filter(|k| !QUERY_FIELDS.contains(&k.as_str()))
        .map(|k| json!({ "id": id, "warning": format!("unknown field `{k}`: ignored"), "field": k }))
        .collect();
    let query: Query = serde_json::from_value(v.clone()).map_err(|e| {
        let field = bad_field(v);
        error_answer(Some(id), field.as_deref(), &format!("bad query: {e}"))
    })?;
    let bad = |field: &str, message: String| error_answer(Some(id), Some(field), &message);
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
    let mut plan = Plan {
        config: settings.config.clone(),
        visits: settings.default_visits,
        movetime: None,
        max_nodes: settings.max_nodes,
        priority: query.priority.unwrap_or(0),
        move_rules: Arc::new(Vec::new()),
    };
    if let Some(o) = &query.override_settings {
        let warnings = override_settings(o, &mut plan).map_err(|(setting, message)| {
            let mut e = bad("overrideSettings", message);
            e["setting"] = json!(setting);
            e
        })?;
        now.extend(warnings.into_iter().map(|mut w| {
            w["id"] = id.clone();
            w
        }));
    }
    plan.visits = query.max_visits.unwrap_or(plan.visits);
    plan.movetime = query.movetime.map(Duration::from_millis).or(plan.movetime);
    let rules = move_rules::<G>(&query, &positions).map_err(|(field, message)| bad(field, message))?;
    plan.move_rules = Arc::new(rules);
    let query = Rc::new(query);
    let plan = Rc::new(plan);
    let mut turns = Vec::with_capacity(positions.len());
    for (turn, position) in positions {
        if position.outcome().is_some() {
            now.push(game_over_answer(id, turn, &position, query.include_policy));
        } else {
            *seq += 1;
            turns.push(Turn {
                id: id.clone(),
                turn,
                seq: *seq,
                query: Rc::clone(&query),
                plan: Rc::clone(&plan),
                position,
            });
        }
    }
    Ok((now, turns))
}

/// The settings `overrideSettings` may change, with KataGo's names where
/// KataGo has the setting (`maxNodes` is this engine's `--max-nodes`).
const OVERRIDE_SETTINGS: [&str; 6] =
    ["maxVisits", "maxTime", "maxNodes", "cpuctExploration", "cpuctExplorationBase", "fpuReductionMax"];

/// Applies a query's `overrideSettings` to `plan`: the warnings for the
/// settings the engine does not know (ignored), or `Err((setting, message))`
/// for a value out of range or of the wrong type.
fn override_settings(
    settings: &serde_json::Map<String, Value>,
    plan: &mut Plan,
) -> std::result::Result<Vec<Value>, (String, String)> {
    let mut warnings = Vec::new();
    for (key, value) in settings {
        if value.is_null() {
            continue;
        }
        let err = |message: String| (key.clone(), format!("overrideSettings.{key}: {message}"));
        let number = || value.as_f64().filter(|x| x.is_finite()).ok_or_else(|| err(format!("{value} is not a number")));
        let count = || {
            value
                .as_number()
                .ok_or_else(|| err(format!("{value} is not a number")))
                .and_then(|n| whole_number(n).map_err(err))
        };
        match key.as_str() {
            "maxVisits" => {
                let n = count()?;
                plan.visits = u32::try_from(n)
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| err(format!("{n}: visits from 1 to {}", u32::MAX)))?;
            }
            "maxTime" => {
                let s = number()?;
                if !(0.0..=MAX_REPORT_SECONDS).contains(&s) {
                    return Err(err(format!("{s}: seconds from 0 to {MAX_REPORT_SECONDS}")));
                }
                plan.movetime = Some(Duration::from_secs_f64(s));
            }
            "maxNodes" => {
                let n = count()?;
                if n < 1000 {
                    return Err(err(format!("{n}: at least 1000 nodes")));
                }
                plan.max_nodes = n;
            }
            "cpuctExploration" | "cpuctExplorationBase" => {
                let x = number()?;
                if x <= 0.0 {
                    return Err(err(format!("{x}: must be > 0")));
                }
                if key == "cpuctExploration" {
                    plan.config.c_puct_init = x as f32;
                } else {
                    plan.config.c_puct_base = x as f32;
                }
            }
            "fpuReductionMax" => {
                let x = number()?;
                if !(0.0..=2.0).contains(&x) {
                    return Err(err(format!("{x}: from 0 to 2")));
                }
                plan.config.fpu_reduction = x as f32;
            }
            _ => warnings.push(json!({
                "warning": format!(
                    "unknown setting `{key}` in overrideSettings: ignored (known: {})",
                    OVERRIDE_SETTINGS.join(", ")
                ),
                "field": "overrideSettings",
                "setting": key,
            })),
        }
    }
    plan.config.validate().map_err(|e| ("overrideSettings".to_string(), format!("overrideSettings: {e}")))?;
    Ok(warnings)
}

/// A query's `avoidMoves` and `allowMoves` as move rules, checked: each
/// entry names a player of the game and an `untilDepth` of at least 1,
/// `allowMoves` has at most one entry (as KataGo's), and every analysed
/// position (`positions`) keeps a legal move. `Err((field, message))`.
fn move_rules<G: AbGame>(
    query: &Query,
    positions: &[(u64, G)],
) -> std::result::Result<Vec<MoveRule>, (&'static str, String)> {
    let mut rules = Vec::new();
    let names = player_names::<G>(positions);
    for (field, list, allow) in [("avoidMoves", &query.avoid_moves, false), ("allowMoves", &query.allow_moves, true)] {
        let Some(list) = list else { continue };
        if allow && list.len() > 1 {
            return Err((field, format!("allowMoves holds at most one entry, not {}", list.len())));
        }
        for (i, r) in list.iter().enumerate() {
            if !names.iter().any(|n| n.eq_ignore_ascii_case(&r.player)) {
                return Err((field, format!("{field}[{i}].player {:?}: one of {}", r.player, names.join(", "))));
            }
            let until_depth = match r.until_depth {
                Some(d) if d >= 1 => usize::try_from(d).unwrap_or(usize::MAX),
                _ => return Err((field, format!("{field}[{i}].untilDepth: a whole number of plies, at least 1"))),
            };
            let moves = r.moves.iter().map(|m| m.trim().to_string()).collect();
            rules.push(MoveRule { player: r.player.clone(), moves, until_depth, allow });
        }
    }
    if !rules.is_empty() {
        let field = if query.allow_moves.is_some() { "allowMoves" } else { "avoidMoves" };
        for (turn, pos) in positions.iter().filter(|(_, p)| p.outcome().is_none()) {
            let mut legal = Vec::new();
            pos.legal_moves(&mut legal);
            let all = legal.len();
            let left = legal
                .iter()
                .filter(|&&mv| {
                    let text = pos.move_to_string(mv);
                    rules.iter().filter(|r| r.holds(pos, 0)).all(|r| r.moves.contains(&text) == r.allow)
                })
                .count();
            if left == 0 {
                return Err((
                    field,
                    format!("turn {turn}: avoidMoves and allowMoves leave none of its {all} legal moves"),
                ));
            }
        }
    }
    Ok(rules)
}

/// The names a move rule's `player` may take in game `G`: the sides'
/// (`currentTeam`) and the players to move of the first plies from the
/// analysed positions (`currentPlayer`: the seats of the four-player game).
fn player_names<G: AbGame>(positions: &[(u64, G)]) -> Vec<&'static str> {
    // Free-for-all has no teams: its players are the seats only.
    let mut names = match positions.first() {
        Some((_, p)) if !has_sides(p) => Vec::new(),
        _ => vec![G::side_name(Side::South), G::side_name(Side::North)],
    };
    let mut moves = Vec::new();
    for (_, p) in positions.iter().take(1) {
        let mut p = p.clone();
        for _ in 0..8 {
            if !names.contains(&p.mover_name()) {
                names.push(p.mover_name());
            }
            p.legal_moves(&mut moves);
            let Some(&mv) = moves.first() else { break };
            p.play_unchecked(mv);
        }
    }
    names
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
            "rawWinrate": (value + 1.0) / 2.0,
            "rawPolicyEntropy": 0.0,
            "thisHash": hash_text(position),
        },
        "moveInfos": [],
    });
    if !has_sides(position) {
        if let Some(r) = a["rootInfo"].as_object_mut() {
            r.remove("currentTeam");
        }
    }
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
    // Each root child's utility and value spread, by move (the tree holds no
    // transpositions: a move's edge visits are its node's visits).
    let children = tree.root_children();
    let spread = tree.root_value_stddev();
    let child = |mv: Move| children.iter().position(|c| c.mv == mv);
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
            let k = child(m.mv);
            let winrate = m.value.map(|v| (f64::from(v) + 1.0) / 2.0);
            let stddev = k.and_then(|k| spread.get(k).copied().flatten());
            let mut info = json!({
                "move": pos.move_to_string(m.mv),
                "order": order,
                "visits": m.visits,
                "edgeVisits": m.visits,
                "value": m.value,
                "winrate": m.value.map(|v| (v + 1.0) / 2.0),
                "utility": k.and_then(|k| children[k].q()).map(|u| u + 0.0),
                "lcb": lcb(winrate, stddev, m.visits),
                "prior": m.prior,
                "pv": line,
            });
            if query.include_pv_visits {
                info["pvVisits"] = json!(tree.move_variation_visits(m.mv, pv_len));
            }
            if let Some(lead) = m.score {
                // The network's score head: the expected final point difference.
                info["scoreLead"] = json!(lead + 0.0);
            }
            info
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
            "rawWinrate": tree.root_raw_value().map(|v| (v.clamp(-1.0, 1.0) + 1.0) / 2.0),
            "rawPolicyEntropy": policy_entropy(children.iter().map(|c| c.prior)),
            "thisHash": hash_text(pos),
        },
        "moveInfos": move_infos,
    });
    if !has_sides(pos) {
        if let Some(r) = a["rootInfo"].as_object_mut() {
            r.remove("currentTeam");
        }
    }
    if let Some(lead) = info.score_lead {
        a["rootInfo"]["scoreLead"] = json!(lead + 0.0);
    }
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
