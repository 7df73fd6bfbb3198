//! Self-play that keeps the devices busy (`docs/architecture.md`, "Batched inference"): game groups, worker
//! threads that each go round their own groups, one thread per device,
//! encoding and decoding on the workers.
//!
//! The games in flight are split into `groups` groups per device. Each device
//! ([`Backend`], e.g. one network replica per GPU) runs on its own thread and
//! takes the batches sent to it in arrival order. The groups are shared out
//! among worker threads (group `g` to worker `g % workers`, `workers =
//! groups / 2` clamped to 1..=threads), so that each worker has two or more
//! groups where there are enough; each worker has a rayon pool of its share
//! of the threads (one thread each when there are as many workers as
//! threads). A worker goes round its groups in a fixed order; for each it
//!
//! ```text
//! 1. waits for the group's batch to come back from its device (if one is out);
//! 2. CPU phase, the group's games in parallel (the worker's pool), one task
//!    per game: decode the game's rows (priors, value), expand and back up
//!    the evaluated leaves, finish moves whose search is done, select the
//!    next leaves (virtual loss), look them up in the group's evaluation
//!    cache, and compute the misses' action indices;
//! 3. caches the batch's outputs in row order and brings the look-ups of
//!    step 2, made before these inserts, up to date (so every look-up sees
//!    the cache the lockstep driver's would);
//! 4. sends finished games to the calling thread and starts the group's
//!    next game ids;
//! 5. gives the misses their batch rows (a position met twice is sent once),
//!    then every game writes its own rows (action indices, packed input
//!    planes) into the group's reused batch, the games in parallel, and
//!    sends the batch to the device.
//! ```
//!
//! So while one group's batch is on the device its worker works on another
//! group, and with one thread per worker a game's tree stays on one core:
//! no fork-join, no serial section that idles the other cores. With one
//! group it is the lockstep loop of [`crate::play_games`] (the device idles
//! during the CPU phase) and plays exactly its games: the same batches,
//! cache look-ups and random draws in the same order.
//!
//! Reproducibility: each group plays a fixed list of game ids
//! ([`GroupPlan`]), its own batches and its own cache, so its games do not
//! depend on the other groups' speed; the calling thread hands the finished
//! games to the callback in a fixed order (one from each group in turn). So
//! the games, and the order they are written in, are the same in every run
//! with the same number of groups and devices, whatever the number of
//! threads. With a backend whose output for a position does not depend on
//! its batch (the simulated device, or a network with `fixed_batch`), the
//! games do not depend on the number of groups or devices either.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Instant;

use martian_rules::GameState;
use martian_search::{Backend, DeviceBatch, EvalCache, EvalError, Evaluation, KeyMap, MctsConfig};
use rayon::prelude::*;

use crate::config::SelfplayConfig;
use crate::driver::{FinishedGame, PlayParams, SelfplayStats, Slot};

/// `src` of a leaf whose evaluation came from the cache.
const FROM_CACHE: u32 = u32::MAX;

/// A batch on its way to a device, with where its outputs go back.
struct Job {
    batch: DeviceBatch,
    reply: Sender<Done>,
}

/// A batch back from a device.
struct Done {
    batch: DeviceBatch,
    result: Result<(), EvalError>,
    seconds: f64,
}

/// `src` of a leaf that missed the cache and has no batch row yet.
const MISS: u32 = u32::MAX - 1;

/// The pending leaves of one game: their evaluations, where each comes from,
/// their cache keys and (for cache misses) their legal moves' action
/// indices, computed in the parallel scan so that the batch assembly only
/// copies them (the input planes are encoded straight into the batch, by
/// [`Group::assemble`]). Reused from batch to batch.
#[derive(Default)]
struct Leaves {
    /// Leaves of the current batch.
    n: usize,
    evals: Vec<Evaluation>,
    /// [`FROM_CACHE`], [`MISS`], or the batch row whose outputs the leaf takes.
    src: Vec<u32>,
    keys: Vec<u64>,
    /// Action indices of the misses' legal moves, back to back.
    actions: Vec<u32>,
    /// Per leaf, its range in `actions` (empty for a cache hit).
    spans: Vec<(u32, u32)>,
    /// Look-ups and hits of this scan, for the cache's counters.
    lookups: u64,
    hits: u64,
}

