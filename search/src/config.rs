//! MCTS settings (the `[search]` table of a run config).

use serde::{Deserialize, Serialize};

/// PUCT search settings. Defaults follow AlphaZero's pseudocode and lc0.
///
/// # Example
/// Settings are built from the defaults with the fields that differ, checked
/// with [`MctsConfig::validate`], and given to [`Mcts::new`](crate::Mcts::new).
/// ```
/// use martian_rules::jetan::{Jetan, JetanRules};
/// use martian_rules::GameState;
/// use martian_search::{Mcts, MctsConfig, RootSelection, UniformEvaluator};
/// use rand::rngs::StdRng;
/// use rand::SeedableRng;
///
/// // Gumbel root search over 8 candidates, 4 leaves per evaluation batch.
/// let cfg = MctsConfig {
///     root_selection: RootSelection::Gumbel,
///     gumbel_considered: 8,
///     leaves_per_batch: 4,
///     ..MctsConfig::default()
/// };
/// assert!(cfg.validate().is_ok());
/// assert!(cfg.solver && cfg.terminal_children, "the defaults that were not named stay");
///
/// // A setting out of range, or one that does not fit the others, is refused by name.
/// let forced = MctsConfig { forced_playouts_k: 2.0, ..cfg.clone() };
/// assert!(forced.validate().unwrap_err().starts_with("search.forced_playouts_k"));
/// let wide = MctsConfig { leaves_per_batch: 0, ..cfg.clone() };
/// assert!(wide.validate().unwrap_err().starts_with("search.leaves_per_batch"));
///
/// // The search with those settings: sequential halving picks the move to play.
/// let mut tree = Mcts::new(cfg, Jetan::new_game(&JetanRules::default())?);
/// let result = tree.search(&mut UniformEvaluator, 64, true, &mut StdRng::seed_from_u64(5))?;
/// assert_eq!(tree.child_visits(), 64);
/// assert!(result.chosen.is_some());
/// assert_eq!(result.best_move(), result.chosen);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MctsConfig {
    /// `c_init` of the AlphaZero exploration schedule (default 1.25; > 0).
    pub c_puct_init: f32,
    /// `c_base` of the AlphaZero exploration schedule, in visits (default 19652; > 0).
    pub c_puct_base: f32,
    /// First-play urgency (lc0 "FPU reduction"): an unvisited child's Q is
    /// `parent Q - fpu_reduction * sqrt(sum of the priors of visited children)`;
    /// 0 = the parent's Q. Default 0.25; range 0..=2.
    pub fpu_reduction: f32,
    /// Total Dirichlet concentration at the root: each legal move gets
    /// `alpha = dirichlet_alpha_total / legal moves` (KataGo uses 10.83; AlphaZero's
    /// 0.3 for chess is about 10 / 30 moves). Default 10. Must be > 0.
    pub dirichlet_alpha_total: f32,
    /// Weight of the noise in the root priors, `epsilon` (AlphaZero 0.25; 0..=1).
    pub noise_fraction: f32,
    /// Leaves gathered per tree before one batched evaluation, using virtual
    /// loss (lc0 "minibatch"/n-in-flight). 1 = plain sequential MCTS. Default 1.
    pub leaves_per_batch: u32,
    /// When a node is expanded, play each legal move once and give moves that
    /// end the game their exact value at once (an unvisited terminal child's Q
    /// is its exact value instead of the first-play urgency). Costs one move
    /// per child per expansion, small next to a network evaluation, and lets a
    /// search with few simulations take immediate wins and see immediate
    /// losses in wide positions (Jetan has ~80 legal moves). A leaf whose side
    /// to move has such a winning move is valued +1 for that side instead of
    /// the network's value. Default true.
    pub terminal_children: bool,
    /// MCTS-solver (Winands, Björnsson & Saito, "Monte-Carlo Tree Search
    /// Solver", CG 2008): game-theoretic values propagate up the tree. A node
    /// is a proven win for its side to move when one child is a proven loss
    /// for the side to move there, and proven with the best child value when
    /// every child is proven. Selection never enters a proven node below the
    /// root (it backs up the exact value), never chooses a proven losing move
    /// while another exists, and the move to play is a proven win when there is
    /// one; in self-play a position proven before its move becomes an exact
    /// value target. Default false.
    pub solver: bool,
    /// How the root chooses which child to simulate: `puct` (AlphaZero) or
    /// `gumbel` (Gumbel MuZero's sequential halving with Gumbel-top-k,
    /// Danihelka et al., ICLR 2022): the `gumbel_considered` moves with the
    /// largest `g + log prior` (g ~ Gumbel(0, 1) when the search has noise,
    /// else 0) share the simulations in rounds that halve the candidates by
    /// `g + log prior + sigma(completed Q)`, and the move to play is the best
    /// survivor. No Dirichlet noise is mixed in when it is on (the Gumbel
    /// sample is the exploration). Inside the tree, selection stays PUCT.
    /// Default `puct`.
    pub root_selection: RootSelection,
    /// Moves considered at the root by Gumbel root search (`m` in the paper;
    /// mctx default 16). Range 1..=1024.
    pub gumbel_considered: u32,
    /// `c_visit` of `sigma(q) = (c_visit + max N) * c_scale * q` in the Gumbel
    /// root search (the paper's and mctx's 50). Range >= 0.
    pub gumbel_c_visit: f32,
    /// `c_scale` of that `sigma` (mctx 0.1; the paper's 1.0 with values in
    /// [0, 1] after min-max rescaling). Range >= 0.
    pub gumbel_c_scale: f32,
    /// In matches (`evaluate`, the ladder, `play`): keep the subtree of the
    /// position reached after the player's move and the opponent's reply, and
    /// count its visits towards the move's limit (KataGo's "visits", as
    /// opposed to "playouts": a move with a `visits = N` limit searches until
    /// the root's children hold N visits, so a reused subtree saves time; with
    /// a `movetime` it is a head start). Self-play always reuses its tree.
    /// Default false (each move searches `N` new playouts from an empty tree).
    pub play_tree_reuse: bool,
    /// KataGo's forced playouts (Wu, "Accelerating Self-Play Learning in Go",
    /// arXiv:1902.10565, §3.1; KataGo uses k = 2): in a search with Dirichlet
    /// root noise (self-play's full searches), a root child `c` that has been
    /// visited and has fewer than `n_forced(c) = sqrt(k * P(c) * sum of the
    /// root children's visits)` visits is selected before PUCT is consulted
    /// (`P(c)` the prior after noise), so that moves the noise made look
    /// promising get enough visits for their value to show. Children whose
    /// value is exact (a move that ends the game, a proven value) are not
    /// forced. With `selfplay.policy_target_pruning` the forced visits are
    /// taken out of the policy target again. 0 = off. Range 0..=10, and 0
    /// with `root_selection = "gumbel"` (no Dirichlet noise there). Default 0.
    pub forced_playouts_k: f32,
    /// A two-ply threat check when a node is expanded (needs
    /// `terminal_children`): each child that is not over is asked whether its
    /// side to move, the opponent, can win at once
    /// (`GameState::has_winning_move`); if so, the child gets that exact
    /// value (a loss for the side choosing it) before it is visited, so PUCT
    /// sees "this move lets the Princess be taken" without spending a visit,
    /// and with `solver` it is a proven loss. A node whose every move ends the
    /// game with its mover's loss or hands the opponent such a win is valued
    /// -1 for its mover instead of the network's value (a loss in two plies;
    /// the solver then marks it proven). Costs one `has_winning_move` per
    /// child per expansion (`BENCHMARKS.md`). Default false.
    pub leaf_threat_check: bool,
    /// Trap proofs (MCTS-minimax hybrid, Baier & Winands, IEEE TCIAIG 2015;
    /// module `mcts`, "prove"): plies of the shallow exact proofs the tree
    /// runs through the game interface (`GameState::has_winning_move`,
    /// `GameState::threatens_win`). 0: none. 1: the two-ply threat check of
    /// [`MctsConfig::leaf_threat_check`] at every expansion (a child whose
    /// side to move wins at once is a proven loss for the move into it).
    /// 3: that, and a leaf whose side to move forces a win within three
    /// plies is valued as the proven win it is; and for every move of the
    /// root before the search (exhaustively, zugzwangs included), and for
    /// each move of a node that holds [`MctsConfig::trap_visits`] visits
    /// just before the search first enters it, whether the opponent then
    /// forces a win within three plies (a trap: such a move is a proven
    /// loss, and the search chooses again). A position is proven once in a
    /// tree. Needs
    /// `terminal_children`; two-player games only (off with more value
    /// players). 5: as 3, and the root's moves are also proven against
    /// forced wins of the opponent within five plies (once per search; the
    /// five-ply proofs skip first moves without a threat). The cost per
    /// simulation is in `BENCHMARKS.md`. Default 3.
    pub trap_plies: u32,
    /// Visits after which a node's moves get the trap proofs of
    /// [`MctsConfig::trap_plies`] = 3 as the search enters them (the root's
    /// always do). Default 8; >= 1.
    pub trap_visits: u32,
    /// Draw utility in the search, lc0's "draw score" made symmetric: a move
    /// that ends the game in a draw (Jetan's Chief taken by another piece, a
    /// repetition, a cap) is worth `-draw_penalty` to the side that plays it,
    /// so that neither side takes a draw its evaluation rates as even. The
    /// game's result, and every training target, stay the rules' own (a draw
    /// is 0). Range 0..=0.5. Default 0; self-play draws one per game from
    /// `selfplay.draw_penalty` when that is set.
    pub draw_penalty: f32,
    /// Contempt (lc0's name; KataGo's draw utility): a draw is worth
    /// `-contempt` to one side, the *contempt side*, and `+contempt` to the
    /// other, so the search stays zero-sum (one value per node, negated from
    /// ply to ply) while the contempt side plays away from draws and the
    /// other side towards them. It counts in the exact values of finished
    /// games and proofs, and at every leaf through the network's draw
    /// probability: a leaf is worth `W - L + u D` to its side to move, `u`
    /// that side's draw utility (lc0's WDL contempt). With
    /// [`ContemptMode::Side`] the contempt side is the side to move at the
    /// root when the tree is made or reset (the engine's side in a match),
    /// and self-play picks a side at random per game
    /// ([`crate::Mcts::set_contempt`]), so the games' mix of draw-seekers and
    /// draw-avoiders is symmetric; with [`ContemptMode::Material`] it is the
    /// side ahead on material in each valued position. Self-play draws each
    /// game's contempt uniformly from `[0, contempt]`. The game's result, and every training
    /// target, stay the rules' own. Range 0..=0.5; two-player games only.
    /// Default 0 (off).
    pub contempt: f32,
    /// Who the contempt is against ([`ContemptMode`]). Default `side`.
    pub contempt_mode: ContemptMode,
    /// Draw aversion: a draw is worth `-draw_aversion` to **both** sides, so
    /// neither takes a draw (Jetan's Chief taken by another piece, a cap)
    /// that its evaluation rates as even, and neither needs to guard against
    /// one. Not zero-sum: each node's sum holds its chooser's own utility,
    /// `W - L - a D` from that side's view (a max^n value of two players;
    /// the solver's and the trap proofs' outcomes are unchanged, since both
    /// sides still rank win > draw > loss). It counts in finished games,
    /// proven draws and at every leaf through the (win, draw, loss) head's
    /// draw probability `D`. Self-play draws each game's aversion uniformly
    /// from `[0, draw_aversion]`; the result and every training target stay
    /// the rules' own, but the root's value and Q are utilities. Range
    /// 0..=0.5; two-player games only. Default 0 (off).
    pub draw_aversion: f32,
    /// Weight of the static score utility (KataGo's `staticScoreUtilityFactor`;
    /// Wu, "Accelerating Self-Play Learning in Go", arXiv:1902.10565, §4.2,
    /// score maximisation). With a network that has a score head
    /// ([`Evaluation::score`](crate::Evaluation::score)), in a game with
    /// points (`GameState::HAS_SCORE`), a leaf is worth its *utility*
    /// `value + w_static * f(s / scale) + w_dynamic * f((s - s_root) / scale)`
    /// to its side to move instead of its value, with `s` the expected final
    /// point difference for that side, `s_root` the root's expected point
    /// difference when the search began (for the same side), `scale`
    /// [`MctsConfig::score_utility_scale`] and `f(x) = (2 / pi) atan(x)`,
    /// so each term lies in `(-w, w)`. A finished game's utility uses its
    /// final point difference. The utility is what the search averages and
    /// maximises; the reported values (`SearchResult::q`, `root_value`)
    /// leave it out. Without a score (no score head, Jetan) the search is
    /// unchanged. Range 0..=1; two-player games only. Default 0 (off).
    pub static_score_utility: f32,
    /// Weight of the dynamic score utility (KataGo's
    /// `dynamicScoreUtilityFactor`): the term `f((s - s_root) / scale)` of
    /// [`MctsConfig::static_score_utility`]'s formula, centred on the root's
    /// expected point difference so that the search prefers a larger lead
    /// (or a smaller deficit) than it expects now even when far ahead or
    /// behind. Range 0..=1; two-player games only. Default 0 (off).
    pub dynamic_score_utility: f32,
    /// The point difference at which a score utility term reaches half its
    /// weight (`f(1) = 0.5`), in the game's points (Martian Chess: pips;
    /// its two sets hold 36, and a game is typically decided by 0-20).
    /// Default 10; > 0.
    pub score_utility_scale: f32,
}

