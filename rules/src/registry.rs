//! The registry of games: from a [`GameKind`] (a name on the command line or
//! in a file) to the game's rules, encoding, notation and defaults.
//!
//! [`GameKind`] itself (the names, parsing a name) lives in the game-independent
//! `game` module, which the games implement; this module is the one place
//! that imports every game, and so the one place that dispatches from a
//! [`GameKind`] to a [`GameState`] type: the [`with_game!`](crate::with_game)
//! macro for generic code, and the dynamic methods below, which other crates
//! (the command line, the model export, the web crate) use instead of
//! listing the games again.

use crate::game::{EncodingDescription, GameKind, GameState, Side};

/// Runs `$body` with the type alias `$G` bound to the [`GameState`] type of
/// the [`GameKind`] `$kind`: the one dispatch from a game chosen at run time
/// (a config's `game`, a command-line `--game`) to the generic code.
///
/// ```
/// use martian_rules::{with_game, GameKind, GameState};
/// let actions = with_game!(GameKind::Jetan, G => G::NUM_ACTIONS);
/// assert_eq!(actions, 4900);
/// ```
#[macro_export]
macro_rules! with_game {
    ($kind:expr, $G:ident => $body:expr) => {
        match $kind {
            $crate::GameKind::Jetan => {
                type $G = $crate::jetan::Jetan;
                $body
            }
            $crate::GameKind::MartianChess => {
                type $G = $crate::martian::MartianChess;
                $body
            }
            $crate::GameKind::MartianChess4p => {
                type $G = $crate::martian4::MartianChess4;
                $body
            }
        }
    };
}

/// The registry's answers for a game chosen at run time, without naming its
/// type:
///
/// ```
/// use martian_rules::GameKind;
///
/// let four: GameKind = "martian-chess-4p".parse()?;
/// assert_eq!(four.num_actions(), 8192);
/// assert_eq!(four.input_shape(), [19, 8, 8]);
/// assert_eq!(four.side_names(), ["SW+NE", "NW+SE"]);
/// assert!(four.has_score() && !GameKind::Jetan.has_score());
/// assert_eq!(GameKind::MartianChess.encoding().rules_document, "docs/rules/martian-chess.md");
/// # Ok::<(), martian_rules::RulesError>(())
/// ```
impl GameKind {
    /// [`GameState::NUM_ACTIONS`] of this game.
    pub fn num_actions(self) -> usize {
        with_game!(self, G => G::NUM_ACTIONS)
    }

    /// [`GameState::INPUT_SHAPE`] of this game.
    pub fn input_shape(self) -> [usize; 3] {
        with_game!(self, G => G::INPUT_SHAPE)
    }

    /// [`GameState::ENCODING`] of this game.
    pub fn encoding(self) -> EncodingDescription {
        with_game!(self, G => G::ENCODING)
    }

    /// [`GameState::mirror_action`] of this game.
    pub fn mirror_action(self, action: usize) -> Option<usize> {
        with_game!(self, G => G::mirror_action(action))
    }

    /// [`GameState::MAX_MOVES`] of this game.
    pub fn max_moves(self) -> usize {
        with_game!(self, G => G::MAX_MOVES)
    }

    /// [`GameState::HAS_SCORE`] of this game.
    pub fn has_score(self) -> bool {
        with_game!(self, G => G::HAS_SCORE)
    }

    /// [`GameState::side_name`] of both sides, `[South, North]`.
    pub fn side_names(self) -> [&'static str; 2] {
        with_game!(self, G => [G::side_name(Side::South), G::side_name(Side::North)])
    }
}
