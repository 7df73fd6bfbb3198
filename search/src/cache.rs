//! An evaluation cache (lc0's NN cache, KataGo's NN cache): wraps any
//! [`Evaluator`].
//!
//! The key is [`GameState::input_key`], which covers every input of the
//! network (placement and rights as in the Zobrist hash, and also the
//! counters and the repetition count that the input planes show), so a hit
//! returns exactly what the wrapped evaluator computed for the same input:
//! self-play with and without the cache plays the same games (for an
//! evaluator whose output for a position does not depend on the rest of its
//! batch). An entry is only used when its prior count matches the legal moves.
//!
//! Positions with the same key within one batch are evaluated once.
//!
//! Storage: the priors of all entries live in one flat buffer and the map holds
//! fixed-size entries (offset, length, value). Once the cache has been full
//! once, inserting allocates nothing: clearing keeps both allocations, and the
//! cache is also cleared when the prior buffer would otherwise have to grow.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use martian_rules::{GameState, Move};

use crate::evaluator::{EvalError, Evaluation, Evaluator};

/// A hasher that passes a `u64` key through: input keys are already uniformly
/// mixed, so hashing them again would only cost time.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not used by `u64` keys; a plain FNV-1a fold keeps it correct anyway.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = x;
    }
}

/// A hash map keyed by input keys ([`martian_rules::GameState::input_key`]),
/// hashed by [`KeyHasher`] (the key itself).
pub type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

/// One cached evaluation: its priors are `priors[start..start + len]` of the
/// cache's flat buffer, its per-player values (`Evaluation::values`, games of
/// more than two value players) the `nv` floats after them.
#[derive(Copy, Clone, Debug)]
struct Entry {
    start: usize,
    len: u32,
    nv: u32,
    value: f32,
    draw: f32,
    score: Option<f32>,
}

impl Entry {
    fn priors<'a>(&self, buf: &'a [f32]) -> &'a [f32] {
        &buf[self.start..self.start + self.len as usize]
    }

    fn values<'a>(&self, buf: &'a [f32]) -> &'a [f32] {
        let end = self.start + self.len as usize;
        &buf[end..end + self.nv as usize]
    }
}

/// The store of a cache of evaluations by [`GameState::input_key`]: the map
/// and the flat prior buffer, without a wrapped evaluator. The overlapped
/// self-play driver looks positions up before it encodes a batch and inserts
/// the decoded outputs when the batch is back; [`CachedEvaluator`] does both
/// around one evaluator call.
pub struct EvalCache {
    capacity: usize,
    map: KeyMap<Entry>,
    /// Priors of every entry, back to back.
    priors: Vec<f32>,
    /// Set when the cache was first cleared for being full; from then on the
    /// prior buffer does not grow.
    filled_once: bool,
    /// Times the cache was cleared for being full (or its prior buffer).
    clears: u64,
    hits: u64,
    lookups: u64,
}

impl EvalCache {
    /// A cache of at most `capacity` entries (0: every lookup misses and
    /// nothing is stored). When full, it is cleared (cheap, and recent
    /// positions refill it).
    pub fn new(capacity: usize) -> Self {
        EvalCache {
            capacity,
            map: KeyMap::with_capacity_and_hasher(capacity.min(1 << 20), Default::default()),
            priors: Vec::new(),
            filled_once: false,
            clears: 0,
            hits: 0,
            lookups: 0,
        }
    }

