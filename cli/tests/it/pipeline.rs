//! End to end: a micro pipeline runs two generations, resumes after an
//! interruption, and the run directory holds what the README describes.

use std::path::Path;

use crate::common::{edited, micro, mz, Size};

/// The run of these tests: [`Size::Pipeline`] (Martian Chess, seed 3).
fn config() -> String {
    micro(Size::Pipeline, "martian-chess", 3)
}

fn count(dir: &Path, suffix: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(suffix))
        .count()
}

#[test]
fn pipeline_runs_two_generations_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("micro.toml");
    std::fs::write(&cfg, config()).unwrap();
    let run = dir.path().join("run");
    let (c, r) = (cfg.to_str().unwrap(), run.to_str().unwrap());

    // First invocation stops after one generation (as an interrupted run would).
    let out = mz(&["pipeline", "--config", c, "--run-dir", r, "--stop-after", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(run.join("models/gen0001.safetensors").exists());
    assert!(run.join("eval/gen0001.json").exists());
    assert!(!run.join("models/gen0002.safetensors").exists());
    let shards_after_1 = count(&run.join("shards"), ".npz");
    assert_eq!(shards_after_1, 2, "4 games at 2 games per shard");

    // Simulate a crash in the middle of generation 2's self-play: one shard already written.
    let out = mz(&["selfplay", "--config", c, "--run-dir", r, "--games", "2", "--generation", "2"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // The same command resumes: only the missing games and generation 2 are played.
    let out = mz(&["pipeline", "--config", c, "--run-dir", r]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("generation 2: self-play 2 games"), "resumed self-play: {err}");
    assert!(!err.contains("generation 1:"), "generation 1 is not redone: {err}");
    assert!(run.join("models/gen0002.safetensors").exists());
    assert!(run.join("final-eval.json").exists());
    assert_eq!(count(&run.join("shards"), ".npz"), 4);
    assert_eq!(count(&run.join("games"), ".jsonl"), 4);
    let best = std::fs::read_to_string(run.join("best")).unwrap();
    assert_eq!(best.trim(), "gen0002.safetensors", "gate_score 0 promotes every generation");
    let train_log = std::fs::read_to_string(run.join("train.jsonl")).unwrap();
    assert!(train_log.lines().count() >= 6, "3 metric lines per generation");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("final evaluation"), "{stdout}");
    // The ladder: calibrated once, played after generation 2 (ladder_every = 2,
    // and the last generation), on the report and in the final lines.
    assert!(run.join("eval/ladder-calibration.json").exists());
    assert!(!run.join("eval/ladder-gen0001.json").exists());
    let ladder: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("eval/ladder-gen0002.json")).unwrap()).unwrap();
    assert_eq!(ladder["matches"].as_array().unwrap().len(), 2);
    assert_eq!(ladder["rating"]["games"], 4);
    assert!(ladder["alphabeta_version"].as_u64().is_some());
    assert!(stdout.contains("ladder Elo of gen0002.safetensors after generation 2"), "{stdout}");
    // The last generation's ladder is the run's result line, printed once
    // (its generation's own line goes with the progress, to stderr).
    assert_eq!(stdout.matches("ladder Elo of gen0002").count(), 1, "{stdout}");
    assert!(stdout.contains("final ladder Elo of gen0002"), "{stdout}");
    // The record and the line name the rules; the line gives each rung's W/D/L per 100 games.
    assert!(ladder["rules"].as_str().is_some_and(|r| r.contains("max_plies")), "{ladder}");
    assert!(stdout.contains(" lost per 100, points ") && stdout.contains("; alphabeta:depth=2: +"), "{stdout}");
    assert!(stdout.contains("; rules {"), "{stdout}");
    let report = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(report.contains("## Elo against the alpha-beta ladder"), "{report}");
    // The report of the resumed run counts every match once (2 gates, 2 final, 1 ladder
    // calibration, 2 ladder), its training log has each step once, and the gate says why it promoted.
    assert!(report.contains("7 evaluation matches"), "{report}");
    assert!(report.contains("always promote: gate_score = 0"), "{report}");
    let steps: Vec<u64> = train_log
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["step"].as_u64().unwrap())
        .collect();
    assert!(steps.windows(2).all(|w| w[0] < w[1]), "steps logged once, in order: {steps:?}");
    // Per-generation metrics and TensorBoard events written during the run.
    let gens = std::fs::read_to_string(run.join("generations.jsonl")).unwrap();
    assert_eq!(gens.lines().count(), 2, "{gens}");
    assert!(gens.contains("\"positions\"") && gens.contains("\"nn_evals\""), "{gens}");
    // The held-out check of generation 1: network 0 on generation 1's games.
    let g1: serde_json::Value = serde_json::from_str(gens.lines().next().unwrap()).unwrap();
    assert_eq!(g1["heldout"]["network"], "gen0000.safetensors", "{g1}");
    let pl = g1["heldout"]["policy_loss"].as_f64().unwrap();
    assert!(pl.is_finite() && pl > 0.0, "{g1}");
    assert!(!g1["heldout"]["calibration"].as_array().unwrap().is_empty(), "{g1}");
    // The terminal says why a generation was promoted.
    assert!(err.contains("-> promoted (always promote: gate_score = 0"), "{err}");
    let tb: Vec<_> = std::fs::read_dir(run.join("tensorboard")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(tb.len(), 2, "one event file per invocation: {tb:?}");
    let events: Vec<u8> = tb.iter().flat_map(|p| std::fs::read(p).unwrap()).collect();
    for tag in ["train/total_loss", "selfplay/positions_per_s", "gate/score", "elo/ladder"] {
        assert!(events.windows(tag.len()).any(|w| w == tag.as_bytes()), "{tag} not in the event files");
    }

    // Running again does nothing new.
    let out = mz(&["pipeline", "--config", c, "--run-dir", r]);
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("self-play"));

    // Extending the finished run: the final evaluation covers the new newest generation.
    std::fs::write(&cfg, edited(&config(), &[("pipeline.generations", "3")], &[])).unwrap();
    let out = mz(&["pipeline", "--config", c, "--run-dir", r]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let fe: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("final-eval.json")).unwrap()).unwrap();
    assert_eq!(fe["trained"], "gen0003.safetensors", "final evaluation of the extended run");
    std::fs::write(&cfg, config()).unwrap();

    // A different architecture for the same run directory is refused.
    std::fs::write(&cfg, edited(&config(), &[("model.channels", "16")], &[])).unwrap();
    let out = mz(&["pipeline", "--config", c, "--run-dir", r]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("[model]"));
}

