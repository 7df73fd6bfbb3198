//! A slow, obviously-correct Jetan move generator used as a test oracle.
//!
//! Written straight from the spec (§3 path rules, §4 pieces, §5 attacked
//! squares, §6 Escape, §8.1/§8.2/§8.6 game ends) with a mailbox board, a DFS
//! over paths with a visited list and brute-force attacked squares. It shares
//! no code with the fast generator; it only reads the placement, side and
//! Escape fields of a position string (§10.3).

#![allow(dead_code, clippy::needless_range_loop)]

use std::collections::BTreeSet;

/// A piece: kind letter (uppercase) and whether it is Orange's.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct P {
    pub kind: char,
    pub orange: bool,
}

/// The oracle's position.
#[derive(Clone, Debug)]
pub struct Slow {
    pub board: [Option<P>; 100],
    pub orange_to_move: bool,
    pub escape_orange: bool,
    pub escape_black: bool,
    /// Thoat must step orthogonally first (`Thoat::OrthogonalFirst`).
    pub thoat_orth_first: bool,
}

fn on_board(f: i32, r: i32) -> bool {
    (0..10).contains(&f) && (0..10).contains(&r)
}

const ORTH: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const DIAG: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

fn is_diag(d: (i32, i32)) -> bool {
    d.0 != 0 && d.1 != 0
}

impl Slow {
    /// Reads fields 1–3 of a position string. Panics on bad input (tests only).
    pub fn parse(fen: &str) -> Slow {
        let f: Vec<&str> = fen.split(' ').collect();
        let mut board = [None; 100];
        for (i, row) in f[0].split('/').enumerate() {
            let rank = 9 - i as i32;
            let mut file = 0i32;
            let cs: Vec<char> = row.chars().collect();
            let mut j = 0;
            while j < cs.len() {
                if cs[j] == '1' && j + 1 < cs.len() && cs[j + 1] == '0' {
                    file += 10;
                    j += 2;
                } else if let Some(d) = cs[j].to_digit(10) {
                    file += d as i32;
                    j += 1;
                } else {
                    board[(file + 10 * rank) as usize] =
                        Some(P { kind: cs[j].to_ascii_uppercase(), orange: cs[j].is_ascii_uppercase() });
                    file += 1;
                    j += 1;
                }
            }
            assert_eq!(file, 10);
        }
        Slow {
            board,
            orange_to_move: f[1] == "o",
            escape_orange: f[2].contains('O'),
            escape_black: f[2].contains('B'),
            thoat_orth_first: false,
        }
    }

    /// Every end square of a valid path (§3) of the piece on `sq`; blocking applies
    /// to intermediate squares unless the piece jumps. The final square's content is ignored.
    pub fn path_ends(&self, sq: usize) -> BTreeSet<usize> {
        let p = self.board[sq].expect("piece");
        let (k, jumps) = match p.kind {
            'C' => (3, false),
            'P' => (3, true),
            'F' => (3, true),
            'D' => (3, false),
            'L' => (2, false),
            'W' => (2, false),
            'T' => (2, false),
            _ => unreachable!(),
        };
        let mut ends = BTreeSet::new();
        let mut path = vec![sq];
        self.dfs(p.kind, k, jumps, &mut path, None, &mut ends);
        ends
    }

    fn dfs(
        &self,
        kind: char,
        k: usize,
        jumps: bool,
        path: &mut Vec<usize>,
        prev: Option<(i32, i32)>,
        ends: &mut BTreeSet<usize>,
    ) {
        let steps_taken = path.len() - 1;
        if steps_taken == k {
            ends.insert(*path.last().unwrap());
            return;
        }
        let mut dirs: Vec<(i32, i32)> = Vec::new();
        match kind {
            'C' | 'P' => {
                dirs.extend(ORTH);
                dirs.extend(DIAG);
            }
            'F' | 'L' => dirs.extend(DIAG),
            'D' | 'W' => dirs.extend(ORTH),
            'T' => match prev {
                None => {
                    dirs.extend(ORTH);
                    if !self.thoat_orth_first {
                        dirs.extend(DIAG);
                    }
                }
                Some(d) if is_diag(d) => dirs.extend(ORTH),
                Some(_) => dirs.extend(DIAG),
            },
            _ => unreachable!(),
        }
        let cur = *path.last().unwrap();
        let (cf, cr) = ((cur % 10) as i32, (cur / 10) as i32);
        for d in dirs {
            let (nf, nr) = (cf + d.0, cr + d.1);
            if !on_board(nf, nr) {
                continue;
            }
            let n = (nf + 10 * nr) as usize;
            if path.contains(&n) {
                continue;
            }
            let last = steps_taken + 1 == k;
            if !last && !jumps && self.board[n].is_some() {
                continue;
            }
            path.push(n);
            self.dfs(kind, k, jumps, path, Some(d), ends);
            path.pop();
        }
    }

