//! Targets from a deeper search: self-play positions labelled by a
//! fixed-depth alpha-beta (`[selfplay] label_depth`).
//!
//! Each sample of a finished game gets the alpha-beta's best move mixed into
//! its policy target and the alpha-beta's score, mapped to a value through a
//! logistic win-probability curve, mixed into its value target, as NNUE
//! trainers mix a search's score with the game's result (Stockfish's
//! `nnue-pytorch` "lambda"; the curve `p = 1 / (1 + exp(-score / s))` is the
//! one fitted there to game results):
//!
//! * policy: `pi' = (1 - w_p) pi + w_p onehot(best move)`;
//! * value: `z' = (1 - w_v) z + w_v (2 p - 1)`, with `p` the win probability
//!   of the score for the side to move (a proven win or loss gives +1 / -1).
//!
//! The labels are written into the ordinary shards (nothing downstream
//! knows of them) and the raw scores into the game record
//! (`GameRecord::label_scores`), so that the scale `s` can be fitted to the
//! games' results. Each position is searched from an empty transposition
//! table, so a game's labels do not depend on which thread searched which
//! position or on the order: a resumed run writes the same shards.

use martian_search::alphabeta::MATE_BOUND;
use martian_search::{AbGame, AlphaBeta, AlphaBetaConfig, Limits};
use rayon::prelude::*;

use crate::driver::FinishedGame;

/// What [`label_game`] mixes in (from the `[selfplay]` table).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LabelParams {
    /// Alpha-beta depth in plies (quiescence at the horizon); 0 = no labels.
    pub depth: u32,
    /// `w_p`: the best move's weight in the policy target, 0..=1.
    pub policy_weight: f32,
    /// `w_v`: the score's weight in the value target, 0..=1.
    pub value_weight: f32,
    /// `s`: the score (centi-units) at which the win probability is
    /// `1 / (1 + e^-1)` (about 0.73).
    pub score_scale: f32,
}

/// Transposition table of each labelling search, MiB: a small one, cleared
/// before every position (module docs), costs less to clear than a
/// depth-3 or depth-4 search takes.
const LABEL_TT_MIB: usize = 1;

/// The value in [-1, 1] of an alpha-beta score (centi-units, side to move)
/// under the logistic curve of scale `s`: `2 / (1 + exp(-score / s)) - 1`,
/// i.e. `tanh(score / 2s)`; a proven win or loss (beyond
/// [`MATE_BOUND`]) is +1 or -1.
pub fn score_value(score: i32, s: f32) -> f32 {
    if score > MATE_BOUND {
        1.0
    } else if score < -MATE_BOUND {
        -1.0
    } else {
        (score as f32 / (2.0 * s.max(1e-3))).tanh()
    }
}

/// Labels every sample of `game` (module docs) with a depth
/// `params.depth` alpha-beta of the game's rules, the positions searched in
/// parallel on the current rayon pool, and stores the scores in
/// `game.record.label_scores` (one per sample, in sample order). Does
/// nothing when `params.depth` is 0.
///
/// Returns the points of a win-probability fit ([`fit_score_scale`]): each
/// sample's score with its value target before the mix mapped to `[0, 1]`
/// (the game's result for the side to move, 1 / 0.5 / 0, unless
/// `selfplay.value_target_q_weight` or `draw_value` changed it).
///
/// # Errors
/// The game's record does not replay under `rules` (its start position or a
/// move), or a sample's ply is not a ply of the game.
pub fn label_game<G: AbGame>(
    game: &mut FinishedGame,
    rules: &G::Rules,
    params: &LabelParams,
) -> Result<Vec<(i32, f32)>, String> {
    if params.depth == 0 || game.samples.is_empty() {
        return Ok(Vec::new());
    }
    let rec = &game.record;
    let fail = |m: String| format!("labelling game {}: {m}", rec.game_id);
    let mut g = G::from_position(&rec.start, rules).map_err(|e| fail(format!("start position: {e}")))?;
    // The positions of the samples, in sample order (samples are in ply order).
    let mut states: Vec<G> = Vec::with_capacity(game.samples.len());
    let mut moves = rec.moves.iter();
    for s in &game.samples {
        while g.ply() < s.ply {
            let m = moves.next().ok_or_else(|| fail(format!("no position at ply {}", s.ply)))?;
            let mv = g.parse_move(m).map_err(|e| fail(format!("move {m}: {e}")))?;
            g.play_unchecked(mv);
        }
        if g.ply() != s.ply {
            return Err(fail(format!("samples out of ply order at ply {}", s.ply)));
        }
        states.push(g.clone());
    }
    let cfg = AlphaBetaConfig { tt_mib: LABEL_TT_MIB, ..AlphaBetaConfig::default() };
    let limits = Limits::depth(params.depth);
    let labels: Vec<(Option<u32>, i32)> = states
        .par_iter()
        .map_init(
            || AlphaBeta::<G>::new(cfg.clone()),
            |ab, st| {
                ab.reset();
                let r = ab.search(st, &limits);
                (r.best_move.map(|m| st.action_index(m) as u32), r.score)
            },
        )
        .collect();
    let mut scores = Vec::with_capacity(labels.len());
    let mut points = Vec::with_capacity(labels.len());
    for (s, (best, score)) in game.samples.iter_mut().zip(labels) {
        points.push((score, (s.value + 1.0) / 2.0));
        if let Some(a) = best {
            mix_best_move(&mut s.policy, a, params.policy_weight);
        }
        s.value = (1.0 - params.value_weight) * s.value + params.value_weight * score_value(score, params.score_scale);
        scores.push(score);
    }
    game.record.label_scores = scores;
    Ok(points)
}

