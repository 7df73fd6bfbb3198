//! Zobrist keys for the repetition key of spec §8.3: placement, side to move and
//! both Escape rights (the countdown is not part of it). Fixed keys from a
//! splitmix64 generator evaluated at compile time.

const fn splitmix64(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

const N_PIECE_KEYS: usize = 2 * 8 * 100;

const fn gen_keys() -> [u64; N_PIECE_KEYS + 3] {
    let mut keys = [0u64; N_PIECE_KEYS + 3];
    let mut state = 0x4A45_5441_4E5A_4F42u64; // "JETANZOB"
    let mut i = 0;
    while i < keys.len() {
        let (s, k) = splitmix64(state);
        state = s;
        keys[i] = k;
        i += 1;
    }
    keys
}

static KEYS: [u64; N_PIECE_KEYS + 3] = gen_keys();

/// Key of `piece` (0..8) of `side` (0..2) on `sq` (0..100).
#[inline]
pub fn piece_key(side: usize, piece: usize, sq: usize) -> u64 {
    KEYS[(side * 8 + piece) * 100 + sq]
}

/// Key XORed in when Orange (North) is to move.
#[inline]
pub fn side_key() -> u64 {
    KEYS[N_PIECE_KEYS]
}

/// Key XORed in while `side` (0..2) holds its Escape right.
#[inline]
pub fn escape_key(side: usize) -> u64 {
    KEYS[N_PIECE_KEYS + 1 + side]
}
