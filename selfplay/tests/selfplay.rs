//! Self-play with the uniform evaluator: records, samples, shards.

use std::fs;

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::GameState;
use martian_search::{MctsConfig, UniformEvaluator};
use martian_selfplay::{
    pack_samples, play_games, read_shard, write_shard, FinishedGame, PlayParams, SelfplayConfig, ShardError,
};

fn quick_cfg() -> SelfplayConfig {
    SelfplayConfig {
        games_in_flight: 3,
        simulations: 8,
        cheap_simulations: 2,
        full_search_prob: 0.5,
        ..Default::default()
    }
}

fn play<G: GameState>(start: &G, games: u64, seed: u64) -> Vec<FinishedGame> {
    let ids: Vec<u64> = (100..100 + games).collect();
    let params = PlayParams { start, game_ids: &ids, seed, model_name: "uniform".into() };
    let mut out = Vec::new();
    let mcts = MctsConfig { leaves_per_batch: 2, ..Default::default() };
    let stats = play_games(&params, &quick_cfg(), &mcts, &mut UniformEvaluator, |g, _| {
        out.push(g);
        Ok(())
    })
    .unwrap();
    assert_eq!(stats.games, games);
    assert_eq!(stats.moves, out.iter().map(|g| g.record.plies as u64).sum::<u64>());
    out
}

#[test]
fn games_replay_and_samples_are_consistent() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let games = play(&start, 5, 1);
    let mut ids: Vec<u64> = games.iter().map(|g| g.record.game_id).collect();
    ids.sort();
    assert_eq!(ids, vec![100, 101, 102, 103, 104]);
    for g in &games {
        // The record replays to a finished game with the recorded result.
        let mut s = MartianChess::from_position(&g.record.start, &MartianRules::default()).unwrap();
        for m in &g.record.moves {
            let mv = s.parse_move(m).unwrap();
            s.play_unchecked(mv);
        }
        let o = s.outcome().expect("recorded games are finished");
        assert_eq!(o.reason, g.record.reason);
        assert_eq!(o.winner.map(|w| MartianChess::side_name(w).to_string()), g.record.winner);
        assert_eq!(g.samples.len() as u32, g.record.samples);
        assert!(!g.samples.is_empty());
        for smp in &g.samples {
            let total: f32 = smp.policy.iter().map(|p| p.1).sum();
            assert!((total - 1.0).abs() < 1e-5);
            assert!([-1.0, 0.0, 1.0].contains(&smp.value));
            assert!(smp.policy.iter().all(|&(a, _)| (a as usize) < MartianChess::NUM_ACTIONS));
            // Value target is from the mover's view: replay to the sample's ply.
            let mut s = MartianChess::from_position(&g.record.start, &MartianRules::default()).unwrap();
            for m in &g.record.moves[..smp.ply as usize] {
                let mv = s.parse_move(m).unwrap();
                s.play_unchecked(mv);
            }
            assert_eq!(smp.value, o.value_for(s.side_to_move()));
            let mut planes = vec![0.0; smp.planes.len()];
            s.encode(&mut planes);
            assert_eq!(planes, smp.planes);
        }
    }
}

#[test]
fn same_seed_same_games() {
    let start = Jetan::new_game(&JetanRules { max_plies: 60, ..Default::default() }).unwrap();
    let a: Vec<_> = play(&start, 3, 7).into_iter().map(|g| g.record).collect();
    let b: Vec<_> = play(&start, 3, 7).into_iter().map(|g| g.record).collect();
    assert_eq!(a, b);
}

#[test]
fn shards_round_trip_bit_exactly_and_corruption_is_reported() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let games = play(&start, 2, 3);
    let samples: Vec<_> = games.iter().flat_map(|g| g.samples.iter().map(move |s| (g.record.game_id, s))).collect();
    let data = pack_samples(&samples, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.npz");
    write_shard(&path, &data).unwrap();
    let back = read_shard(&path, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS).unwrap();
    assert_eq!(back, data);
    assert!(fs::read_dir(dir.path()).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().starts_with(".tmp")));

    // Wrong game shape.
    assert!(matches!(read_shard(&path, Jetan::INPUT_SHAPE, Jetan::NUM_ACTIONS), Err(ShardError::Corrupt { .. })));
    // Truncated file.
    let bytes = fs::read(&path).unwrap();
    let cut = dir.path().join("cut.npz");
    fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let e = read_shard(&cut, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS).unwrap_err();
    assert!(e.to_string().contains("cut.npz"), "{e}");
    // Garbage.
    let junk = dir.path().join("junk.npz");
    fs::write(&junk, b"not a zip").unwrap();
    assert!(read_shard(&junk, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS).is_err());
    // Missing.
    assert!(matches!(
        read_shard(&dir.path().join("none.npz"), MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS),
        Err(ShardError::Io { .. })
    ));
}

