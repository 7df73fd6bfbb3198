//! Strength levels: a weaker MCTS player for people to play (`docs/levels.md`), as
//! chess GUIs offer Stockfish's `UCI_LimitStrength`.
//!
//! A level is a visit budget and a move-choice temperature, nothing else: the
//! player still searches with the same network and plays a move the search
//! rates, sampled with probability proportional to `visits^(1/T)` (the
//! AlphaZero play temperature; with a single visit, `prior^(1/T)`: the
//! policy itself, as lc0's one-node play), never a proven loss while another
//! move exists and always a proven win. Fewer visits miss deeper tactics;
//! the temperature makes it choose among the moves it found good, not
//! among all moves: it plays like a weaker player, not like a random
//! blunderer. Each level's Elo against the fixed alpha-beta ladder is
//! measured per game and printed in `docs/levels.md`.

use std::fmt;

/// One strength level ([`Level::get`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    /// The level's number, 1 (weakest) to [`Level::MAX`].
    pub number: u8,
    /// Visits of the search for each move (KataGo's visits: reused ones count).
    pub visits: u32,
    /// Temperature of the move choice ([`crate::SearchResult::sample_move`]);
    /// 0 = the best move.
    pub temperature: f32,
}

/// The levels, weakest first: `LEVELS[n - 1]` is level `n`.
const LEVELS: [Level; 6] = [
    Level { number: 1, visits: 1, temperature: 1.0 },
    Level { number: 2, visits: 1, temperature: 0.3 },
    Level { number: 3, visits: 16, temperature: 0.0 },
    Level { number: 4, visits: 64, temperature: 0.2 },
    Level { number: 5, visits: 200, temperature: 0.0 },
    Level { number: 6, visits: 800, temperature: 0.0 },
];

impl Level {
    /// The strongest level's number.
    pub const MAX: u8 = LEVELS.len() as u8;

    /// Level `n` (1 to [`Level::MAX`]).
    ///
    /// # Errors
    /// A message naming the valid range when `n` is outside it.
    ///
    /// # Example
    /// ```
    /// use martian_search::Level;
    /// let weakest = Level::get(1)?;
    /// assert_eq!((weakest.visits, weakest.temperature), (1, 1.0));
    /// assert!(Level::get(0).unwrap_err().contains("1 to 6"));
    /// # Ok::<(), String>(())
    /// ```
    pub fn get(n: u32) -> Result<Level, String> {
        usize::try_from(n).ok().and_then(|n| n.checked_sub(1)).and_then(|i| LEVELS.get(i)).copied().ok_or_else(|| {
            format!("level {n} does not exist: levels go from 1 to {} (weakest to strongest)", Level::MAX)
        })
    }

    /// Every level, weakest first.
    pub fn all() -> &'static [Level] {
        &LEVELS
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "level {} ({} visits, temperature {})", self.number, self.visits, self.temperature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Levels are numbered in order; visits never fall, and at equal visits
    /// the temperature falls (the measured Elo order is in `docs/levels.md`).
    #[test]
    fn levels_grow_stronger() {
        for (i, w) in LEVELS.windows(2).enumerate() {
            assert_eq!(w[0].number as usize, i + 1);
            assert!(w[1].visits >= w[0].visits, "{} -> {}", w[0], w[1]);
            assert!(w[1].visits > w[0].visits || w[1].temperature < w[0].temperature, "{} -> {}", w[0], w[1]);
        }
        for bad in [0, 7, u32::MAX] {
            assert!(Level::get(bad).unwrap_err().contains(&format!("level {bad} does not exist")));
        }
        assert_eq!(Level::get(6).unwrap().visits, 800);
    }
}
