//! One level of the pyramid: the fixed image and its mask on the host, the moving image (its
//! B-spline coefficients), its gradients and its mask's support on the device; and the samples
//! of those at a transform.

use ndarray::{ArrayD, ArrayViewD, IxDyn};

use super::metric;
use crate::error::Result;
use crate::gpu::{Gpu, GpuArray};
use crate::graph::Recording;
use crate::kernels::boundary::Boundary;
use crate::kernels::registration_histogram::{self, Bins};
use crate::kernels::registration_sums::{self, HostInputs, SumsInputs, SumsMode};
use crate::ops::filter;
use crate::ops::interpolate::{self, AffineMap, Sampling, SplineMode};

/// A level's host part: what the metrics read besides the samples.
pub(super) struct Grid {
    /// The shrink factor.
    pub f: f64,
    pub dims: Vec<usize>,
    pub fixed: Vec<f32>,
    /// The fixed image's own mask (all true without one).
    pub fixed_mask: Vec<bool>,
    /// The moving level's range (for the mutual information's bins).
    pub moving_range: (f64, f64),
    /// The fixed and moving levels' means: the kernel's sums of correlation are taken about them.
    pub shifts: [f32; 2],
}

pub(super) struct Level {
    pub grid: Grid,
    /// The fixed level and its mask as (value, 0/1) pairs, for the sums' kernel.
    fixed: GpuArray,
    coefficients: GpuArray,
    gradients: Vec<GpuArray>,
    support: GpuArray,
}

/// The moving image, its gradients and its support (its mask resampled: whole at 1), at the
/// fixed level's points: on the device for the sums' kernel, on the host for mutual information.
pub(super) enum Samples {
    Device { values: GpuArray, gradients: Vec<GpuArray>, support: GpuArray },
    Host(HostSamples),
}

pub(super) struct HostSamples {
    pub values: Vec<f32>,
    pub gradients: Vec<Vec<f32>>,
    pub support: Vec<f32>,
}

