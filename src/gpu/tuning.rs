//! Overrides of the FFT planner's measured defaults, as plain data carried by a `Gpu` (in its
//! options), so that a plan depends on the GPU it is made for, not on the process environment.
//! None everywhere (`Default`) is the planner's own choice (the constants in src/fft/plan.rs).

/// FFT tuning overrides, for A/B measurements and tests. Each takes the values its `LUCENT_FFT_*`
/// variable allows ([`Tuning::from_env`] refuses others; values set in code are not checked).
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tuning {
    /// Elements a thread holds per stage: 8 or 16. `LUCENT_FFT_REGISTERS`.
    pub registers: Option<usize>,
    /// Threads per workgroup that short lines are batched up to: 32-1024, powers of two.
    /// `LUCENT_FFT_THREADS`.
    pub threads: Option<usize>,
    /// Adjacent columns a strided pass reads: 1-32, powers of two. `LUCENT_FFT_COLUMNS`.
    pub columns: Option<usize>,
    /// Lines a single strided pass must hold, else the four-step scheme: 1-16, powers of two.
    /// `LUCENT_FFT_STRIDED_BATCH`.
    pub strided_batch: Option<usize>,
    /// Most line groups a workgroup loops over: 1-16, powers of two. `LUCENT_FFT_LOOP`.
    pub loops: Option<usize>,
    /// Workgroup threads from which passes loop: 1, or 32-1024, powers of two.
    /// `LUCENT_FFT_LOOP_THREADS`.
    pub loop_threads: Option<usize>,
    /// Threads a looping pass dispatches at least, else it does not loop: 1, or 2^17-2^21.
    /// `LUCENT_FFT_MIN_THREADS`.
    pub min_threads: Option<usize>,
    /// Lines padded inside workgroup memory (one element in 16), forced on or off.
    /// `LUCENT_FFT_PAD=0|1`.
    pub pad: Option<bool>,
    /// Line strides chosen against bank conflicts (false: merely odd). `LUCENT_FFT_BANKS=0|1`.
    pub banks: Option<bool>,
    /// Split-exchange passes (false: off). `LUCENT_FFT_SPLIT=0|1`.
    pub split: Option<bool>,
}

impl Tuning {
    /// No overrides: `Tuning::default()`, usable in constants.
    pub const NONE: Tuning = Tuning {
        registers: None,
        threads: None,
        columns: None,
        strided_batch: None,
        loops: None,
        loop_threads: None,
        min_threads: None,
        pad: None,
        banks: None,
        split: None,
    };

    /// The overrides the `LUCENT_FFT_*` variables name (unset or empty: none); a value outside a
    /// variable's allowed set is an error that names them.
    pub fn from_env() -> Result<Tuning> {
        let knob = |name: &str, allowed: &[usize]| -> Result<Option<usize>> {
            match std::env::var(name).ok().filter(|v| !v.trim().is_empty()) {
                None => Ok(None),
                Some(v) => match v.trim().parse::<usize>() {
                    Ok(n) if allowed.contains(&n) => Ok(Some(n)),
                    _ => Err(Error::Invalid(format!("{name}={v}: expected one of {allowed:?}"))),
                },
            }
        };
        let flag = |name: &str| knob(name, &[0, 1]).map(|v| v.map(|v| v == 1));
        Ok(Tuning {
            registers: knob("LUCENT_FFT_REGISTERS", &[8, 16])?,
            threads: knob("LUCENT_FFT_THREADS", &[32, 64, 128, 256, 512, 1024])?,
            columns: knob("LUCENT_FFT_COLUMNS", &[1, 2, 4, 8, 16, 32])?,
            strided_batch: knob("LUCENT_FFT_STRIDED_BATCH", &[1, 2, 4, 8, 16])?,
            loops: knob("LUCENT_FFT_LOOP", &[1, 2, 4, 8, 16])?,
            loop_threads: knob("LUCENT_FFT_LOOP_THREADS", &[1, 32, 64, 128, 256, 512, 1024])?,
            min_threads: knob("LUCENT_FFT_MIN_THREADS", &[1, 1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21])?,
            pad: flag("LUCENT_FFT_PAD")?,
            banks: flag("LUCENT_FFT_BANKS")?,
            split: flag("LUCENT_FFT_SPLIT")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Tuning;

    #[test]
    fn none_is_the_default() {
        assert_eq!(Tuning::NONE, Tuning::default());
    }
}
