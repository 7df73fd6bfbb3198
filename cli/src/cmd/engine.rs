//! `martian-zero engine`: a UCI-like line protocol on stdin/stdout
//! (`docs/protocol.md`).
//!
//! A reader thread turns stdin into lines (invalid UTF-8 is replaced, never
//! fatal) and sends them over a channel; the main thread runs the commands and
//! the searches. A search runs in small batches and looks at the channel
//! between batches, so `stop` and `quit` take effect within one batch when
//! they are the next command; other commands that arrive during a search run
//! after it, in order (`hello` and `isready` are answered at once).

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use martian_model::export::{load_bundle, read_description, DESCRIPTION_FILE};
use martian_model::{Checkpoint, NetEvaluator};
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameKind, GameState, Move};
use martian_search::alphabeta::{MATE, MATE_BOUND};
use martian_search::{
    AbGame, AbResult, AlphaBeta, AlphaBetaConfig, Evaluation, Evaluator, Limits, Mcts, MctsConfig, UniformEvaluator,
};
use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::Device;

use crate::{with_game, GameArg};

/// Arguments of `engine`.
#[derive(clap::Args)]
pub struct Args {
    /// Network for MCTS: an exported bundle directory (model.json +
    /// model.safetensors) or a checkpoint `.safetensors` with its `.json` sidecar.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Engine without a network: `mcts-uniform` (MCTS with equal priors and
    /// value 0) or `alphabeta` (the alpha-beta baseline with its hand-written
    /// evaluation). Default: `mcts` with `--model`, else `mcts-uniform`.
    #[arg(long)]
    engine: Option<String>,
    /// Game selected at start (default: the model's game; else none until `game`).
    #[arg(long, value_enum)]
    game: Option<GameArg>,
    /// Device for the network: auto, cpu, cuda, cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    /// Visits of a bare `go`.
    #[arg(long, default_value_t = 800)]
    visits: u32,
    /// Leaves gathered per network batch (MCTS with virtual loss; 1 = sequential).
    #[arg(long, default_value_t = 8)]
    batch: u32,
    /// A search stops when its tree holds this many nodes (bounds memory).
    #[arg(long, default_value_t = 10_000_000)]
    max_nodes: usize,
    /// Interval between `info` lines during a search, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    info_ms: u64,
    /// libtorch CPU threads (0 = libtorch's default).
    #[arg(long, default_value_t = 0)]
    threads: i32,
}

