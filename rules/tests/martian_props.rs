//! Properties of the Martian Chess state, checked on seeded random games and
//! random positions: agreement with the mailbox oracle, incremental hash,
//! position round trip, 180-degree symmetry, policy indices, encoding.

#[path = "common/martian_slow.rs"]
mod martian_slow;

use martian_rules::martian::{ClockMode, EmptyZoneTie, MartianChess, MartianRules};
use martian_rules::{EndReason, GameState, Move, Side};
use martian_slow::{index, Slow, SlowResult, SlowRules};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn slow_rules(r: &MartianRules) -> SlowRules {
    SlowRules {
        field_promotion: r.field_promotion,
        no_undo: r.no_undo,
        clock_auto: r.clock == ClockMode::Auto,
        tie_last_mover_wins: r.tie_on_empty_zone == EmptyZoneTie::LastMoverWins,
        max_plies: r.max_plies,
    }
}

fn random_rules(rng: &mut StdRng) -> MartianRules {
    MartianRules {
        first_player: if rng.gen_bool(0.5) { Side::South } else { Side::North },
        field_promotion: rng.gen_bool(0.8),
        no_undo: rng.gen_bool(0.8),
        clock: if rng.gen_bool(0.8) { ClockMode::Auto } else { ClockMode::Off },
        tie_on_empty_zone: if rng.gen_bool(0.5) { EmptyZoneTie::LastMoverWins } else { EmptyZoneTie::Draw },
        max_plies: if rng.gen_bool(0.8) { 300 } else { rng.gen_range(0..120) },
        ..MartianRules::default()
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

/// Compares everything observable of the fast state with the oracle.
fn compare(fast: &MartianChess, slow: &Slow) {
    let text = fast.to_position();
    assert_eq!(text, slow.position());
    let mut moves = Vec::with_capacity(MartianChess::MAX_MOVES);
    fast.legal_moves(&mut moves);
    let mut a: Vec<(u8, u8)> = moves.iter().map(|m| (m.from, m.to)).collect();
    let mut b: Vec<(u8, u8)> = slow.moves().iter().map(|&(f, t)| (index(f), index(t))).collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b, "moves of {text}");
    assert_eq!(fast.count_legal_moves(), b.len(), "count of {text}");
    assert!(moves.len() <= MartianChess::MAX_MOVES);
    let fo = fast.outcome().map(|o| SlowResult { winner: o.winner.map(Side::index), reason: reason_name(o.reason) });
    assert_eq!(fo, slow.result, "outcome of {text}");
    assert_eq!(fast.scores(), slow.score);
    assert_eq!(fast.hash(), fast.recompute_hash(), "hash of {text}");
}

/// Plays a seeded random game to its end, checking the oracle at every ply.
/// Seeds `3k` play uniformly (games end by the clock), `3k + 1` prefer
/// captures, `3k + 2` prefer captures, then moves across the canal (games end on
/// an empty zone).
fn random_game(seed: u64, rules: &MartianRules) -> (usize, EndReason) {
    let style = seed % 3;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut fast = MartianChess::new_game(rules).unwrap();
    let mut slow = Slow::parse(&fast.to_position(), slow_rules(rules));
    let mut moves = Vec::with_capacity(MartianChess::MAX_MOVES);
    let mut plies = 0;
    loop {
        compare(&fast, &slow);
        fast.legal_moves(&mut moves);
        if moves.is_empty() {
            let reason = fast.outcome().expect("finished").reason;
            return (plies, reason);
        }
        let mut mv = moves[rng.gen_range(0..moves.len())];
        if style > 0 {
            let zone = MartianChess::zone(fast.side_to_move());
            let occ = fast.occupied();
            let captures: Vec<Move> = moves.iter().copied().filter(|m| occ.has(m.to) && !zone.has(m.to)).collect();
            let crossing: Vec<Move> = moves.iter().copied().filter(|m| !zone.has(m.to)).collect();
            if !captures.is_empty() && rng.gen_bool(0.9) {
                mv = captures[rng.gen_range(0..captures.len())];
            } else if style == 2 && !crossing.is_empty() && rng.gen_bool(0.7) {
                mv = crossing[rng.gen_range(0..crossing.len())];
            }
        }
        fast.play_unchecked(mv);
        let sm = slow.moves().into_iter().find(|&(f, t)| index(f) == mv.from && index(t) == mv.to).unwrap();
        slow.play(sm);
        plies += 1;
    }
}

#[test]
fn oracle_random_games_standard_rules() {
    let rules = MartianRules::default();
    let mut total = 0;
    let mut reasons = std::collections::HashMap::new();
    for seed in 0..1500 {
        let (plies, reason) = random_game(seed, &rules);
        total += plies;
        *reasons.entry(reason_name(reason)).or_insert(0) += 1;
    }
    assert!(total > 8_000, "{total} plies");
    println!("{total} plies, {reasons:?}");
    for r in ["EmptyZone", "Clock"] {
        assert!(reasons.get(r).copied().unwrap_or(0) > 0, "no game ended by {r}: {reasons:?}");
    }
}

#[test]
fn oracle_random_games_variant_rules() {
    let mut rng = StdRng::seed_from_u64(77);
    let mut reasons = std::collections::HashMap::new();
    for seed in 0..300 {
        let rules = random_rules(&mut rng);
        let (_, reason) = random_game(1000 + seed, &rules);
        *reasons.entry(reason_name(reason)).or_insert(0) += 1;
    }
    println!("{reasons:?}");
    for r in ["EmptyZone", "Clock", "MoveCap"] {
        assert!(reasons.get(r).copied().unwrap_or(0) > 0, "no game ended by {r}: {reasons:?}");
    }
}

/// A random valid position string: within the two sets' material (at most 6
/// of each kind, so that it holds with and without field promotion, spec
/// §2, §7), and a last move that could have been played (spec §10: the
/// piece on its destination reaches it from an empty origin in the mover's
/// zone over empty squares), or none.
fn random_position(rng: &mut StdRng) -> String {
    let density = rng.gen_range(0.05..0.8);
    let mut cells = ['.'; 32];
    let mut kinds = [0; 3];
    for c in cells.iter_mut() {
        let k = [0, 0, 1, 2][rng.gen_range(0..4)];
        if rng.gen_bool(density) && kinds[k] < 6 {
            *c = ['P', 'D', 'Q'][k];
            kinds[k] += 1;
        }
    }
    let side = if rng.gen_bool(0.5) { "S" } else { "N" };
    // The side that made the last ply moved from its own zone (S: ranks 1-4).
    let mover_zone = if side == "S" { 16..32u8 } else { 0..16u8 };
    let reaches = |piece: char, f: u8, t: u8| {
        let (f0, r0, f1, r1) = (i32::from(f % 4), i32::from(f / 4), i32::from(t % 4), i32::from(t / 4));
        let (df, dr) = (f1 - f0, r1 - r0);
        let steps = df.abs().max(dr.abs());
        let fits = match piece {
            'P' => df.abs() == 1 && dr.abs() == 1,
            'D' => (df == 0 || dr == 0) && steps <= 2,
            _ => df == 0 || dr == 0 || df.abs() == dr.abs(),
        };
        fits && (1..steps).all(|i| cells[(f0 + df.signum() * i + 4 * (r0 + dr.signum() * i)) as usize] == '.')
    };
    let mut last = "-".to_string();
    if rng.gen_bool(0.7) {
        for _ in 0..20 {
            let (f, t) = (rng.gen_range(mover_zone.clone()), rng.gen_range(0..32u8));
            let piece = cells[t as usize];
            if f != t && cells[f as usize] == '.' && piece != '.' && reaches(piece, f, t) {
                last = format!("{}{}", sq(f), sq(t));
                break;
            }
        }
    }
    let clock = if rng.gen_bool(0.6) { "-".to_string() } else { rng.gen_range(0..8).to_string() };
    format!(
        "{} {side} {} {} {last} {clock} {} {}",
        compress(&cells),
        rng.gen_range(0..20),
        rng.gen_range(0..20),
        rng.gen_range(0..12),
        rng.gen_range(0..320)
    )
}

fn sq(s: u8) -> String {
    format!("{}{}", (b'a' + s % 4) as char, s / 4 + 1)
}

/// Placement field from 32 cells indexed by square.
fn compress(cells: &[char; 32]) -> String {
    let mut ranks = Vec::new();
    for rank in (0..8).rev() {
        let mut s = String::new();
        let mut e = 0;
        for file in 0..4 {
            let c = cells[rank * 4 + file];
            if c == '.' {
                e += 1;
            } else {
                if e > 0 {
                    s.push_str(&e.to_string());
                    e = 0;
                }
                s.push(c);
            }
        }
        if e > 0 {
            s.push_str(&e.to_string());
        }
        ranks.push(s);
    }
    ranks.join("/")
}

/// 32 cells indexed by square from a placement field.
fn expand(placement: &str) -> [char; 32] {
    let mut cells = ['.'; 32];
    for (i, r) in placement.split('/').enumerate() {
        let rank = 7 - i;
        let mut file = 0;
        for c in r.chars() {
            if let Some(d) = c.to_digit(10) {
                file += d as usize;
            } else {
                cells[rank * 4 + file] = c;
                file += 1;
            }
        }
    }
    cells
}

/// The position rotated by 180 degrees (spec §10 canonical orientation):
/// squares `sq -> 31 - sq`, side to move and scores swapped, last move rotated.
fn rotate(text: &str) -> String {
    let f: Vec<&str> = text.split(' ').collect();
    let cells = expand(f[0]);
    let mut rot = ['.'; 32];
    for s in 0..32 {
        rot[31 - s] = cells[s];
    }
    let side = if f[1] == "S" { "N" } else { "S" };
    let last = if f[4] == "-" {
        "-".to_string()
    } else {
        let b = f[4].as_bytes();
        let a = (b[0] - b'a') + 4 * (b[1] - b'1');
        let c = (b[2] - b'a') + 4 * (b[3] - b'1');
        format!("{}{}", sq(31 - a), sq(31 - c))
    };
    format!("{} {side} {} {} {last} {} {} {}", compress(&rot), f[3], f[2], f[5], f[6], f[7])
}

#[test]
fn oracle_random_positions() {
    let mut rng = StdRng::seed_from_u64(5);
    let mut with_moves = 0;
    for _ in 0..4000 {
        let rules = random_rules(&mut rng);
        let mut text = random_position(&mut rng);
        if rules.clock == ClockMode::Off {
            // Under `clock = Off` the clock is never called: its field is `-`.
            let mut f: Vec<&str> = text.split(' ').collect();
            f[5] = "-";
            text = f.join(" ");
        }
        let fast = MartianChess::from_position(&text, &rules).unwrap();
        let mut slow = Slow::parse(&text, slow_rules(&rules));
        compare(&fast, &slow);
        // Play a few random plies from there.
        let mut fast = fast;
        for _ in 0..6 {
            let moves = slow.moves();
            if moves.is_empty() {
                break;
            }
            with_moves += 1;
            let m = moves[rng.gen_range(0..moves.len())];
            fast.play_unchecked(Move::new(index(m.0), index(m.1)));
            slow.play(m);
            compare(&fast, &slow);
        }
    }
    assert!(with_moves > 5000);
}

/// Seeded random states reached by play, including finished ones.
fn sample_states(n_games: u64) -> Vec<MartianChess> {
    let mut out = Vec::new();
    let mut moves = Vec::with_capacity(MartianChess::MAX_MOVES);
    for seed in 0..n_games {
        let mut rng = StdRng::seed_from_u64(seed + 500);
        let rules = if seed % 3 == 0 { random_rules(&mut rng) } else { MartianRules::default() };
        let mut s = MartianChess::new_game(&rules).unwrap();
        loop {
            out.push(s);
            s.legal_moves(&mut moves);
            if moves.is_empty() {
                break;
            }
            s.play_unchecked(moves[rng.gen_range(0..moves.len())]);
        }
    }
    out
}

#[test]
fn incremental_hash_and_round_trip() {
    for s in sample_states(150) {
        assert_eq!(s.hash(), s.recompute_hash());
        let text = s.to_position();
        let back = MartianChess::from_position(&text, s.rules()).unwrap();
        assert_eq!(back, s, "{text}");
        assert_eq!(back.to_position(), text);
    }
}

#[test]
fn hash_distinguishes_state() {
    let r = MartianRules::default();
    let a = MartianChess::from_position("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0", &r).unwrap();
    let others = [
        "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ N 0 0 - - 0 0",
        "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 1 0 - - 0 0",
        "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 1 - - 0 0",
        "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - 5 0 0",
        "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 d5d3 - 0 0",
        "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQP S 0 0 - - 0 0",
    ];
    for o in others {
        let b = MartianChess::from_position(o, &r).unwrap();
        assert_ne!(a.hash(), b.hash(), "{o}");
    }
    // Counters are not hashed.
    let c = MartianChess::from_position("QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 3 9", &r).unwrap();
    assert_eq!(a.hash(), c.hash());
}

#[test]
fn rotation_symmetry() {
    let mut rng = StdRng::seed_from_u64(9);
    let mut texts: Vec<String> = sample_states(60).iter().map(|s| s.to_position()).collect();
    texts.extend((0..2000).map(|_| random_position(&mut rng)));
    let r = MartianRules::default();
    let mut moves = Vec::new();
    let mut rmoves = Vec::new();
    for text in texts {
        let s = MartianChess::from_position(&text, &r).unwrap();
        let rt = rotate(&text);
        let t = MartianChess::from_position(&rt, &r).unwrap();
        assert_eq!(rotate(&rt), text);
        assert_eq!(s.count_legal_moves(), t.count_legal_moves(), "{text} / {rt}");
        s.legal_moves(&mut moves);
        t.legal_moves(&mut rmoves);
        let mut a: Vec<(u8, u8)> = moves.iter().map(|m| (31 - m.from, 31 - m.to)).collect();
        let mut b: Vec<(u8, u8)> = rmoves.iter().map(|m| (m.from, m.to)).collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
        // Same policy indices, same input planes, mirrored outcome.
        let mut ia: Vec<usize> = moves.iter().map(|&m| s.action_index(m)).collect();
        let mut ib: Vec<usize> = rmoves.iter().map(|&m| t.action_index(m)).collect();
        ia.sort_unstable();
        ib.sort_unstable();
        assert_eq!(ia, ib);
        let mut ea = vec![0.0f32; 11 * 32];
        let mut eb = vec![0.0f32; 11 * 32];
        s.encode(&mut ea);
        t.encode(&mut eb);
        assert_eq!(ea, eb, "{text}");
        assert_eq!(
            s.outcome().map(|o| (o.winner.map(Side::opponent), o.reason)),
            t.outcome().map(|o| (o.winner, o.reason))
        );
    }
}

#[test]
fn action_indices_unique_and_invertible() {
    let mut moves = Vec::new();
    for s in sample_states(40) {
        s.legal_moves(&mut moves);
        let mut seen = std::collections::HashSet::new();
        for &m in &moves {
            let i = s.action_index(m);
            assert!(i < MartianChess::NUM_ACTIONS);
            assert!(seen.insert(i), "duplicate index");
            assert_eq!(s.move_for_action(i), Some(m));
        }
        let found = (0..MartianChess::NUM_ACTIONS + 5).filter(|&i| s.move_for_action(i).is_some()).count();
        assert_eq!(found, moves.len());
    }
}

#[test]
fn max_moves_bound() {
    // Parts of the proof of MAX_MOVES = 16 pieces x 16 destinations.
    let r = MartianRules::default();
    for s in 0..32u8 {
        for (letter, bound) in [('Q', 16), ('D', 8), ('P', 4)] {
            let mut cells = ['.'; 32];
            cells[s as usize] = letter;
            let side = if s < 16 { "S" } else { "N" };
            // The other zone needs a piece, or the game is over: put one far away.
            let mut cells2 = cells;
            let far = if s < 16 { 31 } else { 0 };
            if far != s as usize {
                cells2[far] = 'P';
            }
            let text = format!("{} {side} 0 0 - - 0 0", compress(&cells2));
            let st = MartianChess::from_position(&text, &r).unwrap();
            let mut mv = Vec::new();
            st.legal_moves(&mut mv);
            let n = mv.iter().filter(|m| m.from == s).count();
            assert!(n <= bound, "{letter} on {s}: {n}");
        }
    }
    assert_eq!(MartianChess::MAX_MOVES, 256);
    // Random play never comes near it.
    let mut most = 0;
    let mut moves = Vec::new();
    for s in sample_states(100) {
        s.legal_moves(&mut moves);
        most = most.max(moves.len());
    }
    assert!(most <= MartianChess::MAX_MOVES, "{most}");
}

fn plane(out: &[f32], p: usize) -> &[f32] {
    &out[p * 32..(p + 1) * 32]
}

fn ones(out: &[f32], p: usize) -> Vec<usize> {
    plane(out, p).iter().enumerate().filter(|(_, &v)| v != 0.0).map(|(i, _)| i).collect()
}

#[test]
fn encode_south_to_move() {
    assert_eq!(MartianChess::INPUT_SHAPE, [11, 8, 4]);
    let r = MartianRules::default();
    let s = MartianChess::from_position("Q3/4/1D2/4/1P2/4/4/3Q S 4 7 c5b4 3 9 150", &r).unwrap();
    let mut out = vec![9.0f32; 11 * 32];
    s.encode(&mut out);
    assert_eq!(ones(&out, 0), vec![13]); // Pawn b4
    assert_eq!(ones(&out, 1), vec![21]); // Drone b6
    assert_eq!(ones(&out, 2), vec![3, 28]); // Queens d1, a8
    assert!(plane(&out, 3).iter().all(|&v| v == 4.0 / 18.0));
    assert!(plane(&out, 4).iter().all(|&v| v == 7.0 / 18.0));
    assert!(plane(&out, 5).iter().all(|&v| v == 1.0));
    assert!(plane(&out, 6).iter().all(|&v| v == 3.0 / 7.0));
    assert!(plane(&out, 7).iter().all(|&v| v == 1.0));
    assert!(plane(&out, 8).iter().all(|&v| v == 0.5));
    assert_eq!(ones(&out, 9), vec![13]); // b4 may not go back...
    assert_eq!(ones(&out, 10), vec![18]); // ...to c5
    assert_eq!(plane(&out, 9)[13], 1.0);
    // Policy: b4 -> a3 = 13 * 32 + 8 for South.
    assert_eq!(s.action_index(Move::new(13, 8)), 13 * 32 + 8);
}

#[test]
fn encode_north_to_move() {
    let r = MartianRules::default();
    // South just crossed c4 -> b5; North to move, 5 - 6.
    let s = MartianChess::from_position("P3/4/1D2/1P2/4/4/4/3Q N 5 6 c4b5 - 2 30", &r).unwrap();
    let mut out = vec![9.0f32; 11 * 32];
    s.encode(&mut out);
    assert_eq!(ones(&out, 0), vec![3, 14]); // a8 -> 3, b5 (17) -> 14
    assert_eq!(ones(&out, 1), vec![10]); // b6 (21) -> 10
    assert_eq!(ones(&out, 2), vec![28]); // d1 (3) -> 28
    assert!(plane(&out, 3).iter().all(|&v| v == 6.0 / 18.0)); // North's score
    assert!(plane(&out, 4).iter().all(|&v| v == 5.0 / 18.0));
    assert!(plane(&out, 5).iter().all(|&v| v == 0.0));
    assert!(plane(&out, 6).iter().all(|&v| v == 0.0));
    assert!(plane(&out, 7).iter().all(|&v| v == 2.0 / 7.0));
    assert!(plane(&out, 8).iter().all(|&v| v == 0.1));
    assert_eq!(ones(&out, 9), vec![14]); // b5 (17) -> 14
    assert_eq!(ones(&out, 10), vec![17]); // c4 (14) -> 17
                                          // Policy: b5 -> a4 (17 -> 12) is 14 * 32 + 19 in North's orientation.
    assert_eq!(s.action_index(Move::new(17, 12)), 14 * 32 + 19);
    assert_eq!(s.move_for_action(14 * 32 + 19), Some(Move::new(17, 12)));
    assert_eq!(s.move_for_action(14 * 32 + 17), None); // the banned b5c4
                                                       // The initial setup looks the same to both sides.
    let a = MartianChess::new_game(&r).unwrap();
    let b = MartianChess::new_game(&MartianRules { first_player: Side::North, ..r }).unwrap();
    let (mut ea, mut eb) = (vec![0.0f32; 352], vec![0.0f32; 352]);
    a.encode(&mut ea);
    b.encode(&mut eb);
    assert_eq!(ea, eb);
}

#[test]
fn state_is_small() {
    assert!(std::mem::size_of::<MartianChess>() <= 64, "{}", std::mem::size_of::<MartianChess>());
}
