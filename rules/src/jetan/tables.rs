//! Precomputed move tables (spec §3, §4, §9).
//!
//! For every path piece and origin the table holds a short list of entries
//! `(req, dests)`: `req` is a set of squares that must all be empty (the
//! intermediate squares of some valid paths) and `dests` the destinations those
//! paths reach. A destination is reachable iff some entry holding it has
//! `req & occupied == 0`. Entries are built once from a plain enumeration of
//! every valid path (§3 rules 1–3), grouped by their required-empty set, with
//! destinations dropped from an entry when an entry with a subset `req` already
//! covers them. Jumpers (Flier, Princess, jumping Thoat) have one entry with
//! `req = 0`.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::bitboard::BOARD;

/// Table kind: Chief (3 king steps, blocked, §4.7).
pub const K_CHIEF: usize = 0;
/// Table kind: Flier (3 diagonal steps, jumping, §4.6).
pub const K_FLIER: usize = 1;
/// Table kind: Dwar (3 orthogonal steps, blocked, §4.5).
pub const K_DWAR: usize = 2;
/// Table kind: Padwar (2 diagonal steps, blocked, §4.4).
pub const K_PADWAR: usize = 3;
/// Table kind: Warrior (2 orthogonal steps, blocked, §4.3).
pub const K_WARRIOR: usize = 4;
/// Table kind: Thoat, either order, blocked (standard, §4.2).
pub const K_THOAT_EITHER: usize = 5;
/// Table kind: Thoat, orthogonal step first (§4.2 variant).
pub const K_THOAT_ORTH_FIRST: usize = 6;
/// Table kind: Thoat, knight squares only (§4.2 variant).
pub const K_THOAT_KNIGHT: usize = 7;
/// Table kind: Thoat, jumping (§4.2 variant).
pub const K_THOAT_JUMPING: usize = 8;
/// Table kind: Princess normal move (3 king steps, jumping, §4.8), used to check the lemma.
pub const K_PRINCESS: usize = 9;
/// Number of table kinds.
pub const NUM_KINDS: usize = 10;

const ORTH: [(i8, i8); 4] = [(0, 1), (0, -1), (1, 0), (-1, 0)];
const DIAG: [(i8, i8); 4] = [(1, 1), (-1, 1), (1, -1), (-1, -1)];
const KING: [(i8, i8); 8] = [(0, 1), (0, -1), (1, 0), (-1, 0), (1, 1), (-1, 1), (1, -1), (-1, -1)];

/// Step set of step `i` of a path, given the previous step (for the Thoat).
fn step_set(kind: usize, i: usize, prev: Option<(i8, i8)>) -> &'static [(i8, i8)] {
    let is_diag = |d: (i8, i8)| d.0 != 0 && d.1 != 0;
    match kind {
        K_CHIEF | K_PRINCESS => &KING,
        K_FLIER | K_PADWAR => &DIAG,
        K_DWAR | K_WARRIOR => &ORTH,
        K_THOAT_ORTH_FIRST => {
            if i == 0 {
                &ORTH
            } else {
                &DIAG
            }
        }
        _ => match prev {
            None => &KING,
            Some(d) if is_diag(d) => &ORTH,
            Some(_) => &DIAG,
        },
    }
}

/// Number of steps of a table kind (§2 table).
pub fn step_count(kind: usize) -> usize {
    match kind {
        K_CHIEF | K_PRINCESS | K_FLIER | K_DWAR => 3,
        _ => 2,
    }
}

/// Whether a table kind jumps (§3 rule 4).
pub fn jumps(kind: usize) -> bool {
    matches!(kind, K_FLIER | K_PRINCESS | K_THOAT_JUMPING)
}

