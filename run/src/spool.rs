//! Self-play output that survives a kill at any moment: game ids, the spool
//! of finished games, and their merge into shards and record files.
//!
//! ```text
//! finished game  -> spool/<prefix>/<id>.npz, then spool/<prefix>/<id>.json   (each atomic)
//! every games_per_shard games (and at the end):
//!                -> shards/<prefix>-<seq>.npz, then games/<prefix>-<seq>.jsonl (each atomic)
//!                -> delete those games' spool files
//! ```
//!
//! A game is *done* once its spool record (`<id>.json`) or its line in a
//! record file exists; a kill can only lose games still being played.
//! [`recover`] runs before a worker plays: it deletes a shard without its
//! record file (killed between the two writes; its games are still in the
//! spool), spool files of games already in a record file (killed before the
//! spool was cleared), and spool samples without a record; it sets aside
//! (`<name>.damaged`) a record file that does not parse and a shard that does
//! not open, each with its partner, so that their games are played again;
//! the remaining spool games are merged into the next shard.
//!
//! Game ids: `generation << 40 | worker_tag << 24 | k` with `k` counting the
//! worker's games of the generation from 0 ([`game_id`]). A worker plays the
//! lowest `k` not yet done, so a resumed run replays exactly the ids a kill
//! lost, and ids never repeat within a run.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use martian_selfplay::names::generation_prefix;
use martian_selfplay::{read_shard, shard_game_ids, write_shard, GameRecord, ShardData};

use crate::io::write_atomic;

/// Largest number of games per worker and generation (`k < 2^24`).
pub const MAX_GAMES_PER_WORKER: u64 = 1 << 24;

/// The 16-bit tag of a worker name inside game ids: 0 for the pipeline's
/// worker `"0"`; `0x8000 + N` for the worker of index `N < 0x8000` (`i<N>`,
/// `selfplay --worker-index N`), so that index workers never share a tag;
/// else an FNV-1a hash of the name folded into `1..0x8000`, so that a named
/// worker never takes an index worker's tag (two named workers may still share
/// one: 1 in 32,767 for a pair; give workers indexes where that matters).
pub fn worker_tag(worker: &str) -> u64 {
    if worker == "0" {
        return 0;
    }
    if let Some(n) = worker.strip_prefix('i').filter(|n| !n.starts_with('0') || n.len() == 1) {
        if let Ok(n) = n.parse::<u64>() {
            if n < 0x8000 {
                return 0x8000 + n;
            }
        }
    }
    let h = worker.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    match h & 0x7FFF {
        0 => 1,
        t => t,
    }
}

/// Id of game `k` of `worker_tag` in generation `generation`.
pub fn game_id(generation: u32, worker_tag: u64, k: u64) -> u64 {
    ((generation as u64) << 40) | (worker_tag << 24) | k
}

/// The generation a game id was made in ([`game_id`]'s top bits).
pub fn generation_of_game(id: u64) -> u32 {
    (id >> 40) as u32
}

/// Where one worker's self-play output of one generation goes.
#[derive(Clone, Debug)]
pub struct SelfplayOut {
    /// Shard directory.
    pub shards: PathBuf,
    /// Game-record directory.
    pub games: PathBuf,
    /// Spool directory of this worker and generation.
    pub spool: PathBuf,
    /// File-name prefix, `gen<NNNN>-w<worker>`.
    pub prefix: String,
    /// Generation.
    pub generation: u32,
    /// The worker's tag in game ids ([`worker_tag`]).
    pub tag: u64,
}

impl SelfplayOut {
    /// Output of worker `worker` for generation `generation` under a run
    /// directory (or an `--out` directory) with `shards/`, `games/`, `spool/`.
    pub fn new(root: &Path, generation: u32, worker: &str) -> SelfplayOut {
        let prefix = format!("{}-w{worker}", generation_prefix(generation));
        SelfplayOut {
            shards: root.join(crate::layout::SHARDS),
            games: root.join(crate::layout::GAMES),
            spool: root.join(crate::layout::SPOOL).join(&prefix),
            prefix,
            generation,
            tag: worker_tag(worker),
        }
    }

