//! Free-for-all matches (four-player Martian Chess, `teams = false`): one
//! player A against three copies of B from one opening, A's seat rotated over
//! the four seats; A's score `(v + 1) / 2` of its §14.7 value.

use std::cell::RefCell;
use std::rc::Rc;

use martian_evaluate::{play_match_book, play_match_mcts, random_opening, MctsSide, Player, PlayerError, RandomPlayer};
use martian_rules::martian4::{Martian4Rules, MartianChess4};
use martian_rules::{GameState, Move};
use martian_search::{MctsConfig, UniformEvaluator};

/// A random player that records the seat of every position it is asked about.
struct Recorder {
    inner: RandomPlayer,
    seats: Rc<RefCell<Vec<usize>>>,
}

impl Player<MartianChess4> for Recorder {
    fn name(&self) -> String {
        "recorder".into()
    }

    fn choose_move(&mut self, state: &MartianChess4) -> Result<Move, PlayerError> {
        self.seats.borrow_mut().push(state.seat_to_move().index());
        Player::<MartianChess4>::choose_move(&mut self.inner, state)
    }
}

fn rules() -> Martian4Rules {
    Martian4Rules { teams: false, max_plies: 40, ..Martian4Rules::default() }
}

#[test]
fn a_plays_every_seat_once_per_opening_against_three_copies_of_b() {
    let start = MartianChess4::new_game(&rules()).unwrap();
    let book: Vec<_> = (0..3).map(|p| random_opening(&start, 2, p).1).collect();
    let seats = Rc::new(RefCell::new(Vec::new()));
    let mut a = Recorder { inner: RandomPlayer::new(1), seats: seats.clone() };
    let mut b = RandomPlayer::new(2);
    let mut per_game = Vec::new();
    let m = play_match_book(
        &start,
        &mut a,
        &mut b,
        &book,
        3,
        |g| {
            per_game.push(std::mem::take(&mut *seats.borrow_mut()));
            let _ = g;
        },
        |_| false,
    )
    .unwrap();
    assert_eq!(m.games.len(), 12, "3 openings x 4 seats");
    for (i, (g, asked)) in m.games.iter().zip(&per_game).enumerate() {
        let seat = g.a_seat.expect("free-for-all games name A's seat") as usize;
        assert_eq!(seat, i % 4, "A's seat rotates 0, 1, 2, 3 per opening");
        assert_eq!(g.pair as usize, i / 4);
        // A was asked only in its own seat, and on every ply of that seat
        // after the opening (2 plies: SW and NW moved).
        assert!(!asked.is_empty() && asked.iter().all(|&s| s == seat), "game {i}: {asked:?}");
        let plies_of_seat = (2..g.plies).filter(|p| *p as usize % 4 == seat).count();
        assert_eq!(asked.len(), plies_of_seat, "game {i}");
        // The score is (v + 1) / 2 of A's seat value (§14.7).
        let mut end = start;
        for mv in &g.moves {
            end.play(end.parse_move(mv).unwrap()).unwrap();
        }
        let v = end.seat_values().unwrap()[seat];
        assert!((g.a_score - (v as f64 + 1.0) / 2.0).abs() < 1e-9);
        assert!((1.0 / 3.0 - 1e-6..=1.0 + 1e-6).contains(&g.a_score));
    }
    // Both games of an opening start with the same moves.
    assert_eq!(m.games[0].moves[..2], m.games[3].moves[..2]);
    assert_eq!(m.wins + m.draws + m.losses, 12);
    let mean = m.games.iter().map(|g| g.a_score).sum::<f64>() / 12.0;
    let elo = m.elo.unwrap();
    assert!((elo.score - mean).abs() < 1e-12 && elo.elo_low <= elo.elo && elo.elo <= elo.elo_high);
    assert_eq!(m.pentanomial, [0; 5]);
    // Per seat (a free-for-all result depends on the seat): A played each seat 3 times, B's copies 9 times;
    // the seats' counts add up to the totals, and every game's scores
    // (A's among them) are its seats' values.
    let seat_names: Vec<&str> = m.a_colours.iter().map(|c| c.colour.as_str()).collect();
    assert_eq!(seat_names, ["SW", "NW", "NE", "SE"]);
    assert!(m.a_colours.iter().all(|c| c.games == 3 && c.wins + c.draws + c.losses == 3), "{:?}", m.a_colours);
    assert!(m.b_colours.iter().all(|c| c.games == 9 && c.wins + c.draws + c.losses == 9), "{:?}", m.b_colours);
    let sum = |f: fn(&martian_evaluate::ColourScore) -> u32| m.a_colours.iter().map(f).sum::<u32>();
    assert_eq!((sum(|c| c.wins), sum(|c| c.draws), sum(|c| c.losses)), (m.wins, m.draws, m.losses));
    // Each game has one sole winner at most, and B's copies hold the rest.
    let b_wins: u32 = m.b_colours.iter().map(|c| c.wins).sum();
    let sole = m.games.iter().filter(|g| g.scores.iter().any(|&s| s > 1.0 - 1e-9)).count() as u32;
    assert_eq!(m.wins + b_wins, sole);
    for g in &m.games {
        assert_eq!(g.a_colour, ["SW", "NW", "NE", "SE"][g.a_seat.unwrap() as usize]);
        assert_eq!(g.scores[g.a_seat.unwrap() as usize], g.a_score);
        assert!((g.scores.iter().sum::<f64>() - 2.0).abs() < 1e-6, "the four values add up to 0: {:?}", g.scores);
    }
    let lines = m.colour_lines();
    assert!(
        lines.len() == 2 && lines[0].starts_with("recorder as SW: +") && lines[1].contains(", as SE: +"),
        "{lines:?}"
    );
}

#[test]
fn batched_ffa_match_seats_a_in_every_seat() {
    let start = MartianChess4::new_game(&rules()).unwrap();
    let book: Vec<_> = (0..2).map(|p| random_opening(&start, 2, p).1).collect();
    let cfg = MctsConfig { leaves_per_batch: 4, ..Default::default() };
    let (mut ua, mut ub) = (UniformEvaluator, UniformEvaluator);
    let m = play_match_mcts(
        &start,
        MctsSide { name: "a".into(), evaluator: &mut ua, simulations: 8 },
        MctsSide { name: "b".into(), evaluator: &mut ub, simulations: 2 },
        &cfg,
        &book,
        2,
        3,
        |_| {},
    )
    .unwrap();
    assert_eq!(m.games.len(), 8);
    let seats: Vec<(u32, u32)> = m.games.iter().map(|g| (g.pair, g.a_seat.unwrap())).collect();
    assert_eq!(seats, vec![(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3)]);
}
