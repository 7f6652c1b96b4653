//! Sub-pixel image registration on the GPU with scikit-image's conventions: a smooth random
//! volume moved by a known shift (through the Fourier shift theorem) is registered back with
//! `phase_cross_correlation` at upsample 100, then a series of frames is registered against one
//! reference whose spectrum `PhaseCorrelator` computes once; last, `match_template` finds a cut-out
//! of one slice again, and `peaks` its best matches.
//!
//! ```sh
//! cargo run --release --example register
//! ```

use lucent::registration::{match_template, peaks, phase_cross_correlation, PhaseCorrelation, PhaseCorrelator, TemplateMatch};
use ndarray::{Array3, ArrayD, IxDyn};
use num_complex::Complex32;

fn main() -> Result<(), lucent::Error> {
    let gpu = lucent::Gpu::new()?;
    let dims = [48usize, 64, 80];
    let volume = Array3::from_shape_fn(dims, |(z, y, x)| {
        let (z, y, x) = (z as f32, y as f32, x as f32);
        (x / 5.0).sin() * (y / 7.0).cos() + (z / 4.0 + x / 11.0).sin() + 0.3 * ((x * y) / 97.0).cos()
    });
    let motion = [1.37, -4.82, 2.05];
    let moved = fourier_shifted(&gpu, &volume.clone().into_dyn(), &motion)?;
    let how = PhaseCorrelation { upsample_factor: 100.0, ..Default::default() };
    let found = phase_cross_correlation(&gpu, &volume.view().into_dyn(), &moved.view(), &how)?;
    println!("moved by {motion:?}: the shift registering it back is {:?}", found.shift);

    // Many frames against one reference: its spectrum is computed once.
    let correlator = PhaseCorrelator::new(&gpu, &volume.view().into_dyn(), &PhaseCorrelation { upsample_factor: 20.0, ..Default::default() })?;
    for k in 0..4 {
        let drift = [0.25 * k as f64, -0.6 * k as f64, 0.1 * k as f64];
        let frame = fourier_shifted(&gpu, &volume.clone().into_dyn(), &drift)?;
        println!("frame {k}: drift {drift:?}, registered by {:?}", correlator.register(&frame.view())?.shift);
    }

    // A 9×13 cut-out of slice 20, found again (the response's top-left convention).
    let slice = volume.index_axis(ndarray::Axis(0), 20).to_owned();
    let template = slice.slice(ndarray::s![30..39, 50..63]).to_owned();
    let response = match_template(&gpu, &slice, &template, &TemplateMatch::default())?;
    for (at, r) in peaks(&response.view().into_dyn(), 3, 4) {
        println!("template match at {at:?}: {r:.4}");
    }
    Ok(())
}

/// `x` moved by `shift` samples (periodically): scipy.ndimage.fourier_shift between two FFTs.
fn fourier_shifted(gpu: &lucent::Gpu, x: &ArrayD<f32>, shift: &[f64]) -> Result<ArrayD<f32>, lucent::Error> {
    let spectrum = lucent::fft::fftn(gpu, &x.mapv(|v| Complex32::new(v, 0.0)), None, lucent::fft::Norm::Backward)?;
    let moved = lucent::ndimage::fourier_shift(gpu, &spectrum, shift, None, -1)?;
    let back = lucent::fft::ifftn(gpu, &moved, None, lucent::fft::Norm::Backward)?;
    Ok(ArrayD::from_shape_vec(IxDyn(back.shape()), back.iter().map(|v| v.re).collect()).expect("same shape"))
}