    /// Record files (`games/<prefix>-NNNNNN.jsonl`) of this worker, by sequence number.
    fn record_files(&self) -> Vec<(u32, PathBuf)> {
        let want = format!("{}-", self.prefix);
        let Ok(rd) = fs::read_dir(&self.games) else { return Vec::new() };
        let mut v: Vec<(u32, PathBuf)> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let n = e.file_name().to_str()?.to_string();
                let seq = n.strip_prefix(&want)?.strip_suffix(".jsonl")?.parse::<u32>().ok()?;
                Some((seq, e.path()))
            })
            .collect();
        v.sort();
        v
    }

    /// Next free shard sequence number.
    pub fn next_seq(&self) -> u32 {
        self.record_files().last().map(|(s, _)| s + 1).unwrap_or(0)
    }

    /// Ids of the games this worker finished in this generation (record
    /// files and spool).
    ///
    /// # Errors
    /// An unreadable or corrupt record file (named).
    pub fn done_ids(&self) -> Result<BTreeSet<u64>> {
        let mut ids = BTreeSet::new();
        for (_, p) in self.record_files() {
            for r in read_records(&p)? {
                ids.insert(r.game_id);
            }
        }
        for (id, _) in spool_entries(&self.spool) {
            ids.insert(id);
        }
        Ok(ids)
    }

    /// The `n` lowest game ids of this worker not in `done` (its
    /// [`SelfplayOut::done_ids`]).
    ///
    /// # Errors
    /// More than [`MAX_GAMES_PER_WORKER`] games.
    pub fn next_ids(&self, done: &BTreeSet<u64>, n: u64) -> Result<Vec<u64>> {
        let mut out = Vec::with_capacity(n as usize);
        let mut k = 0u64;
        while (out.len() as u64) < n {
            if k >= MAX_GAMES_PER_WORKER {
                bail!(
                    "worker {} would exceed {MAX_GAMES_PER_WORKER} games in generation {}",
                    self.prefix,
                    self.generation
                );
            }
            let id = game_id(self.generation, self.tag, k);
            if !done.contains(&id) {
                out.push(id);
            }
            k += 1;
        }
        Ok(out)
    }
}

/// A worker's claim on its id within a run directory (`workers/w<id>.lock`,
/// locked with `flock(2)` and holding the process id), so that two processes
/// never play the same worker's game ids at once. The operating system
/// releases the lock when its process ends, however it ends (SIGKILL, a lost
/// pod): a file left by a killed process is free, and taking it over is one
/// atomic step (two processes restarting the same worker at once cannot both
/// win, and a live holder on another host of a shared file system counts,
/// where a process id could not be checked). Released on drop (the file is
/// removed); an interrupted process removes its files ([`crate::interrupt`]).
/// The pipeline's trainer takes the id `trainer` ([`TRAINER`]).
pub struct WorkerLock {
    path: PathBuf,
    /// The open, locked file: the claim lasts while it is open.
    _file: fs::File,
    _on_interrupt: crate::interrupt::Registered,
}

/// The id whose lock the process that trains a run holds (`pipeline`, roles
/// `all` and `trainer`): one trainer per run directory.
pub const TRAINER: &str = "trainer";

/// Removes the lock at `path` if it still holds this process's id (a newer
/// holder's file is left alone).
fn release_lock(path: &Path) {
    if fs::read_to_string(path).is_ok_and(|t| t.trim() == std::process::id().to_string()) {
        let _ = fs::remove_file(path);
    }
}

