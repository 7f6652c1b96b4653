//! Work on arrays that stay on the device between calls (an app's pipeline, Python's
//! `lucent.Array`): the inputs checked for NaN and infinities on the device, as the host paths
//! check theirs before uploading, the results left on the device.

use crate::error::{Error, Result};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::{Buf, Recording};
use crate::kernels::count_nonfinite;

/// Runs `op` on `inputs` (each with the name an error gives it) in one recording and returns its
/// results as device arrays. An input holding NaN or an infinity is an error, as on the host
/// (tested in the same submission; the results are then dropped).
pub fn run(gpu: &Gpu, inputs: &[(&GpuArray, &str)], op: impl FnOnce(&mut Recording, &[Buf]) -> Result<Vec<Buf>>) -> Result<Vec<GpuArray>> {
    let mut rec = Recording::new(gpu);
    let bufs: Vec<Buf> = inputs.iter().map(|(a, _)| rec.input(a)).collect();
    let flags = bufs.iter().map(|&b| count_nonfinite::record(&mut rec, b).map(|f| rec.download(f))).collect::<Result<Vec<_>>>()?;
    let outs = op(&mut rec, &bufs)?;
    let outs: Vec<_> = outs.into_iter().map(|b| rec.output(b)).collect();
    let results = rec.run()?;
    for (f, (_, name)) in flags.into_iter().zip(inputs) {
        if results.u32(f)?.iter().any(|&v| v != 0) {
            return Err(Error::NonFinite(format!("{name} holds NaN or an infinity")));
        }
    }
    Ok(outs.into_iter().map(|o| results.array(o)).collect())
}

/// [`run`] of one input and one result.
pub fn apply(gpu: &Gpu, x: &GpuArray, name: &str, op: impl FnOnce(&mut Recording, Buf) -> Result<Buf>) -> Result<GpuArray> {
    let mut out = run(gpu, &[(x, name)], |rec, b| Ok(vec![op(rec, b[0])?]))?;
    Ok(out.remove(0))
}

/// Whether `x` holds NaN or an infinity (one small download).
pub fn has_nonfinite(gpu: &Gpu, x: &GpuArray) -> Result<bool> {
    let mut rec = Recording::new(gpu);
    let b = rec.input(x);
    let f = count_nonfinite::record(&mut rec, b)?;
    let d = rec.download(f);
    Ok(rec.run()?.u32(d)?.iter().any(|&v| v != 0))
}
