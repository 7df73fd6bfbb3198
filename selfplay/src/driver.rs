//! Lockstep self-play over many games (MiniZero / pgx / lc0 multigame style).
//!
//! One step of the loop:
//!
//! ```text
//! 1. CPU phase, all games in parallel (rayon): each game finishes moves whose
//!    search is done (choose, record, advance with tree reuse) and selects the
//!    next leaves of its search (virtual loss);
//! 2. one batched evaluation of every game's pending leaves (one forward pass);
//! 3. CPU phase in parallel: expand and back up.
//! ```
//!
//! Why lockstep rather than game threads + an inference thread: it needs no
//! channels or locks, gives the same games for the same seed (reproducible
//! tests), and with `games_in_flight` >= the batch size the network sees full
//! batches. Its cost, an idle accelerator during the CPU phase, is small when
//! the forward pass dominates, which `bench selfplay` measures.

use martian_rules::{GameState, Move, Outcome, Side};
use martian_search::{ContemptMode, EvalError, Evaluation, Evaluator, Mcts, MctsConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;

use crate::config::{PolicyTarget, SelfplayConfig};
use crate::record::{winner_name, Contempt, GameRecord, RECORD_FORMAT_VERSION};

/// One training sample from a fully searched move.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// Network input planes of the position, `INPUT_SHAPE` flattened.
    pub planes: Vec<f32>,
    /// Action indices of every legal move (the mask of the policy loss).
    pub legal: Vec<u32>,
    /// Policy target as `(action index, probability)` pairs (root visit shares).
    pub policy: Vec<(u32, f32)>,
    /// Final result for the side to move at this ply: +1, 0 or -1.
    pub value: f32,
    /// Ply of the position.
    pub ply: u32,
    /// Replay sampling weight (policy surprise weighting,
    /// `selfplay.policy_surprise_weight`); 1 = ordinary.
    pub weight: f32,
    /// Plies from this position to the end of the game (the final ply minus
    /// this ply; at least 1, since a finished position is never a sample):
    /// the target of the moves-left head. Set by [`set_end_targets`].
    pub moves_left: f32,
    /// The final point difference for the side to move at this ply (its
    /// points minus the opponent's at the end of the game, in points;
    /// `GameState::final_score_difference`): the target of the score head.
    /// `None` for a game without points. Set by [`set_end_targets`].
    pub score: Option<f32>,
    /// Games of more than two value players (`GameState::num_players`,
    /// four-player free-for-all): the final result value of every player
    /// (`GameState::player_values`, martian-chess §14.7) in mover-relative
    /// order, `values[k]` for player `(mover + k) % players`: the vector
    /// value head's target. Empty for two-player games. Set by
    /// [`set_end_targets`]; `value_target_q_weight` mixes only `value`.
    pub values: Vec<f32>,
}

impl Sample {
    /// A sample with the targets known before the game ends; `value`,
    /// `moves_left` and `score` are filled in by [`set_end_targets`] (and
    /// the value rule of the caller) once it has.
    pub fn new(planes: Vec<f32>, legal: Vec<u32>, policy: Vec<(u32, f32)>, ply: u32) -> Sample {
        Sample { planes, legal, policy, value: 0.0, ply, weight: 1.0, moves_left: 0.0, score: None, values: Vec::new() }
    }
}

/// Sets the targets of `sample` that the end of its game decides, from the
/// finished state `end`, for `side`, the side to move in the sample's
/// position: `value` = the result for `side` (+1, 0, -1), `moves_left` =
/// `end.ply() - sample.ply`, `score` = `end.final_score_difference(side)`
/// (the rules' final points; `None` for a game without them). Self-play then
/// replaces `value` for proven or q-mixed targets.
///
/// In a game of more than two value players the sample's mover is player
/// `mover` (`GameState::player_to_move` of its position): `values` = every
/// player's result (`GameState::player_values`) in mover-relative order, and
/// `value` = the mover's, `values[0]`. With two, `values` stays empty and
/// `mover` is not read.
pub fn set_end_targets<G: GameState>(sample: &mut Sample, side: Side, mover: usize, end: &G) {
    if let Some(o) = end.outcome() {
        sample.value = o.value_for(side);
    }
    sample.values.clear();
    let n = end.num_players();
    if n > 2 {
        if let Some(v) = end.player_values() {
            sample.values.extend((0..n).map(|k| v[(mover + k) % n]));
            sample.value = sample.values[0];
        }
    }
    sample.moves_left = end.ply().saturating_sub(sample.ply) as f32;
    sample.score = end.final_score_difference(side).map(|d| d as f32);
}

