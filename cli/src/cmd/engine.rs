//! `martian-zero engine`: a UCI-like line protocol on stdin/stdout
//! (`docs/protocol.md`).
//!
//! Three threads:
//! * a reader thread turns stdin into lines (invalid UTF-8 is replaced, never
//!   fatal) and sends them over a channel, then `Eof`;
//! * the main thread runs the commands, in order;
//! * a search thread, started with the engine, owns the network (it runs two
//!   warm-up evaluations first) and runs the search of each `go` (MCTS or
//!   alpha-beta, a [`martian_search::Session`], as `play` and `analyse`): it
//!   prints the session's infos as `info` lines and the one `bestmove`, then
//!   sends `SearchDone` over the reader's channel.
//!
//! While a search runs, the main thread keeps reading: `hello` and `isready`
//! are answered at once; `stop` and `quit` that are the next command raise the
//! search's stop flag (the search ends within one batch, or a few hundred
//! alpha-beta nodes, and prints its `bestmove`; `quit` then exits); other
//! commands, and end of input, wait until the search has ended and then run in
//! order (a `stop` or `quit` queued behind them waits its turn). Once the stop
//! flag is up, every command waits for the `bestmove`, so that answers come in
//! the order of the commands (`stop`, `isready`: `bestmove`, then `readyok`).

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use martian_model::{Checkpoint, NetEvaluator};
use martian_rules::{with_game, GameKind, GameState};
use martian_search::{
    line_text, AbGame, AlphaBeta, AlphaBetaConfig, End, Evaluator, Info, MctsConfig, Pace, SearchLimits, Session,
    UniformEvaluator,
};
use tch::Device;

/// Arguments of `engine`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    rules: super::RulesArgs,
    /// Network for MCTS: an exported bundle directory (model.json +
    /// model.safetensors), a checkpoint `.safetensors` with its `.json` sidecar,
    /// or a run directory (its promoted checkpoint). Its rules are used.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Engine without a network: `mcts-uniform` (MCTS with equal priors and
    /// value 0) or `alphabeta` (the alpha-beta baseline with its hand-written
    /// evaluation). Default: `mcts` with `--model`, else `mcts-uniform`.
    #[arg(long)]
    engine: Option<String>,
    /// Game selected at start (default: the model's game; else none until `game`).
    #[arg(long, value_parser = crate::game_parser())]
    game: Option<GameKind>,
    /// Device for the network: auto, cpu, cuda, cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    /// Visits of a bare `go` (at least 1).
    #[arg(long, default_value_t = 800, value_parser = clap::value_parser!(u32).range(1..))]
    visits: u32,
    /// Strength level of the MCTS engine, 1 (weakest) to 6: a bare `go` searches
    /// the level's visits and `bestmove` is drawn at its move-choice temperature
    /// (seeded: the same position and commands give the same move).
    /// `docs/levels.md` gives each level's measured Elo. Instead of --visits.
    #[arg(long, conflicts_with = "visits")]
    level: Option<u32>,
    #[command(flatten)]
    search: super::SearchArgs,
    /// Leaves gathered per network batch (MCTS with virtual loss; 1 = sequential), 1..=256.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=256))]
    batch: u32,
    /// A search stops when its tree holds this many nodes (bounds memory), at least 1000.
    #[arg(long, default_value_t = 10_000_000, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1000..))]
    max_nodes: usize,
    /// Interval between `info` lines during a search, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    info_ms: u64,
}

/// A position of any game, as the search thread sees it: what `go` needs,
/// without naming the game. Every [`AbGame`] is one (a blanket impl), so a new
/// game needs no code here; [`new_table`] is the one dispatch.
trait Position: Send {
    /// `info string game over ...` and `bestmove none` when the game is over.
    fn game_over_lines(&self) -> Option<Vec<String>>;
    /// Two evaluations of the position with the network (see [`Worker::start`]).
    fn warm(&self, net: &Net, device: Device, threads: usize, pace: &mut Pace);
    /// Runs the search of `job` on this position: `info` lines and one `bestmove`.
    fn search(&self, job: &Job, net: Option<&Net>, pace: &mut Pace, out: &mut Out);
}

impl<G: AbGame> Position for G {
    fn game_over_lines(&self) -> Option<Vec<String>> {
        self.outcome().map(|o| game_over_lines(self, o))
    }

    fn warm(&self, net: &Net, device: Device, threads: usize, pace: &mut Pace) {
        warm::<G>(net, self, device, threads, pace)
    }

