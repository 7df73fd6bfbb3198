//! Properties of the four-player state (spec §14), checked with proptest on
//! random games under random rules and on random positions: agreement with
//! the mailbox oracle (moves, counts, states, results), position string round
//! trip, incremental hash = recomputed hash, canonical rotation (moves, policy
//! indices and input planes of the rotated position), the diagonal reflection
//! with the other turn order, policy indices (unique, in range, invertible),
//! seat values summing to 0, and the fast immediate-win test against brute
//! force.

#[path = "common/martian4_slow.rs"]
mod martian4_slow;

use martian4_slow::{index, Slow, SlowClock, SlowResult, SlowRules};
use martian_rules::martian4::{
    reflect_diagonal, ClockMode, EmptyQuadrantTie, Martian4Rules, MartianChess4, Seat, TurnOrder, CALL_CLOCK,
};
use martian_rules::{has_winning_move_by_play, EndReason, GameState, Move, Side};
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn slow_rules(r: &Martian4Rules) -> SlowRules {
    SlowRules {
        clockwise: r.turn_order == TurnOrder::Clockwise,
        teams: r.teams,
        field_promotion: r.field_promotion,
        clock: match r.clock {
            ClockMode::Auto => SlowClock::Auto,
            ClockMode::Manual => SlowClock::Manual,
            ClockMode::Off => SlowClock::Off,
        },
        clock_plies: r.clock_plies,
        tie_last_mover_wins: r.tie_on_empty_zone == EmptyQuadrantTie::LastMoverWins,
        max_plies: r.max_plies,
    }
}

fn reason_name(r: EndReason) -> &'static str {
    match r {
        EndReason::EmptyZone => "EmptyZone",
        EndReason::Clock => "Clock",
        EndReason::MoveCap => "MoveCap",
        EndReason::NoLegalMoves => "NoLegalMoves",
        other => panic!("unexpected end reason {other:?}"),
    }
}

fn rules_strategy() -> impl Strategy<Value = Martian4Rules> {
    (
        0usize..4,
        any::<bool>(),
        prop::bool::weighted(0.6),
        prop::bool::weighted(0.8),
        0u8..5,
        prop_oneof![Just(14u32), 1u32..6],
        any::<bool>(),
        prop_oneof![Just(300u32), 0u32..80],
    )
        .prop_map(|(seat, ccw, teams, fp, clock, clock_plies, draw, max_plies)| Martian4Rules {
            first_seat: Seat::ALL[seat],
            turn_order: if ccw { TurnOrder::Counterclockwise } else { TurnOrder::Clockwise },
            teams,
            field_promotion: fp,
            clock: match clock {
                0..=2 => ClockMode::Auto,
                3 => ClockMode::Manual,
                _ => ClockMode::Off,
            },
            clock_plies,
            tie_on_empty_zone: if draw { EmptyQuadrantTie::Draw } else { EmptyQuadrantTie::LastMoverWins },
            max_plies,
            ..Martian4Rules::default()
        })
}

fn legal(s: &MartianChess4) -> Vec<Move> {
    let mut v = Vec::with_capacity(MartianChess4::MAX_MOVES);
    s.legal_moves(&mut v);
    v
}

fn sorted_pairs(moves: impl IntoIterator<Item = Move>) -> Vec<(u8, u8)> {
    let mut v: Vec<(u8, u8)> = moves.into_iter().map(|m| (m.from, m.to)).collect();
    v.sort_unstable();
    v
}

/// The result of the fast state in the oracle's terms (values in ninths).
fn fast_result(s: &MartianChess4) -> Option<SlowResult> {
    let o = s.outcome()?;
    let v = s.seat_values().expect("values of a finished game");
    Some(SlowResult { values_ninths: v.map(|x| (x * 9.0).round() as i32), reason: reason_name(o.reason) })
}

