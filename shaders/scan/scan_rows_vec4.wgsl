// Prefix sums along rows whose length is a multiple of 4 and longer than scan_rows's tile (1024):
// `x` viewed as (rows, len), every row scanned on its own, in whole vec4s (a row then starts on a
// vec4 boundary). Other rows (short ones, packed several to a tile, and lengths that are not
// multiples of 4) take scan_rows.wgsl, which also scans this kernel's tile totals.
//
// One workgroup scans one tile of BLOCK = 4096 elements of one row, held in registers: thread t
// loads the vec4s k * 256 + t (k = 0..3), so every load and store is a coalesced 16-byte access,
// and the tile falls into four quarters of 1024 elements, quarter k made of every thread's k-th
// vec4. Per thread: a scan within each vec4, its four sums (one per quarter) as a vec4; one
// workgroup scan over threads of those vec4s scans the four quarters at once (each lane its own
// quarter). Long rows are reduce-then-scan, three passes over this one kernel:
//   PHASE 0  each tile writes its four quarter totals to out[tile] (one vec4: a plain workgroup
//            reduction, no scan);
//            the totals, viewed as (rows, 4 * blocks_per_row), are scanned exclusively
//            (recursively, by scan_rows's wrapper);
//   PHASE 1  each tile is scanned starting from its quarters' offsets, offsets[tile].
// Rows that fit one tile take a single PHASE 2 pass (the quarters' offsets from the tile itself).
//
// Why this is faster than scan_rows.wgsl for long rows (which took 18% of the copy roof on an
// H200 for one row of 1 GiB): 4x the elements per workgroup (a quarter of the workgroups and
// barriers per element), 16-byte coalesced loads and stores straight to and from registers (no
// staging of the tile in workgroup memory; 8 KiB of it per workgroup, for the scan of thread
// sums), a workgroup scan of 4 radix-4 rounds (4 barriers; scan_rows's segmented Hillis-Steele
// takes 8 rounds, 16 barriers before it was double-buffered) and a PHASE 0 that is a 4-round
// reduction instead of a whole segmented scan. Writing the four quarter totals (not one tile
// total) keeps every store a whole vec4 written by one thread, and hands PHASE 1 the quarters'
// offsets ready-made; the totals are 1/1024 of the row, as before, so the levels are as many.
//
// Summation path of an output (for the accuracy bound in src/tests/scan.rs): at most 2 additions
// within its vec4 (pairwise), 2 for the vec4's sum, 8 in the workgroup scan (2 per radix-4
// round), 2 adding the carry; a quarter total takes 2 + 8 (pairwise within the vec4, then 4
// rounds of pairwise sums of 4).
#import common/grid

override EXCLUSIVE: bool = false;
override PHASE: u32 = 2u;

const THREADS: u32 = 256u;
const QUARTER: u32 = 256u; // vec4s per quarter of a tile: one per thread
const BLOCK: u32 = 4096u;  // elements per tile; mirrored as BLOCK in src/kernels/scan_rows_vec4.rs
const TILE4: u32 = BLOCK / 4u; // vec4s per tile: 4 quarters