/// A finished game with its samples.
#[derive(Clone, Debug)]
pub struct FinishedGame {
    /// The game record.
    pub record: GameRecord,
    /// Training samples, in ply order.
    pub samples: Vec<Sample>,
    /// Statistics of the samples' policy targets.
    pub targets: TargetStats,
}

/// Sums over policy targets, to see whether search improves on the network:
/// a target close to the prior (KL near 0) or to uniform (entropy near
/// ln(legal moves)) carries little to learn from.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TargetStats {
    /// Targets summed over.
    pub count: u64,
    /// Sum of the targets' entropies, nats.
    pub entropy: f64,
    /// Sum of the targets' largest probabilities.
    pub top: f64,
    /// Sum of KL(target || network prior), nats.
    pub kl_to_prior: f64,
    /// Sum of ln(number of legal moves): the entropy of a uniform target.
    pub ln_legal: f64,
}

impl TargetStats {
    /// Adds one target (probabilities over legal moves, zeros allowed) with
    /// the network's priors over the same moves.
    pub fn add(&mut self, target: &[f32], prior: &[f32]) {
        let mut h = 0.0;
        let mut kl = 0.0;
        let mut top = 0.0f64;
        for (&t, &p) in target.iter().zip(prior) {
            let (t, p) = (t as f64, (p as f64).max(1e-12));
            if t > 0.0 {
                h -= t * t.ln();
                kl += t * (t / p).ln();
            }
            top = top.max(t);
        }
        self.count += 1;
        self.entropy += h;
        self.top += top;
        self.kl_to_prior += kl;
        self.ln_legal += (target.len().max(1) as f64).ln();
    }

    /// Adds another set of sums.
    pub fn merge(&mut self, o: &TargetStats) {
        self.count += o.count;
        self.entropy += o.entropy;
        self.top += o.top;
        self.kl_to_prior += o.kl_to_prior;
        self.ln_legal += o.ln_legal;
    }

    /// Means `(entropy, top probability, KL to the prior, ln legal)`; zeros when empty.
    pub fn means(&self) -> (f64, f64, f64, f64) {
        let n = self.count.max(1) as f64;
        (self.entropy / n, self.top / n, self.kl_to_prior / n, self.ln_legal / n)
    }
}

/// KL(target || prior) in nats over the same moves (prior floored at 1e-12).
fn kl_divergence(target: &[f32], prior: &[f32]) -> f64 {
    target
        .iter()
        .zip(prior)
        .filter(|(&t, _)| t > 0.0)
        .map(|(&t, &p)| t as f64 * (t as f64 / (p as f64).max(1e-12)).ln())
        .sum()
}

/// KataGo's policy surprise weighting (Wu 2019; `docs/KataGoMethods.md`):
/// of a game's total sample weight, the fraction `f` is shared in proportion
/// to each sample's KL(target || prior) and the rest evenly:
/// `w_i = (1 - f) + f * kl_i / mean(kl)`, so the game's weights still sum to
/// its number of samples and positions where the search disagreed with the
/// network are trained on more often. All ones when `f` is 0 or no sample
/// was surprising.
pub fn surprise_weights(kl: &[f32], f: f32) -> Vec<f32> {
    let n = kl.len();
    let mean = kl.iter().map(|&x| x.max(0.0) as f64).sum::<f64>() / n.max(1) as f64;
    if f <= 0.0 || mean.is_nan() || mean <= 1e-9 || !mean.is_finite() {
        return vec![1.0; n];
    }
    kl.iter().map(|&x| ((1.0 - f) as f64 + f as f64 * x.max(0.0) as f64 / mean) as f32).collect()
}

