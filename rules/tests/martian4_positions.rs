//! The test positions of spec §14.11-§14.12 (MC4-1 to MC4-9) with every fact
//! the spec states about them: legal moves per piece and in all, the states
//! after given moves, endings, results and values for teams and
//! free-for-all, the clock, canonical orientation and policy indices. The
//! position strings and expected facts are copied from the spec as literals.

use martian_rules::martian4::{ClockMode, Martian4Rules, MartianChess4, Seat};
use martian_rules::{EndReason, GameState, Move, Side};

fn rules() -> Martian4Rules {
    Martian4Rules::default()
}

fn ffa() -> Martian4Rules {
    Martian4Rules { teams: false, ..Martian4Rules::default() }
}

fn load(text: &str, rules: &Martian4Rules) -> MartianChess4 {
    let s = MartianChess4::from_position(text, rules).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.to_position(), text, "round trip");
    s
}

/// The spec's human form of a legal move: `-` plain, `x` capture, `+` merge.
fn human(s: &MartianChess4, m: Move) -> String {
    let text = s.move_to_string(m);
    let own = s.seat_to_move().quadrant();
    let sep = match (s.occupied() >> m.to & 1 != 0, own >> m.to & 1 != 0) {
        (false, _) => '-',
        (true, false) => 'x',
        (true, true) => '+',
    };
    format!("{}{sep}{}", &text[..2], &text[2..])
}

fn all_moves(s: &MartianChess4) -> Vec<String> {
    let mut v = Vec::new();
    s.legal_moves(&mut v);
    assert_eq!(s.count_legal_moves(), v.len());
    let mut out: Vec<String> = v.iter().map(|&m| human(s, m)).collect();
    out.sort();
    out
}

fn moves_from(s: &MartianChess4, from: &str) -> Vec<String> {
    all_moves(s).into_iter().filter(|m| m.starts_with(from)).collect()
}

fn sorted(list: &str) -> Vec<String> {
    let mut v: Vec<String> = list.split_whitespace().map(str::to_string).collect();
    v.sort();
    v
}

fn after(s: &MartianChess4, mv: &str) -> MartianChess4 {
    let mut c = *s;
    let m = c.parse_move(mv).unwrap_or_else(|e| panic!("{e}"));
    c.play(m).unwrap();
    c
}

fn after_all(s: &MartianChess4, moves: &str) -> MartianChess4 {
    moves.split_whitespace().fold(*s, |c, m| after(&c, m))
}

fn assert_values(s: &MartianChess4, expected: [f32; 4]) {
    let v = s.seat_values().expect("game over");
    for i in 0..4 {
        assert!((v[i] - expected[i]).abs() < 1e-6, "values {v:?}, expected {expected:?} ({})", s.to_position());
    }
}

const THIRD: f32 = 1.0 / 3.0;

#[test]
fn mc4_1_initial_moves_for_sw() {
    let s = MartianChess4::new_game(&rules()).unwrap();
    assert_eq!(s.to_position(), "QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP2PPD/QDP2PDQ/QQD2DQQ SW 0 0 0 0 - 0 0");
    assert_eq!(s.seat_to_move(), Seat::SW);
    assert_eq!(s.side_to_move(), Side::South);
    assert_eq!(all_moves(&s), sorted("a3-a4 a3-a5 b3-a4 b3-c4 c1-d1 c1-e1 c2-d1 c2-d3 c3-b4 c3-d2 c3-d4"));
    let per_piece = [("b3", 2), ("c2", 2), ("c3", 3), ("a3", 2), ("b2", 0), ("c1", 2), ("a1", 0), ("a2", 0), ("b1", 0)];
    for (sq, n) in per_piece {
        assert_eq!(moves_from(&s, sq).len(), n, "{sq}");
    }
    // No merges and no captures.
    assert!(all_moves(&s).iter().all(|m| m.contains('-')));
    // Every seat has 11 moves when it is first to move.
    for first_seat in Seat::ALL {
        let s = MartianChess4::new_game(&Martian4Rules { first_seat, ..rules() }).unwrap();
        assert_eq!(s.count_legal_moves(), 11, "{first_seat}");
    }
}

