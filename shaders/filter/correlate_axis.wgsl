// Direct correlation with weights along one axis (the separable filters' passes; along the
// contiguous axis only windows too short for correlate_tiled.wgsl):
// y[o, k, i] = Σ_j w[j] · x[o, origin + k + j, i], the array viewed as (outer, n, inner) around
// the axis, coordinates outside x folded by the boundary MODE (constant mode reads `fill`). The
// same sums, in the same order, as correlate_window.wgsl.
//
// One thread computes RUN consecutive outputs along the axis from the RUN + taps − 1 inputs
// they share, each loaded once (the window kernel loads taps per output): the RUN inputs under
// tap j sit in registers and slide by one sample a tap, so a tap costs one load of x, one
// (broadcast) read of its weight from workgroup memory and RUN fused multiply-adds. Neighbouring
// threads take neighbouring i, so every load is coalesced (along the contiguous axis, inner = 1,
// they take neighbouring runs of one line, whose loads overlap in cache). Host side:
// src/kernels/correlate_axis.rs.
#import common/grid
#import common/boundary
#import common/real

override MODE: u32 = 0u;  // Boundary::code()

const RUN: u32 = 8u;           // outputs per thread; mirrored in src/kernels/correlate_axis.rs

// Mirrored in src/kernels/correlate_axis.rs.
struct Params {
    outer: u32,    // elements before the axis (product of the slower axes)
    n_in: i32,     // the input's length along the axis
    n_out: u32,    // the output's
    inner: u32,    // elements after the axis (product of the faster axes)
    runs: u32,     // ceil(n_out / RUN)
    taps: u32,
    origin: i32,   // input coordinate that output 0 reads with tap 0
    fill: f32,     // constant mode's value outside x (f32 precision in the f64 twin)
    threads: u32,  // outer · runs · inner
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read> x: array<real>;
@group(0) @binding(1) var<storage, read> w: array<real>;
@group(0) @binding(2) var<storage, read_write> y: array<real>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> ws: array<real, 255>;  // MAX_TAPS (src/kernels/correlate_axis.rs)

// Sample c of the line at `base` (stride inner), folded; constant mode's fill outside.
fn sample(base: u32, c: i32) -> real {
    let f = boundary_fold(c, p.n_in, MODE);
    return select(real(p.fill), x[base + u32(max(f, 0)) * p.inner], f >= 0);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    for (var j = lid; j < p.taps; j += 256u) {
        ws[j] = w[j];
    }
    workgroupBarrier();
    let t = workgroup_index(wid, nwg) * 256u + lid;
    if (t >= p.threads) {
        return;
    }
    let i = t % p.inner;
    let rest = t / p.inner;
    let run = rest % p.runs;
    let o = rest / p.runs;
    let first = run * RUN;  // the run's first output along the axis
    let base = o * u32(p.n_in) * p.inner + i;
    let c0 = p.origin + i32(first);
    var lo = vec4<real>(0.0);  // outputs first .. first + 3
    var hi = vec4<real>(0.0);  // outputs first + 4 .. first + 7
    var a = vec4(sample(base, c0), sample(base, c0 + 1), sample(base, c0 + 2), sample(base, c0 + 3));
    var b = vec4(sample(base, c0 + 4), sample(base, c0 + 5), sample(base, c0 + 6), sample(base, c0 + 7));
    for (var j = 0u; j < p.taps; j++) {
        // Output m takes tap j from input first + m + j: a and b hold m = 0..7.
        let wj = vec4(ws[j]);
        lo = fma(wj, a, lo);
        hi = fma(wj, b, hi);
        a = vec4(a.yzw, b.x);
        b = vec4(b.yzw, sample(base, c0 + i32(j) + 8));
    }
    let out = (o * p.n_out + first) * p.inner + i;
    let valid = p.n_out - first;  // outputs of this run inside the array (≥ 1)
    for (var m = 0u; m < min(valid, RUN); m++) {
        y[out + m * p.inner] = select(hi[m - 4u * u32(m >= 4u)], lo[m], m < 4u);
    }
}
