//! One engine session: a position, an engine, limits, a stop flag and info
//! callbacks. The `engine` line protocol, `play` and `analyse` of the command
//! line all search through it, so they share one idea of limits, stopping and
//! what a search reports (as KataGo's GTP and analysis engines share one
//! `Search`, and lc0's UCI loop reports through one `ThinkingInfo`).
//!
//! ```text
//! Session::mcts(config, evaluator, pos)   // or ::alphabeta(ab, pos), ::chooser(pick, pos)
//!   .with_info_interval(1 s)              // MCTS: an Info this often
//! session.stop_signal()                   // Arc<AtomicBool>: raise it from any thread
//! session.go(&limits, |info| ...)         // Infos while searching, one at the end
//!   -> Info { best_move, score, pv, root_moves, visits | depth, nodes, elapsed, end }
//! ```
//!
//! Units, for every engine:
//! * [`Score::Value`] (MCTS): the root's mean value for the side to move, in
//!   `[-1, 1]` (+1 = win), written `value 0.0873`;
//! * [`Score::Cp`] (alpha-beta): hundredths of the static evaluation's unit for
//!   the side to move, written `score cp 125`; beyond
//!   [`MATE_BOUND`](crate::alphabeta::MATE_BOUND) a forced result, written
//!   `score win N` / `score loss N` (N plies);
//! * times are wall-clock, measured from the start of the search (the moment
//!   the caller passes to [`Session::go_since`]).
//!
//! These are the units of the engine protocol (`docs/protocol.md`).
//!
//! # Examples
//!
//! MCTS with uniform priors (no network) for 200 visits:
//!
//! ```
//! use martian_rules::martian::{MartianChess, MartianRules};
//! use martian_rules::GameState;
//! use martian_search::{MctsConfig, Score, SearchLimits, Session, UniformEvaluator};
//!
//! let start = MartianChess::new_game(&MartianRules::default()).unwrap();
//! let mut session = Session::mcts(MctsConfig::default(), UniformEvaluator, start.clone());
//! let mut calls = 0;
//! let info = session.go(&SearchLimits::visits(200), |_| calls += 1).unwrap();
//! assert_eq!(info.visits, Some(200));
//! assert!(calls >= 1, "the callback sees at least the final info");
//! let best = info.best_move.unwrap();
//! assert_eq!(info.pv.first(), Some(&best));
//! assert_eq!(info.root_moves[0].mv, best, "root moves come most visited first");
//! assert_eq!(info.root_moves.iter().map(|m| m.visits).sum::<u32>(), 200);
//! assert!(matches!(info.score, Some(Score::Value(v)) if (-1.0..=1.0).contains(&v)));
//! assert!(start.move_to_string(best).len() == 4); // e.g. `b3a2`
//! ```
//!
//! Alpha-beta to depth 2, with one info per completed iteration:
//!
//! ```
//! use martian_rules::martian::{MartianChess, MartianRules};
//! use martian_rules::GameState;
//! use martian_search::{AlphaBeta, AlphaBetaConfig, SearchLimits, Session};
//!
//! let start = MartianChess::new_game(&MartianRules::default()).unwrap();
//! let mut session = Session::alphabeta(AlphaBeta::new(AlphaBetaConfig::default()), start);
//! let mut depths = Vec::new();
//! let info = session
//!     .go(&SearchLimits::depth(2), |i| if i.end.is_none() { depths.push(i.depth.unwrap()) })
//!     .unwrap();
//! assert_eq!(depths, [1, 2]);
//! assert_eq!(info.depth, Some(2));
//! assert_eq!(info.score.unwrap().to_string(), "score cp 0");
//! assert_eq!(info.pv.first(), info.best_move.as_ref());
//! ```
//!
//! Stopping from another thread: a search without limits runs until its stop
//! flag is raised, and still answers a move.
//!
//! ```
//! use std::sync::atomic::Ordering;
//! use martian_rules::martian::{MartianChess, MartianRules};
//! use martian_rules::GameState;
//! use martian_search::{End, MctsConfig, SearchLimits, Session, UniformEvaluator};
//!
//! let start = MartianChess::new_game(&MartianRules::default()).unwrap();
//! let mut session = Session::mcts(MctsConfig::default(), UniformEvaluator, start);
//! let stop = session.stop_signal();
//! let info = std::thread::scope(|s| {
//!     s.spawn(|| {
//!         std::thread::sleep(std::time::Duration::from_millis(50));
//!         stop.store(true, Ordering::Relaxed);
//!     });
//!     session.go(&SearchLimits::default(), |_| {}).unwrap()
//! });
//! assert_eq!(info.end, Some(End::Stopped));
//! assert!(info.best_move.is_some());
//! ```

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use martian_rules::{GameState, Move};
use rand::rngs::StdRng;
use rand::SeedableRng;
use thiserror::Error;

use crate::alphabeta::{AbGame, AlphaBeta, Limits, MATE, MATE_BOUND};
use crate::evaluator::{Evaluation, Evaluator, UniformEvaluator};
use crate::mcts::{Mcts, NodeKind};
use crate::veto::{check_veto_depth, Veto};
use crate::MctsConfig;

/// Longest principal variation an [`Info`] carries, in plies.
pub const PV_MAX: usize = 64;

/// Simulations a Gumbel root search ([`crate::RootSelection::Gumbel`]) plans
/// its halving for when the search has no visit limit (a search limited by
/// time or by the stop flag only). PUCT searches do not use it.
const GUMBEL_PLAN_UNLIMITED: u32 = 800;

/// A move picker without a search to report: the random and greedy players
/// (`martian-evaluate`'s `RandomPlayer`, `GreedyPlayer`) wrapped by the
/// caller. `None`: no move (the session reports [`SessionError::NoMove`]).
pub type Chooser<'a, G> = Box<dyn FnMut(&G) -> Option<Move> + 'a>;

