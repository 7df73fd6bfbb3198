//! A run directory on an object store, worked on through a local working
//! copy: a process pulls the objects it needs into a private directory, runs
//! the same code as a local run there, and pushes what it owns back at fixed
//! points (`docs/distributed.md`). Every access to the store goes through
//! [`crate::store::RunStore`].
//!
//! Who pushes what ([`Owner`]):
//!
//! * a self-play worker `W`: only `shards/gen*-wW-*.npz` and
//!   `games/gen*-wW-*.jsonl`, each create-only (names never repeat: a worker's
//!   shard sequence continues from its record files in the store);
//! * the trainer: everything else, except the other workers' shards and
//!   records, the spool and the leases: checkpoints, gate and ladder records
//!   create-only; `best`, `config.toml`, the logs and the report as
//!   conditional updates on the version it read or wrote last. It also deletes
//!   the partial checkpoints it removed locally.
//!
//! Within one push, samples go before the record files that mark them
//! complete (`.npz` before `.jsonl`, weights before the `.json` sidecar) and
//! `best` goes last, so a reader that lists the store never takes a shard
//! without its records or a `best` naming a checkpoint not there yet.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use martian_selfplay::names::parse_generation_prefix;

use crate::io::write_atomic;
use crate::store::{PutOutcome, RunStore, Version};

/// Which objects of the run a process writes.
#[derive(Clone, Debug)]
pub enum Owner {
    /// The trainer; it also writes the shards and records of the given
    /// worker ids (`0` and `boot` in the all-in-one pipeline).
    Trainer {
        /// Worker ids whose self-play output this process writes.
        workers: Vec<String>,
    },
    /// Self-play worker with this id.
    Worker(String),
}

/// The shard or record file of a worker's output: `(worker, stem)` of
/// `shards/gen0001-wW-000003.npz` or `games/gen0001-wW-000003.jsonl`.
fn worker_of(name: &str) -> Option<&str> {
    let file = crate::layout::under(name, crate::layout::SHARDS)
        .or_else(|| crate::layout::under(name, crate::layout::GAMES))?;
    let rest = parse_generation_prefix(file)?.1.strip_prefix("-w")?;
    rest.rsplit_once('-').map(|(w, _)| w)
}

impl Owner {
    /// Whether this process writes (and so pushes) the object `name`.
    pub fn owns(&self, name: &str) -> bool {
        if name.split('/').any(|c| c.starts_with('.')) {
            return false;
        }
        let top = name.split('/').next().unwrap_or("");
        match self {
            Owner::Worker(w) => worker_of(name) == Some(w.as_str()),
            Owner::Trainer { workers } => match top {
                crate::layout::SHARDS | crate::layout::GAMES => {
                    worker_of(name).is_some_and(|w| workers.iter().any(|x| x == w))
                }
                crate::layout::SPOOL | crate::layout::WORKERS => false,
                _ => !name.ends_with(".lease"),
            },
        }
    }
}

/// Objects written once: a changed local copy is an error, an existing
/// object a conflict.
fn immutable(name: &str) -> bool {
    let top = name.split('/').next().unwrap_or("");
    matches!(top, crate::layout::SHARDS | crate::layout::GAMES | crate::layout::MODELS)
        || (top == crate::layout::EVAL
            && crate::layout::under(name, crate::layout::EVAL)
                .is_some_and(|f| f.starts_with("gen") || f.starts_with(crate::layout::LADDER_PREFIX)))
}

/// Push order: samples and weights, then the files that mark them complete, then the rest, `best` last.
fn push_rank(name: &str) -> u8 {
    if name == crate::layout::BEST {
        3
    } else if name.ends_with(".npz") || name.ends_with(".safetensors") || name.ends_with(".optim") {
        0
    } else if crate::layout::under(name, crate::layout::GAMES).is_some()
        || crate::layout::under(name, crate::layout::MODELS).is_some()
    {
        1
    } else {
        2
    }
}

/// What the working copy knows of one object: the store's version when it
/// was last pulled or pushed, and a digest of the bytes then.
#[derive(Clone, Debug)]
struct Synced {
    version: Version,
    digest: u64,
}

const DIGEST: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_ECMA_182);