/// Options that were accepted and then ignored, overflowed or failed only
/// after the work: each is refused up front with a message naming it.
#[test]
fn options_that_cannot_work_are_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, config()).unwrap();
    let c = cfg.to_str().unwrap();
    let d = dir.path().to_str().unwrap();
    let run = dir.path().join("run");
    let r = run.to_str().unwrap();
    let json = format!("{d}/no/such/dir/x.json");
    // A path below a file.
    let in_file = format!("{c}/x");
    // A run of another game than the config's.
    let jetan_run = dir.path().join("jetan-run");
    std::fs::create_dir_all(&jetan_run).unwrap();
    std::fs::write(jetan_run.join("config.toml"), "game = \"jetan\"\n").unwrap();
    let jr = jetan_run.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["evaluate", "--config", c, "--run-dir", jr, "--a", "random", "--b", "random", "--games", "2"],
            "is a jetan run, and the config's game is martian-chess",
        ),
        (vec!["selfplay", "--config", c, "--games", "1", "--out", d, "--run-dir", r], "cannot be used with"),
        (
            vec!["selfplay", "--config", c, "--games", "1", "--out", d, "--generation", "0"],
            "--generation 0 is out of range",
        ),
        (
            vec![
                "selfplay",
                "--config",
                c,
                "--games",
                "1",
                "--run-dir",
                r,
                "--model",
                "uniform",
                "--generation",
                "4294967295",
            ],
            "1..=2",
        ),
        (vec!["bench", "selfplay", "--config", c, "--games", "0"], "--games must be >= 1"),
        (vec!["selfplay", "--config", c, "--games", "0", "--out", d, "--model", "uniform"], "--games must be >= 1"),
        (vec!["bench", "selfplay", "--config", c, "--games", "2", "--json", &json], "does not exist"),
        (vec!["bench", "selfplay", "--config", c, "--games", "2", "--json", d], "is a directory"),
        (vec!["bench", "selfplay", "--config", c, "--games", "2", "--json", &in_file], "is not a directory"),
        (vec!["selfplay", "--config", c, "--games", "1", "--model", "uniform", "--out", &in_file], "--out"),
        (vec!["bench", "train", "--config", c, "--steps", "1", "--json", &json], "does not exist"),
        (
            vec!["evaluate", "--config", c, "--a", "random", "--b", "random", "--games", "2", "--out", d],
            "is a directory",
        ),
        // An output that cannot be written is refused before the match, not after it.
        (
            vec!["evaluate", "--config", c, "--a", "random", "--b", "random", "--games", "2", "--out", &json],
            "does not exist",
        ),
        (
            vec!["evaluate", "--config", c, "--a", "random", "--b", "random", "--games", "2", "--out", "/proc/r.json"],
            "no file can be created in /proc",
        ),
        (vec!["bench", "train", "--config", c, "--steps", "1", "--json", "/proc/b.json"], "no file can be created"),
        // Zero work is refused, not reported as a rate of 0.
        (vec!["bench", "mcts", "--game", "jetan", "--simulations", "0"], "--simulations"),
        (vec!["bench", "mcts", "--game", "jetan", "--searches", "0"], "--searches"),
        (vec!["bench", "alphabeta", "--game", "jetan", "--searches", "0"], "--searches"),
        (
            vec![
                "bench",
                "selfplay",
                "--config",
                c,
                "--games",
                "2",
                "--simulate-device",
                "batch_ms=0.1,,per_position_us=0.5",
            ],
            "empty item",
        ),
    ];
    for (args, needle) in &cases {
        let out = mz(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} should fail: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    assert!(!run.join("shards").exists(), "a refused worker wrote into the run");
    // An odd --games at the top of the range is rounded up in u64 (it overflowed u32).
    let out = mz(&["evaluate", "--config", c, "--a", "random", "--b", "random", "--games", "4294967295", "--out", d]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rounded up to 4294967296"), "{err}");
}

#[test]
fn bad_input_gets_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["show", "--game", "jetan", "--position", "WLDFPCFDLW/10 o OB - 0 0"], "ranks"),
        (&["show", "--game", "jetan", "--moves", "a9a7"], "illegal move"),
        (&["show", "--game", "martian-chess", "--moves", "q9q9"], "bad move text"),
        (&["perft", "--game", "martian-chess", "--position", "garbage", "--depth", "1"], "bad position"),
        (&["pipeline", "--config", "/nonexistent.toml", "--run-dir", "/tmp/x"], "reading config"),
        (&["analyse", "--game", "martian-chess", "--depth", "3", "--tt-mib", "99999999"], "tt-mib"),
    ];
    for (args, needle) in cases {
        let out = mz(args);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, "game = \"jetan\"\n[selfplay]\ngames_in_fligt = 3\n").unwrap();
    let out =
        mz(&["selfplay", "--config", cfg.to_str().unwrap(), "--games", "1", "--out", dir.path().to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("games_in_fligt"));
}

