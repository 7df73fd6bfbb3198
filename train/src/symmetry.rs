//! Left-right mirror augmentation.
//!
//! A game whose rules are symmetric under the reflection file -> (width - 1 -
//! file) says so through `martian_rules::GameState::mirror_action` (both
//! two-player games are: Jetan's pieces move alike to the west and the east,
//! Martian Chess's pieces move in symmetric line sets and its zones span full
//! ranks). A mirrored position is then a legal position with the same value
//! and the mirrored policy. The *setups* are not mirror-symmetric, so mirrored
//! samples lie off the distribution of real games: the option is off by
//! default, and a game without the symmetry refuses it
//! ([`crate::Trainer::new`]).
//!
//! Which action an action becomes, and that the planes are mirrored by
//! reversing every row, is the game's knowledge:
//! `martian_rules::GameState::mirror_action` (tested against the rules in
//! `rules/tests/mirror.rs`).

use martian_rules::GameKind;

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
            if let Some(m) = game.mirror_action(a) {
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
    fn mirroring_a_sample_twice_restores_it() {
        // The games with a left-right symmetry (Jetan and Martian Chess, not the four-player game).
        let symmetric: Vec<GameKind> = GameKind::ALL.into_iter().filter(|g| g.mirror_action(0).is_some()).collect();
        assert_eq!(symmetric, [GameKind::Jetan, GameKind::MartianChess]);
        for game in symmetric {
            let [c, h, w] = game.input_shape();
            let n = game.num_actions();
            let planes: Vec<f32> = (0..c * h * w).map(|i| i as f32).collect();
            let policy: Vec<f32> = (0..n).map(|i| (i % 7) as f32 / 7.0).collect();
            let legal: Vec<u8> = (0..n).map(|i| u8::from(i % 3 == 0)).collect();
            let (mut p, mut q, mut l) = (planes.clone(), policy.clone(), legal.clone());
            mirror_sample(game, &mut p, [c, h, w], &mut q, &mut l);
            assert_ne!(p, planes, "{game}: planes unchanged by the mirror");
            assert_eq!(p[w - 1], planes[0], "{game}: first row reversed");
            assert_eq!(q[game.mirror_action(1).unwrap()], policy[1], "{game}: policy moves with its action");
            mirror_sample(game, &mut p, [c, h, w], &mut q, &mut l);
            assert_eq!((p, q, l), (planes, policy, legal), "{game}");
        }
    }
}
