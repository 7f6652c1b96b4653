// The radial profile of a widefield PSF model (Gibson-Lanni scalar, or Aguet et al. 2009's
// vectorial one, as psfmodels evaluates them): for plane k and radius r = ri · r_step, the
// pupil integral over θ in [0, α] by Simpson's rule with `samples[k · rmax + ri]` intervals
// (planned on the host, in f64, as psfmodels plans them), scaled as psfmodels scales it. One
// thread per (plane, radius).
//
// f32 throughout, so the optical path difference W(θ) is written in a form without the
// cancellation of its large terms (each thousands of radians at k0 · 150 µm):
//   W = ni cosθ (zp − z) + zp B(ns) + tg B(ng) − tg0 B(ng0) − ti0 B(ni0),
//   B(n) = sqrt(n² − ni² sin²θ) − ni² cosθ / n
//        = (n² − ni²)(n² + ni² − ni² sin²θ) / (n² (sqrt(n² − ni² sin²θ) + ni² cosθ / n)),
// exactly the Gibson-Lanni OPD with its constant ci expanded; past the critical angle the root
// is imaginary and B is taken directly. Phases are reduced by 2π in two parts before cos/sin.
#import common/grid
#import common/complex
#import common/bessel
override VECTORIAL: bool = false;
struct Params {
    count: u32, rmax: u32, unused0: u32, unused1: u32,
    k0: f32, r_step: f32, alpha: f32, scale: f32,
    ni: f32, ns: f32, ng: f32, ng0: f32,
    ni0: f32, tg: f32, tg0: f32, ti0: f32,
    zp: f32, dn_s: f32, dn_g: f32, dn_g0: f32,
    dn_i0: f32, unused2: f32, unused3: f32, unused4: f32,
}  // mirrored in src/kernels/psf_radial.rs
@group(0) @binding(0) var<storage, read> samples: array<f32>;
@group(0) @binding(1) var<storage, read> depth: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

// sqrt(n² − ni² sin²θ) as a complex number (imaginary past the critical angle).
fn root(n2: f32, s2ni2: f32) -> vec2<f32> {
    let q = n2 - s2ni2;
    return select(vec2<f32>(0.0, sqrt(-q)), vec2<f32>(sqrt(q), 0.0), q >= 0.0);
}

// B(n) above, from the root and dn = n² − ni².
fn path(n: f32, dn: f32, r: vec2<f32>, s2ni2: f32, c: f32) -> vec2<f32> {
    let ni2 = p.ni * p.ni;
    if (r.y == 0.0) {
        return vec2<f32>(dn * (n * n + ni2 - s2ni2) / (n * n * (r.x + ni2 * c / n)), 0.0);
    }
    return vec2<f32>(-ni2 * c / n, r.y);
}

fn cdiv(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let d = dot(b, b);
    return vec2<f32>(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y) / d;
}

struct Terms { i0: vec2<f32>, i1: vec2<f32>, i2: vec2<f32> }

// The integrand's terms at θ (Simpson weight w), for J arguments x = k0 r ni sinθ.
fn terms(theta: f32, w: f32, kr: f32, d: f32) -> Terms {
    let s = sin(theta);
    let c = cos(theta);
    let s2ni2 = p.ni * p.ni * s * s;
    let rs = root(p.ns * p.ns, s2ni2);
    let rg = root(p.ng * p.ng, s2ni2);
    let w_path = vec2<f32>(p.ni * c * d, 0.0) + p.zp * path(p.ns, p.dn_s, rs, s2ni2, c) + p.tg * path(p.ng, p.dn_g, rg, s2ni2, c)
        - p.tg0 * path(p.ng0, p.dn_g0, root(p.ng0 * p.ng0, s2ni2), s2ni2, c) - p.ti0 * path(p.ni0, p.dn_i0, root(p.ni0 * p.ni0, s2ni2), s2ni2, c);
    let phase = cis(p.k0 * w_path.x) * exp(-p.k0 * w_path.y);
    let x = kr * s;
    var t: Terms;
    if (!VECTORIAL) {
        t.i0 = phase * (w * bessel_j0(x) * s * c);
        return t;
    }
    let sc = s * sqrt(c);
    let b0 = w * bessel_j0(x) * sc;
    let b1 = w * bessel_j1(x) * sc;
    let b2 = select(0.0, 2.0 * b1 / x - b0, x != 0.0);
    // Fresnel transmissions through the coverslip (ts1 ts2, tp1 tp2).
    let ts_num = 4.0 * p.ni * c * rg;
    let tp = cdiv(ts_num, cmul(vec2<f32>(p.ng * c, 0.0) + rg * (p.ni / p.ng), rg * (p.ns / p.ng) + rs * (p.ng / p.ns)));
    let ts = cdiv(ts_num, cmul(vec2<f32>(p.ni * c, 0.0) + rg, rg + rs));
    let tp_s = cmul(tp, rs) / p.ns;
    t.i0 = cmul(phase, (ts + tp_s) * b0);
    t.i1 = cmul(phase, tp * (p.ni / p.ns * s) * b1);
    t.i2 = cmul(phase, (ts - tp_s) * b2);
    return t;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 64u + lid;
    if (i >= p.count) {
        return;
    }
    let k = i / p.rmax;
    let ri = i % p.rmax;
    let n = u32(samples[i]);
    let d = depth[k];
    let kr = p.k0 * f32(ri) * p.r_step * p.ni;
    let step = p.alpha / f32(n);
    var i0 = vec2<f32>(0.0);
    var i1 = vec2<f32>(0.0);
    var i2 = vec2<f32>(0.0);
    // Simpson's rule: weight 4 at odd nodes, 2 at even ones, 1 at α (the integrand is 0 at 0).
    for (var m = 1u; m < n; m++) {
        let t = terms(f32(m) * step, select(2.0, 4.0, (m & 1u) == 1u), kr, d);
        i0 += t.i0;
        i1 += t.i1;
        i2 += t.i2;
    }
    let t = terms(p.alpha, 1.0, kr, d);
    i0 += t.i0;
    i1 += t.i1;
    i2 += t.i2;
    let q = step * step * p.scale;
    if (VECTORIAL) {
        out[i] = (dot(i0, i0) + 2.0 * dot(i1, i1) + dot(i2, i2)) * q;
    } else {
        out[i] = dot(i0, i0) * q;
    }
}
