//! The network as an MCTS evaluator: [`NetBackend`] (the device side, a
//! [`Backend`]) and [`NetEvaluator`] (an [`Evaluator`] on the calling thread).
//!
//! A forward pass takes a batch of encoded positions as one
//! `[batch, planes, rows, cols]` float32 tensor, runs the network without
//! gradients, gathers on the device the policy logits of each position's
//! legal moves (`GameState::action_index`; only those are copied back, not the
//! `[batch, NUM_ACTIONS]` policy) and applies the softmax to the (win, draw,
//! loss) logits. The caller then takes a softmax over each position's legal
//! logits (legal-move masking) and `value = P(win) - P(loss)` for the side to
//! move ([`martian_search::DeviceBatch::decode_row`]).

use std::borrow::Borrow;
use std::marker::PhantomData;
use std::thread::ThreadId;

use martian_rules::{GameState, Move};
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
        let rows: &[f32] = if b > n {
            self.pad.clear();
            self.pad.extend_from_slice(&batch.input[start * plane..end * plane]);
            self.pad.resize(b * plane, 0.0);
            &self.pad
        } else {
            &batch.input[start * plane..end * plane]
        };
        let shape = [b as i64, c as i64, h as i64, w as i64];
        let t0 = std::time::Instant::now();
        let _guard = tch::no_grad_guard();
        let x = match self.device {
            Device::Cuda(_) => stage_pinned(&mut self.staging, rows, &shape, self.device)?,
            _ => Tensor::f_from_slice(rows)
                .and_then(|t| t.f_view(shape))
                .and_then(|t| t.f_to_device(self.device))
                .map_err(torch_err)?,
        };
        let net = self.reduced.as_ref().unwrap_or_else(|| self.net.borrow());
        let out = net.forward(&x, false);
        let idx = Tensor::f_from_slice(&self.flat).and_then(|t| t.f_to_device(self.device)).map_err(torch_err)?;
        let logits = out
            .policy_logits
            .f_reshape([-1])
            .and_then(|t| t.f_index_select(0, &idx))
            .and_then(|t| t.f_to_device(Device::Cpu))
            .and_then(|t| t.f_to_kind(Kind::Float))
            .map_err(torch_err)?;
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
        self.forward_seconds += t0.elapsed().as_secs_f64();
        self.batches += 1;
        self.positions += n as u64;
        Ok(())
    }
}

/// Copies `rows` into a pinned host buffer (allocated once, grown when
/// needed) and from there to `device` without blocking; returns the device
/// tensor of shape `shape`. The buffer is reused by the next pass only after
/// this pass's outputs were copied back (a blocking copy on the same stream),
/// so the asynchronous copy has finished by then.
fn stage_pinned(
    staging: &mut Option<Tensor>,
    rows: &[f32],
    shape: &[i64; 4],
    device: Device,
) -> Result<Tensor, EvalError> {
    let len = rows.len() as i64;
    if staging.as_ref().map(|t| t.numel() < rows.len()).unwrap_or(true) {
        let t = Tensor::f_zeros([len], (Kind::Float, Device::Cpu))
            .and_then(|t| t.f_pin_memory(device))
            .map_err(torch_err)?;
        *staging = Some(t);
    }
    let buf = staging.as_mut().expect("allocated above");
    let mut dst = buf.f_narrow(0, 0, len).map_err(torch_err)?;
    // SAFETY: `rows` is a live, initialised f32 slice of `len` elements for
    // the whole call; the tensor made over it is used only by the synchronous
    // host-to-host copy below and dropped before this function returns.
    let src = unsafe { Tensor::f_from_blob(rows.as_ptr().cast::<u8>(), &[len], &[], Kind::Float, Device::Cpu) }
        .map_err(torch_err)?;
    dst.f_copy_(&src).map_err(torch_err)?;
    drop(src);
    dst.f_view(*shape).and_then(|t| t.f_to_device_(device, Kind::Float, true, false)).map_err(torch_err)
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
        if batch.offsets.len() != batch.rows + 1 || batch.input.len() < batch.rows * batch.row_len() {
            return Err(EvalError(format!(
                "a batch of {} rows with {} offsets and {} input values",
                batch.rows,
                batch.offsets.len(),
                batch.input.len()
            )));
        }
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
