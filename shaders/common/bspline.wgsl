// B-spline sampling with scipy.ndimage's boundary modes (src/ops/interpolate/mod.rs): folding a
// coordinate or a tap into the array, the weights of orders 0, 1 and 3, and one sample. A kernel
// that imports this declares the sampled array as `x: array<f32>`.

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

fn is_nan(v: f32) -> bool {
    // On the bits: compilers may assume comparisons see no NaN.
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

// `x` (axes `dims`, slowest first) at coordinates `c`, with `orders[a] + 1` taps along axis a.
fn sample(c: array<f32, 4>, rank: u32, dims: vec4<u32>, orders: vec4<u32>, mode: u32, cval: f32) -> f32 {
    var start: array<i32, 4>;
    var frac: array<f32, 4>;
    var total = 1u;
    for (var a = 0u; a < rank; a++) {
        var v = c[a];
        if (is_nan(v)) {
            return cval;
        }
        // Folded below -1 (constant outside the array): cval. (grid-constant and nearest read
        // their taps wherever the coordinate is.)
        let unfolded = mode == GRID_CONSTANT || mode == NEAREST;
        if (!unfolded) {
            v = fold(v, f32(dims[a]), mode);
        }
        if (v <= -1.0 && !unfolded) {
            return cval;
        }
        let base = select(floor(v), floor(v + 0.5), orders[a] == 0u);
        start[a] = i32(base) - i32(orders[a] / 2u);
        frac[a] = v - floor(v);
        total *= orders[a] + 1u;
    }
    var sum = 0.0;
    for (var t = 0u; t < total; t++) {
        var rest = t;
        var index = 0u;
        var stride = 1u;
        var w = 1.0;
        var outside = false;
        for (var a = rank; a > 0u; a--) {
            let axis = a - 1u;
            let taps = orders[axis] + 1u;
            let k = rest % taps;
            rest /= taps;
            let j = tap(start[axis] + i32(k), dims[axis], mode);
            outside = outside || j < 0;
            index += u32(max(j, 0)) * stride;
            stride *= dims[axis];
            w *= weight(orders[axis], frac[axis], k);
        }
        sum += w * select(x[index], cval, outside);
    }
    return sum;
}
