//! Host arrays placed into device arrays held in chunks along axis 0 ([`Chunked`]): each chunk
//! uploads only the rows it holds and pads them on the device, so no padded copy of a large
//! array is ever made on the host.

use std::ops::Range;

use ndarray::{ArrayViewD, Axis};

use super::{pad, Boundary};
use crate::error::Result;
use crate::gpu::Real;
use crate::graph::{Buf, Chunked, Recording};
use crate::kernels::fill;

/// Where rows `a..e` of a padded array come from along axis 0 when the data's `n` rows sit at
/// `offset..offset + n`: the data's rows `src` and how many rows of the chunk come before and
/// after them. With `clamp`, rows outside the data repeat its nearest row (one row is read at
/// least); without, they are zeros (`None` when the chunk holds none of the data).
pub fn rows_from(a: usize, e: usize, offset: usize, n: usize, clamp: bool) -> Option<(Range<usize>, usize, usize)> {
    let (lo, hi) = (a as isize - offset as isize, e as isize - offset as isize);
    let (n, rows) = (n as isize, (e - a) as isize);
    let (src, before, after) = if hi <= 0 {
        (0..1, rows - 1, 0)
    } else if lo >= n {
        (n - 1..n, 0, rows - 1)
    } else {
        (lo.max(0)..hi.min(n), (-lo).max(0), (hi - n).max(0))
    };
    let inside = hi > 0 && lo < n;
    (inside || clamp).then_some((src.start as usize..src.end as usize, before as usize, after as usize))
}

/// Chunk `r` (rows along axis 0) of `x` placed at `offset` in a zero array of shape `dims`:
/// the rows it holds uploaded once and padded on the device.
pub fn place_rows<T: Real>(rec: &mut Recording, x: &ArrayViewD<T>, dims: &[usize], offset: &[usize], r: &Range<usize>) -> Result<Buf> {
    place_rows_with(rec, x.shape(), T::DTYPE, dims, offset, r, |rec, src| rec.upload_once_real(&x.slice_axis(Axis(0), src.into())))
}

/// [`place_rows`] of an array of shape `x_dims` and type `dtype` whose rows `rows` records (an
/// upload from the host, or a crop of an array already on the device).
pub fn place_rows_with(
    rec: &mut Recording,
    x_dims: &[usize],
    dtype: crate::gpu::Dtype,
    dims: &[usize],
    offset: &[usize],
    r: &Range<usize>,
    rows: impl FnOnce(&mut Recording, Range<usize>) -> Result<Buf>,
) -> Result<Buf> {
    let Some((src, before, after)) = rows_from(r.start, r.end, offset[0], x_dims[0], false) else {
        let mut d = dims.to_vec();
        d[0] = r.len();
        let t = rec.temp(&d, dtype)?;
        fill::record(rec, t, 0.0);
        return Ok(t);
    };
    let rows = rows(rec, src)?;
    let pads: Vec<(usize, usize)> = (0..dims.len()).map(|d| if d == 0 { (before, after) } else { (offset[d], dims[d] - x_dims[d] - offset[d]) }).collect();
    if pads.iter().all(|&p| p == (0, 0)) {
        return Ok(rows);
    }
    pad(rec, rows, &pads, Boundary::Constant(0.0))
}

/// `x` placed at `offset` in a zero array of shape `dims`, in chunks of the rows `rows`.
pub fn place<T: Real>(rec: &mut Recording, x: &ArrayViewD<T>, dims: &[usize], offset: &[usize], rows: &[Range<usize>]) -> Result<Chunked> {
    let parts = rows.iter().map(|r| place_rows(rec, x, dims, offset, r)).collect::<Result<Vec<_>>>()?;
    Chunked::from_parts(rec, parts)
}

/// The window `start .. start + size` (every axis) of a chunked array, as the chunks that hold
/// its rows (chunks outside it are left out).
pub fn crop(rec: &mut Recording, x: &Chunked, start: &[usize], size: &[usize]) -> Result<Chunked> {
    let mut parts = Vec::new();
    for (&p, r) in x.parts.iter().zip(x.rows(rec)) {
        let (lo, hi) = (r.start.max(start[0]), r.end.min(start[0] + size[0]));
        if lo >= hi {
            continue;
        }
        let (mut s, mut n) = (start.to_vec(), size.to_vec());
        (s[0], n[0]) = (lo - r.start, hi - lo);
        parts.push(if s.iter().all(|&v| v == 0) && n == rec.dims(p) { p } else { super::crop(rec, p, &s, &n)? });
    }
    Chunked::from_parts(rec, parts)
}
