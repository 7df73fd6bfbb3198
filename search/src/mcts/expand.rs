//! Expansion: a selected leaf is queued for evaluation, then expanded with
//! its evaluation; the terminal checks of its children (one ply of exact
//! lookahead, the threat check, the three-ply trap proof) and the leaf's
//! value are backed up in the same pass.

use martian_rules::{GameState, MAX_PLAYERS};
use rand::Rng;

use super::node::{Node, NodeKind};
use super::tree::{Mcts, PendingLeaf};
use crate::evaluator::Evaluation;

impl<G: GameState> Mcts<G> {
    /// The value of a finished game for its side to move, in the search's
    /// units: +1 / -1 for a win / loss; a draw is `+draw_penalty`, so the
    /// side whose move ended the game in a draw gets `-draw_penalty`
    /// ([`MctsConfig::draw_penalty`](crate::MctsConfig::draw_penalty)), plus
    /// the side's contempt ([`MctsConfig::contempt`](crate::MctsConfig::contempt)).
    #[inline]
    pub(super) fn terminal_value(&self, o: martian_rules::Outcome, pos: &G) -> f32 {
        match o.winner {
            None => self.draw_value(pos),
            Some(_) => o.value_for(pos.side_to_move()),
        }
    }

    pub(super) fn queue_leaf<R: Rng>(&mut self, _rng: &mut R) {
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
        if let Some(filter) = &self.move_filter {
            filter(&p.state, self.path.len().saturating_sub(1), &mut p.moves);
        }
        p.path.clear();
        p.path.extend_from_slice(&self.path);
        p.len = p.moves.len();
        self.num_pending += 1;
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
            if leaf == 0 {
                // The network's own value of the root, before any search.
                self.root_raw_value = Some(eval.value);
            }
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
            // The threat check from the leaf's board when the game can answer
            // it so (one pass for all moves), else by playing each move.
            let board_replies = threat && p.state.winning_replies(&p.moves[..p.len], &mut self.reply_wins);
            for (i, (&mv, &prior)) in p.moves.iter().zip(&eval.priors).enumerate() {
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
                        let v = self.terminal_value(o, &self.scratch);
                        child.kind = NodeKind::Terminal(v);
                        proven_win |= v <= -1.0;
                        all_lost &= v >= 1.0;
                        if v > -1.0 {
                            floor = floor.max(-v);
                        }
                    } else if threat && if board_replies { self.reply_wins[i] } else { self.scratch.has_winning_move() }
                    {
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
            // Not asked again of a leaf whose earlier proof found no win.
            let proven_before = self.nodes[leaf as usize].trap_proof >= 1 && self.nodes[leaf as usize].solved.is_none();
            let trap_move = if !many && !proven_win && !proven_before && self.cfg.trap_plies >= 3 {
                self.nodes[leaf as usize].trap_proof = self.nodes[leaf as usize].trap_proof.max(1);
                match self.prover.winning_line_from(&p.state, Some(&p.moves[..p.len]), 3, false) {
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
                if let Some(&c) = self.pending[k].path.get(1) {
                    let x = values[self.nodes[c as usize].mover as usize];
                    self.note_root_value(c, x);
                }
            } else {
                let aversion = self.cfg.draw_aversion;
                let (leaf_value, leaf_draw) = if proven_win || trap_win {
                    (1.0, 0.0)
                } else if all_lost {
                    (-1.0, 0.0)
                } else {
                    // W - L + u D for the mover's draw utility u (contempt), never
                    // below what a drawing move secures (the leaf's floor); with
                    // draw aversion the mover compares W - L + u D - a D with the
                    // drawing move's floor - a.
                    let u = self.draw_value(&p.state);
                    let v = if u != 0.0 { eval.value + u * eval.draw } else { eval.value };
                    let v = v.clamp(-1.0, 1.0);
                    if v - aversion * eval.draw < floor - aversion {
                        (floor, 1.0)
                    } else {
                        (v, eval.draw)
                    }
                };
                if aversion > 0.0 && floor > -1.0 {
                    // The leaf's chooser gets at most -floor - a: the mover's
                    // drawing move costs both sides the aversion.
                    self.nodes[leaf as usize].floor = floor + aversion;
                }
                // The score (two players): the evaluator's expected final point
                // difference for the leaf's mover, and its score utility.
                let score = eval.score.filter(|s| s.is_finite());
                let mut bonus = 0.0;
                if let Some(s) = score {
                    self.scored = true;
                    if self.score_utility {
                        if leaf == 0 && self.score_center.is_none() {
                            // The root's own evaluation: the dynamic utility's centre.
                            self.score_center = Some(s);
                        }
                        bonus = self.score_utility_of(s, self.pending[k].state.side_to_move());
                    }
                }
                let path = std::mem::take(&mut self.pending[k].path);
                self.backup_along(&path, leaf_value, leaf_draw, true, score, bonus);
                self.pending[k].path = path;
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
}