/// Compares everything observable of the fast state with the oracle.
fn compare(fast: &MartianChess4, slow: &Slow) {
    let text = fast.to_position();
    assert_eq!(text, slow.position());
    let moves = legal(fast);
    let expected = sorted_pairs(
        slow.moves().into_iter().map(|(f, t, call)| Move::new(index(f), index(t) | if call { CALL_CLOCK } else { 0 })),
    );
    assert_eq!(sorted_pairs(moves.iter().copied()), expected, "moves of {text}");
    assert_eq!(fast.count_legal_moves(), expected.len(), "count of {text}");
    assert!(moves.len() <= MartianChess4::MAX_MOVES);
    assert_eq!(fast_result(fast), slow.result, "result of {text}");
    assert_eq!(fast.scores(), slow.score);
    assert_eq!(fast.seat_to_move().index(), slow.to_move);
}

/// Checks the properties of one state that do not need the oracle.
fn check_state(s: &MartianChess4) {
    let text = s.to_position();
    // Round trip and hash.
    let back = MartianChess4::from_position(&text, s.rules()).unwrap();
    assert_eq!(&back, s, "round trip of {text}");
    assert_eq!(back.to_position(), text);
    assert_eq!(s.hash(), s.recompute_hash(), "hash of {text}");
    // Team view: the side to move is the mover's team.
    assert_eq!(s.side_to_move(), s.seat_to_move().team());
    // Seat values: only when over, summing to 0; the team view agrees with them.
    match (s.outcome(), s.seat_values()) {
        (None, None) => {}
        (Some(o), Some(v)) => {
            assert!(v.iter().sum::<f32>().abs() < 1e-6, "values {v:?} of {text}");
            let south = v[0] + v[2];
            let expected = if south > 1e-6 {
                Some(Side::South)
            } else if south < -1e-6 {
                Some(Side::North)
            } else {
                None
            };
            assert_eq!(o.winner, expected, "team view of {text}");
            if s.rules().teams {
                for seat in Seat::ALL {
                    assert_eq!(v[seat.index()], o.value_for(seat.team()));
                }
            }
            let t = s.team_scores();
            assert_eq!(s.final_score_difference(Side::South), Some(t[0] as i32 - t[1] as i32));
        }
        other => panic!("outcome and seat values disagree: {other:?} for {text}"),
    }
    // Policy indices: unique, in range, invertible.
    let moves = legal(s);
    let bound = s.rules().num_actions();
    let mut seen = std::collections::HashSet::new();
    for &m in &moves {
        let i = s.action_index(m);
        assert!(i < bound && i < MartianChess4::NUM_ACTIONS, "index {i} of {} in {text}", s.move_to_string(m));
        assert!(seen.insert(i), "duplicate index {i} in {text}");
        assert_eq!(s.move_for_action(i), Some(m));
        assert_eq!(s.parse_move(&s.move_to_string(m)), Ok(m));
    }
    // Rotations (§14.9): the moves of the rotated position are the rotated
    // moves, with the same policy indices and the same input planes.
    let mut planes = vec![0f32; 19 * 64];
    s.encode(&mut planes);
    for k in 0..4u8 {
        let r = s.rotated(k);
        assert_eq!(r.seat_to_move(), s.seat_to_move().rotated(k));
        // An odd number of quarter turns swaps the teams' Side labels: compare
        // from the mover's view, and the seat values seat by seat.
        let view = |g: &MartianChess4| g.outcome().map(|o| (o.reason, o.value_for(g.side_to_move())));
        assert_eq!(view(&r), view(s), "outcome of the rotation {k} of {text}");
        if let (Some(a), Some(b)) = (s.seat_values(), r.seat_values()) {
            for seat in Seat::ALL {
                assert_eq!(b[seat.rotated(k).index()], a[seat.index()], "values of the rotation {k} of {text}");
            }
        }
        assert_eq!(r.hash(), r.recompute_hash());
        let rotated_moves: Vec<Move> = moves.iter().map(|&m| MartianChess4::rotate_move(k, m)).collect();
        assert_eq!(sorted_pairs(legal(&r)), sorted_pairs(rotated_moves.iter().copied()), "rotation {k} of {text}");
        for (&m, &rm) in moves.iter().zip(&rotated_moves) {
            assert_eq!(r.action_index(rm), s.action_index(m));
        }
        let mut rp = vec![0f32; 19 * 64];
        r.encode(&mut rp);
        assert_eq!(rp, planes, "planes of the rotation {k} of {text}");
    }
    let c = s.canonical();
    assert_eq!(c.seat_to_move(), Seat::SW);
    for &m in &moves {
        let i = s.action_index(m);
        let cm = c.move_for_action(i).expect("canonical move");
        assert_eq!(
            i,
            (cm.from as usize) * 64 + (cm.to & !CALL_CLOCK) as usize + if cm.to & CALL_CLOCK != 0 { 4096 } else { 0 }
        );
    }
    // The reflection in the a1-h8 diagonal under the other turn order.
    let f = s.reflected();
    let reflect = |m: Move| Move::new(reflect_diagonal(m.from), reflect_diagonal(m.to & 63) | (m.to & CALL_CLOCK));
    assert_eq!(sorted_pairs(legal(&f)), sorted_pairs(moves.iter().map(|&m| reflect(m))), "reflection of {text}");
    assert_eq!(f.outcome(), s.outcome(), "outcome of the reflection of {text}");
    // The immediate-win test.
    assert_eq!(s.has_winning_move(), has_winning_move_by_play(s), "winning move in {text}");
}

