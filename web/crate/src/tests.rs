//! Native tests of the session, the search driver and the bundle check.

use super::*;
use martian_rules::martian::MartianChess;
use martian_rules::GameState;

fn logits_row(num_actions: usize, favourite: Option<usize>, wdl: [f32; 3]) -> Vec<f32> {
    let mut row = vec![0.0; num_actions + 3];
    if let Some(a) = favourite {
        row[a] = 8.0;
    }
    row[num_actions..].copy_from_slice(&wdl);
    row
}

#[test]
fn play_undo_and_illegal_moves() {
    let mut s = new_session("martian-chess", "").unwrap();
    let start = s.position();
    let legal = s.legal_moves();
    assert_eq!(legal.len(), 10, "spec §16: 10 moves at the start");
    let err = s.play("a1a2").unwrap_err();
    assert!(err.contains("illegal move") || err.contains("legal"), "{err}");
    assert_eq!(s.position(), start, "a refused move leaves the position");
    s.play(&legal[0]).unwrap();
    assert_ne!(s.position(), start);
    assert_eq!(s.moves(), vec![legal[0].clone()]);
    assert!(s.undo());
    assert_eq!(s.position(), start);
    assert!(!s.undo());
    assert!(s.set_position("not a position").unwrap_err().contains("bad position string"));
    assert!(new_session("chess", "").err().unwrap().contains("unknown game"));
    assert!(new_session("jetan", "{\"max_plies\": \"x\"}").is_err());
}

#[test]
fn view_shows_the_board_and_state() {
    let s = new_session("jetan", "").unwrap();
    let v: serde_json::Value = serde_json::from_str(&s.view_json()).unwrap();
    assert_eq!(v["width"], 10);
    assert_eq!(v["cells"].as_array().unwrap().len(), 40);
    assert_eq!(v["legal"].as_array().unwrap().len(), 78);
    assert!(v["status"].to_string().contains("Escape"));
    let m = new_session("martian-chess", "").unwrap();
    let v: serde_json::Value = serde_json::from_str(&m.view_json()).unwrap();
    assert_eq!(v["cells"].as_array().unwrap().len(), 18);
    assert_eq!(v["zones"].as_array().unwrap().len(), 32);
    assert!(v["status"].to_string().contains("Score"));
}

/// The search follows the network: with one move's logit far above the
/// others at every leaf, that move gets most visits, and the value is the
/// network's P(win) - P(loss).
#[test]
fn search_follows_the_network_output() {
    let mut s = new_session("martian-chess", "").unwrap();
    let want = s.legal_moves()[3].clone();
    let want_index = s.action_index(&want).unwrap();
    let n = s.num_actions();
    s.search_begin(search_config(8, 1.25), 1).unwrap();
    assert!(s.search_apply(&[]).is_err(), "nothing pending yet");
    let mut batches = 0;
    while s.search_visits() < 200 {
        let k = s.search_gather(8).unwrap();
        if k == 0 {
            continue;
        }
        assert_eq!(s.search_input().len(), k * 11 * 8 * 4);
        assert!(s.search_apply(&[0.0; 5]).unwrap_err().contains("expected"));
        let mut out = Vec::new();
        for _ in 0..k {
            // The favourite's index is that of the root's move; elsewhere it is some move or none.
            out.extend(logits_row(n, Some(want_index), [2.0, 0.0, 0.0]));
        }
        s.search_apply(&out).unwrap();
        batches += 1;
    }
    let r: serde_json::Value = serde_json::from_str(&s.search_report_json()).unwrap();
    assert_eq!(r["best"], want.as_str());
    assert_eq!(r["moves"][0]["text"], want.as_str());
    assert!(r["batches"].as_u64().unwrap() == batches);
    assert!(!r["pv"].as_array().unwrap().is_empty());
    assert!(r["visits"].as_u64().unwrap() >= 200);
}

#[test]
fn bundle_checks_name_the_mismatch() {
    let good = serde_json::json!({
        "format": "martian-zero-model", "format_version": 1, "game": "martian-chess",
        "rules": {}, "rules_spec": {"document": MartianChess::ENCODING.rules_document,
                                    "version": MartianChess::ENCODING.rules_version},
        "input": {"shape": [11, 8, 4]}, "policy": {"size": 1024},
        "output": {"shape": [1027], "onnx_names": ["input", "output"]},
        "architecture": {"blocks": 1, "channels": 8}, "training": {"step": 3}
    });
    let info = bundle::check_bundle(&good.to_string()).unwrap();
    assert_eq!(info.output_width, 1027);
    let with = |k: &str, v: serde_json::Value| {
        let mut b = good.clone();
        b[k] = v;
        bundle::check_bundle(&b.to_string()).unwrap_err()
    };
    assert!(with("format_version", 2.into()).contains("format version is 2"));
    assert!(with("game", "go".into()).contains("\"go\""));
    assert!(with("rules_spec", serde_json::json!({"document": "docs/rules/martian-chess.md", "version": "99"}))
        .contains("version 99"));
    assert!(with("game", "jetan".into()).contains("rules specification"));
    assert!(with("rules", serde_json::json!({"no_such_switch": 1})).contains("rules"));
    assert!(bundle::check_bundle("{").unwrap_err().contains("not valid JSON"));
    // The ONNX file's checksum passes through (lower case); a malformed one is named.
    assert_eq!(info.onnx_crc64, None);
    let mut c = good.clone();
    c["onnx_crc64"] = "6C40DF5F0B497347".into();
    assert_eq!(bundle::check_bundle(&c.to_string()).unwrap().onnx_crc64.as_deref(), Some("6c40df5f0b497347"));
    assert!(with("onnx_crc64", "12ab".into()).contains("not 16 hexadecimal digits"));
}

#[test]
fn fingerprint_covers_finished_games() {
    let text = fingerprint::fingerprint("martian-chess", 3, 300).unwrap();
    assert_eq!(text.lines().count(), 300);
    assert!(text.lines().any(|l| l.contains("Some(Outcome")), "300 random plies finish a game");
    assert!(fingerprint::fingerprint("x", 1, 1).is_err());
}

/// The page's games come from the rules' registry: the names are the
/// registry's, and a game of the registry that the page does not play
/// (the four-player game) is refused like an unknown name, everywhere.
#[test]
fn the_page_plays_the_registry_games_it_has_views_for() {
    assert_eq!(games::web_games(), vec![GameKind::Jetan, GameKind::MartianChess]);
    assert_eq!(games::web_game_names(" and "), "jetan and martian-chess");
    for kind in games::web_games() {
        assert_eq!(new_session(kind.name(), "").unwrap().game(), kind.name());
        assert!(fingerprint::fingerprint(kind.name(), 1, 2).is_ok());
    }
    let four = GameKind::MartianChess4p.name();
    let e = new_session(four, "").err().unwrap();
    assert_eq!(e, format!("unknown game {four:?}; the page plays jetan and martian-chess"));
    assert!(fingerprint::fingerprint(four, 1, 1).is_err());
    let bundle = serde_json::json!({"format": "martian-zero-model", "format_version": 1, "game": four});
    assert!(bundle::check_bundle(&bundle.to_string()).unwrap_err().contains("this page plays jetan and martian-chess"));
    let versions: serde_json::Value = serde_json::from_str(&rules_versions()).unwrap();
    assert_eq!(versions["martian-chess"][1], MartianChess::ENCODING.rules_version);
    assert_eq!(versions.as_object().unwrap().len(), 2);
}
