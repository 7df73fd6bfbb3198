//! The evaluator split at the device boundary: [`Backend`] runs the network's
//! forward pass on encoded rows; encoding the positions before and decoding
//! the outputs after are the caller's, so that a self-play driver can do them
//! on its CPU threads while the device works on another batch (`docs/architecture.md`, "Batched inference").
//!
//! ```text
//! CPU: GameState::encode_packed -> DeviceBatch::planes (rows x planes, a mask
//!      and a value per plane: 20 bytes, where a dense Jetan plane is 400)
//!      GameState::action_index -> DeviceBatch::actions (legal moves, row after row)
//! device (Backend::run): expansion of the packed planes to rows x planes x H x W
//!      floats, forward pass, gather of the legal moves' policy logits (only
//!      those leave the device), softmax of the value logits, and, where the
//!      backend does it (DeviceBatch::softmax_on_device: CUDA, the simulated
//!      device), the softmax over each row's legal logits
//! CPU: DeviceBatch::decode_row: priors (a copy, or the softmax over the row's
//!      legal logits), value = P(win) - P(loss)
//! ```
//!
//! [`BackendEvaluator`] puts the three steps back together as an
//! [`Evaluator`] on the calling thread; [`SimulatedDevice`] is a backend that
//! behaves like an accelerator (a fixed time per call and per position,
//! outputs from a cheap hash of the input) so that the overlap of CPU and
//! device can be measured on a machine without one.

use std::time::{Duration, Instant};

use martian_rules::{mix64, pack_planes, unpack_planes, GameState, Move, PackedPlane};

use crate::evaluator::{EvalError, Evaluation, Evaluator};

/// One batch on its way to a device and back: packed input rows
/// ([`PackedPlane`], as lc0 sends its input planes: the device expands them)
/// and the policy actions to gather in, gathered logits and (win, draw, loss)
/// probabilities out. Its buffers are reused from batch to batch, so once
/// they have grown to the largest batch nothing is allocated.
#[derive(Clone, Debug, Default)]
pub struct DeviceBatch {
    /// `[planes, rows, cols]` of one input row (`GameState::INPUT_SHAPE`).
    pub shape: [usize; 3],
    /// Width of the policy head (`GameState::NUM_ACTIONS`).
    pub num_actions: usize,
    /// Positions in the batch.
    pub rows: usize,
    /// Network input, packed: `[rows, planes]` planes, row after row
    /// (`GameState::encode_packed`); may be longer than `rows` rows (a reused
    /// buffer): only the first `rows` are read. [`DeviceBatch::unpack_rows`]
    /// expands rows to the network's float32 `[rows, planes, H, W]`.
    pub planes: Vec<PackedPlane>,
    /// The action index (`GameState::action_index`) of every legal move of
    /// every row, row after row, in the order of the row's move list.
    pub actions: Vec<u32>,
    /// `rows + 1` offsets into `actions`: row `r`'s moves are
    /// `actions[offsets[r]..offsets[r + 1]]`.
    pub offsets: Vec<usize>,
    /// Output: the raw policy logit of each entry of `actions` (same length),
    /// or, when [`DeviceBatch::softmax_on_device`] is set, each row's priors
    /// (the softmax over the row's entries, taken by the device).
    pub logits: Vec<f32>,
    /// Set by the backend: `true` when the device took the softmax over each
    /// row's legal moves, so that [`DeviceBatch::logits`] holds the priors and
    /// [`DeviceBatch::decode_row`] only copies them (no `exp` per legal move
    /// on the host: the CUDA [`Backend`] of the network and the
    /// [`SimulatedDevice`] do this); `false` for raw logits.
    pub softmax_on_device: bool,
    /// Output: `rows x 3` probabilities of (win, draw, loss) for the side to
    /// move (a network with the (win, draw, loss) head; empty with a vector
    /// value head).
    pub wdl: Vec<f32>,
    /// Output of a vector value head (games of more than two value players):
    /// `rows x value_width` values in `[-1, 1]`, each row in mover-relative
    /// order (`Evaluation::values`). Empty otherwise.
    pub values: Vec<f32>,
    /// Values per row of [`DeviceBatch::values`]; 0 when the backend filled
    /// [`DeviceBatch::wdl`] instead. Set by the backend.
    pub value_width: usize,
    /// Output of a network's auxiliary score head: per row, the expected
    /// final point difference for the side to move, in points
    /// ([`Evaluation::score`]). Empty when the network has none (the backend
    /// clears it before each batch); [`DeviceBatch::decode_row`] reads it
    /// only when it holds a value for every row.
    pub score: Vec<f32>,
    /// Set by a backend that returns at once and says when its outputs are
    /// back instead of blocking until then (the [`SimulatedDevice`] with
    /// `wait=deadline`): the instant from which the outputs may be read.
    /// Whoever reads them waits for it ([`DeviceBatch::wait_ready`]). `None`
    /// (a backend that blocks, as a GPU's host thread does): ready now.
    pub ready_at: Option<Instant>,
    /// Set with [`DeviceBatch::ready_at`]: the device time the batch took,
    /// seconds (its passes, not the time it queued behind earlier batches).
    pub device_seconds: Option<f64>,
}

impl DeviceBatch {
    /// Floats per input row once expanded (`planes x H x W`).
    pub fn row_len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Packed planes per input row (`planes`).
    pub fn planes_per_row(&self) -> usize {
        self.shape[0]
    }

