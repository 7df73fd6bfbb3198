//! A deterministic record of what the rules do on seeded random games, one
//! line per position: the position string, its Zobrist hash, the legal moves
//! with their policy indices, the outcome, a checksum of the input planes and
//! perft to depth 2. The test suite computes it natively
//! (`web-fingerprint`) and in WebAssembly under Node (`fingerprint` of the
//! wasm module) and requires the two to be identical (`web/test/rules.mjs`).

use std::fmt::Write;

use martian_rules::{mix64, perft, GameKind, GameState, Move};

use crate::with_web_game;

/// The record of `positions` positions of seeded random games of `game`
/// (a game the page plays, [`crate::games::web_games`]; default rules), restarting from the initial
/// position when a game ends.
///
/// # Errors
/// An unknown game name.
pub fn fingerprint(game: &str, seed: u64, positions: usize) -> Result<String, String> {
    let unknown = || Err(format!("unknown game {game:?}"));
    match game.parse::<GameKind>() {
        Ok(kind) => with_web_game!(kind, G => Ok(record::<G>(seed, positions)), _ => unknown()),
        Err(_) => unknown(),
    }
}

/// FNV-1a over the bit patterns of `xs`.
fn checksum(xs: &[f32]) -> u64 {
    xs.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, x| (h ^ u64::from(x.to_bits())).wrapping_mul(0x0000_0100_0000_01b3))
}

fn record<G: GameState>(seed: u64, positions: usize) -> String {
    let rules = G::Rules::default();
    let Ok(start) = G::new_game(&rules) else { return "default rules do not start a game".into() };
    let mut g = start.clone();
    let mut moves: Vec<Move> = Vec::with_capacity(G::MAX_MOVES);
    let mut planes = vec![0f32; G::INPUT_SHAPE.iter().product()];
    let mut out = String::new();
    let mut x = seed;
    for i in 0..positions {
        g.legal_moves(&mut moves);
        g.encode(&mut planes);
        let reloaded = G::from_position(&g.to_position(), &rules).map(|s| s.to_position() == g.to_position());
        let _ = write!(
            out,
            "{i} {} | {:016x} | {:?} | {:016x} | {} | roundtrip {:?} |",
            g.to_position(),
            g.hash(),
            g.outcome(),
            checksum(&planes),
            perft(&g, 2),
            reloaded.map_err(|e| e.to_string()),
        );
        for &m in &moves {
            let _ = write!(out, " {}:{}", g.move_to_string(m), g.action_index(m));
        }
        out.push('\n');
        if moves.is_empty() {
            g = start.clone();
            continue;
        }
        x = mix64(x.wrapping_add(i as u64));
        g.play_unchecked(moves[(x % moves.len() as u64) as usize]);
    }
    out
}
