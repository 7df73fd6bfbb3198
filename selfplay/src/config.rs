//! Self-play settings (the `[selfplay]` table of a run config).

use serde::{Deserialize, Serialize};

/// How self-play games are played and recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplayConfig {
    /// Games played at once per device; their leaves share the device's
    /// network batches (lockstep batching). With several devices
    /// (`device = "cuda:all"` or a list) each device gets this many games.
    /// Range 1..=4096. Default 32.
    pub games_in_flight: u32,
    /// Game groups per device: the games in flight are split into this many
    /// groups, and while one group's batch is on the device the CPU works on
    /// another's tree search (encode, expansion, back-up, selection), so that
    /// neither waits for the other (`docs/architecture.md`). 1 =
    /// lockstep, the device idles during the CPU phase. A game's moves depend
    /// on the batches it was evaluated in, so the same seed gives the same
    /// games for the same number of groups (and devices). Range 1..=64.
    /// Default 1.
    pub groups: u32,
    /// Simulations (new root-child visits) of a full search. Range 1..=100000. Default 64.
    pub simulations: u32,
    /// Simulations of a cheap search (KataGo playout cap randomization).
    /// Range 1..=simulations. Default 16.
    pub cheap_simulations: u32,
    /// Probability that a move gets a full search; only full searches become
    /// policy training targets and get root noise. 1.0 disables playout cap
    /// randomization. Range (0, 1]. Default 0.25 (KataGo).
    pub full_search_prob: f32,
    /// Move-choice temperature for the first `temperature_plies` plies
    /// (moves sampled with probability ~ visits^(1/T)). Default 1.0. Range 0..=10.
    pub temperature: f32,
    /// Plies played with `temperature`; later plies use `final_temperature`.
    /// Default 30 (AlphaZero).
    pub temperature_plies: u32,
    /// Temperature after `temperature_plies` (0 = most visited move). Default 0.
    pub final_temperature: f32,
    /// Mix Dirichlet noise into the root priors of full searches. Default true.
    pub root_noise: bool,
    /// Evaluation-cache entries (0 disables the cache). Default 200000 (lc0's NN cache).
    pub cache_size: usize,
    /// Games per replay shard file. Range 1..=100000. Default 32.
    pub games_per_shard: u32,
    /// Largest network batch. Default 256.
    pub max_batch: u32,
    /// When > 0, every self-play forward pass has exactly this many rows (the
    /// last chunk of a batch padded with zeros), so that on the CPU a
    /// position's network output does not depend on the other positions
    /// evaluated with it: a game's moves then depend only on its seed, id and
    /// network, and a run killed during self-play resumes to the games of an
    /// uninterrupted one. 0 = passes of any size up to `max_batch` (faster on
    /// a GPU, where results are not bit-reproducible anyway). Costs about 20%
    /// of self-play speed on the 2-core CPU (BENCHMARKS.md). Range 0..=65536.
    /// Default 0.
    pub fixed_batch: u32,
    /// When the pipeline resumes a generation whose self-play a kill
    /// interrupted (and `fixed_batch` is 0), play the games already done
    /// again with the missing ones, in id order, without writing them twice:
    /// the network batches are then those of the first attempt, so the
    /// resumed run's games are those of an uninterrupted run (on the CPU).
    /// Costs up to one self-play phase of computation per kill; turn off
    /// where kills are frequent (preemptible machines) or on a GPU. Default true.
    pub exact_resume: bool,
    /// Policy training target: `visits` (AlphaZero: root visit shares) or
    /// `completed_q` (Gumbel MuZero's improved policy
    /// `softmax(log prior + sigma(completed Q))`, see `Mcts::improved_policy`),
    /// which improves on the prior even when the simulations are few compared
    /// with the legal moves. Default `visits`.
    pub policy_target: PolicyTarget,
    /// `c_visit` of the completed-Q transform (mctx default 50).
    pub c_visit: f32,
    /// `c_scale` of the completed-Q transform (mctx default 0.1).
    pub c_scale: f32,
    /// How completed Q values are mapped before `sigma` (`Mcts::improved_policy`):
    /// `min_max` over the root's children (the paper's and mctx's) or `fixed`
    /// (`(q + 1) / 2`). Default `min_max`.
    pub completed_q_rescale: martian_search::QRescale,
    /// Weight `w` of the root's search value in the value target:
    /// `z' = (1 - w) z + w q_root` (lc0's "q ratio"; KataGo mixes search values
    /// into its targets too), which lowers the target's variance when games
    /// are long and noisy. 0 = the game result alone (AlphaZero). Positions
    /// the solver proved (`search.solver`) get their exact value whatever `w`.
    /// Range 0..=1. Default 0.
    pub value_target_q_weight: f32,
    /// The value target of a drawn two-player game whose final position the
    /// rules' adjudication orders (`GameState::draw_adjudication`; Jetan:
    /// seed 000's order of spec §8.4 over the pieces other than Chiefs and
    /// Princesses): `+d` for the side it favours and `-d` for the other,
    /// instead of 0, so that drawn games (most of Jetan's early ones: by a
    /// Chief's capture, the no-capture limit, the move cap) still teach the
    /// value head which side was ahead. A training target only: the game's
    /// result and record stay a draw. Not zero knowledge (the adjudication
    /// is a rule of the spec's variants, not of the game played). Proven
    /// positions keep their exact value; `value_target_q_weight` mixes the
    /// search value into it as into any result. Range 0..=1. Default 0 (off).
    pub draw_value: f32,
    /// KataGo's policy surprise weighting: the fraction `f` of each game's
    /// sample weight given in proportion to KL(policy target || network
    /// prior), so the replay window draws surprising positions more often
    /// (`driver::surprise_weights`; KataGo uses 0.5). 0 = every sample
    /// weighs 1. Range 0..=1. Default 0.
    pub policy_surprise_weight: f32,
    /// KataGo's policy target pruning (Wu 2019, arXiv:1902.10565, §3.1): the
    /// visit counts of a full search lose the forced playouts of
    /// `search.forced_playouts_k` before they become the policy target
    /// (`Mcts::pruned_visits`: every child but the most visited gives back
    /// up to `n_forced` visits while its PUCT score stays below the best
    /// child's; children left with one visit are dropped). The move played
    /// is still chosen from the unpruned visits. Needs `policy_target =
    /// "visits"`, `search.forced_playouts_k > 0` and `root_noise = true`
    /// (else a config error). Default false.
    pub policy_target_pruning: bool,
    /// Targets from a deeper search (**not zero**: an alpha-beta with the
    /// game's hand-made evaluation teaches): every sample is searched by
    /// `alphabeta:depth=label_depth` under the run's rules, its best move
    /// mixed into the policy target with weight `label_policy_weight` and its
    /// score, through the logistic curve of `label_score_scale`, into the
    /// value target with weight `label_value_weight` (the `label` module).
    /// Labelled on the rayon threads as each game finishes, before it is
    /// written. 0 = off. Range 0..=6. Default 0.
    pub label_depth: u32,
    /// The alpha-beta's best move's weight in the policy target. Range 0..=1. Default 0.5.
    pub label_policy_weight: f32,
    /// The alpha-beta score's weight in the value target. Range 0..=1. Default 0.5.
    pub label_value_weight: f32,
    /// The score (centi-units of the game's evaluation) that maps to a win
    /// probability of 0.73 (`1 / (1 + e^-1)`). Range (0, 100000]. Default 400.
    pub label_score_scale: f32,
}

