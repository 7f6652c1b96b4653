// Prefix sums along rows: `x` viewed as (rows, len), every row scanned on its own.
//
// One workgroup scans one tile of BLOCK elements in workgroup memory: either a block of one long
// row (len > BLOCK, "block mode") or several whole short rows ("packed mode", so that many short
// rows still fill the workgroups), as a segmented scan that restarts at every row start.
// Long rows are reduce-then-scan, three passes over this one kernel:
//   PHASE 0  each tile writes its total to out[tile] (a plain workgroup reduction);
//            the totals, viewed as (rows, blocks_per_row), are scanned exclusively (recursively);
//   PHASE 1  each tile is scanned starting from offsets[tile].
// Rows that fit one tile take a single PHASE 2 pass (no offsets).
// Loads and stores are coalesced (element k * THREADS + lid); each thread then scans ITEMS
// consecutive elements from workgroup memory.
// Rows longer than BLOCK whose length is a multiple of 4 take scan_rows_vec4.wgsl instead (4x the
// tile, 16-byte loads and stores, far fewer barriers per element): this kernel serves short rows,
// rows whose length is not a multiple of 4, and the totals of both kernels' long rows.
#import common/grid

override EXCLUSIVE: bool = false;
override PHASE: u32 = 2u;

const THREADS: u32 = 256u;
const ITEMS: u32 = 4u;
const BLOCK: u32 = 1024u;  // THREADS * ITEMS; mirrored as BLOCK in src/kernels/scan_rows.rs

// Mirrored in src/kernels/scan_rows.rs.
struct Params {
    len: u32,            // row length
    total: u32,          // rows * len
    blocks_per_row: u32, // > 1 in block mode, 1 in packed mode
    tile_len: u32,       // packed mode: elements per tile (whole rows)
    tiles: u32,          // workgroups with work (the folded grid may hold a few more)
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> offsets: array<f32>;   // PHASE 1 only (else bound to x)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // scan (PHASE 1, 2) or tile totals (PHASE 0)
@group(0) @binding(3) var<uniform> p: Params;

// Padded by one word every 32 so that threads reading ITEMS consecutive words avoid bank conflicts.
var<workgroup> tile: array<f32, 1056>;
// Two halves of THREADS words, read and written in turn by the rounds below (one barrier a round).
var<workgroup> part_sum: array<f32, 512>;
var<workgroup> part_head: array<u32, 512>;

fn padded(i: u32) -> u32 {
    return i + (i >> 5u);
}

// Inclusive segmented scan of one (head, sum) pair per thread (Hillis-Steele, 8 rounds of one
// barrier each): returns the sum of threads 0..t-1 since the last row start among them, i.e. the
// scan's value at thread t - 1 (0 for thread 0).
fn scan_parts(head: bool, sum: f32, lid: u32) -> f32 {
    var s = sum;
    var h = u32(head);
    var src = 0u;
    part_sum[lid] = s;
    part_head[lid] = h;
    for (var d = 1u; d < THREADS; d = d << 1u) {
        workgroupBarrier();
        if (lid >= d) {
            if (h == 0u) {
                s = part_sum[src + lid - d] + s;
            }
            h = h | part_head[src + lid - d];
        }
        src = THREADS - src;
        part_sum[src + lid] = s;
        part_head[src + lid] = h;
    }
    workgroupBarrier();
    var before = 0.0;
    if (lid > 0u) {
        before = part_sum[src + lid - 1u];
    }
    return before;
}

// The sum of one value per thread, for thread 0: 4 rounds, each summing 4 values pairwise.
fn reduce_parts(v: f32, lid: u32) -> f32 {
    var src = 0u;
    part_sum[lid] = v;
    for (var n = THREADS / 4u; n > 0u; n = n / 4u) {
        workgroupBarrier();
        let dst = THREADS - src;
        if (lid < n) {
            let b = src + 4u * lid;
            part_sum[dst + lid] = (part_sum[b] + part_sum[b + 1u]) + (part_sum[b + 2u] + part_sum[b + 3u]);
        }
        src = dst;
    }
    var total = 0.0;
    if (lid == 0u) {
        total = part_sum[src]; // thread 0 wrote it last
    }
    return total;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = workgroup_index(wid, nwg);
    if (w >= p.tiles) {
        return; // uniform: the whole workgroup leaves before any barrier
    }
    var start: u32;
    var count: u32;
    if (p.blocks_per_row > 1u) {
        let row = w / p.blocks_per_row;
        let block = w - row * p.blocks_per_row;
        start = row * p.len + block * BLOCK;
        count = min(BLOCK, p.len - block * BLOCK);
    } else {
        start = w * p.tile_len;
        count = min(p.tile_len, p.total - start);
    }

    if (PHASE == 0u) {
        // Block mode only: a tile lies inside one row, so its total is a plain sum (a reduction,
        // pairwise within the thread, then over threads).
        var v: array<f32, ITEMS>;
        for (var k = 0u; k < ITEMS; k++) {
            let i = k * THREADS + lid;
            v[k] = 0.0;
            if (i < count) {
                v[k] = x[start + i];
            }
        }
        let total = reduce_parts((v[0] + v[1]) + (v[2] + v[3]), lid); // ITEMS = 4
        if (lid == 0u) {
            out[w] = total;
        }
        return;
    }

    // The tile's offset (PHASE 1), loaded before the barriers so its latency overlaps the tile's.
    var offset = 0.0;
    if (PHASE == 1u) {
        offset = offsets[w];
    }
    for (var k = 0u; k < ITEMS; k++) {
        let i = k * THREADS + lid;
        var v = 0.0;
        if (i < count) {
            v = x[start + i];
        }
        tile[padded(i)] = v;
    }
    workgroupBarrier();

    // This thread's ITEMS elements: their sum since the last row start among them.
    let first = lid * ITEMS;
    let first_pos = (start + first) % p.len; // position in its row of the first element
    var pos = first_pos;
    var head = false;
    var s = 0.0;
    for (var k = 0u; k < ITEMS; k++) {
        if (pos == 0u) {
            head = true;
            s = 0.0;
        }
        s += tile[padded(first + k)];
        pos = select(pos + 1u, 0u, pos + 1u == p.len);
    }
    let before = scan_parts(head, s, lid);

    // Carry into this thread: the tile's offset plus earlier threads' sum since the last row
    // start (the offset is zero whenever a row starts inside the tile).
    var run = offset;
    if (lid > 0u) {
        run += before;
    }
    pos = first_pos;
    for (var k = 0u; k < ITEMS; k++) {
        if (pos == 0u) {
            run = 0.0;
        }
        let j = padded(first + k);
        let v = tile[j];
        if (EXCLUSIVE) {
            tile[j] = run;
            run += v;
        } else {
            run += v;
            tile[j] = run;
        }
        pos = select(pos + 1u, 0u, pos + 1u == p.len);
    }
    workgroupBarrier();

    for (var k = 0u; k < ITEMS; k++) {
        let i = k * THREADS + lid;
        if (i < count) {
            out[start + i] = tile[padded(i)];
        }
    }
}
