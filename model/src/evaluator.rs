//! The network as an MCTS evaluator: [`NetBackend`] (the device side, a
//! [`Backend`]) and [`NetEvaluator`] (an [`Evaluator`] on the calling thread).
//!
//! A forward pass takes a batch of encoded positions as one
//! `[batch, planes, rows, cols]` float32 tensor, runs the network without
//! gradients, gathers on the device the policy logits of each position's
//! legal moves (`GameState::action_index`; only those are copied back, not the
//! `[batch, NUM_ACTIONS]` policy) and applies the softmax to the (win, draw,
//! loss) logits. The softmax over each position's legal logits (legal-move
//! masking) runs on the device on CUDA ([`NetBackend::with_device_softmax`])
//! and on the host otherwise; the host then takes the priors and
//! `value = P(win) - P(loss)` for the side to move
//! ([`martian_search::DeviceBatch::decode_row`]).

use std::borrow::Borrow;
use std::marker::PhantomData;
use std::thread::ThreadId;

use martian_rules::{GameState, Move, PackedPlane};
use martian_search::{Backend, BackendEvaluator, DeviceBatch, EvalError, Evaluation, Evaluator};
use tch::{Device, Kind, Tensor};

use crate::error::ModelError;
use crate::precision::Precision;
use crate::resnet::PolicyValueNet;

fn torch_err(e: tch::TchError) -> EvalError {
    EvalError(e.to_string())
}

/// The network's forward pass as a [`Backend`]. `N` is the network: a
/// borrowed `&PolicyValueNet` (evaluation on the caller's thread), or an owned
/// [`crate::NetReplica`], which can move to a device thread (self-play on
/// several devices).
///
/// Buffers are reused between passes. On a CUDA device the input is staged in
/// pinned host memory and copied to the device without blocking; the policy
/// is gathered on the device, so per position only its legal moves' logits
/// (and 3 value probabilities) come back.
pub struct NetBackend<N> {
    net: N,
    /// The network's reduced-precision copy ([`NetBackend::with_precision`]);
    /// `None` in fp32, where `net` itself runs.
    reduced: Option<PolicyValueNet>,
    device: Device,
    max_batch: usize,
    fixed: bool,
    torch_threads: Option<usize>,
    threads_set_on: Option<ThreadId>,
    /// Zero-padded rows of a fixed-size pass.
    pad: Vec<f32>,
    /// Gather indices `row * NUM_ACTIONS + action` of one pass.
    flat: Vec<i64>,
    /// Pinned host staging buffer of the input (CUDA only), grown as needed.
    staging: Option<Tensor>,
    /// Take the softmax over each position's legal moves on the device
    /// ([`NetBackend::with_device_softmax`]; by default on CUDA only).
    device_softmax: bool,
    /// Forward passes run.
    pub batches: u64,
    /// Positions evaluated (padding rows not counted).
    pub positions: u64,
    /// Seconds spent in forward passes, including the host/device copies.
    pub forward_seconds: f64,
}

impl<N: Borrow<PolicyValueNet>> NetBackend<N> {
    /// The network `net` on `device` (where its variables are), at most
    /// `max_batch` positions per pass.
    pub fn new(net: N, device: Device, max_batch: usize) -> Self {
        NetBackend {
            net,
            reduced: None,
            device,
            max_batch: max_batch.max(1),
            fixed: false,
            torch_threads: None,
            threads_set_on: None,
            pad: Vec::new(),
            flat: Vec::new(),
            staging: None,
            device_softmax: matches!(device, Device::Cuda(_)),
            batches: 0,
            positions: 0,
            forward_seconds: 0.0,
        }
    }

    /// Every pass has exactly `batch` rows: a batch is split into chunks of
    /// `batch` positions and the last chunk is padded with zero planes. On the
    /// CPU with a fixed thread count libtorch then gives each position
    /// bit-identical outputs whatever the other rows hold or where the
    /// position sits in the batch (`model/tests/batch_invariance.rs`); with
    /// passes of varying size the outputs differ in the last bits.
    pub fn fixed(net: N, device: Device, batch: usize) -> Self {
        NetBackend { fixed: true, ..Self::new(net, device, batch) }
    }

