//! `GameState::has_winning_move` (the fast tests of both games) against brute
//! force (`has_winning_move_by_play`: play every legal move, look at the
//! result) on every position of seeded random games, under the standard rules
//! and under the switches that change which moves win.

use martian_rules::jetan::{ChiefCapture, Escape, Jetan, JetanRules, NoLegalMoves, Repetition, SmallMaterial};
use martian_rules::martian::{ClockMode, EmptyZoneTie, MartianChess, MartianRules};
use martian_rules::{has_winning_move_by_play, GameState, Move, Side};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Checks every position of `games` random games from `start(game)`; returns
/// (positions, positions with a winning move). One game in three prefers
/// captures, one avoids moves that allow an immediate win (long games).
fn check_games<G: GameState>(
    seed: u64,
    games: usize,
    mut start: impl FnMut(&mut StdRng) -> G,
    is_capture: impl Fn(&G, Move) -> bool,
) -> (usize, usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut moves = Vec::with_capacity(G::MAX_MOVES);
    let (mut n, mut wins) = (0, 0);
    for game in 0..games {
        let mut g = start(&mut rng);
        loop {
            let fast = g.has_winning_move();
            let slow = has_winning_move_by_play(&g);
            assert_eq!(fast, slow, "game {game}, ply {}: {}", g.ply(), g.to_position());
            n += 1;
            wins += usize::from(slow);
            g.legal_moves(&mut moves);
            if moves.is_empty() {
                break;
            }
            let preferred: Vec<Move> = match game % 3 {
                // Captures half of the time: endings by taking pieces.
                1 if rng.gen_bool(0.5) => moves.iter().copied().filter(|&m| is_capture(&g, m)).collect(),
                // Moves that give the opponent no immediate win: long games
                // that reach the countdowns, the clock and the move cap.
                2 => moves
                    .iter()
                    .copied()
                    .filter(|&m| {
                        let mut s = g.clone();
                        s.play_unchecked(m);
                        !has_winning_move_by_play(&s)
                    })
                    .collect(),
                _ => Vec::new(),
            };
            let pick = if preferred.is_empty() {
                moves[rng.gen_range(0..moves.len())]
            } else {
                preferred[rng.gen_range(0..preferred.len())]
            };
            g.play_unchecked(pick);
        }
    }
    (n, wins)
}

#[test]
fn jetan_fast_test_matches_brute_force() {
    let variants = [
        JetanRules::default(),
        JetanRules { chief_captured_by_non_chief: ChiefCapture::CapturerWins, ..JetanRules::default() },
        JetanRules { chief_captured_by_non_chief: ChiefCapture::RemoveAndContinue, ..JetanRules::default() },
        JetanRules { no_legal_moves: NoLegalMoves::Loses, max_plies: 200, ..JetanRules::default() },
        JetanRules {
            small_material: SmallMaterial::Seed000Adjudication,
            repetition: Repetition::Off,
            escape: Escape::None,
            ..JetanRules::default()
        },
        JetanRules { escape: Escape::OnlyWhenAttacked, max_plies: 60, ..JetanRules::default() },
    ];
    for (i, rules) in variants.iter().enumerate() {
        let (n, wins) = check_games(
            10 + i as u64,
            30,
            |_| Jetan::new_game(rules).unwrap(),
            |g: &Jetan, m| g.piece_at(m.to).is_some(),
        );
        eprintln!("variant {i}: {wins} of {n}");
        assert!(n > 1000, "variant {i}: only {n} positions");
        assert!(wins >= 10, "variant {i}: {wins} of {n} positions have a winning move: the test needs some");
        assert!(wins < n / 2, "variant {i}: {wins} of {n}");
    }
}

#[test]
fn martian_fast_test_matches_brute_force() {
    let random_rules = |rng: &mut StdRng| MartianRules {
        first_player: if rng.gen_bool(0.5) { Side::South } else { Side::North },
        field_promotion: rng.gen_bool(0.8),
        no_undo: rng.gen_bool(0.8),
        clock: if rng.gen_bool(0.8) { ClockMode::Auto } else { ClockMode::Off },
        tie_on_empty_zone: if rng.gen_bool(0.5) { EmptyZoneTie::LastMoverWins } else { EmptyZoneTie::Draw },
        max_plies: if rng.gen_bool(0.8) { 300 } else { rng.gen_range(1..120) },
        ..MartianRules::default()
    };
    let (n, wins) = check_games(
        7,
        600,
        |rng| MartianChess::new_game(&random_rules(rng)).unwrap(),
        |g: &MartianChess, m| g.piece_at(m.to).is_some() && !MartianChess::zone(g.side_to_move()).has(m.to),
    );
    eprintln!("martian: {wins} of {n}");
    assert!(n > 20_000, "only {n} positions");
    assert!(wins >= 200, "{wins} of {n} positions have a winning move: the test needs more");
}

