//! Matches between two players: game pairs from a shared random opening with
//! colours swapped, so opening luck cancels (fishtest / OpenBench practice).
//!
//! # Free-for-all
//! In a game of more than two value players (`GameState::num_players`,
//! four-player free-for-all) a "pair" is a group of `n` games from one
//! opening: one player A against `n - 1` copies of B, A in each seat once
//! ([`seatings`]). A game's score for A is `(v + 1) / 2` for A's result value
//! `v` (`GameState::player_values`, martian-chess §14.7): a sole win 1, a loss
//! (`v = -1/3`) 1/3, a win shared by two 2/3, by all four 1/2; players of
//! equal strength score 1/2 on average, as in two-player games, since the
//! values are zero-sum and the seats rotate. W/D/L count sole wins, shared
//! wins and losses; the Elo comes from the mean score
//! ([`crate::elo::elo_estimate_from_score`]); the pentanomial counts (pairs of
//! two games) stay 0. A match of `N` games is [`groups_for_games`] groups (`N`
//! rounded up to a multiple of `n`); each game names A's seat and the winning
//! seats ([`GameResult::winner`]).

use martian_rules::{GameState, Move, Side};

use crate::book::random_opening;
use crate::player::{Player, PlayerError};
use crate::result::{summarize, GameResult, MatchResult};

/// The value players A plays in turn in one group of games from one opening:
/// North then South (indices 1, 0) in a two-player game, every seat `0..n`
/// in a game of `n > 2` value players (free-for-all, module docs).
pub fn seatings(players: usize) -> Vec<usize> {
    if players > 2 {
        (0..players).collect()
    } else {
        vec![Side::North.index(), Side::South.index()]
    }
}

/// A's score of a finished game in which it played value player `a_player`:
/// `(v + 1) / 2` for its result value `v` ([`GameState::player_values`], which
/// is `Outcome::value_for` of each side in a two-sided game). An unfinished
/// game has no result and scores 0.5.
pub fn a_score_of<G: GameState>(end: &G, a_player: usize) -> f64 {
    end.player_values().map_or(0.5, |v| (f64::from(v[a_player]) + 1.0) / 2.0)
}

/// The [`GameResult`] fields `(a_side, a_seat)` of A playing value player
/// `a_player` in a game of `players` value players: the side in a two-sided
/// game, the seat in free-for-all.
pub fn a_seating(a_player: usize, players: usize) -> (Option<Side>, Option<u32>) {
    if players > 2 {
        (None, Some(a_player as u32))
    } else {
        (Some(Side::ALL[a_player % 2]), None)
    }
}

/// Games in one group from one opening: 2 in a two-player game (A on
/// either side), `n` in a game of `n > 2` value players (A in every seat once).
pub fn games_per_group(players: usize) -> u32 {
    seatings(players).len() as u32
}

/// Groups of games (pairs; free-for-all: groups of `n`) for `--games N`: `N`
/// rounded up to a whole number of groups, at least one group. In
/// four-player free-for-all `--games 4` is one group (A once in each seat),
/// `--games 6` two groups (8 games).
pub fn groups_for_games(games: u32, players: usize) -> u32 {
    games.div_ceil(games_per_group(players)).max(1)
}

/// Plays one game from `start`; `a` plays `a_side`.
///
/// # Errors
/// A player's error.
pub fn play_game<G: GameState>(
    start: &G,
    opening: &[Move],
    a: &mut dyn Player<G>,
    b: &mut dyn Player<G>,
    a_side: Side,
    pair: u32,
) -> Result<GameResult, PlayerError> {
    play_game_as(start, opening, a, b, a_side.index(), pair)
}

