//! The Jetan evaluation of the alpha-beta baseline and its [`AbGame`] hooks
//! (piece values from jetan spec §14).

use serde::{Deserialize, Serialize};

use super::{Jetan, Piece as JPiece};
use crate::ab::{mix, AbGame, StaticEval};
use crate::game::{GameState, Move, Side};

/// Jetan piece-value tables (spec §14).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JetanValues {
    /// Cazaux & Knowlton (via seed 002): Padwar 1.7, Warrior 1.9, Panthan 2.0,
    /// Dwar 4.9, Thoat 5.6, Flier 9.5; Chief and Princess without value.
    #[default]
    CazauxKnowlton,
    /// Seed 000: Panthan 1, Warrior 2, Thoat 3, Padwar 4, Dwar 5, Flier 6, Chief 7.
    Seed000,
}

impl JetanValues {
    /// Value of `p` in centi-units (x 100), indexed by [`JPiece::index`].
    pub fn table(self) -> [i32; 8] {
        let mut t = [0; 8];
        for p in JPiece::ALL {
            t[p.index()] = match self {
                JetanValues::Seed000 => 100 * p.seed000_value() as i32,
                JetanValues::CazauxKnowlton => match p {
                    JPiece::Padwar => 170,
                    JPiece::Warrior => 190,
                    JPiece::Panthan => 200,
                    JPiece::Dwar => 490,
                    JPiece::Thoat => 560,
                    JPiece::Flier => 950,
                    JPiece::Chief | JPiece::Princess => 0,
                },
            };
        }
        t
    }

    /// Parses `cazaux-knowlton` (or `ck`) and `seed000`.
    pub fn parse(s: &str) -> Option<JetanValues> {
        match s {
            "cazaux-knowlton" | "ck" => Some(JetanValues::CazauxKnowlton),
            "seed000" | "seed-000" => Some(JetanValues::Seed000),
            _ => None,
        }
    }
}

/// Jetan evaluation: material (a [`JetanValues`] table) + Princess safety
/// (enemy-attacked squares around her, her own square attacked, Escape still
/// held) + Chief safety + mobility (squares attacked).
#[derive(Clone, Debug, PartialEq)]
pub struct JetanEval {
    /// Material values, centi-units, by piece index.
    pub values: [i32; 8],
    /// Penalty per enemy-attacked square next to the Princess.
    pub princess_ring: i32,
    /// Penalty when the Princess's own square is attacked.
    pub princess_attacked: i32,
    /// Bonus while the Escape right is held.
    pub escape_held: i32,
    /// Penalty when the Chief's square is attacked.
    pub chief_attacked: i32,
    /// Bonus per attacked square (mobility proxy).
    pub mobility: i32,
}

impl JetanEval {
    /// The evaluation with piece values `v` and the default weights.
    pub fn with_values(v: JetanValues) -> Self {
        JetanEval {
            values: v.table(),
            princess_ring: 15,
            princess_attacked: 250,
            escape_held: 40,
            chief_attacked: 60,
            mobility: 2,
        }
    }
}

impl Default for JetanEval {
    fn default() -> Self {
        Self::with_values(JetanValues::CazauxKnowlton)
    }
}

/// King-step neighbourhood masks of the 10x10 board.
#[inline]
fn jetan_ring(sq: u8) -> u128 {
    let (f, r) = ((sq % 10) as i32, (sq / 10) as i32);
    let mut m = 0u128;
    for df in -1..=1 {
        for dr in -1..=1 {
            let (x, y) = (f + df, r + dr);
            if (df, dr) != (0, 0) && (0..10).contains(&x) && (0..10).contains(&y) {
                m |= 1u128 << (x + 10 * y);
            }
        }
    }
    m
}