impl Leaves {
    /// Scans the tree's pending leaves: input keys, read-only cache look-ups
    /// (a hit fills the evaluation), the misses' action indices.
    fn scan<G: GameState>(&mut self, slot: &Slot<G>, cache: &EvalCache) {
        self.n = if slot.active { slot.tree.num_pending() } else { 0 };
        if self.evals.len() < self.n {
            self.evals.resize_with(self.n, Evaluation::default);
        }
        self.src.clear();
        self.keys.clear();
        self.actions.clear();
        self.spans.clear();
        let use_cache = cache.capacity() > 0;
        for k in 0..self.n {
            let (p, m) = slot.tree.pending_leaf(k);
            if use_cache {
                let key = p.input_key();
                self.keys.push(key);
                self.lookups += 1;
                if let Some((priors, value, draw, values, score)) = cache.peek(key, m.len()) {
                    let e = &mut self.evals[k];
                    e.priors.clear();
                    e.priors.extend_from_slice(priors);
                    e.value = value;
                    e.draw = draw;
                    e.values.clear();
                    e.values.extend_from_slice(values);
                    e.score = score;
                    self.hits += 1;
                    self.src.push(FROM_CACHE);
                    self.spans.push((0, 0));
                    continue;
                }
            }
            self.spans.push((0, 0));
            self.src.push(0);
            self.set_miss(k, p, m);
        }
    }

    /// Makes leaf `k` (position `p`, legal moves `m`) a miss: its action
    /// indices appended to the buffer.
    fn set_miss<G: GameState>(&mut self, k: usize, p: &G, m: &[martian_rules::Move]) {
        let a = self.actions.len() as u32;
        p.action_indices(m, &mut self.actions);
        self.spans[k] = (a, self.actions.len() as u32);
        self.src[k] = MISS;
    }

    /// Decodes the outputs of the leaves that took a batch row (in `batch`).
    fn decode(&mut self, batch: &DeviceBatch) {
        // Start every row's first cache miss before waiting on any of them.
        for &r in &self.src[..self.n] {
            if r != FROM_CACHE {
                batch.prefetch_outputs(r as usize);
            }
        }
        for (e, &r) in self.evals[..self.n].iter_mut().zip(&self.src) {
            if r != FROM_CACHE {
                batch.decode_row(r as usize, e);
            }
        }
    }

    /// Brings this scan's look-ups (made before the group's last batch was
    /// cached) up to date with its rows, as if the scan had come after
    /// them: a leaf whose key a row of that batch has (`batch_keys`: key ->
    /// the last row with it, `rows`: row -> its leaf in `prev`) takes that
    /// row's outputs when their prior count fits its legal moves, and is a
    /// miss otherwise (the insert replaced the entry the scan found). Valid
    /// when the inserts did not clear the cache.
    fn refresh<G: GameState>(
        &mut self,
        slot: &Slot<G>,
        rows: &[(u32, u32)],
        batch_keys: &KeyMap<u32>,
        prev: &[Leaves],
    ) {
        for k in 0..self.n {
            let Some(&r) = batch_keys.get(&self.keys[k]) else { continue };
            let (s, j) = rows[r as usize];
            let e = &prev[s as usize].evals[j as usize];
            let (p, m) = slot.tree.pending_leaf(k);
            if e.priors.len() == m.len() {
                let out = &mut self.evals[k];
                out.priors.clone_from(&e.priors);
                out.value = e.value;
                out.draw = e.draw;
                out.values.clone_from(&e.values);
                if self.src[k] != FROM_CACHE {
                    self.src[k] = FROM_CACHE;
                    self.hits += 1;
                }
            } else if self.src[k] == FROM_CACHE {
                self.hits -= 1;
                self.set_miss(k, p, m);
            }
        }
    }
}

