//! What a match gives: the games ([`GameResult`]), the totals with the Elo
//! and the pentanomial ([`MatchResult`]), and each player's results per
//! colour ([`ColourScore`]). A leaf module: the players and the match loops
//! (`arena`, `batched`) build these, nothing here plays.
//!
//! # W/D/L and colours
//! A two-player game is a win for A at score 1, a draw at 1/2, a loss at 0.
//! In free-for-all (module docs of `arena`) a "win" is a sole win
//! (score 1), a "loss" a game another seat won (1/3), and a "draw" a shared
//! win. A colour is what a player played in a game: its side (`Orange`,
//! `South`; in the four-player team game the team `SW+NE`) or its free-for-all
//! seat (`SW`), named by `GameState::player_name`. The per-colour tallies are
//! those that cutechess prints (`Score of A vs B ... A playing White: ...`):
//! a first-move advantage shows as a gap between a player's colours.

use martian_rules::{EndReason, Side};
use serde::{Deserialize, Serialize};

use crate::elo::{elo_estimate, elo_estimate_from_score, EloEstimate};

/// Result of one game from the first player's (A's) point of view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameResult {
    /// Index of the pair.
    pub pair: u32,
    /// Side A played in a two-sided game (in the four-player team game A's
    /// team's side); `None` in free-for-all, where `a_seat` and `a_colour`
    /// name A's seat (results written before held the side of index
    /// `a_seat % 2` there, which names no seat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a_side: Option<Side>,
    /// Free-for-all: the value player (seat index) A played; `None` in
    /// two-player games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a_seat: Option<u32>,
    /// The name of the colour A played (module docs): `Orange`, `South`,
    /// `SW+NE`, or the free-for-all seat `SW`. Empty in results written
    /// before it was recorded.
    #[serde(default)]
    pub a_colour: String,
    /// 1 win for A, 0.5 draw, 0 loss; free-for-all `(v + 1) / 2` for A's
    /// result value `v` (`arena` module docs).
    pub a_score: f64,
    /// Free-for-all: every seat's score `(v + 1) / 2`, by seat index (A's
    /// is `a_score`, the others are B's copies'); empty in two-player games,
    /// where B scores `1 - a_score`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scores: Vec<f64>,
    /// What ended the game.
    pub reason: EndReason,
    /// Plies played (including the opening).
    pub plies: u32,
    /// Moves of the game, `<from><to>` (opening included).
    pub moves: Vec<String>,
    /// Who won, as game records name it (`GameState::winner_name`): the
    /// winning side (`South`; the team `SW+NE`), `None` for a draw; in
    /// free-for-all the winning seat (`NW`) or the seats that shared the win
    /// (`SW,NE`). `None` also in results written before it was recorded.
    #[serde(default)]
    pub winner: Option<String>,
    /// A's final point difference (its points minus the other side's,
    /// `GameState::final_score_difference`; Martian Chess: pips captured,
    /// spec §6) in two-player games with points; `None` for games without
    /// points, free-for-all, and results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a_points: Option<i32>,
}

impl GameResult {
    /// The value player A played: its seat in free-for-all, else its side's index.
    pub fn a_player(&self) -> usize {
        self.a_seat.map_or_else(|| self.a_side.map_or(0, Side::index), |s| s as usize)
    }

    /// `(value player, score)` of every player of B's in the game: the other
    /// side at `1 - a_score`, or in free-for-all each other seat at its score
    /// ([`GameResult::scores`]; none if those are missing).
    fn b_scores(&self) -> Vec<(usize, f64)> {
        let a = self.a_player();
        if self.a_seat.is_none() {
            vec![(1 - a.min(1), 1.0 - self.a_score)]
        } else {
            self.scores.iter().enumerate().filter(|&(i, _)| i != a).map(|(i, &s)| (i, s)).collect()
        }
    }
}

/// One player's results in one colour (side or seat) over a match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColourScore {
    /// The colour's name (module docs): `Orange`, `South`, `SW+NE`, `SW`.
    pub colour: String,
    /// Games the player played in it (in free-for-all B counts once per copy).
    pub games: u32,
    /// Wins (free-for-all: sole wins).
    pub wins: u32,
    /// Draws (free-for-all: shared wins).
    pub draws: u32,
    /// Losses.
    pub losses: u32,
    /// Mean score in `[0, 1]` of those games (0 for none).
    pub score: f64,
}