#[test]
fn known_positions() {
    let rules = JetanRules::default();
    // Spec E3: Black's Panthan on e7 takes the Princess on e8; Orange, to move
    // in the same placement, has no winning move.
    let black = Jetan::from_position("C9/10/4P5/4n5/10/10/10/10/10/c8p b OB - 0 0", &rules).unwrap();
    assert!(black.has_winning_move());
    let orange = Jetan::from_position("C9/10/4P5/4n5/10/10/10/10/10/c8p o OB - 0 0", &rules).unwrap();
    assert!(!orange.has_winning_move());
    // Spec MC12: a4xb5 makes it 6-6, empties South's zone, and the last mover wins the tie.
    let mc = MartianChess::from_position("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0", &MartianRules::default()).unwrap();
    assert!(mc.has_winning_move());
    let draw = MartianRules { tie_on_empty_zone: EmptyZoneTie::Draw, ..MartianRules::default() };
    let mc = MartianChess::from_position("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0", &draw).unwrap();
    assert!(!mc.has_winning_move(), "a tie is a draw under tie_on_empty_zone = Draw");
    // A finished game has no winning move.
    let mut over = black.clone();
    over.play(over.parse_move("e7e8").unwrap()).unwrap();
    assert!(over.outcome().is_some() && !over.has_winning_move());
}

/// A random Jetan position with a Princess, a Chief and `extra` more pieces
/// per side on random squares, a random side to move and a random countdown:
/// the endgames where the countdown (§8.4) and no-legal-move (§8.6) rules
/// decide. `None` when the string is refused (e.g. a side with more than
/// three pieces and a countdown).
fn sparse_jetan(rng: &mut StdRng, rules: &JetanRules) -> Option<Jetan> {
    let mut board = [' '; 100];
    for upper in [false, true] {
        let extra = rng.gen_range(0..=2);
        let letters = ['N', 'T', 'D', 'F', 'W', 'L'];
        let mut pieces = vec!['P', 'C'];
        pieces.extend((0..extra).map(|_| letters[rng.gen_range(0..letters.len())]));
        for p in pieces {
            let mut sq = rng.gen_range(0..100);
            while board[sq] != ' ' {
                sq = rng.gen_range(0..100);
            }
            board[sq] = if upper { p } else { p.to_ascii_lowercase() };
        }
    }
    let mut ranks = Vec::new();
    for rank in (0..10).rev() {
        let (mut text, mut empty) = (String::new(), 0);
        for file in 0..10 {
            match board[rank * 10 + file] {
                ' ' => empty += 1,
                c => {
                    if empty > 0 {
                        text += &empty.to_string();
                        empty = 0;
                    }
                    text.push(c);
                }
            }
        }
        if empty > 0 {
            text += &empty.to_string();
        }
        ranks.push(text);
    }
    let side = if rng.gen_bool(0.5) { 'o' } else { 'b' };
    let countdown = if rng.gen_bool(0.5) { rng.gen_range(1..=10).to_string() } else { "-".to_string() };
    let text = format!("{} {side} - {countdown} 0 0", ranks.join("/"));
    Jetan::from_position(&text, rules).ok()
}

#[test]
fn jetan_sparse_endgames_match_brute_force() {
    let variants = [
        JetanRules::default(),
        JetanRules { no_legal_moves: NoLegalMoves::Loses, ..JetanRules::default() },
        JetanRules { small_material: SmallMaterial::Seed000Adjudication, ..JetanRules::default() },
        JetanRules {
            chief_captured_by_non_chief: ChiefCapture::CapturerWins,
            small_material: SmallMaterial::Seed000Adjudication,
            no_legal_moves: NoLegalMoves::Loses,
            ..JetanRules::default()
        },
    ];
    for (i, rules) in variants.iter().enumerate() {
        let mut rng = StdRng::seed_from_u64(40 + i as u64);
        let mut starts = Vec::new();
        while starts.len() < 150 {
            starts.extend(sparse_jetan(&mut rng, rules));
        }
        let mut it = starts.into_iter();
        let (n, wins) =
            check_games(50 + i as u64, 150, |_| it.next().unwrap(), |g: &Jetan, m| g.piece_at(m.to).is_some());
        eprintln!("sparse variant {i}: {wins} of {n}");
        assert!(wins >= 50 && wins < n, "sparse variant {i}: {wins} of {n} positions have a winning move");
    }
}