    fn search(&self, job: &Job, net: Option<&Net>, pace: &mut Pace, out: &mut Out) {
        let s = &job.settings;
        if s.alphabeta {
            let ab = AlphaBeta::<G>::new(AlphaBetaConfig::default());
            return job.run(Session::alphabeta(ab, self.clone()), pace, out);
        }
        let config = MctsConfig { leaves_per_batch: s.batch, ..MctsConfig::default() };
        match net {
            Some(n) => {
                let ev = NetEvaluator::<G>::new(&n.ck.net, s.device, s.batch as usize);
                job.run_checked(Session::mcts(config, ev, self.clone()).with_temperature(s.temperature, 1), pace, out)
            }
            None => job.run_checked(
                Session::mcts(config, UniformEvaluator, self.clone()).with_temperature(s.temperature, 1),
                pace,
                out,
            ),
        }
    }
}

/// The engine's table: the selected game's rules and current position, for any
/// game (each `go` searches a copy with a `martian_search::Session`).
trait Table: Send {
    /// Sets the initial position.
    fn new_game(&mut self) -> std::result::Result<(), String>;
    /// `position startpos|fen ... [moves ...]`; on an error the position is cleared.
    fn set_position(&mut self, args: &[&str]) -> std::result::Result<(), String>;
    /// Lines for `show`.
    fn describe(&self) -> Vec<String>;
    /// A copy of the current position for the search thread (`None`: no position).
    fn snapshot(&self) -> Option<Box<dyn Position>>;
}

/// [`Table`] of the game `G`.
struct GameTable<G: AbGame> {
    rules: G::Rules,
    pos: Option<G>,
}

impl<G: AbGame> Table for GameTable<G> {
    fn new_game(&mut self) -> std::result::Result<(), String> {
        self.pos = Some(G::new_game(&self.rules).map_err(|e| e.to_string())?);
        Ok(())
    }

    fn set_position(&mut self, args: &[&str]) -> std::result::Result<(), String> {
        self.pos = None;
        self.pos = Some(parse_position::<G>(&self.rules, args)?);
        Ok(())
    }

    fn describe(&self) -> Vec<String> {
        match &self.pos {
            None => vec!["no position".to_string()],
            Some(s) => describe(s),
        }
    }

    fn snapshot(&self) -> Option<Box<dyn Position>> {
        self.pos.clone().map(|s| Box::new(s) as Box<dyn Position>)
    }
}

/// The table of game `g` under `rules` (the model's rules as JSON; `None`:
/// the game's defaults) with the `--rules` switches `switches`, at its
/// initial position.
///
/// # Errors
/// Rules that do not parse as `g`'s, or that `g` does not implement; switches
/// that are unknown or differ from the model's
/// ([`martian_run::checkpoints::rules_with_switches`]).
fn new_table(
    g: GameKind,
    rules: Option<&serde_json::Value>,
    switches: Option<&str>,
) -> std::result::Result<Box<dyn Table>, String> {
    with_game!(g, G => {
        let rules = martian_run::checkpoints::rules_with_switches::<G>(rules, "the model", switches)
            .map_err(|e| format!("{e:#}"))?;
        let mut s = GameTable::<G> { rules, pos: None };
        s.new_game()?;
        Ok(Box::new(s) as Box<dyn Table>)
    })
}

/// The loaded network.
struct Net {
    game: GameKind,
    ck: Checkpoint,
    source: String,
}

/// What the main loop does after a command.
#[derive(PartialEq, Eq)]
enum Flow {
    Continue,
    Quit,
}

/// A message to the main thread: a line from stdin, its end, or the end of
/// the running search.
enum Input {
    Line(String),
    Eof,
    SearchDone {
        /// stdout is gone.
        broken: bool,
        /// The search panicked (the message is on stderr).
        panicked: bool,
    },
}

/// The engine's settings, shared by every search.
#[derive(Clone, Copy)]
struct Settings {
    alphabeta: bool,
    device: Device,
    default_visits: u32,
    /// Move-choice temperature of `--level` (0 = the best move).
    temperature: f32,
    /// Plies of the play-time check (`--veto-depth`; 0 = none).
    veto_depth: u32,
    batch: u32,
    max_nodes: usize,
    info_every: Duration,
}

/// One search, sent to the search thread.
struct Job {
    pos: Box<dyn Position>,
    /// As `go` gave them (`visits`, `movetime`, `depth`; see [`Job::limits`]).
    limits: SearchLimits,
    settings: Settings,
    /// When `go` arrived: `movetime` counts from here.
    start: Instant,
    /// Raised by the main thread (`stop`, `quit`, stdout gone).
    stop: Arc<AtomicBool>,
}

/// Sends `SearchDone` when dropped: also when the search panics, so the main
/// thread never waits for a search that has gone.
struct DoneGuard {
    tx: Sender<Input>,
    broken: bool,
}

impl Drop for DoneGuard {
    fn drop(&mut self) {
        let _ = self.tx.send(Input::SearchDone { broken: self.broken, panicked: std::thread::panicking() });
    }
}

/// The search thread: it takes jobs from `jobs` until the engine exits.
struct Worker {
    jobs: Sender<Job>,
}

