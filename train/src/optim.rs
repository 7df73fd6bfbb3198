//! Optimizers written on tensors we own, so that their state can be saved with
//! a partial checkpoint and a killed training generation resumes to exactly
//! the weights of an uninterrupted one (tch's `nn::Optimizer` has no API to
//! read or write its state).
//!
//! * SGD with Nesterov momentum and L2 weight decay, in PyTorch's
//!   formulation of Sutskever et al. (2013), "On the importance of
//!   initialization and momentum in deep learning", eq. (3)-(4):
//!   `g += wd * p; b = mu * b + g; p -= lr * (g + mu * b)`.
//! * AdamW, Loshchilov & Hutter (2019), "Decoupled Weight Decay
//!   Regularization", Algorithm 2 (with Kingma & Ba's bias correction):
//!   `p *= 1 - lr * wd; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
//!   p -= lr * m_hat / (sqrt(v_hat) + eps)`.
//!
//! Gradient clipping is by the global L2 norm over all parameters (Pascanu et
//! al. 2013): `g *= max_norm / (norm + 1e-6)` when `norm > max_norm`.
//!
//! The state file is a safetensors file holding one tensor per parameter and
//! slot (`momentum/<name>`, `adam_m/<name>`, `adam_v/<name>`) plus a 1-element
//! `step` tensor (i64) counting updates; it is written through a temporary
//! name and a rename.

use std::collections::BTreeMap;
use std::path::Path;

use tch::{nn, Kind, Tensor};

use crate::config::{OptimizerKind, TrainConfig};

/// AdamW's first-moment decay (PyTorch's and tch's default).
pub const ADAM_BETA1: f64 = 0.9;
/// AdamW's second-moment decay (PyTorch's and tch's default).
pub const ADAM_BETA2: f64 = 0.999;
/// AdamW's denominator epsilon (PyTorch's and tch's default).
pub const ADAM_EPS: f64 = 1e-8;

/// Errors of the optimizer.
#[derive(Debug, thiserror::Error)]
pub enum OptimError {
    /// A libtorch error, with what was being done.
    #[error("{context}: {source}")]
    Torch {
        /// What failed.
        context: String,
        /// The libtorch error.
        source: tch::TchError,
    },
    /// A state file that does not fit the network or the optimizer.
    #[error("optimizer state {path}: {message}")]
    BadState {
        /// The state file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

fn torch(context: &str) -> impl FnOnce(tch::TchError) -> OptimError + '_ {
    move |source| OptimError::Torch { context: context.to_string(), source }
}

/// An optimizer over the trainable variables of a `VarStore`, with state
/// tensors that can be saved and loaded ([`Optimizer::save`], [`Optimizer::load`]).
pub struct Optimizer {
    kind: OptimizerKind,
    momentum: f64,
    weight_decay: f64,
    /// `(name, parameter)` sorted by name (a fixed order makes updates reproducible).
    params: Vec<(String, Tensor)>,
    /// Slot tensors, same order as `params`: momentum (SGD) or `m` (AdamW).
    slot1: Vec<Tensor>,
    /// AdamW's `v` (empty for SGD).
    slot2: Vec<Tensor>,
    /// Updates taken.
    step: i64,
}

impl Optimizer {
    /// An optimizer with zero state over `vs`'s trainable variables.
    ///
    /// # Errors
    /// A libtorch error allocating the state.
    pub fn new(vs: &nn::VarStore, cfg: &TrainConfig) -> Result<Optimizer, OptimError> {
        let vars: BTreeMap<String, Tensor> = vs.variables().into_iter().filter(|(_, t)| t.requires_grad()).collect();
        let params: Vec<(String, Tensor)> = vars.into_iter().collect();
        let zeros = |p: &Tensor| p.f_zeros_like().map_err(torch("allocating optimizer state"));
        let slot1 = params.iter().map(|(_, p)| zeros(p)).collect::<Result<Vec<_>, _>>()?;
        let slot2 = match cfg.optimizer {
            OptimizerKind::Adamw => params.iter().map(|(_, p)| zeros(p)).collect::<Result<Vec<_>, _>>()?,
            OptimizerKind::Sgd => Vec::new(),
        };
        Ok(Optimizer {
            kind: cfg.optimizer,
            momentum: cfg.momentum,
            weight_decay: cfg.weight_decay,
            params,
            slot1,
            slot2,
            step: 0,
        })
    }

    /// Updates taken so far (restored by [`Optimizer::load`]).
    pub fn steps(&self) -> i64 {
        self.step
    }

    /// Zeroes the gradients of every parameter.
    pub fn zero_grad(&mut self) {
        for (_, p) in &mut self.params {
            p.zero_grad();
        }
    }

