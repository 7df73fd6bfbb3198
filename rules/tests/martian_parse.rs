//! Parsing of the Martian Chess text formats (spec §10): bad state strings with
//! their error kinds, fuzzing (never a panic), move text.

use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Move, PositionErrorKind as K, RulesError};
use proptest::prelude::*;

const INITIAL: &str = "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0";

fn parse(text: &str) -> Result<MartianChess, RulesError> {
    MartianChess::from_position(text, &MartianRules::default())
}

fn kind(text: &str) -> K {
    match parse(text) {
        Err(RulesError::Position { kind, text: t }) => {
            assert_eq!(t, text);
            kind
        }
        other => panic!("{text:?}: expected a position error, got {other:?}"),
    }
}

fn num(field: &'static str, text: &str) -> K {
    K::BadNumber { field, text: text.to_string() }
}

fn field(field: &'static str, text: &str) -> K {
    K::BadField { field, text: text.to_string() }
}

#[test]
fn bad_state_strings() {
    let table: Vec<(&str, K)> = vec![
        ("", K::FieldCount { expected: 8, found: 0 }),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0", K::FieldCount { expected: 8, found: 7 }),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0 0", K::FieldCount { expected: 8, found: 9 }),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ S 0 0 - - 0 0", K::RankCount { expected: 8, found: 7 }),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ/4 S 0 0 - - 0 0", K::RankCount { expected: 8, found: 9 }),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQK S 0 0 - - 0 0", K::BadPieceLetter('K')),
        ("qQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0", K::BadPieceLetter('q')),
        ("QQDé/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0", K::BadPieceLetter('é')),
        ("QQDQQ/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0", K::RankTooLong { rank: 8 }),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ1 S 0 0 - - 0 0", K::RankTooLong { rank: 1 }),
        ("QQD1/QDP1/DPP1/3P1/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0", K::RankTooLong { rank: 5 }),
        ("QQD/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0", K::RankTooShort { rank: 8 }),
        ("QQD1/QDP1/DPP1/4//1PPD/1PDQ/1DQQ S 0 0 - - 0 0", K::RankTooShort { rank: 4 }),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ/ S 0 0 - - 0 0", K::RankCount { expected: 8, found: 9 }),
        ("QQD1/QDP1/DPP1/04/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0", K::BadEmptyRun("0".into())),
        ("QQD1/QDP1/DPP1/5/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0", K::BadEmptyRun("5".into())),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ s 0 0 - - 0 0", K::BadSide { text: "s".into(), expected: "S or N" }),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ W 0 0 - - 0 0", K::BadSide { text: "W".into(), expected: "S or N" }),
        (
            "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ South 0 0 - - 0 0",
            K::BadSide { text: "South".into(), expected: "S or N" },
        ),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S -1 0 - - 0 0", num("scoreS", "-1")),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S +1 0 - - 0 0", num("scoreS", "+1")),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 x - - 0 0", num("scoreN", "x")),
        (
            "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 10000 - - 0 0",
            K::NumberTooLarge { field: "scoreN", text: "10000".into(), max: 9999 },
        ),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 d3 - 0 0", field("last", "d3")),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 d3d3 - 0 0", field("last", "d3d3")),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 e3d3 - 0 0", field("last", "e3d3")),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 d3d9 - 0 0", field("last", "d3d9")),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 d3-d5 - 0 0", field("last", "d3-d5")),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - 8 0 0", field("clock", "8")),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - 07 0 0", field("clock", "07")),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - x 0 0", field("clock", "x")),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - q 0", num("quiet", "q")),
        ("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 -3", num("ply", "-3")),
        (
            "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 99999999999",
            K::NumberTooLarge { field: "ply", text: "99999999999".into(), max: u32::MAX as u64 },
        ),
    ];
    for (text, expected) in table {
        assert_eq!(kind(text), expected, "{text:?}");
    }
}

