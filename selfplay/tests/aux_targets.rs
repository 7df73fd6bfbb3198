//! The targets of the auxiliary heads in samples and shards: plies left to the
//! end of the game and the final point difference for the side to move.

use std::fs;

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Side};
use martian_search::{MctsConfig, UniformEvaluator};
use martian_selfplay::{
    check_samples, pack_samples, play_games, read_shard, set_end_targets, write_shard, FinishedGame, PlayParams,
    Sample, SelfplayConfig, ShardData, ShardError,
};

/// Spec MC12: South's only piece is the Queen on a4, South 5 points, North 6.
const MC12: &str = "3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0";

fn sample_of<G: GameState>(s: &G) -> Sample {
    let [c, h, w] = G::INPUT_SHAPE;
    let mut planes = vec![0.0; c * h * w];
    s.encode(&mut planes);
    let mut moves = Vec::new();
    s.legal_moves(&mut moves);
    let legal: Vec<u32> = moves.iter().map(|&m| s.action_index(m) as u32).collect();
    let policy = vec![(legal[0], 1.0)];
    Sample::new(planes, legal, policy, s.ply())
}

/// A three-ply game by hand: 1. a4b4 (South, quiet) 2. d8d5 (North, quiet)
/// 3. b4c5 (South's Queen crosses the canal and empties South's zone: the game
/// ends at 5-6, North wins, spec §9.1). Moves left count down 3, 2, 1; the
/// score target is South's -1 and North's +1, flipping with the mover; the
/// arrays survive the shard round trip.
#[test]
fn targets_of_a_hand_checked_game_are_written_to_the_shard() {
    let mut s = MartianChess::from_position(MC12, &MartianRules::default()).unwrap();
    let mut samples = Vec::new();
    for m in ["a4b4", "d8d5", "b4c5"] {
        samples.push((sample_of(&s), s.side_to_move()));
        s.play(s.parse_move(m).unwrap()).unwrap();
    }
    let o = s.outcome().expect("the game is over");
    assert_eq!(o.winner, Some(Side::North));
    assert_eq!(s.scores(), [5, 6]);
    let samples: Vec<Sample> = samples
        .into_iter()
        .map(|(mut x, side)| {
            set_end_targets(&mut x, side, side.index(), &s);
            x
        })
        .collect();
    let refs: Vec<(u64, &Sample)> = samples.iter().map(|x| (7, x)).collect();
    let data = pack_samples(&refs, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hand.npz");
    write_shard(&path, &data).unwrap();
    let back = read_shard(&path, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS).unwrap();
    assert_eq!(back, data);
    assert_eq!(back.ply.to_vec(), vec![0, 1, 2]);
    assert_eq!(back.moves_left.unwrap().to_vec(), vec![3.0, 2.0, 1.0]);
    assert_eq!(back.score.unwrap().to_vec(), vec![-1.0, 1.0, -1.0]);
    assert_eq!(back.value.to_vec(), vec![-1.0, 1.0, -1.0]);
    assert_eq!(check_samples(&data).bad(), 0);
}

fn play<G: GameState>(start: &G, games: u64) -> Vec<FinishedGame> {
    let ids: Vec<u64> = (0..games).collect();
    let params = PlayParams { start, game_ids: &ids, seed: 11, model_name: "uniform".into() };
    // Every move a full search, so every ply is a sample.
    let cfg = SelfplayConfig {
        games_in_flight: 4,
        simulations: 8,
        cheap_simulations: 2,
        full_search_prob: 1.0,
        ..Default::default()
    };
    let mut out = Vec::new();
    play_games(&params, &cfg, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
        out.push(g);
        Ok(())
    })
    .unwrap();
    out
}

/// Self-play writes the same targets: for every game, moves left run down by
/// one per ply to 1 at the last sampled position, and the score target equals
/// the replayed game's final points (spec §6) for the mover, so it flips sign
/// from ply to ply.
#[test]
fn self_play_samples_carry_moves_left_and_the_movers_final_points() {
    let rules = MartianRules { max_plies: 40, ..Default::default() };
    let start = MartianChess::new_game(&rules).unwrap();
    assert_eq!(start.side_to_move(), Side::South);
    let games = play(&start, 6);
    let mut nonzero = 0;
    for g in &games {
        let end = g.record.replay::<MartianChess>(&rules).unwrap();
        let [south, north] = end.scores().map(|x| x as f32);
        assert_eq!(g.samples.len() as u32, g.record.plies, "one sample per ply");
        for (i, smp) in g.samples.iter().enumerate() {
            assert_eq!(smp.ply, i as u32);
            assert_eq!(smp.moves_left, (g.record.plies - smp.ply) as f32);
            // South moves at even plies.
            let want = if i % 2 == 0 { south - north } else { north - south };
            assert_eq!(smp.score, Some(want), "game {} ply {i}", g.record.game_id);
        }
        assert_eq!(g.samples.last().unwrap().moves_left, 1.0);
        nonzero += usize::from(south != north);
    }
    assert!(nonzero > 0, "some game ends with unequal points (else the sign test is empty)");
}