/// A position of either game (Jetan's state with its history is large: boxed).
#[derive(Clone)]
enum Pos {
    Jetan(Box<Jetan>),
    Martian(MartianChess),
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

/// A line from stdin, or its end.
enum Input {
    Line(String),
    Eof,
}

/// Limits of one `go`.
#[derive(Default, Debug)]
struct GoLimits {
    visits: Option<u32>,
    movetime: Option<Duration>,
    depth: Option<u32>,
}

struct Engine {
    name: &'static str,
    net: Option<Net>,
    device: Device,
    game: Option<GameKind>,
    jetan_rules: JetanRules,
    martian_rules: MartianRules,
    pos: Option<Pos>,
    default_visits: u32,
    batch: u32,
    max_nodes: usize,
    info_every: Duration,
    /// The answer to `hello`.
    hello_line: String,
    /// Set when stdout is gone: the engine then exits.
    broken: bool,
}

/// Runs `engine`.
pub fn run(a: Args) -> Result<()> {
    if a.threads > 0 {
        tch::set_num_threads(a.threads);
    }
    let mut engine = Engine::new(&a)?;
    let (tx, rx) = mpsc::channel::<Input>();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match lock.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => {
                    let _ = tx.send(Input::Eof);
                    return;
                }
                Ok(_) => {
                    if tx.send(Input::Line(String::from_utf8_lossy(&buf).into_owned())).is_err() {
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
            Input::Line(l) => l,
            Input::Eof => break,
        };
        if engine.handle(&line, &rx, &mut queue) == Flow::Quit || engine.broken {
            break;
        }
    }
    Ok(())
}

/// Writes one line to stdout and flushes; false when stdout is gone.
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

fn parse_game(name: &str) -> Option<GameKind> {
    match name {
        "jetan" => Some(GameKind::Jetan),
        "martian-chess" | "martian" => Some(GameKind::MartianChess),
        _ => None,
    }
}

fn load_net(path: &Path, device: Device) -> Result<(Net, serde_json::Value)> {
    let source = path.display().to_string();
    if path.is_dir() {
        if !path.join(DESCRIPTION_FILE).exists() {
            bail!("{} is a directory without {DESCRIPTION_FILE}: expected an exported model bundle", path.display());
        }
        let d = read_description(path)?;
        let (ck, d) = with_game!(d.game, G => load_bundle::<G>(path, device)?);
        Ok((Net { game: d.game, ck, source }, d.rules))
    } else {
        let meta = Checkpoint::read_meta(path)?;
        let ck = with_game!(meta.game, G => {
            let rules: <G as GameState>::Rules = serde_json::from_value(meta.rules.clone())
                .with_context(|| format!("the rules in {}'s sidecar are not valid", path.display()))?;
            crate::checkpoints::load_checkpoint::<G>(path, &rules, martian_model::ConfigModel::Absent, device)?
        });
        Ok((Net { game: meta.game, ck, source }, meta.rules))
    }
}

impl Engine {
    fn new(a: &Args) -> Result<Engine> {
        let mut jetan_rules = JetanRules::default();
        let mut martian_rules = MartianRules::default();
        let (name, net, device) = match (a.engine.as_deref(), &a.model) {
            (None | Some("mcts"), Some(path)) => {
                let device = martian_model::parse_device(&a.device)?;
                let (net, rules) = load_net(path, device)?;
                match net.game {
                    GameKind::Jetan => jetan_rules = serde_json::from_value(rules)?,
                    GameKind::MartianChess => martian_rules = serde_json::from_value(rules)?,
                }
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
        let mut game = a.game.map(GameKind::from).or(net.as_ref().map(|n| n.game));
        if let (Some(g), Some(n)) = (game, &net) {
            if g != n.game {
                bail!("--game {g} but the model plays {}", n.game);
            }
            game = Some(g);
        }
        let games = match &net {
            Some(n) => n.game.name().to_string(),
            None => "jetan,martian-chess".into(),
        };
        let model = net.as_ref().map(|n| format!(" model {}", n.source.replace(char::is_whitespace, "_")));
        let hello_line = format!(
            "ready id martian-zero version {} engine {name} games {games}{}",
            env!("CARGO_PKG_VERSION"),
            model.unwrap_or_default()
        );
        let mut e = Engine {
            hello_line,
            name,
            net,
            device,
            game: None,
            jetan_rules,
            martian_rules,
            pos: None,
            default_visits: a.visits.max(1),
            batch: a.batch.clamp(1, 256),
            max_nodes: a.max_nodes.max(1000),
            info_every: Duration::from_millis(a.info_ms.max(10)),
            broken: false,
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
        let line = self.hello_line.clone();
        self.say(&line);
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
                    None => self.error(&format!("unknown game {}: expected jetan or martian-chess", quote(name))),
                },
                _ => self.error("usage: game jetan|martian-chess"),
            },
            "position" => {
                if let Err(e) = self.position(args) {
                    self.pos = None;
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
        if let Some(n) = &self.net {
            if n.game != g {
                return Err(format!("the model plays {}, not {g}", n.game));
            }
        }
        let pos = match g {
            GameKind::Jetan => Jetan::new_game(&self.jetan_rules).map(|s| Pos::Jetan(Box::new(s))),
            GameKind::MartianChess => MartianChess::new_game(&self.martian_rules).map(Pos::Martian),
        };
        self.pos = Some(pos.map_err(|e| e.to_string())?);
        self.game = Some(g);
        Ok(())
    }

    fn position(&mut self, args: &[&str]) -> std::result::Result<(), String> {
        let Some(game) = self.game else {
            return Err("no game selected: send game jetan|martian-chess first".into());
        };
        let pos = match game {
            GameKind::Jetan => parse_position::<Jetan>(&self.jetan_rules, args).map(|s| Pos::Jetan(Box::new(s)))?,
            GameKind::MartianChess => parse_position::<MartianChess>(&self.martian_rules, args).map(Pos::Martian)?,
        };
        self.pos = Some(pos);
        Ok(())
    }

    fn show(&mut self) {
        let lines = match &self.pos {
            None => vec!["no position".to_string()],
            Some(Pos::Jetan(s)) => describe(s.as_ref()),
            Some(Pos::Martian(s)) => describe(s),
        };
        for l in lines {
            self.say(format!("info string {l}").trim_end());
        }
    }

    fn go(&mut self, args: &[&str], rx: &Receiver<Input>, queue: &mut VecDeque<Input>) -> Flow {
        let limits = match parse_go(args) {
            Ok(l) => l,
            Err(e) => {
                self.error(&e);
                return Flow::Continue;
            }
        };
        let Some(pos) = self.pos.clone() else {
            self.error("no position: send position startpos|fen ... first");
            return Flow::Continue;
        };
        if self.name == "alphabeta" {
            match &pos {
                Pos::Jetan(s) => self.alphabeta(s.as_ref(), &limits),
                Pos::Martian(s) => self.alphabeta(s, &limits),
            }
            return Flow::Continue;
        }
        if limits.depth.is_some() {
            self.error(&format!(
                "go depth is not supported by the {} engine; use go visits N or go movetime MS",
                self.name
            ));
            return Flow::Continue;
        }
        let net = self.net.take();
        let flow = match (&pos, &net) {
            (Pos::Jetan(s), Some(n)) => {
                let mut ev = NetEvaluator::<Jetan>::new(&n.ck.net, self.device, self.batch as usize);
                self.search(s.as_ref(), &mut ev, &limits, rx, queue)
            }
            (Pos::Martian(s), Some(n)) => {
                let mut ev = NetEvaluator::<MartianChess>::new(&n.ck.net, self.device, self.batch as usize);
                self.search(s, &mut ev, &limits, rx, queue)
            }
            (Pos::Jetan(s), None) => self.search(s.as_ref(), &mut UniformEvaluator, &limits, rx, queue),
            (Pos::Martian(s), None) => self.search(s, &mut UniformEvaluator, &limits, rx, queue),
        };
        self.net = net;
        flow
    }

    /// Runs the alpha-beta search on `root` (`visits` is its node budget; a
    /// bare `go` searches for one second) and prints one `info` line per
    /// iteration and `bestmove`. Commands wait until the search ends.
    fn alphabeta<G: AbGame>(&mut self, root: &G, limits: &GoLimits) {
        if let Some(o) = root.outcome() {
            self.game_over::<G>(o);
            return;
        }
        let mut l = Limits { depth: limits.depth, nodes: limits.visits.map(u64::from), movetime: limits.movetime };
        if l == Limits::default() {
            l.movetime = Some(Duration::from_secs(1));
        }
        let mut ab = AlphaBeta::<G>::new(AlphaBetaConfig::default());
        let mut broken = false;
        let r = ab.search_with(root, &l, |r| broken |= !write_line(&ab_info(root, r)));
        self.broken |= broken;
        match r.best_move {
            Some(m) => self.say(&format!("bestmove {}", root.move_to_string(m))),
            None => self.say("bestmove none"),
        }
    }

    fn game_over<G: GameState>(&mut self, o: martian_rules::Outcome) {
        let result = match o.winner {
            Some(w) => format!("{} wins", G::side_name(w)),
            None => "draw".into(),
        };
        self.say(&format!("info string game over: {result} ({})", o.reason));
        self.say("bestmove none");
    }

    fn info<G: GameState>(&mut self, tree: &Mcts<G>, start: Instant) {
        let visits = tree.child_visits();
        let secs = start.elapsed().as_secs_f64();
        let pv = pv_text(tree.root_state(), &tree.principal_variation(64));
        let line = format!(
            "info visits {visits} nodes {} time {} nps {:.0} value {:.4} pv {pv}",
            tree.num_nodes(),
            (secs * 1000.0) as u64,
            visits as f64 / secs.max(1e-6),
            tree.result().root_value
        );
        self.say(line.trim_end());
    }

    /// Runs one MCTS search on `root` and prints `info` lines and `bestmove`.
    fn search<G: GameState, E: Evaluator<G>>(
        &mut self,
        root: &G,
        ev: &mut E,
        limits: &GoLimits,
        rx: &Receiver<Input>,
        queue: &mut VecDeque<Input>,
    ) -> Flow {
        let start = Instant::now();
        if let Some(o) = root.outcome() {
            self.game_over::<G>(o);
            return Flow::Continue;
        }
        let cfg = MctsConfig { leaves_per_batch: self.batch, ..MctsConfig::default() };
        let mut tree = Mcts::new(cfg, root.clone());
        let mut rng = StdRng::seed_from_u64(0);
        tree.begin_search(false, &mut rng);
        let target = limits.visits.or(if limits.movetime.is_none() { Some(self.default_visits) } else { None });
        let mut evals: Vec<Evaluation> = Vec::new();
        let mut last_info = start;
        let mut printed: Option<u32> = None;
        let mut flow = Flow::Continue;
        let mut stopped = false;
        loop {
            let done = tree.child_visits();
            if target.is_some_and(|t| done >= t) || limits.movetime.is_some_and(|t| start.elapsed() >= t) {
                break;
            }
            if tree.num_nodes() >= self.max_nodes {
                self.say(&format!("info string node limit {} reached", self.max_nodes));
                break;
            }
            let want = target.map_or(self.batch, |t| self.batch.min(t - done)) as usize;
            tree.gather(want, &mut rng);
            if tree.num_pending() > 0 {
                let res = {
                    let (states, moves): (Vec<&G>, Vec<&[Move]>) = tree.pending_leaves().unzip();
                    ev.evaluate(&states, &moves, &mut evals)
                };
                if let Err(e) = res {
                    self.error(&format!("search stopped: {e}"));
                    break;
                }
                tree.apply_evaluations(&evals, &mut rng);
            }
            loop {
                match rx.try_recv() {
                    // `stop` and `quit` interrupt the search when they are the next
                    // command; behind other commands they wait their turn.
                    Ok(Input::Line(l)) => match l.split_whitespace().next() {
                        Some("stop") if queue.is_empty() => stopped = true,
                        Some("quit") if queue.is_empty() => {
                            stopped = true;
                            flow = Flow::Quit;
                        }
                        Some("hello") => self.hello(),
                        Some("isready") => self.say("readyok"),
                        _ => queue.push_back(Input::Line(l)),
                    },
                    // End of input: finish this search, then stop.
                    Ok(Input::Eof) | Err(TryRecvError::Disconnected) => {
                        if !matches!(queue.back(), Some(Input::Eof)) {
                            queue.push_back(Input::Eof);
                        }
                        break;
                    }
                    Err(TryRecvError::Empty) => break,
                }
            }
            if stopped || self.broken {
                break;
            }
            if last_info.elapsed() >= self.info_every {
                last_info = Instant::now();
                self.info(&tree, start);
                printed = Some(tree.child_visits());
            }
        }
        if flow == Flow::Quit {
            return flow;
        }
        if printed != Some(tree.child_visits()) {
            self.info(&tree, start);
        }
        let best = tree.result().best_move().or_else(|| {
            let mut moves = Vec::new();
            root.legal_moves(&mut moves);
            moves.first().copied()
        });
        match best {
            Some(m) => self.say(&format!("bestmove {}", root.move_to_string(m))),
            None => self.say("bestmove none"),
        }
        flow
    }
}

/// One `info` line for a finished alpha-beta iteration: `score cp N` (hundredths
/// of the evaluation's unit) or `score win|loss N` (plies).
fn ab_info<G: GameState>(root: &G, r: &AbResult) -> String {
    let score = if r.score > MATE_BOUND {
        format!("win {}", MATE - r.score)
    } else if r.score < -MATE_BOUND {
        format!("loss {}", MATE + r.score)
    } else {
        format!("cp {}", r.score)
    };
    let line = format!(
        "info depth {} seldepth {} nodes {} time {} nps {:.0} score {score} pv {}",
        r.depth,
        r.seldepth,
        r.nodes,
        r.elapsed.as_millis(),
        r.nps(),
        pv_text(root, &r.pv)
    );
    line.trim_end().to_string()
}

/// The moves of `pv` as text, played from `root`.
fn pv_text<G: GameState>(root: &G, pv: &[Move]) -> String {
    let mut s = root.clone();
    let mut out = Vec::with_capacity(pv.len());
    for &m in pv {
        out.push(s.move_to_string(m));
        s.play_unchecked(m);
    }
    out.join(" ")
}

/// Lines for `show`: position string, side to move, board, legal moves, result.
fn describe<G: GameState>(s: &G) -> Vec<String> {
    let mut lines = vec![format!("position {}", s.to_position()), format!("side {}", G::side_name(s.side_to_move()))];
    lines.extend(s.board_text().lines().map(str::to_string));
    let mut moves = Vec::new();
    s.legal_moves(&mut moves);
    lines.push(format!("legal {}", moves.iter().map(|&m| s.move_to_string(m)).collect::<Vec<_>>().join(" ")));
    if let Some(o) = s.outcome() {
        let who = o.winner.map_or("draw".to_string(), |w| format!("{} wins", G::side_name(w)));
        lines.push(format!("result {who} ({})", o.reason));
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
fn parse_go(args: &[&str]) -> std::result::Result<GoLimits, String> {
    let mut l = GoLimits::default();
    let mut it = args.iter();
    while let Some(&key) = it.next() {
        let Some(&value) = it.next() else {
            return Err(format!("go {} needs a number", quote(key)));
        };
        let bad = || format!("go {key}: {} is not a valid number", quote(value));
        match key {
            "visits" | "nodes" => {
                let n: u32 = value.parse().map_err(|_| bad())?;
                if n == 0 {
                    return Err("go visits must be at least 1".into());
                }
                l.visits = Some(n);
            }
            "movetime" => l.movetime = Some(Duration::from_millis(value.parse().map_err(|_| bad())?)),
            "depth" => l.depth = Some(value.parse().map_err(|_| bad())?),
            _ => return Err(format!("unknown go limit {}: expected visits, movetime or depth", quote(key))),
        }
    }
    Ok(l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_limits_parse() {
        let l = parse_go(&["visits", "10", "movetime", "50"]).expect("valid");
        assert_eq!(l.visits, Some(10));
        assert_eq!(l.movetime, Some(Duration::from_millis(50)));
        assert!(parse_go(&["visits"]).is_err());
        assert!(parse_go(&["visits", "x"]).is_err());
        assert!(parse_go(&["visits", "0"]).is_err());
        assert!(parse_go(&["speed", "1"]).is_err());
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
}