/// `pipeline.max_minutes` ends a run like a finished one: the newest
/// generation gets the final evaluation and the ladder.
#[test]
fn time_limit_ends_with_final_evaluation_and_ladder() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("micro.toml");
    let base = edited(&config(), &[("evaluate.ladder_every", "5")], &[]);
    std::fs::write(&cfg, &base).unwrap();
    let run = dir.path().join("run");
    let (c, r) = (cfg.to_str().unwrap(), run.to_str().unwrap());
    let out = mz(&["pipeline", "--config", c, "--run-dir", r, "--stop-after", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Out of time before generation 2 (a limit of 60 ns).
    std::fs::write(&cfg, base.replace("[pipeline]", "[pipeline]\nmax_minutes = 0.000000001")).unwrap();
    let out = mz(&["pipeline", "--config", c, "--run-dir", r]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("pipeline.max_minutes (0.000000001) reached before generation 2"), "{err}");
    assert!(!run.join("models/gen0002.safetensors").exists());
    let fe: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("final-eval.json")).unwrap()).unwrap();
    assert_eq!(fe["trained"], "gen0001.safetensors");
    assert!(run.join("eval/ladder-gen0001.json").exists());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("final ladder Elo of gen0001.safetensors after generation 1"), "{stdout}");
    assert_eq!(stdout.matches("ladder Elo of").count() + err.matches("ladder Elo of").count(), 1, "{stdout}{err}");
}