/// A game without points gets moves-left targets and no score array.
#[test]
fn jetan_samples_have_moves_left_and_no_score() {
    let start = Jetan::new_game(&JetanRules { max_plies: 24, ..Default::default() }).unwrap();
    let games = play(&start, 2);
    let samples: Vec<_> = games.iter().flat_map(|g| g.samples.iter().map(move |s| (g.record.game_id, s))).collect();
    assert!(samples.iter().all(|(_, s)| s.score.is_none() && s.moves_left >= 1.0));
    let data = pack_samples(&samples, Jetan::INPUT_SHAPE, Jetan::NUM_ACTIONS);
    assert!(data.score.is_none());
    assert_eq!(data.moves_left.as_ref().unwrap().len(), data.len());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.npz");
    write_shard(&path, &data).unwrap();
    let back = read_shard(&path, Jetan::INPUT_SHAPE, Jetan::NUM_ACTIONS).unwrap();
    assert_eq!(back, data);
}

fn martian_data() -> ShardData {
    let start = MartianChess::new_game(&MartianRules { max_plies: 12, ..Default::default() }).unwrap();
    let games = play(&start, 3);
    let samples: Vec<_> = games.iter().flat_map(|g| g.samples.iter().map(move |s| (g.record.game_id, s))).collect();
    pack_samples(&samples, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS)
}

/// Arrays of the wrong length or shape make the shard corrupt (naming the
/// array); non-finite or negative targets leave their samples out.
#[test]
fn bad_auxiliary_arrays_are_refused_or_left_out() {
    let data = martian_data();
    let n = data.len();
    assert!(n >= 3);
    let dir = tempfile::tempdir().unwrap();
    let short = ShardData { moves_left: Some(ndarray::Array1::zeros(n - 1)), ..data.clone() };
    write_shard(&dir.path().join("short.npz"), &short).unwrap();
    let e =
        read_shard(&dir.path().join("short.npz"), MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS).unwrap_err();
    assert!(matches!(e, ShardError::Corrupt { .. }) && e.to_string().contains("moves_left length"), "{e}");
    // A two-dimensional `score` array.
    let two_d = dir.path().join("2d.npz");
    {
        let mut npz = ndarray_npy::NpzWriter::new(fs::File::create(&two_d).unwrap());
        npz.add_array("format_version", &ndarray::Array1::from_elem(1, martian_selfplay::shard::SHARD_FORMAT_VERSION))
            .unwrap();
        npz.add_array("planes", &data.planes).unwrap();
        npz.add_array("policy", &data.policy).unwrap();
        npz.add_array("legal", &data.legal).unwrap();
        npz.add_array("value", &data.value).unwrap();
        npz.add_array("game_id", &data.game_id).unwrap();
        npz.add_array("ply", &data.ply).unwrap();
        npz.add_array("score", &ndarray::Array2::<f32>::zeros((n, 2))).unwrap();
        npz.finish().unwrap();
    }
    let e = read_shard(&two_d, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS).unwrap_err();
    assert!(e.to_string().contains("score"), "{e}");
    // Values.
    let mut bad = data.clone();
    bad.moves_left.as_mut().unwrap()[0] = f32::NAN;
    bad.moves_left.as_mut().unwrap()[1] = -3.0;
    bad.score.as_mut().unwrap()[2] = f32::INFINITY;
    let c = check_samples(&bad);
    assert_eq!(c.bad(), 3);
    assert!(!c.ok[0] && !c.ok[1] && !c.ok[2] && c.ok[3..].iter().all(|&o| o));
    let msg = c.describe().unwrap();
    assert!(msg.contains("moves-left target") && msg.contains("score target"), "{msg}");
}

/// Joining shards keeps an optional array only when every part with rows has
/// it; parts without rows do not count.
#[test]
fn concatenation_keeps_optional_arrays_only_when_every_part_has_them() {
    let data = martian_data();
    let empty = pack_samples(&[], MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS);
    assert!(empty.score.is_none(), "no sample, no score array");
    let joined = ShardData::concat(&[&data, &empty, &data]).unwrap();
    assert_eq!(joined.len(), 2 * data.len());
    assert_eq!(joined.score.as_ref().unwrap().len(), 2 * data.len());
    assert_eq!(joined.moves_left.as_ref().unwrap().len(), 2 * data.len());
    let old = ShardData { moves_left: None, score: None, ..data.clone() };
    let mixed = ShardData::concat(&[&data, &old]).unwrap();
    assert!(mixed.moves_left.is_none() && mixed.score.is_none());
}
