//! The chaos test: a short pipeline killed with SIGKILL at random moments
//! (self-play, training, gating, ladder, report writing), resumed each time, ends
//! with exactly what an uninterrupted run of the same config produces: the
//! same generations and promotions, no duplicate or missing game, every file
//! parsing, every training step logged once, and bit-identical weights (CPU,
//! fixed seed).
//!
//! `CHAOS_KILLS` (default 6) sets the number of kills and `CHAOS_SEED` the
//! seed of the kill times; `scripts/chaos` runs a long one. Documented in
//! `docs/training.md` ("Kills and resumes").

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::common::{edited, micro, Size};

/// [`Size::Pipeline`] with seed 11, one torch thread, three generations of
/// 16 games (three a shard, in unpadded batches), 24 training steps (a
/// checkpoint every four) at learning rate 0.002, and a gate of two pairs
/// that needs half the points.
fn config() -> String {
    edited(
        &micro(Size::Pipeline, "martian-chess", 11),
        &[
            ("torch_threads", "1"),
            ("selfplay.games_per_shard", "3"),
            ("selfplay.fixed_batch", "0"),
            ("train.steps_per_generation", "24"),
            ("train.replay_window", "3000"),
            ("train.checkpoint_every", "4"),
            ("train.learning_rate", "0.002"),
            ("evaluate.pairs", "2"),
            ("evaluate.gate_score", "0.5"),
            ("pipeline.generations", "3"),
            ("pipeline.games_per_generation", "16"),
        ],
        &[],
    )
}

fn pipeline(cfg: &Path, run: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_martian-zero"));
    c.args(["pipeline", "--config", cfg.to_str().unwrap(), "--run-dir", run.to_str().unwrap()]);
    c
}

/// Every tensor of a safetensors file, by name.
fn tensors(p: &Path) -> BTreeMap<String, Vec<u8>> {
    let t = tch::Tensor::read_safetensors(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    t.into_iter()
        .map(|(n, t)| {
            let t = t.contiguous().view(-1).to_kind(tch::Kind::Float);
            let v = Vec::<f32>::try_from(&t).unwrap();
            (n, v.iter().flat_map(|x| x.to_le_bytes()).collect())
        })
        .collect()
}

fn json(p: &Path) -> serde_json::Value {
    let t = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{} does not parse: {e}", p.display()))
}

fn jsonl(p: &Path) -> Vec<serde_json::Value> {
    let t = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    t.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: a line does not parse: {e}", p.display())))
        .collect()
}

fn files(dir: &Path, suffix: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> =
        std::fs::read_dir(dir).map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect()).unwrap_or_default();
    v.retain(|p: &std::path::PathBuf| p.to_string_lossy().ends_with(suffix));
    v.sort();
    v
}

/// What a run directory holds, in a form that does not depend on how games
/// were grouped into files or when things were written.
#[derive(Debug, PartialEq)]
struct Summary {
    /// Game id -> (moves, winner, reason), over all record files.
    games: BTreeMap<u64, String>,
    /// (game id, ply) of every shard row, sorted.
    samples: Vec<(i64, i32)>,
    /// Per checkpoint file name, the tensors' bytes.
    weights: BTreeMap<String, BTreeMap<String, Vec<u8>>>,
    /// `best` pointer.
    best: String,
    /// (generation, promoted, wins, draws, losses) per gate.
    gates: Vec<(u64, bool, u64, u64, u64)>,
    /// (step, policy loss, value loss) of every train.jsonl line, in file order.
    train: Vec<(u64, String, String)>,
    /// final-eval.json match results.
    final_eval: String,
    /// Ladder calibration and records: (file, rating, W/D/L per match).
    ladder: Vec<String>,
}

