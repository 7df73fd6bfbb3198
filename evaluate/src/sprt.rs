//! Sequential probability ratio test (SPRT) on match results, as fishtest runs
//! it (Stockfish's testing framework, `stat_util.py`, `LLR_logistic`; the
//! generalized SPRT approximation of Michel Van den Bergh).
//!
//! H0: the Elo difference is `elo0`; H1: it is `elo1` (logistic Elo). With the
//! expected scores `s0 = L(elo0)`, `s1 = L(elo1)` (`L(x) = 1 / (1 + 10^(-x/400))`)
//! and the mean `mu` and variance `var` of the per-game (trinomial W/D/L) or
//! per-pair (pentanomial, pair score / 2) scores over `N` samples,
//!
//! ```text
//! LLR = N (s1 - s0) (2 mu - s0 - s1) / (2 var)
//! ```
//!
//! Wald's bounds: stop and accept H0 when `LLR <= ln(beta / (1 - alpha))`,
//! accept H1 when `LLR >= ln((1 - beta) / alpha)`, else continue.

use serde::{Deserialize, Serialize};

/// SPRT parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtParams {
    /// Elo difference of H0.
    pub elo0: f64,
    /// Elo difference of H1 (> `elo0`).
    pub elo1: f64,
    /// False-positive rate (accepting H1 when H0 holds), in (0, 1).
    pub alpha: f64,
    /// False-negative rate (accepting H0 when H1 holds), in (0, 1).
    pub beta: f64,
}

impl Default for SprtParams {
    /// fishtest's STC defaults scaled for small runs: `[0, 50]`, 5% / 5%.
    fn default() -> Self {
        SprtParams { elo0: 0.0, elo1: 50.0, alpha: 0.05, beta: 0.05 }
    }
}

/// Outcome of the test so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SprtDecision {
    /// `LLR >= upper`: H1 accepted (the candidate is stronger).
    AcceptH1,
    /// `LLR <= lower`: H0 accepted.
    AcceptH0,
    /// Neither bound reached.
    Continue,
}

/// LLR with its bounds and the decision.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtState {
    /// Log-likelihood ratio.
    pub llr: f64,
    /// `ln(beta / (1 - alpha))`.
    pub lower: f64,
    /// `ln((1 - beta) / alpha)`.
    pub upper: f64,
    /// The decision.
    pub decision: SprtDecision,
}

impl SprtParams {
    /// Checks the ranges.
    ///
    /// # Errors
    /// A message naming the bad parameter.
    pub fn validate(&self) -> Result<(), String> {
        if self.elo1.partial_cmp(&self.elo0) != Some(std::cmp::Ordering::Greater)
            || !self.elo0.is_finite()
            || !self.elo1.is_finite()
        {
            return Err(format!("sprt: elo1 ({}) must be greater than elo0 ({})", self.elo1, self.elo0));
        }
        for (n, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v > 0.0 && v < 1.0) {
                return Err(format!("sprt: {n} must be in (0, 1), got {v}"));
            }
        }
        Ok(())
    }

    /// Wald's bounds `(lower, upper)`.
    pub fn bounds(&self) -> (f64, f64) {
        ((self.beta / (1.0 - self.alpha)).ln(), ((1.0 - self.beta) / self.alpha).ln())
    }

    /// The test on trinomial counts (wins, draws, losses of the candidate).
    pub fn trinomial(&self, wins: u32, draws: u32, losses: u32) -> SprtState {
        self.state(llr_logistic(self.elo0, self.elo1, &[losses as f64, draws as f64, wins as f64]))
    }

    /// The test on pentanomial pair counts (pair scores 0, 0.5, 1, 1.5, 2).
    pub fn pentanomial(&self, pairs: &[u32; 5]) -> SprtState {
        let c: Vec<f64> = pairs.iter().map(|&x| x as f64).collect();
        self.state(llr_logistic(self.elo0, self.elo1, &c))
    }

    fn state(&self, llr: f64) -> SprtState {
        let (lower, upper) = self.bounds();
        let decision = if llr >= upper {
            SprtDecision::AcceptH1
        } else if llr <= lower {
            SprtDecision::AcceptH0
        } else {
            SprtDecision::Continue
        };
        SprtState { llr, lower, upper, decision }
    }
}

