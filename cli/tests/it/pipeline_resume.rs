//! Resuming runs whose files were changed between invocations: a config with
//! fewer generations than the run has, damaged partial checkpoints, a damaged
//! `best`, an unreadable spooled game, and a generation trained by `train`
//! before its gate. Documented in `docs/training.md` ("Kills and resumes").
//!
//! Two runs of a micro config are made once and copied for each case: `half`
//! (generation 1 of 2 done) and `full` (both generations and the final
//! evaluation done).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::common::{self, edited, micro, mz, Size};

/// [`Size::Pipeline`] with seed 5, one torch thread and a ladder of depth-1 alpha-beta only.
fn run_config() -> String {
    edited(
        &micro(Size::Pipeline, "martian-chess", 5),
        &[("torch_threads", "1"), ("evaluate.ladder", r#"["alphabeta:depth=1"]"#)],
        &[],
    )
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// Writes [`run_config`] with each `(from, to)` replacement into `dir/name`.
fn config(dir: &Path, name: &str, changes: &[(&str, &str)]) -> PathBuf {
    let mut s = run_config();
    for (from, to) in changes {
        assert!(s.contains(from), "{from}");
        s = s.replace(from, to);
    }
    let p = dir.join(name);
    std::fs::write(&p, s).unwrap();
    p
}

/// Every file under `dir` (but `workers/`, the process claims) and its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if rel.starts_with("workers") {
                continue;
            }
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

struct Fixtures {
    _dir: tempfile::TempDir,
    cfg: PathBuf,
    half: PathBuf,
    full: PathBuf,
}

/// The two runs, made once for all the tests of this file.
fn fixtures() -> &'static Fixtures {
    static F: OnceLock<Fixtures> = OnceLock::new();
    F.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), "micro.toml", &[]);
        let half = dir.path().join("half");
        let out = mz(&["pipeline", "--config", s(&cfg), "--run-dir", s(&half), "--stop-after", "1"]);
        assert!(out.status.success(), "{}", text(&out));
        let full = dir.path().join("full");
        common::copy_dir(&half, &full);
        let out = mz(&["pipeline", "--config", s(&cfg), "--run-dir", s(&full)]);
        assert!(out.status.success(), "{}", text(&out));
        assert!(full.join("final-eval.json").exists());
        Fixtures { _dir: dir, cfg, half, full }
    })
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A copy of fixture run `from` in a new temporary directory.
fn copy_of(from: &Path) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    common::copy_dir(from, &run);
    (dir, run)
}

/// Lowering `pipeline.generations` below what the run has is refused, and
/// nothing of the run changes (it used to evaluate an older generation as
/// the final one and overwrite `final-eval.json`).
#[test]
fn fewer_generations_than_the_run_has_are_refused() {
    let f = fixtures();
    let (dir, run) = copy_of(&f.full);
    let before = snapshot(&run);
    let cfg = config(dir.path(), "g1.toml", &[("generations = 2", "generations = 1")]);
    let out = mz(&["pipeline", "--config", s(&cfg), "--run-dir", s(&run)]);
    let t = text(&out);
    assert!(!out.status.success(), "{t}");
    assert!(t.contains("already has generation 2"), "{t}");
    assert!(t.contains("pipeline.generations = 1"), "{t}");
    assert!(t.contains("set pipeline.generations to 2 or more") && t.contains("new --run-dir"), "{t}");
    assert!(!t.contains("panicked"), "{t}");
    assert!(snapshot(&run) == before, "the refused command changed the run directory");
    // The same config as the run's still resumes (nothing to do).
    let out = mz(&["pipeline", "--config", s(&f.cfg), "--run-dir", s(&run)]);
    assert!(out.status.success(), "{}", text(&out));
}

