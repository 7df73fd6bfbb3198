//! Network encoding (spec §10.4): policy index and input planes.
//!
//! # Canonical orientation
//! The side to move is always at the bottom. Black (South) to move: squares
//! unchanged. Orange (North) to move: the board is rotated 180°
//! (`sq → 99 − sq`) and colours are swapped; under `Setup::ManatorFacing` the
//! ranks are mirrored instead (`file + 10*rank → file + 10*(9 − rank)`).
//!
//! # Policy index (4900 actions)
//! With `(from', to')` the canonical squares: an Escape (Princess move at
//! Chebyshev distance ≥ 4) is `4800 + to'`; any other move is
//! `from' * 48 + disp`, where `disp` indexes `(Δf, Δr) ∈ [−3,3]² \ {(0,0)}`
//! (canonical coordinates) ordered by `Δr = +3 … −3` and, within each `Δr`,
//! `Δf = −3 … +3`.
//!
//! # Input planes `[24, 10, 10]`
//! Row = canonical rank index (row 0 = the side to move's back rank), column =
//! canonical file. Values are `0.0` unless stated.
//!
//! | plane | content |
//! |---|---|
//! | 0–7 | side-to-move pieces: Chief, Princess, Flier, Dwar, Padwar, Warrior, Thoat, Panthan (1.0 on their squares) |
//! | 8–15 | opponent pieces, same order |
//! | 16 | all ones if the side to move holds its Escape right (§6) |
//! | 17 | all ones if the opponent holds its Escape right |
//! | 18 | all ones if the small-material countdown is active (§8.4) |
//! | 19 | countdown plies remaining / 10 (0 when inactive) |
//! | 20 | min(quiet plies / 100, 1) (§8.5) |
//! | 21 | ply / max_plies |
//! | 22 | all ones if the current position occurred exactly once before (§8.3) |
//! | 23 | all ones if it occurred twice (or more) before |

use super::rules::Setup;
use super::tables::tables;
use super::{Jetan, Piece};
use crate::game::{EncodingDescription, GameState, Move, Side};
use crate::PackedPlane;

/// Version of the rules specification (`docs/rules/jetan.md`, "Status: v1")
/// this implementation follows; exported model descriptions record it.
pub const RULES_SPEC_VERSION: &str = "v1";

/// The input planes of the module documentation as `(name, meaning)` pairs,
/// in plane order (written into exported model descriptions).
pub const PLANE_DESCRIPTIONS: [(&str, &str); 24] = [
    ("mover_chief", "1.0 on the squares of the side to move's Chief"),
    ("mover_princess", "1.0 on the squares of the side to move's Princess"),
    ("mover_flier", "1.0 on the squares of the side to move's Fliers"),
    ("mover_dwar", "1.0 on the squares of the side to move's Dwars"),
    ("mover_padwar", "1.0 on the squares of the side to move's Padwars"),
    ("mover_warrior", "1.0 on the squares of the side to move's Warriors"),
    ("mover_thoat", "1.0 on the squares of the side to move's Thoats"),
    ("mover_panthan", "1.0 on the squares of the side to move's Panthans"),
    ("opponent_chief", "1.0 on the squares of the opponent's Chief"),
    ("opponent_princess", "1.0 on the squares of the opponent's Princess"),
    ("opponent_flier", "1.0 on the squares of the opponent's Fliers"),
    ("opponent_dwar", "1.0 on the squares of the opponent's Dwars"),
    ("opponent_padwar", "1.0 on the squares of the opponent's Padwars"),
    ("opponent_warrior", "1.0 on the squares of the opponent's Warriors"),
    ("opponent_thoat", "1.0 on the squares of the opponent's Thoats"),
    ("opponent_panthan", "1.0 on the squares of the opponent's Panthans"),
    ("mover_escape_right", "all 1.0 if the side to move still holds its Escape right (spec section 6), else 0"),
    ("opponent_escape_right", "all 1.0 if the opponent still holds its Escape right, else 0"),
    ("countdown_active", "all 1.0 if the small-material countdown is running (spec section 8.4), else 0"),
    ("countdown_remaining", "all equal to countdown plies remaining / 10 (0 when the countdown is not running)"),
    ("quiet_plies", "all equal to min(plies since the last capture / 100, 1) (spec section 8.5)"),
    ("ply", "all equal to ply / rules.max_plies"),
    ("repeated_once", "all 1.0 if the current position occurred exactly once before in the game (spec section 8.3)"),
    ("repeated_twice", "all 1.0 if the current position occurred twice or more before"),
];

