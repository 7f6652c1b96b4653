// The rank-th smallest of x[i + offset] over a footprint's taps (scipy.ndimage's rank_filter,
// median_filter, percentile_filter), one output per thread, arrays of 1-4 axes (slots padded on
// the left), samples outside by the mode (constant: cval). The taps' values are gathered into
// the thread's own array (at most MAX_TAPS) and the rank found by Hoare's selection, an exact
// value of the input (or cval), as scipy's. Offsets: whole numbers stored as f32, four per tap.
// src/kernels/footprint_rank.rs writes the section below out per footprint: up to 32 taps as
// straight-line variables sorted by Batcher's network (registers: NVIDIA's compiler keeps
// loop-indexed arrays in local memory), beyond with the array sized to the taps.
#import common/grid
#import common/boundary
#import common/footprint
#import common/real

override MODE: u32;
const MAX_TAPS: u32 = 343u;  // mirrored in src/kernels/footprint_rank.rs

struct Params { dims: vec4<u32>, count: u32, taps: u32, rank: u32, cval: f32 }  // mirrored in src/kernels/footprint_rank.rs

@group(0) @binding(0) var<storage, read> x: array<real>;
@group(0) @binding(1) var<storage, read> offsets: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> y: array<real>;
@group(0) @binding(3) var<uniform> p: Params;

// Tap t's value for the output at `c` (cval outside in mode constant).
fn tap_value(c: vec4<i32>, n: vec4<i32>, t: u32) -> real {
    let index = footprint_index(c, vec4<i32>(offsets[t]), n, MODE);
    return select(x[max(index, 0)], real(p.cval), index < 0);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 64u + lid;
    if (i >= p.count) {
        return;
    }
    let c = footprint_coords(i, p.dims);
    let n = vec4<i32>(p.dims);
    // unrolled: begin
    var v: array<real, MAX_TAPS>;
    for (var t = 0u; t < p.taps; t++) {
        v[t] = tap_value(c, n, t);
    }
    // Hoare's selection of the rank-th smallest in v[0 .. taps).
    var lo = 0i;
    var hi = i32(p.taps) - 1;
    let k = i32(p.rank);
    while (lo < hi) {
        let pivot = v[(lo + hi) / 2];
        var a = lo;
        var b = hi;
        loop {
            while (v[a] < pivot) { a++; }
            while (v[b] > pivot) { b--; }
            if (a <= b) {
                let t = v[a];
                v[a] = v[b];
                v[b] = t;
                a++;
                b--;
            }
            if (a > b) { break; }
        }
        if (k <= b) {
            hi = b;
        } else if (k >= a) {
            lo = a;
        } else {
            break;
        }
    }
    y[i] = v[k];
    // unrolled: end
}
