//! Free-for-all value targets (four-player Martian Chess, `teams = false`):
//! every sample carries the four seats' §14.7 results in mover-relative
//! order, and they survive the shard round trip; shards without them load.
//! The game record names the seat or seats that won (spec §14.7: a free-for-all has no teams).

use martian_rules::martian4::{Martian4Rules, MartianChess4, Seat};
use martian_rules::{EndReason, GameKind, GameState};
use martian_search::{MctsConfig, UniformEvaluator};
use martian_selfplay::record::RECORD_FORMAT_VERSION;
use martian_selfplay::{
    pack_samples, play_games, read_shard, winner_name, write_shard, GameRecord, PlayParams, SelfplayConfig, ShardData,
};

#[test]
fn ffa_samples_carry_rotated_seat_values_through_the_shard() {
    let rules = Martian4Rules { teams: false, max_plies: 16, ..Martian4Rules::default() };
    let start = MartianChess4::new_game(&rules).unwrap();
    let cfg = SelfplayConfig {
        games_in_flight: 2,
        simulations: 4,
        cheap_simulations: 4,
        full_search_prob: 1.0,
        ..SelfplayConfig::default()
    };
    let params = PlayParams { start: &start, game_ids: &[0, 1], seed: 3, model_name: "uniform".into() };
    let mut games = Vec::new();
    play_games(&params, &cfg, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
        games.push(g);
        Ok(())
    })
    .unwrap();
    assert_eq!(games.len(), 2);
    for g in &games {
        let end = g.record.replay::<MartianChess4>(&rules).unwrap();
        let seat_values = end.seat_values().unwrap();
        assert!((seat_values.iter().sum::<f32>()).abs() < 1e-5);
        // The record names the seats with the top value (spec §14.7), not a team.
        let top = seat_values.iter().copied().fold(f32::MIN, f32::max);
        let seats: Vec<&str> = Seat::ALL.iter().filter(|s| seat_values[s.index()] == top).map(|s| s.name()).collect();
        assert_eq!(g.record.winner.as_deref(), Some(seats.join(",").as_str()));
        for smp in &g.samples {
            // The mover of ply p is seat p % 4 (clockwise from SW, no opening).
            let mover = smp.ply as usize % 4;
            assert_eq!(smp.values.len(), 4);
            for k in 0..4 {
                assert_eq!(smp.values[k], seat_values[(mover + k) % 4], "ply {} k {k}", smp.ply);
            }
            assert_eq!(smp.value, smp.values[0]);
        }
    }
    let samples: Vec<_> = games.iter().flat_map(|g| g.samples.iter().map(move |s| (g.record.game_id, s))).collect();
    let data = pack_samples(&samples, MartianChess4::INPUT_SHAPE, MartianChess4::NUM_ACTIONS);
    let values = data.values.as_ref().expect("a values array");
    assert_eq!(values.shape(), [data.len(), 4]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ffa.npz");
    write_shard(&path, &data).unwrap();
    let back = read_shard(&path, MartianChess4::INPUT_SHAPE, MartianChess4::NUM_ACTIONS).unwrap();
    assert_eq!(back, data);
    // A shard without the array (two-player layout) still loads.
    let old = ShardData { values: None, ..data.clone() };
    write_shard(&path, &old).unwrap();
    assert_eq!(read_shard(&path, MartianChess4::INPUT_SHAPE, MartianChess4::NUM_ACTIONS).unwrap().values, None);
    // Joining keeps the array when every part has it.
    let joined = ShardData::concat(&[&data, &data]).unwrap();
    assert_eq!(joined.values.unwrap().nrows(), 2 * data.len());
    assert_eq!(ShardData::concat(&[&data, &old]).unwrap().values, None);
    // Out-of-range per-player targets are left out.
    let mut bad = data.clone();
    bad.values.as_mut().unwrap()[[0, 2]] = 1.5;
    let c = martian_selfplay::check_samples(&bad);
    assert!(!c.ok[0] && c.ok[1..].iter().all(|&o| o), "{:?}", c.describe());
}

