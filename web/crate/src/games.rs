//! What the page shows of each game beyond [`GameState`]: the board's cells
//! (piece, owner, name) and the state that the rules make visible (Jetan's
//! Escape rights and countdown, Martian Chess's zones, scores, no-undo ban and
//! deadlock clock). Everything is read from the rules crate's accessors; no
//! rule is decided here.

use martian_rules::jetan::Jetan;
use martian_rules::martian::MartianChess;
use martian_rules::{GameKind, GameState, Move, Side};
use serde::Serialize;

/// Runs `$body` with the type alias `$G` bound to the [`WebGame`] type of
/// the [`GameKind`] `$kind` when the page plays that game, else evaluates
/// `$other`. This is the one place that says which of the rules' games
/// ([`GameKind::ALL`]) the page plays: those with a [`WebGame`] here. The
/// names and their parsing are the rules' registry's ([`GameKind::name`],
/// `str::parse::<GameKind>`).
#[macro_export]
macro_rules! with_web_game {
    ($kind:expr, $G:ident => $body:expr, _ => $other:expr) => {
        match $kind {
            martian_rules::GameKind::Jetan => {
                type $G = martian_rules::jetan::Jetan;
                $body
            }
            martian_rules::GameKind::MartianChess => {
                type $G = martian_rules::martian::MartianChess;
                $body
            }
            #[allow(unreachable_patterns)]
            _ => $other,
        }
    };
}

/// The games the page plays, in the rules' registry order.
pub fn web_games() -> Vec<GameKind> {
    GameKind::ALL.into_iter().filter(|&k| with_web_game!(k, G => G::KIND == k, _ => false)).collect()
}

/// The names of [`web_games`] joined by `sep`, for messages: `jetan and
/// martian-chess`.
pub fn web_game_names(sep: &str) -> String {
    web_games().iter().map(|k| k.name()).collect::<Vec<_>>().join(sep)
}

/// One occupied square, for drawing.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Cell {
    /// Square index `file + width * (rank - 1)`.
    pub sq: u8,
    /// The piece's letter in position strings (`W`, `p`, `Q`, ...).
    pub letter: char,
    /// The spec's name of the piece (`Warrior`, `Queen`, ...).
    pub name: &'static str,
    /// The side the piece belongs to now: in Jetan its colour, in Martian
    /// Chess the owner of the zone it stands in (spec §1: pieces have no colour).
    pub owner: &'static str,
}

/// One labelled line of game state under the board (`"Scores"`, `"3 - 1"`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct StatusLine {
    /// What the line shows.
    pub label: String,
    /// Its value, as text.
    pub value: String,
}

/// The per-game part of the page's view of a position.
pub trait WebGame: GameState {
    /// Board width and height in squares.
    const SIZE: (u8, u8);

    /// The occupied squares.
    fn cells(&self) -> Vec<Cell>;

    /// The game's visible state, in display order.
    fn status(&self) -> Vec<StatusLine>;

    /// A short note for a legal move (e.g. "Escape"), or `None`.
    fn move_note(&self, mv: Move) -> Option<&'static str> {
        let _ = mv;
        None
    }

    /// Squares that belong to a side's zone, `(square, side name)`, for games
    /// whose board is split in zones (empty for Jetan).
    fn zones(&self) -> Vec<(u8, &'static str)> {
        Vec::new()
    }
}

/// `"south"` / `"north"`: the seat, as opposed to the game's name for the side (`Jetan::side_name`).
pub fn seat(side: Side) -> &'static str {
    match side {
        Side::South => "south",
        Side::North => "north",
    }
}

impl WebGame for Jetan {
    const SIZE: (u8, u8) = (10, 10);

    fn cells(&self) -> Vec<Cell> {
        (0..100u8)
            .filter_map(|sq| {
                self.piece_at(sq).map(|(p, side)| Cell {
                    sq,
                    letter: p.letter(side),
                    name: p.name(),
                    owner: seat(side),
                })
            })
            .collect()
    }

    fn status(&self) -> Vec<StatusLine> {
        let yes_no = |b: bool| if b { "available" } else { "used" };
        let mut out = Vec::new();
        for side in [Side::North, Side::South] {
            out.push(StatusLine {
                label: format!("{} Escape", Jetan::side_name(side)),
                value: yes_no(self.escape_right(side)).to_string(),
            });
        }
        out.push(StatusLine {
            label: "Small-material countdown".into(),
            value: match self.countdown() {
                None => "not running".into(),
                Some(n) => format!("{n} plies left"),
            },
        });
        out.push(StatusLine { label: "Plies without capture".into(), value: self.quiet_plies().to_string() });
        out.push(StatusLine { label: "Repetitions of this position".into(), value: self.repetitions().to_string() });
        out
    }

    fn move_note(&self, mv: Move) -> Option<&'static str> {
        self.is_escape(mv).then_some("Escape")
    }
}

impl WebGame for MartianChess {
    const SIZE: (u8, u8) = (4, 8);

    fn cells(&self) -> Vec<Cell> {
        (0..32u8)
            .filter_map(|sq| {
                self.piece_at(sq).map(|p| Cell {
                    sq,
                    letter: p.letter(),
                    name: p.name(),
                    owner: if MartianChess::zone(Side::South).has(sq) { "south" } else { "north" },
                })
            })
            .collect()
    }

    fn status(&self) -> Vec<StatusLine> {
        let [s, n] = self.scores();
        let mut out = vec![StatusLine { label: "Score (South - North)".into(), value: format!("{s} - {n}") }];
        out.push(StatusLine {
            label: "No-undo: banned move".into(),
            value: self.banned_move().map(|m| self.move_to_string(m)).unwrap_or_else(|| "none".into()),
        });
        out.push(StatusLine {
            label: "Deadlock clock".into(),
            value: match self.clock_countdown() {
                None => "not called".into(),
                Some(0) => "ran out".into(),
                Some(k) => format!("{k} turns left"),
            },
        });
        out.push(StatusLine { label: "Plies without capture".into(), value: self.quiet().to_string() });
        out
    }

    fn zones(&self) -> Vec<(u8, &'static str)> {
        (0..32u8).map(|sq| (sq, if MartianChess::zone(Side::South).has(sq) { "south" } else { "north" })).collect()
    }
}