#[test]
fn good_state_strings() {
    let s = parse(INITIAL).unwrap();
    assert_eq!(s.to_position(), INITIAL);
    // Extra whitespace and split empty runs are accepted; output is canonical.
    let s = parse("  QQD1/QDP1/DPP1/22/1111/1PPD/1PDQ/1DQQ   S 0 0 - - 0 0 ").unwrap();
    assert_eq!(s.to_position(), INITIAL);
    // South's Pawn stepped a1-b2 (an empty origin, the Pawn on its destination).
    let s = parse("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ N 12 3 a1b2 4 2 37").unwrap();
    assert_eq!(s.to_position(), "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ N 12 3 a1b2 4 2 37");
    assert_eq!(s.scores(), [12, 3]);
    assert_eq!(s.last_move(), Some(Move::new(0, 5)));
    assert_eq!(s.clock_countdown(), Some(4));
}

#[test]
fn move_text() {
    let s = MartianChess::new_game(&MartianRules::default()).unwrap();
    let d3d5 = Move::new(11, 19);
    assert_eq!(s.move_to_string(d3d5), "d3d5");
    // Any case, as Jetan's moves and the `play` REPL.
    for t in ["d3d5", "d3-d5", "d3xd5", "d3+d5", " d3d5 ", "D3D5", "D3-d5", "d3Xd5"] {
        assert_eq!(s.parse_move(t), Ok(d3d5), "{t}");
    }
    for t in ["", "d3", "d3d", "d3d5d", "e3d5", "d0d5", "d3/d5", "d3d3", "d3 d5", "ééé"] {
        assert!(matches!(s.parse_move(t), Err(RulesError::BadMoveText { .. })), "{t}");
    }
    // The messages name the board's squares, and a Jetan-style move is not
    // called a bad separator.
    for (t, want) in [
        ("e2e3", "bad origin square (a1..d8)"),
        ("a1a9", "bad destination square (a1..d8)"),
        ("j10j9", "squares a1..d8"),
    ] {
        let e = s.parse_move(t).unwrap_err().to_string();
        assert!(e.contains(want), "{t}: {e}");
    }
    match s.parse_move("d3d6") {
        Err(RulesError::IllegalMove { mv, legal }) => {
            assert_eq!(mv, "d3d6");
            assert_eq!(legal.split(' ').count(), 10);
        }
        other => panic!("{other:?}"),
    }
    let mut c = s;
    assert!(c.play(Move::new(0, 31)).is_err());
    assert_eq!(c, s);
}

/// A score that the points on the board could carry past `MAX_SCORE` is
/// refused, so that every position reachable from a parsed one prints a
/// string that parses back (a capture of 3 from "S 9999" printed 10002,
/// which no parser took).
#[test]
fn scores_leave_room_for_the_points_on_the_board() {
    // 9 points on the board: Q, Q, P, D.
    let e = parse("4/4/Q3/1Q2/P3/4/D3/4 S 9999 0 - - 0 0").unwrap_err().to_string();
    assert!(e.contains("scoreS: 9999 plus the 9 points still on the board") && e.contains("at most 9990"), "{e}");
    let e = parse("4/4/Q3/1Q2/P3/4/D3/4 S 0 9991 - - 0 0").unwrap_err().to_string();
    assert!(e.contains("scoreN: 9991"), "{e}");
    let start = parse("4/4/Q3/1Q2/P3/4/D3/4 S 9990 9990 - - 0 0").unwrap();
    // Every line of play from here: each position's string parses back to it.
    let mut frontier = vec![start];
    let mut seen = 0;
    let mut moves = Vec::new();
    for _ in 0..4 {
        let mut next = Vec::new();
        for s in &frontier {
            s.legal_moves(&mut moves);
            for &m in &moves {
                let mut c = *s;
                c.play(m).unwrap();
                let text = c.to_position();
                assert_eq!(parse(&text).unwrap_or_else(|e| panic!("{text}: {e}")).to_position(), text);
                seen += 1;
                next.push(c);
            }
        }
        frontier = next;
    }
    assert!(seen > 100, "{seen}");
    // The helper's line: a4xb5 takes the Queen.
    let mut c = parse("4/4/Q3/1Q2/P3/4/D3/4 S 9990 0 - - 0 0").unwrap();
    c.play(c.parse_move("a4b5").unwrap()).unwrap();
    assert!(c.to_position().contains(" 9993 0 "), "{}", c.to_position());
}

