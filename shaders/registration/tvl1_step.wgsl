// scikit-image's optical_flow_tvl1, one stage of one level's iterations (STAGE):
// 0 prepare: from the warped image (a), the reference (b) and the flow (c): the warped image's
//   gradient (numpy.gradient), NI = |g|² (1 where 0) and rho0 = warped − reference − g · flow,
//   planes (ndim + 2, count);
// 1 data: from those (a) and the flow (b): the attachment step, the auxiliary flow;
// 2 dual: from a flow (a): each component's forward differences g (0 at the last sample of an
//   axis, as scikit-image's g keeps it), then proj = (proj − dt g) / (1 + f1 |g|) in place
//   (out: proj, (ndim, ndim, count));
// 3 primal: from proj (a) and the auxiliary flow (b): flow = aux + d, d = −Σ proj[ax] plus
//   proj[ax] one sample back along ax (scikit-image's divergence).
// Mirrored in src/kernels/tvl1_step.rs.
#import common/grid

override STAGE: u32;

struct Params {
    count: u32,
    ndim: u32,
    f0: f32,       // attachment × tightness
    f1: f32,       // dt / tightness
    dims: vec4<u32>,
    dt: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read> c: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

// The point's index along axis `ax` and the stride of that axis.
fn along(i: u32, ax: u32) -> vec2<u32> {
    var stride = 1u;
    for (var k = p.ndim - 1u; k > ax; k--) {
        stride *= p.dims[k];
    }
    return vec2((i / stride) % p.dims[ax], stride);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = workgroup_index(wid, nwg) * 256u + lid;
    let n = p.count;
    let nd = p.ndim;
    if (STAGE == 0u) {
        if (t >= n) {
            return;
        }
        var ni = 0.0;
        var gf = 0.0;
        for (var ax = 0u; ax < nd; ax++) {
            let at = along(t, ax);
            let m = p.dims[ax];
            var d = 0.0;
            if (at.x == 0u) {
                d = a[t + at.y] - a[t];
            } else if (at.x == m - 1u) {
                d = a[t] - a[t - at.y];
            } else {
                d = 0.5 * (a[t + at.y] - a[t - at.y]);
            }
            out[ax * n + t] = d;
            ni += d * d;
            gf += d * c[ax * n + t];
        }
        if (ni == 0.0) {
            ni = 1.0;
        }
        out[nd * n + t] = ni;
        out[(nd + 1u) * n + t] = a[t] - b[t] - gf;
        return;
    }
    if (STAGE == 1u) {
        if (t >= n) {
            return;
        }
        let ni = a[nd * n + t];
        var rho = a[(nd + 1u) * n + t];
        for (var ax = 0u; ax < nd; ax++) {
            rho += a[ax * n + t] * b[ax * n + t];
        }
        let inside = abs(rho) <= p.f0 * ni;
        for (var ax = 0u; ax < nd; ax++) {
            let g = a[ax * n + t];
            if (inside) {
                out[ax * n + t] = b[ax * n + t] - rho * g / ni;
            } else {
                out[ax * n + t] = b[ax * n + t] - p.f0 * sign(rho) * g;
            }
        }
        return;
    }
    // Dual and primal: one thread per (component, point).
    if (t >= nd * n) {
        return;
    }
    let idx = t / n;
    let i = t % n;
    if (STAGE == 2u) {
        var g: array<f32, 3>;
        var s = 0.0;
        for (var ax = 0u; ax < nd; ax++) {
            let at = along(i, ax);
            g[ax] = 0.0;
            if (at.x + 1u < p.dims[ax]) {
                g[ax] = a[idx * n + i + at.y] - a[idx * n + i];
            }
            s += g[ax] * g[ax];
        }
        let norm = 1.0 + p.f1 * sqrt(s);
        for (var ax = 0u; ax < nd; ax++) {
            let k = (idx * nd + ax) * n + i;
            out[k] = (out[k] - p.dt * g[ax]) / norm;
        }
        return;
    }
    var d = 0.0;
    for (var ax = 0u; ax < nd; ax++) {
        let k = (idx * nd + ax) * n + i;
        d -= a[k];
        let at = along(i, ax);
        if (at.x >= 1u) {
            d += a[k - at.y];
        }
    }
    out[idx * n + i] = b[idx * n + i] + d;
}
