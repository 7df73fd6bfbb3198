//! `GameState::has_winning_move` (the fast tests of both games) against brute
//! force (`has_winning_move_by_play`: play every legal move, look at the
//! result) on every position of seeded random games, under the standard rules
//! and under the switches that change which moves win.

use martian_rules::jetan::{ChiefCapture, Escape, Jetan, JetanRules, NoLegalMoves, Repetition, SmallMaterial};
use martian_rules::martian::{ClockMode, EmptyZoneTie, MartianChess, MartianRules};
use martian_rules::{has_winning_move_by_play, GameState, Move, Side};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// What `forcing_moves` kept, against brute force: moves that leave a
/// threat; moves kept without one (unfinished positions); moves without a
/// threat checked for zugzwang, the zugzwangs among them, and those kept.
#[derive(Default, Debug)]
struct Forcing {
    threats: usize,
    extra: usize,
    quiet: usize,
    zugzwangs: usize,
    quiet_kept: usize,
    safe: usize,
    safe_missed: usize,
    /// Positions where `safe_reply_from_board` named a move.
    safe_from_board: usize,
    /// Positions where `winning_replies` answered (else the search plays).
    replies_answered: usize,
}

/// Checks every position of `games` random games from `start(game)`; returns
/// (positions, positions with a winning move). One game in three prefers
/// captures, one avoids moves that allow an immediate win (long games).
/// Also checks `GameState::forcing_moves` against brute force (`counts`).
fn check_games<G: GameState>(
    seed: u64,
    games: usize,
    mut start: impl FnMut(&mut StdRng) -> G,
    is_capture: impl Fn(&G, Move) -> bool,
    zugzwang_every: usize,
    counts: &mut Forcing,
) -> (usize, usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut moves = Vec::with_capacity(G::MAX_MOVES);
    let (mut forcing, mut forcing_zz, mut replies) = (Vec::new(), Vec::new(), Vec::new());
    let mut reply_wins = Vec::new();
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
            // `safe_reply` names a legal move after which the opponent has no
            // win at once; counted where it finds none but one exists.
            let them = g.side_to_move().opponent();
            let safe_after = |m: Move| {
                let mut s = g.clone();
                s.play_unchecked(m);
                s.outcome().map_or_else(|| !s.has_winning_move(), |o| o.winner != Some(them))
            };
            // `safe_reply_from_board` names a legal, safe move without the list.
            if let Some(r) = g.safe_reply_from_board() {
                assert!(moves.contains(&r), "game {game}: {r:?} not legal in {}", g.to_position());
                assert!(safe_after(r), "game {game}: {} is no safe reply in {}", g.move_to_string(r), g.to_position());
                counts.safe_from_board += 1;
            }
            match g.safe_reply(&moves) {
                Some(r) => {
                    assert!(moves.contains(&r), "game {game}: {r:?} not legal in {}", g.to_position());
                    assert!(
                        safe_after(r),
                        "game {game}: {} is no safe reply in {}",
                        g.move_to_string(r),
                        g.to_position()
                    );
                    counts.safe += 1;
                }
                None => counts.safe_missed += usize::from(moves.iter().any(|&m| safe_after(m))),
            }
            // `forcing_moves` keeps every move that leaves a threat and, with
            // zugzwangs, every move after which each reply hands the mover a
            // win (checked on every `zugzwang_every`-th position).
            g.forcing_moves(&moves, false, &mut forcing);
            let check_zugzwangs = n % zugzwang_every == 0;
            if check_zugzwangs {
                g.forcing_moves(&moves, true, &mut forcing_zz);
            }
            // `winning_replies`, where the game answers, says for each move
            // whether the opponent then wins at once (moves that end the game
            // aside).
            let answered = g.winning_replies(&moves, &mut reply_wins);
            if answered {
                assert_eq!(reply_wins.len(), moves.len(), "one answer per move");
                counts.replies_answered += 1;
            }
            let me = g.side_to_move();
            // The proofs ask only positions without a winning move.
            let asked = !g.has_winning_move();
            for &m in &moves {
                let mut s = g.clone();
                s.play_unchecked(m);
                let threat = s.outcome().is_none() && s.threatens_win();
                let context = || format!("game {game}: {} then {}", g.to_position(), g.move_to_string(m));
                if answered && s.outcome().is_none() {
                    let i = moves.iter().position(|&x| x == m).expect("a legal move");
                    assert_eq!(reply_wins[i], has_winning_move_by_play(&s), "{}: winning_replies", context());
                }
                assert!(!threat || forcing.contains(&m), "{}: a threat left out", context());
                counts.threats += usize::from(threat && asked);
                counts.extra += usize::from(asked && !threat && s.outcome().is_none() && forcing.contains(&m));
                if !check_zugzwangs || !asked || threat || s.outcome().is_some() {
                    continue;
                }
                assert!(forcing.iter().all(|x| forcing_zz.contains(x)), "{}", context());
                s.legal_moves(&mut replies);
                let zugzwang = !replies.is_empty()
                    && replies.iter().all(|&r| {
                        let mut q = s.clone();
                        q.play_unchecked(r);
                        match q.outcome() {
                            Some(o) => o.winner == Some(me),
                            None => q.has_winning_move(),
                        }
                    });
                assert!(!zugzwang || forcing_zz.contains(&m), "{}: a zugzwang left out", context());
                counts.quiet += 1;
                counts.zugzwangs += usize::from(zugzwang);
                counts.quiet_kept += usize::from(forcing_zz.contains(&m));
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
        let mut counts = Forcing::default();
        let (n, wins) = check_games(
            10 + i as u64,
            30,
            |_| Jetan::new_game(rules).unwrap(),
            |g: &Jetan, m| g.piece_at(m.to).is_some(),
            7,
            &mut counts,
        );
        eprintln!("variant {i}: {wins} of {n}; forcing moves {counts:?}");
        // Where only captures of a royal piece win (variants 0-2 and 5) the
        // threats are exact and nearly every quiet move is ruled out of a
        // zugzwang (the two other switches keep every move).
        if ![3, 4].contains(&i) {
            assert_eq!(counts.extra, 0, "variant {i}: threats claimed where there are none");
            assert!(counts.threats >= 100, "variant {i}: only {} threats: the test needs more", counts.threats);
            assert!(counts.quiet_kept * 10 < counts.quiet, "variant {i}: {counts:?}");
            // A safe reply is found wherever one exists (a move that ends
            // the game in a draw counts as safe only when it also parries).
            assert!(counts.safe > 1000, "variant {i}: {counts:?}");
            assert!(counts.replies_answered > 1000, "variant {i}: {counts:?}");
            assert!(counts.safe_from_board > 500, "variant {i}: {counts:?}");
        }
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
        50,
        &mut Forcing::default(),
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
        let mut counts = Forcing::default();
        let (n, wins) = check_games(
            50 + i as u64,
            150,
            |_| it.next().unwrap(),
            |g: &Jetan, m| g.piece_at(m.to).is_some(),
            1,
            &mut counts,
        );
        eprintln!("sparse variant {i}: forcing moves {counts:?}");
        if i == 0 {
            assert_eq!(counts.extra, 0, "sparse: threats claimed where there are none");
        }
        eprintln!("sparse variant {i}: {wins} of {n}");
        assert!(wins >= 50 && wins < n, "sparse variant {i}: {wins} of {n} positions have a winning move");
    }
}