/// Which engine a [`Session`] searches with.
pub enum Engine<'a, G: AbGame, E: Evaluator<G> = UniformEvaluator> {
    /// PUCT MCTS ([`Mcts`]) with `evaluator` ([`UniformEvaluator`] for equal
    /// priors and value 0, without a network; the network evaluator lives in
    /// `martian-model`). Each search builds a fresh tree from `config`, with a
    /// fixed seed and no root noise, so the same evaluator gives the same tree
    /// for the same visit limit. Batches hold up to `config.leaves_per_batch` leaves.
    Mcts {
        /// Search settings (`leaves_per_batch`: leaves per evaluator call).
        config: MctsConfig,
        /// Priors and values of the leaves.
        evaluator: E,
    },
    /// The alpha-beta baseline ([`AlphaBeta`]; its transposition table is
    /// kept from one search to the next). Boxed: its buffers make it large.
    AlphaBeta(Box<AlphaBeta<G>>),
    /// A move picker without a search (random, greedy).
    Chooser(Chooser<'a, G>),
}

impl<G: AbGame, E: Evaluator<G>> Engine<'_, G, E> {
    /// `mcts`, `alphabeta` or `chooser`.
    pub fn kind(&self) -> &'static str {
        match self {
            Engine::Mcts { .. } => "mcts",
            Engine::AlphaBeta(_) => "alphabeta",
            Engine::Chooser(_) => "chooser",
        }
    }
}

/// When a search ends: the first limit reached (or the stop flag). Any value
/// is valid (`u32::MAX` visits, `Duration::MAX` mean "until stopped" in
/// practice; no deadline is computed as a point in time, so nothing overflows).
/// With no limit set a search runs until the stop flag (alpha-beta: to
/// [`crate::alphabeta::MAX_PLY`] - 16 plies at most).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SearchLimits {
    /// MCTS: completed simulations (visits of the root's children). Each
    /// search builds a fresh tree, so visits and playouts (KataGo's
    /// `maxVisits` / `maxPlayouts`) are the same number. Not used by alpha-beta.
    pub visits: Option<u32>,
    /// Wall-clock time from the start of the search ([`Session::go_since`]).
    /// MCTS fits each batch into the time left ([`Pace`]); alpha-beta checks
    /// the clock every 1024 nodes.
    pub movetime: Option<Duration>,
    /// Alpha-beta: nominal depth in plies (iterative deepening stops after
    /// it). MCTS refuses it ([`SessionError::Unsupported`]).
    pub depth: Option<u32>,
    /// Alpha-beta: positions visited (quiescence included). MCTS: nodes in
    /// the tree (bounds memory; the search ends when the tree holds this many).
    pub nodes: Option<u64>,
}

impl SearchLimits {
    /// A visit limit (MCTS).
    pub fn visits(n: u32) -> Self {
        SearchLimits { visits: Some(n), ..SearchLimits::default() }
    }
    /// A time limit.
    pub fn movetime(t: Duration) -> Self {
        SearchLimits { movetime: Some(t), ..SearchLimits::default() }
    }
    /// A depth limit (alpha-beta).
    pub fn depth(d: u32) -> Self {
        SearchLimits { depth: Some(d), ..SearchLimits::default() }
    }
    /// A node limit.
    pub fn nodes(n: u64) -> Self {
        SearchLimits { nodes: Some(n), ..SearchLimits::default() }
    }
}

/// The evaluation of the searched position, for its side to move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Score {
    /// MCTS: the root's mean value in `[-1, 1]` (+1 = win; the team's value in
    /// the four-player game).
    Value(f32),
    /// Alpha-beta: hundredths of the static evaluation's unit; beyond
    /// ±[`MATE_BOUND`] a forced result: `MATE - n` wins in `n` plies,
    /// `-(MATE - n)` loses in `n`.
    Cp(i32),
}

impl Score {
    /// The number as the engine protocol writes it: `0.0873` (four decimals,
    /// never `-0.0000`), `cp 125`, `win 3`, `loss 2`.
    pub fn text(&self) -> String {
        match *self {
            Score::Value(v) => {
                let v = if v.abs() < 5e-5 { 0.0 } else { v };
                format!("{v:.4}")
            }
            Score::Cp(s) if s > MATE_BOUND => format!("win {}", MATE - s),
            Score::Cp(s) if s < -MATE_BOUND => format!("loss {}", MATE + s),
            Score::Cp(s) => format!("cp {s}"),
        }
    }
}

/// `value 0.0873` or `score cp 125`: the protocol's `info` fields.
impl fmt::Display for Score {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Value(_) => write!(f, "value {}", self.text()),
            Score::Cp(_) => write!(f, "score {}", self.text()),
        }
    }
}

/// One root move of an MCTS search.
#[derive(Clone, Debug, PartialEq)]
pub struct RootMove {
    /// The move.
    pub mv: Move,
    /// Completed simulations through it.
    pub visits: u32,
    /// Its prior as the search used it (the network's probability; uniform
    /// without a network), in `[0, 1]`.
    pub prior: f32,
    /// Its mean value for the side to move at the root, `[-1, 1]`; `None` when unvisited.
    pub value: Option<f32>,
    /// Its score lead: the expected final point difference for the side to
    /// move at the root, in points ([`SearchResult::scores`](crate::SearchResult::scores));
    /// `None` when unvisited or when the evaluator gives no score (a network
    /// without a score head).
    pub score: Option<f32>,
}

/// Why a search ended (set on the last [`Info`] of a search only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// A limit of [`SearchLimits`] (or alpha-beta's own end: a forced result
    /// within the horizon, the deepest depth), or a pick without search.
    Limit,
    /// The stop flag ([`Session::stop_signal`]) was raised.
    Stopped,
    /// MCTS: the tree holds [`SearchLimits::nodes`] nodes (the limit).
    NodeLimit(u64),
    /// MCTS: the evaluator failed (its message); the search kept what it had.
    EvalError(String),
}

