//! A slow, obviously-correct mailbox implementation of four-player Martian
//! Chess (docs/rules/martian-chess.md §14, with the piece moves of §5 and the
//! merges of §7), written independently of the bitboard code and used as a
//! test oracle. It has its own parser and printer of the §14.8 position
//! string, and computes results (§14.7) with exact fractions.
#![allow(dead_code)]

/// Piece values: 0 empty, 1 Pawn, 2 Drone, 3 Queen (spec §2).
pub type Cell = u8;

/// Seats in the clockwise order of §14.3: 0 SW, 1 NW, 2 NE, 3 SE.
pub const SEAT_NAMES: [&str; 4] = ["SW", "NW", "NE", "SE"];

/// Clock modes of §14.5.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlowClock {
    Auto,
    Manual,
    Off,
}

/// Switches of spec §15 the oracle understands.
#[derive(Clone, Copy, Debug)]
pub struct SlowRules {
    pub clockwise: bool,
    pub teams: bool,
    pub field_promotion: bool,
    pub clock: SlowClock,
    pub clock_plies: u32,
    pub tie_last_mover_wins: bool,
    pub max_plies: u32,
}

impl Default for SlowRules {
    fn default() -> Self {
        SlowRules {
            clockwise: true,
            teams: true,
            field_promotion: true,
            clock: SlowClock::Auto,
            clock_plies: 14,
            tie_last_mover_wins: true,
            max_plies: 300,
        }
    }
}

/// A result: the value of each seat (§14.7), as an exact fraction
/// `num / 9` (free-for-all values are multiples of 1/9: +1, -1/3, +1/3, +1/9,
/// 0), and the reason name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowResult {
    pub values_ninths: [i32; 4],
    pub reason: &'static str,
}

/// A square as (file, rank), both 0-based.
pub type Sq = (i32, i32);

/// A move: origin, destination, and whether it calls the clock (§14.5).
pub type SlowMove = (Sq, Sq, bool);

#[derive(Clone, Debug)]
pub struct Slow {
    /// `board[rank][file]`, rank 0 = rank 1.
    pub board: [[Cell; 8]; 8],
    /// The seat to move (0 SW, 1 NW, 2 NE, 3 SE).
    pub to_move: usize,
    pub score: [u32; 4],
    /// `None` = clock not called, else the countdown.
    pub clock: Option<u32>,
    pub quiet: u32,
    pub ply: u32,
    pub rules: SlowRules,
    pub result: Option<SlowResult>,
}

/// The seat whose quadrant holds (file, rank) (§14.1).
pub fn seat_of(f: i32, r: i32) -> usize {
    match (f < 4, r < 4) {
        (true, true) => 0,   // SW: a1-d4
        (true, false) => 1,  // NW: a5-d8
        (false, false) => 2, // NE: e5-h8
        (false, true) => 3,  // SE: e1-h4
    }
}

/// The team of a seat: 0 for SW and NE, 1 for NW and SE (§14.1).
pub fn team_of(seat: usize) -> usize {
    match seat {
        0 | 2 => 0,
        _ => 1,
    }
}

pub fn sq_name(s: Sq) -> String {
    format!("{}{}", (b'a' + s.0 as u8) as char, s.1 + 1)
}

/// Square index of §14.1.
pub fn index(s: Sq) -> u8 {
    (s.0 + 8 * s.1) as u8
}

/// `<from><to>` with `*` for a clock call.
pub fn move_name(m: SlowMove) -> String {
    format!("{}{}{}", sq_name(m.0), sq_name(m.1), if m.2 { "*" } else { "" })
}