/// Which side a draw is worth `-contempt` to ([`MctsConfig::contempt`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContemptMode {
    /// One side for the whole tree: the side to move at the root (the
    /// engine's), or in self-play a side drawn at random per game.
    #[default]
    Side,
    /// In every position where a draw is valued (a finished game, a leaf),
    /// the side ahead on material there (`GameState::material_leader`;
    /// level material: no contempt). Still zero-sum: the side ahead plays
    /// away from draws, the side behind towards them, as a human would.
    Material,
}

/// The rule that picks the root child of each simulation ([`MctsConfig::root_selection`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RootSelection {
    /// PUCT, as at every other node (AlphaZero).
    #[default]
    Puct,
    /// Gumbel-top-k with sequential halving (Gumbel MuZero).
    Gumbel,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            c_puct_init: 1.25,
            c_puct_base: 19652.0,
            fpu_reduction: 0.25,
            dirichlet_alpha_total: 10.0,
            noise_fraction: 0.25,
            leaves_per_batch: 1,
            terminal_children: true,
            solver: true,
            root_selection: RootSelection::Puct,
            gumbel_considered: 16,
            gumbel_c_visit: 50.0,
            gumbel_c_scale: 0.1,
            play_tree_reuse: false,
            forced_playouts_k: 0.0,
            leaf_threat_check: false,
            trap_plies: 3,
            trap_visits: 8,
            draw_penalty: 0.0,
            contempt: 0.0,
            contempt_mode: ContemptMode::Side,
            draw_aversion: 0.0,
            static_score_utility: 0.0,
            dynamic_score_utility: 0.0,
            score_utility_scale: 10.0,
        }
    }
}

