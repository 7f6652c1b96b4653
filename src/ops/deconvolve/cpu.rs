//! The reference: the GPU path's algorithm (same padded geometry, same OTF, same ratio and
//! stopping rule) in f64 with rustfft. The tests check it against direct-convolution
//! Richardson-Lucy; the CLI falls back to it when there is no GPU.

use ndarray::{ArrayD, ArrayViewD, IxDyn, Zip};
use num_complex::Complex64;

use super::{acceleration, prepared_psf, validate, Change, Geometry, Init, Progress, RlBoundary, RlOptions};
use crate::error::Result;
use crate::fft::{cpu as fft, Norm};
use crate::kernels::rl_tv;

/// The estimate in f64 and what the run did.
pub struct CpuResult {
    pub estimate: ArrayD<f64>,
    pub iterations: usize,
    pub stopped_early: bool,
    pub changes: Vec<Change>,
}

/// Richardson-Lucy in f64; validates exactly as the GPU path.
pub fn richardson_lucy(image: &ArrayViewD<f32>, psf: &ArrayViewD<f32>, iterations: usize, opts: &RlOptions) -> Result<CpuResult> {
    richardson_lucy_with(image, psf, iterations, opts, |_| {})
}

/// [`richardson_lucy`], calling `progress` after each iteration.
pub fn richardson_lucy_with(
    image: &ArrayViewD<f32>,
    psf: &ArrayViewD<f32>,
    iterations: usize,
    opts: &RlOptions,
    mut progress: impl FnMut(Progress),
) -> Result<CpuResult> {
    let g = validate(image, psf, iterations, opts)?;
    // About eight f64 arrays of the padded shape live at once (estimate, observed, ratio, their
    // complex half spectra, the OTF): refused before they are made if the host cannot hold them.
    crate::host::check_host_array("the Richardson-Lucy reference's working arrays", &g.padded, 64)?;
    let psf = prepared_psf(psf, opts.normalize_psf);
    let op = Operator::new(&g, &psf.view());
    let image = super::observed(image, opts).mapv(|v| v as f64);
    let observed = g.pad(&image.view());
    let mut estimate = match opts.init {
        Init::Observed => g.first_estimate(&image.view()),
        Init::Constant(c) => g.first_estimate(&ArrayD::from_elem(image.shape(), c as f64).view()),
    };
    let inverse_weight = g.is_extended().then(|| g.inverse_weights(&psf.view()));
    let ratio = opts.ratio();
    let mut result = CpuResult { estimate: ArrayD::zeros(IxDyn(&[0])), iterations: 0, stopped_early: false, changes: Vec::new() };
    // Biggs-Andrews: the previous estimate, the last two changes g and the step α.
    let mut previous_estimate = estimate.clone();
    let mut previous_g: Option<ArrayD<f64>> = None;
    let mut alpha = 0.0;
    for done in 1..=iterations {
        let previous = opts.stop.filter(|s| done % s.every == 0).map(|_| estimate.clone());
        let predicted = opts.accelerate.then(|| {
            let y = Zip::from(&estimate).and(&previous_estimate).map_collect(|&x, &p| (x + alpha * (x - p)).max(0.0));
            previous_estimate = std::mem::replace(&mut estimate, y);
            estimate.clone()
        });
        let blurred = op.apply(&estimate, false);
        let r = Zip::from(&observed).and(&blurred).map_collect(|&o, &b| ratio.apply(o, b));
        let mut correction = op.apply(&r, true);
        if let Some(lambda) = opts.tv {
            correction *= &rl_tv::cpu(&estimate.view(), &g.support, g.psf.len(), lambda as f64);
        }
        if let Some(w) = &inverse_weight {
            correction *= w;
        }
        estimate *= &correction;
        if let Some(y) = predicted {
            let g = &estimate - &y;
            if let Some(gp) = &previous_g {
                alpha = acceleration((&g * gp).sum(), (gp * gp).sum());
            }
            previous_g = Some(g);
        }
        result.iterations = done;
        let change = previous.map(|p| relative_change(&estimate, &p));
        progress(Progress::new("iterations", done, iterations).with_change(change));
        if let (Some(rule), Some(c)) = (opts.stop, change) {
            result.changes.push(Change { iteration: done, relative_change: c });
            if c < rule.tolerance {
                result.stopped_early = done < iterations;
                break;
            }
        }
    }
    result.estimate = g.crop(&estimate);
    Ok(result)
}

/// `psf ⊛ x` (scipy.signal.convolve(x, psf, mode='same') for `RlBoundary::Zero`, circular for
/// `Periodic`) in f64: the forward model of the deconvolution, used to simulate data. The PSF is
/// used as given (not normalised); its axes are the last ones of `x`. `Extended` gives what
/// `Zero` gives (`x` holds no object beyond itself).
pub fn convolve(x: &ArrayViewD<f64>, psf: &ArrayViewD<f64>, boundary: RlBoundary) -> Result<ArrayD<f64>> {
    let g = Geometry::new(x.shape(), psf.shape(), boundary)?;
    let y = Operator::new(&g, psf).apply(&g.pad(x), false);
    Ok(g.crop(&y))
}

/// Multiplication by the OTF (or its conjugate) on the padded shape.
struct Operator {
    otf: ArrayD<Complex64>,
    axes: Vec<usize>,
    len: usize,
}

impl Operator {
    fn new(g: &Geometry, psf: &ArrayViewD<f64>) -> Operator {
        let axes = g.spatial_axes();
        let len = g.padded[*axes.last().unwrap()];
        Operator { otf: fft::r2c(&g.wrap_psf(psf), &axes, Norm::Backward), axes, len }
    }

    /// irfftn(rfftn(x) · otf), with conj(otf) for the adjoint.
    fn apply(&self, x: &ArrayD<f64>, adjoint: bool) -> ArrayD<f64> {
        let mut s = fft::r2c(x, &self.axes, Norm::Backward);
        Zip::from(&mut s).and(&self.otf).for_each(|s, &h| *s *= if adjoint { h.conj() } else { h });
        fft::c2r(&s, &self.axes, self.len, Norm::Backward)
    }
}

fn relative_change(x: &ArrayD<f64>, previous: &ArrayD<f64>) -> f64 {
    let change: f64 = Zip::from(x).and(previous).fold(0.0, |acc, &a, &b| acc + (a - b) * (a - b));
    let norm: f64 = x.iter().map(|v| v * v).sum();
    if norm > 0.0 {
        (change / norm).sqrt()
    } else if change > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}
