//! Elo from match results, with a 95% confidence interval.
//!
//! Score `p = (W + D/2) / N`; Elo difference `400 * log10(p / (1 - p))`
//! (logistic model). The interval is the Wilson score interval of `p`
//! (Wilson 1927) with `N` games, each end mapped through the Elo formula:
//!
//! ```text
//! centre = (p + z^2 / 2N) / (1 + z^2 / N)
//! half   = z sqrt(p (1 - p) / N + z^2 / 4N^2) / (1 + z^2 / N),   z = 1.96
//! ```
//!
//! Unlike `p +- 1.96 se`, it stays honest at 0% and 100% and with few games:
//! `+0 =2 -0` gives `[-390, +390]`, not `[0, 0]`. A perfect score has no
//! finite Elo: the estimate and the upper end are `+inf` (written as `null`
//! in JSON) and only the lower end is measured, shown as `> +X`
//! ([`EloEstimate::text`]); a zero score mirrors that. Counting a draw as half
//! a win with the binomial variance `p (1 - p)` makes the interval a little
//! wider than the trinomial one when there are many draws (conservative).

use serde::{Deserialize, Serialize};

/// The 95% normal quantile.
const Z95: f64 = 1.959_963_984_540_054;

/// An Elo estimate.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "EloEstimateFile")]
pub struct EloEstimate {
    /// Score of the first player, in `[0, 1]`.
    pub score: f64,
    /// Elo difference (first minus second); `+inf` / `-inf` for a score of 1 / 0.
    pub elo: f64,
    /// Lower end of the 95% interval (`-inf` for a score of 0).
    pub elo_low: f64,
    /// Upper end of the 95% interval (`+inf` for a score of 1).
    pub elo_high: f64,
}

/// The stored form: JSON has no infinities, `serde_json` writes them as
/// `null`; they are read back by their meaning.
#[derive(Deserialize)]
struct EloEstimateFile {
    score: f64,
    elo: Option<f64>,
    elo_low: Option<f64>,
    elo_high: Option<f64>,
}

impl From<EloEstimateFile> for EloEstimate {
    fn from(f: EloEstimateFile) -> Self {
        let inf = if f.score >= 0.5 { f64::INFINITY } else { f64::NEG_INFINITY };
        EloEstimate {
            score: f.score,
            elo: f.elo.unwrap_or(inf),
            elo_low: f.elo_low.unwrap_or(f64::NEG_INFINITY),
            elo_high: f.elo_high.unwrap_or(f64::INFINITY),
        }
    }
}

impl EloEstimate {
    /// `+X [lo, hi]`, or `> +X` (every game won: only the lower end is
    /// known) / `< -X` (every game lost).
    pub fn text(&self) -> String {
        if self.elo_high == f64::INFINITY {
            format!("> {:+.0}", self.elo_low)
        } else if self.elo_low == f64::NEG_INFINITY {
            format!("< {:+.0}", self.elo_high)
        } else {
            format!("{:+.0} [{:+.0}, {:+.0}]", self.elo, self.elo_low, self.elo_high)
        }
    }
}

/// Elo difference for a score `p`: `+inf` at 1, `-inf` at 0.
pub fn elo_from_score(p: f64) -> f64 {
    if p >= 1.0 {
        f64::INFINITY
    } else if p <= 0.0 {
        f64::NEG_INFINITY
    } else {
        400.0 * (p / (1.0 - p)).log10()
    }
}

/// The Wilson score interval `(low, high)` of a score `p` over `n` games at
/// the 95% level; `low = 0` exactly when `p = 0`, `high = 1` when `p = 1`.
pub fn wilson_interval(p: f64, n: f64) -> (f64, f64) {
    let z2 = Z95 * Z95;
    let denom = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denom;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denom;
    let lo = if p <= 0.0 { 0.0 } else { (centre - half).max(0.0) };
    let hi = if p >= 1.0 { 1.0 } else { (centre + half).min(1.0) };
    (lo, hi)
}

/// Elo estimate from wins, draws and losses of the first player.
/// `None` when no game was played.
///
/// # Examples
/// ```
/// use martian_evaluate::elo_estimate;
///
/// // +6 =2 -2: a score of 0.7, about +147 Elo, but ten games prove little.
/// let e = elo_estimate(6, 2, 2).unwrap();
/// assert!((e.score - 0.7).abs() < 1e-12);
/// assert!((e.elo - 147.2).abs() < 0.1);
/// assert_eq!(e.text(), "+147 [-73, +367]");
/// // Every game won: no finite Elo, only a lower bound.
/// assert_eq!(elo_estimate(20, 0, 0).unwrap().text(), "> +287");
/// assert_eq!(elo_estimate(0, 0, 0), None);
/// ```
pub fn elo_estimate(wins: u32, draws: u32, losses: u32) -> Option<EloEstimate> {
    let n = wins as f64 + draws as f64 + losses as f64;
    if n == 0.0 {
        return None;
    }
    let p = (wins as f64 + draws as f64 / 2.0) / n;
    let (lo, hi) = wilson_interval(p, n);
    Some(EloEstimate { score: p, elo: elo_from_score(p), elo_low: elo_from_score(lo), elo_high: elo_from_score(hi) })
}

