// The minimum or the maximum over a footprint, one output per thread, arrays of 1-4 axes (slots
// padded on the left): scipy.ndimage's minimum_filter / maximum_filter with a footprint, and grey
// erosion / dilation with a structure (each tap's value x[i + offset] + weight). Samples outside
// the array come from the mode (common/boundary.wgsl; constant mode: cval + weight, as scipy's
// min_or_max_filter). The offsets are whole numbers stored as f32 (exact below 2^24), four per
// tap.
#import common/grid
#import common/boundary
#import common/footprint
#import common/real

override MODE: u32;
override MAXIMUM: bool;

struct Params {
    dims: vec4<u32>, count: u32, taps: u32, cval: f32, unused: u32,
    lo: vec4<i32>, hi: vec4<i32>,  // the offsets' bounding box
}  // mirrored in src/kernels/footprint_extreme.rs

@group(0) @binding(0) var<storage, read> x: array<real>;
@group(0) @binding(1) var<storage, read> offsets: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> weights: array<real>;
@group(0) @binding(3) var<storage, read_write> y: array<real>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let c = footprint_coords(i, p.dims);
    let n = vec4<i32>(p.dims);
    // ∓infinity (inputs are finite), so every tap counts in either precision. (Assigned, not
    // an initialiser: naga's SPIR-V writer panics on an override-dependent one.)
    let start = real(bitcast<f32>(select(0x7f800000u, 0xff800000u, MAXIMUM)));
    var best = start;
    if (footprint_inside(c, n, p.lo, p.hi)) {
        for (var t = 0u; t < p.taps; t++) {
            let v = x[footprint_at(i, vec4<i32>(offsets[t]), n)] + weights[t];
            best = select(min(best, v), max(best, v), MAXIMUM);
        }
    } else {
        for (var t = 0u; t < p.taps; t++) {
            let index = footprint_index(c, vec4<i32>(offsets[t]), n, MODE);
            let v = select(x[max(index, 0)], real(p.cval), index < 0) + weights[t];
            best = select(min(best, v), max(best, v), MAXIMUM);
        }
    }
    y[i] = best;
}
