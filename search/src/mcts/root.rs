//! The root's own rules: Dirichlet noise, Gumbel root search with
//! sequential halving, forced playouts and KataGo's policy target pruning,
//! and the improved policy of Gumbel MuZero (policy targets).

use std::cmp::Ordering;

use martian_rules::{mix64, GameState, Move};
use rand::Rng;
use rand_distr::{Distribution, Gamma};

use super::node::{Node, NodeKind};
use super::result::{compare_stats, tie_rank};
use super::tree::Mcts;
use crate::puct::{c_puct, puct_score};

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

impl<G: GameState> Mcts<G> {
    /// Builds the Gumbel root search of the current search once the root is
    /// expanded: samples `g`, takes the top `m = min(gumbel_considered, legal
    /// moves, simulations)` moves by `g + log prior`, and sets the first round.
    pub(super) fn init_gumbel<R: Rng>(&mut self, rng: &mut R) {
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
    pub(super) fn gumbel_root_child(&mut self) -> u32 {
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
    pub(super) fn gumbel_choice(&self) -> Option<Move> {
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
    pub(super) fn apply_root_noise<R: Rng>(&mut self, rng: &mut R) {
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
            (Some(e), _, _) if solver => self.terminal_for_chooser(e),
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
    /// ([`MctsConfig::forced_playouts_k`](crate::MctsConfig::forced_playouts_k) > 0, PUCT root selection, and
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MctsConfig;
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
}
