//! Text formats of the four-player game (spec §14.4 move text, §14.8
//! position string, §14.2 text board with the canals).

use super::rules::{ClockMode, Martian4Rules};
use super::tables::{file_of, rank_of, rotate_square, square};
use super::{MartianChess4, Piece, Seat, CALL_CLOCK, MAX_SCORE};
use crate::error::{PositionErrorKind, RulesError};
use crate::game::{GameState, Move};
use crate::martian::notation::check_score_room;

/// Name of a square, e.g. `e5`.
pub(crate) fn square_name(sq: u8) -> String {
    let mut s = String::with_capacity(2);
    s.push((b'a' + file_of(sq)) as char);
    s.push((b'1' + rank_of(sq)) as char);
    s
}

/// Parses a square name `a1`..`h8` from two characters.
fn parse_square(f: char, r: char) -> Option<u8> {
    let file = match f {
        'a'..='h' => f as u8 - b'a',
        _ => return None,
    };
    let rank = match r {
        '1'..='8' => r as u8 - b'1',
        _ => return None,
    };
    Some(square(file, rank))
}

/// `<from><to>` text of a move (§14.4), `*` appended for a clock call (§14.5).
pub(crate) fn move_text(mv: Move) -> String {
    let mut s = square_name(mv.from & 63);
    s.push_str(&square_name(mv.to & 63));
    if mv.to & CALL_CLOCK != 0 {
        s.push('*');
    }
    s
}

/// Parses `c1e1`, or the human forms `c1-e1`, `d4xe5`, `g7+h6` (§14.4), each
/// optionally followed by `*` (call the clock, §14.5). The separator is not
/// checked against the kind of move.
pub(crate) fn parse_move_text(text: &str) -> Result<Move, RulesError> {
    let bad = |reason: &str| RulesError::BadMoveText { text: text.to_string(), reason: reason.to_string() };
    let trimmed = text.trim();
    let (body, call) = match trimmed.strip_suffix('*') {
        Some(b) => (b, true),
        None => (trimmed, false),
    };
    let chars: Vec<char> = body.chars().map(|c| c.to_ascii_lowercase()).collect();
    let (a, b) = match chars.len() {
        4 => ((chars[0], chars[1]), (chars[2], chars[3])),
        5 if matches!(chars[2], '-' | 'x' | '+') => ((chars[0], chars[1]), (chars[3], chars[4])),
        5 => return Err(bad("expected <from><to> with squares a1..h8 (e.g. c1e1), or '-', 'x' or '+' between them")),
        _ => return Err(bad("expected <from><to>, e.g. c1e1, optionally followed by '*' to call the clock")),
    };
    let from = parse_square(a.0, a.1).ok_or_else(|| bad("bad origin square (a1..h8)"))?;
    let to = parse_square(b.0, b.1).ok_or_else(|| bad("bad destination square (a1..h8)"))?;
    if from == to {
        return Err(bad("origin and destination are the same square"));
    }
    Ok(Move::new(from, if call { to | CALL_CLOCK } else { to }))
}

fn perr(kind: PositionErrorKind, text: &str) -> RulesError {
    RulesError::Position { kind, text: text.to_string() }
}

/// A decimal number in canonical form (ASCII digits, no leading zero unless
/// it is `0`), at most `max`.
fn parse_number(field: &'static str, s: &str, max: u32, text: &str) -> Result<u32, RulesError> {
    let bad = || perr(PositionErrorKind::BadNumber { field, text: s.to_string() }, text);
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0')) {
        return Err(bad());
    }
    match s.parse::<u32>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(perr(PositionErrorKind::NumberTooLarge { field, text: s.to_string(), max: u64::from(max) }, text)),
    }
}

