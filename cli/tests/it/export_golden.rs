//! Golden test of the model export (docs/model-format.md): a small random
//! network per game is saved as a checkpoint, exported with `martian-zero
//! export`, converted to ONNX with `tools/export_onnx.py`, and fixed positions
//! (initial positions, positions after fixed moves, a position string) are run
//! through the Rust network, the bundle loaded back in Rust, the TorchScript
//! module (in Rust with `CModule` and in Python with `torch.jit.load`), the ONNX
//! model (onnxruntime) and the network rebuilt in PyTorch. All must agree within
//! 1e-4. Needs the project's virtual environment ($MARTIAN_ZERO_VENV, set by
//! scripts/env.sh; scripts/setup installs onnx, onnxruntime and safetensors).

use std::path::{Path, PathBuf};
use std::process::Command;

use martian_model::export::load_bundle;
use martian_model::{Checkpoint, ModelConfig};
use martian_rules::jetan::Jetan;
use martian_rules::martian::MartianChess;
use martian_rules::{GameState, Move};
use tch::nn::ModuleT;
use tch::{CModule, Device, Kind, Tensor};

use crate::common::torch_rng;

const TOLERANCE: f32 = 1e-4;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

fn venv_python() -> PathBuf {
    let venv = std::env::var_os("MARTIAN_ZERO_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/martian-zero/venv"));
    let py = venv.join("bin/python");
    assert!(py.exists(), "{} not found: run scripts/setup (or set MARTIAN_ZERO_VENV)", py.display());
    py
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("command starts");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Positions: the initial one and those after `plies` moves chosen by a fixed
/// rule (a simple LCG over the legal moves), plus `extra` position strings.
fn positions<G: GameState>(plies: usize, extra: &[&str]) -> Vec<G> {
    let rules = G::Rules::default();
    let mut s = G::new_game(&rules).expect("initial position");
    let mut out = vec![s.clone()];
    let mut moves: Vec<Move> = Vec::new();
    let mut x: u64 = 12345;
    for _ in 0..plies {
        s.legal_moves(&mut moves);
        if moves.is_empty() {
            break;
        }
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        s.play_unchecked(moves[(x >> 33) as usize % moves.len()]);
        out.push(s.clone());
    }
    out.extend(extra.iter().map(|t| G::from_position(t, &rules).expect("valid position string")));
    out
}

/// Moves every variable away from its initial value (batch-norm statistics
/// and affine parameters included, so that no layer is an identity), keeping
/// the scale of the weights so that outputs stay of the size a trained
/// network produces.
fn perturb(ck: &mut Checkpoint) {
    let _g = tch::no_grad_guard();
    for (name, mut t) in ck.vs.variables() {
        let noise = Tensor::randn(t.size(), (Kind::Float, Device::Cpu));
        let v = if name.ends_with("running_var") {
            Tensor::rand(t.size(), (Kind::Float, Device::Cpu)) + 0.5
        } else if name.ends_with("running_mean") || name.ends_with("bias") {
            &t + noise * 0.1
        } else {
            &t * (noise * 0.2 + 1.0) + Tensor::randn(t.size(), (Kind::Float, Device::Cpu)) * 0.01
        };
        t.copy_(&v);
    }
}

fn max_abs(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.size(), b.size());
    (a - b).abs().max().double_value(&[]) as f32
}

fn write_f32(path: &Path, t: &Tensor) {
    let t = t.to_kind(Kind::Float).contiguous().view([-1]);
    let n = t.size()[0] as usize;
    let mut v = vec![0f32; n];
    t.copy_data(&mut v, n);
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(path, bytes).expect("write");
}

