//! The layout ops (one general gather kernel) against CPU references derived independently
//! (ndarray slicing and concatenation, boundary walks), bit for bit: a copy must be exact. Every
//! op runs on f32 and complex inputs of every shape, with temporaries poisoned (NaN) so an
//! element the kernel leaves unwritten fails.

use crate::tests::common;
use common::*;

use std::fmt::Debug;

use lucent::kernels::boundary::Boundary;
use lucent::kernels::gather::{self, AxisMap};
use lucent::ops::layout::{self, cpu};
use lucent::{Buf, Dtype, Error, GpuArray, Recording, Results};
use ndarray::{ArrayD, IxDyn};
use num_complex::Complex32;
use rand::Rng;

/// SHAPES plus more 3D and 4D ones, where permutations and multi-axis boundaries get interesting,
/// and each thread's outputs (256 apart) cross several axes.
fn shapes() -> Vec<&'static [usize]> {
    let more: &[&[usize]] = &[&[3, 4, 1, 6], &[2, 5, 3, 7], &[3, 7, 11, 5], &[2, 3, 300]];
    SHAPES.iter().chain(more).copied().collect()
}

/// Every boundary; the constant is one each element type can hold (u32 needs a whole number).
fn boundaries(constant: f32) -> [Boundary; 5] {
    [Boundary::Constant(constant), Boundary::Nearest, Boundary::Reflect, Boundary::Mirror, Boundary::Wrap]
}

/// The element types every op is checked on.
trait Elem: Clone + Copy + Debug + 'static {
    /// A pad constant this type holds exactly.
    const CONSTANT: f32;
    fn random(n: usize) -> Vec<Self>;
    fn from_f32(v: f32) -> Self;
    fn upload(rec: &mut Recording, a: &ArrayD<Self>) -> Buf;
    fn fetch(r: &Results, d: lucent::Download) -> ArrayD<Self>;
    /// The stored bits: equal bits is what a copy promises (and NaN poison never matches).
    fn bits(self) -> u64;
}