/// Parses the position string of §14.8:
/// `<placement> <mover> <sSW> <sNW> <sNE> <sSE> <clock> <quiet> <ply>`.
///
/// Strict: a run of empty squares is one digit 1-8 (two digits in a row are
/// an error), numbers have no leading zeros, so that every accepted string
/// prints back unchanged (up to the spacing between fields). The clock field
/// is `-`, or a countdown from 0 (a game the clock ended) to `clock_plies`;
/// it must be `-` under `clock = Off`. Scores are limited to [`MAX_SCORE`], together with the points on the board
/// (as in the two-player game: [`check_score_room`]).
/// Piece counts are not checked (merges change them, §7).
pub(crate) fn parse_position(text: &str, rules: &Martian4Rules) -> Result<MartianChess4, RulesError> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 9 {
        return Err(perr(PositionErrorKind::FieldCount { expected: 9, found: fields.len() }, text));
    }
    let ranks: Vec<&str> = fields[0].split('/').collect();
    if ranks.len() != 8 {
        return Err(perr(PositionErrorKind::RankCount { expected: 8, found: ranks.len() }, text));
    }
    let mut bb = [0u64; 3];
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = 7 - i as u8; // 0-based
        let rank_no = rank as usize + 1;
        let mut file = 0u8;
        let mut after_digit = false;
        for ch in rank_text.chars() {
            match ch {
                'P' | 'D' | 'Q' => {
                    if file >= 8 {
                        return Err(perr(PositionErrorKind::RankTooLong { rank: rank_no }, text));
                    }
                    let k = match ch {
                        'P' => Piece::Pawn,
                        'D' => Piece::Drone,
                        _ => Piece::Queen,
                    } as usize;
                    bb[k] |= 1u64 << square(file, rank);
                    file += 1;
                    after_digit = false;
                }
                '0'..='9' => {
                    let n = ch as u8 - b'0';
                    if n == 0 || n > 8 || after_digit {
                        let run =
                            if after_digit { format!("two digits in a row ending in {ch}") } else { ch.to_string() };
                        return Err(perr(PositionErrorKind::BadEmptyRun(run), text));
                    }
                    file += n;
                    if file > 8 {
                        return Err(perr(PositionErrorKind::RankTooLong { rank: rank_no }, text));
                    }
                    after_digit = true;
                }
                _ => return Err(perr(PositionErrorKind::BadPieceLetter(ch), text)),
            }
        }
        if file < 8 {
            return Err(perr(PositionErrorKind::RankTooShort { rank: rank_no }, text));
        }
    }
    let seat = match Seat::ALL.into_iter().find(|s| s.name() == fields[1]) {
        Some(s) => s,
        None => {
            return Err(perr(
                PositionErrorKind::BadSide { text: fields[1].to_string(), expected: "SW, NW, NE or SE" },
                text,
            ))
        }
    };
    let mut scores = [0u32; 4];
    for (i, name) in ["sSW", "sNW", "sNE", "sSE"].into_iter().enumerate() {
        scores[i] = parse_number(name, fields[2 + i], MAX_SCORE, text)?;
    }
    let on_board: u32 = bb.iter().zip(Piece::ALL).map(|(b, p)| b.count_ones() * p.value()).sum();
    let named: Vec<(&'static str, u32)> = ["sSW", "sNW", "sNE", "sSE"].into_iter().zip(scores).collect();
    check_score_room(&named, on_board, text)?;
    let clock = match fields[6] {
        "-" => 0u32,
        s => {
            let countdown = parse_number("clock", s, rules.clock_plies, text).map_err(|_| {
                perr(
                    PositionErrorKind::BadFieldExpected {
                        field: "clock",
                        text: s.to_string(),
                        expected: format!("- or a countdown 0..={}", rules.clock_plies),
                    },
                    text,
                )
            })?;
            countdown + 1
        }
    };
    if clock != 0 && rules.clock == ClockMode::Off {
        // Under `clock = Off` the clock is never called: a countdown (and above
        // all a `0`, a game the clock ended) cannot be carried by this state.
        return Err(perr(
            PositionErrorKind::Invalid(format!(
                "clock field {:?}: the rules have clock = Off, so the clock field must be \"-\"",
                fields[6]
            )),
            text,
        ));
    }
    let quiet = parse_number("quiet", fields[7], u32::MAX, text)?;
    let ply = parse_number("ply", fields[8], u32::MAX, text)?;
    Ok(MartianChess4::from_parts(bb, seat, scores, clock, quiet, ply, *rules))
}

