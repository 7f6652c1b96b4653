//! How a geometry splits into P parts along axis 0, and which P to try.
//!
//! # Memory
//! A part holds on the device only its own slab (no halo): the image's part (min(M, image rows)
//! × the image's other axes, complex), the kernel's part, both zero-padded to M × the padded other
//! axes and transformed (complex), their product and its inverse, and the output window of the
//! part (M × the output's other axes, complex). The executor reuses buffers once they are dead;
//! [`super::SplitReport::peak_bytes`] is the measured peak (`Compiled::peak_bytes`), about 3-4 ×
//! 8 · M · Π(other padded axes) bytes. P is the smallest 7-smooth count whose part fits every
//! buffer limit and the memory budget per part ([`super::SplitOptions`]); a GPU holds `in_flight`
//! parts at once. The host holds the input, the output and, in flight, about two parts per worker
//! ([`SplitPlan::host_bytes`], checked against the host budget before a run allocates).

use crate::error::{Error, Result};
use crate::fft::plan::smooth_at_least;
use crate::ops::convolve::Geometry;

/// The split of one geometry into P parts along axis 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitPlan {
    pub geometry: Geometry,
    /// P.
    pub parts: usize,
    /// N = P · M.
    pub len: usize,
    /// M, a fast FFT length.
    pub part_len: usize,
    /// [M, padded other axes].
    pub part_dims: Vec<usize>,
}

impl SplitPlan {
    /// P parts of `g` (1 ≤ P ≤ the circular length axis 0 needs).
    pub fn new(g: &Geometry, parts: usize) -> Result<SplitPlan> {
        let need = needed_len0(g);
        if parts == 0 || parts > need {
            return Err(Error::Invalid(format!("a split along axis 0 (length {need}) takes 1 to {need} parts, not {parts}")));
        }
        let part_len = smooth_at_least(need.div_ceil(parts));
        let mut part_dims = g.padded.clone();
        part_dims[0] = part_len;
        Ok(SplitPlan { geometry: g.clone(), parts, len: parts * part_len, part_len, part_dims })
    }

    /// The parts computed: 0..=P/2.
    pub fn computed_parts(&self) -> std::ops::RangeInclusive<usize> {
        0..=self.parts / 2
    }

    /// How many times part p counts in the sum: once for the self-mirrored parts 0 and P/2,
    /// twice for the others (their mirror P - p is not computed).
    pub fn weight(&self, p: usize) -> f64 {
        if p == 0 || 2 * p == self.parts {
            1.0
        } else {
            2.0
        }
    }

    /// Bytes of one complex array of the part's transform shape.
    pub fn part_bytes(&self) -> u64 {
        self.part_dims.iter().map(|&d| d as u64).product::<u64>() * 8
    }

    /// Shape of x's part before padding: min(M, rows) rows and x's other axes.
    pub fn slab_dims(&self, x: &[usize]) -> Vec<usize> {
        let mut d = x.to_vec();
        d[0] = d[0].min(self.part_len);
        d
    }

    /// Host bytes a run of this plan allocates at its peak with `workers` parts in flight
    /// (besides the input, which the caller holds), `None` when the count overflows: the f32
    /// output; the folded image and kernel parts (complex), a group of workers + 1 being folded
    /// while each worker still holds one to upload; 2 · workers finished parts (complex, the
    /// output's other axes) queued or being added in; the fold's twiddle tables of a group.
    pub fn host_bytes(&self, workers: usize) -> Option<u64> {
        let g = &self.geometry;
        let elems = |d: &[usize]| d.iter().try_fold(1u64, |n, &v| n.checked_mul(v as u64));
        let w = workers as u64;
        let folded = elems(&self.slab_dims(&g.image))?.checked_add(elems(&self.slab_dims(&g.kernel))?)?.checked_mul(8)?;
        let finished = elems(&self.out_part_dims())?.checked_mul(8)?;
        let twiddles = (g.image[0] as u64).checked_add(g.kernel[0] as u64)?.checked_add(g.out[0] as u64)?.checked_mul(8)?;
        elems(&g.out)?
            .checked_mul(4)?
            .checked_add(folded.checked_mul(w.checked_mul(2)?.checked_add(1)?)?)?
            .checked_add(finished.checked_mul(w.checked_mul(2)?)?)?
            .checked_add(twiddles.checked_mul(w.checked_add(1)?)?)
    }

    /// Fails unless [`SplitPlan::host_bytes`] fits the host budget (`LUCENT_HOST_BUDGET_BYTES`).
    pub fn check_host(&self, workers: usize) -> Result<()> {
        let g = &self.geometry;
        crate::host::check_host_bytes(
            &format!("the split convolution of {:?} with {:?} ({} parts of {:?}, {workers} in flight)", g.image, g.kernel, self.parts, self.part_dims),
            self.host_bytes(workers),
        )
    }

    /// Shape of a part's output: M rows and the output's other axes.
    pub fn out_part_dims(&self) -> Vec<usize> {
        let mut d = self.geometry.out.clone();
        d[0] = self.part_len;
        d
    }
}

/// The most parts `g` splits into: one row of axis 0 each.
#[cfg(test)]
pub fn max_parts(g: &Geometry) -> usize {
    needed_len0(g)
}

/// The circular length axis 0 needs so that no wrap-around reaches the output window (what
/// [`Geometry::new`] rounds up to a fast length).
pub(super) fn needed_len0(g: &Geometry) -> usize {
    let (n, m, start, out) = (g.image[0], g.kernel[0], g.start[0], g.out[0]);
    let full = n + m - 1;
    (start + out).max(full - start).max(n).max(m)
}

/// The plans to try, fewest parts first: `forced` alone, or 1 (the whole array) and then the
/// 7-smooth counts, skipping those whose part is no shorter than the previous one's (more parts
/// of the same length only cost more).
pub(super) fn candidates(g: &Geometry, forced: Option<usize>) -> Result<Vec<SplitPlan>> {
    let counts: Vec<usize> = match forced {
        Some(p) => vec![p],
        None => (1..=needed_len0(g)).filter(|&p| smooth_at_least(p) == p).collect(),
    };
    let mut plans: Vec<SplitPlan> = Vec::new();
    for parts in counts {
        let plan = SplitPlan::new(g, parts)?;
        if parts > 1 && plans.last().is_some_and(|last| last.part_len == plan.part_len) {
            continue;
        }
        plans.push(plan);
    }
    Ok(plans)
}
