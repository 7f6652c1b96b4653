// scipy.ndimage.map_coordinates: one output per thread, read at coordinates (d, points) from an
// array of 1-4 axes (already prefiltered and padded for order 3), by B-spline weights of order 0,
// 1 or 3 (common/bspline, specialised by mode and taps), out-of-range coordinates and taps
// handled by the mode as scipy handles them (see src/ops/interpolate/mod.rs).
#import common/grid
#import common/bspline

struct Params {
    dims: vec4<u32>,  // the input's axes as 4 (leading ones 1)
    rank: u32,        // the coordinates' leading axis
    points: u32,
    pad: f32,         // added to every coordinate (the prefilter's padding)
    cval: f32,
}  // mirrored in src/kernels/map_coordinates.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> coords: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

// Point i's coordinate along axis `slot` of the four (0 along the leading axes added).
fn coordinate(slot: u32, i: u32) -> f32 {
    let lead = 4u - p.rank;
    if (slot < lead) {
        return 0.0;
    }
    return coords[(slot - lead) * p.points + i] + p.pad;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.points) {
        return;
    }
    let c = vec4<f32>(coordinate(0u, i), coordinate(1u, i), coordinate(2u, i), coordinate(3u, i));
    out[i] = sample(c, p.dims, p.cval);
}
