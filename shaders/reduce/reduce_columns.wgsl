// Reduces the middle axis of an (outer, len, inner) row-major array: one thread per
// (outer, chunk, inner) column piece, looping down its `chunk_len` elements of the axis;
// neighbouring threads read neighbouring columns, so the reads coalesce. With chunks > 1 it
// writes (outer, chunks, inner) partials and src/kernels/reduce_columns.rs runs another pass
// over them. Sums are compensated (double-f32, see common/reduce). OP: reduce_rows.rs.
#import common/grid
#import common/float
#import common/reduce

override OP: u32;
// 1: x holds the f32 data (as bits); 0: x holds (v, w) partials of an earlier pass.
override FIRST: u32;

// Mirrored in src/kernels/reduce_columns.rs.
struct Params {
    outer: u32,
    len: u32,       // length of the reduced axis (elements on the first pass, partials after)
    inner: u32,
    chunk_len: u32, // elements of the axis per thread
    chunks: u32,    // chunks per column
    finish: u32,    // 1: write the result (value bits or index); 0: write partials
    one: f32,       // 1.0, opaque to the compiler (common/reduce)
    pad: u32,
}

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

// Elements k..k+3 of the column starting at x[base] (stride `inner`) into the lanes, masked
// to k < k1. Loads are clamped in bounds, so they never wait on a branch.
fn add4(acc: Lanes, base: u32, k: u32, k1: u32) -> Lanes {
    let last = k1 - 1u;
    let v = vec4(bitcast<f32>(x[base + min(k, last) * p.inner]),
                 bitcast<f32>(x[base + min(k + 1u, last) * p.inner]),
                 bitcast<f32>(x[base + min(k + 2u, last) * p.inner]),
                 bitcast<f32>(x[base + min(k + 3u, last) * p.inner]));
    let index = vec4(k) + vec4(0u, 1u, 2u, 3u);
    return add_lanes(acc, pre(v), index, index < vec4(k1));
}

// Partial k of the column starting at partial `base` (stride `inner`); empty from k1 on.
fn load_partial(base: u32, k: u32, k1: u32) -> Partial {
    let at = base + min(k, k1 - 1u) * p.inner;
    let it = Partial(bitcast<f32>(x[2u * at]), x[2u * at + 1u]);
    if (k >= k1) {
        return empty_partial();
    }
    return it;
}

// First pass: elements k0..k1 of the column, eight loads in flight per trip; lane j of the
// accumulators takes the elements with k = j mod 4, in increasing order.
fn data_partial(base: u32, k0: u32, k1: u32) -> Partial {
    var acc = empty_lanes();
    for (var k = k0; k < k1; k += 8u) {
        acc = add4(add4(acc, base, k, k1), base, k + 4u, k1);
    }
    return lanes_partial(acc);
}

// Later passes: partials k0..k1 of the column, four loads in flight per trip.
fn partials_partial(base: u32, k0: u32, k1: u32) -> Partial {
    var acc = empty_partial();
    for (var k = k0; k < k1; k += 4u) {
        let a = load_partial(base, k, k1);
        let b = load_partial(base, k + 1u, k1);
        let c = load_partial(base, k + 2u, k1);
        let d = load_partial(base, k + 3u, k1);
        acc = combine(acc, combine(combine(a, b), combine(c, d)));
    }
    return acc;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let g = workgroup_index(wid, nwg) * 256u + lid;
    if (g >= p.outer * p.chunks * p.inner) {
        return;
    }
    let i = g % p.inner;
    let chunk = (g / p.inner) % p.chunks;
    let o = g / (p.inner * p.chunks);
    let k0 = chunk * p.chunk_len;
    let k1 = min(k0 + p.chunk_len, p.len);
    let base = o * p.len * p.inner + i;
    var r: Partial;
    if (FIRST == 1u) {
        r = data_partial(base, k0, k1);
    } else {
        r = partials_partial(base, k0, k1);
    }
    if (p.finish == 1u) {
        out[g] = result_word(r); // chunks == 1, so g = o * inner + i
    } else {
        out[2u * g] = bitcast<u32>(r.v);
        out[2u * g + 1u] = r.w;
    }
}