/// Counters of a self-play run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SelfplayStats {
    /// Games finished.
    pub games: u64,
    /// Moves played (plies).
    pub moves: u64,
    /// Training samples produced.
    pub samples: u64,
    /// Leaves evaluated (by the evaluator or the evaluation cache).
    pub evaluations: u64,
    /// Evaluator calls (batches); with the overlapped driver, batches sent
    /// to a device.
    pub batches: u64,
    /// Positions sent to the devices, after the evaluation cache (overlapped
    /// driver; 0 with a plain evaluator, whose cache is inside it).
    pub device_rows: u64,
    /// Wall-clock seconds spent in the evaluator ([`play_games`]); with the
    /// overlapped driver ([`crate::play_games_on_devices`]) the devices' mean
    /// busy time (`device_seconds / devices`), so `eval_seconds / seconds` is
    /// the network's share of the wall time either way.
    pub eval_seconds: f64,
    /// Devices that ran forward passes (0 with a plain evaluator).
    pub devices: u32,
    /// Seconds the devices spent in forward passes, summed over devices
    /// (overlapped driver).
    pub device_seconds: f64,
    /// Seconds of the CPU side's tree work: expansion and back-up of
    /// evaluated leaves, move choice, selection of the next leaves. With the
    /// overlapped driver this and the next three are per worker thread (the
    /// mean over its workers), so that `x / seconds` is a thread's share.
    pub search_seconds: f64,
    /// Seconds assembling batches (overlapped driver: giving the misses
    /// their rows, copying their action indices into the batch and encoding
    /// their packed planes straight into it; the look-ups run in the
    /// parallel tree phase, `search_seconds`).
    pub encode_seconds: f64,
    /// Seconds filling the evaluation cache with device outputs (overlapped
    /// driver; the softmax over the legal moves runs in the parallel tree
    /// phase, `search_seconds`).
    pub decode_seconds: f64,
    /// Seconds the CPU side waited for a device (overlapped driver).
    pub wait_seconds: f64,
    /// Wall-clock seconds spent in the `on_game` callback (writing the
    /// finished games out).
    pub output_seconds: f64,
    /// Wall-clock seconds in total.
    pub seconds: f64,
    /// Statistics of the policy targets of the recorded samples.
    pub targets: TargetStats,
}

/// The mover of a sample's position: its side and its value player
/// (`GameState::player_to_move`).
type Mover = (Side, usize);

pub(crate) struct Slot<G: GameState> {
    pub(crate) tree: Mcts<G>,
    pub(crate) rng: StdRng,
    game_id: u64,
    start: String,
    moves: Vec<String>,
    /// Samples with the mover (its side and its value player), the root's
    /// proven value (solver) and the root's search value, both for the mover.
    samples: Vec<(Sample, Mover, Option<f32>, f32)>,
    /// KL(target || network prior) of each sample, nats (for surprise weights).
    surprise: Vec<f32>,
    targets: TargetStats,
    searching: bool,
    full: bool,
    target: u32,
    pub(crate) finished: Option<Outcome>,
    pub(crate) active: bool,
}

/// Parameters of one self-play call.
pub struct PlayParams<'a, G: GameState> {
    /// Start position of every game.
    pub start: &'a G,
    /// Ids of the games to play, one game each. A game's moves depend only on
    /// `(seed, game id, evaluator)`, not on the other games in flight, so a
    /// run that replays the ids a kill lost gets the games it would have had.
    pub game_ids: &'a [u64],
    /// Seed; each game uses a generator seeded from `(seed, game id)`.
    pub seed: u64,
    /// Name of the model, stored in the records.
    pub model_name: String,
}

