//! The parts of the text formats that both games share (spec §10, §14.4,
//! §14.8): square and move text, numbers, the placement field, the score
//! and clock checks. Each game's `notation` module puts them together in its
//! own position string and draws its own board.

use super::board::{Pieces, Word};
use super::{ClockMode, Piece, CALL_CLOCK};
use crate::error::{PositionErrorKind, RulesError};
use crate::game::Move;

/// Highest score a position may reach: a position string's score plus the
/// points still on the board must not pass it (so that every position
/// reachable from a parsed one parses too). A real game never exceeds 36
/// (two players, spec §2) or 72 (four players, §14.2).
pub const MAX_SCORE: u32 = 9999;

/// The syntax of one game's text: its board width and how strict it reads.
pub(crate) struct Syntax {
    /// Files of the board (4 or 8); it has 8 ranks.
    pub files: u8,
    /// Canonical text only: no leading zeros in numbers, a run of empty
    /// squares in one digit (so that every accepted string prints back
    /// unchanged).
    pub strict: bool,
    /// Whether a move may end in `*` (call the clock, §14.5).
    pub clock_call: bool,
    /// The bits of a move's squares that name the square in move text (the
    /// four-player game drops the clock flag and any higher bit).
    pub square_mask: u8,
    /// An example move, for the messages.
    pub example: &'static str,
}

impl Syntax {
    /// `a1..d8` or `a1..h8`.
    fn squares(&self) -> String {
        format!("a1..{}8", (b'a' + self.files - 1) as char)
    }

    /// Name of a square, e.g. `d3`.
    pub(crate) fn square_name(&self, sq: u8) -> String {
        let mut s = String::with_capacity(2);
        s.push((b'a' + sq % self.files) as char);
        s.push((b'1' + sq / self.files) as char);
        s
    }

    /// Parses a square name from two characters.
    pub(crate) fn parse_square(&self, f: char, r: char) -> Option<u8> {
        let file = (f as u32).checked_sub('a' as u32).filter(|&x| x < u32::from(self.files))?;
        let rank = (r as u32).checked_sub('1' as u32).filter(|&x| x < 8)?;
        Some(file as u8 + self.files * rank as u8)
    }

    /// `<from><to>` text of a move, `*` appended for a clock call (§14.5).
    pub(crate) fn move_text(&self, mv: Move) -> String {
        let mut s = self.square_name(mv.from & self.square_mask);
        s.push_str(&self.square_name(mv.to & self.square_mask));
        if self.clock_call && mv.to & CALL_CLOCK != 0 {
            s.push('*');
        }
        s
    }

    /// Parses `<from><to>` (`d3d5`), or the human forms with `-`, `x` or `+`
    /// between the squares (spec §10, §14.4), in any case, followed by `*`
    /// (call the clock) where the game has it. The separator is not checked
    /// against the kind of move.
    pub(crate) fn parse_move_text(&self, text: &str) -> Result<Move, RulesError> {
        let bad = |reason: &str| RulesError::BadMoveText { text: text.to_string(), reason: reason.to_string() };
        let trimmed = text.trim();
        let (body, call) = match trimmed.strip_suffix('*').filter(|_| self.clock_call) {
            Some(b) => (b, true),
            None => (trimmed, false),
        };
        let (squares, example) = (self.squares(), self.example);
        let chars: Vec<char> = body.chars().map(|c| c.to_ascii_lowercase()).collect();
        let (a, b) = match chars.len() {
            4 => ((chars[0], chars[1]), (chars[2], chars[3])),
            5 if matches!(chars[2], '-' | 'x' | '+') => ((chars[0], chars[1]), (chars[3], chars[4])),
            5 => {
                return Err(bad(&format!(
                    "expected <from><to> with squares {squares} (e.g. {example}), or '-', 'x' or '+' between them"
                )))
            }
            _ if self.clock_call => {
                return Err(bad(&format!(
                    "expected <from><to>, e.g. {example}, optionally followed by '*' to call the clock"
                )))
            }
            _ => return Err(bad(&format!("expected <from><to> with squares {squares}, e.g. {example}"))),
        };
        let from = self.parse_square(a.0, a.1).ok_or_else(|| bad(&format!("bad origin square ({squares})")))?;
        let to = self.parse_square(b.0, b.1).ok_or_else(|| bad(&format!("bad destination square ({squares})")))?;
        if from == to {
            return Err(bad("origin and destination are the same square"));
        }
        Ok(Move::new(from, if call { to | CALL_CLOCK } else { to }))
    }

    /// A decimal number of ASCII digits (in canonical form when strict), at
    /// most `max`.
    pub(crate) fn parse_number(&self, field: &'static str, s: &str, max: u32, text: &str) -> Result<u32, RulesError> {
        let bad = || perr(PositionErrorKind::BadNumber { field, text: s.to_string() }, text);
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (self.strict && s.len() > 1 && s.starts_with('0'))
        {
            return Err(bad());
        }
        match s.parse::<u32>() {
            Ok(n) if n <= max => Ok(n),
            _ => Err(perr(PositionErrorKind::NumberTooLarge { field, text: s.to_string(), max: u64::from(max) }, text)),
        }
    }

