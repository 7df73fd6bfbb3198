//! Playing a ply on the pieces (spec §4: plain move, capture §6, merge §7),
//! the deadlock clock (§9.2, §14.5) and the end checks (§9, §14.6), shared by
//! both games.

use std::cmp::Ordering;

use super::board::{Pieces, Word};
use super::{ClockMode, Switches, QUEEN};
use crate::game::{EndReason, Side};

/// Moves the piece on `from` to `to` (a legal move of the side whose pieces
/// stand on `own_zone`): a plain move onto an empty square, a capture of a
/// piece outside `own_zone` (the capturer stays on `to`), or a merge with a
/// piece inside it (values add up, kind index = value - 1). Returns the
/// change of the placement hash under `keys` and the captured kind, if any.
#[inline(always)]
pub(crate) fn move_piece<W: Word, const N: usize>(
    bb: &mut [W; 3],
    from: u8,
    to: u8,
    own_zone: W,
    keys: &[[u64; N]; 3],
) -> (u64, Option<usize>) {
    let (f, t) = (from as usize, to as usize);
    let (fb, tb) = (W::bit(u32::from(from)), W::bit(u32::from(to)));
    let kf = bb.kind_at(from);
    let occ = bb.occupied();
    debug_assert!(occ & fb & own_zone != W::ZERO, "no piece of the mover on the origin");
    if occ & tb == W::ZERO {
        // Plain move (spec §4.1, §14.4 item 1).
        bb[kf] ^= fb | tb;
        return (keys[kf][f] ^ keys[kf][t], None);
    }
    let kt = bb.kind_at(to);
    if own_zone & tb == W::ZERO {
        // Capture (spec §6, §14.4 item 2): the capturer stays on `t`.
        bb[kt] ^= tb;
        bb[kf] ^= fb | tb;
        (keys[kt][t] ^ keys[kf][f] ^ keys[kf][t], Some(kt))
    } else {
        // Merge (spec §7, §14.4 item 3): values add up, kind index = value - 1.
        let km = kf + kt + 1;
        debug_assert!(km <= QUEEN);
        bb[kf] ^= fb;
        bb[kt] ^= tb;
        bb[km] ^= tb;
        (keys[kf][f] ^ keys[kt][t] ^ keys[km][t], None)
    }
}

/// The clock state after a ply (0 = not called, `1 + countdown` once
/// called; spec §9.2, §14.5): a called clock restarts at `plies` on a
/// capture and counts down otherwise; an uncalled one is called once
/// `quiet` (the quiet plies after this one) reaches `plies` under `Auto`,
/// or by a flagged move (`call`) under `Manual`.
#[inline(always)]
pub(crate) fn next_clock(mode: ClockMode, old: u32, capture: bool, quiet: u32, plies: u32, call: bool) -> u32 {
    let full = plies + 1;
    match mode {
        ClockMode::Off => old,
        _ if old != 0 => {
            if capture {
                full
            } else {
                old - 1
            }
        }
        ClockMode::Auto if quiet >= plies => full,
        ClockMode::Manual if call => full,
        _ => old,
    }
}

/// The side with the higher of `south` and `north` (scores, or any two
/// numbers that decide a result), `tie` when they are equal.
#[inline]
pub(crate) fn higher_score(south: u32, north: u32, tie: Option<Side>) -> Option<Side> {
    match south.cmp(&north) {
        Ordering::Greater => Some(Side::South),
        Ordering::Less => Some(Side::North),
        Ordering::Equal => tie,
    }
}

/// What ends the game, in the order of spec §9.5 / §14.6: a zone or quadrant
/// emptied (`empty_zone`), the clock run out (`clock_state` 1 under a
/// clock), the move cap reached, no legal move (`has_legal_move`, asked
/// last); `None` while the game goes on.
#[inline]
pub(crate) fn end_reason(
    empty_zone: bool,
    rules: Switches,
    clock_state: u32,
    ply: u32,
    has_legal_move: impl FnOnce() -> bool,
) -> Option<EndReason> {
    if empty_zone {
        Some(EndReason::EmptyZone)
    } else if rules.clock != ClockMode::Off && clock_state == 1 {
        Some(EndReason::Clock)
    } else if ply >= rules.max_plies {
        Some(EndReason::MoveCap)
    } else if !has_legal_move() {
        Some(EndReason::NoLegalMoves)
    } else {
        None
    }
}

/// Adds the pips of a captured piece of kind `kind` to `scores[who]` (spec
/// §6, §14.4); returns the change of the hash under the score keys `key`.
#[inline(always)]
pub(crate) fn score_capture(scores: &mut [u32], who: usize, kind: usize, key: impl Fn(usize, u32) -> u64) -> u64 {
    let old = scores[who];
    let new = old + kind as u32 + 1;
    scores[who] = new;
    key(who, old) ^ key(who, new)
}
