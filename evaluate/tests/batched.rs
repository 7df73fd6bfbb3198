//! The batched MCTS arena plays exactly the games of the sequential arena.

use martian_evaluate::{play_match_book, play_match_mcts, random_opening, MctsPlayer, MctsSide};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::GameState;
use martian_search::{MctsConfig, UniformEvaluator};

#[test]
fn batched_match_equals_sequential_match() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let book: Vec<_> = (0..3).map(|p| random_opening(&start, 2, p).1).collect();
    let cfg = MctsConfig { leaves_per_batch: 4, ..Default::default() };
    let (mut ua, mut ub) = (UniformEvaluator, UniformEvaluator);
    let batched = play_match_mcts(
        &start,
        MctsSide { name: "a".into(), evaluator: &mut ua, simulations: 40 },
        MctsSide { name: "b".into(), evaluator: &mut ub, simulations: 4 },
        &cfg,
        &book,
        3,
        4,
        |_| {},
    )
    .unwrap();
    let mut pa = MctsPlayer::new("a".into(), UniformEvaluator, cfg.clone(), 40, 1);
    let mut pb = MctsPlayer::new("b".into(), UniformEvaluator, cfg.clone(), 4, 2);
    let seq = play_match_book(&start, &mut pa, &mut pb, &book, 3, |_| {}, |_| false).unwrap();
    assert_eq!(batched.games.len(), 6);
    for (x, y) in batched.games.iter().zip(&seq.games) {
        assert_eq!((x.pair, x.a_side, &x.moves, x.a_score), (y.pair, y.a_side, &y.moves, y.a_score));
    }
    assert_eq!(batched.pentanomial, seq.pentanomial);
    assert_eq!((batched.wins, batched.draws, batched.losses), (seq.wins, seq.draws, seq.losses));
    assert_eq!((&batched.a_colours, &batched.b_colours), (&seq.a_colours, &seq.b_colours));
    let names: Vec<&str> = seq.a_colours.iter().map(|c| c.colour.as_str()).collect();
    assert_eq!(names, ["South", "North"]);
}