/// One group of games with its reused buffers.
struct Group<G: GameState> {
    slots: Vec<Slot<G>>,
    /// Per slot, its pending leaves.
    leaves: Vec<Leaves>,
    /// Per slot, the leaves of the batch applied last: their decoded
    /// outputs and keys wait here to be cached (the scan fills `leaves`).
    spare: Vec<Leaves>,
    device: usize,
    /// The batch buffers; `None` while the batch is on the device.
    batch: Option<DeviceBatch>,
    /// Per batch row: `(slot, leaf of the slot)`.
    rows: Vec<(u32, u32)>,
    /// Input key -> batch row, for this batch (a position met twice is sent once).
    batch_keys: KeyMap<u32>,
    /// Per slot, its first batch row and first action entry, and one more
    /// entry for the end (set by [`Group::assemble`]).
    starts: Vec<(u32, u32)>,
    /// The leaves' evaluations are complete and not yet applied to the trees.
    ready: bool,
    /// A batch of this group is on the device.
    in_flight: bool,
    /// Every game of the group is finished.
    done: bool,
}

/// What a group owns besides its games, on its worker's thread: its
/// evaluation cache, its queue of game ids, its counters, and the channel to
/// the calling thread.
struct Shared<'p, 'a, G: GameState> {
    params: &'p PlayParams<'a, G>,
    cfg: &'p SelfplayConfig,
    mcts: &'p MctsConfig,
    cache: EvalCache,
    /// The group's game ids, in the order it starts them.
    ids: Vec<u64>,
    /// Ids of `ids` started so far.
    started: usize,
    /// The group's own counters (the games' are the calling thread's).
    stats: SelfplayStats,
    /// Finished games, to the calling thread.
    out: Sender<Msg>,
}

/// From a group's thread to the calling thread.
enum Msg {
    /// A finished game, in the group's finishing order.
    Game(Box<FinishedGame>),
    /// The group's last message: how its thread ended, and its counters.
    End(Result<(), EvalError>, Box<SelfplayStats>),
}

impl<G: GameState> Group<G> {
    fn new(slots: Vec<Slot<G>>, device: usize) -> Self {
        let done = slots.is_empty();
        Group {
            leaves: slots.iter().map(|_| Leaves::default()).collect(),
            spare: slots.iter().map(|_| Leaves::default()).collect(),
            slots,
            device,
            batch: Some(DeviceBatch::default()),
            rows: Vec::new(),
            batch_keys: KeyMap::default(),
            starts: Vec::new(),
            ready: false,
            in_flight: false,
            done,
        }
    }

    /// Takes the group's batch back from its device (checked; decoded game
    /// by game in the next CPU phase, [`Group::phase`]).
    fn receive(&mut self, batch: DeviceBatch) -> Result<(), EvalError> {
        batch.check_outputs()?;
        self.batch = Some(batch);
        self.ready = true;
        Ok(())
    }

    /// Caches the outputs of the group's last batch in row order (as the
    /// lockstep driver's cached evaluator inserts its misses), then brings
    /// the look-ups of the scan before it up to date ([`Leaves::refresh`];
    /// when an insert cleared the cache, by scanning again), so that every
    /// look-up sees the cache it would have seen after the inserts.
    fn cache_rows(&mut self, cache: &mut EvalCache) {
        if self.rows.is_empty() {
            return;
        }
        let clears = cache.clears();
        for &(s, k) in &self.rows {
            let l = &self.spare[s as usize];
            cache.insert(l.keys[k as usize], &l.evals[k as usize]);
        }
        let cleared = cache.clears() != clears;
        for (s, l) in self.slots.iter().zip(self.leaves.iter_mut()) {
            if s.finished.is_some() {
                continue;
            }
            if cleared {
                (l.lookups, l.hits) = (0, 0);
                l.scan(s, cache);
            } else {
                l.refresh(s, &self.rows, &self.batch_keys, &self.spare);
            }
        }
        self.rows.clear();
        self.batch_keys.clear();
    }

