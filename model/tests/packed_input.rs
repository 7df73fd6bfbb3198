//! The packed input (issue 10): the expansion on the device
//! (`expand_packed`, the tensor ops the CUDA path runs) gives exactly the
//! floats of `GameState::encode` for positions of every game, with padding
//! planes empty; a network fed through `NetBackend` (which expands on the
//! CPU in a loop) gives the outputs of the same network on the dense input;
//! and, where CUDA is present, the CUDA backend agrees with the CPU one.

use martian_model::{expand_packed, packed_to_device, Checkpoint, ModelConfig, NetBackend};
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::martian4::{Martian4Rules, MartianChess4};
use martian_rules::{GameState, Move};
use martian_search::{Backend, DeviceBatch};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use tch::{Device, Kind, Tensor};

/// Positions of seeded random games of `G` (every ply), with their moves.
fn positions<G: GameState>(start: G, games: usize, seed: u64) -> Vec<(G, Vec<Move>)> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for _ in 0..games {
        let mut s = start.clone();
        while s.outcome().is_none() {
            let mut m = Vec::new();
            s.legal_moves(&mut m);
            out.push((s.clone(), m.clone()));
            let &mv = m.choose(&mut rng).unwrap();
            s.play_unchecked(mv);
        }
    }
    out
}

fn batch_of<G: GameState>(ps: &[(G, Vec<Move>)]) -> DeviceBatch {
    let mut b = DeviceBatch::default();
    b.clear::<G>();
    for (p, m) in ps {
        b.push_row(p, m);
    }
    b
}

fn dense<G: GameState>(ps: &[(G, Vec<Move>)]) -> Vec<f32> {
    let len: usize = G::INPUT_SHAPE.iter().product();
    let mut out = vec![0.0; ps.len() * len];
    for ((p, _), row) in ps.iter().zip(out.chunks_exact_mut(len)) {
        p.encode(row);
    }
    out
}

fn expansion_is_exact<G: GameState>(start: G) {
    let ps = positions(start, 6, 3);
    assert!(ps.len() > 100, "{} positions", ps.len());
    let b = batch_of(&ps);
    let [c, h, w] = G::INPUT_SHAPE;
    let want = dense(&ps);
    assert!(want.iter().any(|&x| x != 0.0 && x != 1.0), "some plane holds a scaled counter");
    // Two padding rows after the positions' rows.
    let rows = ps.len() + 2;
    let (masks, values) = packed_to_device(&b.planes[..ps.len() * c], rows * c, Device::Cpu).unwrap();
    let x = expand_packed(&masks, &values, [rows as i64, c as i64, h as i64, w as i64]).unwrap();
    assert_eq!(x.size(), vec![rows as i64, c as i64, h as i64, w as i64]);
    assert_eq!(x.kind(), Kind::Float);
    let mut got = vec![0.0f32; rows * c * h * w];
    let len = got.len();
    x.copy_data(&mut got, len);
    let n = want.len();
    let first_diff = got[..n].iter().zip(&want).position(|(a, b)| a.to_bits() != b.to_bits());
    assert_eq!(first_diff, None, "{}: the device's expansion differs from encode", G::KIND);
    assert!(got[n..].iter().all(|&x| x == 0.0), "padding rows are zero");
    let mut cpu = vec![0.0f32; n];
    b.unpack_rows(0, ps.len(), &mut cpu);
    assert_eq!(cpu, want, "{}: unpack_rows differs from encode", G::KIND);
}

#[test]
fn device_expansion_equals_encode_for_every_game() {
    expansion_is_exact(Jetan::new_game(&JetanRules::default()).unwrap());
    expansion_is_exact(MartianChess::new_game(&MartianRules::default()).unwrap());
    expansion_is_exact(MartianChess4::new_game(&Martian4Rules::default()).unwrap());
}

#[test]
fn net_backend_on_packed_rows_equals_the_net_on_dense_input() {
    let rules = JetanRules::default();
    let cfg = ModelConfig { blocks: 1, channels: 8, value_hidden: 8, ..ModelConfig::default() };
    let ck = Checkpoint::new_random::<Jetan>(&rules, &cfg, Device::Cpu, 5).unwrap();
    let ps = positions(Jetan::new_game(&rules).unwrap(), 1, 9);
    let ps = &ps[..ps.len().min(40)];
    let mut b = batch_of(ps);
    let mut net = NetBackend::new(&ck.net, Device::Cpu, 16);
    net.run(&mut b).unwrap();
    let [c, h, w] = Jetan::INPUT_SHAPE;
    let x = Tensor::from_slice(&dense(ps)).view([ps.len() as i64, c as i64, h as i64, w as i64]);
    let out = tch::no_grad(|| ck.net.forward(&x, false));
    let wdl = out.value_logits.softmax(-1, Kind::Float);
    for (r, (p, m)) in ps.iter().enumerate() {
        let logits: Vec<f32> = Vec::try_from(out.policy_logits.get(r as i64)).unwrap();
        for (k, &mv) in m.iter().enumerate() {
            let got = b.logits[b.offsets[r] + k];
            let want = logits[p.action_index(mv)];
            assert!((got - want).abs() <= 1e-5 * want.abs().max(1.0), "row {r} move {k}: {got} vs {want}");
        }
        let v: Vec<f32> = Vec::try_from(wdl.get(r as i64)).unwrap();
        for (got, want) in b.wdl[3 * r..3 * r + 3].iter().zip(&v) {
            assert!((got - want).abs() < 1e-5);
        }
    }
    if tch::Cuda::is_available() {
        let gpu = Checkpoint::new_random::<Jetan>(&rules, &cfg, Device::Cuda(0), 5).unwrap();
        let mut g = batch_of(ps);
        NetBackend::new(&gpu.net, Device::Cuda(0), 16).run(&mut g).unwrap();
        for (a, e) in g.logits.iter().zip(&b.logits) {
            assert!((a - e).abs() < 1e-3, "CUDA {a} vs CPU {e}");
        }
    }
}
