//! MartianZero's training run as a library: what a run is, apart
//! from the command line that starts it.
//!
//! * [`config`]: the typed run configuration (`config.toml`, every key in
//!   `configs/README.md`);
//! * [`rundir`]: the run directory, which owns every path and file name of a
//!   run; [`results`], [`ladder`] and [`metrics`]: its typed records;
//!   [`records`]: reading line files and records that may be damaged;
//! * storage: [`io`] (atomic writes, line appends, bounded reads: the leaf), [`store`] (local directories and object stores behind one
//!   interface), [`mirror`] (a working copy of a run on a store), [`spool`]
//!   (self-play output and worker claims), [`interrupt`] (what a stopped
//!   process cleans up);
//! * the phases and the generation loop: [`ops`] (self-play, training,
//!   matches), [`checkpoints`] (loading a checkpoint, a run's best or an
//!   exported bundle), [`selfplay`] (self-play workers), [`pipeline`] (the
//!   loop: self-play, training, gate, ladder, final evaluation);
//! * what a run shows: [`metrics`], [`tensorboard`], [`report`];
//! * [`runtime`]: threads and devices.
//!
//! `docs/architecture.md` draws the layers; `docs/training.md` describes a run.

pub mod checkpoints;
pub mod config;
pub mod errtext;
pub mod interrupt;
pub mod io;
pub mod ladder;
pub mod layout;
pub mod metrics;
pub mod mirror;
pub mod ops;
pub mod pipeline;
pub mod records;
pub mod report;
pub mod results;
pub mod rundir;
pub mod runtime;
pub mod selfplay;
pub mod spool;
pub mod store;
pub mod tensorboard;

/// Runs `$body` with the type alias `$G` bound to the game's state type: the
/// rules crate's one dispatch over its registry of games.
pub use martian_rules::with_game;