/// Elo estimate from the total score `total` of the first player over `n`
/// games, each game's score in `[0, 1]` (free-for-all games score fractions:
/// [`crate::GameResult::a_score`]). `p = total / n` and the Wilson
/// interval of `p` with `n` games, as [`elo_estimate`]: a score in `[0, 1]`
/// with mean `p` has a variance of at most `p (1 - p)`, so the interval is
/// conservative. `None` when no game was played.
///
/// # Examples
/// ```
/// use martian_evaluate::{elo_estimate, elo_estimate_from_score};
///
/// // Free-for-all: 4 sole wins (1), 4 wins shared by two (2/3), 4 losses (1/3).
/// let total = 4.0 * 1.0 + 4.0 * (2.0 / 3.0) + 4.0 * (1.0 / 3.0);
/// let e = elo_estimate_from_score(total, 12).unwrap();
/// assert!((e.score - 2.0 / 3.0).abs() < 1e-12);
/// assert!(e.elo_low < e.elo && e.elo < e.elo_high);
/// // A total of whole and half points is the W/D/L estimate.
/// assert_eq!(elo_estimate_from_score(7.0, 10), elo_estimate(6, 2, 2));
/// ```
pub fn elo_estimate_from_score(total: f64, n: u32) -> Option<EloEstimate> {
    if n == 0 {
        return None;
    }
    let n = n as f64;
    let p = (total / n).clamp(0.0, 1.0);
    let (lo, hi) = wilson_interval(p, n);
    Some(EloEstimate { score: p, elo: elo_from_score(p), elo_low: elo_from_score(lo), elo_high: elo_from_score(hi) })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_total_score_gives_the_interval_of_its_mean() {
        // 10 games scoring 7.5 in all: the same estimate as +6 =3 -1.
        let a = super::elo_estimate_from_score(7.5, 10).unwrap();
        let b = super::elo_estimate(6, 3, 1).unwrap();
        assert_eq!(a, b);
        assert_eq!(super::elo_estimate_from_score(0.0, 0), None);
    }

    use super::*;

    #[test]
    fn even_score_is_zero_elo() {
        let e = elo_estimate(10, 0, 10).unwrap();
        assert!(e.elo.abs() < 1e-9);
        // Wilson, p = .5, n = 20: centre .5, half = 1.96 sqrt(.0125 + .0096) / 1.1921 = .2005
        // -> 400 log10(.7005 / .2995) = +147.7.
        assert!((e.elo_high - 147.7).abs() < 0.5, "{e:?}");
        assert!((e.elo_low + 147.7).abs() < 0.5, "{e:?}");
        assert_eq!(e.text(), "+0 [-148, +148]");
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
    fn degenerate_results_get_honest_intervals() {
        // +20 =0 -0: Wilson lower end n / (n + z^2) = 20 / 23.84 = .8389 -> +286.6; no upper end.
        let e = elo_estimate(20, 0, 0).unwrap();
        assert_eq!((e.elo, e.elo_high), (f64::INFINITY, f64::INFINITY));
        assert!((e.elo_low - 286.6).abs() < 0.1, "{e:?}");
        assert_eq!(e.text(), "> +287");
        // +0 =0 -40: only an upper end.
        let e = elo_estimate(0, 0, 40).unwrap();
        assert_eq!(e.elo_low, f64::NEG_INFINITY);
        assert!(e.elo_high < -300.0 && e.elo_high.is_finite(), "{e:?}");
        assert!(e.text().starts_with("< -"), "{}", e.text());
        // +0 =2 -0: an even score from two games says little.
        let e = elo_estimate(0, 2, 0).unwrap();
        assert!(e.elo.abs() < 1e-9 && e.elo_low < -300.0 && e.elo_high > 300.0, "{e:?}");
        // More games, narrower.
        let (a, b) = (elo_estimate(3, 0, 1).unwrap(), elo_estimate(30, 0, 10).unwrap());
        assert!(b.elo_high - b.elo_low < a.elo_high - a.elo_low);
        assert!(elo_estimate(0, 0, 0).is_none());
    }

    #[test]
    fn infinite_ends_survive_json() {
        let e = elo_estimate(20, 0, 0).unwrap();
        let s = serde_json::to_string(&e).unwrap();
        assert!(s.contains("null"), "{s}");
        assert_eq!(serde_json::from_str::<EloEstimate>(&s).unwrap(), e);
        let e = elo_estimate(0, 0, 5).unwrap();
        let back: EloEstimate = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
        let e = elo_estimate(4, 1, 2).unwrap();
        assert_eq!(serde_json::from_str::<EloEstimate>(&serde_json::to_string(&e).unwrap()).unwrap(), e);
    }
}