impl WorkerLock {
    /// Claims worker `worker` in the run directory `root`.
    ///
    /// # Errors
    /// Another running process holds the worker (named with its pid), a file
    /// system without `flock` locks (named), or I/O errors.
    pub fn acquire(root: &Path, worker: &str) -> Result<WorkerLock> {
        use std::io::Write;
        use std::os::unix::fs::MetadataExt;
        let _writing = crate::interrupt::writing();
        let dir = root.join(crate::layout::WORKERS);
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(format!("w{worker}.lock"));
        // A claim file that damage replaced by something else is set aside (a live claim is a file).
        crate::io::make_way(&path)?;
        for _ in 0..16 {
            let mut file = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .with_context(|| format!("opening {}", path.display()))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => return Err(Self::held(root, worker, &path)),
                Err(fs::TryLockError::Error(e)) => {
                    return Err(e).with_context(|| {
                        format!("locking {} (the run directory's file system must support flock locks)", path.display())
                    })
                }
            }
            // Locked: but the holder before may have removed the file (released it) after this
            // process opened it, and another made a new one: the lock counts only on the file the
            // path names now.
            let now = fs::metadata(&path).ok();
            let mine = file.metadata().with_context(|| format!("reading {}", path.display()))?;
            if !now.is_some_and(|m| m.ino() == mine.ino() && m.dev() == mine.dev()) {
                continue;
            }
            file.set_len(0).with_context(|| format!("writing {}", path.display()))?;
            write!(file, "{}", std::process::id()).with_context(|| format!("writing {}", path.display()))?;
            let p = path.clone();
            let _on_interrupt = crate::interrupt::on_interrupt(move || release_lock(&p));
            return Ok(WorkerLock { path, _file: file, _on_interrupt });
        }
        bail!("could not claim worker {worker} ({}): it is claimed and released repeatedly", path.display())
    }

    /// The error for a worker id another process holds.
    fn held(root: &Path, worker: &str, path: &Path) -> anyhow::Error {
        let pid = fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
            .map_or_else(|| "pid not written yet".to_string(), |p| format!("pid {p}"));
        if worker == TRAINER {
            return anyhow::anyhow!(
                "the trainer of {} is already running ({pid}, {}): one process trains a run; \
                 stop it first (extra self-play workers: `selfplay --worker-index N`)",
                root.display(),
                path.display()
            );
        }
        let other = if worker.strip_prefix('i').is_some_and(|n| n.parse::<u32>().is_ok()) {
            "an extra self-play worker takes another index (`selfplay --worker-index N`)"
        } else {
            "an extra self-play worker takes another id (`selfplay --worker-index N` or `--worker NAME`; \
             the pipeline is worker 0)"
        };
        anyhow::anyhow!(
            "worker {worker} of {} is already running ({pid}, {}): wait for it or stop it; {other}",
            root.display(),
            path.display()
        )
    }
}

impl Drop for WorkerLock {
    fn drop(&mut self) {
        release_lock(&self.path);
    }
}

/// Reads the records of a `.jsonl` file, every line whole (the self-play
/// worker's own files: [`recover`] sets a damaged one aside).
///
/// # Errors
/// I/O errors or a line that is not a game record, naming the file and line.
pub fn read_records(path: &Path) -> Result<Vec<GameRecord>> {
    let lines = crate::records::read_game_records(path)?;
    if let Some(b) = lines.bad.first() {
        bail!("{} line {}: {}", path.display(), b.line, b.why);
    }
    Ok(lines.into_records())
}

/// `(game id, record path)` of the complete spool entries (`<id>.json`).
fn spool_entries(spool: &Path) -> Vec<(u64, PathBuf)> {
    let Ok(rd) = fs::read_dir(spool) else { return Vec::new() };
    let mut v: Vec<(u64, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_str()?.to_string();
            Some((n.strip_suffix(".json")?.parse::<u64>().ok()?, e.path()))
        })
        .collect();
    v.sort();
    v
}

/// A finished game on its way to a shard: its packed samples and record.
pub struct SpooledGame {
    /// The game's samples.
    pub data: ShardData,
    /// The game's record.
    pub record: GameRecord,
}

/// Writes one finished game to the spool (samples, then the record that
/// marks it done).
///
/// # Errors
/// I/O errors, with the path.
pub fn spool_game(out: &SelfplayOut, g: &SpooledGame) -> Result<()> {
    let _writing = crate::interrupt::writing();
    fs::create_dir_all(&out.spool).with_context(|| format!("creating {}", out.spool.display()))?;
    let id = g.record.game_id;
    write_shard(&out.spool.join(format!("{id}.npz")), &g.data)?;
    write_atomic(&out.spool.join(format!("{id}.json")), serde_json::to_string(&g.record)?.as_bytes())
}

