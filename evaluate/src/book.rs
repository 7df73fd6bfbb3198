//! Opening book: random but balanced openings, generated once per run and
//! stored with it (`R/openings.json`), so that every checkpoint meets its
//! opponents from the same openings (the fishtest / OpenBench practice of
//! fixed opening suites, with each opening played with both colours).

use std::path::Path;

use martian_rules::{GameKind, GameState, Move};
use martian_search::{AbGame, AlphaBeta, AlphaBetaConfig, Limits};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};

/// Openings whose depth-2 alpha-beta score is at most this (centi-units)
/// count as balanced.
pub const BALANCED_SCORE: i32 = 150;

/// Plays a random opening of `plies` plies from `start` (stopping early if a
/// move would end the game), among the moves the game admits in openings
/// (`GameState::is_opening_move`: no Jetan Escape). Deterministic in `seed`.
pub fn random_opening<G: GameState>(start: &G, plies: u32, seed: u64) -> (G, Vec<Move>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut s = start.clone();
    let mut line = Vec::new();
    let mut moves = Vec::new();
    for _ in 0..plies {
        s.legal_moves(&mut moves);
        moves.retain(|&m| s.is_opening_move(m));
        moves.shuffle(&mut rng);
        let next = moves.iter().copied().find(|&m| {
            let mut t = s.clone();
            t.play_unchecked(m);
            t.outcome().is_none()
        });
        match next {
            Some(m) => {
                s.play_unchecked(m);
                line.push(m);
            }
            None => break,
        }
    }
    (s, line)
}

/// A stored set of openings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpeningBook {
    /// Which game.
    pub game: GameKind,
    /// Random plies per opening.
    pub plies: u32,
    /// Seed used to generate the book.
    pub seed: u64,
    /// The openings, `<from><to>` moves from the initial position.
    pub openings: Vec<Vec<String>>,
}

impl OpeningBook {
    /// Generates `n` openings of `plies` random plies from `start`, keeping
    /// those a depth-2 alpha-beta search scores within
    /// ±[`BALANCED_SCORE`] (topped up with the least unbalanced others if too
    /// few qualify). Deterministic in `seed`.
    pub fn generate<G: AbGame>(start: &G, n: usize, plies: u32, seed: u64) -> OpeningBook {
        let mut engine: AlphaBeta<G> = AlphaBeta::new(AlphaBetaConfig { tt_mib: 1, ..AlphaBetaConfig::default() });
        let mut good = Vec::new();
        let mut rest: Vec<(i32, Vec<Move>)> = Vec::new();
        let mut k = 0u64;
        while good.len() < n && k < (n as u64) * 20 + 20 {
            let (s, line) = random_opening(start, plies, seed.wrapping_add(k.wrapping_mul(7919)));
            k += 1;
            if s.outcome().is_some() || line.is_empty() && plies > 0 {
                continue;
            }
            engine.reset();
            let sc = engine.search(&s, &Limits::depth(2)).score.abs();
            if sc <= BALANCED_SCORE {
                good.push(line);
            } else {
                rest.push((sc, line));
            }
        }
        rest.sort_by_key(|(sc, _)| *sc);
        good.extend(rest.into_iter().map(|(_, l)| l).take(n.saturating_sub(good.len())));
        let openings = good
            .iter()
            .map(|line| {
                let mut s = start.clone();
                line.iter()
                    .map(|&m| {
                        let t = s.move_to_string(m);
                        s.play_unchecked(m);
                        t
                    })
                    .collect()
            })
            .collect();
        OpeningBook { game: G::KIND, plies, seed, openings }
    }

    /// The openings as moves, checked move by move from `start`.
    ///
    /// # Errors
    /// A book of another game, or an illegal move (naming the opening).
    pub fn lines<G: GameState>(&self, start: &G) -> Result<Vec<Vec<Move>>, String> {
        if self.game != G::KIND {
            return Err(format!("opening book is for {}, not {}", self.game, G::KIND));
        }
        self.openings
            .iter()
            .enumerate()
            .map(|(i, line)| {
                let mut s = start.clone();
                line.iter()
                    .map(|t| {
                        let m = s.parse_move(t).map_err(|e| format!("opening {i}: {e}"))?;
                        s.play_unchecked(m);
                        Ok(m)
                    })
                    .collect()
            })
            .collect()
    }

    /// Reads a book written by [`OpeningBook::save`].
    ///
    /// # Errors
    /// I/O or JSON errors, with the path.
    pub fn load(path: &Path) -> Result<OpeningBook, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        serde_json::from_slice(&bytes).map_err(|e| format!("{} is damaged: not an opening book ({e})", path.display()))
    }

    /// Writes the book as JSON (through a temporary file and a rename).
    ///
    /// # Errors
    /// I/O errors, with the path.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, text).map_err(|e| format!("writing {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, path).map_err(|e| format!("renaming to {}: {e}", path.display()))
    }

    /// Loads the book at `path`, or generates one (see
    /// [`OpeningBook::generate`]) and saves it there. A book that does not
    /// read (a damaged file) is renamed `<path>.damaged` with a warning and
    /// made again (the same book, from the same seed).
    ///
    /// # Errors
    /// As [`OpeningBook::load`] / [`OpeningBook::save`].
    pub fn load_or_create<G: AbGame>(
        path: &Path,
        start: &G,
        n: usize,
        plies: u32,
        seed: u64,
    ) -> Result<OpeningBook, String> {
        if path.exists() {
            // A book that reads but whose moves do not play (flipped bytes) is damaged too.
            let checked = OpeningBook::load(path)
                .and_then(|b| b.lines(start).map(|_| b).map_err(|e| format!("{} is damaged: {e}", path.display())));
            match checked {
                Ok(b) => return Ok(b),
                Err(e) => {
                    // Made from the run's seed: the same book is made again.
                    let aside = path.with_extension("json.damaged");
                    std::fs::rename(path, &aside)
                        .map_err(|r| format!("{e}; setting it aside as {} failed: {r}", aside.display()))?;
                    eprintln!("warning: {e}; set aside as {}; making the book again", aside.display());
                }
            }
        }
        let b = OpeningBook::generate(start, n, plies, seed);
        b.save(path)?;
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use martian_rules::martian::{MartianChess, MartianRules};

    #[test]
    fn book_round_trip_and_is_deterministic() {
        let start = MartianChess::new_game(&MartianRules::default()).unwrap();
        let a = OpeningBook::generate(&start, 6, 4, 3);
        let b = OpeningBook::generate(&start, 6, 4, 3);
        assert_eq!(a, b);
        assert_eq!(a.openings.len(), 6);
        let lines = a.lines(&start).unwrap();
        assert!(lines.iter().all(|l| l.len() == 4));
        let dir = std::env::temp_dir().join(format!("mz-book-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("openings.json");
        a.save(&p).unwrap();
        assert_eq!(OpeningBook::load_or_create(&p, &start, 99, 9, 9).unwrap(), a);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
