//! The network's device side (work moved to the device so the CPU threads are free) changes no result:
//! * `NetEvaluator` (gather of the legal logits on the device, softmax on the
//!   host) gives bit for bit the evaluations of the evaluator before it
//!   (`OldNetEvaluator` below: the whole policy copied back, then the
//!   softmax), for passes of any size and fixed-size passes;
//! * self-play on a network replica with the overlapped driver and one group
//!   plays the games of the lockstep driver with the old evaluator and the
//!   cache (what `martian-zero selfplay` did before);
//! * two CPU "devices" (two replicas, two threads) with fixed-size passes play
//!   the games of one device, and the same games in the same order each time.

use martian_model::{Checkpoint, ModelConfig, NetBackend, NetEvaluator, PolicyValueNet};
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Move};
use martian_search::{CachedEvaluator, EvalError, Evaluation, Evaluator, MctsConfig};
use martian_selfplay::{play_games, play_games_on_devices, FinishedGame, PlayParams, SelfplayConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tch::{Device, Kind, Tensor};

/// The evaluator as it was before its work moved to the device (`model/src/evaluator.rs`,
/// `run_chunk`), kept here as the reference.
struct OldNetEvaluator<'a> {
    net: &'a PolicyValueNet,
    input: Vec<f32>,
    policy: Vec<f32>,
    value: Vec<f32>,
    max_batch: usize,
    fixed: bool,
}

impl<'a> OldNetEvaluator<'a> {
    fn new(net: &'a PolicyValueNet, max_batch: usize, fixed: bool) -> Self {
        OldNetEvaluator { net, input: Vec::new(), policy: Vec::new(), value: Vec::new(), max_batch, fixed }
    }

    fn run_chunk<G: GameState>(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut [Evaluation]) {
        let [c, h, w] = G::INPUT_SHAPE;
        let plane = c * h * w;
        let n = positions.len();
        let b = if self.fixed { self.max_batch } else { n };
        self.input.resize(b * plane, 0.0);
        for (i, p) in positions.iter().enumerate() {
            p.encode(&mut self.input[i * plane..(i + 1) * plane]);
        }
        self.input[n * plane..].fill(0.0);
        {
            let _guard = tch::no_grad_guard();
            let x = Tensor::from_slice(&self.input).view([b as i64, c as i64, h as i64, w as i64]);
            let out_t = self.net.forward(&x, false);
            let pl = out_t.policy_logits.to_device(Device::Cpu).to_kind(Kind::Float).contiguous();
            let vl = out_t.value_logits.softmax(-1, Kind::Float).to_device(Device::Cpu).contiguous();
            self.policy.resize(b * G::NUM_ACTIONS, 0.0);
            self.value.resize(b * 3, 0.0);
            pl.copy_data(&mut self.policy, b * G::NUM_ACTIONS);
            vl.copy_data(&mut self.value, b * 3);
        }
        for (i, (p, ms)) in positions.iter().zip(moves).enumerate() {
            let logits = &self.policy[i * G::NUM_ACTIONS..(i + 1) * G::NUM_ACTIONS];
            let e = &mut out[i];
            e.priors.clear();
            let mut max = f32::NEG_INFINITY;
            for &m in ms.iter() {
                let l = logits[p.action_index(m)];
                e.priors.push(l);
                max = max.max(l);
            }
            let mut sum = 0.0;
            for x in e.priors.iter_mut() {
                *x = (*x - max).exp();
                sum += *x;
            }
            if sum > 0.0 && sum.is_finite() {
                e.priors.iter_mut().for_each(|x| *x /= sum);
            } else {
                let u = 1.0 / ms.len().max(1) as f32;
                e.priors.iter_mut().for_each(|x| *x = u);
            }
            let wdl = &self.value[i * 3..i * 3 + 3];
            e.value = (wdl[0] - wdl[2]).clamp(-1.0, 1.0);
            e.draw = wdl[1].clamp(0.0, 1.0);
        }
    }
}

impl<G: GameState> Evaluator<G> for OldNetEvaluator<'_> {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        out.resize_with(positions.len(), Evaluation::default);
        let mut start = 0;
        while start < positions.len() {
            let end = (start + self.max_batch).min(positions.len());
            self.run_chunk(&positions[start..end], &moves[start..end], &mut out[start..end]);
            start = end;
        }
        Ok(())
    }
}

fn model_cfg() -> ModelConfig {
    ModelConfig {
        blocks: 2,
        channels: 16,
        batch_norm: true,
        global_pooling: true,
        policy_channels: 4,
        value_hidden: 16,
        ..ModelConfig::default()
    }
}

fn positions<G: GameState>(start: &G, n: usize, seed: u64) -> (Vec<G>, Vec<Vec<Move>>) {
    let mut rng = StdRng::seed_from_u64(seed);
    let (mut out, mut legal) = (Vec::new(), Vec::new());
    let mut moves = Vec::new();
    while out.len() < n {
        let mut s = start.clone();
        for _ in 0..rng.gen_range(0..40) {
            if s.outcome().is_some() {
                break;
            }
            s.legal_moves(&mut moves);
            let m = moves[rng.gen_range(0..moves.len())];
            s.play_unchecked(m);
        }
        if s.outcome().is_none() {
            s.legal_moves(&mut moves);
            legal.push(moves.clone());
            out.push(s);
        }
    }
    (out, legal)
}