#[test]
fn mc4_2_queen_crossing_both_canals() {
    let s = load("8/5P2/1P6/8/8/1Q3D2/8/P7 SW 0 0 0 0 - 0 0", &rules());
    assert_eq!(
        moves_from(&s, "b3"),
        sorted(
            "b3-a2 b3-a3 b3-a4 b3-b1 b3-b2 b3-b4 b3-b5 b3xb6 b3-c2 b3-c3 b3-c4 b3-d1 b3-d3 b3-d5 b3-e3 b3-e6 \
             b3xf3 b3xf7"
        )
    );
    assert_eq!(all_moves(&s).len(), 19);
    assert!(all_moves(&s).contains(&"a1-b2".to_string()));
    // b3xf7 takes the partner NE's Pawn; the Queen then stands in NE's quadrant.
    let c = after(&s, "b3f7");
    assert_eq!(c.scores(), [1, 0, 0, 0]);
    assert_eq!(c.seat_to_move(), Seat::NW);
    // The diagram of the spec, with the canals (§14.12, MC4-2).
    let text = s.board_text();
    let board: Vec<&str> = text.lines().take(10).map(|l| l.trim_end()).collect();
    let expected = [
        "   a b c d | e f g h",
        "8  . . . . | . . . .",
        "7  . . . . | . P . .",
        "6  . P . . | . . . .",
        "5  . . . . | . . . .",
        "   --------+--------",
        "4  . . . . | . . . .",
        "3  . Q . . | . D . .",
        "2  . . . . | . . . .",
        "1  P . . . | . . . .",
    ];
    assert_eq!(board, expected);
}

#[test]
fn mc4_3_capturing_the_partners_piece() {
    let s = load("Q6Q/8/8/2P1D3/3P4/8/8/D6P SW 2 3 1 0 - 0 0", &rules());
    assert_eq!(s.team_scores(), [3, 3]);
    assert_eq!(moves_from(&s, "d4"), sorted("d4-c3 d4-e3 d4xc5 d4xe5"));
    assert_eq!(all_moves(&s), sorted("a1-a2 a1-a3 a1-b1 a1-c1 d4-c3 d4-e3 d4xc5 d4xe5"));
    let c = after(&s, "d4xe5");
    assert_eq!(c.to_position(), "Q6Q/8/8/2P1P3/8/8/8/D6P NW 4 3 1 0 - 0 1");
    assert_eq!(c.team_scores(), [5, 3]);
    assert_eq!(c.quiet(), 0);
    let c = after(&s, "d4xc5");
    assert_eq!(c.to_position(), "Q6Q/8/8/2P1D3/8/8/8/D6P NW 3 3 1 0 - 0 1");
    let c = after(&s, "d4-e3");
    assert_eq!(c.scores(), [2, 3, 1, 0]);
    assert_eq!(c.quiet(), 1);
}

#[test]
fn mc4_4_merge_in_a_quadrant() {
    let s = load("Q7/1D4P1/5P1D/8/8/8/1D4P1/Q6Q NE 0 0 0 0 - 0 0", &rules());
    assert_eq!(s.seat_to_move(), Seat::NE);
    assert_eq!(s.side_to_move(), Side::South);
    assert_eq!(all_moves(&s), sorted("f6-e5 f6-e7 f6-g5 g7+h6 g7-f8 g7-h8 h6+f6 h6-g6 h6-h4 h6-h5 h6-h7 h6-h8"));
    let c = after(&s, "g7+h6");
    assert_eq!(c.to_position(), "Q7/1D6/5P1Q/8/8/8/1D4P1/Q6Q SE 0 0 0 0 - 1 1");
    let c = after(&s, "h6+f6");
    assert_eq!(c.to_position(), "Q7/1D4P1/5Q2/8/8/8/1D4P1/Q6Q SE 0 0 0 0 - 1 1");
    // With field promotion off the two merges are gone.
    let off = load(&s.to_position(), &Martian4Rules { field_promotion: false, ..rules() });
    assert_eq!(all_moves(&off).len(), 10);
    assert!(!all_moves(&off).iter().any(|m| m.contains('+')));
}

