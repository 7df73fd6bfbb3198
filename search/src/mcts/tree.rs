//! The tree itself: the arena of nodes, the state of a search, and the
//! public [`Mcts`] API that drives it (begin, gather, evaluate, result, the
//! move to play). The search's steps live beside it, each in its own file
//! of an `impl Mcts` (as KataGo splits its search by concern): selection in
//! `select`, expansion in `expand`, back-up and the solver in `backup`, the
//! root's noise, Gumbel search and policy targets in `root`, tree reuse in
//! `reuse`.

use std::cmp::Ordering;

use martian_rules::{mix64, GameState, Move, Side, MAX_PLAYERS};
use rand::Rng;

use super::node::{game_value, Node, NodeKind};
use super::prove::Prover;
use super::result::{compare_stats, tie_rank, SearchResult};
use crate::config::{ContemptMode, MctsConfig, RootSelection};
use crate::evaluator::{EvalError, Evaluator};

/// A leaf waiting for its evaluation: its position, its legal moves (the
/// order of the evaluation's priors) and the path from the root to it.
pub(super) struct PendingLeaf<G> {
    pub(super) state: G,
    pub(super) moves: Vec<Move>,
    pub(super) path: Vec<u32>,
    pub(super) len: usize,
}

/// Restricts the moves a search considers (KataGo's `avoidMoves` /
/// `allowMoves`): called with a leaf's position, its depth below the root
/// (0 = the root) and its legal moves when the leaf is queued, it removes
/// the moves the search must not expand there. The moves it keeps are the
/// node's children and the order of the evaluation's priors. It should
/// leave at least one move in a position that is not over (a node without
/// children is searched as a dead end).
pub type MoveFilter<G> = Box<dyn Fn(&G, usize, &mut Vec<Move>) + Send + Sync>;