/// Valid strings to mutate.
const SEEDS: [&str; 5] = [
    INITIAL,
    "Q3/4/1D2/4/1P2/4/4/3Q S 0 0 c5b4 - 0 0",
    "3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0",
    "P2D/1P2/2PP/4/4/4/Q3/3Q N 0 0 - 3 9 120",
    "4/3Q/4/4/4/4/Q3/4 S 0 0 d8d7 0 14 14",
];

fn check_no_panic(text: &str) {
    if let Ok(s) = parse(text) {
        // Whatever parses must round-trip and be usable.
        let again = parse(&s.to_position()).expect("round trip");
        assert_eq!(again, s);
        let mut v = Vec::new();
        s.legal_moves(&mut v);
        assert_eq!(v.len(), s.count_legal_moves());
        let _ = s.board_text();
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_strings_never_panic(text in "\\PC{0,60}") {
        check_no_panic(&text);
    }

    #[test]
    fn random_shaped_strings_never_panic(text in "[PDQ0-9/]{0,40} [SNx]{0,2} [0-9-]{1,3} [0-9]{1,3} [a-e1-9-]{1,4} [0-9-]{1,2} [0-9]{1,3} [0-9]{1,4}") {
        check_no_panic(&text);
    }

    #[test]
    fn mutations_never_panic(
        seed in 0usize..SEEDS.len(),
        edits in proptest::collection::vec((0usize..64, 0u8..3, proptest::char::any()), 1..4),
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
        let s = MartianChess::new_game(&MartianRules::default()).unwrap();
        let _ = s.parse_move(&text);
    }
}

/// A placement beyond the two sets' material and a last move that no ply
/// could have been are refused, naming the field and the reason (spec §2,
/// §5-§7, §10); what merges and captures can reach still parses.
#[test]
fn material_and_last_move_are_checked() {
    let invalid = |text: &str| match parse(text) {
        Err(RulesError::Position { kind: K::Invalid(m), .. }) => m,
        other => panic!("{text:?}: expected an invalid position, got {other:?}"),
    };
    // 30 Queens: 90 points, the sets hold 18 pieces of 36.
    let m = invalid("QQQQ/QQQQ/QQQQ/QQQQ/QQQQ/QQQQ/QQQQ/QQ2 S 0 0 - - 0 0");
    assert!(m.contains("field placement: 30 pieces of 90 points") && m.contains("18 pieces of 36 points"), "{m}");
    // Seven Queens (merges made one more) parse with field promotion, not without.
    let m = invalid("QQD1/QDP1/DPP1/Q3/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0");
    assert!(m.contains("19 pieces of 39 points"), "{m}");
    let seven = "QQD1/QDP1/DPP1/Q3/4/1P2/1PDQ/1DQQ S 0 0 - - 0 0";
    parse(seven).unwrap();
    let off = MartianRules { field_promotion: false, ..MartianRules::default() };
    let e = MartianChess::from_position(seven, &off).unwrap_err().to_string();
    assert!(e.contains("7 Queens") && e.contains("field_promotion"), "{e}");
    // The last move: an empty destination, an occupied origin, an origin in
    // the side to move's zone, a move no piece makes, a path over a piece.
    let start = "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ";
    for (last, side, why) in [
        ("b4c5", "N", "destination c5 is empty"),
        ("c2b1", "N", "origin c2 is occupied"),
        ("a1b2", "S", "origin a1 is not in the zone of North"),
        ("a1d2", "N", "no piece could have moved from a1 to d2"),
        ("d4d1", "N", "no piece could have moved from d4 to d1 and left a Queen"),
    ] {
        let m = invalid(&format!("{start} {side} 0 0 {last} - 0 0"));
        assert!(m.contains(&format!("field last \"{last}\"")) && m.contains(why), "{last}: {m}");
    }
    // A capture across the canal (the Pawn now stands in North's zone) and a
    // merge (a Drone from a Pawn stepping onto a Pawn) are plies that can be.
    parse("4/4/4/1P2/4/4/4/4 N 0 0 a4b5 - 0 0").unwrap();
    parse("4/4/4/4/4/4/1D2/4 N 0 0 a1b2 - 0 0").unwrap();
    assert!(MartianChess::from_position("4/4/4/4/4/4/1D2/4 N 0 0 a1b2 - 0 0", &off).is_err());
}