/// The input planes as `(name, meaning)` pairs ([`PLANE_DESCRIPTIONS`]).
pub fn plane_descriptions() -> &'static [(&'static str, &'static str)] {
    &PLANE_DESCRIPTIONS
}

/// The policy index formula of the module documentation, in words.
pub const ACTION_ENCODING: &str = "4900 actions. Let (from', to') be the origin and destination squares \
(index = file + 10 * (rank - 1), a1 = 0) in the canonical orientation of the side to move \
(Black/South to move: unchanged; Orange/North to move: sq' = 99 - sq, or sq' = file + 10 * (9 - rank index) \
under rules.setup = ManatorFacing). An Escape (a Princess move to a square at Chebyshev distance >= 4 from \
its origin) has index 4800 + to'. Any other move has index from' * 48 + disp, where with \
df = file(to') - file(from') and dr = rank(to') - rank(from') (both in -3..=3, not both 0), \
lin = (3 - dr) * 7 + (df + 3) and disp = lin if lin < 24 else lin - 1.";

/// What an exported network bundle says about Jetan's encoding
/// ([`GameState::ENCODING`]).
pub const ENCODING: EncodingDescription = EncodingDescription {
    rules_document: "docs/rules/jetan.md",
    rules_version: RULES_SPEC_VERSION,
    orientation: "side to move at the bottom: Black (South, 'b') to move: squares unchanged; Orange (North, 'o') \
                  to move: the board is rotated 180 degrees (sq' = 99 - sq) and colours swap (planes 0-7 are always \
                  the mover's pieces); under rules.setup = ManatorFacing the ranks are mirrored instead \
                  (sq' = file + 10 * (9 - (rank - 1)))",
    planes: &PLANE_DESCRIPTIONS,
    action_encoding: ACTION_ENCODING,
    squares: "files a-j, ranks 1-10, sq = file + 10 * (rank - 1) (a1 = 0, j10 = 99); a move is written \
              <from><to>, e.g. e2e5",
};

/// The left-right mirror of square `sq` (file `f` -> `9 - f`).
#[inline]
fn mirror_square(sq: usize) -> usize {
    9 - sq % 10 + 10 * (sq / 10)
}

/// The left-right mirror of a policy index ([`GameState::mirror_action`]):
/// an Escape `4800 + to'` goes to `4800 + mirror(to')`; a move
/// `from' * 48 + disp` keeps its `dr` and negates its `df`, which in the
/// `lin = (3 - dr) * 7 + (df + 3)` layout of the module doc reverses the
/// column `df + 3`. Both reflections commute with the 180-degree turn and
/// the rank mirror of the canonical orientation.
pub fn mirror_action(action: usize) -> Option<usize> {
    match action {
        4900.. => None,
        4800.. => Some(4800 + mirror_square(action - 4800)),
        _ => {
            let (from, disp) = (action / 48, action % 48);
            let lin = if disp < 24 { disp } else { disp + 1 };
            let mirrored = (lin / 7) * 7 + (6 - lin % 7);
            let disp = if mirrored < 24 { mirrored } else { mirrored - 1 };
            Some(mirror_square(from) * 48 + disp)
        }
    }
}

