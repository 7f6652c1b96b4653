//! CPU references for the layout ops, written without the gather kernel's index arithmetic:
//! ndarray axis permutation, slicing and concatenation, and boundaries found by walking outward
//! from the array's edge one sample at a time. Same semantics as the GPU ops in `super`;
//! arguments are expected valid (the GPU ops validate them).

use ndarray::{concatenate, ArrayD, Axis, IxDyn, Slice};

use crate::kernels::boundary::Boundary;

pub fn permute<T: Clone>(x: &ArrayD<T>, axes: &[usize]) -> ArrayD<T> {
    x.view().permuted_axes(IxDyn(axes)).as_standard_layout().into_owned()
}

pub fn transpose<T: Clone>(x: &ArrayD<T>) -> ArrayD<T> {
    x.t().as_standard_layout().into_owned()
}

pub fn crop<T: Clone>(x: &ArrayD<T>, start: &[usize], size: &[usize]) -> ArrayD<T> {
    x.slice_each_axis(|ax| Slice::from(start[ax.axis.0]..start[ax.axis.0] + size[ax.axis.0])).to_owned()
}

pub fn flip<T: Clone>(x: &ArrayD<T>, axes: &[usize]) -> ArrayD<T> {
    let mut v = x.view();
    for &a in axes {
        v.invert_axis(Axis(a));
    }
    v.as_standard_layout().into_owned()
}

/// numpy.roll: along each axis the last `shift mod n` elements move to the front.
pub fn roll<T: Clone>(x: &ArrayD<T>, shifts: &[isize], axes: &[usize]) -> ArrayD<T> {
    let mut out = x.clone();
    for (&s, &a) in shifts.iter().zip(axes) {
        let n = out.len_of(Axis(a));
        let k = s.rem_euclid(n as isize) as usize;
        out = rotate_front(&out, a, n - k);
    }
    out
}

/// numpy.fft.fftshift: the back half (the longer one on odd lengths) moves to the front.
pub fn fftshift<T: Clone>(x: &ArrayD<T>, axes: &[usize]) -> ArrayD<T> {
    let mut out = x.clone();
    for &a in axes {
        let n = out.len_of(Axis(a));
        out = rotate_front(&out, a, n.div_ceil(2));
    }
    out
}

/// numpy.fft.ifftshift: the back half (the shorter one on odd lengths) moves to the front.
pub fn ifftshift<T: Clone>(x: &ArrayD<T>, axes: &[usize]) -> ArrayD<T> {
    let mut out = x.clone();
    for &a in axes {
        let n = out.len_of(Axis(a));
        out = rotate_front(&out, a, n / 2);
    }
    out
}

/// `x[at..] ++ x[..at]` along `axis`.
fn rotate_front<T: Clone>(x: &ArrayD<T>, axis: usize, at: usize) -> ArrayD<T> {
    let back = x.slice_axis(Axis(axis), Slice::from(at..));
    let front = x.slice_axis(Axis(axis), Slice::from(..at));
    concatenate(Axis(axis), &[back, front]).unwrap()
}

/// numpy.pad / scipy.ndimage boundary semantics, one axis after another (as numpy pads), each
/// axis by an index table: output position -> input index. `fill` is what `Constant` writes
/// (its value in the element type).
pub fn pad<T: Clone>(x: &ArrayD<T>, pads: &[(usize, usize)], boundary: Boundary, fill: T) -> ArrayD<T> {
    let mut out = x.clone();
    for (axis, &(before, after)) in pads.iter().enumerate() {
        let n = out.len_of(Axis(axis));
        let table = pad_table(n, before, after, boundary);
        out = out.select(Axis(axis), &table);
        if matches!(boundary, Boundary::Constant(_)) {
            out.slice_axis_mut(Axis(axis), Slice::from(..before)).fill(fill.clone());
            out.slice_axis_mut(Axis(axis), Slice::from(before + n..)).fill(fill.clone());
        }
    }
    out
}

/// Input index of every position of `before + n + after`: the walk outward from each edge.
/// (Constant mode gets any valid index there; `pad` overwrites those.)
fn pad_table(n: usize, before: usize, after: usize, boundary: Boundary) -> Vec<usize> {
    let mut left = walk(n, 0, -1, before, boundary);
    left.reverse();
    let right = walk(n, n - 1, 1, after, boundary);
    left.into_iter().chain(0..n).chain(right).collect()
}

/// `steps` samples met walking outward from edge sample `pos` in direction `dir`, one at a time:
/// at an end, reflect repeats the edge sample and turns, mirror turns without repeating it,
/// wrap jumps to the other end, nearest (and constant) stays.
fn walk(n: usize, mut pos: usize, mut dir: isize, steps: usize, boundary: Boundary) -> Vec<usize> {
    let mut seen = Vec::with_capacity(steps);
    for _ in 0..steps {
        let next = pos as isize + dir;
        if (0..n as isize).contains(&next) {
            pos = next as usize;
        } else {
            match boundary {
                Boundary::Reflect => dir = -dir,
                Boundary::Mirror if n > 1 => {
                    dir = -dir;
                    pos = (pos as isize + dir) as usize;
                }
                Boundary::Wrap => pos = if dir > 0 { 0 } else { n - 1 },
                _ => {}
            }
        }
        seen.push(pos);
    }
    seen
}
