// B-spline sampling from a storage buffer: the order + 1 taps (orders 0-5) along each axis and
// one sample (common/spline_fold for the modes). A kernel that imports this declares the sampled
// array as `x: array<real>`; the pipeline is specialised by the mode and the taps per axis, so the
// folding of other modes compiles away and the loops over taps have known counts.
#import common/spline_fold

// The taps along one axis: element offsets, weights (zero past the order's taps) and, for
// grid-constant, whether each lies inside; `cval` where the coordinate alone decides the sample.
// Taps 1-4 in vectors (orders up to 3 read only these, in registers: arrays indexed in loops
// cost the cubic kernels a third of their speed), taps 5-6 of orders 4 and 5 beside them.
struct Taps {
    at: vec4<u32>,
    w: vec4<real>,
    inside: vec4<bool>,
    at2: vec2<u32>,
    w2: vec2<real>,
    inside2: vec2<bool>,
    cval: bool,
}

// An axis of one sample, read once with weight 1 (the leading axes added to make four).
fn lone() -> Taps {
    return Taps(vec4<u32>(0u), vec4<real>(1.0, 0.0, 0.0, 0.0), vec4<bool>(true), vec2<u32>(0u), vec2<real>(0.0), vec2<bool>(true), false);
}

// Tap k of an axis (for loops over the taps of orders 4 and 5).
fn tap_at(t: Taps, k: u32) -> u32 {
    return select(t.at2[k & 1u], t.at[k & 3u], k < 4u);
}

fn tap_w(t: Taps, k: u32) -> real {
    return select(t.w2[k & 1u], t.w[k & 3u], k < 4u);
}

fn tap_inside(t: Taps, k: u32) -> bool {
    return select(t.inside2[k & 1u], t.inside[k & 3u], k < 4u);
}

// The weights of taps 1-4 and 5-6.
struct Weights {
    lo: vec4<real>,
    hi: vec2<real>,
}

// The B-spline weights of the `order`'s taps at `x` from the middle tap's sample (in [0, 1) for
// odd orders, [-0.5, 0.5) for even ones): scipy's get_spline_interpolation_weights, each weight
// written as a polynomial without cancellation in f32 (Horner in the distance u ∈ [0, 1] from
// the spline's next knot outward), since the coefficients of orders 4-5 alternate with up to 7×
// the samples' amplitude and scale the weights' errors by that.
fn spline_weights(x: real, order: u32) -> Weights {
    switch order {
        case 0u: {
            return Weights(vec4<real>(1.0, 0.0, 0.0, 0.0), vec2<real>(0.0));
        }
        case 1u: {
            return Weights(vec4<real>(1.0 - x, x, 0.0, 0.0), vec2<real>(0.0));
        }
        case 2u: {
            return Weights(vec4<real>(0.5 * (0.5 - x) * (0.5 - x), 0.75 - x * x, 0.5 * (0.5 + x) * (0.5 + x), 0.0), vec2<real>(0.0));
        }
        case 3u: {
            return Weights(cubic_weights(x), vec2<real>(0.0));
        }
        case 4u: {
            let a = 0.5 - x;
            let b = 0.5 + x;
            let t = x * x;
            let middle = t * (t * 0.25 - 0.625) + 115.0 / 192.0;
            return Weights(vec4<real>(a * a * a * a / 24.0, quartic_side(a), middle, quartic_side(b)), vec2<real>(b * b * b * b / 24.0, 0.0));
        }
        default: {
            let y = 1.0 - x;
            let lo = vec4<real>(y * y * y * y * y / 120.0, quintic_outer(y), quintic_inner(x), quintic_inner(y));
            return Weights(lo, vec2<real>(quintic_outer(x), x * x * x * x * x / 120.0));
        }
    }
}

// The order-4 B-spline at 1.5 - u from its centre, u in [0, 1]: ((1 + u)^4 - 5 u^4) / 24.
fn quartic_side(u: real) -> real {
    return (1.0 + u * (4.0 + u * (6.0 + u * (4.0 - 4.0 * u)))) / 24.0;
}

