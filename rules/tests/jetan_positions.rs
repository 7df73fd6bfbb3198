//! Hand-worked positions J1–J17, game flows E1–E7 and the §12 initial move list
//! of `docs/rules/jetan.md`.

#[path = "common/jetan_util.rs"]
mod jetan_util;

use jetan_util::*;
use martian_rules::jetan::{ChiefCapture, Jetan, JetanRules, NoLegalMoves, SmallMaterial, Thoat};
use martian_rules::{EndReason, GameState, Move, Outcome, Side};

fn check(fen: &str, from: &str, normal: &str, escape: &str) {
    let g = load(fen);
    let (n, e) = dests(&g, from);
    assert_eq!(n, list(normal), "{fen}: normal destinations of {from}");
    assert_eq!(e, list(escape), "{fen}: Escape destinations of {from}");
}

#[test]
fn j1_dwar_with_blockers() {
    check("C8P/10/10/10/4n5/4dN4/3l6/4W5/10/c8p b OB - 0 0", "e5", "b5 c4 c6 d7 f3 f5 g4", "");
}

#[test]
fn j2_flier_on_a_file() {
    check("C8P/10/10/3t6/10/1n1N6/F9/1N8/10/c8p o OB - 0 0", "a4", "b1 b5 b7 d1 d3 d7", "");
}

#[test]
fn j3_flier_near_corner() {
    check("C8P/10/10/10/10/10/10/10/n1f7/cW7p b OB - 0 0", "c2", "b1 b3 b5 d1 d3 d5 f1 f3 f5", "");
}

#[test]
fn j4_chief_with_one_exit() {
    check("C8P/10/10/10/10/10/10/6N3/3nn1D3/3dcp4 b OB - 0 0", "e1", "d3 d4 e3 e4 f3 f4 g2 g3 g4 h1 h2", "");
}

#[test]
fn j5_chief_boxed_in() {
    check("C8P/10/10/10/10/10/10/10/nN8/cl7p b OB - 0 0", "a1", "", "");
}

#[test]
fn j6_chief_open_board() {
    let g = load("C8P/10/10/10/10/4c5/10/10/10/9p b OB - 0 0");
    let (n, e) = dests(&g, "e5");
    assert_eq!(n.len(), 48);
    assert!(e.is_empty());
    for f in b'b'..=b'h' {
        for r in 2..=8 {
            let s = format!("{}{}", f as char, r);
            assert_eq!(n.contains(&s), s != "e5", "{s}");
        }
    }
}

#[test]
fn j7_thoat() {
    check("C8P/10/10/10/3n1W4/4nn4/4t5/3N6/10/c8p b OB - 0 0", "e4", "c3 c5 d2 d4 e3 f2 f4 g3 g5", "");
}

#[test]
fn j7b_thoat_order_matters() {
    let fen = "C8P/10/10/10/5W4/4n5/4t5/10/10/c8p b OB - 0 0";
    check(fen, "e4", "c3 c5 d2 d4 d6 e3 f2 f4 f6 g3 g5", "");
    let rules = JetanRules { thoat: Thoat::OrthogonalFirst, ..JetanRules::default() };
    let g = load_with(fen, &rules);
    assert_eq!(dests(&g, "e4").0, list("c3 c5 d2 d4 e3 f2 f4 g3 g5"));
}

#[test]
fn j8_black_panthan() {
    check("C8P/10/10/10/10/4lN4/3Tn5/10/10/c8p b OB - 0 0", "e4", "d4 d5 f4 f5", "");
}

#[test]
fn j9_orange_panthan() {
    check("C8P/10/10/2N7/1N1n6/10/10/10/10/c8p o OB - 0 0", "c7", "b7 c6 d6 d7", "");
}

#[test]
fn j10_panthan_last_rank() {
    check("2nW3C2/10/9P/10/10/10/10/10/10/c8p b OB - 0 0", "c10", "b10 d10", "");
}

#[test]
fn j11_warrior_corner() {
    check("C8P/10/10/10/10/10/10/10/nN8/w3c4p b OB - 0 0", "a1", "b2 c1", "");
}

#[test]
fn j12_padwar_fully_blocked() {
    check("C8P/10/10/2T3W3/3N1n4/4l5/3n1n4/10/10/c8p b OB - 0 0", "e5", "", "");
}

