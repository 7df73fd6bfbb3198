//! The search tree, selection, expansion and back-up.

use std::cmp::Ordering;

use martian_rules::{mix64, GameState, Move, MAX_PLAYERS};
use rand::Rng;
use rand_distr::{Distribution, Gamma};

use super::prove::Prover;
use crate::config::{MctsConfig, RootSelection};
use crate::evaluator::{EvalError, Evaluation, Evaluator};
use crate::puct::{c_puct, puct_score};

/// State of a node's expansion.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// Not evaluated yet.
    Unexpanded,
    /// Selected for evaluation; the result is pending.
    Pending,
    /// Children created.
    Expanded,
    /// Game over here; the exact value for the side to move at this node.
    /// In games of more than two value players (max^n, see [`Mcts`]): the
    /// exact value for the player who moved into the node ([`Node::mover`]),
    /// the one its parent's chooser maximises.
    Terminal(f32),
}

/// How [`Mcts::improved_policy`] maps completed Q values before scaling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QRescale {
    /// Min-max over the root's children (Danihelka et al. 2022; mctx). Default.
    #[default]
    MinMax,
    /// The fixed map `(q + 1) / 2` from `[-1, 1]` to `[0, 1]`.
    Fixed,
}

/// One node of the tree (and the edge leading to it).
#[derive(Copy, Clone, Debug)]
pub struct Node {
    /// The move on the edge from the parent (meaningless for the root).
    pub mv: Move,
    /// The value player who chose that edge (`GameState::player_to_move` at
    /// the parent); for the root, the player before the root's mover in
    /// index order. Read only in games of more than two value players.
    pub mover: u8,
    /// Prior probability of that edge, in `[0, 1]`.
    pub prior: f32,
    /// Completed visits (simulations that passed through the node).
    pub visits: u32,
    /// Simulations through the node waiting for an evaluation (virtual loss).
    pub in_flight: u32,
    /// Sum of backed-up values, each in `[-1, 1]`, for the side (the value
    /// player, [`Node::mover`]) that chose the edge into this node.
    pub value_sum: f32,
    /// Index of the first child in the arena (valid when expanded).
    pub first_child: u32,
    /// Number of children (= legal moves when expanded).
    pub num_children: u32,
    /// Expansion state.
    pub kind: NodeKind,
    /// The proven game value of the node for its side to move (+1, 0 or -1):
    /// with [`MctsConfig::solver`], set on an expanded node once its children
    /// prove it; with [`MctsConfig::leaf_threat_check`], set to +1 on a child
    /// whose side to move can win at once, before it is visited; with
    /// [`MctsConfig::trap_plies`], set by the shallow proofs.
    pub solved: Option<f32>,
    /// Plies from this node's position to the end of the game under the
    /// proof of its exact value ([`Node::exact`]): 0 for a finished game; a
    /// proven win counts its shortest forced line, a proven loss its longest
    /// resistance (the solver keeps both as children are proven). Meaningless
    /// while the value is unknown.
    pub plies: u16,
    /// The value the side to move here can secure at once by a move that
    /// ends the game without a win (a draw: Jetan's Chief taken by another
    /// piece, a repetition; in the search's units, so with
    /// [`MctsConfig::draw_penalty`] `-draw_penalty`), else -1: a bound, so
    /// the chooser of this node never counts it above `-floor` (score-bounded
    /// MCTS, Cazenave & Saffidine 2010). Set at expansion.
    pub floor: f32,
    /// The trap proofs of [`MctsConfig::trap_plies`] have been run on this
    /// node's children (at the root before the search, elsewhere once the
    /// node has [`MctsConfig::trap_visits`] visits).
    pub children_checked: bool,
}

impl Node {
    fn new(mv: Move, prior: f32) -> Node {
        Node {
            mv,
            mover: 0,
            prior,
            visits: 0,
            in_flight: 0,
            value_sum: 0.0,
            first_child: 0,
            num_children: 0,
            kind: NodeKind::Unexpanded,
            solved: None,
            plies: 0,
            floor: -1.0,
            children_checked: false,
        }
    }

    /// The exact value of the node for its side to move: a terminal node's
    /// value, or a proven one ([`Node::solved`]); `None` when unknown. (With
    /// more than two value players, the terminal value for [`Node::mover`].)
    #[inline]
    pub fn exact(&self) -> Option<f32> {
        match self.kind {
            NodeKind::Terminal(v) => Some(v),
            _ => self.solved,
        }
    }

    /// Mean value for the side that chose the edge, or `None` if unvisited;
    /// never above the bound the side to move here holds ([`Node::floor`]).
    #[inline]
    pub fn q(&self) -> Option<f32> {
        (self.visits > 0).then(|| (self.value_sum / self.visits as f32).min(-self.floor))
    }
}

/// The game-theoretic value (+1, 0 or -1) of an exact value in the search's
/// units: a draw valued with [`MctsConfig::draw_penalty`] is still a draw.
#[inline]
pub fn game_value(e: f32) -> f32 {
    if e >= 1.0 {
        1.0
    } else if e <= -1.0 {
        -1.0
    } else {
        0.0
    }
}

/// What one selection produced.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Gather {
    /// A leaf was queued for evaluation.
    Pending,
    /// A terminal node was reached and backed up at once.
    Terminal,
    /// The selection reached a leaf already pending; nothing was queued.
    Collision,
}

/// Root statistics of a finished search.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchResult {
    /// `(move, visit count)` for every legal root move, in legal-move order.
    pub visits: Vec<(Move, u32)>,
    /// The prior of each root move as the search used it (after root noise, if
    /// any), parallel to `visits`.
    pub priors: Vec<f32>,
    /// The mean value of each root move for the root's side to move, `None`
    /// when unvisited; parallel to `visits`.
    pub q: Vec<Option<f32>>,
    /// Mean value of the root for its side to move, in `[-1, 1]`.
    pub root_value: f32,
    /// The search's tie-break seed ([`Mcts::tie_seed`]), which
    /// [`SearchResult::best_move`] uses for moves tied on visits, prior and Q.
    pub tie_seed: u64,
    /// With [`MctsConfig::solver`]: the proven value of each root move for the
    /// root's side to move (+1 win, 0 draw, -1 loss), `None` when unproven;
    /// parallel to `visits` (all `None` without the solver).
    pub exact: Vec<Option<f32>>,
    /// With the solver: plies from the root to the end of the game under
    /// each proven root move (the move itself included: 1 for a move that
    /// wins at once), parallel to `visits`; 0 where `exact` is `None`.
    /// [`SearchResult::best_move`] plays the shortest win and, when every
    /// move is lost, the longest resistance.
    pub exact_plies: Vec<u16>,
    /// With [`RootSelection::Gumbel`]: the move sequential halving chose
    /// (the surviving candidate with the most visits and the largest
    /// `g + log prior + sigma(completed Q)`).
    pub chosen: Option<Move>,
}

/// The tie-break rank of `mv` under `seed`: among moves tied on everything
/// else, the one with the smallest rank is chosen (in selection and for the
/// move to play). A pseudo-random order of the moves that depends on the
/// seed and never on the order in which the move generator lists them.
#[inline]
pub fn tie_rank(seed: u64, mv: Move) -> u64 {
    // `mix64` is a bijection, so distinct moves get distinct ranks under one seed.
    mix64(seed ^ (u64::from(mv.from) << 8 | u64::from(mv.to)).wrapping_mul(0xD6E8_FEB8_6659_FD93))
}

/// Orders candidate moves for "best": more visits, then a higher prior, then
/// a higher Q (unvisited = lowest). `Equal` means fully tied.
fn compare_stats(a: (u32, f32, Option<f32>), b: (u32, f32, Option<f32>)) -> Ordering {
    let q = |x: Option<f32>| x.unwrap_or(f32::NEG_INFINITY);
    a.0.cmp(&b.0)
        .then(a.1.partial_cmp(&b.1).unwrap_or(Ordering::Equal))
        .then(q(a.2).partial_cmp(&q(b.2)).unwrap_or(Ordering::Equal))
}

