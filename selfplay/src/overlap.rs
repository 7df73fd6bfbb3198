//! Self-play that keeps the devices busy (issue 10): game groups, one thread
//! per device, encoding and decoding on the CPU threads.
//!
//! The games in flight are split into `groups` groups per device. Each device
//! ([`Backend`], e.g. one network replica per GPU) runs on its own thread and
//! takes the batches of its groups in arrival order. The calling thread goes
//! round the groups in a fixed order; for each it
//!
//! ```text
//! 1. waits for the group's batch to come back from its device (if one is out);
//! 2. CPU phase, all the group's games in parallel (rayon), one task per game:
//!    decode the game's rows (softmax over each leaf's legal logits), expand
//!    and back up the evaluated leaves, finish moves whose search is done,
//!    select the next leaves (virtual loss), look them up in the evaluation
//!    cache, and compute the misses' action indices;
//! 3. caches the batch's outputs in row order and brings the look-ups of
//!    step 2, made before these inserts, up to date (so every look-up sees
//!    the cache the lockstep driver's would);
//! 4. hands finished games to the callback and starts the next game ids;
//! 5. copies the misses' action indices into the group's reused batch (a
//!    position met twice is sent once), encodes their packed input planes
//!    straight into it (rows in parallel), and sends it to the device:
//!    beside the next group's step 2 (`rayon::join`; it touches only its
//!    own group), or before waiting when the next group's batch is not back
//!    yet, so that a device never waits for it.
//! ```
//!
//! Step 3 is the only serial work per leaf: a hash-map insert and a look-up
//! (none with the cache off).
//!
//! So while a group's batch is on the device the CPU works on the other
//! groups. With one group it is the lockstep loop of [`crate::play_games`]
//! (the device idles during the CPU phase) and plays exactly its games: the
//! same batches, cache look-ups and random draws in the same order.
//!
//! Reproducibility: the order of every step above is fixed (round robin over
//! the groups, each device first-in first-out), never the order in which
//! threads finish, so game ids are handed out in the same order and a game's
//! batches are the same in every run with the same number of groups and
//! devices. With a backend whose output for a position does not depend on its
//! batch (the simulated device, or a network with `fixed_batch`), the games do
//! not depend on the number of groups or devices either.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::time::Instant;

use martian_rules::GameState;
use martian_search::{Backend, DeviceBatch, EvalCache, EvalError, Evaluation, KeyMap, MctsConfig};
use rayon::prelude::*;

use crate::config::SelfplayConfig;
use crate::driver::{FinishedGame, PlayParams, SelfplayStats, Slot};

/// `src` of a leaf whose evaluation came from the cache.
const FROM_CACHE: u32 = u32::MAX;

/// A batch on its way to a device or back.
struct Job {
    group: usize,
    batch: DeviceBatch,
}

/// A batch back from a device.
struct Done {
    group: usize,
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
                if let Some((priors, value, values)) = cache.peek(key, m.len()) {
                    let e = &mut self.evals[k];
                    e.priors.clear();
                    e.priors.extend_from_slice(priors);
                    e.value = value;
                    e.values.clear();
                    e.values.extend_from_slice(values);
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
    /// The leaves' evaluations are complete and not yet applied to the trees.
    ready: bool,
    /// A batch of this group is on the device.
    in_flight: bool,
    /// Every game of the group is finished.
    done: bool,
}

/// What the groups share: the cache, the game ids, the counters, the callback.
struct Shared<'p, 'a, G: GameState, F> {
    params: &'p PlayParams<'a, G>,
    cfg: &'p SelfplayConfig,
    mcts: &'p MctsConfig,
    cache: EvalCache,
    started: usize,
    stats: SelfplayStats,
    t0: Instant,
    on_game: F,
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

    /// Step 1 of the group's turn, all its games in parallel (rayon), one
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

