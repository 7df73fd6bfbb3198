//! See Cargo.toml. Minimax over the rules only (no search crate): `forces_win(g, p)` is
//! whether the side to move forces a win within `p` plies (odd), with first moves that
//! leave no threat skipped at five plies (the walk-back of earlier moves only).
use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::{GameState, Move, Side};

fn legal(g: &Jetan) -> Vec<Move> {
    let mut v = Vec::new();
    g.legal_moves(&mut v);
    v
}
fn play(g: &Jetan, m: Move) -> Jetan {
    let mut s = g.clone();
    s.play_unchecked(m);
    s
}
fn forces_win(g: &Jetan, plies: u32) -> bool {
    if g.outcome().is_some() {
        return false;
    }
    if g.has_winning_move() {
        return true;
    }
    if plies < 3 {
        return false;
    }
    let me = g.side_to_move();
    legal(g).into_iter().any(|m| {
        let a = play(g, m);
        if a.outcome().is_some() || a.has_winning_move() {
            return false;
        }
        if plies >= 5 && !a.threatens_win() {
            return false;
        }
        let rs = legal(&a);
        !rs.is_empty()
            && rs.into_iter().all(|r| {
                let b = play(&a, r);
                match b.outcome() {
                    Some(o) => o.winner == Some(me),
                    None => forces_win(&b, plies - 2),
                }
            })
    })
}
/// opponent forces a win within p plies after m
fn loses(g: &Jetan, m: Move, p: u32) -> bool {
    let a = play(g, m);
    match a.outcome() {
        Some(o) => o.winner == Some(a.side_to_move()),
        None => forces_win(&a, p),
    }
}

fn main() {
    let path = std::env::args().nth(1).unwrap();
    // The rules of configs/jetan-hour.toml and jetan-quick.toml.
    let rules = JetanRules { no_capture_limit: Some(80), max_plies: 300, ..JetanRules::default() };
    let d: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut hist = std::collections::BTreeMap::new();
    for g in d["games"].as_array().unwrap() {
        if g["a_score"].as_f64().unwrap() != 0.0 {
            continue;
        }
        let a_side = if g["a_side"].as_str() == Some("South") { Side::South } else { Side::North };
        let moves: Vec<String> =
            g["moves"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_string()).collect();
        let mut s = Jetan::new_game(&rules).unwrap();
        let mut first_bad: Option<(usize, u32, bool)> = None;
        for (i, m) in moves.iter().enumerate() {
            let mv = s.parse_move(m).unwrap();
            if s.side_to_move() == a_side && first_bad.is_none() {
                for p in [1u32, 3] {
                    if loses(&s, mv, p) {
                        // was there a move that did not lose within p?
                        let avoidable = legal(&s).into_iter().any(|x| !loses(&s, x, 3));
                        first_bad = Some((i, p, avoidable));
                        if avoidable {
                            println!("  avoidable: {} played {m}", s.to_position());
                        }
                        break;
                    }
                }
            }
            s.play_unchecked(mv);
        }
        // walk back: A's earlier moves, does each lose within 5?
        let mut back = Vec::new();
        if let Some((i, _, false)) = first_bad {
            let mut s = Jetan::new_game(&rules).unwrap();
            let mut states = Vec::new();
            for m in &moves {
                let mv = s.parse_move(m).unwrap();
                states.push((s.clone(), mv));
                s.play_unchecked(mv);
            }
            for j in [i.wrapping_sub(2), i.wrapping_sub(4)] {
                if j < states.len() {
                    let (st, mv) = &states[j];
                    back.push((j, loses(st, *mv, 5), legal(st).into_iter().filter(|&x| !loses(st, x, 3)).count()));
                }
            }
        }
        let k = match first_bad {
            Some((_, p, true)) => format!("avoidable loss within {p}"),
            Some((_, p, false)) => format!("forced (all moves lose within 3), first at {p}"),
            None => "deeper than 3".into(),
        };
        println!(
            "pair {} {:?} plies {} {}: {k} {:?} back {:?}",
            g["pair"],
            a_side,
            g["plies"],
            g["reason"],
            first_bad.map(|x| x.0),
            back
        );
        *hist.entry(k).or_insert(0) += 1;
    }
    println!("{hist:?}");
}