/// What a sample's policy target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PolicyTarget {
    /// Root visit shares.
    Visits,
    /// Gumbel MuZero's improved policy from completed Q values.
    CompletedQ,
}

impl Default for SelfplayConfig {
    fn default() -> Self {
        SelfplayConfig {
            games_in_flight: 32,
            groups: 1,
            simulations: 64,
            cheap_simulations: 16,
            full_search_prob: 0.25,
            temperature: 1.0,
            temperature_plies: 30,
            final_temperature: 0.0,
            root_noise: true,
            cache_size: 200_000,
            games_per_shard: 32,
            max_batch: 256,
            fixed_batch: 0,
            exact_resume: true,
            policy_target: PolicyTarget::Visits,
            c_visit: 50.0,
            c_scale: 0.1,
            completed_q_rescale: martian_search::QRescale::MinMax,
            value_target_q_weight: 0.0,
            draw_value: 0.0,
            policy_surprise_weight: 0.0,
            policy_target_pruning: false,
            label_depth: 0,
            label_policy_weight: 0.5,
            label_value_weight: 0.5,
            label_score_scale: 400.0,
        }
    }
}

impl SelfplayConfig {
    /// The labelling settings (`label_*`).
    pub fn label_params(&self) -> crate::LabelParams {
        crate::LabelParams {
            depth: self.label_depth,
            policy_weight: self.label_policy_weight,
            value_weight: self.label_value_weight,
            score_scale: self.label_score_scale,
        }
    }