fn summarize(run: &Path) -> Summary {
    for d in ["", "models", "shards", "games", "eval", "report"] {
        let tmp: Vec<_> = files(&run.join(d), "")
            .into_iter()
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(".tmp-"))
            .collect();
        assert!(tmp.is_empty(), "temporaries left over: {tmp:?}");
    }
    let mut games = BTreeMap::new();
    for p in files(&run.join("games"), ".jsonl") {
        for r in jsonl(&p) {
            let id = r["game_id"].as_u64().unwrap();
            let text = format!("{} {} {}", r["moves"], r["winner"], r["reason"]);
            assert!(games.insert(id, text).is_none(), "game id {id} recorded twice ({})", p.display());
        }
    }
    let mut samples = Vec::new();
    for p in files(&run.join("shards"), ".npz") {
        let mut npz = ndarray_npy::NpzReader::new(std::fs::File::open(&p).unwrap()).unwrap();
        let ids: ndarray::Array1<i64> = npz.by_name("game_id.npy").unwrap();
        let plies: ndarray::Array1<i32> = npz.by_name("ply.npy").unwrap();
        samples.extend(ids.iter().copied().zip(plies.iter().copied()));
    }
    samples.sort();
    let n = samples.len();
    let mut dedup = samples.clone();
    dedup.dedup();
    assert_eq!(dedup.len(), n, "duplicate (game id, ply) samples in {}", run.display());
    let sample_games: BTreeSet<u64> = samples.iter().map(|s| s.0 as u64).collect();
    assert!(sample_games.iter().all(|g| games.contains_key(g)), "samples of a game without a record");
    let mut weights = BTreeMap::new();
    for p in files(&run.join("models"), ".safetensors") {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        assert!(!name.contains("partial"), "a partial checkpoint is left over: {name}");
        json(&p.with_extension("json"));
        weights.insert(name, tensors(&p));
    }
    let mut gates = Vec::new();
    let mut ladder = Vec::new();
    for p in files(&run.join("eval"), ".json") {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("ladder") {
            let r = json(&p);
            let wdl: Vec<String> = r["matches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| format!("{} {} {}", m["wins"], m["draws"], m["losses"]))
                .collect();
            ladder.push(format!("{name}: {} {:?} {}", r["rating"]["elo"], wdl, r["ratings"]));
            continue;
        }
        let r = json(&p);
        let m = &r["result"];
        gates.push((
            r["generation"].as_u64().unwrap(),
            r["promoted"].as_bool().unwrap(),
            m["wins"].as_u64().unwrap(),
            m["draws"].as_u64().unwrap(),
            m["losses"].as_u64().unwrap(),
        ));
    }
    let log = jsonl(&run.join("evals.jsonl"));
    let logged: Vec<u64> = log.iter().map(|r| r["generation"].as_u64().unwrap()).collect();
    assert_eq!(logged, gates.iter().map(|g| g.0).collect::<Vec<_>>(), "evals.jsonl holds each gate once");
    let train: Vec<(u64, String, String)> = jsonl(&run.join("train.jsonl"))
        .iter()
        .map(|m| (m["step"].as_u64().unwrap(), m["policy_loss"].to_string(), m["value_loss"].to_string()))
        .collect();
    let steps: Vec<u64> = train.iter().map(|t| t.0).collect();
    let mut sorted = steps.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(steps, sorted, "train.jsonl holds each step once, in order");
    let f = json(&run.join("final-eval.json"));
    let final_eval = format!("{} {}", f["vs_untrained"]["pentanomial"], f["vs_random"]["pentanomial"]);
    for p in files(&run.join("report"), ".svg") {
        assert!(std::fs::read_to_string(&p).unwrap().contains("</svg>"), "{} is cut short", p.display());
    }
    assert!(std::fs::read_to_string(run.join("report.html")).unwrap().contains("</html>"));
    let leftovers: Vec<_> = files(&run.join("spool"), "").into_iter().flat_map(|d| files(&d, "")).collect();
    assert!(leftovers.is_empty(), "spool not emptied: {leftovers:?}");
    Summary {
        games,
        samples,
        weights,
        best: std::fs::read_to_string(run.join("best")).unwrap().trim().to_string(),
        gates,
        train,
        final_eval,
        ladder,
    }
}

