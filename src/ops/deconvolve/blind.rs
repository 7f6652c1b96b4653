//! Blind Richardson-Lucy (Fish, Brinicombe, Pike and Walker 1995; MATLAB's `deconvblind`): the
//! object and the PSF estimated in turn from the image alone, each by Richardson-Lucy's update
//! with the other held fixed. One iteration is `object_iterations` updates of the object with
//! the current PSF h, then `psf_iterations` updates of the PSF with the current object f:
//!
//! ```text
//! f *= h* ⊛ (g / (h ⊛ f + eps))            (the object, as richardson_lucy)
//! h *= M · (f* ⊛ (g / (f ⊛ h + eps)));  h /= Σ h;  h = (h + λ h₀) / (1 + λ)
//! ```
//!
//! with g the image, M the PSF's support (the initial PSF's box about its centre: h stays zero
//! beyond it), h kept non-negative (the update is multiplicative) and of sum 1, and with
//! `psf_prior` λ > 0 pulled towards the initial PSF h₀ (a model PSF the data refine) after each
//! update. The geometry, the ratio (eps, filter_epsilon) and the boundaries (zero or periodic)
//! are Richardson-Lucy's ([`super::Geometry`]); the PSF update is the object update with the
//! roles exchanged, so both run on the same padded arrays and transforms.
//!
//! As every blind method, many iterations on a sparse object (beads on black) drift towards the
//! trivial solution (a sharp PSF, the object the image itself): tens of iterations, or a prior
//! towards a model PSF, keep it near the truth (tests/it/blind.rs measures a synthetic case).
//!
//! The GPU path holds the observed image, both estimates and the support mask resident, records
//! one iteration once (the PSF's spectrum, the object updates, the object's spectrum, the PSF
//! updates with the sum reduced and divided on the device) and runs it `iterations` times: one
//! buffer per array (no chunks), no acceleration, TV, stopping rule or extended boundary.

use std::time::Instant;

use ndarray::{ArrayD, ArrayViewD, IxDyn, Zip};
use serde::Serialize;

use super::gpu::{convolve, observed_and_first, sum, wrapped_psf, Observed, Plans};
use super::{observed, prepared_psf, validate, Geometry, Progress, RlBoundary, RlOptions};
use crate::error::{Error, Result};
use crate::fft::{cpu as fft, Norm};
use crate::gpu::{Gpu, GpuArray};
use crate::graph::{Chunked, Output, Recording};
use crate::host::ms_since;
use crate::kernels::{binary, rl_normalize, rl_ratio, rl_update, unary};

/// What a blind run does besides Richardson-Lucy's own options.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BlindOptions {
    /// Outer iterations (MATLAB's NUMIT).
    pub iterations: usize,
    /// Object updates per iteration (1 as MATLAB's deconvblind; Fish et al. used several).
    pub object_iterations: usize,
    /// PSF updates per iteration.
    pub psf_iterations: usize,
    /// λ ≥ 0: after each PSF update, h = (h + λ h₀) / (1 + λ) towards the initial PSF (0: none).
    pub psf_prior: f64,
    /// The ratio, boundary and data rules of Richardson-Lucy (its `init`, `normalize_psf`,
    /// `eps`, `filter_epsilon`, `clip_negative`, `allow_negative`, `boundary`); acceleration,
    /// TV, the stopping rule and the extended boundary are refused.
    pub rl: RlOptions,
}

impl Default for BlindOptions {
    fn default() -> BlindOptions {
        BlindOptions { iterations: 10, object_iterations: 1, psf_iterations: 1, psf_prior: 0.0, rl: RlOptions::default() }
    }
}