#[test]
fn completed_q_targets_are_distributions_over_legal_moves() {
    let start = Jetan::new_game(&JetanRules { max_plies: 40, ..Default::default() }).unwrap();
    let cfg = SelfplayConfig { policy_target: martian_selfplay::PolicyTarget::CompletedQ, ..quick_cfg() };
    let params = PlayParams { start: &start, game_ids: &[0, 1], seed: 5, model_name: "uniform".into() };
    let mut games = Vec::new();
    play_games(&params, &cfg, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
        games.push(g);
        Ok(())
    })
    .unwrap();
    for g in &games {
        let mut s = Jetan::from_position(&g.record.start, &JetanRules { max_plies: 40, ..Default::default() }).unwrap();
        let mut k = 0;
        for (ply, m) in g.record.moves.iter().enumerate() {
            if k < g.samples.len() && g.samples[k].ply as usize == ply {
                let smp = &g.samples[k];
                let mut legal = Vec::new();
                s.legal_moves(&mut legal);
                let idx: Vec<u32> = legal.iter().map(|&m| s.action_index(m) as u32).collect();
                assert!(smp.policy.iter().all(|(a, _)| idx.contains(a)));
                let total: f32 = smp.policy.iter().map(|p| p.1).sum();
                assert!((total - 1.0).abs() < 1e-3, "{total}");
                // With uniform priors the target spreads over (nearly) every legal move.
                assert!(smp.policy.len() * 2 > legal.len());
                k += 1;
            }
            let mv = s.parse_move(m).unwrap();
            s.play_unchecked(mv);
        }
        assert_eq!(k, g.samples.len());
    }
}

/// Records carry the rules they were played under (so a replay checks the right game), replay
/// under them, and a rules mismatch names each differing switch.
#[test]
fn records_carry_their_rules_and_name_differing_switches() {
    use martian_selfplay::record::{GameRecord, RecordError, RECORD_FORMAT_VERSION};
    let rules = JetanRules { max_plies: 40, no_capture_limit: Some(30), ..JetanRules::default() };
    let start = Jetan::new_game(&rules).unwrap();
    let games = play(&start, 2, 4);
    for g in &games {
        let line = serde_json::to_string(&g.record).unwrap();
        assert!(line.contains("\"max_plies\":40"), "{line}");
        let r = GameRecord::from_json_line(&line).unwrap();
        assert_eq!(r.format_version, RECORD_FORMAT_VERSION);
        assert_eq!(r.recorded_rules::<Jetan>().unwrap(), Some(rules));
        let end: Jetan = r.replay(&rules).unwrap();
        assert!(end.outcome().is_some());
        let e = r.replay::<Jetan>(&JetanRules::default()).unwrap_err();
        assert!(matches!(e, RecordError::Rules { .. }));
        let e = e.to_string();
        assert!(
            e.contains("rules differ (record vs expected): max_plies 40 vs 500; no_capture_limit 30 vs none"),
            "{e}"
        );
        assert!(r.replay::<MartianChess>(&MartianRules::default()).unwrap_err().to_string().contains("jetan game"));
    }
}

/// Plays one game from `start` with every move fully searched and returns it.
fn one_game<G: GameState>(start: &G, cfg: &SelfplayConfig, mcts: &MctsConfig) -> FinishedGame {
    let ids = [7u64];
    let params = PlayParams { start, game_ids: &ids, seed: 3, model_name: "uniform".into() };
    let mut out = Vec::new();
    play_games(&params, cfg, mcts, &mut UniformEvaluator, |g, _| {
        out.push(g);
        Ok(())
    })
    .unwrap();
    out.pop().unwrap()
}

