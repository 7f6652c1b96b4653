// scipy.ndimage.map_coordinates: one output per thread, read at coordinates (d, points) from an
// array of 1-4 axes (already prefiltered and padded for order 3), by B-spline weights of order 0,
// 1 or 3 over (order + 1)^d taps, out-of-range coordinates and taps handled by the mode as scipy
// handles them (see src/ops/interpolate/mod.rs).
#import common/grid

struct Params {
    dims: vec4<u32>,  // the input's axes, slowest first (unused ones 1)
    rank: u32,
    points: u32,
    order: u32,
    mode: u32,        // 0 mirror, 1 reflect, 2 nearest, 3 wrap, 4 grid-wrap, 5 constant, 6 grid-constant
    pad: f32,         // added to every coordinate (the prefilter's padding)
    cval: f32,
    unused0: u32,
    unused1: u32,
}  // mirrored in src/kernels/map_coordinates.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> coords: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

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
fn tap(i: i32, n: u32, mode: u32) -> i32 {
    if (i >= 0 && i < i32(n)) {
        return i;
    }
    if (mode == GRID_CONSTANT) {
        return -1;
    }
    let m = select(mode, MIRROR, mode == CONSTANT || mode == WRAP);
    return i32(fold(f32(i), f32(n), m));
}

fn weight(order: u32, f: f32, k: u32) -> f32 {
    if (order == 0u) {
        return 1.0;
    }
    if (order == 1u) {
        return select(f, 1.0 - f, k == 0u);
    }
    let g = 1.0 - f;
    switch k {
        case 0u: { return g * g * g / 6.0; }
        case 1u: { return (4.0 - 6.0 * f * f + 3.0 * f * f * f) / 6.0; }
        case 2u: { return (4.0 - 6.0 * g * g + 3.0 * g * g * g) / 6.0; }
        default: { return f * f * f / 6.0; }
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.points) {
        return;
    }
    var start: array<i32, 4>;
    var frac: array<f32, 4>;
    for (var a = 0u; a < p.rank; a++) {
        var c = coords[a * p.points + i] + p.pad;
        // NaN: cval (tested on the bits: compilers may assume comparisons see no NaN).
        if ((bitcast<u32>(c) & 0x7fffffffu) > 0x7f800000u) {
            out[i] = p.cval;
            return;
        }
        let n = p.dims[a];
        if (p.mode != GRID_CONSTANT && p.mode != NEAREST) {
            c = fold(c, f32(n), p.mode);
        }
        // Folded below -1 (constant outside the array): cval. (grid-constant and nearest read
        // their taps wherever the coordinate is.)
        let unfolded = p.mode == GRID_CONSTANT || p.mode == NEAREST;
        if (c <= -1.0 && !unfolded) {
            out[i] = p.cval;
            return;
        }
        let base = select(floor(c), floor(c + 0.5), p.order == 0u);
        start[a] = i32(base) - i32(p.order / 2u);
        frac[a] = c - floor(c);
    }
    let taps = p.order + 1u;
    var total = 1u;
    for (var a = 0u; a < p.rank; a++) {
        total *= taps;
    }
    var sum = 0.0;
    for (var t = 0u; t < total; t++) {
        var rest = t;
        var index = 0u;
        var w = 1.0;
        var outside = false;
        for (var a = p.rank; a > 0u; a--) {
            let axis = a - 1u;
            let k = rest % taps;
            rest /= taps;
            let j = tap(start[axis] + i32(k), p.dims[axis], p.mode);
            outside = outside || j < 0;
            var stride = 1u;
            for (var b = axis + 1u; b < p.rank; b++) {
                stride *= p.dims[b];
            }
            index += u32(max(j, 0)) * stride;
            w *= weight(p.order, frac[axis], k);
        }
        sum += w * select(x[index], p.cval, outside);
    }
    out[i] = sum;
}
