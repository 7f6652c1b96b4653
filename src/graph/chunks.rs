//! Arrays larger than one buffer binding: a value split along axis 0 into consecutive chunks,
//! each its own buffer within the binding limit. Element-wise work runs chunk by chunk; the FFT
//! along axis 0 crosses chunks (`fft::ChunkedFft`). One chunk is an ordinary array.

use std::ops::Range;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};
use rayon::prelude::*;

use super::{Buf, Download, Recording, Results};
use crate::error::{Error, Result};
use crate::gpu::{Dtype, GpuArray};

/// The rows of each chunk when `rows` rows are split into chunks of at most `per_chunk` rows:
/// equal chunks, the last one shorter where `per_chunk` does not divide `rows`.
pub fn row_ranges(rows: usize, per_chunk: usize) -> Vec<Range<usize>> {
    let per_chunk = per_chunk.max(1);
    (0..rows.div_ceil(per_chunk)).map(|c| c * per_chunk..((c + 1) * per_chunk).min(rows)).collect()
}

/// A value of shape `dims` held as consecutive chunks along axis 0.
#[derive(Clone, Debug)]
pub struct Chunked {
    pub parts: Vec<Buf>,
    pub dims: Vec<usize>,
}

impl Chunked {
    /// One chunk: the whole array.
    pub fn whole(rec: &Recording, b: Buf) -> Chunked {
        Chunked { parts: vec![b], dims: rec.dims(b).to_vec() }
    }

    /// The element type of the chunks.
    pub fn dtype(&self, rec: &Recording) -> Dtype {
        rec.dtype(self.parts[0])
    }

    /// The caller's device arrays, in order along axis 0.
    pub fn inputs(rec: &mut Recording, arrays: &[GpuArray]) -> Result<Chunked> {
        let parts: Vec<Buf> = arrays.iter().map(|a| rec.input(a)).collect();
        Chunked::from_parts(rec, parts)
    }

    /// Chunks that agree on every axis but the first.
    pub fn from_parts(rec: &Recording, parts: Vec<Buf>) -> Result<Chunked> {
        let first = rec.dims(*parts.first().ok_or_else(|| Error::Invalid("no chunks".into()))?).to_vec();
        let mut dims = first.clone();
        dims[0] = 0;
        for &p in &parts {
            let d = rec.dims(p);
            if d[1..] != first[1..] || rec.dtype(p) != rec.dtype(parts[0]) {
                return Err(Error::Shape(format!("chunks of shapes {first:?} and {d:?} do not stack along axis 0")));
            }
            dims[0] += d[0];
        }
        Ok(Chunked { parts, dims })
    }

    /// `x` uploaded in chunks of the given rows.
    pub fn upload_f32(rec: &mut Recording, x: &ArrayViewD<f32>, rows: &[Range<usize>]) -> Result<Chunked> {
        let parts = rows.iter().map(|r| rec.upload_f32(&x.slice_axis(Axis(0), r.clone().into()))).collect::<Result<Vec<_>>>()?;
        Chunked::from_parts(rec, parts)
    }

    /// Temporaries of `dims`, chunked as `rows`.
    pub fn temp(rec: &mut Recording, dims: &[usize], rows: &[Range<usize>], dtype: Dtype) -> Result<Chunked> {
        let parts = rows
            .iter()
            .map(|r| {
                let mut d = dims.to_vec();
                d[0] = r.len();
                rec.temp(&d, dtype)
            })
            .collect::<Result<Vec<_>>>()?;
        Chunked::from_parts(rec, parts)
    }

    pub fn len(&self) -> usize {
        self.parts.len()
    }
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The rows of each chunk along axis 0.
    pub fn rows(&self, rec: &Recording) -> Vec<Range<usize>> {
        let mut start = 0;
        self.parts
            .iter()
            .map(|&p| {
                let r = start..start + rec.dims(p)[0];
                start = r.end;
                r
            })
            .collect()
    }

