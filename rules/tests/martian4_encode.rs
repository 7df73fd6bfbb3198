//! Input planes and policy indices of the four-player game (spec §14.9):
//! planes of known positions for every mover and both turn orders, agreement
//! of policy indices with the planes (the origin holds a piece of the mover in
//! the canonical a1-d4), and `input_key` covering every input of `encode`.

use std::collections::HashMap;

use martian_rules::martian4::{ClockMode, Martian4Rules, MartianChess4, Seat, TurnOrder, CALL_CLOCK};
use martian_rules::{GameState, Move};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const CELLS: usize = 64;

fn planes(s: &MartianChess4) -> Vec<f32> {
    let [c, h, w] = MartianChess4::INPUT_SHAPE;
    assert_eq!([c, h, w], [19, 8, 8]);
    let mut out = vec![f32::NAN; c * h * w];
    s.encode(&mut out);
    out
}

/// Squares (canonical indices) where plane `p` is 1.
fn ones(out: &[f32], p: usize) -> Vec<usize> {
    out[p * CELLS..(p + 1) * CELLS].iter().enumerate().filter(|&(_, &v)| v == 1.0).map(|(i, _)| i).collect()
}

fn constant(out: &[f32], p: usize) -> f32 {
    let plane = &out[p * CELLS..(p + 1) * CELLS];
    assert!(plane.iter().all(|&v| v == plane[0]), "plane {p} is not constant");
    plane[0]
}

