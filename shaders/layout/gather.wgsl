// The general gather behind every layout op (permute, pad, crop, flip, roll, fftshift):
// y[o] = x[s], where along output axis d the source coordinate is origin[d] + step[d] * o[d], on
// the input axis the host placed in slot d (so a permutation is only a reordering of src_len and
// src_stride), folded into range by the boundary MODE; constant mode writes the fill words.
// Elements are ELEM_WORDS 32-bit words, so one kernel moves f32, u32 and complex arrays.
// Host side: src/kernels/gather.rs.
#import common/grid
#import common/boundary

override ELEM_WORDS: u32 = 1u;  // 1: f32 or u32, 2: complex or f64, 4: complex f64
override MODE: u32 = 0u;        // Boundary::code() in src/ops/layout/mod.rs

const GROUP: u32 = 256u;     // threads per workgroup
const PER_THREAD: u32 = 8u;  // outputs per thread, GROUP apart; mirrored in gather.rs

// Mirrored in src/kernels/gather.rs. Slots are numpy axis order padded on the left to 4D.
struct Params {
    out_dims: vec4<u32>,    // output shape
    src_len: vec4<u32>,     // length of the input axis that output axis d walks
    src_stride: vec4<u32>,  // its stride, in elements
    origin: vec4<i32>,      // source coordinate of output coordinate 0
    step: vec4<i32>,        // source step per output step (1, or -1 to flip)
    group_step: vec4<u32>,  // GROUP written as an output coordinate (digits < out_dims)
    count: u32,             // output elements
    fill_lo: u32,           // constant mode: the words of the fill element
    fill_hi: u32,
    pad: u32,
}

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

// Output coordinate of linear index i (the only divisions, once per thread).
fn unravel(i: u32) -> vec4<u32> {
    let n = p.out_dims;
    let q3 = i / n.w;
    let q2 = q3 / n.z;
    let q1 = q2 / n.y;
    return vec4(q1, q2 - q1 * n.y, q3 - q2 * n.z, i - q3 * n.w);
}

// o + group_step with carries: every digit sum stays below twice its axis length, so one
// subtraction per digit suffices (a carry out of the slowest slot only happens past the end).
fn advance(o: vec4<u32>) -> vec4<u32> {
    let n = p.out_dims;
    var r = o + p.group_step;
    if (r.w >= n.w) { r.w -= n.w; r.z += 1u; }
    if (r.z >= n.z) { r.z -= n.z; r.y += 1u; }
    if (r.y >= n.y) { r.y -= n.y; r.x += 1u; }
    return r;
}

// Element index in x of output coordinate o, and whether it lies inside x (1) or not (0: constant
// mode writes the fill, and the index is a valid dummy). Whole-vector arithmetic, no dynamic
// indexing (which would put the coordinate in local memory).
fn source(o: vec4<u32>) -> vec2<u32> {
    let n = vec4<i32>(p.src_len);
    var c = p.origin + p.step * vec4<i32>(o);
    if (any(c < vec4(0)) || any(c >= n)) {
        c = vec4(boundary_fold(c.x, n.x, MODE), boundary_fold(c.y, n.y, MODE), boundary_fold(c.z, n.z, MODE), boundary_fold(c.w, n.w, MODE));
    }
    return vec2(dot(vec4<u32>(max(c, vec4(0))), p.src_stride), u32(all(c >= vec4(0))));
}

// Each thread moves PER_THREAD outputs GROUP apart, so every store of a workgroup is contiguous,
// and steps its coordinate from one to the next without dividing.
@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let first = workgroup_index(wid, nwg) * GROUP * PER_THREAD + lid;
    if (first >= p.count) {
        return;
    }
    let left = p.count - first;
    var o = unravel(first);
    for (var k = 0u; k < PER_THREAD; k++) {
        if (k * GROUP < left) {
            let s = source(o);
            let src = s.x * ELEM_WORDS;
            let dst = (first + k * GROUP) * ELEM_WORDS;
            y[dst] = select(p.fill_lo, x[src], s.y == 1u);
            if (ELEM_WORDS >= 2u) {
                y[dst + 1u] = select(p.fill_hi, x[src + 1u], s.y == 1u);
            }
            if (ELEM_WORDS == 4u) {  // a constant's imaginary part is zero
                y[dst + 2u] = select(0u, x[src + 2u], s.y == 1u);
                y[dst + 3u] = select(0u, x[src + 3u], s.y == 1u);
            }
        }
        o = advance(o);
    }
}
