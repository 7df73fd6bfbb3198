//! Network shapes, checkpoint round trips and errors, the network evaluator.

use martian_model::{Checkpoint, ModelConfig, ModelError, NetEvaluator};
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::GameState;
use martian_search::Evaluator;
use tch::{Device, Kind, Tensor};

fn tiny() -> ModelConfig {
    ModelConfig {
        blocks: 2,
        channels: 16,
        batch_norm: true,
        global_pooling: true,
        policy_channels: 2,
        value_hidden: 8,
        ..Default::default()
    }
}

fn input<G: GameState>(positions: &[G]) -> Tensor {
    let [c, h, w] = G::INPUT_SHAPE;
    let mut buf = vec![0.0f32; positions.len() * c * h * w];
    for (i, p) in positions.iter().enumerate() {
        p.encode(&mut buf[i * c * h * w..(i + 1) * c * h * w]);
    }
    Tensor::from_slice(&buf).view([positions.len() as i64, c as i64, h as i64, w as i64])
}

#[test]
fn output_shapes() {
    let ck = Checkpoint::new_random::<Jetan>(&JetanRules::default(), &tiny(), Device::Cpu, 1).unwrap();
    let pos = Jetan::new_game(&JetanRules::default()).unwrap();
    let out = ck.net.forward(&input(&[pos.clone(), pos.clone(), pos]), false);
    assert_eq!(out.policy_logits.size(), vec![3, 4900]);
    assert_eq!(out.value_logits.size(), vec![3, 3]);
    let ck = Checkpoint::new_random::<MartianChess>(&MartianRules::default(), &tiny(), Device::Cpu, 1).unwrap();
    let pos = MartianChess::new_game(&MartianRules::default()).unwrap();
    let out = ck.net.forward(&input(&[pos]), false);
    assert_eq!(out.policy_logits.size(), vec![1, 1024]);
}

#[test]
fn checkpoint_round_trip_gives_identical_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.safetensors");
    let mut ck = Checkpoint::new_random::<Jetan>(&JetanRules::default(), &tiny(), Device::Cpu, 5).unwrap();
    ck.meta.step = 42;
    ck.save(&path).unwrap();
    let back = Checkpoint::load::<Jetan>(&path, &JetanRules::default(), Some(&tiny()), Device::Cpu).unwrap();
    // The loaded sidecar has the checksum that save wrote, and otherwise the meta saved.
    let mut meta = back.meta.clone();
    assert!(meta.weights_crc64.take().is_some());
    assert_eq!(meta, ck.meta);
    let pos = Jetan::new_game(&JetanRules::default()).unwrap();
    let x = input(&[pos]);
    let (a, b) = (ck.net.forward(&x, false), back.net.forward(&x, false));
    assert_eq!(f64::try_from((a.policy_logits - b.policy_logits).abs().max()).unwrap(), 0.0);
    assert_eq!(f64::try_from((a.value_logits - b.value_logits).abs().max()).unwrap(), 0.0);
    assert!(!std::fs::read_dir(dir.path()).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with(".tmp")));
}

