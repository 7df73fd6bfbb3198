//! Perft (spec §15) of the fast generator, pinned in `tests/data/jetan.perft`,
//! and the fast generator compared with the slow oracle
//! (`tests/common/jetan_slow.rs`) on positions from seeded random play.

#[path = "common/jetan_slow.rs"]
mod jetan_slow;
#[path = "common/jetan_util.rs"]
mod jetan_util;

use std::collections::BTreeSet;

use jetan_slow::Slow;
use jetan_util::*;
use martian_rules::jetan::{Jetan, JetanRules, Thoat};
use martian_rules::{divide, perft, GameState};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const DATA: &str = include_str!("data/jetan.perft");

/// `(position, [(depth, count)])` lines of the data file.
fn data() -> Vec<(String, Vec<(u32, u64)>)> {
    DATA.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut parts = l.split(';');
            let fen = parts.next().unwrap().trim().to_string();
            let counts = parts
                .map(|p| {
                    let mut it = p.split_whitespace();
                    (it.next().unwrap().parse().unwrap(), it.next().unwrap().parse().unwrap())
                })
                .collect();
            (fen, counts)
        })
        .collect()
}

/// Fast perft equals the pinned numbers; the oracle agrees up to depth 3
/// (depth 2 for the heavier positions to keep the test quick).
#[test]
fn perft_pinned_and_oracle() {
    for (fen, counts) in data() {
        let g = load(&fen);
        let slow = Slow::parse(&fen);
        for &(d, n) in &counts {
            assert_eq!(perft(&g, d), n, "fast perft {fen} depth {d}");
            if d <= 3 {
                assert_eq!(slow.perft(d), n, "oracle perft {fen} depth {d}");
            }
        }
    }
}

/// Depth 4 from the initial position with the oracle (slow; run with `--ignored`
/// in release to re-derive the pinned number).
#[test]
#[ignore = "slow oracle perft (about 7 s in release); run with --ignored to re-derive depth 4"]
fn perft_initial_depth4_oracle() {
    let slow = Slow::parse(martian_rules::jetan::INITIAL_POSITION);
    let g = Jetan::new_game(&JetanRules::default()).unwrap();
    assert_eq!(slow.perft(4), perft(&g, 4));
}

#[test]
fn divide_sums_to_perft() {
    let g = Jetan::new_game(&JetanRules::default()).unwrap();
    let d = divide(&g, 2);
    assert_eq!(d.len(), 78);
    assert_eq!(d.iter().map(|x| x.1).sum::<u64>(), perft(&g, 2));
}

fn compare(g: &Jetan, slow_thoat_orth_first: bool) {
    let fen = g.to_position();
    let mut slow = Slow::parse(&fen);
    slow.thoat_orth_first = slow_thoat_orth_first;
    let fast: BTreeSet<(u8, u8)> = moves(g).iter().map(|m| (m.from, m.to)).collect();
    let expect = slow.moves();
    assert_eq!(fast, expect, "{fen}");
    assert_eq!(g.count_legal_moves(), expect.len(), "{fen}");
    // Escape classification agrees with the oracle's "not reachable by a normal path".
    for &(f, t) in &fast {
        if g.piece_at(f).map(|p| p.0) == Some(martian_rules::jetan::Piece::Princess) {
            let normal = slow.path_ends(f as usize).contains(&(t as usize));
            assert_eq!(g.is_escape(martian_rules::Move::new(f, t)), !normal, "{fen}");
        }
    }
}

/// Thousands of positions from seeded random play, some games biased against
/// captures so that they run deep.
#[test]
fn fast_generator_matches_oracle_on_random_play() {
    let mut rng = StdRng::seed_from_u64(0x004A_4554_414E);
    let mut positions = 0;
    for (rules, orth) in
        [(JetanRules::default(), false), (JetanRules { thoat: Thoat::OrthogonalFirst, ..JetanRules::default() }, true)]
    {
        let games = if orth { 10 } else { 50 };
        for game in 0..games {
            let mut g = Jetan::new_game(&rules).unwrap();
            let quiet_bias = game % 2 == 1;
            while g.outcome().is_none() {
                compare(&g, orth);
                positions += 1;
                let mv = moves(&g);
                let pick = if quiet_bias && rng.gen_bool(0.9) {
                    let quiet: Vec<_> = mv.iter().filter(|m| g.piece_at(m.to).is_none()).copied().collect();
                    if quiet.is_empty() {
                        mv[rng.gen_range(0..mv.len())]
                    } else {
                        quiet[rng.gen_range(0..quiet.len())]
                    }
                } else {
                    mv[rng.gen_range(0..mv.len())]
                };
                g.play_unchecked(pick);
            }
        }
    }
    eprintln!("{positions} positions compared with the oracle");
    assert!(positions > 3000, "{positions}");
}

/// Prints fast and oracle perft for the data-file positions (to re-derive the
/// file): `cargo test -p martian-rules --release --test jetan_perft -- --ignored --nocapture print_perft`.
#[test]
#[ignore = "prints perft tables for the data file; run with --ignored --nocapture"]
fn print_perft() {
    let max: u32 = std::env::var("JETAN_PERFT_DEPTH").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    let oracle_max: u32 = std::env::var("JETAN_ORACLE_DEPTH").ok().and_then(|s| s.parse().ok()).unwrap_or(3);
    for (fen, _) in data() {
        let g = load(&fen);
        let slow = Slow::parse(&fen);
        for d in 1..=max {
            let t = std::time::Instant::now();
            let n = perft(&g, d);
            let dt = t.elapsed();
            let o = if d <= oracle_max { slow.perft(d).to_string() } else { "-".into() };
            println!("{fen} ; depth {d} fast {n} ({dt:?}) oracle {o}");
        }
    }
}