impl Worker {
    /// Starts the search thread with the network (if any) and its libtorch
    /// threads (`--threads`, set on that thread:
    /// [`martian_run::runtime::set_torch_threads`]); with `warm_up`, it
    /// evaluates that position twice before it takes jobs (libtorch's first
    /// passes allocate and initialise, [`martian_run::runtime::warm_up`]; the
    /// second measures the evaluation speed for `movetime`). Returns when the
    /// warm-up is done.
    fn start(
        net: Option<Net>,
        device: Device,
        threads: usize,
        warm_up: Option<Box<dyn Position>>,
        done: Sender<Input>,
    ) -> Result<Worker> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("search".into())
            .spawn(move || {
                let mut pace = Pace::default();
                martian_run::runtime::set_torch_threads(threads);
                if let (Some(n), Some(p)) = (&net, &warm_up) {
                    p.warm(n, device, threads, &mut pace);
                }
                let _ = ready_tx.send(());
                for job in rx {
                    let mut guard = DoneGuard { tx: done.clone(), broken: false };
                    guard.broken = job.search(net.as_ref(), &mut pace);
                }
            })
            .context("starting the search thread")?;
        let _ = ready_rx.recv();
        Ok(Worker { jobs })
    }
}

/// Two evaluations of `s` (see [`Worker::start`]); errors are left to the searches.
fn warm<G: GameState>(n: &Net, s: &G, device: Device, threads: usize, pace: &mut Pace) {
    use martian_run::runtime::warm_up;
    if warm_up(&n.ck.net, device, threads, s).is_ok() {
        if let Ok(t) = warm_up(&n.ck.net, device, threads, s) {
            pace.record(1, t);
        }
    }
}

struct Engine {
    name: &'static str,
    /// The game of the network, if any (the network itself lives on the search thread).
    model_game: Option<GameKind>,
    worker: Worker,
    settings: Settings,
    /// The rules of the network's game, as its checkpoint stores them.
    model_rules: Option<serde_json::Value>,
    /// `--rules`: switches set on every game's rules (`None`: the model's, else the defaults).
    rules_switches: Option<String>,
    /// The selected game and its position (`None` until `game` or `--game`).
    table: Option<Box<dyn Table>>,
    /// The answer to `hello`: `info string` lines, then the `ready` line.
    hello_lines: Vec<String>,
    /// Set when stdout is gone: the engine then exits.
    broken: bool,
    /// Set when a search panicked: the engine then exits with this error.
    failed: Option<String>,
}

/// Longest input line read (1 MiB): a longer one is answered with an error
/// and skipped without being held in memory (an endless line would otherwise
/// grow the process without limit).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What the reader passes for an overlong line, followed by its length; no
/// line read from stdin can start with it (a NUL byte).
const OVERLONG: &str = "\u{0}overlong";

/// Reads one line (through `\n`) into `buf`, keeping at most `max` bytes;
/// returns the bytes consumed and whether the line was longer than `max`.
pub(crate) fn read_line_bounded(r: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> std::io::Result<(usize, bool)> {
    let mut total = 0;
    loop {
        let avail = match r.fill_buf() {
            Ok(a) => a,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail.is_empty() {
            return Ok((total, total > max));
        }
        let (take, done) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (avail.len(), false),
        };
        let room = max.saturating_sub(buf.len());
        buf.extend_from_slice(&avail[..take.min(room)]);
        r.consume(take);
        total += take;
        if done {
            return Ok((total, total > max));
        }
    }
}

/// Runs `engine`.
pub fn run(a: Args) -> Result<()> {
    let (tx, rx) = mpsc::channel::<Input>();
    let mut engine = Engine::new(&a, tx.clone())?;
    let reader_tx = tx.clone();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_line_bounded(&mut lock, &mut buf, MAX_LINE_BYTES) {
                Ok((0, _)) | Err(_) => {
                    let _ = reader_tx.send(Input::Eof);
                    return;
                }
                Ok((n, overlong)) => {
                    let line = if overlong {
                        // Kept bounded in memory: the line is answered with an error, not read.
                        format!("{OVERLONG} {n}")
                    } else {
                        String::from_utf8_lossy(&buf).into_owned()
                    };
                    if reader_tx.send(Input::Line(line)).is_err() {
                        return;
                    }
                }
            }
        }
    });
    let mut queue: VecDeque<Input> = VecDeque::new();
    loop {
        let input = match queue.pop_front() {
            Some(i) => i,
            None => rx.recv().unwrap_or(Input::Eof),
        };
        let line = match input {
            Input::Line(l) if l.starts_with(OVERLONG) => {
                let n = l[OVERLONG.len()..].trim();
                engine.error(&format!("a line of {n} bytes is longer than {MAX_LINE_BYTES}; ignored"));
                continue;
            }
            Input::Line(l) => l,
            Input::Eof => break,
            Input::SearchDone { .. } => continue, // only sent while `go` waits for it
        };
        let flow = engine.handle(&line, &rx, &mut queue);
        if let Some(e) = engine.failed.take() {
            bail!(e);
        }
        if flow == Flow::Quit || engine.broken {
            break;
        }
    }
    Ok(())
}

