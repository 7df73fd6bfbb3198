//! Text formats of spec §10: square and move text, the 8-field state string and
//! the text board. The parts both games share are [`crate::pyramids::notation`].

use super::{MartianChess, Piece};
use crate::error::{PositionErrorKind, RulesError};
use crate::game::{GameState, Move, Side};
use crate::pyramids::notation::{check_clock_off, check_material, clock_text, perr, Syntax};
use crate::pyramids::Pieces;
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
/// ([`crate::pyramids::notation::check_score_room`]). The placement holds at
/// most the two sets' pieces and points ([`check_material`]: merges change
/// the count of a kind, spec §7, so with field promotion only the totals are
/// bounded), and the last move is one that could have been played
/// ([`check_last_move`]).
pub(crate) fn parse_position(text: &str, rules: &MartianRules) -> Result<MartianChess, RulesError> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 8 {
        return Err(perr(PositionErrorKind::FieldCount { expected: 8, found: fields.len() }, text));
    }
    let bb = SYNTAX.parse_placement::<u32>(fields[0], text)?;
    check_material(&bb, u32::from(rules.players), rules.field_promotion, text)?;
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
    if let Some(ft) = last {
        check_last_move(&bb, side, ft, rules.field_promotion, fields[4], text)?;
    }
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

/// Whether `sq` is in South's zone, ranks 1-4 (spec §1).
fn in_south_zone(sq: u8) -> bool {
    sq < 16
}

/// Whether a piece of kind `kind` on `from` reaches `to` in one move on the
/// board `bb`, whose squares between the two are as they were then (spec §5:
/// a Pawn one diagonal step, a Drone 1-2 orthogonal steps, a Queen any
/// straight line; no piece jumps).
fn reaches(bb: &[u32; 3], kind: Piece, from: u8, to: u8) -> bool {
    let (f0, r0, f1, r1) = (i32::from(from % 4), i32::from(from / 4), i32::from(to % 4), i32::from(to / 4));
    let (df, dr) = (f1 - f0, r1 - r0);
    let straight = df == 0 || dr == 0 || df.abs() == dr.abs();
    let steps = df.abs().max(dr.abs());
    let fits = match kind {
        Piece::Pawn => df.abs() == 1 && dr.abs() == 1,
        Piece::Drone => (df == 0 || dr == 0) && steps <= 2,
        Piece::Queen => straight,
    };
    fits && (1..steps).all(|i| bb.piece_at((f0 + df.signum() * i + 4 * (r0 + dr.signum() * i)) as u8).is_none())
}

/// Refuses a `last` field (text `field`) that no ply could have been on the
/// board `bb` with `side` to move: the piece that moved stands on the
/// destination (a plain move, a capture and a merge all leave one there,
/// spec §4, §6, §7), its origin is empty and in the zone of the side that
/// moved (the other side: a player moves only the pieces in their zone,
/// §2), and the piece, or with `field_promotion` one of the two merged into
/// it (only in the mover's own zone, §7), reaches the destination by its
/// move over squares that are still empty (§5).
fn check_last_move(
    bb: &[u32; 3],
    side: Side,
    (from, to): (u8, u8),
    field_promotion: bool,
    field: &str,
    text: &str,
) -> Result<(), RulesError> {
    let invalid = |why: String| perr(PositionErrorKind::Invalid(format!("field last {field:?}: {why}")), text);
    let mover = side.opponent();
    let name = |sq: u8| SYNTAX.square_name(sq);
    let Some(on_to) = bb.piece_at(to) else {
        return Err(invalid(format!("its destination {} is empty; the piece that moved would stand there", name(to))));
    };
    if bb.piece_at(from).is_some() {
        return Err(invalid(format!("its origin {} is occupied; the piece that moved left it", name(from))));
    }
    if in_south_zone(from) != (mover == Side::South) {
        return Err(invalid(format!(
            "its origin {} is not in the zone of {}, the side that moved (the other side is to move)",
            name(from),
            MartianChess::side_name(mover)
        )));
    }
    // A merge happens only in the mover's own zone; across the canal the
    // piece on the destination is the one that moved.
    let merged = field_promotion && in_south_zone(to) == (mover == Side::South);
    let movers = Piece::ALL.into_iter().filter(|&k| k == on_to || (merged && k.value() < on_to.value()));
    if !movers.into_iter().any(|k| reaches(bb, k, from, to)) {
        return Err(invalid(format!(
            "no piece could have moved from {} to {} and left a {} there (a Pawn moves one diagonal step, a Drone \
             1-2 orthogonal steps, a Queen in a straight line, none over another piece)",
            name(from),
            name(to),
            on_to.name()
        )));
    }
    Ok(())
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