/// A PUCT search tree over game `G`. See the module docs for the protocol.
///
/// # Example
/// The batched protocol that [`Mcts::search`] wraps, as a self-play driver
/// runs it (there with the leaves of many trees in one evaluation), then
/// tree reuse.
/// ```
/// use martian_rules::martian::{MartianChess, MartianRules};
/// use martian_rules::{GameState, Move};
/// use martian_search::{Evaluator, Mcts, MctsConfig, UniformEvaluator};
/// use rand::rngs::StdRng;
/// use rand::SeedableRng;
///
/// let start = MartianChess::new_game(&MartianRules::default())?;
/// let mut tree = Mcts::new(MctsConfig::default(), start);
/// let (mut rng, mut evaluator, mut evals) = (StdRng::seed_from_u64(1), UniformEvaluator, Vec::new());
/// tree.begin_search(true, 100, &mut rng); // with root noise, as in self-play
/// while tree.child_visits() < 100 {
///     // Up to 8 leaves; virtual loss steers each selection away from the others.
///     let want = (100 - tree.child_visits()).min(8) as usize;
///     tree.gather(want, &mut rng);
///     let (states, moves): (Vec<&MartianChess>, Vec<&[Move]>) = tree.pending_leaves().unzip();
///     evaluator.evaluate(&states, &moves, &mut evals)?;
///     tree.apply_evaluations(&evals, &mut rng);
/// }
/// assert_eq!(tree.child_visits(), 100);
/// assert_eq!(tree.num_pending(), 0);
///
/// // Play the move and keep its subtree: its visits count towards the next search.
/// let mv = tree.best_move().expect("the root has legal moves");
/// let kept = tree.root_children().iter().find(|c| c.mv == mv).map_or(0, |c| c.visits);
/// tree.advance(mv);
/// assert_eq!(tree.root().visits, kept);
/// assert_eq!(tree.root_state().ply(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Two or more value players
/// Each node's scalar ([`Node::value_sum`]) is the value for the player who
/// moved into it ([`Node::mover`]). A back-up carries the leaf's value for
/// every player and adds at each node on the path its mover's component. In a
/// two-player zero-sum game that is the familiar negation from ply to ply,
/// and the code runs exactly that. With more value players
/// (`GameState::num_players` > 2, four-player free-for-all) it is max^n
/// (Luckhardt and Irani 1986; the n-player MCTS of OpenSpiel): the leaf's
/// vector comes from [`Evaluation::player_values`](crate::Evaluation::player_values) or, at a finished game,
/// `GameState::player_values`, and every chooser maximises its own component.
/// The value of a node for the player to move there (the root's value, the
/// first-play urgency) is then the visit-weighted mean of its children's
/// Q (0 before any is visited). MCTS-solver proofs and the leaf threat check
/// assume two players and are refused there
/// ([`MctsConfig::validate_for_players`]).
pub struct Mcts<G: GameState> {
    pub(super) cfg: MctsConfig,
    /// Value players of the game (`GameState::num_players` of the root).
    pub(super) players: usize,
    pub(super) nodes: Vec<Node>,
    pub(super) spare: Vec<Node>,
    pub(super) root_state: G,
    pub(super) pending: Vec<PendingLeaf<G>>,
    pub(super) num_pending: usize,
    pub(super) path: Vec<u32>,
    pub(super) scratch: G,
    pub(super) noise_pending: bool,
    pub(super) queue: Vec<(u32, u32)>,
    pub(super) noise: Vec<f32>,
    /// Root priors before noise was mixed in (valid while `root_noised`).
    pub(super) raw_priors: Vec<f32>,
    pub(super) root_noised: bool,
    /// The seed set with [`Mcts::set_tie_seed`] (0 by default).
    pub(super) tie_seed: u64,
    /// Gumbel root search state of the current search (see [`RootSelection::Gumbel`]).
    pub(super) gumbel: GumbelRoot,
    /// Forced playouts ([`MctsConfig::forced_playouts_k`]) act in the current
    /// search: it began with root noise, PUCT root selection and k > 0.
    pub(super) forced: bool,
    /// This search proves every root move before its first simulation
    /// ([`Mcts::prove_root_moves_eagerly`]); else each just before its first
    /// visit.
    pub(super) eager_root_proofs: bool,
    /// This search has asked for the root's own five-ply win
    /// ([`MctsConfig::trap_plies`] = 5).
    pub(super) root_line_checked: bool,
    /// Scratch of the shallow proofs ([`MctsConfig::trap_plies`]).
    pub(super) prover: Prover<G>,
    /// A child's position for [`Mcts::check_children`].
    pub(super) probe: G,
    /// Per child of the leaf being expanded: whether the opponent wins at
    /// once after it ([`GameState::winning_replies`]), when the game answers.
    pub(super) reply_wins: Vec<bool>,
    /// The value of a finished drawn game for its side to move, by side
    /// index ([`Side`] as `usize`): [`MctsConfig::draw_penalty`] plus the
    /// contempt (`-contempt` for the contempt side, `+contempt` for the
    /// other; [`MctsConfig::contempt`]).
    pub(super) draw_values: [f32; 2],
    /// The side for which a draw is worth `-contempt` ([`Mcts::set_contempt`]).
    pub(super) contempt_side: Side,
    /// The moves the search may expand ([`Mcts::set_move_filter`]); `None`: every legal move.
    pub(super) move_filter: Option<MoveFilter<G>>,
    /// The score utility is on: a two-player game with points
    /// (`GameState::HAS_SCORE`) and a weight above 0
    /// ([`MctsConfig::static_score_utility`], [`MctsConfig::dynamic_score_utility`]).
    pub(super) score_utility: bool,
    /// The evaluator has given a score ([`Evaluation::score`](crate::Evaluation::score))
    /// since the tree was made or reset: the nodes' score sums are kept and
    /// reported. Two-player games only.
    pub(super) scored: bool,
    /// The centre of the dynamic score utility: the root's expected final
    /// point difference for the root's side to move when the current search
    /// began (its mean over the reused subtree, or the root's own
    /// evaluation); `None` until known.
    pub(super) score_center: Option<f32>,
    /// Per root child (offset from the root's first child): `[n, sum, sum of
    /// squares]` of the plain values (without the score utility) backed up
    /// through it since the tree was made, reset or advanced, for
    /// [`Mcts::root_value_stddev`]. Read by nothing that selects, so it
    /// never changes a search; one buffer per tree, sized at the root's
    /// expansion (nothing per node).
    pub(super) root_spread: Vec<[f64; 3]>,
    /// The evaluator's own value of the root for its side to move
    /// ([`Evaluation::value`](crate::Evaluation::value)), before any search;
    /// `None` until the root is evaluated, and after [`Mcts::advance`].
    pub(super) root_raw_value: Option<f32>,
}

/// State of one Gumbel root search: the candidates and the halving schedule.
#[derive(Default)]
pub(super) struct GumbelRoot {
    /// Set by [`Mcts::begin_search`]; the state is built when the root is expanded.
    pub(super) pending: bool,
    /// The state below is valid for the current search.
    pub(super) ready: bool,
    /// Sample Gumbel noise (self-play) rather than use g = 0 (play).
    pub(super) noise: bool,
    /// Simulations of the search (`n` of the paper).
    pub(super) budget: u32,
    /// `g(a)` per root child (0 without noise).
    pub(super) g: Vec<f32>,
    /// Root children's visits when the search began (tree reuse).
    pub(super) start_visits: Vec<u32>,
    /// Root child offsets still in the halving, best first at the last halving.
    pub(super) considered: Vec<u32>,
    /// Rounds of halving: `ceil(log2 m)`, at least 1.
    pub(super) phases: u32,
    /// Visits (since the search began) each candidate gets by the end of the current round.
    pub(super) phase_target: u32,
    /// Scratch for scores.
    pub(super) scores: Vec<f32>,
}

