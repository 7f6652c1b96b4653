// One pole of the B-spline prefilter along one axis (scipy.ndimage.spline_filter1d): the pole's
// gain, a causal pass, then an anti-causal pass (Unser, Aldroubi and Eden 1991); orders with two
// poles run the kernel once per pole (src/kernels/spline_prefilter.rs).
// scipy's initial values are the passes run over the line extended without end by the boundary
// (whole-sample symmetric, half-sample symmetric or periodic; a pole's output keeps the
// extension's symmetry, so the next pole folds it the same way), so each line is cut into
// segments of SEG samples computed independently: a segment's passes start HALO samples outside
// it (|z|^HALO ≤ 2e-9 of the truncated terms), reading the extension folded into the line. The
// array is viewed as (outer, n, inner); a workgroup takes one segment of 64 consecutive lines and
// the next workgroups the next segments of the same lines (whose halos are then still in cache),
// so segments at the line ends, which fold, are whole workgroups. Along every axis but the last
// the 64 lines are consecutive words; along the last axis a workgroup stages its 64 × 64 block
// (segment and halos) through workgroup memory, so loads and stores stay contiguous there too.
// (Lines of up to 4096 samples along the last axis go to spline_prefilter_lines.wgsl instead:
// whole lines staged, each sample read once.)
#import common/grid
#import common/line_fold
#import common/real

struct Params {
    n: u32,         // line length (> 1)
    inner: u32,     // elements between consecutive samples of a line
    segments: u32,  // per line
    init: u32,      // 0 mirror (whole-sample symmetric), 1 reflect (half-sample), 2 wrap (periodic)
    lines: u32,
}  // mirrored in src/kernels/spline_prefilter.rs

@group(0) @binding(0) var<storage, read> x: array<real>;
@group(0) @binding(1) var<storage, read_write> c: array<real>;
@group(0) @binding(2) var<uniform> p: Params;

override Z: real = -0.26794919243112270;  // the pole (√3 − 2: cubic)
override GAIN: real = 6.0;                 // (1 - z)(1 - 1/z)
// (SEG, HALO) is (32, 16), or (16, 24) for the poles of orders 4 and 5 beyond |z| = 0.27; the
// f64 twin runs this readable form unstaged (LAST false) with SEG 32 and |z|^HALO ≤ 1e-17.
override SEG: u32 = 32u;
override HALO: u32 = 16u;
const GROUP: u32 = 64u;
const SPAN: u32 = 64u;  // SEG + 2 · HALO: a staged row

// Along the last axis (specialised per pipeline): 64 lines × SPAN samples staged, row r's
// sample k at r · SPAN + (k ^ (r % 32)) (the swizzle keeps a warp's rows and columns on 32
// banks).
override LAST: bool = false;
override TILE: u32 = 4096u;  // 1 where nothing is staged (the f64 twin)
var<workgroup> tile: array<real, TILE>;

var<private> line_start: u32;  // element index of the line's sample 0
var<private> s0: i32;          // the segment's first sample
var<private> count: u32;       // its samples inside the line (0 for threads past the end)
var<private> row: u32;         // the thread's row of the tile

fn at(r: u32, k: u32) -> u32 {
    return r * SPAN + (k ^ (r & 31u));
}

// Sample k of the extended line, k in [-HALO, n + SEG + HALO).
fn extended(k: i32) -> real {
    return x[line_start + u32(fold_line(k, i32(p.n), p.init)) * p.inner];
}

// Sample k of the line where the segment and its halos lie inside it (along the last axis, from
// the tile).
fn near(k: i32) -> real {
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
fn emit(j: u32, v: real) {
    if (LAST && inside()) {
        tile[at(row, HALO + j)] = v;
    } else if (j < count) {
        c[line_start + (u32(s0) + j) * p.inner] = v;
    }
}

// The workgroup's segments: along the last axis (`staged`) the 64 × SPAN block loaded into the
// tile, row r being line first + r (the last line again past the end) from sample s0 - HALO on,
// each thread one column of every row; per thread the causal pass from HALO samples before its
// segment to HALO after it and the anti-causal pass back from there, the segment's samples
// emitted; the staged rows' outputs stored row by row, 64 / SEG rows per step. The loops below
// are the readable form; src/kernels/spline_prefilter.rs writes them out (the samples loaded
// first, without folding where the segment and its halos lie inside the line, and 32 loads in
// flight per thread when staging, so loads issue together).
fn segments(staged: bool, first: u32, lid: u32) {
    // unrolled: begin
    if (staged) {
        for (var r = 0u; r < GROUP; r++) {
            tile[at(r, lid)] = x[min(first + r, p.lines - 1u) * p.n + u32(s0) - HALO + lid];
        }
        workgroupBarrier();
    }
    var plus: array<real, 96>;  // SEG + HALO at most (the f64 twin's halos are longer)
    var cp = real(0.0);
    for (var k = s0 - i32(HALO); k < s0; k++) {
        cp = GAIN * extended(k) + Z * cp;
    }
    for (var j = 0u; j < SEG + HALO; j++) {
        cp = GAIN * extended(s0 + i32(j)) + Z * cp;
        plus[j] = cp;
    }
    var out: array<real, 32>;  // SEG at most
    var cm = real(0.0);
    for (var j = SEG + HALO; j > 0u; j--) {
        cm = Z * (cm - plus[j - 1u]);
        if (j <= SEG) {
            out[j - 1u] = cm;
        }
    }
    for (var j = 0u; j < SEG; j++) {
        emit(j, out[j]);
    }
    if (staged) {
        workgroupBarrier();
        for (var r = lid / SEG; r < GROUP; r += GROUP / SEG) {
            if (first + r < p.lines) {
                c[(first + r) * p.n + u32(s0) + lid % SEG] = tile[at(r, HALO + lid % SEG)];
            }
        }
    }
    // unrolled: end
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let group = workgroup_index(wid, nwg);
    let segment = group % p.segments;
    let first = (group / p.segments) * GROUP;  // the workgroup's first line
    if (first >= p.lines) {
        return;
    }
    let line = first + lid;
    let live = line < p.lines;
    let l = select(first, line, live);  // threads past the end compute the first line again
    line_start = (l / p.inner) * p.n * p.inner + l % p.inner;
    s0 = i32(segment * SEG);
    count = select(0u, min(SEG, p.n - u32(s0)), live);
    row = lid;
    // (From the workgroup's values: the uniformity analysis takes private variables as varying.)
    let staged = LAST && segment * SEG >= HALO && segment * SEG + SEG + HALO <= p.n;
    segments(staged, first, lid);
}
