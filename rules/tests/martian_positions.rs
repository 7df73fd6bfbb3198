//! The test positions of docs/rules/martian-chess.md §11-§12 (MC2-MC14) and the
//! rules switches of §15.

use martian_rules::martian::{ClockMode, EmptyZoneTie, MartianChess, MartianRules};
use martian_rules::{EndReason, GameState, Move, Outcome, RulesError, Side};

fn pos(text: &str) -> MartianChess {
    MartianChess::from_position(text, &MartianRules::default()).expect("valid position")
}

fn pos_with(text: &str, rules: &MartianRules) -> MartianChess {
    MartianChess::from_position(text, rules).expect("valid position")
}

/// Spec move lists use `-`, `x`, `+`; compare as plain `<from><to>`, sorted.
fn spec(list: &str) -> Vec<String> {
    let mut v: Vec<String> = list.split_whitespace().map(|m| m.replace(['-', 'x', '+'], "")).collect();
    v.sort();
    v
}

fn all_moves(s: &MartianChess) -> Vec<String> {
    let mut moves = Vec::new();
    s.legal_moves(&mut moves);
    assert_eq!(moves.len(), s.count_legal_moves(), "count_legal_moves disagrees");
    let mut v: Vec<String> = moves.iter().map(|&m| s.move_to_string(m)).collect();
    v.sort();
    v
}

fn piece_moves(s: &MartianChess, from: &str) -> Vec<String> {
    all_moves(s).into_iter().filter(|m| m.starts_with(from)).collect()
}

fn play(s: &mut MartianChess, moves: &str) {
    for m in moves.split_whitespace() {
        let mv = s.parse_move(m).unwrap_or_else(|e| panic!("{m}: {e}"));
        s.play(mv).expect("legal");
    }
}

#[test]
fn initial_moves_south_s11() {
    let s = MartianChess::new_game(&MartianRules::default()).unwrap();
    assert_eq!(s.to_position(), "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0");
    assert_eq!(s.side_to_move(), Side::South);
    assert_eq!(all_moves(&s), spec("b1a1 b2a1 b2a3 b3a2 b3a4 b3c4 c3b4 c3d4 d3d4 d3d5"));
    assert_eq!(s.outcome(), None);
    assert_eq!(s.scores(), [0, 0]);
}

#[test]
fn initial_moves_north_s11() {
    let rules = MartianRules { first_player: Side::North, ..MartianRules::default() };
    let s = MartianChess::new_game(&rules).unwrap();
    assert_eq!(s.side_to_move(), Side::North);
    assert_eq!(s.to_position(), "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ N 0 0 - - 0 0");
    let expect = spec("a6a4 a6a5 b6a5 b6c5 c6b5 c6d5 c6d7 c7d6 c7d8 c8d8");
    assert_eq!(all_moves(&s), expect);
    assert_eq!(all_moves(&pos("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ N 0 0 - - 0 0")), expect);
}

#[test]
fn mc2_queen() {
    let s = pos("Q1D1/4/1P2/4/2P1/1Q2/D3/3P S 0 0 - - 0 0");
    assert_eq!(piece_moves(&s, "b3"), spec("b3-a3 b3-a4 b3-b1 b3-b2 b3-b4 b3-b5 b3-c2 b3-c3 b3-d3 b3xb6"));
}

#[test]
fn mc3_drone() {
    let s = pos("D3/1Q2/1P2/4/1DP1/4/4/3Q S 0 0 - - 0 0");
    assert_eq!(piece_moves(&s, "b4"), spec("b4-a4 b4-b2 b4-b3 b4-b5 b4xb6"));
}

#[test]
fn mc4_pawn() {
    let s = pos("3Q/4/4/1D2/2P1/3D/4/Q3 S 0 0 - - 0 0");
    assert_eq!(piece_moves(&s, "c4"), spec("c4-b3 c4-d5 c4xb5"));
}