/// A local working copy of a run on an object store.
pub struct Mirror {
    /// The store.
    pub store: Arc<RunStore>,
    local: PathBuf,
    owner: Owner,
    synced: Mutex<BTreeMap<String, Synced>>,
    _tmp: tempfile::TempDir,
    _on_interrupt: crate::interrupt::Registered,
    _shown: crate::io::Shown,
}

/// The name prefix of this host's working copies: `run-<host>-`, followed by
/// the pid of the process that made the copy and `-`.
fn copy_prefix() -> String {
    let host: String = crate::store::host_name()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '.' { c } else { '_' })
        .collect();
    format!("run-{host}-")
}

/// Removes the working copies under `root` that processes of this host left
/// when they were killed (SIGKILL: no clean-up ran): those whose pid no
/// longer runs, or is this process's own but not one of its live copies (a
/// copy of an earlier container with the same pid). Copies of other hosts (a cache directory on a shared file
/// system) are left alone. Returns how many were removed.
fn remove_abandoned_copies(root: &Path) -> usize {
    let prefix = copy_prefix();
    let Ok(rd) = std::fs::read_dir(root) else { return 0 };
    let mut n = 0;
    for e in rd.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().to_string();
        let pid = name.strip_prefix(&prefix).and_then(|r| r.split_once('-')).and_then(|(p, _)| p.parse::<u32>().ok());
        let Some(pid) = pid else { continue };
        let mine_now = crate::io::is_shown(&e.path());
        let gone = !mine_now && (pid == std::process::id() || !Path::new(&format!("/proc/{pid}")).exists());
        if gone && std::fs::remove_dir_all(e.path()).is_ok() {
            n += 1;
        }
    }
    n
}

/// The directory under which working copies are made: `$MARTIAN_ZERO_CACHE`,
/// else `$XDG_CACHE_HOME/martian-zero/runs`, else `~/.cache/martian-zero/runs`,
/// else the system temporary directory.
pub fn cache_root() -> PathBuf {
    if let Some(p) = std::env::var_os("MARTIAN_ZERO_CACHE") {
        return PathBuf::from(p);
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(p).join("martian-zero").join("runs");
    }
    if let Some(h) = std::env::var_os("HOME") {
        return PathBuf::from(h).join(".cache").join("martian-zero").join("runs");
    }
    std::env::temp_dir()
}

