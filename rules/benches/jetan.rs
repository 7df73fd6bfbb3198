//! Jetan benchmarks: perft from the initial position (leaves/s) and random
//! playouts (plies/s). Run with `cargo bench -p martian-rules --bench jetan`.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::{perft, GameState, Move};

fn bench_perft(c: &mut Criterion) {
    let g = Jetan::new_game(&JetanRules::default()).unwrap();
    let mut group = c.benchmark_group("jetan_perft");
    for depth in [3u32, 4] {
        let leaves = perft(&g, depth);
        group.throughput(Throughput::Elements(leaves));
        if depth == 4 {
            group.sample_size(10);
        }
        group.bench_with_input(BenchmarkId::from_parameter(depth), &depth, |b, &d| b.iter(|| perft(black_box(&g), d)));
    }
    group.finish();
}

/// xorshift64*: a tiny deterministic generator so the bench needs no RNG crate.
struct Xs(u64);
impl Xs {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn bench_playouts(c: &mut Criterion) {
    let start = Jetan::new_game(&JetanRules::default()).unwrap();
    // Count plies of a fixed batch of games for the throughput figure.
    let games = 50;
    let run = |seed: u64| -> u64 {
        let mut rng = Xs(seed | 1);
        let mut g = start.clone();
        let mut moves: Vec<Move> = Vec::with_capacity(Jetan::MAX_MOVES);
        let mut plies = 0;
        for _ in 0..games {
            g.clone_from(&start);
            loop {
                g.legal_moves(&mut moves);
                if moves.is_empty() {
                    break;
                }
                let m = moves[(rng.next() % moves.len() as u64) as usize];
                g.play_unchecked(m);
                plies += 1;
            }
        }
        plies
    };
    let plies = run(12345);
    let mut group = c.benchmark_group("jetan_playout");
    group.throughput(Throughput::Elements(plies));
    group.bench_function("random_50_games", |b| b.iter(|| run(black_box(12345))));
    group.finish();
}

criterion_group!(benches, bench_perft, bench_playouts);
criterion_main!(benches);
