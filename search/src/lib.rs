//! Search for MartianZero: PUCT Monte-Carlo tree search with batched
//! evaluation ([`mcts`]), the evaluator interface ([`Evaluator`]) and an
//! evaluation cache ([`CachedEvaluator`], [`EvalCache`]), the evaluator split at the
//! device boundary ([`Backend`], [`DeviceBatch`], [`SimulatedDevice`]), and the
//! alpha-beta baseline ([`alphabeta`]), and the play-time tactical check of
//! an MCTS move by alpha-beta ([`Veto`]).
//!
//! The crate does not link libtorch: the network evaluator lives in
//! `martian-model`, and [`UniformEvaluator`] lets the search run without one.
#![warn(missing_docs)]

pub mod alphabeta;
mod backend;
mod cache;
mod config;
mod evaluator;
mod level;
pub mod mcts;
pub mod puct;
pub mod session;
mod veto;

pub use alphabeta::{AbGame, AbResult, AlphaBeta, AlphaBetaConfig, Limits, StaticEval, ALPHABETA_VERSION};
pub use backend::{softmax_in_place, Backend, BackendEvaluator, DeviceBatch, SimOutput, SimWait, SimulatedDevice};
pub use cache::{CachedEvaluator, EvalCache, KeyHasher, KeyMap};
pub use config::{ContemptMode, MctsConfig, RootSelection};
pub use evaluator::{EvalError, Evaluation, Evaluator, StaticValueEvaluator, UniformEvaluator};
pub use level::Level;
pub use mcts::{Gather, Mcts, MoveFilter, QRescale, SearchResult};
pub use session::{
    line_text, search_together, End, Engine, Info, MctsJob, Pace, RootMove, Score, SearchLimits, Session, SessionError,
};
pub use veto::{check_veto_depth, Veto, VetoOutcome, VETO_MAX_DEPTH};
