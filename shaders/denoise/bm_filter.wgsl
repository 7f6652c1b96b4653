// Collaborative filtering of one group a workgroup, and its aggregation into `num` and `den` in
// 64-bit fixed point (two words a voxel: the fraction × 2³², then the signed integer part; the
// carry added by whoever wrapped the fraction): integer sums do not depend on the order of the
// adds, so every group runs at once and the result is deterministic.
// Thread v holds voxel v of the block for every block of the group (`col`, in registers); the
// blocks' separable transform goes through workgroup memory, one axis at a time; the Haar
// transform along the group is in registers. Hard thresholding keeps |c| > λ · √variance (each
// coefficient's noise variance) and weighs 1 / Σ share over the kept (1 where none is kept);
// Wiener filtering shrinks the noisy spectrum by B² / (B² + μ² variance) of the pilot's B and
// weighs 1 / Σ share · shrinkage². The share is the coefficient's variance relative to white
// noise's (1 for white noise: BM3D's 1 / kept and 1 / Σ shrinkage²; σ² of its weights is the
// same for every group and cancels in num / den). Shares are taken as at least 2⁻¹², and the
// sums as well, so that weights stay below 2¹² and the sums within the fixed point's range for
// data scaled to magnitudes below 1.)
#import common/grid

// Mirrored in src/kernels/bm_filter.rs. Over (t, z, y, x): the data's sizes n, the block b,
// the reference grid g.
struct Params {
    n: vec4<u32>,
    b: vec4<u32>,
    g: vec4<u32>,
    most: u32,
    wiener: u32,
    lambda: f32,
    mu2: f32,
    // Correlated noise (spread != 0): the covariance between blocks up to `reach` apart.
    reach: vec4<u32>,
    spread: u32,
}

@group(0) @binding(0) var<storage, read> noisy: array<f32>;
@group(0) @binding(1) var<storage, read> pilot: array<f32>;
@group(0) @binding(2) var<storage, read> groups: array<u32>;
@group(0) @binding(3) var<storage, read> counts: array<u32>;
// Forward matrices (4 × 8 × 8), inverse matrices, variances (128), window (128), white noise's
// variances (128), then for correlated noise A_v(Δ) over |Δ| ≤ reach, [v][Δ + reach] row-major.
@group(0) @binding(4) var<storage, read> tables: array<f32>;
@group(0) @binding(5) var<storage, read_write> num: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> den: array<atomic<u32>>;
@group(0) @binding(7) var<uniform> p: Params;

const MOST: u32 = 32u;
const WG: u32 = 128u;
const R: f32 = 0.70710678118654752;

var<workgroup> s: array<f32, 4000>;
var<workgroup> pos: array<u32, MOST>;
var<workgroup> corner: array<vec4<i32>, MOST>;
var<workgroup> count: u32;

// The separable transform of the group's blocks, held in `col`, along each block axis with the
// matrices at `base` (0 forward, 256 inverse); every thread calls it (barriers inside).
fn separable(col: ptr<function, array<f32, MOST>>, v: u32, nb: u32, n: u32, base: u32) {
    let inside = v < nb;
    let sizes = array<u32, 4>(p.b.x, p.b.y, p.b.z, p.b.w);
    let strides = array<u32, 4>(p.b.y * p.b.z * p.b.w, p.b.z * p.b.w, p.b.w, 1u);
    for (var a = 0u; a < 4u; a++) {
        let len = sizes[a];
        if (len == 1u) {
            continue;
        }
        if (inside) {
            for (var m = 0u; m < n; m++) {
                s[m * nb + v] = (*col)[m];
            }
        }
        workgroupBarrier();
        if (inside) {
            let st = strides[a];
            let c = (v / st) % len;
            let first = v - c * st;
            let row = base + a * 64u + c * 8u;
            for (var m = 0u; m < n; m++) {
                var acc = 0.0;
                for (var i = 0u; i < len; i++) {
                    acc += tables[row + i] * s[m * nb + first + i * st];
                }
                (*col)[m] = acc;
            }
        }
        workgroupBarrier();
    }
}

