//! Selection: from the root down to a leaf by PUCT, with lc0's first-play
//! urgency for unvisited children, virtual loss for leaves in flight, and the
//! solver's and forced playouts' overrides of the PUCT choice.

use martian_rules::{GameState, MAX_PLAYERS};
use rand::Rng;

use super::node::{cap_by_floor, Node, NodeKind};
use super::result::{tie_rank, Gather};
use super::tree::Mcts;
use crate::puct::{c_puct, puct_score};

impl<G: GameState> Mcts<G> {
    /// The value of node `idx` for the player to move there: in a two-player
    /// game minus its own mean (0 when unvisited); with more players, or with
    /// [`MctsConfig::draw_aversion`](crate::MctsConfig::draw_aversion) (not
    /// zero-sum), the visit-weighted mean of its children's Q (0 before any
    /// child is visited).
    pub(super) fn value_for_player_to_move(&self, idx: usize) -> f32 {
        self.mean_for_player_to_move(idx, |n| n.value_sum)
    }

    /// The score utility part of [`Mcts::value_for_player_to_move`] (from
    /// [`Node::score_utility_sum`](crate::mcts::Node::score_utility_sum),
    /// by the same rule): 0 while the score utility is off.
    pub(super) fn score_utility_for_player_to_move(&self, idx: usize) -> f32 {
        if !self.score_utility {
            return 0.0;
        }
        self.mean_for_player_to_move(idx, |n| n.score_utility_sum)
    }

    /// The rule of [`Mcts::value_for_player_to_move`] applied to the sum
    /// `sum` of a node's backed-up quantity (its value or its score utility).
    #[inline]
    fn mean_for_player_to_move(&self, idx: usize, sum: impl Fn(&Node) -> f32) -> f32 {
        let node = &self.nodes[idx];
        if !self.many() && self.cfg.draw_aversion == 0.0 {
            return if node.visits > 0 { -sum(node) / node.visits as f32 } else { 0.0 };
        }
        if node.kind != NodeKind::Expanded {
            return 0.0;
        }
        let first = node.first_child as usize;
        let (mut total, mut n) = (0.0f32, 0u32);
        for c in &self.nodes[first..first + node.num_children as usize] {
            total += sum(c);
            n += c.visits;
        }
        if n > 0 {
            total / n as f32
        } else {
            0.0
        }
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
                    let traps = self.cfg.trap_plies >= 3;
                    if idx == 0 && traps && self.eager_root_proofs && !node.children_checked {
                        // Trap proofs for every root move before the first simulation:
                        // the policy target and the result give each its proven value.
                        self.check_children(0);
                        if self.cfg.solver {
                            self.propagate_solved_on_path();
                        }
                    } else if idx == 0 && traps && !self.eager_root_proofs && !self.root_line_checked {
                        self.root_line_checked = true;
                        self.prove_root_line();
                        if self.cfg.solver {
                            self.propagate_solved_on_path();
                        }
                    }
                    // Elsewhere (and at the root unless proven eagerly) a move is proven
                    // just before the search first enters it, once the node has
                    // `trap_visits` visits: a move found lost is left for the next
                    // choice, which is the choice a proof of every move first
                    // would have made.
                    let level = if idx == 0 { 2 } else { 1 };
                    let lazy =
                        traps && if idx == 0 { !self.eager_root_proofs } else { node.visits >= self.cfg.trap_visits };
                    let child = loop {
                        let c = if idx == 0 && self.gumbel.ready {
                            self.gumbel_root_child()
                        } else {
                            self.select_child(idx)
                        };
                        if lazy && self.prove_child(c as usize, level) {
                            if self.cfg.solver {
                                self.propagate_solved_on_path();
                                if let (true, Some(v)) = (idx != 0, self.nodes[idx as usize].solved) {
                                    self.backup_path(v);
                                    return Gather::Terminal;
                                }
                            }
                            continue;
                        }
                        break c;
                    };
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
                        self.propagate_solved_on_path();
                    }
                    return Gather::Terminal;
                }
                NodeKind::Pending => return Gather::Collision,
                NodeKind::Unexpanded if idx != 0 && self.cfg.solver && node.solved.is_some() => {
                    // Proven before its first visit (a trap proof): no evaluation needed.
                    self.backup_path(node.solved.unwrap_or(0.0));
                    self.propagate_solved_on_path();
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
                        let v = self.terminal_value(outcome, &self.scratch);
                        self.nodes[idx as usize].kind = NodeKind::Terminal(v);
                        self.backup_path(v);
                        if self.cfg.solver {
                            self.propagate_solved_on_path();
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

    /// PUCT selection among the children of `idx`; at the root of a search
    /// with forced playouts, a child below its forced count goes first
    /// ([`MctsConfig::forced_playouts_k`](crate::MctsConfig::forced_playouts_k); among several, the best by PUCT).
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
                // simulation from moves nobody has looked at (measured in
                // docs/experiments/2026-12-04-jetan-search-without-network.md).
                (Some(e), 0, _) => self.terminal_for_chooser(e).min(fpu),
                (Some(e), _, _) => self.terminal_for_chooser(e),
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
                (None, 0, _) => cap_by_floor(ch.solved.map_or(fpu, |v| -v), ch.floor),
                _ => cap_by_floor((ch.value_sum - ch.in_flight as f32) / n as f32, ch.floor),
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
}
