//! How far the texture sampler's samples lie from exact ones: random arrays of 2 and 3 axes
//! sampled at random coordinates (inside and around the array) by the buffer and the texture
//! sampler, orders 1 and 3, every mode, against the f64 reference. Prints the relative L2 error
//! and the largest error over the values' range, per sampler; the figures in BENCHMARKS.md and
//! the bound in tests/it/interpolate.rs come from it.
//!
//! ```sh
//! cargo run --release --example sampler_error
//! ```

use lucent::ndimage::cpu;
use lucent::ndimage::{self, Sampler, Sampling, SplineMode};
use ndarray::{ArrayD, IxDyn};

fn main() -> Result<(), lucent::Error> {
    let gpu = lucent::Gpu::new()?;
    println!("{}: float32_filterable {}", gpu.summary().name, gpu.filters_f32());
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut random = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    println!("{:<14} {:<14} {:>5} {:>12} {:>12} {:>12} {:>12}", "shape", "mode", "order", "buffer L2", "buffer max", "texture L2", "texture max");
    for dims in [vec![301usize, 257], vec![67, 71, 59]] {
        let x = ArrayD::from_shape_simple_fn(IxDyn(&dims), &mut random);
        let points = 100_000;
        let mut c = ArrayD::<f32>::zeros(IxDyn(&[dims.len(), points]));
        for (a, &n) in dims.iter().enumerate() {
            for i in 0..points {
                c[[a, i]] = random() * (n as f32 + 6.0) - 3.0;
            }
        }
        let (x64, c64) = (x.mapv(|v| v as f64), c.mapv(|v| v as f64));
        for mode in [
            SplineMode::Mirror,
            SplineMode::Reflect,
            SplineMode::Nearest,
            SplineMode::Wrap,
            SplineMode::GridWrap,
            SplineMode::Constant,
            SplineMode::GridConstant,
        ] {
            for order in [1, 3] {
                let how = |sampler| Sampling { order, mode, cval: 0.5, prefilter: true, sampler };
                let want = cpu::map_coordinates(&x64, &c64, &how(Sampler::Buffer));
                let range = want.iter().fold(f64::MIN, |m, &v| m.max(v)) - want.iter().fold(f64::MAX, |m, &v| m.min(v));
                let mut line = format!("{:<14} {:<14} {order:>5}", format!("{dims:?}"), format!("{mode:?}"));
                for sampler in [Sampler::Buffer, Sampler::Texture] {
                    let got = ndimage::map_coordinates(&gpu, &x, &c, &how(sampler))?;
                    let (mut err2, mut norm2, mut max) = (0.0f64, 0.0f64, 0.0f64);
                    for (g, w) in got.iter().zip(&want) {
                        let e = *g as f64 - w;
                        (err2, norm2, max) = (err2 + e * e, norm2 + w * w, max.max(e.abs()));
                    }
                    line += &format!(" {:>12.3e} {:>12.3e}", (err2 / norm2).sqrt(), max / range);
                }
                println!("{line}");
            }
        }
    }
    Ok(())
}