    /// Sets libtorch's intra-op threads (`torch_threads`; 0 = all cores) on
    /// the thread that runs the passes, before its first pass: the setting
    /// is per thread for OpenMP, so a device thread would otherwise use all cores.
    pub fn with_torch_threads(mut self, threads: usize) -> Self {
        self.torch_threads = Some(threads);
        self
    }

    /// Runs the passes in precision `p` (`model.precision`): for bf16 or
    /// fp16, on a copy of the network whose convolution and linear weights
    /// are cast to `p` once ([`PolicyValueNet::inference_copy`]; the rule of
    /// [`crate::precision`]); the outputs stay float32. fp32 (the default)
    /// runs the network itself, bit for bit as before the setting existed.
    ///
    /// # Errors
    /// [`ModelError::Config`] for fp16 on a device other than CUDA.
    pub fn with_precision(mut self, p: Precision) -> Result<Self, ModelError> {
        p.check_device(self.device)?;
        self.reduced = (p != Precision::Fp32).then(|| self.net.borrow().inference_copy(p));
        Ok(self)
    }

    /// Whether the softmax over each position's legal moves runs on the
    /// device (`true`: the priors come back, [`DeviceBatch::softmax_on_device`],
    /// and the host's decode only copies them) or on the host (`false`: the
    /// legal moves' raw logits come back and `DeviceBatch::decode_row` takes
    /// the softmax). By default it runs on the device on CUDA, where it frees
    /// the CPU threads that keep a fast GPU fed (`docs/architecture.md`, "Batched inference"), and on the host on
    /// the CPU, where the host's softmax keeps self-play's priors bit for bit
    /// as they were (the two differ in the last bits: libtorch's `exp` is not
    /// the C library's; `model/tests` checks the difference is below 1e-6).
    pub fn with_device_softmax(mut self, on: bool) -> Self {
        self.device_softmax = on;
        self
    }

    /// The precision of the passes.
    pub fn precision(&self) -> Precision {
        self.reduced.as_ref().map(|n| n.precision()).unwrap_or(Precision::Fp32)
    }

