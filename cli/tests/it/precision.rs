//! Mixed precision end to end (BENCHMARKS.md, "Mixed precision"): a run in bf16 on the CPU
//! plays, trains and gates, writes fp32 checkpoints and exports an fp32
//! bundle, and may change its precision between generations; `bench
//! precision` and the `--set` overrides of `bench`.

use std::path::Path;

use crate::common::{edited, err, micro, mz, out, write, Size};

/// [`Size::Tiny`] on the CPU with 60 plies, three training steps, three games a
/// generation and no ladder.
fn base() -> String {
    edited(
        &micro(Size::Tiny, "martian-chess", 3),
        &[
            ("device", r#""cpu""#),
            ("rules.max_plies", "60"),
            ("train.steps_per_generation", "3"),
            ("evaluate.ladder_every", "0"),
            ("pipeline.games_per_generation", "3"),
        ],
        &[],
    )
}

/// [`base`] with `model` lines added to `[model]` and `generations` generations.
fn config(dir: &Path, name: &str, model: &str, generations: u32) -> String {
    let text = base()
        .replace("[model]", &format!("[model]\n{model}"))
        .replace("generations = 1", &format!("generations = {generations}"));
    write(&dir.join(name), &text)
}

/// `name -> dtype` of every tensor in a safetensors file (from its JSON header).
fn dtypes(path: &Path) -> Vec<(String, String)> {
    let bytes = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    header
        .into_iter()
        .filter(|(k, _)| k != "__metadata__")
        .map(|(k, v)| (k, v["dtype"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn a_bf16_run_writes_fp32_checkpoints_and_exports_and_may_change_precision() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let bf16 = config(dir.path(), "bf16.toml", "precision = \"bf16\"", 1);
    let o = mz(&["pipeline", "--config", &bf16, "--run-dir", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let copy = std::fs::read_to_string(run.join("config.toml")).unwrap();
    assert!(copy.contains("precision = \"bf16\""), "the run's config copy keeps the setting: {copy}");
    let ck = run.join("models/gen0001.safetensors");
    let types = dtypes(&ck);
    assert!(types.len() > 10 && types.iter().all(|(_, t)| t == "F32"), "{types:?}");
    let side = std::fs::read_to_string(run.join("models/gen0001.json")).unwrap();
    assert!(!side.contains("precision"), "a checkpoint records no precision: {side}");
    // The exported bundle is fp32 too (weights; the TorchScript module is
    // checked against the fp32 network by the export itself).
    let bundle = dir.path().join("bundle");
    let o = mz(&["export", "--checkpoint", ck.to_str().unwrap(), "--out", bundle.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let types = dtypes(&bundle.join("model.safetensors"));
    assert!(types.iter().all(|(_, t)| t == "F32"), "{types:?}");
    let desc = std::fs::read_to_string(bundle.join("model.json")).unwrap();
    assert!(desc.contains("float32") && !desc.contains("bf16"), "{desc}");
    // The next generation in fp32: precision is not an architecture field.
    let fp32 = config(dir.path(), "fp32.toml", "", 2);
    let o = mz(&["pipeline", "--config", &fp32, "--run-dir", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(run.join("models/gen0002.safetensors").exists());
    // But an architecture change is still refused.
    let wider_path = dir.path().join("wider.toml");
    std::fs::write(&wider_path, std::fs::read_to_string(&fp32).unwrap().replace("channels = 8", "channels = 16"))
        .unwrap();
    let o = mz(&["pipeline", "--config", wider_path.to_str().unwrap(), "--run-dir", run.to_str().unwrap()]);
    assert!(!o.status.success() && err(&o).contains("channels"), "{}", err(&o));
}

#[test]
fn bench_precision_compares_bf16_with_fp32_and_writes_json() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(dir.path(), "c.toml", "", 1);
    let json = dir.path().join("figures.json");
    let o = mz(&[
        "bench",
        "precision",
        "--config",
        &c,
        "--positions",
        "200",
        "--batch",
        "64",
        "--rounds",
        "1",
        "--set",
        "model.channels=16",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains("1 blocks x 16 channels") && text.contains("200 self-play positions"), "{text}");
    assert!(text.contains("  fp32: ") && text.contains("  bf16: ") && !text.contains("fp16"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["bench"], "precision");
    assert_eq!(v["config"]["channels"], 16);
    let r = &v["results"];
    assert_eq!((r[0]["precision"].as_str(), r[1]["precision"].as_str()), (Some("fp32"), Some("bf16")));
    assert!(r[0]["positions_per_s"].as_f64().unwrap() > 0.0);
    let d = &r[1]["against_fp32"];
    assert_eq!(d["positions"], 200);
    let kl = d["mean_policy_kl"].as_f64().unwrap();
    assert!(kl > 0.0 && kl < 1e-3, "{d}");
    assert!(d["mean_value_diff"].as_f64().unwrap() < 1e-2, "{d}");
}

#[test]
fn bench_overrides_apply_and_name_their_errors() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(dir.path(), "c.toml", "", 1);
    let json = dir.path().join("train.json");
    let o = mz(&[
        "bench",
        "train",
        "--config",
        &c,
        "--steps",
        "2",
        "--set",
        "train.batch_size=8",
        "--set",
        "model.precision=bf16",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("batch 8, bf16"), "{}", out(&o));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!((v["batch_size"].as_u64(), v["config"]["precision"].as_str()), (Some(8), Some("bf16")));
    assert!(v["samples_per_s"].as_f64().unwrap() > 0.0 && v["final_total_loss"].as_f64().unwrap() > 0.0, "{v}");
    for (cmd, set, want) in [
        ("train", "model.precision=fp16", "needs a CUDA device"),
        ("train", "model.precision=half", "model.precision must be one of"),
        ("selfplay", "train.batch_sise=8", "batch_sise"),
        ("precision", "model", "expected KEY=VALUE"),
    ] {
        let o = mz(&["bench", cmd, "--config", &c, "--set", set]);
        assert!(!o.status.success(), "{set}");
        assert!(err(&o).contains(want) && !err(&o).contains("panicked"), "{set}: {}", err(&o));
    }
}
