//! `R/generations.jsonl`: what the pipeline measures once per generation,
//! in one place (one line per generation, rewritten atomically):
//!
//! * self-play throughput: games, positions, positions/s, network
//!   evaluations/s, and the policy targets' entropy and KL(target || network
//!   prior) over the positions played;
//! * a held-out check: the network the generation starts training from
//!   (generation `g - 1`) on a fixed-size slice of generation `g`'s fresh
//!   games, which it has never been trained on: policy and value loss,
//!   policy entropy, KL(target || network), value MSE and value calibration;
//! * the wall-clock time the generation finished.
//!
//! The report draws it; TensorBoard gets the same numbers
//! ([`crate::tensorboard`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use martian_model::ConfigModel;
use martian_rules::GameState;
use martian_selfplay::SelfplayStats;
use martian_train::loss::masked_logits;
use martian_train::{Batch, ReplayWindow};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use tch::{Device, Kind, Tensor};

use crate::checkpoints::load_checkpoint;
use crate::config::RunConfig;
use crate::io::{now_unix_s, write_atomic};
use crate::rundir::RunDir;

/// Positions of the held-out slice (the newest of the generation's games).
pub const HELDOUT_POSITIONS: usize = 1024;
/// Samples drawn (seeded, with replacement) from the slice for the check.
pub const HELDOUT_SAMPLES: usize = 512;
/// Bins of the value calibration over the predicted `P(win) - P(loss)` in `[-1, 1]`.
pub const CALIBRATION_BINS: usize = 10;

/// Self-play throughput of one generation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SelfplayMetrics {
    /// Games played.
    pub games: u64,
    /// Positions (moves) played.
    pub positions: u64,
    /// Network evaluations (positions sent to the network).
    pub nn_evals: u64,
    /// Wall-clock seconds of self-play.
    pub seconds: f64,
    /// Mean entropy of the policy targets, nats.
    pub target_entropy: f64,
    /// Mean KL(search target || network prior) at the root, nats.
    pub kl_target_net: f64,
}

impl SelfplayMetrics {
    /// Positions per second.
    pub fn positions_per_s(&self) -> f64 {
        self.positions as f64 / self.seconds.max(1e-9)
    }

    /// Network evaluations per second.
    pub fn nn_evals_per_s(&self) -> f64 {
        self.nn_evals as f64 / self.seconds.max(1e-9)
    }

    /// Adds a later part of the same generation's self-play (a resumed run).
    fn add(&mut self, o: &SelfplayMetrics) {
        let (a, b) = (self.positions as f64, o.positions as f64);
        let w = |x: f64, y: f64| if a + b > 0.0 { (x * a + y * b) / (a + b) } else { 0.0 };
        self.target_entropy = w(self.target_entropy, o.target_entropy);
        self.kl_target_net = w(self.kl_target_net, o.kl_target_net);
        self.games += o.games;
        self.positions += o.positions;
        self.nn_evals += o.nn_evals;
        self.seconds += o.seconds;
    }
}

impl From<&SelfplayStats> for SelfplayMetrics {
    fn from(st: &SelfplayStats) -> Self {
        let (entropy, _top, kl, _ln_legal) = st.targets.means();
        SelfplayMetrics {
            games: st.games,
            positions: st.moves,
            nn_evals: st.evaluations,
            seconds: st.seconds,
            target_entropy: entropy,
            kl_target_net: kl,
        }
    }
}

/// One bin of the value calibration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrationBin {
    /// Mean predicted `P(win) - P(loss)` of the positions in the bin.
    pub predicted: f64,
    /// Mean game result (+1 / 0 / -1 for the side to move) of those positions.
    pub outcome: f64,
    /// Positions in the bin.
    pub count: u32,
}

/// The held-out check of one generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Heldout {
    /// The network checked (generation `g - 1`).
    pub network: String,
    /// Samples drawn.
    pub samples: u32,
    /// Policy cross-entropy against the search targets, nats.
    pub policy_loss: f64,
    /// Value WDL cross-entropy, nats.
    pub value_loss: f64,
    /// Mean entropy of the network's policy over legal moves, nats.
    pub policy_entropy: f64,
    /// Mean KL(search target || network policy), nats.
    pub kl_target_net: f64,
    /// Mean squared error of `P(win) - P(loss)` against the result.
    pub value_mse: f64,
    /// Calibration bins (empty bins left out).
    pub calibration: Vec<CalibrationBin>,
}