/// Merges `pending` into shard `<prefix>-<seq>` and its record file, then
/// removes their spool files and clears `pending`. Nothing happens when
/// `pending` is empty.
///
/// # Errors
/// I/O errors.
pub fn merge(out: &SelfplayOut, pending: &mut Vec<SpooledGame>, seq: &mut u32) -> Result<()> {
    if pending.is_empty() {
        return Ok(());
    }
    let _writing = crate::interrupt::writing();
    let parts: Vec<&ShardData> = pending.iter().map(|g| &g.data).filter(|d| !d.is_empty()).collect();
    let stem = format!("{}-{:06}", out.prefix, seq);
    if !parts.is_empty() {
        let data = ShardData::concat(&parts)?;
        write_shard(&out.shards.join(format!("{stem}.npz")), &data)?;
    }
    let mut lines = String::new();
    for g in pending.iter() {
        lines.push_str(&serde_json::to_string(&g.record)?);
        lines.push('\n');
    }
    write_atomic(&out.games.join(format!("{stem}.jsonl")), lines.as_bytes())?;
    for g in pending.iter() {
        let id = g.record.game_id;
        let _ = fs::remove_file(out.spool.join(format!("{id}.json")));
        let _ = fs::remove_file(out.spool.join(format!("{id}.npz")));
    }
    *seq += 1;
    pending.clear();
    Ok(())
}

/// Repairs this worker's output after a kill (see the module documentation)
/// and returns the spooled games that still need a shard.
///
/// # Errors
/// I/O errors or corrupt record files.
pub fn recover(out: &SelfplayOut, input_shape: [usize; 3], num_actions: usize) -> Result<Vec<SpooledGame>> {
    // Temporaries of this worker's shard and record writes (`.tmp-<pid>-<prefix>-...`).
    for dir in [&out.shards, &out.games] {
        remove_temporaries(dir, Some(&out.prefix));
    }
    // Shards without a record file.
    let want = format!("{}-", out.prefix);
    if let Ok(rd) = fs::read_dir(&out.shards) {
        for e in rd.filter_map(|e| e.ok()) {
            let n = e.file_name().to_string_lossy().to_string();
            if let Some(stem) = n.strip_prefix(&want).and_then(|r| r.strip_suffix(".npz")).map(|_| &n[..n.len() - 4]) {
                if !out.games.join(format!("{stem}.jsonl")).exists() {
                    eprintln!("recovery: removing {} (its record file was never written)", e.path().display());
                    fs::remove_file(e.path()).with_context(|| format!("removing {}", e.path().display()))?;
                }
            }
        }
    }
    // Record files and shards that no longer read (a truncated copy, a bad
    // disk): each pair is set aside, so that its games are played again
    // rather than counted done with records or samples nothing can read.
    let mut recorded: BTreeSet<u64> = BTreeSet::new();
    for (_, p) in out.record_files() {
        let shard = out.shards.join(p.with_extension("npz").file_name().unwrap_or_default());
        let problem = match read_records(&p) {
            Err(e) => Some(format!("{e:#}")),
            Ok(records) => {
                // Samples per game as the records count them and as the shard holds them: they
                // differ for a record file cut at a line end, or another shard under its name. A
                // shard that is not here (a worker that pulls only the records) is not checked.
                let want: BTreeMap<u64, u64> =
                    records.iter().filter(|r| r.samples > 0).map(|r| (r.game_id, u64::from(r.samples))).collect();
                let problem = match shard.exists().then(|| shard_game_ids(&shard)) {
                    Some(Err(e)) => Some(e.to_string()),
                    Some(Ok(ids)) => {
                        let mut have = BTreeMap::<u64, u64>::new();
                        for id in ids {
                            *have.entry(id as u64).or_default() += 1;
                        }
                        have.keys().chain(want.keys()).find(|id| have.get(id) != want.get(id)).map(|id| {
                            let n = |m: &BTreeMap<u64, u64>| m.get(id).copied().unwrap_or(0);
                            format!(
                                "{} holds {} samples of game {id}, and {} records {}",
                                shard.display(),
                                n(&have),
                                p.display(),
                                n(&want)
                            )
                        })
                    }
                    None => None,
                };
                if problem.is_none() {
                    recorded.extend(records.iter().map(|r| r.game_id));
                }
                problem
            }
        };
        if let Some(problem) = problem {
            let mut aside = vec![crate::io::set_aside(&p)?];
            if shard.exists() {
                aside.push(crate::io::set_aside(&shard)?);
            }
            let names: Vec<String> = aside.iter().map(|x| x.display().to_string()).collect();
            eprintln!("recovery: {problem}; set aside as {}; its games will be played again", names.join(" and "));
        }
    }
    let mut pending = Vec::new();
    let entries = spool_entries(&out.spool);
    let listed: BTreeSet<u64> = entries.iter().map(|e| e.0).collect();
    for (id, json) in entries {
        let npz = out.spool.join(format!("{id}.npz"));
        if recorded.contains(&id) {
            let _ = fs::remove_file(&json);
            let _ = fs::remove_file(&npz);
            continue;
        }
        let record: Option<GameRecord> =
            crate::records::read_json(&json, "a game record").ok().filter(|r: &GameRecord| r.game_id == id);
        let data = read_shard(&npz, input_shape, num_actions).ok();
        match (record, data) {
            (Some(record), Some(data)) => pending.push(SpooledGame { data, record }),
            _ => {
                // Set aside (not deleted: the bytes stay for a look, and whatever is there, a
                // file or not, makes way for the game played again).
                let mut aside = Vec::new();
                for p in [&json, &npz] {
                    if fs::symlink_metadata(p).is_ok() {
                        aside.push(crate::io::set_aside(p)?.display().to_string());
                    }
                }
                eprintln!(
                    "recovery: spooled game {id} in {} is unreadable; it will be played again (set aside as {})",
                    out.spool.display(),
                    aside.join(" and ")
                );
            }
        }
    }
    // Samples whose record was never written, and temporaries.
    if let Ok(rd) = fs::read_dir(&out.spool) {
        for e in rd.filter_map(|e| e.ok()) {
            let n = e.file_name().to_string_lossy().to_string();
            let orphan =
                n.strip_suffix(".npz").and_then(|s| s.parse::<u64>().ok()).is_some_and(|id| !listed.contains(&id));
            if orphan || n.starts_with(".tmp-") {
                let _ = fs::remove_file(e.path());
            }
        }
    }
    Ok(pending)
}