    /// Expands rows `start..end` into `out` (`(end - start) x row_len()`
    /// floats, row-major `[rows, planes, H, W]`).
    ///
    /// # Panics
    /// If the rows are not in the batch or `out` has the wrong length (a
    /// caller's error, not user input).
    pub fn unpack_rows(&self, start: usize, end: usize, out: &mut [f32]) {
        let c = self.planes_per_row();
        unpack_planes(&self.planes[start * c..end * c], self.shape[1] * self.shape[2], out);
    }

    /// Empties the batch for game `G` (keeps the allocations).
    pub fn clear<G: GameState>(&mut self) {
        self.shape = G::INPUT_SHAPE;
        self.num_actions = G::NUM_ACTIONS;
        self.rows = 0;
        self.actions.clear();
        self.offsets.clear();
        self.offsets.push(0);
    }

    /// Waits until the outputs count as back ([`DeviceBatch::ready_at`]; no
    /// wait when it is `None` or past) and clears it. Returns the time waited.
    pub fn wait_ready(&mut self) -> Duration {
        let Some(t) = self.ready_at.take() else { return Duration::ZERO };
        let now = Instant::now();
        if t > now {
            std::thread::sleep(t - now);
            now.elapsed()
        } else {
            Duration::ZERO
        }
    }

    /// Whether the outputs are not back yet ([`DeviceBatch::ready_at`] in the future).
    pub fn is_pending(&self) -> bool {
        self.ready_at.is_some_and(|t| t > Instant::now())
    }

    /// Adds a row's legal moves (their action indices) without encoding its
    /// planes (the caller encodes them afterwards). Returns the row's index.
    pub fn push_actions<G: GameState>(&mut self, position: &G, moves: &[Move]) -> usize {
        position.action_indices(moves, &mut self.actions);
        self.offsets.push(self.actions.len());
        self.rows += 1;
        self.rows - 1
    }

    /// Adds a row whose legal moves' action indices the caller computed
    /// (as [`DeviceBatch::push_actions`] would). Returns the row's index.
    pub fn push_row_actions(&mut self, actions: &[u32]) -> usize {
        self.actions.extend_from_slice(actions);
        self.offsets.push(self.actions.len());
        self.rows += 1;
        self.rows - 1
    }

    /// Adds a row from stored data: its dense input planes (`row_len()`
    /// floats, as a replay sample holds them) packed, and its legal moves'
    /// action indices.
    ///
    /// # Errors
    /// A message when `planes` has the wrong length or a plane has no packed
    /// form (non-zero cells of different values: not an encoding of this game).
    pub fn push_dense_row(&mut self, planes: &[f32], actions: &[u32]) -> Result<usize, String> {
        let c = self.planes_per_row();
        let r = self.planes.len().min(self.rows * c);
        self.planes.resize(r + c, PackedPlane::default());
        if let Err(e) = pack_planes(planes, self.shape[1] * self.shape[2], &mut self.planes[r..]) {
            self.planes.truncate(r);
            return Err(format!("a stored position's planes: {e}"));
        }
        Ok(self.push_row_actions(actions))
    }

    /// Adds a row: its legal moves and its packed planes.
    pub fn push_row<G: GameState>(&mut self, position: &G, moves: &[Move]) {
        let r = self.push_actions(position, moves);
        let c = self.planes_per_row();
        if self.planes.len() < (r + 1) * c {
            self.planes.resize((r + 1) * c, PackedPlane::default());
        }
        position.encode_packed(&mut self.planes[r * c..(r + 1) * c]);
    }

    /// Empties the batch for game `G` for rows that the caller sizes first
    /// ([`DeviceBatch::push_row_len`]) and writes afterwards in place
    /// ([`DeviceBatch::row_buffers`], e.g. game by game in parallel). Unlike
    /// [`DeviceBatch::clear`] it keeps the action buffer's length, so that
    /// sizing it for the next batch writes only what it grows by.
    pub fn clear_for_rows<G: GameState>(&mut self) {
        self.shape = G::INPUT_SHAPE;
        self.num_actions = G::NUM_ACTIONS;
        self.rows = 0;
        self.offsets.clear();
        self.offsets.push(0);
    }

    /// Adds a row of `legal` legal moves whose action indices and planes the
    /// caller writes afterwards into [`DeviceBatch::row_buffers`]. Returns the
    /// row's index.
    pub fn push_row_len(&mut self, legal: usize) -> usize {
        let end = self.offsets.last().copied().unwrap_or(0) + legal;
        self.offsets.push(end);
        self.rows += 1;
        self.rows - 1
    }

    /// The action indices (`offsets[rows]` entries, row after row) and the
    /// packed planes (`rows x planes_per_row()`) of the batch's rows, sized
    /// to them, for the caller to write. The action buffer is resized to
    /// exactly the rows' legal moves (so [`DeviceBatch::check_outputs`]
    /// compares the device's logits with them); entries it kept from an
    /// earlier batch hold stale values until written.
    pub fn row_buffers(&mut self) -> (&mut [u32], &mut [PackedPlane]) {
        let n = self.offsets.last().copied().unwrap_or(0);
        self.actions.resize(n, 0);
        let c = self.planes_per_row();
        let p = self.rows * c;
        if self.planes.len() < p {
            self.planes.resize(p, PackedPlane::default());
        }
        (&mut self.actions[..], &mut self.planes[..p])
    }

