//! Numeric precision of the network's passes (`[model] precision`).
//!
//! The rule (a manual autocast: tch's `autocast` works on CUDA only, and the
//! same rule must run on the CPU with bf16):
//!
//! * convolutions and linear layers compute in the reduced kind: their input,
//!   weight and bias are cast to it (`to_kind`, which is differentiable, so in
//!   training the gradients reach the fp32 weights), their output is cast back
//!   to fp32;
//! * batch normalisation, ReLU, the residual sums, global pooling's mean and
//!   max, the softmax / log-softmax of the heads and every loss stay in fp32;
//! * the master weights, the batch-norm statistics, the optimizer's state and
//!   every checkpoint and export stay fp32.
//!
//! This is the rule of PyTorch's `torch.autocast` for these layers
//! (convolutions and `linear` in the lower precision; `softmax`,
//! `log_softmax`, `batch_norm` statistics and losses in fp32; see PyTorch's
//! "Automatic Mixed Precision package" documentation, "Autocast Op
//! Reference"), with the cast back after each layer made explicit.
//!
//! fp16 needs loss scaling in training (a small gradient underflows in fp16;
//! `martian_train::LossScaler`), bf16 has fp32's exponent range and needs
//! none. fp16 runs on CUDA only: libtorch's CPU kernels for half-precision
//! convolutions are missing or slow, so a CPU device with fp16 is refused
//! ([`Precision::check_device`]).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use tch::{Device, Kind};

use crate::error::ModelError;

/// Precision of the convolutions and linear layers of the network's passes.
/// Written in configs as `"fp32"`, `"bf16"` or `"fp16"`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Everything in float32 (IEEE 754 binary32). The default.
    #[default]
    Fp32,
    /// bfloat16 (8 exponent bits, 7 mantissa bits) for convolutions and
    /// linear layers; CPU (AVX-512 BF16 / AMX where present) and CUDA.
    Bf16,
    /// IEEE 754 binary16 for convolutions and linear layers, with dynamic
    /// loss scaling in training; CUDA only.
    Fp16,
}

impl Precision {
    /// Every precision, in the order of [`Precision::NAMES`].
    pub const ALL: [Precision; 3] = [Precision::Fp32, Precision::Bf16, Precision::Fp16];

    /// The names configs use, in the order of [`Precision::ALL`].
    pub const NAMES: [&'static str; 3] = ["fp32", "bf16", "fp16"];

    /// The config name (`fp32`, `bf16`, `fp16`).
    pub fn name(self) -> &'static str {
        match self {
            Precision::Fp32 => "fp32",
            Precision::Bf16 => "bf16",
            Precision::Fp16 => "fp16",
        }
    }

    /// The libtorch kind the convolutions and linear layers compute in.
    pub fn kind(self) -> Kind {
        match self {
            Precision::Fp32 => Kind::Float,
            Precision::Bf16 => Kind::BFloat16,
            Precision::Fp16 => Kind::Half,
        }
    }

    /// Whether this is fp32 (for `skip_serializing_if`: a config or sidecar
    /// in fp32 is written without the key, as before the key existed).
    pub fn is_fp32(&self) -> bool {
        *self == Precision::Fp32
    }

    /// Whether training in this precision needs loss scaling (fp16 only).
    pub fn needs_loss_scaling(self) -> bool {
        self == Precision::Fp16
    }

