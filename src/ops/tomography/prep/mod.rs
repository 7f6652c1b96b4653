//! Tomography preprocessing: flat/dark normalisation, stripe and outlier removal, phase
//! retrieval and the rotation centre.

// The f64 references serve the tests until the GPU versions call them.
#[cfg_attr(not(test), allow(dead_code))]
pub mod cpu;
