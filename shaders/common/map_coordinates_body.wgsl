// scipy.ndimage.map_coordinates, one output per thread: point i reads the sampled array at the
// coordinates (rank, points) plus `pad` (the prefilter's padding), through the `sample` of the
// kernel's sampling snippet (common/bspline or common/bspline_texture); bindings 0-2, the
// sampled array's after them.
#import common/grid
#import common/real

struct Params {
    dims: vec4<u32>,  // the sampled array's axes as 4 (leading ones 1)
    rank: u32,        // the coordinates' leading axis
    points: u32,
    pad: f32,
    cval: f32,
}  // mirrored in src/kernels/map_coordinates.rs

@group(0) @binding(0) var<storage, read> coords: array<real>;
@group(0) @binding(1) var<storage, read_write> out: array<real>;
@group(0) @binding(2) var<uniform> p: Params;

// Point i's coordinate along axis `slot` of the four (0 along the leading axes added).
fn coordinate(slot: u32, i: u32) -> real {
    let lead = 4u - p.rank;
    if (slot < lead) {
        return 0.0;
    }
    return coords[(slot - lead) * p.points + i] + real(p.pad);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.points) {
        return;
    }
    let c = vec4<real>(coordinate(0u, i), coordinate(1u, i), coordinate(2u, i), coordinate(3u, i));
    out[i] = sample(c, p.dims, real(p.cval));
}