#[test]
fn mismatched_or_corrupt_checkpoints_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.safetensors");
    Checkpoint::new_random::<Jetan>(&JetanRules::default(), &tiny(), Device::Cpu, 5).unwrap().save(&path).unwrap();
    // Other rules.
    let other = JetanRules { max_plies: 100, ..Default::default() };
    let e = Checkpoint::load::<Jetan>(&path, &other, None, Device::Cpu).err().unwrap();
    assert!(matches!(e, ModelError::Mismatch { .. }) && e.to_string().contains("rules"), "{e}");
    // Other architecture.
    let big = ModelConfig { channels: 32, ..tiny() };
    let e = Checkpoint::load::<Jetan>(&path, &JetanRules::default(), Some(&big), Device::Cpu).err().unwrap();
    assert!(e.to_string().contains("model"), "{e}");
    // Other game.
    let e = Checkpoint::load::<MartianChess>(&path, &MartianRules::default(), None, Device::Cpu).err().unwrap();
    assert!(e.to_string().contains("game"), "{e}");
    // One flipped bit in the data section (a finite weight still): refused by
    // the sidecar's checksum, naming the file, the sidecar and both checksums.
    let bytes = std::fs::read(&path).unwrap();
    let want = Checkpoint::read_meta(&path).unwrap().weights_crc64.unwrap();
    let mut flipped = bytes.clone();
    let n = flipped.len();
    flipped[n - 4] ^= 0x01; // the lowest mantissa bit of the last weight
    std::fs::write(&path, &flipped).unwrap();
    let got = martian_model::checkpoint::weights_checksum(&flipped);
    assert_ne!(got, want);
    let e = Checkpoint::load::<Jetan>(&path, &JetanRules::default(), None, Device::Cpu).err().unwrap();
    assert!(matches!(e, ModelError::BadWeights { .. }), "{e}");
    let m = e.to_string();
    assert!(m.contains("c.safetensors") && m.contains("c.json") && m.contains(&got) && m.contains(&want), "{m}");
    // Another checkpoint's weights (same shapes) under this sidecar: refused too.
    let other_weights = dir.path().join("d.safetensors");
    Checkpoint::new_random::<Jetan>(&JetanRules::default(), &tiny(), Device::Cpu, 6)
        .unwrap()
        .save(&other_weights)
        .unwrap();
    std::fs::copy(&other_weights, &path).unwrap();
    let e = Checkpoint::load::<Jetan>(&path, &JetanRules::default(), None, Device::Cpu).err().unwrap();
    assert!(e.to_string().contains("CRC-64"), "{e}");
    // Values that are not finite (garbled bytes in the data section) under a
    // version 2 sidecar, which has no checksum: refused, naming a tensor.
    let sidecar = std::fs::read_to_string(path.with_extension("json")).unwrap();
    edit_sidecar(&path, |v| {
        v["format_version"] = 2.into();
        v.as_object_mut().unwrap().remove("weights_crc64");
    });
    let mut garbled = bytes.clone();
    garbled[n - 64..].fill(0xFF); // 0xFFFFFFFF is a NaN in f32
    std::fs::write(&path, &garbled).unwrap();
    let e = Checkpoint::load::<Jetan>(&path, &JetanRules::default(), None, Device::Cpu).err().unwrap();
    assert!(matches!(e, ModelError::BadWeights { .. }), "{e}");
    assert!(e.to_string().contains("c.safetensors") && e.to_string().contains("not finite"), "{e}");
    // The original bytes under their own sidecar load again.
    std::fs::write(path.with_extension("json"), &sidecar).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    Checkpoint::load::<Jetan>(&path, &JetanRules::default(), None, Device::Cpu).unwrap();
    // Truncated weights: the weights file is named, as weights.
    std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
    let e = Checkpoint::load::<Jetan>(&path, &JetanRules::default(), None, Device::Cpu).err().unwrap();
    assert!(e.to_string().contains("checkpoint weights") && e.to_string().contains("c.safetensors"), "{e}");
    assert!(e.to_string().contains("truncated"), "{e}");
    // Bad sidecar.
    std::fs::write(path.with_extension("json"), "{not json").unwrap();
    assert!(matches!(
        Checkpoint::load::<Jetan>(&path, &JetanRules::default(), None, Device::Cpu),
        Err(ModelError::BadMetadata { .. })
    ));
    // Missing: the message names the path given.
    let e = Checkpoint::load::<Jetan>(&dir.path().join("none.safetensors"), &JetanRules::default(), None, Device::Cpu)
        .err()
        .unwrap();
    assert!(e.to_string().starts_with("no checkpoint ") && e.to_string().contains("none.safetensors"), "{e}");
}

