//! Text formats of spec §10: square and move text, the 8-field state string and
//! the text board. The parts both games share are [`crate::pyramids::notation`].

use super::{MartianChess, Piece};
use crate::error::{PositionErrorKind, RulesError};
use crate::game::{GameState, Move, Side};
use crate::pyramids::notation::{check_clock_off, clock_text, perr, Syntax};
use crate::pyramids::NONE;

use super::rules::MartianRules;

/// The two-player text syntax: 4 files, lenient numbers and empty runs, no
/// clock call.
/// Moves are `<from><to>` (`d3d5`), or the human forms `b3-c4`, `b4xb6`,
/// `a1+b2` (spec §10), in any case (`D3D5`, as Jetan's moves).
pub(crate) const SYNTAX: Syntax =
    Syntax { files: 4, strict: false, clock_call: false, square_mask: 0xFF, example: "d3d5" };

/// Parses the state string of spec §10:
/// `<placement> <side> <scoreS> <scoreN> <last> <clock> <quiet> <ply>`.
///
/// Extensions: the clock field also accepts `0` (the clock ran out, the game is
/// over), so that every reachable state round-trips. Scores are limited to
/// [`MAX_SCORE`](super::MAX_SCORE), together with the points on the board
/// ([`crate::pyramids::notation::check_score_room`]). Piece counts are not
/// checked (merges change them, spec §7).
pub(crate) fn parse_position(text: &str, rules: &MartianRules) -> Result<MartianChess, RulesError> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 8 {
        return Err(perr(PositionErrorKind::FieldCount { expected: 8, found: fields.len() }, text));
    }
    let bb = SYNTAX.parse_placement::<u32>(fields[0], text)?;
    let side = match fields[1] {
        "S" => Side::South,
        "N" => Side::North,
        s => return Err(perr(PositionErrorKind::BadSide { text: s.to_string(), expected: "S or N" }, text)),
    };
    let scores = SYNTAX.parse_scores(&fields[2..4], ["scoreS", "scoreN"], &bb, text)?;
    let last = match fields[4] {
        "-" => None,
        s => {
            let c: Vec<char> = s.chars().collect();
            let parsed = if c.len() == 4 {
                SYNTAX.parse_square(c[0], c[1]).zip(SYNTAX.parse_square(c[2], c[3])).filter(|(f, t)| f != t)
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
    check_clock_off(u32::from(clock), rules.clock, fields[5], text)?;
    let quiet = SYNTAX.parse_number("quiet", fields[6], u32::MAX, text)?;
    let ply = SYNTAX.parse_number("ply", fields[7], u32::MAX, text)?;
    Ok(MartianChess::from_parts(bb, side, scores, last, clock, quiet, ply, *rules))
}

/// The state string of spec §10.
pub(crate) fn format_position(s: &MartianChess) -> String {
    let side = match s.side_to_move() {
        Side::South => "S",
        Side::North => "N",
    };
    let last = if s.last_from == NONE { "-".to_string() } else { SYNTAX.move_text(Move::new(s.last_from, s.last_to)) };
    let [a, b] = s.scores();
    let (placement, clock) = (SYNTAX.placement(&s.bb), clock_text(u32::from(s.clock)));
    format!("{placement} {side} {a} {b} {last} {clock} {} {}", s.quiet(), s.ply())
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
            out.push(s.piece_at(file + 4 * rank).map_or('.', Piece::letter));
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
    let clock = clock_text(u32::from(s.clock));
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