fn sqs(names: &str) -> Vec<usize> {
    let mut v: Vec<usize> = names
        .split_whitespace()
        .map(|n| {
            let b = n.as_bytes();
            (b[0] - b'a') as usize + 8 * (b[1] - b'1') as usize
        })
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn initial_planes_for_every_seat_and_order() {
    for turn_order in [TurnOrder::Clockwise, TurnOrder::Counterclockwise] {
        let mut first = None;
        for seat in Seat::ALL {
            let rules = Martian4Rules { first_seat: seat, turn_order, ..Martian4Rules::default() };
            let out = planes(&MartianChess4::new_game(&rules).unwrap());
            // The mover's pieces are SW's setup squares in canonical orientation.
            assert_eq!(ones(&out, 0), sqs("b3 c2 c3"), "{seat}");
            assert_eq!(ones(&out, 1), sqs("a3 b2 c1"));
            assert_eq!(ones(&out, 2), sqs("a1 a2 b1"));
            // The next seat's quadrant: a5-d8 clockwise, e1-h4 counterclockwise.
            let (next_pawns, prev_pawns) = match turn_order {
                TurnOrder::Clockwise => ("b6 c6 c7", "f2 f3 g3"),
                TurnOrder::Counterclockwise => ("f2 f3 g3", "b6 c6 c7"),
            };
            assert_eq!(ones(&out, 3), sqs(next_pawns), "{seat} {turn_order:?}");
            assert_eq!(ones(&out, 6), sqs("f6 f7 g6"), "the seat after next: the partner's corner h8");
            assert_eq!(ones(&out, 9), sqs(prev_pawns));
            assert_eq!(ones(&out, 11), sqs(if turn_order == TurnOrder::Clockwise { "g1 h1 h2" } else { "a7 a8 b8" }));
            for p in 12..=18 {
                assert_eq!(constant(&out, p), 0.0, "plane {p}");
            }
            // The setup is unchanged by quarter turns: the same planes for all seats.
            match &first {
                None => first = Some(out),
                Some(f) => assert_eq!(f, &out, "{seat}"),
            }
        }
    }
}

#[test]
fn scores_and_counters_planes() {
    // MC4-3 scores: SW 2, NW 3, NE 1, SE 0.
    let text = "Q6Q/8/8/2P1D3/3P4/8/8/D6P NE 2 3 1 0 9 20 150";
    let cw = MartianChess4::from_position(text, &Martian4Rules::default()).unwrap();
    let out = planes(&cw);
    // Mover NE, then SE, SW, NW.
    let scores: Vec<f32> = (12..16).map(|p| constant(&out, p) * 36.0).collect();
    assert_eq!(scores, [1.0, 0.0, 2.0, 3.0]);
    assert!((constant(&out, 16) - 9.0 / 14.0).abs() < 1e-6);
    assert_eq!(constant(&out, 17), 1.0);
    assert_eq!(constant(&out, 18), 0.5);
    // Mover NE's Drone e5 is canonical d4 (half turn); the Pawn c5 (NW) is f4.
    assert_eq!(ones(&out, 1), sqs("d4"));
    assert_eq!(ones(&out, 9 + 1), Vec::<usize>::new(), "previous seat NW has no Drone");
    assert_eq!(ones(&out, 9), sqs("f4"), "previous seat NW's Pawn c5");
    let ccw = Martian4Rules {
        turn_order: TurnOrder::Counterclockwise,
        clock_plies: 10,
        max_plies: 100,
        ..Martian4Rules::default()
    };
    let out = planes(&MartianChess4::from_position(text, &ccw).unwrap());
    // Mover NE, then NW, SW, SE.
    let scores: Vec<f32> = (12..16).map(|p| constant(&out, p) * 36.0).collect();
    assert_eq!(scores, [1.0, 3.0, 2.0, 0.0]);
    assert!((constant(&out, 16) - 0.9).abs() < 1e-6);
    assert_eq!(constant(&out, 17), 1.0);
    assert_eq!(constant(&out, 18), 1.0);
    assert_eq!(ones(&out, 3), sqs("f4"), "next seat NW's Pawn c5");
    // Quiet below clock_plies, clock not called.
    let s =
        MartianChess4::from_position("Q6Q/8/8/2P1D3/3P4/8/8/D6P SW 2 3 1 0 - 7 0", &Martian4Rules::default()).unwrap();
    let out = planes(&s);
    assert_eq!((constant(&out, 16), constant(&out, 17)), (0.0, 0.5));
    // max_plies = 0: the ply plane is 1.
    let zero = Martian4Rules { max_plies: 0, ..Martian4Rules::default() };
    assert_eq!(constant(&planes(&MartianChess4::new_game(&zero).unwrap()), 18), 1.0);
}

#[test]
fn actions_and_planes_agree() {
    // The origin of every legal move's policy index is a canonical square of
    // a1-d4 holding a piece in the mover's planes 0-2.
    let mut rng = StdRng::seed_from_u64(5);
    let mut moves: Vec<Move> = Vec::new();
    let mut checked = 0;
    for (g, clock) in [ClockMode::Auto, ClockMode::Manual, ClockMode::Off].into_iter().cycle().take(24).enumerate() {
        let rules = Martian4Rules {
            first_seat: Seat::ALL[g % 4],
            turn_order: if g % 2 == 0 { TurnOrder::Clockwise } else { TurnOrder::Counterclockwise },
            clock,
            ..Martian4Rules::default()
        };
        let mut s = MartianChess4::new_game(&rules).unwrap();
        while s.outcome().is_none() {
            let out = planes(&s);
            s.legal_moves(&mut moves);
            for &m in &moves {
                let a = s.action_index(m);
                assert_eq!(a >= 4096, m.to & CALL_CLOCK != 0);
                let from = a % 4096 / 64;
                assert!(from % 8 < 4 && from / 8 < 4, "origin {from} outside a1-d4");
                assert!((0..3).any(|p| out[p * CELLS + from] == 1.0), "{}: {}", s.to_position(), s.move_to_string(m));
                checked += 1;
            }
            s.play_unchecked(moves[rng.gen_range(0..moves.len())]);
        }
    }
    assert!(checked > 10_000, "{checked}");
}

#[test]
fn input_key_covers_the_planes() {
    // Random games in which the mover often plays a piece back and forth, so
    // that positions repeat with different counters; equal keys must have
    // equal planes, and equal hashes with different planes must occur.
    let mut rng = StdRng::seed_from_u64(9);
    let mut by_key: HashMap<u64, MartianChess4> = HashMap::new();
    let mut by_hash: HashMap<u64, MartianChess4> = HashMap::new();
    let (mut states, mut key_matches, mut hash_only) = (0, 0, 0);
    let mut moves = Vec::new();
    for g in 0..240 {
        // Three rule sets; games of one set share keys on transpositions.
        let rules = match g % 3 {
            0 => Martian4Rules::default(),
            1 => Martian4Rules { clock_plies: 6, max_plies: 80, ..Martian4Rules::default() },
            _ => Martian4Rules { turn_order: TurnOrder::Counterclockwise, ..Martian4Rules::default() },
        };
        let mut s = MartianChess4::new_game(&rules).unwrap();
        let mut history: Vec<Move> = Vec::new();
        while s.outcome().is_none() {
            states += 1;
            let key = s.input_key();
            match by_key.get(&key) {
                Some(prev) => {
                    assert_eq!(planes(prev), planes(&s), "{} / {}", prev.to_position(), s.to_position());
                    key_matches += 1;
                }
                None => {
                    by_key.insert(key, s);
                }
            }
            match by_hash.get(&s.hash()) {
                Some(prev) => hash_only += usize::from(planes(prev) != planes(&s)),
                None => {
                    by_hash.insert(s.hash(), s);
                }
            }
            s.legal_moves(&mut moves);
            // Play the move of four plies ago backwards when legal: the same
            // seat undoes its own move (no no-undo rule with four players).
            let back = history.len().checked_sub(4).map(|i| Move::new(history[i].to, history[i].from));
            let mv = match back {
                Some(b) if rng.gen_bool(0.6) && moves.contains(&b) => b,
                _ => moves[rng.gen_range(0..moves.len())],
            };
            history.push(mv);
            s.play_unchecked(mv);
        }
    }
    println!("{states} states, {key_matches} key matches, {hash_only} hash-only matches");
    assert!(key_matches > 50 && hash_only > 50, "{key_matches} key matches, {hash_only} hash-only matches");
}