#[test]
fn mc5_pawn_pawn_merge() {
    let s = pos("Q3/2D1/4/4/4/4/1P2/P2Q S 0 0 - - 0 0");
    assert_eq!(
        all_moves(&s),
        spec("a1+b2 b2+a1 b2-a3 b2-c1 b2-c3 d1-a4 d1-b1 d1-b3 d1-c1 d1-c2 d1-d2 d1-d3 d1-d4 d1-d5 d1-d6 d1-d7 d1-d8")
    );
    // The merge makes a Drone on the destination; scores unchanged, not a capture.
    let mut c = s;
    play(&mut c, "a1b2");
    assert_eq!(c.to_position(), "Q3/2D1/4/4/4/4/1D2/3Q N 0 0 a1b2 - 1 1");
}

#[test]
fn mc6_no_merge_with_drone() {
    let s = pos("Q3/2D1/4/4/3D/4/1P2/P2Q S 0 0 - - 0 0");
    assert_eq!(
        all_moves(&s),
        spec("b2-a3 b2-c1 b2-c3 d1-a4 d1-b1 d1-b3 d1-c1 d1-c2 d1-d2 d1-d3 d4-b4 d4-c4 d4-d2 d4-d3 d4-d5 d4-d6")
    );
    assert!(piece_moves(&s, "a1").is_empty());
}

#[test]
fn mc7_drone_pawn_merges() {
    let s = pos("D3/2Q1/4/4/4/1P2/2P1/1D2 S 0 0 - - 0 0");
    assert_eq!(all_moves(&s), spec("b1+b3 b1-a1 b1-b2 b1-c1 b1-d1 b3-a2 b3-a4 b3-c4 c2+b1 c2-d1 c2-d3"));
    let mut c = s;
    play(&mut c, "b1b3");
    assert_eq!(c.to_position(), "D3/2Q1/4/4/4/1Q2/2P1/4 N 0 0 b1b3 - 1 1");
    let mut c = s;
    play(&mut c, "c2b1");
    assert_eq!(c.to_position(), "D3/2Q1/4/4/4/1P2/4/1Q2 N 0 0 c2b1 - 1 1");
}

#[test]
fn mc8_merge_needs_clear_path() {
    let s = pos("D3/2Q1/4/4/4/1P2/1P2/1D2 S 0 0 - - 0 0");
    assert_eq!(all_moves(&s), spec("b1+b2 b1-a1 b1-c1 b1-d1 b2-a1 b2-a3 b2-c1 b2-c3 b3-a2 b3-a4 b3-c2 b3-c4"));
}

#[test]
fn mc9_no_undo() {
    let s = pos("Q3/4/1D2/4/1P2/4/4/3Q S 0 0 c5b4 - 0 0");
    assert_eq!(piece_moves(&s, "b4"), spec("b4-a3 b4-a5 b4-c3"));
    assert_eq!(s.banned_move(), Some(Move::new(13, 18)));
    // Without the ban the move back is legal.
    let off = MartianRules { no_undo: false, ..MartianRules::default() };
    assert_eq!(
        piece_moves(&pos_with("Q3/4/1D2/4/1P2/4/4/3Q S 0 0 c5b4 - 0 0", &off), "b4"),
        spec("b4-a3 b4-a5 b4-c3 b4-c5")
    );
    // Two turns later the piece may go back.
    let mut c = s;
    play(&mut c, "d1d2 a8a7");
    assert!(piece_moves(&c, "b4").contains(&"b4c5".to_string()));
    // The ban also holds when reached by play.
    let mut c = pos("Q3/4/1D2/2P1/4/4/4/3Q N 0 0 - - 0 0");
    play(&mut c, "c5b4");
    assert_eq!(c.to_position(), "Q3/4/1D2/4/1P2/4/4/3Q S 0 0 c5b4 - 1 1");
    assert_eq!(piece_moves(&c, "b4"), spec("b4-a3 b4-a5 b4-c3"));
}

#[test]
fn mc10_no_undo_after_capture() {
    let s = pos("Q3/1P1D/4/4/4/4/3Q/P3 S 0 0 d6d2 - 0 0");
    assert_eq!(piece_moves(&s, "d2"), spec("d2-a2 d2-a5 d2-b2 d2-b4 d2-c1 d2-c2 d2-c3 d2-d1 d2-d3 d2-d4 d2-d5 d2xd7"));
}