/// What a search has found so far (lc0's `ThinkingInfo`, the fields of a UCI
/// `info` line). The engines fill what they have: MCTS `visits`, `root_moves`
/// and a [`Score::Value`]; alpha-beta `depth`, `seldepth` and a [`Score::Cp`];
/// a chooser only `best_move`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Info {
    /// The move to play now: MCTS [`Mcts::best_move`] (most visits, then
    /// prior, then Q, then the tie rank; the first legal move before the root
    /// is evaluated); alpha-beta the last completed iteration's move (the first
    /// root move before one completes). `None` only without a legal move.
    pub best_move: Option<Move>,
    /// Alpha-beta: the last completed iteration's nominal depth, plies.
    pub depth: Option<u32>,
    /// Alpha-beta: the deepest ply visited (quiescence included).
    pub seldepth: Option<u32>,
    /// MCTS: completed simulations (visits of the root's children).
    pub visits: Option<u32>,
    /// MCTS: nodes in the tree; alpha-beta: positions visited; a chooser: 0.
    pub nodes: u64,
    /// Wall time since the search started (alpha-beta: since its own clock
    /// started, a few microseconds after [`Session::go_since`]'s start).
    pub elapsed: Duration,
    /// The evaluation for the side to move (none for a chooser).
    pub score: Option<Score>,
    /// The principal variation, starting with `best_move` (at most [`PV_MAX`]
    /// moves; MCTS: the most visited child at each level, while visited).
    pub pv: Vec<Move>,
    /// MCTS: every root move, most visited first (the move to play first
    /// among equals); empty for the other engines.
    pub root_moves: Vec<RootMove>,
    /// MCTS with a network that has a score head: the root's score lead, the
    /// expected final point difference for the side to move in points
    /// ([`Mcts::root_score_lead`](crate::Mcts::root_score_lead)); `None` otherwise.
    pub score_lead: Option<f32>,
    /// `None` while the search runs; on the last info of a search, why it ended.
    pub end: Option<End>,
    /// MCTS with the play-time check ([`Session::with_veto`]), on the last
    /// info only: the move the search chose, when the check proved it lost
    /// and `best_move` is the replacement; `None` otherwise.
    pub vetoed: Option<Move>,
}

impl Info {
    /// Speed: MCTS visits per second, alpha-beta nodes per second.
    pub fn nps(&self) -> f64 {
        match self.visits {
            Some(v) => v as f64 / self.elapsed.as_secs_f64().max(1e-6),
            None => self.nodes as f64 / self.elapsed.as_secs_f64().max(1e-9),
        }
    }
}

/// A search that could not start.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SessionError {
    /// The position's game is over, or it has no legal move.
    #[error("no legal move: the game is over")]
    NoMove,
    /// The engine does not take this limit (MCTS and `depth`) or call
    /// ([`Session::move_lines`] without MCTS).
    #[error("{what} is not supported by the {engine} engine")]
    Unsupported {
        /// The limit or call.
        what: &'static str,
        /// [`Engine::kind`].
        engine: &'static str,
    },
}

/// `m1 m2 ...`: the moves of `line` played from `root`, as text.
pub fn line_text<G: GameState>(root: &G, line: &[Move]) -> String {
    let mut s = root.clone();
    let mut out = Vec::with_capacity(line.len());
    for &m in line {
        out.push(s.move_to_string(m));
        s.play_unchecked(m);
    }
    out.join(" ")
}

/// The measured cost of evaluation batches, to fit the last batches of a
/// `movetime` search into the time left. A caller that searches many times
/// (the engine's search thread) keeps it across sessions ([`Session::pace`],
/// [`Session::with_pace`]), so each search starts with what the earlier ones
/// (and a warm-up) measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pace {
    /// Seconds per leaf in batches (smoothed; a slower batch counts at once).
    per_leaf: Option<f64>,
    /// Seconds of a one-leaf batch (the fixed cost of a forward pass).
    single: Option<f64>,
}

/// A batch starts only when its expected cost times this factor fits in the
/// time left: the margin for a machine whose speed varies (shared cores).
const PACE_MARGIN: f64 = 1.25;

impl Pace {
    fn smooth(old: Option<f64>, new: f64) -> f64 {
        match old {
            Some(o) if new < o => 0.75 * o + 0.25 * new,
            _ => new,
        }
    }

    /// Records that a batch of `leaves` leaves took `took` to evaluate.
    pub fn record(&mut self, leaves: usize, took: Duration) {
        let secs = took.as_secs_f64();
        self.per_leaf = Some(Self::smooth(self.per_leaf, secs / leaves.max(1) as f64));
        if leaves == 1 {
            self.single = Some(Self::smooth(self.single, secs));
        }
    }

    /// The most leaves (at most `want`) whose batch is expected to end within
    /// `left`; 0 when not even one leaf fits. A batch of `k` is expected to cost
    /// `single + (k - 1) * per_leaf` (an overestimate: `per_leaf` includes its
    /// share of the fixed cost), times 1.25.
    pub fn fit(&self, want: usize, left: Duration) -> usize {
        let left = left.as_secs_f64() / PACE_MARGIN;
        let Some(single) = self.single.or(self.per_leaf) else {
            return want; // nothing measured yet
        };
        if left <= 0.0 || single > left {
            return 0;
        }
        match self.per_leaf {
            Some(p) if p > 0.0 => {
                // `as` saturates (a huge `left` gives usize::MAX): add without overflow.
                let more = ((left - single) / p) as usize;
                want.min(more.saturating_add(1))
            }
            _ => want,
        }
    }
}

/// A position and an engine, searched with [`Session::go`].
///
/// # Threads
/// A session searches on the thread that calls [`Session::go`]; the only
/// thing other threads touch is the stop flag ([`Session::stop_signal`]).
pub struct Session<'a, G: AbGame, E: Evaluator<G> = UniformEvaluator> {
    engine: Engine<'a, G, E>,
    position: G,
    stop: Arc<AtomicBool>,
    info_every: Duration,
    pace: Pace,
    /// Move-choice temperature of MCTS ([`Session::with_temperature`]) and its generator.
    temperature: f32,
    choice: StdRng,
    /// The play-time check of MCTS moves ([`Session::with_veto`]).
    veto: Option<Veto<G>>,
}

