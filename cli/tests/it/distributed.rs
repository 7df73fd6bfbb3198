//! Run directories on object storage (`docs/distributed.md`),
//! against a real S3-compatible server on 127.0.0.1 (`moto` in server mode,
//! installed into the project's venv by `scripts/setup`) and against
//! `file://` URLs:
//!
//! * a short all-in-one pipeline on each back end, the two runs equal;
//! * one trainer and three self-play workers as separate processes, a second
//!   trainer started at once (it must refuse), one worker killed with SIGKILL
//!   in the middle of a shard and restarted with the same index: the run
//!   finishes, no shard is lost, repeated or partial, every game id is
//!   unique and each worker's ids have no gap, `best` only moves forward;
//! * the Kubernetes manifests and Slurm scripts of `deploy/`, parsed, with the
//!   fields that tie them to the binary checked against its `--help`, and the
//!   manifests validated against the Kubernetes schemas (`kubernetes-validate`).
//!
//! Without moto the S3 tests fail and say how to install it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use object_store::{ObjectStore, ObjectStoreExt};

use crate::common::{edited, micro, Size};

/// [`Size::Pipeline`] with seed 5, one thread, one torch thread, two games in flight,
/// four training steps (a checkpoint every two) and no ladder.
fn config() -> String {
    edited(
        &micro(Size::Pipeline, "martian-chess", 5),
        &[
            ("threads", "1"),
            ("torch_threads", "1"),
            ("selfplay.games_in_flight", "2"),
            ("train.steps_per_generation", "4"),
            ("train.checkpoint_every", "2"),
            ("evaluate.ladder_every", "0"),
        ],
        &["evaluate.ladder", "evaluate.ladder_pairs"],
    )
}

const BUCKET: &str = "runs";

/// The venv's Python (scripts/env.sh's `MARTIAN_ZERO_VENV`).
fn python() -> PathBuf {
    let venv = std::env::var_os("MARTIAN_ZERO_VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/martian-zero/venv"));
    venv.join("bin/python")
}

/// A moto S3 server on a free port of 127.0.0.1, stopped on drop.
struct Moto {
    child: Child,
    port: u16,
}

impl Moto {
    fn start() -> Moto {
        let py = python();
        let ok = Command::new(&py)
            .args(["-c", "import moto.server, flask"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        assert!(
            ok,
            "moto (an S3-compatible server) is not installed in {}: run scripts/setup, which installs it \
             (or `{} -m pip install \"moto[server]\"`)",
            py.display(),
            py.display()
        );
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(&py)
            .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start moto");
        let m = Moto { child, port };
        let t0 = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(t0.elapsed() < Duration::from_secs(30), "moto did not listen on port {port}");
            std::thread::sleep(Duration::from_millis(100));
        }
        // The bucket (moto takes unsigned requests).
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(s, "PUT /{BUCKET} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut resp = String::new();
        s.read_to_string(&mut resp).unwrap();
        assert!(resp.starts_with("HTTP/1.1 200") || resp.starts_with("HTTP/1.0 200"), "create bucket: {resp}");
        m
    }

    fn env(&self) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", self.port)),
            ("AWS_ALLOW_HTTP", "true".into()),
            ("AWS_ACCESS_KEY_ID", "test".into()),
            ("AWS_SECRET_ACCESS_KEY", "test".into()),
            ("AWS_REGION", "us-east-1".into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A back end: the run's URL, the environment its processes get, and a way to read it back.
struct Backend {
    url: String,
    env: Vec<(String, String)>,
    _moto: Option<Moto>,
    _dir: tempfile::TempDir,
}

impl Backend {
    fn s3(name: &str) -> Backend {
        let moto = Moto::start();
        let dir = tempfile::tempdir().unwrap();
        let mut env = moto.env();
        env.push(("MARTIAN_ZERO_CACHE".into(), dir.path().join("cache").display().to_string()));
        Backend { url: format!("s3://{BUCKET}/{name}"), env, _moto: Some(moto), _dir: dir }
    }

    fn file(name: &str) -> Backend {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("MARTIAN_ZERO_CACHE".into(), dir.path().join("cache").display().to_string())];
        Backend {
            url: format!("file://{}", dir.path().join("store").join(name).display()),
            env,
            _moto: None,
            _dir: dir,
        }
    }

    /// A run directory on a plain path (a shared file system, as Slurm workers use it).
    fn path(name: &str) -> Backend {
        let dir = tempfile::tempdir().unwrap();
        Backend { url: dir.path().join(name).display().to_string(), env: Vec::new(), _moto: None, _dir: dir }
    }

    fn store(&self) -> (Box<dyn ObjectStore>, object_store::path::Path) {
        if let Some(p) =
            self.url.strip_prefix("file://").or_else(|| self.url.strip_prefix('/').map(|_| self.url.as_str()))
        {
            std::fs::create_dir_all(p).unwrap();
            return (Box::new(object_store::local::LocalFileSystem::new_with_prefix(p).unwrap()), "".into());
        }
        let get = |k: &str| self.env.iter().find(|(n, _)| n == k).unwrap().1.clone();
        let s3 = object_store::aws::AmazonS3Builder::new()
            .with_bucket_name(BUCKET)
            .with_endpoint(get("AWS_ENDPOINT_URL"))
            .with_allow_http(true)
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .with_region("us-east-1")
            .build()
            .unwrap();
        let prefix = self.url.strip_prefix(&format!("s3://{BUCKET}/")).unwrap();
        (Box::new(s3), prefix.into())
    }

    /// Every object of the run, by name relative to the run.
    fn objects(&self) -> BTreeMap<String, Vec<u8>> {
        let (store, prefix) = self.store();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let metas: Vec<object_store::ObjectMeta> = store.list(Some(&prefix)).try_collect().await.unwrap();
            let mut out = BTreeMap::new();
            for m in metas {
                // Listed, then deleted (a lease, a probe, a replaced partial checkpoint).
                let b = match store.get(&m.location).await {
                    Ok(r) => r.bytes().await.unwrap(),
                    Err(object_store::Error::NotFound { .. }) => continue,
                    Err(e) => panic!("{}: {e}", m.location),
                };
                let name = m.location.as_ref().strip_prefix(prefix.as_ref()).unwrap().trim_start_matches('/');
                out.insert(name.to_string(), b.to_vec());
            }
            out
        })
    }

    fn best(&self) -> Option<String> {
        let (store, prefix) = self.store();
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let p = object_store::path::Path::from(format!("{prefix}/best").trim_start_matches('/'));
        rt.block_on(async {
            let r = store.get(&p).await.ok()?;
            Some(String::from_utf8(r.bytes().await.ok()?.to_vec()).unwrap().trim().to_string())
        })
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_martian-zero"));
        c.args(args);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c.env_remove("JOB_COMPLETION_INDEX").env_remove("SLURM_ARRAY_TASK_ID");
        c
    }
}

fn config_file(dir: &Path) -> String {
    let p = dir.join("dist.toml");
    std::fs::write(&p, config()).unwrap();
    p.display().to_string()
}

fn jsonl(bytes: &[u8]) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(bytes).lines().map(|l| serde_json::from_str(l).expect("a record line parses")).collect()
}