/// Expected score of an Elo difference (logistic).
pub fn expected_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// fishtest's `LLR_logistic`: `counts[i]` samples scored `i / (len - 1)`
/// (trinomial: L, D, W; pentanomial: the five pair scores). Empty counts get a
/// tiny regularising weight (fishtest adds 1e-3), so the variance is never 0.
pub fn llr_logistic(elo0: f64, elo1: f64, counts: &[f64]) -> f64 {
    let k = counts.len();
    let n_real: f64 = counts.iter().sum();
    if k < 2 || n_real == 0.0 {
        return 0.0;
    }
    let reg: Vec<f64> = counts.iter().map(|&c| if c == 0.0 { 1e-3 } else { c }).collect();
    let n: f64 = reg.iter().sum();
    let score = |i: usize| i as f64 / (k - 1) as f64;
    let mu = reg.iter().enumerate().map(|(i, c)| c * score(i)).sum::<f64>() / n;
    let var = reg.iter().enumerate().map(|(i, c)| c * (score(i) - mu).powi(2)).sum::<f64>() / n;
    if var <= 0.0 {
        return 0.0;
    }
    let (s0, s1) = (expected_score(elo0), expected_score(elo1));
    n * (s1 - s0) * (2.0 * mu - s0 - s1) / (2.0 * var)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_walds() {
        let p = SprtParams { elo0: 0.0, elo1: 5.0, alpha: 0.05, beta: 0.05 };
        let (l, u) = p.bounds();
        assert!((l - (0.05f64 / 0.95).ln()).abs() < 1e-12);
        assert!((u - 2.944_438_979).abs() < 1e-6);
    }

    #[test]
    fn hand_computed_llr() {
        // W/D/L = 60/20/20: mu = 0.7, var = (20*.49 + 20*.04 + 60*.09)/100 = 0.16.
        // s0 = 0.5, s1 = L(50) = 0.571463; LLR = 100 * 0.071463 * (1.4 - 1.071463) / 0.32 = 7.3371.
        let p = SprtParams { elo0: 0.0, elo1: 50.0, alpha: 0.05, beta: 0.05 };
        let s = p.trinomial(60, 20, 20);
        assert!((s.llr - 7.3371).abs() < 1e-3, "{s:?}");
        assert_eq!(s.decision, SprtDecision::AcceptH1);
    }

    #[test]
    fn accepts_and_rejects_synthetic_results() {
        let p = SprtParams { elo0: 0.0, elo1: 50.0, alpha: 0.05, beta: 0.05 };
        // A clearly stronger candidate: 70% score.
        assert_eq!(p.trinomial(130, 20, 50).decision, SprtDecision::AcceptH1);
        assert_eq!(p.pentanomial(&[2, 8, 20, 40, 30]).decision, SprtDecision::AcceptH1);
        // Equal strength, many games: H0.
        assert_eq!(p.trinomial(300, 200, 300).decision, SprtDecision::AcceptH0);
        assert_eq!(p.pentanomial(&[20, 80, 200, 80, 20]).decision, SprtDecision::AcceptH0);
        // A weaker candidate is rejected fast.
        assert_eq!(p.trinomial(10, 10, 40).decision, SprtDecision::AcceptH0);
        // Few games: undecided.
        assert_eq!(p.trinomial(3, 2, 3).decision, SprtDecision::Continue);
        assert_eq!(p.trinomial(0, 0, 0).llr, 0.0);
    }

    #[test]
    fn validation() {
        assert!(SprtParams { elo0: 5.0, elo1: 0.0, alpha: 0.05, beta: 0.05 }.validate().is_err());
        assert!(SprtParams { elo0: 0.0, elo1: 5.0, alpha: 0.0, beta: 0.05 }.validate().is_err());
        assert!(SprtParams::default().validate().is_ok());
    }
}
