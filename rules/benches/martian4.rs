//! Four-player Martian Chess speed: perft leaves/s from the initial position
//! (bulk-counted last ply, one thread) and random playout plies/s. Run with
//! `cargo bench -p martian-rules --bench martian4`.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use martian_rules::martian4::{Martian4Rules, MartianChess4};
use martian_rules::{perft, GameState, Move};

fn bench_perft(c: &mut Criterion) {
    let start = MartianChess4::new_game(&Martian4Rules::default()).unwrap();
    let mut group = c.benchmark_group("martian4_perft");
    group.sample_size(10);
    for depth in [5u32, 6, 7] {
        let leaves = perft(&start, depth);
        group.throughput(Throughput::Elements(leaves));
        group.bench_with_input(BenchmarkId::from_parameter(depth), &depth, |b, &d| {
            b.iter(|| perft(black_box(&start), d))
        });
    }
    group.finish();
}

/// Xorshift step: a cheap generator so that the benchmark measures the rules.
#[inline]
fn next(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Plays `games` uniform random games to the end; returns the plies played.
fn playouts(start: &MartianChess4, games: u32, seed: &mut u64, moves: &mut Vec<Move>) -> u64 {
    let mut plies = 0;
    for _ in 0..games {
        let mut s = *start;
        loop {
            s.legal_moves(moves);
            if moves.is_empty() {
                break;
            }
            let i = (next(seed) % moves.len() as u64) as usize;
            s.play_unchecked(moves[i]);
            plies += 1;
        }
    }
    plies
}

fn bench_playouts(c: &mut Criterion) {
    let start = MartianChess4::new_game(&Martian4Rules::default()).unwrap();
    let mut moves = Vec::with_capacity(MartianChess4::MAX_MOVES);
    const GAMES: u32 = 1000;
    // Plies per batch with the fixed seed (the benchmark replays the same games).
    let plies = playouts(&start, GAMES, &mut 0x9E37_79B9_7F4A_7C15, &mut moves);
    let mut group = c.benchmark_group("martian4_playouts");
    group.throughput(Throughput::Elements(plies));
    group.bench_function(format!("{GAMES}_games_{plies}_plies"), |b| {
        b.iter(|| playouts(black_box(&start), GAMES, &mut 0x9E37_79B9_7F4A_7C15, &mut moves))
    });
    group.finish();
}

criterion_group!(benches, bench_perft, bench_playouts);
criterion_main!(benches);
