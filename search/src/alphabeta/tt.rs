//! Transposition table: one direct-mapped array of 16-byte entries, sized in
//! MiB (a power-of-two number of entries), keyed by the position's Zobrist key
//! (Zobrist 1970; the layout follows the usual chess-engine practice, see the
//! Chess Programming Wiki "Transposition Table").

use martian_rules::Move;

/// What a stored score means relative to the true value (alpha-beta bounds).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The true value is exactly the score.
    Exact,
    /// The true value is at least the score (a beta cutoff).
    Lower,
    /// The true value is at most the score (no move raised alpha).
    Upper,
}

/// One stored search result.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TtEntry {
    /// Full key, to tell colliding positions apart.
    pub key: u64,
    /// Score, with mate scores relative to this node (see `score_to_tt`).
    pub score: i32,
    /// Best or refuting move, if any.
    pub mv: Option<Move>,
    /// Remaining depth of the search that stored it.
    pub depth: u8,
    /// Bound type of `score`.
    pub bound: Bound,
    /// Search generation (to prefer replacing old entries).
    pub generation: u8,
}

#[derive(Copy, Clone, Default)]
#[repr(C)]
struct Slot {
    key: u64,
    score: i32,
    from: u8,
    to: u8,
    depth: u8,
    /// bit 0-1 bound (0 = empty), bits 2-7 generation.
    meta: u8,
}

const NO_SQ: u8 = 0xFF;

/// A transposition table of fixed size (allocated once).
pub struct TranspositionTable {
    slots: Vec<Slot>,
    mask: usize,
    generation: u8,
}

impl TranspositionTable {
    /// A table of at most `mib` MiB (a power-of-two entry count, 16 bytes each);
    /// `0` gives an empty, disabled table.
    ///
    /// # Panics
    /// If the memory cannot be allocated; sizes that come from a user go
    /// through [`TranspositionTable::try_new`].
    pub fn new(mib: usize) -> Self {
        Self::try_new(mib).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`TranspositionTable::new`], or an error naming the size when the
    /// machine cannot allocate it (the allocator refuses it, e.g. more than
    /// the memory and swap under Linux's default overcommit heuristic).
    ///
    /// # Errors
    /// The message says how many MiB were asked for.
    pub fn try_new(mib: usize) -> Result<Self, String> {
        let bytes = mib.saturating_mul(1 << 20);
        let n = bytes / std::mem::size_of::<Slot>();
        let n = if n == 0 { 0 } else { 1usize << (usize::BITS - 1 - n.leading_zeros()) };
        let mut slots = Vec::new();
        slots.try_reserve_exact(n).map_err(|_| {
            format!("a transposition table of {mib} MiB could not be allocated on this machine; give a smaller one")
        })?;
        slots.resize(n, Slot::default());
        Ok(TranspositionTable { slots, mask: n.saturating_sub(1), generation: 0 })
    }

    /// Whether the table holds any slot.
    pub fn enabled(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// True when the table has no slots (disabled).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = Slot::default());
        self.generation = 0;
    }

    /// Starts a new search (entries of older searches get replaced first).
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) & 0x3F;
    }

    /// The entry stored for `key`, if any.
    #[inline]
    pub fn probe(&self, key: u64) -> Option<TtEntry> {
        let s = self.slots.get(key as usize & self.mask)?;
        if s.meta & 3 == 0 || s.key != key {
            return None;
        }
        let bound = match s.meta & 3 {
            1 => Bound::Exact,
            2 => Bound::Lower,
            _ => Bound::Upper,
        };
        let mv = (s.from != NO_SQ).then(|| Move::new(s.from, s.to));
        Some(TtEntry { key, score: s.score, mv, depth: s.depth, bound, generation: s.meta >> 2 })
    }

    /// Stores a result; replaces the slot unless it holds a deeper result of
    /// the current search for another position. A missing move keeps the old
    /// move of the same position.
    #[inline]
    pub fn store(&mut self, key: u64, score: i32, mv: Option<Move>, depth: u32, bound: Bound) {
        let Some(s) = self.slots.get_mut(key as usize & self.mask) else {
            return;
        };
        let same = s.key == key && s.meta & 3 != 0;
        let old_gen = s.meta >> 2;
        let depth = depth.min(255) as u8;
        if !same && s.meta & 3 != 0 && old_gen == self.generation && s.depth > depth {
            return;
        }
        let (from, to) = match (mv, same) {
            (Some(m), _) => (m.from, m.to),
            (None, true) => (s.from, s.to),
            (None, false) => (NO_SQ, NO_SQ),
        };
        let b = match bound {
            Bound::Exact => 1,
            Bound::Lower => 2,
            Bound::Upper => 3,
        };
        *s = Slot { key, score, from, to, depth, meta: b | (self.generation << 2) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_and_probe() {
        let mut t = TranspositionTable::new(1);
        assert_eq!(t.len(), 65536);
        t.store(12345, 77, Some(Move::new(1, 2)), 3, Bound::Lower);
        let e = t.probe(12345).unwrap();
        assert_eq!((e.score, e.mv, e.depth, e.bound), (77, Some(Move::new(1, 2)), 3, Bound::Lower));
        assert!(t.probe(12346).is_none());
        assert!(!TranspositionTable::new(0).enabled());
        // A size no machine has is an error that names it, not an abort.
        let e = TranspositionTable::try_new(usize::MAX >> 20).err().expect("refused");
        assert!(e.contains(&format!("{} MiB", usize::MAX >> 20)), "{e}");
    }
}
