//! A slow, obviously-correct mailbox implementation of two-player Martian Chess
//! (docs/rules/martian-chess.md), written independently of the bitboard code, used
//! as a test oracle. It has its own parser and printer of the §10 state string.
#![allow(dead_code)]

/// Piece values: 0 empty, 1 Pawn, 2 Drone, 3 Queen (spec §2).
pub type Cell = u8;

/// Switches of spec §15 the oracle understands.
#[derive(Clone, Copy, Debug)]
pub struct SlowRules {
    pub field_promotion: bool,
    pub no_undo: bool,
    pub clock_auto: bool,
    pub tie_last_mover_wins: bool,
    pub max_plies: u32,
}

impl Default for SlowRules {
    fn default() -> Self {
        SlowRules { field_promotion: true, no_undo: true, clock_auto: true, tie_last_mover_wins: true, max_plies: 300 }
    }
}

/// Result: winner (0 South, 1 North, None draw) and a reason name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowResult {
    pub winner: Option<usize>,
    pub reason: &'static str,
}

#[derive(Clone, Debug)]
pub struct Slow {
    /// `board[rank][file]`, rank 0 = rank 1.
    pub board: [[Cell; 4]; 8],
    /// 0 South, 1 North.
    pub to_move: usize,
    pub score: [u32; 2],
    /// Previous ply as ((file, rank), (file, rank)).
    pub last: Option<((i32, i32), (i32, i32))>,
    /// `None` = clock not called, else the countdown.
    pub clock: Option<u32>,
    pub quiet: u32,
    pub ply: u32,
    pub rules: SlowRules,
    pub result: Option<SlowResult>,
}

/// Owner of a rank: ranks 1-4 (index 0-3) are South's zone.
fn zone_of(rank: i32) -> usize {
    if rank < 4 {
        0
    } else {
        1
    }
}

fn sq_name(f: i32, r: i32) -> String {
    format!("{}{}", (b'a' + f as u8) as char, r + 1)
}

fn parse_sq(s: &str) -> Option<(i32, i32)> {
    let b = s.as_bytes();
    if b.len() != 2 || !(b'a'..=b'd').contains(&b[0]) || !(b'1'..=b'8').contains(&b[1]) {
        return None;
    }
    Some(((b[0] - b'a') as i32, (b[1] - b'1') as i32))
}

/// A move as ((file, rank), (file, rank)).
pub type SlowMove = ((i32, i32), (i32, i32));

/// Square index of spec §1.
pub fn index(fr: (i32, i32)) -> u8 {
    (fr.0 + 4 * fr.1) as u8
}

impl Slow {
    /// Parses a well-formed state string (panics on malformed input: test use only).
    pub fn parse(text: &str, rules: SlowRules) -> Slow {
        let f: Vec<&str> = text.split(' ').collect();
        assert_eq!(f.len(), 8);
        let mut board = [[0u8; 4]; 8];
        for (i, row) in f[0].split('/').enumerate() {
            let rank = 7 - i;
            let mut file = 0;
            for c in row.chars() {
                match c {
                    'P' => {
                        board[rank][file] = 1;
                        file += 1
                    }
                    'D' => {
                        board[rank][file] = 2;
                        file += 1
                    }
                    'Q' => {
                        board[rank][file] = 3;
                        file += 1
                    }
                    d => file += d.to_digit(10).unwrap() as usize,
                }
            }
            assert_eq!(file, 4);
        }
        let to_move = if f[1] == "S" { 0 } else { 1 };
        let last =
            if f[4] == "-" { None } else { Some((parse_sq(&f[4][0..2]).unwrap(), parse_sq(&f[4][2..4]).unwrap())) };
        let clock = if f[5] == "-" { None } else { Some(f[5].parse().unwrap()) };
        let mut s = Slow {
            board,
            to_move,
            score: [f[2].parse().unwrap(), f[3].parse().unwrap()],
            last,
            clock,
            quiet: f[6].parse().unwrap(),
            ply: f[7].parse().unwrap(),
            rules,
            result: None,
        };
        s.result = s.check_end(1 - to_move);
        s
    }

    pub fn position(&self) -> String {
        let mut rows = Vec::new();
        for rank in (0..8).rev() {
            let mut row = String::new();
            let mut empty = 0;
            for file in 0..4 {
                let c = self.board[rank][file];
                if c == 0 {
                    empty += 1;
                } else {
                    if empty > 0 {
                        row.push_str(&empty.to_string());
                        empty = 0;
                    }
                    row.push(['.', 'P', 'D', 'Q'][c as usize]);
                }
            }
            if empty > 0 {
                row.push_str(&empty.to_string());
            }
            rows.push(row);
        }
        let last = match self.last {
            None => "-".to_string(),
            Some((a, b)) => format!("{}{}", sq_name(a.0, a.1), sq_name(b.0, b.1)),
        };
        let clock = match self.clock {
            None => "-".to_string(),
            Some(c) => c.to_string(),
        };
        format!(
            "{} {} {} {} {} {} {} {}",
            rows.join("/"),
            if self.to_move == 0 { "S" } else { "N" },
            self.score[0],
            self.score[1],
            last,
            clock,
            self.quiet,
            self.ply
        )
    }

