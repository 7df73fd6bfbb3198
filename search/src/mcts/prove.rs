//! Shallow exact proofs for the tree: forced wins within one and three plies.
//!
//! UCT's known blind spot is the shallow trap: a move after which the
//! opponent forces a win in a few plies looks no worse than its siblings
//! until the search happens to visit the exact refutation, which a
//! uniform-prior search over ~80 Jetan moves does not within a few hundred
//! simulations (Ramanujan, Sabharwal & Selman, "On adversarial search spaces
//! and sampling-based planning", ICAPS 2010). The MCTS-minimax hybrids of
//! Baier & Winands ("MCTS-Minimax Hybrids", IEEE TCIAIG 2015) run a shallow
//! minimax proof inside the tree instead: here at expansion and before the
//! search, for every root move (see [`crate::MctsConfig::trap_plies`]).
//!
//! Everything goes through the game interface: `has_winning_move` (a decisive
//! move, Teytaud & Teytaud 2010) and `threatens_win` (prunes the first moves
//! that cannot start a forced win: a win in three plies needs a threat after
//! its first move). A proof is exact; `threatens_win` may only make it slower.

use martian_rules::{GameState, Move};

/// Scratch states and move lists of the proofs, reused so that a proof
/// allocates nothing once the lists have capacity `G::MAX_MOVES`.
pub(crate) struct Prover<G: GameState> {
    a: G,
    b: G,
    first: Vec<Move>,
    replies: Vec<Move>,
    /// The reply that refuted the last candidate first move (killer
    /// heuristic): tried first on the next candidate.
    killer: Option<Move>,
}

impl<G: GameState> Prover<G> {
    pub(crate) fn new(g: &G) -> Prover<G> {
        Prover {
            a: g.clone(),
            b: g.clone(),
            first: Vec::with_capacity(G::MAX_MOVES),
            replies: Vec::with_capacity(G::MAX_MOVES),
            killer: None,
        }
    }

    /// Plies to the shortest forced win of `g`'s side to move, if it has one
    /// within `max_plies` (1 or 3; other values are read as the largest of
    /// those not above them; 0 proves nothing): 1 when a move wins at once,
    /// 3 when a move leaves the opponent without a winning move of its own,
    /// without a move that ends the game otherwise (a draw), and with every
    /// reply answered by a win at once. `None` when there is none that short
    /// or the game is over.
    pub(crate) fn win_within(&mut self, g: &G, max_plies: u32) -> Option<u16> {
        self.winning_line(g, max_plies).map(|(plies, _)| plies)
    }

    /// [`Prover::win_within`] with the first move of a forced win of that
    /// length: `None` as the move for a win at once (`has_winning_move` does
    /// not say which move; the tree's terminal children do), the move for a
    /// win in three.
    pub(crate) fn winning_line(&mut self, g: &G, max_plies: u32) -> Option<(u16, Option<Move>)> {
        if max_plies == 0 || g.outcome().is_some() {
            return None;
        }
        if g.has_winning_move() {
            return Some((1, None));
        }
        if max_plies < 3 {
            return None;
        }
        let me = g.side_to_move();
        g.legal_moves(&mut self.first);
        self.killer = None;
        for k in 0..self.first.len() {
            let m = self.first[k];
            self.a.clone_from(g);
            self.a.play_unchecked(m);
            // A move that ends the game does not win (else `has_winning_move`
            // had said so); a move without a threat cannot force a win next.
            if self.a.outcome().is_some() || !self.a.threatens_win() || self.a.has_winning_move() {
                continue;
            }
            if self.every_reply_loses_at_once(me) {
                return Some((3, Some(m)));
            }
        }
        None
    }