impl<G: GameState> Mcts<G> {
    /// A tree with root `root`.
    pub fn new(mut cfg: MctsConfig, root: G) -> Mcts<G> {
        let players = root.num_players().clamp(1, MAX_PLAYERS);
        if players > 2 {
            // Two-player proofs; `MctsConfig::validate_for_players` refuses them
            // in a config, and a tree never runs them on a game of more players.
            cfg.solver = false;
            cfg.leaf_threat_check = false;
            cfg.trap_plies = 0;
            cfg.draw_penalty = 0.0;
            cfg.contempt = 0.0;
            cfg.draw_aversion = 0.0;
            cfg.static_score_utility = 0.0;
            cfg.dynamic_score_utility = 0.0;
        }
        let score_utility = G::HAS_SCORE && (cfg.static_score_utility > 0.0 || cfg.dynamic_score_utility > 0.0);
        let prover = Prover::new(&root);
        let probe = root.clone();
        let mut t = Mcts {
            cfg,
            players,
            nodes: Vec::with_capacity(1024),
            spare: Vec::with_capacity(1024),
            scratch: root.clone(),
            root_state: root,
            pending: Vec::new(),
            num_pending: 0,
            path: Vec::with_capacity(64),
            noise_pending: false,
            queue: Vec::new(),
            noise: Vec::new(),
            raw_priors: Vec::new(),
            root_noised: false,
            tie_seed: 0,
            gumbel: GumbelRoot::default(),
            forced: false,
            eager_root_proofs: false,
            root_line_checked: false,
            prover,
            probe,
            reply_wins: Vec::with_capacity(G::MAX_MOVES),
            draw_values: [0.0; 2],
            contempt_side: Side::South,
            move_filter: None,
            score_utility,
            scored: false,
            score_center: None,
            root_spread: Vec::new(),
            root_raw_value: None,
        };
        t.set_draw_values(t.root_state.side_to_move());
        let r = t.root_node();
        t.nodes.push(r);
        t
    }

    /// A fresh root node for `self.root_state` (its [`Node::mover`] is the
    /// player before the root's mover).
    pub(super) fn root_node(&self) -> Node {
        let n = self.players;
        Node { mover: ((self.root_state.player_to_move() + n - 1) % n) as u8, ..Node::new(Move::new(0, 0), 1.0) }
    }

    /// Whether the game has more than two value players (max^n back-up).
    #[inline]
    pub(super) fn many(&self) -> bool {
        self.players > 2
    }

    /// The exact value of a child (its `Terminal(v)`, or a proven value `v`
    /// for its side to move) for the player who chose it: `-v` in a
    /// two-player game, less [`MctsConfig::draw_aversion`] when it is a draw
    /// (both sides pay it); `v` itself with more players (see
    /// [`NodeKind::Terminal`]).
    #[inline]
    pub(super) fn terminal_for_chooser(&self, v: f32) -> f32 {
        if self.many() {
            v
        } else if self.cfg.draw_aversion > 0.0 && game_value(v) == 0.0 {
            -v - self.cfg.draw_aversion
        } else {
            -v
        }
    }

    /// The search settings.
    pub fn config(&self) -> &MctsConfig {
        &self.cfg
    }

    /// The position at the root.
    pub fn root_state(&self) -> &G {
        &self.root_state
    }

    /// The root node.
    pub fn root(&self) -> &Node {
        &self.nodes[0]
    }

    /// The root's children (empty until the root is expanded).
    pub fn root_children(&self) -> &[Node] {
        let r = &self.nodes[0];
        if r.kind == NodeKind::Expanded {
            &self.nodes[r.first_child as usize..(r.first_child + r.num_children) as usize]
        } else {
            &[]
        }
    }

    /// The principal variation: from the root, repeatedly the best child by
    /// the rule of [`SearchResult::best_move`] (visits, then prior, then Q,
    /// then [`tie_rank`] under [`Mcts::tie_seed`]), while it has visits; at
    /// most `max_len` moves; with the solver, a proven win's shortest line.
    /// Its first move is [`Mcts::best_move`].
    pub fn principal_variation(&self, max_len: usize) -> Vec<Move> {
        self.variation_from(0, max_len)
    }

    /// The line the search expects after the root move `mv`: `mv`, then the
    /// principal variation of its subtree by the same rule as
    /// [`Mcts::principal_variation`] (KataGo's per-move `pv`); at most
    /// `max_len` moves; empty when `mv` is not a root move.
    pub fn move_variation(&self, mv: Move, max_len: usize) -> Vec<Move> {
        let Some(k) = self.root_children().iter().position(|c| c.mv == mv) else { return Vec::new() };
        if max_len == 0 {
            return Vec::new();
        }
        let mut pv = vec![mv];
        pv.extend(self.variation_from(self.nodes[0].first_child as usize + k, max_len - 1));
        pv
    }

    /// The visits of each node along [`Mcts::move_variation`]`(mv, max_len)`:
    /// the move's own visits, then those of each move of its line (KataGo's
    /// `pvVisits`); empty when `mv` is not a root move.
    pub fn move_variation_visits(&self, mv: Move, max_len: usize) -> Vec<u32> {
        let Some(k) = self.root_children().iter().position(|c| c.mv == mv) else { return Vec::new() };
        if max_len == 0 {
            return Vec::new();
        }
        let child = self.nodes[0].first_child as usize + k;
        let mut visits = vec![self.nodes[child].visits];
        visits.extend(self.variation_nodes(child, max_len - 1).into_iter().map(|i| self.nodes[i].visits));
        visits
    }