/// The placement field (§14.8), ranks 8 to 1.
fn placement(s: &MartianChess4) -> String {
    let mut out = String::with_capacity(40);
    for rank in (0..8u8).rev() {
        let mut empty = 0u8;
        for file in 0..8u8 {
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

/// The position string of §14.8.
pub(crate) fn format_position(s: &MartianChess4) -> String {
    let clock = s.clock_countdown().map_or_else(|| "-".to_string(), |c| c.to_string());
    let [a, b, c, d] = s.scores();
    format!("{} {} {a} {b} {c} {d} {clock} {} {}", placement(s), s.seat_to_move(), s.quiet(), s.ply())
}

/// The text board (§14.2 layout: canals drawn as `|` and `--------+--------`)
/// turned `k` quarter turns counterclockwise, with coordinates (they turn
/// with the squares: for odd `k` the rows are files and the columns ranks),
/// then a status line: the seat to move, or the result once the game is
/// over, then scores and counters.
pub(crate) fn board_text(s: &MartianChess4, k: u8) -> String {
    // The square shown at display column c, row r (r = 0 at the bottom).
    let shown = |c: u8, r: u8| rotate_square(4 - k, square(c, r));
    let label = |sq: u8, along_row: bool| -> char {
        // Along a displayed row the constant coordinate is the rank for even
        // k and the file for odd k; columns the other way round.
        if along_row == k.is_multiple_of(2) {
            (b'1' + rank_of(sq)) as char
        } else {
            (b'a' + file_of(sq)) as char
        }
    };
    let col_labels = || {
        let mut line = String::from("   ");
        for c in 0..8u8 {
            if c == 4 {
                line.push_str("| ");
            }
            line.push(label(shown(c, 0), false));
            line.push(' ');
        }
        line.truncate(line.trim_end().len());
        line.push('\n');
        line
    };
    let mut out = String::with_capacity(400);
    out.push_str(&col_labels());
    for r in (0..8u8).rev() {
        out.push(label(shown(0, r), true));
        out.push_str("  ");
        for c in 0..8u8 {
            if c == 4 {
                out.push_str("| ");
            }
            out.push(s.piece_at(shown(c, r)).map_or('.', Piece::letter));
            if c < 7 {
                out.push(' ');
            }
        }
        out.push('\n');
        if r == 4 {
            out.push_str("   --------+--------\n");
        }
    }
    out.push_str(&col_labels());
    let [a, b, c, d] = s.scores();
    let [ta, tb] = s.team_scores();
    let clock = s.clock_countdown().map_or_else(|| "-".to_string(), |c| c.to_string());
    let teams = s.rules().teams;
    let head = match (s.outcome(), s.seat_values()) {
        (Some(o), Some(values)) => {
            let who = if teams {
                o.winner.map_or_else(|| "draw".to_string(), |w| format!("{} win", MartianChess4::side_name(w)))
            } else {
                let best = values.iter().copied().fold(f32::MIN, f32::max);
                let winners: Vec<&str> =
                    Seat::ALL.iter().filter(|s| values[s.index()] == best && best > 0.0).map(|s| s.name()).collect();
                match winners.len() {
                    0 => "all four share the win".to_string(),
                    1 => format!("{} wins", winners[0]),
                    _ => format!("{} share the win", winners.join(" and ")),
                }
            };
            format!("game over: {who} ({})", o.reason)
        }
        _ => {
            let seat = s.seat_to_move();
            if teams {
                format!("{seat} to move (team {})", MartianChess4::side_name(seat.team()))
            } else {
                format!("{seat} to move (free-for-all)")
            }
        }
    };
    out.push_str(&format!(
        "{head}; scores SW {a} NW {b} NE {c} SE {d} (SW+NE {ta}, NW+SE {tb}); clock {clock}; quiet {}; ply {}\n",
        s.quiet(),
        s.ply()
    ));
    out
}
