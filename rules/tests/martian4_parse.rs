//! Position strings (spec §14.8), move text (§14.4, §14.5), the text board
//! (§14.2) and the rules switches (§15) of the four-player game: exact
//! printing, a clear error for every kind of bad input, and no panic on any
//! input.

use martian_rules::martian4::{ClockMode, Martian4Rules, MartianChess4, Seat, TurnOrder, CALL_CLOCK, INITIAL_POSITION};
use martian_rules::{GameState, Move, PositionErrorKind as K, RulesError, Side};
use proptest::prelude::*;

const INITIAL: &str = "QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP2PPD/QDP2PDQ/QQD2DQQ SW 0 0 0 0 - 0 0";
const P: &str = "QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP2PPD/QDP2PDQ/QQD2DQQ";

fn parse(text: &str) -> Result<MartianChess4, RulesError> {
    MartianChess4::from_position(text, &Martian4Rules::default())
}

fn kind_with(text: &str, rules: &Martian4Rules) -> K {
    match MartianChess4::from_position(text, rules) {
        Err(RulesError::Position { kind, text: t }) => {
            assert_eq!(t, text);
            kind
        }
        other => panic!("{text:?}: expected a position error, got {other:?}"),
    }
}

fn kind(text: &str) -> K {
    kind_with(text, &Martian4Rules::default())
}

fn num(field: &'static str, text: &str) -> K {
    K::BadNumber { field, text: text.to_string() }
}

fn clock(text: &str, max: u32) -> K {
    K::BadFieldExpected { field: "clock", text: text.to_string(), expected: format!("- or a countdown 0..={max}") }
}

#[test]
fn initial_position_prints_exactly() {
    assert_eq!(INITIAL_POSITION, INITIAL);
    let s = parse(INITIAL).unwrap();
    assert_eq!(s.to_position(), INITIAL);
    assert_eq!(s, MartianChess4::new_game(&Martian4Rules::default()).unwrap());
    for seat in Seat::ALL {
        let s = MartianChess4::new_game(&Martian4Rules { first_seat: seat, ..Martian4Rules::default() }).unwrap();
        assert_eq!(s.to_position(), INITIAL.replace(" SW ", &format!(" {seat} ")));
    }
    // Extra whitespace between fields is accepted; the output is canonical.
    let s = parse(&format!("  {P}   SW 0 0  0 0 - 0 0 ")).unwrap();
    assert_eq!(s.to_position(), INITIAL);
    let text = format!("{P} SE 12 3 0 71 9 5 137");
    let s = parse(&text).unwrap();
    assert_eq!(s.to_position(), text);
    assert_eq!(s.scores(), [12, 3, 0, 71]);
    assert_eq!(s.team_scores(), [12, 74]);
    assert_eq!(s.clock_countdown(), Some(9));
    assert_eq!((s.quiet(), s.ply()), (5, 137));
    assert_eq!(s.seat_to_move(), Seat::SE);
    assert_eq!(s.side_to_move(), Side::North);
}