impl Elem for f32 {
    const CONSTANT: f32 = -1.5;
    fn random(n: usize) -> Vec<f32> {
        random(n)
    }
    fn from_f32(v: f32) -> f32 {
        v
    }
    fn upload(rec: &mut Recording, a: &ArrayD<f32>) -> Buf {
        rec.upload_f32(&a.view()).unwrap()
    }
    fn fetch(r: &Results, d: lucent::Download) -> ArrayD<f32> {
        r.f32(d).unwrap()
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

impl Elem for Complex32 {
    const CONSTANT: f32 = -1.5;
    fn random(n: usize) -> Vec<Complex32> {
        random_complex(n)
    }
    fn from_f32(v: f32) -> Complex32 {
        Complex32::new(v, 0.0)
    }
    fn upload(rec: &mut Recording, a: &ArrayD<Complex32>) -> Buf {
        rec.upload_c32(&a.view()).unwrap()
    }
    fn fetch(r: &Results, d: lucent::Download) -> ArrayD<Complex32> {
        r.c32(d).unwrap()
    }
    fn bits(self) -> u64 {
        (self.re.to_bits() as u64) << 32 | self.im.to_bits() as u64
    }
}

/// There is no u32 upload: random words go up as f32 and are viewed as u32.
impl Elem for u32 {
    const CONSTANT: f32 = 7.0;
    fn random(n: usize) -> Vec<u32> {
        let mut rng = rand::rng();
        (0..n).map(|_| rng.random()).collect()
    }
    fn from_f32(v: f32) -> u32 {
        v as u32
    }
    fn upload(rec: &mut Recording, a: &ArrayD<u32>) -> Buf {
        let words = a.mapv(f32::from_bits);
        let array = GpuArray::upload_f32(gpu(), &words.view()).unwrap().reinterpret(a.shape(), Dtype::U32).unwrap();
        rec.input(&array)
    }
    fn fetch(r: &Results, d: lucent::Download) -> ArrayD<u32> {
        r.u32(d).unwrap()
    }
    fn bits(self) -> u64 {
        self as u64
    }
}

#[derive(Clone, Debug)]
enum Op {
    Permute(Vec<usize>),
    Transpose,
    Pad(Vec<(usize, usize)>, Boundary),
    Crop(Vec<usize>, Vec<usize>),
    Flip(Vec<usize>),
    Roll(Vec<isize>, Vec<usize>),
    FftShift(Vec<usize>),
    IfftShift(Vec<usize>),
}

impl Op {
    fn record(&self, rec: &mut Recording, x: Buf) -> lucent::Result<Buf> {
        match self {
            Op::Permute(axes) => layout::permute(rec, x, axes),
            Op::Transpose => layout::transpose(rec, x),
            Op::Pad(pads, b) => layout::pad(rec, x, pads, *b),
            Op::Crop(start, size) => layout::crop(rec, x, start, size),
            Op::Flip(axes) => layout::flip(rec, x, axes),
            Op::Roll(shifts, axes) => layout::roll(rec, x, shifts, axes),
            Op::FftShift(axes) => layout::fftshift(rec, x, axes),
            Op::IfftShift(axes) => layout::ifftshift(rec, x, axes),
        }
    }

    fn reference<T: Elem>(&self, x: &ArrayD<T>) -> ArrayD<T> {
        match self {
            Op::Permute(axes) => cpu::permute(x, axes),
            Op::Transpose => cpu::transpose(x),
            Op::Pad(pads, b) => {
                let fill = if let Boundary::Constant(k) = b { T::from_f32(*k) } else { T::from_f32(0.0) };
                cpu::pad(x, pads, *b, fill)
            }
            Op::Crop(start, size) => cpu::crop(x, start, size),
            Op::Flip(axes) => cpu::flip(x, axes),
            Op::Roll(shifts, axes) => cpu::roll(x, shifts, axes),
            Op::FftShift(axes) => cpu::fftshift(x, axes),
            Op::IfftShift(axes) => cpu::ifftshift(x, axes),
        }
    }
}

fn assert_same<T: Elem>(got: &ArrayD<T>, want: &ArrayD<T>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let first_bad = got.iter().zip(want.iter()).position(|(g, w)| g.bits() != w.bits());
    if let Some(i) = first_bad {
        let (g, w) = (got.iter().nth(i).unwrap(), want.iter().nth(i).unwrap());
        panic!("{what}: element {i} (row-major) is {g:?}, expected {w:?}");
    }
}

/// Runs every op on one fresh random input of shape `dims` in one poisoned recording and
/// compares each result with its CPU reference.
fn check_ops<T: Elem>(dims: &[usize], ops: &[Op]) {
    let n = dims.iter().product();
    let x = ArrayD::from_shape_vec(IxDyn(dims), T::random(n)).unwrap();
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let xb = T::upload(&mut rec, &x);
    let downloads: Vec<_> = ops
        .iter()
        .map(|op| {
            let y = op.record(&mut rec, xb).unwrap_or_else(|e| panic!("{op:?} on {dims:?}: {e}"));
            rec.download(y)
        })
        .collect();
    let results = rec.run().unwrap();
    for (op, d) in ops.iter().zip(downloads) {
        assert_same(&T::fetch(&results, d), &op.reference(&x), &format!("{op:?} on {dims:?} {}", std::any::type_name::<T>()));
    }
}

fn check_all_types(dims: &[usize], ops: &[Op]) {
    check_ops::<f32>(dims, ops);
    check_ops::<Complex32>(dims, ops);
    check_ops::<u32>(dims, ops);
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for at in 0..n {
            let mut q = p.clone();
            q.insert(at, n - 1);
            out.push(q);
        }
    }
    out
}

/// Every subset of `0..n`, as sorted axis lists.
fn subsets(n: usize) -> Vec<Vec<usize>> {
    (0..1usize << n).map(|m| (0..n).filter(|&a| m >> a & 1 == 1).collect()).collect()
}

#[test]
fn permute_and_transpose_match_cpu() {
    for dims in shapes() {
        let mut ops: Vec<Op> = permutations(dims.len()).into_iter().map(Op::Permute).collect();
        ops.push(Op::Transpose);
        check_all_types(dims, &ops);
    }
}

#[test]
fn pad_every_boundary_matches_cpu() {
    for dims in shapes() {
        check_ops::<f32>(dims, &pad_ops(dims, f32::CONSTANT));
        check_ops::<Complex32>(dims, &pad_ops(dims, Complex32::CONSTANT));
        check_ops::<u32>(dims, &pad_ops(dims, u32::CONSTANT));
    }
}

/// Every boundary with narrow pads, none, and random widths up to twice the axis (where reflect
/// and mirror repeat); large axes get narrower random pads to keep the test quick.
fn pad_ops(dims: &[usize], constant: f32) -> Vec<Op> {
    let mut rng = rand::rng();
    let mut wide = |n: usize| rng.random_range(0..=(2 * n + 1).min(40));
    let mut ops = Vec::new();
    for b in boundaries(constant) {
        ops.push(Op::Pad(dims.iter().map(|_| (1, 2)).collect(), b));
        ops.push(Op::Pad(dims.iter().map(|_| (0, 0)).collect(), b));
        ops.push(Op::Pad(dims.iter().map(|&n| (wide(n), wide(n))).collect(), b));
    }
    ops
}

#[test]
fn crop_matches_cpu() {
    let mut rng = rand::rng();
    for dims in shapes() {
        let mut ops = vec![Op::Crop(vec![0; dims.len()], dims.to_vec())];
        ops.push(Op::Crop(dims.iter().map(|&n| n - 1).collect(), vec![1; dims.len()]));
        for _ in 0..4 {
            let size: Vec<usize> = dims.iter().map(|&n| rng.random_range(1..=n)).collect();
            let start = dims.iter().zip(&size).map(|(&n, &s)| rng.random_range(0..=n - s)).collect();
            ops.push(Op::Crop(start, size));
        }
        check_all_types(dims, &ops);
    }
}

#[test]
fn flip_matches_cpu() {
    for dims in shapes() {
        let ops: Vec<Op> = subsets(dims.len()).into_iter().map(Op::Flip).collect();
        check_all_types(dims, &ops);
    }
}

#[test]
fn roll_matches_cpu() {
    let mut rng = rand::rng();
    for dims in shapes() {
        let mut ops = Vec::new();
        for axes in subsets(dims.len()) {
            // Shifts of either sign, also beyond the axis length.
            let shifts = axes.iter().map(|&a| rng.random_range(-3 * dims[a] as i64..=3 * dims[a] as i64) as isize).collect();
            ops.push(Op::Roll(shifts, axes));
        }
        // numpy sums the shifts of an axis listed twice.
        ops.push(Op::Roll(vec![2, -5], vec![0, 0]));
        check_all_types(dims, &ops);
    }
}

#[test]
fn fftshift_and_ifftshift_match_cpu() {
    for dims in shapes() {
        let mut ops = Vec::new();
        for axes in subsets(dims.len()) {
            ops.push(Op::FftShift(axes.clone()));
            ops.push(Op::IfftShift(axes));
        }
        check_all_types(dims, &ops);
    }
}

/// fftshift(ifftshift(x)) = ifftshift(fftshift(x)) = x, on odd lengths where the two differ.
#[test]
fn fftshift_inverts_ifftshift() {
    let odd: &[&[usize]] = &[&[1], &[7], &[5, 9], &[3, 5, 7, 1], &[4, 3, 6, 5]];
    for &dims in odd {
        let all: Vec<usize> = (0..dims.len()).collect();
        let x = ArrayD::from_shape_vec(IxDyn(dims), random_complex(dims.iter().product())).unwrap();
        let mut rec = Recording::new(gpu());
        rec.set_poison(true);
        let xb = rec.upload_c32(&x.view()).unwrap();
        let a = layout::ifftshift(&mut rec, xb, &all).unwrap();
        let a = layout::fftshift(&mut rec, a, &all).unwrap();
        let b = layout::fftshift(&mut rec, xb, &all).unwrap();
        let b = layout::ifftshift(&mut rec, b, &all).unwrap();
        let (da, db) = (rec.download(a), rec.download(b));
        let r = rec.run().unwrap();
        assert_same(&r.c32(da).unwrap(), &x, &format!("fftshift(ifftshift) on {dims:?}"));
        assert_same(&r.c32(db).unwrap(), &x, &format!("ifftshift(fftshift) on {dims:?}"));
    }
}

/// numpy's own description: fftshift puts fftfreq's order (0, 1, .., -2, -1) in ascending order,
/// and ifftshift takes it back; checked on lengths 1..=10 against that definition directly.
#[test]
fn fftshift_sorts_fftfreq() {
    for n in 1..=10usize {
        let freq: Vec<f32> = (0..n as i64).map(|k| if k < n.div_ceil(2) as i64 { k } else { k - n as i64 } as f32).collect();
        let ascending: Vec<f32> = (0..n as i64).map(|k| (k - n as i64 / 2) as f32).collect();
        let mut rec = Recording::new(gpu());
        rec.set_poison(true);
        let f = rec.upload_f32(&ArrayD::from_shape_vec(IxDyn(&[n]), freq.clone()).unwrap().view()).unwrap();
        let s = rec.upload_f32(&ArrayD::from_shape_vec(IxDyn(&[n]), ascending.clone()).unwrap().view()).unwrap();
        let shifted = layout::fftshift(&mut rec, f, &[0]).unwrap();
        let back = layout::ifftshift(&mut rec, s, &[0]).unwrap();
        let (d1, d2) = (rec.download(shifted), rec.download(back));
        let r = rec.run().unwrap();
        assert_eq!(r.f32(d1).unwrap().into_raw_vec_and_offset().0, ascending, "fftshift, n = {n}");
        assert_eq!(r.f32(d2).unwrap().into_raw_vec_and_offset().0, freq, "ifftshift, n = {n}");
    }
}

/// The boundary table in the docs and numpy.pad's results for pads wider than the array,
/// written out by hand: a check of the semantics that does not go through either implementation.
#[test]
fn pad_known_answers() {
    let cases: &[(&[f32], (usize, usize), Boundary, &[f32])] = &[
        (&[1., 2., 3., 4.], (3, 3), Boundary::Constant(9.), &[9., 9., 9., 1., 2., 3., 4., 9., 9., 9.]),
        (&[1., 2., 3., 4.], (3, 3), Boundary::Nearest, &[1., 1., 1., 1., 2., 3., 4., 4., 4., 4.]),
        (&[1., 2., 3., 4.], (3, 3), Boundary::Reflect, &[3., 2., 1., 1., 2., 3., 4., 4., 3., 2.]),
        (&[1., 2., 3., 4.], (3, 3), Boundary::Mirror, &[4., 3., 2., 1., 2., 3., 4., 3., 2., 1.]),
        (&[1., 2., 3., 4.], (3, 3), Boundary::Wrap, &[2., 3., 4., 1., 2., 3., 4., 1., 2., 3.]),
        // np.pad([1, 2, 3], (0, 5), 'reflect') and 'symmetric', and their left-hand twins.
        (&[1., 2., 3.], (0, 5), Boundary::Mirror, &[1., 2., 3., 2., 1., 2., 3., 2.]),
        (&[1., 2., 3.], (0, 5), Boundary::Reflect, &[1., 2., 3., 3., 2., 1., 1., 2.]),
        (&[1., 2., 3.], (5, 0), Boundary::Mirror, &[2., 1., 2., 3., 2., 1., 2., 3.]),
        (&[1., 2., 3.], (5, 0), Boundary::Reflect, &[2., 3., 3., 2., 1., 1., 2., 3.]),
        (&[1., 2., 3.], (4, 4), Boundary::Wrap, &[3., 1., 2., 3., 1., 2., 3., 1., 2., 3., 1.]),
        // A length-1 axis: every mode but constant repeats its element.
        (&[5.], (2, 2), Boundary::Mirror, &[5.; 5]),
        (&[5.], (2, 2), Boundary::Reflect, &[5.; 5]),
    ];
    for &(x, pads, b, want) in cases {
        let mut rec = Recording::new(gpu());
        rec.set_poison(true);
        let xb = rec.upload_f32(&ArrayD::from_shape_vec(IxDyn(&[x.len()]), x.to_vec()).unwrap().view()).unwrap();
        let y = layout::pad(&mut rec, xb, &[pads], b).unwrap();
        let d = rec.download(y);
        let got = rec.run().unwrap().f32(d).unwrap().into_raw_vec_and_offset().0;
        assert_eq!(got, want, "pad {x:?} by {pads:?} with {b:?}");
        let x = ArrayD::from_shape_vec(IxDyn(&[x.len()]), x.to_vec()).unwrap();
        let fill = if let Boundary::Constant(k) = b { k } else { 0.0 };
        assert_eq!(cpu::pad(&x, &[pads], b, fill).into_raw_vec_and_offset().0, want, "cpu::pad {x:?} by {pads:?} with {b:?}");
    }
}

/// The general gather with permutation, flips, offsets and a boundary all at once (which no
/// single op exercises) against its CPU twin.
#[test]
fn general_gather_matches_its_twin() {
    let mut rng = rand::rng();
    for dims in shapes() {
        for b in boundaries(-1.5) {
            let perm = &permutations(dims.len())[rng.random_range(0..(1..=dims.len()).product::<usize>())];
            let maps: Vec<AxisMap> = perm
                .iter()
                .map(|&a| {
                    let n = dims[a] as i64;
                    AxisMap {
                        len: rng.random_range(1..=3 * n.min(20) as usize),
                        src_axis: a,
                        origin: rng.random_range(-2 * n..=2 * n),
                        step: if rng.random_bool(0.5) { 1 } else { -1 },
                    }
                })
                .collect();
            let x = random_complex(dims.iter().product());
            let xa = ArrayD::from_shape_vec(IxDyn(dims), x.clone()).unwrap();
            let mut rec = Recording::new(gpu());
            rec.set_poison(true);
            let xb = rec.upload_c32(&xa.view()).unwrap();
            let y = gather::record(&mut rec, xb, &maps, b).unwrap();
            let d = rec.download(y);
            let got = rec.run().unwrap().c32(d).unwrap();
            let want = gather::cpu(&x, dims, &maps, b, Complex32::new(-1.5, 0.0));
            let out_dims: Vec<usize> = maps.iter().map(|m| m.len).collect();
            assert_same(&got, &ArrayD::from_shape_vec(IxDyn(&out_dims), want).unwrap(), &format!("{maps:?} {b:?} on {dims:?}"));
        }
    }
}

fn invalid<T>(r: lucent::Result<T>) -> bool {
    matches!(r, Err(Error::Invalid(_)))
}

#[test]
fn bad_input_is_an_error() {
    let mut rec = Recording::new(gpu());
    let x = rec.temp(&[3, 4, 5], Dtype::F32).unwrap();
    assert!(invalid(layout::permute(&mut rec, x, &[0, 1])), "too few axes");
    assert!(invalid(layout::permute(&mut rec, x, &[0, 1, 1])), "not a permutation");
    assert!(invalid(layout::permute(&mut rec, x, &[0, 1, 3])), "axis out of range");
    assert!(invalid(layout::flip(&mut rec, x, &[2, 2])), "repeated axis");
    assert!(invalid(layout::flip(&mut rec, x, &[3])), "axis out of range");
    assert!(invalid(layout::fftshift(&mut rec, x, &[1, 1])), "repeated axis");
    assert!(invalid(layout::ifftshift(&mut rec, x, &[5])), "axis out of range");
    assert!(invalid(layout::roll(&mut rec, x, &[1], &[0, 1])), "shifts and axes differ in length");
    assert!(invalid(layout::roll(&mut rec, x, &[1], &[3])), "axis out of range");
    assert!(invalid(layout::pad(&mut rec, x, &[(1, 1)], Boundary::Wrap)), "too few pad widths");
    assert!(invalid(layout::crop(&mut rec, x, &[0, 0, 1], &[3, 4, 5])), "window leaves the array");
    assert!(invalid(layout::crop(&mut rec, x, &[usize::MAX, 0, 0], &[1, 1, 1])), "window start overflows");
    assert!(invalid(layout::crop(&mut rec, x, &[0, 0], &[1, 1])), "too few axes");
    assert!(invalid(layout::pad(&mut rec, x, &[(0, 0), (usize::MAX, 1), (0, 0)], Boundary::Wrap)), "pad overflows");
    assert!(layout::roll(&mut rec, x, &[isize::MAX, isize::MIN], &[0, 0]).is_ok(), "any shift is fine");
    assert!(matches!(layout::crop(&mut rec, x, &[0, 0, 0], &[1, 0, 1]), Err(Error::Empty(_))), "empty crop");
    let huge = layout::pad(&mut rec, x, &[(0, 0), (0, 0), (1 << 31, 0)], Boundary::Reflect);
    assert!(matches!(huge, Err(Error::TooLarge { .. })), "output beyond the buffer limit");
    let same = |a: usize| AxisMap::identity(a, [3, 4, 5][a]);
    let far = AxisMap { origin: 1 << 31, ..same(2) };
    assert!(invalid(gather::record(&mut rec, x, &[same(0), same(1), far], Boundary::Wrap)), "beyond i32");
    assert!(invalid(gather::record(&mut rec, x, &[same(0), same(0), same(2)], Boundary::Wrap)), "not a permutation");
    assert!(invalid(gather::record_into(&mut rec, x, x, &[same(0), same(1), same(2)], Boundary::Wrap)), "in place");
    let u = rec.temp(&[3], Dtype::U32).unwrap();
    for k in [-1.0, 0.5, f32::NAN, 4294967296.0] {
        assert!(invalid(layout::pad(&mut rec, u, &[(1, 1)], Boundary::Constant(k))), "u32 pad constant {k}");
    }
    let y = rec.temp(&[3, 4, 5], Dtype::C32).unwrap();
    assert!(matches!(gather::record_into(&mut rec, x, y, &[same(0), same(1), same(2)], Boundary::Wrap), Err(Error::Dtype(_))));
}
