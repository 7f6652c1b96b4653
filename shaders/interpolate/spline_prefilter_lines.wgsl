// One pole of the B-spline prefilter along the last axis, for lines of up to 4096 samples
// (the pole's gain, a causal pass, then an anti-causal pass, as spline_prefilter.wgsl): a
// workgroup stages whole lines — consecutive in memory, so its loads and stores are one
// contiguous run — in workgroup memory, each thread computes a segment of SEG samples of one
// line from HALO samples outside it, read from the staged line (folded by the boundary where
// they fall outside it), and the outputs go back through workgroup memory to one contiguous
// store. Each sample is read from and written to device memory once; spline_prefilter.wgsl's
// 64 × 64 blocks read every segment's halos from device memory again. Same passes, same
// arithmetic, same outputs (src/kernels/spline_prefilter_lines.rs writes the loops out).
#import common/grid
#import common/line_fold

struct Params {
    n: u32,          // line length (2 to WORDS)
    lines: u32,      // lines of the array
    per_group: u32,  // lines a workgroup stages
    segments: u32,   // per line: ceil(n / SEG)
    init: u32,       // 0 mirror (whole-sample symmetric), 1 reflect (half-sample), 2 wrap (periodic)
}  // mirrored in src/kernels/spline_prefilter_lines.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

override Z: f32 = -0.26794919243112270;  // the pole
override GAIN: f32 = 6.0;                 // (1 - z)(1 - 1/z)
// (SEG, HALO): (32, 16), or (16, 24) for the poles of orders 4 and 5 beyond |z| = 0.27.
override SEG: u32 = 32u;
override HALO: u32 = 16u;
const WORDS: u32 = 4096u;  // staged samples per workgroup
const THREADS: u32 = 128u;
// Sample i of the workgroup's run at i + i / 32: a segment of 32 (or 16) samples starts on
// another bank than the next line's or segment's, so a warp's threads, each walking its own
// segment, read 32 banks at once.
var<workgroup> tile: array<f32, 4224>;  // WORDS + WORDS / 32

fn at(i: u32) -> u32 {
    return i + (i >> 5u);
}

// Sample k of line l of the workgroup (k in [-HALO, n + SEG + HALO)), folded into the line by
// the boundary where it lies outside.
fn sample(l: u32, k: i32) -> f32 {
    return tile[at(l * p.n + u32(fold_line(k, i32(p.n), p.init)))];
}

// The workgroup's lines staged, each thread's segments computed (thread t takes segments t,
// t + THREADS, ... of the workgroup: line q / segments, segment q % segments), the outputs
// stored back into the staged lines once every thread has read its samples, and the lines
// stored. The loops below are the readable form; the generated code loads 32 samples at once
// and names every sample, causal value and output.
fn lines(base: u32, count: u32, lid: u32) {
    // unrolled: begin
    for (var i = lid; i < count; i += THREADS) {
        tile[at(i)] = x[base + i];
    }
    workgroupBarrier();
    var out: array<f32, 64>;  // SEG at most, twice (SEG 16)
    var plus: array<f32, 48>;  // SEG + HALO
    for (var r = 0u; r < WORDS / SEG / THREADS; r++) {
        let q = lid + r * THREADS;
        let l = min(q / p.segments, p.per_group - 1u);  // (slots past the lines compute the last again)
        let s0 = i32((q % p.segments) * SEG);
        var cp = 0.0;
        for (var k = s0 - i32(HALO); k < s0; k++) {
            cp = GAIN * sample(l, k) + Z * cp;
        }
        for (var j = 0u; j < SEG + HALO; j++) {
            cp = GAIN * sample(l, s0 + i32(j)) + Z * cp;
            plus[j] = cp;
        }
        var cm = 0.0;
        for (var j = SEG + HALO; j > 0u; j--) {
            cm = Z * (cm - plus[j - 1u]);
            if (j <= SEG) {
                out[r * SEG + j - 1u] = cm;
            }
        }
    }
    workgroupBarrier();
    for (var r = 0u; r < WORDS / SEG / THREADS; r++) {
        let q = lid + r * THREADS;
        let l = q / p.segments;
        let s0 = (q % p.segments) * SEG;
        for (var j = 0u; j < SEG; j++) {
            if (l < p.per_group && s0 + j < p.n) {
                tile[at(l * p.n + s0 + j)] = out[r * SEG + j];
            }
        }
    }
    workgroupBarrier();
    for (var i = lid; i < count; i += THREADS) {
        c[base + i] = tile[at(i)];
    }
    // unrolled: end
}

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let first = workgroup_index(wid, nwg) * p.per_group;
    if (first >= p.lines) {
        return;
    }
    // The workgroup's lines: per_group of them, fewer at the end.
    let count = (min(first + p.per_group, p.lines) - first) * p.n;
    lines(first * p.n, count, lid);
}
