//! The transfer suite of `lucent bench`: host arrays to the device and back at 4 to 256 MiB
//! (`GpuArray::upload_f32` followed by a 4-byte read that waits for it; `download_f32`; and a
//! one-call round trip, a recording that uploads, takes the absolute value and downloads), in one process, as the
//! one-call functions move their inputs and results. Host wall clock, median after warm-up.

use lucent::engine::unary::{self, UnaryOp};
use lucent::{Error, Gpu};
use lucent::{GpuArray, Recording};

use super::register::median_after_warm_up;
use super::{Args, Row};
use crate::Global;

pub fn suite(gpu: &Gpu, args: &Args, global: &Global) -> Result<Vec<Row>, Error> {
    let mut rows = Vec::new();
    for mib in [4u64, 16, 64, 256] {
        if mib > args.max_mib || mib < args.min_mib || (mib << 20) > gpu.max_buffer_bytes() {
            continue;
        }
        let n = (mib << 20) as usize / 4;
        let host = super::uniform(&[n], 0x9E37_79B9_7F4A_7C15);
        let device = GpuArray::upload_f32(gpu, &host.view())?;
        let probe = GpuArray::upload_f32(gpu, &host.slice(ndarray::s![..1]).into_dyn())?;
        type Case<'a> = (&'a str, Box<dyn Fn() -> Result<(), Error> + 'a>);
        let cases: [Case; 3] = [
            ("transfer_upload", Box::new(|| GpuArray::upload_f32(gpu, &host.view()).and_then(|_| probe.download_f32(gpu)).map(drop))),
            ("transfer_download", Box::new(|| device.download_f32(gpu).map(drop))),
            (
                "transfer_round_trip",
                Box::new(|| {
                    let mut rec = Recording::new(gpu);
                    let x = rec.upload_once_f32(&host.view())?;
                    let y = unary::record(&mut rec, UnaryOp::Abs, x)?;
                    let d = rec.download(y);
                    rec.run()?.into_f32(d).map(drop)
                }),
            ),
        ];
        for (case, run) in cases {
            if args.filter.as_deref().is_some_and(|f| !case.contains(f) && !"transfer".starts_with(f)) {
                continue;
            }
            let ms = median_after_warm_up(5, &mut || run())?;
            let gb_per_s = (mib << 20) as f64 / ms / 1e6;
            if !global.quiet && !global.json {
                eprintln!("{case:<36} {mib:>8} MiB {ms:>10.3} ms  {gb_per_s:>6.2} GB/s");
            }
            rows.push(Row { case: case.into(), shape: vec![n], mib, ms, gb_per_s, percent_of_copy: 0.0, timer: "wall" });
        }
    }
    Ok(rows)
}
