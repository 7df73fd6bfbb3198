//! Alpha-beta baseline for both games: one negamax search over [`GameState`](martian_rules::GameState)
//! (through the small [`AbGame`] extension).
//!
//! Techniques, as described in the Chess Programming Wiki and used by most
//! chess engines:
//! * iterative deepening with aspiration windows around the previous score;
//! * principal-variation search (Marsland & Campbell 1982; null windows for
//!   every move after the first, re-searched when they fail high);
//! * a transposition table ([`TranspositionTable`]) keyed by
//!   [`AbGame::search_key`] (the Zobrist hash plus path-dependent counters),
//!   storing depth, bound and best move;
//! * move ordering: hash move, captures by MVV-LVA, two killers per ply,
//!   history heuristic ([`ordering`]);
//! * quiescence search over captures, plus (first quiescence ply only, Jetan)
//!   quiet moves that attack the enemy Princess, bounded by
//!   [`AlphaBetaConfig::qs_max_plies`];
//! * limits by depth, nodes or time per move ([`Limits`]), and an external
//!   stop signal ([`AlphaBeta::set_stop_signal`]) that another thread can raise.
//!
//! Terminal positions score `±(MATE - ply)` (win/loss, so faster wins score
//! higher) or 0 (draw). The engine allocates all buffers up front: states per
//! ply are reused with [`Clone::clone_from`] and move lists have capacity
//! [`GameState::MAX_MOVES`](martian_rules::GameState::MAX_MOVES). With depth or node limits the search is
//! deterministic for a given [`AlphaBetaConfig::seed`] (the seed only permutes
//! the initial root move order, which breaks ties between equal moves).

pub mod eval;
pub mod ordering;
pub mod tt;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use martian_rules::Move;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

pub use eval::{AbGame, JetanEval, JetanValues, MartianEval, StaticEval};
pub use ordering::{Heuristics, ScoredMove};
pub use tt::{Bound, TranspositionTable, TtEntry};

/// Version of the alpha-beta baseline (search and both games' evaluations).
/// The baseline is the fixed yardstick of the strength ladder (`docs/evaluation.md`): any
/// change to its search or evaluation that can change a move must bump this
/// number, which every ladder result and the engine's `hello` report, so
/// ratings of different versions are never mixed.
pub const ALPHABETA_VERSION: u32 = 1;

/// Score of a win at the root (a win `n` plies ahead scores `MATE - n`).
pub const MATE: i32 = 1_000_000;
/// Scores beyond this magnitude are wins or losses.
pub const MATE_BOUND: i32 = MATE - 1_000;
/// Larger than any score.
pub const INF: i32 = MATE + 1;
/// Deepest ply the search reaches (nominal depth plus quiescence).
pub const MAX_PLY: usize = 128;
/// The node and time limits are checked every this many nodes (a power of two).
const LIMIT_CHECK_NODES: u64 = 1024;
/// The external stop signal is checked every this many nodes (a power of two):
/// a few hundred microseconds at the usual speeds.
const SIGNAL_CHECK_NODES: u64 = 256;

/// Engine settings.
#[derive(Clone, Debug, PartialEq)]
pub struct AlphaBetaConfig {
    /// Transposition-table size in MiB (0 disables it). Default 16.
    pub tt_mib: usize,
    /// Quiescence search at the horizon. Default true.
    pub quiescence: bool,
    /// Most plies of quiescence below the horizon. Default 8.
    pub qs_max_plies: u32,
    /// Half-width of the aspiration window (centi-units; 0 = full window). Default 50.
    pub aspiration: i32,
    /// Take transposition-table cutoffs only from entries of exactly the
    /// remaining depth (not deeper ones). Then a fixed-depth search returns the
    /// same score and move with and without the table (used by the tests);
    /// slower. Default false.
    pub strict_tt: bool,
    /// Seed of the initial root move order (tie-breaking between equal moves).
    pub seed: u64,
}

impl Default for AlphaBetaConfig {
    fn default() -> Self {
        AlphaBetaConfig { tt_mib: 16, quiescence: true, qs_max_plies: 8, aspiration: 50, strict_tt: false, seed: 1 }
    }
}

/// When to stop searching. At least one limit should be set; with none the
/// search runs to [`MAX_PLY`] - 16 plies (or until the stop signal,
/// [`AlphaBeta::set_stop_signal`]). Any value is valid: a `movetime` of
/// `Duration::MAX` or a node budget of `u64::MAX` means no limit in practice.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    /// Nominal depth in plies.
    pub depth: Option<u32>,
    /// Node budget (nodes = positions visited, quiescence included).
    pub nodes: Option<u64>,
    /// Wall-clock time per move.
    pub movetime: Option<Duration>,
}

