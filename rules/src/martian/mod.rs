//! Martian Chess (to be written).