#[test]
fn bad_position_strings() {
    let table: Vec<(String, K)> = vec![
        (String::new(), K::FieldCount { expected: 9, found: 0 }),
        (format!("{P} SW 0 0 0 0 - 0"), K::FieldCount { expected: 9, found: 8 }),
        (format!("{P} SW 0 0 0 0 - 0 0 0"), K::FieldCount { expected: 9, found: 10 }),
        // The two-player string is not a four-player string.
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0".into(), K::FieldCount { expected: 9, found: 8 }),
        ("QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP2PPD/QDP2PDQ SW 0 0 0 0 - 0 0".into(), K::RankCount { expected: 8, found: 7 }),
        (format!("{P}/8 SW 0 0 0 0 - 0 0"), K::RankCount { expected: 8, found: 9 }),
        (format!("{P}/ SW 0 0 0 0 - 0 0"), K::RankCount { expected: 8, found: 9 }),
        (INITIAL.replacen("QQD2DQQ", "QQD2DQK", 1), K::BadPieceLetter('K')),
        (INITIAL.replacen("QQD2DQQ", "qQD2DQQ", 1), K::BadPieceLetter('q')),
        (INITIAL.replacen("QQD2DQQ", "QQD2DQé", 1), K::BadPieceLetter('é')),
        (INITIAL.replacen("QQD2DQQ", "QQD2DQQQ", 1), K::RankTooLong { rank: 8 }),
        (INITIAL.replacen("/8/8/", "/9/8/", 1), K::BadEmptyRun("9".into())),
        (INITIAL.replacen("/8/8/", "/08/8/", 1), K::BadEmptyRun("0".into())),
        (INITIAL.replacen("/8/8/", "/44/8/", 1), K::BadEmptyRun("two digits in a row ending in 4".into())),
        (INITIAL.replacen("/8/8/", "/7P1/8/", 1), K::RankTooLong { rank: 5 }),
        (INITIAL.replacen("/8/8/", "/7/8/", 1), K::RankTooShort { rank: 5 }),
        (INITIAL.replacen("/8/8/", "//8/", 1), K::RankTooShort { rank: 5 }),
        (INITIAL.replacen("QQD2DQQ SW", "QQD2DQQQ SW", 1), K::RankTooLong { rank: 1 }),
        (INITIAL.replace(" SW ", " S "), K::BadSide { text: "S".into(), expected: "SW, NW, NE or SE" }),
        (INITIAL.replace(" SW ", " sw "), K::BadSide { text: "sw".into(), expected: "SW, NW, NE or SE" }),
        (INITIAL.replace(" SW ", " N "), K::BadSide { text: "N".into(), expected: "SW, NW, NE or SE" }),
        (format!("{P} SW -1 0 0 0 - 0 0"), num("sSW", "-1")),
        (format!("{P} SW 0 +1 0 0 - 0 0"), num("sNW", "+1")),
        (format!("{P} SW 0 0 x 0 - 0 0"), num("sNE", "x")),
        (format!("{P} SW 0 0 0 10000 - 0 0"), K::NumberTooLarge { field: "sSE", text: "10000".into(), max: 9999 }),
        (format!("{P} SW 0 0 0 07 - 0 0"), num("sSE", "07")),
        (format!("{P} SW 0 0 0 0 15 0 0"), clock("15", 14)),
        (format!("{P} SW 0 0 0 0 014 0 0"), clock("014", 14)),
        (format!("{P} SW 0 0 0 0 x 0 0"), clock("x", 14)),
        (format!("{P} SW 0 0 0 0 -1 0 0"), clock("-1", 14)),
        (format!("{P} SW 0 0 0 0 - q 0"), num("quiet", "q")),
        (format!("{P} SW 0 0 0 0 - 00 0"), num("quiet", "00")),
        (format!("{P} SW 0 0 0 0 - 0 -3"), num("ply", "-3")),
        (
            format!("{P} SW 0 0 0 0 - 0 99999999999"),
            K::NumberTooLarge { field: "ply", text: "99999999999".into(), max: u32::MAX as u64 },
        ),
    ];
    for (text, expected) in table {
        assert_eq!(kind(&text), expected, "{text:?}");
    }
    // The clock field follows the rules: at most clock_plies, `-` under Off.
    let seven = Martian4Rules { clock_plies: 7, ..Martian4Rules::default() };
    assert_eq!(kind_with(&format!("{P} SW 0 0 0 0 8 0 0"), &seven), clock("8", 7));
    assert!(MartianChess4::from_position(&format!("{P} SW 0 0 0 0 7 0 0"), &seven).is_ok());
    let off = Martian4Rules { clock: ClockMode::Off, ..Martian4Rules::default() };
    let text = format!("{P} SW 0 0 0 0 5 0 0");
    assert!(matches!(kind_with(&text, &off), K::Invalid(m) if m.contains("clock = Off")));
    // Errors print the problem and the whole string.
    let e = parse(&format!("{P} XX 0 0 0 0 - 0 0")).unwrap_err().to_string();
    assert!(e.contains("XX") && e.contains("bad side to move") && e.contains(P), "{e}");
}

