//! Text formats (spec §10): move strings (§10.1), the text board (§10.2) and
//! the position string (§10.3).

use super::piece::Piece;
use super::rules::{ChiefCapture, JetanRules};
use super::{Jetan, COUNTDOWN_PLIES};
use crate::error::{PositionErrorKind, RulesError};
use crate::game::{GameState, Move, Side};

/// Name of a square, e.g. `a1`, `j10` (§1). `sq` must be < 100.
pub fn square_name(sq: u8) -> String {
    let file = (b'a' + sq % 10) as char;
    format!("{file}{}", sq / 10 + 1)
}

/// `<from><to>` text of a move (§10.1).
pub fn move_text(mv: Move) -> String {
    format!("{}{}", square_name(mv.from % 100), square_name(mv.to % 100))
}

fn bad_move(text: &str, reason: &str) -> RulesError {
    RulesError::BadMoveText { text: text.to_string(), reason: reason.to_string() }
}

/// Parses a square at the start of `s`; returns it and the rest of the text.
fn parse_square<'a>(s: &'a str, whole: &str) -> Result<(u8, &'a str), RulesError> {
    let bytes = s.as_bytes();
    let f = match bytes.first() {
        Some(c @ b'a'..=b'j') => c - b'a',
        Some(c @ b'A'..=b'J') => c - b'A',
        Some(_) => return Err(bad_move(whole, "a square must start with a file letter a-j")),
        None => return Err(bad_move(whole, "missing square")),
    };
    let digits = bytes[1..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return Err(bad_move(whole, "a square needs a rank number 1-10"));
    }
    // Every byte counted is an ASCII digit, so slicing at 1 + digits is valid.
    let num = &s[1..1 + digits];
    let rank: u32 = match num.parse() {
        Ok(r) if (1..=10).contains(&r) && !num.starts_with('0') => r,
        _ => return Err(bad_move(whole, "rank must be 1-10")),
    };
    Ok((f + 10 * (rank as u8 - 1), &s[1 + digits..]))
}

/// Parses `<from><to>`, also `<from>x<to>`, `<from>^<to>` and `<from>-<to>` (§10.1).
/// Does not check legality.
pub fn parse_move_text(text: &str) -> Result<Move, RulesError> {
    let t = text.trim();
    if !t.is_ascii() {
        return Err(bad_move(text, "move text must be ASCII"));
    }
    let (from, rest) = parse_square(t, text)?;
    let rest = rest.strip_prefix(['x', 'X', '^', '-']).unwrap_or(rest);
    let (to, rest) = parse_square(rest, text)?;
    if !rest.is_empty() {
        return Err(bad_move(text, "trailing characters after the destination square"));
    }
    Ok(Move::new(from, to))
}

/// The text board (§10.2): rank 10 first, with coordinates and the side to move.
pub fn board_text(g: &Jetan) -> String {
    board_text_from(g, Side::South)
}

/// The text board seen from `bottom`'s side: for `Side::South` rank 10 first
/// (Orange at the top), for `Side::North` rank 1 first with the files reversed
/// (Black at the top). The last line names the side to move, or the result
/// once the game is over.
pub fn board_text_from(g: &Jetan, bottom: Side) -> String {
    let flipped = bottom == Side::North;
    let files: Vec<u8> = if flipped { (0..10).rev().collect() } else { (0..10).collect() };
    let ranks: Vec<u8> = if flipped { (0..10).collect() } else { (0..10).rev().collect() };
    let letters: Vec<String> = files.iter().map(|f| ((b'a' + f) as char).to_string()).collect();
    let header = format!("     {}\n", letters.join(" "));
    let mut s = String::with_capacity(400);
    s.push_str(&header);
    for &rank in &ranks {
        s.push_str(&format!("{:>3}  ", rank + 1));
        for (i, &file) in files.iter().enumerate() {
            let c = match g.piece_at(file + 10 * rank) {
                Some((p, side)) => p.letter(side),
                None => '.',
            };
            s.push(c);
            if i < 9 {
                s.push(' ');
            }
        }
        match rank {
            9 => s.push_str("   Orange"),
            0 => s.push_str("   Black"),
            _ => {}
        }
        s.push('\n');
    }
    s.push_str(&header);
    match g.outcome() {
        Some(o) => {
            let who = o.winner.map_or_else(|| "draw".to_string(), |w| format!("{} wins", Jetan::side_name(w)));
            s.push_str(&format!("game over: {who} ({})\n", o.reason));
        }
        None => {
            let stm = g.side_to_move();
            s.push_str(&format!(
                "{} to move ({})\n",
                Jetan::side_name(stm),
                if stm == Side::North { "uppercase" } else { "lowercase" }
            ));
        }
    }
    s
}

/// The position string (§10.3).
pub fn write_position(g: &Jetan) -> String {
    let mut s = String::with_capacity(90);
    for rank in (0..10u8).rev() {
        let mut run = 0;
        for file in 0..10u8 {
            match g.piece_at(file + 10 * rank) {
                Some((p, side)) => {
                    if run > 0 {
                        s.push_str(&run.to_string());
                        run = 0;
                    }
                    s.push(p.letter(side));
                }
                None => run += 1,
            }
        }
        if run > 0 {
            s.push_str(&run.to_string());
        }
        if rank > 0 {
            s.push('/');
        }
    }
    s.push(' ');
    s.push(if g.side_to_move() == Side::North { 'o' } else { 'b' });
    s.push(' ');
    match (g.escape_right(Side::North), g.escape_right(Side::South)) {
        (true, true) => s.push_str("OB"),
        (true, false) => s.push('O'),
        (false, true) => s.push('B'),
        (false, false) => s.push('-'),
    }
    s.push(' ');
    match g.countdown() {
        Some(c) => s.push_str(&c.to_string()),
        None => s.push('-'),
    }
    s.push_str(&format!(" {} {}", g.quiet_plies(), g.ply()));
    s
}

