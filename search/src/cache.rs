//! An evaluation cache keyed by the Zobrist hash (lc0's NN cache, KataGo's NN
//! cache): wraps any [`Evaluator`].
//!
//! The key is [`GameState::hash`], which covers everything that decides the
//! legal moves; counters that only feed the network's scalar planes (ply,
//! quiet plies, countdown) are not part of it, so a hit may return the
//! evaluation of the same position reached with other counters, as lc0's cache
//! does. An entry is only used when its prior count matches the legal moves.

use std::collections::HashMap;

use martian_rules::{GameState, Move};

use crate::evaluator::{EvalError, Evaluation, Evaluator};

/// Cache of evaluations by position hash, in front of an evaluator.
pub struct CachedEvaluator<E> {
    inner: E,
    capacity: usize,
    map: HashMap<u64, Evaluation>,
    miss_idx: Vec<usize>,
    miss_out: Vec<Evaluation>,
    hits: u64,
    lookups: u64,
}

impl<E> CachedEvaluator<E> {
    /// Wraps `inner` with a cache of at most `capacity` entries (0 disables it).
    /// When full, the cache is cleared (cheap, and recent positions refill it).
    pub fn new(inner: E, capacity: usize) -> Self {
        CachedEvaluator {
            inner,
            capacity,
            map: HashMap::with_capacity(capacity.min(1 << 20)),
            miss_idx: Vec::new(),
            miss_out: Vec::new(),
            hits: 0,
            lookups: 0,
        }
    }

    /// `(hits, lookups)` since creation.
    pub fn stats(&self) -> (u64, u64) {
        (self.hits, self.lookups)
    }

    /// The wrapped evaluator.
    pub fn inner_mut(&mut self) -> &mut E {
        &mut self.inner
    }

    /// Drops every entry (e.g. after the network changed).
    pub fn clear(&mut self) {
        self.map.clear();
    }
}

impl<G: GameState, E: Evaluator<G>> Evaluator<G> for CachedEvaluator<E> {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        if self.capacity == 0 {
            return self.inner.evaluate(positions, moves, out);
        }
        out.resize_with(positions.len(), Evaluation::default);
        self.miss_idx.clear();
        for (i, (p, m)) in positions.iter().zip(moves).enumerate() {
            self.lookups += 1;
            match self.map.get(&p.hash()) {
                Some(e) if e.priors.len() == m.len() => {
                    self.hits += 1;
                    out[i].priors.clear();
                    out[i].priors.extend_from_slice(&e.priors);
                    out[i].value = e.value;
                }
                _ => self.miss_idx.push(i),
            }
        }
        if self.miss_idx.is_empty() {
            return Ok(());
        }
        let miss_pos: Vec<&G> = self.miss_idx.iter().map(|&i| positions[i]).collect();
        let miss_moves: Vec<&[Move]> = self.miss_idx.iter().map(|&i| moves[i]).collect();
        self.inner.evaluate(&miss_pos, &miss_moves, &mut self.miss_out)?;
        if self.map.len() + self.miss_idx.len() > self.capacity {
            self.map.clear();
        }
        for (k, &i) in self.miss_idx.iter().enumerate() {
            let e = &self.miss_out[k];
            out[i].priors.clear();
            out[i].priors.extend_from_slice(&e.priors);
            out[i].value = e.value;
            self.map.insert(positions[i].hash(), e.clone());
        }
        Ok(())
    }

    fn max_batch(&self) -> usize {
        self.inner.max_batch()
    }
}