/// Writes one line to stdout and flushes; false when stdout is gone. Each line
/// is written under the stdout lock, so the main and search threads never mix
/// parts of lines.
fn write_line(line: &str) -> bool {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|_| out.flush()).is_ok()
}

/// `text` shortened and escaped for an error message (one line, at most 60 characters).
fn quote(text: &str) -> String {
    let mut s: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        s.push_str("...");
    }
    format!("{s:?}")
}

/// An error message on one line.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A game name of the registry ([`GameKind::name`]), or `martian` for `martian-chess`.
fn parse_game(name: &str) -> Option<GameKind> {
    match name {
        "martian" => Some(GameKind::MartianChess),
        _ => name.parse().ok(),
    }
}

/// Loads the network of `--model` (a checkpoint, a bundle or a run directory)
/// with the rules it was trained under.
fn load_net(path: &Path, device: Device) -> Result<(Net, serde_json::Value)> {
    let m = martian_run::checkpoints::load_model(path, device)?;
    Ok((Net { game: m.game, ck: m.ck, source: m.source.display().to_string() }, m.rules))
}

impl Engine {
    fn new(a: &Args, done: Sender<Input>) -> Result<Engine> {
        let mut model_rules = None;
        // Without --model and --engine, a game given with --game plays with its
        // bundled model when it has one (`--model none`: without a network).
        let model = martian_run::checkpoints::chosen_model(
            a.model.as_deref(),
            a.game,
            a.engine.is_none(),
            a.rules.rules.as_deref(),
        );
        let (name, net, device) = match (a.engine.as_deref(), &model) {
            (None | Some("mcts"), Some(path)) => {
                let device = martian_model::parse_device(&a.device)?;
                let (net, rules) = load_net(path, device)?;
                model_rules = Some(rules);
                ("mcts", Some(net), device)
            }
            (Some("mcts"), None) => {
                bail!("--engine mcts needs --model (or use --engine mcts-uniform)")
            }
            (None | Some("mcts-uniform"), None) => ("mcts-uniform", None, Device::Cpu),
            (Some("alphabeta"), None) => ("alphabeta", None, Device::Cpu),
            (Some(e), Some(_)) => {
                bail!("--model is used by the mcts engine; --engine {e} takes no model")
            }
            (Some(e), None) => bail!("unknown engine {e:?}: expected mcts (with --model), mcts-uniform or alphabeta"),
        };
        let level = a.level.map(martian_search::Level::get).transpose().map_err(|e| anyhow::anyhow!("--level: {e}"))?;
        if level.is_some() && name == "alphabeta" {
            bail!("--level sets the MCTS engine's search; --engine alphabeta does not use it");
        }
        if a.search.veto_depth > 0 && name == "alphabeta" {
            bail!("--veto-depth checks the MCTS engine's moves; --engine alphabeta does not use it");
        }
        let mut game = a.game.or(net.as_ref().map(|n| n.game));
        if let (Some(g), Some(n)) = (game, &net) {
            if g != n.game {
                bail!("--game {g} but the model plays {}", n.game);
            }
            game = Some(g);
        }
        let games = match &net {
            Some(n) => n.game.name().to_string(),
            None => GameKind::names().join(","),
        };
        let model = net.as_ref().map(|n| format!(" model {}", n.source.replace(char::is_whitespace, "_")));
        let device_line = match &net {
            Some(_) => format!(
                "info string device {} torch_threads {} search_threads 1",
                martian_run::runtime::device_name(device),
                martian_run::runtime::torch_threads(a.search.threads as usize)
            ),
            None => "info string device none (no network) search_threads 1".to_string(),
        };
        let mut hello_lines = vec![device_line];
        if name == "alphabeta" {
            // The baseline is a versioned yardstick (the strength ladder's): say which version plays.
            hello_lines.push(format!("info string alphabeta version {}", martian_search::ALPHABETA_VERSION));
        }
        hello_lines.push(format!(
            "ready id martian-zero version {} engine {name} games {games}{}",
            env!("CARGO_PKG_VERSION"),
            model.unwrap_or_default()
        ));
        let model_game = net.as_ref().map(|n| n.game);
        let warm_up = match model_game {
            Some(g) => {
                new_table(g, model_rules.as_ref(), a.rules.rules.as_deref()).map_err(anyhow::Error::msg)?.snapshot()
            }
            None => None,
        };
        let worker = Worker::start(net, device, a.search.threads as usize, warm_up, done)?;
        let mut e = Engine {
            hello_lines,
            name,
            model_game,
            worker,
            settings: Settings {
                alphabeta: name == "alphabeta",
                device,
                default_visits: level.map_or(a.visits.max(1), |l| l.visits),
                temperature: level.map_or(0.0, |l| l.temperature),
                veto_depth: a.search.veto_depth,
                batch: a.batch.clamp(1, 256),
                max_nodes: a.max_nodes.max(1000),
                info_every: Duration::from_millis(a.info_ms.max(10)),
            },
            model_rules,
            rules_switches: a.rules.rules.clone(),
            table: None,
            broken: false,
            failed: None,
        };
        if let Some(g) = game {
            e.set_game(g).map_err(anyhow::Error::msg)?;
        }
        Ok(e)
    }

