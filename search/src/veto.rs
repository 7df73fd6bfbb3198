//! The play-time tactical check ("veto"): once an MCTS player has chosen its
//! move, a fixed-depth alpha-beta search ([`AlphaBeta`]) looks for a forced
//! loss after it, as engines that pair a learned policy with a small exact
//! search do (a blunder check at the root only; the tree is untouched).
//!
//! A move is a **proven loss** when the game ends at once with the mover's
//! loss, when the MCTS solver proved it lost, or when the alpha-beta search of
//! the position after it, `depth` plies deep (quiescence included), scores
//! beyond [`MATE_BOUND`] for the opponent: a forced win of the opponent
//! within the horizon (Jetan: the mover's Princess taken, spec §8.1). Only
//! the forced results of the search count, never its static evaluation, so a
//! veto only ever replaces a move the rules prove lost (the search tries
//! every move of the losing side; only the winning side's replies are pruned).
//!
//! The chosen move is vetoed when it is a proven loss and some other legal
//! move is not; then the first move of the MCTS order (most visits, then
//! prior, then Q, then the tie rank: [`SearchResult::ranked`]) that is not a
//! proven loss is played instead. When every move is lost, the MCTS move
//! stays (its choice among lost moves, the longest resistance, is the
//! search's). The check is for play time only (`play`, `engine`, `analyse`,
//! `evaluate`'s players); self-play never runs it, so the training targets
//! stay the search's own. Two-player games only (negamax scores).
//!
//! Cost: one alpha-beta search for the chosen move, one more per vetoed
//! candidate; `BENCHMARKS.md` gives milliseconds per move at depths 2 to 4.
//!
//! # Example
//! In Jetan after `e10b8 f1i4 g9g8 i2h3 f10g7`, Black's `i4b6` walks into a
//! three-ply trap (Orange then forces the capture of the Princess); `i4c3`
//! does not. An MCTS move `i4b6` is vetoed in favour of the next move of the
//! MCTS order that is not lost.
//! ```
//! use martian_rules::jetan::{Jetan, JetanRules};
//! use martian_rules::GameState;
//! use martian_search::Veto;
//!
//! let mut pos = Jetan::new_game(&JetanRules::default())?;
//! for m in ["e10b8", "f1i4", "g9g8", "i2h3", "f10g7"] {
//!     let mv = pos.parse_move(m)?;
//!     pos.play(mv)?;
//! }
//! let (trap, safe) = (pos.parse_move("i4b6")?, pos.parse_move("i4c3")?);
//! let mut veto = Veto::<Jetan>::new(3)?;
//! assert!(veto.proven_loss(&pos, trap) && !veto.proven_loss(&pos, safe));
//! // The MCTS order (most visits first), with the solver's proven values (none here).
//! let check = veto.check(&pos, trap, &[(trap, None), (safe, None)]);
//! assert_eq!((check.played, check.vetoed), (safe, Some(trap)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use martian_rules::Move;

use crate::alphabeta::{AbGame, AlphaBeta, AlphaBetaConfig, Limits, MATE_BOUND};
#[cfg(doc)]
use crate::SearchResult;

/// Deepest veto search, plies after the move. Depth 8 already takes seconds
/// per move in Jetan's wide middlegames (`BENCHMARKS.md`).
pub const VETO_MAX_DEPTH: u32 = 8;

/// Transposition table of the veto's search, MiB (kept from move to move).
const VETO_TT_MIB: usize = 4;

/// Checks a `veto_depth` setting: 0 (off) to [`VETO_MAX_DEPTH`].
///
/// # Errors
/// A message naming the range when `depth` is outside it.
///
/// # Example
/// ```
/// use martian_search::check_veto_depth;
/// assert!(check_veto_depth(0).is_ok() && check_veto_depth(8).is_ok());
/// assert!(check_veto_depth(9).unwrap_err().contains("0..=8"));
/// ```
pub fn check_veto_depth(depth: u32) -> Result<(), String> {
    if depth > VETO_MAX_DEPTH {
        return Err(format!(
            "veto_depth must be in 0..={VETO_MAX_DEPTH} (plies of the alpha-beta check after the move; 0 = off), \
             got {depth}"
        ));
    }
    Ok(())
}

