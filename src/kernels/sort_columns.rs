//! `shaders/tomography/sort_columns.wgsl`: each column of (slices, rows, cols) sorted along its
//! rows in workgroup memory, with the flat index each input element's value went to.

use bytemuck::{Pod, Zeroable};

use super::SORT_COLUMNS;
use crate::error::{Error, Result};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in sort_columns.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub struct Params {
    pub slices: u32,
    pub rows: u32,
    pub cols: u32,
    pub unused: u32,
}

/// The longest column the kernel sorts (mirrors CAPACITY in sort_columns.wgsl).
pub const CAPACITY: usize = 4096;
/// Workgroup memory the kernel takes: a key and a row per element.
const WORKGROUP_BYTES: u32 = 8 * CAPACITY as u32;

/// `x` (slices, rows, cols), f32: (sorted, position), the columns sorted ascending (equal values
/// in row order) and, per input element, the flat index of its value in `sorted` (u32).
pub fn record(rec: &mut Recording, x: Buf) -> Result<(Buf, Buf)> {
    rec.expect_dtype(x, Dtype::F32, "columns to sort")?;
    let &[slices, rows, cols] = rec.dims(x) else {
        return Err(Error::Shape(format!("columns to sort in {:?}: (slices, rows, cols) expected", rec.dims(x))));
    };
    if rows > CAPACITY {
        return Err(Error::Invalid(format!("columns of {rows} values to sort on the device (at most {CAPACITY})")));
    }
    let memory = rec.gpu().workgroup_memory_bytes();
    if memory < WORKGROUP_BYTES {
        return Err(Error::Invalid(format!("sorting columns needs {WORKGROUP_BYTES} bytes of workgroup memory; this adapter has {memory}")));
    }
    if slices * rows * cols > u32::MAX as usize {
        return Err(Error::Invalid(format!("{} values to sort in one call (at most {})", slices * rows * cols, u32::MAX)));
    }
    let sorted = rec.temp_like(x, Dtype::F32)?;
    let position = rec.temp_like(x, Dtype::U32)?;
    let p = Params { slices: slices as u32, rows: rows as u32, cols: cols as u32, unused: 0 };
    let size = rows.next_power_of_two().max(2) as f64;
    rec.dispatch(&SORT_COLUMNS, &[("SIZE", size)], bytemuck::bytes_of(&p), &[x, sorted, position], (slices * cols) as u64);
    Ok((sorted, position))
}

#[cfg(test)]
/// The CPU twin.
pub fn cpu(x: &ndarray::ArrayView3<f32>) -> (ndarray::Array3<f32>, ndarray::Array3<u32>) {
    let (s, r, c) = x.dim();
    let mut sorted = ndarray::Array3::<f32>::zeros((s, r, c));
    let mut position = ndarray::Array3::<u32>::zeros((s, r, c));
    for si in 0..s {
        for ci in 0..c {
            let mut order: Vec<usize> = (0..r).collect();
            order.sort_by(|&a, &b| x[[si, a, ci]].total_cmp(&x[[si, b, ci]]).then(a.cmp(&b)));
            for (k, &i) in order.iter().enumerate() {
                sorted[[si, k, ci]] = x[[si, i, ci]];
                position[[si, i, ci]] = ((si * r + k) * c + ci) as u32;
            }
        }
    }
    (sorted, position)
}