    /// Checks that the batch holds `rows` rows of planes and `rows + 1` offsets.
    ///
    /// # Errors
    /// [`EvalError`] naming the lengths.
    pub fn check_inputs(&self) -> Result<(), EvalError> {
        if self.offsets.len() != self.rows + 1 || self.planes.len() < self.rows * self.planes_per_row() {
            return Err(EvalError(format!(
                "a batch of {} rows with {} offsets and {} input planes",
                self.rows,
                self.offsets.len(),
                self.planes.len()
            )));
        }
        Ok(())
    }

    /// Checks that a backend filled the outputs of every row.
    ///
    /// # Errors
    /// [`EvalError`] naming the lengths when they are wrong.
    pub fn check_outputs(&self) -> Result<(), EvalError> {
        let (got, width) =
            if self.value_width > 0 { (self.values.len(), self.value_width) } else { (self.wdl.len(), 3) };
        if self.logits.len() != self.actions.len() || got < width * self.rows {
            return Err(EvalError(format!(
                "the device returned {} policy logits for {} legal moves and {} value outputs for {} positions",
                self.logits.len(),
                self.actions.len(),
                got / width,
                self.rows
            )));
        }
        Ok(())
    }

    /// Asks the CPU to start loading row `r`'s outputs (the first cache line
    /// of its priors and its value) into the cache, so that a caller that
    /// decodes several rows pays their memory latency once, not once per
    /// row: the outputs were written by the device (or its thread) and are
    /// not in this core's cache. A hint only: no effect on any value, none
    /// for a row out of range, and nothing on other architectures.
    #[inline]
    pub fn prefetch_outputs(&self, r: usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(&o) = self.offsets.get(r) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let w = self.value_width;
            let value =
                if w > 0 { self.values.as_ptr().wrapping_add(r * w) } else { self.wdl.as_ptr().wrapping_add(r * 3) };
            // SAFETY: a prefetch never faults and reads nothing the program
            // sees; the addresses are computed without dereferencing.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(self.logits.as_ptr().wrapping_add(o).cast());
                _mm_prefetch::<_MM_HINT_T0>(value.cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = r;
    }

    /// Turns row `r`'s outputs into an [`Evaluation`] (reusing `out`'s
    /// allocation): priors = softmax over the row's gathered logits
    /// ([`softmax_in_place`]; uniform when they are not finite), or a copy of
    /// the row's priors when the device took the softmax
    /// ([`DeviceBatch::softmax_on_device`]; uniform when they do not sum to a
    /// positive finite number), value = `P(win) - P(loss)` clamped to
    /// `[-1, 1]`; with a vector value head ([`DeviceBatch::value_width`] >
    /// 0) `values` = the row's values (clamped) and value = the mover's, the
    /// first; `score` = the row's [`DeviceBatch::score`] when the network has
    /// a score head and it is finite, else `None`.
    pub fn decode_row(&self, r: usize, out: &mut Evaluation) {
        let row = &self.logits[self.offsets[r]..self.offsets[r + 1]];
        out.priors.clear();
        if self.softmax_on_device {
            // The check reads the row itself, not the fresh copy (a load
            // right after the copy's stores waits for them).
            let sum: f32 = row.iter().sum();
            out.priors.extend_from_slice(row);
            if !(sum > 0.0 && sum.is_finite()) {
                uniform_in_place(&mut out.priors);
            }
        } else {
            out.priors.extend_from_slice(row);
            softmax_in_place(&mut out.priors);
        }
        out.values.clear();
        let w = self.value_width;
        if w > 0 {
            out.values.extend(self.values[r * w..(r + 1) * w].iter().map(|v| v.clamp(-1.0, 1.0)));
            out.value = out.values[0];
            out.draw = 0.0;
        } else {
            let wdl = &self.wdl[r * 3..r * 3 + 3];
            out.value = (wdl[0] - wdl[2]).clamp(-1.0, 1.0);
            out.draw = if wdl[1].is_finite() { wdl[1].clamp(0.0, 1.0) } else { 0.0 };
        }
        out.score =
            if self.score.len() >= self.rows { self.score.get(r).copied().filter(|s| s.is_finite()) } else { None };
    }
}

/// Replaces logits by their softmax, in place: `exp(x - max) / sum`
/// (legal-move masking is the caller's: pass only the legal moves' logits).
/// When the logits are not finite (a diverged network) every entry becomes
/// `1 / len` (uniform). The host decode and the [`SimulatedDevice`] share it,
/// so where the softmax runs does not change a bit of the priors.
pub fn softmax_in_place(x: &mut [f32]) {
    let max = x.iter().fold(f32::NEG_INFINITY, |m, &l| m.max(l));
    let mut sum = 0.0;
    for v in x.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    if sum > 0.0 && sum.is_finite() {
        x.iter_mut().for_each(|v| *v /= sum);
    } else {
        uniform_in_place(x);
    }
}

/// Every entry `1 / len`: the priors of a row whose outputs are not usable.
fn uniform_in_place(x: &mut [f32]) {
    let u = 1.0 / x.len().max(1) as f32;
    x.iter_mut().for_each(|v| *v = u);
}

/// The device side of a network evaluator: one forward pass (or several,
/// when the batch exceeds [`Backend::max_batch`]) over a [`DeviceBatch`].
///
/// A backend that is `Send` can be driven from its own thread (the
/// overlapped self-play driver does so, one thread per device).
pub trait Backend {
    /// Runs the network on the first `batch.rows` rows of `batch.planes`:
    /// fills `batch.logits` with the policy logit of every entry of
    /// `batch.actions` and `batch.wdl` with `rows x 3` (win, draw, loss)
    /// probabilities.
    ///
    /// # Errors
    /// [`EvalError`] when the backend fails (e.g. a libtorch error) or the
    /// batch does not fit the network (input shape, policy width).
    fn run(&mut self, batch: &mut DeviceBatch) -> Result<(), EvalError>;