impl SearchResult {
    fn stats(&self, i: usize) -> (u32, f32, Option<f32>) {
        (self.visits[i].1, self.priors.get(i).copied().unwrap_or(0.0), self.q.get(i).copied().flatten())
    }

    /// The moves tied for best (most visits, then highest prior, then highest
    /// Q), in legal-move order; several only when all three are equal. Empty
    /// when there are no root moves.
    pub fn tied_best(&self) -> Vec<Move> {
        let Some(best) = (0..self.visits.len()).max_by(|&a, &b| compare_stats(self.stats(a), self.stats(b))) else {
            return Vec::new();
        };
        let top = self.stats(best);
        (0..self.visits.len())
            .filter(|&i| compare_stats(self.stats(i), top) == Ordering::Equal)
            .map(|i| self.visits[i].0)
            .collect()
    }

    fn exact_at(&self, i: usize) -> Option<f32> {
        self.exact.get(i).copied().flatten()
    }

    /// The move to play without sampling: the shortest proven win if there
    /// is one (the solver; lc0 and alpha-beta do the same); else the Gumbel
    /// root search's choice ([`SearchResult::chosen`]); else the most visited
    /// move that is not a proven loss; when every move is a proven loss, the
    /// longest resistance ([`SearchResult::exact_plies`]). Ties go to the
    /// higher prior, then to the higher Q, and among moves tied on all three
    /// ([`SearchResult::tied_best`]) to the smallest [`tie_rank`] under
    /// [`SearchResult::tie_seed`]. So the same search gives the same move,
    /// and the choice among fully tied moves does not follow legal-move
    /// order. `None` when there are no root moves.
    pub fn best_move(&self) -> Option<Move> {
        let n = self.visits.len();
        let plies = |i: usize| self.exact_plies.get(i).copied().unwrap_or(0);
        let won = |i: usize| self.exact_at(i).is_some_and(|v| v >= 1.0);
        if let Some(short) = (0..n).filter(|&i| won(i)).map(plies).min() {
            return self.best_among(|i| won(i) && plies(i) == short);
        }
        if let Some(m) = self.chosen {
            return Some(m);
        }
        let not_lost = |i: usize| !self.exact_at(i).is_some_and(|v| v <= -1.0);
        if (0..n).any(not_lost) {
            self.best_among(not_lost)
        } else {
            let long = (0..n).map(plies).max().unwrap_or(0);
            self.best_among(|i| plies(i) == long)
        }
    }

    /// The best of the moves `keep` admits, by visits, prior, Q, then [`tie_rank`].
    fn best_among(&self, keep: impl Fn(usize) -> bool) -> Option<Move> {
        let seed = self.tie_seed;
        let mut best: Option<usize> = None;
        for i in (0..self.visits.len()).filter(|&i| keep(i)) {
            best = match best {
                None => Some(i),
                Some(b) => match compare_stats(self.stats(i), self.stats(b)) {
                    Ordering::Greater => Some(i),
                    Ordering::Equal if tie_rank(seed, self.visits[i].0) < tie_rank(seed, self.visits[b].0) => Some(i),
                    _ => Some(b),
                },
            };
        }
        best.map(|i| self.visits[i].0)
    }
}

struct PendingLeaf<G> {
    state: G,
    moves: Vec<Move>,
    path: Vec<u32>,
    len: usize,
}

/// A PUCT search tree over game `G`. See the module docs for the protocol.
///
/// # Two or more value players
/// Each node's scalar ([`Node::value_sum`]) is the value for the player who
/// moved into it ([`Node::mover`]). A back-up carries the leaf's value for
/// every player and adds at each node on the path its mover's component. In a
/// two-player zero-sum game that is the familiar negation from ply to ply,
/// and the code runs exactly that. With more value players
/// (`GameState::num_players` > 2, four-player free-for-all) it is max^n
/// (Luckhardt and Irani 1986; the n-player MCTS of OpenSpiel): the leaf's
/// vector comes from [`Evaluation::player_values`] or, at a finished game,
/// `GameState::player_values`, and every chooser maximises its own component.
/// The value of a node for the player to move there (the root's value, the
/// first-play urgency) is then the visit-weighted mean of its children's
/// Q (0 before any is visited). MCTS-solver proofs and the leaf threat check
/// assume two players and are refused there
/// ([`MctsConfig::validate_for_players`]).
pub struct Mcts<G: GameState> {
    cfg: MctsConfig,
    /// Value players of the game (`GameState::num_players` of the root).
    players: usize,
    nodes: Vec<Node>,
    spare: Vec<Node>,
    root_state: G,
    pending: Vec<PendingLeaf<G>>,
    num_pending: usize,
    path: Vec<u32>,
    scratch: G,
    noise_pending: bool,
    queue: Vec<(u32, u32)>,
    noise: Vec<f32>,
    /// Root priors before noise was mixed in (valid while `root_noised`).
    raw_priors: Vec<f32>,
    root_noised: bool,
    /// The seed set with [`Mcts::set_tie_seed`] (0 by default).
    tie_seed: u64,
    /// Gumbel root search state of the current search (see [`RootSelection::Gumbel`]).
    gumbel: GumbelRoot,
    /// Forced playouts ([`MctsConfig::forced_playouts_k`]) act in the current
    /// search: it began with root noise, PUCT root selection and k > 0.
    forced: bool,
    /// Scratch of the shallow proofs ([`MctsConfig::trap_plies`]).
    prover: Prover<G>,
    /// A child's position for [`Mcts::check_children`].
    probe: G,
}

