//! The reference client of the analysis engine, `tools/analysis_client.py`
//! (docs/protocol.md, "Analysis engine"), run against the built binary: its
//! `check` command drives KataGo's flows (reports during a search,
//! `terminate` answered within 100 ms as the client measures it,
//! `terminate_all`, `query_version`, `analyzeTurns` over a 20-ply game, an
//! unknown field's warning, both games from one process, `priority`,
//! `includePVVisits`, `overrideSettings`, `avoidMoves` / `allowMoves`) and
//! asserts each answer's content. Without a network, so the searches are fast.

use crate::common::{err, out};

/// The checks the client runs, each printed `ok <name>: ...` when it passes.
const CHECKS: [&str; 11] = [
    "reports",
    "terminate",
    "terminate_all",
    "query_version",
    "analyzeTurns",
    "unknown_field",
    "both_games",
    "priority",
    "includePVVisits",
    "overrideSettings",
    "avoidMoves_allowMoves",
];

/// Runs `tools/analysis_client.py args` against the binary; `None` when
/// there is no `python3` (the reason is printed).
fn client(args: &[&str]) -> Option<std::process::Output> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/analysis_client.py");
    match std::process::Command::new("python3")
        .arg(script)
        .args(["--binary", env!("CARGO_BIN_EXE_martian-zero")])
        .args(args)
        .output()
    {
        Ok(o) => Some(o),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            println!("skipped: python3 is not installed ({e})");
            None
        }
        Err(e) => panic!("python3 does not start: {e}"),
    }
}

#[test]
fn the_reference_client_passes_every_check() {
    let Some(o) = client(&["check"]) else { return };
    let text = out(&o);
    print!("{text}");
    assert!(o.status.success(), "a check failed:\n{text}{}", err(&o));
    for name in CHECKS {
        assert!(text.lines().any(|l| l.starts_with(&format!("ok {name}:"))), "check {name} did not pass:\n{text}");
    }
    assert!(!text.contains("FAIL"), "{text}");
}

/// A check that fails makes the client fail: `check` of a binary that is not
/// the engine exits 1 with `FAIL` naming the check.
#[test]
fn the_reference_client_fails_a_wrong_engine() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/analysis_client.py");
    let o = match std::process::Command::new("python3")
        .args([script, "--binary", "/bin/cat", "check", "query_version"])
        .output()
    {
        Ok(o) => o,
        Err(e) => {
            println!("skipped: python3 is not installed ({e})");
            return;
        }
    };
    let text = out(&o);
    assert_eq!(o.status.code(), Some(1), "{text}{}", err(&o));
    assert!(text.starts_with("FAIL query_version:"), "{text}");
}