#[test]
fn rules_switches() {
    let r: Martian4Rules = toml::from_str("").unwrap();
    assert_eq!(r, Martian4Rules::default());
    assert_eq!(
        (r.first_seat, r.turn_order, r.teams, r.clock, r.clock_plies, r.max_plies),
        (Seat::SW, TurnOrder::Clockwise, true, ClockMode::Auto, 14, 300)
    );
    let r: Martian4Rules = toml::from_str(
        "first_seat = \"NE\"\nturn_order = \"Counterclockwise\"\nteams = false\nclock = \"Manual\"\nclock_plies = 7\n",
    )
    .unwrap();
    assert_eq!(
        (r.first_seat, r.turn_order, r.teams, r.clock, r.clock_plies),
        (Seat::NE, TurnOrder::Counterclockwise, false, ClockMode::Manual, 7)
    );
    assert_eq!(r.num_actions(), 8192);
    assert_eq!(Martian4Rules::default().num_actions(), 4096);
    let e = toml::from_str::<Martian4Rules>("players = 4").unwrap_err().to_string();
    assert!(e.contains("players"), "{e}");
    assert!(toml::from_str::<Martian4Rules>("first_seat = \"N\"").is_err());
    // Values that parse but are not valid or not implemented.
    let zero = Martian4Rules { clock_plies: 0, ..Martian4Rules::default() };
    let e = MartianChess4::new_game(&zero).unwrap_err();
    assert!(matches!(e, RulesError::InvalidOption { option: "clock_plies", .. }), "{e:?}");
    assert!(e.to_string().contains("clock_plies = 0"), "{e}");
    assert!(MartianChess4::from_position(INITIAL, &zero).is_err());
    let supply = Martian4Rules { promotion_supply_check: true, ..Martian4Rules::default() };
    assert_eq!(
        MartianChess4::new_game(&supply).unwrap_err(),
        RulesError::Unsupported { option: "promotion_supply_check", value: "true".into() }
    );
    // Turn order: next and previous seats (§14.3).
    let cw = Martian4Rules::default();
    let ccw = Martian4Rules { turn_order: TurnOrder::Counterclockwise, ..cw };
    let names = |r: &Martian4Rules| {
        let mut out = vec![Seat::SW];
        for _ in 0..4 {
            out.push(r.next_seat(*out.last().unwrap()));
        }
        out.iter().map(|s| s.name()).collect::<Vec<_>>().join(" ")
    };
    assert_eq!(names(&cw), "SW NW NE SE SW");
    assert_eq!(names(&ccw), "SW SE NE NW SW");
    for s in Seat::ALL {
        assert_eq!(cw.previous_seat(cw.next_seat(s)), s);
        assert_eq!(ccw.previous_seat(ccw.next_seat(s)), s);
        assert_eq!(s.partner().team(), s.team());
        assert_ne!(cw.next_seat(s).team(), s.team());
    }
}

#[test]
fn move_text() {
    let s = MartianChess4::new_game(&Martian4Rules::default()).unwrap();
    let c1e1 = Move::new(2, 4);
    assert_eq!(s.move_to_string(c1e1), "c1e1");
    for t in ["c1e1", "c1-e1", "c1xe1", "c1+e1", " c1e1 ", "C1E1"] {
        assert_eq!(s.parse_move(t), Ok(c1e1), "{t}");
    }
    for t in ["", "c1", "c1e", "c1e1e", "i1e1", "c0e1", "c1e9", "c1/e1", "c1c1", "c1 e1", "ééé", "c1e1**", "*"] {
        assert!(matches!(s.parse_move(t), Err(RulesError::BadMoveText { .. })), "{t}");
    }
    match s.parse_move("c1f1") {
        Err(RulesError::IllegalMove { mv, legal }) => {
            assert_eq!(mv, "c1f1");
            assert_eq!(legal.split(' ').count(), 11);
        }
        other => panic!("{other:?}"),
    }
    // A clock call is only legal under the Manual clock, before it is called.
    assert!(matches!(s.parse_move("c1e1*"), Err(RulesError::IllegalMove { .. })));
    let manual = Martian4Rules { clock: ClockMode::Manual, ..Martian4Rules::default() };
    let m = MartianChess4::new_game(&manual).unwrap();
    let call = m.parse_move("c1-e1*").unwrap();
    assert_eq!(call, Move::new(2, 4 | CALL_CLOCK));
    assert_eq!(m.move_to_string(call), "c1e1*");
    assert_eq!(m.action_index(call), m.action_index(c1e1) + 4096);
    let mut c = m;
    c.play(call).unwrap();
    assert_eq!(c.clock_countdown(), Some(14));
    assert_eq!(c.to_position(), "QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP2PPD/QDP2PDQ/QQ2DDQQ NW 0 0 0 0 14 1 1");
    assert!(matches!(c.parse_move("c8e8*"), Err(RulesError::IllegalMove { .. })));
    assert!(c.parse_move("c8e8").is_ok());
    // An illegal move leaves the state unchanged.
    let mut c = s;
    assert!(c.play(Move::new(0, 63)).is_err());
    assert_eq!(c, s);
}