    /// The squares a Panthan on `sq` steps to (§4.1), ignoring their content.
    pub fn panthan_steps(&self, sq: usize) -> Vec<usize> {
        let p = self.board[sq].expect("piece");
        let fwd = if p.orange { -1 } else { 1 };
        let (f, r) = ((sq % 10) as i32, (sq / 10) as i32);
        [(0, fwd), (-1, fwd), (1, fwd), (-1, 0), (1, 0)]
            .iter()
            .filter(|d| on_board(f + d.0, r + d.1))
            .map(|d| (f + d.0 + 10 * (r + d.1)) as usize)
            .collect()
    }

    /// Squares attacked by the pieces of colour `orange` (§5): the union of every
    /// non-Princess piece's path ends / Panthan steps. Brute force.
    pub fn attacked_set(&self, orange: bool) -> [bool; 100] {
        let mut a = [false; 100];
        for s in 0..100 {
            match self.board[s] {
                Some(p) if p.orange == orange && p.kind != 'P' => {
                    let ends: Vec<usize> =
                        if p.kind == 'N' { self.panthan_steps(s) } else { self.path_ends(s).into_iter().collect() };
                    for q in ends {
                        a[q] = true;
                    }
                }
                _ => {}
            }
        }
        a
    }

    /// Legal moves `(from, to)` of the side to move (§7). Game end is not checked.
    pub fn moves(&self) -> BTreeSet<(u8, u8)> {
        let me = self.orange_to_move;
        let mut out = BTreeSet::new();
        for s in 0..100 {
            let Some(p) = self.board[s] else { continue };
            if p.orange != me {
                continue;
            }
            let lands = |t: usize| !matches!(self.board[t], Some(q) if q.orange == me);
            match p.kind {
                'N' => {
                    for t in self.panthan_steps(s) {
                        if lands(t) {
                            out.insert((s as u8, t as u8));
                        }
                    }
                }
                'P' => {
                    let mut without = self.clone();
                    without.board[s] = None;
                    let normal = self.path_ends(s);
                    let attacked = without.attacked_set(!me);
                    for t in 0..100 {
                        if self.board[t].is_some() || attacked[t] {
                            continue;
                        }
                        let right = if me { self.escape_orange } else { self.escape_black };
                        if normal.contains(&t) || right {
                            out.insert((s as u8, t as u8));
                        }
                    }
                }
                _ => {
                    for t in self.path_ends(s) {
                        if lands(t) {
                            out.insert((s as u8, t as u8));
                        }
                    }
                }
            }
        }
        out
    }

    /// Plays a move: an Escape (destination not reachable by a normal Princess path) uses the right.
    /// Returns the captured piece.
    pub fn play(&mut self, from: u8, to: u8) -> Option<P> {
        let (from, to) = (from as usize, to as usize);
        let p = self.board[from].unwrap();
        if p.kind == 'P' && !self.path_ends(from).contains(&to) {
            if p.orange {
                self.escape_orange = false;
            } else {
                self.escape_black = false;
            }
        }
        let cap = self.board[to];
        self.board[to] = Some(p);
        self.board[from] = None;
        self.orange_to_move = !self.orange_to_move;
        cap
    }

    /// Perft (§15) with the standard game ends reachable in short sequences:
    /// Princess captured, Chief captured (any capture of a Chief ends the game
    /// under the standard rules), no legal moves. Repetition, countdown and the
    /// move cap are not modelled (not reachable at the depths used).
    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let moves = self.moves();
        if depth == 1 {
            return moves.len() as u64;
        }
        let mut n = 0;
        for (f, t) in moves {
            let mut c = self.clone();
            let cap = c.play(f, t);
            if matches!(cap, Some(P { kind: 'P' | 'C', .. })) {
                continue; // game over: perft 0
            }
            n += c.perft(depth - 1);
        }
        n
    }
}