impl<'a, G: AbGame> Session<'a, G> {
    /// A session searching `position` with the alpha-beta engine `ab`.
    pub fn alphabeta(ab: AlphaBeta<G>, position: G) -> Self {
        Session::new(Engine::AlphaBeta(Box::new(ab)), position)
    }

    /// A session picking moves of `position` with `pick` (random, greedy).
    pub fn chooser(pick: Chooser<'a, G>, position: G) -> Self {
        Session::new(Engine::Chooser(pick), position)
    }
}

impl<'a, G: AbGame, E: Evaluator<G>> Session<'a, G, E> {
    /// A session searching `position` with MCTS under `config` and `evaluator`.
    pub fn mcts(config: MctsConfig, evaluator: E, position: G) -> Self {
        Session::new(Engine::Mcts { config, evaluator }, position)
    }

    /// A session searching `position` with `engine`; MCTS infos every second.
    pub fn new(engine: Engine<'a, G, E>, position: G) -> Self {
        Session {
            engine,
            position,
            stop: Arc::new(AtomicBool::new(false)),
            info_every: Duration::from_secs(1),
            pace: Pace::default(),
            temperature: 0.0,
            choice: StdRng::seed_from_u64(0),
            veto: None,
        }
    }

    /// MCTS plays a move drawn at move-choice temperature `t` (a strength
    /// level, [`crate::Level`]; [`SearchResult::sample_move`](crate::SearchResult::sample_move))
    /// from a generator seeded with `seed`, instead of the best move: the
    /// final [`Info::best_move`] is that draw (the principal variation and
    /// the root moves stay the search's). 0 (the default) plays the best move.
    pub fn with_temperature(mut self, t: f32, seed: u64) -> Self {
        self.temperature = t;
        self.choice = StdRng::seed_from_u64(seed);
        self
    }

    /// MCTS moves get the play-time tactical check ([`Veto`]): the move the
    /// search chose (after the temperature's draw) is replaced by the first
    /// move of the MCTS order that is not a proven loss when an alpha-beta
    /// search `depth` plies deep after it proves it lost
    /// ([`Info::vetoed`] then names it, and the principal variation starts
    /// with the replacement). 0 (the default) checks nothing; the other
    /// engines ignore it. The check listens to the session's stop flag.
    ///
    /// # Errors
    /// A depth above [`crate::VETO_MAX_DEPTH`], or a position of a game with
    /// more than two value players (the check's scores are negamax).
    pub fn with_veto(mut self, depth: u32) -> Result<Self, String> {
        check_veto_depth(depth)?;
        if depth == 0 {
            self.veto = None;
            return Ok(self);
        }
        if self.position.num_players() != 2 {
            return Err(format!(
                "veto_depth needs a two-player game; this one has {} value players (set it to 0)",
                self.position.num_players()
            ));
        }
        let mut veto = Veto::new(depth)?;
        veto.set_stop_signal(Some(Arc::clone(&self.stop)));
        self.veto = Some(veto);
        Ok(self)
    }

    /// The interval between MCTS infos during a search (checked after each
    /// batch); alpha-beta reports each completed iteration instead.
    pub fn with_info_interval(mut self, every: Duration) -> Self {
        self.info_every = every;
        self
    }

    /// Uses `stop` as the stop flag (e.g. one made before the session).
    pub fn with_stop_signal(mut self, stop: Arc<AtomicBool>) -> Self {
        if let Some(v) = &mut self.veto {
            v.set_stop_signal(Some(Arc::clone(&stop)));
        }
        self.stop = stop;
        self
    }

    /// Starts from the batch costs `pace` measured (see [`Pace`]).
    pub fn with_pace(mut self, pace: Pace) -> Self {
        self.pace = pace;
        self
    }

    /// The batch costs measured so far (to carry into the next session).
    pub fn pace(&self) -> Pace {
        self.pace
    }

    /// The stop flag: storing `true` ends the running search (MCTS before its
    /// next batch, once the root is evaluated; alpha-beta within 256 nodes),
    /// which still returns its move. The search only reads it: a search
    /// started with the flag raised stops at once, so the caller lowers it
    /// before the next one.
    pub fn stop_signal(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// The engine.
    pub fn engine(&self) -> &Engine<'a, G, E> {
        &self.engine
    }

    /// The position searched.
    pub fn position(&self) -> &G {
        &self.position
    }

    /// Sets the position searched.
    pub fn set_position(&mut self, position: G) {
        self.position = position;
    }

    /// Searches the position within `limits`, timed from now; see [`Session::go_since`].
    ///
    /// # Errors
    /// As [`Session::go_since`].
    pub fn go(&mut self, limits: &SearchLimits, on_info: impl FnMut(&Info)) -> Result<Info, SessionError> {
        self.go_since(Instant::now(), limits, on_info)
    }