fn haar(x: ptr<function, array<f32, MOST>>, n: u32) {
    var t: array<f32, MOST>;
    var len = n;
    while (len > 1u) {
        let h = len / 2u;
        for (var i = 0u; i < h; i++) {
            let a = (*x)[2u * i];
            let b = (*x)[2u * i + 1u];
            t[i] = (a + b) * R;
            t[h + i] = (a - b) * R;
        }
        for (var i = 0u; i < len; i++) {
            (*x)[i] = t[i];
        }
        len = h;
    }
}

fn haar_inverse(x: ptr<function, array<f32, MOST>>, n: u32) {
    var t: array<f32, MOST>;
    var len = 2u;
    while (len <= n) {
        let h = len / 2u;
        for (var i = 0u; i < h; i++) {
            let a = (*x)[i];
            let b = (*x)[h + i];
            t[2u * i] = (a + b) * R;
            t[2u * i + 1u] = (a - b) * R;
        }
        for (var i = 0u; i < len; i++) {
            (*x)[i] = t[i];
        }
        len *= 2u;
    }
}

// The workgroup's sum of `value` (through `s`, free when called).
fn total(v: u32, value: f32) -> f32 {
    workgroupBarrier();
    s[v] = value;
    workgroupBarrier();
    for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
        if (v < stride) {
            s[v] += s[v + stride];
        }
        workgroupBarrier();
    }
    let sum = s[0];
    workgroupBarrier();
    return sum;
}

// Each group coefficient's noise variance of block coefficient v under correlated noise:
// Σ_{m,m'} H_h(m) H_h(m') A_v(p_m − p_m') for each Haar basis vector H_h of the n members. The
// Haar vectors are ±1/√size over the halves of dyadic intervals, so every pair of members counts
// once, in the interval where they part (`cross`), and the intervals' sums build up from single
// blocks (A_v(0) each).
fn group_variances(gv: ptr<function, array<f32, MOST>>, v: u32, n: u32) {
    let side = 2u * p.reach + vec4<u32>(1u);
    let volume = side.x * side.y * side.z * side.w;
    let base = 896u + v * volume;
    let r = vec4<i32>(p.reach);
    var cross: array<f32, MOST>;
    for (var i = 0u; i < n; i++) {
        cross[i] = 0.0;
    }
    for (var m = 0u; m < n; m++) {
        for (var m2 = m + 1u; m2 < n; m2++) {
            let d = corner[m] - corner[m2];
            if (all(abs(d) <= r)) {
                let q = vec4<u32>(d + r);
                let k = firstLeadingBit(m ^ m2) + 1u;
                cross[(n >> k) + (m >> k)] += tables[base + ((q.x * side.y + q.y) * side.z + q.z) * side.w + q.w];
            }
        }
    }
    var acc: array<f32, MOST>;
    let own = tables[base + volume / 2u];
    for (var i = 0u; i < n; i++) {
        acc[i] = own;
    }
    var count = n;
    var size = 1.0;
    while (count > 1u) {
        let h = count / 2u;
        for (var i = 0u; i < h; i++) {
            let both = acc[2u * i] + acc[2u * i + 1u];
            (*gv)[h + i] = max(both - 2.0 * cross[h + i], 0.0) / (2.0 * size);
            acc[i] = both + 2.0 * cross[h + i];
        }
        count = h;
        size *= 2.0;
    }
    (*gv)[0] = max(acc[0], 0.0) / f32(n);
}

// `value` into the fixed-point sum at word pair `at`.
fn add_num(at: u32, value: f32) {
    let whole = floor(value);
    let low = u32(min((value - whole) * 4294967296.0, 4294967040.0));
    let old = atomicAdd(&num[at], low);
    // The integer part with the carry; mostly 0 for data scaled below 1 (no second atomic).
    let high = bitcast<u32>(i32(whole)) + u32(old > 0xffffffffu - low);
    if (high != 0u) {
        atomicAdd(&num[at + 1u], high);
    }
}

