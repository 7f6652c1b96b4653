// Reduces each row of a (rows, len) row-major array; the whole array is one row. A team of
// `team` threads (a power of two up to the workgroup) reduces one chunk of one row: each thread
// accumulates its share, then a tree over the team gives one partial, or the row's result when
// one chunk covers the row. Short rows get small teams, several rows to a workgroup, so the tree
// stays short; long rows get whole-workgroup teams and several chunks, and
// src/kernels/reduce_rows.rs repeats passes over the partials until one chunk is left.
// OP selects the reduction (codes in reduce_rows.rs).
#import common/grid
#import common/float
#import common/reduce

override OP: u32;
// 1: x holds the f32 data, read as vec4 (rows need not start on a vec4: lanes outside the row are
// masked). 0: x holds (v, w) partials of an earlier pass, two per vec4.
override FIRST: u32;

// Mirrored in src/kernels/reduce_rows.rs.
struct Params {
    rows: u32,
    len: u32,     // items per row: elements on the first pass, partials after
    chunks: u32,  // teams per row
    iters: u32,   // trips per thread through its chunk
    team: u32,    // threads per (row, chunk): a power of two dividing WG
    finish: u32,  // 1: write each row's result (value bits or index); 0: write partials
    one: f32,     // 1.0, opaque to the compiler (common/reduce)
    pad: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

const WG = 256u;
const LOADS = 4u; // loads each thread has in flight per trip

var<workgroup> tree_v: array<f32, WG>;
var<workgroup> tree_w: array<u32, WG>;

// The vec4 `v` loaded from x[q], masked to the row [start, end) (element indices), into the lanes.
fn add_vec4(acc: Lanes, v: vec4<f32>, q: u32, start: u32, end: u32) -> Lanes {
    let e = vec4(4u * q) + vec4(0u, 1u, 2u, 3u);
    let inside = (e >= vec4(start)) & (e < vec4(end));
    return add_lanes(acc, pre(v), e - vec4(start), inside);
}

// First pass: this thread's share (`lane` of the team) of chunk `chunk` of row `row`.
fn data_partial(row: u32, chunk: u32, lane: u32) -> Partial {
    let start = row * p.len;
    let end = start + p.len;
    let last = (end + 3u) / 4u - 1u; // the last vec4 touching the row; loads clamp to it
    var q = start / 4u + chunk * p.team * LOADS * p.iters + lane;
    var acc = empty_lanes();
    for (var t = 0u; t < p.iters; t++) {
        // Four independent loads, then the arithmetic: keeps memory requests in flight.
        let v0 = x[min(q, last)];
        let v1 = x[min(q + p.team, last)];
        let v2 = x[min(q + 2u * p.team, last)];
        let v3 = x[min(q + 3u * p.team, last)];
        acc = add_vec4(acc, v0, q, start, end);
        acc = add_vec4(acc, v1, q + p.team, start, end);
        acc = add_vec4(acc, v2, q + 2u * p.team, start, end);
        acc = add_vec4(acc, v3, q + 3u * p.team, start, end);
        q += LOADS * p.team;
    }
    return lanes_partial(acc);
}

// Partial `i` of row `row` of an earlier pass (empty past the row's end).
fn load_partial(row: u32, i: u32) -> Partial {
    let k = row * p.len + min(i, p.len - 1u);
    let pair = x[k / 2u];
    let h = select(pair.xy, pair.zw, (k & 1u) == 1u);
    if (i >= p.len) {
        return empty_partial();
    }
    return Partial(h.x, bitcast<u32>(h.y));
}

// Later passes: this thread's share of the partials of chunk `chunk` of row `row`.
fn partials_partial(row: u32, chunk: u32, lane: u32) -> Partial {
    var acc = empty_partial();
    var i = chunk * p.team * LOADS * p.iters + lane;
    for (var t = 0u; t < p.iters; t++) {
        let a = load_partial(row, i);
        let b = load_partial(row, i + p.team);
        let c = load_partial(row, i + 2u * p.team);
        let d = load_partial(row, i + 3u * p.team);
        acc = combine(acc, combine(combine(a, b), combine(c, d)));
        i += LOADS * p.team;
    }
    return acc;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let teams = p.rows * p.chunks;
    let first_team = workgroup_index(wid, nwg) * (WG / p.team);
    if (first_team >= teams) {
        return; // a spare workgroup of the folded grid; uniform, before any barrier
    }
    let item = first_team + lid / p.team; // this thread's (row, chunk)
    let lane = lid % p.team;
    let row = item / p.chunks;
    let chunk = item % p.chunks;
    var mine = empty_partial();
    if (item < teams) {
        if (FIRST == 1u) {
            mine = data_partial(row, chunk, lane);
        } else {
            mine = partials_partial(row, chunk, lane);
        }
    }
    tree_v[lid] = mine.v;
    tree_w[lid] = mine.w;
    workgroupBarrier();
    for (var s = p.team / 2u; s > 0u; s >>= 1u) {
        if (lane < s) {
            let r = combine(Partial(tree_v[lid], tree_w[lid]), Partial(tree_v[lid + s], tree_w[lid + s]));
            tree_v[lid] = r.v;
            tree_w[lid] = r.w;
        }
        workgroupBarrier();
    }
    if (lane == 0u && item < teams) {
        let r = Partial(tree_v[lid], tree_w[lid]);
        if (p.finish == 1u) {
            out[row] = result_word(r);
        } else {
            out[2u * item] = bitcast<u32>(r.v);
            out[2u * item + 1u] = r.w;
        }
    }
}
