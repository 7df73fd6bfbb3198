//! Network shapes, checkpoint round trips and errors, the network evaluator.

use martian_model::{Checkpoint, ModelConfig, ModelError, NetEvaluator};
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::GameState;
use martian_search::Evaluator;
use tch::{Device, Kind, Tensor};

fn tiny() -> ModelConfig {
    ModelConfig { blocks: 2, channels: 16, batch_norm: true, global_pooling: true, policy_channels: 2, value_hidden: 8 }
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
    assert_eq!(back.meta, ck.meta);
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
    // Truncated weights.
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 3]).unwrap();
    let e = Checkpoint::load::<Jetan>(&path, &JetanRules::default(), None, Device::Cpu).err().unwrap();
    assert!(e.to_string().contains("c.safetensors"), "{e}");
    // Bad sidecar.
    std::fs::write(path.with_extension("json"), "{not json").unwrap();
    assert!(matches!(
        Checkpoint::load::<Jetan>(&path, &JetanRules::default(), None, Device::Cpu),
        Err(ModelError::BadMetadata { .. })
    ));
    // Missing.
    assert!(Checkpoint::load::<Jetan>(&dir.path().join("none.safetensors"), &JetanRules::default(), None, Device::Cpu)
        .is_err());
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
