// Direct correlation with weights along one axis (the separable filters' passes; along the
// contiguous axis only windows too short for correlate_tiled.wgsl): y[o, k, i] = Σ_j w[j] · x[o, origin + k + j, i], the array
// viewed as (outer, n, inner) around the axis, coordinates outside x folded by the boundary MODE
// (constant mode reads `fill`). The same sums, in the same order, as correlate_window.wgsl.
//
// One thread computes RUN consecutive outputs along the axis from the RUN + taps − 1 inputs
// they share, each loaded once (the window kernel loads taps per output); neighbouring threads
// take neighbouring i, so every load is coalesced (along the contiguous axis, inner = 1, they
// take neighbouring runs of one line, whose loads overlap in cache). The weights sit in workgroup memory between
// RUN − 1 zeros on each side, so that input q feeds output m with weight q − m without a branch
// (a zero weight adds exactly 0 to a finite sum). Host side: src/kernels/correlate_axis.rs.
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

var<workgroup> ws: array<real, 270>;  // MAX_TAPS (255, src/kernels/correlate_axis.rs) + 2 (RUN − 1) + 1

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    for (var j = lid; j < p.taps + 2u * (RUN - 1u); j += 256u) {
        let t = i32(j) - i32(RUN - 1u);
        ws[j] = select(real(0.0), w[max(t, 0)], t >= 0 && t < i32(p.taps));
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
    var lo = vec4<real>(0.0);  // outputs first .. first + 3
    var hi = vec4<real>(0.0);  // outputs first + 4 .. first + 7
    let c0 = p.origin + i32(first);
    for (var q = 0u; q < p.taps + RUN - 1u; q++) {
        let c = boundary_fold(c0 + i32(q), p.n_in, MODE);
        let v = select(real(p.fill), x[base + u32(max(c, 0)) * p.inner], c >= 0);
        // Output m takes weight q − m: ws[q − m + RUN − 1].
        let k = q + RUN - 1u;
        lo = fma(vec4(ws[k], ws[k - 1u], ws[k - 2u], ws[k - 3u]), vec4(v), lo);
        hi = fma(vec4(ws[k - 4u], ws[k - 5u], ws[k - 6u], ws[k - 7u]), vec4(v), hi);
    }
    let out = (o * p.n_out + first) * p.inner + i;
    let valid = p.n_out - first;  // outputs of this run inside the array (≥ 1)
    for (var m = 0u; m < min(valid, RUN); m++) {
        y[out + m * p.inner] = select(hi[m - 4u * u32(m >= 4u)], lo[m], m < 4u);
    }
}