impl Level {
    pub fn new(
        gpu: &Gpu,
        fixed: &ArrayViewD<f32>,
        moving: &ArrayViewD<f32>,
        fixed_mask: Option<&ArrayViewD<bool>>,
        moving_mask: Option<&ArrayViewD<bool>>,
        shrink: usize,
        sigma: f64,
    ) -> Result<Level> {
        let f = shrink as f64;
        let d = fixed.ndim();
        // Smoothed (masks: not) and resampled at every `shrink`-th point.
        let shrunk = |rec: &mut Recording, x: &ArrayViewD<f32>, sigma: f64, order: u32| -> Result<(crate::graph::Buf, Vec<usize>)> {
            let out: Vec<usize> = x.shape().iter().map(|&n| (n / shrink).max(1)).collect();
            let b = rec.upload_once_f32(x)?;
            let smooth = if sigma > 0.0 { filter::gaussian_filter(rec, b, &[sigma as f32], Boundary::Nearest)? } else { b };
            let map = AffineMap { matrix: (0..d).map(|i| (0..d).map(|j| if i == j { f } else { 0.0 }).collect()).collect(), offset: vec![0.0; d] };
            let how = Sampling { order, mode: SplineMode::Nearest, ..Default::default() };
            Ok((interpolate::affine_transform(rec, smooth, &map, &out, &how)?, out))
        };
        let as_f32 = |m: &ArrayViewD<bool>| m.mapv(|b| f32::from(u8::from(b)));
        let mut rec = Recording::new(gpu);
        let (fixed_level, dims) = shrunk(&mut rec, fixed, sigma, 1)?;
        let fixed_out = rec.output(fixed_level);
        // Masks shrink to the points whose smoothing (and, moving, the cubic sampling and the
        // gradient's differences) reach no masked-out point: eroded by a box.
        let reach = (2.0 * sigma / f).ceil() as usize;
        let eroded = |rec: &mut Recording, m: &ArrayViewD<bool>, order: u32, reach: usize| -> Result<crate::graph::Buf> {
            let (b, _) = shrunk(rec, &as_f32(m).view(), 0.0, order)?;
            if reach == 0 {
                return Ok(b);
            }
            filter::uniform_filter(rec, b, &[2 * reach + 1], Boundary::Nearest)
        };
        let fixed_mask_out = match fixed_mask {
            Some(m) => {
                let b = eroded(&mut rec, m, 0, reach)?;
                Some(rec.output(b))
            }
            None => None,
        };
        let (moving_level, moving_dims) = shrunk(&mut rec, moving, sigma, 1)?;
        let coefficients = interpolate::spline_filter(&mut rec, moving_level, 3, SplineMode::Nearest)?;
        // Central differences (edges one-sided through `nearest`), per axis.
        let gradients: Vec<_> =
            (0..d).map(|axis| filter::correlate1d(&mut rec, moving_level, &[-0.5f64, 0.0, 0.5], axis, Boundary::Nearest)).collect::<Result<_>>()?;
        let support = match moving_mask {
            Some(m) => eroded(&mut rec, m, 0, reach + 2)?,
            None => rec.upload_once_f32(&ArrayD::from_elem(IxDyn(&moving_dims), 1.0f32).view())?,
        };
        let outs = [moving_level, coefficients, support].map(|b| rec.output(b));
        let gradient_outs: Vec<_> = gradients.iter().map(|&g| rec.output(g)).collect();
        let results = rec.run()?;
        let download = |a: GpuArray, dims: &[usize]| -> Result<Vec<f32>> { Ok(GpuArray::download_joined::<f32>(gpu, &[a], dims)?.into_raw_vec_and_offset().0) };
        let fixed = download(results.array(fixed_out), &dims)?;
        let fixed_mask = match fixed_mask_out {
            Some(o) => download(results.array(o), &dims)?.into_iter().map(|x| x >= 0.999).collect(),
            None => vec![true; fixed.len()],
        };
        let moving_values = download(results.array(outs[0]), &moving_dims)?;
        let (lo, hi) = moving_values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x as f64), hi.max(x as f64)));
        let mean = |x: &[f32]| (x.iter().map(|&v| v as f64).sum::<f64>() / x.len().max(1) as f64) as f32;
        let shifts = [mean(&fixed), mean(&moving_values)];
        let pairs: Vec<f32> = fixed.iter().zip(&fixed_mask).flat_map(|(&v, &m)| [v, f32::from(u8::from(m))]).collect();
        let packed = GpuArray::upload_f32(gpu, &ndarray::ArrayView1::from(&pairs).into_dyn())?;
        Ok(Level {
            grid: Grid { f, dims, fixed, fixed_mask, moving_range: (lo, hi), shifts },
            fixed: packed,
            coefficients: results.array(outs[1]),
            gradients: gradient_outs.iter().map(|&o| results.array(o)).collect(),
            support: results.array(outs[2]),
        })
    }

    /// The samples at the level's map `map` (one recording): the moving image by cubic
    /// B-splines, its gradients and support linearly; left on the device unless `host`.
    pub fn sample(&self, gpu: &Gpu, map: &AffineMap, host: bool) -> Result<Samples> {
        let mut rec = Recording::new(gpu);
        let linear = Sampling { order: 1, mode: SplineMode::Constant, cval: 0.0, ..Default::default() };
        let cubic = Sampling { order: 3, mode: SplineMode::Nearest, prefilter: false, ..Default::default() };
        let mut outs = Vec::new();
        let sources = std::iter::once((&self.coefficients, &cubic)).chain(self.gradients.iter().map(|g| (g, &linear))).chain([(&self.support, &linear)]);
        for (a, how) in sources {
            let b = rec.input(a);
            let y = interpolate::affine_transform(&mut rec, b, map, &self.grid.dims, how)?;
            outs.push(rec.output(y));
        }
        let results = rec.run()?;
        let mut arrays: Vec<GpuArray> = outs.iter().map(|&o| results.array(o)).collect();
        let support = arrays.pop().expect("the support");
        let values = arrays.remove(0);
        if !host {
            return Ok(Samples::Device { values, gradients: arrays, support });
        }
        let down = |a: GpuArray| -> Result<Vec<f32>> { Ok(GpuArray::download_joined::<f32>(gpu, &[a], &self.grid.dims)?.into_raw_vec_and_offset().0) };
        Ok(Samples::Host(HostSamples { values: down(values)?, gradients: arrays.into_iter().map(down).collect::<Result<_>>()?, support: down(support)? }))
    }

    /// The sums of `mode` at the samples `s` (and `previous`, for a comparison), in f64.
    pub fn sums(&self, gpu: &Gpu, mode: SumsMode, centre: &[f64], s: &Samples, previous: Option<&Samples>) -> Result<Vec<f64>> {
        let centre: Vec<f64> = centre.iter().map(|c| c / self.grid.f).collect();
        match (s, previous) {
            (Samples::Device { values, gradients, support }, None | Some(Samples::Device { .. })) => {
                let mut rec = Recording::new(gpu);
                let fixed = rec.input(&self.fixed);
                let (values, support) = (rec.input(values), rec.input(support));
                let gradients: Vec<_> = gradients.iter().map(|g| rec.input(g)).collect();
                let previous = match previous {
                    Some(Samples::Device { values, support, .. }) => Some((rec.input(values), rec.input(support))),
                    _ => None,
                };
                let x = SumsInputs { fixed, values, gradients: &gradients, support, previous, log_ratios: None };
                let partials = registration_sums::record(&mut rec, mode, &self.grid.dims, &centre, self.grid.shifts, &x)?;
                let out = rec.output(partials);
                let results = rec.run()?;
                let width = mode.width(self.grid.dims.len());
                let groups = results.array(out).len() / width;
                let p = GpuArray::download_joined::<f32>(gpu, &[results.array(out)], &[groups, width])?.into_raw_vec_and_offset().0;
                Ok((0..width).map(|k| p.iter().skip(k).step_by(width).map(|&v| v as f64).sum()).collect())
            }
            (Samples::Host(h), None | Some(Samples::Host(_))) => {
                let previous = match previous {
                    Some(Samples::Host(p)) => Some((p.values.as_slice(), p.support.as_slice())),
                    _ => None,
                };
                let x = HostInputs {
                    fixed: &self.grid.fixed,
                    mask: &self.grid.fixed_mask,
                    values: &h.values,
                    gradients: &h.gradients,
                    support: &h.support,
                    previous,
                    log_ratios: None,
                };
                Ok(registration_sums::cpu(mode, &self.grid.dims, &centre, self.grid.shifts, &x))
            }
            _ => Err(crate::error::Error::Invalid("registration sums of samples on the device and on the host together".into())),
        }
    }
}