impl ColourScore {
    /// `as Orange: +3 =1 -0 (0.875)`.
    pub fn text(&self) -> String {
        format!("as {}: +{} ={} -{} ({:.3})", self.colour, self.wins, self.draws, self.losses, self.score)
    }
}

/// Summary of a match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchResult {
    /// Name of player A.
    pub a: String,
    /// Name of player B.
    pub b: String,
    /// Wins of A.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses of A.
    pub losses: u32,
    /// A's W/D/L per colour ([`ColourScore`]), in value-player order (South,
    /// North; free-for-all SW, NW, NE, SE). Empty in results written before
    /// it was reported.
    #[serde(default)]
    pub a_colours: Vec<ColourScore>,
    /// B's W/D/L per colour, likewise: the mirror of A's in a two-player match
    /// (B plays the other side); in free-for-all the results of B's copies in
    /// each seat.
    #[serde(default)]
    pub b_colours: Vec<ColourScore>,
    /// Pair scores of A: counts of pairs scoring 0, 0.5, 1, 1.5, 2 (pentanomial).
    pub pentanomial: [u32; 5],
    /// Elo of A relative to B with a 95% interval; `None` with no games.
    pub elo: Option<EloEstimate>,
    /// Every game.
    pub games: Vec<GameResult>,
}

impl MatchResult {
    /// A's point difference over the match: `(total, per game, games)` over
    /// the games that recorded one ([`GameResult::a_points`]); `None` when
    /// none did (a game without points). The material reading of a match
    /// beside its W/D/L: a player that wins close games on a rule such as
    /// Martian Chess's clock can still lose the captures by a wide margin.
    pub fn point_difference(&self) -> Option<(i64, f64, u32)> {
        let pts: Vec<i64> = self.games.iter().filter_map(|g| g.a_points.map(i64::from)).collect();
        (!pts.is_empty()).then(|| {
            let total: i64 = pts.iter().sum();
            (total, total as f64 / pts.len() as f64, pts.len() as u32)
        })
    }

    /// A's wins and losses per 100 games (`None` with no games): the
    /// loss-centred reading of a match that a drawish game needs, where a
    /// stronger player shows as wins without losses long before its score
    /// moves far from 0.5 (Jetan under §8.2, `docs/evaluation.md`).
    pub fn per_100(&self) -> Option<(f64, f64)> {
        let n = self.wins + self.draws + self.losses;
        (n > 0).then(|| (100.0 * self.wins as f64 / n as f64, 100.0 * self.losses as f64 / n as f64))
    }

    /// The per-colour lines of the human report, one per player:
    /// `A as South: +3 =1 -1 (0.700), as North: +2 =1 -2 (0.500)`, then B's.
    /// Empty lists give no line.
    pub fn colour_lines(&self) -> Vec<String> {
        [(&self.a, &self.a_colours), (&self.b, &self.b_colours)]
            .into_iter()
            .filter(|(_, c)| !c.is_empty())
            .map(|(name, c)| {
                let parts: Vec<String> = c.iter().map(ColourScore::text).collect();
                format!("{name} {}", parts.join(", "))
            })
            .collect()
    }
}

/// Win, draw or loss (0, 1, 2) of a game score (module docs).
fn wdl(score: f64, ffa: bool) -> usize {
    let (win, loss) = if ffa { (score > 1.0 - 1e-6, score < 1.0 / 3.0 + 1e-6) } else { (score > 0.75, score < 0.25) };
    if win {
        0
    } else if loss {
        2
    } else {
        1
    }
}

/// Tallies `(value player, score)` entries of one player per colour, in
/// value-player order; `names[i]` names player `i` (empty: `player i`).
pub(crate) fn tally_colours(entries: &[(usize, f64)], names: &[String], ffa: bool) -> Vec<ColourScore> {
    let players = entries.iter().map(|&(i, _)| i + 1).max().unwrap_or(0);
    (0..players)
        .filter_map(|i| {
            let scores: Vec<f64> = entries.iter().filter(|&&(p, _)| p == i).map(|&(_, s)| s).collect();
            if scores.is_empty() {
                return None;
            }
            let mut count = [0u32; 3];
            scores.iter().for_each(|&s| count[wdl(s, ffa)] += 1);
            let colour = names.get(i).filter(|n| !n.is_empty()).cloned().unwrap_or_else(|| format!("player {i}"));
            Some(ColourScore {
                colour,
                games: scores.len() as u32,
                wins: count[0],
                draws: count[1],
                losses: count[2],
                score: scores.iter().sum::<f64>() / scores.len() as f64,
            })
        })
        .collect()
}