/// Checks the self-play output of a finished run in the store: every shard
/// has its record file and reads whole; every game id appears once; each
/// worker's games of a generation are `k = 0..n` with no gap, except that
/// worker `killed` may miss up to `abandoned` ids below its highest (games in
/// flight when it was killed, in a generation the run has left when it is
/// back); returns the game ids per worker prefix (`gen0001-wi1`).
fn check_games_with(objects: &BTreeMap<String, Vec<u8>>, killed: &str, abandoned: usize) -> BTreeMap<String, Vec<u64>> {
    let mut ids = BTreeSet::new();
    let mut per: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (name, bytes) in objects {
        if let Some(stem) = name.strip_prefix("games/").and_then(|n| n.strip_suffix(".jsonl")) {
            let recs = jsonl(bytes);
            let rec_ids: BTreeSet<u64> = recs.iter().map(|r| r["game_id"].as_u64().unwrap()).collect();
            for id in &rec_ids {
                assert!(ids.insert(*id), "game id {id} recorded twice ({name})");
            }
            let prefix = stem.rsplit_once('-').unwrap().0.to_string();
            per.entry(prefix).or_default().extend(rec_ids.iter().copied());
            let with_samples: BTreeSet<u64> = recs
                .iter()
                .filter(|r| r["samples"].as_u64().unwrap() > 0)
                .map(|r| r["game_id"].as_u64().unwrap())
                .collect();
            let shard = format!("shards/{stem}.npz");
            if with_samples.is_empty() {
                continue;
            }
            let data = objects.get(&shard).unwrap_or_else(|| panic!("{name} has no shard {shard}"));
            let mut npz = ndarray_npy::NpzReader::new(std::io::Cursor::new(data.clone()))
                .unwrap_or_else(|e| panic!("{shard} does not read whole: {e}"));
            let rows: ndarray::Array1<i64> = npz.by_name("game_id.npy").unwrap();
            let in_shard: BTreeSet<u64> = rows.iter().map(|&x| x as u64).collect();
            assert_eq!(in_shard, with_samples, "{shard} holds the samples of exactly its record file's games");
        }
        if let Some(stem) = name.strip_prefix("shards/").and_then(|n| n.strip_suffix(".npz")) {
            assert!(objects.contains_key(&format!("games/{stem}.jsonl")), "{name} has no record file");
        }
    }
    for (prefix, v) in per.iter_mut() {
        v.sort_unstable();
        let ks: Vec<u64> = v.iter().map(|id| id & ((1 << 24) - 1)).collect();
        let top = ks.last().map_or(0, |k| k + 1);
        let missing = top as usize - ks.len();
        if prefix.ends_with(&format!("-w{killed}")) {
            assert!(missing <= abandoned, "{prefix}: {missing} game ids missing below the highest: {ks:?}");
        } else {
            assert_eq!(ks, (0..ks.len() as u64).collect::<Vec<_>>(), "{prefix}: game ids with a gap or repeated");
        }
    }
    per
}

