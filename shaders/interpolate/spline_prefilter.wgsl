// The cubic B-spline prefilter along one axis (scipy.ndimage.spline_filter1d, order 3): the gain
// 6, a causal pass, then an anti-causal pass (Unser, Aldroubi and Eden 1991; pole z = √3 − 2).
// scipy's initial values are the two passes run over the line extended without end by the
// boundary (whole-sample symmetric, half-sample symmetric or periodic), so each line is cut into
// segments of SEG samples computed independently: a segment's passes start HALO samples outside
// it (|z|^HALO ≈ 7e-10 of the truncated terms), reading the extension folded into the line. The
// array is viewed as (outer, n, inner). Along every axis but the last, a workgroup takes one
// segment of 64 consecutive lines (consecutive `inner` positions), so it reads and writes
// contiguous words, and the next workgroups the next segments of the same lines, whose halos are
// then still in cache; along the last axis, consecutive threads take consecutive segments, which
// a workgroup stages through workgroup memory (its 64 segments and halos are one contiguous
// range of the array).
#import common/grid

struct Params {
    n: u32,         // line length (> 1)
    inner: u32,     // elements between consecutive samples of a line
    segments: u32,  // per line
    threads: u32,   // dispatched: lines × segments (lines rounded up to 64 but on the last axis)
    init: u32,      // 0 mirror (whole-sample symmetric), 1 reflect (half-sample), 2 wrap (periodic)
    total: u32,     // elements of the array
    lines: u32,
    unused: u32,
}  // mirrored in src/kernels/spline_prefilter.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> c: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

const Z: f32 = -0.26794919243112270;
const SEG: u32 = 32u;
const HALO: u32 = 16u;
const GROUP: u32 = 64u;
// The staged range of the last axis, padded by one word in 32 against bank conflicts.
const TILE: u32 = GROUP * SEG + 2u * HALO;
var<workgroup> tile: array<f32, 2145>;  // TILE + TILE / 32 + 1

// Along the last axis (specialised per pipeline): reads come from the staged tile.
override LAST: bool = false;

var<private> line_start: u32;  // element index of the line's sample 0
var<private> lo: u32;          // the tile's first element (LAST)
var<private> hi: u32;          // one past its last
var<private> s0: i32;          // the segment's first sample
var<private> count: u32;       // its samples inside the line (0 for threads past the end)

fn padded(i: u32) -> u32 {
    return i + i / 32u;
}

// Sample k of the extended line, k in [-HALO, n + SEG + HALO).
fn extended(k: i32) -> f32 {
    let n = i32(p.n);
    var j = k;
    if (j < 0 || j >= n) {
        if (p.init == 2u) {
            j = ((j % n) + n) % n;
        } else {
            // Whole-sample period 2n − 2, half-sample 2n.
            let whole = p.init == 0u;
            let period = select(2 * n, 2 * n - 2, whole);
            j = ((j % period) + period) % period;
            if (j >= n) {
                j = period - j - select(1, 0, whole);
            }
        }
    }
    if (LAST) {
        let e = line_start + u32(j);
        if (e >= lo && e < hi) {
            return tile[padded(e - lo)];
        }
        return x[e];
    }
    return x[line_start + u32(j) * p.inner];
}

// Output j of the segment: along the last axis into the tile (after every thread has read it),
// else straight to the array.
fn emit(j: u32, v: f32) {
    if (j < count) {
        if (LAST) {
            tile[padded(line_start + u32(s0) + j - lo)] = v;
        } else {
            c[line_start + (u32(s0) + j) * p.inner] = v;
        }
    }
}

// The causal pass from HALO samples before the segment to HALO after it, the anti-causal pass
// back from there, the segment's samples emitted.
fn passes() {
    // unrolled: begin
    var plus: array<f32, 48>;  // SEG + HALO
    var cp = 0.0;
    for (var k = s0 - i32(HALO); k < s0; k++) {
        cp = 6.0 * extended(k) + Z * cp;
    }
    for (var j = 0u; j < SEG + HALO; j++) {
        cp = 6.0 * extended(s0 + i32(j)) + Z * cp;
        plus[j] = cp;
    }
    var out: array<f32, 32>;  // SEG
    var cm = 0.0;
    for (var j = SEG + HALO; j > 0u; j--) {
        cm = Z * (cm - plus[j - 1u]);
        if (j <= SEG) {
            out[j - 1u] = cm;
        }
    }
    if (LAST) {
        workgroupBarrier();
    }
    for (var j = 0u; j < SEG; j++) {
        emit(j, out[j]);
    }
    // unrolled: end
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let group = workgroup_index(wid, nwg);
    if (group * GROUP >= p.threads) {
        return;
    }
    var segment: u32;
    var live: bool;
    let first = group * GROUP;
    let last = min(first + GROUP, p.threads) - 1u;
    let begin = (first / p.segments) * p.n + (first % p.segments) * SEG;
    let end = (last / p.segments) * p.n + min((last % p.segments) * SEG + SEG, p.n);
    if (LAST) {
        // Threads past the end compute the workgroup's first segment again and emit nothing.
        live = group * GROUP + lid < p.threads;
        let t = select(group * GROUP, group * GROUP + lid, live);
        line_start = (t / p.segments) * p.n;
        segment = t % p.segments;
        // The workgroup's segments are consecutive in memory: stage them with their halos.
        lo = max(begin, HALO) - HALO;
        hi = min(end + HALO, p.total);
        for (var i = lid; i < hi - lo; i += GROUP) {
            tile[padded(i)] = x[lo + i];
        }
        workgroupBarrier();
    } else {
        segment = group % p.segments;
        let line = (group / p.segments) * GROUP + lid;
        live = line < p.lines;
        let l = select(0u, line, live);
        line_start = (l / p.inner) * p.n * p.inner + l % p.inner;
    }
    s0 = i32(segment * SEG);
    count = select(0u, min(SEG, p.n - u32(s0)), live);
    passes();
    if (LAST) {
        // Through the tile again, so the stores are contiguous too.
        workgroupBarrier();
        for (var e = begin + lid; e < end; e += GROUP) {
            c[e] = tile[padded(e - lo)];
        }
    }
}
