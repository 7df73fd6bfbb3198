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
//! move, Teytaud & Teytaud 2010), `threatens_win` and `forcing_moves` (prune
//! the first moves that cannot start a forced win: a win in three plies needs
//! a threat after its first move unless every reply creates one, a
//! zugzwang; the game picks the candidates from its board, without playing
//! the rest) and `safe_reply` (a reply that parries every threat, found on
//! the board, refutes a candidate without playing the replies one by one).
//! A proof is exact; the pruned form only finds fewer of them.

use martian_rules::{GameState, Move};

/// The deepest proof: wins within this many plies (odd).
pub(crate) const MAX_PROOF_PLIES: u32 = 5;

/// Scratch of one level of a proof (two plies: a first move and the replies).
struct Level<G> {
    a: G,
    b: G,
    first: Vec<Move>,
    /// The first moves that may start a win (`GameState::forcing_moves`).
    forcing: Vec<Move>,
    replies: Vec<Move>,
    /// The reply that refuted the last candidate first move at this level
    /// (killer heuristic): tried first on the next candidate.
    killer: Option<Move>,
}

/// Scratch states and move lists of the proofs, one [`Level`] per two plies,
/// reused so that a proof allocates nothing once the lists have capacity
/// `G::MAX_MOVES`.
pub(crate) struct Prover<G: GameState> {
    levels: Vec<Level<G>>,
}

impl<G: GameState> Prover<G> {
    pub(crate) fn new(g: &G) -> Prover<G> {
        let levels = (0..MAX_PROOF_PLIES / 2)
            .map(|_| Level {
                a: g.clone(),
                b: g.clone(),
                first: Vec::with_capacity(G::MAX_MOVES),
                forcing: Vec::with_capacity(G::MAX_MOVES),
                replies: Vec::with_capacity(G::MAX_MOVES),
                killer: None,
            })
            .collect();
        Prover { levels }
    }

    /// Plies to the shortest forced win of `g`'s side to move, if it has one
    /// within `max_plies` (1, 3 or 5; an even value counts as the odd one
    /// below it; 0 proves nothing): 1 when a move wins at once; `k + 2` when
    /// a move leaves the opponent without a winning move of its own and every
    /// reply (none of which may end the game otherwise, as a draw would) is
    /// answered by a forced win within `k`. `None` when there is none that
    /// short or the game is over.
    pub(crate) fn win_within(&mut self, g: &G, max_plies: u32, exhaustive: bool) -> Option<u16> {
        self.winning_line(g, max_plies, exhaustive).map(|(plies, _)| plies)
    }

    /// [`Prover::win_within`] with the first move of a forced win of that
    /// length: `None` as the move for a win at once (`has_winning_move` does
    /// not say which move; the tree's terminal children do), the move for a
    /// longer win.
    ///
    /// Without `exhaustive`, first moves after which the side to move has no
    /// threat (`GameState::threatens_win`) are skipped: several times faster,
    /// and it misses only the wins that start with a zugzwang (every reply
    /// opens a line without a threat before it), so what it proves is still
    /// exact. With `exhaustive` every first move of a three-ply proof is
    /// tried (five-ply proofs always skip them).
    pub(crate) fn winning_line(&mut self, g: &G, max_plies: u32, exhaustive: bool) -> Option<(u16, Option<Move>)> {
        self.winning_line_from(g, None, max_plies, exhaustive)
    }

    /// [`Prover::winning_line`] with `g`'s legal moves given when the caller
    /// has them (an expansion does), so that they are not generated again.
    pub(crate) fn winning_line_from(
        &mut self,
        g: &G,
        legal: Option<&[Move]>,
        max_plies: u32,
        exhaustive: bool,
    ) -> Option<(u16, Option<Move>)> {
        if max_plies == 0 || g.outcome().is_some() {
            return None;
        }
        if g.has_winning_move() {
            return Some((1, None));
        }
        let max = max_plies.min(MAX_PROOF_PLIES);
        let mut plies = 3;
        while plies <= max {
            // Exhaustive only at three plies: five would try every first move's
            // every reply with a three-ply proof each.
            if let Some(m) = win_in(&mut self.levels, g, legal, plies, exhaustive && plies == 3) {
                return Some((plies as u16, Some(m)));
            }
            plies += 2;
        }
        None
    }
}

