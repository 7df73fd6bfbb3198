//! Checkpoints and rules end to end: one architecture rule for every command
//! that loads a checkpoint, weights checked against the declared architecture,
//! and rules / architecture mismatches that name each differing field.

use crate::common::{edited, err, micro, mz, write, Size};

/// A Martian Chess run with seed 5 and a two-block network: [`Size::Tiny`]
/// with batches of two leaves, two games in flight of four simulations, one a
/// shard, a final evaluation and the default pipeline.
fn config() -> String {
    edited(
        &micro(Size::Tiny, "martian-chess", 5),
        &[
            ("model.blocks", "2"),
            ("search.leaves_per_batch", "2"),
            ("selfplay.games_in_flight", "2"),
            ("selfplay.simulations", "4"),
            ("selfplay.games_per_shard", "1"),
            ("evaluate.final_pairs", "1"),
        ],
        &["pipeline.generations", "pipeline.games_per_generation"],
    )
}

/// The lines of `err` that carry the architecture notice.
fn notices(err: &str) -> Vec<String> {
    err.lines().filter(|l| l.starts_with("notice:")).map(String::from).collect()
}

#[test]
fn one_architecture_rule_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = |p: &str| dir.path().join(p);
    let base = write(&d("base.toml"), &config());
    let run = d("run");
    let r = run.to_str().unwrap();
    // A run started and stopped before generation 1: the untrained gen 0.
    let o = mz(&["pipeline", "--config", &base, "--run-dir", r, "--stop-after", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    let ck = run.join("models/gen0000.safetensors");
    assert!(ck.exists());
    let ck = ck.to_str().unwrap();

    // A config whose [model] differs in two fields.
    let other =
        write(&d("other.toml"), &edited(&config(), &[("model.blocks", "3"), ("model.value_hidden", "16")], &[]));
    let fields = ["blocks 2 vs 3", "value_hidden 8 vs 16"];

    // selfplay --out and evaluate: the checkpoint's architecture, with the same notice.
    let out = d("out");
    let o = mz(&["selfplay", "--config", &other, "--model", ck, "--games", "1", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let sp = notices(&err(&o));
    assert_eq!(sp.len(), 1, "{}", err(&o));
    for f in fields {
        assert!(sp[0].contains(f), "{}", sp[0]);
    }
    assert!(!sp[0].contains("channels"), "only the differing fields: {}", sp[0]);
    let o = mz(&["evaluate", "--config", &other, "--a", ck, "--b", "random", "--games", "2"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(notices(&err(&o)), sp, "the same notice everywhere");
    // With the matching config there is no notice.
    let o = mz(&["evaluate", "--config", &base, "--a", ck, "--b", "random", "--games", "2"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(notices(&err(&o)).is_empty(), "{}", err(&o));

    // Writing into a run directory whose config fixes the architecture: an error naming the fields.
    let run2 = d("run2");
    let o = mz(&["selfplay", "--config", &other, "--run-dir", run2.to_str().unwrap(), "--model", ck, "--games", "1"]);
    assert!(!o.status.success());
    for f in fields {
        assert!(err(&o).contains(f), "{}", err(&o));
    }
    for cmd in ["train", "pipeline"] {
        let o = mz(&[cmd, "--config", &other, "--run-dir", r]);
        assert!(!o.status.success(), "{cmd}");
        let e = err(&o);
        assert!(e.contains("[model] fields differ (run directory vs config)"), "{cmd}: {e}");
        for f in fields {
            assert!(e.contains(f), "{cmd}: {e}");
        }
    }
    // Rules: each differing switch is named, and a switch written out at its
    // default value is no difference.
    let rules =
        write(&d("rules.toml"), &edited(&config(), &[("rules.max_plies", "120"), ("rules.no_undo", "false")], &[]));
    let o = mz(&["train", "--config", &rules, "--run-dir", r]);
    let e = err(&o);
    assert!(
        e.contains("[rules] switches differ (run directory vs config): max_plies 300 vs 120; no_undo true vs false"),
        "{e}"
    );
    let same = write(&d("same.toml"), &edited(&config(), &[("rules.max_plies", "300")], &[]));
    let o = mz(&["train", "--config", &same, "--run-dir", r]);
    assert!(err(&o).contains("replay window"), "{}", err(&o));
    // A checkpoint under other rules names the switch.
    let o = mz(&["evaluate", "--config", &rules, "--a", ck, "--b", "random", "--games", "2"]);
    assert!(!o.status.success());
    assert!(
        err(&o).contains("rules differ (checkpoint vs config): max_plies 300 vs 120; no_undo true vs false"),
        "{}",
        err(&o)
    );

    // The records that selfplay wrote carry the rules.
    let games = std::fs::read_dir(out.join("games")).unwrap().next().unwrap().unwrap().path();
    let line = std::fs::read_to_string(games).unwrap();
    assert!(line.contains("\"format_version\":2") && line.contains("\"rules\":{"), "{line}");
}

#[test]
fn weights_that_do_not_fit_the_sidecar_are_refused_by_every_loader() {
    let dir = tempfile::tempdir().unwrap();
    let d = |p: &str| dir.path().join(p);
    let base = write(&d("base.toml"), &config());
    let run = d("run");
    let o = mz(&["pipeline", "--config", &base, "--run-dir", run.to_str().unwrap(), "--stop-after", "0"]);
    assert!(o.status.success(), "{}", err(&o));
    let ck = run.join("models/gen0000.safetensors");
    // The sidecar claims 1 block over 2-block weights (an old sidecar: no tensor list).
    let side = ck.with_extension("json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    v["model"]["blocks"] = 1.into();
    v["format_version"] = 1.into();
    v.as_object_mut().unwrap().remove("tensors");
    std::fs::write(&side, v.to_string()).unwrap();
    let ck = ck.to_str().unwrap();
    let one = write(&d("one.toml"), &edited(&config(), &[("model.blocks", "1")], &[]));
    let out = d("bundle");
    for args in [
        vec!["evaluate", "--config", &one, "--a", ck, "--b", "random", "--games", "2"],
        vec!["selfplay", "--config", &one, "--model", ck, "--games", "1", "--out", d("sp").to_str().unwrap()],
        vec!["export", "--checkpoint", ck, "--out", out.to_str().unwrap()],
    ] {
        let o = mz(&args);
        assert!(!o.status.success(), "{args:?} must fail");
        let e = err(&o);
        assert!(e.contains("unexpected tensors") && e.contains("blocks.1.a.conv.weight"), "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
}