fn add_den(at: u32, value: f32) {
    let whole = floor(value);
    let low = u32(min((value - whole) * 4294967296.0, 4294967040.0));
    let old = atomicAdd(&den[at], low);
    let high = bitcast<u32>(i32(whole)) + u32(old > 0xffffffffu - low);
    if (high != 0u) {
        atomicAdd(&den[at + 1u], high);
    }
}

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) v: u32) {
    let r = workgroup_index(wid, nwg);
    if (r >= p.g.x * p.g.y * p.g.z * p.g.w) {
        return;
    }
    if (v == 0u) {
        count = counts[r];
    }
    let n = workgroupUniformLoad(&count);
    if (v < n) {
        let q = groups[r * p.most + v];
        pos[v] = q;
        let plane = p.n.y * p.n.z * p.n.w;
        corner[v] = vec4<i32>(vec4<u32>(q / plane, (q / (p.n.z * p.n.w)) % p.n.y, (q / p.n.w) % p.n.z, q % p.n.w));
    }
    workgroupBarrier();
    let nb = p.b.x * p.b.y * p.b.z * p.b.w;
    let inside = v < nb;
    // Voxel v's offset in the data.
    let vv = min(v, nb - 1u);
    let coords = vec4<u32>(vv / (p.b.y * p.b.z * p.b.w), (vv / (p.b.z * p.b.w)) % p.b.y, (vv / p.b.w) % p.b.z, vv % p.b.w);
    let off = dot(coords, vec4<u32>(p.n.y * p.n.z * p.n.w, p.n.z * p.n.w, p.n.w, 1u));
    // Each group coefficient's noise variance and its share: over white noise's of the same
    // variance (1 for white noise), at least 2⁻¹².
    let white = tables[768u + vv];
    var variance: array<f32, MOST>;
    if (p.spread != 0u && inside) {
        group_variances(&variance, vv, n);
    } else {
        for (var m = 0u; m < n; m++) {
            variance[m] = tables[512u + vv];
        }
    }
    var col: array<f32, MOST>;
    var shrink: array<f32, MOST>;
    var weight = 1.0;
    if (p.wiener != 0u) {
        if (inside) {
            for (var m = 0u; m < n; m++) {
                col[m] = pilot[pos[m] + off];
            }
        }
        separable(&col, v, nb, n, 0u);
        var energy = 0.0;
        if (inside) {
            haar(&col, n);
            for (var m = 0u; m < n; m++) {
                let b2 = col[m] * col[m];
                let d = b2 + p.mu2 * variance[m];
                shrink[m] = select(0.0, b2 / d, d > 0.0);
                energy += shrink[m] * shrink[m] * max(variance[m] / white, 1.0 / 4096.0);
            }
        }
        let e = total(v, energy);
        weight = 1.0 / max(e, 1.0 / 4096.0);
    }
    if (inside) {
        for (var m = 0u; m < n; m++) {
            col[m] = noisy[pos[m] + off];
        }
    }
    separable(&col, v, nb, n, 0u);
    var kept = 0.0;
    if (inside) {
        haar(&col, n);
        if (p.wiener != 0u) {
            for (var m = 0u; m < n; m++) {
                col[m] *= shrink[m];
            }
        } else {
            for (var m = 0u; m < n; m++) {
                let keep = abs(col[m]) > p.lambda * sqrt(variance[m]);
                col[m] = select(0.0, col[m], keep);
                kept += select(0.0, max(variance[m] / white, 1.0 / 4096.0), keep);
            }
        }
        haar_inverse(&col, n);
    }
    if (p.wiener == 0u) {
        let k = total(v, kept);
        weight = select(1.0, 1.0 / k, k > 0.0);
    }
    separable(&col, v, nb, n, 256u);
    let wv = weight * tables[640u + vv];
    if (inside) {
        for (var m = 0u; m < n; m++) {
            let x = 2u * (pos[m] + off);
            add_num(x, wv * col[m]);
            add_den(x, wv);
        }
    }
}