    /// Step 2 of the group's turn, all its games in parallel (rayon), one
    /// task per game: decode the batch's outputs, expand and back up the
    /// evaluated leaves, finish moves whose search is done, select the next
    /// leaves, look them up in the cache (as it was before the group's last
    /// batch was cached) and compute the misses' action indices and packed
    /// planes. Returns the seconds it took.
    fn phase(&mut self, cfg: &SelfplayConfig, cache: &EvalCache) -> f64 {
        let ts = Instant::now();
        let ready = std::mem::take(&mut self.ready);
        let batch = self.batch.as_ref().expect("the group's batch is home");
        self.slots.par_iter_mut().zip(self.leaves.par_iter_mut()).zip(self.spare.par_iter_mut()).for_each(
            |((s, l), spare)| {
                if ready && l.n > 0 {
                    s.tree.prefetch_pending();
                    l.decode(batch);
                    s.tree.apply_evaluations(&l.evals[..l.n], &mut s.rng);
                }
                std::mem::swap(l, spare);
                if s.active {
                    s.step(cfg);
                }
                if s.finished.is_none() {
                    l.scan(s, cache);
                } else {
                    l.n = 0;
                }
            },
        );
        ts.elapsed().as_secs_f64()
    }

    /// Steps 3-4, serial, after [`Group::phase`]: caches the last batch's
    /// outputs ([`Group::cache_rows`]), sends finished games to the calling thread
    /// and starts the next game ids. Returns true when the group has games
    /// left (its leaves wait for [`Group::assemble`]), false when every game
    /// is finished (`done` set).
    fn finish_phase(&mut self, sh: &mut Shared<'_, '_, G>) -> Result<bool, EvalError> {
        let cfg = sh.cfg;
        let td = Instant::now();
        if sh.cache.capacity() > 0 {
            self.cache_rows(&mut sh.cache);
        }
        sh.stats.decode_seconds += td.elapsed().as_secs_f64();
        for (s, l) in self.slots.iter_mut().zip(self.leaves.iter_mut()) {
            if !(s.active && s.finished.is_some()) {
                continue;
            }
            let fg = s.take_finished(&sh.params.model_name, cfg);
            sh.out.send(Msg::Game(Box::new(fg))).map_err(|_| EvalError("self-play stopped".into()))?;
            if sh.started < sh.ids.len() {
                *s = Slot::new(sh.params.start, sh.mcts, sh.ids[sh.started], sh.params.seed);
                sh.started += 1;
                s.step(cfg);
            } else {
                s.active = false;
            }
            l.scan(s, &sh.cache);
        }
        if self.slots.iter().all(|s| !s.active) {
            self.done = true;
            return Ok(false);
        }
        Ok(true)
    }

