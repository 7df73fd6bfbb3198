//! Tree reuse: after a move is played, its subtree becomes the new tree.

use martian_rules::{GameState, Move};

use super::node::NodeKind;
use super::tree::Mcts;

impl<G: GameState> Mcts<G> {
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
        self.root_spread.clear();
        self.root_raw_value = None;
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
}