    /// Parses the placement field: 8 ranks, 8 first, separated by `/`, each
    /// piece letters `P`, `D`, `Q` and digits for runs of empty squares.
    pub(crate) fn parse_placement<W: Word>(&self, field: &str, text: &str) -> Result<[W; 3], RulesError> {
        let ranks: Vec<&str> = field.split('/').collect();
        if ranks.len() != 8 {
            return Err(perr(PositionErrorKind::RankCount { expected: 8, found: ranks.len() }, text));
        }
        let files = self.files;
        let mut bb = [W::ZERO; 3];
        for (i, rank_text) in ranks.iter().enumerate() {
            let rank = 7 - i as u8; // 0-based
            let rank_no = rank as usize + 1;
            let mut file = 0u8;
            let mut after_digit = false;
            for ch in rank_text.chars() {
                match ch {
                    'P' | 'D' | 'Q' => {
                        if file >= files {
                            return Err(perr(PositionErrorKind::RankTooLong { rank: rank_no }, text));
                        }
                        let k = match ch {
                            'P' => Piece::Pawn,
                            'D' => Piece::Drone,
                            _ => Piece::Queen,
                        } as usize;
                        bb[k] |= W::bit(u32::from(file + files * rank));
                        file += 1;
                        after_digit = false;
                    }
                    '0'..='9' => {
                        let n = ch as u8 - b'0';
                        let twice = self.strict && after_digit;
                        if n == 0 || n > files || twice {
                            let run =
                                if twice { format!("two digits in a row ending in {ch}") } else { ch.to_string() };
                            return Err(perr(PositionErrorKind::BadEmptyRun(run), text));
                        }
                        file += n;
                        if file > files {
                            return Err(perr(PositionErrorKind::RankTooLong { rank: rank_no }, text));
                        }
                        after_digit = true;
                    }
                    _ => return Err(perr(PositionErrorKind::BadPieceLetter(ch), text)),
                }
            }
            if file < files {
                return Err(perr(PositionErrorKind::RankTooShort { rank: rank_no }, text));
            }
        }
        Ok(bb)
    }

    /// The placement field of `bb`, ranks 8 to 1.
    pub(crate) fn placement<W: Word>(&self, bb: &[W; 3]) -> String {
        let mut out = String::with_capacity(8 * (usize::from(self.files) + 1));
        for rank in (0..8u8).rev() {
            let mut empty = 0u8;
            for file in 0..self.files {
                match bb.piece_at(file + self.files * rank) {
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

    /// Parses the score fields `fields` (named `names`), each at most
    /// [`MAX_SCORE`] together with the points on the board of `bb`
    /// ([`check_score_room`]).
    pub(crate) fn parse_scores<W: Word, const K: usize>(
        &self,
        fields: &[&str],
        names: [&'static str; K],
        bb: &[W; 3],
        text: &str,
    ) -> Result<[u32; K], RulesError> {
        let mut scores = [0u32; K];
        for (i, name) in names.into_iter().enumerate() {
            scores[i] = self.parse_number(name, fields[i], MAX_SCORE, text)?;
        }
        let named: Vec<(&'static str, u32)> = names.into_iter().zip(scores).collect();
        check_score_room(&named, bb.pips_on_board(), text)?;
        Ok(scores)
    }
}

/// A position-string error of `kind` in `text`.
pub(crate) fn perr(kind: PositionErrorKind, text: &str) -> RulesError {
    RulesError::Position { kind, text: text.to_string() }
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

/// Refuses a called clock (`clock_state != 0`, field text `field`) under
/// `clock = Off`: the clock is never called then, so a countdown (and above
/// all a `0`, a game the clock ended) cannot be carried by the state.
pub(crate) fn check_clock_off(clock_state: u32, mode: ClockMode, field: &str, text: &str) -> Result<(), RulesError> {
    if clock_state != 0 && mode == ClockMode::Off {
        return Err(perr(
            PositionErrorKind::Invalid(format!(
                "clock field {field:?}: the rules have clock = Off, so the clock field must be \"-\""
            )),
            text,
        ));
    }
    Ok(())
}

/// The clock field of a position: `-` (0) or the countdown (`1 + countdown`).
pub(crate) fn clock_text(clock_state: u32) -> String {
    if clock_state == 0 {
        "-".to_string()
    } else {
        (clock_state - 1).to_string()
    }
}

/// Refuses a placement that holds more than the pyramids of `players` sets:
/// each player starts with 3 Pawns, 3 Drones and 3 Queens, 9 pieces of 18
/// points (spec §2, §14.2). A capture removes a piece and a merge turns two
/// pieces into one of their summed points (spec §6, §7), so the pieces and the
/// points on the board never grow. With `field_promotion` the count of one
/// kind may pass 3 per player (Pawn + Drone makes a Queen, §7), so only the
/// totals are bounded; without it no piece changes kind and each kind is
/// bounded too.
pub(crate) fn check_material<W: Word>(
    bb: &[W; 3],
    players: u32,
    field_promotion: bool,
    text: &str,
) -> Result<(), RulesError> {
    let invalid = |m: String| perr(PositionErrorKind::Invalid(m), text);
    let (max_pieces, max_points) = (9 * players, 18 * players);
    let pieces: u32 = bb.iter().map(|b| b.count_ones()).sum();
    let points = bb.pips_on_board();
    if pieces > max_pieces || points > max_points {
        return Err(invalid(format!(
            "field placement: {pieces} pieces of {points} points, more than the {players} players' sets hold \
             ({max_pieces} pieces of {max_points} points: 3 Pawns, 3 Drones and 3 Queens each); captures and \
             merges never add any"
        )));
    }
    if !field_promotion {
        for p in Piece::ALL {
            let n = bb[p as usize].count_ones();
            if n > 3 * players {
                return Err(invalid(format!(
                    "field placement: {n} {}s, more than the {} of the {players} players' sets (3 each); without \
                     field_promotion no piece changes kind",
                    p.name(),
                    3 * players
                )));
            }
        }
    }
    Ok(())
}