impl Mirror {
    /// A new, empty working copy of `store` for `owner` in a fresh directory
    /// `run-<host>-<pid>-<random>` under [`cache_root`], removed when the
    /// mirror is dropped or the process is interrupted ([`crate::interrupt`]);
    /// first removes the copies that killed processes of this host left there.
    ///
    /// # Errors
    /// The directory cannot be made.
    pub fn new(store: Arc<RunStore>, owner: Owner) -> Result<Mirror> {
        let root = cache_root();
        std::fs::create_dir_all(&root).with_context(|| format!("creating {}", root.display()))?;
        let n = remove_abandoned_copies(&root);
        if n > 0 {
            eprintln!("storage: removed {n} working copies of killed processes under {}", root.display());
        }
        let tmp = tempfile::Builder::new()
            .prefix(&format!("{}{}-", copy_prefix(), std::process::id()))
            .tempdir_in(&root)
            .with_context(|| format!("making a working copy under {}", root.display()))?;
        let local = tmp.path().to_path_buf();
        let on_interrupt = {
            let dir = local.clone();
            // The writes that make directories are over by now and no other thread starts one
            // (`interrupt::writing`); one that only adds a file to a directory (a log line) can
            // still make the removal fail: try again until the copy is gone.
            crate::interrupt::on_interrupt(move || {
                for _ in 0..50 {
                    if std::fs::remove_dir_all(&dir).is_ok() || !dir.exists() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            })
        };
        let shown = crate::io::show_as(&local, store.url());
        Ok(Mirror {
            store,
            local: local.clone(),
            owner,
            synced: Mutex::new(BTreeMap::new()),
            _tmp: tmp,
            _on_interrupt: on_interrupt,
            _shown: shown,
        })
    }

    /// The local working copy (the run root the rest of the program uses).
    pub fn local(&self) -> &Path {
        &self.local
    }

    fn synced(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Synced>> {
        self.synced.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Downloads the objects for which `want` is true and whose version
    /// differs from the copy's (new or changed ones). A shard is taken only
    /// once its record file is listed (a worker pushes the record after the
    /// shard). Returns the names downloaded.
    ///
    /// # Errors
    /// Store or local I/O errors, naming the object.
    pub fn pull(&self, want: impl Fn(&str) -> bool) -> Result<Vec<String>> {
        let index = self.store.index()?;
        let mut got = Vec::new();
        for (name, l) in &index {
            if !want(name) || name.split('/').any(|c| c.starts_with('.')) || name.ends_with(".lease") {
                continue;
            }
            if let Some(stem) = crate::layout::under(name, crate::layout::SHARDS).and_then(|n| n.strip_suffix(".npz")) {
                if !index.contains_key(&crate::layout::object(crate::layout::GAMES, &format!("{stem}.jsonl"))) {
                    continue;
                }
            }
            if self.synced().get(name).is_some_and(|s| s.version == l.version) {
                continue;
            }
            self.fetch(name)?;
            got.push(name.clone());
        }
        Ok(got)
    }

    /// Downloads `name` into the working copy (whatever the copy has);
    /// false when the store has no such object.
    ///
    /// # Errors
    /// Store or local I/O errors.
    pub fn fetch(&self, name: &str) -> Result<bool> {
        let Some((bytes, version)) = self.store.get(name)? else { return Ok(false) };
        write_atomic(&self.local.join(name), &bytes)?;
        self.synced().insert(name.to_string(), Synced { version, digest: DIGEST.checksum(&bytes) });
        Ok(true)
    }

    /// Every file of the working copy, relative and `/`-separated.
    fn local_files(&self) -> Vec<String> {
        fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
            let Ok(rd) = std::fs::read_dir(dir) else { return };
            for e in rd.filter_map(|e| e.ok()) {
                let p = e.path();
                if p.is_dir() {
                    walk(base, &p, out);
                } else if let Ok(rel) = p.strip_prefix(base) {
                    let parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into()).collect();
                    out.push(parts.join("/"));
                }
            }
        }
        let mut v = Vec::new();
        walk(&self.local, &self.local, &mut v);
        v
    }

    /// Uploads every file this process owns that is new or changed since it
    /// was last pulled or pushed (create-only for new ones and immutable
    /// ones, a conditional update for changed mutable ones), in the order of
    /// the module documentation; deletes the trainer's checkpoint files that
    /// it removed locally. Returns the number of objects written.
    ///
    /// # Errors
    /// A conflict: an object this process creates exists with other bytes, or
    /// a mutable object was changed by another process since this one read it
    /// (both name the object and say that another process writes the run);
    /// store or local I/O errors.
    pub fn push(&self) -> Result<usize> {
        self.push_matching(|_| true)
    }

    /// [`Mirror::push`] of the objects for which `want` is true only.
    ///
    /// # Errors
    /// Those of [`Mirror::push`].
    pub fn push_matching(&self, want: impl Fn(&str) -> bool) -> Result<usize> {
        let mut names: Vec<String> = self.local_files().into_iter().filter(|n| self.owner.owns(n) && want(n)).collect();
        names.sort_by_key(|n| (push_rank(n), n.clone()));
        let mut written = 0;
        for name in &names {
            let bytes = match std::fs::read(self.local.join(name)) {
                Ok(b) => b,
                // Removed since it was listed (a partial checkpoint replaced by training).
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e).with_context(|| format!("reading {}", self.local.join(name).display())),
            };
            let digest = DIGEST.checksum(&bytes);
            let known = self.synced().get(name).cloned();
            if known.as_ref().is_some_and(|k| k.digest == digest) {
                continue;
            }
            let outcome = match &known {
                // A record written once that a reader found damaged and set aside (`<name>.damaged`,
                // pushed beside it) is made again: the new copy replaces the damaged one.
                Some(k) if immutable(name) && self.local.join(format!("{name}.damaged")).exists() => {
                    eprintln!(
                        "storage: replacing the damaged {}/{name} (its bytes are kept as {name}.damaged)",
                        self.store.url()
                    );
                    self.store.put_update(name, bytes.clone(), &k.version)?
                }
                Some(_) if immutable(name) => bail!(
                    "{}/{name} is written once, but this process's copy changed: refusing to replace it",
                    self.store.url()
                ),
                Some(k) => self.store.put_update(name, bytes.clone(), &k.version)?,
                None => self.store.put_create(name, bytes.clone())?,
            };
            match outcome {
                PutOutcome::Written(version) => {
                    self.synced().insert(name.clone(), Synced { version, digest });
                    written += 1;
                }
                PutOutcome::Conflict => {
                    // A create that finds the same bytes there (a push repeated after a kill) is done.
                    if known.is_none() {
                        if let Some((there, version)) = self.store.get(name)? {
                            if there == bytes {
                                self.synced().insert(name.clone(), Synced { version, digest });
                                continue;
                            }
                        }
                    }
                    bail!(
                        "{}/{name} was written by another process (the conditional {} lost): \
                         is a second trainer or a second worker with this index running? stopping",
                        self.store.url(),
                        if known.is_some() { "update" } else { "create" }
                    );
                }
            }
        }
        // Checkpoint files the trainer removed (partial checkpoints replaced or finished).
        if matches!(self.owner, Owner::Trainer { .. }) {
            let gone: Vec<String> = self
                .synced()
                .keys()
                .filter(|n| crate::layout::under(n, crate::layout::MODELS).is_some() && !self.local.join(n).exists())
                .cloned()
                .collect();
            for n in gone {
                self.store.delete(&n)?;
                self.synced().remove(&n);
            }
        }
        Ok(written)
    }