/// Plays a seeded random game to its end, checking the oracle and the state
/// properties at every ply. Style 0 plays uniformly, 1 prefers captures, 2
/// prefers captures, then moves out of the mover's quadrant (empty-quadrant
/// endings), 3 avoids giving an immediate win (long games: clock, cap).
/// Returns the plies and the end reason.
fn random_game(seed: u64, rules: &Martian4Rules, with_oracle: bool) -> (usize, EndReason) {
    let style = seed % 4;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut fast = MartianChess4::new_game(rules).unwrap();
    let mut slow = Slow::parse(&fast.to_position(), slow_rules(rules));
    let mut plies = 0;
    loop {
        if with_oracle {
            compare(&fast, &slow);
        }
        check_state(&fast);
        let moves = legal(&fast);
        if moves.is_empty() {
            return (plies, fast.outcome().expect("finished").reason);
        }
        let own = fast.seat_to_move().quadrant();
        let occ = fast.occupied();
        let dest = |m: &Move| m.to & 63;
        let captures: Vec<Move> =
            moves.iter().copied().filter(|m| occ >> dest(m) & 1 != 0 && own >> dest(m) & 1 == 0).collect();
        let leaving: Vec<Move> = moves.iter().copied().filter(|m| own >> dest(m) & 1 == 0).collect();
        let mut mv = moves[rng.gen_range(0..moves.len())];
        match style {
            1 | 2 if !captures.is_empty() && rng.gen_bool(0.9) => mv = captures[rng.gen_range(0..captures.len())],
            2 if !leaving.is_empty() && rng.gen_bool(0.7) => mv = leaving[rng.gen_range(0..leaving.len())],
            3 => {
                let safe: Vec<Move> = moves
                    .iter()
                    .copied()
                    .filter(|&m| {
                        let mut c = fast;
                        c.play_unchecked(m);
                        c.outcome().is_none() && !has_winning_move_by_play(&c)
                    })
                    .collect();
                if !safe.is_empty() {
                    mv = safe[rng.gen_range(0..safe.len())];
                }
            }
            _ => {}
        }
        fast.play_unchecked(mv);
        if with_oracle {
            let sm = slow
                .moves()
                .into_iter()
                .find(|&(f, t, call)| {
                    index(f) == mv.from && index(t) == mv.to & 63 && call == (mv.to & CALL_CLOCK != 0)
                })
                .expect("the oracle has the move");
            slow.play(sm);
        }
        plies += 1;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn random_games_match_oracle_and_properties(seed in any::<u64>(), rules in rules_strategy()) {
        random_game(seed, &rules, true);
    }
}

#[test]
fn standard_games_reach_every_ending() {
    let mut reasons = std::collections::HashMap::new();
    let mut total = 0;
    for (i, teams) in [true, false].into_iter().enumerate() {
        let rules = Martian4Rules { teams, ..Martian4Rules::default() };
        for seed in 0..40 {
            let (plies, reason) = random_game(1000 * i as u64 + seed, &rules, seed % 4 != 3);
            total += plies;
            *reasons.entry(reason_name(reason)).or_insert(0) += 1;
        }
    }
    println!("{total} plies, {reasons:?}");
    for r in ["EmptyZone", "Clock"] {
        assert!(reasons.get(r).copied().unwrap_or(0) > 0, "no game ended by {r}: {reasons:?}");
    }
}

/// A random position string: each square empty or a random piece (denser or
/// sparser by `fill`), random scores, clock, counters and mover.
fn random_position(rng: &mut StdRng, rules: &Martian4Rules) -> String {
    let fill = rng.gen_range(0.05..0.6);
    let mut ranks = Vec::new();
    // Within the four sets' material (36 pieces of 72 points; without field
    // promotion 12 of each kind), as a position string must be (§2, §14.2).
    let (mut pieces, mut points, mut kinds) = (0, 0, [0; 3]);
    for _ in 0..8 {
        let mut row = String::new();
        let mut empty = 0;
        for _ in 0..8 {
            let k = rng.gen_range(0..3);
            let fits = pieces < 36 && points + k < 72 && (rules.field_promotion || kinds[k] < 12);
            if rng.gen_bool(fill) && fits {
                if empty > 0 {
                    row.push_str(&empty.to_string());
                    empty = 0;
                }
                row.push(['P', 'D', 'Q'][k]);
                (pieces, points, kinds[k]) = (pieces + 1, points + k + 1, kinds[k] + 1);
            } else {
                empty += 1;
            }
        }
        if empty > 0 {
            row.push_str(&empty.to_string());
        }
        ranks.push(row);
    }
    let clock = if rules.clock == ClockMode::Off || rng.gen_bool(0.5) {
        "-".to_string()
    } else {
        rng.gen_range(0..=rules.clock_plies).to_string()
    };
    let seat = ["SW", "NW", "NE", "SE"][rng.gen_range(0..4)];
    let scores: Vec<String> = (0..4).map(|_| rng.gen_range(0..20).to_string()).collect();
    format!(
        "{} {seat} {} {clock} {} {}",
        ranks.join("/"),
        scores.join(" "),
        rng.gen_range(0..40),
        rng.gen_range(0..rules.max_plies.max(1) + 5)
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_positions_match_oracle_and_properties(seed in any::<u64>(), rules in rules_strategy()) {
        let mut rng = StdRng::seed_from_u64(seed);
        let text = random_position(&mut rng, &rules);
        let fast = MartianChess4::from_position(&text, &rules).unwrap();
        let slow = Slow::parse(&text, slow_rules(&rules));
        compare(&fast, &slow);
        check_state(&fast);
        // One ply further, when the game goes on.
        let moves = legal(&fast);
        if !moves.is_empty() {
            let mv = moves[rng.gen_range(0..moves.len())];
            let mut f = fast;
            f.play_unchecked(mv);
            let mut s = slow.clone();
            let sm = s.moves().into_iter()
                .find(|&(a, b, call)| index(a) == mv.from && index(b) == mv.to & 63 && call == (mv.to & CALL_CLOCK != 0))
                .unwrap();
            s.play(sm);
            compare(&f, &s);
            check_state(&f);
        }
    }
}

#[test]
fn hash_distinguishes_the_state() {
    let s = MartianChess4::new_game(&Martian4Rules::default()).unwrap();
    let base = s.to_position();
    let variants = [
        base.replace(" SW ", " NW "),
        base.replace(" SW 0 0 0 0 ", " SW 0 0 0 1 "),
        base.replace(" SW 0 0 0 0 ", " SW 1 0 0 0 "),
        base.replace(" - 0 0", " 5 0 0"),
        base.replace(" - 0 0", " 6 0 0"),
        base.replacen("QQD2DQQ", "QQD2DQP", 1),
    ];
    let mut hashes = std::collections::HashSet::new();
    hashes.insert(s.hash());
    for v in &variants {
        let h = MartianChess4::from_position(v, &Martian4Rules::default()).unwrap().hash();
        assert!(hashes.insert(h), "hash collision for {v}");
    }
    // Counters are not in the hash, but in the input key.
    let later = MartianChess4::from_position(&base.replace(" - 0 0", " - 3 7"), &Martian4Rules::default()).unwrap();
    assert_eq!(later.hash(), s.hash());
    assert_ne!(later.input_key(), s.input_key());
    // The input key also depends on the turn order (seat order of the planes).
    let ccw = Martian4Rules { turn_order: TurnOrder::Counterclockwise, ..Martian4Rules::default() };
    assert_ne!(MartianChess4::from_position(&base, &ccw).unwrap().input_key(), s.input_key());
}

#[test]
fn queen_on_d4_has_27_destinations() {
    // §14.9: a Queen on d4 of an otherwise empty board reaches 27 squares;
    // here the corners a8, h8, h1 hold the other seats' Pawns (h8 is a capture).
    let text = "P6P/8/8/8/3Q4/8/8/7P SW 0 0 0 0 - 0 0";
    let s = MartianChess4::from_position(text, &Martian4Rules::default()).unwrap();
    assert_eq!(s.count_legal_moves(), 27);
    // Under the Manual clock every move has its clock-calling twin.
    let manual = Martian4Rules { clock: ClockMode::Manual, ..Martian4Rules::default() };
    let m = MartianChess4::from_position(text, &manual).unwrap();
    assert_eq!(m.count_legal_moves(), 54);
    let moves = legal(&m);
    assert_eq!(moves.iter().filter(|mv| mv.to & CALL_CLOCK != 0).count(), 27);
    let mut idx: Vec<usize> = moves.iter().map(|&mv| m.action_index(mv)).collect();
    idx.sort_unstable();
    idx.dedup();
    assert_eq!(idx.len(), 54);
    assert!(idx[26] < 4096 && idx[27] >= 4096 && idx[53] < 8192);
}

#[test]
fn winning_move_fast_test_matches_brute_force() {
    // Long games (style 3 avoids immediate wins, so the clock and the cap are
    // reached; other styles end on empty quadrants) under rules where each
    // kind of winning move occurs: counts of positions with a win by the
    // clock (countdown 1) and with a win by other endings must both be > 0.
    let d = Martian4Rules::default();
    let variants = [
        d,
        Martian4Rules { teams: false, ..d },
        Martian4Rules { clock_plies: 3, ..d },
        Martian4Rules { clock_plies: 2, teams: false, turn_order: TurnOrder::Counterclockwise, ..d },
        Martian4Rules { clock: ClockMode::Manual, clock_plies: 4, max_plies: 90, ..d },
        Martian4Rules { clock: ClockMode::Off, max_plies: 61, tie_on_empty_zone: EmptyQuadrantTie::Draw, ..d },
    ];
    let (mut by_clock, mut other, mut positions) = (0, 0, 0);
    for (i, rules) in variants.iter().enumerate() {
        for seed in 0..24u64 {
            let mut rng = StdRng::seed_from_u64(100 * i as u64 + seed);
            let mut g = MartianChess4::new_game(rules).unwrap();
            loop {
                let fast = g.has_winning_move();
                assert_eq!(fast, has_winning_move_by_play(&g), "{}", g.to_position());
                positions += 1;
                if fast {
                    if g.clock_countdown() == Some(1) {
                        by_clock += 1;
                    } else {
                        other += 1;
                    }
                }
                let moves = legal(&g);
                if moves.is_empty() {
                    break;
                }
                let own = g.seat_to_move().quadrant();
                let leaving: Vec<Move> = moves.iter().copied().filter(|m| own >> (m.to & 63) & 1 == 0).collect();
                let pick = if seed % 3 == 2 && !leaving.is_empty() && rng.gen_bool(0.6) {
                    // Thin out the quadrants: endings by an empty quadrant.
                    leaving[rng.gen_range(0..leaving.len())]
                } else if seed % 3 == 0 {
                    let safe: Vec<Move> = moves
                        .iter()
                        .copied()
                        .filter(|&m| {
                            let mut c = g;
                            c.play_unchecked(m);
                            !has_winning_move_by_play(&c)
                        })
                        .collect();
                    if safe.is_empty() {
                        moves[rng.gen_range(0..moves.len())]
                    } else {
                        safe[rng.gen_range(0..safe.len())]
                    }
                } else {
                    moves[rng.gen_range(0..moves.len())]
                };
                g.play_unchecked(pick);
            }
        }
    }
    println!("{positions} positions, {by_clock} wins by the clock, {other} other wins");
    assert!(by_clock > 0 && other > 0, "{by_clock} clock wins, {other} other wins");
}