    /// Checks that `device` can run this precision: fp16 needs CUDA.
    ///
    /// # Errors
    /// [`ModelError::Config`] naming the key and the device for fp16 on a non-CUDA device.
    pub fn check_device(self, device: Device) -> Result<(), ModelError> {
        if self == Precision::Fp16 && !matches!(device, Device::Cuda(_)) {
            return Err(ModelError::Config(format!(
                "model.precision = \"fp16\" needs a CUDA device, but the network runs on {device:?} \
                 (libtorch's half-precision CPU convolutions are missing or slow): use \"bf16\" on the CPU"
            )));
        }
        Ok(())
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Precision {
    type Err = String;

    /// Parses a config name.
    ///
    /// # Errors
    /// A message naming the key `model.precision`, the allowed values and the value given.
    fn from_str(s: &str) -> Result<Precision, String> {
        Precision::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("model.precision must be one of \"fp32\", \"bf16\", \"fp16\", got {s:?}"))
    }
}

impl<'de> Deserialize<'de> for Precision {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Precision, D::Error> {
        let s = String::deserialize(d)
            .map_err(|e| serde::de::Error::custom(format!("model.precision must be a string: {e}")))?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// How far the outputs of one pass over a set of positions are from a
/// reference pass over the same positions (e.g. bf16 against fp32), after
/// decoding ([`martian_search::DeviceBatch::decode_row`]: priors = softmax over
/// the legal moves' logits, value = `P(win) - P(loss)`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct OutputDifference {
    /// Positions compared.
    pub positions: usize,
    /// Mean over positions of `KL(reference || other)` of the priors over
    /// the legal moves, in nats: `sum_a p(a) (ln p(a) - ln q(a))`.
    pub mean_policy_kl: f64,
    /// Largest per-position policy KL, in nats.
    pub max_policy_kl: f64,
    /// Mean over positions of `|v_reference - v_other|` (values in `[-1, 1]`).
    pub mean_value_diff: f64,
    /// Largest per-position value difference.
    pub max_value_diff: f64,
}

/// Compares the outputs of two passes over the same rows: `reference` and
/// `other` must hold the same positions and legal moves (`offsets`, `rows`)
/// with their outputs (`logits`, `wdl`) filled by a backend. Probabilities
/// below 1e-30 count as 1e-30 in the logarithm of `q`, so that a prior that
/// underflows to 0 gives a large but finite KL.
///
/// # Errors
/// A message when the two batches do not hold the same rows and moves, or
/// a batch's outputs are missing.
pub fn compare_outputs(
    reference: &martian_search::DeviceBatch,
    other: &martian_search::DeviceBatch,
) -> Result<OutputDifference, String> {
    if reference.rows != other.rows || reference.offsets[..=reference.rows] != other.offsets[..=other.rows] {
        return Err(format!(
            "the two passes hold different positions ({} and {} rows, or other legal moves)",
            reference.rows, other.rows
        ));
    }
    reference.check_outputs().map_err(|e| format!("reference pass: {}", e.0))?;
    other.check_outputs().map_err(|e| format!("compared pass: {}", e.0))?;
    let (mut a, mut b) = (martian_search::Evaluation::default(), martian_search::Evaluation::default());
    let mut d = OutputDifference { positions: reference.rows, ..Default::default() };
    for r in 0..reference.rows {
        reference.decode_row(r, &mut a);
        other.decode_row(r, &mut b);
        let kl: f64 = a
            .priors
            .iter()
            .zip(&b.priors)
            .filter(|(p, _)| **p > 0.0)
            .map(|(&p, &q)| f64::from(p) * (f64::from(p).ln() - f64::from(q).max(1e-30).ln()))
            .sum::<f64>()
            .max(0.0);
        let dv = f64::from((a.value - b.value).abs());
        d.mean_policy_kl += kl;
        d.max_policy_kl = d.max_policy_kl.max(kl);
        d.mean_value_diff += dv;
        d.max_value_diff = d.max_value_diff.max(dv);
    }
    let n = reference.rows.max(1) as f64;
    d.mean_policy_kl /= n;
    d.mean_value_diff /= n;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use martian_search::DeviceBatch;

    fn batch(logits: Vec<f32>, wdl: Vec<f32>) -> DeviceBatch {
        DeviceBatch {
            shape: [1, 1, 1],
            num_actions: 4,
            rows: 2,
            planes: vec![martian_rules::PackedPlane::default(); 2],
            actions: vec![0, 1, 2, 0, 3],
            offsets: vec![0, 3, 5],
            logits,
            wdl,
            ..Default::default()
        }
    }

    #[test]
    fn differences_are_kl_and_value_gaps_by_hand() {
        let a = batch(vec![0.0, 0.0, 0.0, 1.0, 1.0], vec![0.5, 0.5, 0.0, 0.2, 0.2, 0.6]);
        let same = compare_outputs(&a, &a).unwrap();
        assert_eq!((same.positions, same.mean_policy_kl, same.max_value_diff), (2, 0.0, 0.0));
        // Row 0: q = softmax(0, 0, ln 2) = (1/4, 1/4, 1/2) against p uniform;
        // row 1 unchanged. Values: row 0 0.5 -> 0.3, row 1 -0.4 -> -0.4.
        let b = batch(vec![0.0, 0.0, 2f32.ln(), 1.0, 1.0], vec![0.4, 0.5, 0.1, 0.2, 0.2, 0.6]);
        let d = compare_outputs(&a, &b).unwrap();
        let kl0 = 2.0 / 3.0 * (4.0f64 / 3.0).ln() + 1.0 / 3.0 * (2.0f64 / 3.0).ln();
        assert!((d.max_policy_kl - kl0).abs() < 1e-6, "{d:?}");
        assert!((d.mean_policy_kl - kl0 / 2.0).abs() < 1e-6, "{d:?}");
        assert!((d.max_value_diff - 0.2).abs() < 1e-6 && (d.mean_value_diff - 0.1).abs() < 1e-6, "{d:?}");
        let mut c = a.clone();
        c.offsets = vec![0, 2, 5];
        assert!(compare_outputs(&a, &c).unwrap_err().contains("different positions"));
        c = a.clone();
        c.logits.pop();
        assert!(compare_outputs(&a, &c).unwrap_err().contains("compared pass"));
    }

    #[test]
    fn names_round_trip_and_a_bad_value_is_named() {
        for p in Precision::ALL {
            assert_eq!(p.name().parse::<Precision>().unwrap(), p);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
            assert_eq!(serde_json::from_str::<Precision>(&json).unwrap(), p);
        }
        let e = serde_json::from_str::<Precision>("\"fp8\"").unwrap_err().to_string();
        assert!(e.contains("model.precision") && e.contains("\"bf16\"") && e.contains("\"fp8\""), "{e}");
        let e = serde_json::from_str::<Precision>("16").unwrap_err().to_string();
        assert!(e.contains("model.precision"), "{e}");
        assert_eq!(Precision::default(), Precision::Fp32);
    }

    #[test]
    fn fp16_needs_cuda() {
        assert!(Precision::Fp32.check_device(Device::Cpu).is_ok());
        assert!(Precision::Bf16.check_device(Device::Cpu).is_ok());
        let e = Precision::Fp16.check_device(Device::Cpu).unwrap_err().to_string();
        assert!(e.contains("fp16") && e.contains("bf16") && e.contains("Cpu"), "{e}");
        assert!(Precision::Fp16.check_device(Device::Cuda(0)).is_ok());
    }
}