    /// Sets the moves the search may expand from now on ([`MoveFilter`];
    /// `None`: every legal move). Nodes expanded before keep their children,
    /// so set it before the search's first [`Mcts::gather`].
    pub fn set_move_filter(&mut self, filter: Option<MoveFilter<G>>) {
        self.move_filter = filter;
    }

    /// The principal variation below node `start` (the root: 0).
    fn variation_from(&self, start: usize, max_len: usize) -> Vec<Move> {
        self.variation_nodes(start, max_len).into_iter().map(|i| self.nodes[i].mv).collect()
    }

    /// The nodes of [`Mcts::variation_from`]'s line, in order.
    fn variation_nodes(&self, start: usize, max_len: usize) -> Vec<usize> {
        let seed = self.tie_seed();
        let mut pv = Vec::new();
        let mut idx = start;
        while pv.len() < max_len {
            let n = &self.nodes[idx];
            if n.kind != NodeKind::Expanded || n.num_children == 0 {
                break;
            }
            let first = n.first_child as usize;
            let stats = |i: usize| {
                let c = &self.nodes[i];
                (c.visits, c.prior, c.q())
            };
            let mut best: Option<usize> = None;
            for i in first..first + n.num_children as usize {
                if self.nodes[i].visits == 0 {
                    continue;
                }
                best = match best {
                    None => Some(i),
                    Some(b) => match compare_stats(stats(i), stats(b)) {
                        Ordering::Greater => Some(i),
                        Ordering::Equal if tie_rank(seed, self.nodes[i].mv) < tie_rank(seed, self.nodes[b].mv) => {
                            Some(i)
                        }
                        _ => Some(b),
                    },
                };
            }
            // The solver: a proven win's line is its shortest one, as the move to play.
            if self.cfg.solver {
                let children = first..first + n.num_children as usize;
                if let Some(w) = children
                    .filter(|&i| self.nodes[i].exact().is_some_and(|e| e <= -1.0))
                    .min_by_key(|&i| (self.nodes[i].plies, tie_rank(seed, self.nodes[i].mv)))
                {
                    best = Some(w);
                }
            }
            if idx == 0 {
                // The first move is the move to play (a proven win, the longest resistance).
                if let Some(m) = self.best_move() {
                    best = Some(first + self.root_children().iter().position(|c| c.mv == m).unwrap_or(0));
                }
            }
            let Some(b) = best else { break };
            pv.push(b);
            idx = b;
        }
        pv
    }

    /// Sets [`MctsConfig::draw_penalty`] for the searches from now on (self-play
    /// draws one per game). Ignored, like the config's, with more than two
    /// value players. Values already backed up are kept.
    pub fn set_draw_penalty(&mut self, draw_penalty: f32) {
        if !self.many() {
            self.cfg.draw_penalty = draw_penalty.clamp(0.0, 0.5);
            self.set_draw_values(self.contempt_side);
        }
    }

    /// Sets the contempt of the searches from now on: a draw is worth
    /// `-contempt` (clamped to `0..=0.5`) to `side` and `+contempt` to the
    /// other ([`MctsConfig::contempt`]; self-play picks both per game).
    /// Ignored with more than two value players. Values already backed up
    /// are kept, so set it before the first search of a game.
    pub fn set_contempt(&mut self, side: Side, contempt: f32) {
        if !self.many() {
            self.cfg.contempt = contempt.clamp(0.0, 0.5);
            self.set_draw_values(side);
        }
    }

    /// Sets [`MctsConfig::draw_aversion`] for the searches from now on
    /// (clamped to `0..=0.5`; self-play draws one per game). Ignored with
    /// more than two value players. Values already backed up are kept, so set
    /// it before the first search of a game.
    pub fn set_draw_aversion(&mut self, draw_aversion: f32) {
        if !self.many() {
            self.cfg.draw_aversion = draw_aversion.clamp(0.0, 0.5);
        }
    }

    /// The contempt side and its contempt ([`Mcts::set_contempt`]): the side
    /// for which a draw is worth `-contempt`.
    pub fn contempt(&self) -> (Side, f32) {
        (self.contempt_side, self.cfg.contempt)
    }

    fn set_draw_values(&mut self, side: Side) {
        self.contempt_side = side;
        let (dp, c) = if self.many() { (0.0, 0.0) } else { (self.cfg.draw_penalty, self.cfg.contempt) };
        for s in Side::ALL {
            self.draw_values[s as usize] = dp + if s == side { -c } else { c };
        }
    }