    /// `f` applied to each chunk; the results are the chunks of a new value.
    pub fn map(&self, rec: &mut Recording, mut f: impl FnMut(&mut Recording, Buf) -> Result<Buf>) -> Result<Chunked> {
        let parts = self.parts.iter().map(|&p| f(rec, p)).collect::<Result<Vec<_>>>()?;
        Chunked::from_parts(rec, parts)
    }

    /// `f` applied to matching chunks of `self` and `other` (chunked alike).
    pub fn zip(&self, rec: &mut Recording, other: &Chunked, mut f: impl FnMut(&mut Recording, Buf, Buf) -> Result<Buf>) -> Result<Chunked> {
        self.expect_chunked_like(rec, other)?;
        let parts = self.parts.iter().zip(&other.parts).map(|(&a, &b)| f(rec, a, b)).collect::<Result<Vec<_>>>()?;
        Chunked::from_parts(rec, parts)
    }

    /// `f` run on matching chunks of `self` and `other`, for work that writes in place.
    pub fn each_pair(&self, rec: &mut Recording, other: &Chunked, mut f: impl FnMut(&mut Recording, Buf, Buf) -> Result<()>) -> Result<()> {
        self.expect_chunked_like(rec, other)?;
        self.parts.iter().zip(&other.parts).try_for_each(|(&a, &b)| f(rec, a, b))
    }

    /// The same chunk boundaries along axis 0.
    pub fn expect_chunked_like(&self, rec: &Recording, other: &Chunked) -> Result<()> {
        if self.rows(rec) != other.rows(rec) {
            return Err(Error::Shape(format!(
                "chunked arrays of shapes {:?} and {:?} split differently along axis 0 ({:?} vs {:?})",
                self.dims,
                other.dims,
                self.rows(rec),
                other.rows(rec)
            )));
        }
        Ok(())
    }

    /// Marks every chunk to be copied back.
    pub fn download(&self, rec: &mut Recording) -> ChunkedDownload {
        ChunkedDownload(self.parts.iter().map(|&p| rec.download(p)).collect())
    }
}

/// The downloads of a chunked value, joined along axis 0 on the host.
#[derive(Clone, Debug)]
pub struct ChunkedDownload(pub Vec<Download>);

impl ChunkedDownload {
    pub fn into_f32(self, results: &mut Results) -> Result<ArrayD<f32>> {
        let parts = self.0.iter().map(|&d| results.take_f32(d)).collect::<Result<Vec<_>>>()?;
        join(parts)
    }
}

/// The parts stacked along axis 0, copied by all cores.
fn join(mut parts: Vec<ArrayD<f32>>) -> Result<ArrayD<f32>> {
    if parts.len() == 1 {
        return Ok(parts.pop().unwrap());
    }
    let mut dims = parts[0].shape().to_vec();
    dims[0] = parts.iter().map(|p| p.shape()[0]).sum();
    if parts.iter().any(|p| p.shape()[1..] != dims[1..] || !p.is_standard_layout()) {
        return Err(Error::Shape(format!("chunks of shapes {:?} do not stack", parts.iter().map(|p| p.shape().to_vec()).collect::<Vec<_>>())));
    }
    let mut out = vec![0f32; dims.iter().product()];
    let mut rest: &mut [f32] = &mut out;
    let mut pieces = Vec::new();
    for p in &parts {
        let (dst, tail) = rest.split_at_mut(p.len());
        pieces.push((dst, p.as_slice().expect("standard layout")));
        rest = tail;
    }
    pieces.into_par_iter().for_each(|(d, s)| d.par_chunks_mut(1 << 22).zip(s.par_chunks(1 << 22)).for_each(|(d, s)| d.copy_from_slice(s)));
    Ok(ArrayD::from_shape_vec(IxDyn(&dims), out).expect("sizes checked"))
}
