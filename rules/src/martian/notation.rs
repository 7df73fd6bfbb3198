//! Text formats of spec §10: square and move text, the 8-field state string and
//! the text board.

use super::rules::{ClockMode, MartianRules};
use super::tables::{file_of, rank_of, square};
use super::{MartianChess, Piece, MAX_SCORE};
use crate::error::{PositionErrorKind, RulesError};
use crate::game::{GameState, Move, Side};

/// Name of a square, e.g. `d3`.
pub(crate) fn square_name(sq: u8) -> String {
    let mut s = String::with_capacity(2);
    s.push((b'a' + file_of(sq)) as char);
    s.push((b'1' + rank_of(sq)) as char);
    s
}

/// Parses a square name `a1`..`d8` from two characters.
fn parse_square(f: char, r: char) -> Option<u8> {
    let file = match f {
        'a'..='d' => f as u8 - b'a',
        _ => return None,
    };
    let rank = match r {
        '1'..='8' => r as u8 - b'1',
        _ => return None,
    };
    Some(square(file, rank))
}

/// `<from><to>` text of a move (spec §10).
pub(crate) fn move_text(mv: Move) -> String {
    let mut s = square_name(mv.from);
    s.push_str(&square_name(mv.to));
    s
}

/// Parses `d3d5`, or the human forms `b3-c4`, `b4xb6`, `a1+b2` (spec §10), in
/// any case (`D3D5`, as Jetan's moves). The separator is not checked against
/// the kind of move.
pub(crate) fn parse_move_text(text: &str) -> Result<Move, RulesError> {
    let bad = |reason: &str| RulesError::BadMoveText { text: text.to_string(), reason: reason.to_string() };
    let chars: Vec<char> = text.trim().chars().map(|c| c.to_ascii_lowercase()).collect();
    let (a, b) = match chars.len() {
        4 => ((chars[0], chars[1]), (chars[2], chars[3])),
        5 if matches!(chars[2], '-' | 'x' | '+') => ((chars[0], chars[1]), (chars[3], chars[4])),
        5 => return Err(bad("expected <from><to> with squares a1..d8 (e.g. d3d5), or '-', 'x' or '+' between them")),
        _ => return Err(bad("expected <from><to> with squares a1..d8, e.g. d3d5")),
    };
    let from = parse_square(a.0, a.1).ok_or_else(|| bad("bad origin square (a1..d8)"))?;
    let to = parse_square(b.0, b.1).ok_or_else(|| bad("bad destination square (a1..d8)"))?;
    if from == to {
        return Err(bad("origin and destination are the same square"));
    }
    Ok(Move::new(from, to))
}

fn perr(kind: PositionErrorKind, text: &str) -> RulesError {
    RulesError::Position { kind, text: text.to_string() }
}

/// A non-negative decimal number made of ASCII digits only.
fn parse_number(field: &'static str, s: &str, max: u32, text: &str) -> Result<u32, RulesError> {
    let bad = || perr(PositionErrorKind::BadNumber { field, text: s.to_string() }, text);
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    match s.parse::<u32>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(perr(PositionErrorKind::NumberTooLarge { field, text: s.to_string(), max: u64::from(max) }, text)),
    }
}