/// State of one Gumbel root search: the candidates and the halving schedule.
#[derive(Default)]
struct GumbelRoot {
    /// Set by [`Mcts::begin_search`]; the state is built when the root is expanded.
    pending: bool,
    /// The state below is valid for the current search.
    ready: bool,
    /// Sample Gumbel noise (self-play) rather than use g = 0 (play).
    noise: bool,
    /// Simulations of the search (`n` of the paper).
    budget: u32,
    /// `g(a)` per root child (0 without noise).
    g: Vec<f32>,
    /// Root children's visits when the search began (tree reuse).
    start_visits: Vec<u32>,
    /// Root child offsets still in the halving, best first at the last halving.
    considered: Vec<u32>,
    /// Rounds of halving: `ceil(log2 m)`, at least 1.
    phases: u32,
    /// Visits (since the search began) each candidate gets by the end of the current round.
    phase_target: u32,
    /// Scratch for scores.
    scores: Vec<f32>,
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
        }
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
            prover,
            probe,
        };
        let r = t.root_node();
        t.nodes.push(r);
        t
    }

    /// A fresh root node for `self.root_state` (its [`Node::mover`] is the
    /// player before the root's mover).
    fn root_node(&self) -> Node {
        let n = self.players;
        Node { mover: ((self.root_state.player_to_move() + n - 1) % n) as u8, ..Node::new(Move::new(0, 0), 1.0) }
    }

    /// Whether the game has more than two value players (max^n back-up).
    #[inline]
    fn many(&self) -> bool {
        self.players > 2
    }

    /// The value of node `idx` for the player to move there: in a two-player
    /// game minus its own mean (0 when unvisited); with more players the
    /// visit-weighted mean of its children's Q (0 before any child is visited).
    fn value_for_player_to_move(&self, idx: usize) -> f32 {
        let node = &self.nodes[idx];
        if !self.many() {
            return if node.visits > 0 { -node.value_sum / node.visits as f32 } else { 0.0 };
        }
        if node.kind != NodeKind::Expanded {
            return 0.0;
        }
        let first = node.first_child as usize;
        let (mut sum, mut n) = (0.0f32, 0u32);
        for c in &self.nodes[first..first + node.num_children as usize] {
            sum += c.value_sum;
            n += c.visits;
        }
        if n > 0 {
            sum / n as f32
        } else {
            0.0
        }
    }

    /// The exact value of child `c` of a terminal game end for the player who
    /// chose it: `-v` of its `Terminal(v)` in a two-player game, `v` itself
    /// with more players (see [`NodeKind::Terminal`]).
    #[inline]
    fn terminal_for_chooser(&self, v: f32) -> f32 {
        if self.many() {
            v
        } else {
            -v
        }
    }

    /// The value of a finished game for its side to move, in the search's
    /// units: +1 / -1 for a win / loss; a draw is `+draw_penalty`, so the
    /// side whose move ended the game in a draw gets `-draw_penalty`
    /// ([`MctsConfig::draw_penalty`]).
    #[inline]
    fn terminal_value(&self, o: martian_rules::Outcome, stm: martian_rules::Side) -> f32 {
        match o.winner {
            None => self.cfg.draw_penalty,
            Some(_) => o.value_for(stm),
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
        let seed = self.tie_seed();
        let mut pv = Vec::new();
        let mut idx = 0usize;
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
            pv.push(self.nodes[b].mv);
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
        }
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
        let r = self.root_node();
        self.nodes.push(r);
        self.num_pending = 0;
        self.noise_pending = false;
        self.root_noised = false;
        self.gumbel.pending = false;
        self.gumbel.ready = false;
        self.forced = false;
    }

    /// Starts a search of `simulations` simulations for the move at the root.
    /// With [`RootSelection::Puct`] and `noise`, Dirichlet noise is mixed into
    /// the root priors (now, or when the root gets expanded); with
    /// [`RootSelection::Gumbel`], `noise` means Gumbel noise in the choice of
    /// candidates, and `simulations` sets the halving schedule. Forced
    /// playouts ([`MctsConfig::forced_playouts_k`]) act in PUCT searches with
    /// `noise` only.
    pub fn begin_search<R: Rng>(&mut self, noise: bool, simulations: u32, rng: &mut R) {
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

    /// Runs up to `max_leaves` selections, queueing leaves for evaluation.
    /// Stops early at a collision. Returns how many leaves were queued.
    pub fn gather<R: Rng>(&mut self, max_leaves: usize, rng: &mut R) -> usize {
        let mut queued = 0;
        for _ in 0..max_leaves {
            match self.select(rng) {
                Gather::Pending => queued += 1,
                Gather::Terminal => {}
                Gather::Collision => break,
            }
        }
        queued
    }

    /// One selection from the root to a leaf.
    pub fn select<R: Rng>(&mut self, rng: &mut R) -> Gather {
        self.path.clear();
        self.scratch.clone_from(&self.root_state);
        let mut idx = 0u32;
        loop {
            self.path.push(idx);
            let node = self.nodes[idx as usize];
            match node.kind {
                NodeKind::Expanded if node.num_children > 0 => {
                    if idx != 0 && self.cfg.solver {
                        if let Some(v) = node.solved {
                            // A proven node: its exact value, without searching below.
                            self.backup_path(v);
                            return Gather::Terminal;
                        }
                    }
                    if !node.children_checked
                        && self.cfg.trap_plies >= 3
                        && (idx == 0 || node.visits >= self.cfg.trap_visits)
                    {
                        // Trap proofs for every move of a node the search keeps coming back to.
                        self.check_children(idx as usize);
                        if self.cfg.solver {
                            let path = std::mem::take(&mut self.path);
                            self.propagate_solved(&path);
                            self.path = path;
                            if let (true, Some(v)) = (idx != 0, self.nodes[idx as usize].solved) {
                                self.backup_path(v);
                                return Gather::Terminal;
                            }
                        }
                    }
                    let child =
                        if idx == 0 && self.gumbel.ready { self.gumbel_root_child() } else { self.select_child(idx) };
                    let mv = self.nodes[child as usize].mv;
                    self.scratch.play_unchecked(mv);
                    idx = child;
                }
                NodeKind::Expanded => {
                    // No children but not terminal cannot happen: no legal moves is an outcome.
                    if self.many() {
                        self.backup_path_players([0.0; MAX_PLAYERS]);
                    } else {
                        self.backup_path(0.0);
                    }
                    return Gather::Terminal;
                }
                NodeKind::Terminal(_) if self.many() => {
                    // `scratch` is the finished game of this node.
                    let values = self.scratch.player_values().unwrap_or([0.0; MAX_PLAYERS]);
                    self.backup_path_players(values);
                    return Gather::Terminal;
                }
                NodeKind::Terminal(v) => {
                    self.backup_path(v);
                    if self.cfg.solver {
                        let path = std::mem::take(&mut self.path);
                        self.propagate_solved(&path);
                        self.path = path;
                    }
                    return Gather::Terminal;
                }
                NodeKind::Pending => return Gather::Collision,
                NodeKind::Unexpanded if idx != 0 && self.cfg.solver && node.solved.is_some() => {
                    // Proven before its first visit (a trap proof): no evaluation needed.
                    self.backup_path(node.solved.unwrap_or(0.0));
                    let path = std::mem::take(&mut self.path);
                    self.propagate_solved(&path);
                    self.path = path;
                    return Gather::Terminal;
                }
                NodeKind::Unexpanded => {
                    if self.many() {
                        if let Some(values) = self.scratch.player_values() {
                            let mover = self.nodes[idx as usize].mover as usize;
                            self.nodes[idx as usize].kind = NodeKind::Terminal(values[mover]);
                            self.backup_path_players(values);
                            return Gather::Terminal;
                        }
                    }
                    if let Some(outcome) = self.scratch.outcome() {
                        let v = self.terminal_value(outcome, self.scratch.side_to_move());
                        self.nodes[idx as usize].kind = NodeKind::Terminal(v);
                        self.backup_path(v);
                        if self.cfg.solver {
                            let path = std::mem::take(&mut self.path);
                            self.propagate_solved(&path);
                            self.path = path;
                        }
                        return Gather::Terminal;
                    }
                    self.nodes[idx as usize].kind = NodeKind::Pending;
                    for &i in &self.path {
                        self.nodes[i as usize].in_flight += 1;
                    }
                    self.queue_leaf(rng);
                    return Gather::Pending;
                }
            }
        }
    }

    fn queue_leaf<R: Rng>(&mut self, _rng: &mut R) {
        if self.pending.len() == self.num_pending {
            self.pending.push(PendingLeaf {
                state: self.scratch.clone(),
                moves: Vec::with_capacity(G::MAX_MOVES),
                path: Vec::with_capacity(64),
                len: 0,
            });
        }
        let p = &mut self.pending[self.num_pending];
        p.state.clone_from(&self.scratch);
        p.state.legal_moves(&mut p.moves);
        p.path.clear();
        p.path.extend_from_slice(&self.path);
        p.len = p.moves.len();
        self.num_pending += 1;
    }

    /// PUCT selection among the children of `idx`; at the root of a search
    /// with forced playouts, a child below its forced count goes first
    /// ([`MctsConfig::forced_playouts_k`]; among several, the best by PUCT).
    fn select_child(&self, idx: u32) -> u32 {
        let node = &self.nodes[idx as usize];
        let first = node.first_child as usize;
        let children = &self.nodes[first..first + node.num_children as usize];
        let (mut parent_n, mut visited_mass) = (0u32, 0f32);
        for c in children {
            let n = c.visits + c.in_flight;
            parent_n += n;
            if n > 0 {
                visited_mass += c.prior;
            }
        }
        let parent_q = self.value_for_player_to_move(idx as usize);
        // lc0's first-play urgency: the reduction grows with the prior mass already
        // explored; never below a loss, so an unvisited move never ranks under a
        // move known to lose.
        let fpu = (parent_q - self.cfg.fpu_reduction * visited_mass.max(0.0).sqrt()).max(-1.0);
        let c = c_puct(parent_n as f32, self.cfg.c_puct_init, self.cfg.c_puct_base);
        let sqrt_n = (parent_n.max(1) as f32).sqrt();
        let mut best = 0usize;
        let mut best_score = f32::NEG_INFINITY;
        // Rank of `best` under the tie seed, computed on the first exact tie.
        let mut best_rank: Option<u64> = None;
        let seed = self.tie_seed();
        let solver = self.cfg.solver;
        // Forced playouts (Wu 2019, §3.1): n < sqrt(k P N), compared squared.
        let forced_scale = if idx == 0 && self.forced { self.cfg.forced_playouts_k * parent_n as f32 } else { 0.0 };
        let mut forced: Option<(usize, f32)> = None;
        // The solver: the shortest proven win, and the longest proven loss
        // (played only when every move is lost), each `(child, plies)`.
        let mut win: Option<(usize, u16)> = None;
        let mut longest_loss: Option<(usize, u16)> = None;
        for (i, ch) in children.iter().enumerate() {
            let n = ch.visits + ch.in_flight;
            let exact = if solver { ch.exact() } else { None };
            // Virtual loss: each in-flight visit counts as a loss for the chooser.
            let q = match (exact, n, ch.kind) {
                // The solver: a proven win for the chooser is taken (the
                // shortest), a proven loss never unless every move loses
                // (then the longest), a proven draw is worth its exact value.
                (Some(e), _, _) if -e >= 1.0 => {
                    if win.is_none_or(|(_, p)| ch.plies < p) {
                        win = Some((i, ch.plies));
                    }
                    continue;
                }
                (Some(e), _, _) if -e <= -1.0 => {
                    if longest_loss.is_none_or(|(_, p)| ch.plies > p) {
                        longest_loss = Some((i, ch.plies));
                    }
                    continue;
                }
                // A proven draw not yet visited ranks no higher than an unvisited
                // sibling (first-play urgency): an exact "even" must not pull every
                // simulation from moves nobody has looked at (issue 33, defect 3).
                (Some(e), 0, _) => (-e).min(fpu),
                (Some(e), _, _) => -e,
                // An unvisited terminal child: its exact value for the chooser (a
                // draw no higher than first-play urgency, as above); an unvisited
                // child the threat check proved: likewise.
                (None, 0, NodeKind::Terminal(v)) => {
                    let e = self.terminal_for_chooser(v);
                    if e >= 1.0 || self.many() {
                        e
                    } else {
                        e.min(fpu)
                    }
                }
                (None, 0, _) => ch.solved.map_or(fpu, |v| -v).min(-ch.floor),
                _ => ((ch.value_sum - ch.in_flight as f32) / n as f32).min(-ch.floor),
            };
            let s = puct_score(q, ch.prior, n as f32, c, sqrt_n);
            if forced_scale > 0.0
                && ch.visits > 0
                && ch.exact().is_none()
                && (n as f32) * (n as f32) < forced_scale * ch.prior
                && forced
                    .is_none_or(|(b, bs)| s > bs || (s == bs && tie_rank(seed, ch.mv) < tie_rank(seed, children[b].mv)))
            {
                forced = Some((i, s));
            }
            if s > best_score {
                best_score = s;
                best = i;
                best_rank = None;
            } else if s == best_score {
                // Equal scores (e.g. unvisited children with equal priors): the
                // search's seeded order decides, not legal-move order.
                let r = tie_rank(seed, ch.mv);
                let br = *best_rank.get_or_insert_with(|| tie_rank(seed, children[best].mv));
                if r < br {
                    best = i;
                    best_rank = Some(r);
                }
            }
        }
        if let Some((w, _)) = win {
            return (first + w) as u32;
        }
        if best_score == f32::NEG_INFINITY {
            if let Some((l, _)) = longest_loss {
                return (first + l) as u32;
            }
        }
        if let Some((f, _)) = forced {
            return (first + f) as u32;
        }
        (first + best) as u32
    }

    /// The max^n back-up of a completed simulation: adds to every node of
    /// `self.path` its mover's component of `values` (indexed by player).
    fn backup_path_players(&mut self, values: [f32; MAX_PLAYERS]) {
        for &i in self.path.iter().rev() {
            let n = &mut self.nodes[i as usize];
            n.visits += 1;
            n.value_sum += values[n.mover as usize];
        }
    }

    /// Backs up `value` (for the side to move at the last node of `self.path`).
    fn backup_path(&mut self, value: f32) {
        let mut v = -value;
        for &i in self.path.iter().rev() {
            let n = &mut self.nodes[i as usize];
            n.visits += 1;
            n.value_sum += v;
            v = -v;
        }
    }

    /// Expands every pending leaf with its evaluation (same order as
    /// [`Mcts::pending_leaves`]) and backs the values up.
    ///
    /// # Panics
    /// If `evals.len()` differs from the number of pending leaves, or an
    /// evaluation's priors do not match the leaf's legal moves.
    pub fn apply_evaluations<R: Rng>(&mut self, evals: &[Evaluation], rng: &mut R) {
        assert_eq!(evals.len(), self.num_pending, "one evaluation per pending leaf");
        for (k, eval) in evals.iter().enumerate() {
            let p = &self.pending[k];
            assert_eq!(eval.priors.len(), p.len, "priors must match the legal moves");
            let leaf = *p.path.last().expect("path holds the root");
            let first = self.nodes.len() as u32;
            let mut proven_win = false;
            let many = self.players > 2;
            let threat =
                (self.cfg.leaf_threat_check || self.cfg.trap_plies >= 1) && self.cfg.terminal_children && !many;
            // The best a move that ends the game without a win secures the leaf's mover.
            let mut floor = -1.0f32;
            // With the threat check: every move so far loses at once or hands the opponent a win.
            let mut all_lost = threat && !p.moves.is_empty();
            let chooser = p.state.player_to_move();
            // More players: the values of a move that wins outright for the leaf's mover.
            let mut win_values: Option<[f32; MAX_PLAYERS]> = None;
            for (&mv, &prior) in p.moves.iter().zip(&eval.priors) {
                let mut child = Node { mover: chooser as u8, ..Node::new(mv, prior) };
                if self.cfg.terminal_children && many {
                    // One ply of exact lookahead, max^n: the child's exact value
                    // for its chooser (`NodeKind::Terminal`).
                    self.scratch.clone_from(&p.state);
                    self.scratch.play_unchecked(mv);
                    if let Some(values) = self.scratch.player_values() {
                        child.kind = NodeKind::Terminal(values[chooser]);
                        if values[chooser] >= 1.0 && win_values.is_none() {
                            win_values = Some(values);
                        }
                    }
                } else if self.cfg.terminal_children {
                    // One ply of exact lookahead: a move that ends the game gets its
                    // exact value now, so PUCT sees a winning move (or a losing one)
                    // before visiting it. Costs one `play` per legal move per expansion.
                    self.scratch.clone_from(&p.state);
                    self.scratch.play_unchecked(mv);
                    if let Some(o) = self.scratch.outcome() {
                        let v = match o.winner {
                            None => self.cfg.draw_penalty,
                            Some(_) => o.value_for(self.scratch.side_to_move()),
                        };
                        child.kind = NodeKind::Terminal(v);
                        proven_win |= v <= -1.0;
                        all_lost &= v >= 1.0;
                        if v > -1.0 {
                            floor = floor.max(-v);
                        }
                    } else if threat && self.scratch.has_winning_move() {
                        // The second ply: the opponent wins at once after this move,
                        // an exact win for the child's side to move.
                        child.solved = Some(1.0);
                        child.plies = 1;
                    } else {
                        all_lost = false;
                    }
                }
                self.nodes.push(child);
            }
            // Three plies: a forced win of the leaf's mover (a trap it can spring)
            // makes the leaf exact before the network's value is used.
            let trap_move = if !many && !proven_win && self.cfg.trap_plies >= 3 {
                match self.prover.winning_line(&p.state, 3, false) {
                    Some((3, Some(m))) => Some(m),
                    _ => None,
                }
            } else {
                None
            };
            let trap_win = trap_move.is_some();
            if let Some(m) = trap_move {
                // The move that springs it: every reply loses at once (two plies).
                if let Some(c) = self.nodes[first as usize..].iter_mut().find(|c| c.mv == m) {
                    c.solved = Some(-1.0);
                    c.plies = 2;
                }
            }
            {
                let n = &mut self.nodes[leaf as usize];
                n.first_child = first;
                n.num_children = p.moves.len() as u32;
                n.kind = NodeKind::Expanded;
                if !many {
                    n.floor = floor;
                }
                if trap_win {
                    n.solved = Some(1.0);
                    n.plies = 3;
                }
            }
            // A leaf whose mover can win at once is worth +1 to that mover,
            // whatever the network says (a one-ply MCTS-solver step), so the move
            // that allowed it looks lost from its first visit. With the threat
            // check, a leaf whose every move loses within two plies is worth -1.
            if many {
                // max^n: the leaf's mover takes an outright win when it has one
                // (its maximum), else the network's values.
                let values = win_values.unwrap_or_else(|| eval.player_values(chooser, self.players));
                for &i in p.path.iter().rev() {
                    let n = &mut self.nodes[i as usize];
                    n.in_flight -= 1;
                    n.visits += 1;
                    n.value_sum += values[n.mover as usize];
                }
            } else {
                let leaf_value = if proven_win || trap_win {
                    1.0
                } else if all_lost {
                    -1.0
                } else {
                    // Never below what a drawing move secures (the leaf's floor).
                    eval.value.clamp(-1.0, 1.0).max(floor)
                };
                let mut v = -leaf_value;
                for &i in p.path.iter().rev() {
                    let n = &mut self.nodes[i as usize];
                    n.in_flight -= 1;
                    n.visits += 1;
                    n.value_sum += v;
                    v = -v;
                }
            }
            if self.cfg.solver {
                let mut path = std::mem::take(&mut self.path);
                path.clear();
                path.extend_from_slice(&self.pending[k].path);
                self.propagate_solved(&path);
                self.path = path;
            }
            if leaf == 0 && self.noise_pending {
                self.noise_pending = false;
                self.apply_root_noise(rng);
            }
            if leaf == 0 && self.gumbel.pending {
                self.init_gumbel(rng);
            }
        }
        self.num_pending = 0;
    }

    /// The solver's back-up (Winands et al. 2008): walks `path` upwards from
    /// its last node, which has just become exact (a terminal reached, or a
    /// leaf expanded), marking each node whose children now prove its value;
    /// stops at the first node that stays unproven.
    fn propagate_solved(&mut self, path: &[u32]) {
        for &i in path.iter().rev() {
            let i = i as usize;
            let exact = match self.nodes[i].kind {
                NodeKind::Terminal(v) => Some(v),
                NodeKind::Expanded => {
                    // Redone on every pass, so that a shorter win (or a longer
                    // resistance) found later replaces the first proof's length.
                    if let Some((v, plies)) = self.solve_from_children(i) {
                        let n = &mut self.nodes[i];
                        let shorter_known = n.solved.is_some_and(|old| old >= 1.0) && v >= 1.0 && n.plies <= plies;
                        if !shorter_known {
                            n.solved = Some(v);
                            n.plies = plies;
                        }
                    }
                    self.nodes[i].solved
                }
                _ => None,
            };
            if exact.is_none() {
                break;
            }
        }
    }

    /// The value node `i` is proven to have for its side to move, with its
    /// plies to the end ([`Node::plies`]): +1 when a child is a proven loss
    /// for its own side to move (the shortest such line), the best child
    /// value when every child is proven (a loss by its longest line), else
    /// `None`.
    fn solve_from_children(&self, i: usize) -> Option<(f32, u16)> {
        let n = &self.nodes[i];
        if n.num_children == 0 {
            return None;
        }
        let first = n.first_child as usize;
        let mut best = f32::NEG_INFINITY;
        let mut best_plies = 0u16;
        let mut win: Option<u16> = None;
        let mut all = true;
        for c in &self.nodes[first..first + n.num_children as usize] {
            let plies = c.plies.saturating_add(1);
            match c.exact() {
                Some(e) if -e >= 1.0 => win = Some(win.map_or(plies, |w| w.min(plies))),
                Some(e) => {
                    let v = -e;
                    if v > best || (v == best && (if v <= -1.0 { plies > best_plies } else { plies < best_plies })) {
                        best = v;
                        best_plies = plies;
                    }
                }
                None => all = false,
            }
        }
        if let Some(w) = win {
            return Some((1.0, w));
        }
        all.then_some((best, best_plies))
    }

    /// The trap proofs for every child of node `idx`, whose position is in
    /// `self.scratch` ([`MctsConfig::trap_plies`]): a child whose side to move
    /// (the opponent of `idx`'s) forces a win within `trap_plies` plies gets
    /// that exact value and its length. At the root the proofs are
    /// exhaustive (zugzwangs included); elsewhere, as at each expansion, they
    /// skip first moves without a threat. Marks the node checked.
    fn check_children(&mut self, idx: usize) {
        self.nodes[idx].children_checked = true;
        let first = self.nodes[idx].first_child as usize;
        if idx == 0 && self.cfg.trap_plies >= 5 && self.nodes[0].exact().is_none() {
            // The root's own forced win within five plies (three were proven at
            // its expansion): the move that starts it is a proven win.
            if let Some((5, Some(m))) = self.prover.winning_line(&self.scratch, 5, false) {
                let n = self.nodes[0].num_children as usize;
                if let Some(c) = self.nodes[first..first + n].iter_mut().find(|c| c.mv == m) {
                    c.solved = Some(-1.0);
                    c.plies = 4;
                }
            }
        }
        for k in first..first + self.nodes[idx].num_children as usize {
            if self.nodes[k].exact().is_some() {
                continue;
            }
            self.probe.clone_from(&self.scratch);
            self.probe.play_unchecked(self.nodes[k].mv);
            let max = if idx == 0 { self.cfg.trap_plies } else { self.cfg.trap_plies.min(3) };
            if let Some(plies) = self.prover.win_within(&self.probe, max, idx == 0) {
                self.nodes[k].solved = Some(1.0);
                self.nodes[k].plies = plies;
            }
        }
    }

    /// Builds the Gumbel root search of the current search once the root is
    /// expanded: samples `g`, takes the top `m = min(gumbel_considered, legal
    /// moves, simulations)` moves by `g + log prior`, and sets the first round.
    fn init_gumbel<R: Rng>(&mut self, rng: &mut R) {
        self.gumbel.pending = false;
        let k = self.nodes[0].num_children as usize;
        if k == 0 {
            return;
        }
        let first = self.nodes[0].first_child as usize;
        let gm = &mut self.gumbel;
        gm.g.clear();
        if gm.noise {
            // g = -ln(-ln u), u uniform in (0, 1).
            gm.g.extend((0..k).map(|_| {
                let u: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
                (-(-u.ln()).ln()) as f32
            }));
        } else {
            gm.g.resize(k, 0.0);
        }
        gm.start_visits.clear();
        gm.start_visits.extend(self.nodes[first..first + k].iter().map(|c| c.visits));
        let seed = mix64(self.tie_seed) ^ self.root_state.hash();
        let nodes = &self.nodes;
        let g = &gm.g;
        let key = |i: usize| g[i] + nodes[first + i].prior.max(1e-8).ln();
        gm.considered.clear();
        gm.considered.extend(0..k as u32);
        gm.considered.sort_by(|&a, &b| {
            key(b as usize)
                .partial_cmp(&key(a as usize))
                .unwrap_or(Ordering::Equal)
                .then(tie_rank(seed, nodes[first + a as usize].mv).cmp(&tie_rank(seed, nodes[first + b as usize].mv)))
        });
        let m = (self.cfg.gumbel_considered as usize).min(k).min(gm.budget as usize).max(1);
        gm.considered.truncate(m);
        gm.phases = (m as f32).log2().ceil().max(1.0) as u32;
        gm.phase_target = (gm.budget / (gm.phases * m as u32)).max(1);
        gm.ready = true;
    }

    /// Visits of root child `i` since the search began, counting those in flight.
    fn gumbel_count(&self, i: u32) -> u32 {
        let c = &self.nodes[self.nodes[0].first_child as usize + i as usize];
        (c.visits + c.in_flight).saturating_sub(self.gumbel.start_visits.get(i as usize).copied().unwrap_or(0))
    }

    /// The root child for the next simulation under sequential halving: the
    /// candidate with the fewest visits this round (earlier candidates first);
    /// when every candidate has its visits of the round, the better half (by
    /// `g + log prior + sigma(completed Q)`, at least 2) goes on to the next
    /// round (mctx's `get_sequence_of_considered_visits` schedule).
    fn gumbel_root_child(&mut self) -> u32 {
        let first = self.nodes[0].first_child;
        loop {
            // A move that wins at once (or is proven to) ends the search's question.
            if let Some(i) = self.root_win() {
                return first + i;
            }
            let (pos, min) = self
                .gumbel
                .considered
                .iter()
                .enumerate()
                .map(|(p, &i)| (p, self.gumbel_count(i)))
                .min_by_key(|&(p, c)| (c, p))
                .expect("at least one candidate");
            if min < self.gumbel.phase_target {
                return first + self.gumbel.considered[pos];
            }
            let r = self.gumbel.considered.len();
            if r > 2 {
                self.sort_considered();
                self.gumbel.considered.truncate((r / 2).max(2));
            }
            let r = self.gumbel.considered.len() as u32;
            self.gumbel.phase_target += (self.gumbel.budget / (self.gumbel.phases * r)).max(1);
        }
    }

    /// A root child that wins for the root's side to move: a move that ends
    /// the game with a win (known through `terminal_children`), or, with the
    /// solver, a proven win. The first in legal-move order.
    fn root_win(&self) -> Option<u32> {
        let r = &self.nodes[0];
        let first = r.first_child as usize;
        (0..r.num_children).find(|&i| {
            let c = &self.nodes[first + i as usize];
            let e = match c.kind {
                NodeKind::Terminal(v) => Some(self.terminal_for_chooser(v)),
                _ if self.cfg.solver => c.exact().map(|e| -e),
                _ => None,
            };
            e.is_some_and(|e| e >= 1.0)
        })
    }

    /// Sorts the candidates by `g + log prior + sigma(completed Q)`, best first.
    fn sort_considered(&mut self) {
        let mut scores = std::mem::take(&mut self.gumbel.scores);
        self.gumbel_scores(&mut scores);
        let seed = self.tie_seed();
        let first = self.nodes[0].first_child as usize;
        let nodes = &self.nodes;
        self.gumbel.considered.sort_by(|&a, &b| {
            scores[b as usize]
                .partial_cmp(&scores[a as usize])
                .unwrap_or(Ordering::Equal)
                .then(tie_rank(seed, nodes[first + a as usize].mv).cmp(&tie_rank(seed, nodes[first + b as usize].mv)))
        });
        self.gumbel.scores = scores;
    }

    /// `g(a) + log prior(a) + sigma(completed Q(a))` for every root child
    /// (min-max rescaled completed Q, `sigma` with the search's
    /// `gumbel_c_visit` and `gumbel_c_scale`).
    fn gumbel_scores(&self, out: &mut Vec<f32>) {
        let children = self.root_children();
        self.rescaled_completed_q(QRescale::MinMax, out);
        let max_n = children.iter().map(|c| c.visits).max().unwrap_or(0) as f32;
        let sigma = (self.cfg.gumbel_c_visit + max_n) * self.cfg.gumbel_c_scale;
        for (i, (x, c)) in out.iter_mut().zip(children).enumerate() {
            let g = self.gumbel.g.get(i).copied().unwrap_or(0.0);
            *x = g + c.prior.max(1e-8).ln() + sigma * *x;
        }
    }

    /// The Gumbel root search's move: a move that wins at once (or is proven
    /// to), else among the candidates with the most visits this search, the
    /// largest `g + log prior + sigma(completed Q)`.
    fn gumbel_choice(&self) -> Option<Move> {
        if !self.gumbel.ready {
            return None;
        }
        if let Some(i) = self.root_win() {
            return Some(self.nodes[self.nodes[0].first_child as usize + i as usize].mv);
        }
        let mut scores = Vec::new();
        self.gumbel_scores(&mut scores);
        let most = self.gumbel.considered.iter().map(|&i| self.gumbel_count(i)).max()?;
        let first = self.nodes[0].first_child as usize;
        let seed = self.tie_seed();
        let best = self.gumbel.considered.iter().filter(|&&i| self.gumbel_count(i) == most).max_by(|&&a, &&b| {
            scores[a as usize].partial_cmp(&scores[b as usize]).unwrap_or(Ordering::Equal).then(
                tie_rank(seed, self.nodes[first + b as usize].mv)
                    .cmp(&tie_rank(seed, self.nodes[first + a as usize].mv)),
            )
        })?;
        Some(self.nodes[first + *best as usize].mv)
    }

    /// Mixes Dirichlet(alpha) noise into the root priors:
    /// `P = (1 - eps) P + eps * eta`, `alpha = dirichlet_alpha_total / legal moves`
    /// (AlphaZero; KataGo's total-concentration form).
    fn apply_root_noise<R: Rng>(&mut self, rng: &mut R) {
        let r = self.nodes[0];
        let n = r.num_children as usize;
        let eps = self.cfg.noise_fraction;
        if n < 2 || eps <= 0.0 {
            return;
        }
        let alpha = (self.cfg.dirichlet_alpha_total / n as f32).max(1e-3);
        let Ok(gamma) = Gamma::new(alpha, 1.0) else { return };
        self.noise.clear();
        self.noise.extend((0..n).map(|_| gamma.sample(rng)));
        let sum: f32 = self.noise.iter().sum();
        if !(sum > 0.0 && sum.is_finite()) {
            return;
        }
        let first = r.first_child as usize;
        if !self.root_noised {
            self.raw_priors.clear();
            self.raw_priors.extend(self.nodes[first..first + n].iter().map(|c| c.prior));
            self.root_noised = true;
        }
        for (c, g) in self.nodes[first..first + n].iter_mut().zip(&self.noise) {
            c.prior = (1.0 - eps) * c.prior + eps * g / sum;
        }
    }

    /// The improved policy of Gumbel MuZero (Danihelka et al., ICLR 2022, eq. 11
    /// with the completed Q of its appendix D):
    ///
    /// ```text
    /// pi'(a) = softmax(log prior(a) + sigma(rescale(completedQ(a))))
    /// completedQ(a) = Q(a) if visited, else the root value      (for the root mover)
    /// sigma(q) = (c_visit + max_b N(b)) * c_scale * q
    /// ```
    ///
    /// `rescale` is [`QRescale::MinMax`] (the paper's and mctx's
    /// `qtransform_completed_by_mix_value`: `(q - min) / max(max - min, 1e-8)`
    /// over the root's children, so the best child gets `sigma` more logit
    /// than the worst however close their values) or [`QRescale::Fixed`]
    /// (`(q + 1) / 2`, which keeps value differences in proportion: with
    /// sigma ~ 5 a Q difference of 0.05 moves a logit by ~0.13).
    ///
    /// Priors are the network's, before root noise. Unlike visit counts, this
    /// target improves on the prior even with a few simulations over many
    /// legal moves. One entry per root child, in legal-move order; sums to 1.
    /// Empty before the root is expanded.
    pub fn improved_policy(&self, c_visit: f32, c_scale: f32, rescale: QRescale) -> Vec<f32> {
        let children = self.root_children();
        if children.is_empty() {
            return Vec::new();
        }
        let mut q = Vec::with_capacity(children.len());
        self.rescaled_completed_q(rescale, &mut q);
        let max_n = children.iter().map(|c| c.visits).max().unwrap_or(0) as f32;
        let sigma = (c_visit + max_n) * c_scale;
        let priors = self.network_priors();
        let mut out: Vec<f32> = children
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let p = priors.get(i).copied().unwrap_or(c.prior).max(1e-8);
                p.ln() + sigma * q[i]
            })
            .collect();
        let m = out.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let mut sum = 0.0;
        for x in out.iter_mut() {
            *x = (*x - m).exp();
            sum += *x;
        }
        out.iter_mut().for_each(|x| *x /= sum);
        out
    }

    /// Completed Q of every root child for the root's side to move (Q when
    /// visited; the exact value when proven, terminal, or found by the threat
    /// check; else the root's value), rescaled by `rescale` into `[0, 1]`.
    fn rescaled_completed_q(&self, rescale: QRescale, out: &mut Vec<f32>) {
        let children = self.root_children();
        let root_q = self.value_for_player_to_move(0);
        let solver = self.cfg.solver;
        out.clear();
        out.extend(children.iter().map(|c| match (c.exact(), c.q(), c.kind) {
            (Some(e), _, _) if solver => -e,
            (_, Some(q), _) => q,
            (_, None, NodeKind::Terminal(v)) => self.terminal_for_chooser(v),
            (_, None, _) => c.solved.map_or(root_q, |v| -v),
        }));
        let (lo, hi) = out.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &x| (l.min(x), h.max(x)));
        for x in out.iter_mut() {
            *x = match rescale {
                QRescale::MinMax => (*x - lo) / (hi - lo).max(1e-8),
                QRescale::Fixed => (*x + 1.0) / 2.0,
            };
        }
    }

    /// The root children's priors as the network gave them (before root
    /// noise), in legal-move order; empty before the root is expanded.
    pub fn network_priors(&self) -> Vec<f32> {
        let children = self.root_children();
        if self.root_noised && self.raw_priors.len() == children.len() {
            self.raw_priors.clone()
        } else {
            children.iter().map(|c| c.prior).collect()
        }
    }

    /// Whether forced playouts act in the current search
    /// ([`MctsConfig::forced_playouts_k`] > 0, PUCT root selection, and
    /// [`Mcts::begin_search`] was called with noise).
    pub fn forced_playouts(&self) -> bool {
        self.forced
    }

    /// KataGo's policy target pruning (Wu 2019, arXiv:1902.10565, §3.1;
    /// KataGo's `docs/KataGoMethods.md`): the root children's visit counts
    /// with the forced playouts taken out again, for a `visits` policy target.
    /// With `c*` the child with the most visits (ties as for the move to
    /// play: prior, then Q, then [`tie_rank`]), every other visited child `c`
    /// loses as many visits `d <= floor(n_forced(c))` as it can while its PUCT
    /// score with `N(c) - d` visits stays below `c*`'s score with the
    /// unpruned counts (both with `N` = the sum of the root children's
    /// visits, `n_forced(c) = sqrt(k P(c) N)`, `P` after noise); a child left
    /// with one visit or none is removed (0). `c*` keeps its count. So visits
    /// PUCT would have given anyway stay, and those only the forcing gave go.
    ///
    /// Returns the plain visit counts when the search had no forced playouts
    /// ([`Mcts::forced_playouts`]). One entry per root child, in legal-move
    /// order; empty before the root is expanded.
    pub fn pruned_visits(&self) -> Vec<u32> {
        let children = self.root_children();
        let mut out: Vec<u32> = children.iter().map(|c| c.visits).collect();
        if !self.forced || children.is_empty() {
            return out;
        }
        let total: u32 = out.iter().sum();
        let seed = self.tie_seed();
        let stats = |c: &Node| (c.visits, c.prior, c.q());
        let mut best = 0usize;
        for (i, c) in children.iter().enumerate().skip(1) {
            match compare_stats(stats(c), stats(&children[best])) {
                Ordering::Greater => best = i,
                Ordering::Equal if tie_rank(seed, c.mv) < tie_rank(seed, children[best].mv) => best = i,
                _ => {}
            }
        }
        let cp = c_puct(total as f32, self.cfg.c_puct_init, self.cfg.c_puct_base);
        let sqrt_n = (total.max(1) as f32).sqrt();
        let score = |c: &Node, n: u32| puct_score(c.q().unwrap_or(0.0), c.prior, n as f32, cp, sqrt_n);
        let best_score = score(&children[best], children[best].visits);
        let k = self.cfg.forced_playouts_k;
        for (i, c) in children.iter().enumerate() {
            if i == best || c.visits == 0 {
                continue;
            }
            let n_forced = (k * c.prior * total as f32).max(0.0).sqrt().floor() as u32;
            let mut d = n_forced.min(c.visits);
            while d > 0 && score(c, c.visits - d) >= best_score {
                d -= 1;
            }
            out[i] = if c.visits - d <= 1 { 0 } else { c.visits - d };
        }
        out
    }

    /// Root statistics now.
    pub fn result(&self) -> SearchResult {
        let children = self.root_children();
        let visits = children.iter().map(|c| (c.mv, c.visits)).collect();
        let priors = children.iter().map(|c| c.prior).collect();
        let q = children.iter().map(Node::q).collect();
        let root_value = self.value_for_player_to_move(0);
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
        }
    }

    /// With [`MctsConfig::solver`], the root's proven game value for its side
    /// to move: +1, 0 or -1 ([`game_value`]: a draw is 0 whatever
    /// [`MctsConfig::draw_penalty`] the search used).
    pub fn root_exact(&self) -> Option<f32> {
        if self.cfg.solver {
            self.nodes[0].solved.map(game_value)
        } else {
            None
        }
    }

    /// With [`MctsConfig::solver`] and a proven root: plies to the end of
    /// the game under the proof (the shortest win, the longest loss).
    pub fn root_exact_plies(&self) -> Option<u16> {
        (self.cfg.solver && self.nodes[0].solved.is_some()).then_some(self.nodes[0].plies)
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
        // game with nothing to learn (issue 33: the early Chief-capture draws).
        let lost = |c: &Node| solver && c.exact().is_some_and(|e| -e <= -1.0);
        let drawn = |c: &Node| solver && c.exact().is_some_and(|e| e.abs() < 1.0);
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
            if avoid && lost(c) || drawn(c) && c.exact().is_some_and(|e| best_open >= -e) {
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

    /// Plays `mv` at the root and keeps its subtree (tree reuse).
    ///
    /// # Panics
    /// If leaves are still pending evaluation.
    pub fn advance(&mut self, mv: Move) {
        assert_eq!(self.num_pending, 0, "advance with pending leaves");
        let child = self.root_children().iter().position(|c| c.mv == mv).map(|i| self.nodes[0].first_child + i as u32);
        self.root_state.play_unchecked(mv);
        self.noise_pending = false;
        self.root_noised = false;
        self.gumbel.pending = false;
        self.gumbel.ready = false;
        self.forced = false;
        let Some(child) = child else {
            self.nodes.clear();
            let r = self.root_node();
            self.nodes.push(r);
            return;
        };
        self.spare.clear();
        self.queue.clear();
        let mut root = self.nodes[child as usize];
        root.in_flight = 0;
        if matches!(root.kind, NodeKind::Pending) {
            root.kind = NodeKind::Unexpanded;
        }
        self.spare.push(root);
        self.queue.push((child, 0));
        let mut qi = 0;
        while qi < self.queue.len() {
            let (old, new) = self.queue[qi];
            qi += 1;
            let n = self.nodes[old as usize];
            if n.kind != NodeKind::Expanded {
                continue;
            }
            let first_new = self.spare.len() as u32;
            self.spare[new as usize].first_child = first_new;
            for k in 0..n.num_children {
                let c = self.nodes[(n.first_child + k) as usize];
                self.spare.push(c);
                self.queue.push((n.first_child + k, first_new + k));
            }
        }
        std::mem::swap(&mut self.nodes, &mut self.spare);
    }

    /// Runs playouts with `evaluator` (batches of `leaves_per_batch` leaves)
    /// until the root's children hold `simulations` more visits, and returns
    /// the root statistics. (The root's own first evaluation is not counted.)
    ///
    /// # Errors
    /// The evaluator's error.
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
    use martian_rules::martian::{MartianChess, MartianRules};

    /// A root with children `(visits, value_sum, prior)`, as a search with
    /// forced playouts (k = 2) would leave it.
    fn root_with(children: &[(u32, f32, f32)]) -> Mcts<MartianChess> {
        let cfg = MctsConfig { forced_playouts_k: 2.0, ..MctsConfig::default() };
        let mut t = Mcts::new(cfg, MartianChess::new_game(&MartianRules::default()).unwrap());
        let total: u32 = children.iter().map(|c| c.0).sum();
        t.nodes[0] = Node {
            visits: total + 1,
            first_child: 1,
            num_children: children.len() as u32,
            kind: NodeKind::Expanded,
            ..Node::new(Move::new(0, 0), 1.0)
        };
        for (i, &(visits, value_sum, prior)) in children.iter().enumerate() {
            t.nodes.push(Node {
                visits,
                value_sum,
                kind: NodeKind::Expanded,
                ..Node::new(Move::new(i as u8, 31), prior)
            });
        }
        t.forced = true;
        t
    }

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

    #[test]
    fn pruning_by_hand() {
        // N = 138, c_puct(138) = 1.25705, sqrt(N) = 11.747; the best child A
        // (100 visits, Q 0.5, P 0.4) scores 0.5 + 1.25705 * 0.4 * 11.747 / 101 = 0.5585.
        // B (Q 0.3, P 0.3, 10 visits): 0.7027 already with 10 visits, above A: keeps 10.
        // C (Q -0.5, P 0.2, 5): n_forced = floor(sqrt(2 * 0.2 * 138)) = 7; with
        //   1 visit it would score 0.977 >= 0.5585, with 2 visits 0.4845 < 0.5585: 2.
        // D (Q -0.8, P 0.05, 3): n_forced 3, 0 visits score -0.062 < 0.5585: 0 (removed).
        // E (Q -0.9, P 0.05, 20): n_forced 3 caps the cut: 17.
        let t = root_with(&[(100, 50.0, 0.4), (10, 3.0, 0.3), (5, -2.5, 0.2), (3, -2.4, 0.05), (20, -18.0, 0.05)]);
        assert_eq!(t.pruned_visits(), vec![100, 10, 2, 0, 17]);
        // A child left with one visit is removed: 4 visits, Q -0.8, P 0.05,
        // N = 104: n_forced = floor(sqrt(10.4)) = 3, scores stay below A's, 1 left, hence 0.
        let t = root_with(&[(100, 50.0, 0.4), (4, -3.2, 0.05)]);
        assert_eq!(t.pruned_visits(), vec![100, 0]);
        // Without forced playouts in the search, the counts are the visits.
        let mut t = root_with(&[(100, 50.0, 0.4), (10, 3.0, 0.3), (5, -2.5, 0.2)]);
        t.forced = false;
        assert_eq!(t.pruned_visits(), vec![100, 10, 5]);
    }

    /// max^n on a hand-built tree of the four-player free-for-all game: SW
    /// chooses between two moves, after each NW between two, and every
    /// position below a grandchild is worth the grandchild's fixed value
    /// vector. NW picks its own best, and SW gets its component of NW's
    /// choice: here the move whose best-for-SW leaf is worse.
    #[test]
    fn maxn_backup_each_mover_maximises_its_own_value() {
        use martian_rules::martian4::{Martian4Rules, MartianChess4};
        let rules = Martian4Rules { teams: false, ..Martian4Rules::default() };
        let root = MartianChess4::new_game(&rules).unwrap();
        assert_eq!(root.num_players(), 4);
        let cfg = MctsConfig { leaves_per_batch: 1, ..MctsConfig::default() };
        let mut t = Mcts::new(cfg, root);
        assert_eq!(t.root().mover, 3, "the root's mover is the seat before SW");
        let mut moves = Vec::new();
        root.legal_moves(&mut moves);
        // Root -> 2 children (SW's moves) -> 2 grandchildren each (NW's moves).
        t.nodes[0].kind = NodeKind::Expanded;
        t.nodes[0].first_child = 1;
        t.nodes[0].num_children = 2;
        for &mv in &moves[..2] {
            t.nodes.push(Node { mover: 0, kind: NodeKind::Expanded, ..Node::new(mv, 0.5) });
        }
        for (i, &mv) in moves.iter().enumerate().take(2) {
            let mut s = root;
            s.play_unchecked(mv);
            assert_eq!(s.player_to_move(), 1);
            let mut nw = Vec::new();
            s.legal_moves(&mut nw);
            t.nodes[1 + i].first_child = t.nodes.len() as u32;
            t.nodes[1 + i].num_children = 2;
            for &mv in &nw[..2] {
                t.nodes.push(Node { mover: 1, ..Node::new(mv, 0.5) });
            }
        }
        // Per grandchild (SW move i, NW move j): values of SW, NW, NE, SE.
        let v = [[[0.9, -0.5, -0.2, -0.2], [-0.6, 0.4, 0.1, 0.1]], [[0.2, 0.1, -0.15, -0.15], [0.1, -0.3, 0.1, 0.1]]];
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        use rand::SeedableRng;
        let sims = 600;
        for _ in 0..sims {
            assert_eq!(t.select(&mut rng), Gather::Pending);
            let (state, legal) = t.pending_leaf(0);
            let (i, j) = ((t.pending[0].path[1] - 1) as usize, (t.pending[0].path[2] - 3) as usize % 2);
            let mover = state.player_to_move();
            // Mover-relative order: values[k] is player (mover + k) % 4's.
            let values: Vec<f32> = (0..4).map(|k| v[i][j][(mover + k) % 4]).collect();
            let eval = Evaluation { priors: vec![1.0 / legal.len() as f32; legal.len()], value: values[0], values };
            t.apply_evaluations(&[eval], &mut rng);
        }
        let node = |k: usize| t.nodes[k];
        // Every grandchild's Q is NW's component, every child's SW's: the sums
        // are exact multiples of the fixed leaf values.
        for (i, vi) in v.iter().enumerate() {
            for (j, vij) in vi.iter().enumerate() {
                let g = node(3 + 2 * i + j);
                if g.visits > 0 {
                    assert!((g.q().unwrap() - vij[1]).abs() < 1e-5, "grandchild {i}{j}");
                }
            }
        }
        // NW picks its own best below each SW move (0.4 > -0.5, 0.1 > -0.3).
        assert!(node(4).visits > 3 * node(3).visits, "{} {}", node(3).visits, node(4).visits);
        assert!(node(5).visits > 3 * node(6).visits, "{} {}", node(5).visits, node(6).visits);
        // SW's child values are its component of NW's choice, up to the
        // exploration of NW's other move: about -0.6 and 0.2.
        let qa = node(1).q().unwrap();
        let qb = node(2).q().unwrap();
        let mix = |i: usize| {
            let (a, b) = (node(3 + 2 * i), node(4 + 2 * i));
            (a.visits as f32 * v[i][0][0] + b.visits as f32 * v[i][1][0]) / (a.visits + b.visits) as f32
        };
        assert!((qa - mix(0)).abs() < 1e-4 && (qb - mix(1)).abs() < 1e-4, "{qa} {qb}");
        assert!(qa < -0.3 && qb > 0.15, "{qa} {qb}");
        // SW plays the second move, although the first has its best leaf (0.9).
        assert_eq!(t.best_move(), Some(moves[1]));
        let r = t.result();
        assert!(r.root_value > 0.1, "root value for SW {}", r.root_value);
        assert_eq!(r.root_value, t.value_for_player_to_move(0));
        assert_eq!(node(1).visits + node(2).visits, sims);
    }

    /// The zero-sum completion and the rotation of [`Evaluation::player_values`].
    #[test]
    fn evaluation_player_values_rotate_and_complete() {
        let e = Evaluation { priors: vec![], value: 0.3, values: vec![0.3, -0.1, 0.0, -0.2] };
        assert_eq!(e.player_values(2, 4), [0.0, -0.2, 0.3, -0.1]);
        let e = Evaluation { priors: vec![], value: 0.6, values: vec![] };
        let p = e.player_values(1, 4);
        assert_eq!(p[1], 0.6);
        assert!((p[0] + 0.2).abs() < 1e-6 && (p[2] + 0.2).abs() < 1e-6 && (p[3] + 0.2).abs() < 1e-6);
    }
}