fn golden<G: GameState>(dir: &Path, cfg: &ModelConfig, states: &[G]) -> f32 {
    let rules = G::Rules::default();
    let ck = {
        let _rng = torch_rng();
        let mut ck = Checkpoint::new_random::<G>(&rules, cfg, Device::Cpu, 7).expect("network");
        perturb(&mut ck);
        ck
    };
    let weights = dir.join("models/gen0001.safetensors");
    ck.save(&weights).expect("save checkpoint");
    let bundle = dir.join("bundle");
    run(Command::new(env!("CARGO_BIN_EXE_martian-zero"))
        .args(["export", "--checkpoint"])
        .arg(&weights)
        .arg("--out")
        .arg(&bundle));
    let py = venv_python();
    let tools = repo_root().join("tools");
    run(Command::new(&py).arg(tools.join("export_onnx.py")).arg(&bundle));
    for f in ["model.json", "model.safetensors", "model.pt", "model.onnx"] {
        assert!(bundle.join(f).exists(), "{f} missing from the bundle");
    }
    // export_onnx.py records the ONNX file's CRC-64 (its Python CRC against the crc crate's).
    let d = martian_model::export::read_description(&bundle).expect("model.json reads after export_onnx.py");
    let onnx = std::fs::read(bundle.join("model.onnx")).unwrap();
    assert_eq!(d.onnx_crc64, Some(martian_model::checkpoint::weights_checksum(&onnx)));
    assert_eq!(
        d.weights_crc64,
        Some(martian_model::checkpoint::weights_checksum(&std::fs::read(bundle.join("model.safetensors")).unwrap()))
    );

    // Encode the positions.
    let [c, h, w] = G::INPUT_SHAPE;
    let plane = c * h * w;
    let mut input = vec![0f32; states.len() * plane];
    for (i, s) in states.iter().enumerate() {
        s.encode(&mut input[i * plane..(i + 1) * plane]);
    }
    let x = Tensor::from_slice(&input).view([states.len() as i64, c as i64, h as i64, w as i64]);
    let _g = tch::no_grad_guard();
    let want = ck.net.forward_t(&x, false);
    assert_eq!(want.size(), [states.len() as i64, G::NUM_ACTIONS as i64 + 3]);
    let scale = want.abs().max().double_value(&[]);
    eprintln!("{}: {} positions, largest |output| {scale:.3}", G::KIND, states.len());
    assert!(scale < 100.0, "outputs too large for an absolute tolerance: {scale}");

    // Rust: the bundle loaded back, and the TorchScript module.
    let (loaded, desc) = {
        let _rng = torch_rng();
        load_bundle::<G>(&bundle, Device::Cpu).expect("bundle loads")
    };
    assert_eq!(desc.game, G::KIND);
    assert_eq!(desc.input.planes.len(), c);
    let mut worst = max_abs(&loaded.net.forward_t(&x, false), &want);
    let ts = CModule::load(bundle.join("model.pt")).expect("TorchScript loads");
    let d_ts = max_abs(&ts.forward_ts(&[&x]).expect("TorchScript runs"), &want);
    eprintln!("{}: Rust bundle {worst:.3e}, Rust TorchScript {d_ts:.3e}", G::KIND);
    worst = worst.max(d_ts);

    // Python: TorchScript, ONNX Runtime, rebuilt PyTorch network.
    write_f32(&dir.join("inputs.f32"), &x);
    write_f32(&dir.join("expected.f32"), &want);
    // The auxiliary heads (in the weights, not in the module's output), as columns.
    let all = ck.net.forward_all(&x, false);
    let aux: Vec<Tensor> = [all.moves_left, all.score].into_iter().flatten().collect();
    let mut check = Command::new(&py);
    check.arg(tools.join("check_bundle.py")).arg(&bundle).arg(dir.join("inputs.f32")).arg(dir.join("expected.f32"));
    if !aux.is_empty() {
        write_f32(&dir.join("expected_aux.f32"), &Tensor::stack(&aux, 1));
        check.arg(dir.join("expected_aux.f32"));
    }
    let out = run(&mut check);
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("check_bundle.py prints JSON");
    eprintln!("{}: python {v}", G::KIND);
    assert_eq!(v["positions"].as_u64(), Some(states.len() as u64));
    let keys: &[&str] = if aux.is_empty() {
        &["torchscript", "onnx", "pytorch"]
    } else {
        &["torchscript", "onnx", "pytorch", "auxiliary"]
    };
    for k in keys {
        let d = v[k].as_f64().unwrap_or_else(|| panic!("{k} missing in {v}")) as f32;
        worst = worst.max(d);
    }
    assert!(worst <= TOLERANCE, "{}: outputs differ by {worst} > {TOLERANCE}", G::KIND);
    // The policy must depend on the position (the test would be weak otherwise).
    assert!(max_abs(&want.get(0), &want.get(1)) > 1e-3, "outputs do not depend on the input");
    worst
}

#[test]
fn exported_models_agree_with_the_rust_network() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let jetan_cfg = ModelConfig {
        blocks: 2,
        channels: 16,
        batch_norm: true,
        global_pooling: true,
        policy_channels: 2,
        value_hidden: 16,
        ..Default::default()
    };
    let jetan = positions::<Jetan>(9, &["1L1FPCFDLW/TNN1NNNNNT/10/3N6/10/10/10/4n5/tnnn1nnnnt/wldfcpfdlw b OB - 3 4"]);
    let dj = golden::<Jetan>(&tmp.path().join("jetan"), &jetan_cfg, &jetan);
    damaged_bundles_are_refused_by_the_onnx_export(&tmp.path().join("jetan/bundle"));
    // Martian Chess without batch norm (convolutions with biases), three blocks,
    // with both auxiliary heads (in the weights; the module's output is unchanged).
    let mc_cfg = ModelConfig {
        blocks: 3,
        channels: 8,
        batch_norm: false,
        global_pooling: true,
        policy_channels: 3,
        value_hidden: 8,
        moves_left_head: true,
        score_head: true,
        ..Default::default()
    };
    let mc = positions::<MartianChess>(9, &["QQD1/QD2/D1P1/2P1/4/1P1D/1PDQ/1DQQ N 2 0 b4c5 - 1 7"]);
    let dm = golden::<MartianChess>(&tmp.path().join("martian"), &mc_cfg, &mc);
    eprintln!("max |difference| over all backends: jetan {dj:.3e}, martian chess {dm:.3e}");
}