    /// Global L2 norm of the gradients (0 for parameters without one).
    ///
    /// # Errors
    /// A libtorch error.
    pub fn grad_norm(&self) -> Result<f64, OptimError> {
        let _g = tch::no_grad_guard();
        let norms: Vec<Tensor> = self
            .params
            .iter()
            .map(|(_, p)| p.grad())
            .filter(|g| g.defined())
            .map(|g| g.f_norm().and_then(|n| n.f_to_kind(Kind::Double)))
            .collect::<Result<_, _>>()
            .map_err(torch("gradient norm"))?;
        if norms.is_empty() {
            return Ok(0.0);
        }
        let n = Tensor::f_stack(&norms, 0)
            .and_then(|t| t.f_square())
            .and_then(|t| t.f_sum(Kind::Double))
            .and_then(|t| t.f_double_value(&[]))
            .map_err(torch("gradient norm"))?;
        Ok(n.sqrt())
    }

    /// Multiplies every gradient by `factor` in place (the unscaling of fp16
    /// loss scaling: `factor = 1 / scale`) and returns whether all gradients
    /// are then finite (no infinity or NaN in any element).
    ///
    /// # Errors
    /// A libtorch error.
    pub fn unscale_grads(&mut self, factor: f64) -> Result<bool, OptimError> {
        let _g = tch::no_grad_guard();
        let mut bad = Vec::new();
        for (_, p) in &self.params {
            let mut g = p.grad();
            if !g.defined() {
                continue;
            }
            let _ = g.f_mul_scalar_(factor).map_err(torch("unscaling gradients"))?;
            bad.push(
                g.f_isfinite()
                    .and_then(|f| f.f_logical_not())
                    .and_then(|f| f.f_any())
                    .map_err(torch("checking gradients"))?,
            );
        }
        if bad.is_empty() {
            return Ok(true);
        }
        let any = Tensor::f_stack(&bad, 0)
            .and_then(|t| t.f_any())
            .and_then(|t| t.f_int64_value(&[]))
            .map_err(torch("checking gradients"))?;
        Ok(any == 0)
    }

    /// One update with learning rate `lr`: clips the gradients to global norm
    /// `clip` first when `clip > 0` (in place). Returns the gradient norm
    /// before clipping. The gradients are used as scratch space: call
    /// [`Optimizer::zero_grad`] before the next backward pass.
    ///
    /// Each update makes as few passes over a parameter as libtorch's
    /// in-place operations allow (AdamW: 9 passes, 2 temporaries), since the
    /// policy head of Jetan holds millions of weights.
    ///
    /// # Errors
    /// A libtorch error.
    pub fn step(&mut self, lr: f64, clip: f64) -> Result<f64, OptimError> {
        let norm = self.grad_norm()?;
        let scale = if clip > 0.0 && norm > clip { clip / (norm + 1e-6) } else { 1.0 };
        let _g = tch::no_grad_guard();
        self.step += 1;
        let t = self.step as f64;
        for i in 0..self.params.len() {
            let p = &mut self.params[i].1;
            let mut g = p.grad();
            if !g.defined() {
                continue;
            }
            if scale != 1.0 {
                let _ = g.f_mul_scalar_(scale).map_err(torch("clipping gradients"))?;
            }
            match self.kind {
                OptimizerKind::Sgd => {
                    let mu = self.momentum;
                    let e = torch("sgd update");
                    if self.weight_decay != 0.0 {
                        let _ = g.f_add_(&p.f_mul_scalar(self.weight_decay).map_err(torch("sgd"))?).map_err(e)?;
                    }
                    let b = &mut self.slot1[i];
                    let _ = b.f_mul_scalar_(mu).map_err(torch("sgd momentum"))?;
                    let _ = b.f_add_(&g).map_err(torch("sgd momentum"))?;
                    // Nesterov: p -= lr * (g + mu * b)
                    let _ = g.f_add_(&b.f_mul_scalar(mu).map_err(torch("sgd"))?).map_err(torch("sgd"))?;
                    let _ = g.f_mul_scalar_(lr).map_err(torch("sgd"))?;
                    let _ = p.f_sub_(&g).map_err(torch("sgd update"))?;
                }
                OptimizerKind::Adamw => {
                    if self.weight_decay != 0.0 {
                        let _ = p.f_mul_scalar_(1.0 - lr * self.weight_decay).map_err(torch("adamw decay"))?;
                    }
                    // m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2  (as lerps)
                    let _ = self.slot1[i].f_lerp_(&g, 1.0 - ADAM_BETA1).map_err(torch("adamw m"))?;
                    let g2 = g.f_square().map_err(torch("adamw v"))?;
                    let _ = self.slot2[i].f_lerp_(&g2, 1.0 - ADAM_BETA2).map_err(torch("adamw v"))?;
                    let bc1 = 1.0 - ADAM_BETA1.powf(t);
                    let bc2 = 1.0 - ADAM_BETA2.powf(t);
                    // p += m / d with d = -(sqrt(v / bc2) + eps) * bc1 / lr
                    let mut d = self.slot2[i].f_sqrt().map_err(torch("adamw"))?;
                    let _ = d.f_div_scalar_(bc2.sqrt()).map_err(torch("adamw"))?;
                    let _ = d.f_add_scalar_(ADAM_EPS).map_err(torch("adamw"))?;
                    let _ = d.f_mul_scalar_(-bc1 / lr).map_err(torch("adamw"))?;
                    let _ = p.f_addcdiv_(&self.slot1[i], &d).map_err(torch("adamw update"))?;
                }
            }
        }
        Ok(norm)
    }