/// One line of `generations.jsonl`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationMetrics {
    /// Generation.
    pub generation: u32,
    /// Self-play of this generation (played by the best network of generation `g - 1`).
    #[serde(default)]
    pub selfplay: Option<SelfplayMetrics>,
    /// The held-out check before training.
    #[serde(default)]
    pub heldout: Option<Heldout>,
    /// Unix time (s) the generation's gate finished.
    #[serde(default)]
    pub finished_unix_s: Option<f64>,
}

/// `R/generations.jsonl`.
pub fn path(root: &Path) -> PathBuf {
    root.join(crate::layout::GENERATIONS)
}

/// The lines of `R/generations.jsonl` by generation, for a reader of
/// history: what it leaves out (damaged lines, an
/// unreadable file) is noted in `skipped`.
pub fn read_reporting(root: &Path, skipped: &mut crate::records::Skipped) -> BTreeMap<u32, GenerationMetrics> {
    match crate::records::read_json_lines::<GenerationMetrics>(&path(root), "a generation summary") {
        Ok(l) => {
            let (all, bad) = by_generation(l);
            skipped.lines(&path(root), &bad);
            all
        }
        Err(e) => {
            skipped.file(&e);
            BTreeMap::new()
        }
    }
}

/// Seconds a generation of the run took so far: the median of the times
/// between consecutive generations' gates in `generations.jsonl` (the median,
/// so that a gap in which the run was stopped does not count); `None` with
/// fewer than two consecutive finished generations or an unreadable file
/// (the ETA of a resumed run's first generation, `pipeline`).
pub fn earlier_generation_seconds(root: &Path) -> Option<f64> {
    let lines = crate::records::read_json_lines::<GenerationMetrics>(&path(root), "a generation summary").ok()?;
    let (all, _) = by_generation(lines);
    let mut gaps: Vec<f64> = all
        .iter()
        .zip(all.iter().skip(1))
        .filter(|((g, _), (h, _))| **h == **g + 1)
        .filter_map(|((_, a), (_, b))| Some(b.finished_unix_s? - a.finished_unix_s?))
        .filter(|d| d.is_finite() && *d > 0.0)
        .collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    Some(gaps[gaps.len() / 2])
}

/// The summaries by generation, and the lines left out: the damaged ones
/// and a second line of a generation already read (the file holds one line
/// per generation; the first is kept, the repeat named, never dropped
/// silently).
fn by_generation(
    lines: crate::records::JsonLines<GenerationMetrics>,
) -> (BTreeMap<u32, GenerationMetrics>, Vec<crate::records::BadLine>) {
    let mut bad = lines.bad;
    let mut all: BTreeMap<u32, (usize, GenerationMetrics)> = BTreeMap::new();
    for (line, m) in lines.records {
        match all.get(&m.generation) {
            Some(&(first, _)) => bad.push(crate::records::BadLine {
                line,
                why: format!("repeats generation {} of line {first}; the first is kept", m.generation),
            }),
            None => {
                all.insert(m.generation, (line, m));
            }
        }
    }
    bad.sort_by_key(|b| b.line);
    (all.into_iter().map(|(g, (_, m))| (g, m)).collect(), bad)
}

/// Updates generation `g`'s line with `f` and rewrites the file atomically.
/// A file with damaged lines is first set aside (`generations.jsonl.damaged`,
/// with a warning): the rewrite holds its readable lines, the damaged bytes
/// stay for a look.
///
/// # Errors
/// A failed write, or an existing file that cannot be read (not rewritten).
pub fn update(root: &Path, g: u32, f: impl FnOnce(&mut GenerationMetrics)) -> Result<()> {
    let file = path(root);
    let lines = crate::records::read_json_lines_or_set_aside::<GenerationMetrics>(&file, "a generation summary")?;
    let (mut all, bad) = by_generation(lines);
    if !bad.is_empty() {
        let mut s = crate::records::Skipped::default();
        s.lines(&file, &bad);
        let aside = crate::io::set_aside(&file)?;
        eprintln!("warning: {}; the file is set aside as {}", s.notes()[0], aside.display());
    }
    let e = all.entry(g).or_insert_with(|| GenerationMetrics { generation: g, ..Default::default() });
    f(e);
    let mut text = String::new();
    for m in all.values() {
        text.push_str(&serde_json::to_string(m)?);
        text.push('\n');
    }
    write_atomic(&file, text.as_bytes())
}

/// Records self-play statistics of generation `g` (added to an earlier part).
///
/// # Errors
/// A failed write.
pub fn record_selfplay(root: &Path, g: u32, st: &SelfplayStats) -> Result<()> {
    let m = SelfplayMetrics::from(st);
    update(root, g, |e| match &mut e.selfplay {
        Some(old) => old.add(&m),
        None => e.selfplay = Some(m),
    })
}