    /// The device the passes run on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// One pass over rows `start..end` of `batch`; appends their gathered
    /// logits and (win, draw, loss) probabilities.
    fn run_chunk(&mut self, batch: &mut DeviceBatch, start: usize, end: usize) -> Result<(), EvalError> {
        let [c, h, w] = batch.shape;
        let plane = c * h * w;
        let n = end - start;
        let b = if self.fixed { self.max_batch.max(n) } else { n };
        let a = batch.num_actions;
        self.flat.clear();
        for r in start..end {
            let base = ((r - start) * a) as i64;
            self.flat.extend(batch.actions[batch.offsets[r]..batch.offsets[r + 1]].iter().map(|&x| base + x as i64));
        }
        let shape = [b as i64, c as i64, h as i64, w as i64];
        let t0 = std::time::Instant::now();
        let _guard = tch::no_grad_guard();
        let x = match self.device {
            // The packed planes go to the device (20 bytes a plane) and are
            // expanded there.
            Device::Cuda(_) => {
                let planes = &batch.planes[start * c..end * c];
                stage_packed(&mut self.staging, planes, b * c, self.device)
                    .and_then(|(masks, values)| expand_packed(&masks, &values, shape))?
            }
            // On the CPU the expansion is a loop into a reused buffer.
            _ => {
                self.pad.resize(b * plane, 0.0);
                batch.unpack_rows(start, end, &mut self.pad[..n * plane]);
                self.pad[n * plane..].fill(0.0);
                Tensor::f_from_slice(&self.pad)
                    .and_then(|t| t.f_view(shape))
                    .and_then(|t| t.f_to_device(self.device))
                    .map_err(torch_err)?
            }
        };
        let net = self.reduced.as_ref().unwrap_or_else(|| self.net.borrow());
        // The score head, when the network has one, for the search's score
        // lead and score utility (`Evaluation::score`); the moves-left head
        // is not computed.
        let out = if net.has_score_head() { net.forward_with_score(&x) } else { net.forward(&x, false) };
        let idx = Tensor::f_from_slice(&self.flat).and_then(|t| t.f_to_device(self.device)).map_err(torch_err)?;
        let logits = if self.device_softmax {
            // Legal-move masking on the device: every other action's logit
            // becomes -inf, the softmax runs per row, and only the legal
            // moves' priors are gathered (rows of padding are all -inf and
            // never gathered).
            let bias = Tensor::f_full([(b * a) as i64], f64::NEG_INFINITY, (Kind::Float, self.device))
                .and_then(|t| t.f_index_fill(0, &idx, 0.0))
                .map_err(torch_err)?;
            out.policy_logits
                .f_to_kind(Kind::Float)
                .and_then(|t| t.f_reshape([-1]))
                .and_then(|t| t.f_add(&bias))
                .and_then(|t| t.f_view([b as i64, a as i64]))
                .and_then(|t| t.f_softmax(-1, Kind::Float))
                .and_then(|t| t.f_reshape([-1]))
                .and_then(|t| t.f_index_select(0, &idx))
                .and_then(|t| t.f_to_device(Device::Cpu))
                .map_err(torch_err)?
        } else {
            out.policy_logits
                .f_reshape([-1])
                .and_then(|t| t.f_index_select(0, &idx))
                .and_then(|t| t.f_to_device(Device::Cpu))
                .and_then(|t| t.f_to_kind(Kind::Float))
                .map_err(torch_err)?
        };
        let l0 = batch.logits.len();
        batch.logits.resize(l0 + self.flat.len(), 0.0);
        logits.f_copy_data(&mut batch.logits[l0..], self.flat.len()).map_err(torch_err)?;
        if let Some(width) = net.vector_value_players() {
            // The vector head's `[b, n]` values (tanh already applied).
            let values = out
                .value_logits
                .f_to_device(Device::Cpu)
                .and_then(|t| t.f_to_kind(Kind::Float))
                .and_then(|t| t.f_contiguous())
                .map_err(torch_err)?;
            let v0 = batch.values.len();
            batch.values.resize(v0 + width * n, 0.0);
            values.f_copy_data(&mut batch.values[v0..], width * n).map_err(torch_err)?;
            batch.value_width = width;
        } else {
            let wdl = out
                .value_logits
                .f_softmax(-1, Kind::Float)
                .and_then(|t| t.f_to_device(Device::Cpu))
                .and_then(|t| t.f_contiguous())
                .map_err(torch_err)?;
            let v0 = batch.wdl.len();
            batch.wdl.resize(v0 + 3 * n, 0.0);
            // The first n rows of the `[b, 3]` probabilities (padding rows dropped).
            wdl.f_copy_data(&mut batch.wdl[v0..], 3 * n).map_err(torch_err)?;
            batch.value_width = 0;
        }
        if let Some(score) = &out.score {
            // `[b]` in units of `SCORE_SCALE` points; the first n rows, in points.
            let score = score
                .f_to_device(Device::Cpu)
                .and_then(|t| t.f_to_kind(Kind::Float))
                .and_then(|t| t.f_contiguous())
                .map_err(torch_err)?;
            let s0 = batch.score.len();
            batch.score.resize(s0 + n, 0.0);
            score.f_copy_data(&mut batch.score[s0..], n).map_err(torch_err)?;
            for s in &mut batch.score[s0..] {
                *s *= crate::SCORE_SCALE;
            }
        }
        self.forward_seconds += t0.elapsed().as_secs_f64();
        self.batches += 1;
        self.positions += n as u64;
        Ok(())
    }
}

