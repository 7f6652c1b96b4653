// One level of a 1-D discrete wavelet transform along the middle axis of (outer, n, inner),
// as pywt's dwt / idwt with mode 'symmetric' (half-sample reflection, scipy's 'reflect') and a
// filter of TAPS coefficients: forward, the approximation and detail
// lo[k] = Σ_j dec_lo[j] x[2k + 1 − j] (and hi with dec_hi), ⌊(n + TAPS − 1)/2⌋ of each;
// inverse, from the approximation a and detail d of length n, the 2n − TAPS + 2 values
// y[m] = Σ_j rec_lo[j] a[(t − j)/2] + rec_hi[j] d[(t − j)/2] over even t − j, t = m + TAPS − 2.
// Münch's ring removal (TomoPy's remove_stripe_fw) is built on it.
#import common/grid
#import common/boundary

override INVERSE: bool;
const TAPS: i32 = 10;  // db5; mirrored in src/kernels/wavelet_axis.rs

// Mirrored in src/kernels/wavelet_axis.rs: n, the input's length along the axis; m, the output's.
struct Params { outer: u32, n: u32, m: u32, inner: u32 }

// dec_lo, dec_hi, rec_lo, rec_hi.
@group(0) @binding(0) var<storage, read> filters: array<f32, 40>;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> d: array<f32>;
@group(0) @binding(3) var<storage, read_write> lo: array<f32>;
@group(0) @binding(4) var<storage, read_write> hi: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.outer * p.m * p.inner) {
        return;
    }
    let o = i / (p.m * p.inner);
    let k = (i / p.inner) % p.m;
    let c = i % p.inner;
    let base = o * p.n * p.inner + c;
    let n = i32(p.n);
    if (!INVERSE) {
        var sum_lo = 0.0;
        var sum_hi = 0.0;
        for (var j = 0; j < TAPS; j++) {
            let at = u32(boundary_fold(2 * i32(k) + 1 - j, n, 2u));
            let v = a[base + at * p.inner];
            sum_lo += filters[j] * v;
            sum_hi += filters[10 + j] * v;
        }
        lo[i] = sum_lo;
        hi[i] = sum_hi;
    } else {
        let t = i32(k) + TAPS - 2;
        var sum = 0.0;
        for (var j = t % 2; j < TAPS; j += 2) {
            let s = (t - j) / 2;
            if (s < n) {
                let at = base + u32(s) * p.inner;
                sum += filters[20 + j] * a[at] + filters[30 + j] * d[at];
            }
        }
        lo[i] = sum;
    }
}