    /// Largest number of entries (0 = off).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// `(hits, lookups)` since creation.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits, self.lookups)
    }

    /// Number of entries now.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// How often [`EvalCache::insert`] has cleared the cache to make room
    /// (a caller that looked positions up before a series of inserts can
    /// tell whether entries it found may be gone).
    pub fn clears(&self) -> u64 {
        self.clears
    }

    /// True when the cache holds no entry.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Drops every entry (e.g. after the network changed).
    pub fn clear(&mut self) {
        self.map.clear();
        self.priors.clear();
    }

    /// Looks up `key` for a position with `moves` legal moves (counted as a
    /// lookup); on a hit copies the entry into `out`, reusing its allocation,
    /// counts the hit and returns true. An entry whose prior count differs
    /// from `moves` is not used.
    pub fn lookup(&mut self, key: u64, moves: usize, out: &mut Evaluation) -> bool {
        self.lookups += 1;
        match self.map.get(&key) {
            Some(e) if e.len as usize == moves => {
                self.hits += 1;
                copy_into(out, e.priors(&self.priors), e.value, e.draw, e.values(&self.priors), e.score);
                true
            }
            _ => false,
        }
    }

    /// The entry for `key` if it has `moves` priors: `(priors, value, draw,
    /// values, score)` (`values` empty for a two-player evaluation, `score`
    /// `None` without a score head: [`Evaluation::score`]). Read-only
    /// (several threads may look up at once); counts nothing, see
    /// [`EvalCache::count`].
    #[allow(clippy::type_complexity)]
    pub fn peek(&self, key: u64, moves: usize) -> Option<(&[f32], f32, f32, &[f32], Option<f32>)> {
        match self.map.get(&key) {
            Some(e) if e.len as usize == moves => {
                Some((e.priors(&self.priors), e.value, e.draw, e.values(&self.priors), e.score))
            }
            _ => None,
        }
    }

    /// Adds `lookups` look-ups of which `hits` hit to the counters (for
    /// look-ups made with [`EvalCache::peek`]).
    pub fn count(&mut self, lookups: u64, hits: u64) {
        self.lookups += lookups;
        self.hits += hits;
    }

    /// Counts a hit without a lookup of the map: a position whose key an
    /// earlier position of the same batch has (evaluated once for both).
    pub fn count_batch_hit(&mut self) {
        self.hits += 1;
    }

    /// Stores `eval` under `key`, first clearing the cache when it is full
    /// (or, once it has been full, when the prior buffer has no room left).
    pub fn insert(&mut self, key: u64, eval: &Evaluation) {
        let n = eval.priors.len();
        let nv = eval.values.len();
        self.make_room(1, n + nv);
        let start = self.priors.len();
        self.priors.extend_from_slice(&eval.priors);
        self.priors.extend_from_slice(&eval.values);
        self.map.insert(
            key,
            Entry { start, len: n as u32, nv: nv as u32, value: eval.value, draw: eval.draw, score: eval.score },
        );
    }

    /// Clears the cache when it is full; from then on also when the prior
    /// buffer has no room for `priors` more values.
    fn make_room(&mut self, entries: usize, priors: usize) {
        if self.map.len() + entries > self.capacity {
            self.clear();
            self.filled_once = true;
            self.clears += 1;
        } else if self.filled_once && self.priors.len() + priors > self.priors.capacity() {
            self.clear();
            self.clears += 1;
        }
    }
}

/// Cache of evaluations by [`GameState::input_key`], in front of an evaluator.
pub struct CachedEvaluator<E> {
    inner: E,
    cache: EvalCache,
    /// Keys of this call's positions.
    keys: Vec<u64>,
    /// Positions of this call sent to the inner evaluator.
    miss_idx: Vec<usize>,
    /// `(position, index into miss_idx)` for positions whose key an earlier
    /// miss of the same call has.
    dup: Vec<(usize, usize)>,
    /// Key -> index into `miss_idx`, for this call.
    batch_keys: KeyMap<usize>,
    miss_out: Vec<Evaluation>,
}

impl<E> CachedEvaluator<E> {
    /// Wraps `inner` with a cache of at most `capacity` entries (0 disables it).
    /// When full, the cache is cleared (cheap, and recent positions refill it).
    pub fn new(inner: E, capacity: usize) -> Self {
        CachedEvaluator {
            inner,
            cache: EvalCache::new(capacity),
            keys: Vec::new(),
            miss_idx: Vec::new(),
            dup: Vec::new(),
            batch_keys: KeyMap::default(),
            miss_out: Vec::new(),
        }
    }

    /// `(hits, lookups)` since creation. A position whose key an earlier
    /// position of the same batch has counts as a hit.
    pub fn stats(&self) -> (u64, u64) {
        self.cache.stats()
    }

    /// Number of entries now.
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// True when the cache holds no entry.
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }

    /// The wrapped evaluator.
    pub fn inner_mut(&mut self) -> &mut E {
        &mut self.inner
    }

    /// Drops every entry (e.g. after the network changed).
    pub fn clear(&mut self) {
        self.cache.clear();
    }
}

/// Copies an evaluation into `out`, reusing its allocation.
fn copy_into(out: &mut Evaluation, priors: &[f32], value: f32, draw: f32, values: &[f32], score: Option<f32>) {
    out.priors.clear();
    out.priors.extend_from_slice(priors);
    out.value = value;
    out.draw = draw;
    out.values.clear();
    out.values.extend_from_slice(values);
    out.score = score;
}