/// Copies packed planes (`planes`, padded with empty planes to `len`) into
/// a pinned host buffer (allocated once, grown when needed) as `len x 3`
/// int64 words (mask bits 0-63, mask bits 64-127, the value's f32 bits) and
/// from there to `device` without blocking; returns the device's masks
/// (`[len, 2]` int64) and values (`[len]` float32). The buffer is reused by the
/// next pass only after this pass's outputs were copied back (a blocking copy
/// on the same stream), so the asynchronous copy has finished by then.
fn stage_packed(
    staging: &mut Option<Tensor>,
    planes: &[PackedPlane],
    len: usize,
    device: Device,
) -> Result<(Tensor, Tensor), EvalError> {
    let words = 3 * len;
    if staging.as_ref().map(|t| t.numel() < words).unwrap_or(true) {
        let t = Tensor::f_zeros([words as i64], (Kind::Int64, Device::Cpu))
            .and_then(|t| t.f_pin_memory(device))
            .map_err(torch_err)?;
        *staging = Some(t);
    }
    let buf = staging.as_mut().expect("allocated above");
    let host = buf.f_narrow(0, 0, words as i64).map_err(torch_err)?;
    // SAFETY: the pinned buffer is a contiguous int64 CPU tensor of at least
    // `words` elements, owned by `staging` for this whole call, and nothing
    // else reads or writes it until the copy below has been issued (the
    // previous pass's copy finished before its outputs were read back).
    let dst = unsafe { std::slice::from_raw_parts_mut(host.data_ptr().cast::<i64>(), words) };
    packed_words(planes, dst);
    let dev = host
        .f_view([len as i64, 3])
        .and_then(|t| t.f_to_device_(device, Kind::Int64, true, false))
        .map_err(torch_err)?;
    split_words(&dev)
}

/// Writes packed planes as int64 words, three per plane: mask bits 0-63,
/// mask bits 64-127, the value's f32 bits (sign-extended); planes past
/// `planes.len()` are empty (padding rows).
fn packed_words(planes: &[PackedPlane], dst: &mut [i64]) {
    for (k, d) in dst.chunks_exact_mut(3).enumerate() {
        let p = planes.get(k).copied().unwrap_or_default();
        d[0] = p.mask as u64 as i64;
        d[1] = (p.mask >> 64) as u64 as i64;
        d[2] = i64::from(p.value.to_bits() as i32);
    }
}

/// `[len, 3]` words -> (masks `[len, 2]` int64, values `[len]` float32).
fn split_words(words: &Tensor) -> Result<(Tensor, Tensor), EvalError> {
    let masks = words.f_narrow(1, 0, 2).map_err(torch_err)?;
    let values = words
        .f_select(1, 2)
        .and_then(|t| t.f_to_kind(Kind::Int))
        .and_then(|t| t.f_view_dtype(Kind::Float))
        .map_err(torch_err)?;
    Ok((masks, values))
}

/// Packed planes (padded with empty planes to `len`) on `device`, as the
/// masks (`[len, 2]` int64) and values (`[len]` float32) that
/// [`expand_packed`] takes, through an ordinary (not pinned) host tensor: the
/// same words the CUDA path stages in pinned memory.
///
/// # Errors
/// [`EvalError`] from libtorch.
pub fn packed_to_device(planes: &[PackedPlane], len: usize, device: Device) -> Result<(Tensor, Tensor), EvalError> {
    let mut words = vec![0i64; 3 * len];
    packed_words(planes, &mut words);
    let t = Tensor::f_from_slice(&words)
        .and_then(|t| t.f_view([len as i64, 3]))
        .and_then(|t| t.f_to_device(device))
        .map_err(torch_err)?;
    split_words(&t)
}

/// Expands packed planes on their device: `masks` (`[n, 2]` int64, the low
/// and high 64 bits of each plane's cell mask) and `values` (`[n]` float32)
/// become the float32 input `shape` = `[b, c, h, w]` with `n = b x c`:
/// cell `k` of plane `i` = `values[i]` if bit `k` of its mask is set, else 0
/// (the same floats as `DeviceBatch::unpack_rows`; `model/tests` checks it).
///
/// # Errors
/// [`EvalError`] from libtorch.
pub fn expand_packed(masks: &Tensor, values: &Tensor, shape: [i64; 4]) -> Result<Tensor, EvalError> {
    let cells = shape[2] * shape[3];
    let dev = masks.device();
    let shifts = Tensor::f_arange(64, (Kind::Int64, dev)).map_err(torch_err)?;
    let bits = |half: i64| {
        masks
            .f_select(1, half)
            .and_then(|m| m.f_unsqueeze(1))
            .and_then(|m| m.f_bitwise_right_shift(&shifts))
            .and_then(|m| m.f_bitwise_and(1))
    };
    let all = Tensor::f_cat(&[bits(0).map_err(torch_err)?, bits(1).map_err(torch_err)?], 1)
        .and_then(|t| t.f_narrow(1, 0, cells))
        .and_then(|t| t.f_to_kind(Kind::Float))
        .map_err(torch_err)?;
    all.f_mul(&values.f_unsqueeze(1).map_err(torch_err)?).and_then(|t| t.f_view(shape)).map_err(torch_err)
}

