// The cubic B-spline prefilter along one axis (scipy.ndimage.spline_filter1d, order 3): the gain
// 6, a causal pass, then an anti-causal pass (Unser, Aldroubi and Eden 1991; pole z = √3 − 2).
// scipy's initial values are the two passes run over the line extended without end by the
// boundary (whole-sample symmetric, half-sample symmetric or periodic), so each line is cut into
// segments of SEG samples computed independently: a segment's passes start HALO samples outside
// it (|z|^HALO ≈ 7e-10 of the truncated terms), reading the extension folded into the line. The
// array is viewed as (outer, n, inner); a workgroup takes one segment of 64 consecutive lines and
// the next workgroups the next segments of the same lines (whose halos are then still in cache),
// so segments at the line ends, which fold, are whole workgroups. Along every axis but the last
// the 64 lines are consecutive words; along the last axis a workgroup stages its 64 × 64 block
// (segment and halos) through workgroup memory, so loads and stores stay contiguous there too.
#import common/grid

struct Params {
    n: u32,         // line length (> 1)
    inner: u32,     // elements between consecutive samples of a line
    segments: u32,  // per line
    threads: u32,   // dispatched: lines rounded up to 64, × segments
    init: u32,      // 0 mirror (whole-sample symmetric), 1 reflect (half-sample), 2 wrap (periodic)
    lines: u32,
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
const SPAN: u32 = 64u;  // SEG + 2 · HALO: a staged row

// Along the last axis (specialised per pipeline): 64 lines × SPAN samples staged, row r's
// sample k at r · SPAN + (k ^ (r % 32)) (the swizzle keeps a warp's rows and columns on 32
// banks).
override LAST: bool = false;
var<workgroup> tile: array<f32, 4096>;

var<private> line_start: u32;  // element index of the line's sample 0
var<private> s0: i32;          // the segment's first sample
var<private> count: u32;       // its samples inside the line (0 for threads past the end)
var<private> row: u32;         // the thread's row of the tile

fn at(r: u32, k: u32) -> u32 {
    return r * SPAN + (k ^ (r & 31u));
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
    return x[line_start + u32(j) * p.inner];
}

// Sample k of the line where the segment and its halos lie inside it (along the last axis, from
// the tile).
fn near(k: i32) -> f32 {
    if (LAST) {
        return tile[at(row, u32(k + i32(HALO) - s0))];
    }
    return x[line_start + u32(k) * p.inner];
}

// Whether the segment and its halos lie inside the line (the same for the whole workgroup).
fn inside() -> bool {
    return s0 >= i32(HALO) && s0 + i32(SEG + HALO) <= i32(p.n);
}

// Output j of the segment: along the last axis into the tile's row (the thread's own, stored
// by the workgroup afterwards), else straight to the array.
fn emit(j: u32, v: f32) {
    if (LAST && inside()) {
        tile[at(row, HALO + j)] = v;
    } else if (j < count) {
        c[line_start + (u32(s0) + j) * p.inner] = v;
    }
}

// The causal pass from HALO samples before the segment to HALO after it, the anti-causal pass
// back from there, the segment's samples emitted. The loops below are the readable form;
// src/kernels/spline_prefilter.rs writes them out (the samples loaded first, without folding
// where the segment and its halos lie inside the line, so the loads issue together).
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
    let segment = group % p.segments;
    let first = (group / p.segments) * GROUP;  // the workgroup's first line
    let line = first + lid;
    let live = line < p.lines;
    let l = select(first, line, live);  // threads past the end compute the first line again
    line_start = (l / p.inner) * p.n * p.inner + l % p.inner;
    s0 = i32(segment * SEG);
    count = select(0u, min(SEG, p.n - u32(s0)), live);
    row = lid;
    // (From the workgroup's values: the uniformity analysis takes private variables as varying.)
    let staged = LAST && segment * SEG >= HALO && segment * SEG + SEG + HALO <= p.n;
    if (staged) {
        // Row r is line first + r (the last line again past the end), samples s0 - HALO on;
        // each thread loads one column of every row, 32 loads in flight.
        let last_line = p.lines - 1u;
        let column = u32(s0) - HALO + lid;
        for (var r = 0u; r < GROUP; r += 32u) {
            let v0 = x[min(first + r + 0u, last_line) * p.n + column];
            let v1 = x[min(first + r + 1u, last_line) * p.n + column];
            let v2 = x[min(first + r + 2u, last_line) * p.n + column];
            let v3 = x[min(first + r + 3u, last_line) * p.n + column];
            let v4 = x[min(first + r + 4u, last_line) * p.n + column];
            let v5 = x[min(first + r + 5u, last_line) * p.n + column];
            let v6 = x[min(first + r + 6u, last_line) * p.n + column];
            let v7 = x[min(first + r + 7u, last_line) * p.n + column];
            let v8 = x[min(first + r + 8u, last_line) * p.n + column];
            let v9 = x[min(first + r + 9u, last_line) * p.n + column];
            let v10 = x[min(first + r + 10u, last_line) * p.n + column];
            let v11 = x[min(first + r + 11u, last_line) * p.n + column];
            let v12 = x[min(first + r + 12u, last_line) * p.n + column];
            let v13 = x[min(first + r + 13u, last_line) * p.n + column];
            let v14 = x[min(first + r + 14u, last_line) * p.n + column];
            let v15 = x[min(first + r + 15u, last_line) * p.n + column];
            let v16 = x[min(first + r + 16u, last_line) * p.n + column];
            let v17 = x[min(first + r + 17u, last_line) * p.n + column];
            let v18 = x[min(first + r + 18u, last_line) * p.n + column];
            let v19 = x[min(first + r + 19u, last_line) * p.n + column];
            let v20 = x[min(first + r + 20u, last_line) * p.n + column];
            let v21 = x[min(first + r + 21u, last_line) * p.n + column];
            let v22 = x[min(first + r + 22u, last_line) * p.n + column];
            let v23 = x[min(first + r + 23u, last_line) * p.n + column];
            let v24 = x[min(first + r + 24u, last_line) * p.n + column];
            let v25 = x[min(first + r + 25u, last_line) * p.n + column];
            let v26 = x[min(first + r + 26u, last_line) * p.n + column];
            let v27 = x[min(first + r + 27u, last_line) * p.n + column];
            let v28 = x[min(first + r + 28u, last_line) * p.n + column];
            let v29 = x[min(first + r + 29u, last_line) * p.n + column];
            let v30 = x[min(first + r + 30u, last_line) * p.n + column];
            let v31 = x[min(first + r + 31u, last_line) * p.n + column];
            tile[at(r + 0u, lid)] = v0;
            tile[at(r + 1u, lid)] = v1;
            tile[at(r + 2u, lid)] = v2;
            tile[at(r + 3u, lid)] = v3;
            tile[at(r + 4u, lid)] = v4;
            tile[at(r + 5u, lid)] = v5;
            tile[at(r + 6u, lid)] = v6;
            tile[at(r + 7u, lid)] = v7;
            tile[at(r + 8u, lid)] = v8;
            tile[at(r + 9u, lid)] = v9;
            tile[at(r + 10u, lid)] = v10;
            tile[at(r + 11u, lid)] = v11;
            tile[at(r + 12u, lid)] = v12;
            tile[at(r + 13u, lid)] = v13;
            tile[at(r + 14u, lid)] = v14;
            tile[at(r + 15u, lid)] = v15;
            tile[at(r + 16u, lid)] = v16;
            tile[at(r + 17u, lid)] = v17;
            tile[at(r + 18u, lid)] = v18;
            tile[at(r + 19u, lid)] = v19;
            tile[at(r + 20u, lid)] = v20;
            tile[at(r + 21u, lid)] = v21;
            tile[at(r + 22u, lid)] = v22;
            tile[at(r + 23u, lid)] = v23;
            tile[at(r + 24u, lid)] = v24;
            tile[at(r + 25u, lid)] = v25;
            tile[at(r + 26u, lid)] = v26;
            tile[at(r + 27u, lid)] = v27;
            tile[at(r + 28u, lid)] = v28;
            tile[at(r + 29u, lid)] = v29;
            tile[at(r + 30u, lid)] = v30;
            tile[at(r + 31u, lid)] = v31;
        }
        workgroupBarrier();
    }
    passes();
    if (staged) {
        // The rows' outputs stored row by row: two rows of SEG per step, 16 per round.
        workgroupBarrier();
        let half = lid / SEG;
        let k = lid % SEG;
        for (var r = half; r < GROUP; r += 16u) {
            let o0 = tile[at(r + 0u, HALO + k)];
            let o1 = tile[at(r + 2u, HALO + k)];
            let o2 = tile[at(r + 4u, HALO + k)];
            let o3 = tile[at(r + 6u, HALO + k)];
            let o4 = tile[at(r + 8u, HALO + k)];
            let o5 = tile[at(r + 10u, HALO + k)];
            let o6 = tile[at(r + 12u, HALO + k)];
            let o7 = tile[at(r + 14u, HALO + k)];
            if (first + r + 0u < p.lines) {
                c[(first + r + 0u) * p.n + u32(s0) + k] = o0;
            }
            if (first + r + 2u < p.lines) {
                c[(first + r + 2u) * p.n + u32(s0) + k] = o1;
            }
            if (first + r + 4u < p.lines) {
                c[(first + r + 4u) * p.n + u32(s0) + k] = o2;
            }
            if (first + r + 6u < p.lines) {
                c[(first + r + 6u) * p.n + u32(s0) + k] = o3;
            }
            if (first + r + 8u < p.lines) {
                c[(first + r + 8u) * p.n + u32(s0) + k] = o4;
            }
            if (first + r + 10u < p.lines) {
                c[(first + r + 10u) * p.n + u32(s0) + k] = o5;
            }
            if (first + r + 12u < p.lines) {
                c[(first + r + 12u) * p.n + u32(s0) + k] = o6;
            }
            if (first + r + 14u < p.lines) {
                c[(first + r + 14u) * p.n + u32(s0) + k] = o7;
            }
        }
    }
}