/// A first move of `g`'s side to move that forces a win within `plies`
/// (>= 3), given that it has no win at once; `levels[0]` is this level's
/// scratch, the rest the deeper levels'. `legal`: `g`'s legal moves, when
/// the caller has them.
fn win_in<G: GameState>(
    levels: &mut [Level<G>],
    g: &G,
    legal: Option<&[Move]>,
    plies: u32,
    exhaustive: bool,
) -> Option<Move> {
    let (lv, rest) = levels.split_first_mut()?;
    let me = g.side_to_move();
    let mut first = std::mem::take(&mut lv.first);
    match legal {
        Some(moves) => {
            first.clear();
            first.extend_from_slice(moves);
        }
        None => g.legal_moves(&mut first),
    }
    lv.killer = None;
    let mut found = None;
    // Only the moves that leave a threat (or, exhaustively, that may leave the
    // opponent in zugzwang) can start a forced win: the game picks them from
    // its board without playing the others.
    let mut forcing = std::mem::take(&mut lv.forcing);
    g.forcing_moves(&first, exhaustive, &mut forcing);
    for &m in &forcing {
        lv.a.clone_from(g);
        lv.a.play_unchecked(m);
        // A move that ends the game does not win (else `has_winning_move`
        // had said so); a move without a threat cannot force a win next,
        // save a zugzwang.
        if lv.a.outcome().is_some() || (!exhaustive && !lv.a.threatens_win()) || lv.a.has_winning_move() {
            continue;
        }
        if every_reply_loses(lv, rest, me, plies - 2) {
            found = Some(m);
            break;
        }
    }
    lv.first = first;
    lv.forcing = forcing;
    found
}

/// With `lv.a` the position after a candidate first move (the opponent to
/// move, no winning move of its own): whether every reply leaves `me` a
/// forced win within `plies` (1, or 3 through the deeper `rest`). A reply
/// that ends the game refutes unless it is `me`'s win. The killer reply goes
/// first, then the game's safe reply (`GameState::safe_reply`).
fn every_reply_loses<G: GameState>(
    lv: &mut Level<G>,
    rest: &mut [Level<G>],
    me: martian_rules::Side,
    plies: u32,
) -> bool {
    // A one-ply remainder is refuted by any reply that leaves `me` no win at
    // once: the game looks for one on its board before the replies are
    // generated (the proof's answer is the same whichever refutes).
    if plies < 3 {
        if let Some(r) = lv.a.safe_reply_from_board() {
            lv.killer = Some(r);
            return false;
        }
    }
    let mut replies = std::mem::take(&mut lv.replies);
    lv.a.legal_moves(&mut replies);
    // The killer first: it usually refutes this candidate too.
    let killer = lv.killer.filter(|k| replies.contains(k));
    if let Some(k) = killer {
        if !reply_loses(lv, rest, me, plies, k) {
            lv.replies = replies;
            return false;
        }
    }
    // A reply that leaves `me` no winning move refutes a one-ply remainder
    // at once; the game finds one on its board.
    if plies < 3 {
        if let Some(r) = lv.a.safe_reply(&replies) {
            lv.killer = Some(r);
            lv.replies = replies;
            return false;
        }
    }
    let mut ok = !replies.is_empty();
    for &r in &replies {
        if Some(r) != killer && !reply_loses(lv, rest, me, plies, r) {
            lv.killer = Some(r);
            ok = false;
            break;
        }
    }
    lv.replies = replies;
    ok
}