    /// The value of a drawn finished game, or of a leaf's draw probability,
    /// for the side to move of `pos` (in the search's units).
    #[inline]
    pub(super) fn draw_value(&self, pos: &G) -> f32 {
        let stm = pos.side_to_move();
        if self.cfg.contempt_mode == ContemptMode::Material && self.cfg.contempt > 0.0 && !self.many() {
            let c = match pos.material_leader() {
                Some(s) if s == stm => -self.cfg.contempt,
                Some(_) => self.cfg.contempt,
                None => 0.0,
            };
            return self.cfg.draw_penalty + c;
        }
        self.draw_values[stm as usize]
    }

    /// Sets the seed of the tree's tie-breaks (0 until set; kept by
    /// [`Mcts::reset`] and [`Mcts::advance`]). Self-play gives each game its
    /// own seed from the game's generator; evaluation and the engine keep 0.
    pub fn set_tie_seed(&mut self, seed: u64) {
        self.tie_seed = seed;
    }

    /// The seed of the tie-breaks of a search from the current root
    /// ([`tie_rank`]): between children with exactly equal PUCT scores in
    /// selection, and between root moves tied on visits, prior and Q for the
    /// move to play. It mixes the seed of [`Mcts::set_tie_seed`] with the root
    /// position's Zobrist hash, so that with one fixed seed (evaluation, the
    /// engine) each position still gets its own order, and the same position
    /// always gets the same answer.
    pub fn tie_seed(&self) -> u64 {
        mix64(self.tie_seed) ^ self.root_state.hash()
    }

    /// The move to play without sampling, [`SearchResult::best_move`]: most
    /// visits, then prior, then Q, then [`tie_rank`] under [`Mcts::tie_seed`].
    /// `None` before the root is expanded.
    pub fn best_move(&self) -> Option<Move> {
        self.result().best_move()
    }

    /// Number of nodes in the arena.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// Discards the tree and starts from `root`.
    pub fn reset(&mut self, root: G) {
        self.nodes.clear();
        self.players = root.num_players().clamp(1, MAX_PLAYERS);
        self.root_state = root;
        // A new position: the contempt side is its side to move (the engine's).
        self.set_draw_values(self.root_state.side_to_move());
        let r = self.root_node();
        self.nodes.push(r);
        self.num_pending = 0;
        self.noise_pending = false;
        self.root_noised = false;
        self.gumbel.pending = false;
        self.gumbel.ready = false;
        self.forced = false;
        self.eager_root_proofs = false;
        self.root_line_checked = false;
        self.scored = false;
        self.score_center = None;
        self.root_spread.clear();
        self.root_raw_value = None;
    }

    /// Adds the plain value `x` backed up through node `i` to the root's
    /// spread statistics ([`Mcts::root_value_stddev`]) when `i` is a child
    /// of the root.
    #[inline]
    pub(super) fn note_root_value(&mut self, i: u32, x: f32) {
        let r = &self.nodes[0];
        let k = i.wrapping_sub(r.first_child) as usize;
        if i == 0 || r.kind != NodeKind::Expanded || k >= r.num_children as usize {
            return;
        }
        if self.root_spread.len() < r.num_children as usize {
            self.root_spread.resize(r.num_children as usize, [0.0; 3]);
        }
        let s = &mut self.root_spread[k];
        let x = f64::from(x);
        s[0] += 1.0;
        s[1] += x;
        s[2] += x * x;
    }

    /// The standard deviation of the plain values (for the root's side to
    /// move, without the score utility, in `[-1, 1]` units) backed up
    /// through each root child, parallel to [`Mcts::root_children`]: the
    /// population deviation `sqrt(E[x^2] - E[x]^2)` of the values counted
    /// since the tree was made, reset or advanced (a reused subtree's older
    /// visits are not counted), `None` before two were counted. In a game
    /// of more than two value players, the values of the root's mover.
    pub fn root_value_stddev(&self) -> Vec<Option<f32>> {
        (0..self.root_children().len())
            .map(|k| {
                let [n, sum, sq] = self.root_spread.get(k).copied().unwrap_or([0.0; 3]);
                (n >= 2.0).then(|| {
                    let mean = sum / n;
                    ((sq / n - mean * mean).max(0.0)).sqrt() as f32
                })
            })
            .collect()
    }

    /// The evaluator's own value of the root for its side to move, in
    /// `[-1, 1]`, before any search (the network's value head; 0 for the
    /// uniform evaluator); `None` before the root is evaluated, for a root
    /// reached by [`Mcts::advance`], and for a finished root.
    pub fn root_raw_value(&self) -> Option<f32> {
        self.root_raw_value
    }