    /// Searches the position within `limits`, with `movetime` counted from
    /// `start` (the engine protocol counts from the moment it read `go`).
    /// `on_info` sees an [`Info`] during the search (MCTS every info interval,
    /// alpha-beta after each completed iteration) and once at the end (with
    /// [`Info::end`] set); the returned info is that last one. An evaluator
    /// failure ends an MCTS search with [`End::EvalError`], not an error: the
    /// move found so far is still reported.
    ///
    /// # Errors
    /// [`SessionError::NoMove`] when the game is over; [`SessionError::Unsupported`]
    /// for a `depth` limit of MCTS.
    pub fn go_since(
        &mut self,
        start: Instant,
        limits: &SearchLimits,
        mut on_info: impl FnMut(&Info),
    ) -> Result<Info, SessionError> {
        if self.position.outcome().is_some() {
            return Err(SessionError::NoMove);
        }
        let info = match &mut self.engine {
            Engine::Mcts { config, evaluator } => {
                if limits.depth.is_some() {
                    return Err(SessionError::Unsupported { what: "depth", engine: "mcts" });
                }
                let mut run = MctsRun {
                    root: &self.position,
                    start,
                    limits,
                    stop: &self.stop,
                    info_every: self.info_every,
                    pace: &mut self.pace,
                };
                let (mut tree, mut info) = run.search(config, evaluator, &mut on_info);
                if self.temperature > 0.0 && info.best_move.is_some() {
                    if let Some(m) = tree.result().sample_move(self.temperature, &mut self.choice) {
                        info.best_move = Some(m);
                    }
                }
                if let (Some(veto), Some(chosen)) = (&mut self.veto, info.best_move) {
                    let check = veto.check(&self.position, chosen, &tree.result().ranked());
                    if check.vetoed.is_some() {
                        info.best_move = Some(check.played);
                        info.vetoed = check.vetoed;
                        // The replacement's line (a tree with leaves still pending, after an
                        // evaluator failure, cannot advance: the move alone).
                        info.pv = vec![check.played];
                        if tree.num_pending() == 0 {
                            tree.advance(check.played);
                            info.pv.extend(tree.principal_variation(PV_MAX - 1));
                        }
                    }
                }
                info
            }
            Engine::AlphaBeta(ab) => alphabeta(ab, &self.position, start, limits, &self.stop, &mut on_info),
            Engine::Chooser(pick) => {
                let best_move = Some(pick(&self.position).ok_or(SessionError::NoMove)?);
                Info { best_move, elapsed: start.elapsed(), end: Some(End::Limit), ..Info::default() }
            }
        };
        if info.best_move.is_none() {
            return Err(SessionError::NoMove);
        }
        on_info(&info);
        Ok(info)
    }

    /// The line the MCTS search expects after each of `moves` (root moves):
    /// the move, then the principal variation of its subtree, at most
    /// `max_len` moves. The search of `limits` is repeated for each move and
    /// its tree advanced to the move ([`Mcts::advance`]), so this costs one
    /// search per move and agrees with [`Session::go`] only for searches that
    /// are deterministic (limited by visits or nodes, not by time). Children
    /// tied on visits, prior and value are ordered by the tie rank of the
    /// advanced root, so such ties can break otherwise than in [`Info::pv`].
    ///
    /// # Errors
    /// Not the MCTS engine, or as [`Session::go`].
    pub fn move_lines(
        &mut self,
        limits: &SearchLimits,
        moves: &[Move],
        max_len: usize,
    ) -> Result<Vec<Vec<Move>>, SessionError> {
        let Engine::Mcts { config, evaluator } = &mut self.engine else {
            return Err(SessionError::Unsupported { what: "move_lines", engine: self.engine.kind() });
        };
        if self.position.outcome().is_some() {
            return Err(SessionError::NoMove);
        }
        let mut lines = Vec::with_capacity(moves.len());
        for &mv in moves {
            let mut run = MctsRun {
                root: &self.position,
                start: Instant::now(),
                limits,
                stop: &self.stop,
                info_every: Duration::MAX,
                pace: &mut self.pace,
            };
            let (mut tree, _) = run.search(config, evaluator, &mut |_| {});
            tree.advance(mv);
            let mut line = vec![mv];
            line.extend(tree.principal_variation(max_len.saturating_sub(1)));
            lines.push(line);
        }
        Ok(lines)
    }
}

/// One alpha-beta search: an info per completed iteration (`on_info`), and
/// the last one returned (not yet reported).
fn alphabeta<G: AbGame>(
    ab: &mut AlphaBeta<G>,
    root: &G,
    start: Instant,
    limits: &SearchLimits,
    stop: &Arc<AtomicBool>,
    on_info: &mut impl FnMut(&Info),
) -> Info {
    // Time already spent since `start` (thread hand-over, allocation) counts.
    let movetime = limits.movetime.map(|t| t.saturating_sub(start.elapsed()));
    let l = Limits { depth: limits.depth, nodes: limits.nodes, movetime };
    ab.set_stop_signal(Some(Arc::clone(stop)));
    let info = |r: &crate::AbResult| Info {
        best_move: r.best_move,
        depth: Some(r.depth),
        seldepth: Some(r.seldepth),
        visits: None,
        nodes: r.nodes,
        elapsed: r.elapsed,
        score: Some(Score::Cp(r.score)),
        pv: r.pv.clone(),
        root_moves: Vec::new(),
        score_lead: None,
        end: None,
        vetoed: None,
    };
    let r = ab.search_with(root, &l, |r| on_info(&info(r)));
    let end = if stop.load(Ordering::Relaxed) { End::Stopped } else { End::Limit };
    Info { end: Some(end), ..info(&r) }
}

/// One MCTS search advanced a batch at a time by its caller: the loop of
/// [`Session::go`] for one search, and of several searches at once whose
/// leaves share one evaluator call per round ([`search_together`], as
/// KataGo's analysis engine shares its network batches across the queries
/// in flight). A job gives the same tree as [`Session::go`] for the same
/// position, config and limits: the same seed (0), the same batches.
pub struct MctsJob<G: GameState> {
    tree: Mcts<G>,
    rng: StdRng,
    limits: SearchLimits,
    start: Instant,
    batch: usize,
    pace: Pace,
    /// When the last gather began (the batch's cost for [`Pace`]).
    gathered_at: Instant,
    end: Option<End>,
}

