//! Fault injection over run directories (`docs/training.md`, "Damaged files"): every file kind of a run
//! directory, damaged every way a disk, a copy or a sync tool can damage it,
//! then every command that reads run directories. Each command must not panic,
//! must either succeed or stop with an error that names the damaged file, must
//! follow the file kind's policy (the table in docs/training.md, "Damaged
//! files"), and must lose nothing completed before the damage: every other
//! game record, shard, checkpoint and evaluation record keeps its bytes, and
//! every readable line of a damaged log is kept (in the file or beside it as
//! `<name>.damaged`).
//!
//! Seeded and reproducible: `DAMAGE_SEED` (default 36) draws the files and the
//! bytes. `report` and `pipeline` (resuming the run with one more generation)
//! follow every damage of every kind, the other commands (`export`, `analyse`,
//! `engine`, `play`, `evaluate`, `train`, `selfplay`) every damage of the kinds they
//! read; `DAMAGE_FULL=1` runs every command after every damage. A case the
//! command must survive (the policy lets it go on, or it is `report`) shares
//! one run of the command with the other such cases of its test and damage,
//! each on its own file (a process start is most of a case's time); every
//! other case has a run of its own. `DAMAGE_ALONE=1` gives every case its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use crate::common::{self, edited, err, micro, mz, mz_stdin, out, Size};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// How a file is damaged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Damage {
    /// Cut at a random byte (a copy stopped half-way, a full disk).
    Truncate,
    /// Random bytes appended (a write of another program).
    AppendGarbage,
    /// A few bytes flipped (bit rot, a bad sector).
    FlipBytes,
    /// A line of invalid UTF-8 and a line that is not JSON inserted at a line
    /// boundary (a sync tool merging versions).
    InsertBadLines,
    /// Emptied.
    Empty,
    /// Deleted.
    Delete,
    /// Unreadable: a directory in its place (a permission bit does not stop
    /// root, which CI may be).
    Unreadable,
}

const DAMAGES: [Damage; 7] = [
    Damage::Truncate,
    Damage::AppendGarbage,
    Damage::FlipBytes,
    Damage::InsertBadLines,
    Damage::Empty,
    Damage::Delete,
    Damage::Unreadable,
];

/// What the run must do with a damaged file of a kind (docs/training.md, "Damaged files").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Policy {
    /// Readers skip the damaged lines or file with a warning naming it; every
    /// command goes on (exit 0).
    Skip,
    /// The pipeline sets the file aside and makes its content again (the
    /// other writers too); readers of history skip it; a command that needs
    /// it and cannot make it stops with an error naming it.
    Remake,
    /// A command that needs the file stops with an error naming it; one that
    /// does not need it goes on.
    Stop,
}

/// A file kind of a run directory: a name, where its files are, its policy.
struct Kind {
    name: &'static str,
    /// Files of the kind, relative to the run root, one drawn per case.
    files: &'static [&'static str],
    policy: Policy,
    /// A line file (JSONL): its readable lines must survive.
    lines: bool,
}

