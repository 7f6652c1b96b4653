// Block matching, a reference block a workgroup: the threads share its search window's
// blocks (walked in linear order), each block's sum of squared differences to the reference
// block kept in workgroup memory; then the group, smallest first, one workgroup minimum a
// slot (ties to the lower linear index), the reference itself first. Then the count: the
// matches within the cap, at least two where two exist, at most `most`, rounded down to a
// power of two. (One thread per reference block walking its whole window ran on lavapipe
// for a few hundred blocks and stopped.)
#import common/grid

// Mirrored in src/kernels/bm_match.rs.
struct Params {
    n0: u32, n1: u32, n2: u32, most: u32,
    b0: u32, b1: u32, b2: u32, cap: f32,
    g0: u32, g1: u32, g2: u32, unused0: u32,
    s0: u32, s1: u32, s2: u32, unused1: u32,
    w0: u32, w1: u32, w2: u32, unused2: u32,
}

@group(0) @binding(0) var<storage, read> data: array<f32>;
// Per reference block, `most` slots: the linear index of each match's first voxel.
@group(0) @binding(1) var<storage, read_write> groups: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

const MOST: u32 = 32u;
const WG: u32 = 64u;
// The most blocks a search window may hold (src/ops/denoise/bm/mod.rs checks it).
const WINDOW: u32 = 3584u;

var<workgroup> dist: array<f32, WINDOW>;
var<workgroup> tree_d: array<f32, WG>;
var<workgroup> tree_i: array<u32, WG>;

// (d, i) before (e, j): smaller distance, then lower index.
fn before(d: f32, i: u32, e: f32, j: u32) -> bool {
    return d < e || (d == e && i < j);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let r = workgroup_index(wid, nwg);
    if (r >= p.g0 * p.g1 * p.g2) {
        return;
    }
    // The reference block: every step, the last at n − b.
    let q0 = min((r / (p.g1 * p.g2)) * p.s0, p.n0 - p.b0);
    let q1 = min(((r / p.g2) % p.g1) * p.s1, p.n1 - p.b1);
    let q2 = min((r % p.g2) * p.s2, p.n2 - p.b2);
    let plane = p.n1 * p.n2;
    let at = (q0 * p.n1 + q1) * p.n2 + q2;
    let lo0 = u32(max(i32(q0) - i32(p.w0), 0));
    let lo1 = u32(max(i32(q1) - i32(p.w1), 0));
    let lo2 = u32(max(i32(q2) - i32(p.w2), 0));
    let e1 = min(q1 + p.w1, p.n1 - p.b1) + 1u - lo1;
    let e2 = min(q2 + p.w2, p.n2 - p.b2) + 1u - lo2;
    let blocks = (min(q0 + p.w0, p.n0 - p.b0) + 1u - lo0) * e1 * e2;
    for (var c = lid; c < blocks; c += WG) {
        let cand = ((lo0 + c / (e1 * e2)) * p.n1 + lo1 + (c / e2) % e1) * p.n2 + lo2 + c % e2;
        var d = 0.0;
        for (var u0 = 0u; u0 < p.b0; u0++) {
            for (var u1 = 0u; u1 < p.b1; u1++) {
                let row = u0 * plane + u1 * p.n2;
                for (var u2 = 0u; u2 < p.b2; u2++) {
                    let t = data[at + row + u2] - data[cand + row + u2];
                    d += t * t;
                }
            }
        }
        // The reference first.
        dist[c] = select(d, -1.0, cand == at);
    }
    workgroupBarrier();
    // Slot by slot, the workgroup's smallest (taken ones marked infinite); all threads keep
    // the same count.
    let take = min(p.most, blocks);
    var within = 0u;
    for (var slot = 0u; slot < take; slot++) {
        var bd = 3.4e38;
        var bi = 0xffffffffu;
        for (var c = lid; c < blocks; c += WG) {
            if (before(dist[c], c, bd, bi)) {
                bd = dist[c];
                bi = c;
            }
        }
        tree_d[lid] = bd;
        tree_i[lid] = bi;
        workgroupBarrier();
        for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
            if (lid < stride && before(tree_d[lid + stride], tree_i[lid + stride], tree_d[lid], tree_i[lid])) {
                tree_d[lid] = tree_d[lid + stride];
                tree_i[lid] = tree_i[lid + stride];
            }
            workgroupBarrier();
        }
        let c = tree_i[0];
        let d = tree_d[0];
        within += u32(d <= p.cap);
        if (lid == 0u) {
            groups[r * p.most + slot] = ((lo0 + c / (e1 * e2)) * p.n1 + lo1 + (c / e2) % e1) * p.n2 + lo2 + c % e2;
            dist[c] = 3.4e38;
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        let n = min(max(within, min(2u, blocks)), p.most);
        counts[r] = 1u << firstLeadingBit(n);
    }
}