/// The held-out check of generation `g`: network `g - 1` on up to
/// [`HELDOUT_POSITIONS`] of the newest `fresh` positions (the generation's
/// self-play samples, never trained on). `None` when there are too few.
///
/// # Errors
/// Checkpoint or libtorch errors.
pub fn heldout<G: GameState>(
    cfg: &RunConfig,
    rules: &G::Rules,
    run: &RunDir,
    g: u32,
    fresh: u64,
    device: Device,
) -> Result<Option<Heldout>> {
    let n_window = (fresh as usize).min(HELDOUT_POSITIONS);
    if n_window < 16 || g == 0 {
        return Ok(None);
    }
    let window = ReplayWindow::load(&run.shards(), n_window, G::INPUT_SHAPE, G::NUM_ACTIONS);
    let gens: Vec<u32> = window.files.iter().map(|p| martian_train::shard_generation(p)).collect();
    if window.len() < 16 || gens.iter().any(|&x| x != g) {
        return Ok(None);
    }
    let net_path = run.checkpoint(g - 1);
    let ck = load_checkpoint::<G>(&net_path, rules, ConfigModel::Fixed(&cfg.model), device)?;
    let mut rng = StdRng::seed_from_u64(0x4E1D_0000_u64 ^ g as u64);
    let mut b = Batch::default();
    window.fill_batch(&mut rng, HELDOUT_SAMPLES, None, &mut b);
    let mut h = heldout_batch(&ck.net, &b, G::INPUT_SHAPE, G::NUM_ACTIONS, device)?;
    h.network = net_path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
    Ok(Some(h))
}

/// The held-out measures of a batch under `net` (evaluation mode, no gradients).
fn heldout_batch(
    net: &martian_model::PolicyValueNet,
    b: &Batch,
    shape: [usize; 3],
    actions: usize,
    device: Device,
) -> Result<Heldout> {
    let _g = tch::no_grad_guard();
    let n = b.value.len() as i64;
    let [c, hh, w] = shape.map(|x| x as i64);
    let x = Tensor::f_from_slice(&b.planes)?.f_view([n, c, hh, w])?.f_to_device(device)?;
    let pt = Tensor::f_from_slice(&b.policy)?.f_view([n, actions as i64])?.f_to_device(device)?;
    let legal =
        Tensor::f_from_slice(&b.legal)?.f_view([n, actions as i64])?.f_to_device(device)?.f_to_kind(Kind::Bool)?;
    let out = net.forward(&x, false);
    let logits = masked_logits(&out.policy_logits, &legal);
    let logp = logits.log_softmax(-1, Kind::Float);
    let p = logp.exp();
    // Cross-entropy and KL over the target's support; entropy over legal moves.
    let ce = -(&pt * &logp).sum_dim_intlist(-1, false, Kind::Float);
    let target_h = -(&pt * pt.clamp_min(1e-12).log()).sum_dim_intlist(-1, false, Kind::Float);
    let net_h = -(&p * logp.masked_fill(&legal.logical_not(), 0.0)).sum_dim_intlist(-1, false, Kind::Float);
    // The training loss's value term (WDL cross-entropy, or the vector head's MSE).
    let vector = net.vector_value_players().is_some();
    let (value_loss, v) = martian_train::loss::value_terms(&out.value_logits, &b.value, &b.values, vector, device)?;
    let value_loss = value_loss.f_double_value(&[])?;
    let v = v.to_device(Device::Cpu);
    let v: Vec<f32> = Vec::<f32>::try_from(&v)?;
    let mse = v.iter().zip(&b.value).map(|(a, z)| ((a - z) as f64).powi(2)).sum::<f64>() / n as f64;
    Ok(Heldout {
        network: String::new(),
        samples: n as u32,
        policy_loss: ce.mean(Kind::Float).f_double_value(&[])?,
        value_loss,
        policy_entropy: net_h.mean(Kind::Float).f_double_value(&[])?,
        kl_target_net: (&ce - &target_h).mean(Kind::Float).f_double_value(&[])?,
        value_mse: mse,
        calibration: calibration(&v, &b.value),
    })
}

/// The global training step of generation `g`'s checkpoint (0 when unreadable):
/// the step axis of per-generation TensorBoard scalars.
fn step_of(run: &RunDir, g: u32) -> u64 {
    martian_model::Checkpoint::read_meta(&run.checkpoint(g)).map(|m| m.step).unwrap_or(0)
}