#[test]
fn mc11_north_drone_pawn_merge() {
    let s = pos("P2D/1P2/2PP/4/4/4/Q3/3Q N 0 0 - - 0 0");
    assert_eq!(all_moves(&s), spec("b7-a6 b7-c8 c6-b5 c6-d5 c6-d7 d6-c5 d6-c7 d8+d6 d8-b8 d8-c8 d8-d7"));
}

#[test]
fn mc12_last_piece_leaves_zone() {
    let text = "3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0";
    let s = pos(text);
    assert_eq!(
        all_moves(&s),
        spec("a4-a1 a4-a2 a4-a3 a4-a5 a4-a6 a4-a7 a4-a8 a4-b3 a4-b4 a4-c2 a4-c4 a4-d1 a4-d4 a4xb5")
    );
    let north_wins = Outcome { winner: Some(Side::North), reason: EndReason::EmptyZone };
    for m in ["a4a5", "a4a6", "a4a7", "a4a8"] {
        let mut c = s;
        play(&mut c, m);
        assert_eq!(c.outcome(), Some(north_wins), "{m}");
        assert_eq!(c.count_legal_moves(), 0);
        let mut v = Vec::new();
        c.legal_moves(&mut v);
        assert!(v.is_empty());
    }
    let mut c = s;
    play(&mut c, "a4b5");
    assert_eq!(c.scores(), [6, 6]);
    assert_eq!(c.outcome(), Some(Outcome { winner: Some(Side::South), reason: EndReason::EmptyZone }));
    // Tie variant: a draw.
    let draw = MartianRules { tie_on_empty_zone: EmptyZoneTie::Draw, ..MartianRules::default() };
    let mut c = pos_with(text, &draw);
    play(&mut c, "a4b5");
    assert_eq!(c.outcome(), Some(Outcome { winner: None, reason: EndReason::EmptyZone }));
    for m in ["a4a1", "a4a2", "a4a3", "a4b3", "a4b4", "a4c2", "a4c4", "a4d1", "a4d4"] {
        let mut c = s;
        play(&mut c, m);
        assert_eq!(c.outcome(), None, "{m}");
    }
    // A loaded finished game: the side not to move made the last move.
    let done = pos("3Q/2D1/4/QP2/4/4/4/4 N 6 6 a4b5 - 0 1");
    assert_eq!(done.outcome(), Some(Outcome { winner: Some(Side::South), reason: EndReason::EmptyZone }));
}

const MC13: &str = "3Q/4/4/4/4/4/4/Q3 S 0 0 - - 0 0";
const MC13_FIRST: &str = "a1a2 d8d7 a2a1 d7d8 a1a2 d8d7 a2a1";
const MC13_SECOND: &str = "d7d8 a1a2 d8d7 a2a1 d7d8 a1a2 d8d7";

#[test]
fn mc13_clock_auto() {
    let mut s = pos(MC13);
    let moves: Vec<&str> = MC13_FIRST.split_whitespace().chain(MC13_SECOND.split_whitespace()).collect();
    for (i, m) in moves.iter().enumerate() {
        assert_eq!(s.outcome(), None);
        play(&mut s, m);
        let ply = i + 1;
        assert_eq!(s.quiet() as usize, ply);
        if ply < 7 {
            assert_eq!(s.clock_countdown(), None, "ply {ply}");
        } else {
            assert_eq!(s.clock_countdown(), Some((14 - ply) as u8), "ply {ply}");
        }
        if ply == 7 {
            assert_eq!(s.to_position(), "4/3Q/4/4/4/4/4/Q3 N 0 0 a2a1 7 7 7");
        }
    }
    assert_eq!(s.outcome(), Some(Outcome { winner: None, reason: EndReason::Clock }));
    assert_eq!(s.count_legal_moves(), 0);
    // The finished state round-trips (countdown 0).
    let text = s.to_position();
    assert_eq!(text, "4/3Q/4/4/4/4/Q3/4 S 0 0 d8d7 0 14 14");
    assert_eq!(pos(&text).outcome(), s.outcome());
}

