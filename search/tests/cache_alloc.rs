//! The evaluation cache allocates nothing per insert once it has been full
//! once (heap allocations counted per thread by a wrapping global allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Move};
use martian_search::{CachedEvaluator, EvalError, Evaluation, Evaluator};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc`/`realloc` above, i.e. from `System`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> u64 {
    ALLOCS.with(Cell::get)
}

/// Uniform priors written into buffers reserved for `MAX_MOVES` priors, so
/// that the wrapped evaluator itself never allocates after its first call.
struct Prereserved;

impl<G: GameState> Evaluator<G> for Prereserved {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        out.resize_with(positions.len(), || Evaluation {
            priors: Vec::with_capacity(G::MAX_MOVES),
            value: 0.0,
            draw: 0.0,
            values: Vec::new(),
            score: None,
        });
        for (e, m) in out.iter_mut().zip(moves) {
            e.priors.clear();
            e.priors.extend(std::iter::repeat_n(1.0 / m.len() as f32, m.len()));
            e.value = 0.0;
        }
        Ok(())
    }
}

#[test]
fn inserts_do_not_allocate_once_the_cache_was_full() {
    let mut cache = CachedEvaluator::new(Prereserved, 256);
    let mut rng = StdRng::seed_from_u64(1);
    let mut out = vec![Evaluation {
        priors: Vec::with_capacity(MartianChess::MAX_MOVES),
        value: 0.0,
        draw: 0.0,
        values: Vec::new(),
        score: None,
    }];
    let mut moves = Vec::with_capacity(MartianChess::MAX_MOVES);
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let (mut misses, mut cleared, mut allocated) = (0u64, 0, 0);
    for game in 0..300 {
        let mut s = start;
        while s.outcome().is_none() {
            s.legal_moves(&mut moves);
            let (len, (hits, _)) = (cache.len(), cache.stats());
            let before = allocations();
            cache.evaluate(&[&s], &[&moves[..]], &mut out).unwrap();
            let spent = allocations() - before;
            assert_eq!(out[0].priors.len(), moves.len());
            if cache.len() < len {
                cleared += 1;
            }
            // After a few fills, count what the misses (inserts) allocate.
            if game >= 100 && cache.stats().0 == hits {
                misses += 1;
                allocated += spent;
            }
            s.play_unchecked(moves[rng.gen_range(0..moves.len())]);
        }
    }
    assert!(cleared > 10 && misses > 1000, "the test must fill the cache many times ({cleared}, {misses})");
    assert_eq!(allocated, 0, "{misses} inserts allocated {allocated} times");
}
