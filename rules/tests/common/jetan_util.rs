//! Helpers shared by the Jetan integration tests.

#![allow(dead_code)]

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::{GameState, Move};

/// Square index of a name like `e5` (§1).
pub fn sq(name: &str) -> u8 {
    let b = name.as_bytes();
    let file = b[0] - b'a';
    let rank: u8 = name[1..].parse().unwrap();
    file + 10 * (rank - 1)
}

/// Name of a square index.
pub fn name(sq: u8) -> String {
    format!("{}{}", (b'a' + sq % 10) as char, sq / 10 + 1)
}

/// Loads a position under the standard rules.
pub fn load(fen: &str) -> Jetan {
    Jetan::from_position(fen, &JetanRules::default()).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// Loads a position under `rules`.
pub fn load_with(fen: &str, rules: &JetanRules) -> Jetan {
    Jetan::from_position(fen, rules).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// All legal moves.
pub fn moves(g: &Jetan) -> Vec<Move> {
    let mut v = Vec::with_capacity(Jetan::MAX_MOVES);
    g.legal_moves(&mut v);
    v
}

/// Sorted (file, then rank) destination names of the piece on `from`:
/// (normal moves, Escapes).
pub fn dests(g: &Jetan, from: &str) -> (Vec<String>, Vec<String>) {
    let f = sq(from);
    let mut normal: Vec<u8> = Vec::new();
    let mut esc: Vec<u8> = Vec::new();
    for m in moves(g).into_iter().filter(|m| m.from == f) {
        if g.is_escape(m) {
            esc.push(m.to);
        } else {
            normal.push(m.to);
        }
    }
    let key = |s: &u8| (s % 10, s / 10);
    normal.sort_by_key(key);
    esc.sort_by_key(key);
    (normal.into_iter().map(name).collect(), esc.into_iter().map(name).collect())
}

/// Splits a space-separated list, sorted by file then rank.
pub fn list(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s.split_whitespace().map(String::from).collect();
    v.sort_by_key(|n| {
        let q = sq(n);
        (q % 10, q / 10)
    });
    v
}

/// Plays space-separated moves, checking legality.
pub fn play_all(g: &mut Jetan, moves: &str) {
    for m in moves.split_whitespace() {
        let mv = g.parse_move(m).unwrap_or_else(|e| panic!("{m}: {e}"));
        g.play(mv).unwrap();
    }
}

/// Position string rotated 180° with colours swapped (Appendix setup symmetry).
pub fn rotate_fen(fen: &str) -> String {
    let f: Vec<&str> = fen.split(' ').collect();
    let g = load(fen);
    let mut ranks = Vec::new();
    for rank in (0..10u8).rev() {
        let mut s = String::new();
        let mut run = 0;
        for file in 0..10u8 {
            // Square of the rotated board at (file, rank) comes from 99 - sq.
            let src = 99 - (file + 10 * rank);
            match g.piece_at(src) {
                Some((p, side)) => {
                    if run > 0 {
                        s += &run.to_string();
                        run = 0;
                    }
                    s.push(p.letter(side.opponent()));
                }
                None => run += 1,
            }
        }
        if run > 0 {
            s += &run.to_string();
        }
        ranks.push(s);
    }
    let side = if f[1] == "o" { "b" } else { "o" };
    let esc = match f[2] {
        "O" => "B",
        "B" => "O",
        x => x,
    };
    format!("{} {} {} {} {} {}", ranks.join("/"), side, esc, f[3], f[4], f[5])
}
