//! A model is named the same way everywhere: an exported bundle directory, a
//! checkpoint `.safetensors` with its sidecar, or a run directory (its
//! promoted checkpoint) — in `evaluate`'s player specs, `export`, `play`,
//! `analyse`, `engine` and `analysis` (one loader, `run/src/checkpoints.rs`).
//! Without a model, a strength level and `analyse` use the game's bundled
//! network, as `play` does; `none` plays without one.

use std::path::Path;

use martian_rules::martian::MartianChess;

use crate::common::{edited, err, micro, mz, mz_stdin, out, tiny_checkpoint, write, Size};

/// `dir/bundle`: the bundle `export` writes of a tiny Martian Chess network
/// under the default rules; returns it with the config of those rules.
fn bundle(dir: &Path) -> (String, String) {
    let ck = tiny_checkpoint::<MartianChess>(dir, 7);
    let b = dir.join("bundle");
    let o = mz(&["export", "--checkpoint", ck.to_str().unwrap(), "--out", b.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    let cfg = write(&dir.join("mc.toml"), &micro(Size::Tiny, "martian-chess", 1));
    (b.to_str().unwrap().to_string(), cfg)
}

#[test]
fn a_bundle_is_a_model_in_evaluate_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let (b, cfg) = bundle(dir.path());
    // The bundle directory and its weights file name the same network.
    for model in [b.clone(), format!("{b}/model.safetensors")] {
        let spec = format!("mcts:model={model},visits=2");
        let o = mz(&["evaluate", "--config", &cfg, "--a", &spec, "--b", "alphabeta:depth=1", "--games", "2"]);
        assert!(o.status.success(), "{spec}: {}", err(&o));
        assert!(out(&o).contains("mcts:model=bundle,visits=2 vs alphabeta:depth=1: +"), "{}", out(&o));
        // A bare path is a player too.
        let o = mz(&["evaluate", "--config", &cfg, "--a", &model, "--b", "random", "--games", "2"]);
        assert!(o.status.success(), "{model}: {}", err(&o));
    }
    // A bundle under other rules is refused, naming the switch.
    let other = edited(&micro(Size::Tiny, "martian-chess", 1), &[("rules.max_plies", "50")], &[]);
    let other = write(&dir.path().join("other.toml"), &other);
    let o = mz(&["evaluate", "--config", &other, "--a", &format!("mcts:model={b}"), "--b", "random", "--games", "2"]);
    assert!(!o.status.success() && err(&o).contains("max_plies"), "{}", err(&o));
    // export re-exports a bundle (named by its directory or its weights) with its provenance.
    for (from, to) in [(b.clone(), "again"), (format!("{b}/model.safetensors"), "again2")] {
        let to = dir.path().join(to);
        let o = mz(&["export", "--checkpoint", &from, "--out", to.to_str().unwrap()]);
        assert!(o.status.success(), "{from}: {}", err(&o));
        let d: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(to.join("model.json")).unwrap()).unwrap();
        assert_eq!(d["training"]["source_checkpoint"], "net.safetensors", "{d}");
        assert_eq!(
            std::fs::read(to.join("model.safetensors")).unwrap(),
            std::fs::read(Path::new(&b).join("model.safetensors")).unwrap()
        );
    }
    // play, analyse and engine take it as before.
    let o = mz_stdin(&["play", "--model", &b, "--visits", "2"], "quit\n");
    assert!(o.status.success(), "{}", err(&o));
    let o = mz(&["analyse", "--model", &format!("{b}/model.safetensors"), "--visits", "4"]);
    assert!(o.status.success() && out(&o).contains("4 visits"), "{}", err(&o));
}

/// `mcts:level=L` without a model plays the game's bundled network (as
/// `play --level L`), said on stderr; `model=none` plays without one.
#[test]
fn a_level_in_evaluate_uses_the_bundled_network() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = write(&dir.path().join("mc.toml"), &micro(Size::Tiny, "martian-chess", 1));
    let run = |a: &str| mz(&["evaluate", "--config", &cfg, "--a", a, "--b", "random", "--games", "2"]);
    let o = run("mcts:level=1");
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("using the bundled model") && err(&o).contains("models/martian-chess"), "{}", err(&o));
    assert!(out(&o).contains("mcts:model=martian-chess,level=1 vs random"), "{}", out(&o));
    let o = run("mcts:level=1,model=none");
    assert!(o.status.success(), "{}", err(&o));
    assert!(!err(&o).contains("bundled"), "{}", err(&o));
    assert!(out(&o).contains("mcts:uniform,level=1 vs random"), "{}", out(&o));
}

