// The minimum or the maximum over a footprint, one output per thread, arrays of 1-4 axes (slots
// padded on the left): scipy.ndimage's minimum_filter / maximum_filter with a footprint, and grey
// erosion / dilation with a structure (each tap's value x[i + offset] + weight). Samples outside
// the array come from the mode (common/boundary.wgsl; constant mode: cval + weight, as scipy's
// min_or_max_filter). The offsets are whole numbers stored as f32 (exact below 2^24), four per
// tap.
#import common/grid
#import common/boundary

override MODE: u32;
override MAXIMUM: bool;

struct Params { dims: vec4<u32>, count: u32, taps: u32, cval: f32, unused: u32 }  // mirrored in src/kernels/footprint_extreme.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> offsets: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> weights: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    var c: vec4<i32>;
    var rest = i;
    for (var a = 3; a >= 0; a--) {
        c[a] = i32(rest % p.dims[a]);
        rest = rest / p.dims[a];
    }
    let n = vec4<i32>(p.dims);
    var best = select(3.4028235e38, -3.4028235e38, MAXIMUM);
    for (var t = 0u; t < p.taps; t++) {
        let o = vec4<i32>(offsets[t]);
        var index = 0;
        var outside = false;
        for (var a = 0; a < 4; a++) {
            let j = boundary_fold(c[a] + o[a], n[a], MODE);
            outside = outside || j < 0;
            index = index * n[a] + max(j, 0);
        }
        let v = select(x[index], p.cval, outside) + weights[t];
        best = select(min(best, v), max(best, v), MAXIMUM);
    }
    y[i] = best;
}