/// Plays one game from `start`; `a` plays value player `a_player`
/// (`GameState::player_to_move`: the side's index, or a free-for-all seat)
/// and `b` every other player.
///
/// # Errors
/// A player's error.
pub fn play_game_as<G: GameState>(
    start: &G,
    opening: &[Move],
    a: &mut dyn Player<G>,
    b: &mut dyn Player<G>,
    a_player: usize,
    pair: u32,
) -> Result<GameResult, PlayerError> {
    let mut s = start.clone();
    let mut moves: Vec<String> = Vec::new();
    for &m in opening {
        moves.push(s.move_to_string(m));
        s.play_unchecked(m);
    }
    a.new_game(&s);
    b.new_game(&s);
    while s.outcome().is_none() {
        let mover: &mut dyn Player<G> = if s.player_to_move() == a_player { &mut *a } else { &mut *b };
        let m = mover.choose_move(&s)?;
        // A player returning an illegal move is a bug; `play` checks it.
        moves.push(s.move_to_string(m));
        s.play(m).map_err(|_| PlayerError::NoMove)?;
    }
    Ok(game_result(&s, a_player, pair, moves))
}

/// The [`GameResult`] of the finished game `end` in which A played value
/// player `a_player`.
pub(crate) fn game_result<G: GameState>(end: &G, a_player: usize, pair: u32, moves: Vec<String>) -> GameResult {
    let o = end.outcome().expect("finished");
    let players = end.num_players();
    let (a_side, a_seat) = a_seating(a_player, players);
    let scores = if players > 2 { (0..players).map(|i| a_score_of(end, i)).collect() } else { Vec::new() };
    GameResult {
        pair,
        a_side,
        a_seat,
        a_colour: end.player_name(a_player).to_string(),
        a_score: a_score_of(end, a_player),
        scores,
        reason: o.reason,
        plies: end.ply(),
        moves,
        winner: end.winner_name(),
        a_points: a_side.and_then(|s| end.final_score_difference(s)),
    }
}

/// Plays `pairs` game pairs: each pair starts from the same random opening of
/// `opening_plies` plies, with A on one side in the first game and on the
/// other in the second. `on_game` sees every finished game.
///
/// # Errors
/// A player's error.
///
/// # Examples
/// Two network-free players, two pairs of Martian Chess games:
/// ```
/// use martian_evaluate::{play_match, GreedyPlayer, RandomPlayer};
/// use martian_rules::martian::{MartianChess, MartianRules};
/// use martian_rules::GameState;
///
/// let start = MartianChess::new_game(&MartianRules { max_plies: 60, ..MartianRules::default() }).unwrap();
/// let (mut greedy, mut random) = (GreedyPlayer::new(1), RandomPlayer::new(2));
/// let m = play_match(&start, &mut greedy, &mut random, 2, 4, 7, |_| {}).unwrap();
/// assert_eq!((m.a.as_str(), m.b.as_str()), ("greedy", "random"));
/// assert_eq!(m.games.len(), 4);
/// assert_eq!(m.wins + m.draws + m.losses, 4);
/// assert_eq!(m.pentanomial.iter().sum::<u32>(), 2, "two pairs");
/// // Each player played each side twice, once per pair.
/// for colours in [&m.a_colours, &m.b_colours] {
///     let played: Vec<(&str, u32)> = colours.iter().map(|c| (c.colour.as_str(), c.games)).collect();
///     assert_eq!(played, [("South", 2), ("North", 2)]);
/// }
/// assert_eq!(m.a_colours.iter().map(|c| c.wins).sum::<u32>(), m.wins);
/// assert!(m.colour_lines()[0].starts_with("greedy as South: +"));
/// ```
pub fn play_match<G: GameState>(
    start: &G,
    a: &mut dyn Player<G>,
    b: &mut dyn Player<G>,
    pairs: u32,
    opening_plies: u32,
    seed: u64,
    on_game: impl FnMut(&GameResult),
) -> Result<MatchResult, PlayerError> {
    let book: Vec<Vec<Move>> =
        (0..pairs).map(|p| random_opening(start, opening_plies, seed.wrapping_add(p as u64 * 7919)).1).collect();
    play_match_book(start, a, b, &book, pairs, on_game, |_| false)
}

