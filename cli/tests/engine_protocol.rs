//! `martian-zero engine` driven through pipes (docs/protocol.md): full games
//! against itself in both games (MCTS with uniform priors, and MCTS with an
//! exported network), malformed input that must produce `error` lines without
//! a crash, `stop` during a search, and end of input.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use martian_model::{Checkpoint, ModelConfig};
use martian_rules::jetan::Jetan;
use martian_rules::martian::MartianChess;
use martian_rules::GameState;

const TIMEOUT: Duration = Duration::from_secs(120);

struct Engine {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Engine {
    fn start(args: &[&str]) -> Engine {
        let mut child = Command::new(env!("CARGO_BIN_EXE_martian-zero"))
            .arg("engine")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("engine starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Engine { child, stdin, lines }
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to engine");
        stdin.flush().expect("flush");
    }

    fn send(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    fn line(&self) -> String {
        self.lines.recv_timeout(TIMEOUT).expect("engine answers in time (and did not exit)")
    }

    /// Lines up to and including the first one starting with `prefix`.
    fn until(&self, prefix: &str) -> Vec<String> {
        let mut out = Vec::new();
        loop {
            let l = self.line();
            let done = l.starts_with(prefix);
            out.push(l);
            if done {
                return out;
            }
        }
    }

    /// Sends `line`, then `isready`; returns the answers before `readyok`.
    fn exchange(&mut self, line: &[u8]) -> Vec<String> {
        self.send_bytes(line);
        self.send("isready");
        let mut out = self.until("readyok");
        out.pop();
        out
    }

    fn wait_exit(mut self) -> i32 {
        drop(self.stdin.take());
        let t0 = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code().unwrap_or(-1);
            }
            assert!(t0.elapsed() < TIMEOUT, "engine did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Plays a whole game with `go visits N` for both sides, sending the game so
/// far each move (`position <start> moves ...`). Returns the moves.
fn self_play<G: GameState>(e: &mut Engine, game: &str, start: &str, visits: u32) -> Vec<String> {
    e.send("hello");
    let hello = e.line();
    assert!(hello.starts_with("ready id martian-zero version "), "{hello}");
    e.send(&format!("game {game}"));
    let mut moves: Vec<String> = Vec::new();
    let mut saw_info = false;
    for _ in 0..2000 {
        let cmd = if moves.is_empty() {
            format!("position {start}")
        } else {
            format!("position {start} moves {}", moves.join(" "))
        };
        e.send(&cmd);
        e.send(&format!("go visits {visits}"));
        let out = e.until("bestmove ");
        assert!(!out.iter().any(|l| l.starts_with("error")), "{out:?}");
        for l in &out[..out.len() - 1] {
            if l.starts_with("info visits ") {
                saw_info = true;
                for key in [" value ", " nps ", " pv"] {
                    assert!(l.contains(key), "info line without{key}: {l}");
                }
            }
        }
        let best = out.last().expect("bestmove line").trim_start_matches("bestmove ").to_string();
        if best == "none" {
            break;
        }
        moves.push(best);
    }
    assert!(saw_info, "no info line");
    // The game really is over after these moves.
    let rules = G::Rules::default();
    let mut s = match start.strip_prefix("fen ") {
        Some(fen) => G::from_position(fen, &rules).expect("start position"),
        None => G::new_game(&rules).expect("start position"),
    };
    for m in &moves {
        let mv = s.parse_move(m).expect("engine moves are legal");
        s.play_unchecked(mv);
    }
    assert!(s.outcome().is_some(), "{game}: the engine stopped before the end of the game");
    moves
}

#[test]
fn uniform_mcts_plays_full_games_of_both() {
    let mut e = Engine::start(&["--engine", "mcts-uniform", "--info-ms", "10"]);
    let j = self_play::<Jetan>(&mut e, "jetan", "startpos", 6);
    let fen = format!("fen {}", martian_rules::martian::INITIAL_POSITION);
    let m = self_play::<MartianChess>(&mut e, "martian-chess", &fen, 6);
    eprintln!("jetan: {} plies, martian chess: {} plies", j.len(), m.len());
    e.send("quit");
    assert_eq!(e.wait_exit(), 0);
}

fn tiny_bundle(dir: &Path) -> std::path::PathBuf {
    let cfg = ModelConfig {
        blocks: 1,
        channels: 8,
        batch_norm: true,
        global_pooling: false,
        policy_channels: 2,
        value_hidden: 8,
    };
    let ck = Checkpoint::new_random::<MartianChess>(&Default::default(), &cfg, tch::Device::Cpu, 3).expect("net");
    let weights = dir.join("net.safetensors");
    ck.save(&weights).expect("save");
    let bundle = dir.join("bundle");
    let out = Command::new(env!("CARGO_BIN_EXE_martian-zero"))
        .args(["export", "--checkpoint"])
        .arg(&weights)
        .arg("--out")
        .arg(&bundle)
        .output()
        .expect("export runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    bundle
}

#[test]
fn network_mcts_plays_a_full_game_and_loads_checkpoints() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let bundle = tiny_bundle(tmp.path());
    let bundle_s = bundle.to_str().expect("utf-8 path");
    let mut e = Engine::start(&["--model", bundle_s, "--device", "cpu", "--batch", "4"]);
    let m = self_play::<MartianChess>(&mut e, "martian-chess", "startpos", 8);
    eprintln!("martian chess with a network: {} plies", m.len());
    // The model plays one game only.
    let err = e.exchange(b"game jetan\n");
    assert!(err.len() == 1 && err[0].starts_with("error "), "{err:?}");
    e.send("quit");
    assert_eq!(e.wait_exit(), 0);

    // A checkpoint file works too.
    let ck = tmp.path().join("net.safetensors");
    let mut e = Engine::start(&["--model", ck.to_str().expect("utf-8"), "--device", "cpu"]);
    e.send("position startpos moves d3d5");
    e.send("go visits 10");
    let out = e.until("bestmove ");
    assert!(!out.last().expect("line").ends_with("none"), "{out:?}");
    e.send("quit");
    assert_eq!(e.wait_exit(), 0);
}

#[test]
fn malformed_input_gets_errors_and_the_engine_keeps_running() {
    let mut e = Engine::start(&["--engine", "mcts-uniform"]);
    let long = format!("{}\n", "x".repeat(20_000));
    let bad: Vec<&[u8]> = vec![
        b"go visits 10\n",      // before any game or position
        b"position startpos\n", // no game selected
        b"frobnicate\n",
        b"GAME jetan\n",
        b"game\n",
        b"game chess\n",
        b"game jetan martian-chess\n",
        b"\xff\xfe\x00\x01garbage \x80\n",
        long.as_bytes(),
        b"position\n",
        b"position fen\n",
        b"position fen not a position\n",
        b"position fen WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw x OB - 0 0\n",
        b"position startpos junk\n",
        b"position startpos moves a1a1\n",
        b"position startpos moves zz\n",
        b"position startpos moves e9e8 e9e8\n",
        b"go visits 10\n", // the failed position left none
        b"position startpos\n",
        b"go visits\n",
        b"go visits -3\n",
        b"go visits 0\n",
        b"go visits many\n",
        b"go movetime 1e3\n",
        b"go speed 3\n",
        b"go depth 3\n", // MCTS has no depth
    ];
    let mut game_set = false;
    for line in bad {
        let out = e.exchange(line);
        let shown = String::from_utf8_lossy(line);
        // "position startpos" succeeds once a game is selected; all others fail.
        if game_set && line == b"position startpos\n" {
            assert!(out.is_empty(), "{shown:?} -> {out:?}");
            continue;
        }
        assert!(
            out.len() == 1 && out[0].starts_with("error "),
            "{:?} -> {out:?}",
            shown.chars().take(80).collect::<String>()
        );
        assert!(out[0].len() < 2000, "error line too long");
        if line.starts_with(b"game chess") {
            // Select a game for the rest of the list.
            assert!(e.exchange(b"game jetan\n").is_empty());
            game_set = true;
        }
    }
    // Empty lines and stray `stop`s are ignored without a word.
    for line in [&b"\n"[..], b"   \n", b"\r\n", b"\t\t\n", b"stop\n"] {
        assert!(e.exchange(line).is_empty(), "{line:?}");
    }
    // Still working.
    e.send("hello");
    assert!(e.line().starts_with("ready "));
    e.send("position startpos moves e9e8");
    e.send("go visits 5");
    let out = e.until("bestmove ");
    assert!(!out.iter().any(|l| l.starts_with("error")), "{out:?}");
    e.send("quit");
    assert_eq!(e.wait_exit(), 0);
}

#[test]
fn stop_ends_a_long_search_and_end_of_input_exits() {
    let mut e = Engine::start(&["--engine", "mcts-uniform", "--game", "martian-chess"]);
    e.send("position startpos");
    e.send("go movetime 600000");
    std::thread::sleep(Duration::from_millis(300));
    e.send("hello"); // answered during the search
    let t0 = Instant::now();
    assert!(e.until("ready ").last().is_some_and(|l| l.contains(" engine mcts-uniform ")));
    e.send("stop");
    let out = e.until("bestmove ");
    assert!(t0.elapsed() < Duration::from_secs(30), "stop took {:?}", t0.elapsed());
    assert!(!out.last().expect("line").ends_with("none"));
    // End of input during a search: the search finishes, then the engine exits 0.
    e.send("go visits 200");
    drop(e.stdin.take());
    let out = e.until("bestmove ");
    assert!(out.iter().any(|l| l.starts_with("info visits 200 ")), "{out:?}");
    assert_eq!(e.wait_exit(), 0);
}

#[test]
fn alphabeta_plays_both_games() {
    let mut e = Engine::start(&["--engine", "alphabeta"]);
    e.send("hello");
    assert!(e.line().contains(" engine alphabeta "));
    for (game, first) in [("jetan", "e9e8"), ("martian-chess", "d3d5")] {
        e.send(&format!("game {game}"));
        e.send(&format!("position startpos moves {first}"));
        for go in ["go depth 2", "go visits 500", "go movetime 50"] {
            e.send(go);
            let out = e.until("bestmove ");
            assert!(out.iter().any(|l| l.starts_with("info depth ") && l.contains(" score ")), "{go}: {out:?}");
            assert!(!out.last().expect("line").ends_with("none"), "{out:?}");
        }
    }
    e.send("quit");
    assert_eq!(e.wait_exit(), 0);
}

#[test]
fn bad_command_lines_fail_cleanly() {
    for args in [&["--engine", "alphabet"][..], &["--engine", "mcts"], &["--model", "/nonexistent/model"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_martian-zero"))
            .arg("engine")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).starts_with("error: "), "{args:?}");
    }
}
