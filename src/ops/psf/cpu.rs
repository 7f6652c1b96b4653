//! The f64 twin of the PSF models: psfmodels' numerics step by step (the optical path
//! difference as Gibson and Lanni write it, Abramowitz & Stegun's J0 and J1, Simpson's rule over
//! the planned intervals, linear interpolation of the radial profile, sub-pixels summed).

use ndarray::Array3;
use num_complex::Complex64;
use rayon::prelude::*;

use super::{Model, Plan, PsfOptions};
use crate::error::Result;

/// J0 by Abramowitz & Stegun 9.4.1 and 9.4.3 (|error| ≤ 5e-8), as psfmodels evaluates it.
// (The tables' own eight-digit coefficients, π/4 among them.)
#[allow(clippy::approx_constant)]
pub fn bessel_j0(x: f64) -> f64 {
    let x = x.abs();
    if x <= 3.0 {
        let y = x * x / 9.0;
        return 1.0 + y * (-2.2499997 + y * (1.2656208 + y * (-0.3163866 + y * (0.0444479 + y * (-0.0039444 + y * 0.0002100)))));
    }
    let y = 3.0 / x;
    let f0 = 0.79788456 + y * (-0.00000077 + y * (-0.00552740 + y * (-0.00009512 + y * (0.00137237 + y * (-0.00072805 + y * 0.00014476)))));
    let t0 = x - 0.78539816 + y * (-0.04166397 + y * (-0.00003954 + y * (0.00262573 + y * (-0.00054125 + y * (-0.00029333 + y * 0.00013558)))));
    (1.0 / x).sqrt() * f0 * t0.cos()
}

/// J1 by Abramowitz & Stegun 9.4.4 and 9.4.6 (|error| ≤ 4e-8).
#[allow(clippy::approx_constant)]
pub fn bessel_j1(x: f64) -> f64 {
    let sign = x.signum();
    let x = x.abs();
    let r = if x <= 3.0 {
        let y = x * x / 9.0;
        x * (0.5 + y * (-0.56249985 + y * (0.21093573 + y * (-0.03954289 + y * (0.00443319 + y * (-0.00031761 + y * 0.00001109))))))
    } else {
        let y = 3.0 / x;
        let f1 = 0.79788456 + y * (0.00000156 + y * (0.01659667 + y * (0.00017105 + y * (-0.00249511 + y * (0.00113653 + y * -0.00020033)))));
        let t1 = x - 2.35619449 + y * (0.12499612 + y * (0.00005650 + y * (-0.00637897 + y * (0.00074348 + y * (0.00079824 + y * -0.00029166)))));
        (1.0 / x).sqrt() * f1 * t1.cos()
    };
    sign * r
}

/// The radial profile at (plane `k`, radius index `ri`).
fn profile(plan: &Plan, k: usize, ri: usize, vectorial: bool) -> f64 {
    let q = &plan.optics;
    let z = plan.z[k];
    let ci = q.ci();
    let n = plan.samples[k * plan.rmax + ri] as usize;
    let step = q.alpha / n as f64;
    let kr = q.k0 * (q.dxy / plan.sf as f64 * ri as f64) * q.ni;
    let i = Complex64::i();
    let mut sums = [Complex64::new(0.0, 0.0); 3];
    for m in 1..=n {
        let (theta, w) = match m {
            _ if m == n => (q.alpha, 1.0),
            _ if m % 2 == 1 => (m as f64 * step, 4.0),
            _ => (m as f64 * step, 2.0),
        };
        let (s, c) = theta.sin_cos();
        let (rs, rg) = (q.root(q.ns, theta), q.root(q.ng, theta));
        let path = (ci - z) * q.ni * c + q.zp * rs + q.tg * rg - q.tg0 * q.root(q.ng0, theta) - q.ti0 * q.root(q.ni0, theta);
        let phase = (i * q.k0 * path).exp();
        let x = kr * s;
        if !vectorial {
            sums[0] += phase * (w * bessel_j0(x) * s * c);
            continue;
        }
        let sc = s * c.sqrt();
        let b0 = w * bessel_j0(x) * sc;
        let b1 = w * bessel_j1(x) * sc;
        let b2 = if x != 0.0 { 2.0 * b1 / x - b0 } else { 0.0 };
        let ts_num = 4.0 * q.ni * c * rg;
        let tp = ts_num / ((q.ng * c + q.ni / q.ng * rg) * (q.ns / q.ng * rg + q.ng / q.ns * rs));
        let ts = ts_num / ((q.ni * c + rg) * (rg + rs));
        sums[0] += phase * b0 * (ts + tp / q.ns * rs);
        sums[1] += phase * b1 * (tp * q.ni / q.ns * s);
        sums[2] += phase * b2 * (ts - tp / q.ns * rs);
    }
    let scale = plan.scale(vectorial) * step * step;
    match vectorial {
        true => (sums[0].norm_sqr() + 2.0 * sums[1].norm_sqr() + sums[2].norm_sqr()) * scale,
        false => sums[0].norm_sqr() * scale,
    }
}