    /// Writes the state (slots and step count) to `path` atomically.
    ///
    /// # Errors
    /// A libtorch or I/O error.
    pub fn save(&self, path: &Path) -> Result<(), OptimError> {
        self.save_with(path, None)
    }

    /// [`Optimizer::save`] with one more named tensor in the file (the
    /// trainer's loss-scaler state), read back by [`Optimizer::load_with`].
    ///
    /// # Errors
    /// A libtorch or I/O error.
    pub fn save_with(&self, path: &Path, extra: Option<(&str, Tensor)>) -> Result<(), OptimError> {
        let mut named: Vec<(String, Tensor)> = Vec::new();
        if let Some((name, t)) = extra {
            named.push((name.to_string(), t));
        }
        let (n1, n2) = self.slot_names();
        for (i, (name, _)) in self.params.iter().enumerate() {
            named.push((format!("{n1}/{name}"), self.slot1[i].shallow_clone()));
            if !self.slot2.is_empty() {
                named.push((format!("{n2}/{name}"), self.slot2[i].shallow_clone()));
            }
        }
        named.push(("step".into(), Tensor::from_slice(&[self.step])));
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let fname = path.file_name().and_then(|n| n.to_str()).unwrap_or("optim.safetensors");
        let tmp = dir.join(format!(".tmp-{}-{fname}", std::process::id()));
        let refs: Vec<(&str, &Tensor)> = named.iter().map(|(n, t)| (n.as_str(), t)).collect();
        Tensor::write_safetensors(&refs, &tmp).map_err(torch("writing optimizer state"))?;
        std::fs::rename(&tmp, path).map_err(|e| OptimError::BadState {
            path: path.display().to_string(),
            message: format!("renaming {}: {e}", tmp.display()),
        })
    }

    /// Restores the state written by [`Optimizer::save`]. Every slot tensor
    /// must be present with its parameter's shape; extra tensors are an error.
    ///
    /// # Errors
    /// [`OptimError::BadState`] naming the missing, unexpected or misshapen
    /// tensors; libtorch errors reading the file.
    pub fn load(&mut self, path: &Path) -> Result<(), OptimError> {
        self.load_with(path, None).map(|_| ())
    }

    /// [`Optimizer::load`], also accepting the tensor `extra` (written by
    /// [`Optimizer::save_with`]); returns it when the file has it.
    ///
    /// # Errors
    /// As [`Optimizer::load`].
    pub fn load_with(&mut self, path: &Path, extra: Option<&str>) -> Result<Option<Tensor>, OptimError> {
        let bad = |message: String| OptimError::BadState { path: path.display().to_string(), message };
        // The header first (byte ranges, dtypes): a damaged file is named, never read out of bounds.
        martian_model::checkpoint::read_safetensors_header(path).map_err(|e| bad(e.to_string()))?;
        let tensors = Tensor::read_safetensors(path).map_err(|e| bad(e.to_string()))?;
        let mut map: BTreeMap<String, Tensor> = tensors.into_iter().collect();
        let extra = extra.and_then(|name| map.remove(name));
        let step = map.remove("step").ok_or_else(|| bad("no `step` tensor".into()))?;
        let step = step.f_int64_value(&[0]).map_err(|e| bad(format!("bad `step` tensor: {e}")))?;
        let (n1, n2) = self.slot_names();
        let mut problems = Vec::new();
        let _g = tch::no_grad_guard();
        for i in 0..self.params.len() {
            let name = self.params[i].0.clone();
            let shape = self.params[i].1.size();
            for (slot, key) in [(1, format!("{n1}/{name}")), (2, format!("{n2}/{name}"))] {
                if slot == 2 && self.slot2.is_empty() {
                    continue;
                }
                match map.remove(&key) {
                    None => problems.push(format!("missing {key}")),
                    Some(t) if t.size() != shape => {
                        problems.push(format!("{key} has shape {:?}, parameter has {:?}", t.size(), shape))
                    }
                    // NaN or infinite moments would make every later step NaN: a damaged state.
                    Some(t) if t.isfinite().all().int64_value(&[]) == 0 => {
                        problems.push(format!("{key} holds values that are not finite (NaN or infinity)"))
                    }
                    Some(t) => {
                        let dst = if slot == 1 { &mut self.slot1[i] } else { &mut self.slot2[i] };
                        dst.f_copy_(&t).map_err(torch("restoring optimizer state"))?;
                    }
                }
            }
        }
        problems.extend(map.keys().map(|k| format!("unexpected {k}")));
        if !problems.is_empty() {
            return Err(bad(problems.join("; ")));
        }
        self.step = step;
        Ok(extra)
    }

    fn slot_names(&self) -> (&'static str, &'static str) {
        match self.kind {
            OptimizerKind::Sgd => ("momentum", "unused"),
            OptimizerKind::Adamw => ("adam_m", "adam_v"),
        }
    }
}
