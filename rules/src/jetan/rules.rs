//! The rules switches of jetan spec §13 ([`JetanRules`]) and their validation.

use serde::{Deserialize, Serialize};

use crate::error::RulesError;
use crate::game::Side;

/// Who moves first (spec §2.2, switch `first_player`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FirstPlayer {
    /// Orange (North) moves first: the standard rule (§2.2).
    #[default]
    Orange,
    /// Black (South) moves first.
    Black,
}

impl FirstPlayer {
    /// The [`Side`] this names (Orange = North, Black = South, §1).
    pub fn side(self) -> Side {
        match self {
            FirstPlayer::Orange => Side::North,
            FirstPlayer::Black => Side::South,
        }
    }
}

/// Initial setup (spec §2.1, switch `setup`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Setup {
    /// The appendix setup, point-symmetric (standard, §2.1).
    #[default]
    Appendix,
    /// The Manator game: Chiefs on the same file, mirror image (§2.1).
    ManatorFacing,
}

/// Step count of path pieces (spec §3 rule 2, switch `step_count`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum StepCount {
    /// Exactly `k` steps (standard).
    #[default]
    Exact,
    /// 1..k steps (not implemented: `Unsupported`).
    UpTo,
}

/// Thoat movement (spec §4.2, switch `thoat`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Thoat {
    /// One orthogonal and one diagonal step in either order, non-jumping: 12 squares (standard).
    #[default]
    EitherOrder,
    /// Orthogonal step first, then diagonal (seed 000, quadibloc).
    OrthogonalFirst,
    /// Either order, non-jumping, but only the 8 knight squares (second step outward).
    KnightOnly,
    /// Either order, jumping (intermediate square may be occupied).
    Jumping,
}

/// Warrior movement (spec §4.3, switch `warrior`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Warrior {
    /// Exactly 2 orthogonal steps (standard).
    #[default]
    Orthogonal,
    /// All-orthogonal or all-diagonal (not implemented: `Unsupported`).
    Civil,
    /// Any 2 king steps (not implemented: `Unsupported`).
    Wild,
}

/// Princess path test (spec §4.8, switch `princess_path`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PrincessPath {
    /// Only the final square is tested (standard).
    #[default]
    Brave,
    /// Intermediate squares must be unattacked too (not implemented: `Unsupported`).
    Frightened,
}

/// The Princess's Escape (spec §6, switch `escape`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Escape {
    /// Once per game, to any empty unattacked square (standard).
    #[default]
    AnyEmptyUnattackedSquare,
    /// No Escape at all.
    None,
    /// Like the standard Escape, but only while the Princess's square is attacked.
    OnlyWhenAttacked,
    /// Smith's free escape (not implemented: `Unsupported`).
    StraightLineUpTo9,
}

/// What happens when a non-Chief captures a Chief (spec §8.2, switch `chief_captured_by_non_chief`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ChiefCapture {
    /// The game is drawn (standard).
    #[default]
    Draw,
    /// The Chief is removed and play continues.
    RemoveAndContinue,
    /// The capturing side wins.
    CapturerWins,
    /// Decided by lot (random; not implemented: `Unsupported`).
    Lot,
}

/// The reduced-material rule (spec §8.4, switch `small_material`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SmallMaterial {
    /// Both sides ≤ 3 pieces → 10-ply countdown → draw (standard).
    #[default]
    Standard,
    /// As standard, but the countdown starts only if material is equal on seed 000's scale (§14).
    EqualValueOnly,
    /// As standard, but when the countdown runs out the side with more material wins (§8.4).
    Seed000Adjudication,
    /// Decided by lot (random; not implemented: `Unsupported`).
    Lot,
}

/// Threefold repetition (spec §8.3, switch `repetition`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Repetition {
    /// The third occurrence of a position is a draw (standard).
    #[default]
    Threefold,
    /// No repetition rule.
    Off,
}

/// No legal moves (spec §8.6, switch `no_legal_moves`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NoLegalMoves {
    /// The game is drawn (standard).
    #[default]
    Draw,
    /// The side without moves loses (Friedlander's applet).
    Loses,
}

/// Every rules switch of jetan spec §13; `Default` is the standard rule set.
///
/// Read from TOML/JSON with the field names below and the variant names of the
/// spec (e.g. `thoat = "OrthogonalFirst"`); unknown fields are rejected.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JetanRules {
    /// §2.2: who moves first.
    pub first_player: FirstPlayer,
    /// §2.1: the initial setup.
    pub setup: Setup,
    /// §3 rule 2: exact step count.
    pub step_count: StepCount,
    /// §4.2: Thoat movement.
    pub thoat: Thoat,
    /// §4.3: Warrior movement.
    pub warrior: Warrior,
    /// §4.8: Princess path test.
    pub princess_path: PrincessPath,
    /// §6: the Escape.
    pub escape: Escape,
    /// §8.2: Chief captured by a non-Chief.
    pub chief_captured_by_non_chief: ChiefCapture,
    /// §8.4: reduced-material countdown.
    pub small_material: SmallMaterial,
    /// §8.3: repetition.
    pub repetition: Repetition,
    /// §8.6: no legal moves.
    pub no_legal_moves: NoLegalMoves,
    /// §8.5: the game is drawn when this many plies have been played (default 500).
    pub max_plies: u32,
    /// §8.5: draw after this many consecutive plies without a capture (default off).
    pub no_capture_limit: Option<u32>,
}

impl Default for JetanRules {
    fn default() -> Self {
        JetanRules {
            first_player: FirstPlayer::Orange,
            setup: Setup::Appendix,
            step_count: StepCount::Exact,
            thoat: Thoat::EitherOrder,
            warrior: Warrior::Orthogonal,
            princess_path: PrincessPath::Brave,
            escape: Escape::AnyEmptyUnattackedSquare,
            chief_captured_by_non_chief: ChiefCapture::Draw,
            small_material: SmallMaterial::Standard,
            repetition: Repetition::Threefold,
            no_legal_moves: NoLegalMoves::Draw,
            max_plies: 500,
            no_capture_limit: None,
        }
    }
}

impl JetanRules {
    /// Checks that every switch is implemented (§13).
    ///
    /// # Errors
    /// [`RulesError::Unsupported`] naming the first unimplemented switch value.
    pub fn validate(&self) -> Result<(), RulesError> {
        fn unsupported(option: &'static str, value: impl std::fmt::Debug) -> Result<(), RulesError> {
            Err(RulesError::Unsupported { option, value: format!("{value:?}") })
        }
        if self.step_count != StepCount::Exact {
            return unsupported("step_count", self.step_count);
        }
        if self.warrior != Warrior::Orthogonal {
            return unsupported("warrior", self.warrior);
        }
        if self.princess_path != PrincessPath::Brave {
            return unsupported("princess_path", self.princess_path);
        }
        if self.escape == Escape::StraightLineUpTo9 {
            return unsupported("escape", self.escape);
        }
        if self.chief_captured_by_non_chief == ChiefCapture::Lot {
            return unsupported("chief_captured_by_non_chief", self.chief_captured_by_non_chief);
        }
        if self.small_material == SmallMaterial::Lot {
            return unsupported("small_material", self.small_material);
        }
        if self.max_plies == 0 {
            return unsupported("max_plies", self.max_plies);
        }
        Ok(())
    }
}
