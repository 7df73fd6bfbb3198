//! Several devices end to end: self-play on several devices (two CPU replicas, each
//! with its own thread and game groups) through `martian-zero selfplay`, the
//! device settings' errors, and `bench selfplay` with the simulated device.

use std::path::Path;

use crate::common::{err, micro, mz, out, write, Size};

/// [`Size::Tiny`] with `top` lines at the top level and `selfplay` lines in `[selfplay]`.
fn config(dir: &Path, name: &str, top: &str, selfplay: &str) -> String {
    let text = micro(Size::Tiny, "martian-chess", 3)
        .replace("[model]", &format!("{top}\n[model]"))
        .replace("[selfplay]", &format!("[selfplay]\n{selfplay}"));
    write(&dir.join(name), &text)
}

/// Every file under `dir/games` and `dir/shards`, by name, with its bytes.
fn output_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v = Vec::new();
    for sub in ["games", "shards"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let e = e.unwrap();
            v.push((format!("{sub}/{}", e.file_name().to_string_lossy()), std::fs::read(e.path()).unwrap()));
        }
    }
    v.sort();
    v
}

#[test]
fn selfplay_on_two_cpu_devices_is_reproducible() {
    let dir = tempfile::tempdir().unwrap();
    let one = config(dir.path(), "one.toml", "", "");
    let run = dir.path().join("run");
    let o = mz(&["pipeline", "--config", &one, "--run-dir", run.to_str().unwrap(), "--stop-after", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    let model = run.join("models/gen0000.safetensors");
    let two = config(dir.path(), "two.toml", "device = [\"cpu\", \"cpu\"]", "groups = 2");
    let mut outputs = Vec::new();
    for k in 0..2 {
        let target = dir.path().join(format!("out{k}"));
        let o = mz(&[
            "selfplay",
            "--config",
            &two,
            "--model",
            model.to_str().unwrap(),
            "--out",
            target.to_str().unwrap(),
            "--games",
            "9",
        ]);
        assert!(o.status.success(), "{}", err(&o));
        assert!(err(&o).contains("self-play on 2 devices: cpu, cpu"), "{}", err(&o));
        assert!(out(&o).contains("self-play: 9 games"), "{}", out(&o));
        outputs.push(output_files(&target));
    }
    assert_eq!(outputs[0].len(), 6, "3 shards and 3 record files");
    assert!(outputs[0] == outputs[1], "the same seed wrote other games on two devices");
}

#[test]
fn device_settings_errors_name_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    for (top, selfplay, want) in [
        ("device = \"cpu,,cpu\"", "", "empty item"),
        ("device = \"cpu,tpu\"", "", "tpu"),
        ("", "groups = 0", "selfplay.groups"),
    ] {
        let c = config(dir.path(), "bad.toml", top, selfplay);
        let o = mz(&["bench", "selfplay", "--config", &c, "--games", "1"]);
        assert!(!o.status.success());
        assert!(err(&o).contains(want) && !err(&o).contains("panicked"), "{want}: {}", err(&o));
    }
    let c = config(dir.path(), "ok.toml", "", "");
    for (spec, want) in [("batch_ms=1", "per_position_us"), ("batch_ms=1,per_position_us=2,speed=3", "speed")] {
        let o = mz(&["bench", "selfplay", "--config", &c, "--games", "1", "--simulate-device", spec]);
        assert!(!o.status.success());
        assert!(err(&o).contains(want), "{spec}: {}", err(&o));
    }
}

/// `bench selfplay --config C --games 4 --groups 2 --simulate-device SPEC` with `more` after.
fn bench_sim(c: &str, spec: &str, more: &[&str]) -> std::process::Output {
    let mut args = vec!["bench", "selfplay", "--config", c, "--games", "4", "--simulate-device", spec, "--groups", "2"];
    args.extend_from_slice(more);
    mz(&args)
}

#[test]
fn bench_selfplay_compares_the_drivers_on_a_simulated_device() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(dir.path(), "c.toml", "", "");
    let o = bench_sim(&c, "batch_ms=1,per_position_us=5,output=uniform", &["--devices", "2", "--compare"]);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    for want in ["uniform evaluator", "lockstep driver", "overlapped driver", "device busy", "(2 devices)", "medians"] {
        assert!(text.contains(want), "{want}: {text}");
    }
    // Two of the drivers, three rounds: a ratio per round and their median.
    let o = bench_sim(
        &c,
        "batch_ms=0.1,per_position_us=1,output=uniform",
        &["--drivers", "overlapped,uniform,overlapped", "--rounds", "3"],
    );
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(!text.contains("lockstep"), "{text}");
    assert_eq!(text.matches("overlapped driver:").count(), 3, "{text}");
    assert_eq!(text.matches("uniform evaluator, no device").count(), 3, "{text}");
    let line = text.lines().find(|l| l.contains("overlapped / uniform")).unwrap_or_else(|| panic!("{text}"));
    let per = line.split("per-round ratios: ").nth(1).unwrap_or_else(|| panic!("{line}"));
    assert_eq!(per.trim_end_matches(')').split(", ").count(), 3, "{line}");
    // ABBA order: round 2 runs the drivers in reverse.
    let order = |round: u32| -> Vec<&str> {
        let head = format!("  round {round}, ");
        text.lines()
            .filter_map(|l| l.strip_prefix(head.as_str()))
            .map(|l| if l.starts_with("overlapped") { "overlapped" } else { "uniform" })
            .collect()
    };
    assert_eq!(order(1), ["overlapped", "uniform"], "{text}");
    assert_eq!(order(2), ["uniform", "overlapped"], "{text}");
    assert_eq!(order(3), ["overlapped", "uniform"], "{text}");
    // Three rounds are too few for a 95 % interval of the median, and it says so.
    assert!(text.contains("no 95% interval of the median from 3 rounds (it takes 6 or more)"), "{text}");
    // A device that hands its batches back with their ready time: the lockstep and
    // overlapped drivers both wait for it, and the header says which form ran.
    let json = dir.path().join("figures.json");
    let o =
        bench_sim(&c, "batch_ms=2,per_position_us=5,wait=deadline", &["--compare", "--json", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains("handed back with their ready time"), "{text}");
    assert!(text.contains("lockstep driver") && text.contains("overlapped driver:"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["simulated_device"], "batch_ms=2,per_position_us=5,output=hash,softmax=device,wait=deadline");
    let o = bench_sim(&c, "batch_ms=2,per_position_us=5,wait=later", &[]);
    assert!(!o.status.success() && err(&o).contains("wait must be sleep or deadline"), "{}", err(&o));
    let o = mz(&["bench", "selfplay", "--config", &c, "--drivers", "uniform,sideways"]);
    assert!(!o.status.success() && err(&o).contains("sideways"), "{}", err(&o));
    let o = mz(&["bench", "selfplay", "--config", &c, "--drivers", "uniform", "--compare"]);
    assert!(!o.status.success() && err(&o).contains("--compare"), "{}", err(&o));
}