/// Canonical square of `sq` for the side to move (module doc), square by
/// square (the tests' reference for [`CANONICAL`] and [`canonical_mask`]).
#[cfg(test)]
#[inline]
pub fn canonical_square(g: &Jetan, sq: u8) -> u8 {
    if g.side_to_move() == Side::South {
        sq
    } else if g.rules().setup == Setup::ManatorFacing {
        sq % 10 + 10 * (9 - sq / 10)
    } else {
        99 - sq
    }
}

/// The three canonical orientations (module doc) as square maps:
/// `CANONICAL[0]` unchanged (Black to move), `[1]` turned 180° (Orange to
/// move), `[2]` ranks mirrored (Orange to move under `Setup::ManatorFacing`).
const CANONICAL: [[u8; 100]; 3] = {
    let mut t = [[0u8; 100]; 3];
    let mut sq = 0;
    while sq < 100 {
        t[0][sq] = sq as u8;
        t[1][sq] = (99 - sq) as u8;
        t[2][sq] = (sq % 10 + 10 * (9 - sq / 10)) as u8;
        sq += 1;
    }
    t
};

/// Which of the [`CANONICAL`] orientations `g`'s side to move sees.
#[inline]
fn orientation(g: &Jetan) -> usize {
    if g.side_to_move() == Side::South {
        0
    } else if g.rules().setup == Setup::ManatorFacing {
        2
    } else {
        1
    }
}

/// Policy index of `mv` (module doc, §10.4).
pub fn action_index(g: &Jetan, mv: Move) -> usize {
    index_in(&CANONICAL[orientation(g)], &tables().far, princesses(g), mv)
}

/// The squares of both sides' Princesses.
#[inline]
fn princesses(g: &Jetan) -> u128 {
    g.pieces(Side::South, Piece::Princess).0 | g.pieces(Side::North, Piece::Princess).0
}

/// The policy indices of `moves` ([`action_index`] of each, in order),
/// appended to `out`; the orientation and the tables are looked up once.
pub fn action_indices(g: &Jetan, moves: &[Move], out: &mut Vec<u32>) {
    let (canon, far, princess) = (&CANONICAL[orientation(g)], &tables().far, princesses(g));
    out.extend(moves.iter().map(|&mv| index_in(canon, far, princess, mv) as u32));
}

/// [`action_index`] with the side to move's square map `canon`, the
/// Escape table `far` and the Princesses' squares `princess`.
#[inline(always)]
fn index_in(canon: &[u8; 100], far: &[u128; 100], princess: u128, mv: Move) -> usize {
    let (f, t) = (canon[(mv.from % 100) as usize], canon[(mv.to % 100) as usize]);
    let is_princess = mv.from < 100 && princess >> mv.from & 1 != 0;
    if is_princess && far[mv.from as usize % 100] >> (mv.to % 100) & 1 != 0 {
        return 4800 + t as usize;
    }
    let df = (t % 10) as i32 - (f % 10) as i32;
    let dr = (t / 10) as i32 - (f / 10) as i32;
    let lin = ((3 - dr) * 7 + (df + 3)).clamp(0, 48) as usize;
    let disp = if lin < 24 { lin } else { lin.saturating_sub(1).min(47) };
    f as usize * 48 + disp
}

/// The squares of `bb` (bits `0..100`) mapped to their canonical squares
/// under orientation `orient` (the bitboard form of [`CANONICAL`]).
#[inline]
fn canonical_mask(bb: u128, orient: usize) -> u128 {
    const RANK: u128 = (1 << 10) - 1;
    match orient {
        0 => bb,
        // Bit `sq` to bit `127 - sq`, then down to `99 - sq`.
        1 => bb.reverse_bits() >> 28,
        _ => (0..10).fold(0, |m, r| m | ((bb >> (10 * r)) & RANK) << (10 * (9 - r))),
    }
}

