//! Shared test helpers: one GPU per test binary, fresh random inputs, error metrics.

pub mod fft_check;
pub mod specimens;

use std::sync::OnceLock;

use lucent::ndimage::Boundary;
use lucent::{Gpu, GpuOptions};
use ndarray::{ArrayD, IxDyn};
use num_complex::{Complex32, Complex64};
use rand::Rng;

/// The test GPU. Never skips: with no adapter the tests fail and say how to get one.
pub fn gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| open(GpuOptions::from_env().expect("valid LUCENT_* variables")))
}

/// The test GPU with every temporary filled with NaN when handed out, so an element a kernel
/// leaves unwritten fails the comparison.
pub fn poisoned_gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| open(GpuOptions { poison: true, ..GpuOptions::from_env().expect("valid LUCENT_* variables") }))
}

/// The test GPU with every dispatch timed, so `RunReport::nodes` names each dispatch's kernel.
pub fn profiled_gpu() -> &'static Gpu {
    static GPU: OnceLock<Gpu> = OnceLock::new();
    GPU.get_or_init(|| open(GpuOptions { profile: true, ..GpuOptions::from_env().expect("valid LUCENT_* variables") }))
}

/// Opens a GPU as `options` say, or fails saying how to get one.
pub fn open(options: GpuOptions) -> Gpu {
    Gpu::open(&options).unwrap_or_else(|e| panic!("GPU tests need an adapter: {e}. Run scripts/test, which installs lavapipe."))
}

/// Uniform in [-0.5, 0.5), fresh every call.
pub fn random(n: usize) -> Vec<f32> {
    let mut rng = rand::rng();
    (0..n).map(|_| rng.random::<f32>() - 0.5).collect()
}

pub fn random_positive(n: usize) -> Vec<f32> {
    let mut rng = rand::rng();
    (0..n).map(|_| rng.random::<f32>() + 0.1).collect()
}

pub fn random_complex(n: usize) -> Vec<Complex32> {
    let re = random(n);
    let im = random(n);
    re.into_iter().zip(im).map(|(r, i)| Complex32::new(r, i)).collect()
}

/// ||got - want|| / ||want|| in f64; NaN anywhere in `got` gives infinity.
pub fn rel_l2(got: &[f32], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "length mismatch");
    if got.iter().any(|v| !v.is_finite()) {
        return f64::INFINITY;
    }
    let num: f64 = got.iter().zip(want).map(|(&g, &w)| (g as f64 - w).powi(2)).sum();
    let den: f64 = want.iter().map(|w| w * w).sum();
    (num / den.max(f64::MIN_POSITIVE)).sqrt()
}

pub fn rel_l2_c(got: &[Complex32], want: &[num_complex::Complex64]) -> f64 {
    let g: Vec<f32> = got.iter().flat_map(|c| [c.re, c.im]).collect();
    let w: Vec<f64> = want.iter().flat_map(|c| [c.re, c.im]).collect();
    rel_l2(&g, &w)
}

/// Shapes every kernel is tried on: a single element, primes, odd, non-square, 4D.
pub const SHAPES: &[&[usize]] = &[&[1], &[7], &[1021], &[3, 5], &[17, 31], &[2, 3, 5, 7], &[5, 1, 13, 4], &[64, 129]];

/// An array of `dims` holding `v` (row-major).
pub fn arr(dims: &[usize], v: Vec<f32>) -> ArrayD<f32> {
    ArrayD::from_shape_vec(IxDyn(dims), v).unwrap()
}

/// Uniform in [-0.5, 0.5), fresh every call.
pub fn rand_array(dims: &[usize]) -> ArrayD<f32> {
    arr(dims, random(dims.iter().product()))
}

/// sin(1.7 i) + 0.3 cos(0.37 i²) in C order, in f64: a fixed input whose reference package's
/// output (printed into a test) anyone can reproduce.
pub fn formula(shape: &[usize]) -> ArrayD<f64> {
    let n: usize = shape.iter().product();
    ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|i| (1.7 * i as f64).sin() + 0.3 * (0.37 * (i * i) as f64).cos()).collect()).unwrap()
}