/// `analyse` searches with the bundled network without `--model` (as `play`,
/// `engine --game` and `analysis`), `--model none` without a network, and
/// alpha-beta when asked for (`--engine alphabeta`, or its limits).
#[test]
fn analyse_uses_the_bundled_network_without_a_model() {
    let o = mz(&["analyse", "--game", "martian-chess", "--visits", "16"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("using the bundled model"), "{}", err(&o));
    assert!(out(&o).contains("16 visits") && out(&o).contains("models/martian-chess"), "{}", out(&o));
    let o = mz(&["analyse", "--game", "martian-chess", "--model", "none", "--visits", "16"]);
    assert!(o.status.success() && !err(&o).contains("bundled"), "{}", err(&o));
    assert!(out(&o).contains("16 visits"), "{}", out(&o));
    for args in [&["--engine", "alphabeta"][..], &["--depth", "2"][..]] {
        let o = mz(&[&["analyse", "--game", "martian-chess"][..], args].concat());
        assert!(o.status.success() && out(&o).contains("score cp"), "{args:?}: {}", err(&o));
        assert!(!err(&o).contains("bundled"), "{}", err(&o));
    }
}

/// A bundle per rule set: `--rules` picks the bundle whose rules agree with
/// every switch (`models/jetan-zillions/`, Jetan's Zillions rule, spec §8.2
/// variant), and the game's default rules never pick a variant's bundle.
#[test]
fn the_rules_pick_the_bundle_of_their_rule_set() {
    let zillions = r#"chief_captured_by_non_chief="CapturerWins""#;
    let o = mz_stdin(&["play", "--game", "jetan", "--rules", zillions, "--visits", "2"], "quit\n");
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("using the bundled model") && err(&o).contains("jetan-zillions"), "{}", err(&o));
    assert!(!out(&o).contains("no network"), "{}", out(&o));
    // The standard rule: no Jetan bundle, so no network (not the Zillions one).
    let o = mz_stdin(&["play", "--game", "jetan", "--visits", "2"], "quit\n");
    assert!(o.status.success() && !err(&o).contains("jetan-zillions"), "{}", err(&o));
    assert!(out(&o).contains("no network"), "{}", out(&o));
    // Switches no bundle agrees with: said, and no network.
    let o = mz_stdin(&["play", "--game", "jetan", "--rules", "max_plies=300", "--visits", "2"], "quit\n");
    assert!(
        o.status.success() && err(&o).contains("no bundled model of jetan plays under these --rules"),
        "{}",
        err(&o)
    );
    // Martian Chess's four-player bundle is not a variant of the two-player game.
    let o = mz_stdin(&["play", "--game", "martian-chess", "--rules", "max_plies=100", "--visits", "2"], "quit\n");
    assert!(o.status.success() && !err(&o).contains("martian-chess-4p"), "{}", err(&o));
}

/// The shipped bundle itself (`models/martian-chess`, whose `model.json`
/// has the `format` fields the checkpoint sidecar reader once refused) is a
/// model everywhere: `evaluate`'s `mcts:model=` by its directory and by its
/// weights file, and `export --checkpoint`, which copies its weights.
#[test]
fn the_shipped_bundle_is_a_model_in_evaluate_and_export() {
    let dir = tempfile::tempdir().unwrap();
    let shipped = martian_run::checkpoints::bundled_model(martian_rules::GameKind::MartianChess)
        .expect("the bundled Martian Chess model");
    let b = shipped.to_str().unwrap().to_string();
    let cfg = write(&dir.path().join("mc.toml"), &micro(Size::Tiny, "martian-chess", 1));
    for model in [b.clone(), format!("{b}/model.safetensors")] {
        let spec = format!("mcts:model={model},visits=2");
        let o = mz(&["evaluate", "--config", &cfg, "--a", &spec, "--b", "random", "--games", "2"]);
        assert!(o.status.success(), "{spec}: {}", err(&o));
        assert!(out(&o).contains("mcts:model=martian-chess,visits=2 vs random: +"), "{}", out(&o));
    }
    let to = dir.path().join("again");
    let o = mz(&["export", "--checkpoint", &b, "--out", to.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(
        std::fs::read(to.join("model.safetensors")).unwrap(),
        std::fs::read(shipped.join("model.safetensors")).unwrap()
    );
    let d: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(to.join("model.json")).unwrap()).unwrap();
    assert_eq!(d["game"], "martian-chess", "{d}");
}