#[test]
fn text_board_rotations() {
    let s = parse("8/5P2/1P6/8/8/1Q3D2/8/P7 SW 0 0 0 0 - 0 0").unwrap();
    let lines = |k: u8| s.board_text_rotated(k).lines().map(str::to_string).collect::<Vec<_>>();
    // A quarter turn counterclockwise: NW's corner (a8) at the bottom left;
    // rows are files (h at the top), columns ranks (8 on the left).
    assert_eq!(
        lines(1)[..11],
        [
            "   8 7 6 5 | 4 3 2 1",
            "h  . . . . | . . . .",
            "g  . . . . | . . . .",
            "f  . P . . | . D . .",
            "e  . . . . | . . . .",
            "   --------+--------",
            "d  . . . . | . . . .",
            "c  . . . . | . . . .",
            "b  . . P . | . Q . .",
            "a  . . . . | . . . P",
            "   8 7 6 5 | 4 3 2 1",
        ]
    );
    assert_eq!(lines(2)[1], "1  . . . . | . . . P");
    assert_eq!(lines(3)[1], "a  P . . . | . . . .");
    assert_eq!(s.board_text_from(Side::North), s.board_text_rotated(2));
    assert_eq!(s.board_text_from(Side::South), s.board_text());
    assert!(lines(0)[11].starts_with("SW to move (team SW+NE); scores SW 0 NW 0 NE 0 SE 0"));
    // Finished free-for-all game: the shared win is named.
    let ffa = Martian4Rules { teams: false, ..Martian4Rules::default() };
    let f = MartianChess4::from_position("7D/8/8/3Q4/8/3P4/8/Q7 SW 6 4 6 3 - 0 9", &ffa).unwrap();
    let last = f.board_text().lines().last().unwrap().to_string();
    assert!(last.starts_with("game over: SW and NE share the win (empty zone)"), "{last}");
    // With NW to move, SW made the last ply and, tied for the top, wins alone.
    let f = MartianChess4::from_position("7D/8/8/3Q4/8/3P4/8/Q7 NW 6 4 6 3 - 0 9", &ffa).unwrap();
    let last = f.board_text().lines().last().unwrap().to_string();
    assert!(last.starts_with("game over: SW wins (empty zone)"), "{last}");
    let t = MartianChess4::from_position("7D/8/8/3Q4/8/3P4/8/Q7 NW 6 4 6 3 - 0 9", &Martian4Rules::default()).unwrap();
    let last = t.board_text().lines().last().unwrap().to_string();
    assert!(last.starts_with("game over: SW+NE win (empty zone)"), "{last}");
}

/// Valid strings to mutate.
const SEEDS: [&str; 5] = [
    INITIAL,
    "8/5P2/1P6/8/8/1Q3D2/8/P7 SW 0 0 0 0 - 0 0",
    "7Q/8/8/P7/8/8/8/Q1D4Q SW 0 0 0 0 2 26 40",
    "1Q4Q1/8/8/8/8/8/8/1Q4Q1 SW 3 1 0 2 0 28 28",
    "Q7/1D4P1/5P1D/8/8/8/1D4P1/Q6Q NE 0 0 0 0 - 0 0",
];

