//! `cargo bench` runs the suite of `lucent bench` (src/bin/lucent/bench): the release binary with
//! the `bench` subcommand. Arguments after `--` go to it, e.g.
//! `cargo bench --bench suite -- --filter fft --max-mib 64` (see `lucent bench --help`).

use std::process::{exit, Command};

fn main() {
    // Cargo passes `--bench` to every bench target; `lucent bench` does not take it.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let status = Command::new(env!("CARGO_BIN_EXE_lucent"))
        .arg("bench")
        .args(&args)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", env!("CARGO_BIN_EXE_lucent")));
    exit(status.code().unwrap_or(1));
}