/// The [`MatchResult`] of `games` with the pentanomial counts `pent`.
pub(crate) fn summarize(a: String, b: String, games: Vec<GameResult>, pent: [u32; 5]) -> MatchResult {
    let ffa = games.iter().any(|g| g.a_seat.is_some());
    // The colours' names, from the colours A played (A plays every colour).
    let mut names: Vec<String> = Vec::new();
    for g in &games {
        let i = g.a_player();
        if names.len() <= i {
            names.resize(i + 1, String::new());
        }
        if names[i].is_empty() {
            names[i].clone_from(&g.a_colour);
        }
    }
    let a_entries: Vec<(usize, f64)> = games.iter().map(|g| (g.a_player(), g.a_score)).collect();
    let b_entries: Vec<(usize, f64)> = games.iter().flat_map(GameResult::b_scores).collect();
    let (a_colours, b_colours) = (tally_colours(&a_entries, &names, ffa), tally_colours(&b_entries, &names, ffa));
    let mut count = [0u32; 3];
    games.iter().for_each(|g| count[wdl(g.a_score, ffa)] += 1);
    let [wins, draws, losses] = count;
    let elo = if ffa {
        // Free-for-all: the Elo of the mean score (`arena` module docs).
        elo_estimate_from_score(games.iter().map(|g| g.a_score).sum(), games.len() as u32)
    } else {
        elo_estimate(wins, draws, losses)
    };
    MatchResult { a, b, wins, draws, losses, a_colours, b_colours, pentanomial: pent, elo, games }
}