    /// Starts a search of `simulations` simulations for the move at the root.
    /// With [`RootSelection::Puct`] and `noise`, Dirichlet noise is mixed into
    /// the root priors (now, or when the root gets expanded); with
    /// [`RootSelection::Gumbel`], `noise` means Gumbel noise in the choice of
    /// candidates, and `simulations` sets the halving schedule. Forced
    /// playouts ([`MctsConfig::forced_playouts_k`]) act in PUCT searches with
    /// `noise` only.
    pub fn begin_search<R: Rng>(&mut self, noise: bool, simulations: u32, rng: &mut R) {
        // The dynamic score utility's centre: the root's score lead now (a
        // reused subtree), else the root's own evaluation when it comes.
        self.score_center = if self.scored { self.root_score_lead() } else { None };
        self.eager_root_proofs = false;
        self.root_line_checked = false;
        self.noise_pending = false;
        self.gumbel.ready = false;
        self.gumbel.pending = false;
        self.forced = noise && self.cfg.forced_playouts_k > 0.0 && self.cfg.root_selection == RootSelection::Puct;
        if self.cfg.root_selection == RootSelection::Gumbel {
            self.gumbel.noise = noise;
            self.gumbel.budget = simulations.max(1);
            if self.nodes[0].kind == NodeKind::Expanded {
                self.init_gumbel(rng);
            } else {
                self.gumbel.pending = true;
            }
        } else if noise {
            if self.nodes[0].kind == NodeKind::Expanded {
                self.apply_root_noise(rng);
            } else {
                self.noise_pending = true;
            }
        }
    }

    /// For the search begun last ([`Mcts::begin_search`] resets it): the
    /// trap proofs of the root's moves ([`MctsConfig::trap_plies`]) run for
    /// every move before the first simulation, instead of for each move just
    /// before its first visit. The visits are the same either way (a move
    /// found lost as the search reaches it makes the search choose again,
    /// the choice it would have made had every move been proven first), and
    /// a move the search never visits is never played
    /// ([`Mcts::choose_move`] picks among visited moves); what the eager
    /// proofs add is the proven value of the moves left unvisited, for the
    /// policy targets that give unvisited moves weight
    /// ([`Mcts::improved_policy`], Gumbel MuZero's completed Q) and for
    /// [`Mcts::result`]'s `exact`. Self-play asks it of its full searches;
    /// at 64 simulations of Jetan, where ~80 moves share the visits, the
    /// eager proofs cost about a third of the search (`BENCHMARKS.md`,
    /// "Trap proofs that cost little").
    pub fn prove_root_moves_eagerly(&mut self) {
        self.eager_root_proofs = true;
    }

    /// Completed visits of the root's children (simulations since the root was expanded,
    /// including those reused from earlier searches).
    pub fn child_visits(&self) -> u32 {
        self.root_children().iter().map(|c| c.visits).sum()
    }

    /// True when the root's game is over (nothing to search).
    pub fn root_is_terminal(&self) -> bool {
        self.root_state.outcome().is_some()
    }

    /// Positions (and their legal moves) waiting for evaluation, in queue order.
    pub fn pending_leaves(&self) -> impl Iterator<Item = (&G, &[Move])> {
        self.pending[..self.num_pending].iter().map(|p| (&p.state, &p.moves[..]))
    }

    /// Pending leaf `k` (`k < num_pending()`): its position and legal moves,
    /// as the `k`-th item of [`Mcts::pending_leaves`].
    ///
    /// # Panics
    /// If `k` is not below [`Mcts::num_pending`].
    pub fn pending_leaf(&self, k: usize) -> (&G, &[Move]) {
        assert!(k < self.num_pending, "pending leaf {k} of {}", self.num_pending);
        let p = &self.pending[k];
        (&p.state, &p.moves[..])
    }

    /// Starts loading the nodes on the pending leaves' paths into the cache:
    /// a hint, nothing changes. A driver that applies the evaluations on
    /// another core than the one that selected the leaves, or after other
    /// trees' work, calls it before decoding them, so that the back-up of
    /// [`Mcts::apply_evaluations`] finds its nodes loaded (its first load of
    /// each was the largest extra cost of the overlapped self-play driver;
    /// `BENCHMARKS.md`, "Prefetching the back-up's paths").
    pub fn prefetch_pending(&self) {
        #[cfg(target_arch = "x86_64")]
        for p in &self.pending[..self.num_pending] {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            for &i in &p.path {
                // SAFETY: a prefetch never faults and reads nothing the
                // program sees; the address is computed without dereferencing.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(self.nodes.as_ptr().wrapping_add(i as usize).cast()) };
            }
        }
    }

    /// Number of leaves waiting for evaluation.
    pub fn num_pending(&self) -> usize {
        self.num_pending
    }

    /// Root statistics now.
    pub fn result(&self) -> SearchResult {
        let children = self.root_children();
        let visits = children.iter().map(|c| (c.mv, c.visits)).collect();
        let priors = children.iter().map(|c| c.prior).collect();
        let q = children.iter().map(Node::value_q).collect();
        let root_value = self.value_for_player_to_move(0) - self.score_utility_for_player_to_move(0);
        let scored = self.scored;
        let scores = children.iter().map(|c| if scored { c.score_lead() } else { None }).collect();
        let solver = self.cfg.solver;
        let exact = children.iter().map(|c| if solver { c.exact().map(|e| game_value(-e)) } else { None }).collect();
        let exact_plies = children
            .iter()
            .map(|c| if solver && c.exact().is_some() { c.plies.saturating_add(1) } else { 0 })
            .collect();
        SearchResult {
            visits,
            priors,
            q,
            root_value,
            tie_seed: self.tie_seed(),
            exact,
            exact_plies,
            chosen: self.gumbel_choice(),
            root_score: self.root_score_lead(),
            scores,
        }
    }

