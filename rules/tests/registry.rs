//! The game registry: every game's name is its command-line name, its serde
//! name (configs, records, checkpoints) and its `GameState::KIND`.

use martian_rules::{with_game, GameKind, GameState};

#[test]
fn names_serde_and_kind_agree_for_every_game() {
    assert_eq!(GameKind::names(), ["jetan", "martian-chess", "martian-chess-4p"]);
    for g in GameKind::ALL {
        let json = serde_json::to_string(&g).unwrap();
        assert_eq!(json, format!("\"{}\"", g.name()), "serde name of {g:?}");
        let back: GameKind = serde_json::from_str(&json).unwrap();
        assert_eq!(back, g);
        assert_eq!(g.name().parse::<GameKind>().unwrap(), g);
        assert_eq!(with_game!(g, G => G::KIND), g, "with_game! arm of {g:?}");
        assert_eq!(g.num_actions(), with_game!(g, G => G::NUM_ACTIONS));
    }
    let e = "martian-chess4p".parse::<GameKind>().unwrap_err().to_string();
    assert!(e.contains("martian-chess-4p"), "{e}");
}

#[test]
fn four_player_game_is_registered_with_its_shapes() {
    let g: GameKind = "martian-chess-4p".parse().unwrap();
    assert_eq!(g.num_actions(), 8192);
    assert_eq!(g.input_shape(), [19, 8, 8]);
    assert_eq!(g.encoding().planes.len(), 19);
}