    fn at(&self, f: i32, r: i32) -> Cell {
        self.board[r as usize][f as usize]
    }

    fn zone_has(&self, side: usize, value: Cell) -> bool {
        (0..8).any(|r| zone_of(r) == side && (0..4).any(|f| self.at(f, r) == value))
    }

    fn zone_empty(&self, side: usize) -> bool {
        (0..8).all(|r| zone_of(r) != side || (0..4).all(|f| self.at(f, r) == 0))
    }

    /// Every legal move, ignoring whether the game is over.
    pub fn raw_moves(&self) -> Vec<SlowMove> {
        let me = self.to_move;
        let mut out = Vec::new();
        let diag = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
        let orth = [(1, 0), (-1, 0), (0, 1), (0, -1)];
        for r in 0..8 {
            for f in 0..4 {
                let v = self.at(f, r);
                if v == 0 || zone_of(r) != me {
                    continue;
                }
                let (dirs, max): (Vec<(i32, i32)>, i32) = match v {
                    1 => (diag.to_vec(), 1),
                    2 => (orth.to_vec(), 2),
                    _ => (diag.iter().chain(orth.iter()).copied().collect(), 8),
                };
                for (df, dr) in dirs {
                    for k in 1..=max {
                        let (tf, tr) = (f + df * k, r + dr * k);
                        if !(0..4).contains(&tf) || !(0..8).contains(&tr) {
                            break;
                        }
                        let w = self.at(tf, tr);
                        if w == 0 {
                            out.push(((f, r), (tf, tr)));
                            continue;
                        }
                        if zone_of(tr) != me {
                            out.push(((f, r), (tf, tr))); // capture
                        } else if self.rules.field_promotion && v + w == 3 && !self.zone_has(me, 3) {
                            out.push(((f, r), (tf, tr))); // Drone + Pawn -> Queen
                        } else if self.rules.field_promotion && v == 1 && w == 1 && !self.zone_has(me, 2) {
                            out.push(((f, r), (tf, tr))); // Pawn + Pawn -> Drone
                        }
                        break;
                    }
                }
            }
        }
        if self.rules.no_undo {
            if let Some((a, b)) = self.last {
                out.retain(|&m| m != (b, a));
            }
        }
        out
    }

    /// Legal moves: none once the game is over.
    pub fn moves(&self) -> Vec<SlowMove> {
        if self.result.is_some() {
            Vec::new()
        } else {
            self.raw_moves()
        }
    }

    fn scored(&self, reason: &'static str, tie: Option<usize>) -> SlowResult {
        let winner = if self.score[0] > self.score[1] {
            Some(0)
        } else if self.score[1] > self.score[0] {
            Some(1)
        } else {
            tie
        };
        SlowResult { winner, reason }
    }

    fn check_end(&self, last_mover: usize) -> Option<SlowResult> {
        if self.zone_empty(0) || self.zone_empty(1) {
            let tie = if self.rules.tie_last_mover_wins { Some(last_mover) } else { None };
            return Some(self.scored("EmptyZone", tie));
        }
        if self.rules.clock_auto && self.clock == Some(0) {
            return Some(self.scored("Clock", None));
        }
        if self.ply >= self.rules.max_plies {
            return Some(self.scored("MoveCap", None));
        }
        if self.raw_moves().is_empty() {
            return Some(self.scored("NoLegalMoves", None));
        }
        None
    }

    /// Plays a legal move.
    pub fn play(&mut self, m: SlowMove) {
        let me = self.to_move;
        let ((f, r), (tf, tr)) = m;
        let v = self.at(f, r);
        let w = self.at(tf, tr);
        self.board[r as usize][f as usize] = 0;
        let mut capture = false;
        if w == 0 {
            self.board[tr as usize][tf as usize] = v;
        } else if zone_of(tr) != me {
            self.score[me] += w as u32;
            self.board[tr as usize][tf as usize] = v;
            capture = true;
        } else {
            self.board[tr as usize][tf as usize] = v + w;
        }
        self.to_move = 1 - me;
        self.last = Some(m);
        self.ply += 1;
        if capture {
            self.quiet = 0;
        } else {
            self.quiet += 1;
        }
        if self.rules.clock_auto {
            match self.clock {
                Some(c) => self.clock = Some(if capture { 7 } else { c - 1 }),
                None => {
                    if self.quiet >= 7 {
                        self.clock = Some(7);
                    }
                }
            }
        }
        self.result = self.check_end(me);
    }

    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let mut n = 0;
        for m in self.moves() {
            let mut c = self.clone();
            c.play(m);
            n += c.perft(depth - 1);
        }
        n
    }
}