/// Calls `f` with every valid path (§3 rules 1–3) of `kind` from `origin`,
/// origin included. Blocking is not applied.
pub fn for_each_path(kind: usize, origin: u8, f: &mut dyn FnMut(&[u8])) {
    let mut path = vec![origin];
    rec(kind, &mut path, None, f);
    fn rec(kind: usize, path: &mut Vec<u8>, prev: Option<(i8, i8)>, f: &mut dyn FnMut(&[u8])) {
        let i = path.len() - 1;
        if i == step_count(kind) {
            let (o, d) = (path[0], path[i]);
            if kind == K_THOAT_KNIGHT {
                let df = (d % 10) as i8 - (o % 10) as i8;
                let dr = (d / 10) as i8 - (o / 10) as i8;
                if (df.abs(), dr.abs()) != (1, 2) && (df.abs(), dr.abs()) != (2, 1) {
                    return;
                }
            }
            f(path);
            return;
        }
        let cur = path[i];
        for &(df, dr) in step_set(kind, i, prev) {
            let nf = (cur % 10) as i8 + df;
            let nr = (cur / 10) as i8 + dr;
            if !(0..10).contains(&nf) || !(0..10).contains(&nr) {
                continue;
            }
            let n = (nf + 10 * nr) as u8;
            if path.contains(&n) {
                continue;
            }
            path.push(n);
            rec(kind, path, Some((df, dr)), f);
            path.pop();
        }
    }
}

/// The precomputed tables.
pub struct Tables {
    /// `start[kind*100 + sq] .. start[kind*100 + sq + 1]` indexes `entries`.
    pub start: Vec<u32>,
    /// `(req, dests)` entries (module doc).
    pub entries: Vec<(u128, u128)>,
    /// Squares at Chebyshev distance 1..=3 from each square (Princess normal reach, §4.8).
    pub box3: [u128; 100],
    /// Squares at Chebyshev distance >= 4 from each square (Escape candidates, §6).
    pub far: [u128; 100],
    /// `any[kind*100 + sq]`: every destination of `kind` from `sq` on an empty
    /// board (the union of its entries' destinations).
    pub any: Vec<u128>,
    /// `from_any[kind*100 + sq]`: every square from which `kind` reaches `sq`
    /// on an empty board (`any` read backwards), so that "can a piece of this
    /// kind reach `sq`" starts from the few pieces in this mask.
    pub from_any: Vec<u128>,
    /// `lines[(kind*100 + sq)*100 + to]`: every square that some path of
    /// `kind` from `sq` to `to` needs empty (the union of the `req` of the
    /// entries whose destinations hold `to`; 0 where none does).
    pub lines: Vec<u128>,
}