/// [`check_games_with`] where no id may be missing.
fn check_games(objects: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u64>> {
    check_games_with(objects, "", 0)
}

/// Shard and record sequence numbers of each worker prefix are `0..n`.
fn check_sequences(objects: &BTreeMap<String, Vec<u8>>) {
    let mut seqs: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for name in objects.keys() {
        if let Some(stem) = name.strip_prefix("games/").and_then(|n| n.strip_suffix(".jsonl")) {
            let (prefix, seq) = stem.rsplit_once('-').unwrap();
            seqs.entry(prefix.to_string()).or_default().push(seq.parse().unwrap());
        }
    }
    for (p, s) in seqs {
        assert_eq!(s, (0..s.len() as u32).collect::<Vec<_>>(), "{p}: record files numbered with a gap");
    }
}

fn output(mut c: Command) -> (bool, String, String) {
    let o = c.output().expect("run martian-zero");
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into(), String::from_utf8_lossy(&o.stderr).into())
}

/// The all-in-one pipeline on a back end; returns the objects of the finished run.
fn all_in_one(b: &Backend) -> BTreeMap<String, Vec<u8>> {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_file(dir.path());
    let (ok, out, err) = output(b.cmd(&["pipeline", "--config", &cfg, "--run-dir", &b.url, "--stop-after", "1"]));
    assert!(ok, "{err}");
    assert_eq!(b.best().as_deref(), Some("gen0001.safetensors"), "{out}{err}");
    // The same command continues from the store (a new working copy).
    let (ok, out, err) = output(b.cmd(&["pipeline", "--config", &cfg, "--run-dir", &b.url]));
    assert!(ok, "{err}");
    assert!(err.contains("resuming") && err.contains("1 of 2 generations finished"), "{err}");
    assert!(out.contains("final evaluation"), "{out}");
    // The final lines name the run's URL, not the process's working copy (removed at the end).
    assert!(out.contains(&format!("final evaluation ({}/final-eval.json)", b.url)), "{out}");
    assert!(err.contains(&format!("report: {}/report.html", b.url)), "{err}");
    let cache = b.env.iter().find(|(k, _)| k == "MARTIAN_ZERO_CACHE").unwrap().1.clone();
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 0, "working copies are removed at the end");
    let objects = b.objects();
    for want in ["config.toml", "best", "models/gen0002.safetensors", "models/gen0002.json", "eval/gen0002.json"] {
        assert!(objects.contains_key(want), "{want} missing in {}: {:?}", b.url, objects.keys());
    }
    for want in ["final-eval.json", "evals.jsonl", "train.jsonl", "pipeline.log", "report.md"] {
        assert!(objects.contains_key(want), "{want} missing in {}", b.url);
    }
    assert!(!objects.keys().any(|k| k.contains("partial") || k.ends_with(".lease") || k.starts_with("spool/")));
    assert_eq!(String::from_utf8_lossy(&objects["best"]).trim(), "gen0002.safetensors");
    let per = check_games(&objects);
    check_sequences(&objects);
    assert_eq!(per.keys().collect::<Vec<_>>(), ["gen0001-w0", "gen0002-w0"]);
    assert!(per.values().all(|v| v.len() == 4), "{per:?}");
    objects
}

#[test]
fn all_in_one_pipeline_on_s3_and_file_urls_gives_the_same_run() {
    let s3 = all_in_one(&Backend::s3("all-in-one"));
    let file = all_in_one(&Backend::file("all-in-one"));
    // Seeded self-play and CPU training: the two back ends hold the same run.
    for name in ["games/gen0001-w0-000000.jsonl", "games/gen0002-w0-000001.jsonl", "best", "models/gen0002.safetensors"]
    {
        assert_eq!(s3[name], file[name], "{name} differs between s3:// and file://");
    }
}