    fn say(&mut self, line: &str) {
        if !write_line(line) {
            self.broken = true;
        }
    }

    fn error(&mut self, msg: &str) {
        let line = format!("error {}", one_line(msg));
        self.say(&line);
    }

    fn hello(&mut self) {
        for line in self.hello_lines.clone() {
            self.say(&line);
        }
    }

    fn handle(&mut self, line: &str, rx: &Receiver<Input>, queue: &mut VecDeque<Input>) -> Flow {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let Some((&cmd, args)) = tokens.split_first() else {
            return Flow::Continue;
        };
        match cmd {
            "hello" => self.hello(),
            "isready" => self.say("readyok"),
            "quit" => return Flow::Quit,
            "stop" => {} // no search running
            "game" => match args {
                [name] => match parse_game(name) {
                    Some(g) => {
                        if let Err(e) = self.set_game(g) {
                            self.error(&e);
                        }
                    }
                    None => {
                        self.error(&format!("unknown game {}: expected {}", quote(name), GameKind::names().join(", ")))
                    }
                },
                _ => self.error(&format!("usage: game {}", GameKind::names().join("|"))),
            },
            "position" => {
                if let Err(e) = self.position(args) {
                    self.error(&e);
                }
            }
            "go" => return self.go(args, rx, queue),
            "show" => self.show(),
            _ => self.error(&format!("unknown command {}", quote(cmd))),
        }
        Flow::Continue
    }

    fn set_game(&mut self, g: GameKind) -> std::result::Result<(), String> {
        if let Some(m) = self.model_game {
            if m != g {
                return Err(format!("the model plays {m}, not {g}"));
            }
        }
        let rules = if self.model_game == Some(g) { self.model_rules.as_ref() } else { None };
        self.table = Some(new_table(g, rules, self.rules_switches.as_deref())?);
        Ok(())
    }

    fn position(&mut self, args: &[&str]) -> std::result::Result<(), String> {
        let Some(table) = self.table.as_mut() else {
            return Err(format!("no game selected: send game {} first", GameKind::names().join("|")));
        };
        table.set_position(args)
    }

    fn show(&mut self) {
        let lines = match &self.table {
            None => vec!["no position".to_string()],
            Some(s) => s.describe(),
        };
        for l in lines {
            self.say(format!("info string {l}").trim_end());
        }
    }