    /// The root's score lead: the expected final point difference for the
    /// root's side to move, in points (KataGo's `scoreLead`), the mean over
    /// the root's visits of the backed-up scores ([`Evaluation::score`](crate::Evaluation::score),
    /// or the final point difference of a finished game). `None` when the
    /// evaluator gives no score (no score head, a game without points) or
    /// before the root is evaluated.
    pub fn root_score_lead(&self) -> Option<f32> {
        let root = &self.nodes[0];
        (self.scored && root.visits > 0).then(|| -root.score_sum / root.visits as f32)
    }

    /// The score utility of an expected final point difference `score`
    /// (points) for `side`, the side to move of the position it is
    /// expected from: `w_static f(score / scale) + w_dynamic f((score -
    /// c) / scale)`, `f(x) = (2 / pi) atan(x)`, with `c` the centre
    /// ([`Mcts::score_center`]) seen from `side` (KataGo's static and dynamic
    /// score utility, Wu 2019, §4.2; [`MctsConfig::static_score_utility`]).
    /// Odd in `score` and the side, so the search stays zero-sum.
    pub(super) fn score_utility_of(&self, score: f32, side: Side) -> f32 {
        let f = |x: f32| std::f32::consts::FRAC_2_PI * x.atan();
        let scale = self.cfg.score_utility_scale;
        let mut u = self.cfg.static_score_utility * f(score / scale);
        if let (Some(c), true) = (self.score_center, self.cfg.dynamic_score_utility > 0.0) {
            let c = if side == self.root_state.side_to_move() { c } else { -c };
            u += self.cfg.dynamic_score_utility * f((score - c) / scale);
        }
        u
    }

    /// The centre of the dynamic score utility in the current search: the
    /// root's expected final point difference for its side to move when the
    /// search began; `None` until the root has been evaluated with a score.
    pub fn score_center(&self) -> Option<f32> {
        self.score_center
    }

    /// Picks the move to play: with `temperature <= 0.001`, with Gumbel root
    /// search (whose Gumbel sample already explores), or when the solver has
    /// proven a winning move, [`Mcts::best_move`] (`rng` is not used); else a
    /// move sampled with probability proportional to `visits^(1/temperature)`,
    /// proven losses left out while another visited move exists, proven draws
    /// while an unproven visited move has a Q at least the draw's. `None`
    /// when the root has no visited children.
    pub fn choose_move<R: Rng>(&self, temperature: f32, rng: &mut R) -> Option<Move> {
        let children = self.root_children();
        if children.iter().all(|c| c.visits == 0) {
            return None;
        }
        if temperature <= 1e-3 || self.gumbel.ready {
            return self.best_move();
        }
        let solver = self.cfg.solver;
        if solver && children.iter().any(|c| c.exact().is_some_and(|e| -e >= 1.0)) {
            return self.best_move();
        }
        // The solver: proven losses are not sampled while another visited move
        // exists, and proven draws (a move that ends the game in a draw, or is
        // proven to) not while an unproven visited move looks at least as good:
        // sampling explores what the search is unsure of, and a draw ends the
        // game with nothing to learn (Jetan's early Chief-capture draws, spec §8.2).
        let lost = |c: &Node| solver && c.exact().is_some_and(|e| -e <= -1.0);
        let drawn = |c: &Node| solver && c.exact().is_some_and(|e| e.abs() < 1.0);
        let for_chooser = |e: f32| self.terminal_for_chooser(e);
        let best_open = children
            .iter()
            .filter(|c| c.visits > 0 && !(solver && c.exact().is_some()))
            .filter_map(Node::q)
            .fold(f32::NEG_INFINITY, f32::max);
        let avoid = children.iter().any(|c| c.visits > 0 && !lost(c));
        if solver && children.iter().all(lost) {
            return self.best_move(); // every move loses: the longest resistance
        }
        let weight = |c: &Node| {
            if avoid && lost(c) || drawn(c) && c.exact().is_some_and(|e| best_open >= for_chooser(e)) {
                0
            } else {
                c.visits
            }
        };
        let max = children.iter().map(weight).max().unwrap_or(1).max(1) as f64;
        let inv_t = 1.0 / temperature as f64;
        let total: f64 = children.iter().map(|c| (weight(c) as f64 / max).powf(inv_t)).sum();
        let mut x = rng.gen::<f64>() * total;
        for c in children {
            let w = (weight(c) as f64 / max).powf(inv_t);
            if x < w && weight(c) > 0 {
                return Some(c.mv);
            }
            x -= w;
        }
        children.iter().rev().find(|c| weight(c) > 0).map(|c| c.mv)
    }

