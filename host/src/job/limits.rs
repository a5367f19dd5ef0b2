//! The largest sizes a job may have.

/// The largest population: individual indices and Philox subsequences are 32-bit, and
/// the thesis's largest case is 65 535.
pub const MAX_POP: u32 = 1 << 24;

/// The largest dimension gpude accepts (the GPU's per-individual indices are 32-bit).
pub const MAX_DIM: u32 = 1 << 20;