impl Level {
    /// Mattes mutual information at the samples `s`: the joint histogram, then its gradient
    /// sums (two submissions on the device; the CPU twins for host samples).
    pub fn mutual_information(&self, gpu: &Gpu, b: &Bins, centre: &[f64], s: &Samples) -> Result<(Vec<f64>, Vec<f64>)> {
        let centre: Vec<f64> = centre.iter().map(|c| c / self.grid.f).collect();
        let g = &self.grid;
        match s {
            Samples::Device { values, gradients, support } => {
                let mut rec = Recording::new(gpu);
                let (fixed, v, sup) = (rec.input(&self.fixed), rec.input(values), rec.input(support));
                let joint = registration_histogram::record(&mut rec, b, g.fixed.len(), fixed, v, sup, None)?;
                let out = rec.output(joint);
                let joint = download(gpu, rec.run()?.array(out), b.bins * b.bins)?;
                let l: Vec<f32> = metric::log_ratios(b, &joint).iter().map(|&x| x as f32).collect();
                let l = GpuArray::upload_f32(gpu, &ndarray::ArrayView1::from(&l).into_dyn())?;
                let mut rec = Recording::new(gpu);
                let (fixed, v, sup, l) = (rec.input(&self.fixed), rec.input(values), rec.input(support), rec.input(&l));
                let gradients: Vec<_> = gradients.iter().map(|a| rec.input(a)).collect();
                let x = SumsInputs { fixed, values: v, gradients: &gradients, support: sup, previous: None, log_ratios: Some((l, *b)) };
                let partials = registration_sums::record(&mut rec, SumsMode::MutualInformation, &g.dims, &centre, g.shifts, &x)?;
                let out = rec.output(partials);
                let p = download(gpu, rec.run()?.array(out), 0)?;
                let width = SumsMode::MutualInformation.width(g.dims.len());
                Ok((joint, (0..width).map(|k| p.iter().skip(k).step_by(width).sum()).collect()))
            }
            Samples::Host(h) => {
                let joint = registration_histogram::cpu(b, &g.fixed, &g.fixed_mask, &h.values, &h.support, None);
                let l = metric::log_ratios(b, &joint);
                let x = HostInputs {
                    fixed: &g.fixed,
                    mask: &g.fixed_mask,
                    values: &h.values,
                    gradients: &h.gradients,
                    support: &h.support,
                    previous: None,
                    log_ratios: Some((&l, *b)),
                };
                let sums = registration_sums::cpu(SumsMode::MutualInformation, &g.dims, &centre, g.shifts, &x);
                Ok((joint, sums))
            }
        }
    }