#[test]
fn j13_padwar_partly_blocked() {
    check("C8P/10/10/2n1W5/5n4/4l5/3n6/6N3/10/c8p b OB - 0 0", "e5", "c5 e3 e7 g3 g5", "");
}

#[test]
fn j14_princess_among_attacked_squares() {
    let fen = "C8P/10/4F5/10/10/10/4p2D2/10/2N7/c9 b OB - 0 0";
    check(
        fen,
        "e4",
        "b3 b4 b6 c3 c4 c5 c6 d3 d4 d6 e1 e2 e3 e5 e6 e7 f1 f2 f4 f6 g1 g3 g5 g7 h2 h6",
        "a2 a3 a4 a5 a6 e9 e10 f8 f10 g8 g9 g10 h8 h10 i1 i3 i5 i7 i8 i9 i10 j1 j2 j4 j6 j7 j8 j9",
    );
}

const J15_NORMAL: &str = "b4 b5 b6 c4 c5 c6 d4 d5 d6 e4 e5 e9 f4 f5 f6 f8 f10 g4 g5 g6 g7 g9 g10 h4 h5 h6 h7 h8 h9 h10";

#[test]
fn j15_princess_in_line_with_warrior() {
    check(
        "C8P/10/4W5/4p5/10/10/10/10/10/c9 b OB - 0 0",
        "e7",
        J15_NORMAL,
        "a2 a3 a4 a5 a6 b1 b2 b3 c1 c2 c3 d1 d2 d3 e1 e2 e3 f1 f2 f3 g1 g2 g3 h1 h2 h3 \
         i1 i2 i3 i4 i5 i6 i7 i8 i9 i10 j1 j2 j3 j4 j5 j6 j7 j8 j9",
    );
}

#[test]
fn j16_escape_used() {
    check("C8P/10/4W5/4p5/10/10/10/10/10/c9 b O - 0 0", "e7", J15_NORMAL, "");
}

#[test]
fn j17_no_legal_move() {
    let fen = "9P/10/10/10/10/10/7C2/10/NN8/cN7p b O - 0 0";
    let g = load(fen);
    assert_eq!(g.count_legal_moves(), 0);
    assert!(moves(&g).is_empty());
    assert_eq!(g.outcome(), Some(Outcome { winner: None, reason: EndReason::NoLegalMoves }));
    // E6 / §8.6 variant: a loss for the side without moves.
    let rules = JetanRules { no_legal_moves: NoLegalMoves::Loses, ..JetanRules::default() };
    let g = load_with(fen, &rules);
    assert_eq!(g.outcome(), Some(Outcome { winner: Some(Side::North), reason: EndReason::NoLegalMoves }));
    // With the Escape right Black has 51 Escapes.
    let g = load("9P/10/10/10/10/10/7C2/10/NN8/cN7p b OB - 0 0");
    assert_eq!(g.outcome(), None);
    let (n, e) = dests(&g, "j1");
    assert!(n.is_empty());
    assert_eq!(e.len(), 51);
    assert_eq!(moves(&g).len(), 51);
}

fn play_one(fen: &str, rules: &JetanRules, mv: &str) -> Jetan {
    let mut g = load_with(fen, rules);
    play_all(&mut g, mv);
    g
}

#[test]
fn e1_chief_takes_chief() {
    let g = play_one("P9/10/4C5/10/10/4c5/10/10/10/9p b OB - 0 0", &JetanRules::default(), "e5e8");
    assert_eq!(g.outcome(), Some(Outcome { winner: Some(Side::South), reason: EndReason::ChiefCapturedByChief }));
    assert_eq!(g.count_legal_moves(), 0);
}

#[test]
fn e2_dwar_takes_chief() {
    let fen = "P9/10/4C5/10/10/4d5/10/10/10/c8p b OB - 0 0";
    let g = play_one(fen, &JetanRules::default(), "e5e8");
    assert_eq!(g.outcome(), Some(Outcome { winner: None, reason: EndReason::ChiefCapturedByNonChief }));
    let r = JetanRules { chief_captured_by_non_chief: ChiefCapture::RemoveAndContinue, ..JetanRules::default() };
    let g = play_one(fen, &r, "e5e8");
    assert_eq!(g.outcome(), None);
    assert!(g.pieces(Side::North, martian_rules::jetan::Piece::Chief).is_empty());
    assert!(g.count_legal_moves() > 0);
    // The Chief-less position string loads under RemoveAndContinue only.
    let s = g.to_position();
    assert!(Jetan::from_position(&s, &r).is_ok());
    assert!(Jetan::from_position(&s, &JetanRules::default()).is_err());
    let r = JetanRules { chief_captured_by_non_chief: ChiefCapture::CapturerWins, ..JetanRules::default() };
    let g = play_one(fen, &r, "e5e8");
    assert_eq!(g.outcome(), Some(Outcome { winner: Some(Side::South), reason: EndReason::ChiefCapturedByNonChief }));
}

