// The cubic B-spline prefilter along one axis (scipy.ndimage.spline_filter1d, order 3): per line
// the gain 6, a causal pass from an initial value set by the boundary, then an anti-causal pass
// (Unser, Aldroubi and Eden 1991; pole z = √3 − 2). The array is viewed as (outer, n, inner);
// one thread per line, consecutive threads on consecutive `inner` positions, so along every
// axis but the last the threads of a workgroup read and write contiguous words.
#import common/grid

struct Params {
    n: u32,      // line length (> 1)
    inner: u32,  // elements between consecutive samples of a line
    lines: u32,
    init: u32,   // 0 mirror (whole-sample symmetric), 1 reflect (half-sample), 2 wrap (periodic)
}  // mirrored in src/kernels/spline_prefilter.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

const Z: f32 = -0.26794919243112270;
// Terms of the initial sums beyond this many samples are below f32's resolution (|z|^24 ≈ 2e-14).
const HORIZON: u32 = 24u;

var<private> base: u32;

fn at(k: u32) -> u32 {
    return base + k * p.inner;
}

// z^k by repeated products (the initial conditions need z^n of short lines exactly).
fn zpow(k: u32) -> f32 {
    var r = 1.0;
    for (var i = 0u; i < k; i++) {
        r *= Z;
    }
    return r;
}

// c+[0] from the scaled samples: scipy's _init_causal_* (the reflect one without scipy's
// aliasing of c[0] for very short lines, gh-24550); long lines keep the first HORIZON terms.
fn causal_first(n: u32) -> f32 {
    let far = n <= HORIZON + 1u;
    let terms = select(HORIZON + 1u, n, far);
    if (p.init == 0u) {
        let zn1 = select(0.0, zpow(n - 1u), far);
        var s = c[at(0u)] + zn1 * c[at(n - 1u)];
        var zi = Z;
        for (var i = 1u; i < min(terms, n - 1u); i++) {
            s += zi * (c[at(i)] + zn1 * c[at(n - 1u - i)]);
            zi *= Z;
        }
        return s / (1.0 - zn1 * zn1);
    }
    if (p.init == 1u) {
        let zn = select(0.0, zpow(n), far);
        let c0 = c[at(0u)];
        var s = c0 + zn * c[at(n - 1u)];
        var zi = Z;
        for (var i = 1u; i < terms; i++) {
            s += zi * (c[at(i)] + zn * c[at(n - 1u - i)]);
            zi *= Z;
        }
        return s * Z / (1.0 - zn * zn) + c0;
    }
    var s = c[at(0u)];
    var zi = Z;
    for (var i = 1u; i < terms; i++) {
        s += zi * c[at(n - i)];
        zi *= Z;
    }
    return s / (1.0 - select(0.0, zpow(n), far));
}

// c-[n-1] from the causal pass's output.
fn anticausal_last(n: u32) -> f32 {
    let last = c[at(n - 1u)];
    if (p.init == 0u) {
        return (Z * c[at(n - 2u)] + last) * Z / (Z * Z - 1.0);
    }
    if (p.init == 1u) {
        return last * Z / (Z - 1.0);
    }
    let far = n <= HORIZON + 1u;
    var s = last;
    var zi = Z;
    for (var i = 0u; i < select(HORIZON, n - 1u, far); i++) {
        s += zi * c[at(i)];
        zi *= Z;
    }
    return s * Z / (select(0.0, zpow(n), far) - 1.0);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let line = workgroup_index(wid, nwg) * 64u + lid;
    if (line >= p.lines) {
        return;
    }
    let n = p.n;
    base = (line / p.inner) * n * p.inner + line % p.inner;
    for (var k = 0u; k < n; k++) {
        c[at(k)] = 6.0 * x[at(k)];
    }
    c[at(0u)] = causal_first(n);
    var prev = c[at(0u)];
    for (var k = 1u; k < n; k++) {
        prev = c[at(k)] + Z * prev;
        c[at(k)] = prev;
    }
    prev = anticausal_last(n);
    c[at(n - 1u)] = prev;
    for (var k = n - 1u; k > 0u; k--) {
        prev = Z * (prev - c[at(k - 1u)]);
        c[at(k - 1u)] = prev;
    }
}
