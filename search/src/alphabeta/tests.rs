use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Move};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::*;

fn engine<G: AbGame>(tt_mib: usize, strict: bool) -> AlphaBeta<G> {
    AlphaBeta::new(AlphaBetaConfig { tt_mib, strict_tt: strict, ..AlphaBetaConfig::default() })
}

fn jetan(pos: &str) -> Jetan {
    Jetan::from_position(pos, &JetanRules::default()).unwrap()
}

fn mc(pos: &str) -> MartianChess {
    MartianChess::from_position(pos, &MartianRules::default()).unwrap()
}

/// Positions from random games (`plies` random moves from the start).
fn random_positions<G: GameState>(start: &G, n: usize, max_plies: u32, seed: u64) -> Vec<G> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut moves = Vec::new();
    while out.len() < n {
        let mut s = start.clone();
        let plies = rand::Rng::gen_range(&mut rng, 2..=max_plies);
        for _ in 0..plies {
            s.legal_moves(&mut moves);
            let Some(&m) = moves.choose(&mut rng) else {
                break;
            };
            s.play_unchecked(m);
        }
        if s.outcome().is_none() {
            out.push(s);
        }
    }
    out
}

#[test]
fn jetan_princess_capture_in_one() {
    // Spec E3: the Black Panthan on e7 takes the Princess on e8.
    let s = jetan("C9/10/4P5/4n5/10/10/10/10/10/c8p b OB - 0 0");
    let r = engine::<Jetan>(4, false).search(&s, &Limits::depth(3));
    assert_eq!(r.best_move, Some(s.parse_move("e7e8").unwrap()));
    assert_eq!(r.score, MATE - 1, "{}", score_text(r.score));
}

#[test]
fn jetan_princess_capture_in_three_plies() {
    // Orange's Princess on a7 (Escape spent): Black forces her capture on its
    // second move whatever Orange does (checked exhaustively when found).
    let s = jetan("C9/t2t6/10/P2w6/10/10/10/10/10/c8p b B - 0 0");
    for depth in [3, 5] {
        let mut e = engine::<Jetan>(4, false);
        let r = e.search(&s, &Limits::depth(depth));
        assert_eq!(r.score, MATE - 3, "depth {depth}: {}", score_text(r.score));
        let mv = r.best_move.unwrap();
        // Every reply still loses at once.
        let mut t = s.clone();
        t.play(mv).unwrap();
        let mut replies = Vec::new();
        t.legal_moves(&mut replies);
        assert!(!replies.is_empty());
        for rep in replies {
            let mut u = t.clone();
            u.play_unchecked(rep);
            let r2 = engine::<Jetan>(1, false).search(&u, &Limits::depth(1));
            assert_eq!(r2.score, MATE - 1, "after {} {}", s.move_to_string(mv), t.move_to_string(rep));
        }
    }
}

#[test]
fn martian_tie_break_capture_mc12() {
    // Spec MC12: a4xb5 makes it 6-6 with South moving last: South wins.
    let s = mc("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0");
    for depth in 1..=4 {
        let r = engine::<MartianChess>(4, false).search(&s, &Limits::depth(depth));
        assert_eq!(r.best_move, Some(s.parse_move("a4b5").unwrap()), "depth {depth}");
        assert_eq!(r.score, MATE - 1);
        assert_eq!(r.pv, vec![s.parse_move("a4b5").unwrap()]);
    }
}

fn check_legal<G: AbGame>(start: &G, seed: u64, limits: Limits) {
    let mut e = engine::<G>(2, false);
    let mut legal = Vec::new();
    for s in random_positions(start, 12, 60, seed) {
        let r = e.search(&s, &limits);
        s.legal_moves(&mut legal);
        let mv = r.best_move.expect("a move in a live position");
        assert!(legal.contains(&mv), "illegal {} in {}", s.move_to_string(mv), s.to_position());
        // The whole PV is playable.
        let mut t = s.clone();
        for &m in &r.pv {
            t.play(m).unwrap_or_else(|e| panic!("PV move {} illegal in {}: {e}", t.move_to_string(m), s.to_position()));
        }
    }
}

#[test]
fn never_returns_an_illegal_move() {
    let j = Jetan::new_game(&JetanRules::default()).unwrap();
    let m = MartianChess::new_game(&MartianRules::default()).unwrap();
    check_legal(&j, 1, Limits::depth(2));
    check_legal(&j, 2, Limits::nodes(3_000));
    check_legal(&m, 3, Limits::depth(4));
    check_legal(&m, 4, Limits::movetime(Duration::from_millis(5)));
}

fn same_with_and_without_tt<G: AbGame>(start: &G, depth: u32, seed: u64) {
    for s in random_positions(start, 10, 40, seed) {
        let a = engine::<G>(8, true).search(&s, &Limits::depth(depth));
        let b = engine::<G>(0, true).search(&s, &Limits::depth(depth));
        assert_eq!((a.score, a.best_move), (b.score, b.best_move), "{}", s.to_position());
        assert!(a.nodes <= b.nodes * 2);
    }
}

#[test]
fn fixed_depth_result_does_not_depend_on_the_tt() {
    same_with_and_without_tt(&Jetan::new_game(&JetanRules::default()).unwrap(), 3, 11);
    same_with_and_without_tt(&MartianChess::new_game(&MartianRules::default()).unwrap(), 5, 12);
}

