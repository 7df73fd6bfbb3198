//! Generic perft and divide (jetan spec §15, martian-chess spec §16).
//!
//! `perft(pos, 0) = 1`; for `d >= 1` a finished game counts 0, otherwise the sum
//! over legal moves of `perft(child, d - 1)`. The last ply is bulk-counted with
//! [`GameState::count_legal_moves`].

use crate::game::{GameState, Move};

/// Number of leaf paths of length `depth` from `pos`.
///
/// ```
/// use martian_rules::martian::MartianChess;
/// use martian_rules::{divide, perft, GameState};
///
/// // The start position of Martian Chess (`rules/tests/data/martian-chess.perft`).
/// let start = MartianChess::new_game(&Default::default())?;
/// assert_eq!(perft(&start, 1), 10);
/// assert_eq!(perft(&start, 3), 1328);
/// // `divide` splits a count by first move.
/// assert_eq!(divide(&start, 3).iter().map(|&(_, n)| n).sum::<u64>(), 1328);
/// # Ok::<(), martian_rules::RulesError>(())
/// ```
pub fn perft<G: GameState>(pos: &G, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let mut stack: Vec<(G, Vec<Move>)> = (0..depth).map(|_| (pos.clone(), Vec::with_capacity(G::MAX_MOVES))).collect();
    perft_rec(&mut stack, depth)
}

/// `stack[0]` holds the current position; deeper entries are scratch states
/// reused with `clone_from`, so the recursion allocates nothing per node.
fn perft_rec<G: GameState>(stack: &mut [(G, Vec<Move>)], depth: u32) -> u64 {
    if depth == 1 {
        return stack[0].0.count_legal_moves() as u64;
    }
    let (head, tail) = stack.split_at_mut(1);
    let (pos, moves) = &mut head[0];
    pos.legal_moves(moves);
    let mut total = 0;
    for &mv in moves.iter() {
        tail[0].0.clone_from(pos);
        tail[0].0.play_unchecked(mv);
        total += perft_rec(tail, depth - 1);
    }
    total
}

/// Perft of each legal move's child at `depth - 1`, in legal-move order.
/// Empty if `depth == 0` or the game is over.
pub fn divide<G: GameState>(pos: &G, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    let mut moves = Vec::with_capacity(G::MAX_MOVES);
    pos.legal_moves(&mut moves);
    moves
        .into_iter()
        .map(|mv| {
            let mut child = pos.clone();
            child.play_unchecked(mv);
            (mv, perft(&child, depth - 1))
        })
        .collect()
}