/// Refuses a score that the points still on the board could carry past
/// [`MAX_SCORE`]. A capture moves a piece's points from the board to a score
/// and a merge keeps them (spec §6, §7), so with `score + on_board <=
/// MAX_SCORE` for every score every position reachable from this one has
/// scores within the limit and prints a string that parses back.
pub(crate) fn check_score_room(scores: &[(&'static str, u32)], on_board: u32, text: &str) -> Result<(), RulesError> {
    for &(field, score) in scores {
        if score + on_board > MAX_SCORE {
            return Err(perr(
                PositionErrorKind::Invalid(format!(
                    "field {field}: {score} plus the {on_board} points still on the board could pass {MAX_SCORE}, \
                     the largest score a position may reach; give at most {}",
                    MAX_SCORE.saturating_sub(on_board)
                )),
                text,
            ));
        }
    }
    Ok(())
}

/// Parses the state string of spec §10:
/// `<placement> <side> <scoreS> <scoreN> <last> <clock> <quiet> <ply>`.
///
/// Extensions: the clock field also accepts `0` (the clock ran out, the game is
/// over), so that every reachable state round-trips. Scores are limited to
/// [`MAX_SCORE`], together with the points on the board ([`check_score_room`]). Piece counts are not checked (merges change them, spec §7).
pub(crate) fn parse_position(text: &str, rules: &MartianRules) -> Result<MartianChess, RulesError> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 8 {
        return Err(perr(PositionErrorKind::FieldCount { expected: 8, found: fields.len() }, text));
    }
    let ranks: Vec<&str> = fields[0].split('/').collect();
    if ranks.len() != 8 {
        return Err(perr(PositionErrorKind::RankCount { expected: 8, found: ranks.len() }, text));
    }
    let mut bb = [0u32; 3];
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = 7 - i as u8; // 0-based
        let rank_no = rank as usize + 1;
        let mut file = 0u8;
        for ch in rank_text.chars() {
            match ch {
                'P' | 'D' | 'Q' => {
                    if file >= 4 {
                        return Err(perr(PositionErrorKind::RankTooLong { rank: rank_no }, text));
                    }
                    let k = match ch {
                        'P' => Piece::Pawn,
                        'D' => Piece::Drone,
                        _ => Piece::Queen,
                    } as usize;
                    bb[k] |= 1u32 << square(file, rank);
                    file += 1;
                }
                '0'..='9' => {
                    let n = ch as u8 - b'0';
                    if n == 0 || n > 4 {
                        return Err(perr(PositionErrorKind::BadEmptyRun(ch.to_string()), text));
                    }
                    file += n;
                    if file > 4 {
                        return Err(perr(PositionErrorKind::RankTooLong { rank: rank_no }, text));
                    }
                }
                _ => return Err(perr(PositionErrorKind::BadPieceLetter(ch), text)),
            }
        }
        if file < 4 {
            return Err(perr(PositionErrorKind::RankTooShort { rank: rank_no }, text));
        }
    }
    let side = match fields[1] {
        "S" => Side::South,
        "N" => Side::North,
        s => return Err(perr(PositionErrorKind::BadSide { text: s.to_string(), expected: "S or N" }, text)),
    };
    let score_s = parse_number("scoreS", fields[2], MAX_SCORE, text)?;
    let score_n = parse_number("scoreN", fields[3], MAX_SCORE, text)?;
    let on_board: u32 = bb.iter().zip(Piece::ALL).map(|(b, p)| b.count_ones() * p.value()).sum();
    check_score_room(&[("scoreS", score_s), ("scoreN", score_n)], on_board, text)?;
    let last = match fields[4] {
        "-" => None,
        s => {
            let c: Vec<char> = s.chars().collect();
            let parsed = if c.len() == 4 {
                parse_square(c[0], c[1]).zip(parse_square(c[2], c[3])).filter(|(f, t)| f != t)
            } else {
                None
            };
            match parsed {
                Some(ft) => Some(ft),
                None => return Err(perr(PositionErrorKind::BadField { field: "last", text: s.to_string() }, text)),
            }
        }
    };
    let clock = match fields[5] {
        "-" => 0u8,
        s if s.len() == 1 && matches!(s.as_bytes()[0], b'0'..=b'7') => s.as_bytes()[0] - b'0' + 1,
        s => return Err(perr(PositionErrorKind::BadField { field: "clock", text: s.to_string() }, text)),
    };
    if clock != 0 && rules.clock == ClockMode::Off {
        // Under `clock = Off` the clock is never called: a countdown (and above
        // all a `0`, a game the clock ended) cannot be carried by this state.
        return Err(perr(
            PositionErrorKind::Invalid(format!(
                "clock field {:?}: the rules have clock = Off, so the clock field must be \"-\"",
                fields[5]
            )),
            text,
        ));
    }
    let quiet = parse_number("quiet", fields[6], u32::MAX, text)?;
    let ply = parse_number("ply", fields[7], u32::MAX, text)?;
    Ok(MartianChess::from_parts(bb, side, [score_s, score_n], last, clock, quiet, ply, *rules))
}

/// The placement field (spec §10), ranks 8 to 1.
fn placement(s: &MartianChess) -> String {
    let mut out = String::with_capacity(24);
    for rank in (0..8u8).rev() {
        let mut empty = 0u8;
        for file in 0..4u8 {
            match s.piece_at(square(file, rank)) {
                Some(p) => {
                    if empty > 0 {
                        out.push((b'0' + empty) as char);
                        empty = 0;
                    }
                    out.push(p.letter());
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            out.push((b'0' + empty) as char);
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out
}

/// The state string of spec §10.
pub(crate) fn format_position(s: &MartianChess) -> String {
    let side = match s.side_to_move() {
        Side::South => "S",
        Side::North => "N",
    };
    let last = s.last_move().map_or_else(|| "-".to_string(), move_text);
    let clock = s.clock_countdown().map_or_else(|| "-".to_string(), |c| c.to_string());
    let [a, b] = s.scores();
    format!("{} {side} {a} {b} {last} {clock} {} {}", placement(s), s.quiet(), s.ply())
}

/// The text board (spec §10) seen from `bottom`'s side: for `Side::South` rank
/// 8 first, for `Side::North` rank 1 first with the files reversed; a `----`
/// canal line between the two halves, file letters, then a status line (the
/// side to move, or the result once the game is over, then scores and clocks).
pub(crate) fn board_text_from(s: &MartianChess, bottom: Side) -> String {
    let flipped = bottom == Side::North;
    let files: Vec<u8> = if flipped { (0..4).rev().collect() } else { (0..4).collect() };
    let ranks: Vec<u8> = if flipped { (0..8).collect() } else { (0..8).rev().collect() };
    let mut out = String::with_capacity(160);
    for (i, &rank) in ranks.iter().enumerate() {
        out.push((b'1' + rank) as char);
        out.push(' ');
        for &file in &files {
            out.push(s.piece_at(square(file, rank)).map_or('.', Piece::letter));
        }
        out.push('\n');
        if i == 3 {
            out.push_str("  ----\n");
        }
    }
    out.push_str("  ");
    out.extend(files.iter().map(|f| (b'a' + f) as char));
    out.push('\n');
    let [a, b] = s.scores();
    let clock = s.clock_countdown().map_or_else(|| "-".to_string(), |c| c.to_string());
    let head = match s.outcome() {
        Some(o) => {
            let who = o.winner.map_or_else(|| "draw".to_string(), |w| format!("{} wins", MartianChess::side_name(w)));
            format!("game over: {who} ({})", o.reason)
        }
        None => format!("{} to move", MartianChess::side_name(s.side_to_move())),
    };
    out.push_str(&format!("{head}; score South {a} North {b}; clock {clock}; quiet {}; ply {}\n", s.quiet(), s.ply()));
    out
}