#[test]
fn deterministic_for_a_seed() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    for s in random_positions(&start, 5, 30, 21) {
        let a = engine::<MartianChess>(4, false).search(&s, &Limits::depth(5));
        let b = engine::<MartianChess>(4, false).search(&s, &Limits::depth(5));
        assert_eq!((a.score, a.best_move, &a.pv, a.nodes), (b.score, b.best_move, &b.pv, b.nodes));
    }
    let j = Jetan::new_game(&JetanRules::default()).unwrap();
    let a = engine::<Jetan>(4, false).search(&j, &Limits::nodes(20_000));
    let b = engine::<Jetan>(4, false).search(&j, &Limits::nodes(20_000));
    assert_eq!((a.score, a.best_move, a.depth), (b.score, b.best_move, b.depth));
}

#[test]
fn pluggable_material_eval() {
    // Plain score difference: still finds the MC12 win.
    let material = |s: &MartianChess| {
        let sc = s.scores();
        let me = s.side_to_move().index();
        100 * (sc[me] as i32 - sc[1 - me] as i32)
    };
    let mut e = AlphaBeta::with_eval(AlphaBetaConfig::default(), material);
    let s = mc("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0");
    let r = e.search(&s, &Limits::depth(2));
    assert_eq!(r.best_move, Some(Move::new(12, 17)));
}

#[test]
fn score_text_forms() {
    assert_eq!(score_text(MATE - 3), "win in 3");
    assert_eq!(score_text(-(MATE - 2)), "loss in 2");
    assert_eq!(score_text(125), "+1.25");
}

#[test]
fn seed000_values() {
    assert_eq!(JetanValues::Seed000.table()[martian_rules::jetan::Piece::Chief.index()], 700);
    assert_eq!(JetanValues::CazauxKnowlton.table()[martian_rules::jetan::Piece::Flier.index()], 950);
    let e = JetanEval::with_values(JetanValues::Seed000);
    let s = Jetan::new_game(&JetanRules::default()).unwrap();
    // The initial position is symmetric up to the side to move's first-move mobility.
    assert!(e.evaluate(&s).abs() < 100);
}

/// Raises `flag` after `delay` on another thread; returns the instant it did.
fn raise_after(flag: &Arc<AtomicBool>, delay: Duration) -> std::thread::JoinHandle<Instant> {
    let flag = Arc::clone(flag);
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        flag.store(true, Ordering::Relaxed);
        Instant::now()
    })
}

#[test]
fn the_stop_signal_ends_an_unbounded_search_quickly() {
    let m = MartianChess::new_game(&MartianRules::default()).unwrap();
    let j = Jetan::new_game(&JetanRules::default()).unwrap();
    // Limits that would run for ages (and, as deadlines, overflow an Instant).
    let huge = [
        Limits::depth(100),
        Limits { depth: Some(u32::MAX), nodes: Some(u64::MAX), movetime: Some(Duration::MAX) },
        Limits::movetime(Duration::from_millis(u64::MAX)),
        Limits::nodes(u64::from(u32::MAX)),
    ];
    for (i, limits) in huge.iter().enumerate() {
        let flag = Arc::new(AtomicBool::new(false));
        let raised = raise_after(&flag, Duration::from_millis(200));
        let (r, legal) = if i % 2 == 0 {
            let mut e = engine::<MartianChess>(4, false);
            e.set_stop_signal(Some(Arc::clone(&flag)));
            let r = e.search(&m, limits);
            let mut legal = Vec::new();
            m.legal_moves(&mut legal);
            (r, legal)
        } else {
            let mut e = engine::<Jetan>(4, false);
            e.set_stop_signal(Some(Arc::clone(&flag)));
            let r = e.search(&j, limits);
            let mut legal = Vec::new();
            j.legal_moves(&mut legal);
            (r, legal)
        };
        let done = Instant::now();
        let raised = raised.join().unwrap();
        // Generous for a loaded machine; the check itself is every 256 nodes.
        assert!(
            done.saturating_duration_since(raised) < Duration::from_millis(500),
            "{limits:?}: stop took {:?}",
            done - raised
        );
        assert!(legal.contains(&r.best_move.expect("a move")), "{limits:?}");
        assert!(r.depth >= 1, "{limits:?}: 200 ms complete at least one iteration");
    }
}

#[test]
fn a_raised_signal_returns_a_legal_move_at_once() {
    let m = MartianChess::new_game(&MartianRules::default()).unwrap();
    let mut e = engine::<MartianChess>(1, false);
    let flag = Arc::new(AtomicBool::new(true));
    e.set_stop_signal(Some(Arc::clone(&flag)));
    let t0 = Instant::now();
    let r = e.search(&m, &Limits::depth(100));
    assert!(t0.elapsed() < Duration::from_millis(500));
    let mut legal = Vec::new();
    m.legal_moves(&mut legal);
    assert!(legal.contains(&r.best_move.expect("a move")));
    // Cleared by the caller, the same engine searches normally again.
    flag.store(false, Ordering::Relaxed);
    let r = e.search(&m, &Limits::depth(3));
    assert_eq!(r.depth, 3);
    e.set_stop_signal(None);
    assert!(e.stop_signal().is_none());
    assert_eq!(e.search(&m, &Limits::depth(2)).depth, 2);
}
