//! Left-right mirror augmentation.
//!
//! Both games' movement rules are symmetric under the reflection
//! file -> (width - 1 - file): Jetan's pieces move alike to the west and the
//! east (Panthans step sideways both ways), Martian Chess pieces move in
//! symmetric line sets and its zones span full ranks. A mirrored position is
//! therefore a legal position with the same value and the mirrored policy.
//! The *setups* are not mirror-symmetric (Jetan's Chief and Princess swap
//! files; Martian Chess sets up in the back-right corner), so mirrored
//! samples lie off the distribution of real games: the option is off by default.
//!
//! Action layouts (from the rules crate's encoders):
//! * Jetan: `from * 48 + disp` with disp over (df, dr) in [-3,3]^2 \ {0},
//!   ordered dr = +3..-3, df = -3..+3; Escapes `4800 + to`; 10 files.
//! * Martian Chess: `from * 32 + to`, 4 files.

use martian_rules::GameKind;

fn mirror_sq(sq: usize, width: usize) -> usize {
    let (f, r) = (sq % width, sq / width);
    (width - 1 - f) + width * r
}

/// The mirrored action index, or `None` if `action` is out of range.
pub fn mirror_action(game: GameKind, action: usize) -> Option<usize> {
    match game {
        GameKind::Jetan => {
            if action >= 4900 {
                None
            } else if action >= 4800 {
                Some(4800 + mirror_sq(action - 4800, 10))
            } else {
                let (from, disp) = (action / 48, action % 48);
                // Recover (df, dr) from the ordered displacement index.
                let mut k = 0;
                for dr in (-3i32..=3).rev() {
                    for df in -3i32..=3 {
                        if df == 0 && dr == 0 {
                            continue;
                        }
                        if k == disp {
                            let target = (-df, dr);
                            let mut j = 0;
                            for dr2 in (-3i32..=3).rev() {
                                for df2 in -3i32..=3 {
                                    if df2 == 0 && dr2 == 0 {
                                        continue;
                                    }
                                    if (df2, dr2) == target {
                                        return Some(mirror_sq(from, 10) * 48 + j);
                                    }
                                    j += 1;
                                }
                            }
                        }
                        k += 1;
                    }
                }
                None
            }
        }
        GameKind::MartianChess => {
            if action >= 1024 {
                None
            } else {
                Some(mirror_sq(action / 32, 4) * 32 + mirror_sq(action % 32, 4))
            }
        }
    }
}

/// Mirrors one sample in place: planes `[C, H, W]` flipped along W, policy remapped.
pub fn mirror_sample(game: GameKind, planes: &mut [f32], shape: [usize; 3], policy: &mut [f32], legal: &mut [u8]) {
    let [c, h, w] = shape;
    for row in planes.chunks_mut(w).take(c * h) {
        row.reverse();
    }
    permute(game, policy);
    permute(game, legal);
}

/// Moves every entry of a per-action array to its mirrored action.
fn permute<T: Copy + Default + PartialEq>(game: GameKind, v: &mut [T]) {
    let mut out = vec![T::default(); v.len()];
    for (a, &x) in v.iter().enumerate() {
        if x != T::default() {
            if let Some(m) = mirror_action(game, a) {
                out[m] = x;
            }
        }
    }
    v.copy_from_slice(&out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mirror_is_an_involution() {
        for g in [GameKind::Jetan, GameKind::MartianChess] {
            let n = if g == GameKind::Jetan { 4900 } else { 1024 };
            for a in 0..n {
                let m = mirror_action(g, a).unwrap();
                assert!(m < n);
                assert_eq!(mirror_action(g, m), Some(a), "{g:?} {a}");
            }
        }
    }

    #[test]
    fn jetan_mirror_examples() {
        // a1 (sq 0) -> j1 (sq 9); displacement (+1, +1) -> (-1, +1).
        let disp = |df: i32, dr: i32| -> usize {
            let mut k = 0;
            for r in (-3i32..=3).rev() {
                for f in -3i32..=3 {
                    if f == 0 && r == 0 {
                        continue;
                    }
                    if (f, r) == (df, dr) {
                        return k;
                    }
                    k += 1;
                }
            }
            unreachable!()
        };
        assert_eq!(mirror_action(GameKind::Jetan, disp(1, 1)), Some(9 * 48 + disp(-1, 1)));
        assert_eq!(mirror_action(GameKind::Jetan, 4800 + 12), Some(4800 + 17));
        // Martian Chess b1 -> c2 becomes c1 -> b2.
        assert_eq!(mirror_action(GameKind::MartianChess, 32 + 6), Some(2 * 32 + 5));
    }
}
