// The sums intensity-based registration needs at one transform, per workgroup (the host adds
// the workgroups' partials in f64): over the points where the fixed mask is set and the moving
// image's support (its mask, resampled) is whole. Per point: f the fixed value, m the moving
// image sampled there, g its gradient (moving-level axes), and u = g ⊗ (1, p − c) with p the
// point, c the level's centre: the transform's Jacobian is linear in u, so the host turns these
// sums into the metric, its gradient and the normal equations for any transform.
// MODE 0 (mean squares): count, Σ r², Σ u r (D), Σ u uᵀ (upper triangle, row-major); r = m − f.
// MODE 1 (correlation): count, Σ f', Σ m', Σ f'², Σ m'², Σ f'm', Σ f'u, Σ m'u, Σ u; f' = f − shift_f,
//   m' = m − shift_m (shifts keep f32 sums of large-mean images from cancelling).
// MODE 2 (a step's comparison over the points both transforms cover; a the previous samples,
//   b the current): count, Σ (a − f)², Σ (b − f)², Σ f', Σ a', Σ b', Σ f'², Σ a'², Σ b'², Σ f'a', Σ f'b',
//   and the count of the current samples alone.
// MODE 3 (Mattes mutual information's gradient): Σ w u, w = Σ_k β3'(k − η) L[ι, k] over the four
//   moving bins k of the point's cubic window, ι its fixed bin, η its moving value in bin units,
//   L = log(p(ι, k) / p_m(k)) from the joint histogram (in `previous`, bins² values).
// Widths (D = DIMS (DIMS + 1)): mirrored in src/kernels/registration_sums.rs.
#import common/grid

override MODE: u32;
override DIMS: u32;

struct Params {
    count: u32,
    per_thread: u32,   // points each thread visits
    width: u32,        // sums per workgroup
    rows: u32,         // the level's axis sizes: rows (axis DIMS − 2), columns (last axis)
    cols: u32,
    shift_f: f32,
    shift_m: f32,
    bins: u32,         // MODE 3
    centre: vec4<f32>, // c, per axis
    hist: vec4<f32>,   // MODE 3: fixed min, 1 / fixed bin width, moving min, 1 / moving bin width
}

@group(0) @binding(0) var<storage, read> fixed: array<vec2<f32>>;   // (value, mask 0/1)
@group(0) @binding(1) var<storage, read> values: array<f32>;
@group(0) @binding(2) var<storage, read> g0: array<f32>;
@group(0) @binding(3) var<storage, read> g1: array<f32>;
@group(0) @binding(4) var<storage, read> g2: array<f32>;             // 3D only (else any array)
@group(0) @binding(5) var<storage, read> support: array<f32>;
@group(0) @binding(6) var<storage, read> previous: array<f32>;       // MODE 2; MODE 3: L
@group(0) @binding(7) var<storage, read> previous_support: array<f32>;
@group(0) @binding(8) var<storage, read_write> out: array<f32>;
@group(0) @binding(9) var<uniform> p: Params;

const WG = 256u;
const MOST = 92u;  // the widest: 3D mean squares, 2 + 12 + 78

var<workgroup> tree: array<f32, WG>;

fn cubic_derivative(x: f32) -> f32 {
    let a = abs(x);
    if (a < 1.0) {
        return sign(x) * (-2.0 * a + 1.5 * a * a);
    }
    if (a < 2.0) {
        return -sign(x) * 0.5 * (2.0 - a) * (2.0 - a);
    }
    return 0.0;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let group = workgroup_index(wid, nwg);
    let d = DIMS;
    let nu = d * (d + 1u);
    var acc: array<f32, MOST>;
    for (var k = 0u; k < MOST; k++) {
        acc[k] = 0.0;
    }
    for (var t = 0u; t < p.per_thread; t++) {
        let i = (group * p.per_thread + t) * WG + lid;
        if (i >= p.count) {
            break;
        }
        let fm = fixed[i];
        if (fm.y < 0.5 || support[i] < 0.999) {
            continue;
        }
        if (MODE == 2u) {
            acc[11] += 1.0;
            if (previous_support[i] < 0.999) {
                continue;
            }
        }
        let f = fm.x;
        let m = values[i];
        if (MODE == 2u) {
            let a = previous[i];
            let fs = f - p.shift_f;
            let as_ = a - p.shift_m;
            let bs = m - p.shift_m;
            acc[0] += 1.0;
            acc[1] += (a - f) * (a - f);
            acc[2] += (m - f) * (m - f);
            acc[3] += fs;
            acc[4] += as_;
            acc[5] += bs;
            acc[6] += fs * fs;
            acc[7] += as_ * as_;
            acc[8] += bs * bs;
            acc[9] += fs * as_;
            acc[10] += fs * bs;
            continue;
        }
        // The point (plane, row, column) less the centre, and u = g ⊗ (1, p − c).
        let col = i % p.cols;
        let row = (i / p.cols) % p.rows;
        let plane = i / (p.cols * p.rows);
        var q: array<f32, 3>;
        var g: array<f32, 3>;
        if (d == 3u) {
            q = array<f32, 3>(f32(plane) - p.centre.x, f32(row) - p.centre.y, f32(col) - p.centre.z);
            g = array<f32, 3>(g0[i], g1[i], g2[i]);
        } else {
            q = array<f32, 3>(f32(row) - p.centre.x, f32(col) - p.centre.y, 0.0);
            g = array<f32, 3>(g0[i], g1[i], 0.0);
        }
        var u: array<f32, 12>;
        for (var a = 0u; a < d; a++) {
            u[a * (d + 1u)] = g[a];
            for (var b = 0u; b < d; b++) {
                u[a * (d + 1u) + 1u + b] = g[a] * q[b];
            }
        }
        if (MODE == 3u) {
            let b = p.bins;
            let row = u32(clamp(floor((f - p.hist.x) * p.hist.y + 2.0), 2.0, f32(b - 3u)));
            let eta = (m - p.hist.z) * p.hist.w + 2.0;
            let first = u32(clamp(floor(eta), 2.0, f32(b - 3u))) - 1u;
            var w = 0.0;
            for (var k = 0u; k < 4u; k++) {
                w += cubic_derivative(f32(first + k) - eta) * previous[row * b + first + k];
            }
            for (var a = 0u; a < nu; a++) {
                acc[a] += w * u[a];
            }
        } else if (MODE == 0u) {
            let r = m - f;
            acc[0] += 1.0;
            acc[1] += r * r;
            var k = 2u + nu;
            for (var a = 0u; a < nu; a++) {
                acc[2u + a] += u[a] * r;
                for (var b = a; b < nu; b++) {
                    acc[k] += u[a] * u[b];
                    k++;
                }
            }
        } else {
            let fs = f - p.shift_f;
            let ms = m - p.shift_m;
            acc[0] += 1.0;
            acc[1] += fs;
            acc[2] += ms;
            acc[3] += fs * fs;
            acc[4] += ms * ms;
            acc[5] += fs * ms;
            for (var a = 0u; a < nu; a++) {
                acc[6u + a] += fs * u[a];
                acc[6u + nu + a] += ms * u[a];
                acc[6u + 2u * nu + a] += u[a];
            }
        }
    }
    // One tree per sum over the workgroup.
    for (var k = 0u; k < p.width; k++) {
        tree[lid] = acc[k];
        workgroupBarrier();
        for (var s = WG / 2u; s > 0u; s >>= 1u) {
            if (lid < s) {
                tree[lid] += tree[lid + s];
            }
            workgroupBarrier();
        }
        if (lid == 0u) {
            out[group * p.width + k] = tree[0];
        }
        workgroupBarrier();
    }
}