/// The bootstrap from the baseline (`pipeline.bootstrap_games`): generation 1's
/// games come from the alpha-beta teacher (worker `boot`), every sample after
/// the random opening plies has a one-hot policy target on the teacher's move,
/// game ids are unique, the self-play of generation 1 plays only the rest, and
/// running the command again plays no bootstrap game twice.
#[test]
fn bootstrap_games_come_from_the_teacher() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("boot.toml");
    let text = edited(
        &config(),
        &[
            ("pipeline.generations", "1"),
            ("pipeline.bootstrap_games", "3"),
            ("pipeline.bootstrap_player", r#""alphabeta:depth=1""#),
            ("evaluate.ladder_every", "0"),
        ],
        &[],
    );
    std::fs::write(&cfg, text).unwrap();
    let run = dir.path().join("run");
    let args = ["pipeline", "--config", cfg.to_str().unwrap(), "--run-dir", run.to_str().unwrap()];
    let out = mz(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 bootstrap games by alphabeta:depth=1"));
    let mut boot = Vec::new();
    let mut others = 0;
    for e in std::fs::read_dir(run.join("games")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        for line in std::fs::read_to_string(&p).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            if name.starts_with("gen0001-wboot-") {
                assert_eq!(v["model"], "alphabeta:depth=1 (bootstrap)");
                boot.push(v["game_id"].as_u64().unwrap());
            } else {
                others += 1;
            }
        }
    }
    boot.sort_unstable();
    boot.dedup();
    assert_eq!(boot.len(), 3, "three bootstrap games with distinct ids");
    assert_eq!(others, 1, "self-play plays the rest of the generation's 4 games");
    // The teacher's samples: one-hot policy targets on a legal action.
    let mut checked = 0;
    for e in std::fs::read_dir(run.join("shards")).unwrap() {
        let p = e.unwrap().path();
        if !p.file_name().unwrap().to_string_lossy().starts_with("gen0001-wboot-") {
            continue;
        }
        use martian_rules::martian::MartianChess;
        use martian_rules::GameState;
        let d = martian_selfplay::read_shard(&p, MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS).unwrap();
        for r in 0..d.len() {
            let row = d.policy.row(r);
            assert_eq!(row.iter().filter(|&&x| x == 1.0).count(), 1);
            assert_eq!(row.iter().filter(|&&x| x != 0.0).count(), 1);
            let a = row.iter().position(|&x| x == 1.0).unwrap();
            assert_eq!(d.legal[[r, a]], 1);
            checked += 1;
        }
    }
    assert!(checked > 0);
    // Again: nothing is played twice.
    let again = mz(&args);
    assert!(again.status.success());
    assert!(!String::from_utf8_lossy(&again.stderr).contains("bootstrap games by"));
    // A teacher that is not a fixed alpha-beta player is refused, naming the key.
    let bad = edited(
        &config(),
        &[
            ("pipeline.generations", "1"),
            ("pipeline.bootstrap_games", "1"),
            ("pipeline.bootstrap_player", r#""random""#),
        ],
        &[],
    );
    std::fs::write(&cfg, bad).unwrap();
    let out =
        mz(&["pipeline", "--config", cfg.to_str().unwrap(), "--run-dir", dir.path().join("r2").to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("pipeline.bootstrap_player"));
}

/// The auxiliary heads end to end (`model.moves_left_head`, `model.score_head`):
/// the shards carry the plies left and the final points of each sample (self-play
/// and bootstrap games alike, checked against the game records), `train.jsonl`
/// names both loss terms, the checkpoint records the heads, and the run refuses
/// a config that drops a head, naming it.
#[test]
fn auxiliary_heads_get_their_targets_and_their_losses_logged() {
    use martian_rules::martian::{MartianChess, MartianRules};
    use martian_rules::{GameState, Side};
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("aux.toml");
    let text = edited(
        &config(),
        &[
            ("model.moves_left_head", "true"),
            ("model.score_head", "true"),
            ("pipeline.generations", "1"),
            ("pipeline.bootstrap_games", "1"),
            ("pipeline.bootstrap_player", r#""alphabeta:depth=1""#),
            ("evaluate.ladder_every", "0"),
        ],
        &[],
    );
    std::fs::write(&cfg, &text).unwrap();
    let run = dir.path().join("run");
    let (c, r) = (cfg.to_str().unwrap(), run.to_str().unwrap());
    let out = mz(&["pipeline", "--config", c, "--run-dir", r]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Records by game id: replayed, they give the final ply and points.
    let mut ends = std::collections::HashMap::new();
    for e in std::fs::read_dir(run.join("games")).unwrap() {
        for line in std::fs::read_to_string(e.unwrap().path()).unwrap().lines() {
            let rec = martian_selfplay::GameRecord::from_json_line(line).unwrap();
            let end = rec.replay::<MartianChess>(&MartianRules::default()).unwrap();
            ends.insert(rec.game_id as i64, end);
        }
    }
    assert_eq!(ends.len(), 4);
    let mut rows = 0;
    for e in std::fs::read_dir(run.join("shards")).unwrap() {
        let d = martian_selfplay::read_shard(&e.unwrap().path(), MartianChess::INPUT_SHAPE, MartianChess::NUM_ACTIONS)
            .unwrap();
        let (ml, sc) = (d.moves_left.as_ref().expect("moves_left array"), d.score.as_ref().expect("score array"));
        for i in 0..d.len() {
            let end = &ends[&d.game_id[i]];
            assert_eq!(ml[i], (end.ply() - d.ply[i] as u32) as f32);
            // South moves first, so South is to move at even plies.
            let mover = if d.ply[i] % 2 == 0 { Side::South } else { Side::North };
            assert_eq!(sc[i], end.final_score_difference(mover).unwrap() as f32);
            rows += 1;
        }
    }
    assert!(rows > 0);
    let log = std::fs::read_to_string(run.join("train.jsonl")).unwrap();
    assert!(log.lines().count() >= 3);
    for line in log.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for k in ["moves_left_loss", "score_loss"] {
            assert!(v[k].as_f64().is_some_and(f64::is_finite), "{k} missing in {line}");
        }
    }
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("models/gen0001.json")).unwrap()).unwrap();
    assert_eq!(
        (meta["model"]["moves_left_head"].as_bool(), meta["model"]["score_head"].as_bool()),
        (Some(true), Some(true))
    );
    // The same run with the score head dropped from the config is refused, naming it.
    std::fs::write(&cfg, text.replace("score_head = true\n", "")).unwrap();
    let out = mz(&["train", "--config", c, "--run-dir", r]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("score_head true vs false"), "{err}");
    // A Jetan config with a score head is refused before anything runs.
    std::fs::write(&cfg, text.replace("game = \"martian-chess\"", "game = \"jetan\"")).unwrap();
    let out = mz(&["pipeline", "--config", c, "--run-dir", dir.path().join("j").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("model.score_head"), "{err}");
    assert!(!dir.path().join("j").exists(), "nothing was written");
}

/// `[selfplay_rules]` changes the rules of the self-play games only: the
/// pipeline's and the `selfplay` command's records are played and recorded
/// under them, while the promotion gate's games play `[rules]`. A move cap
/// tells them apart in every game (12 plies in self-play, 30 in matches).
#[test]
fn selfplay_rules_apply_to_self_play_games_only() {
    use martian_rules::jetan::{ChiefCapture, Jetan, JetanRules};
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("sp.toml");
    let text = edited(
        &micro(Size::Pipeline, "jetan", 3),
        &[
            ("pipeline.generations", "1"),
            ("evaluate.ladder_every", "0"),
            ("evaluate.pairs", "2"),
            ("rules.max_plies", "30"),
            ("selfplay_rules.max_plies", "12"),
            ("selfplay_rules.chief_captured_by_non_chief", r#""RemoveAndContinue""#),
        ],
        &[],
    );
    std::fs::write(&cfg, &text).unwrap();
    let (run, out) = (dir.path().join("run"), dir.path().join("out"));
    let c = cfg.to_str().unwrap();
    let o = mz(&["pipeline", "--config", c, "--run-dir", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = mz(&["selfplay", "--config", c, "--out", out.to_str().unwrap(), "--games", "3", "--model", "uniform"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sp = JetanRules {
        max_plies: 12,
        chief_captured_by_non_chief: ChiefCapture::RemoveAndContinue,
        ..Default::default()
    };
    let mut records = 0;
    for games in [run.join("games"), out.join("games")] {
        for e in std::fs::read_dir(games).unwrap() {
            for line in std::fs::read_to_string(e.unwrap().path()).unwrap().lines() {
                let rec = martian_selfplay::GameRecord::from_json_line(line).unwrap();
                assert_eq!(rec.recorded_rules::<Jetan>().unwrap(), Some(sp), "game {}", rec.game_id);
                rec.replay::<Jetan>(&sp).unwrap();
                assert!(rec.moves.len() <= 12, "game {}: {} plies", rec.game_id, rec.moves.len());
                records += 1;
            }
        }
    }
    assert_eq!(records, 4 + 3);
    // The gate's games: up to 30 plies, and at least one past self-play's cap.
    let gate: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("eval/gen0001.json")).unwrap()).unwrap();
    let plies: Vec<u64> =
        gate["result"]["games"].as_array().unwrap().iter().map(|g| g["plies"].as_u64().unwrap()).collect();
    assert!(!plies.is_empty() && plies.iter().all(|&p| p <= 30), "{plies:?}");
    assert!(plies.iter().any(|&p| p > 12), "the gate plays [rules], not [selfplay_rules]: {plies:?}");
}

#[test]
fn a_curriculum_of_rules_and_labels_from_a_deeper_search() {
    use martian_rules::jetan::{Jetan, JetanRules};
    use martian_rules::GameState;
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cur.toml");
    let text = edited(
        &micro(Size::Pipeline, "jetan", 3),
        &[
            ("pipeline.generations", "2"),
            ("pipeline.selfplay_rules_generations", "1"),
            ("evaluate.ladder_every", "0"),
            ("evaluate.pairs", "1"),
            ("rules.max_plies", "30"),
            ("selfplay_rules.max_plies", "12"),
            ("selfplay.label_depth", "1"),
            ("selfplay.label_policy_weight", "1.0"),
            ("selfplay.full_search_prob", "1.0"),
        ],
        &[],
    );
    std::fs::write(&cfg, &text).unwrap();
    let run = dir.path().join("run");
    let o = mz(&["pipeline", "--config", cfg.to_str().unwrap(), "--run-dir", run.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("self-play labels:") && stderr.contains("alphabeta:depth=1"), "{stderr}");
    let (first, later) =
        (JetanRules { max_plies: 12, ..Default::default() }, JetanRules { max_plies: 30, ..Default::default() });
    let mut per_gen = [0, 0];
    let mut checked = None;
    for e in std::fs::read_dir(run.join("games")).unwrap() {
        let path = e.unwrap().path();
        let g = if path.file_name().unwrap().to_str().unwrap().starts_with("gen0001") { 0 } else { 1 };
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let rec = martian_selfplay::GameRecord::from_json_line(line).unwrap();
            // Generation 1 under [selfplay_rules], generation 2 under [rules].
            let want = if g == 0 { first } else { later };
            assert_eq!(rec.recorded_rules::<Jetan>().unwrap(), Some(want), "{}", path.display());
            // Every sample labelled: one score per sample.
            assert_eq!(rec.label_scores.len(), rec.samples as usize, "game {}", rec.game_id);
            per_gen[g] += 1;
            if g == 0 && checked.is_none() {
                checked = Some((rec.game_id, rec.start.clone(), rec.label_scores[0]));
            }
        }
    }
    // With label_policy_weight = 1 the policy target of a game's first
    // position is the depth-1 alpha-beta's move alone, its score the record's.
    let (id, start, score) = checked.unwrap();
    let start = Jetan::from_position(&start, &first).unwrap();
    let mut ab =
        martian_search::AlphaBeta::<Jetan>::new(martian_search::AlphaBetaConfig { tt_mib: 1, ..Default::default() });
    let r = ab.search(&start, &martian_search::Limits::depth(1));
    assert_eq!(score, r.score);
    let best = start.action_index(r.best_move.unwrap());
    let mut found = false;
    for e in std::fs::read_dir(run.join("shards")).unwrap() {
        let p = e.unwrap().path();
        if !p.file_name().unwrap().to_str().unwrap().starts_with("gen0001") {
            continue;
        }
        let d = martian_selfplay::read_shard(&p, Jetan::INPUT_SHAPE, Jetan::NUM_ACTIONS).unwrap();
        for i in 0..d.len() {
            if d.game_id[i] as u64 == id && d.ply[i] == 0 {
                assert_eq!(d.policy[[i, best]], 1.0, "the alpha-beta's move is the whole target");
                found = true;
            }
        }
    }
    assert!(found, "game {id}'s first position is in a shard");
    assert!(per_gen[0] > 0 && per_gen[1] > 0, "{per_gen:?}");
}