    /// Step 5: the misses become the batch's rows, in game order; a
    /// position met twice in the batch is sent once. First, serially, every
    /// miss gets its row (or the row of the same position earlier in the
    /// batch) and every row its size; then every game writes its own rows
    /// (their action indices, copied from the scan, and their packed input
    /// planes, encoded from the tree's pending leaves), the games in
    /// parallel (rayon) as in the phase, so that a game's leaves are read
    /// again on the core that selected them. The cache's counters are
    /// returned, not counted.
    fn assemble(&mut self, use_cache: bool) -> Assembly {
        let te = Instant::now();
        let mut batch = self.batch.take().expect("the group's batch is home");
        batch.clear_for_rows::<G>();
        self.rows.clear();
        self.batch_keys.clear();
        self.starts.clear();
        let mut a = Assembly::default();
        for (i, l) in self.leaves.iter_mut().enumerate() {
            self.starts.push((batch.rows as u32, batch.offsets[batch.rows] as u32));
            a.leaves += l.n;
            a.lookups += std::mem::take(&mut l.lookups);
            a.hits += std::mem::take(&mut l.hits);
            for k in 0..l.n {
                if l.src[k] == FROM_CACHE {
                    continue;
                }
                let (s, e) = l.spans[k];
                let legal = (e - s) as usize;
                if use_cache {
                    let key = l.keys[k];
                    match self.batch_keys.get(&key) {
                        Some(&r) if batch.offsets[r as usize + 1] - batch.offsets[r as usize] == legal => {
                            a.hits += 1;
                            l.src[k] = r;
                            continue;
                        }
                        _ => {
                            self.batch_keys.insert(key, batch.rows as u32);
                        }
                    }
                }
                l.src[k] = batch.push_row_len(legal) as u32;
                self.rows.push((i as u32, k as u32));
            }
        }
        self.starts.push((batch.rows as u32, batch.offsets[batch.rows] as u32));
        let c = batch.planes_per_row();
        // Each game's share of the two buffers (its rows are consecutive).
        let (mut actions, mut planes) = batch.row_buffers();
        let mut parts = Vec::with_capacity(self.slots.len());
        for w in self.starts.windows(2) {
            let (r0, a0) = w[0];
            let (r1, a1) = w[1];
            let (x, rest) = std::mem::take(&mut actions).split_at_mut((a1 - a0) as usize);
            actions = rest;
            let (y, rest) = std::mem::take(&mut planes).split_at_mut((r1 - r0) as usize * c);
            planes = rest;
            parts.push((r0, x, y));
        }
        self.slots.par_iter().zip(self.leaves.par_iter()).zip(parts.into_par_iter()).for_each(
            |((s, l), (r0, acts, planes))| {
                // Leaf k took a row of its own when its row is the game's
                // next one (a repeated position points to an earlier row).
                let (mut j, mut at) = (0, 0);
                for k in 0..l.n {
                    if l.src[k] != r0 + j as u32 {
                        continue;
                    }
                    let (a0, a1) = l.spans[k];
                    let len = (a1 - a0) as usize;
                    acts[at..at + len].copy_from_slice(&l.actions[a0 as usize..a1 as usize]);
                    s.tree.pending_leaf(k).0.encode_packed(&mut planes[j * c..(j + 1) * c]);
                    at += len;
                    j += 1;
                }
            },
        );
        a.rows = batch.rows;
        self.batch = Some(batch);
        a.seconds = te.elapsed().as_secs_f64();
        a
    }

    /// Sends the assembled batch to the group's device; a batch without
    /// rows (every leaf from the cache, or none) stays home and the group's
    /// next phase applies it at once.
    fn hand_over(&mut self, a: &Assembly, to_device: &Sender<Job>, reply: &Sender<Done>) -> Result<(), EvalError> {
        if a.rows == 0 {
            self.ready = a.leaves > 0;
            return Ok(());
        }
        let batch = self.batch.take().expect("assemble left the batch home");
        to_device
            .send(Job { batch, reply: reply.clone() })
            .map_err(|_| EvalError(format!("device {} stopped", self.device)))?;
        self.in_flight = true;
        Ok(())
    }
}

/// What [`Group::assemble`] did, for the counters.
#[derive(Default)]
struct Assembly {
    /// Pending leaves of the group (cache hits included).
    leaves: usize,
    /// Rows of the batch.
    rows: usize,
    /// Cache look-ups and hits (a position met twice in the batch counts as
    /// a hit without a look-up).
    lookups: u64,
    hits: u64,
    seconds: f64,
}

impl Assembly {
    fn count<G: GameState>(&self, sh: &mut Shared<'_, '_, G>) {
        sh.cache.count(self.lookups, self.hits);
        sh.stats.evaluations += self.leaves as u64;
        sh.stats.encode_seconds += self.seconds;
        if self.rows > 0 {
            sh.stats.device_rows += self.rows as u64;
            sh.stats.batches += 1;
        }
    }
}