impl Slow {
    /// Parses a well-formed position string (panics on malformed input: test use only).
    pub fn parse(text: &str, rules: SlowRules) -> Slow {
        let f: Vec<&str> = text.split(' ').collect();
        assert_eq!(f.len(), 9, "{text}");
        let mut board = [[0u8; 8]; 8];
        for (i, row) in f[0].split('/').enumerate() {
            let rank = 7 - i;
            let mut file = 0;
            for c in row.chars() {
                let v = match c {
                    'P' => 1,
                    'D' => 2,
                    'Q' => 3,
                    d => {
                        file += d.to_digit(10).unwrap() as usize;
                        continue;
                    }
                };
                board[rank][file] = v;
                file += 1;
            }
            assert_eq!(file, 8, "{text}");
        }
        let to_move = SEAT_NAMES.iter().position(|&s| s == f[1]).unwrap();
        let clock = if f[6] == "-" { None } else { Some(f[6].parse().unwrap()) };
        let mut s = Slow {
            board,
            to_move,
            score: [f[2].parse().unwrap(), f[3].parse().unwrap(), f[4].parse().unwrap(), f[5].parse().unwrap()],
            clock,
            quiet: f[7].parse().unwrap(),
            ply: f[8].parse().unwrap(),
            rules,
            result: None,
        };
        let last = s.previous(to_move);
        s.result = s.check_end(last);
        s
    }

