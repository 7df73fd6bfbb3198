//! The web page (docs/web.md), end to end:
//!
//! 1. `scripts/build-web` builds the page (the rules and search compiled to
//!    WebAssembly, ONNX Runtime Web from npm) with two small bundles, one per
//!    game, made here from untrained generation-0 checkpoints with
//!    `martian-zero pipeline --stop-after 0`, `martian-zero export` and
//!    `tools/export_onnx.py` (one run for both);
//! 2. the web crate's own tests run natively (`cargo test` in `web/crate`);
//! 3. `web/test/rules.mjs` (Node): the WebAssembly rules agree with the native
//!    ones (pinned perft of the spec positions, 300 seeded random positions
//!    per game compared line by line with the native `web-fingerprint`);
//! 4. `web/test/browser.mjs` (headless Chromium via playwright-core): ONNX
//!    Runtime Web's output for 20 positions per game agrees with the Rust
//!    network's (computed here from the same bundle) within 1e-4, and full
//!    games are played by clicking, and a few moves against strength level 2
//!    (see the script). Screenshots go to
//!    `target/web-test/`.
//!
//! Needs node and npm (scripts/setup installs them), the wasm32 target and
//! wasm-bindgen-cli (scripts/build-web installs them, once), and the venv of
//! scripts/setup. Step 4 is skipped, with a message, only when no Chromium
//! binary exists (`MARTIAN_ZERO_CHROMIUM`, default `/usr/bin/chromium`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use martian_model::export::load_bundle;
use martian_rules::jetan::Jetan;
use martian_rules::martian::MartianChess;
use martian_rules::{GameState, Move};
use tch::nn::ModuleT;
use tch::{Device, Kind, Tensor};

use crate::common::{edited, micro, torch_rng, Size};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

