//! The arena's node: one position of the tree and the edge into it.

use martian_rules::Move;

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
    /// In games of more than two value players (max^n, see [`Mcts`](crate::Mcts)): the
    /// exact value for the player who moved into the node ([`Node::mover`]),
    /// the one its parent's chooser maximises.
    Terminal(f32),
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
    /// with [`MctsConfig::solver`](crate::MctsConfig::solver), set on an expanded node once its children
    /// prove it; with [`MctsConfig::leaf_threat_check`](crate::MctsConfig::leaf_threat_check), set to +1 on a child
    /// whose side to move can win at once, before it is visited; with
    /// [`MctsConfig::trap_plies`](crate::MctsConfig::trap_plies), set by the shallow proofs.
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
    /// [`MctsConfig::draw_penalty`](crate::MctsConfig::draw_penalty) `-draw_penalty`), else -1: a bound, so
    /// the chooser of this node never counts it above `-floor` (score-bounded
    /// MCTS, Cazenave & Saffidine 2010). Set at expansion.
    pub floor: f32,
    /// The trap proofs of [`MctsConfig::trap_plies`](crate::MctsConfig::trap_plies) have been run on all of
    /// this node's children at once (the root, before its search; elsewhere
    /// each child is proven as the search first enters it, [`Node::trap_proof`]).
    pub children_checked: bool,
    /// How far the trap proofs have asked whether this node's side to move
    /// forces a win (within three plies; at the root's children, within
    /// [`MctsConfig::trap_plies`](crate::MctsConfig::trap_plies)): 0 not yet, 1 with first moves pruned
    /// by threats (at expansion, or among the children of a checked node),
    /// 2 exhaustively (a child of the root). A proof that found a win sets
    /// [`Node::solved`]; one that found none is not asked again, so a
    /// position is proven once however it is reached in the tree.
    pub trap_proof: u8,
    /// Sum of the backed-up expected final point differences (the
    /// evaluator's [`Evaluation::score`](crate::Evaluation::score), or a
    /// finished game's own) for the side that chose the edge into this node,
    /// in points; 0 when the evaluator gives no score. Its mean over
    /// [`Node::visits`] is the node's score lead ([`Node::score_lead`]).
    pub score_sum: f32,
    /// The part of [`Node::value_sum`] that is score utility
    /// ([`MctsConfig::static_score_utility`](crate::MctsConfig::static_score_utility)),
    /// for the same side; 0 while it is off. `value_sum - score_utility_sum`
    /// is the sum of the plain values.
    pub score_utility_sum: f32,
}

impl Node {
    pub(super) fn new(mv: Move, prior: f32) -> Node {
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
            trap_proof: 0,
            score_sum: 0.0,
            score_utility_sum: 0.0,
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
    ///
    /// With a score utility ([`MctsConfig::static_score_utility`](crate::MctsConfig::static_score_utility))
    /// this is the mean *utility*, which may leave `[-1, 1]`; the bound of
    /// the floor applies only when the node has a drawing move (a floor
    /// above -1), so a utility above 1 is not cut to 1.
    #[inline]
    pub fn q(&self) -> Option<f32> {
        (self.visits > 0).then(|| cap_by_floor(self.value_sum / self.visits as f32, self.floor))
    }

    /// The mean plain value for the side that chose the edge: [`Node::q`]
    /// without the score utility (equal to it while that is off); `None` if
    /// unvisited.
    #[inline]
    pub fn value_q(&self) -> Option<f32> {
        (self.visits > 0)
            .then(|| cap_by_floor((self.value_sum - self.score_utility_sum) / self.visits as f32, self.floor))
    }

    /// The mean expected final point difference for the side that chose
    /// the edge, in points (KataGo's `scoreLead` of a move); `None` if
    /// unvisited. Meaningful only when the evaluator gives scores.
    #[inline]
    pub fn score_lead(&self) -> Option<f32> {
        (self.visits > 0).then(|| self.score_sum / self.visits as f32)
    }
}

/// `q` bounded by what the side to move of a node with floor `floor`
/// secures by a drawing move (`-floor` for its chooser; no bound when the
/// floor is -1, no such move).
#[inline]
pub(super) fn cap_by_floor(q: f32, floor: f32) -> f32 {
    if floor > -1.0 {
        q.min(-floor)
    } else {
        q
    }
}

/// The game-theoretic value (+1, 0 or -1) of an exact value in the search's
/// units: a draw valued with [`MctsConfig::draw_penalty`](crate::MctsConfig::draw_penalty) is still a draw.
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
