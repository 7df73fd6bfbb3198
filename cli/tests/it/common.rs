//! Helpers shared by the command-line tests: running the binary, its output
//! as text, and the small configs the tests start from. A module of both test
//! binaries (`tests/it` and, by path, `tests/browser`), each using part of it.
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Which micro run [`micro`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// One thread, one generation of two games (three in flight, six
    /// simulations, two of them cheap, four a shard), one pair of evaluation
    /// games, no final evaluation, everything else at its default: a run
    /// directory or a network to start from in a second.
    Tiny,
    /// A pipeline of two generations of four games (two threads, eight
    /// simulations, some searches cheap, two games a shard), six AdamW steps a
    /// generation, a gate that always promotes, a ladder of depth-1 and
    /// depth-2 alpha-beta every second generation and a final evaluation: a
    /// few seconds a generation.
    Pipeline,
}

/// The config of a micro run of `game` with `seed`: a network of one block of
/// 8 channels and `size`'s games, training and evaluation, one key a line (so
/// that [`edited`] changes or removes any of them). The tests build every
/// config they run from it.
pub fn micro(size: Size, game: &str, seed: u64) -> String {
    let (threads, rest) = match size {
        Size::Tiny => (
            1,
            r#"[selfplay]
games_in_flight = 3
simulations = 6
cheap_simulations = 2
games_per_shard = 4
[train]
batch_size = 16
[evaluate]
pairs = 1
simulations = 2
final_pairs = 0
[pipeline]
generations = 1
games_per_generation = 2
"#,
        ),
        Size::Pipeline => (
            2,
            r#"[search]
leaves_per_batch = 2
[selfplay]
games_in_flight = 4
simulations = 8
cheap_simulations = 2
full_search_prob = 0.5
games_per_shard = 2
[train]
batch_size = 16
steps_per_generation = 6
replay_window = 2000
log_every = 2
checkpoint_every = 3
optimizer = "adamw"
learning_rate = 0.001
[evaluate]
pairs = 1
simulations = 4
gate_score = 0.0
final_pairs = 1
ladder = ["alphabeta:depth=1", "alphabeta:depth=2"]
ladder_every = 2
ladder_pairs = 1
[pipeline]
generations = 2
games_per_generation = 4
"#,
        ),
    };
    format!(
        "game = \"{game}\"\nseed = {seed}\nthreads = {threads}\n\
         [model]\nblocks = 1\nchannels = 8\npolicy_channels = 2\nvalue_hidden = 8\n{rest}"
    )
}

/// Holds libtorch's process-wide random generator for the caller: the tests
/// of one binary share a process, so a test that seeds the generator
/// (`Checkpoint::new_random`) and draws from it, or that draws from it at all
/// (any network built in the test's process, a loaded one included: its
/// initial weights are drawn before the file's replace them), holds this
/// while it does, or another test's draws would change its weights.
pub fn torch_rng() -> std::sync::MutexGuard<'static, ()> {
    static GENERATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that panicked while holding it left the generator as usable as any.
    GENERATOR.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `martian-zero args` and returns its output.
pub fn mz(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_martian-zero")).args(args).output().expect("run martian-zero")
}

/// Runs `martian-zero args` with `input` on stdin.
pub fn mz_stdin(args: &[&str], input: &str) -> Output {
    mz_stdin_bytes(args, input.as_bytes())
}

/// Runs `martian-zero args` with `input` (any bytes, not only UTF-8) on stdin.
pub fn mz_stdin_bytes(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_martian-zero"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run martian-zero");
    child.stdin.take().expect("stdin").write_all(input).expect("write stdin");
    child.wait_with_output().expect("wait")
}

/// The standard output of `o` as text.
pub fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The standard error of `o` as text.
pub fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `text` to `path` and returns the path as a string.
pub fn write(path: &Path, text: &str) -> String {
    std::fs::write(path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// `toml` (one key per line) with each `("section.key", "value")` of `set`
/// replacing that key's line, or added at the end of its section (a missing
/// section goes before the first one), and each key of `unset` (which must be
/// there) removed, with its section when no key is left in it; a key without a
/// section is a top-level one.
pub fn edited(toml: &str, set: &[(&str, &str)], unset: &[&str]) -> String {
    let mut lines: Vec<String> = toml.lines().map(String::from).collect();
    // The lines of `section` ("" for the top level): from its first line to the next header.
    let span = |lines: &[String], section: &str| -> Option<(usize, usize)> {
        let start =
            if section.is_empty() { 0 } else { lines.iter().position(|l| l.trim() == format!("[{section}]"))? + 1 };
        let end = lines[start..].iter().position(|l| l.starts_with('[')).map_or(lines.len(), |i| start + i);
        Some((start, end))
    };
    let find = |lines: &[String], path: &str| -> Option<usize> {
        let (section, key) = path.rsplit_once('.').unwrap_or(("", path));
        let (start, end) = span(lines, section)?;
        (start..end).find(|&i| lines[i].split_once('=').is_some_and(|(k, _)| k.trim() == key))
    };
    for &(path, value) in set {
        let (section, key) = path.rsplit_once('.').unwrap_or(("", path));
        let line = format!("{key} = {value}");
        if let Some(i) = find(&lines, path) {
            lines[i] = line;
        } else if let Some((_, end)) = span(&lines, section) {
            lines.insert(end, line);
        } else {
            let (_, first) = span(&lines, "").unwrap();
            lines.splice(first..first, [format!("[{section}]"), line]);
        }
    }
    for &path in unset {
        let i = find(&lines, path).unwrap_or_else(|| panic!("no {path} to remove"));
        lines.remove(i);
        // A section left without keys goes too.
        if let Some((start, end)) = path.rsplit_once('.').and_then(|(section, _)| span(&lines, section)) {
            if start == end {
                lines.remove(start - 1);
            }
        }
    }
    let mut text = lines.join("\n");
    if toml.ends_with('\n') {
        text.push('\n');
    }
    text
}

/// Copies the directory `from` to `to`, recursively (a run directory a test damages or resumes).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// A tiny random network for `G` (1 block of 8 channels), seeded with
/// `seed` under [`torch_rng`] (so its weights do not depend on other tests),
/// saved as `dir/net.safetensors` with its sidecar; returns the path.
pub fn tiny_checkpoint<G: martian_rules::GameState>(dir: &Path, seed: i64) -> std::path::PathBuf {
    let cfg = martian_model::ModelConfig {
        blocks: 1,
        channels: 8,
        batch_norm: true,
        global_pooling: false,
        policy_channels: 2,
        value_hidden: 8,
        ..Default::default()
    };
    let ck = {
        let _rng = torch_rng();
        martian_model::Checkpoint::new_random::<G>(&Default::default(), &cfg, tch::Device::Cpu, seed).expect("net")
    };
    let weights = dir.join("net.safetensors");
    ck.save(&weights).expect("save");
    weights
}
