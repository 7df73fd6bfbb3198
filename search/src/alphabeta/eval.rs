//! The per-game hooks of the alpha-beta search live with the games in
//! `martian_rules` ([`martian_rules::ab`]); this module re-exports them.

pub use martian_rules::ab::{AbGame, StaticEval};
pub use martian_rules::jetan::{JetanEval, JetanValues};
pub use martian_rules::martian::MartianEval;
pub use martian_rules::martian4::Martian4Eval;