#[test]
fn solver_gives_exact_value_targets_and_q_weight_mixes_the_others() {
    // Martian Chess, North to move, forced win in 3 plies (search/tests/solver_gumbel.rs).
    let start =
        MartianChess::from_position("QQDQ/1DP1/1P2/4/2PP/1DDD/P2Q/PQQ1 N 0 2 b2b3 2 5 17", &MartianRules::default())
            .unwrap();
    let cfg = SelfplayConfig {
        games_in_flight: 1,
        simulations: 3000,
        full_search_prob: 1.0,
        temperature: 0.0,
        value_target_q_weight: 0.5,
        ..Default::default()
    };
    // With the solver, the first position is proven: its target is exactly +1
    // for North, who then wins the game as proven (within 3 plies).
    let g = one_game(&start, &cfg, &MctsConfig { solver: true, ..Default::default() });
    assert_eq!(g.record.winner.as_deref(), Some("North"));
    assert!(g.record.plies <= start.ply() + 3, "the proven win is played: {:?}", g.record.moves);
    assert_eq!(g.samples[0].value, 1.0);
    // Without the solver, the first target mixes the result (+1) with the
    // root's search value: (1 - 0.5) * 1 + 0.5 * q, below 1.
    let no_solver = MctsConfig { solver: false, trap_plies: 0, ..Default::default() };
    let g = one_game(&start, &cfg, &no_solver);
    let v = g.samples[0].value;
    assert!((0.0..1.0).contains(&v), "mixed target {v}");
    // And with weight 0, targets are results.
    let plain = SelfplayConfig { value_target_q_weight: 0.0, ..cfg };
    let g = one_game(&start, &plain, &no_solver);
    assert!(g.samples.iter().all(|s| [-1.0, 0.0, 1.0].contains(&s.value)));
}

#[test]
fn gumbel_self_play_games_are_reproducible_and_complete() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let cfg = SelfplayConfig { games_in_flight: 2, simulations: 16, cheap_simulations: 4, ..Default::default() };
    let mcts = MctsConfig {
        root_selection: martian_search::RootSelection::Gumbel,
        solver: true,
        leaves_per_batch: 2,
        ..Default::default()
    };
    let a = one_game(&start, &cfg, &mcts);
    let b = one_game(&start, &cfg, &mcts);
    assert_eq!(a.record.moves, b.record.moves);
    assert!(!a.samples.is_empty());
    for s in &a.samples {
        let total: f32 = s.policy.iter().map(|p| p.1).sum();
        assert!((total - 1.0).abs() < 1e-4);
    }
}

#[test]
fn shards_without_weights_read_as_ones_and_bad_weights_are_caught() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let games = play(&start, 1, 4);
    let samples: Vec<_> = games.iter().flat_map(|g| g.samples.iter().map(move |s| (g.record.game_id, s))).collect();
    let data = pack_samples(&samples, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS);
    // A shard as written before the `weight` array existed.
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("old.npz");
    {
        let mut npz = ndarray_npy::NpzWriter::new(fs::File::create(&old).unwrap());
        npz.add_array("format_version", &ndarray::Array1::from_elem(1, martian_selfplay::shard::SHARD_FORMAT_VERSION))
            .unwrap();
        npz.add_array("planes", &data.planes).unwrap();
        npz.add_array("policy", &data.policy).unwrap();
        npz.add_array("legal", &data.legal).unwrap();
        npz.add_array("value", &data.value).unwrap();
        npz.add_array("game_id", &data.game_id).unwrap();
        npz.add_array("ply", &data.ply).unwrap();
        npz.finish().unwrap();
    }
    let back = read_shard(&old, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS).unwrap();
    assert!(back.weight.iter().all(|&w| w == 1.0));
    assert_eq!(back.weight.len(), data.len());
    assert!(back.moves_left.is_none() && back.score.is_none(), "no auxiliary targets in an old shard");
    assert!(data.moves_left.is_some() && data.score.is_some(), "a new Martian Chess shard has both");
    // A negative or NaN weight fails the sample check.
    let mut bad = data.clone();
    bad.weight[0] = -1.0;
    bad.weight[1] = f32::NAN;
    let check = martian_selfplay::check_samples(&bad);
    assert_eq!(check.bad(), 2);
    assert!(check.describe().unwrap().contains("weight"));
}