/// A kind of the table: name, files, policy, whether it is a line file.
const fn kind(name: &'static str, files: &'static [&'static str], policy: Policy, lines: bool) -> Kind {
    Kind { name, files, policy, lines }
}

use Policy::{Remake, Skip, Stop};

const KINDS: &[Kind] = &[
    kind("game records", &["games/gen0001-w0-000000.jsonl", "games/gen0002-w0-000001.jsonl"], Skip, true),
    kind("shards", &["shards/gen0001-w0-000000.npz", "shards/gen0002-w0-000001.npz"], Skip, false),
    kind("checkpoints", &["models/gen0001.safetensors", "models/gen0002.safetensors"], Stop, false),
    kind("checkpoint sidecars", &["models/gen0001.json", "models/gen0002.json"], Stop, false),
    kind(
        "partial checkpoints",
        &["models/gen0003-partial-000000012.safetensors", "models/gen0003-partial-000000012.json"],
        Remake,
        false,
    ),
    kind("best", &["best"], Remake, false),
    kind("gate records", &["eval/gen0001.json", "eval/gen0002.json"], Stop, false),
    kind("ladder records", &["eval/ladder-gen0002.json"], Remake, false),
    kind("ladder calibration", &["eval/ladder-calibration.json"], Remake, false),
    kind("final evaluation", &["final-eval.json"], Remake, false),
    kind("evaluation log", &["evals.jsonl"], Remake, false),
    kind("training log", &["train.jsonl"], Skip, true),
    kind("generation summaries", &["generations.jsonl"], Skip, true),
    kind("opening book", &["openings.json"], Remake, false),
    kind("TensorBoard events", &["tensorboard/*"], Skip, false),
    kind("pipeline log", &["pipeline.log"], Skip, false),
    kind(
        "spooled games",
        &["spool/gen0003-w0/3298534883328.json", "spool/gen0003-w0/3298534883328.npz"],
        Remake,
        false,
    ),
    kind("worker claims", &["workers/w0.lock"], Remake, false),
    kind("config", &["config.toml"], Stop, false),
];

/// The config of the run every case starts from: [`Size::Pipeline`] (Martian
/// Chess, seed 3).
fn config() -> String {
    micro(Size::Pipeline, "martian-chess", 3)
}

/// [`config`] with a third generation, for the commands that resume the run.
fn config3() -> String {
    edited(&config(), &[("pipeline.generations", "3")], &[])
}

/// The finished two-generation run every case starts from (made once), with a
/// spooled game, a partial checkpoint and a worker claim of generation 3 added
/// by hand, as a kill leaves them.
fn base() -> &'static Path {
    static BASE: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &BASE
        .get_or_init(|| {
            let tmp = tempfile::tempdir().unwrap();
            let cfg = common::write(&tmp.path().join("micro.toml"), &config());
            let run = tmp.path().join("run");
            let o = mz(&["pipeline", "--config", &cfg, "--run-dir", run.to_str().unwrap()]);
            assert!(o.status.success(), "base run: {}", err(&o));
            // A spooled game of generation 3: a record line of generation 2 under the id of
            // generation 3's first game of worker 0, and a shard's samples.
            let line = std::fs::read_to_string(run.join("games/gen0002-w0-000000.jsonl")).unwrap();
            let mut rec: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
            rec["game_id"] = serde_json::json!(3u64 << 40);
            let spool = run.join("spool/gen0003-w0");
            std::fs::create_dir_all(&spool).unwrap();
            std::fs::write(spool.join("3298534883328.json"), serde_json::to_string(&rec).unwrap()).unwrap();
            std::fs::copy(run.join("shards/gen0002-w0-000000.npz"), spool.join("3298534883328.npz")).unwrap();
            // A partial checkpoint of generation 3 (weights and sidecar, no optimizer state yet).
            for ext in ["safetensors", "json"] {
                std::fs::copy(
                    run.join(format!("models/gen0002.{ext}")),
                    run.join(format!("models/gen0003-partial-000000012.{ext}")),
                )
                .unwrap();
            }
            // A claim left by a killed worker.
            std::fs::create_dir_all(run.join("workers")).unwrap();
            std::fs::write(run.join("workers/w0.lock"), "999999").unwrap();
            for f in ["games/gen0001-w0-000000.jsonl", "eval/ladder-gen0002.json", "eval/ladder-calibration.json"] {
                assert!(run.join(f).exists(), "the base run has no {f}");
            }
            (tmp, run)
        })
        .1
}

