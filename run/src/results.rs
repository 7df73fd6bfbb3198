//! The evaluation records of a run directory (`docs/usage.md`, "The run
//! directory"): the gate match of each generation (`eval/gen<g>.json`), the
//! final evaluation (`final-eval.json`) and gauntlets (`eval/gauntlet-<name>.json`),
//! typed, so that the pipeline, `report` and `export` read the same fields.
//! Where they are is [`crate::rundir::RunDir`]'s business.

use martian_evaluate::{MatchResult, Ratings};
use serde::{Deserialize, Serialize};

/// Standard deviation (Elo) of the weak Gaussian prior of the report's rating
/// fit: it keeps players with only wins or only losses finite and barely moves
/// the others.
pub const PRIOR_SD_ELO: f64 = 1000.0;

/// `eval/gen<g>.json`: the gate match of a generation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GateRecord {
    /// Generation.
    pub generation: u32,
    /// Candidate checkpoint file.
    pub candidate: String,
    /// Best checkpoint file at the time.
    pub best: String,
    /// Whether the candidate was promoted.
    pub promoted: bool,
    /// Why (the gate rule and how the match met it), e.g. `always promote
    /// (gate_score = 0)` or `score 0.458 < gate_score 0.55`; empty in records
    /// written before it was kept.
    #[serde(default)]
    pub reason: String,
    /// The match.
    pub result: martian_evaluate::MatchResult,
    /// The SPRT state at the end of the match (`gate = "sprt"` only).
    #[serde(default)]
    pub sprt: Option<martian_evaluate::SprtState>,
}

impl GateRecord {
    /// Reads `path`, the gate record of generation `g`, and
    /// [`GateRecord::check`]s it.
    ///
    /// # Errors
    /// One line naming the file and the problem (unreadable, not JSON, not a
    /// gate record with the field at fault, or a disagreement with itself).
    pub fn read(path: &std::path::Path, g: u32) -> anyhow::Result<GateRecord> {
        let rec: GateRecord = crate::records::read_json(path, "a gate record")?;
        rec.check(g).map_err(|e| anyhow::anyhow!("{} is damaged: {e}", path.display()))?;
        Ok(rec)
    }

    /// Checks that the record agrees with itself and with its file, the gate
    /// record of generation `g`: its `generation` is `g`, and `candidate` and
    /// `best` are checkpoint file names in the run's models folder (no path:
    /// the pipeline and `export` open them there).
    ///
    /// # Errors
    /// The disagreement in words, naming the field.
    pub fn check(&self, g: u32) -> Result<(), String> {
        if self.generation != g {
            return Err(format!("it records generation {}, its name generation {g}", self.generation));
        }
        for (field, name) in [("candidate", &self.candidate), ("best", &self.best)] {
            let plain = !name.is_empty()
                && !name.contains(['/', '\\'])
                && !name.starts_with('.')
                && name.ends_with(".safetensors");
            if !plain {
                return Err(format!("its {field} {name:?} is not a checkpoint file name of the run's models folder"));
            }
        }
        Ok(())
    }
}

/// `final-eval.json`: the newest generation against the untrained network and random.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FinalEval {
    /// The trained checkpoint evaluated.
    pub trained: String,
    /// The best (promoted) checkpoint at the end.
    pub best: String,
    /// Trained vs the untrained generation 0.
    pub vs_untrained: martian_evaluate::MatchResult,
    /// Trained vs uniformly random moves.
    pub vs_random: martian_evaluate::MatchResult,
}

/// `eval/gauntlet-<name>.json`: a gauntlet and its rating fit.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct GauntletRecord {
    /// Player A.
    pub player: String,
    /// One match per opponent.
    pub matches: Vec<MatchResult>,
    /// Bradley-Terry fit over these matches.
    pub ratings: Option<Ratings>,
}
