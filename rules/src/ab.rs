//! What the alpha-beta baseline (`martian_search::AlphaBeta`) needs to know
//! about a game beyond [`GameState`]: a static evaluation, a transposition key,
//! move-ordering values and the ladder's default depths.
//!
//! Each game implements [`AbGame`] in its own module (`jetan/eval.rs`,
//! `martian/eval.rs`, `martian4/eval.rs`), so that a game's knowledge lives in
//! this crate and the search stays generic (one place per game: `docs/architecture.md`).
//! Scores are integers in "centi-units" from the side to move's point of view:
//! 100 = one Jetan Panthan-ish unit (Cazaux & Knowlton scale x 100) or one
//! Martian Chess pip.

use crate::game::{GameState, Move};

/// A static evaluation: a score for the side to move of a non-terminal
/// position (positive = good for the side to move).
///
/// Any `Fn(&G) -> i32` is a `StaticEval`, so tests can plug in a plain
/// material count.
pub trait StaticEval<G>: Send {
    /// The score of `state` for its side to move.
    fn evaluate(&self, state: &G) -> i32;
}

impl<G, F: Fn(&G) -> i32 + Send> StaticEval<G> for F {
    #[inline]
    fn evaluate(&self, state: &G) -> i32 {
        self(state)
    }
}

/// What the alpha-beta search needs to know about a game beyond [`GameState`].
///
/// Only [`AbGame::Eval`] and [`AbGame::capture_values`] have no default; the
/// transposition key defaults to the Zobrist hash with the plies left to the
/// move cap mixed in near the cap.
pub trait AbGame: GameState {
    /// The default evaluation of this game.
    type Eval: StaticEval<Self> + Default + Clone;

    /// Transposition key: [`GameState::hash`] mixed with the path-dependent
    /// counters that change the game's future (repetition count, countdowns,
    /// caps) when they are close to mattering, so that positions with equal
    /// placement but different futures do not share an entry.
    #[inline]
    fn search_key(&self) -> u64 {
        self.hash()
    }

    /// The depths of the default strength ladder for this game
    /// (`[evaluate] ladder`, `docs/evaluation.md`): `alphabeta:depth=D` for each, the
    /// depths a quick run's network reaches within an hour on 2 cores.
    const LADDER_DEPTHS: &'static [u32] = &[1, 2];

    /// For a capture, `(victim, attacker)` ordering values (MVV-LVA:
    /// most valuable victim, least valuable attacker); `None` for other moves.
    fn capture_values(&self, mv: Move) -> Option<(i32, i32)>;

    /// Cheap pre-filter for quiet moves the quiescence search also tries on
    /// its first ply (Jetan: moves that may threaten the enemy Princess).
    fn threat_candidate(&self, _mv: Move) -> bool {
        false
    }

    /// Sets an option of the evaluation from text (`key=value` of a player
    /// spec, e.g. Jetan's `values=seed000`).
    ///
    /// # Errors
    /// An unknown key or a bad value, as a message.
    fn eval_option(_eval: &mut Self::Eval, key: &str, _value: &str) -> Result<(), String> {
        Err(format!("unknown option {key:?} for the {} evaluation", Self::KIND))
    }

    /// Whether `child` (the position after the candidate move by
    /// `self.side_to_move()`) threatens to end the game at once.
    #[inline]
    fn is_threat(&self, _child: &Self) -> bool {
        false
    }
}

/// `h` with the counter `x` mixed in (the splitmix64 finaliser of `x`, xored
/// in): used by the games' [`AbGame::search_key`].
#[inline]
pub(crate) fn mix(h: u64, x: u64) -> u64 {
    // splitmix64 finaliser of the counter, xored in.
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (z ^ (z >> 31))
}