/// The file of `kind` drawn for this case (a `*` pattern: the first match).
fn pick(run: &Path, kind: &Kind, rng: &mut StdRng) -> PathBuf {
    let f = kind.files[rng.gen_range(0..kind.files.len())];
    if let Some(dir) = f.strip_suffix("/*") {
        let mut v: Vec<PathBuf> = std::fs::read_dir(run.join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
        v.sort();
        return v.into_iter().next().unwrap_or_else(|| panic!("no file in {dir}"));
    }
    run.join(f)
}

/// Applies `d` to `path`.
fn damage(path: &Path, d: Damage, rng: &mut StdRng) {
    let bytes = std::fs::read(path).unwrap();
    let garbage = |rng: &mut StdRng, n: usize| -> Vec<u8> { (0..n).map(|_| rng.gen()).collect() };
    match d {
        Damage::Truncate => {
            let at = if bytes.len() > 1 { rng.gen_range(1..bytes.len()) } else { 0 };
            std::fs::write(path, &bytes[..at]).unwrap();
        }
        Damage::AppendGarbage => {
            let mut b = bytes;
            let n = rng.gen_range(1..200);
            b.extend(garbage(rng, n));
            std::fs::write(path, b).unwrap();
        }
        Damage::FlipBytes => {
            let mut b = bytes;
            for _ in 0..rng.gen_range(1..=4) {
                if b.is_empty() {
                    break;
                }
                let i = rng.gen_range(0..b.len());
                b[i] ^= rng.gen_range(1..=255u8);
            }
            std::fs::write(path, b).unwrap();
        }
        Damage::InsertBadLines => {
            let starts: Vec<usize> = std::iter::once(0)
                .chain(bytes.iter().enumerate().filter(|(_, &c)| c == b'\n').map(|(i, _)| i + 1))
                .filter(|&i| i <= bytes.len())
                .collect();
            let at = starts[rng.gen_range(0..starts.len())];
            let mut b = bytes[..at].to_vec();
            if at > 0 && b.last() != Some(&b'\n') {
                b.push(b'\n');
            }
            b.extend_from_slice(b"\xff\xfe{\"game_id\": \xc3\x28}\nthis line is not JSON\n");
            b.extend_from_slice(&bytes[at..]);
            std::fs::write(path, b).unwrap();
        }
        Damage::Empty => std::fs::write(path, b"").unwrap(),
        Damage::Delete => std::fs::remove_file(path).unwrap(),
        Damage::Unreadable => {
            std::fs::remove_file(path).unwrap();
            std::fs::create_dir(path).unwrap();
        }
    }
}

/// The commands that read run directories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmd {
    Report,
    Export,
    Analyse,
    Engine,
    Play,
    Evaluate,
    Train,
    Selfplay,
    Pipeline,
}

/// The commands that read files of `kind` (every one of them when `all`):
/// `report` and `pipeline` read every kind; the others what they load.
fn readers(kind: &Kind, all: bool) -> Vec<Cmd> {
    use Cmd::*;
    if all {
        return vec![Report, Pipeline, Export, Analyse, Engine, Play, Evaluate, Train, Selfplay];
    }
    let mut v = vec![Report, Pipeline];
    let model = ["best", "checkpoints", "checkpoint sidecars"].contains(&kind.name);
    if model || ["gate records", "final evaluation"].contains(&kind.name) {
        v.push(Export);
    }
    if model {
        v.extend([Analyse, Engine, Play]);
    }
    if model || ["opening book", "config"].contains(&kind.name) {
        v.push(Evaluate);
    }
    let trains = [
        "shards",
        "checkpoints",
        "checkpoint sidecars",
        "partial checkpoints",
        "training log",
        "worker claims",
        "config",
    ];
    if trains.contains(&kind.name) {
        v.push(Train);
    }
    let plays = ["best", "checkpoints", "checkpoint sidecars", "spooled games", "worker claims", "config"];
    if plays.contains(&kind.name) {
        v.push(Selfplay);
    }
    v
}

fn run_cmd(cmd: Cmd, run: &Path, scratch: &Path) -> Output {
    let r = run.to_str().unwrap();
    // The run's own config file may be the damaged one: the continuing commands are given the
    // user's config (as a user would), extended by one generation.
    let cfg = common::write(&scratch.join("c3.toml"), &config3());
    match cmd {
        Cmd::Report => mz(&["report", "--run-dir", r]),
        Cmd::Export => mz(&["export", "--checkpoint", r, "--out", scratch.join("bundle").to_str().unwrap()]),
        Cmd::Analyse => mz(&["analyse", "--model", r, "--visits", "8", "--top", "1"]),
        Cmd::Engine => mz_stdin(&["engine", "--model", r], "position startpos\ngo visits 8\nquit\n"),
        Cmd::Play => mz_stdin(&["play", "--model", r, "--visits", "8", "--second"], "quit\n"),
        Cmd::Evaluate => {
            let a = format!("mcts:model={r}/models/gen0002.safetensors,visits=2");
            mz(&["evaluate", "--config", &cfg, "--run-dir", r, "--a", &a, "--b", "random", "--games", "2"])
        }
        Cmd::Train => mz(&["train", "--config", &cfg, "--run-dir", r]),
        Cmd::Selfplay => mz(&["selfplay", "--config", &cfg, "--run-dir", r, "--model", "best", "--games", "2"]),
        Cmd::Pipeline => mz(&["pipeline", "--config", &cfg, "--run-dir", r]),
    }
}