#[test]
fn e3_panthan_takes_princess() {
    let g = play_one("C9/10/4P5/4n5/10/10/10/10/10/c8p b OB - 0 0", &JetanRules::default(), "e7e8");
    assert_eq!(g.outcome(), Some(Outcome { winner: Some(Side::South), reason: EndReason::PrincessCaptured }));
}

const E4: &str = "4PC4/10/10/10/9d/D9/10/10/10/4cp4 o OB 10 0 0";
const E4_MOVES: [&str; 10] = ["a5a8", "j6j3", "a8d8", "j3g3", "d8d5", "g3g6", "d5a5", "g6j6", "a5a2", "j6j9"];

#[test]
fn e4_small_material_countdown() {
    for rules in [
        JetanRules::default(),
        JetanRules { small_material: SmallMaterial::Seed000Adjudication, ..JetanRules::default() },
    ] {
        let mut g = load_with(E4, &rules);
        assert_eq!(g.countdown(), Some(10));
        // A loader given `-` starts the countdown at 10.
        let g2 = load_with("4PC4/10/10/10/9d/D9/10/10/10/4cp4 o OB - 0 0", &rules);
        assert_eq!(g2.countdown(), Some(10));
        assert_eq!(g2.hash(), g.hash());
        for (i, m) in E4_MOVES.iter().enumerate() {
            assert_eq!(g.outcome(), None, "before ply {}", i + 1);
            play_all(&mut g, m);
            if i == 7 {
                assert_eq!(g.repetitions(), 1, "start position occurs for the second time after ply 8");
            }
            if i < 9 {
                assert_eq!(g.countdown(), Some(9 - i as u8));
            }
        }
        assert_eq!(g.outcome(), Some(Outcome { winner: None, reason: EndReason::SmallMaterial }));
    }
    // Seed000Adjudication: Dwar beats Padwar.
    let r = JetanRules { small_material: SmallMaterial::Seed000Adjudication, ..JetanRules::default() };
    let mut g = load_with("4PC4/10/10/10/9l/D9/10/10/10/4cp4 o OB 10 0 0", &r);
    play_all(&mut g, "a5a8 j6h4 a8d8 h4j6 d8d5 j6h4 d5a5 h4j6 a5a2 j6h4");
    assert_eq!(g.outcome(), Some(Outcome { winner: Some(Side::North), reason: EndReason::SmallMaterial }));
}

#[test]
fn countdown_starts_after_the_triggering_ply() {
    // Orange Dwar takes Black's fourth piece: condition holds after this ply, countdown = 10.
    let mut g = load("4PC4/10/10/10/n8d/D9/10/10/10/4cp4 o OB - 0 0");
    assert_eq!(g.countdown(), None);
    play_all(&mut g, "a5a6");
    assert_eq!(g.countdown(), Some(10));
    assert_eq!(g.outcome(), None);
    // A countdown value with too much material is rejected.
    assert!(Jetan::from_position("4PC4/10/10/10/n8d/D9/10/10/10/4cp4 o OB 5 0 0", &JetanRules::default()).is_err());
}

#[test]
fn e5_threefold_repetition() {
    let mut g = Jetan::new_game(&JetanRules::default()).unwrap();
    let seq = ["a9a8", "a2a3", "a8a9", "a3a2", "a9a8", "a2a3", "a8a9", "a3a2"];
    for (i, m) in seq.iter().enumerate() {
        assert_eq!(g.outcome(), None, "before ply {}", i + 1);
        play_all(&mut g, m);
    }
    assert_eq!(g.outcome(), Some(Outcome { winner: None, reason: EndReason::Repetition }));
    // Off: play continues.
    let r = JetanRules { repetition: martian_rules::jetan::Repetition::Off, ..JetanRules::default() };
    let mut g = Jetan::new_game(&r).unwrap();
    play_all(&mut g, &seq.join(" "));
    assert_eq!(g.outcome(), None);
    assert_eq!(g.repetitions(), 2);
}