/// `psfmodels.make_psf(...)` in f64: planes × nx × nx.
pub fn make_psf(o: &PsfOptions) -> Result<Array3<f64>> {
    let mut psf = match o.model {
        Model::Gaussian => gaussian(o)?,
        model => {
            let plan = Plan::of(o)?;
            let vectorial = model == Model::Vectorial;
            let mut psf = Array3::zeros((plan.z.len(), plan.nx, plan.nx));
            let width = 2 * plan.xymax + 1;
            // The radial profiles on every core (each plane's on its own).
            let profiles: Vec<Vec<f64>> =
                (0..plan.z.len()).into_par_iter().map(|k| (0..plan.rmax).map(|ri| profile(&plan, k, ri, vectorial)).collect()).collect();
            for (k, radial) in profiles.iter().enumerate() {
                for fy in 0..width {
                    for fx in 0..width {
                        let (x, y) = (fx as f64 - plan.xymax as f64, fy as f64 - plan.xymax as f64);
                        let r = (x * x + y * y).sqrt();
                        let r0 = r as usize;
                        if r0 + 1 < plan.rmax {
                            let dr = r - r0 as f64;
                            psf[[k, fy / plan.sf, fx / plan.sf]] += dr * radial[r0 + 1] + (1.0 - dr) * radial[r0];
                        }
                    }
                }
            }
            psf
        }
    };
    if o.normalize {
        let max = psf.iter().fold(0.0f64, |m, &v| m.max(v));
        if max > 0.0 {
            psf.mapv_inplace(|v| v / max);
        }
    }
    Ok(psf)
}

/// psfmodels' Gaussian approximation: a normal density of standard deviations σxy (y, x) and σz
/// at the pixel centres (numpy.linspace across nx pixels of dxy) and the planes' positions, the
/// mean at 0 (pz shifts nothing but the planes, as in psfmodels).
fn gaussian(o: &PsfOptions) -> Result<Array3<f64>> {
    o.check()?;
    let (na, ni) = (o.na, o.ni);
    let cosa = (na / ni).asin().cos();
    let kem = 2.0 * std::f64::consts::PI / o.wvl;
    let (sigma_xy, sigma_z) = if na < 0.7 {
        (2f64.sqrt() / (kem * na), 2.0 * 6f64.sqrt() * ni / (kem * na * na))
    } else {
        let s = (4.0 - 7.0 * cosa.powf(1.5) + 3.0 * cosa.powf(3.5)) / (7.0 * (1.0 - cosa.powf(1.5)));
        let sigma_xy = 1.0 / (ni * kem) * s.powf(-0.5);
        let d = 4.0 * cosa.powi(5) - 25.0 * cosa.powf(3.5) + 42.0 * cosa.powf(2.5) - 25.0 * cosa.powf(1.5) + 4.0;
        let d = 6f64.sqrt() * ni * kem * d.sqrt();
        (sigma_xy, 5.0 * 7f64.sqrt() * (1.0 - cosa.powf(1.5)) / d)
    };
    let lim = (o.nx as f64 - 1.0) * o.dxy / 2.0;
    let xy = super::linspace(-lim, lim, o.nx);
    let z = o.positions();
    let norm = 1.0 / ((2.0 * std::f64::consts::PI).powf(1.5) * sigma_z * sigma_xy * sigma_xy);
    Ok(Array3::from_shape_fn((z.len(), o.nx, o.nx), |(k, y, x)| {
        norm * (-0.5 * ((z[k] / sigma_z).powi(2) + (xy[y] / sigma_xy).powi(2) + (xy[x] / sigma_xy).powi(2))).exp()
    }))
}
