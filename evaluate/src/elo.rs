//! Elo from match results, with a 95% confidence interval.
//!
//! Score `p = (W + D/2) / N`; Elo difference `400 * log10(p / (1 - p))`
//! (logistic model). The interval uses the per-game variance of the score
//! (trinomial W/D/L, as fishtest/cutechess do): `se = sqrt(var / N)`,
//! `p +- 1.96 se`, each end mapped through the Elo formula. Scores of exactly
//! 0 or 1 have no finite Elo; they are clamped to `1/(2N)` and `1 - 1/(2N)`.

use serde::{Deserialize, Serialize};

/// An Elo estimate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloEstimate {
    /// Score of the first player, in `[0, 1]`.
    pub score: f64,
    /// Elo difference (first minus second).
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub elo_low: f64,
    /// Upper end of the 95% interval.
    pub elo_high: f64,
}

/// Elo difference for a score `p` in (0, 1).
pub fn elo_from_score(p: f64) -> f64 {
    400.0 * (p / (1.0 - p)).log10()
}

/// Elo estimate from wins, draws and losses of the first player.
/// `None` when no game was played.
pub fn elo_estimate(wins: u32, draws: u32, losses: u32) -> Option<EloEstimate> {
    let n = (wins + draws + losses) as f64;
    if n == 0.0 {
        return None;
    }
    let (w, d, l) = (wins as f64 / n, draws as f64 / n, losses as f64 / n);
    let p = w + d / 2.0;
    let var = w * (1.0 - p).powi(2) + d * (0.5 - p).powi(2) + l * p.powi(2);
    let se = (var / n).sqrt();
    let lo_clamp = 1.0 / (2.0 * n);
    let clamp = |x: f64| x.clamp(lo_clamp, 1.0 - lo_clamp);
    Some(EloEstimate {
        score: p,
        elo: elo_from_score(clamp(p)),
        elo_low: elo_from_score(clamp(p - 1.96 * se)),
        elo_high: elo_from_score(clamp(p + 1.96 * se)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_score_is_zero_elo() {
        let e = elo_estimate(10, 0, 10).unwrap();
        assert!(e.elo.abs() < 1e-9);
        // p = .5, var = .25, se = sqrt(.25/20) = .1118; p +- .2191 -> +-(400 log10(.7191/.2809)) = 163.3
        assert!((e.elo_high - 163.3).abs() < 0.5, "{e:?}");
        assert!((e.elo_low + 163.3).abs() < 0.5, "{e:?}");
    }

    #[test]
    fn known_score() {
        // 75%: 400 log10(3) = 190.85
        let e = elo_estimate(6, 3, 1).unwrap();
        assert!((e.score - 0.75).abs() < 1e-12);
        assert!((e.elo - 190.85).abs() < 0.01);
        assert!(e.elo_low < e.elo && e.elo < e.elo_high);
    }

    #[test]
    fn perfect_score_is_clamped_and_finite() {
        let e = elo_estimate(10, 0, 0).unwrap();
        assert!(e.elo.is_finite() && e.elo > 300.0);
        assert!(elo_estimate(0, 0, 0).is_none());
    }
}