/// Files whose bytes no command may change (completed work), relative to the root.
fn protected(run: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    for dir in ["games", "shards", "models", "eval"] {
        let Ok(rd) = std::fs::read_dir(run.join(dir)) else { continue };
        for e in rd.filter_map(|e| e.ok()) {
            let n = e.file_name().to_string_lossy().to_string();
            let done = match dir {
                "models" => n.starts_with("gen000") && !n.contains("partial") && n.starts_with("gen0003").eq(&false),
                _ => n.starts_with("gen000") || n.starts_with("ladder-gen"),
            };
            if done && e.path().is_file() {
                m.insert(format!("{dir}/{n}"), std::fs::read(e.path()).unwrap());
            }
        }
    }
    m
}

/// The readable JSON lines of `path` (none when it is not a readable file).
fn readable_lines(path: &Path) -> Vec<serde_json::Value> {
    let Ok(b) = std::fs::read(path) else { return Vec::new() };
    b.split(|&c| c == b'\n')
        .filter_map(|l| std::str::from_utf8(l).ok())
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.is_object())
        .collect()
}

/// A damage case: a file of `kind` damaged by `d`, drawn (file and bytes) from `seed`.
#[derive(Clone, Copy)]
struct Case<'a> {
    kind: &'a Kind,
    d: Damage,
    seed: u64,
}

/// Whether `cmd` must succeed after any damage of `kind`: its policy lets the
/// command go on, or `cmd` is `report` (written whatever is damaged, but
/// without the run's config).
fn must_succeed(kind: &Kind, cmd: Cmd) -> bool {
    let goes_on = match kind.policy {
        Policy::Skip => true,
        Policy::Remake => cmd == Cmd::Pipeline,
        Policy::Stop => false,
    };
    goes_on || (cmd == Cmd::Report && kind.name != "config")
}

/// `cmd` once on a copy of the base run with every case of `cases` applied
/// (their files are distinct), then each case's assertions. Only cases that
/// `cmd` must survive share a run (where any may stop the command, each has
/// its own, so that the error must name its file): a process start is most
/// of a case's time (BENCHMARKS.md), and a shared run asserts for each case
/// what its own run would, with the others' files damaged too.
fn case(cases: &[Case], cmd: Cmd) {
    assert!(cases.len() == 1 || cases.iter().all(|c| must_succeed(c.kind, cmd)));
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    common::copy_dir(base(), &run);
    let before = protected(&run);
    // Each case: its kind, damage, file (relative, and its name) and its readable lines after the damage.
    let mut damaged: Vec<(&Kind, Damage, String, String, Vec<serde_json::Value>)> = Vec::new();
    for c in cases {
        let mut rng = StdRng::seed_from_u64(c.seed);
        let victim = pick(&run, c.kind, &mut rng);
        let rel = victim.strip_prefix(&run).unwrap().to_string_lossy().to_string();
        let file_name = victim.file_name().unwrap().to_string_lossy().to_string();
        assert!(damaged.iter().all(|x| x.2 != rel), "{rel} drawn by two cases of one run");
        damage(&victim, c.d, &mut rng);
        let lines_before = if c.kind.lines { readable_lines(&victim) } else { Vec::new() };
        damaged.push((c.kind, c.d, rel, file_name, lines_before));
    }
    let o = run_cmd(cmd, &run, tmp.path());
    let (stdout, stderr) = (out(&o), err(&o));
    let all: Vec<String> = damaged.iter().map(|(k, d, rel, _, _)| format!("{} ({rel}) {d:?}", k.name)).collect();
    let status = format!("then {cmd:?}: exit {:?}\n{stderr}", o.status.code());
    for (kind, d, rel, file_name, lines_before) in &damaged {
        let what = match all.len() {
            1 => format!("{} ({rel}) {d:?}, {status}", kind.name),
            _ => format!("{} ({rel}) {d:?} (damaged together: {}), {status}", kind.name, all.join(", ")),
        };
        // Never a panic.
        assert!(o.status.code() != Some(101) && !stderr.contains("panicked"), "{what}");
        // Success, or an error naming the damaged file.
        let named = stderr.contains(file_name.as_str()) || stderr.contains(rel.as_str());
        assert!(o.status.success() || named, "the error does not name {rel}: {what}");
        // The kind's policy.
        if cmd == Cmd::Report && kind.name != "config" {
            assert!(o.status.success(), "report must be written: {what}");
        }
        if must_succeed(kind, cmd) {
            assert!(o.status.success(), "{} must not stop {cmd:?}: {what}", kind.name);
        }
        // What was skipped is said (on one line with the file's name).
        if o.status.success() && kind.policy == Policy::Skip && kind.lines && cmd == Cmd::Report {
            let damaged_lines = *d == Damage::InsertBadLines || *d == Damage::AppendGarbage;
            if damaged_lines {
                assert!(
                    stderr.lines().any(|l| l.contains(file_name.as_str()) && l.contains("skipped")),
                    "report must name what it skipped: {what}\n{stdout}"
                );
            }
        }
        // Every readable line of a damaged log is kept (in the file or set aside beside it).
        if kind.lines {
            let victim = run.join(rel);
            let mut after = readable_lines(&victim);
            after.extend(readable_lines(&victim.with_file_name(format!("{file_name}.damaged"))));
            for l in lines_before {
                assert!(after.contains(l), "a readable line of {rel} was lost: {l}\n{what}");
            }
        }
    }
    // Nothing completed is lost: every protected file but the damaged ones keeps its bytes.
    for (f, bytes) in &before {
        if damaged.iter().any(|(_, _, rel, _, _)| rel == f) {
            continue;
        }
        let now = std::fs::read(run.join(f)).unwrap_or_else(|_| panic!("{f} is gone: {}, {status}", all.join(", ")));
        assert!(now == *bytes, "{f} was changed: {}, {status}", all.join(", "));
    }
}