/// `tools/export_onnx.py` refuses what `load_bundle` refuses, with one
/// `error:` line naming the problem (no traceback, no ONNX file): weights
/// changed after the export (the CRC-64 in model.json), a game this program
/// does not play, a truncated weights file (in a bundle without a checksum).
fn damaged_bundles_are_refused_by_the_onnx_export(bundle: &Path) {
    let py = venv_python();
    let script = repo_root().join("tools/export_onnx.py");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bundle.join("model.json")).unwrap()).unwrap();
    let weights = std::fs::read(bundle.join("model.safetensors")).unwrap();
    let mut flipped = weights.clone();
    let n = flipped.len();
    flipped[n - 4] ^= 0x01;
    let mut chess = json.clone();
    chess["game"] = "chess".into();
    let mut unchecked = json.clone();
    unchecked.as_object_mut().unwrap().remove("weights_crc64");
    let cases: [(&str, &serde_json::Value, &[u8], &str); 3] = [
        ("flipped", &json, &flipped, "its CRC-64 is"),
        ("chess", &chess, &weights, "game 'chess' is not one of"),
        ("truncated", &unchecked, &weights[..n / 2], "not a readable safetensors file"),
    ];
    let dir = |name: &str| bundle.with_file_name(format!("bundle-{name}"));
    for (name, desc, bytes, _) in cases {
        std::fs::create_dir_all(dir(name)).unwrap();
        std::fs::write(dir(name).join("model.json"), desc.to_string()).unwrap();
        std::fs::write(dir(name).join("model.safetensors"), bytes).unwrap();
    }
    // One run for the three (one import of torch): each gets its own error line, naming it.
    let out = Command::new(&py).arg(&script).args(cases.map(|c| dir(c.0))).output().expect("python starts");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("Traceback"), "{err}");
    assert_eq!(err.lines().filter(|l| l.starts_with("error: ")).count(), cases.len(), "one per bundle: {err}");
    for (name, _, _, needle) in cases {
        let d = dir(name).display().to_string();
        let line = err.lines().find(|l| l.contains(&d)).unwrap_or_else(|| panic!("{name}: no line names {d}: {err}"));
        assert!(line.starts_with("error: ") && line.contains(needle), "{name}: {err}");
        assert!(!dir(name).join("model.onnx").exists(), "{name}: no ONNX file");
    }
}

/// The worked examples of docs/model-format.md.
#[test]
fn documented_examples_hold() {
    // Jetan, initial position, Orange (North) to move: the board is rotated.
    let j = Jetan::new_game(&Default::default()).expect("jetan");
    let mut planes = vec![0f32; 2400];
    j.encode(&mut planes);
    let at = |p: usize, row: usize, col: usize| planes[p * 100 + row * 10 + col];
    assert_eq!(at(0, 0, 4), 1.0, "mover's Chief (f10) at row 0, col 4");
    assert_eq!(at(1, 0, 5), 1.0, "mover's Princess (e10) at row 0, col 5");
    assert_eq!(at(8, 9, 5), 1.0, "opponent's Chief (e1) at row 9, col 5");
    assert_eq!(at(9, 9, 4), 1.0, "opponent's Princess (f1) at row 9, col 4");
    assert_eq!(planes[16 * 100..18 * 100].iter().sum::<f32>(), 200.0, "both Escape rights");
    assert_eq!(planes.iter().sum::<f32>(), 40.0 + 200.0, "40 pieces, two all-ones planes");
    let m = j.parse_move("e9e8").expect("legal");
    assert_eq!(j.action_index(m), 737);
    let mut j2 = j.clone();
    j2.play_unchecked(m);
    assert_eq!(j2.action_index(j2.parse_move("e2e3").expect("legal")), 689);

    // Martian Chess, initial position, South to move: squares unchanged.
    let mc = MartianChess::new_game(&Default::default()).expect("martian chess");
    let mut planes = vec![0f32; 11 * 32];
    mc.encode(&mut planes);
    let pawns: Vec<usize> = (0..32).filter(|&i| planes[i] == 1.0).collect();
    assert_eq!(pawns, vec![5, 9, 10, 21, 22, 26], "pawns b2 b3 c3 b6 c6 c7");
    assert_eq!(planes[3 * 32..].iter().sum::<f32>(), 0.0, "planes 3-10 are 0 at the start");
    let m = mc.parse_move("d3d5").expect("legal");
    assert_eq!(mc.action_index(m), 371);
    let mut mc2 = mc;
    mc2.play_unchecked(m);
    assert_eq!(mc2.action_index(mc2.parse_move("b6a5").expect("legal")), 335);
    let mut planes2 = vec![0f32; 11 * 32];
    mc2.encode(&mut planes2);
    // North to move: rotated; the Drone that crossed to d5 (sq 19) is at 31 - 19 = 12.
    assert_eq!(planes2[32 + 12], 1.0);
    assert_eq!(planes2[8 * 32], 1.0 / 300.0, "ply 1 of max_plies 300");
}
