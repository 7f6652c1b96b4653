//! The deskew suite of `lucent bench`, against cupyx.scipy.ndimage.affine_transform of the same
//! maps (.device/deskew_reference.py): a 2048 × 256 × 512 stage-scanned stack (planes, rows,
//! columns; 31.5°, dxdata 0.104 µm, dzdata 0.2 µm: 2048 × 256 × 3870 out, 8.1 GB), deskewed
//! with orders 1 and 3 and turned to coverslip coordinates (267 × 256 × 4372), resident on the
//! device (the stack uploaded in slabs of rows that fit one buffer each, every slab's deskew in
//! one recording; GPU time), and host arrays in and out as a user calls `ndimage::deskew`
//! (wall clock).

use lucent::ndimage::{self, Deskew, Sampler, Sampling, SplineMode};
use lucent::{Error, Gpu, GpuArray};
use ndarray::{s, Array3};

use super::register::median_after_warm_up;
use super::{time_repeated, Args, Row};
use crate::Global;

pub const STACK: [usize; 3] = [2048, 256, 512];

pub fn suite(gpu: &Gpu, args: &Args, global: &Global) -> Result<Vec<Row>, Error> {
    let wanted = |case: &str| args.filter.as_deref().is_none_or(|f| case.contains(f));
    let geometry = Deskew { angle: 31.5, dzdata: 0.2, dxdata: 0.104, ..Default::default() };
    let coverslip = Deskew { rotate: true, ..geometry };
    let cases = [("deskew_order1", geometry, 1), ("deskew_order3", geometry, 3), ("deskew_coverslip_order1", coverslip, 1)];
    if !cases.iter().any(|c| wanted(c.0)) {
        return Ok(Vec::new());
    }
    let stack = super::uniform(&STACK, 0x2545_F491_4F6C_DD1D).into_dimensionality::<ndarray::Ix3>().expect("three axes");
    let mut rows = Vec::new();
    let mut push = |case: String, shape: Vec<usize>, ms: f64, timer: &'static str| {
        if !global.quiet && !global.json {
            eprintln!("{case:<36} {:>16} {ms:>10.3} ms ({timer})", super::shape_name(&shape));
        }
        let mib = (shape.iter().product::<usize>() * 4) as u64 >> 20;
        rows.push(Row { case, shape, mib, ms, gb_per_s: 0.0, percent_of_copy: 0.0, timer });
    };
    for (case, g, order) in cases {
        if !wanted(case) {
            continue;
        }
        let how = Sampling { order, mode: SplineMode::Constant, cval: 0.0, prefilter: true, sampler: Sampler::Buffer };
        let (_, out) = ndimage::deskew_map(&STACK, &g)?;
        let slabs = resident_slabs(gpu, &stack, &out)?;
        let (ms, timer) = time_repeated(gpu, 1, |rec| {
            for slab in &slabs {
                let x = rec.input(slab);
                ndimage::record_deskew(rec, x, &g, &how)?;
            }
            Ok(())
        })?;
        push(case.to_string(), out.clone(), ms, timer);
        if order == 1 && !g.rotate {
            let ms = median_after_warm_up(3, || ndimage::deskew(gpu, &stack, &g, &how).map(drop))?;
            push(format!("{case}_host"), out, ms, "wall");
        }
    }
    Ok(rows)
}

/// The stack on the device in slabs of rows, each slab's input and deskewed output within one
/// buffer.
fn resident_slabs(gpu: &Gpu, stack: &Array3<f32>, out: &[usize]) -> Result<Vec<GpuArray>, Error> {
    let row = (out[0] * out[2]).max(STACK[0] * STACK[2]) as u64 * 4;
    let rows = (gpu.max_buffer_bytes() / row).clamp(1, STACK[1] as u64) as usize;
    (0..STACK[1])
        .step_by(rows)
        .map(|y0| {
            let slab = stack.slice(s![.., y0..(y0 + rows).min(STACK[1]), ..]).to_owned().into_dyn();
            GpuArray::upload_f32(gpu, &slab.view())
        })
        .collect()
}
