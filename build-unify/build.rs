//! Empty: it exists so that the build-dependencies (the proc-macros' syn features) take part.
fn main() {}