/// The loop of one device thread: runs each batch it receives and sends it
/// back with the result and the time taken. A panic in the backend becomes an
/// error (the driver stops with it).
fn device_loop<B: Backend>(device: &mut B, jobs: Receiver<Job>) {
    while let Ok(mut job) = jobs.recv() {
        let t = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| device.run(&mut job.batch)))
            .unwrap_or_else(|p| Err(EvalError(format!("the device failed: {}", panic_text(&*p)))));
        let seconds = job.batch.device_seconds.take().unwrap_or_else(|| t.elapsed().as_secs_f64());
        // A group that stopped (another failed) no longer listens; the
        // device goes on for the others.
        let _ = job.reply.send(Done { batch: job.batch, result, seconds });
    }
}

/// Plays one game of self-play per id of `params.game_ids` on the backends
/// `devices` (one network replica per device), with `cfg.games_in_flight`
/// games per device in `cfg.groups` groups per device, each group on its own
/// thread, so that one group's CPU phase overlaps the others' forward passes
/// (module docs). Each group has its own evaluation cache of
/// `cfg.cache_size / groups` entries (all of it with one group). Finished
/// games go to `on_game` on the calling thread, the groups' in turn: the
/// first game of each group in group order, then the second of each, and
/// so on (a group that has run out is skipped), an order that is the same
/// in every run with the same groups and devices.
///
/// With one device and one group the games are those of [`crate::play_games`]
/// with a `CachedEvaluator` of the same size around a
/// [`martian_search::BackendEvaluator`] of the same backend, in the same order.
///
/// # Errors
/// A backend's error (or panic, as an error), a backend returning outputs of
/// the wrong size, the error returned by `on_game`, an empty `devices`, or
/// the threads of a group that could not be started.
pub fn play_games_on_devices<G, B, F>(
    params: &PlayParams<'_, G>,
    cfg: &SelfplayConfig,
    mcts: &MctsConfig,
    devices: &mut [B],
    mut on_game: F,
) -> Result<SelfplayStats, EvalError>
where
    G: GameState,
    B: Backend + Send,
    F: FnMut(FinishedGame, &SelfplayStats) -> Result<(), String> + Send,
{
    if devices.is_empty() {
        return Err(EvalError("self-play needs at least one device".into()));
    }
    let t0 = Instant::now();
    let n_dev = devices.len();
    let plan = GroupPlan::new(params.game_ids, cfg, n_dev);
    let n_groups = plan.sizes.len();
    if n_groups == 0 {
        return Ok(SelfplayStats { devices: n_dev as u32, seconds: t0.elapsed().as_secs_f64(), ..Default::default() });
    }
    // Each group's thread works in a pool of its own share of the threads:
    // with as many groups as threads, each group's phase runs on one thread
    // (its trees stay in that core's cache); with more threads, its phase is
    // split among them.
    // The worker threads: each goes round its own groups, two or more where
    // there are enough (so that it works on one while another's batch is on
    // the device), with a pool of its share of the threads: with as many
    // workers as threads each group's phase runs on one thread (its trees
    // stay in that core's cache); with more threads, it is split among them.
    let total = rayon::current_num_threads().max(1);
    let n_workers = (n_groups / 2).clamp(1, total);
    let pools = (0..n_workers)
        .map(|w| {
            rayon::ThreadPoolBuilder::new()
                .num_threads((total / n_workers + usize::from(w < total % n_workers)).max(1))
                .thread_name(move |k| format!("selfplay-w{w}-{k}"))
                .build()
                .map_err(|e| EvalError(format!("could not start self-play worker {w}'s threads: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let stop = AtomicBool::new(false);
    let mut stats = SelfplayStats { devices: n_dev as u32, ..Default::default() };
    let mut error: Option<EvalError> = None;
    let mut thread_stats: Vec<SelfplayStats> = Vec::with_capacity(n_groups);
    std::thread::scope(|scope| {
        let mut to_device = Vec::with_capacity(n_dev);
        for device in devices.iter_mut() {
            let (tx, rx) = channel::<Job>();
            scope.spawn(move || device_loop(device, rx));
            to_device.push(tx);
        }
        let mut from_groups = Vec::with_capacity(n_groups);
        let mut members: Vec<Vec<Member<'_, '_, G>>> = (0..n_workers).map(|_| Vec::new()).collect();
        for g in 0..n_groups {
            let (out, rx) = channel::<Msg>();
            from_groups.push(rx);
            let device = g % n_dev;
            let (ids, started) = plan.ids(g);
            let cache = EvalCache::new(if n_groups == 1 { cfg.cache_size } else { cfg.cache_size / n_groups });
            let sh = Shared { params, cfg, mcts, cache, ids, started, stats: SelfplayStats::default(), out };
            members[g % n_workers].push(Member { device, to_device: to_device[device].clone(), sh });
        }
        for (mine, pool) in members.into_iter().zip(&pools) {
            let stop = &stop;
            scope.spawn(move || pool.install(|| worker_loop(mine, stop)));
        }
        // The devices' threads end once every group has dropped its sender.
        drop(to_device);
        // The groups' games in turn, one at a time from each group still
        // playing (see the docs above).
        let mut open = vec![true; n_groups];
        while open.iter().any(|&o| o) {
            for (g, rx) in from_groups.iter().enumerate() {
                if !open[g] {
                    continue;
                }
                match rx.recv() {
                    Ok(Msg::Game(fg)) => {
                        if error.is_some() {
                            continue;
                        }
                        stats.games += 1;
                        stats.moves += fg.record.plies as u64;
                        stats.samples += fg.samples.len() as u64;
                        stats.targets.merge(&fg.targets);
                        stats.seconds = t0.elapsed().as_secs_f64();
                        let to = Instant::now();
                        if let Err(e) = on_game(*fg, &stats) {
                            error = Some(EvalError(e));
                            stop.store(true, Ordering::Relaxed);
                        }
                        stats.output_seconds += to.elapsed().as_secs_f64();
                    }
                    Ok(Msg::End(r, st)) => {
                        open[g] = false;
                        thread_stats.push(*st);
                        if let Err(e) = r {
                            error.get_or_insert(e);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    Err(_) => {
                        open[g] = false;
                        error.get_or_insert_with(|| EvalError(format!("the thread of game group {g} stopped")));
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
    });
    if let Some(e) = error {
        return Err(e);
    }
    // The workers ran side by side: their phase times are averaged (shares
    // of the wall time per worker thread), the counts summed.
    let k = n_workers as f64;
    for st in &thread_stats {
        stats.evaluations += st.evaluations;
        stats.batches += st.batches;
        stats.device_rows += st.device_rows;
        stats.device_seconds += st.device_seconds;
        stats.search_seconds += st.search_seconds / k;
        stats.encode_seconds += st.encode_seconds / k;
        stats.decode_seconds += st.decode_seconds / k;
        stats.wait_seconds += st.wait_seconds / k;
    }
    stats.seconds = t0.elapsed().as_secs_f64();
    stats.eval_seconds = stats.device_seconds / n_dev as f64;
    Ok(stats)
}

/// The text of a panic's payload.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}

/// Which game ids each group plays. Group `g` starts with the next
/// contiguous block of the first `games_in_flight x devices` ids (block
/// sizes differ by at most one) and takes the later ids in turn with the
/// other groups: the first later id goes to group 0, the next to group 1,
/// and so on. So a group's games do not depend on the others' speed.
struct GroupPlan<'i> {
    ids: &'i [u64],
    /// Per group, the size of its first block.
    sizes: Vec<usize>,
    in_flight: usize,
}

impl<'i> GroupPlan<'i> {
    fn new(ids: &'i [u64], cfg: &SelfplayConfig, n_dev: usize) -> Self {
        let n_groups = n_dev * cfg.groups.max(1) as usize;
        let in_flight = (cfg.games_in_flight as usize * n_dev).min(ids.len());
        // A group without a first block (fewer games in flight than groups)
        // is left out: it would have no slot to play its later ids in.
        let sizes = (0..n_groups)
            .map(|g| in_flight / n_groups + usize::from(g < in_flight % n_groups))
            .filter(|&s| s > 0)
            .collect();
        GroupPlan { ids, sizes, in_flight }
    }

    /// Group `g`'s ids in the order it starts them, and how many it starts at once.
    fn ids(&self, g: usize) -> (Vec<u64>, usize) {
        let n = self.sizes.len();
        let first: usize = self.sizes[..g].iter().sum();
        let size = self.sizes[g];
        let mut v: Vec<u64> = self.ids[first..first + size].to_vec();
        v.extend(self.ids[self.in_flight..].iter().skip(g).step_by(n));
        (v, size)
    }
}

/// A group as its worker thread holds it, before it starts.
struct Member<'p, 'a, G: GameState> {
    device: usize,
    to_device: Sender<Job>,
    sh: Shared<'p, 'a, G>,
}

/// The loop of one worker thread: round its groups in a fixed order; for
/// each, wait for its batch, run its CPU phase, send its finished games to
/// the calling thread and its next batch to its device; until its groups'
/// games are done or `stop` is set (another worker or the callback failed).
/// Every group then sends its last message ([`Msg::End`]) with the
/// worker's result.
fn worker_loop<G: GameState>(members: Vec<Member<'_, '_, G>>, stop: &AtomicBool) {
    let mut groups: Vec<_> = members
        .into_iter()
        .map(|m| {
            let sh = &m.sh;
            let slots = sh.ids[..sh.started]
                .iter()
                .map(|&id| Slot::new(sh.params.start, sh.mcts, id, sh.params.seed))
                .collect();
            let (reply, replies) = channel::<Done>();
            (Group::new(slots, m.device), m, reply, replies)
        })
        .collect();
    let run = catch_unwind(AssertUnwindSafe(|| -> Result<(), EvalError> {
        while !stop.load(Ordering::Relaxed) && groups.iter().any(|x| !x.0.done) {
            for (group, m, reply, replies) in groups.iter_mut() {
                if !group.done && !stop.load(Ordering::Relaxed) {
                    turn(group, m, reply, replies)?;
                }
            }
        }
        Ok(())
    }))
    .unwrap_or_else(|p| Err(EvalError(format!("a self-play thread failed: {}", panic_text(&*p)))));
    for (_, m, _, _) in groups {
        let r = run.as_ref().map(|_| ()).map_err(|e| EvalError(e.0.clone()));
        let _ = m.sh.out.send(Msg::End(r, Box::new(m.sh.stats)));
    }
}

/// One turn of a group (module docs, steps 1-5).
fn turn<G: GameState>(
    group: &mut Group<G>,
    m: &mut Member<'_, '_, G>,
    reply: &Sender<Done>,
    replies: &Receiver<Done>,
) -> Result<(), EvalError> {
    let sh = &mut m.sh;
    if group.in_flight {
        let tw = Instant::now();
        let mut done = replies.recv().map_err(|_| EvalError(format!("device {} stopped", m.device)))?;
        // A device that says when its outputs are back (the simulated
        // device's `wait=deadline`) may hand the batch over before then.
        done.batch.wait_ready();
        sh.stats.wait_seconds += tw.elapsed().as_secs_f64();
        sh.stats.device_seconds += done.seconds;
        group.in_flight = false;
        done.result?;
        group.receive(done.batch)?;
    }
    sh.stats.search_seconds += group.phase(sh.cfg, &sh.cache);
    if group.finish_phase(sh)? {
        let a = group.assemble(sh.cache.capacity() > 0);
        group.hand_over(&a, &m.to_device, reply)?;
        a.count(sh);
    }
    Ok(())
}
