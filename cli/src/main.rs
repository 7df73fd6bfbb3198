//! `martian-zero`: self-play training for Jetan and Looney's Martian Chess.
//!
//! One binary with subcommands, as KataGo and lc0 ship: `perft`, `show`,
//! `selfplay`, `train`, `evaluate`, `pipeline`, `play`, `bench`.

mod cmd;
mod think;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use martian_rules::GameKind;

/// Runs `$body` with the type alias `$G` bound to the game's state type: the
/// rules crate's one dispatch over its registry of games.
pub use martian_rules::with_game;

/// The `--game` value parser: the names of the rules crate's registry
/// ([`GameKind::ALL`]), listed in `--help` and in the error for any other name.
pub fn game_parser() -> impl clap::builder::TypedValueParser<Value = GameKind> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(GameKind::names()).try_map(|s| s.parse::<GameKind>())
}

/// `--version`: the crate version, the git commit it was built from and the
/// libtorch it links (both found by `cli/build.rs`).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("MARTIAN_ZERO_GIT_COMMIT"),
    ", libtorch ",
    env!("MARTIAN_ZERO_LIBTORCH"),
    ")"
);

#[derive(Parser)]
#[command(
    name = "martian-zero",
    version = VERSION,
    about = "Self-play training for Jetan and Looney's Martian Chess"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count leaf nodes of the move tree (move-generator check; spec §15/§16).
    Perft(cmd::perft::Args),
    /// Print a position: board, side to move, legal moves, result.
    Show(cmd::show::Args),
    /// Play self-play games and write replay shards and game records.
    Selfplay(cmd::selfplay::Args),
    /// Train the next checkpoint of an existing run on its replay window.
    Train(cmd::train::Args),
    /// Play a match between two players and report W/D/L and Elo.
    Evaluate(cmd::evaluate::Args),
    /// Run the training loop (self-play -> train -> gate), resumable.
    Pipeline(cmd::pipeline::Args),
    /// Play against an engine in the terminal (at the prompt: a move, help, moves, hint, undo, quit).
    Play(cmd::play::Args),
    /// Speed benchmarks: perft, MCTS, self-play, training.
    Bench(cmd::bench::Args),
    /// Search a position (alpha-beta, or MCTS with a network): score or value, top moves, principal variation.
    Analyse(cmd::analyse::Args),
    /// JSON analysis engine for frontends: one query a line in, one answer a line out (docs/protocol.md).
    Analysis(cmd::analysis::Args),
    /// Write R/report.md and R/report.html (Elo, losses, self-play, crosstable).
    Report(cmd::report::Args),
    /// Write a model bundle (weights, model.json, TorchScript) for other frontends.
    Export(cmd::export::Args),
    /// Speak the engine line protocol on stdin/stdout (docs/protocol.md).
    Engine(cmd::engine::Args),
}

/// Output that cannot be written (a closed pipe, a full disk) ends the
/// command quietly instead of with a panic: for every command but `engine` and `analysis`
/// (which handle a closed stdout themselves), SIGPIPE gets its default action,
/// as for Unix tools (`martian-zero perft ... | head` ends without a word;
/// every file write is atomic, so this loses no finished work, like a kill);
/// any other failed write to stdout ends the process with one error line and
/// status 1 (`_exit`, so no destructor runs into libtorch's threads).
fn output_failures_end_quietly(engine: bool) {
    if !engine {
        // SAFETY: setting a signal's disposition to the default action at start-up.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") {
            eprintln!("error: cannot write the output: {}", msg.trim_start_matches("failed printing to stdout: "));
            // SAFETY: ends the process at once, as a kill would.
            unsafe { libc::_exit(1) }
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    output_failures_end_quietly(matches!(cli.command, Command::Engine(_) | Command::Analysis(_)));
    let result = match cli.command {
        Command::Perft(a) => cmd::perft::run(a),
        Command::Show(a) => cmd::show::run(a),
        Command::Selfplay(a) => cmd::selfplay::run(a),
        Command::Train(a) => cmd::train::run(a),
        Command::Evaluate(a) => cmd::evaluate::run(a),
        Command::Pipeline(a) => cmd::pipeline::run(a),
        Command::Play(a) => cmd::play::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Analyse(a) => cmd::analyse::run(a),
        Command::Analysis(a) => cmd::analysis::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::Export(a) => cmd::export::run(a),
        Command::Engine(a) => cmd::engine::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            for line in martian_run::errtext::lines(&e) {
                eprintln!("{line}");
            }
            ExitCode::FAILURE
        }
    }
}