/// Repairs this worker's output ([`recover`]) and merges every spooled game
/// into a shard at once; returns how many were merged. For a spool that no
/// self-play will resume: a generation whose games are all played, killed
/// between spooling its last games and their merge, or a generation a worker
/// has moved past.
///
/// # Errors
/// I/O errors or corrupt record files.
pub fn flush(out: &SelfplayOut, input_shape: [usize; 3], num_actions: usize) -> Result<usize> {
    let mut pending = recover(out, input_shape, num_actions)?;
    let n = pending.len();
    let mut seq = out.next_seq();
    merge(out, &mut pending, &mut seq)?;
    Ok(n)
}

/// Games finished in generation `generation` by all workers (record files
/// and spools under `root`), each id counted once.
pub fn games_done(root: &Path, generation: u32) -> u64 {
    let prefix = format!("{}-", generation_prefix(generation));
    let mut ids = BTreeSet::new();
    if let Ok(rd) = fs::read_dir(root.join(crate::layout::GAMES)) {
        for e in rd.filter_map(|e| e.ok()) {
            let n = e.file_name().to_string_lossy().to_string();
            if n.starts_with(&prefix) && n.ends_with(".jsonl") {
                // A damaged file counts none: recovery sets it aside with its shard and its games
                // are played again.
                if let Ok(recs) = read_records(&e.path()) {
                    ids.extend(recs.into_iter().map(|r| r.game_id));
                }
            }
        }
    }
    if let Ok(rd) = fs::read_dir(root.join(crate::layout::SPOOL)) {
        for e in rd.filter_map(|e| e.ok()) {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                ids.extend(spool_entries(&e.path()).into_iter().map(|(id, _)| id));
            }
        }
    }
    ids.len() as u64
}

