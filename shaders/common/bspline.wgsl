// B-spline sampling with scipy.ndimage's boundary modes (src/ops/interpolate/mod.rs): folding a
// coordinate or a tap into the array, the weights of orders 0, 1 and 3, and one sample. A kernel
// that imports this declares the sampled array as `x: array<f32>`. Arrays are seen with 4 axes
// (leading axes of one sample added); the pipeline is specialised by the mode and the taps per
// axis (order + 1: 1, 2 or 4), so the loops over taps unroll and the folding of other modes
// compiles away.

override MODE: u32 = 0u;
override RANK: u32 = 2u;  // the array's own axes: the last RANK of the four
override T0: u32 = 1u;
override T1: u32 = 1u;
override T2: u32 = 4u;
override T3: u32 = 4u;

const MIRROR: u32 = 0u;
const REFLECT: u32 = 1u;
const NEAREST: u32 = 2u;
const WRAP: u32 = 3u;
const GRID_WRAP: u32 = 4u;
const CONSTANT: u32 = 5u;
const GRID_CONSTANT: u32 = 6u;

// A coordinate outside 0..n-1 folded into it by `mode`; -1 where constant mode gives cval.
fn fold(c: f32, n: f32, mode: u32) -> f32 {
    if (c < 0.0) {
        switch mode {
            case MIRROR: {
                if (n <= 1.0) { return 0.0; }
                let s = 2.0 * n - 2.0;
                let v = s * trunc(-c / s) + c;
                return select(-v, v + s, v <= 1.0 - n);
            }
            case REFLECT: {
                if (n <= 1.0) { return 0.0; }
                let s = 2.0 * n;
                var v = c;
                if (v < -s) { v = s * trunc(-v / s) + v; }
                // (-v - 1 rounds to -1 for v within an ulp of 0: keep it inside.)
                return select(max(-v - 1.0, -0.99999994), v + s, v < -n);
            }
            case WRAP: {
                if (n <= 1.0) { return 0.0; }
                let s = n - 1.0;
                return c + s * (trunc(-c / s) + 1.0);
            }
            case GRID_WRAP: {
                if (n <= 1.0) { return 0.0; }
                return c + n * (trunc((-1.0 - c) / n) + 1.0);
            }
            case NEAREST: { return 0.0; }
            default: { return -1.0; }
        }
    }
    if (c > n - 1.0) {
        switch mode {
            case MIRROR: {
                if (n <= 1.0) { return 0.0; }
                let s = 2.0 * n - 2.0;
                let v = c - s * trunc(c / s);
                return select(v, s - v, v >= n);
            }
            case REFLECT: {
                if (n <= 1.0) { return 0.0; }
                let s = 2.0 * n;
                let v = c - s * trunc(c / s);
                return select(v, s - v - 1.0, v >= n);
            }
            case WRAP: {
                if (n <= 1.0) { return 0.0; }
                let s = n - 1.0;
                return c - s * trunc(c / s);
            }
            case GRID_WRAP: {
                if (n <= 1.0) { return 0.0; }
                return c - n * trunc(c / n);
            }
            case NEAREST: { return n - 1.0; }
            default: { return -1.0; }
        }
    }
    return c;
}

// Where a tap outside the array reads: folded by the mode (mirror for constant and wrap, as
// scipy's spline boundary); -1 where grid-constant reads cval.
fn tap(i: i32, n: u32) -> i32 {
    if (i >= 0 && i < i32(n)) {
        return i;
    }
    if (MODE == GRID_CONSTANT) {
        return -1;
    }
    let m = select(MODE, MIRROR, MODE == CONSTANT || MODE == WRAP);
    return i32(fold(f32(i), f32(n), m));
}