/// The scale `s` (centi-units) of the logistic win probability
/// `p = 1 / (1 + exp(-score / s))` that fits `(score, result)` points best
/// (maximum likelihood of the results in `[0, 1]`, a draw counting half,
/// as the win-rate models of Stockfish's WDL and NNUE trainers are fitted),
/// searched over `s` in 10..=100000 (golden section on `ln s`). Proven wins
/// and losses are left out. `None` with fewer than 20 points or when no
/// result leans either way (every point a draw: `s` would be infinite).
pub fn fit_score_scale(points: &[(i32, f32)]) -> Option<f32> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|(sc, _)| sc.abs() <= MATE_BOUND)
        .map(|&(sc, r)| (sc as f64, r.clamp(0.0, 1.0) as f64))
        .collect();
    if pts.len() < 20 || pts.iter().all(|&(_, r)| (r - 0.5).abs() < 1e-6) {
        return None;
    }
    // Negative log-likelihood; ln(1 + e^-x) written stably.
    let nll = |ln_s: f64| -> f64 {
        let s = ln_s.exp();
        pts.iter()
            .map(|&(sc, r)| {
                let x = sc / s;
                let softplus = |t: f64| if t > 0.0 { t + (-t).exp().ln_1p() } else { t.exp().ln_1p() };
                // -[r ln p + (1 - r) ln (1 - p)], ln p = -softplus(-x), ln(1 - p) = -softplus(x).
                r * softplus(-x) + (1.0 - r) * softplus(x)
            })
            .sum()
    };
    let (mut a, mut b) = (10f64.ln(), 100_000f64.ln());
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (b - g * (b - a), a + g * (b - a));
    let (mut fc, mut fd) = (nll(c), nll(d));
    for _ in 0..80 {
        if fc < fd {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = nll(c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = nll(d);
        }
    }
    Some(((a + b) / 2.0).exp() as f32)
}

/// `pi' = (1 - w) pi + w onehot(a)` on a sparse target of
/// `(action, probability)` pairs.
fn mix_best_move(policy: &mut Vec<(u32, f32)>, a: u32, w: f32) {
    let mut found = false;
    for (b, p) in policy.iter_mut() {
        *p *= 1.0 - w;
        if *b == a {
            *p += w;
            found = true;
        }
    }
    if !found {
        policy.push((a, w));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixing_keeps_a_distribution() {
        let mut p = vec![(3, 0.5), (7, 0.5)];
        mix_best_move(&mut p, 7, 0.5);
        assert_eq!(p, vec![(3, 0.25), (7, 0.75)]);
        mix_best_move(&mut p, 9, 0.2);
        let sum: f32 = p.iter().map(|x| x.1).sum();
        assert!((sum - 1.0).abs() < 1e-6);
        assert_eq!(p.last(), Some(&(9, 0.2)));
    }

    #[test]
    fn the_fit_finds_the_scale_that_made_the_results() {
        // Results drawn from p = 1 / (1 + exp(-score / 300)) by a fixed
        // low-discrepancy sequence: the fit recovers about 300.
        let mut pts = Vec::new();
        for i in 0..4000 {
            let score = (i % 200) * 10 - 1000;
            let p = 1.0 / (1.0 + (-(score as f64) / 300.0).exp());
            let u = (i as f64 * 0.618_033_988_75).fract();
            pts.push((score, if u < p { 1.0 } else { 0.0 }));
        }
        let s = fit_score_scale(&pts).unwrap();
        assert!((s - 300.0).abs() < 30.0, "{s}");
        assert_eq!(fit_score_scale(&pts[..10]), None);
        let draws: Vec<(i32, f32)> = (0..100).map(|i| (i * 7, 0.5)).collect();
        assert_eq!(fit_score_scale(&draws), None);
        // Proven results do not count.
        let mates: Vec<(i32, f32)> = (0..100).map(|_| (MATE_BOUND + 1, 1.0)).collect();
        assert_eq!(fit_score_scale(&mates), None);
    }

    #[test]
    fn score_values() {
        assert_eq!(score_value(MATE_BOUND + 5, 400.0), 1.0);
        assert_eq!(score_value(-MATE_BOUND - 5, 400.0), -1.0);
        assert_eq!(score_value(0, 400.0), 0.0);
        // 2 p - 1 with p = 1 / (1 + e^-1).
        let p = 1.0 / (1.0 + (-1.0f32).exp());
        assert!((score_value(400, 400.0) - (2.0 * p - 1.0)).abs() < 1e-6);
        assert!((score_value(-400, 400.0) + (2.0 * p - 1.0)).abs() < 1e-6);
    }
}
