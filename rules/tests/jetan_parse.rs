//! Position strings (§10.3), move text (§10.1) and rules switches (§13):
//! error kinds, and no panic on any input.

#[path = "common/jetan_util.rs"]
mod jetan_util;

use jetan_util::*;
use martian_rules::jetan::{Jetan, JetanRules, SmallMaterial, Thoat, INITIAL_POSITION};
use martian_rules::{GameState, Move, PositionErrorKind, RulesError};
use proptest::prelude::*;

fn kind(text: &str) -> PositionErrorKind {
    match Jetan::from_position(text, &JetanRules::default()) {
        Err(RulesError::Position { kind, text: t }) => {
            assert_eq!(t, text);
            kind
        }
        other => panic!("{text:?}: expected a position error, got {other:?}"),
    }
}

#[test]
fn bad_position_strings() {
    use PositionErrorKind as K;
    let init = "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw";
    let cases: Vec<(String, PositionErrorKind)> = vec![
        (String::new(), K::FieldCount { expected: 6, found: 0 }),
        (format!("{init} o OB - 0"), K::FieldCount { expected: 6, found: 5 }),
        (format!("{init} o OB - 0 0 0"), K::FieldCount { expected: 6, found: 7 }),
        (
            "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0".into(),
            K::RankCount { expected: 10, found: 9 },
        ),
        (
            "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw/ o OB - 0 0".into(),
            K::RankCount { expected: 10, found: 11 },
        ),
        ("WLDFPCFDLX/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0".into(), K::BadPieceLetter('X')),
        (
            "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlwn o OB - 0 0".into(),
            K::RankTooLong { rank: 1 },
        ),
        ("WLDFPCFDLW/TNNNNNNNNT/10/9/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0".into(), K::RankTooShort { rank: 7 }),
        (
            "WLDFPCFDLW/TNNNNNNNNT/55/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0".into(),
            K::BadEmptyRun("55".into()),
        ),
        ("WLDFPCFDLW/TNNNNNNNNT/0/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0".into(), K::BadEmptyRun("0".into())),
        (
            "WLDFPCFDLW/TNNNNNNNNT/7N3/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0".into(),
            K::RankTooLong { rank: 8 },
        ),
        (format!("{init} x OB - 0 0"), K::BadSide { text: "x".into(), expected: "o or b" }),
        (format!("{init} o BO - 0 0"), K::BadField { field: "escapes", text: "BO".into() }),
        (
            format!("{init} o OB 0 0 0"),
            K::Invalid("countdown 0 is allowed only when both sides have three pieces or fewer".into()),
        ),
        (
            format!("{init} o OB 11 0 0"),
            K::BadFieldExpected { field: "countdown", text: "11".into(), expected: "- or a countdown 0..=10".into() },
        ),
        (format!("{init} o OB x 0 0"), K::BadNumber { field: "countdown", text: "x".into() }),
        (format!("{init} o OB - -1 0"), K::BadNumber { field: "quiet", text: "-1".into() }),
        (format!("{init} o OB - 0 +3"), K::BadNumber { field: "ply", text: "+3".into() }),
        (format!("{init} o OB - 0 99999999999"), K::BadNumber { field: "ply", text: "99999999999".into() }),
        (
            "WLDFPPFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0".into(),
            K::PieceCount {
                piece: "Chief",
                side: "Orange",
                count: 0,
                rule: "each side has exactly one Chief under the standard rules",
            },
        ),
        (
            "WLDFCCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0".into(),
            K::PieceCount {
                piece: "Chief",
                side: "Orange",
                count: 2,
                rule: "each side has exactly one Chief under the standard rules",
            },
        ),
        (
            "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcffdlw o OB - 0 0".into(),
            K::PieceCount { piece: "Princess", side: "Black", count: 0, rule: "each side has exactly one Princess" },
        ),
        (
            "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/p9/tnnnnnnnnt/wldfcpfdlw o OB - 0 0".into(),
            K::PieceCount { piece: "Princess", side: "Black", count: 2, rule: "each side has exactly one Princess" },
        ),
        (
            "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/n9/tnnnnnnnnt/wldfcpfdlw o OB - 0 0".into(),
            K::PieceCount { piece: "Panthan", side: "Black", count: 9, rule: "at most 8 Panthans per side" },
        ),
        (
            "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/f9/tnnnnnnnnt/wldfcpfdlw o OB - 0 0".into(),
            K::PieceCount { piece: "Flier", side: "Black", count: 3, rule: "at most 2 of this piece per side" },
        ),
        (
            format!("{init} o OB 5 0 0"),
            K::Invalid("countdown 5 is allowed only when both sides have three pieces or fewer".into()),
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(kind(&text), expected, "{text:?}");
        // The error message names the offending text.
        let e = Jetan::from_position(&text, &JetanRules::default()).unwrap_err();
        assert!(e.to_string().contains(&format!("{text:?}")));
    }
}

#[test]
fn good_position_strings() {
    let g = load(INITIAL_POSITION);
    assert_eq!(g.to_position(), INITIAL_POSITION);
    // Extra spaces between fields are tolerated; output is canonical.
    let g = load("WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw  o OB - 0 0");
    assert_eq!(g.to_position(), INITIAL_POSITION);
    // Digits are read greedily: `5113` is one (bad) run, not 5+1+1+3.
    assert_eq!(
        kind("WLDFPCFDLW/TNNNNNNNNT/5113/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 0"),
        PositionErrorKind::BadEmptyRun("5113".into())
    );
    let g = load("WLDFPCFDLW/TNNNNNNNN1/10/10/10/10/10/T9/tnnnnnnnnt/wldfcpfdlw o OB - 0 0");
    assert_eq!(g.to_position(), "WLDFPCFDLW/TNNNNNNNN1/10/10/10/10/10/T9/tnnnnnnnnt/wldfcpfdlw o OB - 0 0");
}

#[test]
fn move_text() {
    let g = Jetan::new_game(&JetanRules::default()).unwrap();
    assert_eq!(g.parse_move("e9e8").unwrap(), Move::new(sq("e9"), sq("e8")));
    assert_eq!(g.parse_move("e9-e8").unwrap(), Move::new(sq("e9"), sq("e8")));
    assert_eq!(g.parse_move(" d10a7 ").unwrap(), Move::new(sq("d10"), sq("a7")));
    assert_eq!(g.parse_move("e10^a5").unwrap(), Move::new(sq("e10"), sq("a5")));
    assert_eq!(g.move_to_string(Move::new(sq("d10"), sq("a7"))), "d10a7");
    let g2 = load("C8P/10/10/10/10/10/10/6N3/3nn1D3/3dcp4 b OB - 0 0");
    assert_eq!(g2.parse_move("e1xg2").unwrap(), Move::new(sq("e1"), sq("g2")));
    for bad in ["", "e9", "e9e", "k1a1", "a0a1", "a11a1", "a1a01", "e9e8x", "e9?e8", "é9e8", "e9e8e7"] {
        assert!(matches!(g.parse_move(bad), Err(RulesError::BadMoveText { .. })), "{bad:?}");
    }
    match g.parse_move("e9e7") {
        Err(RulesError::IllegalMove { mv, legal }) => {
            assert_eq!(mv, "e9e7");
            assert_eq!(legal.split(' ').count(), 78);
        }
        other => panic!("{other:?}"),
    }
    assert!(g.clone().play(Move::new(sq("e9"), sq("e7"))).is_err());
}

#[test]
fn rules_serde() {
    let r: JetanRules = toml::from_str("thoat = \"OrthogonalFirst\"\nmax_plies = 300\nno_capture_limit = 100").unwrap();
    assert_eq!(r.thoat, Thoat::OrthogonalFirst);
    assert_eq!(r.max_plies, 300);
    assert_eq!(r.no_capture_limit, Some(100));
    let d: JetanRules = toml::from_str("").unwrap();
    assert_eq!(d, JetanRules::default());
    assert!(toml::from_str::<JetanRules>("thoat_rule = \"Jumping\"").is_err());
    assert!(toml::from_str::<JetanRules>("thoat = \"Flying\"").is_err());
    let r: JetanRules = toml::from_str("small_material = \"Lot\"").unwrap();
    assert!(matches!(Jetan::new_game(&r), Err(RulesError::Unsupported { option: "small_material", .. })));
    for text in [
        "chief_captured_by_non_chief = \"Lot\"",
        "step_count = \"UpTo\"",
        "warrior = \"Civil\"",
        "princess_path = \"Frightened\"",
        "escape = \"StraightLineUpTo9\"",
    ] {
        let r: JetanRules = toml::from_str(text).unwrap();
        assert!(matches!(Jetan::new_game(&r), Err(RulesError::Unsupported { .. })), "{text}");
        assert!(matches!(Jetan::from_position(INITIAL_POSITION, &r), Err(RulesError::Unsupported { .. })), "{text}");
    }
    let r = JetanRules { small_material: SmallMaterial::EqualValueOnly, ..JetanRules::default() };
    // Dwar v Padwar: unequal material, no countdown under EqualValueOnly.
    let g = load_with("4PC4/10/10/10/9l/D9/10/10/10/4cp4 o OB - 0 0", &r);
    assert_eq!(g.countdown(), None);
    let g = load_with("4PC4/10/10/10/9d/D9/10/10/10/4cp4 o OB - 0 0", &r);
    assert_eq!(g.countdown(), Some(10));
    let json = serde_json::to_string(&JetanRules::default()).unwrap();
    assert!(json.contains("\"thoat\":\"EitherOrder\""));
}

#[test]
fn escape_variants() {
    use martian_rules::jetan::Escape;
    let fen = "C8P/10/4W5/4p5/10/10/10/10/10/c9 b OB - 0 0";
    let r = JetanRules { escape: Escape::None, ..JetanRules::default() };
    let g = load_with(fen, &r);
    assert_eq!(dests(&g, "e7").1.len(), 0);
    assert_eq!(dests(&g, "e7").0.len(), 30);
    assert_eq!(Jetan::new_game(&r).unwrap().count_legal_moves(), 52);
    // OnlyWhenAttacked: e7 is not attacked by the Warrior on e8 (odd distance) → no Escape.
    let r = JetanRules { escape: Escape::OnlyWhenAttacked, ..JetanRules::default() };
    let g = load_with(fen, &r);
    assert_eq!(dests(&g, "e7").1.len(), 0);
    // Princess on e6 is attacked by the Warrior on e8 → 45-ish Escapes available.
    let g = load_with("C8P/10/4W5/10/4p5/10/10/10/10/c9 b OB - 0 0", &r);
    assert!(!dests(&g, "e6").1.is_empty());
}

fn valid_strings() -> Vec<String> {
    vec![
        INITIAL_POSITION.to_string(),
        "C8P/10/4F5/10/10/10/4p2D2/10/2N7/c9 b OB - 0 0".into(),
        "4PC4/10/10/10/9d/D9/10/10/10/4cp4 o OB 10 0 0".into(),
        "9P/10/10/10/10/10/7C2/10/NN8/cN7p b O - 0 0".into(),
    ]
}

fn no_panic(text: &str) {
    if let Ok(g) = Jetan::from_position(text, &JetanRules::default()) {
        let s = g.to_position();
        let g2 = Jetan::from_position(&s, &JetanRules::default()).expect("round trip");
        assert_eq!(g2.to_position(), s);
        let _ = g.count_legal_moves();
        let _ = moves(&g);
        let _ = g.board_text();
    }
    let g = Jetan::new_game(&JetanRules::default()).unwrap();
    let _ = g.parse_move(text);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_strings_never_panic(s in "\\PC{0,120}") {
        no_panic(&s);
    }

    #[test]
    fn fen_alphabet_never_panics(s in "[CPFDLWTNcpfdlwtn0-9/ obOB+-]{0,100}") {
        no_panic(&s);
    }

    #[test]
    fn mutations_never_panic(idx in 0usize..4, edits in proptest::collection::vec((0usize..200, 0u8..4, proptest::char::any()), 1..6)) {
        let mut chars: Vec<char> = valid_strings()[idx].chars().collect();
        for (pos, op, c) in edits {
            let p = if chars.is_empty() { 0 } else { pos % (chars.len() + 1) };
            match op {
                0 => chars.insert(p, c),
                1 if p < chars.len() => { chars.remove(p); }
                2 if p < chars.len() => chars[p] = c,
                _ => {
                    let alphabet = ['C', 'p', 'n', 'N', '1', '0', '9', '/', ' ', '-', 'O', 'B'];
                    let c = alphabet[(c as usize) % alphabet.len()];
                    if p < chars.len() { chars[p] = c } else { chars.push(c) }
                }
            }
        }
        let s: String = chars.into_iter().collect();
        no_panic(&s);
    }
}
