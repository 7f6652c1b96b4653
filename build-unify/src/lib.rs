//! No code: see Cargo.toml. The crate only turns features on.
