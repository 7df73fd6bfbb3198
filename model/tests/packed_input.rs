//! The packed input (20 bytes a position to the device): the expansion on the device
//! (`expand_packed`, the tensor ops the CUDA path runs) gives exactly the
//! floats of `GameState::encode` for positions of every game, with padding
//! planes empty; a network fed through `NetBackend` (which expands on the
//! CPU in a loop) gives the outputs of the same network on the dense input;
//! the softmax over the legal moves on the device gives the host's priors;
//! and, where CUDA is present, the CUDA backend agrees with the CPU one.

use martian_model::{expand_packed, packed_to_device, Checkpoint, ModelConfig, NetBackend};
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::martian4::{Martian4Rules, MartianChess4};
use martian_rules::{GameState, Move};
use martian_search::{Backend, DeviceBatch, Evaluation};
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
        // CUDA takes the softmax on the device: compare the decoded priors.
        let gpu = Checkpoint::new_random::<Jetan>(&rules, &cfg, Device::Cuda(0), 5).unwrap();
        let mut g = batch_of(ps);
        NetBackend::new(&gpu.net, Device::Cuda(0), 16).run(&mut g).unwrap();
        assert!(g.softmax_on_device);
        let (mut eg, mut eb) = (Evaluation::default(), Evaluation::default());
        for r in 0..ps.len() {
            g.decode_row(r, &mut eg);
            b.decode_row(r, &mut eb);
            for (a, e) in eg.priors.iter().zip(&eb.priors) {
                assert!((a - e).abs() < 1e-3, "CUDA {a} vs CPU {e}");
            }
            assert!((eg.value - eb.value).abs() < 1e-3);
        }
    }
}

/// The softmax over the legal moves taken on the device (the CUDA default,
/// run here on the CPU) gives the host decode's priors within 1e-6, in passes
/// split into chunks and padded to a fixed size.
fn device_softmax_matches_the_host<G: GameState>(start: G, rules_seed: u64, ck: &Checkpoint) {
    let ps = positions(start, 2, rules_seed);
    let ps = &ps[..ps.len().min(50)];
    let mut host = batch_of(ps);
    let mut dev = batch_of(ps);
    NetBackend::fixed(&ck.net, Device::Cpu, 16).run(&mut host).unwrap();
    NetBackend::fixed(&ck.net, Device::Cpu, 16).with_device_softmax(true).run(&mut dev).unwrap();
    assert!(!host.softmax_on_device && dev.softmax_on_device);
    let (mut eh, mut ed) = (Evaluation::default(), Evaluation::default());
    let mut worst = 0.0f32;
    for r in 0..ps.len() {
        host.decode_row(r, &mut eh);
        dev.decode_row(r, &mut ed);
        assert_eq!(eh.priors.len(), ed.priors.len());
        for (a, e) in ed.priors.iter().zip(&eh.priors) {
            worst = worst.max((a - e).abs());
        }
        assert_eq!(eh.value, ed.value, "{}: the value does not depend on where the softmax runs", G::KIND);
        assert!((ed.priors.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
    assert!(worst < 1e-6, "{}: device softmax differs from the host's by {worst}", G::KIND);
    assert!(
        host.logits.iter().zip(&dev.logits).any(|(a, b)| a != b),
        "{}: the device's batch holds priors, not logits",
        G::KIND
    );
}

#[test]
fn device_softmax_gives_the_host_decodes_priors() {
    let cfg = ModelConfig { blocks: 1, channels: 8, value_hidden: 8, ..ModelConfig::default() };
    let jr = JetanRules::default();
    let ck = Checkpoint::new_random::<Jetan>(&jr, &cfg, Device::Cpu, 5).unwrap();
    device_softmax_matches_the_host(Jetan::new_game(&jr).unwrap(), 4, &ck);
    let mr = MartianRules::default();
    let ck = Checkpoint::new_random::<MartianChess>(&mr, &cfg, Device::Cpu, 6).unwrap();
    device_softmax_matches_the_host(MartianChess::new_game(&mr).unwrap(), 7, &ck);
}
