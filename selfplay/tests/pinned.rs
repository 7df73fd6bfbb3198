//! The self-play result of a seed is pinned: a short seeded self-play of each
//! game with a deterministic evaluator (a hash of the input planes, integer
//! arithmetic and IEEE division only, so the figures do not depend on the
//! machine's `exp`) and the evaluation cache in front, as the command line
//! plays it, must give exactly these records and samples. The digests were
//! taken before the overlapped driver was written, and again for
//! the trap-proof search (draw floor, first-play urgency floored at a loss, draws
//! ranked no higher than first-play urgency, draws left out of temperature
//! sampling), with its new levers off (no solver, no trap proofs); a change to
//! the driver, the search or the encoding that changes any game shows up here.

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{mix64, GameState, Move};
use martian_search::{CachedEvaluator, EvalError, Evaluation, Evaluator, MctsConfig};
use martian_selfplay::{play_games, FinishedGame, PlayParams, SelfplayConfig};

/// Priors and value from a hash of the encoded planes.
#[derive(Default)]
struct PlaneHash {
    planes: Vec<f32>,
}

impl<G: GameState> Evaluator<G> for PlaneHash {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        let [c, h, w] = G::INPUT_SHAPE;
        self.planes.resize(c * h * w, 0.0);
        out.resize_with(positions.len(), Evaluation::default);
        for ((p, m), e) in positions.iter().zip(moves).zip(out.iter_mut()) {
            p.encode(&mut self.planes);
            let x = self.planes.iter().fold(0u64, |x, v| mix64(x ^ u64::from(v.to_bits())));
            let unit = |y: u64| (y >> 40) as f32 / (1u64 << 24) as f32;
            e.priors.clear();
            e.priors.extend(m.iter().map(|&mv| 1.0 + 3.0 * unit(mix64(x ^ p.action_index(mv) as u64))));
            let sum: f32 = e.priors.iter().sum();
            e.priors.iter_mut().for_each(|q| *q /= sum);
            e.value = 1.6 * unit(mix64(!x)) - 0.8;
        }
        Ok(())
    }
}

/// FNV-1a over bytes.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *h = (*h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3);
    }
}

/// Digest of the games in id order: each record as JSON and every sample's
/// planes, legal actions, policy target, value, ply and weight, bit for bit.
pub fn digest(games: &[FinishedGame]) -> u64 {
    let mut games: Vec<&FinishedGame> = games.iter().collect();
    games.sort_by_key(|g| g.record.game_id);
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for g in games {
        fnv(&mut h, serde_json::to_string(&g.record).unwrap().as_bytes());
        for s in &g.samples {
            s.planes.iter().for_each(|x| fnv(&mut h, &x.to_bits().to_le_bytes()));
            s.legal.iter().for_each(|a| fnv(&mut h, &a.to_le_bytes()));
            for (a, p) in &s.policy {
                fnv(&mut h, &a.to_le_bytes());
                fnv(&mut h, &p.to_bits().to_le_bytes());
            }
            fnv(&mut h, &s.value.to_bits().to_le_bytes());
            fnv(&mut h, &s.ply.to_le_bytes());
            fnv(&mut h, &s.weight.to_bits().to_le_bytes());
        }
    }
    h
}

fn cfg() -> (SelfplayConfig, MctsConfig) {
    let sp = SelfplayConfig {
        games_in_flight: 4,
        simulations: 16,
        cheap_simulations: 4,
        full_search_prob: 0.5,
        ..Default::default()
    };
    // The search as before the trap proofs (no solver, no trap proofs): the digests pin the driver.
    (sp, MctsConfig { leaves_per_batch: 2, solver: false, trap_plies: 0, ..Default::default() })
}

fn play<G: GameState>(start: &G, n: u64) -> (Vec<FinishedGame>, u64) {
    let (sp, mcts) = cfg();
    let ids: Vec<u64> = (0..n).map(|k| (1 << 40) | k).collect();
    let params = PlayParams { start, game_ids: &ids, seed: 5, model_name: "planehash".into() };
    let mut ev = CachedEvaluator::new(PlaneHash::default(), sp.cache_size);
    let mut out = Vec::new();
    let stats = play_games(&params, &sp, &mcts, &mut ev, |g, _| {
        out.push(g);
        Ok(())
    })
    .unwrap();
    (out, stats.moves)
}

#[test]
fn jetan_selfplay_of_a_seed_is_pinned() {
    let start = Jetan::new_game(&JetanRules { max_plies: 80, ..Default::default() }).unwrap();
    let (games, moves) = play(&start, 6);
    let d = digest(&games);
    assert_eq!((games.len(), moves, d), (6, 399, 0x4dc0_6f51_bd02_3334), "digest {d:#018x}");
}

#[test]
fn martian_chess_selfplay_of_a_seed_is_pinned() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let (games, moves) = play(&start, 6);
    let d = digest(&games);
    assert_eq!((games.len(), moves, d), (6, 199, 0x94ae_fd3b_d8aa_67ca), "digest {d:#018x}");
}