#[test]
fn mc4_5_empty_quadrant_team_tie_broken_by_last_mover() {
    let text = "7Q/8/8/2D5/8/2P5/5P2/Q7 NW 5 2 4 6 - 0 0";
    let s = load(text, &rules());
    assert_eq!(s.team_scores(), [9, 8]);
    assert_eq!(all_moves(&s), sorted("c5-a5 c5-b5 c5-c4 c5-c6 c5-c7 c5-d5 c5-e5 c5xc3"));
    for mv in ["c5c4", "c5e5"] {
        let c = after(&s, mv);
        let o = c.outcome().expect("over");
        assert_eq!((o.winner, o.reason), (Some(Side::South), EndReason::EmptyZone), "{mv}");
        assert_values(&c, [1.0, -1.0, 1.0, -1.0]);
        assert_eq!(c.final_score_difference(Side::South), Some(1));
    }
    let c = after(&s, "c5xc3");
    assert_eq!(c.scores(), [5, 3, 4, 6]);
    assert_eq!(c.outcome().unwrap().winner, Some(Side::North));
    assert_values(&c, [-1.0, 1.0, -1.0, 1.0]);
    assert_eq!(c.final_score_difference(Side::North), Some(0));
    let mut going = 0;
    for mv in ["c5a5", "c5b5", "c5c6", "c5c7", "c5d5"] {
        going += usize::from(after(&s, mv).outcome().is_none());
    }
    assert_eq!(going, 5);
    // The winning moves of NW's team exist: c5xc3.
    assert!(s.has_winning_move());
    // Free-for-all: all three endings are won by SE alone.
    let f = load(text, &ffa());
    for mv in ["c5c4", "c5e5", "c5c3"] {
        assert_values(&after(&f, mv), [-THIRD, -THIRD, -THIRD, 1.0]);
        // Team view: SE's team (NW + SE) wins.
        assert_eq!(after(&f, mv).outcome().unwrap().winner, Some(Side::North));
    }
    // Under tie_on_empty_zone = Draw the 9-9 tie is a draw.
    let d =
        load(text, &Martian4Rules { tie_on_empty_zone: martian_rules::martian4::EmptyQuadrantTie::Draw, ..rules() });
    assert_eq!(after(&d, "c5c3").outcome().unwrap().winner, None);
    assert_values(&after(&d, "c5c3"), [0.0; 4]);
}

#[test]
fn mc4_6_free_for_all_shared_win() {
    let text = "7D/8/8/3Q4/4P3/8/8/Q7 SE 6 4 6 3 - 0 0";
    let s = load(text, &ffa());
    assert_eq!(all_moves(&s), sorted("e4-d3 e4-f3 e4-f5 e4xd5"));
    for mv in ["e4d3", "e4f5"] {
        let c = after(&s, mv);
        assert_eq!(c.outcome().unwrap().reason, EndReason::EmptyZone);
        assert_values(&c, [THIRD, -THIRD, THIRD, -THIRD]);
        // Team view: both winners are SW + NE.
        assert_eq!(c.outcome().unwrap().winner, Some(Side::South));
    }
    let c = after(&s, "e4xd5");
    assert_eq!(c.scores(), [6, 4, 6, 6]);
    assert_values(&c, [-THIRD, -THIRD, -THIRD, 1.0]);
    assert!(after(&s, "e4f3").outcome().is_none());
    // With teams all three endings are won by SW + NE.
    let t = load(text, &rules());
    for mv in ["e4d3", "e4f5", "e4d5"] {
        assert_values(&after(&t, mv), [1.0, -1.0, 1.0, -1.0]);
    }
    assert_eq!(after(&t, "e4d5").team_scores(), [12, 10]);
}