impl Limits {
    /// A fixed-depth limit.
    pub fn depth(d: u32) -> Self {
        Limits { depth: Some(d), ..Limits::default() }
    }
    /// A time limit per move.
    pub fn movetime(t: Duration) -> Self {
        Limits { movetime: Some(t), ..Limits::default() }
    }
    /// A node limit.
    pub fn nodes(n: u64) -> Self {
        Limits { nodes: Some(n), ..Limits::default() }
    }
}

/// The result of a search (of the last completed iteration).
#[derive(Clone, Debug, PartialEq)]
pub struct AbResult {
    /// Best move, `None` only when the root has no legal move.
    pub best_move: Option<Move>,
    /// Score for the side to move (see [`score_text`]).
    pub score: i32,
    /// Depth of the last completed iteration.
    pub depth: u32,
    /// Deepest ply visited (quiescence included).
    pub seldepth: u32,
    /// Nodes visited in total.
    pub nodes: u64,
    /// Time spent.
    pub elapsed: Duration,
    /// Principal variation, starting with `best_move`.
    pub pv: Vec<Move>,
}

impl AbResult {
    /// Nodes per second.
    pub fn nps(&self) -> f64 {
        self.nodes as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Human-readable score: `+1.25` (hundredths of a unit) or `win in 3` /
/// `loss in 2` (plies).
pub fn score_text(score: i32) -> String {
    if score > MATE_BOUND {
        format!("win in {}", MATE - score)
    } else if score < -MATE_BOUND {
        format!("loss in {}", MATE + score)
    } else {
        format!("{:+.2}", score as f64 / 100.0)
    }
}

fn score_to_tt(v: i32, ply: usize) -> i32 {
    if v > MATE_BOUND {
        v + ply as i32
    } else if v < -MATE_BOUND {
        v - ply as i32
    } else {
        v
    }
}

fn score_from_tt(v: i32, ply: usize) -> i32 {
    if v > MATE_BOUND {
        v - ply as i32
    } else if v < -MATE_BOUND {
        v + ply as i32
    } else {
        v
    }
}

/// The alpha-beta engine for game `G` with evaluation `E`.
///
/// # Example
/// A fixed-depth search finds a forced win three plies deep.
/// ```
/// use martian_rules::jetan::{Jetan, JetanRules};
/// use martian_rules::GameState;
/// use martian_search::alphabeta::{score_text, MATE};
/// use martian_search::{AlphaBeta, AlphaBetaConfig, Limits};
///
/// // Black to move forces the capture of Orange's Princess (a7, Escape spent)
/// // on its second move, whatever Orange replies.
/// let pos = Jetan::from_position("C9/t2t6/10/P2w6/10/10/10/10/10/c8p b B - 0 0", &JetanRules::default())?;
/// let mut engine = AlphaBeta::<Jetan>::new(AlphaBetaConfig { tt_mib: 4, ..AlphaBetaConfig::default() });
/// let result = engine.search(&pos, &Limits::depth(3));
///
/// assert_eq!(result.depth, 3);
/// assert_eq!(result.score, MATE - 3, "a win three plies ahead");
/// assert_eq!(score_text(result.score), "win in 3");
/// let best = result.best_move.expect("the root has legal moves");
/// assert_eq!(result.pv.first(), Some(&best), "the principal variation starts with the move");
///
/// // Scores are for the side to move: after the move, Orange loses in two plies.
/// let mut after = pos.clone();
/// after.play(best)?;
/// assert_eq!(engine.search(&after, &Limits::depth(2)).score, -(MATE - 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AlphaBeta<G: AbGame, E: StaticEval<G> = <G as AbGame>::Eval> {
    cfg: AlphaBetaConfig,
    eval: E,
    tt: TranspositionTable,
    heur: Heuristics,
    states: Vec<G>,
    moves: Vec<Vec<Move>>,
    scored: Vec<Vec<ScoredMove>>,
    pv: Vec<Vec<Move>>,
    root_moves: Vec<Move>,
    rng: StdRng,
    nodes: u64,
    seldepth: usize,
    stop: bool,
    /// Raised by another thread to end the search (see [`AlphaBeta::set_stop_signal`]).
    signal: Option<Arc<AtomicBool>>,
    start: Instant,
    limits: Limits,
}

impl<G: AbGame> AlphaBeta<G> {
    /// An engine with the game's default evaluation.
    pub fn new(cfg: AlphaBetaConfig) -> Self {
        Self::with_eval(cfg, G::Eval::default())
    }
}

impl<G: AbGame, E: StaticEval<G>> AlphaBeta<G, E> {
    /// An engine with evaluation `eval`. Allocates the table and all buffers.
    ///
    /// # Panics
    /// If the table's memory cannot be allocated; a size that comes from a
    /// user goes through [`AlphaBeta::try_with_eval`].
    pub fn with_eval(cfg: AlphaBetaConfig, eval: E) -> Self {
        Self::try_with_eval(cfg, eval).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`AlphaBeta::with_eval`], or an error when the transposition table of
    /// `cfg.tt_mib` MiB cannot be allocated.
    ///
    /// # Errors
    /// [`TranspositionTable::try_new`]'s message.
    pub fn try_with_eval(cfg: AlphaBetaConfig, eval: E) -> Result<Self, String> {
        Ok(AlphaBeta {
            tt: TranspositionTable::try_new(cfg.tt_mib)?,
            rng: StdRng::seed_from_u64(cfg.seed),
            cfg,
            eval,
            heur: Heuristics::new(MAX_PLY),
            states: Vec::new(),
            moves: (0..=MAX_PLY).map(|_| Vec::with_capacity(G::MAX_MOVES)).collect(),
            scored: (0..=MAX_PLY).map(|_| Vec::with_capacity(G::MAX_MOVES)).collect(),
            pv: (0..=MAX_PLY).map(|_| Vec::with_capacity(MAX_PLY + 1)).collect(),
            root_moves: Vec::with_capacity(G::MAX_MOVES),
            nodes: 0,
            seldepth: 0,
            stop: false,
            signal: None,
            start: Instant::now(),
            limits: Limits::default(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &AlphaBetaConfig {
        &self.cfg
    }

    /// The evaluation.
    pub fn eval(&self) -> &E {
        &self.eval
    }

    /// Sets (or, with `None`, removes) the external stop signal: when another
    /// thread stores `true` in it, the running search ends within a few hundred
    /// nodes and returns the result of its last completed iteration (at least a
    /// legal move: the first root move when no iteration completed). The search
    /// only reads the flag; the caller clears it before the next search. A search
    /// started with the flag already raised returns at once.
    pub fn set_stop_signal(&mut self, signal: Option<Arc<AtomicBool>>) {
        self.signal = signal;
    }

    /// The external stop signal, if one is set.
    pub fn stop_signal(&self) -> Option<&Arc<AtomicBool>> {
        self.signal.as_ref()
    }

    /// Forgets the table and the ordering statistics, and reseeds (call
    /// before a new game so that each game is reproducible on its own).
    pub fn reset(&mut self) {
        self.tt.clear();
        self.heur.age(true);
        self.rng = StdRng::seed_from_u64(self.cfg.seed);
    }

    /// Searches `root` within `limits`.
    pub fn search(&mut self, root: &G, limits: &Limits) -> AbResult {
        self.search_with(root, limits, |_| {})
    }

    /// Searches `root` within `limits`; `on_iteration` sees the result of each
    /// completed iteration.
    pub fn search_with(&mut self, root: &G, limits: &Limits, mut on_iteration: impl FnMut(&AbResult)) -> AbResult {
        self.start = Instant::now();
        self.limits = *limits;
        self.nodes = 0;
        self.seldepth = 0;
        self.stop = false;
        self.tt.new_search();
        self.heur.age(false);
        if self.states.is_empty() {
            self.states = (0..=MAX_PLY).map(|_| root.clone()).collect();
        } else {
            self.states[0].clone_from(root);
        }
        root.legal_moves(&mut self.root_moves);
        self.root_moves.shuffle(&mut self.rng);
        let max_depth = limits.depth.unwrap_or(u32::MAX).clamp(1, (MAX_PLY - 16) as u32);
        let mut best = AbResult {
            best_move: self.root_moves.first().copied(),
            score: 0,
            depth: 0,
            seldepth: 0,
            nodes: 0,
            elapsed: Duration::ZERO,
            pv: self.root_moves.first().copied().into_iter().collect(),
        };
        if self.root_moves.is_empty() || self.signalled() {
            return best;
        }
        // First iteration: captures first (MVV-LVA), other moves in the seeded
        // order (a stable sort, so the seed breaks ties).
        self.root_moves
            .sort_by_key(|&m| std::cmp::Reverse(root.capture_values(m).map_or(i32::MIN, |(v, a)| v * 64 - a)));
        let mut prev: i32 = 0;
        for depth in 1..=max_depth {
            let mut delta = self.cfg.aspiration;
            let use_window = depth >= 3 && delta > 0 && prev.abs() < MATE_BOUND;
            let (mut alpha, mut beta) = if use_window { (prev - delta, prev + delta) } else { (-INF, INF) };
            let score = loop {
                let v = self.root_search(depth, alpha, beta);
                if self.stop {
                    break v;
                }
                if v <= alpha && alpha > -INF {
                    delta = delta.saturating_mul(2);
                    alpha = if delta > 2_000 { -INF } else { prev - delta };
                } else if v >= beta && beta < INF {
                    delta = delta.saturating_mul(2);
                    beta = if delta > 2_000 { INF } else { prev + delta };
                } else {
                    break v;
                }
            };
            if self.stop {
                break;
            }
            prev = score;
            best = AbResult {
                best_move: self.root_moves.first().copied(),
                score,
                depth,
                seldepth: self.seldepth as u32,
                nodes: self.nodes,
                elapsed: self.start.elapsed(),
                pv: self.pv[0].clone(),
            };
            if best.pv.first() != best.best_move.as_ref() {
                best.pv = best.best_move.into_iter().collect();
            }
            on_iteration(&best);
            if score.abs() > MATE_BOUND && (MATE - score.abs()) as u32 <= depth {
                break; // a forced result within the horizon: deeper cannot change it
            }
            if self.time_up() || self.signalled() {
                break;
            }
        }
        best.nodes = self.nodes;
        best.elapsed = self.start.elapsed();
        best
    }

    /// The node or time limit is reached. Compares elapsed time with the limit
    /// (never computes `start + movetime`, which could overflow).
    fn time_up(&self) -> bool {
        self.limits.nodes.is_some_and(|n| self.nodes >= n)
            || self.limits.movetime.is_some_and(|t| self.start.elapsed() >= t)
    }

    /// The external stop signal is raised.
    #[inline]
    fn signalled(&self) -> bool {
        self.signal.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
    }

    #[inline]
    fn count_node(&mut self, ply: usize) {
        self.nodes += 1;
        self.seldepth = self.seldepth.max(ply);
        if self.nodes & (SIGNAL_CHECK_NODES - 1) == 0
            && (self.signalled() || (self.nodes & (LIMIT_CHECK_NODES - 1) == 0 && self.time_up()))
        {
            self.stop = true;
        }
    }

    /// Root of one iteration: every root move, PVS; the best move moves to the
    /// front of `root_moves` (the rest keep their order).
    fn root_search(&mut self, depth: u32, mut alpha: i32, beta: i32) -> i32 {
        let mut best = -INF;
        let mut best_idx = None;
        self.pv[0].clear();
        for i in 0..self.root_moves.len() {
            let mv = self.root_moves[i];
            self.play_into(0, mv);
            let v = if i == 0 {
                -self.node(1, depth - 1, -beta, -alpha)
            } else {
                let v = -self.node(1, depth - 1, -alpha - 1, -alpha);
                if v > alpha && v < beta && !self.stop {
                    -self.node(1, depth - 1, -beta, -alpha)
                } else {
                    v
                }
            };
            if self.stop {
                return best;
            }
            if v > best {
                best = v;
            }
            if v > alpha {
                alpha = v;
                best_idx = Some(i);
                self.update_pv(0, mv);
                if v >= beta {
                    break;
                }
            }
        }
        if let Some(i) = best_idx {
            self.root_moves[..=i].rotate_right(1);
        }
        best
    }

    #[inline]
    fn play_into(&mut self, ply: usize, mv: Move) {
        let (a, b) = self.states.split_at_mut(ply + 1);
        b[0].clone_from(&a[ply]);
        b[0].play_unchecked(mv);
    }

    #[inline]
    fn update_pv(&mut self, ply: usize, mv: Move) {
        let (a, b) = self.pv.split_at_mut(ply + 1);
        let line = &mut a[ply];
        line.clear();
        line.push(mv);
        line.extend_from_slice(&b[0]);
    }

    #[inline]
    fn terminal_score(&self, ply: usize) -> Option<i32> {
        let s = &self.states[ply];
        let o = s.outcome()?;
        Some(match o.winner {
            None => 0,
            Some(w) if w == s.side_to_move() => MATE - ply as i32,
            Some(_) => -(MATE - ply as i32),
        })
    }

    fn node(&mut self, ply: usize, depth: u32, mut alpha: i32, beta: i32) -> i32 {
        self.pv[ply].clear();
        self.count_node(ply);
        if let Some(v) = self.terminal_score(ply) {
            return v;
        }
        if depth == 0 || ply >= MAX_PLY - 1 {
            return if self.cfg.quiescence {
                self.qsearch(ply, alpha, beta, 0)
            } else {
                self.eval.evaluate(&self.states[ply])
            };
        }
        let key = self.states[ply].search_key();
        let mut hash_move = None;
        if let Some(e) = self.tt.probe(key) {
            hash_move = e.mv;
            let usable = if self.cfg.strict_tt { e.depth as u32 == depth } else { e.depth as u32 >= depth };
            if usable {
                let v = score_from_tt(e.score, ply);
                match e.bound {
                    Bound::Exact => return v,
                    Bound::Lower if v >= beta => return v,
                    Bound::Upper if v <= alpha => return v,
                    _ => {}
                }
            }
        }
        {
            let s = &self.states[ply];
            s.legal_moves(&mut self.moves[ply]);
            if hash_move.is_some_and(|m| !self.moves[ply].contains(&m)) {
                hash_move = None; // a key collision
            }
            self.heur.order(s, &self.moves[ply], hash_move, ply, &mut self.scored[ply]);
        }
        let n = self.scored[ply].len();
        if n == 0 {
            return self.eval.evaluate(&self.states[ply]);
        }
        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_move = None;
        for i in 0..n {
            let sm = self.scored[ply][i];
            self.play_into(ply, sm.mv);
            let v = if i == 0 {
                -self.node(ply + 1, depth - 1, -beta, -alpha)
            } else {
                let v = -self.node(ply + 1, depth - 1, -alpha - 1, -alpha);
                if v > alpha && v < beta && !self.stop {
                    -self.node(ply + 1, depth - 1, -beta, -alpha)
                } else {
                    v
                }
            };
            if self.stop {
                return 0;
            }
            if v > best {
                best = v;
                best_move = Some(sm.mv);
                if v > alpha {
                    alpha = v;
                    self.update_pv(ply, sm.mv);
                    if v >= beta {
                        if !sm.capture {
                            self.heur.cutoff(ply, sm.mv, depth);
                        }
                        break;
                    }
                }
            }
        }
        let bound = if best >= beta {
            Bound::Lower
        } else if best > alpha0 {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt.store(key, score_to_tt(best, ply), best_move, depth, bound);
        best
    }

    fn qsearch(&mut self, ply: usize, mut alpha: i32, beta: i32, qply: u32) -> i32 {
        self.pv[ply].clear();
        if qply > 0 {
            self.count_node(ply);
            if let Some(v) = self.terminal_score(ply) {
                return v;
            }
        }
        let stand = self.eval.evaluate(&self.states[ply]);
        if qply >= self.cfg.qs_max_plies || ply >= MAX_PLY - 1 {
            return stand;
        }
        if stand >= beta {
            return stand;
        }
        if stand > alpha {
            alpha = stand;
        }
        let mut best = stand;
        {
            let s = &self.states[ply];
            s.legal_moves(&mut self.moves[ply]);
            let scored = &mut self.scored[ply];
            scored.clear();
            for &mv in &self.moves[ply] {
                if let Some((victim, attacker)) = s.capture_values(mv) {
                    scored.push(ScoredMove { mv, key: victim * 64 - attacker, capture: true });
                } else if qply == 0 && s.threat_candidate(mv) {
                    scored.push(ScoredMove { mv, key: -1, capture: false });
                }
            }
            scored.sort_unstable_by(|a, b| b.key.cmp(&a.key).then(a.mv.cmp(&b.mv)));
        }
        for i in 0..self.scored[ply].len() {
            let sm = self.scored[ply][i];
            self.play_into(ply, sm.mv);
            if !sm.capture && !self.states[ply].is_threat(&self.states[ply + 1]) {
                continue;
            }
            let v = -self.qsearch(ply + 1, -beta, -alpha, qply + 1);
            if self.stop {
                return 0;
            }
            if v > best {
                best = v;
                if v > alpha {
                    alpha = v;
                    self.update_pv(ply, sm.mv);
                    if v >= beta {
                        break;
                    }
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests;