/// Waits for `c` up to `limit`, killing it after.
fn wait(c: &mut Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(s) = c.try_wait().unwrap() {
            return s;
        }
        if t0.elapsed() > limit {
            let _ = c.kill();
            panic!("{what} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn stderr_of(c: &mut Child) -> String {
    let mut s = String::new();
    if let Some(mut e) = c.stderr.take() {
        let _ = e.read_to_string(&mut s);
    }
    s
}

fn workers_and_trainer(b: &Backend) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_file(dir.path());
    // More games per generation than one shard of each worker, so that worker 1 is still
    // playing when it is killed.
    // Four generations: worker 1's first shard (of generation 1, 2 or 3) is never its last, so it
    // is still playing when it is killed (with two, a worker that started late could play only the
    // last generation's games and be done before the kill; with three, CI's load once delayed the
    // test's look at the store until worker 1 had played all three).
    let text = config()
        .replace("games_per_generation = 4", "games_per_generation = 24")
        .replace("generations = 2", "generations = 4");
    std::fs::write(&cfg, text).unwrap();
    let fast = ["--poll-seconds", "0.3", "--lease-seconds", "20"];
    let spawn = |args: &[&str], index: Option<&str>| -> Child {
        let mut c = b.cmd(args);
        c.args(fast).stdout(Stdio::null()).stderr(Stdio::piped());
        if let Some(i) = index {
            c.env("JOB_COMPLETION_INDEX", i);
        }
        c.spawn().unwrap()
    };
    let trainer_args = ["pipeline", "--role", "trainer", "--config", &cfg, "--run-dir", &b.url];
    let mut trainer = spawn(&trainer_args, None);
    // Workers first wait for the trainer to create the run; one by the environment's index.
    let mut w0 = spawn(&["selfplay", "--config", &cfg, "--run-dir", &b.url, "--worker-index", "0"], None);
    let mut w1 = spawn(&["selfplay", "--config", &cfg, "--run-dir", &b.url, "--worker-index", "1"], None);
    let mut w2 = spawn(&["pipeline", "--role", "selfplay", "--config", &cfg, "--run-dir", &b.url], Some("2"));
    // A second trainer while the first runs: it refuses (or loses the claim) and says so.
    let t0 = Instant::now();
    let claim = if b.url.contains("://") { "trainer.lease" } else { "workers/wtrainer.lock" };
    while !b.objects().contains_key(claim) {
        assert!(t0.elapsed() < Duration::from_secs(60), "the trainer claimed no lease");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (ok, _, err) = output({
        let mut c = b.cmd(&trainer_args);
        c.args(fast);
        c
    });
    assert!(!ok, "a second trainer must not run: {err}");
    assert!(err.contains("already running") || err.contains("at the same moment"), "{err}");
    // Kill worker 1 with SIGKILL once its first shard is in the store (it is then playing its next one).
    let t0 = Instant::now();
    let mut bests = Vec::new();
    loop {
        assert!(t0.elapsed() < Duration::from_secs(120), "worker 1 wrote no shard");
        if b.objects().keys().any(|k| {
            ["games/gen0001-wi1-", "games/gen0002-wi1-", "games/gen0003-wi1-"].iter().any(|p| k.starts_with(p))
        }) {
            break;
        }
        bests.extend(b.best());
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_millis(100));
    if w1.try_wait().unwrap().is_some() {
        panic!("worker 1 is still playing when it is killed: {}", stderr_of(&mut w1));
    }
    w1.kill().unwrap();
    w1.wait().unwrap();
    let mut w1 = spawn(&["selfplay", "--config", &cfg, "--run-dir", &b.url, "--worker-index", "1"], None);
    // The run finishes; the workers stop by themselves once the last generation is trained.
    let t1 = Instant::now();
    while trainer.try_wait().unwrap().is_none() {
        assert!(t1.elapsed() < Duration::from_secs(300), "the trainer did not finish");
        bests.extend(b.best());
        std::thread::sleep(Duration::from_millis(200));
    }
    let terr = stderr_of(&mut trainer);
    assert!(trainer.wait().unwrap().success(), "trainer: {terr}");
    assert!(terr.contains("waiting for the self-play workers"), "{terr}");
    for (w, name) in [(&mut w0, "worker 0"), (&mut w1, "worker 1 (restarted)"), (&mut w2, "worker 2")] {
        let s = wait(w, Duration::from_secs(120), name);
        let e = stderr_of(w);
        assert!(s.success(), "{name}: {e}");
        assert!(e.contains("the run is done"), "{name}: {e}");
    }
    bests.extend(b.best());
    // `best` only moved forward.
    let gens: Vec<u32> = bests.iter().map(|n| n[3..7].parse().unwrap()).collect();
    assert!(gens.windows(2).all(|w| w[0] <= w[1]), "best moved back: {bests:?}");
    assert_eq!(bests.last().map(String::as_str), Some("gen0004.safetensors"));
    let objects = b.objects();
    // On a URL a killed worker's unfinished shard is lost whole, so its ids have no gap. On a
    // path its spool survives: games finished out of order are kept, and the games in flight
    // (selfplay.games_in_flight = 2) are not played again when the run has moved on.
    let abandoned = if b.url.contains("://") { 0 } else { 2 };
    let per = check_games_with(&objects, "i1", abandoned);
    check_sequences(&objects);
    assert!(per.keys().any(|p| p.ends_with("-wi1")), "{per:?}");
    for g in 1..=4 {
        let n: usize = per.iter().filter(|(p, _)| p.starts_with(&format!("gen{g:04}-"))).map(|(_, v)| v.len()).sum();
        assert!(n >= 24, "generation {g}: {n} games, fewer than games_per_generation");
    }
    assert!(!per.keys().any(|p| p.ends_with("-w0")), "the trainer plays no games: {per:?}");
    assert!(objects.contains_key("final-eval.json") && objects.contains_key("eval/gen0004.json"));
    assert!(
        !objects.keys().any(|k| k.ends_with(".lease") || k.ends_with(".lock")),
        "claims released: {:?}",
        objects.keys()
    );
    assert!(!objects.keys().any(|k| k.starts_with("spool/")), "every spooled game is in a shard");
}

#[test]
fn trainer_and_three_workers_on_s3() {
    workers_and_trainer(&Backend::s3("cluster"));
}

#[test]
fn trainer_and_three_workers_on_file_urls() {
    workers_and_trainer(&Backend::file("cluster"));
}

#[test]
fn trainer_and_three_workers_on_a_shared_path() {
    workers_and_trainer(&Backend::path("cluster"));
}

/// Sends `sig` (`TERM`, `INT`, `KILL`) to `c`.
fn signal(c: &Child, sig: &str) {
    assert!(Command::new("kill").args([&format!("-{sig}"), &c.id().to_string()]).status().unwrap().success());
}

/// Waits until `path` exists (or, with `gone`, no longer exists).
fn wait_for(path: &Path, gone: bool, what: &str) {
    let t0 = Instant::now();
    while path.exists() == gone {
        assert!(t0.elapsed() < Duration::from_secs(60), "{what}: {}", path.display());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The working copies under a cache directory.
fn copies(cache: &Path) -> Vec<String> {
    std::fs::read_dir(cache)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().to_string()).collect())
        .unwrap_or_default()
}

/// Waits until the process `c` has its working copy under `cache`.
fn has_copy(cache: &Path, c: &Child) {
    let t0 = Instant::now();
    let tag = format!("-{}-", c.id());
    while !copies(cache).iter().any(|n| n.contains(&tag)) {
        assert!(t0.elapsed() < Duration::from_secs(60), "no working copy of pid {}: {:?}", c.id(), copies(cache));
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A run directory named as a path and as a `file://` URL is one run: one
/// trainer, one worker per index, whichever form each process is given; an
/// interrupted process (SIGTERM, Ctrl-C) releases its claims and removes its
/// working copy; a SIGKILLed one's copy is removed by the next process.
#[test]
fn a_run_named_as_a_path_and_as_a_file_url_has_one_claim_per_role() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_file(dir.path());
    // A run that does not end while the test looks at it.
    std::fs::write(&cfg, config().replace("games_per_generation = 4", "games_per_generation = 100000")).unwrap();
    let run = dir.path().join("run");
    let (path, url) = (run.display().to_string(), format!("file://{}", run.display()));
    let cache = dir.path().join("cache");
    let fast = ["--poll-seconds", "0.3", "--lease-seconds", "30"];
    let cmd = |args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_martian-zero"));
        c.args(args).args(fast).env("MARTIAN_ZERO_CACHE", &cache);
        c.env_remove("JOB_COMPLETION_INDEX").env_remove("SLURM_ARRAY_TASK_ID");
        c
    };
    let spawn = |args: &[&str]| cmd(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let refused = |args: &[&str], what: &str| {
        let (ok, _, err) = output(cmd(args));
        assert!(!ok && err.contains("already running"), "{what} must be refused: {err}");
        assert!(!err.contains("panicked"), "{err}");
    };
    let lock = |name: &str| run.join("workers").join(name);

    // A trainer on the path: a trainer or an all-in-one pipeline on the URL, or on the path, is refused.
    let mut t = spawn(&["pipeline", "--role", "trainer", "--config", &cfg, "--run-dir", &path]);
    wait_for(&lock("wtrainer.lock"), false, "the path trainer's claim");
    wait_for(&run.join("best"), false, "the run created");
    refused(
        &["pipeline", "--role", "trainer", "--config", &cfg, "--run-dir", &url],
        "a URL trainer beside a path trainer",
    );
    refused(&["pipeline", "--config", &cfg, "--run-dir", &url], "a URL all-in-one pipeline beside a path trainer");
    refused(&["pipeline", "--config", &cfg, "--run-dir", &path], "an all-in-one pipeline beside a trainer");
    // A refused process writes nothing into the run: not even with another config.
    let before = std::fs::read_to_string(run.join("config.toml")).unwrap();
    let other = dir.path().join("other.toml");
    std::fs::write(&other, std::fs::read_to_string(&cfg).unwrap().replace("generations = 2", "generations = 7"))
        .unwrap();
    let other = other.display().to_string();
    refused(&["pipeline", "--config", &other, "--run-dir", &path], "a pipeline with another config");
    let (ok, _, err) = output({
        let mut c = Command::new(env!("CARGO_BIN_EXE_martian-zero"));
        c.args(["train", "--config", &other, "--run-dir", &path]);
        c
    });
    assert!(
        !ok && err.contains("the trainer of") && err.contains("already running"),
        "`train` beside a trainer: {err}"
    );
    assert_eq!(std::fs::read_to_string(run.join("config.toml")).unwrap(), before, "config.toml untouched");
    let (ok, _, err) =
        output(cmd(&["pipeline", "--role", "trainer", "--worker-index", "3", "--config", &cfg, "--run-dir", &path]));
    assert!(!ok && err.contains("--worker-index is for --role selfplay"), "{err}");
    signal(&t, "TERM");
    let status = wait(&mut t, Duration::from_secs(30), "the interrupted path trainer");
    let err = stderr_of(&mut t);
    assert!(!status.success() && err.contains("interrupted: "), "{err}");
    assert!(!lock("wtrainer.lock").exists(), "released on SIGTERM: {err}");

    // A trainer on the URL holds the path's claim too; a path trainer is refused.
    let mut t = spawn(&["pipeline", "--role", "trainer", "--config", &cfg, "--run-dir", &url]);
    wait_for(&run.join("trainer.lease"), false, "the URL trainer's lease");
    assert!(lock("wtrainer.lock").exists(), "the URL trainer holds the path's claim");
    refused(
        &["pipeline", "--role", "trainer", "--config", &cfg, "--run-dir", &path],
        "a path trainer beside a URL trainer",
    );

    // Worker index 1 on the URL: the same index on the path is refused.
    let mut w = spawn(&["selfplay", "--config", &cfg, "--run-dir", &url, "--worker-index", "1"]);
    has_copy(&cache, &w);
    assert!(lock("wi1.lock").exists() && lock("wi1.lease").exists(), "the URL worker holds the path's claim");
    refused(
        &["selfplay", "--config", &cfg, "--run-dir", &path, "--worker-index", "1"],
        "a path worker with a taken index",
    );
    // Killed without a chance to clean up: its working copy stays, and its successor removes it.
    signal(&w, "KILL");
    w.wait().unwrap();
    assert_eq!(copies(&cache).len(), 2, "the trainer's and the killed worker's copies: {:?}", copies(&cache));
    let mut w = spawn(&["selfplay", "--config", &cfg, "--run-dir", &url, "--worker-index", "1"]);
    has_copy(&cache, &w);
    assert_eq!(copies(&cache).len(), 2, "the killed worker's copy is removed: {:?}", copies(&cache));
    let me = w.id().to_string();
    assert_eq!(std::fs::read_to_string(lock("wi1.lock")).unwrap().trim(), me, "the claim is taken over");
    // Interrupted: claims released, working copies removed, the URL named.
    std::thread::sleep(Duration::from_millis(500));
    signal(&w, "TERM");
    let status = wait(&mut w, Duration::from_secs(30), "the interrupted worker");
    let err = stderr_of(&mut w);
    assert!(!status.success(), "{err}");
    assert!(err.contains("removed 1 working copies of killed processes"), "{err}");
    assert!(
        err.contains(&format!("interrupted: self-play worker i1 stopped; its finished shards are in {url}")),
        "{err}"
    );
    assert!(!lock("wi1.lock").exists() && !lock("wi1.lease").exists(), "the worker's claims are released: {err}");
    signal(&t, "INT");
    let status = wait(&mut t, Duration::from_secs(30), "the interrupted URL trainer");
    let err = stderr_of(&mut t);
    assert!(!status.success(), "{err}");
    assert!(err.contains(&format!("everything pushed to {url} is kept")), "{err}");
    let log = std::fs::read_to_string(run.join("pipeline.log")).unwrap_or_default();
    assert!(log.lines().last().is_some_and(|l| l.contains("interrupted: ")), "the store's pipeline.log: {log}");
    assert!(!lock("wtrainer.lock").exists() && !run.join("trainer.lease").exists(), "{err}");
    assert!(
        copies(&cache).is_empty(),
        "working copies removed: {:?} (trainer {}, worker {})",
        copies(&cache),
        t.id(),
        w.id()
    );
}

#[test]
fn bad_urls_and_unreachable_stores_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config_file(dir.path());
    let b = Backend::file("x");
    // A URL without its `//` is not taken for a relative path; local-only commands refuse URLs.
    for (sub, bad) in [("pipeline", "file:runs/x"), ("selfplay", "s3:bucket/run")] {
        let (ok, _, err) = output(b.cmd(&[sub, "--config", &cfg, "--run-dir", bad]));
        assert!(!ok && err.contains("has no `//`"), "{sub} {bad}: {err}");
        assert!(!Path::new(bad).exists());
    }
    let (ok, _, err) = output(b.cmd(&["report", "--run-dir", "s3://runs/x"]));
    assert!(!ok && err.contains("local run directory only"), "{err}");
    let (ok, _, err) =
        output(b.cmd(&["selfplay", "--config", &cfg, "--model", "uniform", "--games", "1", "--out", "s3://runs/z"]));
    assert!(!ok && err.contains("--out takes a local directory"), "{err}");
    // Flags are checked before anything is opened or created.
    let fresh = dir.path().join("never");
    let fresh_url = format!("file://{}", fresh.display());
    for (flag, value) in [("--lease-seconds", "inf"), ("--poll-seconds", "0"), ("--worker-index", "-1")] {
        let (ok, _, err) = output(b.cmd(&["selfplay", "--config", &cfg, "--run-dir", &fresh_url, flag, value]));
        assert!(!ok && !err.contains("panicked") && err.contains(value), "{flag} {value}: {err}");
        assert!(!fresh.exists(), "{flag} {value} created the run directory");
    }
    let (_, _, err) = output(b.cmd(&["selfplay", "--config", &cfg, "--run-dir", &fresh_url, "--worker-index", "-1"]));
    assert!(err.contains("0..=32767"), "{err}");
    // A malformed endpoint is named, not a panic in the S3 client.
    for endpoint in ["127.0.0.1:5123", "http://127.0.0.1:notaport", "http://127.0.0.1:5123 ", ""] {
        let (ok, _, err) = output({
            let mut c = b.cmd(&["selfplay", "--config", &cfg, "--run-dir", "S3://runs/x", "--worker-index", "0"]);
            c.env("AWS_ENDPOINT_URL", endpoint).env("AWS_ACCESS_KEY_ID", "k").env("AWS_SECRET_ACCESS_KEY", "s");
            c.env("AWS_REGION", "us-east-1");
            c
        });
        assert!(!ok && !err.contains("panicked"), "{endpoint:?}: {err}");
        assert!(err.contains("AWS_ENDPOINT_URL") && err.contains("not an endpoint URL"), "{endpoint:?}: {err}");
    }
    // An explicit --worker wins over an index in the environment, which is then not read.
    let (ok, _, err) = output({
        let mut c = b.cmd(&["selfplay", "--config", &cfg, "--model", "uniform", "--games", "1", "--worker", "named"]);
        c.arg("--out").arg(dir.path().join("out")).env("JOB_COMPLETION_INDEX", "not-a-number");
        c
    });
    assert!(ok, "{err}");
    assert!(std::fs::read_dir(dir.path().join("out/games"))
        .unwrap()
        .any(|e| { e.unwrap().file_name().to_string_lossy().starts_with("gen0001-wnamed-") }));
    let (ok, _, err) = output(b.cmd(&["pipeline", "--config", &cfg, "--run-dir", "ftp://host/run"]));
    assert!(!ok && err.contains("unknown scheme ftp://"), "{err}");
    let (ok, _, err) = output(b.cmd(&["pipeline", "--config", &cfg, "--run-dir", "file://relative/run"]));
    assert!(!ok && err.contains("absolute path"), "{err}");
    // Nothing listens on this port.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let t0 = Instant::now();
    let (ok, _, err) = output({
        let mut c = b.cmd(&["selfplay", "--config", &cfg, "--run-dir", "s3://runs/x", "--worker-index", "0"]);
        c.env("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}"))
            .env("AWS_ALLOW_HTTP", "true")
            .env("AWS_ACCESS_KEY_ID", "k")
            .env("AWS_SECRET_ACCESS_KEY", "s")
            .env("AWS_REGION", "us-east-1");
        c
    });
    assert!(!ok && err.contains("cannot use the run directory s3://runs/x"), "{err}");
    assert!(t0.elapsed() < Duration::from_secs(90), "an unreachable store fails in bounded time");
    // A store without create-only puts (S3 with conditional puts switched off), a missing bucket.
    let s3 = Backend::s3("no-create");
    let (ok, _, err) = output({
        let mut c = s3.cmd(&["pipeline", "--config", &cfg, "--run-dir", &s3.url]);
        c.env("AWS_CONDITIONAL_PUT", "disabled");
        c
    });
    assert!(!ok && err.contains("the store has no create-only puts"), "{err}");
    let (ok, _, err) = output(s3.cmd(&["pipeline", "--config", &cfg, "--run-dir", "s3://no-such-bucket/run"]));
    assert!(!ok && err.contains("cannot use the run directory s3://no-such-bucket/run"), "{err}");
    assert!(err.contains("NoSuchBucket"), "{err}");
}

/// Every `--flag` of the given command's `--help`.
fn flags_of(sub: &str) -> BTreeSet<String> {
    let o = Command::new(env!("CARGO_BIN_EXE_martian-zero")).args([sub, "--help"]).output().unwrap();
    String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with("--"))
        .map(|w| w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-').to_string())
        .collect()
}

fn check_invocation(args: &[String], what: &str) {
    assert!(args.len() >= 2, "{what}: {args:?}");
    let sub = &args[1];
    let flags = flags_of(sub);
    for a in args.iter().filter(|a| a.starts_with("--")) {
        let f = a.split('=').next().unwrap();
        assert!(flags.contains(f), "{what}: `martian-zero {sub}` has no flag {f} ({flags:?})");
    }
}

#[test]
fn kubernetes_manifests_and_slurm_scripts_match_the_binary() {
    use yaml_rust2::{Yaml, YamlLoader};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy");
    let mut docs = Vec::new();
    for e in std::fs::read_dir(root.join("kubernetes")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") {
            let text = std::fs::read_to_string(&p).unwrap();
            let parsed = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            docs.extend(parsed.into_iter().filter(|d| !d.is_null()));
        }
    }
    let kind = |d: &Yaml| d["kind"].as_str().unwrap_or("").to_string();
    let name = |d: &Yaml| d["metadata"]["name"].as_str().unwrap_or("").to_string();
    let config_maps: BTreeSet<String> = docs.iter().filter(|d| kind(d) == "ConfigMap").map(name).collect();
    assert!(!config_maps.is_empty(), "a ConfigMap holds the run config");
    let workloads: Vec<&Yaml> = docs.iter().filter(|d| kind(d) == "Job" || kind(d) == "Deployment").collect();
    let mut roles = BTreeSet::new();
    for w in &workloads {
        let what = format!("{} {}", kind(w), name(w));
        let pod = &w["spec"]["template"]["spec"];
        let c = &pod["containers"][0];
        let cmd: Vec<String> = c["command"]
            .as_vec()
            .into_iter()
            .flatten()
            .chain(c["args"].as_vec().into_iter().flatten())
            .map(|x| x.as_str().unwrap_or_else(|| panic!("{what}: a non-string argument")).to_string())
            .collect();
        assert_eq!(cmd.first().map(String::as_str), Some("martian-zero"), "{what}: {cmd:?}");
        check_invocation(&cmd, &what);
        let role = cmd.iter().position(|a| a == "--role").map(|i| cmd[i + 1].clone()).expect("--role");
        roles.insert(role.clone());
        // The config comes from the ConfigMap, mounted where --config points.
        let config = cmd.iter().position(|a| a == "--config").map(|i| cmd[i + 1].clone()).expect("--config");
        let mounts = c["volumeMounts"].as_vec().expect("volumeMounts");
        let vols = pod["volumes"].as_vec().expect("volumes");
        let ok = mounts.iter().any(|m| {
            let mp = m["mountPath"].as_str().unwrap_or("");
            let vname = m["name"].as_str().unwrap_or("");
            config.starts_with(&format!("{}/", mp.trim_end_matches('/')))
                && vols.iter().any(|v| {
                    v["name"].as_str() == Some(vname)
                        && v["configMap"]["name"].as_str().is_some_and(|n| config_maps.contains(n))
                })
        });
        assert!(ok, "{what}: --config {config} is not in a mounted ConfigMap");
        // Storage credentials from a Secret, never from the config.
        let secret = c["envFrom"]
            .as_vec()
            .into_iter()
            .flatten()
            .find_map(|e| e["secretRef"]["name"].as_str())
            .unwrap_or_else(|| panic!("{what}: no envFrom secretRef for the storage credentials"));
        assert_eq!(secret, "martian-zero-storage", "{what}");
        // The run directory is the same URL for every process.
        let run_dir = cmd.iter().position(|a| a == "--run-dir").map(|i| cmd[i + 1].clone()).expect("--run-dir");
        assert_eq!(run_dir, "$(RUN_DIR)", "{what}");
        let env = c["env"].as_vec().expect("env");
        assert!(env.iter().any(|e| e["name"].as_str() == Some("RUN_DIR")), "{what}: no RUN_DIR");
        if role == "selfplay" {
            assert_eq!(kind(w), "Job", "{what}");
            assert_eq!(w["spec"]["completionMode"].as_str(), Some("Indexed"), "{what}: an Indexed Job");
            assert!(w["spec"]["completions"].as_i64().is_some() && w["spec"]["parallelism"].as_i64().is_some());
            assert!(!cmd.iter().any(|a| a == "--worker-index"), "{what}: the index comes from JOB_COMPLETION_INDEX");
            assert!(c["resources"]["limits"]["nvidia.com/gpu"].as_i64().is_some(), "{what}: a GPU request");
        }
    }
    assert_eq!(roles, BTreeSet::from(["selfplay".to_string(), "trainer".to_string()]));
    // The Kubernetes schemas (kubernetes-validate from PyPI, installed by scripts/setup).
    let py = python();
    let have = Command::new(&py).args(["-c", "import kubernetes_validate"]).status().is_ok_and(|s| s.success());
    assert!(
        have,
        "kubernetes-validate is not installed in {}: run scripts/setup (or `{} -m pip install kubernetes-validate`)",
        py.display(),
        py.display()
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("kubernetes"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let o = Command::new(&py).args(["-m", "kubernetes_validate", "--strict"]).args(&files).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "the manifests do not validate against the Kubernetes schemas: {text}");
    assert_eq!(text.matches(" passed for resource ").count(), docs.len(), "every resource checked: {text}");
    // Slurm: the worker array and the trainer script call flags that exist.
    let mut seen = BTreeSet::new();
    for f in ["workers.sbatch", "trainer.sbatch"] {
        let text = std::fs::read_to_string(root.join("slurm").join(f)).unwrap();
        if f == "workers.sbatch" {
            assert!(text.contains("#SBATCH --array="), "{f}");
        }
        // The invocation, joined over continuation lines.
        let joined = text.replace("\\\n", " ");
        let line = joined
            .lines()
            .find(|l| l.trim_start().starts_with("srun martian-zero") || l.trim_start().starts_with("martian-zero"))
            .unwrap_or_else(|| panic!("{f}: no martian-zero line"));
        let args: Vec<String> = line
            .split_whitespace()
            .skip_while(|w| *w != "martian-zero")
            .map(|w| w.trim_matches('"').to_string())
            .collect();
        check_invocation(&args, f);
        seen.insert(args.iter().position(|a| a == "--role").map(|i| args[i + 1].clone()).expect("--role"));
    }
    assert_eq!(seen, BTreeSet::from(["selfplay".to_string(), "trainer".to_string()]));
}