/// Writes the 24 input planes (module doc) in packed form. `out.len()` must be 24.
///
/// # Panics
/// If `out.len() != 24`.
pub fn encode_packed(g: &Jetan, out: &mut [PackedPlane]) {
    assert_eq!(out.len(), 24, "jetan encode needs 24 planes");
    out.fill(PackedPlane::default());
    let me = g.side_to_move();
    let orient = orientation(g);
    for (k, side) in [me, me.opponent()].into_iter().enumerate() {
        for p in Piece::ALL {
            let mask = canonical_mask(g.pieces(side, p).0, orient);
            if mask != 0 {
                out[k * 8 + p.index()] = PackedPlane { mask, value: 1.0 };
            }
        }
    }
    let fill = |v: f32| PackedPlane::filled(100, v);
    if g.escape_right(me) {
        out[16] = fill(1.0);
    }
    if g.escape_right(me.opponent()) {
        out[17] = fill(1.0);
    }
    if let Some(c) = g.countdown() {
        out[18] = fill(1.0);
        out[19] = fill(f32::from(c) / 10.0);
    }
    out[20] = fill((g.quiet_plies() as f32 / 100.0).min(1.0));
    out[21] = fill(g.ply() as f32 / g.rules().max_plies.max(1) as f32);
    match g.repetitions() {
        0 => {}
        1 => out[22] = fill(1.0),
        _ => out[23] = fill(1.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jetan::JetanRules;
    use crate::mix64;

    /// The per-square forms of `action_index` and of the piece planes, as
    /// they were before the tables: the fast forms must give the same values.
    fn slow_index(g: &Jetan, mv: Move) -> usize {
        let (f, t) = (canonical_square(g, mv.from % 100), canonical_square(g, mv.to % 100));
        let is_princess = matches!(g.piece_at(mv.from), Some((Piece::Princess, _)));
        if is_princess && tables().far[mv.from as usize % 100] >> (mv.to % 100) & 1 != 0 {
            return 4800 + t as usize;
        }
        let df = (t % 10) as i32 - (f % 10) as i32;
        let dr = (t / 10) as i32 - (f / 10) as i32;
        let lin = ((3 - dr) * 7 + (df + 3)).clamp(0, 48) as usize;
        let disp = if lin < 24 { lin } else { lin.saturating_sub(1).min(47) };
        f as usize * 48 + disp
    }

    #[test]
    fn tables_give_the_per_square_indices_and_planes() {
        for setup in [Setup::default(), Setup::ManatorFacing] {
            let rules = JetanRules { setup, ..JetanRules::default() };
            let mut x = 7u64;
            for _game in 0..20 {
                let mut g = Jetan::new_game(&rules).unwrap();
                let mut moves = Vec::new();
                let mut fast = Vec::new();
                let mut planes = [PackedPlane::default(); 24];
                for _ply in 0..120 {
                    g.legal_moves(&mut moves);
                    if moves.is_empty() {
                        break;
                    }
                    fast.clear();
                    fast.push(7);
                    action_indices(&g, &moves, &mut fast);
                    assert_eq!(fast[0], 7, "appended, not overwritten");
                    let slow: Vec<u32> = moves.iter().map(|&m| slow_index(&g, m) as u32).collect();
                    assert_eq!(fast[1..], slow[..], "{setup:?} {}", g.to_position());
                    assert!(moves.iter().all(|&m| action_index(&g, m) == slow_index(&g, m)));
                    encode_packed(&g, &mut planes);
                    let me = g.side_to_move();
                    for (k, side) in [me, me.opponent()].into_iter().enumerate() {
                        for p in Piece::ALL {
                            let mut want = PackedPlane::default();
                            for sq in g.pieces(side, p).squares() {
                                want.set(canonical_square(&g, sq) as usize);
                            }
                            assert_eq!(planes[k * 8 + p.index()], want, "{setup:?} {}", g.to_position());
                        }
                    }
                    x = mix64(x);
                    g.play_unchecked(moves[x as usize % moves.len()]);
                }
            }
        }
    }
}