/// After generation `g`'s self-play (`st`): records the throughput, runs the
/// held-out check of network `g - 1` on the fresh games and sends both to
/// TensorBoard (at the step training starts from). Failures are warnings.
pub fn after_selfplay<G: GameState>(
    cfg: &RunConfig,
    rules: &G::Rules,
    run: &RunDir,
    g: u32,
    st: &SelfplayStats,
    device: Device,
) {
    let root = run.root();
    if let Err(e) = record_selfplay(root, g, st) {
        eprintln!("warning: {} not updated: {e:#}", path(root).display());
    }
    let step = step_of(run, g - 1);
    let sp = SelfplayMetrics::from(st);
    crate::tensorboard::log(
        root,
        step,
        &[
            ("selfplay/positions_per_s", sp.positions_per_s()),
            ("selfplay/nn_evals_per_s", sp.nn_evals_per_s()),
            ("selfplay/target_entropy", sp.target_entropy),
            ("selfplay/kl_target_net", sp.kl_target_net),
            ("selfplay/generation", g as f64),
        ],
    );
    match heldout::<G>(cfg, rules, run, g, st.samples, device) {
        Ok(Some(h)) => {
            crate::tensorboard::log(
                root,
                step,
                &[
                    ("heldout/policy_loss", h.policy_loss),
                    ("heldout/value_loss", h.value_loss),
                    ("heldout/policy_entropy", h.policy_entropy),
                    ("heldout/kl_target_net", h.kl_target_net),
                    ("heldout/value_mse", h.value_mse),
                ],
            );
            if let Err(e) = update(root, g, |m| m.heldout = Some(h)) {
                eprintln!("warning: {} not updated: {e:#}", path(root).display());
            }
        }
        Ok(None) => {}
        Err(e) => eprintln!("warning: held-out check of generation {g} skipped: {e:#}"),
    }
}

/// After generation `g`'s gate: the time it finished, and the gate's score,
/// Elo and promotion in TensorBoard.
pub fn after_gate(run: &RunDir, g: u32, m: &martian_evaluate::MatchResult, promoted: bool) {
    let root = run.root();
    if let Err(e) = update(root, g, |x| x.finished_unix_s = Some(now_unix_s())) {
        eprintln!("warning: {} not updated: {e:#}", path(root).display());
    }
    let mut v = vec![("gate/promoted", if promoted { 1.0 } else { 0.0 })];
    if let Some(e) = &m.elo {
        v.push(("gate/score", e.score));
        v.push(("gate/elo", e.elo));
    }
    crate::tensorboard::log(root, step_of(run, g), &v);
}

/// After a ladder match: the network's ladder Elo in TensorBoard.
pub fn after_ladder(run: &RunDir, rec: &crate::ladder::LadderRecord) {
    crate::tensorboard::log(
        run.root(),
        step_of(run, rec.generation),
        &[("elo/ladder", rec.rating.elo), ("elo/ladder_low", rec.rating.low), ("elo/ladder_high", rec.rating.high)],
    );
}

