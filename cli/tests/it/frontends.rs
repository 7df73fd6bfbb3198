//! The frontends (`play`, `analyse`, `engine`, `analysis`, `show`,
//! `evaluate`) agree on how they run the network and which rules they play:
//! libtorch's threads are set and the network warmed up in one place
//! (`martian_run::runtime::ready_network`) before the first timed search.

use crate::common::{err, mz, mz_stdin, out};

/// `play`, `analyse` and `analysis` set their libtorch threads (`--threads`,
/// default 1, 0 = all cores) and warm the network up before the first search,
/// saying so on stderr; without a network there is nothing to warm.
#[test]
fn commands_that_run_the_network_set_threads_and_warm_up() {
    let o = mz_stdin(&["play", "--game", "martian-chess", "--visits", "4"], "hint\nquit\n");
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("martian-zero: torch threads 1; network warmed up (one pass, "), "{}", err(&o));
    let o = mz(&["analyse", "--game", "martian-chess", "--visits", "4", "--threads", "2"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("torch threads 2; network warmed up"), "{}", err(&o));
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let o = mz_stdin(&["analysis", "--game", "martian-chess", "--threads", "0"], "");
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains(&format!("torch threads {cores}; network warmed up")), "{}", err(&o));
    let o = mz(&["analyse", "--game", "martian-chess", "--visits", "4", "--model", "none"]);
    assert!(o.status.success() && !err(&o).contains("warmed up"), "{}", err(&o));
}

/// Every command that plays one game takes the rules variant (`--rules`,
/// the switches of a config's `[rules]`): `show`, `play`, `engine` and
/// `analysis` play four-player free-for-all without a free-for-all network
/// (the bundled team network does not fit and is left out, said on stderr),
/// and `show --moves` of a finished free-for-all game gives the seats'
/// result, not a team's.
#[test]
fn every_command_takes_the_rules_variant() {
    let ffa = ["--game", "martian-chess-4p", "--rules", "teams=false,max_plies=1"];
    let o = mz(&[&["show"][..], &ffa, &["--moves", "c2d1"]].concat());
    assert!(o.status.success(), "{}", err(&o));
    let text = out(&o);
    assert!(text.contains("to move: NW"), "{text}");
    assert!(text.contains("result: SW,NW,NE,SE share the win (move cap)"), "{text}");
    let o = mz(&["show", "--game", "martian-chess-4p", "--rules", "max_plies=1", "--moves", "c2d1"]);
    assert!(out(&o).contains("result: draw (move cap)"), "the team game: {}", out(&o));
    // An unknown switch or a bad value is named.
    let o = mz(&["show", "--game", "martian-chess-4p", "--rules", "tems=false"]);
    assert!(!o.status.success() && err(&o).contains("unknown field `tems`"), "{}", err(&o));
    let o = mz(&["show", "--game", "martian-chess", "--rules", "max_plies=x"]);
    assert!(!o.status.success() && err(&o).contains("--rules \"max_plies=x\""), "{}", err(&o));

    let ffa = ["--game", "martian-chess-4p", "--rules", "teams=false"];
    let o = mz_stdin(&[&["play"][..], &ffa, &["--visits", "4"]].concat(), "hint\nquit\n");
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("plays under other rules") && err(&o).contains("teams false vs true"), "{}", err(&o));
    assert!(out(&o).contains("(free-for-all)") && out(&o).contains("hint: "), "{}", out(&o));
    let o = mz_stdin(&[&["engine"][..], &ffa].concat(), "hello\nposition startpos\ngo visits 4\nquit\n");
    assert!(o.status.success() && out(&o).contains("bestmove "), "{}", err(&o));
    let o = mz_stdin(&[&["analysis"][..], &ffa].concat(), "{\"id\":1,\"maxVisits\":4}\n");
    assert!(o.status.success() && out(&o).contains("\"bestMove\""), "{}", err(&o));

    // A network named with --model plays under its own rules: a differing switch is refused, named.
    let model = martian_run::checkpoints::bundled_model(martian_rules::GameKind::MartianChess4p)
        .expect("the bundled four-player model");
    let m = model.to_str().unwrap();
    for cmd in ["play", "analyse", "engine", "analysis"] {
        let o = mz_stdin(&[&[cmd][..], &ffa, &["--model", m]].concat(), "quit\n");
        assert!(!o.status.success(), "{cmd}: {}", out(&o));
        assert!(err(&o).contains("rules differ (--rules vs model): teams false vs true"), "{cmd}: {}", err(&o));
    }
    // Switches that agree with the network's are fine.
    let o = mz(&["analyse", "--game", "martian-chess-4p", "--rules", "teams=true", "--model", m, "--visits", "4"]);
    assert!(o.status.success(), "{}", err(&o));
}

/// `engine` and `analysis` play the variant they are given, not only start
/// under it: one move into a free-for-all game capped at one ply ends in
/// the seats' shared win, where the team game's cap is a draw.
#[test]
fn engine_and_analysis_play_the_rules_variant() {
    for (rules, result, winner) in [
        ("teams=false,max_plies=1", "result SW,NW,NE,SE share the win (move cap)", serde_json::json!("SW,NW,NE,SE")),
        ("max_plies=1", "result draw (move cap)", serde_json::Value::Null),
    ] {
        let game = ["--game", "martian-chess-4p", "--rules", rules];
        let o = mz_stdin(&[&["engine"][..], &game].concat(), "position startpos moves c2d1\nshow\nquit\n");
        assert!(o.status.success(), "{}", err(&o));
        assert!(out(&o).contains(&format!("info string {result}")), "{rules}: {}", out(&o));
        let o = mz_stdin(&[&["analysis"][..], &game].concat(), "{\"id\":1,\"moves\":[\"c2d1\"]}\n");
        assert!(o.status.success(), "{}", err(&o));
        let a: serde_json::Value = serde_json::from_str(out(&o).trim()).expect("one answer");
        assert_eq!(
            (&a["gameOver"]["winner"], a["gameOver"]["reason"].as_str()),
            (&winner, Some("MoveCap")),
            "{rules}: {a}"
        );
    }
}