/// Plays up to `pairs` game pairs, pair `p` from opening `book[p % len]`
/// (the initial position if the book is empty), colours swapped within each
/// pair (free-for-all: a group of games with A in every seat, [`seatings`]).
/// After every pair `stop` sees the match so far (games and
/// pentanomial counts filled in) and ends it early by returning true (an
/// SPRT, see [`crate::SprtParams`]).
///
/// # Errors
/// A player's error.
pub fn play_match_book<G: GameState>(
    start: &G,
    a: &mut dyn Player<G>,
    b: &mut dyn Player<G>,
    book: &[Vec<Move>],
    pairs: u32,
    mut on_game: impl FnMut(&GameResult),
    mut stop: impl FnMut(&MatchResult) -> bool,
) -> Result<MatchResult, PlayerError> {
    let mut games = Vec::new();
    let mut pent = [0u32; 5];
    let players = start.num_players();
    for p in 0..pairs {
        let opening: &[Move] = if book.is_empty() { &[] } else { &book[p as usize % book.len()] };
        let mut pair_score = 0.0;
        for a_player in seatings(players) {
            let g = play_game_as(start, opening, a, b, a_player, p)?;
            pair_score += g.a_score;
            on_game(&g);
            games.push(g);
        }
        if players <= 2 {
            pent[(pair_score * 2.0).round() as usize] += 1;
        }
        if p + 1 < pairs && stop(&summarize(a.name(), b.name(), games.clone(), pent)) {
            break;
        }
    }
    let res = summarize(a.name(), b.name(), games, pent);
    Ok(res)
}

/// One player against a ladder of opponents (a gauntlet): one
/// [`play_match_book`] per opponent, in order, same openings for each.
///
/// # Errors
/// A player's error.
pub fn gauntlet<G: GameState>(
    start: &G,
    a: &mut dyn Player<G>,
    opponents: &mut [Box<dyn Player<G> + '_>],
    book: &[Vec<Move>],
    pairs: u32,
    mut on_game: impl FnMut(usize, &GameResult),
) -> Result<Vec<MatchResult>, PlayerError> {
    let mut out = Vec::new();
    for (i, b) in opponents.iter_mut().enumerate() {
        out.push(play_match_book(start, a, b.as_mut(), book, pairs, |g| on_game(i, g), |_| false)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::OpeningBook;
    use crate::player::{AlphaBetaPlayer, RandomPlayer};
    use martian_rules::martian::{MartianChess, MartianRules};
    use martian_search::{AlphaBetaConfig, Limits};

    #[test]
    fn alphabeta_beats_random_and_stop_ends_early() {
        let start = MartianChess::new_game(&MartianRules::default()).unwrap();
        let book = OpeningBook::generate(&start, 4, 2, 1).lines(&start).unwrap();
        let mut ab =
            AlphaBetaPlayer::<MartianChess>::new(AlphaBetaConfig { tt_mib: 1, ..Default::default() }, Limits::depth(2));
        let mut rnd = RandomPlayer::new(3);
        assert_eq!(Player::<MartianChess>::name(&ab), "alphabeta:depth=2");
        let m = play_match_book(&start, &mut ab, &mut rnd, &book, 2, |_| {}, |_| false).unwrap();
        assert_eq!(m.games.len(), 4);
        assert_eq!(m.pentanomial.iter().sum::<u32>(), 2);
        assert!(m.wins >= 3, "{} {} {}", m.wins, m.draws, m.losses);
        // Both games of a pair start from the same opening.
        assert_eq!(m.games[0].moves[..2], m.games[1].moves[..2]);
        let m = play_match_book(&start, &mut ab, &mut rnd, &book, 5, |_| {}, |r| r.games.len() >= 2).unwrap();
        assert_eq!(m.games.len(), 2);
        let mut opps: Vec<Box<dyn Player<MartianChess>>> =
            vec![Box::new(RandomPlayer::new(4)), Box::new(RandomPlayer::new(5))];
        let g = gauntlet(&start, &mut ab, &mut opps, &book, 1, |_, _| {}).unwrap();
        assert_eq!(g.len(), 2);
    }
}