// The order-5 B-spline at y in [0, 1] from its centre (scipy's form), and at 2 - u, u in
// [0, 1]: ((1 + u)^5 - 6 u^5) / 120.
fn quintic_inner(y: real) -> real {
    let t = y * y;
    return t * (t * (0.25 - y / 12.0) - 0.5) + 0.55;
}

fn quintic_outer(u: real) -> real {
    return (1.0 + u * (5.0 + u * (10.0 + u * (10.0 + u * (5.0 - 5.0 * u))))) / 120.0;
}

// Axis of `n` samples and element stride `stride` read with `taps` taps at coordinate `c`.
fn axis_taps(c: real, n: u32, stride: u32, taps: u32) -> Taps {
    var t: Taps;
    var v = c;
    // Folded below -1 (constant outside the array): cval. (grid-constant and nearest read their
    // taps wherever the coordinate is.)
    let unfolded = MODE == GRID_CONSTANT || MODE == NEAREST;
    if (!unfolded) {
        v = fold(v, real(n), MODE);
    }
    t.cval = is_nan(c) || (!unfolded && v <= -1.0);
    // Even orders centre their taps on the nearest sample, odd ones on the one below (scipy).
    let order = taps - 1u;
    let base = select(floor(v), floor(v + 0.5), order % 2u == 0u);
    let start = i32(base) - i32(order / 2u);
    let weights = spline_weights(v - base, order);
    t.w = weights.lo;
    t.w2 = weights.hi;
    var j = vec4<i32>(start) + vec4<i32>(0, 1, 2, 3);
    var j2 = vec2<i32>(start + 4) + vec2<i32>(0, 1);
    if (start < 0 || start + i32(taps) > i32(n)) {
        j = vec4<i32>(tap(j.x, n), tap(j.y, n), tap(j.z, n), tap(j.w, n));
        if (taps > 4u) {
            j2 = vec2<i32>(tap(j2.x, n), tap(j2.y, n));
        }
    }
    t.inside = j >= vec4<i32>(0);
    t.at = vec4<u32>(max(j, vec4<i32>(0))) * stride;
    t.inside2 = j2 >= vec2<i32>(0);
    t.at2 = vec2<u32>(max(j2, vec2<i32>(0))) * stride;
    return t;
}

// The weighted taps of four axes (T0..T3 of them), slowest first. The loops below are the
// readable form; src/kernels/map_coordinates.rs writes out the taps of orders up to 3, and the
// last axis' row of taps of higher orders inside these loops.
fn tap_sum(a0: Taps, a1: Taps, a2: Taps, a3: Taps, cval: real) -> real {
    // unrolled: begin
    let checked = MODE == GRID_CONSTANT;
    var sum = real(0.0);
    for (var k0 = 0u; k0 < T0; k0++) {
        var s1 = real(0.0);
        for (var k1 = 0u; k1 < T1; k1++) {
            var s2 = real(0.0);
            for (var k2 = 0u; k2 < T2; k2++) {
                let row = tap_at(a0, k0) + tap_at(a1, k1) + tap_at(a2, k2);
                let row_in = tap_inside(a0, k0) && tap_inside(a1, k1) && tap_inside(a2, k2);
                var s3 = real(0.0);
                for (var k3 = 0u; k3 < T3; k3++) {
                    var v = x[row + tap_at(a3, k3)];
                    if (checked && !(row_in && tap_inside(a3, k3))) {
                        v = cval;
                    }
                    s3 += tap_w(a3, k3) * v;
                }
                s2 += tap_w(a2, k2) * s3;
            }
            s1 += tap_w(a1, k1) * s2;
        }
        sum += tap_w(a0, k0) * s1;
    }
    return sum;
    // unrolled: end
}

// `x` (axes `dims`, slowest first) at coordinates `c`; cval where the mode says so.
fn sample(c: vec4<real>, dims: vec4<u32>, cval: real) -> real {
    // The leading axes added to make four read their one sample, without folding.
    var a0 = lone();
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
