//! The auxiliary heads (`model.moves_left_head`, `model.score_head`): shapes,
//! that they leave the search's outputs alone, checkpoint round trips with
//! them, and the errors for a config without them or a game without points.

use martian_model::export::{describe, export_bundle, load_bundle};
use martian_model::{Checkpoint, ConfigModel, ModelConfig, ModelError};
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::GameState;
use tch::{Device, Tensor};

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

fn heads() -> ModelConfig {
    ModelConfig { moves_left_head: true, score_head: true, ..tiny() }
}

fn input<G: GameState>(n: usize) -> Tensor {
    let [c, h, w] = G::INPUT_SHAPE;
    let mut s = G::new_game(&G::Rules::default()).unwrap();
    let mut moves = Vec::new();
    let mut buf = vec![0.0f32; n * c * h * w];
    for i in 0..n {
        s.encode(&mut buf[i * c * h * w..(i + 1) * c * h * w]);
        s.legal_moves(&mut moves);
        s.play_unchecked(moves[i % moves.len()]);
    }
    Tensor::from_slice(&buf).view([n as i64, c as i64, h as i64, w as i64])
}

fn max_diff(a: &Tensor, b: &Tensor) -> f64 {
    f64::try_from((a - b).abs().max()).unwrap()
}

#[test]
fn heads_give_one_number_per_position_and_leave_the_search_outputs_alone() {
    tch::set_num_threads(1);
    let rules = MartianRules::default();
    let with = Checkpoint::new_random::<MartianChess>(&rules, &heads(), Device::Cpu, 3).unwrap();
    let without = Checkpoint::new_random::<MartianChess>(&rules, &tiny(), Device::Cpu, 3).unwrap();
    assert!(with.net.has_moves_left_head() && with.net.has_score_head());
    assert!(!without.net.has_moves_left_head() && !without.net.has_score_head());
    let x = input::<MartianChess>(5);
    let all = with.net.forward_all(&x, false);
    assert_eq!(all.moves_left.as_ref().unwrap().size(), vec![5]);
    assert_eq!(all.score.as_ref().unwrap().size(), vec![5]);
    // The search's pass computes no auxiliary output and the same policy and value.
    let plain = with.net.forward(&x, false);
    assert!(plain.moves_left.is_none() && plain.score.is_none());
    assert_eq!(max_diff(&plain.policy_logits, &all.policy_logits), 0.0);
    assert_eq!(max_diff(&plain.value_logits, &all.value_logits), 0.0);
    // The heads are created after the others: with the same seed, the rest of
    // the network starts with the same weights as a network without them.
    let other = without.net.forward(&x, false);
    assert_eq!(max_diff(&plain.policy_logits, &other.policy_logits), 0.0);
    assert_eq!(max_diff(&plain.value_logits, &other.value_logits), 0.0);
    let names: Vec<String> = with.vs.variables().into_keys().collect();
    for n in ["moves_left.conv.weight", "moves_left.fc2.bias", "score.fc1.weight", "score.fc2.weight"] {
        assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
    }
    assert_eq!(with.vs.variables().len(), without.vs.variables().len() + 12);
    // The outputs depend on the position (the heads are wired to the trunk).
    let ml = all.moves_left.unwrap();
    assert!(max_diff(&ml.get(0), &ml.get(4)) > 0.0);
}

