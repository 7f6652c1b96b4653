// The cubic B-spline prefilter along one axis (scipy.ndimage.spline_filter1d, order 3): the gain
// 6, a causal pass, then an anti-causal pass (Unser, Aldroubi and Eden 1991; pole z = √3 − 2).
// scipy's initial values are the two passes run over the line extended without end by the
// boundary (whole-sample symmetric, half-sample symmetric or periodic), so each line is cut into
// segments of SEG samples computed independently: a segment's passes start HALO samples outside
// it (|z|^HALO ≈ 7e-10 of the truncated terms), reading the extension folded into the line. The
// array is viewed as (outer, n, inner). Along every axis but the last, consecutive threads take
// consecutive `inner` positions, so a workgroup reads and writes contiguous words; along the last
// axis, consecutive threads take consecutive segments, which a workgroup stages through
// workgroup memory (its 64 segments and halos are one contiguous range of the array).
#import common/grid

struct Params {
    n: u32,         // line length (> 1)
    inner: u32,     // elements between consecutive samples of a line
    segments: u32,  // per line
    threads: u32,   // lines × segments
    init: u32,      // 0 mirror (whole-sample symmetric), 1 reflect (half-sample), 2 wrap (periodic)
    total: u32,     // elements of the array
    unused0: u32,
    unused1: u32,
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

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let group = workgroup_index(wid, nwg);
    if (group * GROUP >= p.threads) {
        return;
    }
    let t = group * GROUP + lid;
    let live = t < p.threads;
    var segment: u32;
    if (LAST) {
        line_start = (t / p.segments) * p.n;
        segment = t % p.segments;
        // The workgroup's segments are consecutive in memory: stage them with their halos.
        let first = group * GROUP;
        let last = min(first + GROUP, p.threads) - 1u;
        let start = (first / p.segments) * p.n + (first % p.segments) * SEG;
        let end = min((last % p.segments) * SEG + SEG, p.n) + (last / p.segments) * p.n;
        lo = max(start, HALO) - HALO;
        hi = min(end + HALO, p.total);
        for (var i = lid; i < hi - lo; i += GROUP) {
            tile[padded(i)] = x[lo + i];
        }
        workgroupBarrier();
    } else {
        let rest = t / p.inner;
        segment = rest % p.segments;
        line_start = (rest / p.segments) * p.n * p.inner + t % p.inner;
    }
    let s0 = i32(segment * SEG);
    var plus: array<f32, 48>;  // the causal pass over [s0, s0 + SEG + HALO)
    if (live) {
        var cp = 0.0;
        for (var k = s0 - i32(HALO); k < s0; k++) {
            cp = 6.0 * extended(k) + Z * cp;
        }
        for (var j = 0u; j < SEG + HALO; j++) {
            cp = 6.0 * extended(s0 + i32(j)) + Z * cp;
            plus[j] = cp;
        }
    }
    var out: array<f32, 32>;
    var cm = 0.0;
    for (var j = SEG + HALO; j > SEG; j--) {
        cm = Z * (cm - plus[j - 1u]);
    }
    for (var j = SEG; j > 0u; j--) {
        cm = Z * (cm - plus[j - 1u]);
        out[j - 1u] = cm;
    }
    let count = min(SEG, p.n - min(u32(s0), p.n));
    if (LAST) {
        // Through the tile again, so the stores are contiguous too.
        workgroupBarrier();
        let base = line_start + u32(s0) - lo;
        if (live) {
            for (var j = 0u; j < count; j++) {
                tile[padded(base + j)] = out[j];
            }
        }
        workgroupBarrier();
        let first = group * GROUP;
        let begin = (first / p.segments) * p.n + (first % p.segments) * SEG;
        let last = min(first + GROUP, p.threads) - 1u;
        let end = min((last % p.segments) * SEG + SEG, p.n) + (last / p.segments) * p.n;
        for (var e = begin + lid; e < end; e += GROUP) {
            c[e] = tile[padded(e - lo)];
        }
    } else if (live) {
        for (var j = 0u; j < count; j++) {
            c[line_start + (u32(s0) + j) * p.inner] = out[j];
        }
    }
}