/// The phase a run was in, from the last progress line it printed.
fn phase(stderr: &str) -> &'static str {
    let last = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("generation") || l.starts_with("final") || l.starts_with("ladder"))
        .unwrap_or("");
    if last.starts_with("final") {
        "final evaluation"
    } else if last.contains("ladder") || last.contains(" vs alphabeta") {
        "ladder"
    } else if last.contains("promoted") {
        "report writing"
    } else if last.contains(": gate") {
        "gating"
    } else if last.contains("training") {
        "training"
    } else if last.contains("self-play") || last.contains(" games, ") {
        "self-play"
    } else {
        "start-up"
    }
}

/// Resume by replaying the generation's games (`exact_resume`, variable batches).
#[test]
fn killed_and_resumed_pipeline_equals_uninterrupted_run() {
    chaos(&config());
}

/// Resume by playing only the missing games, with fixed-size batches.
#[test]
fn killed_and_resumed_pipeline_with_fixed_batches_equals_uninterrupted_run() {
    chaos(&edited(&config(), &[("selfplay.fixed_batch", "8")], &[]));
}

fn chaos(config: &str) {
    let kills: usize = std::env::var("CHAOS_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(6);
    let seed: u64 = std::env::var("CHAOS_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("chaos.toml");
    std::fs::write(&cfg, config).unwrap();

    let clean = dir.path().join("clean");
    let t0 = Instant::now();
    let mut child = pipeline(&cfg, &clean).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    // Start-up (libtorch, the run directory) ends with the first generation line.
    let mut startup = None;
    let mut err = String::new();
    for line in std::io::BufRead::lines(std::io::BufReader::new(child.stderr.take().unwrap())) {
        let line = line.unwrap();
        if startup.is_none() && line.starts_with("generation 1:") {
            startup = Some(t0.elapsed());
        }
        err.push_str(&line);
        err.push('\n');
    }
    assert!(child.wait().unwrap().success(), "{err}");
    let full = t0.elapsed();
    let startup = startup.expect("a generation 1 line");
    let work = full.saturating_sub(startup);
    let expected = summarize(&clean);
    assert_eq!(expected.gates.len(), 3);
    assert!(!expected.games.is_empty());

    let chaos = dir.path().join("chaos");
    let mut rng = StdRng::seed_from_u64(seed);
    let mut seen = BTreeMap::<&str, usize>::new();
    for _ in 0..kills {
        let errfile = dir.path().join("stderr.txt");
        let mut child = pipeline(&cfg, &chaos)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&errfile).unwrap())
            .spawn()
            .unwrap();
        // Past the start-up, then on average 1/kills of the run's work, so the
        // kills fall all over the run (a killed run keeps its finished work).
        let delay = startup + work.mul_f64(rng.gen_range(0.0..2.0) / kills as f64);
        let t = Instant::now();
        while t.elapsed() < delay {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        let err = std::fs::read_to_string(&errfile).unwrap_or_default();
        if std::env::var("CHAOS_VERBOSE").is_ok() {
            eprintln!("killed after {delay:?}: {:?}", err.lines().last());
        }
        *seen.entry(phase(&err)).or_default() += 1;
    }
    let out = pipeline(&cfg, &chaos).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("chaos: {kills} kills (seed {seed}), phases killed in: {seen:?}");
    let got = summarize(&chaos);
    assert_eq!(got.games, expected.games, "game records differ from the uninterrupted run");
    assert_eq!(got.samples, expected.samples, "shard samples differ");
    assert_eq!(got.gates, expected.gates, "gates differ");
    assert_eq!(got.best, expected.best);
    assert_eq!(got.train, expected.train, "train.jsonl differs");
    assert_eq!(got.final_eval, expected.final_eval);
    assert_eq!(got.ladder, expected.ladder, "ladder results differ");
    assert_eq!(expected.ladder.len(), 3, "calibration + generations 2 and 3: {:?}", expected.ladder);
    assert_eq!(got.weights.keys().collect::<Vec<_>>(), expected.weights.keys().collect::<Vec<_>>());
    for (name, w) in &expected.weights {
        assert!(&got.weights[name] == w, "{name}: weights differ from the uninterrupted run");
    }
}