/// The restored image, the recovered PSF (the initial PSF's shape, sum 1) and how the run went.
pub struct BlindResult {
    pub estimate: ArrayD<f32>,
    pub psf: ArrayD<f32>,
    pub report: BlindReport,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct BlindReport {
    pub device: String,
    pub geometry: Option<Geometry>,
    pub iterations: usize,
    pub setup_ms: f64,
    pub iterate_ms: f64,
    pub ms_per_iteration: f64,
    pub dispatches_per_iteration: usize,
}

/// Most inner updates per iteration.
pub const MAX_INNER: usize = 1000;

/// Checks everything before any work (Richardson-Lucy's rules, and the blind run's).
pub fn check_blind(image: &ArrayViewD<f32>, psf: &ArrayViewD<f32>, o: &BlindOptions) -> Result<Geometry> {
    let total = o
        .iterations
        .checked_mul(o.object_iterations + o.psf_iterations)
        .ok_or_else(|| Error::Invalid(format!("{} iterations of {} + {} updates overflow", o.iterations, o.object_iterations, o.psf_iterations)))?;
    if o.iterations == 0 || !(1..=MAX_INNER).contains(&o.object_iterations) || !(1..=MAX_INNER).contains(&o.psf_iterations) {
        return Err(Error::Invalid(format!(
            "blind Richardson-Lucy needs at least 1 iteration and 1 to {MAX_INNER} object and PSF updates in each, got {}, {} and {}",
            o.iterations, o.object_iterations, o.psf_iterations
        )));
    }
    if !(o.psf_prior.is_finite() && o.psf_prior >= 0.0) {
        return Err(Error::Invalid(format!("the PSF prior weight must be finite and non-negative, got {}", o.psf_prior)));
    }
    let rl = &o.rl;
    for (given, what) in [
        (rl.accelerate, "acceleration"),
        (rl.tv.is_some(), "TV regularisation"),
        (rl.stop.is_some(), "a stopping rule"),
        (rl.boundary == RlBoundary::Extended, "the extended boundary"),
    ] {
        if given {
            return Err(Error::Invalid(format!("blind Richardson-Lucy does not take {what} (use zero or periodic boundaries, fixed iterations)")));
        }
    }
    if psf.ndim() != image.ndim() {
        return Err(Error::Shape(format!("blind Richardson-Lucy estimates one PSF of the image's rank: image {:?}, PSF {:?}", image.shape(), psf.shape())));
    }
    validate(image, psf, total, rl)
}

/// Blind Richardson-Lucy on the GPU from the initial PSF `psf` (see the module's notes).
pub fn blind_richardson_lucy(gpu: &Gpu, image: &ArrayViewD<f32>, psf: &ArrayViewD<f32>, o: &BlindOptions) -> Result<BlindResult> {
    blind_richardson_lucy_with(gpu, image, psf, o, |_| {})
}

/// [`blind_richardson_lucy`], calling `progress` after each iteration.
pub fn blind_richardson_lucy_with(
    gpu: &Gpu,
    image: &ArrayViewD<f32>,
    psf: &ArrayViewD<f32>,
    o: &BlindOptions,
    mut progress: impl FnMut(Progress),
) -> Result<BlindResult> {
    let start = Instant::now();
    let g = check_blind(image, psf, o)?;
    let (real, complex) = crate::fft::real_and_spectrum_bytes(&g.padded);
    let needed = real.saturating_mul(5 + o.psf_prior.gt(&0.0) as u64).saturating_add(complex.saturating_mul(4));
    if needed > gpu.memory_budget_bytes() || real.max(complex) > gpu.max_buffer_bytes() {
        return Err(Error::TooLarge {
            what: format!("blind Richardson-Lucy of {:?} (padded {:?}) whole in one buffer per array", g.image, g.padded),
            bytes: needed,
            limit: gpu.memory_budget_bytes().min(gpu.max_buffer_bytes()),
        });
    }
    let image = observed(image, &o.rl);
    let h0 = prepared_psf(psf, true);
    let rows: Vec<std::ops::Range<usize>> = std::iter::once(0..g.padded[0]).collect();
    let plans = Plans::new(gpu, &g, rows.clone())?;

    // Resident: the observed image, the object, the PSF and its support wrapped around the
    // origin, and λ h₀ / (1 + λ).
    let mut rec = Recording::new(gpu);
    let (observed_buf, first) = observed_and_first(&mut rec, &g, &rows[0], Observed::Host(&image.view()), &o.rl)?;
    let h = wrapped_psf(&mut rec, &g, &rows[0], &h0.view())?;
    let mask = wrapped_psf(&mut rec, &g, &rows[0], &ArrayD::from_elem(h0.shape(), 1.0).view())?;
    let prior = (o.psf_prior > 0.0).then(|| wrapped_psf(&mut rec, &g, &rows[0], &h0.mapv(|v| v * o.psf_prior / (1.0 + o.psf_prior)).view())).transpose()?;
    let outputs: Vec<Output> = [observed_buf, first, h, mask].into_iter().chain(prior).map(|b| rec.output(b)).collect();
    let compiled = rec.compile()?;
    let results = compiled.run(gpu)?;
    let arrays: Vec<GpuArray> = outputs.iter().map(|&out| results.array(out)).collect();
    let (observed_arr, object, psf_arr, mask_arr) = (&arrays[0], &arrays[1], &arrays[2], &arrays[3]);
    let prior_arr = arrays.get(4);

    let mut rec = Recording::new(gpu);
    let obs = Chunked::inputs(&mut rec, std::slice::from_ref(observed_arr))?;
    let f = Chunked::inputs(&mut rec, std::slice::from_ref(object))?;
    let h = Chunked::inputs(&mut rec, std::slice::from_ref(psf_arr))?;
    let m = rec.input(mask_arr);
    let ratio = o.rl.ratio();
    let otf_h = plans.spectrum(&mut rec, &h)?;
    for _ in 0..o.object_iterations {
        let blurred = convolve(&mut rec, &plans, &f, &otf_h, false)?;
        let r = obs.zip(&mut rec, &blurred, |rec, o, b| rl_ratio::record(rec, ratio, o, b))?;
        let correction = convolve(&mut rec, &plans, &r, &otf_h, true)?;
        rl_update::record_weighted(&mut rec, f.parts[0], correction.parts[0], None, None)?;
    }
    let otf_f = plans.spectrum(&mut rec, &f)?;
    for _ in 0..o.psf_iterations {
        let blurred = convolve(&mut rec, &plans, &h, &otf_f, false)?;
        let r = obs.zip(&mut rec, &blurred, |rec, o, b| rl_ratio::record(rec, ratio, o, b))?;
        let correction = convolve(&mut rec, &plans, &r, &otf_f, true)?;
        rl_update::record_weighted(&mut rec, h.parts[0], correction.parts[0], None, Some(m))?;
        let total = sum(&mut rec, &h)?;
        rl_normalize::record(&mut rec, h.parts[0], total)?;
        if let Some(p) = prior_arr {
            let p = rec.input(p);
            let shrunk = unary::record(&mut rec, unary::UnaryOp::Scale((1.0 / (1.0 + o.psf_prior)) as f32), h.parts[0])?;
            binary::record_into(&mut rec, binary::BinaryOp::Add, shrunk, p, h.parts[0])?;
        }
    }
    let iteration = rec.compile()?;
    let mut report = BlindReport {
        device: format!("gpu: {}", gpu.summary().name),
        geometry: Some(g.clone()),
        setup_ms: ms_since(start),
        dispatches_per_iteration: iteration.dispatches(),
        ..Default::default()
    };
    let t = Instant::now();
    for done in 1..=o.iterations {
        iteration.run(gpu)?;
        report.iterations = done;
        progress(Progress::new("iterations", done, o.iterations));
    }
    report.iterate_ms = ms_since(t);
    report.ms_per_iteration = report.iterate_ms / o.iterations as f64;
    let object = object.download_f32(gpu)?.mapv(|v| v as f64);
    let psf_padded = psf_arr.download_f32(gpu)?.mapv(|v| v as f64);
    Ok(BlindResult { estimate: g.crop(&object).mapv(|v| v as f32), psf: unwrap_psf(&g, &psf_padded).mapv(|v| v as f32), report })
}

/// The f64 reference of [`blind_richardson_lucy`]: the same geometry, updates and order.
pub fn blind_richardson_lucy_reference(image: &ArrayViewD<f32>, psf: &ArrayViewD<f32>, o: &BlindOptions) -> Result<(ArrayD<f64>, ArrayD<f64>)> {
    let g = check_blind(image, psf, o)?;
    crate::host::check_host_array("the blind Richardson-Lucy reference's working arrays", &g.padded, 96)?;
    let image = observed(image, &o.rl).mapv(|v| v as f64);
    let h0 = prepared_psf(psf, true);
    let observed = g.pad(&image.view());
    let mut f = match o.rl.init {
        super::Init::Observed => g.first_estimate(&image.view()),
        super::Init::Constant(c) => g.first_estimate(&ArrayD::from_elem(image.shape(), c as f64).view()),
    };
    let mut h = g.wrap_psf(&h0.view());
    let mask = g.wrap_psf(&ArrayD::from_elem(h0.shape(), 1.0).view());
    let prior = g.wrap_psf(&h0.view()) * (o.psf_prior / (1.0 + o.psf_prior));
    let axes = g.spatial_axes();
    let len = g.padded[*axes.last().unwrap()];
    let ratio = o.rl.ratio();
    // irfftn(rfftn(x) · s), or with conj(s).
    let apply = |x: &ArrayD<f64>, s: &ArrayD<num_complex::Complex64>, adjoint: bool| {
        let mut t = fft::r2c(x, &axes, Norm::Backward);
        Zip::from(&mut t).and(s).for_each(|t, &s| *t *= if adjoint { s.conj() } else { s });
        fft::c2r(&t, &axes, len, Norm::Backward)
    };
    let update = |x: &mut ArrayD<f64>, s: &ArrayD<num_complex::Complex64>| {
        let blurred = apply(x, s, false);
        let r = Zip::from(&observed).and(&blurred).map_collect(|&o, &b| ratio.apply(o, b));
        *x *= &apply(&r, s, true);
    };
    for _ in 0..o.iterations {
        let otf_h = fft::r2c(&h, &axes, Norm::Backward);
        for _ in 0..o.object_iterations {
            update(&mut f, &otf_h);
        }
        let otf_f = fft::r2c(&f, &axes, Norm::Backward);
        for _ in 0..o.psf_iterations {
            update(&mut h, &otf_f);
            h *= &mask;
            let total = h.sum();
            if total > 0.0 && total.is_finite() {
                h /= total;
            }
            if o.psf_prior > 0.0 {
                h = &h / (1.0 + o.psf_prior) + &prior;
            }
        }
    }
    Ok((g.crop(&f), unwrap_psf(&g, &h)))
}

/// The PSF's box read back from the padded array it is wrapped in ([`Geometry::wrap_psf`]'s
/// inverse).
fn unwrap_psf(g: &Geometry, padded: &ArrayD<f64>) -> ArrayD<f64> {
    ArrayD::from_shape_fn(IxDyn(&g.psf), |i| {
        let at: Vec<usize> = (0..g.psf.len()).map(|d| (i[d] as isize - g.centre[d] as isize).rem_euclid(g.padded[d] as isize) as usize).collect();
        padded[IxDyn(&at)]
    })
}