/// Zugzwangs (found by a random search over sparse endgames): the move leaves
/// no threat, yet every reply of the opponent hands the mover a win at once.
/// `forcing_moves` keeps the move with zugzwangs and leaves it out without.
#[test]
fn jetan_zugzwangs_are_kept() {
    let rules = JetanRules::default();
    for (text, mv) in [
        ("10/10/4T5/10/4N5/10/10/2P7/7Fpc/8C1 o - - 0 0", "e6e5"),
        ("8pC/8cD/10/10/10/10/1P8/10/10/10 o - - 0 0", "b4a1"),
        ("2P7/10/10/10/10/10/10/10/8pF/8cC o - - 0 0", "c10a7"),
    ] {
        let g = Jetan::from_position(text, &rules).unwrap();
        let m = g.parse_move(mv).unwrap();
        let me = g.side_to_move();
        let mut s = g.clone();
        s.play_unchecked(m);
        assert!(s.outcome().is_none() && !s.threatens_win(), "{text}: {mv} is no quiet move");
        let mut replies = Vec::new();
        s.legal_moves(&mut replies);
        assert!(!replies.is_empty());
        for r in replies {
            let mut q = s.clone();
            q.play_unchecked(r);
            let lost = q.outcome().map_or_else(|| q.has_winning_move(), |o| o.winner == Some(me));
            assert!(lost, "{text}: {mv} then {} escapes", s.move_to_string(r));
        }
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let mut out = Vec::new();
        g.forcing_moves(&moves, true, &mut out);
        assert!(out.contains(&m), "{text}: the zugzwang {mv} left out");
        g.forcing_moves(&moves, false, &mut out);
        assert!(!out.contains(&m), "{text}: {mv} leaves no threat");
    }
}