    /// Runs playouts with `evaluator` (batches of `leaves_per_batch` leaves)
    /// until the root's children hold `simulations` more visits, and returns
    /// the root statistics. (The root's own first evaluation is not counted.)
    ///
    /// # Errors
    /// The evaluator's error.
    ///
    /// # Example
    /// A search of 400 visits without a network ([`UniformEvaluator`](crate::UniformEvaluator):
    /// equal priors, value 0) finds the capture that wins Martian Chess's tie-break
    /// (the rules' example MC12).
    /// ```
    /// use martian_rules::martian::{MartianChess, MartianRules};
    /// use martian_rules::GameState;
    /// use martian_search::{Mcts, MctsConfig, UniformEvaluator};
    /// use rand::rngs::StdRng;
    /// use rand::SeedableRng;
    ///
    /// // South to move, 5-6 down: a4xb5 makes it 6-6, and the last mover wins the tie.
    /// let pos = MartianChess::from_position("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0", &MartianRules::default())?;
    /// let mut tree = Mcts::new(MctsConfig::default(), pos.clone());
    /// let result = tree.search(&mut UniformEvaluator, 400, false, &mut StdRng::seed_from_u64(3))?;
    ///
    /// // The root's children hold the 400 visits, one entry per legal move.
    /// assert_eq!(result.visits.iter().map(|&(_, n)| n).sum::<u32>(), 400);
    /// assert_eq!(tree.child_visits(), 400);
    /// assert_eq!(result.visits.len(), tree.root_children().len());
    /// let best = result.best_move().expect("the root has legal moves");
    /// assert_eq!(pos.move_to_string(best), "a4b5");
    /// assert_eq!(tree.best_move(), Some(best));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn search<E: Evaluator<G>, R: Rng>(
        &mut self,
        evaluator: &mut E,
        simulations: u32,
        noise: bool,
        rng: &mut R,
    ) -> Result<SearchResult, EvalError> {
        self.begin_search(noise, simulations, rng);
        self.search_more(evaluator, simulations, rng)
    }

    /// Continues the search begun by [`Mcts::begin_search`] with
    /// `simulations` more simulations (for searches limited by time, which
    /// run in slices), and returns the root statistics.
    ///
    /// # Errors
    /// The evaluator's error.
    pub fn search_more<E: Evaluator<G>, R: Rng>(
        &mut self,
        evaluator: &mut E,
        simulations: u32,
        rng: &mut R,
    ) -> Result<SearchResult, EvalError> {
        if self.root_is_terminal() {
            return Ok(self.result());
        }
        let target = self.child_visits() + simulations;
        let mut evals = Vec::new();
        let per_batch = self.cfg.leaves_per_batch.max(1) as usize;
        loop {
            let done = self.child_visits();
            if done >= target {
                break;
            }
            let want = per_batch.min((target - done) as usize);
            self.gather(want, rng);
            if self.num_pending > 0 {
                let (states, moves): (Vec<&G>, Vec<&[Move]>) = self.pending_leaves().unzip();
                evaluator.evaluate(&states, &moves, &mut evals)?;
                self.apply_evaluations(&evals, rng);
            }
        }
        Ok(self.result())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::Evaluation;
    use martian_rules::martian::{MartianChess, MartianRules};

    /// `prefetch_pending` is a hint: a search that calls it before every
    /// back-up (as the overlapped self-play driver does) builds the same
    /// tree as one that never does, node for node.
    #[test]
    fn prefetching_the_pending_paths_changes_nothing() {
        use rand::SeedableRng;
        let start = MartianChess::new_game(&MartianRules::default()).unwrap();
        let search = |prefetch: bool| {
            let mut t = Mcts::new(MctsConfig::default(), start);
            let mut rng = rand::rngs::StdRng::seed_from_u64(7);
            t.prefetch_pending(); // nothing pending yet
            for step in 0..40 {
                t.gather(4, &mut rng);
                let evals: Vec<Evaluation> = (0..t.num_pending())
                    .map(|k| {
                        let n = t.pending_leaf(k).1.len();
                        // Unequal priors and values, so that a changed tree would show.
                        let priors: Vec<f32> = (0..n).map(|i| (i + 1) as f32).collect();
                        let sum: f32 = priors.iter().sum();
                        Evaluation {
                            priors: priors.iter().map(|p| p / sum).collect(),
                            value: ((step * 7 + k * 3) % 11) as f32 / 10.0 - 0.5,
                            ..Evaluation::default()
                        }
                    })
                    .collect();
                if prefetch {
                    t.prefetch_pending();
                }
                t.apply_evaluations(&evals, &mut rng);
            }
            t.nodes
                .iter()
                .map(|n| (n.mv, n.visits, n.value_sum.to_bits(), n.first_child, n.num_children))
                .collect::<Vec<_>>()
        };
        let plain = search(false);
        assert!(plain.len() > 40, "the searches expanded nodes");
        assert_eq!(search(true), plain);
    }
}