impl<G: GameState> Slot<G> {
    pub(crate) fn new(start: &G, cfg: &MctsConfig, game_id: u64, seed: u64) -> Self {
        let mut slot = Slot {
            tree: Mcts::new(cfg.clone(), start.clone()),
            rng: StdRng::seed_from_u64(seed ^ game_id.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            game_id,
            start: start.to_position(),
            moves: Vec::new(),
            samples: Vec::new(),
            surprise: Vec::new(),
            targets: TargetStats::default(),
            searching: false,
            full: false,
            target: 0,
            finished: None,
            active: true,
        };
        // Ties between equally good moves follow a seeded order per game
        // (`Mcts::tie_seed`), not the move generator's order.
        slot.tree.set_tie_seed(slot.rng.gen());
        // Each game its own draw utility in [0, search.draw_penalty] (randomised,
        // as KataGo and lc0 vary theirs per game); no draw when it is off.
        if cfg.draw_penalty > 0.0 {
            let d = slot.rng.gen::<f32>() * cfg.draw_penalty;
            slot.tree.set_draw_penalty(d);
        }
        // Each game its own draw aversion in [0, search.draw_aversion] (both
        // sides dislike a draw); no draw of the generator when it is off.
        if cfg.draw_aversion > 0.0 && start.num_players() == 2 {
            let a = slot.rng.gen::<f32>() * cfg.draw_aversion;
            slot.tree.set_draw_aversion(a);
        }
        // Each game one side that avoids draws and one that seeks them, with a
        // contempt uniform in [0, search.contempt] (KataGo and lc0 randomise
        // their draw utility per game); no draw of the generator when off.
        // With `contempt_mode = "material"` the side is the one ahead in each
        // position, and only the contempt is drawn.
        if cfg.contempt > 0.0 && start.num_players() == 2 {
            let side = match cfg.contempt_mode {
                ContemptMode::Side if slot.rng.gen::<bool>() => Side::South,
                ContemptMode::Side => Side::North,
                ContemptMode::Material => start.side_to_move(),
            };
            let c = slot.rng.gen::<f32>() * cfg.contempt;
            slot.tree.set_contempt(side, c);
        }
        slot
    }

    /// CPU phase: play finished searches, then queue leaves. Returns when the
    /// tree has pending leaves or the game is over.
    pub(crate) fn step(&mut self, cfg: &SelfplayConfig) {
        loop {
            if let Some(o) = self.tree.root_state().outcome() {
                self.finished = Some(o);
                return;
            }
            if !self.searching {
                self.full = cfg.full_search_prob >= 1.0 || self.rng.gen::<f32>() < cfg.full_search_prob;
                let sims = if self.full { cfg.simulations } else { cfg.cheap_simulations };
                // Gumbel root search explores through its Gumbel sample in every
                // search; PUCT gets Dirichlet noise in full searches only.
                let gumbel = self.tree.config().root_selection == martian_search::RootSelection::Gumbel;
                let noise = cfg.root_noise && (self.full || gumbel);
                self.tree.begin_search(noise, sims, &mut self.rng);
                if self.full {
                    // A full search's policy target gives every root move its
                    // proven value (completed Q weighs unvisited moves too); a
                    // cheap search only chooses the move to play, so its root
                    // moves are proven as the search reaches them.
                    self.tree.prove_root_moves_eagerly();
                }
                self.target = self.tree.child_visits() + sims;
                self.searching = true;
            }
            let done = self.tree.child_visits();
            if done >= self.target && self.tree.root().kind == martian_search::mcts::NodeKind::Expanded {
                self.finish_move(cfg);
                continue;
            }
            let per = self.tree.config().leaves_per_batch.max(1) as usize;
            let want = per.min(self.target.saturating_sub(done).max(1) as usize);
            self.tree.gather(want, &mut self.rng);
            if self.tree.num_pending() > 0 {
                return;
            }
        }
    }

    fn finish_move(&mut self, cfg: &SelfplayConfig) {
        let state = self.tree.root_state();
        let ply = state.ply();
        if self.full {
            let res = self.tree.result();
            let total: u32 = res.visits.iter().map(|v| v.1).sum();
            if total > 0 {
                let [c, h, w] = G::INPUT_SHAPE;
                let mut planes = vec![0.0; c * h * w];
                state.encode(&mut planes);
                // Dense target over the legal moves, in legal-move order.
                let dense: Vec<f32> = match cfg.policy_target {
                    // Policy target pruning (KataGo): the forced playouts taken out
                    // again; the move below is still chosen from all the visits.
                    PolicyTarget::Visits if cfg.policy_target_pruning && self.tree.forced_playouts() => {
                        let pruned = self.tree.pruned_visits();
                        let kept = pruned.iter().sum::<u32>().max(1) as f32;
                        pruned.iter().map(|&n| n as f32 / kept).collect()
                    }
                    PolicyTarget::Visits => res.visits.iter().map(|v| v.1 as f32 / total as f32).collect(),
                    PolicyTarget::CompletedQ => {
                        self.tree.improved_policy(cfg.c_visit, cfg.c_scale, cfg.completed_q_rescale)
                    }
                };
                let prior = self.tree.network_priors();
                self.targets.add(&dense, &prior);
                self.surprise.push(kl_divergence(&dense, &prior) as f32);
                let min = if cfg.policy_target == PolicyTarget::Visits { 0.0 } else { 1e-6 };
                let policy = res
                    .visits
                    .iter()
                    .zip(&dense)
                    .filter(|(_, &p)| p > min)
                    .map(|(&(m, _), &p)| (state.action_index(m) as u32, p))
                    .collect();
                let legal = res.visits.iter().map(|&(m, _)| state.action_index(m) as u32).collect();
                let sample = Sample::new(planes, legal, policy, ply);
                let mover = (state.side_to_move(), state.player_to_move());
                self.samples.push((sample, mover, self.tree.root_exact(), res.root_value));
            }
        }
        let t = if (ply as u64) < cfg.temperature_plies as u64 { cfg.temperature } else { cfg.final_temperature };
        let mv: Move = match self.tree.choose_move(t, &mut self.rng) {
            Some(m) => m,
            None => {
                // No visited child (e.g. simulations exhausted on terminals): pick the first legal move.
                let mut v = Vec::new();
                state.legal_moves(&mut v);
                v[0]
            }
        };
        self.moves.push(state.move_to_string(mv));
        self.tree.advance(mv);
        self.searching = false;
    }

    pub(crate) fn take_finished(&mut self, model: &str, cfg: &SelfplayConfig) -> FinishedGame {
        let (q_weight, draw_value) = (cfg.value_target_q_weight, cfg.draw_value);
        let outcome = self.finished.take().expect("finished game");
        let state = self.tree.root_state();
        let weights = surprise_weights(&self.surprise, cfg.policy_surprise_weight);
        // A drawn two-player game judged by the rules' adjudication (`draw_value`; off at 0).
        let adjudicated = if draw_value > 0.0 && state.num_players() == 2 && outcome.winner.is_none() {
            state.draw_adjudication()
        } else {
            None
        };
        self.surprise.clear();
        let samples: Vec<Sample> = self
            .samples
            .drain(..)
            .zip(weights)
            .map(|((mut s, (side, mover), exact, root_q), w)| {
                s.weight = w;
                set_end_targets(&mut s, side, mover, state);
                // A proven position's value is exact; otherwise the result,
                // mixed with the search's value when `value_target_q_weight` > 0
                // (more players: the mover's result, `values[0]`).
                let result = s.values.first().copied().unwrap_or_else(|| match adjudicated {
                    Some(ahead) if ahead == side => draw_value,
                    Some(_) => -draw_value,
                    None => outcome.value_for(side),
                });
                s.value = match exact {
                    Some(v) => v,
                    None => (1.0 - q_weight) * result + q_weight * root_q.clamp(-1.0, 1.0),
                };
                s
            })
            .collect();
        let record = GameRecord {
            format_version: RECORD_FORMAT_VERSION,
            game: G::KIND,
            rules: serde_json::to_value(state.rules()).ok(),
            game_id: self.game_id,
            start: std::mem::take(&mut self.start),
            moves: std::mem::take(&mut self.moves),
            winner: winner_name(state),
            reason: outcome.reason,
            plies: state.ply(),
            samples: samples.len() as u32,
            model: model.to_string(),
            contempt: match self.tree.contempt() {
                (_, c) if c > 0.0 && self.tree.config().contempt_mode == ContemptMode::Material => {
                    Some(Contempt { side: "material".to_string(), value: c })
                }
                (side, c) if c > 0.0 => Some(Contempt { side: G::side_name(side).to_string(), value: c }),
                _ => None,
            },
            draw_aversion: Some(self.tree.config().draw_aversion).filter(|&a| a > 0.0),
            label_scores: Vec::new(),
        };
        FinishedGame { record, samples, targets: std::mem::take(&mut self.targets) }
    }
}

/// Plays one game of self-play per id of `params.game_ids` with `games_in_flight` games at a
/// time, evaluating all their leaves in shared batches, and hands each
/// finished game to `on_game` (in finishing order).
///
/// # Errors
/// The evaluator's error, or the error returned by `on_game` (as an [`EvalError`]).
pub fn play_games<G, E, F>(
    params: &PlayParams<'_, G>,
    cfg: &SelfplayConfig,
    mcts: &MctsConfig,
    evaluator: &mut E,
    mut on_game: F,
) -> Result<SelfplayStats, EvalError>
where
    G: GameState,
    E: Evaluator<G>,
    F: FnMut(FinishedGame, &SelfplayStats) -> Result<(), String>,
{
    let t0 = std::time::Instant::now();
    let mut stats = SelfplayStats::default();
    let ids = params.game_ids;
    let in_flight = (cfg.games_in_flight as usize).min(ids.len());
    let mut slots: Vec<Slot<G>> =
        ids[..in_flight].iter().map(|&id| Slot::new(params.start, mcts, id, params.seed)).collect();
    let mut started = in_flight;
    let mut evals: Vec<Evaluation> = Vec::new();
    let mut counts: Vec<usize> = vec![0; in_flight];
    loop {
        let ts = std::time::Instant::now();
        slots.par_iter_mut().filter(|s| s.active).for_each(|s| s.step(cfg));
        stats.search_seconds += ts.elapsed().as_secs_f64();
        // Finished games: report and restart.
        for s in slots.iter_mut().filter(|s| s.active && s.finished.is_some()) {
            let fg = s.take_finished(&params.model_name, cfg);
            stats.games += 1;
            stats.moves += fg.record.plies as u64;
            stats.samples += fg.samples.len() as u64;
            stats.targets.merge(&fg.targets);
            stats.seconds = t0.elapsed().as_secs_f64();
            let to = std::time::Instant::now();
            on_game(fg, &stats).map_err(EvalError)?;
            stats.output_seconds += to.elapsed().as_secs_f64();
            if started < ids.len() {
                *s = Slot::new(params.start, mcts, ids[started], params.seed);
                started += 1;
                s.step(cfg);
            } else {
                s.active = false;
            }
        }
        if slots.iter().all(|s| !s.active) {
            break;
        }
        // One batched evaluation of all pending leaves.
        let mut positions: Vec<&G> = Vec::new();
        let mut moves: Vec<&[Move]> = Vec::new();
        for (i, s) in slots.iter().enumerate() {
            counts[i] = if s.active { s.tree.num_pending() } else { 0 };
            if s.active {
                for (p, m) in s.tree.pending_leaves() {
                    positions.push(p);
                    moves.push(m);
                }
            }
        }
        if positions.is_empty() {
            continue;
        }
        let te = std::time::Instant::now();
        evaluator.evaluate(&positions, &moves, &mut evals)?;
        stats.eval_seconds += te.elapsed().as_secs_f64();
        stats.evaluations += positions.len() as u64;
        stats.batches += 1;
        drop(positions);
        drop(moves);
        // Scatter results back, in parallel.
        let mut chunks: Vec<&[Evaluation]> = Vec::with_capacity(slots.len());
        let mut off = 0;
        for &c in &counts {
            chunks.push(&evals[off..off + c]);
            off += c;
        }
        let ts = std::time::Instant::now();
        slots.par_iter_mut().zip(chunks.into_par_iter()).for_each(|(s, e)| {
            if !e.is_empty() {
                s.tree.apply_evaluations(e, &mut s.rng);
            }
        });
        stats.search_seconds += ts.elapsed().as_secs_f64();
    }
    stats.seconds = t0.elapsed().as_secs_f64();
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::surprise_weights;

    #[test]
    fn surprise_weights_keep_the_games_total_and_follow_the_kl() {
        let kl = [0.0f32, 0.5, 1.5, 2.0];
        let w = surprise_weights(&kl, 0.5);
        assert!((w.iter().sum::<f32>() - 4.0).abs() < 1e-5);
        // mean KL 1.0: w = 0.5 + 0.5 * kl
        assert_eq!(w, vec![0.5, 0.75, 1.25, 1.5]);
        assert_eq!(surprise_weights(&kl, 0.0), vec![1.0; 4]);
        assert_eq!(surprise_weights(&[0.0, 0.0], 0.5), vec![1.0; 2]);
        let all = surprise_weights(&kl, 1.0);
        assert_eq!(all[0], 0.0);
        assert!((all[3] - 2.0).abs() < 1e-6);
    }
}
