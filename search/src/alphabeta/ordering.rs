//! Move ordering: hash move, captures by MVV-LVA, two killer moves per ply,
//! then the history heuristic (Schaeffer 1989; see the Chess Programming Wiki
//! "Move Ordering", "Killer Heuristic", "History Heuristic").

use martian_rules::Move;

use super::eval::AbGame;

const HASH: i32 = 1 << 30;
const CAPTURE: i32 = 1 << 28;
const KILLER0: i32 = 1 << 27;
const KILLER1: i32 = KILLER0 - 1;
/// History scores stay below this, so killers and captures come first.
const HISTORY_MAX: i32 = 1 << 24;

/// A move with its ordering key.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ScoredMove {
    /// The move.
    pub mv: Move,
    /// Ordering key (higher first).
    pub key: i32,
    /// Whether it captures.
    pub capture: bool,
}

/// Killer moves (two per ply) and the history table `[from][to]`.
pub struct Heuristics {
    killers: Vec<[Option<Move>; 2]>,
    history: Vec<i32>,
}

impl Heuristics {
    /// Tables for `max_ply` plies.
    pub fn new(max_ply: usize) -> Self {
        Heuristics { killers: vec![[None; 2]; max_ply + 1], history: vec![0; 256 * 256] }
    }

    /// Clears killers and halves history (between searches) or clears all.
    pub fn age(&mut self, clear: bool) {
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
        if clear {
            self.history.iter_mut().for_each(|h| *h = 0);
        } else {
            self.history.iter_mut().for_each(|h| *h /= 2);
        }
    }

    /// A quiet move caused a beta cutoff at `ply` with `depth` plies left.
    pub fn cutoff(&mut self, ply: usize, mv: Move, depth: u32) {
        if let Some(k) = self.killers.get_mut(ply) {
            if k[0] != Some(mv) {
                k[1] = k[0];
                k[0] = Some(mv);
            }
        }
        let h = &mut self.history[mv.from as usize * 256 + mv.to as usize];
        *h += (depth * depth) as i32;
        if *h >= HISTORY_MAX {
            self.history.iter_mut().for_each(|x| *x /= 2);
        }
    }

    /// Fills `out` with `moves` and their keys, sorted best first.
    pub fn order<G: AbGame>(
        &self,
        s: &G,
        moves: &[Move],
        hash_move: Option<Move>,
        ply: usize,
        out: &mut Vec<ScoredMove>,
    ) {
        out.clear();
        let killers = self.killers.get(ply).copied().unwrap_or([None; 2]);
        for &mv in moves {
            let cap = s.capture_values(mv);
            let key = if Some(mv) == hash_move {
                HASH
            } else if let Some((victim, attacker)) = cap {
                CAPTURE + victim * 64 - attacker
            } else if Some(mv) == killers[0] {
                KILLER0
            } else if Some(mv) == killers[1] {
                KILLER1
            } else {
                self.history[mv.from as usize * 256 + mv.to as usize]
            };
            out.push(ScoredMove { mv, key, capture: cap.is_some() });
        }
        // In place (no allocation); ties broken by the move itself, so the
        // order is a total, deterministic one.
        out.sort_unstable_by(|a, b| b.key.cmp(&a.key).then(a.mv.cmp(&b.mv)));
    }
}