#[test]
fn policy_target_pruning_prunes_the_targets_not_the_moves() {
    // KataGo: forced playouts in full searches, pruned out of the visit
    // targets; the move played is chosen from the unpruned visits, so the
    // games are the same with and without pruning.
    let start = MartianChess::new_game(&MartianRules { max_plies: 60, ..Default::default() }).unwrap();
    // Without the solver and the trap proofs: their exact values are not forced.
    let mcts = MctsConfig { forced_playouts_k: 2.0, solver: false, trap_plies: 0, ..Default::default() };
    let cfg = SelfplayConfig { games_in_flight: 1, simulations: 64, full_search_prob: 1.0, ..Default::default() };
    let pruned_cfg = SelfplayConfig { policy_target_pruning: true, ..cfg.clone() };
    pruned_cfg.validate_with_search(&mcts).unwrap();
    let plain = one_game(&start, &cfg, &mcts);
    let pruned = one_game(&start, &pruned_cfg, &mcts);
    assert_eq!(plain.record.moves, pruned.record.moves, "pruning must not change the moves played");
    assert_eq!(plain.samples.len(), pruned.samples.len());
    let (mut smaller, mut sharper) = (0, 0);
    for (a, b) in plain.samples.iter().zip(&pruned.samples) {
        assert_eq!(a.ply, b.ply);
        let total: f32 = b.policy.iter().map(|p| p.1).sum();
        assert!((total - 1.0).abs() < 1e-5, "a pruned target is a distribution");
        // Pruning only removes and lowers entries: its support is a subset.
        assert!(b.policy.iter().all(|(i, _)| a.policy.iter().any(|(j, _)| i == j)));
        smaller += usize::from(b.policy.len() < a.policy.len());
        let top = |s: &martian_selfplay::Sample| s.policy.iter().map(|p| p.1).fold(0.0f32, f32::max);
        sharper += usize::from(top(b) > top(a) + 1e-6);
    }
    let n = plain.samples.len();
    assert!(n >= 20, "only {n} samples");
    // With the uniform evaluator every move looks alike, so only the visits
    // forced onto moves the noise favoured are cut (search/tests/forced_playouts.rs
    // has a dominant move); still a good share of the targets change.
    assert!(smaller * 4 >= n && sharper * 4 >= n, "pruned targets: {smaller} smaller and {sharper} sharper of {n}");
    // The keys are checked together.
    let bad = SelfplayConfig { policy_target_pruning: true, ..Default::default() };
    assert!(bad.validate_with_search(&MctsConfig::default()).unwrap_err().contains("search.forced_playouts_k"));
}

/// `selfplay.draw_value`: a drawn Jetan game's value targets are `+d` for the
/// side the adjudication favours (`GameState::draw_adjudication`, replayed
/// here from the record) and `-d` for the other; decisive games and drawn
/// games the adjudication finds equal keep their results; the same seed plays
/// the same games with and without it (only the targets change).
#[test]
fn draw_value_orders_drawn_games_by_the_adjudication() {
    let rules = JetanRules { max_plies: 40, ..Default::default() };
    let start = Jetan::new_game(&rules).unwrap();
    let ids: Vec<u64> = (100..124).collect();
    let params = PlayParams { start: &start, game_ids: &ids, seed: 5, model_name: "uniform".into() };
    // Without the solver (whose proven positions keep their exact targets).
    let mcts = MctsConfig { leaves_per_batch: 2, solver: false, trap_plies: 0, ..Default::default() };
    let run = |draw_value: f32| {
        let mut out = Vec::new();
        let cfg = SelfplayConfig { draw_value, ..quick_cfg() };
        play_games(&params, &cfg, &mcts, &mut UniformEvaluator, |g, _| {
            out.push(g);
            Ok(())
        })
        .unwrap();
        out.sort_by_key(|g| g.record.game_id);
        out
    };
    let (plain, judged) = (run(0.0), run(0.25));
    let (mut favoured, mut equal, mut decisive) = (0, 0, 0);
    for (p, j) in plain.iter().zip(&judged) {
        assert_eq!(p.record, j.record, "the same games");
        let end: Jetan = j.record.replay(&rules).unwrap();
        let ahead = end.draw_adjudication();
        match (end.outcome().unwrap().winner, ahead) {
            (Some(_), _) => decisive += 1,
            (None, Some(_)) => favoured += 1,
            (None, None) => equal += 1,
        }
        for (sp, sj) in p.samples.iter().zip(&j.samples) {
            let mut s = Jetan::from_position(&j.record.start, &rules).unwrap();
            for m in &j.record.moves[..sj.ply as usize] {
                let mv = s.parse_move(m).unwrap();
                s.play_unchecked(mv);
            }
            let want = match ahead {
                Some(side) if side == s.side_to_move() => 0.25,
                Some(_) => -0.25,
                None => sp.value,
            };
            assert_eq!(sj.value, want, "game {} ply {}", j.record.game_id, sj.ply);
        }
    }
    assert!(favoured > 0 && decisive > 0, "favoured {favoured}, equal {equal}, decisive {decisive}");
    let bad = SelfplayConfig { draw_value: 1.5, ..quick_cfg() };
    assert!(bad.validate().unwrap_err().contains("selfplay.draw_value"));
}