#[test]
fn mc13_clock_off() {
    let off = MartianRules { clock: ClockMode::Off, ..MartianRules::default() };
    let mut s = pos_with(MC13, &off);
    play(&mut s, MC13_FIRST);
    play(&mut s, MC13_SECOND);
    assert_eq!(s.outcome(), None);
    assert_eq!(s.clock_countdown(), None);
    assert_eq!(s.quiet(), 14);
    play(&mut s, "a2a1");
    assert_eq!(s.outcome(), None);
}

#[test]
fn mc14_clock_reset() {
    // Clock called, countdown 3; a capture resets it to 7 and quiet to 0.
    let s = pos("4/4/2P1/4/Q3/4/4/3Q S 0 0 - 3 9 20");
    let mut c = s;
    play(&mut c, "a4c6");
    assert_eq!(c.clock_countdown(), Some(7));
    assert_eq!(c.quiet(), 0);
    assert_eq!(c.scores(), [1, 0]);
    assert_eq!(c.outcome(), None);
    let mut c = s;
    play(&mut c, "a4a3");
    assert_eq!(c.clock_countdown(), Some(2));
    assert_eq!(c.quiet(), 10);
    // Loaded quiet above 7 with the clock not called: called after the next ply.
    let mut c = pos("4/4/2P1/4/Q3/4/4/3Q S 0 0 - - 9 20");
    play(&mut c, "a4a3");
    assert_eq!(c.clock_countdown(), Some(7));
    // Countdown 1 and a quiet ply: the game ends, scored (here South leads).
    let mut c = pos("4/4/2P1/4/Q3/4/4/3Q S 2 1 - 1 9 20");
    play(&mut c, "a4a3");
    assert_eq!(c.outcome(), Some(Outcome { winner: Some(Side::South), reason: EndReason::Clock }));
}

#[test]
fn move_cap() {
    let rules = MartianRules { max_plies: 1, ..MartianRules::default() };
    let mut s = pos_with("Q3/4/4/1P2/Q3/4/4/3Q S 0 0 - - 0 0", &rules);
    play(&mut s, "a4b5");
    assert_eq!(s.scores(), [1, 0]);
    assert_eq!(s.outcome(), Some(Outcome { winner: Some(Side::South), reason: EndReason::MoveCap }));
    let rules = MartianRules { max_plies: 2, ..MartianRules::default() };
    let mut s = MartianChess::new_game(&rules).unwrap();
    play(&mut s, "d3d5");
    assert_eq!(s.outcome(), None);
    play(&mut s, "d5d4");
    assert_eq!(s.outcome(), Some(Outcome { winner: None, reason: EndReason::MoveCap }));
    // Loaded with ply >= max_plies: finished and scored; a tie is a draw.
    let s = pos("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 300");
    assert_eq!(s.outcome(), Some(Outcome { winner: None, reason: EndReason::MoveCap }));
    assert_eq!(s.count_legal_moves(), 0);
}

#[test]
fn field_promotion_off() {
    let rules = MartianRules { field_promotion: false, ..MartianRules::default() };
    let s = pos_with("Q3/2D1/4/4/4/4/1P2/P2Q S 0 0 - - 0 0", &rules);
    assert_eq!(
        all_moves(&s),
        spec("b2-a3 b2-c1 b2-c3 d1-a4 d1-b1 d1-b3 d1-c1 d1-c2 d1-d2 d1-d3 d1-d4 d1-d5 d1-d6 d1-d7 d1-d8")
    );
}

#[test]
fn unsupported_switches() {
    let bad = [
        MartianRules { players: 4, ..MartianRules::default() },
        MartianRules { promotion_supply_check: true, ..MartianRules::default() },
        MartianRules { clock: ClockMode::Manual, ..MartianRules::default() },
    ];
    for r in bad {
        assert!(matches!(MartianChess::new_game(&r), Err(RulesError::Unsupported { .. })), "{r:?}");
        assert!(matches!(
            MartianChess::from_position("4/4/4/4/4/4/4/Q2Q S 0 0 - - 0 0", &r),
            Err(RulesError::Unsupported { .. })
        ));
    }
}

