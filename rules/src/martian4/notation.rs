//! Text formats of the four-player game (spec §14.4 move text, §14.8
//! position string, §14.2 text board with the canals).

use super::rules::Martian4Rules;
use super::tables::{rotate_square, Board8x8};
use super::{MartianChess4, Piece, Seat};
use crate::error::{PositionErrorKind, RulesError};
use crate::game::GameState;
use crate::pyramids::notation::{check_clock_off, check_material, clock_text, perr, Syntax};
use crate::pyramids::Geometry;

/// The four-player text syntax: 8 files, canonical numbers and empty runs,
/// the clock call suffix `*`.
/// Moves are `<from><to>` (`c1e1`), or the human forms `c1-e1`, `d4xe5`,
/// `g7+h6` (§14.4), each optionally followed by `*` (call the clock, §14.5).
pub(crate) const SYNTAX: Syntax = Syntax { files: 8, strict: true, clock_call: true, square_mask: 63, example: "c1e1" };

/// Parses the position string of §14.8:
/// `<placement> <mover> <sSW> <sNW> <sNE> <sSE> <clock> <quiet> <ply>`.
///
/// Strict: a run of empty squares is one digit 1-8 (two digits in a row are
/// an error), numbers have no leading zeros, so that every accepted string
/// prints back unchanged (up to the spacing between fields). The clock field
/// is `-`, or a countdown from 0 (a game the clock ended) to `clock_plies`;
/// it must be `-` under `clock = Off`. Scores are limited to [`MAX_SCORE`](super::MAX_SCORE),
/// together with the points on the board (as in the two-player game:
/// [`crate::pyramids::notation::check_score_room`]).
/// The placement holds at most the four sets' pieces and points
/// ([`check_material`]: merges change the count of a kind, §7, so with field
/// promotion only the totals are bounded).
pub(crate) fn parse_position(text: &str, rules: &Martian4Rules) -> Result<MartianChess4, RulesError> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 9 {
        return Err(perr(PositionErrorKind::FieldCount { expected: 9, found: fields.len() }, text));
    }
    let bb = SYNTAX.parse_placement::<u64>(fields[0], text)?;
    check_material(&bb, 4, rules.field_promotion, text)?;
    let seat = match Seat::ALL.into_iter().find(|s| s.name() == fields[1]) {
        Some(s) => s,
        None => {
            return Err(perr(
                PositionErrorKind::BadSide { text: fields[1].to_string(), expected: "SW, NW, NE or SE" },
                text,
            ))
        }
    };
    let scores = SYNTAX.parse_scores(&fields[2..6], ["sSW", "sNW", "sNE", "sSE"], &bb, text)?;
    let clock = match fields[6] {
        "-" => 0u32,
        s => {
            let countdown = SYNTAX.parse_number("clock", s, rules.clock_plies, text).map_err(|_| {
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
    check_clock_off(clock, rules.clock, fields[6], text)?;
    let quiet = SYNTAX.parse_number("quiet", fields[7], u32::MAX, text)?;
    let ply = SYNTAX.parse_number("ply", fields[8], u32::MAX, text)?;
    Ok(MartianChess4::from_parts(bb, seat, scores, clock, quiet, ply, *rules))
}

/// The position string of §14.8.
pub(crate) fn format_position(s: &MartianChess4) -> String {
    let (placement, clock) = (SYNTAX.placement(&s.bb), clock_text(s.clock));
    let [a, b, c, d] = s.scores();
    format!("{placement} {} {a} {b} {c} {d} {clock} {} {}", s.seat_to_move(), s.quiet(), s.ply())
}

/// The text board (§14.2 layout: canals drawn as `|` and `--------+--------`)
/// turned `k` quarter turns counterclockwise, with coordinates (they turn
/// with the squares: for odd `k` the rows are files and the columns ranks),
/// then a status line: the seat to move, or the result once the game is
/// over, then scores and counters.
pub(crate) fn board_text(s: &MartianChess4, k: u8) -> String {
    // The square shown at display column c, row r (r = 0 at the bottom).
    let shown = |c: u8, r: u8| rotate_square(4 - k, Board8x8::square(c, r));
    let label = |sq: u8, along_row: bool| -> char {
        // Along a displayed row the constant coordinate is the rank for even
        // k and the file for odd k; columns the other way round.
        if along_row == k.is_multiple_of(2) {
            (b'1' + Board8x8::rank_of(sq)) as char
        } else {
            (b'a' + Board8x8::file_of(sq)) as char
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
    let clock = clock_text(s.clock);
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
