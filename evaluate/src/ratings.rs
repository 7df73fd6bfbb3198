//! Bradley-Terry (Elo) ratings fitted over all games of a run.
//!
//! Model (Bradley & Terry 1952, in the logistic Elo scale as BayesElo and
//! Ordo use it): `P(i beats j) = 1 / (1 + 10^(-(R_i - R_j) / 400))`; a draw
//! counts as half a win for each side. The ratings maximise the likelihood
//! (Newton's method on the natural-scale strengths), with the anchor player
//! fixed at 0. The 95% interval of each rating is `R +- 1.96 se`, with `se`
//! from the inverse of the observed Fisher information (the negative Hessian
//! of the log-likelihood with the anchor removed), i.e. relative to the anchor.
//!
//! For two players this reduces to the usual formulas: `R = 400 log10(p / (1 - p))`
//! with `p` the score, and `se = 400 / ln 10 / sqrt(N p (1 - p))`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// W/D/L of player `a` against player `b`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairResult {
    /// First player.
    pub a: String,
    /// Second player.
    pub b: String,
    /// Wins of `a`.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses of `a`.
    pub losses: u32,
}

/// One fitted rating.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// Player name.
    pub name: String,
    /// Elo relative to the anchor (or to [`Rating::relative_to`]).
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
    /// Games played.
    pub games: u32,
    /// Score over all its games, in `[0, 1]`.
    pub score: f64,
    /// `None` when the player is connected to the anchor through games (its
    /// Elo is relative to the anchor); else the reference player of its own
    /// group (rated 0 there): such ratings are not comparable with the
    /// anchor's group.
    #[serde(default)]
    pub relative_to: Option<String>,
    /// True when the player won every game (or lost every game): its Elo has
    /// no finite maximum-likelihood value, `elo` and `high` (`low`) are
    /// placed by the prior alone, and only `low` (`high`) is measured: the
    /// one-sided 95% bound with its opponents held at their ratings.
    #[serde(default)]
    pub perfect: bool,
}

impl Rating {
    /// `+X [lo, hi]`, or `> +lo` / `< +hi` for a perfect score.
    pub fn text(&self) -> String {
        if self.perfect && self.score > 0.5 {
            format!("> {:+.0}", self.low)
        } else if self.perfect {
            format!("< {:+.0}", self.high)
        } else {
            format!("{:+.0} [{:+.0}, {:+.0}]", self.elo, self.low, self.high)
        }
    }
}

/// The fit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ratings {
    /// The anchor (rated 0).
    pub anchor: String,
    /// Ratings, best first: the anchor's group, then each group not
    /// connected to it (see [`Rating::relative_to`]).
    pub players: Vec<Rating>,
}

impl Ratings {
    /// The rating of `name`.
    pub fn get(&self, name: &str) -> Option<&Rating> {
        self.players.iter().find(|r| r.name == name)
    }

    /// Players not connected to the anchor through games.
    pub fn disconnected(&self) -> impl Iterator<Item = &Rating> {
        self.players.iter().filter(|r| r.relative_to.is_some())
    }
}

const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;

