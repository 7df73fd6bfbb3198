//! The fixed-batch network evaluator ([`NetEvaluator::fixed`]) gives every
//! position the same output whatever else is in its batch. Self-play relies on it: a game's moves then depend only on
//! its seed, id and network, so a run resumed after a kill replays the games
//! it lost exactly (`docs/training.md`, "Kills and resumes").

use martian_model::{Checkpoint, ModelConfig, NetEvaluator};
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Move};
use martian_search::{Evaluation, Evaluator};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tch::Device;

fn positions<G: GameState>(start: &G, n: usize, seed: u64) -> Vec<G> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut moves = Vec::new();
    while out.len() < n {
        let mut s = start.clone();
        for _ in 0..rng.gen_range(0..30) {
            if s.outcome().is_some() {
                break;
            }
            s.legal_moves(&mut moves);
            let m = moves[rng.gen_range(0..moves.len())];
            s.play_unchecked(m);
        }
        if s.outcome().is_none() {
            out.push(s);
        }
    }
    out
}

fn eval_all<G: GameState>(ev: &mut NetEvaluator<'_, G>, pos: &[&G]) -> Vec<Evaluation> {
    let legal: Vec<Vec<Move>> = pos
        .iter()
        .map(|p| {
            let mut v = Vec::new();
            p.legal_moves(&mut v);
            v
        })
        .collect();
    let refs: Vec<&[Move]> = legal.iter().map(|v| v.as_slice()).collect();
    let mut out = Vec::new();
    ev.evaluate(pos, &refs, &mut out).unwrap();
    out
}

fn check<G: GameState>(rules: &G::Rules) {
    tch::set_num_threads(1);
    let cfg = ModelConfig {
        blocks: 2,
        channels: 32,
        batch_norm: true,
        global_pooling: true,
        policy_channels: 4,
        value_hidden: 32,
        ..Default::default()
    };
    let ck = Checkpoint::new_random::<G>(rules, &cfg, Device::Cpu, 7).unwrap();
    let start = G::new_game(rules).unwrap();
    let pos = positions(&start, 97, 3);
    let mut ev = NetEvaluator::<G>::fixed(&ck.net, Device::Cpu, 16);
    let all: Vec<&G> = pos.iter().collect();
    let full = eval_all(&mut ev, &all);
    // Singles, and batches of other sizes with other neighbours.
    for (i, p) in pos.iter().enumerate().step_by(7) {
        let one = eval_all(&mut ev, &[p]);
        assert_eq!(one[0], full[i], "position {i} alone differs from its value in a batch of {}", pos.len());
    }
    // The control: passes of varying size do differ in the last bits, which
    // is why self-play uses the fixed evaluator.
    let mut var = NetEvaluator::<G>::new(&ck.net, Device::Cpu, 1024);
    let var_full = eval_all(&mut var, &all);
    let differs = pos.iter().enumerate().any(|(i, p)| eval_all(&mut var, &[p])[0] != var_full[i]);
    assert!(differs, "variable-size passes agreed bit for bit: the fixed-batch padding may be unnecessary");
    for size in [2usize, 3, 8, 13, 32, 64] {
        for (c, chunk) in all.chunks(size).enumerate() {
            let mut rev: Vec<&G> = chunk.to_vec();
            rev.reverse();
            let got = eval_all(&mut ev, &rev);
            for (j, e) in got.iter().rev().enumerate() {
                assert_eq!(e, &full[c * size + j], "batch size {size}: position {} differs", c * size + j);
            }
        }
    }
}

#[test]
fn martian_chess_outputs_do_not_depend_on_the_batch() {
    check::<MartianChess>(&MartianRules::default());
}

#[test]
fn jetan_outputs_do_not_depend_on_the_batch() {
    check::<Jetan>(&JetanRules::default());
}
