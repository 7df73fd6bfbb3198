//! The vector value head of four-player free-for-all (`model.value_players =
//! 4`): output shapes and range, the network evaluator's per-player values,
//! the checkpoint record, `model.json`, and the errors for a head that does
//! not fit the rules.

use martian_model::export::describe;
use martian_model::{Checkpoint, ModelConfig, NetEvaluator};
use martian_rules::martian4::{Martian4Rules, MartianChess4};
use martian_rules::GameState;
use martian_search::{Evaluation, Evaluator};
use tch::{Device, Tensor};

fn tiny(players: u32) -> ModelConfig {
    ModelConfig {
        blocks: 1,
        channels: 8,
        policy_channels: 2,
        value_hidden: 8,
        value_players: players,
        ..Default::default()
    }
}

fn ffa() -> Martian4Rules {
    Martian4Rules { teams: false, ..Martian4Rules::default() }
}

#[test]
fn vector_head_gives_four_values_in_range_and_the_evaluator_passes_them_on() {
    let rules = ffa();
    let ck = Checkpoint::new_random::<MartianChess4>(&rules, &tiny(4), Device::Cpu, 5).unwrap();
    assert_eq!(ck.net.vector_value_players(), Some(4));
    assert_eq!(ck.net.value_outputs(), 4);
    let [c, h, w] = MartianChess4::INPUT_SHAPE;
    let mut s = MartianChess4::new_game(&rules).unwrap();
    let mut moves = Vec::new();
    let mut states = Vec::new();
    let mut buf = Vec::new();
    for i in 0..3 {
        states.push(s);
        let mut planes = vec![0.0f32; c * h * w];
        s.encode(&mut planes);
        buf.extend_from_slice(&planes);
        s.legal_moves(&mut moves);
        s.play_unchecked(moves[i]);
    }
    let x = Tensor::from_slice(&buf).view([3, c as i64, h as i64, w as i64]);
    let out = ck.net.forward(&x, false);
    assert_eq!(out.value_logits.size(), vec![3, 4]);
    assert_eq!(out.policy_logits.size(), vec![3, MartianChess4::NUM_ACTIONS as i64]);
    let v: Vec<f32> = Vec::<f32>::try_from(out.value_logits.flatten(0, -1)).unwrap();
    assert!(v.iter().all(|x| (-1.0..=1.0).contains(x)), "{v:?}");
    // The evaluator hands the four values on, mover first (`value` = values[0]).
    let mut ev = NetEvaluator::new(&ck.net, Device::Cpu, 8);
    let refs: Vec<&MartianChess4> = states.iter().collect();
    let lists: Vec<Vec<_>> = states
        .iter()
        .map(|p| {
            let mut m = Vec::new();
            p.legal_moves(&mut m);
            m
        })
        .collect();
    let mrefs: Vec<&[_]> = lists.iter().map(|m| &m[..]).collect();
    let mut evals: Vec<Evaluation> = Vec::new();
    ev.evaluate(&refs, &mrefs, &mut evals).unwrap();
    for (i, e) in evals.iter().enumerate() {
        assert_eq!(e.values.len(), 4);
        assert_eq!(e.value, e.values[0]);
        for k in 0..4 {
            assert!((e.values[k] - v[i * 4 + k]).abs() < 1e-5, "row {i} value {k}");
        }
        assert!((e.priors.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    }
}

#[test]
fn the_checkpoint_and_model_json_record_the_head() {
    let rules = ffa();
    let ck = Checkpoint::new_random::<MartianChess4>(&rules, &tiny(4), Device::Cpu, 6).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ffa.safetensors");
    ck.save(&path).unwrap();
    let meta = Checkpoint::read_meta(&path).unwrap();
    assert_eq!(meta.model.value_players, 4);
    let back = Checkpoint::load::<MartianChess4>(&path, &rules, Some(&tiny(4)), Device::Cpu).unwrap();
    assert_eq!(back.net.vector_value_players(), Some(4));
    let d = describe::<MartianChess4>(&ck.meta, "ffa.safetensors", Vec::new()).unwrap();
    assert_eq!(d.value.size, 4);
    assert_eq!(d.value.order, vec!["mover", "mover+1", "mover+2", "mover+3"]);
    let n = MartianChess4::NUM_ACTIONS;
    assert_eq!((d.output.shape, d.output.value_logits), ([n + 4], [n, n + 4]));
    assert_eq!(d.architecture.value_players, Some(4));
    assert_eq!(d.architecture.model_config().value_players, 4);
    // A two-player head writes no key (older bundles read the same).
    let team = Checkpoint::new_random::<MartianChess4>(&Martian4Rules::default(), &tiny(2), Device::Cpu, 6).unwrap();
    let d2 = describe::<MartianChess4>(&team.meta, "t.safetensors", Vec::new()).unwrap();
    assert_eq!((d2.value.size, d2.architecture.value_players), (3, None));
    assert!(!serde_json::to_string(&team.meta.model).unwrap().contains("value_players"));
}

#[test]
fn a_head_that_does_not_fit_the_rules_is_refused_by_name() {
    let e = Checkpoint::new_random::<MartianChess4>(&ffa(), &tiny(2), Device::Cpu, 1).err().unwrap().to_string();
    assert!(e.contains("model.value_players = 2") && e.contains("value_players = 4"), "{e}");
    let e = Checkpoint::new_random::<MartianChess4>(&Martian4Rules::default(), &tiny(4), Device::Cpu, 1)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("model.value_players = 4") && e.contains("2 value players"), "{e}");
    assert!(tiny(5).validate().unwrap_err().contains("value_players"));
    // A free-for-all checkpoint loaded under the team rules.
    let ck = Checkpoint::new_random::<MartianChess4>(&ffa(), &tiny(4), Device::Cpu, 2).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ffa.safetensors");
    ck.save(&path).unwrap();
    assert!(Checkpoint::load::<MartianChess4>(&path, &Martian4Rules::default(), None, Device::Cpu).is_err());
}