/// Fits ratings to `results` with `anchor` at 0. `prior_sd_elo`, if finite,
/// adds a Gaussian prior `N(0, sd^2)` on every rating (relative to the
/// anchor): it keeps perfect scores finite; `f64::INFINITY` gives the plain
/// maximum-likelihood fit.
///
/// Every player is rated: players with no chain of games to the anchor form
/// groups of their own, each anchored at its player with the most games
/// (ties: the first name) and marked with [`Rating::relative_to`].
///
/// # Errors
/// When the anchor played no game (the message lists the players), or the
/// plain fit has no solution.
pub fn fit_ratings(results: &[PairResult], anchor: &str, prior_sd_elo: f64) -> Result<Ratings, String> {
    // Players and pairwise (score, games).
    let mut idx: BTreeMap<&str, usize> = BTreeMap::new();
    for r in results {
        if r.wins + r.draws + r.losses == 0 {
            continue;
        }
        for n in [r.a.as_str(), r.b.as_str()] {
            let k = idx.len();
            idx.entry(n).or_insert(k);
        }
    }
    let Some(&anc) = idx.get(anchor) else {
        return Err(format!(
            "anchor {anchor:?} played no game (players: {})",
            idx.keys().copied().collect::<Vec<_>>().join(", ")
        ));
    };
    let n = idx.len();
    let names: Vec<&str> = {
        let mut v = vec![""; n];
        for (name, &i) in &idx {
            v[i] = name;
        }
        v
    };
    let mut games = vec![vec![0f64; n]; n];
    let mut score = vec![vec![0f64; n]; n];
    for r in results {
        let (Some(&i), Some(&j)) = (idx.get(r.a.as_str()), idx.get(r.b.as_str())) else {
            continue;
        };
        if i == j {
            continue;
        }
        let g = (r.wins + r.draws + r.losses) as f64;
        let s = r.wins as f64 + 0.5 * r.draws as f64;
        games[i][j] += g;
        games[j][i] += g;
        score[i][j] += s;
        score[j][i] += g - s;
    }
    let total = |i: usize| games[i].iter().sum::<f64>();
    // Connected groups; the anchor's first, each with its reference player.
    let mut group = vec![usize::MAX; n];
    let mut refs: Vec<usize> = Vec::new();
    let order: Vec<usize> = std::iter::once(anc).chain(idx.values().copied().filter(|&i| i != anc)).collect();
    for &s in &order {
        if group[s] != usize::MAX {
            continue;
        }
        let gi = refs.len();
        group[s] = gi;
        let mut members = vec![s];
        let mut stack = vec![s];
        while let Some(i) = stack.pop() {
            for j in 0..n {
                if games[i][j] > 0.0 && group[j] == usize::MAX {
                    group[j] = gi;
                    members.push(j);
                    stack.push(j);
                }
            }
        }
        let reference = if s == anc {
            anc
        } else {
            *members.iter().max_by(|&&a, &&b| total(a).total_cmp(&total(b)).then(names[b].cmp(names[a]))).unwrap_or(&s)
        };
        refs.push(reference);
    }
    let free: Vec<usize> = (0..n).filter(|i| !refs.contains(i)).collect();
    let m = free.len();
    let prior =
        if prior_sd_elo.is_finite() && prior_sd_elo > 0.0 { 1.0 / (prior_sd_elo / ELO_PER_NAT).powi(2) } else { 0.0 };
    let mut r = vec![0f64; n];
    let mut cov = vec![vec![0f64; m]; m];
    let pos: Vec<Option<usize>> = (0..n).map(|i| free.iter().position(|&f| f == i)).collect();
    for _iter in 0..100 {
        // Gradient and negative Hessian over the free players.
        let mut grad = vec![0f64; m];
        let mut h = vec![vec![0f64; m]; m];
        for (a, &i) in free.iter().enumerate() {
            grad[a] -= prior * r[i];
            h[a][a] += prior;
            for j in 0..n {
                if games[i][j] == 0.0 {
                    continue;
                }
                let p = 1.0 / (1.0 + (-(r[i] - r[j])).exp());
                grad[a] += score[i][j] - games[i][j] * p;
                let w = games[i][j] * p * (1.0 - p);
                h[a][a] += w;
                if let Some(b) = pos[j] {
                    h[a][b] -= w;
                }
            }
        }
        let Some(inv) = invert(&h) else {
            return Err(
                "rating fit: singular information matrix (a player with only wins or only losses? use a prior)".into(),
            );
        };
        let mut step_max = 0f64;
        for a in 0..m {
            let d: f64 = (0..m).map(|b| inv[a][b] * grad[b]).sum();
            let d = d.clamp(-2.0, 2.0);
            r[free[a]] += d;
            step_max = step_max.max(d.abs());
        }
        cov = inv;
        if step_max < 1e-10 {
            break;
        }
    }
    let mut players = Vec::new();
    for i in 0..n {
        let se = pos[i].map(|a| cov[a][a].max(0.0).sqrt()).unwrap_or(0.0) * ELO_PER_NAT;
        let elo = r[i] * ELO_PER_NAT;
        let g = total(i);
        let s: f64 = score[i].iter().sum();
        let (mut low, mut high) = (elo - 1.96 * se, elo + 1.96 * se);
        let perfect = pos[i].is_some() && g > 0.0 && (s == 0.0 || s == g);
        if perfect {
            let opps: Vec<(f64, f64)> =
                (0..n).filter(|&j| games[i][j] > 0.0).map(|j| (r[j] * ELO_PER_NAT, games[i][j])).collect();
            let b = perfect_bound(&opps, s == g);
            if s == g {
                low = b;
                high = high.max(b);
            } else {
                high = b;
                low = low.min(b);
            }
        }
        let reference = refs[group[i]];
        players.push((
            group[i],
            Rating {
                name: names[i].to_string(),
                elo,
                low,
                high,
                games: g as u32,
                score: if g > 0.0 { s / g } else { 0.0 },
                relative_to: (reference != anc).then(|| names[reference].to_string()),
                perfect,
            },
        ));
    }
    players.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.elo.total_cmp(&a.1.elo)).then(a.1.name.cmp(&b.1.name)));
    Ok(Ratings { anchor: anchor.to_string(), players: players.into_iter().map(|p| p.1).collect() })
}