    /// With `self.a` the position after a candidate first move (the opponent
    /// to move, no winning move of its own): whether every reply leaves `me`
    /// a win at once. A reply that ends the game refutes unless it is `me`'s
    /// win. The killer reply goes first.
    fn every_reply_loses_at_once(&mut self, me: martian_rules::Side) -> bool {
        self.a.legal_moves(&mut self.replies);
        if self.replies.is_empty() {
            return false;
        }
        if let Some(k) = self.killer {
            if let Some(i) = self.replies.iter().position(|&r| r == k) {
                self.replies.swap(0, i);
            }
        }
        for i in 0..self.replies.len() {
            let r = self.replies[i];
            self.b.clone_from(&self.a);
            self.b.play_unchecked(r);
            let refuted = match self.b.outcome() {
                Some(o) => o.winner != Some(me),
                None => !self.b.has_winning_move(),
            };
            if refuted {
                self.killer = Some(r);
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use martian_rules::jetan::{Jetan, JetanRules};
    use martian_rules::martian::{MartianChess, MartianRules};
    use rand::rngs::StdRng;
    use rand::seq::SliceRandom;
    use rand::SeedableRng;

    /// Plain minimax: whether the side to move forces a win within `plies`
    /// (odd) plies, every move of every position played.
    fn brute_win<G: GameState>(g: &G, plies: u32) -> bool {
        if g.outcome().is_some() || plies == 0 {
            return false;
        }
        let me = g.side_to_move();
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        moves.iter().any(|&m| {
            let mut a = g.clone();
            a.play_unchecked(m);
            if let Some(o) = a.outcome() {
                return o.winner == Some(me);
            }
            if plies < 3 {
                return false;
            }
            let mut replies = Vec::new();
            a.legal_moves(&mut replies);
            !replies.is_empty()
                && replies.iter().all(|&r| {
                    let mut b = a.clone();
                    b.play_unchecked(r);
                    match b.outcome() {
                        Some(o) => o.winner == Some(me),
                        None => brute_win(&b, plies - 2),
                    }
                })
        })
    }

    /// The proof equals plain minimax at one and three plies on positions of
    /// seeded random games (where wins within three plies are common).
    fn agrees_with_minimax<G: GameState>(start: G, games: u64, every: usize, max_checks: usize) -> (usize, usize) {
        let mut prover = Prover::new(&start);
        let (mut checked, mut wins3) = (0, 0);
        let mut moves = Vec::new();
        for seed in 0..games {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut g = start.clone();
            let mut ply = 0usize;
            while g.outcome().is_none() && checked < max_checks {
                if ply % every == 0 {
                    let w1 = brute_win(&g, 1);
                    let w3 = brute_win(&g, 3);
                    let p = prover.win_within(&g, 3);
                    assert_eq!(p.is_some(), w3, "{}: prover {p:?}, minimax {w3}", g.to_position());
                    assert_eq!(p == Some(1), w1, "{}: prover {p:?}, win at once {w1}", g.to_position());
                    assert_eq!(prover.win_within(&g, 1).is_some(), w1);
                    wins3 += usize::from(p == Some(3));
                    checked += 1;
                }
                g.legal_moves(&mut moves);
                let m = *moves.choose(&mut rng).unwrap();
                g.play_unchecked(m);
                ply += 1;
            }
        }
        (checked, wins3)
    }

    #[test]
    fn jetan_proofs_equal_minimax() {
        let (checked, wins3) = agrees_with_minimax(Jetan::new_game(&JetanRules::default()).unwrap(), 40, 3, 600);
        assert!(checked >= 300, "{checked}");
        assert!(wins3 >= 5, "only {wins3} wins in three plies among {checked} positions: not a test of them");
    }

    #[test]
    fn martian_chess_proofs_equal_minimax() {
        let (checked, wins3) = agrees_with_minimax(MartianChess::new_game(&MartianRules::default()).unwrap(), 40, 2, 400);
        assert!(checked >= 200, "{checked}");
        let _ = wins3; // Martian Chess ends by an empty zone: three-ply wins are rare in random games.
    }
}