    /// Checks ranges; the error names the field.
    ///
    /// # Errors
    /// `selfplay.<field> ...` for the first value out of range.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=4096).contains(&self.games_in_flight) {
            return Err(format!("selfplay.games_in_flight must be in 1..=4096, got {}", self.games_in_flight));
        }
        if !(1..=64).contains(&self.groups) {
            return Err(format!("selfplay.groups must be in 1..=64, got {}", self.groups));
        }
        if !(1..=100_000).contains(&self.simulations) {
            return Err(format!("selfplay.simulations must be in 1..=100000, got {}", self.simulations));
        }
        if !(1..=self.simulations).contains(&self.cheap_simulations) {
            return Err(format!(
                "selfplay.cheap_simulations must be in 1..=simulations ({}), got {}",
                self.simulations, self.cheap_simulations
            ));
        }
        if !(self.full_search_prob > 0.0 && self.full_search_prob <= 1.0) {
            return Err(format!("selfplay.full_search_prob must be in (0, 1], got {}", self.full_search_prob));
        }
        for (name, t) in [("temperature", self.temperature), ("final_temperature", self.final_temperature)] {
            if !(0.0..=10.0).contains(&t) {
                return Err(format!("selfplay.{name} must be in 0..=10, got {t}"));
            }
        }
        if !(1..=100_000).contains(&self.games_per_shard) {
            return Err(format!("selfplay.games_per_shard must be in 1..=100000, got {}", self.games_per_shard));
        }
        if self.fixed_batch > 65_536 {
            return Err(format!("selfplay.fixed_batch must be in 0..=65536, got {}", self.fixed_batch));
        }
        if !(1..=65_536).contains(&self.max_batch) {
            return Err(format!("selfplay.max_batch must be in 1..=65536, got {}", self.max_batch));
        }
        if !(self.c_visit >= 0.0 && self.c_visit.is_finite() && self.c_scale >= 0.0 && self.c_scale.is_finite()) {
            return Err(format!(
                "selfplay.c_visit and selfplay.c_scale must be >= 0, got {} and {}",
                self.c_visit, self.c_scale
            ));
        }
        if !(0.0..=1.0).contains(&self.policy_surprise_weight) {
            return Err(format!(
                "selfplay.policy_surprise_weight must be in 0..=1, got {}",
                self.policy_surprise_weight
            ));
        }
        if !(0.0..=1.0).contains(&self.draw_value) {
            return Err(format!("selfplay.draw_value must be in 0..=1, got {}", self.draw_value));
        }
        if !(0.0..=1.0).contains(&self.value_target_q_weight) {
            return Err(format!("selfplay.value_target_q_weight must be in 0..=1, got {}", self.value_target_q_weight));
        }
        if self.label_depth > 6 {
            return Err(format!("selfplay.label_depth must be in 0..=6, got {}", self.label_depth));
        }
        for (name, w) in
            [("label_policy_weight", self.label_policy_weight), ("label_value_weight", self.label_value_weight)]
        {
            if !(0.0..=1.0).contains(&w) {
                return Err(format!("selfplay.{name} must be in 0..=1, got {w}"));
            }
        }
        if !(self.label_score_scale > 0.0 && self.label_score_scale <= 100_000.0) {
            return Err(format!("selfplay.label_score_scale must be in (0, 100000], got {}", self.label_score_scale));
        }
        Ok(())
    }

    /// The checks that involve the `[search]` table too: policy target
    /// pruning takes out forced playouts, so it needs them and a visit-count
    /// target.
    ///
    /// # Errors
    /// A message naming the keys that do not fit together.
    pub fn validate_with_search(&self, search: &martian_search::MctsConfig) -> Result<(), String> {
        if !self.policy_target_pruning {
            return Ok(());
        }
        if self.policy_target != PolicyTarget::Visits {
            return Err("selfplay.policy_target_pruning = true needs selfplay.policy_target = \"visits\" \
                        (it prunes visit counts; the completed-Q target has none to prune)"
                .to_string());
        }
        if search.forced_playouts_k <= 0.0 {
            return Err("selfplay.policy_target_pruning = true needs search.forced_playouts_k > 0 \
                        (it takes out the forced playouts; KataGo uses 2)"
                .to_string());
        }
        if !self.root_noise {
            return Err("selfplay.policy_target_pruning = true needs selfplay.root_noise = true \
                        (forced playouts act only in searches with root noise)"
                .to_string());
        }
        Ok(())
    }
}