/// Whether the reply `r` in `lv.a` leaves `me` a forced win within `plies`
/// (played in `lv.b`; a reply that ends the game loses only to `me`'s win).
fn reply_loses<G: GameState>(
    lv: &mut Level<G>,
    rest: &mut [Level<G>],
    me: martian_rules::Side,
    plies: u32,
    r: Move,
) -> bool {
    lv.b.clone_from(&lv.a);
    lv.b.play_unchecked(r);
    match lv.b.outcome() {
        Some(o) => o.winner == Some(me),
        None if lv.b.has_winning_move() => true,
        None if plies >= 3 => win_in(rest, &lv.b, None, plies, false).is_some(),
        None => false,
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
        let (mut checked, mut wins3, mut missed) = (0, 0, 0);
        let mut moves = Vec::new();
        for seed in 0..games {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut g = start.clone();
            let mut ply = 0usize;
            while g.outcome().is_none() && checked < max_checks {
                if ply.is_multiple_of(every) {
                    let w1 = brute_win(&g, 1);
                    let w3 = brute_win(&g, 3);
                    let p = prover.win_within(&g, 3, true);
                    assert_eq!(p.is_some(), w3, "{}: prover {p:?}, minimax {w3}", g.to_position());
                    assert_eq!(p == Some(1), w1, "{}: prover {p:?}, win at once {w1}", g.to_position());
                    assert_eq!(prover.win_within(&g, 1, true).is_some(), w1);
                    // The pruned form proves nothing false, and misses only zugzwangs.
                    let q = prover.win_within(&g, 3, false);
                    assert!(q.is_none() || q == p, "{}: pruned {q:?}, exhaustive {p:?}", g.to_position());
                    missed += usize::from(q != p);
                    wins3 += usize::from(p == Some(3));
                    checked += 1;
                }
                g.legal_moves(&mut moves);
                let m = *moves.choose(&mut rng).unwrap();
                g.play_unchecked(m);
                ply += 1;
            }
        }
        assert!(missed * 4 <= wins3.max(1), "the pruned form missed {missed} of {wins3} wins in three");
        (checked, wins3)
    }

    /// Every five-ply win the prover finds in seeded random Jetan games is a
    /// forced win by plain minimax, and not a shorter one.
    #[test]
    fn jetan_five_ply_proofs_are_wins() {
        let start = Jetan::new_game(&JetanRules::default()).unwrap();
        let mut prover = Prover::new(&start);
        let mut moves = Vec::new();
        let mut verified = 0;
        for seed in 0..60u64 {
            let mut rng = StdRng::seed_from_u64(seed);
            let mut g = start.clone();
            while g.outcome().is_none() && verified < 3 {
                if let Some((5, Some(m))) = prover.winning_line(&g, 5, false) {
                    assert!(!brute_win(&g, 3), "{}: a shorter win exists", g.to_position());
                    let me = g.side_to_move();
                    let mut a = g.clone();
                    a.play_unchecked(m);
                    let mut replies = Vec::new();
                    a.legal_moves(&mut replies);
                    assert!(a.outcome().is_none() && !replies.is_empty());
                    for r in replies {
                        let mut b = a.clone();
                        b.play_unchecked(r);
                        let won = match b.outcome() {
                            Some(o) => o.winner == Some(me),
                            None => brute_win(&b, 3),
                        };
                        assert!(
                            won,
                            "{}: {} then {} escapes",
                            g.to_position(),
                            g.move_to_string(m),
                            a.move_to_string(r)
                        );
                    }
                    verified += 1;
                }
                g.legal_moves(&mut moves);
                let m = *moves.choose(&mut rng).unwrap();
                g.play_unchecked(m);
            }
        }
        assert!(verified >= 1, "no five-ply win found: not a test of them");
    }

    #[test]
    fn jetan_proofs_equal_minimax() {
        let (checked, wins3) = agrees_with_minimax(Jetan::new_game(&JetanRules::default()).unwrap(), 40, 3, 600);
        assert!(checked >= 300, "{checked}");
        assert!(wins3 >= 5, "only {wins3} wins in three plies among {checked} positions: not a test of them");
    }

    #[test]
    fn martian_chess_proofs_equal_minimax() {
        let (checked, wins3) =
            agrees_with_minimax(MartianChess::new_game(&MartianRules::default()).unwrap(), 40, 2, 400);
        assert!(checked >= 200, "{checked}");
        let _ = wins3; // Martian Chess ends by an empty zone: three-ply wins are rare in random games.
    }
}
