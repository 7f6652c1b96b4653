//! `shaders/pointwise/count_nonfinite.wgsl`: whether an array on the device holds NaN or an
//! infinity (what the host paths check with `check::check_finite` before a call, for arrays
//! that never visit the host).

use bytemuck::{Pod, Zeroable};

use super::{fill, COUNT_NONFINITE};
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in count_nonfinite.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub count: u32,
    pub threads: u32,
}

/// The most workgroups a test dispatches (each thread then steps through the array).
const MAX_GROUPS: u64 = 2048;

/// Records the test of `x` (f32, f64, or complex of either): a one-element U32 array, 1 when
/// `x` holds a non-finite value, else 0.
pub fn record(rec: &mut Recording, x: Buf) -> Result<Buf> {
    let dtype = rec.dtype(x);
    let (count, high_words) = match dtype {
        Dtype::F32 | Dtype::C32 => (rec.shape(x).len() as u64 * dtype.words() as u64, 0.0),
        Dtype::F64 | Dtype::C64 => (rec.shape(x).len() as u64 * dtype.words() as u64 / 2, 1.0),
        Dtype::U32 => return Err(Error::Dtype("a finiteness test of integers".into())),
    };
    let count = u32::try_from(count).map_err(|_| Error::TooLarge { what: "a finiteness test".into(), bytes: count * 4, limit: u32::MAX as u64 })?;
    let flag = rec.temp(&[1], Dtype::U32)?;
    fill::record(rec, flag, 0.0);
    let groups = COUNT_NONFINITE.groups(count as u64).min(MAX_GROUPS);
    let p = Params { count, threads: (groups * 256) as u32 };
    rec.dispatch(&COUNT_NONFINITE, &[("HIGH_WORDS", high_words)], bytemuck::bytes_of(&p), &[x, flag], groups);
    Ok(flag)
}

pub fn cpu(x: &[f64]) -> bool {
    x.iter().any(|v| !v.is_finite())
}
