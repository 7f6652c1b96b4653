//! The CPU FFT on rustfft, with exactly the GPU path's semantics (numpy's): the reference for
//! the tests (in f64) and the fallback (in f32).

use ndarray::{ArrayD, Axis, IxDyn};
use num_complex::Complex;
use rustfft::{FftNum, FftPlanner};

use super::Norm;

fn scale<T: FftNum>(norm: Norm, n: usize, inverse: bool) -> T {
    T::from_f64(norm.factor(n, inverse)).unwrap()
}

/// Complex transform along each of `axes`.
pub fn c2c<T: FftNum>(x: &ArrayD<Complex<T>>, axes: &[usize], inverse: bool, norm: Norm) -> ArrayD<Complex<T>> {
    let mut y = x.clone();
    let mut planner = FftPlanner::<T>::new();
    for &a in axes {
        let n = y.shape()[a];
        let fft = if inverse { planner.plan_fft_inverse(n) } else { planner.plan_fft_forward(n) };
        let s = scale::<T>(norm, n, inverse);
        let mut line = vec![Complex::new(T::zero(), T::zero()); n];
        for mut lane in y.lanes_mut(Axis(a)) {
            for (d, v) in line.iter_mut().zip(lane.iter()) {
                *d = *v;
            }
            fft.process(&mut line);
            for (v, d) in lane.iter_mut().zip(&line) {
                *v = *d * s;
            }
        }
    }
    y
}

/// Real forward transform over `axes` (numpy.fft.rfftn): the last axis keeps n/2 + 1 values.
pub fn r2c<T: FftNum>(x: &ArrayD<T>, axes: &[usize], norm: Norm) -> ArrayD<Complex<T>> {
    let last = *axes.iter().max().unwrap();
    let full = c2c(&x.mapv(|v| Complex::new(v, T::zero())), &[last], false, norm);
    let h = x.shape()[last] / 2 + 1;
    let half = full.slice_axis(Axis(last), (0..h).into()).to_owned();
    let rest: Vec<usize> = axes.iter().copied().filter(|&a| a != last).collect();
    c2c(&half, &rest, false, norm)
}

/// Inverse real transform over `axes` (numpy.fft.irfftn) with output length `n` on the last one.
pub fn c2r<T: FftNum>(x: &ArrayD<Complex<T>>, axes: &[usize], n: usize, norm: Norm) -> ArrayD<T> {
    let last = *axes.iter().max().unwrap();
    let rest: Vec<usize> = axes.iter().copied().filter(|&a| a != last).collect();
    let half = c2c(x, &rest, true, norm);
    let mut dims = half.shape().to_vec();
    dims[last] = n;
    let h = half.shape()[last];
    let full = ArrayD::from_shape_fn(IxDyn(&dims), |idx| {
        let mut i = idx.clone();
        let k = i[last];
        if k < h {
            half[&i]
        } else {
            i[last] = n - k;
            half[&i].conj()
        }
    });
    c2c(&full, &[last], true, norm).mapv(|c| c.re)
}