impl MctsConfig {
    /// Checks ranges; the error names the field.
    ///
    /// # Errors
    /// A message `search.<field>: ...` for the first value out of range.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.c_puct_init > 0.0 && self.c_puct_init.is_finite()) {
            return Err(format!("search.c_puct_init must be > 0, got {}", self.c_puct_init));
        }
        if !(self.c_puct_base > 0.0 && self.c_puct_base.is_finite()) {
            return Err(format!("search.c_puct_base must be > 0, got {}", self.c_puct_base));
        }
        if !(0.0..=2.0).contains(&self.fpu_reduction) {
            return Err(format!("search.fpu_reduction must be in 0..=2, got {}", self.fpu_reduction));
        }
        if !(self.dirichlet_alpha_total > 0.0 && self.dirichlet_alpha_total.is_finite()) {
            return Err(format!("search.dirichlet_alpha_total must be > 0, got {}", self.dirichlet_alpha_total));
        }
        if !(0.0..=1.0).contains(&self.noise_fraction) {
            return Err(format!("search.noise_fraction must be in 0..=1, got {}", self.noise_fraction));
        }
        if self.leaves_per_batch == 0 || self.leaves_per_batch > 256 {
            return Err(format!("search.leaves_per_batch must be in 1..=256, got {}", self.leaves_per_batch));
        }
        if !(1..=1024).contains(&self.gumbel_considered) {
            return Err(format!("search.gumbel_considered must be in 1..=1024, got {}", self.gumbel_considered));
        }
        for (name, x) in [("gumbel_c_visit", self.gumbel_c_visit), ("gumbel_c_scale", self.gumbel_c_scale)] {
            if !(x >= 0.0 && x.is_finite()) {
                return Err(format!("search.{name} must be >= 0, got {x}"));
            }
        }
        if !(0.0..=10.0).contains(&self.forced_playouts_k) {
            return Err(format!("search.forced_playouts_k must be in 0..=10, got {}", self.forced_playouts_k));
        }
        if self.forced_playouts_k > 0.0 && self.root_selection == RootSelection::Gumbel {
            return Err(format!(
                "search.forced_playouts_k = {} needs search.root_selection = \"puct\": forced playouts act on \
                 PUCT searches with Dirichlet noise, and Gumbel root search has none (set it to 0)",
                self.forced_playouts_k
            ));
        }
        if ![0, 1, 3, 5].contains(&self.trap_plies) {
            return Err(format!("search.trap_plies must be 0, 1, 3 or 5, got {}", self.trap_plies));
        }
        if self.trap_visits == 0 {
            return Err("search.trap_visits must be >= 1, got 0".to_string());
        }
        if !(0.0..=0.5).contains(&self.draw_penalty) {
            return Err(format!("search.draw_penalty must be in 0..=0.5, got {}", self.draw_penalty));
        }
        if !(0.0..=0.5).contains(&self.contempt) {
            return Err(format!("search.contempt must be in 0..=0.5, got {}", self.contempt));
        }
        if !(0.0..=0.5).contains(&self.draw_aversion) {
            return Err(format!("search.draw_aversion must be in 0..=0.5, got {}", self.draw_aversion));
        }
        for (name, x) in
            [("static_score_utility", self.static_score_utility), ("dynamic_score_utility", self.dynamic_score_utility)]
        {
            if !(0.0..=1.0).contains(&x) {
                return Err(format!("search.{name} must be in 0..=1, got {x}"));
            }
        }
        if !(self.score_utility_scale > 0.0 && self.score_utility_scale.is_finite()) {
            return Err(format!("search.score_utility_scale must be > 0 (points), got {}", self.score_utility_scale));
        }
        if self.leaf_threat_check && !self.terminal_children {
            return Err("search.leaf_threat_check extends search.terminal_children: set terminal_children = true \
                        (or leaf_threat_check = false)"
                .to_string());
        }
        if self.trap_plies > 0 && !self.terminal_children {
            return Err(format!(
                "search.trap_plies = {} needs search.terminal_children = true (or trap_plies = 0)",
                self.trap_plies
            ));
        }
        Ok(())
    }

    /// [`MctsConfig::validate`], and that the settings fit a game of `players`
    /// value players (`GameState::num_players`): with more than two (max^n,
    /// four-player free-for-all) the leaf threat check and a draw penalty are
    /// refused, since they assume a two-player zero-sum game. The solver and
    /// the trap proofs, on by default, are turned off by the tree there
    /// ([`crate::Mcts::new`]).
    ///
    /// # Errors
    /// As [`MctsConfig::validate`], or `search.leaf_threat_check ...` /
    /// `search.draw_penalty ...` / `search.contempt ...` /
    /// `search.draw_aversion ...` / `search.static_score_utility ...` /
    /// `search.dynamic_score_utility ...` naming the number of players.
    pub fn validate_for_players(&self, players: usize) -> Result<(), String> {
        self.validate()?;
        if players > 2 {
            let settings = [
                ("leaf_threat_check", self.leaf_threat_check, "false"),
                ("draw_penalty", self.draw_penalty > 0.0, "0"),
                ("contempt", self.contempt > 0.0, "0"),
                ("draw_aversion", self.draw_aversion > 0.0, "0"),
                ("static_score_utility", self.static_score_utility > 0.0, "0"),
                ("dynamic_score_utility", self.dynamic_score_utility > 0.0, "0"),
            ];
            for (name, on, off) in settings {
                if on {
                    return Err(format!(
                        "search.{name} assumes a two-player zero-sum game, and this game has {players} value \
                         players (free-for-all, max^n search): set it to {off}"
                    ));
                }
            }
        }
        Ok(())
    }
}