    /// Deletes this worker's shards in the store that have no record file
    /// (a worker killed between its two puts); their games are played again.
    ///
    /// # Errors
    /// Store errors.
    pub fn remove_orphan_shards(&self) -> Result<()> {
        let index = self.store.index()?;
        for name in index.keys() {
            if !self.owner.owns(name) {
                continue;
            }
            if let Some(stem) = crate::layout::under(name, crate::layout::SHARDS).and_then(|n| n.strip_suffix(".npz")) {
                if !index.contains_key(&crate::layout::object(crate::layout::GAMES, &format!("{stem}.jsonl"))) {
                    eprintln!("recovery: removing {}/{name} (its record file was never written)", self.store.url());
                    self.store.delete(name)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A moto S3 server on 127.0.0.1 with bucket `runs` (the venv's, as in cli/tests/it/distributed.rs).
    struct Moto(std::process::Child, u16);

    impl Moto {
        fn start() -> Moto {
            use std::io::{Read, Write};
            let venv = std::env::var_os("MARTIAN_ZERO_VENV").map(PathBuf::from).unwrap_or_else(|| {
                PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/martian-zero/venv")
            });
            let py = venv.join("bin/python");
            let ok = std::process::Command::new(&py)
                .args(["-c", "import moto.server, flask"])
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(ok, "moto is not installed in {}: run scripts/setup (it installs moto[server])", py.display());
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let child = std::process::Command::new(&py)
                .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let m = Moto(child, port);
            let t0 = std::time::Instant::now();
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                assert!(t0.elapsed() < Duration::from_secs(30), "moto did not start");
                std::thread::sleep(Duration::from_millis(100));
            }
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            write!(s, "PUT /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .unwrap();
            let mut r = String::new();
            s.read_to_string(&mut r).unwrap();
            assert!(r.contains(" 200 "), "{r}");
            m
        }
    }

    impl Drop for Moto {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    #[test]
    fn two_writers_never_silently_overwrite_each_other_on_s3() {
        let moto = Moto::start();
        let endpoint = format!("http://127.0.0.1:{}", moto.1);
        let opts = [
            ("aws_endpoint", endpoint.as_str()),
            ("aws_allow_http", "true"),
            ("aws_access_key_id", "k"),
            ("aws_secret_access_key", "s"),
            ("aws_region", "us-east-1"),
        ];
        let open = || Arc::new(RunStore::open_with("s3://runs/r", Duration::from_secs(60), &opts).unwrap());
        let trainer = || Owner::Trainer { workers: vec!["0".into()] };
        let (a, b) = (Mirror::new(open(), trainer()).unwrap(), Mirror::new(open(), trainer()).unwrap());
        assert!(a.store.conditional_updates(), "moto has conditional updates");
        std::fs::write(a.local().join("best"), "gen0000.safetensors").unwrap();
        std::fs::create_dir_all(a.local().join("shards")).unwrap();
        std::fs::write(a.local().join("shards/gen0001-w0-000000.npz"), "samples").unwrap();
        assert_eq!(a.push().unwrap(), 2, "the shard and best");
        // Both read `best`; `a` moves it forward first, so `b`'s update on the old version loses.
        assert_eq!(b.pull(|_| true).unwrap(), vec!["best".to_string()], "a shard without its record is not pulled");
        std::fs::write(a.local().join("best"), "gen0001.safetensors").unwrap();
        assert_eq!(a.push().unwrap(), 1);
        std::fs::write(b.local().join("best"), "gen0002.safetensors").unwrap();
        let e = b.push().unwrap_err().to_string();
        assert!(e.contains("s3://runs/r/best was written by another process") && e.contains("update lost"), "{e}");
        assert_eq!(a.store.get("best").unwrap().unwrap().0, b"gen0001.safetensors");
        // A create of an object another process wrote with other bytes loses too; the same bytes are fine.
        std::fs::create_dir_all(b.local().join("shards")).unwrap();
        std::fs::write(b.local().join("shards/gen0001-w0-000000.npz"), "samples").unwrap();
        std::fs::write(b.local().join("best"), "gen0001.safetensors").unwrap();
        b.fetch("best").unwrap();
        assert_eq!(b.push().unwrap(), 0, "the same bytes: nothing to write");
        std::fs::write(b.local().join("shards/gen0001-w0-000001.npz"), "mine").unwrap();
        a.store.put_create("shards/gen0001-w0-000001.npz", b"theirs".to_vec()).unwrap();
        let e = b.push().unwrap_err().to_string();
        assert!(e.contains("gen0001-w0-000001.npz was written by another process") && e.contains("create lost"), "{e}");
    }

    #[test]
    fn abandoned_copies_of_this_host_are_removed_and_messages_name_the_url() {
        let root = tempfile::tempdir().unwrap();
        let p = copy_prefix();
        let me = std::process::id();
        let mk = |n: &str| {
            let d = root.path().join(n);
            std::fs::create_dir_all(d.join("models")).unwrap();
            d
        };
        let dead = mk(&format!("{p}4294967294-a1"));
        let own_old = mk(&format!("{p}{me}-b2"));
        let own_live = mk(&format!("{p}{me}-c3"));
        let running = mk(&format!("{p}1-d4"));
        let other_host = mk("run-some.other.host-4294967294-e5");
        let unrelated = mk("notes");
        let _live = crate::io::show_as(&own_live, "s3://bucket/run");
        assert_eq!(remove_abandoned_copies(root.path()), 2);
        assert!(!dead.exists() && !own_old.exists());
        assert!(own_live.exists() && running.exists() && other_host.exists() && unrelated.exists());
        assert_eq!(crate::io::shown(&own_live.join("report.html")), "s3://bucket/run/report.html");
        assert_eq!(crate::io::shown(&own_live), "s3://bucket/run");
        assert_eq!(crate::io::shown(&running.join("x")), running.join("x").display().to_string());
        drop(_live);
        assert_eq!(crate::io::shown(&own_live.join("x")), own_live.join("x").display().to_string());
    }

    #[test]
    fn ownership_and_order() {
        let w = Owner::Worker("i2".into());
        assert!(w.owns("shards/gen0003-wi2-000001.npz"));
        assert!(w.owns("games/gen0003-wi2-000001.jsonl"));
        assert!(!w.owns("shards/gen0003-wi20-000001.npz"));
        assert!(!w.owns("best") && !w.owns("models/gen0001.safetensors"));
        let t = Owner::Trainer { workers: vec!["0".into(), "boot".into()] };
        assert!(t.owns("best") && t.owns("models/gen0001.json") && t.owns("eval/gen0001.json"));
        assert!(t.owns("shards/gen0001-w0-000000.npz") && t.owns("games/gen0001-wboot-000000.jsonl"));
        assert!(!t.owns("shards/gen0001-wi2-000000.npz"));
        assert!(!t.owns("spool/gen0001-w0/5.json") && !t.owns("trainer.lease") && !t.owns("models/.tmp-1-x"));
        let mut v = vec!["best", "games/a.jsonl", "shards/a.npz", "models/g.json", "models/g.safetensors", "x.log"];
        v.sort_by_key(|n| (push_rank(n), n.to_string()));
        assert_eq!(v, ["models/g.safetensors", "shards/a.npz", "games/a.jsonl", "models/g.json", "x.log", "best"]);
    }
}