fn same_evaluations<G: GameState>(rules: &G::Rules) {
    tch::set_num_threads(1);
    let ck = Checkpoint::new_random::<G>(rules, &model_cfg(), Device::Cpu, 3).unwrap();
    let (pos, legal) = positions(&G::new_game(rules).unwrap(), 70, 5);
    for (max_batch, fixed) in [(1024, false), (16, false), (16, true), (7, true)] {
        let mut new = if fixed {
            NetEvaluator::<G>::fixed(&ck.net, Device::Cpu, max_batch)
        } else {
            NetEvaluator::<G>::new(&ck.net, Device::Cpu, max_batch)
        };
        let mut old = OldNetEvaluator::new(&ck.net, max_batch, fixed);
        for size in [1usize, 5, 23, 70] {
            for (pc, mc) in pos.chunks(size).zip(legal.chunks(size)) {
                let p: Vec<&G> = pc.iter().collect();
                let m: Vec<&[Move]> = mc.iter().map(|v| v.as_slice()).collect();
                let (mut a, mut b) = (Vec::new(), Vec::new());
                new.evaluate(&p, &m, &mut a).unwrap();
                Evaluator::<G>::evaluate(&mut old, &p, &m, &mut b).unwrap();
                assert!(a == b, "max_batch {max_batch}, fixed {fixed}, batches of {size}: evaluations differ");
            }
        }
        assert_eq!(new.backend().positions, 4 * 70);
    }
    // A replica gives the checkpoint's outputs.
    let replica = ck.replica(Device::Cpu).unwrap();
    let p: Vec<&G> = pos.iter().collect();
    let m: Vec<&[Move]> = legal.iter().map(|v| v.as_slice()).collect();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    NetEvaluator::<G>::new(replica.net(), Device::Cpu, 64).evaluate(&p, &m, &mut a).unwrap();
    NetEvaluator::<G>::new(&ck.net, Device::Cpu, 64).evaluate(&p, &m, &mut b).unwrap();
    assert!(a == b, "the replica's outputs differ");
}

#[test]
fn jetan_evaluations_equal_the_old_evaluators() {
    same_evaluations::<Jetan>(&JetanRules::default());
}

#[test]
fn martian_chess_evaluations_equal_the_old_evaluators() {
    same_evaluations::<MartianChess>(&MartianRules::default());
}

fn sp_cfg(groups: u32, fixed_batch: u32) -> (SelfplayConfig, MctsConfig) {
    let sp = SelfplayConfig {
        games_in_flight: 6,
        groups,
        simulations: 12,
        cheap_simulations: 3,
        full_search_prob: 0.5,
        fixed_batch,
        ..Default::default()
    };
    (sp, MctsConfig { leaves_per_batch: 2, ..Default::default() })
}

fn summary(games: &[FinishedGame]) -> Vec<(String, Vec<martian_selfplay::Sample>)> {
    games.iter().map(|g| (serde_json::to_string(&g.record).unwrap(), g.samples.clone())).collect()
}

fn sorted(games: &[FinishedGame]) -> Vec<(String, Vec<martian_selfplay::Sample>)> {
    let mut v = summary(games);
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn on_devices<G: GameState>(
    ck: &Checkpoint,
    start: &G,
    ids: &[u64],
    groups: u32,
    devices: usize,
    fixed_batch: u32,
) -> Vec<FinishedGame> {
    let (sp, mcts) = sp_cfg(groups, fixed_batch);
    let params = PlayParams { start, game_ids: ids, seed: 4, model_name: "net".into() };
    let mut backends: Vec<_> = (0..devices)
        .map(|_| {
            let r = ck.replica(Device::Cpu).unwrap();
            match fixed_batch {
                0 => NetBackend::new(r, Device::Cpu, sp.max_batch as usize),
                b => NetBackend::fixed(r, Device::Cpu, b as usize),
            }
            .with_torch_threads(1)
        })
        .collect();
    let mut out = Vec::new();
    play_games_on_devices(&params, &sp, &mcts, &mut backends, |g, _| {
        out.push(g);
        Ok(())
    })
    .unwrap();
    out
}

#[test]
fn selfplay_on_a_replica_plays_the_games_of_the_old_lockstep_evaluator() {
    tch::set_num_threads(1);
    let rules = JetanRules { max_plies: 40, ..Default::default() };
    let ck = Checkpoint::new_random::<Jetan>(&rules, &model_cfg(), Device::Cpu, 8).unwrap();
    let start = Jetan::new_game(&rules).unwrap();
    let ids: Vec<u64> = (0..9).collect();
    let (sp, mcts) = sp_cfg(1, 0);
    let params = PlayParams { start: &start, game_ids: &ids, seed: 4, model_name: "net".into() };
    let mut old = CachedEvaluator::new(OldNetEvaluator::new(&ck.net, sp.max_batch as usize, false), sp.cache_size);
    let mut before = Vec::new();
    play_games(&params, &sp, &mcts, &mut old, |g, _| {
        before.push(g);
        Ok(())
    })
    .unwrap();
    let after = on_devices(&ck, &start, &ids, 1, 1, 0);
    assert!(summary(&before) == summary(&after), "the games differ from the lockstep driver's");
}

#[test]
fn two_cpu_devices_with_fixed_batches_play_the_games_of_one() {
    tch::set_num_threads(1);
    let rules = MartianRules::default();
    let ck = Checkpoint::new_random::<MartianChess>(&rules, &model_cfg(), Device::Cpu, 9).unwrap();
    let start = MartianChess::new_game(&rules).unwrap();
    let ids: Vec<u64> = (100..112).collect();
    let one = on_devices(&ck, &start, &ids, 1, 1, 8);
    let two = on_devices(&ck, &start, &ids, 2, 2, 8);
    assert_eq!(two.len(), 12);
    assert!(sorted(&one) == sorted(&two), "two devices with two groups each play other games");
    let again = on_devices(&ck, &start, &ids, 2, 2, 8);
    assert!(summary(&two) == summary(&again), "the same seed gave other games or another order");
}
