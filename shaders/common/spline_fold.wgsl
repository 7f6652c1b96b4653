// scipy.ndimage's boundary modes for B-spline sampling (src/ops/interpolate/mod.rs): the
// sampling kernels' specialisation (mode, rank, taps per axis), folding a coordinate or a tap
// into the array, the cubic B-spline's weights and NaN on the bits. Arrays are seen with 4 axes
// (leading axes of one sample added); taps per axis are order + 1 (1 to 6).

#import common/real

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
fn fold(c: real, n: real, mode: u32) -> real {
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
                return select(max(-v - 1.0, -BELOW_ONE), v + s, v < -n);
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
    return i32(fold(real(i), real(n), m));
}

fn is_nan(v: real) -> bool {
    // On the bits (compilers may assume comparisons see no NaN), of f32 (an f64 NaN stays one).
    return (bitcast<u32>(f32(v)) & 0x7fffffffu) > 0x7f800000u;
}


// The cubic B-spline's weights of the taps at floor(v) - 1 .. floor(v) + 2, f = v - floor(v).
fn cubic_weights(f: real) -> vec4<real> {
    let g = 1.0 - f;
    return vec4<real>(g * g * g, 4.0 - 6.0 * f * f + 3.0 * f * f * f, 4.0 - 6.0 * g * g + 3.0 * g * g * g, f * f * f) / 6.0;
}