#[test]
fn e7_move_cap() {
    let fen = "WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 499";
    let mut g = load(fen);
    assert_eq!(g.outcome(), None);
    play_all(&mut g, "b9b8");
    assert_eq!(g.ply(), 500);
    assert_eq!(g.outcome(), Some(Outcome { winner: None, reason: EndReason::MoveCap }));
    assert_eq!(g.count_legal_moves(), 0);
    // A loaded position at the cap is finished.
    let g = load("WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw o OB - 0 500");
    assert_eq!(g.outcome(), Some(Outcome { winner: None, reason: EndReason::MoveCap }));
    assert!(moves(&g).is_empty());
    // no_capture_limit.
    let r = JetanRules { no_capture_limit: Some(2), ..JetanRules::default() };
    let mut g = Jetan::new_game(&r).unwrap();
    play_all(&mut g, "b9b8");
    assert_eq!(g.outcome(), None);
    play_all(&mut g, "b2b3");
    assert_eq!(g.outcome(), Some(Outcome { winner: None, reason: EndReason::NoCaptureLimit }));
}

#[test]
fn initial_position_78_moves() {
    let g = Jetan::new_game(&JetanRules::default()).unwrap();
    assert_eq!(g.to_position(), martian_rules::jetan::INITIAL_POSITION);
    assert_eq!(g.side_to_move(), Side::North);
    let all = moves(&g);
    assert_eq!(all.len(), 78);
    assert_eq!(g.count_legal_moves(), 78);
    let expect = [
        ("a9", "a8 b7 c8", ""),
        ("b9", "a8 b8 c8", ""),
        ("c9", "b8 c8 d8", ""),
        ("d9", "c8 d8 e8", ""),
        ("e9", "d8 e8 f8", ""),
        ("f9", "e8 f8 g8", ""),
        ("g9", "f8 g8 h8", ""),
        ("h9", "g8 h8 i8", ""),
        ("i9", "h8 i8 j8", ""),
        ("j9", "h8 i7 j8", ""),
        ("d10", "a7 c7 e7 g7", ""),
        ("g10", "d7 f7 h7 j7", ""),
        (
            "e10",
            "b7 b8 c7 c8 d7 d8 e7 e8 f7 f8 g7 g8 h7 h8",
            "a5 a6 a7 a8 b5 b6 c5 c6 d5 d6 e5 e6 f5 f6 g5 g6 h5 h6 i5 i6 i7 i8 j5 j6 j7 j8",
        ),
    ];
    let mut total = 0;
    for (from, n, e) in expect {
        let (gn, ge) = dests(&g, from);
        assert_eq!(gn, list(n), "{from}");
        assert_eq!(ge, list(e), "{from} escapes");
        total += gn.len() + ge.len();
    }
    assert_eq!(total, 78);
    // Black, if it were to move, also has 78; its Princess on f1 as described in §12.
    let gb = load("WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw b OB - 0 0");
    assert_eq!(gb.count_legal_moves(), 78);
    let (n, e) = dests(&gb, "f1");
    assert_eq!(n, list("c3 d3 e3 f3 g3 h3 i3 c4 d4 e4 f4 g4 h4 i4"));
    assert_eq!(e, list("a5 b5 c5 d5 e5 f5 g5 h5 i5 j5 a6 b6 c6 d6 e6 f6 g6 h6 i6 j6 a3 a4 b3 b4 j3 j4"));
    // §12: Black attacks every empty square of ranks 3 and 4 and no other empty square.
    let att = gb.attacked_squares(Side::South, None);
    let occ = gb.occupancy(Side::South).0 | gb.occupancy(Side::North).0;
    let ranks34: u128 = ((1u128 << 20) - 1) << 20;
    assert_eq!(att & !occ, ranks34);
    let _ = Move::new(0, 0);
}

#[test]
fn manator_setup_and_black_first() {
    let r = JetanRules {
        setup: martian_rules::jetan::Setup::ManatorFacing,
        first_player: martian_rules::jetan::FirstPlayer::Black,
        ..JetanRules::default()
    };
    let g = Jetan::new_game(&r).unwrap();
    assert_eq!(g.to_position(), "WLDFCPFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw b OB - 0 0");
    assert_eq!(g.side_to_move(), Side::South);
}

