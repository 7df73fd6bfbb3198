//! What a search reports: the root statistics ([`SearchResult`]), the
//! outcome of one selection ([`Gather`]), and the seeded tie-break order of
//! moves ([`tie_rank`]) that the move to play and selection share.

use std::cmp::Ordering;

use martian_rules::{mix64, Move};

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
    /// when unvisited; parallel to `visits`. Without the score utility
    /// ([`MctsConfig::static_score_utility`](crate::MctsConfig::static_score_utility)),
    /// which the search adds to the values it averages.
    pub q: Vec<Option<f32>>,
    /// Mean value of the root for its side to move, in `[-1, 1]` (without
    /// the score utility, as `q`).
    pub root_value: f32,
    /// The search's tie-break seed ([`Mcts::tie_seed`](crate::Mcts::tie_seed)), which
    /// [`SearchResult::best_move`] uses for moves tied on visits, prior and Q.
    pub tie_seed: u64,
    /// With [`MctsConfig::solver`](crate::MctsConfig::solver): the proven value of each root move for the
    /// root's side to move (+1 win, 0 draw, -1 loss), `None` when unproven;
    /// parallel to `visits` (all `None` without the solver).
    pub exact: Vec<Option<f32>>,
    /// With the solver: plies from the root to the end of the game under
    /// each proven root move (the move itself included: 1 for a move that
    /// wins at once), parallel to `visits`; 0 where `exact` is `None`.
    /// [`SearchResult::best_move`] plays the shortest win and, when every
    /// move is lost, the longest resistance.
    pub exact_plies: Vec<u16>,
    /// With [`RootSelection::Gumbel`](crate::RootSelection::Gumbel): the move sequential halving chose
    /// (the surviving candidate with the most visits and the largest
    /// `g + log prior + sigma(completed Q)`).
    pub chosen: Option<Move>,
    /// The root's score lead: the expected final point difference for the
    /// root's side to move, in points ([`Mcts::root_score_lead`](crate::Mcts::root_score_lead));
    /// `None` when the evaluator gives no score (a network without a score
    /// head, a game without points).
    pub root_score: Option<f32>,
    /// Each root move's score lead for the root's side to move, in points
    /// (the mean of the scores backed up through it; KataGo's per-move
    /// `scoreLead`), `None` when unvisited or without scores; parallel to
    /// `visits`.
    pub scores: Vec<Option<f32>>,
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
pub(super) fn compare_stats(a: (u32, f32, Option<f32>), b: (u32, f32, Option<f32>)) -> Ordering {
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

    /// The move to play at move-choice temperature `temperature` (a strength
    /// level, [`crate::Level`]): a root move drawn with probability
    /// proportional to `visits^(1/T)` among the visited moves that are not
    /// proven losses, or, when the search holds fewer than two visits on
    /// them, to `prior^(1/T)` (the policy itself). A proven win, a root whose
    /// every move is lost, and `temperature <= 0` give [`SearchResult::best_move`].
    /// `None` when there are no root moves.
    ///
    /// # Example
    /// ```
    /// use martian_rules::martian::{MartianChess, MartianRules};
    /// use martian_rules::GameState;
    /// use martian_search::{Mcts, MctsConfig, UniformEvaluator};
    /// use rand::rngs::StdRng;
    /// use rand::SeedableRng;
    ///
    /// let start = MartianChess::new_game(&MartianRules::default())?;
    /// let mut tree = Mcts::new(MctsConfig::default(), start);
    /// let mut rng = StdRng::seed_from_u64(1);
    /// let result = tree.search(&mut UniformEvaluator, 64, false, &mut rng)?;
    /// assert_eq!(result.sample_move(0.0, &mut rng), result.best_move());
    /// let m = result.sample_move(1.0, &mut rng).expect("a legal move");
    /// assert!(result.visits.iter().any(|&(v, n)| v == m && n > 0), "a move the search visited");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn sample_move<R: rand::Rng + ?Sized>(&self, temperature: f32, rng: &mut R) -> Option<Move> {
        let n = self.visits.len();
        let won = |i: usize| self.exact_at(i).is_some_and(|v| v >= 1.0);
        let open = |i: usize| !self.exact_at(i).is_some_and(|v| v <= -1.0);
        if temperature.is_nan() || temperature <= 0.0 || (0..n).any(won) || !(0..n).any(open) {
            return self.best_move();
        }
        let visited: u32 = (0..n).filter(|&i| open(i)).map(|i| self.visits[i].1).sum();
        let raw = |i: usize| -> f64 {
            if visited >= 2 {
                f64::from(self.visits[i].1)
            } else {
                f64::from(self.priors.get(i).copied().unwrap_or(0.0).max(0.0))
            }
        };
        let top = (0..n).filter(|&i| open(i)).map(raw).fold(0.0, f64::max);
        if top.is_nan() || top <= 0.0 || top.is_infinite() {
            return self.best_move();
        }
        let inv = 1.0 / f64::from(temperature);
        let weight = |i: usize| if open(i) { (raw(i) / top).powf(inv) } else { 0.0 };
        let sum: f64 = (0..n).map(weight).sum();
        if sum.is_nan() || sum <= 0.0 || sum.is_infinite() {
            return self.best_move();
        }
        let mut x = rng.gen::<f64>() * sum;
        for i in 0..n {
            let w = weight(i);
            if w > 0.0 {
                if x < w {
                    return Some(self.visits[i].0);
                }
                x -= w;
            }
        }
        (0..n).rev().find(|&i| weight(i) > 0.0).map(|i| self.visits[i].0)
    }

    /// Every root move with its proven value for the side to move
    /// ([`SearchResult::exact`]; `None` when unproven), in the MCTS order:
    /// most visits, then the higher prior, then the higher Q, then the
    /// smaller [`tie_rank`] (the order [`SearchResult::best_move`] ranks
    /// moves by among moves not proven). The play-time check
    /// ([`crate::Veto`]) takes its replacement moves in this order.
    pub fn ranked(&self) -> Vec<(Move, Option<f32>)> {
        let seed = self.tie_seed;
        let mut idx: Vec<usize> = (0..self.visits.len()).collect();
        idx.sort_by(|&a, &b| {
            compare_stats(self.stats(b), self.stats(a))
                .then_with(|| tie_rank(seed, self.visits[a].0).cmp(&tie_rank(seed, self.visits[b].0)))
        });
        idx.into_iter().map(|i| (self.visits[i].0, self.exact_at(i))).collect()
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
