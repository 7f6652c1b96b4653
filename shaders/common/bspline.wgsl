// B-spline sampling from a storage buffer: the taps of orders 0, 1 and 3 along each axis and
// one sample (common/spline_fold for the modes). A kernel that imports this declares the sampled
// array as `x: array<f32>`; the pipeline is specialised by the mode and the taps per axis, so the
// loops over taps unroll and the folding of other modes compiles away.
#import common/spline_fold

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
    if (taps == 1u) {
        t.w = vec4<f32>(1.0, 0.0, 0.0, 0.0);
    } else if (taps == 2u) {
        t.w = vec4<f32>(1.0 - f, f, 0.0, 0.0);
    } else {
        t.w = cubic_weights(f);
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