    pub fn position(&self) -> String {
        let mut rows = Vec::new();
        for rank in (0..8).rev() {
            let mut row = String::new();
            let mut empty = 0;
            for file in 0..8 {
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
        let clock = match self.clock {
            None => "-".to_string(),
            Some(c) => c.to_string(),
        };
        format!(
            "{} {} {} {} {} {} {} {} {}",
            rows.join("/"),
            SEAT_NAMES[self.to_move],
            self.score[0],
            self.score[1],
            self.score[2],
            self.score[3],
            clock,
            self.quiet,
            self.ply
        )
    }

    /// The seat after `seat` in turn order (§14.3).
    pub fn next(&self, seat: usize) -> usize {
        let order: [usize; 4] = if self.rules.clockwise { [0, 1, 2, 3] } else { [0, 3, 2, 1] };
        let i = order.iter().position(|&s| s == seat).unwrap();
        order[(i + 1) % 4]
    }

    /// The seat before `seat` in turn order.
    pub fn previous(&self, seat: usize) -> usize {
        (0..4).find(|&s| self.next(s) == seat).unwrap()
    }

    pub fn at(&self, f: i32, r: i32) -> Cell {
        self.board[r as usize][f as usize]
    }

    fn quadrant_has(&self, seat: usize, value: Cell) -> bool {
        (0..8).any(|r| (0..8).any(|f| seat_of(f, r) == seat && self.at(f, r) == value))
    }

    fn quadrant_empty(&self, seat: usize) -> bool {
        (0..8).all(|r| (0..8).all(|f| seat_of(f, r) != seat || self.at(f, r) == 0))
    }

    /// Every legal move, ignoring whether the game is over (§14.4, §5, §7, §14.5).
    pub fn raw_moves(&self) -> Vec<SlowMove> {
        let me = self.to_move;
        let mut out = Vec::new();
        let diag = [(1, 1), (1, -1), (-1, 1), (-1, -1)];
        let orth = [(1, 0), (-1, 0), (0, 1), (0, -1)];
        for r in 0..8 {
            for f in 0..8 {
                let v = self.at(f, r);
                if v == 0 || seat_of(f, r) != me {
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
                        if !(0..8).contains(&tf) || !(0..8).contains(&tr) {
                            break;
                        }
                        let w = self.at(tf, tr);
                        if w == 0 {
                            out.push(((f, r), (tf, tr), false));
                            continue;
                        }
                        if seat_of(tf, tr) != me {
                            out.push(((f, r), (tf, tr), false)); // capture, any other quadrant
                        } else if self.rules.field_promotion && v + w == 3 && !self.quadrant_has(me, 3) {
                            out.push(((f, r), (tf, tr), false)); // Drone + Pawn -> Queen
                        } else if self.rules.field_promotion && v == 1 && w == 1 && !self.quadrant_has(me, 2) {
                            out.push(((f, r), (tf, tr), false)); // Pawn + Pawn -> Drone
                        }
                        break;
                    }
                }
            }
        }
        if self.rules.clock == SlowClock::Manual && self.clock.is_none() {
            let calls: Vec<SlowMove> = out.iter().map(|&(a, b, _)| (a, b, true)).collect();
            out.extend(calls);
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

    /// §14.7 scoring; `empty_quadrant` selects the tie rule of that ending.
    fn scored(&self, reason: &'static str, last_mover: usize) -> SlowResult {
        let empty_quadrant = reason == "EmptyZone";
        let mut values = [0i32; 4];
        if self.rules.teams {
            let t = [self.score[0] + self.score[2], self.score[1] + self.score[3]];
            let winner = if t[0] > t[1] {
                Some(0)
            } else if t[1] > t[0] {
                Some(1)
            } else if empty_quadrant && self.rules.tie_last_mover_wins {
                Some(team_of(last_mover))
            } else {
                None
            };
            if let Some(w) = winner {
                for (s, v) in values.iter_mut().enumerate() {
                    *v = if team_of(s) == w { 9 } else { -9 };
                }
            }
        } else {
            let top = *self.score.iter().max().unwrap();
            let tied: Vec<usize> = (0..4).filter(|&s| self.score[s] == top).collect();
            // Shares as fractions p = 1/k; value (4p - 1) / 3 = (4 - k) / (3k),
            // or -1/3 for a seat without a share; in ninths.
            let winners: Vec<usize> = if empty_quadrant && self.rules.tie_last_mover_wins && tied.contains(&last_mover)
            {
                vec![last_mover]
            } else {
                tied
            };
            let k = winners.len() as i32;
            for (s, v) in values.iter_mut().enumerate() {
                *v = if winners.contains(&s) {
                    assert_eq!(9 * (4 - k) % (3 * k), 0);
                    9 * (4 - k) / (3 * k)
                } else {
                    -3
                };
            }
        }
        assert_eq!(values.iter().sum::<i32>(), 0);
        SlowResult { values_ninths: values, reason }
    }

    fn check_end(&self, last_mover: usize) -> Option<SlowResult> {
        if (0..4).any(|s| self.quadrant_empty(s)) {
            return Some(self.scored("EmptyZone", last_mover));
        }
        if self.rules.clock != SlowClock::Off && self.clock == Some(0) {
            return Some(self.scored("Clock", last_mover));
        }
        if self.ply >= self.rules.max_plies {
            return Some(self.scored("MoveCap", last_mover));
        }
        if self.raw_moves().is_empty() {
            return Some(self.scored("NoLegalMoves", last_mover));
        }
        None
    }

    /// Plays a legal move.
    pub fn play(&mut self, m: SlowMove) {
        let me = self.to_move;
        let ((f, r), (tf, tr), call) = m;
        let v = self.at(f, r);
        let w = self.at(tf, tr);
        self.board[r as usize][f as usize] = 0;
        let mut capture = false;
        if w == 0 {
            self.board[tr as usize][tf as usize] = v;
        } else if seat_of(tf, tr) != me {
            self.score[me] += w as u32;
            self.board[tr as usize][tf as usize] = v;
            capture = true;
        } else {
            self.board[tr as usize][tf as usize] = v + w;
        }
        self.to_move = self.next(me);
        self.ply += 1;
        if capture {
            self.quiet = 0;
        } else {
            self.quiet += 1;
        }
        let n = self.rules.clock_plies;
        match (self.rules.clock, self.clock) {
            (SlowClock::Off, _) => {}
            (_, Some(c)) => self.clock = Some(if capture { n } else { c - 1 }),
            (SlowClock::Auto, None) => {
                if self.quiet >= n {
                    self.clock = Some(n);
                }
            }
            (SlowClock::Manual, None) => {
                if call {
                    self.clock = Some(n);
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