impl Tables {
    /// Entries of `kind` from `sq`.
    #[inline]
    pub fn entries(&self, kind: usize, sq: usize) -> &[(u128, u128)] {
        let i = kind * 100 + sq;
        // The indexes are in range by construction.
        &self.entries[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// Destinations of `kind` from `sq` reachable with occupancy `occ`, ignoring
    /// what stands on the destination.
    #[inline]
    pub fn reach(&self, kind: usize, sq: usize, occ: u128) -> u128 {
        let mut acc = 0u128;
        for &(req, dests) in self.entries(kind, sq) {
            if req & occ == 0 {
                acc |= dests;
            }
        }
        acc
    }

    /// The squares from which `kind` reaches some square of `targets` on an
    /// empty board (a superset of the pieces that can reach one of them now).
    #[inline]
    pub fn origins(&self, kind: usize, mut targets: u128) -> u128 {
        let mut acc = 0u128;
        while targets != 0 {
            let sq = targets.trailing_zeros() as usize;
            targets &= targets - 1;
            acc |= self.from_any[kind * 100 + sq];
        }
        acc
    }

    /// Every square that some path of `kind` from `sq` to a square of
    /// `targets` needs empty.
    #[inline]
    pub fn lines_to(&self, kind: usize, sq: usize, mut targets: u128) -> u128 {
        let mut acc = 0u128;
        while targets != 0 {
            let to = targets.trailing_zeros() as usize;
            targets &= targets - 1;
            acc |= self.lines[(kind * 100 + sq) * 100 + to];
        }
        acc
    }

    /// Whether `kind` on `sq` reaches a square of `targets` with occupancy
    /// `occ`: `reach(kind, sq, occ) & targets != 0`, but a piece that cannot
    /// reach `targets` even on an empty board costs one test.
    #[inline]
    pub fn reaches(&self, kind: usize, sq: usize, occ: u128, targets: u128) -> bool {
        if self.any[kind * 100 + sq] & targets == 0 {
            return false;
        }
        self.entries(kind, sq).iter().any(|&(req, dests)| dests & targets != 0 && req & occ == 0)
    }
}

fn build() -> Tables {
    let mut start = Vec::with_capacity(NUM_KINDS * 100 + 1);
    let mut entries = Vec::new();
    for kind in 0..NUM_KINDS {
        for sq in 0..100u8 {
            start.push(entries.len() as u32);
            let mut groups: BTreeMap<u128, u128> = BTreeMap::new();
            let jump = jumps(kind);
            for_each_path(kind, sq, &mut |p: &[u8]| {
                let mut req = 0u128;
                if !jump {
                    for &s in &p[1..p.len() - 1] {
                        req |= 1u128 << s;
                    }
                }
                *groups.entry(req).or_insert(0) |= 1u128 << p[p.len() - 1];
            });
            let list: Vec<(u128, u128)> = groups.into_iter().collect();
            let mut pruned: Vec<(u128, u128)> = Vec::new();
            for &(req, dests) in &list {
                let mut d = dests;
                for &(r2, d2) in &list {
                    if r2 != req && r2 & !req == 0 {
                        d &= !d2;
                    }
                }
                if d != 0 {
                    pruned.push((req, d));
                }
            }
            pruned.sort_by_key(|&(r, _)| (r.count_ones(), r));
            entries.extend(pruned);
        }
    }
    start.push(entries.len() as u32);
    let mut box3 = [0u128; 100];
    let mut far = [0u128; 100];
    for sq in 0..100i32 {
        for t in 0..100i32 {
            let d = ((sq % 10) - (t % 10)).abs().max((sq / 10 - t / 10).abs());
            if (1..=3).contains(&d) {
                box3[sq as usize] |= 1u128 << t;
            } else if d >= 4 {
                far[sq as usize] |= 1u128 << t;
            }
        }
        debug_assert_eq!(box3[sq as usize] & !BOARD, 0);
    }
    let any = (0..NUM_KINDS * 100)
        .map(|i| entries[start[i] as usize..start[i + 1] as usize].iter().fold(0, |a, &(_, d)| a | d))
        .collect::<Vec<u128>>();
    let mut from_any = vec![0u128; NUM_KINDS * 100];
    for kind in 0..NUM_KINDS {
        for sq in 0..100 {
            let mut d = any[kind * 100 + sq];
            while d != 0 {
                let to = d.trailing_zeros() as usize;
                d &= d - 1;
                from_any[kind * 100 + to] |= 1u128 << sq;
            }
        }
    }
    let mut lines = vec![0u128; NUM_KINDS * 100 * 100];
    for i in 0..NUM_KINDS * 100 {
        for &(req, dests) in &entries[start[i] as usize..start[i + 1] as usize] {
            let mut d = dests;
            while d != 0 {
                let to = d.trailing_zeros() as usize;
                d &= d - 1;
                lines[i * 100 + to] |= req;
            }
        }
    }
    Tables { start, entries, box3, far, any, from_any, lines }
}

/// The tables, built on first use.
#[inline]
pub fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(build)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §4.8 lemma: the jumping 3-king-step Princess reaches every square within
    /// Chebyshev distance 3 except her own, from every square.
    #[test]
    fn princess_lemma() {
        let t = tables();
        for sq in 0..100 {
            assert_eq!(t.reach(K_PRINCESS, sq, BOARD), t.box3[sq], "square {sq}");
        }
    }

    /// §3 open-board reach counts from a central square.
    #[test]
    fn open_board_counts() {
        let t = tables();
        let e5 = 44;
        for (kind, n) in [
            (K_WARRIOR, 8),
            (K_PADWAR, 8),
            (K_DWAR, 16),
            (K_FLIER, 16),
            (K_THOAT_EITHER, 12),
            (K_THOAT_ORTH_FIRST, 12),
            (K_THOAT_KNIGHT, 8),
            (K_THOAT_JUMPING, 12),
            (K_CHIEF, 48),
        ] {
            assert_eq!(t.reach(kind, e5, 1u128 << e5).count_ones(), n, "kind {kind}");
        }
        // Every non-jumping destination is blocked when all neighbours are occupied...
        let neighbours: u128 = [-11i32, -10, -9, -1, 1, 9, 10, 11].iter().map(|d| 1u128 << (44 + d)).sum();
        for kind in [K_WARRIOR, K_PADWAR, K_DWAR, K_THOAT_EITHER, K_CHIEF] {
            assert_eq!(t.reach(kind, e5, neighbours | 1u128 << e5), 0, "kind {kind}");
        }
        // ...but not for jumpers.
        assert_eq!(t.reach(K_THOAT_JUMPING, e5, neighbours).count_ones(), 12);
        assert_eq!(t.reach(K_FLIER, e5, neighbours).count_ones(), 16);
    }
}