    /// Largest number of rows of one forward pass; larger batches are split.
    fn max_batch(&self) -> usize {
        usize::MAX
    }
}

impl<B: Backend + ?Sized> Backend for &mut B {
    fn run(&mut self, batch: &mut DeviceBatch) -> Result<(), EvalError> {
        (**self).run(batch)
    }

    fn max_batch(&self) -> usize {
        (**self).max_batch()
    }
}

/// A [`Backend`] as an [`Evaluator`]: encodes, runs and decodes on the
/// calling thread (lockstep: the caller waits for the device).
pub struct BackendEvaluator<B> {
    /// The backend.
    pub backend: B,
    batch: DeviceBatch,
}

impl<B> BackendEvaluator<B> {
    /// Wraps `backend`.
    pub fn new(backend: B) -> Self {
        BackendEvaluator { backend, batch: DeviceBatch::default() }
    }
}

impl<G: GameState, B: Backend> Evaluator<G> for BackendEvaluator<B> {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        self.batch.clear::<G>();
        for (p, m) in positions.iter().zip(moves) {
            self.batch.push_row(*p, m);
        }
        out.resize_with(positions.len(), Evaluation::default);
        if positions.is_empty() {
            return Ok(());
        }
        self.backend.run(&mut self.batch)?;
        self.batch.wait_ready();
        self.batch.check_outputs()?;
        for (r, e) in out.iter_mut().enumerate() {
            self.batch.decode_row(r, e);
        }
        Ok(())
    }

    fn max_batch(&self) -> usize {
        self.backend.max_batch()
    }
}

/// What a [`SimulatedDevice`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimOutput {
    /// Logits and value from a hash of the input row: every position gets its
    /// own, deterministic, non-uniform priors and value.
    Hash,
    /// All logits 0 and (win, draw, loss) = (0, 1, 0): after the softmax
    /// exactly the [`crate::UniformEvaluator`]'s priors and value, so self-play
    /// plays the uniform evaluator's games (the same work, for comparing rates).
    Uniform,
}

/// How a [`SimulatedDevice`] spends a forward pass's time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimWait {
    /// The device's thread sleeps until the pass is done (the default): a
    /// timer wakes it for every pass, and on a machine whose cores are all
    /// busy that wake-up takes a core from another thread.
    Sleep,
    /// The device's thread returns at once with the instant the pass is done
    /// ([`DeviceBatch::ready_at`]; passes queue behind each other, as on one
    /// device) and the reader waits for it: no timer wake-up on the device's
    /// thread, as with a GPU's host thread that spins while it waits (CUDA's
    /// default when a process has fewer contexts than cores) on a core of its
    /// own. Only callers that honour `ready_at` may use it (the self-play
    /// drivers and [`BackendEvaluator`] do).
    Deadline,
}

/// A backend that behaves like an accelerator without one: each forward pass
/// (each chunk of at most `max_batch` rows) keeps the calling thread busy for
/// `batch_ms` milliseconds plus `per_position_us` microseconds per row, most of
/// it asleep (the CPU is free meanwhile, as with a GPU), and returns outputs
/// that are a cheap deterministic function of each row's input
/// ([`SimOutput`]), independent of the rest of the batch. Sleeping overshoots
/// by the timer slack (tens of microseconds per call). With `wait=deadline`
/// ([`SimWait::Deadline`]) the thread does not sleep: it returns at once and
/// the batch says when its outputs are back ([`DeviceBatch::ready_at`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SimulatedDevice {
    /// Fixed time per forward pass, milliseconds.
    pub batch_ms: f64,
    /// Time per position, microseconds.
    pub per_position_us: f64,
    /// Largest rows per forward pass; larger batches are split into passes.
    pub max_batch: usize,
    /// What the outputs are.
    pub output: SimOutput,
    /// Whether the device takes the softmax over each row's legal moves
    /// ([`DeviceBatch::softmax_on_device`], as the network's CUDA backend
    /// does; the default) or returns raw logits for the host to decode
    /// (`softmax=host`, the host work of a backend without it). The priors
    /// are the same, bit for bit ([`softmax_in_place`] either way).
    pub softmax_on_device: bool,
    /// How a pass's time is spent ([`SimWait`]).
    pub wait: SimWait,
    /// With [`SimWait::Deadline`]: when the last pass handed out is done.
    busy_until: Option<Instant>,
}

