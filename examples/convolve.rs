//! scipy.signal on the GPU: one kernel over many images (its spectrum is made once and reused),
//! and a correlation that finds where a template sits.
//!
//! ```sh
//! cargo run --release --example convolve
//! ```

use lucent::signal::{correlate, fftconvolve, Method, Mode};
use ndarray::{s, Array2};

fn main() -> Result<(), lucent::Error> {
    let gpu = lucent::Gpu::new()?;
    let kernel = Array2::<f32>::from_elem((15, 15), 1.0 / 225.0);
    for i in 0..4 {
        let image = Array2::from_shape_fn((512, 768), |(y, x)| ((x * 7 + y * 13 + i) % 17) as f32);
        let t = std::time::Instant::now();
        let blurred = fftconvolve(&gpu, &image, &kernel, Mode::Same)?;
        println!("image {i}: fftconvolve {:?} in {:.1} ms", blurred.dim(), t.elapsed().as_secs_f64() * 1e3);
    }

    // A template cut from a random scene: the correlation peaks where it was cut.
    let noise = |i: usize| {
        // splitmix64's finaliser: well-mixed bits from a counter.
        let mut z = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let scene = Array2::from_shape_fn((300, 400), |(y, x)| noise(y * 400 + x));
    let template = scene.slice(s![120..152, 210..250]).to_owned();
    let score = correlate(&gpu, &scene, &template, Mode::Valid, Method::Auto)?;
    let (at, _) = score.indexed_iter().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
    println!("template found at {at:?} (cut at (120, 210))");
    Ok(())
}