/// A [`MatchResult`] from games of paired openings (sorted by pair, A on
/// North first); pentanomial counts from the pairs' summed scores.
pub fn summarize_games(a: String, b: String, mut games: Vec<GameResult>) -> MatchResult {
    games.sort_by_key(|g| (g.pair, g.a_seat.unwrap_or(u32::from(g.a_side != Some(Side::North)))));
    let mut pent = [0u32; 5];
    // Pairs of two games only (free-for-all groups leave the counts at 0).
    for pair in games.chunk_by(|x, y| x.pair == y.pair).filter(|p| p.iter().all(|g| g.a_seat.is_none())) {
        let s: f64 = pair.iter().map(|g| g.a_score).sum();
        pent[((s * 2.0).round() as usize).min(4)] += 1;
    }
    summarize(a, b, games, pent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wins_and_losses_per_100_games() {
        let m = |wins, draws, losses| MatchResult {
            a: "a".into(),
            b: "b".into(),
            wins,
            draws,
            losses,
            a_colours: Vec::new(),
            b_colours: Vec::new(),
            pentanomial: [0; 5],
            elo: None,
            games: Vec::new(),
        };
        // Depth 4 against depth 2 under Jetan's §8.2 draw: +24 =176 -0.
        assert_eq!(m(24, 176, 0).per_100(), Some((12.0, 0.0)));
        assert_eq!(m(1, 2, 1).per_100(), Some((25.0, 25.0)));
        assert_eq!(m(0, 0, 0).per_100(), None);
    }

    fn game(pair: u32, a_player: usize, ffa: bool, a_score: f64, scores: &[f64]) -> GameResult {
        const SIDES: [&str; 2] = ["Orange", "Black"];
        const SEATS: [&str; 4] = ["SW", "NW", "NE", "SE"];
        GameResult {
            pair,
            a_side: (!ffa).then(|| Side::ALL[a_player]),
            a_seat: ffa.then_some(a_player as u32),
            a_colour: if ffa { SEATS[a_player] } else { SIDES[a_player] }.to_string(),
            a_score,
            scores: scores.to_vec(),
            reason: EndReason::MoveCap,
            plies: 10,
            moves: vec![],
            winner: None,
            a_points: None,
        }
    }

    #[test]
    fn point_difference_sums_the_games_that_have_points() {
        let mut games = vec![game(0, 0, false, 1.0, &[]), game(0, 1, false, 0.0, &[]), game(1, 0, false, 0.5, &[])];
        let m = summarize_games("a".into(), "b".into(), games.clone());
        assert_eq!(m.point_difference(), None, "no game has points");
        games[0].a_points = Some(1);
        games[1].a_points = Some(-12);
        games[2].a_points = Some(2);
        let m = summarize_games("a".into(), "b".into(), games);
        // A won on the clock by one point, lost by 12, drew 2 up: -9 over 3 games.
        assert_eq!(m.point_difference(), Some((-9, -3.0, 3)));
    }

    #[test]
    fn two_player_tally_per_colour_for_both_players() {
        // A: as Orange (0) won, drew, won; as Black (1) lost, lost, drew.
        let games = vec![
            game(0, 1, false, 0.0, &[]),
            game(0, 0, false, 1.0, &[]),
            game(1, 1, false, 0.0, &[]),
            game(1, 0, false, 0.5, &[]),
            game(2, 1, false, 0.5, &[]),
            game(2, 0, false, 1.0, &[]),
        ];
        let m = summarize_games("a".into(), "b".into(), games);
        let wdl = |c: &ColourScore| (c.colour.clone(), c.games, c.wins, c.draws, c.losses);
        let a: Vec<_> = m.a_colours.iter().map(wdl).collect();
        assert_eq!(a, [("Orange".into(), 3, 2, 1, 0), ("Black".into(), 3, 0, 1, 2)]);
        // B as Orange played the games A played as Black, and won two.
        let b: Vec<_> = m.b_colours.iter().map(wdl).collect();
        assert_eq!(b, [("Orange".into(), 3, 2, 1, 0), ("Black".into(), 3, 0, 1, 2)]);
        assert!((m.a_colours[0].score - 2.5 / 3.0).abs() < 1e-12 && (m.b_colours[1].score - 0.5 / 3.0).abs() < 1e-12);
        // The colours add up to the totals.
        assert_eq!((m.wins, m.draws, m.losses), (2, 2, 2));
        assert_eq!(m.pentanomial, [0, 1, 1, 1, 0]);
        assert_eq!(
            m.colour_lines(),
            [
                "a as Orange: +2 =1 -0 (0.833), as Black: +0 =1 -2 (0.167)",
                "b as Orange: +2 =1 -0 (0.833), as Black: +0 =1 -2 (0.167)"
            ]
        );
    }

    #[test]
    fn free_for_all_tally_per_seat_for_a_and_for_bs_copies() {
        let (w, s2, s3, l) = (1.0, 2.0 / 3.0, 5.0 / 9.0, 1.0 / 3.0);
        // One group: A sole winner in SW; NW and NE (A) share; A loses in NE
        // to SE; three share in SE (A among them).
        let games = vec![
            game(0, 0, true, w, &[w, l, l, l]),
            game(0, 1, true, s2, &[l, s2, s2, l]),
            game(0, 2, true, l, &[l, l, l, w]),
            game(0, 3, true, s3, &[s3, l, s3, s3]),
        ];
        let m = summarize_games("a".into(), "b".into(), games);
        let wdl = |c: &ColourScore| (c.colour.clone(), c.games, c.wins, c.draws, c.losses);
        let a: Vec<_> = m.a_colours.iter().map(wdl).collect();
        assert_eq!(
            a,
            [
                ("SW".into(), 1, 1, 0, 0),
                ("NW".into(), 1, 0, 1, 0),
                ("NE".into(), 1, 0, 0, 1),
                ("SE".into(), 1, 0, 1, 0)
            ]
        );
        // B's copies sat in each seat three times.
        let b: Vec<_> = m.b_colours.iter().map(wdl).collect();
        assert_eq!(
            b,
            [
                ("SW".into(), 3, 0, 1, 2),
                ("NW".into(), 3, 0, 0, 3),
                ("NE".into(), 3, 0, 2, 1),
                ("SE".into(), 3, 1, 0, 2)
            ]
        );
        assert_eq!((m.wins, m.draws, m.losses), (1, 2, 1));
        assert_eq!(m.pentanomial, [0; 5]);
    }

    #[test]
    fn results_without_colours_still_read() {
        let m = summarize_games("a".into(), "b".into(), vec![game(0, 1, false, 1.0, &[])]);
        let mut v = serde_json::to_value(&m).unwrap();
        for k in ["a_colours", "b_colours"] {
            v.as_object_mut().unwrap().remove(k);
        }
        v["games"][0].as_object_mut().unwrap().remove("a_colour");
        let back: MatchResult = serde_json::from_value(v).unwrap();
        assert!(back.a_colours.is_empty() && back.b_colours.is_empty() && back.games[0].a_colour.is_empty());
        assert!(back.colour_lines().is_empty());
        // Unnamed colours are numbered.
        let named = summarize_games("a".into(), "b".into(), back.games);
        assert_eq!(named.a_colours[0].colour, "player 1");
    }
}