/// The team game keeps the two-player layout: no per-player targets.
#[test]
fn team_samples_have_no_values() {
    let rules = Martian4Rules { max_plies: 8, ..Martian4Rules::default() };
    let start = MartianChess4::new_game(&rules).unwrap();
    let cfg = SelfplayConfig { games_in_flight: 1, simulations: 2, cheap_simulations: 2, ..SelfplayConfig::default() };
    let params = PlayParams { start: &start, game_ids: &[0], seed: 1, model_name: "uniform".into() };
    let mut n = 0;
    play_games(&params, &cfg, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
        assert!(g.samples.iter().all(|s| s.values.is_empty()));
        n += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!(n, 1);
}

/// The initial placement with the scores `sw nw ne se` after 40 plies: under
/// `max_plies = 40` a game over by the move cap, scored by §14.7.
fn capped(scores: &str) -> String {
    format!("QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP2PPD/QDP2PDQ/QQD2DQQ SW {scores} - 0 40")
}

/// Free-for-all records used to name a team (`NW+SE` for NW alone, `SW+NE`
/// for a win shared by three seats). The winner is now the seat, or the seats
/// sharing the win; the team game still names the team.
#[test]
fn ffa_winner_is_the_seat_or_the_seats_that_won() {
    let ffa = Martian4Rules { teams: false, max_plies: 40, ..Martian4Rules::default() };
    let teams = Martian4Rules { teams: true, ..ffa };
    for (scores, ffa_winner, team_winner) in [
        ("1 6 0 2", "NW", Some("NW+SE")),
        ("5 5 1 0", "SW,NW", Some("SW+NE")),
        ("2 5 5 5", "NW,NE,SE", Some("NW+SE")),
        ("3 0 3 3", "SW,NE,SE", Some("SW+NE")),
        ("1 1 1 1", "SW,NW,NE,SE", None),
    ] {
        let s = MartianChess4::from_position(&capped(scores), &ffa).unwrap();
        assert_eq!(s.outcome().map(|o| o.reason), Some(EndReason::MoveCap), "{scores}");
        assert_eq!(winner_name(&s).as_deref(), Some(ffa_winner), "free-for-all, scores {scores}");
        let t = MartianChess4::from_position(&capped(scores), &teams).unwrap();
        assert_eq!(winner_name(&t).as_deref(), team_winner, "teams, scores {scores}");
    }
    // An emptied quadrant with a tie for the top: the last mover (SW, before
    // NW to move) among the tied seats wins alone (§14.7).
    let empty_se = "QQD2DQQ/QDP2PDQ/DPP2PPD/8/8/DPP5/QDP5/QQD5 NW 3 3 1 0 - 0 9";
    let s = MartianChess4::from_position(empty_se, &ffa).unwrap();
    assert_eq!(s.outcome().map(|o| o.reason), Some(EndReason::EmptyZone));
    assert_eq!(winner_name(&s).as_deref(), Some("SW"));
    // An unfinished game has no winner yet.
    assert_eq!(winner_name(&MartianChess4::new_game(&ffa).unwrap()), None);
}

/// A free-for-all record read back: the seat naming replays, and so does the
/// team view that older records hold; another winner does
/// not.
#[test]
fn ffa_records_with_seats_or_the_old_team_view_replay() {
    let rules = Martian4Rules { teams: false, max_plies: 40, ..Martian4Rules::default() };
    let record = |winner: Option<&str>| GameRecord {
        format_version: RECORD_FORMAT_VERSION,
        game: GameKind::MartianChess4p,
        rules: serde_json::to_value(rules).ok(),
        game_id: 1,
        start: capped("2 5 5 5"),
        moves: vec![],
        winner: winner.map(str::to_string),
        reason: EndReason::MoveCap,
        plies: 40,
        samples: 0,
        model: "uniform".into(),
        contempt: None,
        draw_aversion: None,
        label_scores: Vec::new(),
    };
    let line = serde_json::to_string(&record(Some("NW,NE,SE"))).unwrap();
    assert!(line.contains(r#""winner":"NW,NE,SE""#), "{line}");
    GameRecord::from_json_line(&line).unwrap().replay::<MartianChess4>(&rules).unwrap();
    // The old writer's team view: NW + SE hold 10 of the 17 points.
    record(Some("NW+SE")).replay::<MartianChess4>(&rules).unwrap();
    for wrong in [Some("NW"), Some("SW+NE"), None] {
        let e = record(wrong).replay::<MartianChess4>(&rules).unwrap_err().to_string();
        assert!(e.contains("differs from the recorded"), "{wrong:?}: {e}");
    }
}
