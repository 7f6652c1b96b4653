// Block matching, a reference block a workgroup, over (t, z, y, x): the threads share its
// search window's blocks (walked in linear order, in chunks that fit workgroup memory), each
// block's sum of squared differences to the reference block in workgroup memory; after each
// chunk the `most` smallest of the chunk and the list kept so far, one workgroup minimum a
// slot (ties to the lower linear index in the window), become the list. The reference itself
// is first (distance −1); correlated noise adds a penalty per offset. Then the count: the matches within the cap (τ · the data's range²,
// from its extrema on the device), at least two where two
// exist, at most `most`, rounded down to a power of two. (One thread per reference block
// walking its whole window ran on lavapipe for a few hundred blocks and stopped.)
#import common/grid

// Mirrored in src/kernels/bm_match.rs.
struct Params {
    n: vec4<u32>,
    b: vec4<u32>,
    g: vec4<u32>,
    s: vec4<u32>,
    w: vec4<u32>,
    most: u32,
    tau: f32,
    // Correlated noise (penalized != 0): each candidate's distance plus its offset's penalty,
    // 2 · voxels · C(Δ) over |Δ| ≤ reach, so that every offset's expected noise part is the same.
    penalized: u32,
    unused: u32,
    reach: vec4<u32>,
}

@group(0) @binding(0) var<storage, read> data: array<f32>;
// Per reference block, `most` slots: the linear index of each match's first voxel.
@group(0) @binding(1) var<storage, read_write> groups: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
@group(0) @binding(3) var<storage, read> lowest: array<f32>;
@group(0) @binding(4) var<storage, read> highest: array<f32>;
// The penalty per offset Δ from the reference block, [Δ + reach] row-major.
@group(0) @binding(5) var<storage, read> penalty: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;

const MOST: u32 = 32u;
const WG: u32 = 64u;
const CHUNK: u32 = 3520u;
const NONE: f32 = 3.4e38;

// The chunk's distances, then the kept list's (at CHUNK + j).
var<workgroup> dist: array<f32, 3552>;
var<workgroup> kept_i: array<u32, MOST>;
var<workgroup> next_d: array<f32, MOST>;
var<workgroup> next_i: array<u32, MOST>;
var<workgroup> tree_d: array<f32, WG>;
var<workgroup> tree_i: array<u32, WG>;
// The reference block's values and each block voxel's offset from the block's first.
var<workgroup> ref_values: array<f32, 128>;
var<workgroup> offsets: array<u32, 128>;

struct Entry { d: f32, i: u32 }

// (d, i) before (e, j): smaller distance, then lower index.
fn before(d: f32, i: u32, e: f32, j: u32) -> bool {
    return d < e || (d == e && i < j);
}