impl SimulatedDevice {
    /// Parses `batch_ms=A,per_position_us=B[,max_batch=N][,output=hash|uniform][,softmax=device|host][,wait=sleep|deadline]`
    /// (any order; `max_batch` defaults to `usize::MAX`, `output` to `hash`,
    /// `softmax` to `device`, `wait` to `sleep`).
    ///
    /// # Errors
    /// A message naming the unknown key, the bad value, or a key given twice.
    pub fn parse(spec: &str) -> Result<SimulatedDevice, String> {
        let mut d = SimulatedDevice {
            batch_ms: 0.0,
            per_position_us: 0.0,
            max_batch: usize::MAX,
            output: SimOutput::Hash,
            softmax_on_device: true,
            wait: SimWait::Sleep,
            busy_until: None,
        };
        let (mut a, mut b) = (false, false);
        let mut seen: Vec<&str> = Vec::new();
        for item in spec.split(',').map(str::trim).filter(|_| !spec.trim().is_empty()) {
            if item.is_empty() {
                return Err(format!("simulated device: an empty item in {spec:?} (two commas, or one at an end?)"));
            }
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("simulated device: {item:?} is not key=value (e.g. batch_ms=2)"))?;
            let k = k.trim();
            if seen.contains(&k) {
                return Err(format!("simulated device: {k:?} is given twice in {spec:?}"));
            }
            seen.push(k);
            let num = |v: &str| -> Result<f64, String> {
                v.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0 && *x <= 60_000.0)
                    .ok_or_else(|| format!("simulated device: {k} must be a number of 0..=60000, got {v:?}"))
            };
            match k {
                "batch_ms" => (d.batch_ms, a) = (num(v)?, true),
                "per_position_us" => (d.per_position_us, b) = (num(v)?, true),
                "max_batch" => {
                    d.max_batch = v
                        .trim()
                        .parse::<usize>()
                        .ok()
                        .filter(|&n| n >= 1)
                        .ok_or_else(|| format!("simulated device: max_batch must be an integer >= 1, got {v:?}"))?
                }
                "output" => {
                    d.output = match v.trim() {
                        "hash" => SimOutput::Hash,
                        "uniform" => SimOutput::Uniform,
                        o => return Err(format!("simulated device: output must be hash or uniform, got {o:?}")),
                    }
                }
                "softmax" => {
                    d.softmax_on_device = match v.trim() {
                        "device" => true,
                        "host" => false,
                        o => return Err(format!("simulated device: softmax must be device or host, got {o:?}")),
                    }
                }
                "wait" => {
                    d.wait = match v.trim() {
                        "sleep" => SimWait::Sleep,
                        "deadline" => SimWait::Deadline,
                        o => return Err(format!("simulated device: wait must be sleep or deadline, got {o:?}")),
                    }
                }
                other => {
                    return Err(format!(
                    "simulated device: unknown key {other:?} (expected batch_ms, per_position_us, max_batch, output, softmax, wait)"
                ))
                }
            }
        }
        if !(a && b) {
            return Err(format!("simulated device: give batch_ms and per_position_us, got {spec:?}"));
        }
        Ok(d)
    }

    /// The device as a spec that [`SimulatedDevice::parse`] reads back to an
    /// equal device, every key written (`max_batch` left out when unlimited):
    /// for reports and JSON figures.
    pub fn spec(&self) -> String {
        let mut s = format!("batch_ms={},per_position_us={}", self.batch_ms, self.per_position_us);
        if self.max_batch != usize::MAX {
            s.push_str(&format!(",max_batch={}", self.max_batch));
        }
        let output = match self.output {
            SimOutput::Hash => "hash",
            SimOutput::Uniform => "uniform",
        };
        let softmax = if self.softmax_on_device { "device" } else { "host" };
        let wait = match self.wait {
            SimWait::Sleep => "sleep",
            SimWait::Deadline => "deadline",
        };
        s + &format!(",output={output},softmax={softmax},wait={wait}")
    }

    /// Simulated time of one forward pass of `rows` rows.
    pub fn pass_time(&self, rows: usize) -> Duration {
        Duration::from_secs_f64((self.batch_ms * 1e3 + self.per_position_us * rows as f64) * 1e-6)
    }
}

/// Hash of a packed input row: each plane's mask and value bits mixed with
/// the plane's index (cheap, so that the simulated device spends little CPU).
fn row_hash(row: &[PackedPlane]) -> u64 {
    let mut h = 0x9e37_79b9_7f4a_7c15u64;
    for (i, p) in row.iter().enumerate() {
        let v = u64::from(if p.mask == 0 { 0 } else { p.value.to_bits() });
        h = mix64(h ^ (p.mask as u64) ^ ((p.mask >> 64) as u64).rotate_left(17) ^ (v << 7) ^ i as u64);
    }
    h
}