// Mirrored in src/kernels/scan_rows_vec4.rs.
struct Params {
    len4: u32,           // row length in vec4s
    blocks_per_row: u32, // tiles per row
    tiles: u32,          // rows * blocks_per_row (the folded grid may hold a few more workgroups)
    pad0: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> offsets: array<vec4<f32>>; // PHASE 1 only (else bound to x)
@group(0) @binding(2) var<storage, read_write> out: array<vec4<f32>>; // scan (PHASE 1, 2) or quarter totals (PHASE 0)
@group(0) @binding(3) var<uniform> p: Params;

// Two halves of THREADS vec4s, read and written in turn by the rounds below (one barrier a round).
var<workgroup> buf: array<vec4<f32>, 512>;

// The sum of one thread's vec4 of every thread (lane by lane), for thread 0; 4 rounds, each
// summing 4 values pairwise.
fn reduce_threads(v: vec4<f32>, lid: u32) -> vec4<f32> {
    var src = 0u;
    buf[lid] = v;
    for (var n = THREADS / 4u; n > 0u; n = n / 4u) {
        workgroupBarrier();
        let dst = THREADS - src;
        if (lid < n) {
            let b = src + 4u * lid;
            buf[dst + lid] = (buf[b] + buf[b + 1u]) + (buf[b + 2u] + buf[b + 3u]);
        }
        src = dst;
    }
    var total = vec4(0.0);
    if (lid == 0u) {
        total = buf[src]; // thread 0 wrote it last
    }
    return total;
}

struct Scanned {
    before: vec4<f32>, // sum over the threads before this one
    total: vec4<f32>,  // sum over all threads
}

// Scan over threads of one vec4 per thread, lane by lane (Kogge-Stone, radix 4): after the round
// of stride d a thread holds the sum of the 4d threads up to itself. 4 rounds, one barrier each.
fn scan_threads(v: vec4<f32>, lid: u32) -> Scanned {
    var s = v;
    var src = 0u;
    buf[lid] = s;
    for (var d = 1u; d < THREADS; d = d * 4u) {
        workgroupBarrier();
        var a = vec4(0.0);
        var b = vec4(0.0);
        var c = vec4(0.0);
        if (lid >= d) {
            a = buf[src + lid - d];
        }
        if (lid >= 2u * d) {
            b = buf[src + lid - 2u * d];
        }
        if (lid >= 3u * d) {
            c = buf[src + lid - 3u * d];
        }
        s = (c + b) + (a + s);
        src = THREADS - src;
        buf[src + lid] = s;
    }
    workgroupBarrier();
    var before = vec4(0.0);
    if (lid > 0u) {
        before = buf[src + lid - 1u];
    }
    return Scanned(before, buf[src + THREADS - 1u]);
}

// Pairwise sum of a vec4's lanes.
fn lanes_sum(v: vec4<f32>) -> f32 {
    return (v.x + v.y) + (v.z + v.w);
}

// Scan within one vec4 (inclusive or exclusive), pairwise: at most 2 additions deep.
fn scan_lanes(v: vec4<f32>) -> vec4<f32> {
    let a = v.x + v.y;
    if (EXCLUSIVE) {
        return vec4(0.0, v.x, a, a + v.z);
    }
    return vec4(v.x, a, a + v.z, a + (v.z + v.w));
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = workgroup_index(wid, nwg);
    if (w >= p.tiles) {
        return; // uniform: the whole workgroup leaves before any barrier
    }
    let row = w / p.blocks_per_row;
    let first = (w - row * p.blocks_per_row) * TILE4; // the tile's first vec4 within its row
    let start = row * p.len4 + first;
    let count = min(TILE4, p.len4 - first); // vec4s in this tile

    // Quarter k of the tile: this thread's vec4 k * QUARTER + lid (zero past the row's end).
    let q0 = lid;
    let q1 = QUARTER + lid;
    let q2 = 2u * QUARTER + lid;
    let q3 = 3u * QUARTER + lid;
    var v0 = vec4(0.0);
    var v1 = vec4(0.0);
    var v2 = vec4(0.0);
    var v3 = vec4(0.0);
    if (q0 < count) {
        v0 = x[start + q0];
    }
    if (q1 < count) {
        v1 = x[start + q1];
    }
    if (q2 < count) {
        v2 = x[start + q2];
    }
    if (q3 < count) {
        v3 = x[start + q3];
    }
    // The quarters' offsets (PHASE 1), loaded before the barriers so their latency overlaps
    // the tile's.
    var base = vec4(0.0);
    if (PHASE == 1u) {
        base = offsets[w];
    }
    let sums = vec4(lanes_sum(v0), lanes_sum(v1), lanes_sum(v2), lanes_sum(v3));

    if (PHASE == 0u) {
        let totals = reduce_threads(sums, lid);
        if (lid == 0u) {
            out[w] = totals;
        }
        return;
    }

    let scanned = scan_threads(sums, lid);
    // PHASE 2: the quarters' offsets within this tile.
    if (PHASE == 2u) {
        let t = scanned.total;
        let a = t.x + t.y;
        base = vec4(0.0, t.x, a, a + t.z);
    }
    // carry[k]: the row's sum before this thread's vec4 in quarter k.
    let carry = base + scanned.before;
    if (q0 < count) {
        out[start + q0] = carry.x + scan_lanes(v0);
    }
    if (q1 < count) {
        out[start + q1] = carry.y + scan_lanes(v1);
    }
    if (q2 < count) {
        out[start + q2] = carry.z + scan_lanes(v2);
    }
    if (q3 < count) {
        out[start + q3] = carry.w + scan_lanes(v3);
    }
}