/// f32 → f64 and Complex32 → Complex64, exactly.
pub trait Widen: Copy {
    type Wide;
    fn widen(self) -> Self::Wide;
}

impl Widen for f32 {
    type Wide = f64;
    fn widen(self) -> f64 {
        self as f64
    }
}

impl Widen for Complex32 {
    type Wide = Complex64;
    fn widen(self) -> Complex64 {
        Complex64::new(self.re as f64, self.im as f64)
    }
}

/// The array in double precision, for the f64 references.
pub fn to64<T: Widen>(x: &ArrayD<T>) -> ArrayD<T::Wide> {
    x.mapv(T::widen)
}

/// The boundary with |cval|: the magnitude Σ|w||x| of a direct sum pads |x| with |cval|.
pub fn abs_boundary(b: Boundary) -> Boundary {
    if let Boundary::Constant(v) = b {
        Boundary::Constant(v.abs())
    } else {
        b
    }
}

/// Runs the `lucent` binary with `args` and extra environment variables.
pub fn lucent_cli(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    // Cargo names the binary to integration tests only (tests/it); the unit tests share this harness.
    let Some(exe) = option_env!("CARGO_BIN_EXE_lucent") else { panic!("CLI tests live in tests/it, where cargo builds the binary") };
    std::process::Command::new(exe).args(args).envs(env.iter().copied()).output().expect("the lucent binary runs")
}

/// Runs the binary with `--json --quiet` and expects success; returns its JSON report.
pub fn lucent_json(args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let out = lucent_cli(&[args, &["--json", "--quiet"]].concat(), env);
    assert!(out.status.success(), "lucent {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("the report is not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

/// Asserts `got` has `want`'s shape and lies within `tol` of it in relative L2 error.
pub fn assert_rel_l2(got: &ArrayD<f32>, want: &ArrayD<f64>, tol: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let (g, w): (Vec<f32>, Vec<f64>) = (got.iter().copied().collect(), want.iter().copied().collect());
    let err = rel_l2(&g, &w);
    assert!(err <= tol, "{what}: relative L2 error {err:e} > {tol:e}");
}

/// An interpolation against its f64 reference: relative L2 within 1e-5, and pointwise within 1e-5
/// of the largest value (one wrong segment of a long line barely moves the L2 norm).
pub fn assert_resampled(got: &ArrayD<f32>, want: &ArrayD<f64>, what: &str) {
    assert_rel_l2(got, want, 1e-5, what);
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let worst = got.iter().zip(want).fold(0.0f64, |m, (&g, w)| m.max((g as f64 - w).abs()));
    assert!(worst <= 1e-5 * scale, "{what}: largest error {worst:e} of values up to {scale:e}");
}

/// The texture sampler's documented bound: with `bits` fraction bits in the filter's weights
/// (8 on NVIDIA; the Vulkan minimum `subTexelPrecisionBits` is 4, lavapipe's error is ~100×
/// below this), each of the rank axes' linear fetches may be off by 2^-bits of the largest
/// difference between the values it blends: the samples' range for order 1, the coefficients'
/// (at most 3× the samples', the prefilter's ℓ1 gain) for order 3. Order 0 reads texel centres:
/// exact, as the buffer path (ties aside).
pub fn check_texture(got: &ArrayD<f32>, want: &ArrayD<f64>, x: &ArrayD<f32>, cval: f32, order: u32, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    let (lo, hi) = x.iter().fold((cval, cval), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let gain = if order == 3 { 3.0 } else { 1.0 };
    let bound = x.ndim() as f64 * (hi - lo) as f64 * gain / 256.0;
    let worst = got.iter().zip(want).fold(0.0f64, |m, (&g, w)| m.max((g as f64 - w).abs()));
    if order == 0 {
        let differ = got.iter().zip(want).filter(|(g, w)| (**g as f64 - **w).abs() > 1e-6).count();
        assert!(differ * 100 <= got.len().max(100), "{what}: {differ} of {} differ", got.len());
    } else {
        assert!(worst <= bound, "{what}: largest error {worst:e}, bound {bound:e}");
    }
}