/// `GameState::draw_adjudication` (the training tie-break of drawn games,
/// `selfplay.draw_value`): seed 000's order of §8.4 over the pieces other than
/// Chiefs and Princesses, for drawn games only.
#[test]
fn draw_adjudication_orders_drawn_games_by_material() {
    // E4 under the standard rules: a draw, Dwar against Dwar: equal.
    let mut g = load(E4);
    assert_eq!(g.draw_adjudication(), None, "not finished");
    play_all(&mut g, &E4_MOVES.join(" "));
    assert_eq!(g.outcome(), Some(Outcome { winner: None, reason: EndReason::SmallMaterial }));
    assert_eq!(g.draw_adjudication(), None, "Dwar against Dwar");
    // The same with a Padwar for Black's Dwar: drawn under the standard rules, the Dwar side ahead.
    let mut g = load("4PC4/10/10/10/9l/D9/10/10/10/4cp4 o OB 10 0 0");
    play_all(&mut g, "a5a8 j6h4 a8d8 h4j6 d8d5 j6h4 d5a5 h4j6 a5a2 j6h4");
    assert_eq!(g.outcome(), Some(Outcome { winner: None, reason: EndReason::SmallMaterial }));
    assert_eq!(g.draw_adjudication(), Some(Side::North), "Dwar (5) ahead of Padwar (4)");
    // E2: the Dwar takes the Chief, a draw judged without the Chiefs: the Dwar's side is ahead.
    let g = play_one("P9/10/4C5/10/10/4d5/10/10/10/c8p b OB - 0 0", &JetanRules::default(), "e5e8");
    assert_eq!(g.outcome().map(|o| o.winner), Some(None));
    assert_eq!(g.draw_adjudication(), Some(Side::South));
    // The same with an Orange Dwar on a3: Dwar against Dwar without the Chiefs, equal.
    let g = play_one("P9/10/4C5/10/10/4d5/10/D9/10/c8p b OB - 0 0", &JetanRules::default(), "e5e8");
    assert_eq!(g.outcome(), Some(Outcome { winner: None, reason: EndReason::ChiefCapturedByNonChief }));
    assert_eq!(g.draw_adjudication(), None, "{}", g.to_position());
    // A decisive game has no adjudication.
    let g = play_one("C9/10/4P5/4n5/10/10/10/10/10/c8p b OB - 0 0", &JetanRules::default(), "e7e8");
    assert!(g.outcome().unwrap().winner.is_some());
    assert_eq!(g.draw_adjudication(), None);
    // The move cap (ply 499 + one quiet ply): more pieces beat higher values, three Orange
    // Panthans against a Black Flier and Dwar; then values decide between equal counts.
    for (fen, ahead) in [
        ("4PC4/10/10/10/10/NNN7/10/fd8/10/4cp4 o OB - 0 499", Some(Side::North)),
        ("4PC4/10/10/10/10/NN8/10/fd8/10/4cp4 o OB - 0 499", Some(Side::South)),
        ("4PC4/10/10/10/10/DN8/10/dn8/10/4cp4 o OB - 0 499", None),
    ] {
        let mut g = load(fen);
        assert_eq!(g.draw_adjudication(), None, "{fen}: not finished");
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let quiet = moves.iter().copied().find(|&m| {
            let mut h = g.clone();
            h.play_unchecked(m);
            h.outcome().map(|o| o.reason) == Some(EndReason::MoveCap)
        });
        // Unfinished, the material leader is the same order's (the search's material contempt).
        assert_eq!(g.material_leader(), ahead, "{fen}: unfinished");
        g.play_unchecked(quiet.expect("a quiet move"));
        assert_eq!(g.outcome(), Some(Outcome { winner: None, reason: EndReason::MoveCap }), "{fen}");
        assert_eq!(g.draw_adjudication(), ahead, "{fen}");
    }
    // Unfinished positions: E2 before the capture (Black's Dwar against nothing but the
    // Chiefs and Princesses), the same with an Orange Dwar (level), the start (level).
    assert_eq!(load("P9/10/4C5/10/10/4d5/10/10/10/c8p b OB - 0 0").material_leader(), Some(Side::South));
    assert_eq!(load("P9/10/4C5/10/10/4d5/10/D9/10/c8p b OB - 0 0").material_leader(), None);
    let start = Jetan::new_game(&JetanRules::default()).unwrap();
    assert_eq!(start.material_leader(), None);
}
