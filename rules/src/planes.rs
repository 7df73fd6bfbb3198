//! Packed network input: one `(mask, value)` pair per input plane.
//!
//! Every plane of the three games' inputs is a set of cells that share one
//! value (a piece type's squares with 1.0, a counter's whole plane with its
//! scaled value, a banned move's two squares), so a plane is fully described
//! by a bit mask of its cells and that value, as lc0's `InputPlane` (a 64-bit
//! mask and a float) describes a chess plane. A packed Jetan position is 24 x
//! 20 bytes instead of 24 x 100 floats (9,600 bytes): self-play hands the
//! packed form to the device, which expands it (`DeviceBatch`: less to copy), and
//! [`GameState::encode`](crate::GameState::encode) is the expansion on the CPU.

/// One input plane: the cells whose bit is set in `mask` (bit `k` = cell `k`
/// of the plane in row-major order, `k < rows x cols <= 128`) hold `value`,
/// every other cell holds 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PackedPlane {
    /// Bit `k` set: cell `k` (row-major) holds `value`.
    pub mask: u128,
    /// The value of the set cells.
    pub value: f32,
}

/// The most cells a packed plane holds (the bits of its mask).
pub const MAX_PLANE_CELLS: usize = 128;

/// The most planes of any game's input ([`GameState::INPUT_SHAPE`](crate::GameState::INPUT_SHAPE)`[0]`).
pub const MAX_INPUT_PLANES: usize = 32;

impl PackedPlane {
    /// A plane whose `cells` cells all hold `value` (0 cells set when `value`
    /// is 0, so that equal planes compare equal).
    ///
    /// # Panics
    /// If `cells > MAX_PLANE_CELLS` (a game constant, not user input).
    pub fn filled(cells: usize, value: f32) -> PackedPlane {
        assert!(cells <= MAX_PLANE_CELLS, "a packed plane holds at most 128 cells");
        if value == 0.0 {
            return PackedPlane::default();
        }
        let mask = if cells == MAX_PLANE_CELLS { u128::MAX } else { (1u128 << cells) - 1 };
        PackedPlane { mask, value }
    }

    /// Sets cell `k` (row-major) to 1.0; the plane's value becomes 1.0.
    pub fn set(&mut self, k: usize) {
        self.mask |= 1u128 << k;
        self.value = 1.0;
    }

    /// Packs a dense plane (`cells.len() <= 128` cells, row-major): `None`
    /// when its non-zero cells do not all hold one value (such a plane has
    /// no packed form) or it has too many cells.
    pub fn pack(cells: &[f32]) -> Option<PackedPlane> {
        if cells.len() > MAX_PLANE_CELLS {
            return None;
        }
        let mut p = PackedPlane::default();
        for (k, &x) in cells.iter().enumerate() {
            if x == 0.0 {
                continue;
            }
            if p.mask != 0 && x.to_bits() != p.value.to_bits() {
                return None;
            }
            p.mask |= 1u128 << k;
            p.value = x;
        }
        Some(p)
    }

    /// Writes the plane's `out.len()` cells (row-major): `value` where the
    /// mask has a bit, 0 elsewhere.
    pub fn unpack(&self, out: &mut [f32]) {
        if self.mask == 0 || self.value == 0.0 {
            out.fill(0.0);
            return;
        }
        for (k, x) in out.iter_mut().enumerate() {
            *x = if (self.mask >> k) & 1 == 1 { self.value } else { 0.0 };
        }
    }
}

/// Expands packed planes into dense floats: plane `p`'s `cells` cells go to
/// `out[p * cells..(p + 1) * cells]`.
///
/// # Panics
/// If `out.len() != planes.len() * cells` (a caller's buffer of the wrong size).
pub fn unpack_planes(planes: &[PackedPlane], cells: usize, out: &mut [f32]) {
    assert_eq!(out.len(), planes.len() * cells, "unpack_planes: wrong buffer length");
    for (p, dst) in planes.iter().zip(out.chunks_exact_mut(cells.max(1))) {
        p.unpack(dst);
    }
}

/// Packs dense planes (`planes.len() x cells` floats) into `out`
/// (`planes.len()` planes).
///
/// # Errors
/// The index of the first plane that has no packed form (non-zero cells of
/// different values), or a length mismatch described in words.
pub fn pack_planes(dense: &[f32], cells: usize, out: &mut [PackedPlane]) -> Result<(), String> {
    if cells == 0 || dense.len() != out.len() * cells {
        return Err(format!("{} floats are not {} planes of {cells} cells", dense.len(), out.len()));
    }
    for (k, (p, src)) in out.iter_mut().zip(dense.chunks_exact(cells)).enumerate() {
        *p = PackedPlane::pack(src).ok_or_else(|| format!("plane {k} holds different non-zero values"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filled_set_and_unpack_by_hand() {
        let mut out = [9.0f32; 6];
        PackedPlane::filled(6, 0.5).unpack(&mut out);
        assert_eq!(out, [0.5; 6]);
        assert_eq!(PackedPlane::filled(6, 0.0), PackedPlane::default());
        let mut p = PackedPlane::default();
        p.set(1);
        p.set(4);
        p.unpack(&mut out);
        assert_eq!(out, [0.0, 1.0, 0.0, 0.0, 1.0, 0.0]);
        let full = PackedPlane::filled(128, 2.0);
        assert_eq!(full.mask, u128::MAX);
        let mut wide = vec![0.0f32; 128];
        full.unpack(&mut wide);
        assert!(wide.iter().all(|&x| x == 2.0));
        let mut hi = PackedPlane::default();
        hi.set(127);
        hi.set(64);
        hi.set(63);
        hi.unpack(&mut wide);
        let set: Vec<usize> = (0..128).filter(|&k| wide[k] == 1.0).collect();
        assert_eq!(set, vec![63, 64, 127]);
        let mut two = [7.0f32; 8];
        unpack_planes(&[PackedPlane::filled(4, 3.0), p], 4, &mut two);
        assert_eq!(two, [3.0, 3.0, 3.0, 3.0, 0.0, 1.0, 0.0, 0.0]);
        let mut back = [PackedPlane::default(); 2];
        pack_planes(&two, 4, &mut back).unwrap();
        // Bit 4 of `p` lies beyond a 4-cell plane: it is not unpacked, so not packed back.
        assert_eq!(back, [PackedPlane::filled(4, 3.0), PackedPlane { mask: 0b10, value: 1.0 }]);
        assert_eq!(PackedPlane::pack(&[0.0, 0.5, 0.25]), None);
        assert!(pack_planes(&[0.5, 0.25, 0.0, 0.0], 2, &mut back).unwrap_err().contains("plane 0"));
        assert!(pack_planes(&[0.0; 3], 2, &mut back).is_err());
    }
}