/// Parses and validates a position string (§10.3).
pub fn parse_position(text: &str, rules: &JetanRules) -> Result<Jetan, RulesError> {
    let err = |kind: PositionErrorKind| RulesError::Position { kind, text: text.to_string() };
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 6 {
        return Err(err(PositionErrorKind::FieldCount { expected: 6, found: fields.len() }));
    }
    let stm = match fields[1] {
        "o" => Side::North,
        "b" => Side::South,
        other => return Err(err(PositionErrorKind::BadSide { text: other.to_string(), expected: "o or b" })),
    };
    let mut g = Jetan::empty(rules, stm);
    let ranks: Vec<&str> = fields[0].split('/').collect();
    if ranks.len() != 10 {
        return Err(err(PositionErrorKind::RankCount { expected: 10, found: ranks.len() }));
    }
    let mut counts = [[0usize; 8]; 2];
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = 10 - i; // 1-based
        let mut file = 0usize;
        let chars: Vec<char> = rank_text.chars().collect();
        let mut j = 0;
        while j < chars.len() {
            let c = chars[j];
            if c.is_ascii_digit() {
                let start = j;
                while j < chars.len() && chars[j].is_ascii_digit() {
                    j += 1;
                }
                let run: String = chars[start..j].iter().collect();
                let n = match run.parse::<usize>() {
                    Ok(n) if (1..=10).contains(&n) && !run.starts_with('0') => n,
                    _ => return Err(err(PositionErrorKind::BadEmptyRun(run))),
                };
                file += n;
                if file > 10 {
                    return Err(err(PositionErrorKind::RankTooLong { rank }));
                }
                continue;
            }
            let Some((p, side)) = Piece::from_letter(c) else {
                return Err(err(PositionErrorKind::BadPieceLetter(c)));
            };
            if file >= 10 {
                return Err(err(PositionErrorKind::RankTooLong { rank }));
            }
            g.put(side, p, (file + 10 * (rank - 1)) as u8);
            counts[side.index()][p.index()] += 1;
            file += 1;
            j += 1;
        }
        if file < 10 {
            return Err(err(PositionErrorKind::RankTooShort { rank }));
        }
    }
    for side in Side::ALL {
        let side_name = Jetan::side_name(side);
        for p in Piece::ALL {
            let n = counts[side.index()][p.index()];
            let broken = match p {
                Piece::Princess => (n != 1).then_some("each side has exactly one Princess"),
                Piece::Chief if rules.chief_captured_by_non_chief == ChiefCapture::RemoveAndContinue => {
                    (n > 1).then_some("each side has at most one Chief")
                }
                Piece::Chief => (n != 1).then_some("each side has exactly one Chief under the standard rules"),
                Piece::Panthan => (n > 8).then_some("at most 8 Panthans per side"),
                _ => (n > 2).then_some("at most 2 of this piece per side"),
            };
            if let Some(rule) = broken {
                return Err(err(PositionErrorKind::PieceCount { piece: p.name(), side: side_name, count: n, rule }));
            }
        }
    }
    let (esc_o, esc_b) = match fields[2] {
        "OB" => (true, true),
        "O" => (true, false),
        "B" => (false, true),
        "-" => (false, false),
        other => return Err(err(PositionErrorKind::BadField { field: "escapes", text: other.to_string() })),
    };
    g.pos.escape = [esc_b, esc_o];
    // `-` inactive, 1-10 running, 0 ran out (a finished game, §8.4).
    let countdown = match fields[3] {
        "-" => None,
        t => match t.parse::<u32>() {
            Ok(n) if n <= u32::from(COUNTDOWN_PLIES) && t.bytes().all(|b| b.is_ascii_digit()) => Some(n as u8),
            Ok(_) => {
                return Err(err(PositionErrorKind::BadFieldExpected {
                    field: "countdown",
                    text: t.to_string(),
                    expected: format!("- or a countdown 0..={COUNTDOWN_PLIES}"),
                }))
            }
            Err(_) => return Err(err(PositionErrorKind::BadNumber { field: "countdown", text: t.to_string() })),
        },
    };
    if let Some(countdown) = countdown.filter(|_| g.pos.occ[0].count_ones() > 3 || g.pos.occ[1].count_ones() > 3) {
        return Err(err(PositionErrorKind::Invalid(format!(
            "countdown {countdown} is allowed only when both sides have three pieces or fewer"
        ))));
    }
    g.pos.countdown = countdown;
    let number = |field: &'static str, t: &str| -> Result<u32, RulesError> {
        match t.parse::<u32>() {
            Ok(n) if t.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
            _ => Err(err(PositionErrorKind::BadNumber { field, text: t.to_string() })),
        }
    };
    g.pos.quiet = number("quiet", fields[4])?;
    g.pos.ply = number("ply", fields[5])?;
    g.finish_setup();
    Ok(g)
}