    /// `go`: checks the limits and the position, hands the search to the
    /// search thread and serves input until it has ended (see the module docs).
    /// A search that starts always prints exactly one `bestmove`.
    fn go(&mut self, args: &[&str], rx: &Receiver<Input>, queue: &mut VecDeque<Input>) -> Flow {
        let start = Instant::now();
        let limits = match parse_go(args) {
            Ok(l) => l,
            Err(e) => {
                self.error(&e);
                return Flow::Continue;
            }
        };
        let Some(pos) = self.table.as_ref().and_then(|s| s.snapshot()) else {
            self.error("no position: send position startpos|fen ... first");
            return Flow::Continue;
        };
        if !self.settings.alphabeta && limits.depth.is_some() {
            self.error(&format!(
                "go depth is not supported by the {} engine; use go visits N or go movetime MS",
                self.name
            ));
            return Flow::Continue;
        }
        if let Some(lines) = pos.game_over_lines() {
            for l in lines {
                self.say(&l);
            }
            return Flow::Continue;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let job = Job { pos, limits, settings: self.settings, start, stop: Arc::clone(&stop) };
        if self.worker.jobs.send(job).is_err() {
            // Only after a panic, which ends the engine.
            self.failed = Some("the search thread has stopped".into());
            return Flow::Quit;
        }
        let (quit, broken, panicked) = self.wait_for_search(&stop, rx, queue);
        self.broken |= broken;
        if panicked {
            self.failed = Some("the search failed (panic; see above)".into());
            return Flow::Quit;
        }
        if quit {
            Flow::Quit
        } else {
            Flow::Continue
        }
    }

    /// Serves input while a search runs, until it sends `SearchDone`. Returns
    /// whether `quit` ended it, and the search's `broken` and `panicked`.
    fn wait_for_search(
        &mut self,
        stop: &AtomicBool,
        rx: &Receiver<Input>,
        queue: &mut VecDeque<Input>,
    ) -> (bool, bool, bool) {
        let mut quit = false;
        loop {
            // The commands at the head of the queue that act on a running search
            // (once it is stopping, everything waits for its `bestmove`, so the
            // answers keep the order of the commands).
            while !stop.load(Ordering::Relaxed) {
                let Some(Input::Line(l)) = queue.front() else { break };
                match l.split_whitespace().next() {
                    None => {}
                    Some("stop") => stop.store(true, Ordering::Relaxed),
                    Some("quit") => {
                        stop.store(true, Ordering::Relaxed);
                        quit = true;
                    }
                    Some("hello") => self.hello(),
                    Some("isready") => self.say("readyok"),
                    Some(_) => break,
                }
                queue.pop_front();
            }
            if self.broken {
                stop.store(true, Ordering::Relaxed);
            }
            match rx.recv() {
                Ok(Input::SearchDone { broken, panicked }) => return (quit, broken, panicked),
                Err(_) => return (quit, false, true),
                Ok(Input::Line(l)) => match l.split_whitespace().next() {
                    // Answered at once, even behind queued commands.
                    Some("hello") if !stop.load(Ordering::Relaxed) => self.hello(),
                    Some("isready") if !stop.load(Ordering::Relaxed) => self.say("readyok"),
                    _ => queue.push_back(Input::Line(l)),
                },
                // End of input: the search runs to its limits, prints its
                // `bestmove`, then the queued commands run and the engine exits.
                Ok(Input::Eof) => queue.push_back(Input::Eof),
            }
        }
    }
}

/// `info string game over ...` and `bestmove none` for a finished game.
fn game_over_lines<G: GameState>(s: &G, o: martian_rules::Outcome) -> Vec<String> {
    let result = result_text(s);
    vec![format!("info string game over: {result} ({})", o.reason), "bestmove none".into()]
}

/// `<winner> wins` or `draw` for a finished game: the side, the team, or in
/// four-player free-for-all the seat or seats that won
/// (`martian_selfplay::winner_name`, as game records name them).
fn result_text<G: GameState>(s: &G) -> String {
    match martian_selfplay::winner_name(s) {
        Some(w) if w.contains(',') => format!("{w} share the win"),
        Some(w) => format!("{w} wins"),
        None => "draw".into(),
    }
}

/// Output of the search thread: lines to stdout, and whether stdout is gone.
struct Out {
    broken: bool,
}

impl Out {
    fn say(&mut self, line: &str) {
        if !self.broken && !write_line(line) {
            self.broken = true;
        }
    }
}

impl Job {
    /// Runs the search and prints its `info` lines and its one `bestmove`.
    /// Returns true when stdout is gone.
    fn search(self, net: Option<&Net>, pace: &mut Pace) -> bool {
        let mut out = Out { broken: false };
        self.pos.search(&self, net, pace, &mut out);
        out.broken
    }

    /// The session's limits for `go`'s: MCTS `visits` (a bare `go`:
    /// `--visits`), `movetime`, and `--max-nodes` as the tree's node limit;
    /// alpha-beta `depth`, `visits` as its node budget, `movetime` (a bare
    /// `go`: one second).
    fn limits(&self) -> SearchLimits {
        let (l, s) = (&self.limits, &self.settings);
        if s.alphabeta {
            let l = SearchLimits { nodes: l.visits.map(u64::from), visits: None, ..*l };
            return if l == SearchLimits::default() { SearchLimits::movetime(Duration::from_secs(1)) } else { l };
        }
        let visits = l.visits.or(if l.movetime.is_none() { Some(s.default_visits) } else { None });
        SearchLimits { visits, nodes: Some(s.max_nodes as u64), ..*l }
    }

    /// [`Job::run`] of an MCTS session with the play-time check of
    /// `--veto-depth` (an `error` line and `bestmove none` when the game
    /// cannot have it: more than two value players).
    fn run_checked<G: AbGame, E: Evaluator<G>>(&self, session: Session<'_, G, E>, pace: &mut Pace, out: &mut Out) {
        match session.with_veto(self.settings.veto_depth) {
            Ok(s) => self.run(s, pace, out),
            Err(e) => {
                out.say(&format!("error --veto-depth: {e}"));
                out.say("bestmove none");
            }
        }
    }