#[test]
fn mc4_7_clock() {
    let text = "Q6Q/8/8/8/8/8/8/Q6Q SW 3 1 0 2 - 0 0";
    let s = load(text, &rules());
    let a1 = moves_from(&s, "a1");
    assert_eq!(a1.len(), 21);
    assert_eq!(a1.iter().filter(|m| m.contains('x')).count(), 3);
    for capture in ["a1xa8", "a1xh1", "a1xh8"] {
        assert!(a1.contains(&capture.to_string()));
    }
    let first = "a1b1 a8b8 h8g8 h1g1 b1a1 b8a8 g8h8 g1h1 a1b1 a8b8 h8g8 h1g1 b1a1 b8a8";
    let c = after_all(&s, first);
    assert_eq!(c.to_position(), "Q5Q1/8/8/8/8/8/8/Q5Q1 NE 3 1 0 2 14 14 14");
    // Ply 13 did not call the clock yet.
    let moves: Vec<&str> = first.split_whitespace().collect();
    assert_eq!(after_all(&s, &moves[..13].join(" ")).clock_countdown(), None);
    let second = "g8h8 g1h1 a1b1 a8b8 h8g8 h1g1 b1a1 b8a8 g8h8 g1h1 a1b1 a8b8 h8g8 h1g1";
    let end = after_all(&c, second);
    assert_eq!(end.to_position(), "1Q4Q1/8/8/8/8/8/8/1Q4Q1 SW 3 1 0 2 0 28 28");
    let o = end.outcome().unwrap();
    assert_eq!((o.winner, o.reason), (None, EndReason::Clock));
    assert_values(&end, [0.0; 4]);
    assert_eq!(end.count_legal_moves(), 0);
    // The finished state loads back as finished.
    assert_eq!(load(&end.to_position(), &rules()).outcome(), Some(o));
    // Free-for-all: SW alone has the top score and wins.
    let f = after_all(&after_all(&load(text, &ffa()), first), second);
    assert_values(&f, [1.0, -THIRD, -THIRD, -THIRD]);
    assert_eq!(f.outcome().unwrap().winner, Some(Side::South));
    // Clock Off: the game goes on, SW to move.
    let off = Martian4Rules { clock: ClockMode::Off, ..rules() };
    let g = after_all(&after_all(&load(text, &off), first), second);
    assert!(g.outcome().is_none());
    assert_eq!(g.seat_to_move(), Seat::SW);
    assert_eq!(g.clock_countdown(), None);
    // clock_plies = 7: called after ply 7, over after ply 14.
    let seven = Martian4Rules { clock_plies: 7, ..rules() };
    let s7 = load(text, &seven);
    let c7 = after_all(&s7, &moves[..7].join(" "));
    assert_eq!(c7.to_position(), "Q6Q/8/8/8/8/8/8/Q5Q1 SE 3 1 0 2 7 7 7");
    let e7 = after_all(&s7, first);
    assert_eq!(e7.outcome().map(|o| o.reason), Some(EndReason::Clock));
    assert_eq!(after_all(&s7, &moves[..13].join(" ")).outcome(), None);
}

#[test]
fn mc4_8_other_first_seats_and_canonical_orientation() {
    let text = "QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP2PPD/QDP2PDQ/QQD2DQQ NW 0 0 0 0 - 0 0";
    let nw = load(text, &Martian4Rules { first_seat: Seat::NW, ..rules() });
    assert_eq!(MartianChess4::new_game(&Martian4Rules { first_seat: Seat::NW, ..rules() }).unwrap(), nw);
    assert_eq!(all_moves(&nw), sorted("a6-a4 a6-a5 b6-a5 b6-c5 c6-b5 c6-d5 c6-d7 c7-d6 c7-d8 c8-d8 c8-e8"));
    let sw_moves = sorted("a3-a4 a3-a5 b3-a4 b3-c4 c1-d1 c1-e1 c2-d1 c2-d3 c3-b4 c3-d2 c3-d4");
    let indices = [131, 132, 643, 659, 1048, 1056, 1112, 1114, 1163, 1177, 1179];
    let two_step = [(Seat::SW, "a3a5"), (Seat::NW, "c8e8"), (Seat::NE, "h6h4"), (Seat::SE, "f1d1")];
    for (seat, drone) in two_step {
        let s = MartianChess4::new_game(&Martian4Rules { first_seat: seat, ..rules() }).unwrap();
        assert_eq!(s.seat_to_move(), seat);
        let mut moves = Vec::new();
        s.legal_moves(&mut moves);
        // Rotated to the canonical orientation they are SW's moves of MC4-1.
        let mut canonical: Vec<String> = moves
            .iter()
            .map(|&m| {
                let r = MartianChess4::rotate_move(seat.index() as u8, m);
                human(&s.canonical(), r)
            })
            .collect();
        canonical.sort();
        assert_eq!(canonical, sw_moves, "{seat}");
        let mut idx: Vec<usize> = moves.iter().map(|&m| s.action_index(m)).collect();
        idx.sort_unstable();
        assert_eq!(idx, indices, "{seat}");
        let m = s.parse_move(drone).unwrap();
        assert_eq!(s.action_index(m), 1056, "{seat} {drone}");
        assert_eq!(s.move_for_action(1056), Some(m));
        assert_eq!(MartianChess4::rotate_move(seat.index() as u8, m), Move::new(16, 32), "a3a5");
    }
}

