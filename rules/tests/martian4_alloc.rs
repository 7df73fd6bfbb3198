//! The four-player game's move generation, counting, play and immediate-win
//! test allocate nothing once the move list has capacity `MAX_MOVES` (the
//! search's threat check calls `has_winning_move` for every child of every
//! expansion). Heap allocations are counted per thread by a wrapping global
//! allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use martian_rules::martian4::{ClockMode, Martian4Rules, MartianChess4};
use martian_rules::GameState;
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

#[test]
fn rules_core_does_not_allocate() {
    for (rules, games) in [
        (Martian4Rules::default(), 120),
        (Martian4Rules { teams: false, clock_plies: 3, ..Martian4Rules::default() }, 120),
        (Martian4Rules { clock: ClockMode::Manual, clock_plies: 5, ..Martian4Rules::default() }, 60),
    ] {
        let start = MartianChess4::new_game(&rules).unwrap();
        let mut moves = Vec::with_capacity(MartianChess4::MAX_MOVES);
        let mut rng = StdRng::seed_from_u64(3);
        let (mut n, mut wins) = (0u64, 0u64);
        let before = allocations();
        for _ in 0..games {
            let mut s = start;
            while s.outcome().is_none() {
                wins += u64::from(s.has_winning_move());
                n += 1;
                s.legal_moves(&mut moves);
                assert_eq!(s.count_legal_moves(), moves.len());
                s.play_unchecked(moves[rng.gen_range(0..moves.len())]);
            }
        }
        let allocated = allocations() - before;
        assert!(n > 500 && wins > 0, "{wins} wins in {n} positions with {rules:?}");
        assert_eq!(allocated, 0, "{allocated} allocations in {n} positions with {rules:?}");
    }
}