fn full() -> bool {
    std::env::var("DAMAGE_FULL").is_ok_and(|v| v == "1")
}

fn seed() -> u64 {
    std::env::var("DAMAGE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(36)
}

/// Every damage of the kinds in `names`, each followed by every command that
/// reads the kind (by every command with `DAMAGE_FULL=1`). The cases a command
/// must survive share its run, one run per damage (`DAMAGE_ALONE=1`: each case
/// on its own run, as a check that sharing hides nothing); the others have one
/// each.
fn kinds(names: &[&str]) {
    let alone = std::env::var("DAMAGE_ALONE").is_ok_and(|v| v == "1");
    let cmds = [
        Cmd::Report,
        Cmd::Pipeline,
        Cmd::Export,
        Cmd::Analyse,
        Cmd::Engine,
        Cmd::Play,
        Cmd::Evaluate,
        Cmd::Train,
        Cmd::Selfplay,
    ];
    for cmd in cmds {
        for (i, &d) in DAMAGES.iter().enumerate() {
            let mut shared = Vec::new();
            for (k, kind) in KINDS.iter().enumerate().filter(|(_, k)| names.contains(&k.name)) {
                if !readers(kind, full()).contains(&cmd) {
                    continue;
                }
                let c = Case { kind, d, seed: seed() ^ ((k as u64) << 8 | i as u64) };
                if must_succeed(kind, cmd) && !alone {
                    shared.push(c);
                } else {
                    case(&[c], cmd);
                }
            }
            if !shared.is_empty() {
                case(&shared, cmd);
            }
        }
    }
}

#[test]
fn every_kind_is_listed_once_and_exists_in_the_base_run() {
    let run = base();
    let mut names: Vec<&str> = KINDS.iter().map(|k| k.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), KINDS.len());
    for k in KINDS {
        for f in k.files {
            if let Some(dir) = f.strip_suffix("/*") {
                assert!(std::fs::read_dir(run.join(dir)).unwrap().next().is_some(), "{f}");
            } else {
                assert!(run.join(f).is_file(), "{}: {f} is not in the base run", k.name);
            }
        }
    }
}

#[test]
fn game_records_and_shards() {
    kinds(&["game records", "shards", "spooled games"]);
}

#[test]
fn checkpoints() {
    kinds(&["checkpoints", "checkpoint sidecars", "partial checkpoints", "best"]);
}

#[test]
fn evaluation_records() {
    kinds(&[
        "gate records",
        "ladder records",
        "ladder calibration",
        "final evaluation",
        "evaluation log",
        "opening book",
    ]);
}

#[test]
fn logs_claims_and_config() {
    kinds(&["training log", "generation summaries", "TensorBoard events", "pipeline log", "worker claims", "config"]);
}

