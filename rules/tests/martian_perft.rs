//! Perft of Martian Chess (spec §16): the fast bitboard generator against the
//! independent mailbox oracle, and the pinned numbers of
//! `tests/data/martian-chess.perft`.

#[path = "common/martian_slow.rs"]
mod martian_slow;

use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{divide, perft, GameState};
use martian_slow::{index, Slow, SlowRules};

const DATA: &str = include_str!("data/martian-chess.perft");

/// `(position, depth, count)` entries of the data file.
fn entries() -> Vec<(String, u32, u64)> {
    let mut out = Vec::new();
    let mut position = String::new();
    for line in DATA.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(p) = line.strip_prefix("position ") {
            position = p.trim().to_string();
        } else if let Some(rest) = line.strip_prefix("perft ") {
            let mut it = rest.split_whitespace();
            let d: u32 = it.next().and_then(|x| x.parse().ok()).expect("depth");
            let n: u64 = it.next().and_then(|x| x.parse().ok()).expect("count");
            out.push((position.clone(), d, n));
        } else {
            panic!("bad line in perft data: {line}");
        }
    }
    out
}

#[test]
fn pinned_perft_numbers() {
    let e = entries();
    assert!(e.len() >= 6);
    for (position, depth, count) in e {
        let s = MartianChess::from_position(&position, &MartianRules::default()).unwrap();
        assert_eq!(perft(&s, depth), count, "perft({depth}) of {position}");
    }
}

#[test]
fn oracle_agrees_on_small_counts() {
    // The oracle cross-check of the numbers in the data file: every depth up to 4
    // and any entry with at most 5 000 000 leaves.
    for (position, depth, count) in entries() {
        if depth > 4 && count > 5_000_000 {
            continue;
        }
        let slow = Slow::parse(&position, SlowRules::default());
        assert_eq!(slow.perft(depth), count, "oracle perft({depth}) of {position}");
    }
}

#[test]
fn divide_matches_oracle() {
    let s = MartianChess::new_game(&MartianRules::default()).unwrap();
    let slow = Slow::parse(&s.to_position(), SlowRules::default());
    let d = divide(&s, 3);
    assert_eq!(d.len(), 10);
    for (mv, n) in d {
        let m = slow.moves().into_iter().find(|&(a, b)| index(a) == mv.from && index(b) == mv.to).unwrap();
        let mut c = slow.clone();
        c.play(m);
        assert_eq!(c.perft(2), n, "{}", s.move_to_string(mv));
    }
}

#[test]
#[ignore = "prints perft tables for the data file; run with --ignored --nocapture"]
fn print_perft() {
    for (position, _, _) in entries() {
        let s = MartianChess::from_position(&position, &MartianRules::default()).unwrap();
        for d in 1..=std::env::var("PERFT_MAX").ok().and_then(|v| v.parse().ok()).unwrap_or(6) {
            let t = std::time::Instant::now();
            let n = perft(&s, d);
            println!("{position} perft {d} {n} ({:?})", t.elapsed());
        }
    }
}
