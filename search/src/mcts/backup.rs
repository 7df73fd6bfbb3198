//! Back-up and the solver: values backed up along a path (negamax in two
//! players, max^n with more), the MCTS-solver's proven values
//! (Winands et al. 2008) and the trap proofs of a node's children.

use martian_rules::{GameState, MAX_PLAYERS};

use super::node::{game_value, NodeKind};
use super::tree::Mcts;

impl<G: GameState> Mcts<G> {
    /// The max^n back-up of a completed simulation: adds to every node of
    /// `self.path` its mover's component of `values` (indexed by player).
    pub(super) fn backup_path_players(&mut self, values: [f32; MAX_PLAYERS]) {
        for &i in self.path.iter().rev() {
            let n = &mut self.nodes[i as usize];
            n.visits += 1;
            n.value_sum += values[n.mover as usize];
        }
        if let Some(&c) = self.path.get(1) {
            let x = values[self.nodes[c as usize].mover as usize];
            self.note_root_value(c, x);
        }
    }

    /// Backs up the exact value `value` (for the side to move at the last
    /// node of `self.path`: a finished game or a proven value); a draw costs
    /// every node's chooser [`MctsConfig::draw_aversion`](crate::MctsConfig::draw_aversion).
    ///
    /// With scores ([`Mcts::root_score_lead`]), the score backed up with it
    /// is the finished game's final point difference (`self.scratch` holds
    /// the last node's position), or for a proven position the mean score of
    /// the last node's parent (the same side to move, two plies up); the
    /// score utility of that score is added to the value.
    pub(super) fn backup_path(&mut self, value: f32) {
        let draw = if game_value(value) == 0.0 { 1.0 } else { 0.0 };
        let path = std::mem::take(&mut self.path);
        let score = if self.scored {
            let side = self.scratch.side_to_move();
            self.scratch.final_score_difference(side).map(|d| d as f32).or_else(|| {
                let parent = &self.nodes[path[path.len().checked_sub(2)?] as usize];
                parent.score_lead()
            })
        } else {
            None
        };
        let bonus = match score {
            Some(s) if self.score_utility => self.score_utility_of(s, self.scratch.side_to_move()),
            _ => 0.0,
        };
        self.backup_along(&path, value, draw, false, score, bonus);
        self.path = path;
    }

    /// Backs up along `path` a value `value` for the side to move at its last
    /// node (negated from ply to ply) with draw probability `draw`: each
    /// node's chooser gets its side's `±value - draw_aversion * draw`
    /// ([`MctsConfig::draw_aversion`](crate::MctsConfig::draw_aversion); 0
    /// makes it plain negamax). `pending`: the simulation was in flight
    /// (its virtual loss is removed). `score`: the expected final point
    /// difference for the last node's side to move, added (negated from
    /// ply to ply) to [`Node::score_sum`](crate::mcts::Node::score_sum);
    /// `bonus`: its score utility ([`Mcts::score_utility_of`]), added to the
    /// value (0 while the score utility is off: then nothing is added and the
    /// values are bit for bit those of a search without it).
    pub(super) fn backup_along(
        &mut self,
        path: &[u32],
        value: f32,
        draw: f32,
        pending: bool,
        score: Option<f32>,
        bonus: f32,
    ) {
        let cost = self.cfg.draw_aversion * draw;
        let with_bonus = self.score_utility && bonus != 0.0;
        let mut v = if with_bonus { -(value + bonus) } else { -value };
        let mut b = -bonus;
        let mut sc = score.map(|s| -s);
        let root_child = path.get(1).copied();
        let mut at_root_child = None;
        for &i in path.iter().rev() {
            let n = &mut self.nodes[i as usize];
            if pending {
                n.in_flight -= 1;
            }
            n.visits += 1;
            n.value_sum += v - cost;
            if Some(i) == root_child {
                at_root_child = Some(if with_bonus { v - cost - b } else { v - cost });
            }
            v = -v;
            if with_bonus {
                n.score_utility_sum += b;
                b = -b;
            }
            if let Some(s) = sc {
                n.score_sum += s;
                sc = Some(-s);
            }
        }
        if let (Some(c), Some(x)) = (root_child, at_root_child) {
            self.note_root_value(c, x);
        }
    }

    /// [`Mcts::propagate_solved`] along the path of the current selection.
    pub(super) fn propagate_solved_on_path(&mut self) {
        let path = std::mem::take(&mut self.path);
        self.propagate_solved(&path);
        self.path = path;
    }