    /// Searches with `session` (its stop flag raised by the main thread, or
    /// here when stdout is gone): `info` lines (MCTS every `--info-ms` and at
    /// the end, alpha-beta each completed iteration), then `bestmove`.
    fn run<G: AbGame, E: Evaluator<G>>(&self, session: Session<'_, G, E>, pace: &mut Pace, out: &mut Out) {
        let root = session.position().clone();
        let mut session = session
            .with_stop_signal(Arc::clone(&self.stop))
            .with_pace(*pace)
            .with_info_interval(self.settings.info_every);
        let mut printed = None;
        let r = session.go_since(self.start, &self.limits(), |info| {
            match &info.end {
                Some(End::NodeLimit(n)) => out.say(&format!("info string node limit {n} reached")),
                Some(End::EvalError(e)) => out.say(&format!("error search stopped: {}", one_line(e))),
                _ => {}
            }
            // The last info repeats alpha-beta's last iteration, and MCTS's
            // last line when no visit completed since.
            if info.end.is_none() || info.visits.is_some_and(|v| printed != Some(v)) {
                out.say(&info_line(&root, info));
                printed = info.visits;
            }
            if out.broken {
                self.stop.store(true, Ordering::Relaxed);
            }
        });
        *pace = session.pace();
        if let Ok(Info { vetoed: Some(v), .. }) = &r {
            out.say(&format!("info string veto {} proven lost (play-time check)", root.move_to_string(*v)));
        }
        match r {
            Ok(Info { best_move: Some(m), .. }) => out.say(&format!("bestmove {}", root.move_to_string(m))),
            Ok(_) => out.say("bestmove none"),
            Err(e) => {
                out.say(&format!("error {e}"));
                out.say("bestmove none");
            }
        }
    }
}

/// One `info` line: MCTS `info visits N nodes N time MS nps N value V pv ...`;
/// alpha-beta `info depth N seldepth N nodes N time MS nps N score cp|win|loss N pv ...`.
fn info_line<G: GameState>(root: &G, info: &Info) -> String {
    let head = match (info.depth, info.seldepth) {
        (Some(d), Some(sd)) => format!("depth {d} seldepth {sd}"),
        _ => format!("visits {}", info.visits.unwrap_or(0)),
    };
    let score = info.score.map_or(String::new(), |s| s.to_string());
    let line = format!(
        "info {head} nodes {} time {} nps {:.0} {score} pv {}",
        info.nodes,
        info.elapsed.as_millis(),
        info.nps(),
        line_text(root, &info.pv)
    );
    line.trim_end().to_string()
}

/// Lines for `show`: position string, side to move, board, legal moves,
/// result. The side is the team (`NW+SE`) in the four-player team game and
/// the seat to move (`SE`) in free-for-all, which has no teams.
fn describe<G: GameState>(s: &G) -> Vec<String> {
    let side = if s.num_players() > 2 { s.mover_name() } else { G::side_name(s.side_to_move()) };
    let mut lines = vec![format!("position {}", s.to_position()), format!("side {side}")];
    lines.extend(s.board_text().lines().map(str::to_string));
    let mut moves = Vec::new();
    s.legal_moves(&mut moves);
    lines.push(format!("legal {}", moves.iter().map(|&m| s.move_to_string(m)).collect::<Vec<_>>().join(" ")));
    if let Some(o) = s.outcome() {
        lines.push(format!("result {} ({})", result_text(s), o.reason));
    }
    lines
}

/// `startpos [moves ...]` or `fen <position string> [moves ...]`.
fn parse_position<G: GameState>(rules: &G::Rules, args: &[&str]) -> std::result::Result<G, String> {
    let split = args.iter().position(|&t| t == "moves").unwrap_or(args.len());
    let (head, moves) = (&args[..split], args.get(split + 1..).unwrap_or(&[]));
    let mut s = match head {
        ["startpos"] => G::new_game(rules).map_err(|e| e.to_string())?,
        ["fen", rest @ ..] if !rest.is_empty() => {
            G::from_position(&rest.join(" "), rules).map_err(|e| format!("bad position: {e}"))?
        }
        ["fen"] => return Err("position fen needs a position string".into()),
        [] => return Err("usage: position startpos|fen <position> [moves m1 m2 ...]".into()),
        [first, ..] if *first == "startpos" => {
            return Err(format!("unexpected {} after startpos (expected moves)", quote(head[1])))
        }
        [other, ..] => return Err(format!("expected startpos or fen, got {}", quote(other))),
    };
    for (i, m) in moves.iter().enumerate() {
        let mv = s.parse_move(m).map_err(|e| format!("move {} ({}): {e}", i + 1, quote(m)))?;
        s.play_unchecked(mv);
    }
    Ok(s)
}

/// `visits N`, `movetime MS`, `depth N` in any order (no arguments: the default visits).
fn parse_go(args: &[&str]) -> std::result::Result<SearchLimits, String> {
    let mut l = SearchLimits::default();
    let mut it = args.iter();
    while let Some(&key) = it.next() {
        if !matches!(key, "visits" | "nodes" | "movetime" | "depth") {
            return Err(format!("unknown go limit {}: expected visits (or nodes), movetime or depth", quote(key)));
        }
        let Some(&value) = it.next() else {
            return Err(format!("go {} needs a number", quote(key)));
        };
        let bad = || {
            // A run of digits that does not fit is too large, not malformed.
            if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
                let max = if key == "movetime" { u64::MAX } else { u64::from(u32::MAX) };
                format!("go {key}: {} is too large (at most {max})", quote(value))
            } else {
                format!("go {key}: {} is not a valid number", quote(value))
            }
        };
        let given = match key {
            "visits" | "nodes" => l.visits.is_some(),
            "movetime" => l.movetime.is_some(),
            "depth" => l.depth.is_some(),
            _ => false,
        };
        if given {
            return Err(format!("go {key} is given twice"));
        }
        match key {
            "visits" | "nodes" => {
                let n: u32 = value.parse().map_err(|_| bad())?;
                if n == 0 {
                    return Err(format!("go {key} must be at least 1"));
                }
                l.visits = Some(n);
            }
            // `movetime 0` is the least search there is: MCTS plays the
            // network's highest prior, alpha-beta completes depth 1.
            "movetime" => l.movetime = Some(Duration::from_millis(value.parse().map_err(|_| bad())?)),
            "depth" => {
                let d: u32 = value.parse().map_err(|_| bad())?;
                if d == 0 {
                    return Err("go depth must be at least 1".into());
                }
                l.depth = Some(d);
            }
            _ => return Err(format!("unknown go limit {}: expected visits (or nodes), movetime or depth", quote(key))),
        }
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lines_are_read_bounded() {
        let input = [b"go visits 4\n".to_vec(), vec![b'x'; 100], b"\nquit".to_vec()].concat();
        let mut r = std::io::BufReader::with_capacity(7, &input[..]);
        let mut buf = Vec::new();
        assert_eq!(super::read_line_bounded(&mut r, &mut buf, 50).unwrap(), (12, false));
        assert_eq!(buf, b"go visits 4\n");
        buf.clear();
        assert_eq!(super::read_line_bounded(&mut r, &mut buf, 50).unwrap(), (101, true));
        assert_eq!(buf.len(), 50, "no more than the bound is kept");
        buf.clear();
        assert_eq!(super::read_line_bounded(&mut r, &mut buf, 50).unwrap(), (4, false));
        assert_eq!(buf, b"quit");
        buf.clear();
        assert_eq!(super::read_line_bounded(&mut r, &mut buf, 50).unwrap(), (0, false));
    }

    use super::*;
    use martian_rules::jetan::{Jetan, JetanRules};
    use martian_rules::martian::{MartianChess, MartianRules};

    #[test]
    fn go_limits_parse() {
        let l = parse_go(&["visits", "10", "movetime", "50"]).expect("valid");
        assert_eq!(l.visits, Some(10));
        assert_eq!(l.movetime, Some(Duration::from_millis(50)));
        assert!(parse_go(&["visits"]).is_err());
        assert!(parse_go(&["visits", "x"]).unwrap_err().contains("not a valid number"));
        let e = parse_go(&["visits", "4294967296"]).unwrap_err();
        assert!(e.contains("too large (at most 4294967295)"), "{e}");
        assert!(parse_go(&["visits", "-1"]).unwrap_err().contains("not a valid number"));
        assert!(parse_go(&["visits", "0"]).is_err());
        assert!(parse_go(&["depth", "0"]).is_err(), "a zero limit is an error, not a silent depth-1 search");
        assert_eq!(parse_go(&["movetime", "0"]).expect("the least search").movetime, Some(Duration::ZERO));
        assert!(parse_go(&["speed", "1"]).is_err());
        // An unknown word is named as one, with or without a number after it.
        for args in [&["foo"][..], &["foo", "3"], &["\u{fffd}"]] {
            assert!(parse_go(args).unwrap_err().starts_with("unknown go limit"), "{args:?}");
        }
        assert_eq!(parse_go(&["visits", "10", "visits", "20"]).unwrap_err(), "go visits is given twice");
        assert!(parse_go(&["visits", "10", "nodes", "20"]).is_err(), "nodes is visits");
        assert!(parse_go(&[]).expect("empty go").visits.is_none());
    }

    #[test]
    fn position_parse() {
        let r = JetanRules::default();
        assert!(parse_position::<Jetan>(&r, &["startpos"]).is_ok());
        assert!(parse_position::<Jetan>(&r, &["startpos", "moves"]).is_ok());
        assert!(parse_position::<Jetan>(&r, &["startpos", "junk"]).is_err());
        assert!(parse_position::<Jetan>(&r, &["startpos", "moves", "a1a1"]).is_err());
        assert!(parse_position::<Jetan>(&r, &["fen"]).is_err());
        assert!(parse_position::<Jetan>(&r, &["fen", "x", "o"]).is_err());
        assert!(parse_position::<Jetan>(&r, &[]).is_err());
        let m = MartianRules::default();
        let s = parse_position::<MartianChess>(&m, &["startpos", "moves", "d3d5"]).expect("legal");
        assert_eq!(s.ply(), 1);
    }

    #[test]
    fn huge_go_limits_parse() {
        let l = parse_go(&["movetime", "18446744073709551615", "visits", "4294967295", "depth", "4294967295"])
            .expect("valid");
        assert_eq!(l.movetime, Some(Duration::from_millis(u64::MAX)));
        assert_eq!(l.visits, Some(u32::MAX));
        assert_eq!(l.depth, Some(u32::MAX));
    }
}