#[test]
fn checkpoint_with_heads_round_trips_and_a_config_without_them_is_refused_by_name() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let rules = MartianRules::default();
    let path = dir.path().join("h.safetensors");
    let ck = Checkpoint::new_random::<MartianChess>(&rules, &heads(), Device::Cpu, 4).unwrap();
    ck.save(&path).unwrap();
    let meta = Checkpoint::read_meta(&path).unwrap();
    assert!(meta.model.moves_left_head && meta.model.score_head, "the sidecar records the head flags");
    let back = Checkpoint::load::<MartianChess>(&path, &rules, Some(&heads()), Device::Cpu).unwrap();
    let x = input::<MartianChess>(3);
    let (a, b) = (ck.net.forward_all(&x, false), back.net.forward_all(&x, false));
    assert_eq!(max_diff(a.moves_left.as_ref().unwrap(), b.moves_left.as_ref().unwrap()), 0.0);
    assert_eq!(max_diff(a.score.as_ref().unwrap(), b.score.as_ref().unwrap()), 0.0);
    assert_eq!(max_diff(&a.policy_logits, &b.policy_logits), 0.0);

    // A run whose config has no heads refuses it, naming each key.
    let e = Checkpoint::load_with::<MartianChess>(&path, &rules, ConfigModel::Fixed(&tiny()), Device::Cpu)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("moves_left_head true vs false") && e.contains("score_head true vs false"), "{e}");
    // The reverse: a checkpoint without heads in a config with one.
    let plain = dir.path().join("p.safetensors");
    Checkpoint::new_random::<MartianChess>(&rules, &tiny(), Device::Cpu, 4).unwrap().save(&plain).unwrap();
    let one = ModelConfig { moves_left_head: true, ..tiny() };
    let e = Checkpoint::load_with::<MartianChess>(&plain, &rules, ConfigModel::Fixed(&one), Device::Cpu)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("moves_left_head false vs true"), "{e}");
    // A command that only plays uses the checkpoint's heads, with a notice naming them.
    let (used, notice) =
        Checkpoint::load_with::<MartianChess>(&path, &rules, ConfigModel::Default(&tiny()), Device::Cpu).unwrap();
    assert!(used.net.has_moves_left_head());
    assert!(notice.unwrap().contains("moves_left_head"));
    // Weights with heads under a sidecar that denies them are refused, naming the tensors.
    let sneaky = dir.path().join("s.safetensors");
    std::fs::copy(&path, &sneaky).unwrap();
    let mut m = meta.clone();
    m.model = tiny();
    m.tensors = None;
    std::fs::write(sneaky.with_extension("json"), serde_json::to_string(&m).unwrap()).unwrap();
    let e = Checkpoint::load::<MartianChess>(&sneaky, &rules, None, Device::Cpu).err().unwrap().to_string();
    assert!(e.contains("unexpected tensors") && e.contains("moves_left.fc1.weight"), "{e}");
}