#[test]
fn net_evaluator_gives_priors_over_legal_moves() {
    let ck = Checkpoint::new_random::<MartianChess>(&MartianRules::default(), &tiny(), Device::Cpu, 3).unwrap();
    let a = MartianChess::new_game(&MartianRules::default()).unwrap();
    let mut b = a;
    b.play(b.parse_move("d3d5").unwrap()).unwrap();
    let (mut ma, mut mb) = (Vec::new(), Vec::new());
    a.legal_moves(&mut ma);
    b.legal_moves(&mut mb);
    let mut ev = NetEvaluator::<MartianChess>::new(&ck.net, Device::Cpu, 1);
    let mut out = Vec::new();
    ev.evaluate(&[&a, &b], &[&ma, &mb], &mut out).unwrap();
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].priors.len(), ma.len());
    assert_eq!(out[1].priors.len(), mb.len());
    for e in &out {
        assert!((e.priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert!((-1.0..=1.0).contains(&e.value));
    }
    // Batch of 1 (max_batch 1 splits) equals a batch of 2.
    let mut ev2 = NetEvaluator::<MartianChess>::new(&ck.net, Device::Cpu, 8);
    let mut out2 = Vec::new();
    ev2.evaluate(&[&a, &b], &[&ma, &mb], &mut out2).unwrap();
    for (x, y) in out.iter().zip(&out2) {
        assert!((x.value - y.value).abs() < 1e-5);
    }
    let _ = Kind::Float;
}

/// Rewrites the sidecar of `path` with `edit` applied to its JSON.
fn edit_sidecar(path: &std::path::Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let side = path.with_extension("json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(&side, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// A checkpoint is used only as its sidecar declares it: a sidecar that declares 1 block over weights with 2 blocks
/// used to load (the second block's tensors were ignored). Both directions,
/// with and without the sidecar's tensor list, and a shape mismatch, are errors
/// naming every tensor concerned.
#[test]
fn weights_are_checked_against_the_declared_architecture() {
    let dir = tempfile::tempdir().unwrap();
    let rules = JetanRules::default();
    let two = dir.path().join("two.safetensors");
    Checkpoint::new_random::<Jetan>(&rules, &tiny(), Device::Cpu, 5).unwrap().save(&two).unwrap();
    let meta = Checkpoint::read_meta(&two).unwrap();
    assert_eq!(meta.format_version, 3);
    // The checksum of the bytes written, as 16 hex digits.
    let crc = meta.weights_crc64.clone().expect("a version 3 sidecar has the weights' checksum");
    assert_eq!(crc, martian_model::checkpoint::weights_checksum(&std::fs::read(&two).unwrap()));
    assert_eq!(crc.len(), 16);
    let listed = meta.tensors.clone().expect("a version 2 sidecar lists the tensors");
    assert_eq!(listed["stem.conv.weight"], vec![16, 24, 3, 3]);
    assert!(listed.contains_key("blocks.1.a.conv.weight"));
    let second_block: Vec<&String> = listed.keys().filter(|k| k.starts_with("blocks.1.")).collect();
    assert!(second_block.len() > 4);

    // Sidecar says 1 block, file has 2: every blocks.1.* tensor is unexpected.
    // Once without the tensor list (an old sidecar), once with it.
    let original = std::fs::read_to_string(two.with_extension("json")).unwrap();
    for keep_list in [false, true] {
        std::fs::write(two.with_extension("json"), &original).unwrap();
        edit_sidecar(&two, |v| {
            v["model"]["blocks"] = 1.into();
            if !keep_list {
                v["format_version"] = 1.into();
                v.as_object_mut().unwrap().remove("tensors");
            }
        });
        let e = Checkpoint::load::<Jetan>(&two, &rules, None, Device::Cpu).err().expect("must not load").to_string();
        assert!(e.contains("unexpected tensors"), "{e}");
        for name in &second_block {
            assert!(e.contains(name.as_str()), "{name} not named: {e}");
        }
        if keep_list {
            assert!(e.contains("tensor list of the metadata"), "{e}");
        }
    }

    // Sidecar says 2 blocks, file has 1: every blocks.1.* tensor is missing.
    let one = dir.path().join("one.safetensors");
    let cfg1 = ModelConfig { blocks: 1, ..tiny() };
    Checkpoint::new_random::<Jetan>(&rules, &cfg1, Device::Cpu, 5).unwrap().save(&one).unwrap();
    edit_sidecar(&one, |v| {
        v["model"]["blocks"] = 2.into();
        v.as_object_mut().unwrap().remove("tensors");
    });
    let e = Checkpoint::load::<Jetan>(&one, &rules, None, Device::Cpu).err().unwrap().to_string();
    assert!(e.contains("missing tensors"), "{e}");
    for name in &second_block {
        assert!(e.contains(name.as_str()), "{name} not named: {e}");
    }

    // Other channel count: shape mismatches, named with both shapes.
    edit_sidecar(&one, |v| {
        v["model"]["blocks"] = 1.into();
        v["model"]["channels"] = 8.into();
    });
    let e = Checkpoint::load::<Jetan>(&one, &rules, None, Device::Cpu).err().unwrap().to_string();
    assert!(
        e.contains("tensor stem.conv.weight has shape [16, 24, 3, 3], the architecture needs [8, 24, 3, 3]"),
        "{e}"
    );

    // An old (version 1) sidecar without the list still loads when it fits,
    // and saving it again writes version 2 with the list.
    edit_sidecar(&one, |v| {
        v["model"]["channels"] = 16.into();
        v["format_version"] = 1.into();
    });
    let ck = Checkpoint::load::<Jetan>(&one, &rules, None, Device::Cpu).unwrap();
    assert_eq!(ck.meta.format_version, 1);
    let again = dir.path().join("again.safetensors");
    ck.save(&again).unwrap();
    let m = Checkpoint::read_meta(&again).unwrap();
    assert_eq!((m.format_version, m.tensors.is_some(), m.weights_crc64.is_some()), (3, true, true));
    // A version this program does not know is refused by name.
    edit_sidecar(&again, |v| v["format_version"] = 4.into());
    let e = Checkpoint::load::<Jetan>(&again, &rules, None, Device::Cpu).err().unwrap().to_string();
    assert!(e.contains("format_version 4"), "{e}");
    // Version 3 without the checksum, or with one that is not 16 hex digits.
    edit_sidecar(&again, |v| {
        v["format_version"] = 3.into();
        v.as_object_mut().unwrap().remove("weights_crc64");
    });
    let e = Checkpoint::load::<Jetan>(&again, &rules, None, Device::Cpu).err().unwrap().to_string();
    assert!(e.contains("again.json") && e.contains("needs \"weights_crc64\""), "{e}");
    edit_sidecar(&again, |v| v["weights_crc64"] = "12ab".into());
    let e = Checkpoint::load::<Jetan>(&again, &rules, None, Device::Cpu).err().unwrap().to_string();
    assert!(e.contains("\"12ab\", expected 16 hex digits"), "{e}");
    // Not a safetensors file at all.
    std::fs::write(&one, b"\xff\xff\xff\xff\xff\xff\xff\xffjunk").unwrap();
    let e = Checkpoint::load::<Jetan>(&one, &rules, None, Device::Cpu).err().unwrap().to_string();
    assert!(e.contains("one.safetensors") && e.contains("header length"), "{e}");
}

/// One architecture rule: with a config that only shapes new networks the
/// checkpoint's architecture wins and a notice names the differing fields;
/// with a config that fixes it the same difference is an error.
#[test]
fn architecture_rule_notice_or_error_names_the_fields() {
    use martian_model::ConfigModel;
    let dir = tempfile::tempdir().unwrap();
    let rules = JetanRules::default();
    let path = dir.path().join("c.safetensors");
    Checkpoint::new_random::<Jetan>(&rules, &tiny(), Device::Cpu, 5).unwrap().save(&path).unwrap();
    let config = ModelConfig { blocks: 3, value_hidden: 32, ..tiny() };
    let (ck, notice) =
        Checkpoint::load_with::<Jetan>(&path, &rules, ConfigModel::Default(&config), Device::Cpu).unwrap();
    assert_eq!(ck.meta.model, tiny());
    let notice = notice.expect("a notice");
    assert!(notice.contains("blocks 2 vs 3") && notice.contains("value_hidden 8 vs 32"), "{notice}");
    assert!(!notice.contains("channels"), "only differing fields: {notice}");
    let (_, none) = Checkpoint::load_with::<Jetan>(&path, &rules, ConfigModel::Default(&tiny()), Device::Cpu).unwrap();
    assert_eq!(none, None);
    let (_, none) = Checkpoint::load_with::<Jetan>(&path, &rules, ConfigModel::Absent, Device::Cpu).unwrap();
    assert_eq!(none, None);
    let e = Checkpoint::load_with::<Jetan>(&path, &rules, ConfigModel::Fixed(&config), Device::Cpu).err().unwrap();
    let e = e.to_string();
    assert!(e.contains("blocks 2 vs 3") && e.contains("value_hidden 8 vs 32"), "{e}");
}

/// Rules mismatches name each differing switch, not two whole rule sets.
#[test]
fn rules_mismatch_names_the_switches() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.safetensors");
    Checkpoint::new_random::<Jetan>(&JetanRules::default(), &tiny(), Device::Cpu, 5).unwrap().save(&path).unwrap();
    let other = JetanRules { max_plies: 100, no_capture_limit: Some(50), ..Default::default() };
    let e = Checkpoint::load::<Jetan>(&path, &other, None, Device::Cpu).err().unwrap().to_string();
    assert!(
        e.contains("rules differ (checkpoint vs config): max_plies 500 vs 100; no_capture_limit none vs 50"),
        "{e}"
    );
    assert!(!e.contains("thoat"), "equal switches are not printed: {e}");
}

/// The bundle's `model.json` lists the tensors, and `load_bundle` checks the
/// weights against the described architecture both ways (old descriptions
/// without the list included).
#[test]
fn bundle_lists_and_checks_its_tensors() {
    use martian_model::export::{describe, export_bundle, load_bundle, read_description};
    let dir = tempfile::tempdir().unwrap();
    let rules = MartianRules::default();
    let mut ck = Checkpoint::new_random::<MartianChess>(&rules, &tiny(), Device::Cpu, 2).unwrap();
    let desc = describe::<MartianChess>(&ck.meta, "c.safetensors", Vec::new()).unwrap();
    let bundle = dir.path().join("bundle");
    let first = export_bundle::<MartianChess>(&mut ck, &desc, &bundle).unwrap();
    assert!(!first.removed_onnx);
    // An earlier export's ONNX file is another network's: a new export removes it.
    std::fs::write(bundle.join("model.onnx"), b"an earlier network").unwrap();
    let again = export_bundle::<MartianChess>(&mut ck, &desc, &bundle).unwrap();
    assert!(again.removed_onnx && !bundle.join("model.onnx").exists());
    let d = read_description(&bundle).unwrap();
    let tensors = d.tensors.clone().expect("model.json lists the tensors");
    assert_eq!(tensors["policy.fc.weight"], vec![1024, 2 * 32]);
    assert_eq!(Some(&tensors), ck.meta.tensors.as_ref());
    let (loaded, _) = load_bundle::<MartianChess>(&bundle, Device::Cpu).unwrap();
    assert_eq!(loaded.meta.tensors, Some(tensors));

    // model.json records the weights' CRC-64; one flipped bit is refused,
    // naming the weights, model.json and both checksums.
    let weights = bundle.join("model.safetensors");
    let bytes = std::fs::read(&weights).unwrap();
    let want = d.weights_crc64.clone().expect("model.json records the weights' checksum");
    assert_eq!(want, martian_model::checkpoint::weights_checksum(&bytes));
    let mut flipped = bytes.clone();
    let n = flipped.len();
    flipped[n - 4] ^= 0x01; // the lowest mantissa bit of the last weight
    std::fs::write(&weights, &flipped).unwrap();
    let e = load_bundle::<MartianChess>(&bundle, Device::Cpu).err().expect("a changed weights file must not load");
    assert!(matches!(e, ModelError::BadWeights { .. }), "{e}");
    let m = e.to_string();
    let got = martian_model::checkpoint::weights_checksum(&flipped);
    assert!(
        m.contains("model.safetensors") && m.contains("model.json") && m.contains(&got) && m.contains(&want),
        "{m}"
    );
    // A bundle written before the checksum was added loads unchecked.
    let json = bundle.join("model.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    v.as_object_mut().unwrap().remove("weights_crc64");
    std::fs::write(&json, serde_json::to_string(&v).unwrap()).unwrap();
    assert!(load_bundle::<MartianChess>(&bundle, Device::Cpu).is_ok());
    std::fs::write(&weights, &bytes).unwrap();

    let json = bundle.join("model.json");
    let original = std::fs::read_to_string(&json).unwrap();
    for drop_list in [false, true] {
        let mut v: serde_json::Value = serde_json::from_str(&original).unwrap();
        v["architecture"]["blocks"] = 1.into();
        if drop_list {
            v.as_object_mut().unwrap().remove("tensors");
        }
        std::fs::write(&json, serde_json::to_string(&v).unwrap()).unwrap();
        let e = load_bundle::<MartianChess>(&bundle, Device::Cpu).err().expect("must not load").to_string();
        assert!(e.contains("unexpected tensors") && e.contains("blocks.1.b.conv.weight"), "{e}");
    }
    // Rules that are not rules of the game are named.
    let mut v: serde_json::Value = serde_json::from_str(&original).unwrap();
    v["rules"]["no_such_switch"] = true.into();
    std::fs::write(&json, serde_json::to_string(&v).unwrap()).unwrap();
    let e = load_bundle::<MartianChess>(&bundle, Device::Cpu).err().unwrap().to_string();
    assert!(e.contains("no_such_switch"), "{e}");
}

/// A weights file is untrusted input (frontends pass models around): every
/// crafted header is refused before libtorch sees it, with one error naming
/// the file, the tensor and what is wrong, never a panic. The I32 case (same
/// shape and bytes as the F32 tensor) panicked inside libtorch before.
#[test]
fn crafted_safetensors_files_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let rules = JetanRules::default();
    let path = dir.path().join("m.safetensors");
    Checkpoint::new_random::<Jetan>(&rules, &tiny(), Device::Cpu, 5).unwrap().save(&path).unwrap();
    let good = std::fs::read(&path).unwrap();
    let n = u64::from_le_bytes(good[..8].try_into().unwrap()) as usize;
    let header: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&good[8..8 + n]).unwrap();
    let data = good[8 + n..].to_vec();
    let mut names: Vec<String> = header.keys().filter(|k| *k != "__metadata__").cloned().collect();
    names.sort_by_key(|k| header[k]["data_offsets"][0].as_u64().unwrap());
    let (first, second) = (names[0].clone(), names[1].clone());
    let file = |header_bytes: &[u8], data: &[u8]| -> Vec<u8> {
        [&(header_bytes.len() as u64).to_le_bytes()[..], header_bytes, data].concat()
    };
    let edited = |f: &dyn Fn(&mut serde_json::Map<String, serde_json::Value>)| -> Vec<u8> {
        let mut h = header.clone();
        f(&mut h);
        file(serde_json::to_string(&h).unwrap().as_bytes(), &data)
    };
    let size = |k: &str| {
        let o = &header[k]["data_offsets"];
        o[1].as_u64().unwrap() - o[0].as_u64().unwrap()
    };
    let cases: Vec<(&str, Vec<u8>, String)> = vec![
        ("wrong dtype", edited(&|h| h[&first]["dtype"] = "I32".into()), format!("tensor {first} is stored as I32")),
        ("unknown dtype", edited(&|h| h[&first]["dtype"] = "F8".into()), "unknown dtype \"F8\"".into()),
        (
            "header length past the end",
            [&(good.len() as u64).to_le_bytes()[..], &good[8..]].concat(),
            "does not fit in the file".into(),
        ),
        ("header length 2^63", [&(1u64 << 63).to_le_bytes()[..], &good[8..]].concat(), "header length".into()),
        ("non-JSON header", file(b"this is not JSON at all!", &data), "not a JSON object".into()),
        ("non-UTF-8 header", file(b"{\"a\xff\xfe\": 1}", &data), "not UTF-8".into()),
        (
            "reversed offsets",
            edited(&|h| {
                let o = h[&first]["data_offsets"].clone();
                h[&first]["data_offsets"] = serde_json::json!([o[1], o[0]]);
            }),
            "reversed".into(),
        ),
        (
            "overlapping offsets",
            edited(&|h| {
                // The second tensor moved onto the first one's bytes (same length where they fit).
                let s = size(&second).min(size(&first));
                let b = h[&first]["data_offsets"][0].as_u64().unwrap();
                h[&second]["data_offsets"] = serde_json::json!([b, b + s]);
                let k = (s / 4) as i64;
                h[&second]["shape"] = serde_json::json!([k]);
            }),
            "overlap".into(),
        ),
        (
            "shape and bytes disagree",
            edited(&|h| {
                let mut shape: Vec<i64> = serde_json::from_value(h[&first]["shape"].clone()).unwrap();
                shape[0] += 1;
                h[&first]["shape"] = serde_json::json!(shape);
            }),
            "bytes, its data_offsets give".into(),
        ),
        // Its bytes left without an owner (the format allows no holes).
        ("missing tensor", edited(&|h| drop(h.remove(&first))), "belong to no tensor".into()),
        (
            "extra tensor",
            edited(&|h| {
                let e = h[&first].clone();
                h.insert("extra.weight".into(), e);
            }),
            "overlap".into(),
        ),
    ];
    for (what, bytes, want) in cases {
        std::fs::write(&path, &bytes).unwrap();
        let e = Checkpoint::load::<Jetan>(&path, &rules, None, Device::Cpu)
            .err()
            .unwrap_or_else(|| panic!("{what}: loaded"));
        let m = e.to_string();
        assert!(m.contains("m.safetensors") && m.contains(&want), "{what}: {m}");
        assert!(!m.contains("InvalidOffset") && !m.contains("TensorInvalidInfo"), "{what}: internal names in {m}");
    }
    // An extra tensor with bytes of its own is named as unexpected.
    let mut h = header.clone();
    let e = h[&first].clone();
    let end = data.len() as u64;
    let mut extra = e.clone();
    extra["data_offsets"] = serde_json::json!([end, end + size(&first)]);
    h.insert("extra.weight".into(), extra);
    let more: Vec<u8> = [data.clone(), data[..size(&first) as usize].to_vec()].concat();
    std::fs::write(&path, file(serde_json::to_string(&h).unwrap().as_bytes(), &more)).unwrap();
    let m = Checkpoint::load::<Jetan>(&path, &rules, None, Device::Cpu).err().unwrap().to_string();
    assert!(m.contains("extra.weight") && m.contains("unexpected"), "{m}");
    // The original bytes load.
    std::fs::write(&path, &good).unwrap();
    Checkpoint::load::<Jetan>(&path, &rules, None, Device::Cpu).unwrap();
}

/// A sidecar `step` past 2^53 is refused by name: the next generation counted
/// on from 2^64 - 1 and wrapped to a small number.
#[test]
fn an_implausible_step_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rules = JetanRules::default();
    let path = dir.path().join("m.safetensors");
    Checkpoint::new_random::<Jetan>(&rules, &tiny(), Device::Cpu, 5).unwrap().save(&path).unwrap();
    edit_sidecar(&path, |v| v["step"] = (1u64 << 53).into());
    assert_eq!(Checkpoint::read_meta(&path).unwrap().step, 1 << 53, "the bound itself is accepted");
    edit_sidecar(&path, |v| v["step"] = u64::MAX.into());
    let e = Checkpoint::read_meta(&path).unwrap_err().to_string();
    assert!(e.contains("m.json") && e.contains("\"step\" is 18446744073709551615"), "{e}");
    assert!(Checkpoint::load::<Jetan>(&path, &rules, None, Device::Cpu).is_err());
}
