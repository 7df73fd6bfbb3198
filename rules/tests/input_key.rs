//! `GameState::input_key` covers every input of `encode`: over seeded random
//! games of both games, rich in repeated positions (moves played back and
//! forth) and transpositions, two states with equal keys always have
//! identical input planes. The same data shows that the Zobrist hash alone
//! does not have that property (repetition count, ply and quiet counters).

use std::collections::HashMap;

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::{GameState, Move};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Counts from [`check`].
#[derive(Debug, Default)]
struct Counts {
    /// States visited.
    states: usize,
    /// States whose key an earlier state had (all with equal planes).
    key_matches: usize,
    /// Of those, states whose position occurred before in their game.
    repeated_matches: usize,
    /// States whose Zobrist hash an earlier state had but whose planes differ.
    hash_only_matches: usize,
}

fn planes<G: GameState>(s: &G) -> Vec<u32> {
    let [c, h, w] = G::INPUT_SHAPE;
    let mut out = vec![0.0f32; c * h * w];
    s.encode(&mut out);
    out.iter().map(|x| x.to_bits()).collect()
}

/// Plays `games` random games from each of `starts`; with probability 1/2 the
/// mover plays its previous move backwards when that is legal, so positions
/// repeat often. Checks every state against all earlier states with its key.
fn check<G: GameState>(starts: &[G], games: usize, seed: u64, repeated: impl Fn(&G) -> bool) -> Counts {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut by_key: HashMap<u64, G> = HashMap::new();
    let mut by_hash: HashMap<u64, G> = HashMap::new();
    let mut counts = Counts::default();
    let mut moves = Vec::with_capacity(G::MAX_MOVES);
    for start in starts {
        for _ in 0..games {
            let mut s = start.clone();
            let mut played: Vec<Move> = Vec::new();
            loop {
                counts.states += 1;
                let key = s.input_key();
                assert_eq!(key, s.clone().input_key(), "the key is a function of the state");
                if let Some(prev) = by_key.get(&key) {
                    assert_eq!(
                        planes(prev),
                        planes(&s),
                        "equal input keys, different planes:\n{:?}\n{:?}",
                        prev.to_position(),
                        s.to_position()
                    );
                    counts.key_matches += 1;
                    counts.repeated_matches += usize::from(repeated(&s));
                } else {
                    by_key.insert(key, s.clone());
                }
                match by_hash.get(&s.hash()) {
                    Some(prev) => counts.hash_only_matches += usize::from(planes(prev) != planes(&s)),
                    None => {
                        by_hash.insert(s.hash(), s.clone());
                    }
                }
                s.legal_moves(&mut moves);
                if moves.is_empty() {
                    break;
                }
                let back = played.len().checked_sub(2).map(|i| Move::new(played[i].to, played[i].from));
                let mv = match back {
                    Some(b) if moves.contains(&b) && rng.gen_bool(0.5) => b,
                    // Mostly one of the first few moves, so that games share lines
                    // and meet the same positions at the same and at other plies.
                    _ if rng.gen_bool(0.8) => moves[rng.gen_range(0..moves.len().min(3))],
                    _ => moves[rng.gen_range(0..moves.len())],
                };
                s.play_unchecked(mv);
                played.push(mv);
            }
        }
    }
    counts
}

#[test]
fn jetan_equal_input_keys_have_equal_planes() {
    let rules = JetanRules { max_plies: 120, ..JetanRules::default() };
    let starts = [
        Jetan::new_game(&rules).unwrap(),
        // Few pieces: the small-material countdown (planes 18-19) runs.
        Jetan::from_position("c9/10/10/4w5/10/10/10/3W6/10/C4P3p o OB - 0 0", &rules).unwrap(),
        // No Escape rights, many plies already played; then the same position
        // with another quiet-ply count (plane 20 only differs).
        Jetan::from_position("WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw b - - 30 40", &rules)
            .unwrap(),
        Jetan::from_position("WLDFPCFDLW/TNNNNNNNNT/10/10/10/10/10/10/tnnnnnnnnt/wldfcpfdlw b - - 5 40", &rules)
            .unwrap(),
    ];
    let c = check(&starts, 40, 1, |s: &Jetan| s.repetitions() > 0);
    assert!(c.states > 3000, "{c:?}");
    assert!(c.key_matches > 100 && c.repeated_matches > 0, "{c:?}");
    assert!(c.hash_only_matches > 100, "the hash alone would mix up different planes: {c:?}");
}

#[test]
fn martian_equal_input_keys_have_equal_planes() {
    let rules = MartianRules { max_plies: 150, ..MartianRules::default() };
    let starts = [
        MartianChess::new_game(&rules).unwrap(),
        MartianChess::from_position("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 0", &rules).unwrap(),
        // The same position with other quiet (plane 7) and ply (plane 8) counters.
        MartianChess::from_position("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 3 0", &rules).unwrap(),
        MartianChess::from_position("3Q/2D1/4/1P2/Q3/4/4/4 S 5 6 - - 0 4", &rules).unwrap(),
    ];
    // A Martian Chess position repeats when the placement, scores, ban and clock do.
    let c = check(&starts, 150, 2, |_| false);
    assert!(c.states > 3000, "{c:?}");
    assert!(c.key_matches > 100, "{c:?}");
    assert!(c.hash_only_matches > 100, "the hash alone would mix up different planes: {c:?}");
}