impl Backend for SimulatedDevice {
    fn run(&mut self, batch: &mut DeviceBatch) -> Result<(), EvalError> {
        let len = batch.planes_per_row();
        batch.check_inputs().map_err(|e| EvalError(format!("simulated device: {}", e.0)))?;
        batch.logits.clear();
        batch.wdl.clear();
        batch.values.clear();
        batch.value_width = 0;
        batch.score.clear();
        batch.softmax_on_device = self.softmax_on_device;
        batch.ready_at = None;
        batch.device_seconds = None;
        let entry = Instant::now();
        let mut busy = Duration::ZERO;
        let mut start = 0;
        while start < batch.rows {
            let end = (start + self.max_batch).min(batch.rows);
            let pass = self.pass_time(end - start);
            busy += pass;
            let deadline = (self.wait == SimWait::Sleep).then(|| Instant::now() + pass);
            for r in start..end {
                let moves = &batch.actions[batch.offsets[r]..batch.offsets[r + 1]];
                let l0 = batch.logits.len();
                match self.output {
                    // All logits 0; their softmax is exactly `1 / n` each
                    // (exp(0) = 1, and n is exact in f32).
                    SimOutput::Uniform if self.softmax_on_device => {
                        batch.logits.resize(l0 + moves.len(), 1.0 / moves.len().max(1) as f32);
                        batch.wdl.extend_from_slice(&[0.0, 1.0, 0.0]);
                        continue;
                    }
                    SimOutput::Uniform => {
                        batch.logits.resize(l0 + moves.len(), 0.0);
                        batch.wdl.extend_from_slice(&[0.0, 1.0, 0.0]);
                    }
                    SimOutput::Hash => {
                        let h = row_hash(&batch.planes[r * len..(r + 1) * len]);
                        let unit = |y: u64| (y >> 40) as f32 / (1u64 << 24) as f32;
                        batch.logits.extend(moves.iter().map(|&a| 2.0 * unit(mix64(h ^ u64::from(a))) - 1.0));
                        let v = 1.6 * unit(mix64(!h)) - 0.8;
                        batch.wdl.extend_from_slice(&[(0.9 + v) / 2.0, 0.1, (0.9 - v) / 2.0]);
                    }
                }
                if self.softmax_on_device {
                    softmax_in_place(&mut batch.logits[l0..]);
                }
            }
            if let Some(d) = deadline {
                let now = Instant::now();
                if d > now {
                    std::thread::sleep(d - now);
                }
            }
            start = end;
        }
        if self.wait == SimWait::Deadline {
            // The passes start when the device is free (one device: first
            // in, first out) and take their simulated time from then.
            let ready = self.busy_until.map_or(entry, |t| t.max(entry)) + busy;
            self.busy_until = Some(ready);
            batch.ready_at = Some(ready);
            batch.device_seconds = Some(busy.as_secs_f64());
        }
        Ok(())
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UniformEvaluator;
    use martian_rules::jetan::{Jetan, JetanRules};

    fn start_and_moves() -> (Jetan, Vec<Move>) {
        let s = Jetan::new_game(&JetanRules::default()).unwrap();
        let mut m = Vec::new();
        s.legal_moves(&mut m);
        (s, m)
    }

    /// The start position after its legal move `k`, with its legal moves.
    fn after_move(k: usize) -> (Jetan, Vec<Move>) {
        let (mut t, m) = start_and_moves();
        t.play_unchecked(m[k]);
        let mut tm = Vec::new();
        t.legal_moves(&mut tm);
        (t, tm)
    }

    #[test]
    fn parse_reads_keys_and_names_errors() {
        let d = SimulatedDevice::parse("batch_ms=2.5, per_position_us=10,max_batch=64,output=uniform").unwrap();
        assert_eq!((d.batch_ms, d.per_position_us, d.max_batch, d.output), (2.5, 10.0, 64, SimOutput::Uniform));
        assert_eq!(d.pass_time(100), Duration::from_micros(3500));
        assert!(SimulatedDevice::parse("batch_ms=1").unwrap_err().contains("per_position_us"));
        assert!(SimulatedDevice::parse("batch_ms=1,per_position_us=1,speed=3").unwrap_err().contains("\"speed\""));
        assert!(SimulatedDevice::parse("batch_ms=-1,per_position_us=1").unwrap_err().contains("batch_ms"));
        let twice = SimulatedDevice::parse("batch_ms=1,per_position_us=1,softmax=host,softmax=device").unwrap_err();
        assert!(twice.contains("\"softmax\" is given twice"), "{twice}");
        assert!(SimulatedDevice::parse("batch_ms=1,per_position_us=1,max_batch=0").unwrap_err().contains("max_batch"));
        assert!(SimulatedDevice::parse("batch_ms").unwrap_err().contains("key=value"));
        for spec in [
            "batch_ms=0.1,,per_position_us=0.5",
            "batch_ms=0.1,per_position_us=0.5,",
            ",batch_ms=0.1,per_position_us=0.5",
        ] {
            assert!(SimulatedDevice::parse(spec).unwrap_err().contains("empty item"), "{spec}");
        }
        assert!(SimulatedDevice::parse(" ").unwrap_err().contains("give batch_ms and per_position_us"));
        assert!(!SimulatedDevice::parse("batch_ms=1,per_position_us=1,softmax=host").unwrap().softmax_on_device);
        assert!(SimulatedDevice::parse("batch_ms=1,per_position_us=1").unwrap().softmax_on_device);
        assert!(SimulatedDevice::parse("batch_ms=1,per_position_us=1,softmax=gpu")
            .unwrap_err()
            .contains("device or host"));
    }

    #[test]
    fn uniform_output_decodes_to_the_uniform_evaluator_exactly() {
        let (s, m) = start_and_moves();
        let mut b = Vec::new();
        UniformEvaluator.evaluate(&[&s, &s], &[&m, &m], &mut b).unwrap();
        // The simulated rows' value head is (win, draw, loss) = (0, 1, 0): value
        // 0 as the uniform evaluator's, and a draw probability of 1 (which only
        // a search with contempt reads).
        b.iter_mut().for_each(|e| e.draw = 1.0);
        for softmax in ["device", "host"] {
            let spec = format!("batch_ms=0,per_position_us=0,output=uniform,softmax={softmax}");
            let mut ev = BackendEvaluator::new(SimulatedDevice::parse(&spec).unwrap());
            let mut a = Vec::new();
            Evaluator::<Jetan>::evaluate(&mut ev, &[&s, &s], &[&m, &m], &mut a).unwrap();
            assert_eq!(a, b, "softmax on the {softmax}");
            assert_eq!(ev.batch.softmax_on_device, softmax == "device");
        }
    }

    #[test]
    fn the_softmax_on_the_device_gives_the_host_decodes_priors_bit_for_bit() {
        let (s, m) = start_and_moves();
        let (t, tm) = after_move(5);
        let run = |spec: &str| {
            let mut ev = BackendEvaluator::new(SimulatedDevice::parse(spec).unwrap());
            let mut out = Vec::new();
            Evaluator::<Jetan>::evaluate(&mut ev, &[&s, &t], &[&m, &tm], &mut out).unwrap();
            out
        };
        let device = run("batch_ms=0,per_position_us=0,output=hash");
        let host = run("batch_ms=0,per_position_us=0,output=hash,softmax=host");
        assert_eq!(device, host);
        assert!(device[0].priors.iter().any(|&x| (x - device[0].priors[0]).abs() > 1e-4), "priors are not uniform");
    }

    #[test]
    fn prefetch_outputs_is_a_hint_for_any_row() {
        let (s, m) = start_and_moves();
        let mut b = DeviceBatch::default();
        b.clear::<Jetan>();
        // An empty batch, and rows past the end: nothing happens.
        b.prefetch_outputs(0);
        b.prefetch_outputs(usize::MAX);
        b.push_row(&s, &m);
        SimulatedDevice::parse("batch_ms=0,per_position_us=0,output=hash").unwrap().run(&mut b).unwrap();
        let mut before = Evaluation::default();
        b.decode_row(0, &mut before);
        b.prefetch_outputs(0);
        b.prefetch_outputs(1);
        let mut after = Evaluation::default();
        b.decode_row(0, &mut after);
        assert_eq!(before.priors, after.priors);
        assert_eq!(before.value, after.value);
    }

    #[test]
    fn decode_row_of_device_priors_copies_them_and_falls_back_to_uniform() {
        let mut b = DeviceBatch {
            rows: 2,
            offsets: vec![0, 2, 5],
            logits: vec![0.25, 0.75, f32::NAN, 0.5, 0.5],
            wdl: vec![0.5, 0.25, 0.25, 0.0, 1.0, 0.0],
            softmax_on_device: true,
            ..DeviceBatch::default()
        };
        let mut e = Evaluation::default();
        b.decode_row(0, &mut e);
        assert_eq!((e.priors.as_slice(), e.value), ([0.25, 0.75].as_slice(), 0.25));
        b.decode_row(1, &mut e);
        assert_eq!(e.priors, vec![1.0 / 3.0; 3], "a row that is not finite is uniform");
        // The same numbers as logits are a softmax.
        b.softmax_on_device = false;
        b.decode_row(0, &mut e);
        let want = 1.0 / (1.0 + 0.5f32.exp());
        assert!((e.priors[0] - want).abs() < 1e-6, "{:?}", e.priors);
    }

    #[test]
    fn hash_output_depends_on_the_position_only_and_takes_its_time() {
        let (s, m) = start_and_moves();
        let (t, tm) = after_move(3);
        let dev = SimulatedDevice::parse("batch_ms=3,per_position_us=500,max_batch=2").unwrap();
        let mut ev = BackendEvaluator::new(dev);
        let mut one = Vec::new();
        Evaluator::<Jetan>::evaluate(&mut ev, &[&s], &[&m], &mut one).unwrap();
        let t0 = Instant::now();
        let mut three = Vec::new();
        Evaluator::<Jetan>::evaluate(&mut ev, &[&t, &s, &t], &[&tm, &m, &tm], &mut three).unwrap();
        // Two passes (max_batch 2): 2 x 3 ms + 3 x 0.5 ms.
        assert!(t0.elapsed() >= Duration::from_micros(7500), "{:?}", t0.elapsed());
        assert_eq!(three[1], one[0], "the same position gets the same output in another batch");
        assert_eq!(three[0], three[2]);
        assert_ne!(three[0].value, one[0].value);
        let p = &one[0].priors;
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!(p.iter().any(|&x| (x - p[0]).abs() > 1e-4), "priors are not uniform");
        assert!(one[0].value.abs() <= 0.8);
    }

    /// `wait=deadline`: the device's thread returns at once, the batch says
    /// when its outputs are back (passes queue one after another, each taking
    /// its simulated time), the outputs are those of `wait=sleep`, and
    /// [`BackendEvaluator`] waits for them.
    #[test]
    fn deadline_wait_returns_at_once_and_queues_the_passes() {
        assert_eq!(SimulatedDevice::parse("batch_ms=1,per_position_us=1").unwrap().wait, SimWait::Sleep);
        for spec in [
            "batch_ms=0.05,per_position_us=0.2,output=uniform,wait=deadline",
            "batch_ms=2,per_position_us=5,max_batch=64,softmax=host",
            "per_position_us=0,batch_ms=0",
        ] {
            let d = SimulatedDevice::parse(spec).unwrap();
            assert_eq!(SimulatedDevice::parse(&d.spec()).unwrap(), d, "{spec} -> {}", d.spec());
        }
        assert_eq!(
            SimulatedDevice::parse("batch_ms=0.05,per_position_us=0.2,wait=deadline").unwrap().spec(),
            "batch_ms=0.05,per_position_us=0.2,output=hash,softmax=device,wait=deadline"
        );
        let e = SimulatedDevice::parse("batch_ms=1,per_position_us=1,wait=soon").unwrap_err();
        assert!(e.contains("wait must be sleep or deadline"), "{e}");
        let (s, m) = start_and_moves();
        let (t, tm) = after_move(2);
        let batch = || {
            let mut b = DeviceBatch::default();
            b.clear::<Jetan>();
            b.push_row(&s, &m);
            b.push_row(&t, &tm);
            b
        };
        // Two rows in passes of one (max_batch 1): 2 x (2 s + 0.05 s) per batch.
        let mut dev = SimulatedDevice::parse("batch_ms=2000,per_position_us=50000,max_batch=1,wait=deadline").unwrap();
        let t0 = Instant::now();
        let mut a = batch();
        dev.run(&mut a).unwrap();
        let mut b = batch();
        dev.run(&mut b).unwrap();
        let back = Instant::now();
        let per_batch = Duration::from_millis(4100);
        assert!(back - t0 < per_batch, "returned without sleeping");
        let (ra, rb) = (a.ready_at.unwrap(), b.ready_at.unwrap());
        assert!(ra >= t0 + per_batch && ra <= back + per_batch, "the first batch's passes");
        let close = |x: Duration, y: Duration| x.abs_diff(y) < Duration::from_micros(1);
        assert!(close(rb - ra, per_batch), "the second batch queues behind the first: {:?}", rb - ra);
        for d in [a.device_seconds, b.device_seconds] {
            assert!((d.unwrap() - 4.1).abs() < 1e-6, "{d:?}");
        }
        assert!(a.is_pending());
        let mut slept = batch();
        SimulatedDevice::parse("batch_ms=0,per_position_us=0,max_batch=1").unwrap().run(&mut slept).unwrap();
        assert_eq!((slept.ready_at, slept.device_seconds), (None, None));
        assert_eq!((&a.logits, &a.wdl), (&slept.logits, &slept.wdl), "the same outputs");
        // A past deadline is no wait; a near one is waited for.
        a.ready_at = Some(Instant::now());
        assert_eq!(a.wait_ready(), Duration::ZERO);
        assert!(!a.is_pending() && a.ready_at.is_none());
        let mut ev =
            BackendEvaluator::new(SimulatedDevice::parse("batch_ms=30,per_position_us=0,wait=deadline").unwrap());
        let t1 = Instant::now();
        let mut out = Vec::new();
        Evaluator::<Jetan>::evaluate(&mut ev, &[&s], &[&m], &mut out).unwrap();
        assert!(t1.elapsed() >= Duration::from_millis(30), "the evaluator waits for the outputs");
        assert_eq!(out.len(), 1);
    }

    #[test]
    fn rows_written_into_row_buffers_equal_push_row() {
        let (s, m) = start_and_moves();
        let mut a = DeviceBatch::default();
        a.clear::<Jetan>();
        a.push_row(&s, &m);
        a.push_row(&s, &m[..3]);
        // The overlapped driver's way: the rows sized first, then their
        // action indices and planes written in place into reused buffers
        // longer than the batch (stale entries from an earlier batch).
        let mut b = DeviceBatch {
            planes: vec![PackedPlane::filled(100, 9.0); 3 * 24],
            actions: vec![77; 500],
            ..Default::default()
        };
        b.clear_for_rows::<Jetan>();
        let acts: Vec<u32> = m.iter().map(|&mv| s.action_index(mv) as u32).collect();
        assert_eq!(b.push_row_len(acts.len()), 0);
        assert_eq!(b.push_row_len(3), 1);
        let (actions, planes) = b.row_buffers();
        assert_eq!((actions.len(), planes.len()), (acts.len() + 3, 48));
        actions[..acts.len()].copy_from_slice(&acts);
        actions[acts.len()..].copy_from_slice(&acts[..3]);
        for row in planes.chunks_mut(24) {
            s.encode_packed(row);
        }
        assert_eq!((b.rows, &b.offsets, &b.actions), (a.rows, &a.offsets, &a.actions));
        assert_eq!(b.planes[..48], a.planes[..48]);
        b.check_inputs().unwrap();
        // Rows whose planes were never made: the batch is refused, not sent.
        let mut c = DeviceBatch::default();
        c.clear::<Jetan>();
        c.push_row_actions(&acts);
        let err = c.check_inputs().unwrap_err().0;
        assert!(err.contains("0 input planes"), "{err}");
    }

    #[test]
    fn decode_is_a_softmax_over_the_rows_logits() {
        let mut b = DeviceBatch::default();
        b.clear::<Jetan>();
        b.rows = 2;
        b.offsets = vec![0, 3, 3];
        b.actions = vec![7, 8, 9];
        b.logits = vec![0.0, 1.0, 2.0];
        b.wdl = vec![0.5, 0.2, 0.3, 0.0, 0.0, 1.0];
        let mut e = Evaluation::default();
        b.decode_row(0, &mut e);
        let z = 1.0 + 1f32.exp() + 2f32.exp();
        for (p, l) in e.priors.iter().zip([0.0f32, 1.0, 2.0]) {
            assert!((p - l.exp() / z).abs() < 1e-6);
        }
        assert!((e.value - 0.2).abs() < 1e-6);
        b.decode_row(1, &mut e);
        assert!(e.priors.is_empty());
        assert_eq!(e.value, -1.0);
        b.logits = vec![f32::NAN, 0.0, 1.0];
        b.decode_row(0, &mut e);
        assert_eq!(e.priors, vec![1.0 / 3.0; 3]);
        b.logits.pop();
        assert!(b.check_outputs().unwrap_err().0.contains("2 policy logits for 3 legal moves"));
    }
}
