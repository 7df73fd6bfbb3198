//! Targets from a deeper search (`selfplay.label_depth`): every sample of a
//! finished game gets the fixed-depth alpha-beta's best move mixed into its
//! policy target and its score mixed into its value target, the same labels
//! whatever the number of threads, and the scores in the game record.

use martian_rules::jetan::{ChiefCapture, Jetan, JetanRules};
use martian_rules::GameState;
use martian_search::{AlphaBeta, AlphaBetaConfig, Limits, MctsConfig, UniformEvaluator};
use martian_selfplay::label::score_value;
use martian_selfplay::{label_game, play_games, FinishedGame, LabelParams, PlayParams, SelfplayConfig};

fn games(rules: &JetanRules, n: u64) -> Vec<FinishedGame> {
    let start = Jetan::new_game(rules).unwrap();
    let cfg = SelfplayConfig {
        games_in_flight: 2,
        simulations: 4,
        cheap_simulations: 4,
        full_search_prob: 1.0,
        ..SelfplayConfig::default()
    };
    let ids: Vec<u64> = (0..n).collect();
    let params = PlayParams { start: &start, game_ids: &ids, seed: 5, model_name: "uniform".into() };
    let mut out = Vec::new();
    play_games(&params, &cfg, &MctsConfig::default(), &mut UniformEvaluator, |g, _| {
        out.push(g);
        Ok(())
    })
    .unwrap();
    out
}

fn rules() -> JetanRules {
    JetanRules { max_plies: 24, chief_captured_by_non_chief: ChiefCapture::CapturerWins, ..JetanRules::default() }
}

const PARAMS: LabelParams = LabelParams { depth: 2, policy_weight: 0.25, value_weight: 0.5, score_scale: 400.0 };

#[test]
fn samples_get_the_alpha_beta_move_and_score() {
    let rules = rules();
    for original in games(&rules, 2) {
        let mut g = original.clone();
        let points = label_game::<Jetan>(&mut g, &rules, &PARAMS).unwrap();
        assert_eq!(points.len(), g.samples.len());
        assert_eq!(g.record.label_scores.len(), g.samples.len());
        let mut pos = Jetan::from_position(&g.record.start, &rules).unwrap();
        let mut moves = g.record.moves.iter();
        for ((s, before), &score) in g.samples.iter().zip(&original.samples).zip(&g.record.label_scores) {
            while pos.ply() < s.ply {
                let mv = pos.parse_move(moves.next().unwrap()).unwrap();
                pos.play_unchecked(mv);
            }
            // The label is the alpha-beta's answer for this very position.
            let mut ab = AlphaBeta::<Jetan>::new(AlphaBetaConfig { tt_mib: 1, ..AlphaBetaConfig::default() });
            let r = ab.search(&pos, &Limits::depth(PARAMS.depth));
            assert_eq!(score, r.score, "ply {}", s.ply);
            let best = pos.action_index(r.best_move.unwrap()) as u32;
            let p_of = |t: &[(u32, f32)], a: u32| t.iter().filter(|x| x.0 == a).map(|x| x.1).sum::<f32>();
            let want = 0.75 * p_of(&before.policy, best) + 0.25;
            assert!((p_of(&s.policy, best) - want).abs() < 1e-5, "ply {}", s.ply);
            let sum: f32 = s.policy.iter().map(|x| x.1).sum();
            assert!((sum - 1.0).abs() < 1e-4, "policy sums to {sum}");
            let v = 0.5 * before.value + 0.5 * score_value(score, PARAMS.score_scale);
            assert!((s.value - v).abs() < 1e-6);
            assert!(s.legal.contains(&best));
        }
    }
}

#[test]
fn labels_do_not_depend_on_the_threads() {
    let rules = rules();
    let gs = games(&rules, 2);
    let label_on = |threads: usize| -> Vec<FinishedGame> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            gs.iter()
                .cloned()
                .map(|mut g| {
                    label_game::<Jetan>(&mut g, &rules, &PARAMS).unwrap();
                    g
                })
                .collect()
        })
    };
    let (one, two) = (label_on(1), label_on(2));
    for (a, b) in one.iter().zip(&two) {
        assert_eq!(a.record, b.record);
        for (x, y) in a.samples.iter().zip(&b.samples) {
            assert_eq!((x.value, &x.policy), (y.value, &y.policy));
        }
    }
}

#[test]
fn depth_zero_leaves_the_game_alone_and_a_bad_record_is_named() {
    let rules = rules();
    let g = games(&rules, 1).pop().unwrap();
    let mut same = g.clone();
    label_game::<Jetan>(&mut same, &rules, &LabelParams { depth: 0, ..PARAMS }).unwrap();
    assert_eq!(same.record, g.record);
    assert_eq!(
        same.samples.iter().map(|s| s.value).collect::<Vec<_>>(),
        g.samples.iter().map(|s| s.value).collect::<Vec<_>>()
    );
    let mut bad = g.clone();
    bad.record.moves[0] = "zz99".into();
    let e = label_game::<Jetan>(&mut bad, &rules, &PARAMS).unwrap_err();
    assert!(e.contains(&format!("game {}", g.record.game_id)) && e.contains("zz99"), "{e}");
}
