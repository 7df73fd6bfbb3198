//! `GameState::has_winning_move` allocates nothing under the standard rules
//! (the search's threat check calls it for every child of every expansion).
//! Heap allocations are counted per thread by a wrapping global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
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

/// Calls `has_winning_move` on every position of `games` random games and
/// returns (positions, positions with a win, allocations during the calls).
fn count<G: GameState>(start: &G, games: usize) -> (u64, u64, u64) {
    let mut rng = StdRng::seed_from_u64(3);
    let mut moves = Vec::with_capacity(G::MAX_MOVES);
    let (mut n, mut wins, mut allocated) = (0, 0, 0);
    let mut s = start.clone();
    for _ in 0..games {
        s.clone_from(start);
        while s.outcome().is_none() {
            let before = allocations();
            let w = s.has_winning_move();
            allocated += allocations() - before;
            n += 1;
            wins += u64::from(w);
            s.legal_moves(&mut moves);
            s.play_unchecked(moves[rng.gen_range(0..moves.len())]);
        }
    }
    (n, wins, allocated)
}

#[test]
fn the_fast_tests_do_not_allocate() {
    let (n, wins, allocated) = count(&Jetan::new_game(&JetanRules::default()).unwrap(), 50);
    assert!(n > 500 && wins > 20, "Jetan: {wins} wins in {n} positions");
    assert_eq!(allocated, 0, "Jetan: {allocated} allocations in {n} calls");
    let (n, wins, allocated) = count(&MartianChess::new_game(&MartianRules::default()).unwrap(), 200);
    assert!(n > 3000 && wins > 20, "Martian Chess: {wins} wins in {n} positions");
    assert_eq!(allocated, 0, "Martian Chess: {allocated} allocations in {n} calls");
}