/// The one-sided 95% bound of a player who won (`won`) or lost every game
/// against opponents `(Elo, games)` held fixed: the rating `R` at which that
/// result has probability 5%, `prod_j E_j(R)^{n_j} = 0.05` (for one opponent
/// and `n` wins, `E = 0.05^(1/n)`: 20 wins put the player above `+316`).
fn perfect_bound(opps: &[(f64, f64)], won: bool) -> f64 {
    let log_p = |r: f64| -> f64 {
        opps.iter()
            .map(|&(o, n)| {
                let e = 1.0 / (1.0 + 10f64.powf((o - r) / 400.0));
                n * if won { e.ln() } else { (1.0 - e).ln() }
            })
            .sum()
    };
    let target = 0.05f64.ln();
    let lo0 = opps.iter().map(|o| o.0).fold(f64::INFINITY, f64::min) - 4000.0;
    let hi0 = opps.iter().map(|o| o.0).fold(f64::NEG_INFINITY, f64::max) + 4000.0;
    let (mut lo, mut hi) = (lo0, hi0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        // log_p rises with R when every game was won, falls when every game was lost.
        if (log_p(mid) < target) == won {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Gauss-Jordan inverse of a small symmetric matrix; `None` if singular.
fn invert(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut m: Vec<Vec<f64>> = a.to_vec();
    let mut inv: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect()).collect();
    for c in 0..n {
        let p = (c..n).max_by(|&x, &y| m[x][c].abs().total_cmp(&m[y][c].abs()))?;
        if m[p][c].abs() < 1e-12 {
            return None;
        }
        m.swap(c, p);
        inv.swap(c, p);
        let d = m[c][c];
        for j in 0..n {
            m[c][j] /= d;
            inv[c][j] /= d;
        }
        for i in 0..n {
            if i != c {
                let f = m[i][c];
                if f != 0.0 {
                    for j in 0..n {
                        m[i][j] -= f * m[c][j];
                        inv[i][j] -= f * inv[c][j];
                    }
                }
            }
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr(a: &str, b: &str, w: u32, d: u32, l: u32) -> PairResult {
        PairResult { a: a.into(), b: b.into(), wins: w, draws: d, losses: l }
    }

    #[test]
    fn two_players_match_hand_computed_values() {
        // A scores 7.5/10 against the anchor B: p = 0.75,
        // Elo = 400 log10(3) = 190.849; se = 173.718 / sqrt(10 * 0.1875) = 126.867;
        // 95%: 190.849 +- 248.659.
        let r = fit_ratings(&[pr("A", "B", 6, 3, 1)], "B", f64::INFINITY).unwrap();
        let a = r.get("A").unwrap();
        assert!((a.elo - 190.849).abs() < 1e-2, "{a:?}");
        assert!((a.high - a.elo - 248.659).abs() < 1e-2, "{a:?}");
        assert!((a.elo - a.low - 248.659).abs() < 1e-2, "{a:?}");
        let b = r.get("B").unwrap();
        assert_eq!((b.elo, b.low, b.high), (0.0, 0.0, 0.0));
        assert_eq!(a.games, 10);
        assert!((a.score - 0.75).abs() < 1e-12);
    }

    #[test]
    fn even_score_is_zero_and_chain_adds_up() {
        let r = fit_ratings(&[pr("A", "B", 5, 0, 5)], "A", f64::INFINITY).unwrap();
        assert!(r.get("B").unwrap().elo.abs() < 1e-9);
        // C beats B by the same margin B beats A, no direct games: Elo adds.
        let res = [pr("B", "A", 6, 3, 1), pr("C", "B", 6, 3, 1)];
        let r = fit_ratings(&res, "A", f64::INFINITY).unwrap();
        assert!((r.get("C").unwrap().elo - 2.0 * 190.849).abs() < 1e-2);
        assert_eq!(r.players[0].name, "C");
    }

    #[test]
    fn perfect_scores_need_the_prior() {
        let res = [pr("A", "B", 4, 0, 0)];
        assert!(
            fit_ratings(&res, "B", f64::INFINITY).is_err()
                || fit_ratings(&res, "B", f64::INFINITY).unwrap().get("A").unwrap().elo > 1000.0
        );
        let r = fit_ratings(&res, "B", 400.0).unwrap();
        let a = r.get("A").unwrap();
        assert!(a.elo.is_finite() && a.elo > 0.0 && a.elo < 1000.0, "{a:?}");
        assert!(fit_ratings(&res, "Z", 400.0).is_err());
    }

    #[test]
    fn every_player_is_rated_and_groups_apart_from_the_anchor_are_marked() {
        // A-B-C are connected; X-Y played only each other.
        let res = [pr("A", "B", 5, 2, 3), pr("B", "C", 4, 4, 2), pr("X", "Y", 6, 0, 4), pr("Y", "X", 3, 1, 2)];
        let r = fit_ratings(&res, "C", 1000.0).unwrap();
        assert_eq!(r.players.len(), 5);
        for p in ["A", "B", "C"] {
            assert_eq!(r.get(p).unwrap().relative_to, None, "{p}");
        }
        // X and Y are in a group of their own, rated relative to the one with more games (a tie: X).
        assert_eq!(r.get("X").unwrap().relative_to.as_deref(), Some("X"));
        assert_eq!(r.get("Y").unwrap().relative_to.as_deref(), Some("X"));
        assert_eq!(r.get("X").unwrap().elo, 0.0);
        assert!(r.get("Y").unwrap().elo < 0.0);
        assert_eq!(r.disconnected().count(), 2);
        // The anchor's group comes first.
        assert!(r.players[..3].iter().all(|p| p.relative_to.is_none()));
    }

    #[test]
    fn perfect_scores_are_flagged_with_a_one_sided_bound() {
        // 20 wins against the anchor: P(20 wins) = E^20 = 0.05 at E = 0.8609, i.e. +316.7.
        let r = fit_ratings(&[pr("A", "B", 20, 0, 0)], "B", 1000.0).unwrap();
        let a = r.get("A").unwrap();
        assert!(a.perfect, "{a:?}");
        assert!((a.low - 316.7).abs() < 0.5, "{a:?}");
        assert_eq!(a.text(), "> +317");
        // 40 losses: mirrored.
        let r = fit_ratings(&[pr("A", "B", 0, 0, 40)], "B", 1000.0).unwrap();
        let a = r.get("A").unwrap();
        assert!(a.perfect && a.high < -300.0 && a.text().starts_with("< -"), "{a:?}");
        // A draw is not perfect.
        let r = fit_ratings(&[pr("A", "B", 19, 1, 0)], "B", 1000.0).unwrap();
        assert!(!r.get("A").unwrap().perfect);
        assert!(!r.get("B").unwrap().perfect);
    }
}

/// The rating of one player from its results against opponents whose
/// ratings are fixed (the alpha-beta ladder's calibrated ratings), on the
/// same logistic Elo scale as [`fit_ratings`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FixedAnchorRating {
    /// Maximum-likelihood Elo (with one virtual draw against the mean
    /// opponent rating, so that a perfect or zero score stays finite).
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
    /// Games (without the virtual draw).
    pub games: u32,
    /// Score share of those games.
    pub score: f64,
    /// True when the player won every game or lost every game: the estimate
    /// then rests on the virtual draw, and only `low` (every game won) or
    /// `high` (every game lost) is measured: the one-sided 95% bound at which
    /// that result has probability 5% against the fixed opponents.
    pub perfect: bool,
}

/// Rates a player from `(opponent Elo, wins, draws, losses)` rows with the
/// opponents' ratings held fixed: the R solving `sum n_j E_j(R) = sum s_j`
/// with `E_j(R) = 1 / (1 + 10^((r_j - R) / 400))` (the likelihood equation of
/// the Bradley-Terry model in one unknown), found by bisection; 95% interval
/// `R +- 1.96 * 400 / ln 10 / sqrt(sum n_j E_j (1 - E_j))`. One virtual draw
/// against the mean opponent (as BayesElo's prior draws) keeps a 100% or 0%
/// score finite; `perfect` flags it. `None` without games.
pub fn rate_against_fixed(rows: &[(f64, u32, u32, u32)]) -> Option<FixedAnchorRating> {
    let games: u32 = rows.iter().map(|r| r.1 + r.2 + r.3).sum();
    if games == 0 {
        return None;
    }
    let points: f64 = rows.iter().map(|r| r.1 as f64 + 0.5 * r.2 as f64).sum();
    let mean_opp = rows.iter().map(|r| r.0 * (r.1 + r.2 + r.3) as f64).sum::<f64>() / games as f64;
    let mut all: Vec<(f64, f64, f64)> =
        rows.iter().map(|r| (r.0, (r.1 + r.2 + r.3) as f64, r.1 as f64 + 0.5 * r.2 as f64)).collect();
    all.push((mean_opp, 1.0, 0.5));
    let expected = |r: f64| all.iter().map(|&(o, n, _)| n / (1.0 + 10f64.powf((o - r) / 400.0))).sum::<f64>();
    let target: f64 = all.iter().map(|a| a.2).sum();
    let (mut lo, mut hi) = (mean_opp - 4000.0, mean_opp + 4000.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if expected(mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let elo = 0.5 * (lo + hi);
    let info: f64 = all
        .iter()
        .map(|&(o, n, _)| {
            let e = 1.0 / (1.0 + 10f64.powf((o - elo) / 400.0));
            n * e * (1.0 - e)
        })
        .sum();
    let se = 400.0 / std::f64::consts::LN_10 / info.max(1e-12).sqrt();
    let perfect = points == 0.0 || points == games as f64;
    let (mut low, mut high) = (elo - 1.96 * se, elo + 1.96 * se);
    if perfect {
        // Only one side is measured: the one-sided 95% bound against the fixed opponents.
        let opps: Vec<(f64, f64)> =
            rows.iter().map(|r| (r.0, (r.1 + r.2 + r.3) as f64)).filter(|o| o.1 > 0.0).collect();
        let b = perfect_bound(&opps, points > 0.0);
        if points > 0.0 {
            low = b;
            high = high.max(b);
        } else {
            high = b;
            low = low.min(b);
        }
    }
    Some(FixedAnchorRating { elo, low, high, games, score: points / games as f64, perfect })
}

#[cfg(test)]
mod fixed_anchor_tests {
    use super::*;

    #[test]
    fn fixed_anchor_rating_matches_the_two_player_formula_and_stays_finite() {
        // 30 of 40 points against a 0-rated opponent: about 400 log10(3) = +191
        // (the virtual draw pulls it a little towards 0).
        let r = rate_against_fixed(&[(0.0, 25, 10, 5)]).unwrap();
        assert!((r.elo - 400.0 * 3f64.log10()).abs() < 15.0, "{r:?}");
        assert!(r.low < r.elo && r.elo < r.high && !r.perfect);
        // Against two opponents 200 apart, scoring 50% against both: between them.
        let r = rate_against_fixed(&[(0.0, 10, 0, 10), (200.0, 10, 0, 10)]).unwrap();
        assert!(r.elo > 0.0 && r.elo < 200.0, "{r:?}");
        // Perfect scores: finite, flagged, above the opponent.
        let r = rate_against_fixed(&[(100.0, 20, 0, 0)]).unwrap();
        assert!(r.perfect && r.elo.is_finite() && r.elo > 100.0, "{r:?}");
        // The measured end: P(20 wins) = 5% at 100 + 316.7.
        assert!((r.low - 416.7).abs() < 0.5, "{r:?}");
        let r = rate_against_fixed(&[(100.0, 0, 0, 20)]).unwrap();
        assert!(r.perfect && r.elo < 100.0, "{r:?}");
        assert!(rate_against_fixed(&[]).is_none());
    }
}