/// What one check decided ([`Veto::check`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VetoOutcome {
    /// The move to play.
    pub played: Move,
    /// The MCTS move, when the check replaced it (it is a proven loss and
    /// `played` is not); `None` when the MCTS move stays.
    pub vetoed: Option<Move>,
    /// Alpha-beta searches run (1 when the MCTS move is not lost).
    pub searches: u32,
}

/// The play-time tactical check of the module documentation: an alpha-beta
/// engine kept from move to move (its transposition table too), and its depth.
pub struct Veto<G: AbGame> {
    depth: u32,
    engine: Box<AlphaBeta<G>>,
    searches: u32,
}

impl<G: AbGame> Veto<G> {
    /// A check `depth` plies deep (1 to [`VETO_MAX_DEPTH`]; a caller with a
    /// depth of 0 has no check). Allocates the search's buffers and a 4 MiB
    /// transposition table.
    ///
    /// # Errors
    /// A depth of 0 or above [`VETO_MAX_DEPTH`], or a table that cannot be allocated.
    pub fn new(depth: u32) -> Result<Self, String> {
        check_veto_depth(depth)?;
        if depth == 0 {
            return Err("veto_depth 0 means no veto: make no check".to_string());
        }
        let cfg = AlphaBetaConfig { tt_mib: VETO_TT_MIB, ..AlphaBetaConfig::default() };
        let engine = AlphaBeta::try_with_eval(cfg, G::Eval::default())?;
        Ok(Veto { depth, engine: Box::new(engine), searches: 0 })
    }

    /// The depth of the check, plies after the move.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Uses `signal` as the stop flag of the check's searches (the engine's
    /// `stop`): a search stopped early keeps the forced results of its
    /// completed iterations, so a stopped check vetoes less, never wrongly.
    pub fn set_stop_signal(&mut self, signal: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {
        self.engine.set_stop_signal(signal);
    }

    /// Whether `mv` (legal in `root`) is a proven loss for the side to move
    /// in `root`: the game ends at once with its loss, or the opponent forces
    /// a win within [`Veto::depth`] plies after it (alpha-beta, see the
    /// module documentation).
    pub fn proven_loss(&mut self, root: &G, mv: Move) -> bool {
        let me = root.side_to_move();
        let mut after = root.clone();
        after.play_unchecked(mv);
        if let Some(o) = after.outcome() {
            return o.value_for(me) < 0.0;
        }
        self.searches += 1;
        let score = self.engine.search(&after, &Limits::depth(self.depth)).score;
        // Negamax scores are for the side to move after the move.
        if after.side_to_move() == me {
            score < -MATE_BOUND
        } else {
            score > MATE_BOUND
        }
    }

    /// Checks `chosen`, the MCTS player's move in `root`. `ranked` holds the
    /// root's moves in the MCTS order, each with its value proven by the MCTS
    /// solver for the side to move (`Some(-1.0)`: lost, `Some(1.0)`: won;
    /// [`SearchResult::ranked`]). A move the solver proved is not searched
    /// again. In a game of more than two value players the MCTS move stays
    /// (no check).
    pub fn check(&mut self, root: &G, chosen: Move, ranked: &[(Move, Option<f32>)]) -> VetoOutcome {
        self.searches = 0;
        let keep = |searches| VetoOutcome { played: chosen, vetoed: None, searches };
        if root.num_players() != 2 {
            return keep(0);
        }
        let exact = |m: Move| ranked.iter().find(|(r, _)| *r == m).and_then(|(_, e)| *e);
        let lost = |v: &mut Self, m: Move| match exact(m) {
            Some(e) if e <= -1.0 => true,
            Some(e) if e >= 0.0 => false, // a proven win or draw
            _ => v.proven_loss(root, m),
        };
        if !lost(self, chosen) {
            return keep(self.searches);
        }
        for &(m, _) in ranked {
            if m != chosen && !lost(self, m) {
                return VetoOutcome { played: m, vetoed: Some(chosen), searches: self.searches };
            }
        }
        keep(self.searches)
    }
}