impl<G: GameState> MctsJob<G> {
    /// A search of `root` with `config` within `limits`, `movetime` counted
    /// from `start`; `pace` is what earlier searches measured ([`Pace`]).
    ///
    /// # Errors
    /// [`SessionError::NoMove`] when the game is over; [`SessionError::Unsupported`]
    /// for a `depth` limit (MCTS has none).
    pub fn new(
        config: &MctsConfig,
        root: G,
        limits: SearchLimits,
        start: Instant,
        pace: Pace,
    ) -> Result<Self, SessionError> {
        if root.outcome().is_some() {
            return Err(SessionError::NoMove);
        }
        if limits.depth.is_some() {
            return Err(SessionError::Unsupported { what: "depth", engine: "mcts" });
        }
        let mut tree = Mcts::new(config.clone(), root);
        let mut rng = StdRng::seed_from_u64(0);
        tree.begin_search(false, limits.visits.unwrap_or(GUMBEL_PLAN_UNLIMITED), &mut rng);
        let batch = config.leaves_per_batch.max(1) as usize;
        Ok(MctsJob { tree, rng, limits, start, batch, pace, gathered_at: Instant::now(), end: None })
    }

    /// Restricts the moves the search expands ([`Mcts::set_move_filter`]):
    /// given before the first [`MctsJob::gather`], it holds for the whole tree.
    pub fn set_move_filter(&mut self, filter: Option<crate::mcts::MoveFilter<G>>) {
        self.tree.set_move_filter(filter);
    }

    /// Gathers the next batch's leaves, or ends the search: the root is
    /// always evaluated first (one position), so that even a search stopped
    /// at once plays the evaluator's most likely move; then, before each
    /// batch, the stop flag (`stop`) and the limits are checked, and with
    /// `movetime` the batch shrinks to what the measured speed ([`Pace`])
    /// fits in the time left. Returns the number of leaves pending (their
    /// positions: [`MctsJob::pending_leaves`]); 0 once the search has ended
    /// ([`MctsJob::end`]) or when every path of the batch ended at a known value.
    pub fn gather(&mut self, stop: bool) -> usize {
        if self.end.is_some() {
            return 0;
        }
        let limits = self.limits;
        let root_done = self.tree.root().kind == NodeKind::Expanded;
        let done = self.tree.child_visits();
        let mut want = limits.visits.map_or(self.batch, |t| self.batch.min(t.saturating_sub(done) as usize));
        if root_done {
            let end = if stop {
                Some(End::Stopped)
            } else if want == 0 {
                Some(End::Limit)
            } else {
                if let Some(t) = limits.movetime {
                    want = self.pace.fit(want, t.saturating_sub(self.start.elapsed()));
                }
                if want == 0 {
                    Some(End::Limit)
                } else {
                    limits.nodes.filter(|&n| self.tree.num_nodes() as u64 >= n).map(End::NodeLimit)
                }
            };
            if end.is_some() {
                self.end = end;
                return 0;
            }
        }
        self.gathered_at = Instant::now();
        self.tree.gather(want.max(1), &mut self.rng);
        self.tree.num_pending()
    }

    /// The positions (and their legal moves) of the pending leaves, in the
    /// order [`MctsJob::apply`] takes their evaluations.
    pub fn pending_leaves(&self) -> impl Iterator<Item = (&G, &[Move])> {
        self.tree.pending_leaves()
    }

    /// Applies the evaluations of the pending leaves (one per leaf, in order)
    /// and records the batch's cost.
    pub fn apply(&mut self, evals: &[Evaluation]) {
        let n = self.tree.num_pending();
        if n > 0 {
            self.tree.apply_evaluations(evals, &mut self.rng);
            self.pace.record(n, self.gathered_at.elapsed());
        }
    }

    /// Ends the search after an evaluator failure (its message); the tree keeps what it has.
    pub fn fail(&mut self, message: String) {
        self.end = Some(End::EvalError(message));
    }

    /// Why the search ended; `None` while it runs.
    pub fn end(&self) -> Option<&End> {
        self.end.as_ref()
    }

    /// The tree searched so far.
    pub fn tree(&self) -> &Mcts<G> {
        &self.tree
    }

    /// The speed measured so far (for the next search).
    pub fn pace(&self) -> Pace {
        self.pace
    }

    /// The info of the search now (with [`Info::end`] once it has ended).
    pub fn info(&self) -> Info {
        let tree = &self.tree;
        let res = tree.result();
        // Before the root is expanded (its evaluation failed): the first legal move.
        let best_move = res.best_move().or_else(|| {
            let mut moves = Vec::new();
            tree.root_state().legal_moves(&mut moves);
            moves.first().copied()
        });
        let mut root_moves: Vec<RootMove> = res
            .visits
            .iter()
            .enumerate()
            .map(|(i, &(mv, visits))| RootMove {
                mv,
                visits,
                prior: res.priors.get(i).copied().unwrap_or(0.0),
                value: res.q.get(i).copied().flatten(),
                score: res.scores.get(i).copied().flatten(),
            })
            .collect();
        // Most visited first; the move to play leads among equals.
        root_moves.sort_by_key(|m| std::cmp::Reverse((m.visits, Some(m.mv) == best_move)));
        Info {
            best_move,
            depth: None,
            seldepth: None,
            visits: Some(tree.child_visits()),
            nodes: tree.num_nodes() as u64,
            elapsed: self.start.elapsed(),
            score: Some(Score::Value(res.root_value)),
            pv: tree.principal_variation(PV_MAX),
            root_moves,
            score_lead: res.root_score,
            end: self.end.clone(),
            vetoed: None,
        }
    }
}

