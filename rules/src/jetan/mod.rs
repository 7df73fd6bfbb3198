//! Jetan (to be written).