#[test]
fn rules_serde() {
    let r: MartianRules = toml::from_str("").unwrap();
    assert_eq!(r, MartianRules::default());
    let r: MartianRules =
        toml::from_str("first_player = \"North\"\nclock = \"Off\"\ntie_on_empty_zone = \"Draw\"\nmax_plies = 10")
            .unwrap();
    assert_eq!(r.first_player, Side::North);
    assert_eq!(r.clock, ClockMode::Off);
    assert_eq!(r.tie_on_empty_zone, EmptyZoneTie::Draw);
    assert_eq!(r.max_plies, 10);
    assert!(toml::from_str::<MartianRules>("teams = true").is_err());
    let json = serde_json::to_string(&MartianRules::default()).unwrap();
    assert_eq!(serde_json::from_str::<MartianRules>(&json).unwrap(), MartianRules::default());
}

#[test]
fn side_names_and_board() {
    assert_eq!(MartianChess::side_name(Side::South), "South");
    assert_eq!(MartianChess::side_name(Side::North), "North");
    let s = MartianChess::new_game(&MartianRules::default()).unwrap();
    let b = s.board_text();
    let lines: Vec<&str> = b.lines().collect();
    assert_eq!(
        &lines[..10],
        &["8 QQD.", "7 QDP.", "6 DPP.", "5 ....", "  ----", "4 ....", "3 .PPD", "2 .PDQ", "1 .DQQ", "  abcd"]
    );
    assert!(lines[10].starts_with("South to move; score South 0 North 0"));
    // North's view: rank 1 at the top, files reversed.
    let n = s.board_text_from(Side::North);
    let lines: Vec<&str> = n.lines().collect();
    assert_eq!(
        &lines[..10],
        &["1 QQD.", "2 QDP.", "3 DPP.", "4 ....", "  ----", "5 ....", "6 .PPD", "7 .PDQ", "8 .DQQ", "  dcba"]
    );
    assert_eq!(s.board_text_from(Side::South), b);
    // A finished game: the status line gives the result, not a side to move.
    let rules = MartianRules { max_plies: 2, ..MartianRules::default() };
    let mut g = MartianChess::new_game(&rules).unwrap();
    let mut moves = Vec::new();
    while g.outcome().is_none() {
        g.legal_moves(&mut moves);
        g.play_unchecked(moves[0]);
    }
    let last = g.board_text().lines().last().unwrap().to_string();
    assert!(last.starts_with("game over: ") && last.contains("; score South"), "{last}");
}

#[test]
fn a_move_after_the_end_says_the_game_is_over() {
    use martian_rules::martian::{MartianChess, MartianRules};
    use martian_rules::GameState;
    // MC12 (spec): a4xb5 ends the game.
    let mut s = MartianChess::from_position("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0", &MartianRules::default()).unwrap();
    s.play(s.parse_move("a4b5").unwrap()).unwrap();
    assert!(s.outcome().is_some());
    let e = s.parse_move("d8d7").unwrap_err().to_string();
    assert!(e.contains("the game is over"), "{e}");
}

/// The final point difference (the score head's target) from the spec's MC12
/// endings: it is the captured pips of the side asked about minus the other's,
/// flips its sign with the side, and exists only once the game is over.
#[test]
fn final_score_difference_of_mc12_endings() {
    use martian_rules::jetan::Jetan;
    const { assert!(MartianChess::HAS_SCORE && !Jetan::HAS_SCORE) };
    let s = pos("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0");
    assert_eq!(s.final_score_difference(Side::South), None, "not over yet");
    let mut c = s;
    play(&mut c, "a4a5"); // South's zone empties at 5-6
    assert_eq!(c.final_score_difference(Side::South), Some(-1));
    assert_eq!(c.final_score_difference(Side::North), Some(1));
    let mut c = s;
    play(&mut c, "a4b5"); // captures a Pawn: 6-6, South wins the tie on points 0
    assert_eq!((c.final_score_difference(Side::South), c.final_score_difference(Side::North)), (Some(0), Some(0)));
    let mut c = s;
    play(&mut c, "a4b4");
    assert_eq!(c.final_score_difference(Side::North), None);
    // A finished Jetan game has no points.
    let mut j = Jetan::new_game(&Default::default()).unwrap();
    let mut moves = Vec::new();
    while j.outcome().is_none() {
        j.legal_moves(&mut moves);
        j.play_unchecked(moves[0]);
    }
    assert_eq!(j.final_score_difference(Side::South), None);
}