/// True when `bytes` is a whole file of `p`'s kind: JSON parses, every
/// complete line of a JSON-lines file parses (an append cut by a full disk may
/// leave its last line without a newline: readers skip it), HTML ends.
fn whole(p: &Path, bytes: &[u8]) -> bool {
    let ext = p.extension().map(|x| x.to_string_lossy().to_string()).unwrap_or_default();
    match ext.as_str() {
        "json" => serde_json::from_slice::<serde_json::Value>(bytes).is_ok(),
        "jsonl" => {
            let complete = &bytes[..bytes.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1)];
            complete
                .split(|&c| c == b'\n')
                .filter(|l| !l.is_empty())
                .all(|l| serde_json::from_slice::<serde_json::Value>(l).is_ok())
        }
        "html" => String::from_utf8_lossy(bytes).trim_end().ends_with("</html>"),
        _ => true,
    }
}

/// A write that fails (the disk is full) leaves the previous file whole and
/// no temporary behind. Simulated with a file-size limit (`ulimit -f`, with
/// SIGXFSZ ignored so that a write past it fails with an error, as on a full
/// disk): `pipeline` continuing the run by a generation writes shards and a
/// checkpoint, `report` its report, all larger than the limit.
#[test]
fn a_failed_write_leaves_the_previous_file_whole() {
    for cmd in ["pipeline", "report"] {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("run");
        common::copy_dir(base(), &run);
        let cfg = common::write(&tmp.path().join("c3.toml"), &config3());
        let all = |dir: &Path| -> BTreeMap<PathBuf, Vec<u8>> {
            let mut m = BTreeMap::new();
            let mut stack = vec![dir.to_path_buf()];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap().filter_map(|e| e.ok()) {
                    if e.path().is_dir() {
                        stack.push(e.path());
                    } else {
                        m.insert(e.path(), std::fs::read(e.path()).unwrap());
                    }
                }
            }
            m
        };
        let before = all(&run);
        let args = match cmd {
            "pipeline" => format!("pipeline --config {cfg} --run-dir {}", run.display()),
            _ => format!("report --run-dir {}", run.display()),
        };
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("trap '' XFSZ; ulimit -f 2; exec {} {args}", env!("CARGO_BIN_EXE_martian-zero")))
            .output()
            .unwrap();
        let stderr = err(&o);
        assert!(!o.status.success(), "{cmd} wrote everything under a 2 KiB file limit:\n{stderr}");
        assert!(o.status.code() != Some(101) && !stderr.contains("panicked"), "{cmd}: {stderr}");
        assert!(stderr.contains("File too large"), "{cmd}: the error names the failed write: {stderr}");
        let after = all(&run);
        // The claim of a worker is the process's own: released at exit.
        for (p, bytes) in before.iter().filter(|(p, _)| !p.starts_with(run.join("workers"))) {
            let now = after.get(p).unwrap_or_else(|| panic!("{cmd}: {} is gone: {stderr}", p.display()));
            // A file rewritten whole may differ (a refreshed report, a log with a line more); none
            // may be left cut.
            if now != bytes {
                assert!(whole(p, now), "{cmd}: {} was left cut: {stderr}", p.display());
            }
        }
        let temps: Vec<&PathBuf> =
            after.keys().filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(".tmp-"))).collect();
        assert!(temps.is_empty(), "{cmd}: temporaries left: {temps:?}");
    }
}