/// The search of the per-game draw utility tests: without the solver and the
/// trap proofs, so that every value target is the game's result.
fn no_proofs() -> MctsConfig {
    MctsConfig { leaves_per_batch: 2, solver: false, trap_plies: 0, ..Default::default() }
}

/// Uniform self-play of Jetan games (40-ply cap) with the ids `ids`.
fn jetan_games(ids: std::ops::Range<u64>, seed: u64, mcts: MctsConfig) -> Vec<FinishedGame> {
    let rules = JetanRules { max_plies: 40, ..Default::default() };
    let start = Jetan::new_game(&rules).unwrap();
    let ids: Vec<u64> = ids.collect();
    let params = PlayParams { start: &start, game_ids: &ids, seed, model_name: "uniform".into() };
    let mut out = Vec::new();
    play_games(&params, &quick_cfg(), &mcts, &mut UniformEvaluator, |g, _| {
        out.push(g);
        Ok(())
    })
    .unwrap();
    out
}

/// Every value target of the Jetan game `g` is its true result for the
/// sample's side to move (a draw 0, a win +1, a loss -1).
fn assert_targets_are_results(g: &FinishedGame) {
    let rules = JetanRules { max_plies: 40, ..Default::default() };
    let end: Jetan = g.record.replay(&rules).unwrap();
    let outcome = end.outcome().unwrap();
    for s in &g.samples {
        let mut p = Jetan::from_position(&g.record.start, &rules).unwrap();
        for m in &g.record.moves[..s.ply as usize] {
            let mv = p.parse_move(m).unwrap();
            p.play_unchecked(mv);
        }
        assert_eq!(s.value, outcome.value_for(p.side_to_move()), "game {} ply {}", g.record.game_id, s.ply);
    }
}

/// `search.contempt`: each game draws its contempt side (both sides occur)
/// and a contempt in `[0, c]`, and its record names both; the value targets
/// stay the games' true results (a draw is 0, a win +1 / -1); without
/// contempt records carry none.
#[test]
fn contempt_is_drawn_per_game_recorded_and_leaves_the_targets_alone() {
    let run = |contempt: f32| jetan_games(100..124, 5, MctsConfig { contempt, ..no_proofs() });
    let mut sides = std::collections::BTreeMap::new();
    for g in run(0.3) {
        let c = g.record.contempt.as_ref().expect("every game records its contempt");
        assert!((0.0..=0.3).contains(&c.value), "contempt {}", c.value);
        *sides.entry(c.side.clone()).or_insert(0) += 1;
        assert_targets_are_results(&g);
    }
    assert_eq!(sides.keys().cloned().collect::<Vec<_>>(), ["Black", "Orange"], "{sides:?}");
    assert!(run(0.0).iter().all(|g| g.record.contempt.is_none()));
    // The record's field survives its JSON line.
    let g = &run(0.3)[0];
    let line = serde_json::to_string(&g.record).unwrap();
    assert!(line.contains("\"contempt\":{\"side\":"), "{line}");
    let back: martian_selfplay::GameRecord = serde_json::from_str(&line).unwrap();
    assert_eq!(&back, &g.record);
}

/// `search.draw_aversion`: each game draws its aversion from `[0, a]` and
/// its record names it (absent when off); the value targets stay the games'
/// true results; and the games differ from those without it (the search
/// plays by it).
#[test]
fn draw_aversion_is_drawn_per_game_recorded_and_leaves_the_targets_alone() {
    let run = |draw_aversion: f32| jetan_games(200..216, 9, MctsConfig { draw_aversion, ..no_proofs() });
    let with = run(0.4);
    let mut values = Vec::new();
    for g in &with {
        let a = g.record.draw_aversion.expect("every game records its aversion");
        assert!((0.0..=0.4).contains(&a), "aversion {a}");
        values.push(a);
        assert_targets_are_results(g);
    }
    values.dedup();
    assert!(values.len() > 8, "one aversion per game: {values:?}");
    let without = run(0.0);
    assert!(without.iter().all(|g| g.record.draw_aversion.is_none()));
    let moves = |games: &[FinishedGame]| games.iter().map(|g| g.record.moves.clone()).collect::<Vec<_>>();
    assert_ne!(moves(&with), moves(&without), "the aversion changes the games");
    let line = serde_json::to_string(&with[0].record).unwrap();
    assert!(line.contains("\"draw_aversion\":"), "{line}");
    let back: martian_selfplay::GameRecord = serde_json::from_str(&line).unwrap();
    assert_eq!(&back, &with[0].record);
}