impl JetanEval {
    #[inline]
    fn side_terms(&self, s: &Jetan, side: Side, enemy_att: u128, own_att: u128) -> i32 {
        let mut v = 0;
        for p in JPiece::ALL {
            v += self.values[p.index()] * s.pieces(side, p).count() as i32;
        }
        let pr = s.pieces(side, JPiece::Princess).0;
        if pr != 0 {
            let sq = pr.trailing_zeros() as u8;
            v -= self.princess_ring * (jetan_ring(sq) & enemy_att).count_ones() as i32;
            if enemy_att & pr != 0 {
                v -= self.princess_attacked;
            }
            if s.escape_right(side) {
                v += self.escape_held;
            }
        }
        let ch = s.pieces(side, JPiece::Chief).0;
        if ch & enemy_att != 0 {
            v -= self.chief_attacked;
        }
        v + self.mobility * own_att.count_ones() as i32
    }
}

impl StaticEval<Jetan> for JetanEval {
    #[inline]
    fn evaluate(&self, s: &Jetan) -> i32 {
        let me = s.side_to_move();
        let op = me.opponent();
        let att_me = s.attacked_squares(me, None);
        let att_op = s.attacked_squares(op, None);
        self.side_terms(s, me, att_op, att_me) - self.side_terms(s, op, att_me, att_op)
    }
}

/// Ordering value of a Jetan piece (Princess and Chief first: they end games).
#[inline]
fn jetan_order_value(p: JPiece) -> i32 {
    match p {
        JPiece::Princess => 10_000,
        JPiece::Chief => 5_000,
        p => 100 * p.seed000_value() as i32,
    }
}

impl AbGame for Jetan {
    type Eval = JetanEval;

    /// Depths 1-3: under the standard rule depths 1 and 2 hardly separate
    /// (a deeper search's wins become Chief-capture draws, spec §8.2; 1 vs 2
    /// +19 =380 -1 in 400 games), depth 3 does (+44 =356 -0 against depth 1),
    /// and a depth-3 move costs a few milliseconds (`docs/evaluation.md`).
    const LADDER_DEPTHS: &'static [u32] = &[1, 2, 3];

    #[inline]
    fn search_key(&self) -> u64 {
        let mut h = self.hash();
        let reps = self.repetitions();
        if reps > 0 {
            h = mix(h, 0x100 + reps as u64);
        }
        if let Some(c) = self.countdown() {
            h = mix(h, 0x200 + c as u64);
        }
        let r = self.rules();
        if let Some(n) = r.no_capture_limit {
            let left = n.saturating_sub(self.quiet_plies());
            if left <= 64 {
                h = mix(h, 0x1000 + left as u64);
            }
        }
        let left = r.max_plies.saturating_sub(self.ply());
        if left <= 64 {
            h = mix(h, 0x2000 + left as u64);
        }
        h
    }

    #[inline]
    fn capture_values(&self, mv: Move) -> Option<(i32, i32)> {
        let (victim, vs) = self.piece_at(mv.to)?;
        if vs == self.side_to_move() {
            return None;
        }
        let attacker = self.piece_at(mv.from).map(|(p, _)| jetan_order_value(p)).unwrap_or(0);
        Some((jetan_order_value(victim), attacker))
    }

    #[inline]
    fn threat_candidate(&self, mv: Move) -> bool {
        let pr = self.pieces(self.side_to_move().opponent(), JPiece::Princess).0;
        if pr == 0 || matches!(self.piece_at(mv.from), Some((JPiece::Princess, _))) {
            return false;
        }
        let p = pr.trailing_zeros() as i32;
        let (t, p) = (mv.to as i32, p);
        (t % 10 - p % 10).abs() <= 3 && (t / 10 - p / 10).abs() <= 3
    }

    fn eval_option(eval: &mut JetanEval, key: &str, value: &str) -> Result<(), String> {
        match key {
            "values" => {
                let v = JetanValues::parse(value)
                    .ok_or_else(|| format!("values={value:?}: expected cazaux-knowlton (ck) or seed000"))?;
                eval.values = v.table();
                Ok(())
            }
            _ => Err(format!("unknown option {key:?} for the jetan evaluation (known: values)")),
        }
    }

    #[inline]
    fn is_threat(&self, child: &Jetan) -> bool {
        let me = self.side_to_move();
        let pr = child.pieces(me.opponent(), JPiece::Princess).0;
        pr != 0 && child.attacked_squares(me, None) & pr != 0
    }
}