#[test]
fn sidecars_written_before_the_heads_existed_load_as_without_them() {
    let dir = tempfile::tempdir().unwrap();
    let rules = JetanRules::default();
    let path = dir.path().join("old.safetensors");
    Checkpoint::new_random::<Jetan>(&rules, &tiny(), Device::Cpu, 2).unwrap().save(&path).unwrap();
    let side = path.with_extension("json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    let model = v["model"].as_object_mut().unwrap();
    assert!(model.remove("moves_left_head").is_some() && model.remove("score_head").is_some());
    std::fs::write(&side, v.to_string()).unwrap();
    let ck = Checkpoint::load::<Jetan>(&path, &rules, Some(&tiny()), Device::Cpu).unwrap();
    assert!(!ck.meta.model.moves_left_head && !ck.meta.model.score_head);
}

#[test]
fn score_head_is_refused_for_a_game_without_points() {
    let rules = JetanRules::default();
    let cfg = ModelConfig { score_head: true, ..tiny() };
    assert!(cfg.validate().is_ok(), "the range check alone does not know the game");
    let e = cfg.validate_for::<Jetan>().unwrap_err();
    assert!(e.contains("model.score_head") && e.contains("jetan"), "{e}");
    cfg.validate_for::<MartianChess>().unwrap();
    ModelConfig { moves_left_head: true, ..tiny() }.validate_for::<Jetan>().unwrap();
    let e = Checkpoint::new_random::<Jetan>(&rules, &cfg, Device::Cpu, 1).err().unwrap();
    assert!(matches!(e, ModelError::Config(_)) && e.to_string().contains("model.score_head"), "{e}");
    // A Jetan sidecar that claims a score head is refused, naming the file and the key.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.safetensors");
    Checkpoint::new_random::<Jetan>(&rules, &tiny(), Device::Cpu, 1).unwrap().save(&path).unwrap();
    let side = path.with_extension("json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&side).unwrap()).unwrap();
    v["model"]["score_head"] = serde_json::Value::Bool(true);
    std::fs::write(&side, v.to_string()).unwrap();
    let e = Checkpoint::load::<Jetan>(&path, &rules, None, Device::Cpu).err().unwrap();
    assert!(matches!(e, ModelError::BadMetadata { .. }), "{e}");
    assert!(e.to_string().contains("j.json") && e.to_string().contains("model.score_head"), "{e}");
}

#[test]
fn bundles_carry_the_heads_in_the_weights_but_not_in_the_module_output() {
    tch::set_num_threads(1);
    let dir = tempfile::tempdir().unwrap();
    let rules = MartianRules::default();
    let mut ck = Checkpoint::new_random::<MartianChess>(&rules, &heads(), Device::Cpu, 6).unwrap();
    let desc = describe::<MartianChess>(&ck.meta, "h.safetensors", Vec::new()).unwrap();
    assert!(desc.architecture.moves_left_head && desc.architecture.score_head);
    assert!(desc.architecture.layers.iter().any(|l| l.starts_with("moves_left (auxiliary")));
    assert_eq!(desc.output.shape, [MartianChess::NUM_ACTIONS + 3], "the module's output is unchanged");
    let report = export_bundle::<MartianChess>(&mut ck, &desc, dir.path()).unwrap();
    assert!(report.checks.iter().all(|&(_, d)| d <= 1e-4));
    let (back, d) = load_bundle::<MartianChess>(dir.path(), Device::Cpu).unwrap();
    assert_eq!(d.architecture.model_config(), heads());
    let x = input::<MartianChess>(2);
    let (a, b) = (ck.net.forward_all(&x, false), back.net.forward_all(&x, false));
    assert_eq!(max_diff(a.score.as_ref().unwrap(), b.score.as_ref().unwrap()), 0.0);
    // A description written before the flags existed reads as without heads.
    let mut v = serde_json::to_value(&d).unwrap();
    let arch = v["architecture"].as_object_mut().unwrap();
    arch.remove("moves_left_head");
    arch.remove("score_head");
    let old: martian_model::export::ModelDescription = serde_json::from_value(v).unwrap();
    assert!(!old.architecture.moves_left_head && !old.architecture.score_head);
}

/// The search's evaluator carries the score head's output as
/// `Evaluation::score`, in points (the head's output times `SCORE_SCALE`,
/// each position's own, whatever the batch); without the head the score is
/// `None` (KataGo's score lead and score utility, Wu 2019, §4.2).
#[test]
fn the_evaluator_gives_the_score_head_in_points() {
    use martian_search::{Evaluation, Evaluator};
    tch::set_num_threads(1);
    let rules = MartianRules::default();
    let with = Checkpoint::new_random::<MartianChess>(&rules, &heads(), Device::Cpu, 4).unwrap();
    let without = Checkpoint::new_random::<MartianChess>(&rules, &tiny(), Device::Cpu, 4).unwrap();
    let mut positions = vec![MartianChess::new_game(&rules).unwrap()];
    let mut moves = Vec::new();
    for i in 0..3 {
        let mut s = positions[i];
        s.legal_moves(&mut moves);
        s.play_unchecked(moves[i % moves.len()]);
        positions.push(s);
    }
    let legal: Vec<Vec<martian_rules::Move>> = positions
        .iter()
        .map(|p| {
            let mut m = Vec::new();
            p.legal_moves(&mut m);
            m
        })
        .collect();
    let refs: Vec<&MartianChess> = positions.iter().collect();
    let move_refs: Vec<&[martian_rules::Move]> = legal.iter().map(|m| &m[..]).collect();
    let x = input::<MartianChess>(4);
    let want: Vec<f32> = Vec::try_from(with.net.forward_all(&x, false).score.unwrap()).unwrap();
    let mut out: Vec<Evaluation> = Vec::new();
    martian_model::NetEvaluator::<MartianChess>::new(&with.net, Device::Cpu, 8)
        .evaluate(&refs, &move_refs, &mut out)
        .unwrap();
    for (e, w) in out.iter().zip(&want) {
        let s = e.score.expect("a score head gives a score");
        assert!((s - w * martian_model::SCORE_SCALE).abs() < 1e-4, "{s} vs {w} x {}", martian_model::SCORE_SCALE);
    }
    // One position alone gets the same score as in the batch of four.
    let mut one: Vec<Evaluation> = Vec::new();
    martian_model::NetEvaluator::<MartianChess>::new(&with.net, Device::Cpu, 8)
        .evaluate(&refs[2..3], &move_refs[2..3], &mut one)
        .unwrap();
    assert!((one[0].score.unwrap() - out[2].score.unwrap()).abs() < 1e-4);
    let mut plain: Vec<Evaluation> = Vec::new();
    martian_model::NetEvaluator::<MartianChess>::new(&without.net, Device::Cpu, 8)
        .evaluate(&refs, &move_refs, &mut plain)
        .unwrap();
    assert!(plain.iter().all(|e| e.score.is_none()));
}
