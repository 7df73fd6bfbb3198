//! The generation prefix of a run's file names: every per-generation file
//! of a run directory starts with `genNNNN` (checkpoints
//! `models/gen0003.safetensors`, gate records `eval/gen0003.json`, shards
//! `shards/gen0003-w1-000002.npz`, game records, spools, partial
//! checkpoints). The one place that writes and reads it.

/// `gen` and the generation number `g`, zero-padded to four digits (more
/// digits from generation 10,000 on): `gen0003`.
pub fn generation_prefix(g: u32) -> String {
    format!("gen{g:04}")
}

/// Splits a file name that starts with a generation prefix
/// ([`generation_prefix`]) into the generation and the rest of the name:
/// `gen0003-w1-000002.npz` -> `(3, "-w1-000002.npz")`.
///
/// `None` for a name that does not start with `gen` and at least four
/// digits, or whose number does not fit a `u32`.
pub fn parse_generation_prefix(name: &str) -> Option<(u32, &str)> {
    let rest = name.strip_prefix("gen")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits < 4 {
        return None;
    }
    Some((rest[..digits].parse().ok()?, &rest[digits..]))
}

/// The first generation prefix anywhere in `text` (e.g. in a player name
/// `mcts:model=runs/generations/gen0003.safetensors,visits=32`): its byte
/// offset, the generation and the number of digits.
pub fn find_generation(text: &str) -> Option<(usize, u32, usize)> {
    text.match_indices("gen").find_map(|(i, _)| {
        let (g, rest) = parse_generation_prefix(&text[i..])?;
        Some((i, g, text.len() - i - 3 - rest.len()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_names_read_back() {
        for g in [0, 3, 9999, 10_000, u32::MAX] {
            let name = format!("{}-w1-000002.npz", generation_prefix(g));
            assert_eq!(parse_generation_prefix(&name), Some((g, "-w1-000002.npz")), "{name}");
        }
        assert_eq!(generation_prefix(3), "gen0003");
        assert_eq!(parse_generation_prefix("gen0003.json"), Some((3, ".json")));
        assert_eq!(parse_generation_prefix("gen0003"), Some((3, "")));
    }

    #[test]
    fn other_names_are_not_generations() {
        for name in ["gen3.json", "gen.json", "generation.json", "xgen0003.json", "gen4294967296.json", "GEN0003"] {
            assert_eq!(parse_generation_prefix(name), None, "{name}");
        }
    }

    #[test]
    fn a_generation_inside_a_player_name() {
        let name = "mcts:model=runs/generations/gen0012.safetensors,visits=32";
        let (i, g, digits) = find_generation(name).expect("gen0012");
        assert_eq!((g, digits), (12, 4));
        assert_eq!(&name[i..i + 3 + digits], "gen0012");
        assert_eq!(find_generation("alphabeta:depth=1"), None);
    }
}