#[test]
fn mc4_9_clock_reset_and_empty_quadrant_before_clock() {
    let text = "7Q/8/8/P7/8/8/8/Q1D4Q SW 0 0 0 0 2 26 40";
    let s = load(text, &rules());
    assert_eq!(s.clock_countdown(), Some(2));
    assert_eq!(
        all_moves(&s),
        sorted(
            "a1-a2 a1-a3 a1-a4 a1-b1 a1-b2 a1-c3 a1-d4 a1-e5 a1-f6 a1-g7 a1xa5 a1xh8 c1-b1 c1-c2 c1-c3 c1-d1 \
             c1-e1"
        )
    );
    assert_eq!(after(&s, "a1xa5").to_position(), "7Q/8/8/Q7/8/8/8/2D4Q NW 1 0 0 0 14 0 41");
    let h8 = after(&s, "a1xh8");
    assert_eq!((h8.scores(), h8.clock_countdown(), h8.quiet()), ([3, 0, 0, 0], Some(14), 0));
    let c = after(&s, "c1-d1");
    assert_eq!(c.to_position(), "7Q/8/8/P7/8/8/8/Q2D3Q NW 0 0 0 0 1 27 41");
    assert_eq!(all_moves(&c), sorted("a5-b4 a5-b6"));
    let b6 = after(&c, "a5-b6");
    let o = b6.outcome().unwrap();
    assert_eq!((o.winner, o.reason, b6.quiet()), (None, EndReason::Clock, 28));
    assert_values(&b6, [0.0; 4]);
    let b4 = after(&c, "a5-b4");
    let o = b4.outcome().unwrap();
    assert_eq!((o.winner, o.reason), (Some(Side::North), EndReason::EmptyZone));
    assert_values(&b4, [-1.0, 1.0, -1.0, 1.0]);
    // NW's winning move (a5-b4) is found by the fast test.
    assert!(c.has_winning_move());
    // Free-for-all: NW wins alone.
    let f = after(&after(&load(text, &ffa()), "c1-d1"), "a5-b4");
    assert_values(&f, [-THIRD, 1.0, -THIRD, -THIRD]);
}

#[test]
fn finished_positions_load_with_their_result() {
    // MC4-7's clock ending and MC4-9's empty quadrant, loaded from strings.
    let end = load("1Q4Q1/8/8/8/8/8/8/1Q4Q1 SW 3 1 0 2 0 28 28", &rules());
    assert_eq!(end.outcome().map(|o| (o.winner, o.reason)), Some((None, EndReason::Clock)));
    // NW made the last ply (the seat before the mover SE): the 0-0 tie goes to NW + SE.
    let empty = load("7Q/8/8/8/1P6/8/8/Q2D3Q NE 0 0 0 0 0 28 42", &rules());
    assert_eq!(empty.outcome().map(|o| (o.winner, o.reason)), Some((Some(Side::North), EndReason::EmptyZone)));
    assert_eq!(empty.last_mover(), Seat::NW);
    // The move cap.
    let cap = load("7Q/8/8/P7/8/8/8/Q1D4Q SW 0 0 0 1 - 5 300", &rules());
    assert_eq!(cap.outcome().map(|o| (o.winner, o.reason)), Some((Some(Side::North), EndReason::MoveCap)));
    assert_eq!(cap.count_legal_moves(), 0);
}