/// One round of several MCTS searches at once: each running job gathers its
/// next batch ([`MctsJob::gather`], `stop` as there), every pending leaf of
/// every job goes to `ev` in **one** call, and each job gets its own
/// evaluations back. An evaluator failure ends every job that had leaves in
/// the call ([`End::EvalError`]). Returns how many jobs still run. `evals` is
/// the caller's buffer, reused across rounds.
pub fn search_together<G: GameState, E: Evaluator<G>>(
    jobs: &mut [&mut MctsJob<G>],
    ev: &mut E,
    stop: bool,
    evals: &mut Vec<Evaluation>,
) -> usize {
    let counts: Vec<usize> = jobs.iter_mut().map(|j| j.gather(stop)).collect();
    if counts.iter().any(|&n| n > 0) {
        let res = {
            let (states, moves): (Vec<&G>, Vec<&[Move]>) =
                jobs.iter().zip(&counts).filter(|(_, &n)| n > 0).flat_map(|(j, _)| j.pending_leaves()).unzip();
            ev.evaluate(&states, &moves, evals)
        };
        match res {
            Ok(()) => {
                let mut at = 0;
                for (j, &n) in jobs.iter_mut().zip(&counts) {
                    if n > 0 {
                        j.apply(&evals[at..at + n]);
                        at += n;
                    }
                }
            }
            Err(e) => {
                for (j, &n) in jobs.iter_mut().zip(&counts) {
                    if n > 0 {
                        j.fail(e.to_string());
                    }
                }
            }
        }
    }
    jobs.iter().filter(|j| j.end().is_none()).count()
}

/// One MCTS search of `root` for [`Session::go`] (see [`MctsRun::search`]).
struct MctsRun<'s, G: GameState> {
    root: &'s G,
    start: Instant,
    limits: &'s SearchLimits,
    stop: &'s AtomicBool,
    info_every: Duration,
    pace: &'s mut Pace,
}