    /// The solver's back-up (Winands et al. 2008): walks `path` upwards from
    /// its last node, which has just become exact (a terminal reached, or a
    /// leaf expanded), marking each node whose children now prove its value;
    /// stops at the first node that stays unproven.
    pub(super) fn propagate_solved(&mut self, path: &[u32]) {
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
    /// plies to the end ([`Node::plies`](crate::mcts::Node::plies)): +1 when a child is a proven loss
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

    /// The trap proofs for every move of the root, whose position is in
    /// `self.scratch` ([`MctsConfig::trap_plies`](crate::MctsConfig::trap_plies)): a child whose side to move
    /// (the opponent of the root's) forces a win within `trap_plies` plies
    /// gets that exact value and its length. Exhaustive (zugzwangs
    /// included), before the first simulation, so that the policy target
    /// and the result carry the proven value of the moves the search leaves
    /// unvisited (elsewhere the moves are proven one by one:
    /// [`Mcts::prove_child`]). Marks the root checked.
    pub(super) fn check_children(&mut self, idx: usize) {
        debug_assert_eq!(idx, 0, "only the root's moves are proven all at once");
        self.nodes[idx].children_checked = true;
        self.prove_root_line();
        let first = self.nodes[idx].first_child as usize;
        for k in first..first + self.nodes[idx].num_children as usize {
            self.prove_child(k, 2);
        }
    }

    /// With [`MctsConfig::trap_plies`](crate::MctsConfig::trap_plies) = 5,
    /// the root's own forced win within five plies (three were proven at its
    /// expansion): the move that starts it is a proven win. The root's
    /// position is in `self.scratch`.
    pub(super) fn prove_root_line(&mut self) {
        if self.cfg.trap_plies < 5 || self.nodes[0].exact().is_some() {
            return;
        }
        let first = self.nodes[0].first_child as usize;
        if let Some((5, Some(m))) = self.prover.winning_line(&self.scratch, 5, false) {
            let n = self.nodes[0].num_children as usize;
            if let Some(c) = self.nodes[first..first + n].iter_mut().find(|c| c.mv == m) {
                c.solved = Some(-1.0);
                c.plies = 4;
            }
        }
    }

    /// The trap proof of child `k` of the node whose position is in
    /// `self.scratch`, as [`Mcts::check_children`] gives it: with `level` 2
    /// (a root move) exhaustive and to `trap_plies`, with 1 pruned and to
    /// three plies; unless it has had one as thorough or is exact. Returns
    /// whether it proved the child a win for its side to move (a lost move
    /// for the node's mover).
    pub(super) fn prove_child(&mut self, k: usize, level: u8) -> bool {
        if self.nodes[k].exact().is_some() || self.nodes[k].trap_proof >= level {
            return false;
        }
        self.nodes[k].trap_proof = level;
        self.probe.clone_from(&self.scratch);
        self.probe.play_unchecked(self.nodes[k].mv);
        let max = if level >= 2 { self.cfg.trap_plies } else { self.cfg.trap_plies.min(3) };
        match self.prover.win_within(&self.probe, max, level >= 2) {
            Some(plies) => {
                self.nodes[k].solved = Some(1.0);
                self.nodes[k].plies = plies;
                true
            }
            None => false,
        }
    }

    /// With [`MctsConfig::solver`](crate::MctsConfig::solver), the root's proven game value for its side
    /// to move: +1, 0 or -1 ([`game_value`]: a draw is 0 whatever
    /// [`MctsConfig::draw_penalty`](crate::MctsConfig::draw_penalty) the search used).
    ///
    /// # Example
    /// The solver proves a forced win in three plies that the uniform
    /// evaluator alone cannot see, and the move to play is the proven win.
    /// ```
    /// use martian_rules::martian::{MartianChess, MartianRules};
    /// use martian_rules::GameState;
    /// use martian_search::{Mcts, MctsConfig, UniformEvaluator};
    /// use rand::rngs::StdRng;
    /// use rand::SeedableRng;
    ///
    /// // North to move: b6a5 forces a win in three plies (no win in one).
    /// let text = "QQDQ/1DP1/1P2/4/2PP/1DDD/P2Q/PQQ1 N 0 2 b2b3 2 5 17";
    /// let pos = MartianChess::from_position(text, &MartianRules::default())?;
    /// let cfg = MctsConfig { solver: true, ..MctsConfig::default() };
    /// let mut tree = Mcts::new(cfg, pos.clone());
    /// let result = tree.search(&mut UniformEvaluator, 3000, false, &mut StdRng::seed_from_u64(1))?;
    ///
    /// assert_eq!(tree.root_exact(), Some(1.0), "the root is a proven win");
    /// assert_eq!(tree.root_exact_plies(), Some(3));
    /// let best = result.best_move().expect("the root has legal moves");
    /// assert_eq!(pos.move_to_string(best), "b6a5");
    /// let i = result.visits.iter().position(|&(m, _)| m == best).expect("a root move");
    /// assert_eq!((result.exact[i], result.exact_plies[i]), (Some(1.0), 3));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn root_exact(&self) -> Option<f32> {
        if self.cfg.solver {
            self.nodes[0].solved.map(game_value)
        } else {
            None
        }
    }

    /// With [`MctsConfig::solver`](crate::MctsConfig::solver) and a proven root: plies to the end of
    /// the game under the proof (the shortest win, the longest loss).
    pub fn root_exact_plies(&self) -> Option<u16> {
        (self.cfg.solver && self.nodes[0].solved.is_some()).then_some(self.nodes[0].plies)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MctsConfig;
    use crate::evaluator::Evaluation;
    use crate::mcts::node::Node;
    use crate::mcts::result::Gather;

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
            let eval = Evaluation {
                priors: vec![1.0 / legal.len() as f32; legal.len()],
                value: values[0],
                draw: 0.0,
                values,
                score: None,
            };
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
}