/// Removes the temporaries (`.tmp-<pid>-<name>`) that a killed write left in
/// `dir`; with `prefix`, only those whose `<name>` starts with it.
pub fn remove_temporaries(dir: &Path, prefix: Option<&str>) {
    let Ok(rd) = fs::read_dir(dir) else { return };
    for e in rd.filter_map(|e| e.ok()) {
        let n = e.file_name().to_string_lossy().to_string();
        let Some(rest) = n.strip_prefix(".tmp-") else { continue };
        let name = rest.split_once('-').map(|(_, name)| name).unwrap_or("");
        let mine = match prefix {
            None => true,
            Some(p) => name.starts_with(p),
        };
        if mine && e.path().is_file() {
            let _ = fs::remove_file(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use martian_rules::{EndReason, GameKind};
    use martian_selfplay::record::RECORD_FORMAT_VERSION;

    fn game(id: u64, rows: usize) -> SpooledGame {
        let data = ShardData {
            planes: ndarray::Array4::from_elem((rows, 1, 2, 2), 0.5),
            policy: ndarray::Array2::from_elem((rows, 3), 1.0 / 3.0),
            legal: ndarray::Array2::from_elem((rows, 3), 1),
            value: ndarray::Array1::zeros(rows),
            game_id: ndarray::Array1::from_elem(rows, id as i64),
            ply: ndarray::Array1::from_iter(0..rows as i32),
            weight: ndarray::Array1::ones(rows),
            moves_left: Some(ndarray::Array1::from_iter((1..=rows).rev().map(|x| x as f32))),
            score: Some(ndarray::Array1::from_elem(rows, -2.0)),
            values: None,
        };
        let record = GameRecord {
            format_version: RECORD_FORMAT_VERSION,
            game: GameKind::MartianChess,
            game_id: id,
            start: String::new(),
            moves: Vec::new(),
            winner: None,
            reason: EndReason::Repetition,
            plies: rows as u32,
            samples: rows as u32,
            model: "test".into(),
            contempt: None,
            draw_aversion: None,
            label_scores: Vec::new(),
            rules: None,
        };
        SpooledGame { data, record }
    }

    #[test]
    fn ids_are_unique_per_generation_and_worker_and_skip_finished_games() {
        assert_eq!(game_id(3, worker_tag("0"), 5), (3 << 40) | 5);
        assert_ne!(worker_tag("1"), worker_tag("0"));
        assert_ne!(worker_tag("a"), worker_tag("b"));
        let tags: BTreeSet<u64> = (0..0x8000).map(|i| worker_tag(&format!("i{i}"))).collect();
        assert_eq!(tags.len(), 0x8000, "index workers have distinct tags");
        assert!(!tags.contains(&0));
        // Named workers (and index-like names that are not an index) never take an index worker's tag.
        for name in ["a", "b", "gpu3", "worker_17", "i0032768", "i32768", "i01", "x"]
            .iter()
            .map(|s| s.to_string())
            .chain((0..5000).map(|k| format!("w{k}")))
        {
            let t = worker_tag(&name);
            assert!((1..0x8000).contains(&t), "{name}: tag {t:#x}");
        }
        let dir = tempfile::tempdir().unwrap();
        let out = SelfplayOut::new(dir.path(), 2, "0");
        // Games finish out of order; a kill leaves 0, 1, 2 and 5 done (5 only in the spool).
        let mut pending: Vec<SpooledGame> = [0, 2, 1].iter().map(|&k| game(game_id(2, 0, k), 2)).collect();
        for g in &pending {
            spool_game(&out, g).unwrap();
        }
        let mut seq = 0;
        merge(&out, &mut pending, &mut seq).unwrap();
        spool_game(&out, &game(game_id(2, 0, 5), 2)).unwrap();
        let next = out.next_ids(&out.done_ids().unwrap(), 3).unwrap();
        assert_eq!(next, vec![game_id(2, 0, 3), game_id(2, 0, 4), game_id(2, 0, 6)]);
        assert_eq!(games_done(dir.path(), 2), 4);
        // Another worker's ids never meet worker 0's.
        let other = SelfplayOut::new(dir.path(), 2, "7");
        assert!(other
            .next_ids(&other.done_ids().unwrap(), 3)
            .unwrap()
            .iter()
            .all(|id| !next.contains(id) && id >> 40 == 2));
    }

    #[test]
    fn a_worker_id_is_held_by_one_process_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let lock = WorkerLock::acquire(dir.path(), "3").unwrap();
        let e = WorkerLock::acquire(dir.path(), "3").err().unwrap().to_string();
        assert!(e.contains("already running") && e.contains(&std::process::id().to_string()), "{e}");
        assert!(WorkerLock::acquire(dir.path(), "4").is_ok(), "other workers are free");
        drop(lock);
        let again = WorkerLock::acquire(dir.path(), "3").unwrap();
        drop(again);
        // A lock file left by a process that no longer runs (nobody holds its lock) is taken over.
        fs::write(dir.path().join("workers/w3.lock"), "4294967294").unwrap();
        let taken = WorkerLock::acquire(dir.path(), "3").unwrap();
        let me = std::process::id().to_string();
        assert_eq!(fs::read_to_string(dir.path().join("workers/w3.lock")).unwrap(), me);
        drop(taken);
        assert!(!dir.path().join("workers/w3.lock").exists(), "released: removed");
        // A file naming a running process but not locked (a killed process's pid, reused) is free too.
        fs::write(dir.path().join("workers/w3.lock"), "1").unwrap();
        drop(WorkerLock::acquire(dir.path(), "3").unwrap());
    }

    /// Many threads claim one stale worker id at once, again and again: at most
    /// one holds it at any time (the take-over race of two restarts).
    #[test]
    fn a_stale_claim_taken_over_by_many_at_once_has_one_holder() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let holders = Arc::new(AtomicUsize::new(0));
        let wins = Arc::new(AtomicUsize::new(0));
        for _ in 0..20 {
            fs::create_dir_all(dir.path().join("workers")).unwrap();
            fs::write(dir.path().join("workers/w5.lock"), "4294967294").unwrap();
            let threads: Vec<_> = (0..8)
                .map(|_| {
                    let (root, holders, wins) = (dir.path().to_path_buf(), holders.clone(), wins.clone());
                    std::thread::spawn(move || {
                        if let Ok(lock) = WorkerLock::acquire(&root, "5") {
                            assert_eq!(holders.fetch_add(1, Ordering::SeqCst), 0, "two holders at once");
                            wins.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(std::time::Duration::from_millis(2));
                            holders.fetch_sub(1, Ordering::SeqCst);
                            drop(lock);
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
        }
        assert!(wins.load(Ordering::SeqCst) >= 20, "each round has a holder");
    }

    #[test]
    fn recovery_repairs_every_kill_point_of_a_merge() {
        let dir = tempfile::tempdir().unwrap();
        let out = SelfplayOut::new(dir.path(), 1, "0");
        let (a, b, c) = (game_id(1, 0, 0), game_id(1, 0, 1), game_id(1, 0, 2));
        for id in [a, b, c] {
            spool_game(&out, &game(id, 3)).unwrap();
        }
        // Killed after writing shard 0 but before its record file: the shard goes, the spool stays.
        let data = ShardData::concat(&[&game(a, 3).data, &game(b, 3).data]).unwrap();
        write_shard(&out.shards.join("gen0001-w0-000000.npz"), &data).unwrap();
        // A sample file whose record was never written, and a temporary.
        write_shard(&out.spool.join("999.npz"), &game(999, 1).data).unwrap();
        fs::write(out.shards.join(format!(".tmp-1-{}-000001.npz", out.prefix)), b"partial").unwrap();
        let pending = recover(&out, [1, 2, 2], 3).unwrap();
        assert!(!out.shards.join("gen0001-w0-000000.npz").exists(), "orphan shard removed");
        assert!(!out.spool.join("999.npz").exists(), "sample file without record removed");
        assert_eq!(fs::read_dir(&out.shards).unwrap().count(), 0, "temporary removed");
        let ids: Vec<u64> = pending.iter().map(|g| g.record.game_id).collect();
        assert_eq!(ids, vec![a, b, c]);
        // Killed after the record file but before the spool was cleared: spool entries go.
        let mut first: Vec<SpooledGame> = pending.into_iter().take(2).collect();
        let mut seq = 0;
        let keep = (out.spool.join(format!("{a}.json")), out.spool.join(format!("{a}.npz")));
        let saved = (fs::read(&keep.0).unwrap(), fs::read(&keep.1).unwrap());
        merge(&out, &mut first, &mut seq).unwrap();
        fs::write(&keep.0, saved.0).unwrap();
        fs::write(&keep.1, saved.1).unwrap();
        let pending = recover(&out, [1, 2, 2], 3).unwrap();
        assert_eq!(pending.iter().map(|g| g.record.game_id).collect::<Vec<_>>(), vec![c]);
        assert!(!keep.0.exists() && !keep.1.exists());
        assert_eq!(out.done_ids().unwrap().into_iter().collect::<Vec<_>>(), vec![a, b, c]);
        assert_eq!(out.next_seq(), 1);
    }

    /// A record file or shard that no longer reads (truncated) is set aside
    /// with its partner, and its games are no longer done: they are played
    /// again with the same ids, into a shard that reads.
    #[test]
    fn damaged_shards_and_record_files_are_set_aside_and_their_games_replayed() {
        for damage_record in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let out = SelfplayOut::new(dir.path(), 1, "0");
            let ids: Vec<u64> = (0..4).map(|k| game_id(1, 0, k)).collect();
            let mut seq = 0;
            for pair in ids.chunks(2) {
                let mut pending: Vec<SpooledGame> = pair.iter().map(|&id| game(id, 3)).collect();
                merge(&out, &mut pending, &mut seq).unwrap();
            }
            let (record, shard) = (out.games.join("gen0001-w0-000001.jsonl"), out.shards.join("gen0001-w0-000001.npz"));
            let victim = if damage_record { &record } else { &shard };
            let bytes = fs::read(victim).unwrap();
            fs::write(victim, &bytes[..bytes.len() - 5]).unwrap(); // mid-line, and without the zip directory
            assert_eq!(games_done(dir.path(), 1), if damage_record { 2 } else { 4 });
            let pending = recover(&out, [1, 2, 2], 3).unwrap();
            assert!(pending.is_empty());
            assert!(!record.exists() && !shard.exists(), "both set aside");
            assert!(out.games.join("gen0001-w0-000001.jsonl.damaged").exists());
            assert!(out.shards.join("gen0001-w0-000001.npz.damaged").exists());
            let done = out.done_ids().unwrap();
            assert_eq!(done.iter().copied().collect::<Vec<_>>(), ids[..2].to_vec());
            assert_eq!(games_done(dir.path(), 1), 2);
            assert_eq!(out.next_ids(&done, 2).unwrap(), ids[2..].to_vec(), "the same ids again");
            assert_eq!(out.next_seq(), 1);
            let play_again = || {
                let mut pending: Vec<SpooledGame> = ids[2..].iter().map(|&id| game(id, 3)).collect();
                merge(&out, &mut pending, &mut out.next_seq()).unwrap();
            };
            // Played again: the new pair reads, and a second damage of the same
            // name is set aside beside the first.
            play_again();
            assert_eq!(games_done(dir.path(), 1), 4);
            fs::write(&record, b"{").unwrap();
            recover(&out, [1, 2, 2], 3).unwrap();
            assert!(out.games.join("gen0001-w0-000001.jsonl.damaged-2").exists());
            assert_eq!(games_done(dir.path(), 1), 2);
            // A record file cut at a line end parses, but its shard holds the lost game's
            // samples: set aside too.
            play_again();
            let text = fs::read_to_string(&record).unwrap();
            fs::write(&record, text.lines().next().unwrap().to_string() + "\n").unwrap();
            assert_eq!(games_done(dir.path(), 1), 3);
            recover(&out, [1, 2, 2], 3).unwrap();
            assert!(out.games.join("gen0001-w0-000001.jsonl.damaged-3").exists());
            assert_eq!(games_done(dir.path(), 1), 2);
            // Another shard under the record file's name (a game's samples counted
            // differently): set aside too.
            play_again();
            let other = ShardData::concat(&[&game(ids[2], 2).data, &game(ids[3], 3).data]).unwrap();
            write_shard(&shard, &other).unwrap();
            recover(&out, [1, 2, 2], 3).unwrap();
            assert!(out.shards.join("gen0001-w0-000001.npz.damaged-4").exists());
            assert_eq!(games_done(dir.path(), 1), 2);
        }
    }
}