impl<G: GameState, E: Evaluator<G>> Evaluator<G> for CachedEvaluator<E> {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        if self.cache.capacity() == 0 {
            return self.inner.evaluate(positions, moves, out);
        }
        out.resize_with(positions.len(), Evaluation::default);
        self.keys.clear();
        self.miss_idx.clear();
        self.dup.clear();
        self.batch_keys.clear();
        for (i, (p, m)) in positions.iter().zip(moves).enumerate() {
            let key = p.input_key();
            self.keys.push(key);
            if self.cache.lookup(key, m.len(), &mut out[i]) {
                continue;
            }
            match self.batch_keys.get(&key) {
                Some(&k) if moves[self.miss_idx[k]].len() == m.len() => {
                    self.cache.count_batch_hit();
                    self.dup.push((i, k));
                }
                _ => {
                    self.batch_keys.insert(key, self.miss_idx.len());
                    self.miss_idx.push(i);
                }
            }
        }
        if self.miss_idx.is_empty() {
            return Ok(());
        }
        if self.miss_idx.len() == positions.len() {
            self.inner.evaluate(positions, moves, &mut self.miss_out)?;
        } else {
            let miss_pos: Vec<&G> = self.miss_idx.iter().map(|&i| positions[i]).collect();
            let miss_moves: Vec<&[Move]> = self.miss_idx.iter().map(|&i| moves[i]).collect();
            self.inner.evaluate(&miss_pos, &miss_moves, &mut self.miss_out)?;
        }
        if self.miss_out.len() != self.miss_idx.len() {
            return Err(EvalError(format!(
                "the cached evaluator got {} evaluations for {} positions",
                self.miss_out.len(),
                self.miss_idx.len()
            )));
        }
        for k in 0..self.miss_idx.len() {
            let i = self.miss_idx[k];
            let e = &self.miss_out[k];
            copy_into(&mut out[i], &e.priors, e.value, e.draw, &e.values, e.score);
            self.cache.insert(self.keys[i], &self.miss_out[k]);
        }
        for &(i, k) in &self.dup {
            let e = &self.miss_out[k];
            copy_into(&mut out[i], &e.priors, e.value, e.draw, &e.values, e.score);
        }
        Ok(())
    }

    fn max_batch(&self) -> usize {
        self.inner.max_batch()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use martian_rules::martian4::{Martian4Rules, MartianChess4};

    /// Gives each position per-player values from its ply and counts its calls.
    struct Vector(u32);

    impl Evaluator<MartianChess4> for Vector {
        fn evaluate(
            &mut self,
            positions: &[&MartianChess4],
            moves: &[&[Move]],
            out: &mut Vec<Evaluation>,
        ) -> Result<(), EvalError> {
            self.0 += 1;
            out.clear();
            for (p, m) in positions.iter().zip(moves) {
                let v = p.ply() as f32 / 10.0;
                out.push(Evaluation {
                    priors: vec![1.0 / m.len() as f32; m.len()],
                    value: v,
                    draw: 0.0,
                    values: vec![v, -v, 0.0, 0.0],
                    score: None,
                });
            }
            Ok(())
        }
    }

    /// A cached free-for-all evaluation returns its per-player values, from
    /// the inner evaluator and from the cache alike.
    #[test]
    fn per_player_values_survive_the_cache() {
        let rules = Martian4Rules { teams: false, ..Martian4Rules::default() };
        let mut s = MartianChess4::new_game(&rules).unwrap();
        let mut moves = Vec::new();
        s.legal_moves(&mut moves);
        s.play_unchecked(moves[0]);
        let mut m1 = Vec::new();
        s.legal_moves(&mut m1);
        let mut c = CachedEvaluator::new(Vector(0), 16);
        let mut out = Vec::new();
        c.evaluate(&[&s, &s], &[&m1, &m1], &mut out).unwrap();
        assert_eq!(out[0].values, vec![0.1, -0.1, 0.0, 0.0]);
        assert_eq!(out[1].values, out[0].values, "a duplicate of the batch");
        let mut again = Vec::new();
        c.evaluate(&[&s], &[&m1], &mut again).unwrap();
        assert_eq!(c.inner_mut().0, 1, "the second call is a cache hit");
        assert_eq!(again[0], out[0]);
    }
}