/// The same damage in a run directory on an object store (a `file://` URL):
/// a process pulls the objects it needs into its working copy and reads them
/// there with the same readers, so the policies hold; what differs is that
/// a damaged object stays in the store until its owner writes it again.
/// Each kind a process pulls gets one damage (in turn over the kinds), then
/// `pipeline` continuing the run by a generation and a `selfplay` worker.
#[test]
fn object_store_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let cfg = common::write(&tmp.path().join("micro.toml"), &config());
    let url = |p: &Path| format!("file://{}", p.display());
    let o = mz(&["pipeline", "--config", &cfg, "--run-dir", &url(&store)]);
    assert!(o.status.success(), "base run on the store: {}", err(&o));
    let c3 = common::write(&tmp.path().join("c3.toml"), &config3());
    let names = [
        "game records",
        "shards",
        "checkpoints",
        "checkpoint sidecars",
        "best",
        "gate records",
        "ladder records",
        "final evaluation",
        "training log",
        "generation summaries",
        "opening book",
        "config",
    ];
    for (i, name) in names.iter().enumerate() {
        let kind = KINDS.iter().find(|k| k.name == *name).unwrap();
        // No directories in an object store: the first six damages.
        let d = DAMAGES[(i + seed() as usize) % 6];
        let mut rng = StdRng::seed_from_u64(seed() ^ (0x5707e << 8 | i as u64));
        let case_dir = tmp.path().join(format!("case{i}"));
        let run = case_dir.join("store");
        common::copy_dir(&store, &run);
        let victim = pick(&run, kind, &mut rng);
        let rel = victim.strip_prefix(&run).unwrap().to_string_lossy().to_string();
        let file_name = victim.file_name().unwrap().to_string_lossy().to_string();
        let before = protected(&run);
        damage(&victim, d, &mut rng);
        for args in [
            vec!["pipeline", "--config", &c3, "--run-dir"],
            vec![
                "selfplay",
                "--config",
                &c3,
                "--worker-index",
                "1",
                "--games",
                "2",
                "--poll-seconds",
                "1",
                "--run-dir",
            ],
        ] {
            // A worker started on a store without `config.toml` waits for the trainer to create
            // the run (workers may start first, docs/distributed.md): nothing to read yet.
            if args[0] == "selfplay" && *name == "config" {
                continue;
            }
            let u = url(&run);
            let mut a = args.clone();
            a.push(&u);
            let o = mz(&a);
            let stderr = err(&o);
            let what = format!("store: {name} ({rel}) {d:?}, then {}: exit {:?}\n{stderr}", a[0], o.status.code());
            assert!(o.status.code() != Some(101) && !stderr.contains("panicked"), "{what}");
            let named = stderr.contains(&file_name) || stderr.contains(&rel);
            assert!(o.status.success() || named, "the error does not name {rel}: {what}");
            if a[0] == "pipeline" && kind.policy != Policy::Stop {
                assert!(o.status.success(), "{name} must not stop the pipeline: {what}");
            }
            for (f, bytes) in &before {
                if *f != rel {
                    let now = std::fs::read(run.join(f)).unwrap_or_else(|_| panic!("{f} is gone: {what}"));
                    assert!(now == *bytes, "{f} was changed: {what}");
                }
            }
        }
    }
}

/// A run file replaced by a link to `/dev/zero` (it never ends) is refused
/// before it is read: every command ends (under a 60 s `timeout`, never hit
/// when it works), without a panic, by going on or by an error naming the
/// file. Reading such a file whole hung and grew memory without limit before.
#[test]
fn links_to_endless_devices_are_refused_before_reading() {
    let cases: [(&str, &[Cmd]); 6] = [
        ("best", &[Cmd::Export, Cmd::Analyse, Cmd::Pipeline]),
        ("eval/gen0002.json", &[Cmd::Report, Cmd::Export]),
        ("models/gen0002.json", &[Cmd::Report, Cmd::Export, Cmd::Analyse]),
        ("generations.jsonl", &[Cmd::Report, Cmd::Pipeline]),
        ("games/gen0001-w0-000000.jsonl", &[Cmd::Report]),
        ("config.toml", &[Cmd::Report, Cmd::Pipeline]),
    ];
    for (rel, cmds) in cases {
        for &cmd in cmds {
            let tmp = tempfile::tempdir().unwrap();
            let run = tmp.path().join("run");
            common::copy_dir(base(), &run);
            std::fs::remove_file(run.join(rel)).unwrap();
            std::os::unix::fs::symlink("/dev/zero", run.join(rel)).unwrap();
            let t0 = std::time::Instant::now();
            let o = run_cmd(cmd, &run, tmp.path());
            let stderr = err(&o);
            let what = format!(
                "{rel} -> /dev/zero, then {cmd:?}: exit {:?} after {:?}\n{stderr}",
                o.status.code(),
                t0.elapsed()
            );
            assert!(t0.elapsed() < std::time::Duration::from_secs(60), "{what}");
            assert!(o.status.code() != Some(101) && !stderr.contains("panicked"), "{what}");
            let name = Path::new(rel).file_name().unwrap().to_string_lossy().to_string();
            assert!(o.status.success() || stderr.contains(&name), "{what}");
        }
    }
}
