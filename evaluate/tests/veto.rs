//! The play-time tactical check of an `evaluate` MCTS player
//! ([`MctsPlayer::with_veto`], `veto_depth=D` of a player spec) on Jetan's T3
//! (`search/tests/jetan_traps.rs`): Black's `i4b6` walks into a three-ply
//! trap that loses the Princess. A player whose network likes the trap plays
//! it without the check and a safe move with it; depth 0 changes nothing.

use martian_evaluate::{MctsPlayer, Player, PlayerSpec};
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::{GameState, Move};
use martian_search::{EvalError, Evaluation, Evaluator, MctsConfig};

fn t3() -> Jetan {
    let mut g = Jetan::new_game(&JetanRules::default()).unwrap();
    for m in "e10b8 f1i4 g9g8 i2h3 f10g7".split_whitespace() {
        let mv = g.parse_move(m).unwrap();
        g.play_unchecked(mv);
    }
    g
}

/// Priors that put 0.9 on one move (when legal); value 0.
struct Likes(Move);

impl Evaluator<Jetan> for Likes {
    fn evaluate(&mut self, _: &[&Jetan], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        out.clear();
        for m in moves {
            let n = m.len();
            let priors = if m.contains(&self.0) && n > 1 {
                m.iter().map(|&x| if x == self.0 { 0.9 } else { 0.1 / (n - 1) as f32 }).collect()
            } else {
                vec![1.0 / n.max(1) as f32; n]
            };
            out.push(Evaluation { priors, value: 0.0, draw: 0.0, values: Vec::new(), score: None });
        }
        Ok(())
    }
}

/// The safe moves of T3 (no forced loss within three plies; computed by
/// plain minimax in `search/tests/jetan_traps.rs`).
const SAFE: &str = "i4c3 i4c4 i4d3 i4e3 i4f1 i4f3 i4g3 i4i2 i4i3 i4j3";

#[test]
fn an_evaluate_player_with_veto_depth_avoids_the_trap() {
    let g = t3();
    let trap = g.parse_move("i4b6").unwrap();
    // No trap proofs of the search's own: only the check can see the trap.
    let cfg = MctsConfig { trap_plies: 0, leaves_per_batch: 4, ..MctsConfig::default() };
    let player = |depth| MctsPlayer::new("t".into(), Likes(trap), cfg.clone(), 16, 1).with_veto(depth).unwrap();
    let mut plain = player(0);
    assert_eq!(plain.choose_move(&g).unwrap(), trap, "the premise: without the check the trap is played");
    assert_eq!(plain.vetoes(), 0);
    for depth in [2, 3, 4] {
        let mut p = player(depth);
        let mv = p.choose_move(&g).unwrap();
        assert!(SAFE.split_whitespace().any(|s| g.move_to_string(mv) == s), "depth {depth}: {}", g.move_to_string(mv));
        assert_eq!(p.vetoes(), 1);
    }
    let e = MctsPlayer::new("t".into(), Likes(trap), cfg, 16, 1).with_veto(9).err().unwrap();
    assert!(e.contains("0..=8"), "{e}");
    // The spec key reaches the player's parameters.
    let parts = PlayerSpec::parse("mcts:visits=16,veto_depth=3").unwrap().mcts_parts(64).unwrap();
    assert_eq!((parts.veto_depth, parts.name.as_str()), (3, "mcts:uniform,visits=16,veto_depth=3"));
}