    /// −MI at the previous samples `s[0]` and the current `s[1]` over the points both cover, and
    /// the current samples' own count.
    pub fn compare_mutual_information(&self, gpu: &Gpu, b: &Bins, s: [&Samples; 2]) -> Result<(f64, f64, usize)> {
        let g = &self.grid;
        let joints: Vec<Vec<f64>> = match s {
            [Samples::Device { values: va, support: sa, .. }, Samples::Device { values: vb, support: sb, .. }] => {
                let mut rec = Recording::new(gpu);
                let fixed = rec.input(&self.fixed);
                let (va, sa, vb, sb) = (rec.input(va), rec.input(sa), rec.input(vb), rec.input(sb));
                let n = g.fixed.len();
                let hs = [
                    registration_histogram::record(&mut rec, b, n, fixed, va, sa, Some(sb))?,
                    registration_histogram::record(&mut rec, b, n, fixed, vb, sb, Some(sa))?,
                    registration_histogram::record(&mut rec, b, n, fixed, vb, sb, None)?,
                ];
                let outs = hs.map(|h| rec.output(h));
                let results = rec.run()?;
                outs.iter().map(|&o| download(gpu, results.array(o), b.bins * b.bins)).collect::<Result<_>>()?
            }
            [Samples::Host(a), Samples::Host(c)] => {
                let h = |x: &HostSamples, other: Option<&HostSamples>| {
                    registration_histogram::cpu(b, &g.fixed, &g.fixed_mask, &x.values, &x.support, other.map(|o| o.support.as_slice()))
                };
                vec![h(a, Some(c)), h(c, Some(a)), h(c, None)]
            }
            _ => return Err(crate::error::Error::Invalid("mutual information of samples on the device and on the host together".into())),
        };
        let count = joints[2].iter().sum::<f64>().round() as usize;
        Ok((metric::mi_value(b.bins, &joints[0]), metric::mi_value(b.bins, &joints[1]), count))
    }
}

/// A device array's values in f64 (`len` of them; 0: all).
fn download(gpu: &Gpu, a: GpuArray, len: usize) -> Result<Vec<f64>> {
    let len = if len == 0 { a.len() } else { len };
    Ok(GpuArray::download_joined::<f32>(gpu, &[a], &[len])?.iter().map(|&v| v as f64).collect())
}

impl Grid {
    /// The level's half diagonal in pixels of the full image.
    pub fn radius(&self) -> f64 {
        self.dims.iter().map(|&n| ((n as f64 - 1.0) * self.f / 2.0).powi(2)).sum::<f64>().sqrt()
    }
}