fn venv_python() -> PathBuf {
    let venv = std::env::var_os("MARTIAN_ZERO_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/martian-zero/venv"));
    venv.join("bin/python")
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?} does not start: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An untrained, small generation-0 network of `game`, exported as a bundle (ONNX: [`add_onnx`]).
fn bundle(dir: &Path, game: &str) -> PathBuf {
    let config = dir.join(format!("{game}.toml"));
    // Only the network matters here (the run stops after generation 0).
    let text = edited(
        &micro(Size::Tiny, game, 5),
        &[("device", r#""cpu""#), ("model.batch_norm", "true"), ("model.global_pooling", "true")],
        &[],
    );
    std::fs::write(&config, text).expect("write config");
    let run_dir = dir.join(format!("run-{game}"));
    let bin = env!("CARGO_BIN_EXE_martian-zero");
    run(Command::new(bin)
        .args(["pipeline", "--stop-after", "0", "--config"])
        .arg(&config)
        .arg("--run-dir")
        .arg(&run_dir));
    let out = dir.join(format!("bundle-{game}"));
    run(Command::new(bin).args(["export", "--checkpoint"]).arg(&run_dir).arg("--out").arg(&out));
    out
}

/// `tools/export_onnx.py` on `bundles`, one process for all (one import of torch).
fn add_onnx(bundles: &[&Path]) {
    run(Command::new(venv_python()).arg(repo_root().join("tools/export_onnx.py")).args(bundles));
}

/// The initial position and those after up to 19 moves chosen by a fixed rule.
fn positions<G: GameState>() -> Vec<G> {
    let mut s = G::new_game(&G::Rules::default()).expect("initial position");
    let mut out = vec![s.clone()];
    let mut moves: Vec<Move> = Vec::new();
    let mut x: u64 = 99;
    while out.len() < 20 {
        s.legal_moves(&mut moves);
        if moves.is_empty() {
            s = G::new_game(&G::Rules::default()).expect("initial position");
            continue;
        }
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        s.play_unchecked(moves[(x >> 33) as usize % moves.len()]);
        out.push(s.clone());
    }
    out
}

/// The Rust network's raw outputs for `positions`, from the bundle's weights.
fn reference<G: GameState>(bundle: &Path) -> serde_json::Value {
    let (ck, _) = {
        let _rng = torch_rng();
        load_bundle::<G>(bundle, Device::Cpu).expect("bundle loads")
    };
    let states = positions::<G>();
    let [c, h, w] = G::INPUT_SHAPE;
    let row = c * h * w;
    let mut input = vec![0f32; states.len() * row];
    for (i, s) in states.iter().enumerate() {
        s.encode(&mut input[i * row..(i + 1) * row]);
    }
    let x = Tensor::from_slice(&input).view([states.len() as i64, c as i64, h as i64, w as i64]);
    let _g = tch::no_grad_guard();
    let y = ck.net.forward_t(&x, false).to_kind(Kind::Float).contiguous();
    let width = G::NUM_ACTIONS + 3;
    assert_eq!(y.size(), [states.len() as i64, width as i64]);
    let mut flat = vec![0f32; states.len() * width];
    y.view([-1]).copy_data(&mut flat, states.len() * width);
    serde_json::json!({
        "positions": states.iter().map(|s| s.to_position()).collect::<Vec<_>>(),
        "outputs": flat.chunks(width).map(|r| r.to_vec()).collect::<Vec<_>>(),
    })
}

#[test]
fn web_page_plays_both_games() {
    let root = repo_root();
    let tmp = tempfile::tempdir().expect("tempdir");
    let t0 = Instant::now();
    let mc = bundle(tmp.path(), "martian-chess");
    let jetan = bundle(tmp.path(), "jetan");
    add_onnx(&[&mc, &jetan]);
    let dist = tmp.path().join("dist");
    let t_bundles = t0.elapsed();
    run(Command::new(root.join("scripts/build-web"))
        .arg("--out")
        .arg(&dist)
        .arg("--bundle")
        .arg(&mc)
        .arg("--bundle")
        .arg(&jetan));
    let t_build = t0.elapsed();

    // The web crate's own tests and its native fingerprint binary.
    let manifest = root.join("web/crate/Cargo.toml");
    let target = root.join("web/crate/target");
    run(Command::new("cargo")
        .args(["test", "--quiet", "--release", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", &target));
    run(Command::new("cargo")
        .args(["build", "--quiet", "--release", "--bin", "web-fingerprint", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", &target));
    let fingerprint = target.join("release/web-fingerprint");

    let rules = run(Command::new("node")
        .arg(root.join("web/test/rules.mjs"))
        .arg(&dist)
        .arg(&fingerprint)
        .arg("300")
        .env("MZ_BUNDLE_MARTIAN_CHESS", &mc)
        .env("MZ_BUNDLE_JETAN", &jetan));
    let summary: serde_json::Value = serde_json::from_str(rules.trim()).expect("rules.mjs prints JSON");
    eprintln!("web rules (wasm vs native): {summary}");
    assert_eq!(summary["random_positions"], 600);
    assert!(summary["perft_checks"].as_u64().unwrap_or(0) >= 60, "{summary}");
    let t_rules = t0.elapsed();

    let chromium =
        PathBuf::from(std::env::var_os("MARTIAN_ZERO_CHROMIUM").unwrap_or_else(|| "/usr/bin/chromium".into()));
    if !chromium.exists() {
        eprintln!(
            "SKIPPED: the browser half of the web test ({} not found; scripts/setup installs Debian's chromium)",
            chromium.display()
        );
        return;
    }
    let refs = serde_json::json!({
        "martian-chess": reference::<MartianChess>(&mc),
        "jetan": reference::<Jetan>(&jetan),
    });
    let ref_path = tmp.path().join("reference.json");
    std::fs::write(&ref_path, refs.to_string()).expect("write reference");
    let artifacts = root.join("target/web-test");
    let out = run(Command::new("node")
        .arg(root.join("web/test/browser.mjs"))
        .arg(&dist)
        .arg(&ref_path)
        .arg(&artifacts)
        .env("MARTIAN_ZERO_CHROMIUM", &chromium));
    let summary: serde_json::Value = serde_json::from_str(out.trim()).expect("browser.mjs prints JSON");
    eprintln!("web browser test: {summary}");
    for g in summary["games"].as_array().expect("games") {
        let d = g["onnx"]["max"].as_f64().expect("onnx max");
        assert!(d <= 1e-4, "ONNX Runtime Web vs martian-zero: {d}");
        assert!(g["result"].as_str().is_some_and(|r| r.contains("wins") || r.contains("Draw")), "{g}");
    }
    // A strength level (docs/levels.md): the engine moved with the level's visits.
    let level = &summary["level"];
    assert!(level["engine_moves"].as_u64().is_some_and(|n| n > 0), "the level game: {level}");
    for f in ["martian-chess-finished.png", "jetan-finished.png"] {
        assert!(artifacts.join(f).exists(), "screenshot {f} missing");
    }
    eprintln!(
        "web test times: bundles {:.1}s, build {:.1}s, rules {:.1}s, browser {:.1}s",
        t_bundles.as_secs_f64(),
        (t_build - t_bundles).as_secs_f64(),
        (t_rules - t_build).as_secs_f64(),
        (t0.elapsed() - t_rules).as_secs_f64()
    );
}