// Thread `lid`'s smallest entry: its share of the chunk (every WG-th from lid) and slot lid of
// the kept list.
fn smallest(lid: u32, start: u32, here: u32, kept: u32) -> Entry {
    var e = Entry(NONE, 0xffffffffu);
    for (var c = lid; c < here; c += WG) {
        if (before(dist[c], start + c, e.d, e.i)) {
            e = Entry(dist[c], start + c);
        }
    }
    if (lid < kept && before(dist[CHUNK + lid], kept_i[lid], e.d, e.i)) {
        e = Entry(dist[CHUNK + lid], kept_i[lid]);
    }
    return e;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let r = workgroup_index(wid, nwg);
    let refs = p.g.x * p.g.y * p.g.z * p.g.w;
    if (r >= refs) {
        return;
    }
    // The reference block: every step, the last at n − b.
    let gi = vec4<u32>(r / (p.g.y * p.g.z * p.g.w), (r / (p.g.z * p.g.w)) % p.g.y, (r / p.g.w) % p.g.z, r % p.g.w);
    let q = min(gi * p.s, p.n - p.b);
    let stride = vec4<u32>(p.n.y * p.n.z * p.n.w, p.n.z * p.n.w, p.n.w, 1u);
    let at = dot(q, stride);
    let lo = vec4<u32>(max(vec4<i32>(q) - vec4<i32>(p.w), vec4<i32>(0)));
    let e = min(q + p.w, p.n - p.b) + 1u - lo;
    let blocks = e.x * e.y * e.z * e.w;
    let voxels = p.b.x * p.b.y * p.b.z * p.b.w;
    for (var v = lid; v < voxels; v += WG) {
        let u = vec4<u32>(v / (p.b.y * p.b.z * p.b.w), (v / (p.b.z * p.b.w)) % p.b.y, (v / p.b.w) % p.b.z, v % p.b.w);
        offsets[v] = dot(u, stride);
        ref_values[v] = data[at + offsets[v]];
    }
    workgroupBarrier();
    var kept = 0u;
    for (var start = 0u; start < blocks; start += CHUNK) {
        let here = min(CHUNK, blocks - start);
        for (var c = lid; c < here; c += WG) {
            let k = start + c;
            let corner = lo + vec4<u32>(k / (e.y * e.z * e.w), (k / (e.z * e.w)) % e.y, (k / e.w) % e.z, k % e.w);
            let cand = dot(corner, stride);
            // One loop over the block (the reference's values and the offsets shared), four
            // sums at a time so the loads need not wait on one another.
            var d4 = vec4<f32>(0.0);
            var v = 0u;
            for (; v + 4u <= voxels; v += 4u) {
                let t = vec4<f32>(ref_values[v], ref_values[v + 1u], ref_values[v + 2u], ref_values[v + 3u])
                    - vec4<f32>(data[cand + offsets[v]], data[cand + offsets[v + 1u]], data[cand + offsets[v + 2u]], data[cand + offsets[v + 3u]]);
                d4 += t * t;
            }
            for (; v < voxels; v++) {
                let t = ref_values[v] - data[cand + offsets[v]];
                d4.x += t * t;
            }
            var d = (d4.x + d4.y) + (d4.z + d4.w);
            let off = vec4<i32>(corner) - vec4<i32>(q);
            if (p.penalized != 0u && all(vec4<u32>(abs(off)) <= p.reach)) {
                let side = 2u * p.reach + 1u;
                let i = vec4<u32>(off + vec4<i32>(p.reach));
                // Never below 0: the reference (−1) stays first.
                d = max(d + penalty[((i.x * side.y + i.y) * side.z + i.z) * side.w + i.w], 0.0);
            }
            dist[c] = select(d, -1.0, cand == at);
        }
        // The kept list joins the chunk (its indices are window indices already).
        if (lid < kept) {
            dist[CHUNK + lid] = next_d[lid];
        }
        workgroupBarrier();
        let take = min(p.most, here + kept);
        // Each thread's smallest among its own entries, rescanned only by the thread whose
        // entry a round takes (the others' stand).
        var mine = smallest(lid, start, here, kept);
        for (var slot = 0u; slot < take; slot++) {
            tree_d[lid] = mine.d;
            tree_i[lid] = mine.i;
            workgroupBarrier();
            for (var half = WG / 2u; half > 0u; half /= 2u) {
                if (lid < half && before(tree_d[lid + half], tree_i[lid + half], tree_d[lid], tree_i[lid])) {
                    tree_d[lid] = tree_d[lid + half];
                    tree_i[lid] = tree_i[lid + half];
                }
                workgroupBarrier();
            }
            let best = tree_i[0];
            if (lid == 0u) {
                next_d[slot] = tree_d[0];
                next_i[slot] = best;
            }
            if (mine.i == best) {
                // Taken: out of the running (in the chunk or the kept list), then this thread's
                // next smallest.
                if (best >= start && best - start < here) {
                    dist[best - start] = NONE;
                } else {
                    dist[CHUNK + lid] = NONE;
                }
                mine = smallest(lid, start, here, kept);
            }
            workgroupBarrier();
        }
        kept = take;
        if (lid < kept) {
            kept_i[lid] = next_i[lid];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        let range = highest[0] - lowest[0];
        let cap = p.tau * range * range;
        var within = 0u;
        for (var j = 0u; j < kept; j++) {
            within += u32(next_d[j] <= cap);
        }
        let n = min(max(within, min(2u, blocks)), p.most);
        counts[r] = 1u << firstLeadingBit(n);
    }
    if (lid < kept) {
        let k = next_i[lid];
        groups[r * p.most + lid] = dot(lo + vec4<u32>(k / (e.y * e.z * e.w), (k / (e.z * e.w)) % e.y, (k / e.w) % e.z, k % e.w), stride);
    }
}
