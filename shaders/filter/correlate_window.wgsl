// Direct correlation over a window: y[o] = sum_j w[j] * x[origin + o + j], for every output
// coordinate o of a 1-4D output and every tap j of a 1-4D weight array of the same rank.
// Coordinates outside x are folded by the boundary MODE (scipy.ndimage's modes); constant mode
// reads `fill`. One thread per output; a window wholly inside x takes a path without folds.
// ndimage.correlate/convolve and scipy.signal's direct modes are all choices of `origin` and the
// output shape (src/ops/convolve). Host side: src/kernels/correlate_window.rs.
//
// Long windows (COMPENSATED, set by the host above a tap count) are summed in blocks of BLOCK
// taps (plain fma), the block sums added with Neumaier's compensation: a plain f32 sum of T taps
// errs by up to ~T·u (in constant mode one product is added T times and rounds the same way
// each time: 6.5e-5 at T = 30000), the blocked compensated one by ~BLOCK·u at worst. Blocks
// count taps, not kernel rows, so a kernel along a slow axis (rows of one tap) is blocked too.
// SPIR-V has no fast-math, so the compensation is kept as written; with COMPENSATED false the
// block test folds away and the sums are the plain ones.
#import common/grid
#import common/boundary
#import common/real

override MODE: u32 = 0u;  // Boundary::code()
override COMPENSATED: bool = false;

const BLOCK: u32 = 16u;  // taps summed plainly between compensated additions

// Neumaier's addition of v to the sum s.x, the low-order bits it loses gathered in s.y.
fn add_compensated(s: vec2<real>, v: real) -> vec2<real> {
    let t = s.x + v;
    let lost = select((v - t) + s.x, (s.x - t) + v, abs(s.x) >= abs(v));
    return vec2(t, s.y + lost);
}

// Mirrored in src/kernels/correlate_window.rs. Slots are numpy axis order padded on the left to 4D.
struct Params {
    out_dims: vec4<u32>,   // output shape
    in_dims: vec4<i32>,    // input shape
    in_stride: vec4<i32>,  // input strides in elements (the last is 1)
    origin: vec4<i32>,     // input coordinate that output 0 reads with tap 0
    k_dims: vec4<i32>,     // weight shape
    count: u32,            // output elements
    fill: f32,             // constant mode's value outside x (f32 precision in the f64 twin)
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<storage, read> x: array<real>;
@group(0) @binding(1) var<storage, read> w: array<real>;
@group(0) @binding(2) var<storage, read_write> y: array<real>;
@group(0) @binding(3) var<uniform> p: Params;

// Output coordinate of linear index i.
fn unravel(i: u32) -> vec4<i32> {
    let n = p.out_dims;
    let q3 = i / n.w;
    let q2 = q3 / n.z;
    let q1 = q2 / n.y;
    return vec4<i32>(vec4(q1, q2 - q1 * n.y, q3 - q2 * n.z, i - q3 * n.w));
}

// The whole window lies inside x: one linear index stepped by the strides.
fn inside_sum(base: vec4<i32>) -> real {
    let k = p.k_dims;
    let s = p.in_stride;
    var acc = real(0.0);
    var sum = vec2<real>(0.0);  // COMPENSATED: the blocks' sum and its lost bits
    var t = 0u;
    var ia = dot(base, s);
    for (var a = 0; a < k.x; a++) {
        var ib = ia;
        for (var b = 0; b < k.y; b++) {
            var ic = ib;
            for (var c = 0; c < k.z; c++) {
                for (var d = 0; d < k.w; d++) {
                    acc = fma(w[t], x[ic + d], acc);
                    t++;
                    if (COMPENSATED && t % BLOCK == 0u) {
                        sum = add_compensated(sum, acc);
                        acc = real(0.0);
                    }
                }
                ic += s.z;
            }
            ib += s.y;
        }
        ia += s.x;
    }
    if (COMPENSATED) {
        let total = add_compensated(sum, acc);
        return total.x + total.y;
    }
    return acc;
}

// Some of the window lies outside: each axis's coordinate folded once per loop level; a
// negative fold (constant mode, outside) makes every tap below it read `fill`.
fn boundary_sum(base: vec4<i32>) -> real {
    let k = p.k_dims;
    let n = p.in_dims;
    let s = p.in_stride;
    var acc = real(0.0);
    var sum = vec2<real>(0.0);  // COMPENSATED: the blocks' sum and its lost bits
    var t = 0u;
    for (var a = 0; a < k.x; a++) {
        let ca = boundary_fold(base.x + a, n.x, MODE);
        for (var b = 0; b < k.y; b++) {
            let cb = boundary_fold(base.y + b, n.y, MODE);
            for (var c = 0; c < k.z; c++) {
                let cc = boundary_fold(base.z + c, n.z, MODE);
                let outer_ok = min(ca, min(cb, cc)) >= 0;
                let row = max(ca, 0) * s.x + max(cb, 0) * s.y + max(cc, 0) * s.z;
                for (var d = 0; d < k.w; d++) {
                    let cd = boundary_fold(base.w + d, n.w, MODE);
                    let ok = outer_ok && cd >= 0;
                    // A dummy in-range index where constant mode supplies the value.
                    let v = select(real(p.fill), x[row + max(cd, 0)], ok);
                    acc = fma(w[t], v, acc);
                    t++;
                    if (COMPENSATED && t % BLOCK == 0u) {
                        sum = add_compensated(sum, acc);
                        acc = real(0.0);
                    }
                }
            }
        }
    }
    if (COMPENSATED) {
        let total = add_compensated(sum, acc);
        return total.x + total.y;
    }
    return acc;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let base = p.origin + unravel(i);
    let inside = all(base >= vec4(0)) && all(base + p.k_dims <= p.in_dims);
    if (inside) {
        y[i] = inside_sum(base);
    } else {
        y[i] = boundary_sum(base);
    }
}