/// A `train` of generation 2 killed (SIGKILL) once it has written a partial
/// checkpoint; returns the run and that partial checkpoint (the only one left).
fn killed_in_training(dir: &Path) -> (PathBuf, PathBuf) {
    let f = fixtures();
    let run = dir.join("run");
    common::copy_dir(&f.half, &run);
    let long = config(dir, "long.toml", &[("steps_per_generation = 6", "steps_per_generation = 100000")]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_martian-zero"))
        .args(["train", "--config", s(&long), "--run-dir", s(&run)])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let models = run.join("models");
    let t0 = Instant::now();
    let complete = || {
        std::fs::read_dir(&models)
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str().map(String::from))
            .any(|n| n.starts_with("gen0002-partial-") && n.ends_with(".json"))
    };
    while !complete() {
        assert!(t0.elapsed() < Duration::from_secs(120), "no partial checkpoint after 120 s");
        assert!(child.try_wait().unwrap().is_none(), "train ended before its first partial checkpoint");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // Keep the newest complete partial checkpoint only (a kill can leave a newer incomplete one).
    let names: Vec<String> =
        std::fs::read_dir(&models).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    let newest = names
        .iter()
        .filter_map(|n| n.strip_prefix("gen0002-partial-")?.strip_suffix(".json").map(String::from))
        .max()
        .unwrap();
    for n in &names {
        if (n.starts_with("gen0002-partial-") && !n.contains(&newest)) || n.starts_with(".tmp-") {
            std::fs::remove_file(models.join(n)).unwrap();
        }
    }
    let partial = models.join(format!("gen0002-partial-{newest}.safetensors"));
    for ext in ["safetensors", "json", "optim"] {
        assert!(partial.with_extension(ext).exists(), "{ext}");
    }
    (run, partial)
}

/// Every kind of damage to a partial checkpoint (truncated weights, a flipped
/// bit caught by the sidecar's checksum, a garbage sidecar, a missing or truncated optimizer state) is a warning naming the
/// file, and the generation's training starts again; the resume line never
/// promises to continue from it. An intact one is resumed.
#[test]
fn damaged_partial_checkpoints_restart_the_generation_with_a_warning() {
    let f = fixtures();
    let base = tempfile::tempdir().unwrap();
    let (killed, partial) = killed_in_training(base.path());
    let step: u64 = partial.file_stem().unwrap().to_str().unwrap().rsplit('-').next().unwrap().parse().unwrap();
    let truncate = |p: &Path| {
        let b = std::fs::read(p).unwrap();
        std::fs::write(p, &b[..b.len() / 2]).unwrap();
    };
    type Damage<'a> = &'a dyn Fn(&Path);
    let cases: &[(&str, Damage)] = &[
        ("intact", &|_: &Path| {}),
        ("truncated weights", &|p: &Path| truncate(p)),
        ("one flipped bit in the weights", &|p: &Path| {
            let mut b = std::fs::read(p).unwrap();
            let n = b.len();
            b[n - 4] ^= 1;
            std::fs::write(p, b).unwrap();
        }),
        ("garbage sidecar", &|p: &Path| std::fs::write(p.with_extension("json"), "garbage").unwrap()),
        ("deleted optimizer state", &|p: &Path| std::fs::remove_file(p.with_extension("optim")).unwrap()),
        ("truncated optimizer state", &|p: &Path| truncate(&p.with_extension("optim"))),
    ];
    for (name, damage) in cases {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        common::copy_dir(&killed, &run);
        let p = run.join("models").join(partial.file_name().unwrap());
        damage(&p);
        let gen1 = std::fs::read(run.join("models/gen0001.safetensors")).unwrap();
        let games = snapshot(&run.join("games"));
        // The resume line.
        let out = mz(&["pipeline", "--config", s(&f.cfg), "--run-dir", s(&run), "--stop-after", "0"]);
        let t = text(&out);
        assert!(out.status.success(), "{name}: {t}");
        let continues = format!("training continues from step {step}");
        assert_eq!(t.contains(&continues), *name == "intact", "{name}: {t}");
        // Training.
        let out = mz(&["train", "--config", s(&f.cfg), "--run-dir", s(&run)]);
        let t = text(&out);
        assert!(out.status.success(), "{name}: {t}");
        let file = partial.file_name().unwrap().to_str().unwrap();
        if *name == "intact" {
            assert!(t.contains(&format!("resuming training at step {step}")), "{name}: {t}");
            assert!(!t.contains("warning: not resuming"), "{name}: {t}");
        } else {
            assert!(t.contains("warning: not resuming from") && t.contains(file), "{name}: {t}");
            assert!(t.contains("generation 2: training starts again from"), "{name}: {t}");
            assert!(!t.contains("resuming training at step"), "{name}: {t}");
        }
        assert!(run.join("models/gen0002.json").exists(), "{name}");
        let left: Vec<String> = std::fs::read_dir(run.join("models"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
            .filter(|n| n.contains("partial"))
            .collect();
        assert!(left.is_empty(), "{name}: {left:?}");
        assert_eq!(std::fs::read(run.join("models/gen0001.safetensors")).unwrap(), gen1, "{name}");
        assert!(snapshot(&run.join("games")) == games, "{name}: games changed");
    }
}

/// A `best` that names no usable checkpoint is rebuilt from the gate records
/// with a warning naming the problem, before the resume line (which no longer
/// says "none yet"); `export` names the problem too.
#[test]
fn a_damaged_best_file_is_rebuilt_with_a_warning() {
    let f = fixtures();
    for (content, problem) in
        [("garbage\n", "not a checkpoint file name"), ("", "is empty"), ("gen0007.safetensors", "gen0007.safetensors")]
    {
        let (dir, run) = copy_of(&f.full);
        std::fs::write(run.join("best"), content).unwrap();
        let out_dir = dir.path().join("bundle");
        let out = mz(&["export", "--checkpoint", s(&run), "--out", s(&out_dir)]);
        let t = text(&out);
        assert!(!out.status.success(), "{t}");
        assert!(t.contains("best") && t.contains(problem), "{content:?}: {t}");
        let cfg = config(dir.path(), "g3.toml", &[("generations = 2", "generations = 3")]);
        let out = mz(&["pipeline", "--config", s(&cfg), "--run-dir", s(&run), "--stop-after", "0"]);
        let t = text(&out);
        assert!(out.status.success(), "{t}");
        let warning = t
            .lines()
            .find(|l| l.starts_with("warning:") && l.contains("best"))
            .unwrap_or_else(|| panic!("{content:?}: {t}"));
        assert!(warning.contains("best") && warning.contains(problem), "{content:?}: {warning}");
        assert!(warning.contains("rebuilt it from the gate records"), "{content:?}: {warning}");
        assert!(!t.contains("none yet"), "{content:?}: {t}");
        assert!(t.contains("best network gen0002.safetensors"), "{content:?}: {t}");
        assert_eq!(std::fs::read_to_string(run.join("best")).unwrap().trim(), "gen0002.safetensors");
    }
}

/// Plays `games` self-play games of generation 2 into `run`, one a shard.
fn selfplay_generation_2(dir: &Path, run: &Path, games: &str) {
    let one = config(dir, "one.toml", &[("games_per_shard = 2", "games_per_shard = 1")]);
    let out = mz(&["selfplay", "--config", s(&one), "--run-dir", s(run), "--games", games, "--generation", "2"]);
    assert!(out.status.success(), "{}", text(&out));
}

/// A merged game of generation 2 (shard `seq`) back in the spool, as a kill
/// before its merge leaves it (with `cut`, its samples file cut in half):
/// returns its shard and record file paths, samples and record line.
fn back_to_spool(run: &Path, seq: u32, cut: bool) -> (PathBuf, PathBuf, Vec<u8>, String) {
    let spool = run.join("spool/gen0002-w0");
    std::fs::create_dir_all(&spool).unwrap();
    let stem = format!("gen0002-w0-{seq:06}");
    let records = run.join("games").join(format!("{stem}.jsonl"));
    let line = std::fs::read_to_string(&records).unwrap().trim().to_string();
    let id = serde_json::from_str::<serde_json::Value>(&line).unwrap()["game_id"].as_u64().unwrap();
    let shard = run.join("shards").join(format!("{stem}.npz"));
    let samples = std::fs::read(&shard).unwrap();
    std::fs::write(spool.join(format!("{id}.npz")), &samples[..if cut { samples.len() / 2 } else { samples.len() }])
        .unwrap();
    std::fs::write(spool.join(format!("{id}.json")), &line).unwrap();
    std::fs::remove_file(&records).unwrap();
    std::fs::remove_file(&shard).unwrap();
    (shard, records, samples, line)
}

/// A spooled game whose samples are unreadable is not counted as kept: the
/// resume line and the self-play count agree.
#[test]
fn an_unreadable_spooled_game_is_not_counted_as_kept() {
    let f = fixtures();
    let (dir, run) = copy_of(&f.half);
    // Three games of generation 2; the last two go back to the spool, and one of them
    // loses half its samples file.
    selfplay_generation_2(dir.path(), &run, "3");
    back_to_spool(&run, 1, false);
    back_to_spool(&run, 2, true);
    let out = mz(&["pipeline", "--config", s(&f.cfg), "--run-dir", s(&run)]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("is unreadable; it will be played again"), "{t}");
    assert!(t.contains("generation 2: 2 of 4 self-play games kept"), "{t}");
    assert!(t.contains("generation 2: self-play 2 games"), "{t}");
    let recovery = t.find("is unreadable").unwrap();
    assert!(recovery < t.find("resuming").unwrap(), "checked before counting: {t}");
}

/// A run killed after spooling a generation's last game and before merging it
/// into a shard: every game counts as played, so no self-play resumes the
/// spool; the pipeline merges it before training (it was left in the spool
/// and its samples out of training: a chaos test found it).
#[test]
fn the_last_spooled_games_of_a_generation_reach_a_shard() {
    let f = fixtures();
    let (dir, run) = copy_of(&f.half);
    selfplay_generation_2(dir.path(), &run, "4");
    let (shard, records, samples, line) = back_to_spool(&run, 3, false);
    let out = mz(&["pipeline", "--config", s(&f.cfg), "--run-dir", s(&run)]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("generation 2: 1 spooled games went into a shard"), "{t}");
    assert!(!t.contains("generation 2: self-play"), "all four games were played: {t}");
    assert_eq!(std::fs::read_dir(run.join("spool/gen0002-w0")).unwrap().count(), 0, "spool emptied");
    assert_eq!(std::fs::read(&shard).unwrap(), samples, "the game's samples are in its shard");
    assert_eq!(std::fs::read_to_string(&records).unwrap().trim(), line, "and its record in its file");
}

/// A generation trained by `train` before its gate: the pipeline says its
/// gate comes next and does exactly that (no self-play, no training).
#[test]
fn a_generation_trained_by_train_goes_to_its_gate() {
    let f = fixtures();
    let (_dir, run) = copy_of(&f.half);
    let out = mz(&["train", "--config", s(&f.cfg), "--run-dir", s(&run)]);
    assert!(out.status.success(), "{}", text(&out));
    let trained = std::fs::read(run.join("models/gen0002.safetensors")).unwrap();
    let out = mz(&["pipeline", "--config", s(&f.cfg), "--run-dir", s(&run)]);
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(t.contains("generation 2's network is trained; its gate match comes next"), "{t}");
    assert!(t.contains("generation 2: gen0002.safetensors is already trained"), "{t}");
    assert!(!t.contains("generation 2: self-play") && !t.contains("generation 2: training"), "{t}");
    assert!(t.contains("generation 2: gate gen0002.safetensors vs"), "{t}");
    assert!(t.contains("generation 2/2 done: 0 games (its network was trained without them)"), "{t}");
    assert!(run.join("eval/gen0002.json").exists());
    assert_eq!(std::fs::read(run.join("models/gen0002.safetensors")).unwrap(), trained, "not retrained");
    let gen2_games = std::fs::read_dir(run.join("games"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("gen0002-"))
        .count();
    assert_eq!(gen2_games, 0, "no self-play for a trained generation");
}