fn is_nan(v: f32) -> bool {
    // On the bits: compilers may assume comparisons see no NaN.
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

// The taps along one axis: element offsets, weights (zero past the order's taps) and, for
// grid-constant, whether each lies inside; `cval` where the coordinate alone decides the sample.
struct Taps {
    at: vec4<u32>,
    w: vec4<f32>,
    inside: vec4<bool>,
    cval: bool,
}

// Axis of `n` samples and element stride `stride` read with `taps` taps at coordinate `c`.
fn axis_taps(c: f32, n: u32, stride: u32, taps: u32) -> Taps {
    var t: Taps;
    var v = c;
    // Folded below -1 (constant outside the array): cval. (grid-constant and nearest read their
    // taps wherever the coordinate is.)
    let unfolded = MODE == GRID_CONSTANT || MODE == NEAREST;
    if (!unfolded) {
        v = fold(v, f32(n), MODE);
    }
    t.cval = is_nan(c) || (!unfolded && v <= -1.0);
    let base = select(floor(v), floor(v + 0.5), taps == 1u);
    let start = i32(base) - select(0, 1, taps == 4u);
    let f = v - floor(v);
    let g = 1.0 - f;
    if (taps == 1u) {
        t.w = vec4<f32>(1.0, 0.0, 0.0, 0.0);
    } else if (taps == 2u) {
        t.w = vec4<f32>(g, f, 0.0, 0.0);
    } else {
        t.w = vec4<f32>(g * g * g, 4.0 - 6.0 * f * f + 3.0 * f * f * f, 4.0 - 6.0 * g * g + 3.0 * g * g * g, f * f * f) / 6.0;
    }
    var j = vec4<i32>(start) + vec4<i32>(0, 1, 2, 3);
    if (start < 0 || start + i32(taps) > i32(n)) {
        j = vec4<i32>(tap(j.x, n), tap(j.y, n), tap(j.z, n), tap(j.w, n));
    }
    t.inside = j >= vec4<i32>(0);
    t.at = vec4<u32>(max(j, vec4<i32>(0))) * stride;
    return t;
}

// The weighted taps of four axes (T0..T3 of them), slowest first. The loops below are the
// readable form; src/kernels/map_coordinates.rs writes them out per specialisation.
fn tap_sum(a0: Taps, a1: Taps, a2: Taps, a3: Taps, cval: f32) -> f32 {
    // unrolled: begin
    let checked = MODE == GRID_CONSTANT;
    var sum = 0.0;
    for (var k0 = 0u; k0 < T0; k0++) {
        var s1 = 0.0;
        for (var k1 = 0u; k1 < T1; k1++) {
            var s2 = 0.0;
            for (var k2 = 0u; k2 < T2; k2++) {
                let row = a0.at[k0] + a1.at[k1] + a2.at[k2];
                let row_in = a0.inside[k0] && a1.inside[k1] && a2.inside[k2];
                var s3 = 0.0;
                for (var k3 = 0u; k3 < T3; k3++) {
                    var v = x[row + a3.at[k3]];
                    if (checked && !(row_in && a3.inside[k3])) {
                        v = cval;
                    }
                    s3 += a3.w[k3] * v;
                }
                s2 += a2.w[k2] * s3;
            }
            s1 += a1.w[k1] * s2;
        }
        sum += a0.w[k0] * s1;
    }
    return sum;
    // unrolled: end
}

// `x` (axes `dims`, slowest first) at coordinates `c`; cval where the mode says so.
fn sample(c: vec4<f32>, dims: vec4<u32>, cval: f32) -> f32 {
    // The leading axes added to make four read their one sample, without folding.
    var a0 = Taps(vec4<u32>(0u), vec4<f32>(1.0, 0.0, 0.0, 0.0), vec4<bool>(true), false);
    var a1 = a0;
    var a2 = a0;
    let a3 = axis_taps(c.w, dims.w, 1u, T3);
    if (RANK >= 2u) {
        a2 = axis_taps(c.z, dims.z, dims.w, T2);
    }
    if (RANK >= 3u) {
        a1 = axis_taps(c.y, dims.y, dims.z * dims.w, T1);
    }
    if (RANK >= 4u) {
        a0 = axis_taps(c.x, dims.x, dims.y * dims.z * dims.w, T0);
    }
    if (a0.cval || a1.cval || a2.cval || a3.cval) {
        return cval;
    }
    return tap_sum(a0, a1, a2, a3, cval);
}
