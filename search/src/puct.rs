//! The PUCT selection rule (AlphaZero; Silver et al., *Science* 362, 2018,
//! supplementary pseudocode).
//!
//! For a node with children `a`:
//!
//! ```text
//! score(a) = Q(a) + c_puct(N) * P(a) * sqrt(N) / (1 + N(a))
//! c_puct(N) = ln((1 + N + c_base) / c_base) + c_init
//! ```
//!
//! * `N` = visits of the parent (children's visits plus visits in flight),
//!   `N(a)` = visits of child `a` (plus in flight, as virtual loss);
//! * `P(a)` = prior from the network (with Dirichlet noise at the root);
//! * `Q(a)` = mean value of the child for the side choosing the edge; an
//!   unvisited child gets the *first-play urgency*
//!   `Q(parent) - fpu_reduction * sqrt(prior mass of the visited children)`
//!   (lc0's FPU reduction), and an unvisited child whose move ends the game its
//!   exact value;
//! * `c_init` = 1.25, `c_base` = 19652 in AlphaZero.

/// Exploration constant `c_puct(N)` for a parent with `parent_visits` visits.
#[inline]
pub fn c_puct(parent_visits: f32, c_init: f32, c_base: f32) -> f32 {
    ((1.0 + parent_visits + c_base) / c_base).ln() + c_init
}

/// PUCT score of one child: `q + c * prior * sqrt(parent_visits) / (1 + child_visits)`.
/// `c` comes from [`c_puct`]; `sqrt_parent` is `sqrt(max(parent_visits, 1))`.
#[inline]
pub fn puct_score(q: f32, prior: f32, child_visits: f32, c: f32, sqrt_parent: f32) -> f32 {
    q + c * prior * sqrt_parent / (1.0 + child_visits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_puct_matches_alphazero_at_zero_and_grows() {
        assert!((c_puct(0.0, 1.25, 19652.0) - (1.25 + (19653.0f32 / 19652.0).ln())).abs() < 1e-6);
        assert!(c_puct(100_000.0, 1.25, 19652.0) > c_puct(10.0, 1.25, 19652.0));
    }

    #[test]
    fn score_prefers_prior_when_unvisited() {
        let c = c_puct(10.0, 1.25, 19652.0);
        assert!(puct_score(0.0, 0.6, 0.0, c, 10f32.sqrt()) > puct_score(0.0, 0.2, 0.0, c, 10f32.sqrt()));
        assert!(puct_score(0.0, 0.5, 9.0, c, 3.0) < puct_score(0.0, 0.5, 0.0, c, 3.0));
    }
}