    /// Steps 2-3, serial, after [`Group::phase`]: caches the last batch's
    /// outputs ([`Group::cache_rows`]), hands finished games to the callback
    /// and starts the next game ids. Returns true when the group has games
    /// left (its leaves wait for [`Group::assemble`]), false when every game
    /// is finished (`done` set).
    fn finish_phase<F>(&mut self, sh: &mut Shared<'_, '_, G, F>) -> Result<bool, EvalError>
    where
        F: FnMut(FinishedGame, &SelfplayStats) -> Result<(), String>,
    {
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
            sh.stats.games += 1;
            sh.stats.moves += fg.record.plies as u64;
            sh.stats.samples += fg.samples.len() as u64;
            sh.stats.targets.merge(&fg.targets);
            sh.stats.seconds = sh.t0.elapsed().as_secs_f64();
            let to = Instant::now();
            (sh.on_game)(fg, &sh.stats).map_err(EvalError)?;
            sh.stats.output_seconds += to.elapsed().as_secs_f64();
            if sh.started < sh.params.game_ids.len() {
                *s = Slot::new(sh.params.start, sh.mcts, sh.params.game_ids[sh.started], sh.params.seed);
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

    /// Step 4: the misses become the batch's rows, in game order (their
    /// action indices copied from the scan, then their packed input planes
    /// encoded straight into the batch, all rows in parallel); a position
    /// met twice in the batch is sent once. Touches only this group, so it
    /// runs beside another group's [`Group::phase`]; the cache's counters
    /// are returned, not counted.
    fn assemble(&mut self, use_cache: bool) -> Assembly {
        let te = Instant::now();
        let mut batch = self.batch.take().expect("the group's batch is home");
        batch.clear::<G>();
        self.rows.clear();
        self.batch_keys.clear();
        let mut a = Assembly::default();
        for (i, l) in self.leaves.iter_mut().enumerate() {
            a.leaves += l.n;
            a.lookups += std::mem::take(&mut l.lookups);
            a.hits += std::mem::take(&mut l.hits);
            for k in 0..l.n {
                if l.src[k] == FROM_CACHE {
                    continue;
                }
                let (s, e) = l.spans[k];
                if use_cache {
                    let key = l.keys[k];
                    match self.batch_keys.get(&key) {
                        Some(&r) if batch.offsets[r as usize + 1] - batch.offsets[r as usize] == (e - s) as usize => {
                            a.hits += 1;
                            l.src[k] = r;
                            continue;
                        }
                        _ => {
                            self.batch_keys.insert(key, batch.rows as u32);
                        }
                    }
                }
                l.src[k] = batch.push_row_actions(&l.actions[s as usize..e as usize]) as u32;
                self.rows.push((i as u32, k as u32));
            }
        }
        let c = batch.planes_per_row();
        let slots = &self.slots;
        batch.plane_rows().par_chunks_mut(c).zip(self.rows.par_iter()).for_each(|(planes, &(i, k))| {
            slots[i as usize].tree.pending_leaf(k as usize).0.encode_packed(planes);
        });
        a.rows = batch.rows;
        self.batch = Some(batch);
        a.seconds = te.elapsed().as_secs_f64();
        a
    }

    /// Sends the assembled batch to the group's device; a batch without
    /// rows (every leaf from the cache, or none) stays home and the group's
    /// next phase applies it at once.
    fn hand_over(&mut self, g: usize, a: &Assembly, to_device: &Sender<Job>) -> Result<(), EvalError> {
        if a.rows == 0 {
            self.ready = a.leaves > 0;
            return Ok(());
        }
        let batch = self.batch.take().expect("assemble left the batch home");
        to_device.send(Job { group: g, batch }).map_err(|_| EvalError(format!("device {} stopped", self.device)))?;
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
    fn count<G: GameState, F>(&self, sh: &mut Shared<'_, '_, G, F>) {
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
fn device_loop<B: Backend>(device: &mut B, jobs: Receiver<Job>, done: Sender<Done>) {
    while let Ok(mut job) = jobs.recv() {
        let t = Instant::now();
        let result = catch_unwind(AssertUnwindSafe(|| device.run(&mut job.batch))).unwrap_or_else(|p| {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(EvalError(format!("the device failed: {msg}")))
        });
        let seconds = job.batch.device_seconds.take().unwrap_or_else(|| t.elapsed().as_secs_f64());
        if done.send(Done { group: job.group, batch: job.batch, result, seconds }).is_err() {
            break;
        }
    }
}

/// Plays one game of self-play per id of `params.game_ids` on the backends
/// `devices` (one network replica per device), with `cfg.games_in_flight`
/// games per device in `cfg.groups` groups per device, overlapping each
/// group's CPU phase with the other groups' forward passes (module docs).
/// The evaluation cache (`cfg.cache_size` entries) is shared by all groups.
/// Finished games go to `on_game` in finishing order, which is the same in
/// every run with the same groups and devices.
///
/// With one device and one group the games are those of [`crate::play_games`]
/// with a `CachedEvaluator` of the same size around a
/// [`martian_search::BackendEvaluator`] of the same backend.
///
/// # Errors
/// A backend's error (or panic, as an error), a backend returning outputs of
/// the wrong size, the error returned by `on_game`, or an empty `devices`.
pub fn play_games_on_devices<G, B, F>(
    params: &PlayParams<'_, G>,
    cfg: &SelfplayConfig,
    mcts: &MctsConfig,
    devices: &mut [B],
    on_game: F,
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
    let ids = params.game_ids;
    let n_dev = devices.len();
    let n_groups = n_dev * cfg.groups.max(1) as usize;
    let in_flight = (cfg.games_in_flight as usize * n_dev).min(ids.len());
    // Group g takes the next contiguous block of the first ids; block sizes
    // differ by at most one. Group g runs on device g % n_dev.
    let mut groups: Vec<Group<G>> = Vec::with_capacity(n_groups);
    let mut next = 0;
    for g in 0..n_groups {
        let size = in_flight / n_groups + usize::from(g < in_flight % n_groups);
        let slots = ids[next..next + size].iter().map(|&id| Slot::new(params.start, mcts, id, params.seed)).collect();
        next += size;
        groups.push(Group::new(slots, g % n_dev));
    }
    let stats = SelfplayStats { devices: n_dev as u32, ..Default::default() };
    let mut sh =
        Shared { params, cfg, mcts, cache: EvalCache::new(cfg.cache_size), started: in_flight, stats, t0, on_game };
    // The loop runs on a thread of rayon's pool, so that its parallel phases
    // start on the calling thread instead of waking the pool and waiting for it.
    rayon::scope(|_| std::thread::scope(|scope| drive(scope, devices, &mut groups, &mut sh)))?;
    let mut stats = sh.stats;
    stats.seconds = t0.elapsed().as_secs_f64();
    stats.eval_seconds = stats.device_seconds / n_dev as f64;
    Ok(stats)
}

/// Assembles group `g`'s batch and hands it to its device on the calling
/// thread (when no other group's phase can run beside it), and counts it.
fn send_alone<G: GameState, F>(
    groups: &mut [Group<G>],
    g: usize,
    use_cache: bool,
    to_device: &[Sender<Job>],
    sh: &mut Shared<'_, '_, G, F>,
) -> Result<(), EvalError> {
    let group = &mut groups[g];
    let a = group.assemble(use_cache);
    group.hand_over(g, &a, &to_device[group.device])?;
    a.count(sh);
    Ok(())
}

/// Mutable references to groups `a` and `b` (`a != b`) of `groups`.
fn two_groups<G: GameState>(groups: &mut [Group<G>], a: usize, b: usize) -> (&mut Group<G>, &mut Group<G>) {
    assert_ne!(a, b, "two different groups");
    if a < b {
        let (x, y) = groups.split_at_mut(b);
        (&mut x[a], &mut y[0])
    } else {
        let (x, y) = groups.split_at_mut(a);
        (&mut y[0], &mut x[b])
    }
}

/// The round robin over the groups, with one thread per device.
fn drive<'scope, 'env, G, B, F>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    devices: &'env mut [B],
    groups: &mut [Group<G>],
    sh: &mut Shared<'_, '_, G, F>,
) -> Result<(), EvalError>
where
    G: GameState,
    B: Backend + Send,
    F: FnMut(FinishedGame, &SelfplayStats) -> Result<(), String>,
{
    let n_dev = devices.len();
    let n_groups = groups.len();
    let mut to_device: Vec<Sender<Job>> = Vec::with_capacity(n_dev);
    let mut from_device: Vec<Receiver<Done>> = Vec::with_capacity(n_dev);
    for device in devices.iter_mut() {
        let (job_tx, job_rx) = channel::<Job>();
        let (done_tx, done_rx) = channel::<Done>();
        scope.spawn(move || device_loop(device, job_rx, done_tx));
        to_device.push(job_tx);
        from_device.push(done_rx);
    }
    let use_cache = sh.cache.capacity() > 0;
    // The group whose phase is done and whose batch is still to assemble:
    // assembled beside the next group's phase.
    let mut pending: Option<usize> = None;
    let mut next_group = 0;
    while groups.iter().any(|x| !x.done) {
        let g = next_group;
        next_group = (g + 1) % n_groups;
        if groups[g].done {
            continue;
        }
        if pending == Some(g) {
            // No other group's phase to run beside it (one group, or the
            // others are done).
            send_alone(groups, g, use_cache, &to_device, sh)?;
            pending = None;
        }
        if groups[g].in_flight {
            let dev = groups[g].device;
            let stopped = || EvalError(format!("device {dev} stopped"));
            let mut done = match from_device[dev].try_recv() {
                Ok(done) => done,
                Err(TryRecvError::Disconnected) => return Err(stopped()),
                Err(TryRecvError::Empty) => {
                    // The device is still busy: send the pending group's
                    // batch now rather than after this wait (a device must
                    // not wait for it, and another may be idle).
                    if let Some(p) = pending.take() {
                        send_alone(groups, p, use_cache, &to_device, sh)?;
                    }
                    let tw = Instant::now();
                    let done = from_device[dev].recv().map_err(|_| stopped())?;
                    sh.stats.wait_seconds += tw.elapsed().as_secs_f64();
                    done
                }
            };
            if done.batch.is_pending() {
                // A device that says when its outputs are back (the
                // simulated device's `wait=deadline`): not back yet, so as
                // above, the pending group's batch goes first.
                if let Some(p) = pending.take() {
                    send_alone(groups, p, use_cache, &to_device, sh)?;
                }
                sh.stats.wait_seconds += done.batch.wait_ready().as_secs_f64();
            }
            done.batch.ready_at = None;
            let group = &mut groups[g];
            sh.stats.device_seconds += done.seconds;
            group.in_flight = false;
            if done.group != g {
                return Err(EvalError(format!(
                    "device {} returned the batch of group {} out of turn",
                    group.device, done.group
                )));
            }
            done.result?;
            group.receive(done.batch)?;
        }
        // This group's phase, and beside it the assembly and hand-over of
        // the group before it (it touches only that group; the cache is
        // read-only until both are done).
        let cfg = sh.cfg;
        let seconds = match pending.take() {
            None => groups[g].phase(cfg, &sh.cache),
            Some(p) => {
                let (this, other) = two_groups(groups, g, p);
                let tx = &to_device[other.device];
                let cache = &sh.cache;
                let (seconds, handed) = rayon::join(
                    || this.phase(cfg, cache),
                    || {
                        let a = other.assemble(use_cache);
                        other.hand_over(p, &a, tx).map(|()| a)
                    },
                );
                handed?.count(sh);
                seconds
            }
        };
        sh.stats.search_seconds += seconds;
        if groups[g].finish_phase(sh)? {
            pending = Some(g);
        }
    }
    Ok(())
}
