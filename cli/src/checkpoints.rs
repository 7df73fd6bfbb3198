//! Loading checkpoints: the one function every command uses, so that the
//! architecture rule is the same everywhere ([`ConfigModel`]).
//!
//! * Commands without a config (`play`, `export`, `engine`): the checkpoint's
//!   architecture ([`ConfigModel::Absent`]).
//! * Commands with a config that do not train a run (`evaluate`, `selfplay
//!   --out`, the pipeline's matches): the checkpoint's architecture, and when the
//!   config's `[model]` differs, the notice `notice: <path>: the checkpoint's
//!   architecture is used; the config's [model] fields differ (checkpoint vs
//!   config): blocks 1 vs 6` on stderr ([`ConfigModel::Default`]).
//! * Commands that write into a run directory whose config fixes the
//!   architecture (`pipeline`, `train`, `selfplay --run-dir`): a different
//!   architecture is an error naming the fields ([`ConfigModel::Fixed`]).
//!
//! Every load also checks the weights file against the declared architecture
//! (every missing, unexpected or mis-shaped tensor is named) and the rules
//! (every differing switch is named); see `martian_model::checkpoint`.

use std::path::Path;

use anyhow::Result;
use martian_model::{Checkpoint, ConfigModel};
use martian_rules::GameState;
use tch::Device;

/// Loads the checkpoint at `path` for game `G` under `rules` and the
/// architecture rule `model`, printing the architecture notice if there is one.
///
/// # Errors
/// Unreadable or inconsistent checkpoint, other game or rules (naming each
/// differing switch), or, with [`ConfigModel::Fixed`], another architecture
/// (naming each differing field).
pub fn load_checkpoint<G: GameState>(
    path: &Path,
    rules: &G::Rules,
    model: ConfigModel<'_>,
    device: Device,
) -> Result<Checkpoint> {
    let (ck, notice) = Checkpoint::load_with::<G>(path, rules, model, device)?;
    if let Some(n) = notice {
        eprintln!("notice: {n}");
    }
    Ok(ck)
}