impl<N: Borrow<PolicyValueNet>> Backend for NetBackend<N> {
    fn run(&mut self, batch: &mut DeviceBatch) -> Result<(), EvalError> {
        let net = self.net.borrow();
        if batch.shape != net.input_shape() || batch.num_actions != net.num_actions() {
            return Err(EvalError(format!(
                "a batch of input shape {:?} and {} actions for a network of input shape {:?} and {} actions",
                batch.shape,
                batch.num_actions,
                net.input_shape(),
                net.num_actions()
            )));
        }
        batch.check_inputs()?;
        if let Some(t) = self.torch_threads {
            let me = std::thread::current().id();
            if self.threads_set_on != Some(me) {
                let n = if t == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) } else { t };
                tch::set_num_threads(n as i32);
                self.threads_set_on = Some(me);
            }
        }
        batch.logits.clear();
        batch.wdl.clear();
        batch.values.clear();
        batch.value_width = 0;
        batch.score.clear();
        batch.softmax_on_device = self.device_softmax;
        let mut start = 0;
        while start < batch.rows {
            let end = (start + self.max_batch).min(batch.rows);
            self.run_chunk(batch, start, end)?;
            start = end;
        }
        Ok(())
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }
}

/// The network as a batched evaluator for game `G` on the calling thread:
/// encodes, runs a [`NetBackend`] and decodes.
pub struct NetEvaluator<'a, G> {
    /// Boxed: the buffers make it a few hundred bytes.
    inner: Box<BackendEvaluator<NetBackend<&'a PolicyValueNet>>>,
    _game: PhantomData<G>,
}

impl<'a, G: GameState> NetEvaluator<'a, G> {
    /// An evaluator running `net` on `device`, at most `max_batch` positions per pass.
    pub fn new(net: &'a PolicyValueNet, device: Device, max_batch: usize) -> Self {
        NetEvaluator {
            inner: Box::new(BackendEvaluator::new(NetBackend::new(net, device, max_batch))),
            _game: PhantomData,
        }
    }

    /// An evaluator whose every forward pass has exactly `batch` rows
    /// ([`NetBackend::fixed`]). Self-play used it so that a game's moves depend
    /// only on its seed, id and network.
    pub fn fixed(net: &'a PolicyValueNet, device: Device, batch: usize) -> Self {
        NetEvaluator {
            inner: Box::new(BackendEvaluator::new(NetBackend::fixed(net, device, batch))),
            _game: PhantomData,
        }
    }

    /// Runs the passes in precision `p` ([`NetBackend::with_precision`]).
    ///
    /// # Errors
    /// [`ModelError::Config`] for fp16 on a device other than CUDA.
    pub fn with_precision(self, p: Precision) -> Result<Self, ModelError> {
        let inner = Box::new(BackendEvaluator::new(self.inner.backend.with_precision(p)?));
        Ok(NetEvaluator { inner, _game: PhantomData })
    }

    /// The backend, with its counters (passes, positions, seconds).
    pub fn backend(&self) -> &NetBackend<&'a PolicyValueNet> {
        &self.inner.backend
    }
}

impl<G: GameState> Evaluator<G> for NetEvaluator<'_, G> {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        self.inner.evaluate(positions, moves, out)
    }

    fn max_batch(&self) -> usize {
        Evaluator::<G>::max_batch(&*self.inner)
    }
}