/// Bins predicted values in `[-1, 1]` into [`CALIBRATION_BINS`] equal bins:
/// mean prediction and mean outcome per non-empty bin.
pub fn calibration(predicted: &[f32], outcome: &[f32]) -> Vec<CalibrationBin> {
    let mut acc = vec![(0f64, 0f64, 0u32); CALIBRATION_BINS];
    for (&p, &z) in predicted.iter().zip(outcome) {
        if !p.is_finite() {
            continue;
        }
        let k = (((p as f64 + 1.0) / 2.0 * CALIBRATION_BINS as f64) as usize).min(CALIBRATION_BINS - 1);
        acc[k].0 += p as f64;
        acc[k].1 += z as f64;
        acc[k].2 += 1;
    }
    acc.into_iter()
        .filter(|a| a.2 > 0)
        .map(|(p, z, c)| CalibrationBin { predicted: p / c as f64, outcome: z / c as f64, count: c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The median gap between consecutive generations' gates: a gap that
    /// spans a stop and a missing generation do not count.
    #[test]
    fn earlier_generation_time_is_the_median_gap() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(earlier_generation_seconds(tmp.path()), None, "no file");
        update(tmp.path(), 1, |e| e.finished_unix_s = Some(100.0)).unwrap();
        assert_eq!(earlier_generation_seconds(tmp.path()), None, "one generation");
        // 1 -> 2: 60 s; 2 -> 3: 3,600 s (stopped for an hour); 3 -> 4: 70 s; 6 after a gap.
        for (g, t) in [(2, 160.0), (3, 3760.0), (4, 3830.0), (6, 9000.0)] {
            update(tmp.path(), g, |e| e.finished_unix_s = Some(t)).unwrap();
        }
        assert_eq!(earlier_generation_seconds(tmp.path()), Some(70.0));
    }

    #[test]
    fn lines_are_merged_by_generation_and_selfplay_parts_add_up() {
        let tmp = tempfile::tempdir().unwrap();
        let part = |games, positions, seconds, kl| SelfplayMetrics {
            games,
            positions,
            nn_evals: positions * 10,
            seconds,
            target_entropy: 1.0,
            kl_target_net: kl,
        };
        update(tmp.path(), 2, |e| e.selfplay = Some(part(10, 100, 1.0, 0.2))).unwrap();
        update(tmp.path(), 1, |e| e.finished_unix_s = Some(5.0)).unwrap();
        update(tmp.path(), 2, |e| e.selfplay.as_mut().unwrap().add(&part(30, 300, 3.0, 0.6))).unwrap();
        let mut skipped = crate::records::Skipped::default();
        let all = read_reporting(tmp.path(), &mut skipped);
        assert!(skipped.notes().is_empty());
        assert_eq!(all.keys().copied().collect::<Vec<_>>(), vec![1, 2]);
        let s = all[&2].selfplay.as_ref().unwrap();
        assert_eq!((s.games, s.positions, s.nn_evals), (40, 400, 4000));
        assert!((s.positions_per_s() - 100.0).abs() < 1e-9);
        assert!((s.kl_target_net - 0.5).abs() < 1e-12, "{s:?}");
        let text = std::fs::read_to_string(path(tmp.path())).unwrap();
        assert_eq!(text.lines().count(), 2);
        // A damaged line (bad UTF-8) is set aside with the file, not lost with the rest.
        std::fs::write(path(tmp.path()), [text.as_bytes(), b"\xff\n"].concat()).unwrap();
        update(tmp.path(), 3, |e| e.finished_unix_s = Some(7.0)).unwrap();
        let all = read_reporting(tmp.path(), &mut skipped);
        assert_eq!(all.keys().copied().collect::<Vec<_>>(), vec![1, 2, 3]);
        let aside = std::fs::read(tmp.path().join("generations.jsonl.damaged")).unwrap();
        assert!(aside.ends_with(b"\xff\n"));
    }

    /// A generation's line repeated (a hand edit, a copied file) is named,
    /// the first line kept, and the file set aside before the next rewrite.
    #[test]
    fn a_repeated_generation_is_named_and_the_first_kept() {
        let tmp = tempfile::tempdir().unwrap();
        update(tmp.path(), 1, |e| e.finished_unix_s = Some(5.0)).unwrap();
        let first = std::fs::read_to_string(path(tmp.path())).unwrap();
        let repeat = first.replace("5.0", "9.0");
        std::fs::write(path(tmp.path()), format!("{first}{repeat}")).unwrap();
        let mut skipped = crate::records::Skipped::default();
        let all = read_reporting(tmp.path(), &mut skipped);
        assert_eq!(all[&1].finished_unix_s, Some(5.0), "the first line is kept");
        let note = skipped.notes().join("\n");
        assert!(note.contains("line 2: repeats generation 1 of line 1"), "{note}");
        update(tmp.path(), 2, |e| e.finished_unix_s = Some(6.0)).unwrap();
        let aside = std::fs::read_to_string(tmp.path().join("generations.jsonl.damaged")).unwrap();
        assert_eq!(aside, format!("{first}{repeat}"), "both lines stay for a look");
        let mut skipped = crate::records::Skipped::default();
        let all = read_reporting(tmp.path(), &mut skipped);
        assert!(skipped.notes().is_empty());
        assert_eq!((all[&1].finished_unix_s, all[&2].finished_unix_s), (Some(5.0), Some(6.0)));
    }

    #[test]
    fn calibration_bins_average_prediction_and_outcome() {
        let b = calibration(&[-0.95, -0.9, 0.05, 0.25, 0.99, 1.0], &[-1.0, 0.0, 1.0, 0.0, 1.0, 1.0]);
        assert_eq!(b.len(), 4);
        assert_eq!(b[0].count, 2);
        assert!((b[0].predicted + 0.925).abs() < 1e-6 && (b[0].outcome + 0.5).abs() < 1e-9);
        // 1.0 falls into the last bin, not past it.
        assert_eq!(b[3].count, 2);
        assert_eq!(b.iter().map(|x| x.count).sum::<u32>(), 6);
    }
}