fn check_no_panic(text: &str) {
    if let Ok(s) = parse(text) {
        // Whatever parses prints back unchanged (up to spacing) and is usable.
        assert_eq!(s.to_position(), text.split_whitespace().collect::<Vec<_>>().join(" "));
        let again = parse(&s.to_position()).expect("round trip");
        assert_eq!(again, s);
        let mut v = Vec::new();
        s.legal_moves(&mut v);
        assert_eq!(v.len(), s.count_legal_moves());
        let _ = s.board_text();
        let mut planes = vec![0f32; 19 * 64];
        s.encode(&mut planes);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_strings_never_panic(text in "\\PC{0,80}") {
        check_no_panic(&text);
    }

    #[test]
    fn random_shaped_strings_never_panic(text in "[PDQ0-9/]{0,70} [SWNE]{0,3} [0-9-]{1,3} [0-9]{1,2} [0-9]{1,2} [0-9]{1,3} [0-9-]{1,3} [0-9]{1,3} [0-9]{1,4}") {
        check_no_panic(&text);
    }

    #[test]
    fn mutations_never_panic(
        seed in 0usize..SEEDS.len(),
        edits in proptest::collection::vec((0usize..80, 0u8..3, proptest::char::any()), 1..4),
    ) {
        let mut chars: Vec<char> = SEEDS[seed].chars().collect();
        for (pos, op, c) in edits {
            let i = pos % (chars.len() + 1);
            match op {
                0 => chars.insert(i, c),
                1 if i < chars.len() => { chars.remove(i); }
                _ if i < chars.len() => chars[i] = c,
                _ => chars.push(c),
            }
        }
        let text: String = chars.into_iter().collect();
        check_no_panic(&text);
    }

    #[test]
    fn random_move_text_never_panics(text in "\\PC{0,8}") {
        let s = MartianChess4::new_game(&Martian4Rules::default()).unwrap();
        let _ = s.parse_move(&text);
    }
}

/// The game-level players (`GameState::num_players`, `player_to_move`,
/// `player_values`): a team per player with teams, a seat per player in
/// free-for-all, with the §14.7 values.
#[test]
fn players_per_mode() {
    let ffa = Martian4Rules { teams: false, ..Martian4Rules::default() };
    let text = "7D/8/8/3Q4/8/3P4/8/Q7 SW 6 4 6 3 - 0 9";
    let f = MartianChess4::from_position(text, &ffa).unwrap();
    assert_eq!(f.num_players(), 4);
    // SW and NE share the win: (4 / 2 - 1) / 3 = 1/3 each, -1/3 for the others.
    let v = f.player_values().unwrap();
    assert_eq!(v, f.seat_values().unwrap());
    assert!((v[0] - 1.0 / 3.0).abs() < 1e-6 && (v[2] - 1.0 / 3.0).abs() < 1e-6, "{v:?}");
    assert!((v[1] + 1.0 / 3.0).abs() < 1e-6 && (v[3] + 1.0 / 3.0).abs() < 1e-6, "{v:?}");
    let t = MartianChess4::from_position(text, &Martian4Rules::default()).unwrap();
    assert_eq!(t.num_players(), 2);
    // The team game: SW + NE (South, player 0) wins.
    assert_eq!(t.player_values().unwrap(), [1.0, -1.0, 0.0, 0.0]);
    let live = MartianChess4::new_game(&ffa).unwrap();
    assert_eq!(live.player_values(), None);
    let mut s = live;
    for seat in 0..4 {
        assert_eq!(s.player_to_move(), seat);
        let mut moves = Vec::new();
        s.legal_moves(&mut moves);
        s.play_unchecked(moves[0]);
    }
    let live_t = MartianChess4::new_game(&Martian4Rules::default()).unwrap();
    assert_eq!(live_t.player_to_move(), 0);
}