impl<G: GameState> MctsRun<'_, G> {
    /// Builds a tree of `root` and searches it ([`MctsJob`], one job): the
    /// tree and its last info (not yet reported; the periodic ones go to
    /// `on_info`).
    fn search<E: Evaluator<G>>(
        &mut self,
        config: &MctsConfig,
        ev: &mut E,
        on_info: &mut impl FnMut(&Info),
    ) -> (Mcts<G>, Info) {
        let mut job = MctsJob::new(config, self.root.clone(), *self.limits, self.start, *self.pace)
            .expect("go_since checked the position and the limits");
        let mut evals: Vec<Evaluation> = Vec::new();
        let mut last_info = Instant::now();
        loop {
            search_together(&mut [&mut job], ev, self.stop.load(Ordering::Relaxed), &mut evals);
            if job.end().is_some() {
                break;
            }
            if last_info.elapsed() >= self.info_every {
                last_info = Instant::now();
                on_info(&job.info());
            }
        }
        *self.pace = job.pace();
        let info = job.info();
        (job.tree, info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AlphaBetaConfig, EvalError};
    use martian_rules::martian::{MartianChess, MartianRules};

    fn start() -> MartianChess {
        MartianChess::new_game(&MartianRules::default()).expect("start")
    }

    fn uniform(batch: u32) -> Session<'static, MartianChess> {
        let config = MctsConfig { leaves_per_batch: batch, ..MctsConfig::default() };
        Session::new(Engine::Mcts { config, evaluator: UniformEvaluator }, start())
    }

    /// Priors that favour the last legal move; fails from call `fail_at` on.
    struct Skewed {
        calls: usize,
        fail_at: usize,
    }

    impl Evaluator<MartianChess> for Skewed {
        fn evaluate(
            &mut self,
            positions: &[&MartianChess],
            moves: &[&[Move]],
            out: &mut Vec<Evaluation>,
        ) -> Result<(), EvalError> {
            self.calls += 1;
            if self.calls >= self.fail_at {
                return Err(EvalError("device lost".into()));
            }
            out.clear();
            for (_, m) in positions.iter().zip(moves) {
                let n = m.len();
                let priors = (0..n).map(|i| if i + 1 == n { 0.5 } else { 0.5 / (n - 1).max(1) as f32 }).collect();
                out.push(Evaluation { priors, value: 0.0, draw: 0.0, values: Vec::new(), score: None });
            }
            Ok(())
        }
    }

    #[test]
    fn mcts_searches_as_the_tree_does_alone() {
        // The session's batch loop builds the tree `Mcts::search` builds.
        let mut tree = Mcts::new(MctsConfig { leaves_per_batch: 8, ..MctsConfig::default() }, start());
        let res = tree.search(&mut UniformEvaluator, 64, false, &mut StdRng::seed_from_u64(0)).expect("search");
        let info = uniform(8).go(&SearchLimits::visits(64), |_| {}).expect("search");
        assert_eq!(info.best_move, res.best_move());
        assert_eq!(info.pv, tree.principal_variation(PV_MAX));
        assert_eq!(info.nodes, tree.num_nodes() as u64);
        assert_eq!(info.visits, Some(64));
        assert_eq!(info.end, Some(End::Limit));
        assert_eq!(info.root_moves.iter().map(|m| m.visits).sum::<u32>(), 64);
        assert!(info.root_moves.windows(2).all(|w| w[0].visits >= w[1].visits));
        assert_eq!(info.root_moves[0].mv, info.best_move.unwrap());
    }

    #[test]
    fn mcts_reports_periodically_and_at_the_end() {
        let mut s = uniform(4).with_info_interval(Duration::ZERO);
        let mut seen = Vec::new();
        let last = s.go(&SearchLimits::visits(40), |i| seen.push((i.visits.unwrap(), i.end.clone()))).expect("search");
        assert!(seen.len() > 2, "an info per batch with interval 0: {seen:?}");
        assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "visits grow: {seen:?}");
        assert_eq!(seen.iter().filter(|(_, e)| e.is_some()).count(), 1, "one final info");
        assert_eq!(seen.last(), Some(&(40, Some(End::Limit))));
        assert_eq!(last.visits, Some(40));
    }

    #[test]
    fn mcts_limits_nodes_and_time_and_refuses_depth() {
        let info = uniform(8).go(&SearchLimits::nodes(200), |_| {}).expect("search");
        assert_eq!(info.end, Some(End::NodeLimit(200)));
        assert!((200..200 + 8 * 40).contains(&info.nodes), "{}", info.nodes);
        let info = uniform(8).go(&SearchLimits::movetime(Duration::from_millis(30)), |_| {}).expect("search");
        assert_eq!(info.end, Some(End::Limit));
        assert!(info.visits.unwrap() > 0);
        let err = uniform(8).go(&SearchLimits::depth(2), |_| {}).unwrap_err();
        assert_eq!(err, SessionError::Unsupported { what: "depth", engine: "mcts" });
    }

    #[test]
    fn a_stopped_search_plays_the_prior_and_a_failed_one_a_legal_move() {
        let mut moves = Vec::new();
        start().legal_moves(&mut moves);
        let engine = Engine::Mcts { config: MctsConfig::default(), evaluator: Skewed { calls: 0, fail_at: 99 } };
        let mut s = Session::new(engine, start());
        s.stop_signal().store(true, Ordering::Relaxed);
        // Raised before the search: the root is evaluated, no simulation runs.
        let info = s.go(&SearchLimits::visits(100), |_| {}).expect("search");
        assert_eq!((info.visits, info.end.clone()), (Some(0), Some(End::Stopped)));
        assert_eq!(info.best_move, moves.last().copied(), "the highest prior");
        // The root's evaluation fails: the first legal move, and the error.
        let engine = Engine::Mcts { config: MctsConfig::default(), evaluator: Skewed { calls: 0, fail_at: 1 } };
        let info = Session::new(engine, start()).go(&SearchLimits::visits(100), |_| {}).expect("search");
        assert_eq!(info.end, Some(End::EvalError("evaluation failed: device lost".into())));
        assert_eq!(info.best_move, moves.first().copied());
    }

    #[test]
    fn alphabeta_reports_iterations_and_the_total() {
        let mut s = Session::alphabeta(AlphaBeta::new(AlphaBetaConfig::default()), start());
        let mut iterations = Vec::new();
        let info = s.go(&SearchLimits::nodes(3000), |i| iterations.push(i.clone())).expect("search");
        let (last, during) = iterations.split_last().expect("infos");
        assert_eq!(last, &info);
        assert!(during.iter().all(|i| i.end.is_none() && i.score.is_some() && i.visits.is_none()));
        assert_eq!(
            during.iter().map(|i| i.depth.unwrap()).collect::<Vec<_>>(),
            (1..=info.depth.unwrap()).collect::<Vec<_>>()
        );
        assert!(info.nodes >= 3000, "the total, past the last iteration's {}", during.last().unwrap().nodes);
        assert_eq!(info.end, Some(End::Limit));
        assert!(matches!(s.move_lines(&SearchLimits::depth(1), &[], 4), Err(SessionError::Unsupported { .. })));
    }

    #[test]
    fn choosers_games_over_and_move_lines() {
        let mut n = 0;
        let pick = |p: &MartianChess| {
            n += 1;
            let mut m = Vec::new();
            p.legal_moves(&mut m);
            m.first().copied()
        };
        let mut s = Session::chooser(Box::new(pick), start());
        let info = s.go(&SearchLimits::default(), |_| {}).expect("a pick");
        assert!(info.best_move.is_some() && info.score.is_none() && info.pv.is_empty());
        // A finished game (first legal moves until the end): no move to search.
        let mut over = start();
        let mut m = Vec::new();
        while over.outcome().is_none() {
            over.legal_moves(&mut m);
            over.play_unchecked(m[0]);
        }
        s.set_position(over);
        assert_eq!(s.go(&SearchLimits::default(), |_| {}).unwrap_err(), SessionError::NoMove);
        drop(s);
        assert_eq!(n, 1);
        let mut s = uniform(8);
        let info = s.go(&SearchLimits::visits(64), |_| {}).expect("search");
        let moves: Vec<Move> = info.root_moves.iter().take(3).map(|m| m.mv).collect();
        let lines = s.move_lines(&SearchLimits::visits(64), &moves, 16).expect("lines");
        for (l, m) in lines.iter().zip(&moves) {
            assert_eq!(l.first(), Some(m));
            assert!(l.len() > 1, "a move with a tenth of 64 visits has a reply: {l:?}");
        }
    }

    #[test]
    fn scores_in_protocol_units() {
        assert_eq!(Score::Cp(125).to_string(), "score cp 125");
        assert_eq!(Score::Cp(-7).text(), "cp -7");
        assert_eq!(Score::Cp(MATE - 3).text(), "win 3");
        assert_eq!(Score::Cp(-(MATE - 2)).text(), "loss 2");
        assert_eq!(Score::Value(0.25).text(), "0.2500");
        assert_eq!(Score::Value(-0.0).text(), "0.0000");
        assert_eq!(Score::Value(-0.5).to_string(), "value -0.5000");
    }

    #[test]
    fn pace_fits_batches_into_the_time_left() {
        let ms = Duration::from_millis;
        let mut p = Pace::default();
        assert_eq!(p.fit(8, ms(10)), 8, "nothing measured");
        p.record(1, ms(20));
        assert_eq!(p.single, Some(0.020));
        assert_eq!(p.fit(8, ms(20)), 0, "20 ms with the margin do not fit in 20 ms");
        assert_eq!(p.fit(8, ms(26)), 1);
        let p = Pace { single: Some(0.020), per_leaf: Some(0.010) };
        assert_eq!(p.fit(8, ms(51)), 3, "20 + 2 * 10 ms (x1.25) fit in 51 ms");
        assert_eq!(p.fit(2, ms(51)), 2);
        assert_eq!(p.fit(8, Duration::MAX), 8);
        assert_eq!(p.fit(8, Duration::ZERO), 0);
        // A slower batch counts at once; faster ones lower the estimate slowly.
        let mut p = Pace::default();
        p.record(1, ms(40));
        p.record(1, ms(20));
        assert!((p.single.unwrap() - 0.035).abs() < 1e-9);
        p.record(8, ms(400));
        assert!((p.per_leaf.unwrap() - 0.050).abs() < 1e-9);
    }
}
