// The sampled array (2 or 3 axes, seen as 3) copied into the texture the texture sampler reads
// (common/bspline_texture): BORDER texels added on each side of each of the array's axes, where
// a tap folds as the buffer path's do (`tap`: by the mode, mirror for constant and wrap, cval for
// grid-constant). One texel per thread.
#import common/grid
#import common/spline_fold

struct Params {
    dims: vec4<u32>,     // the array's axes as 3 (a leading 1 for 2 axes), then 0
    texels: vec4<u32>,   // the texture's, likewise
    border: vec4<u32>,   // texels added before index 0 along each axis
    count: u32,          // texels in all
    cval: f32,
    unused0: u32,
    unused1: u32,
}  // mirrored in src/kernels/spline_texture.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var tex: texture_storage_3d<r32float, write>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let t = vec3<u32>(i / (p.texels.y * p.texels.z), i / p.texels.z % p.texels.y, i % p.texels.z);
    let z = tap(i32(t.x) - i32(p.border.x), p.dims.x);
    let y = tap(i32(t.y) - i32(p.border.y), p.dims.y);
    let x0 = tap(i32(t.z) - i32(p.border.z), p.dims.z);
    var v = p.cval;
    if (z >= 0 && y >= 0 && x0 >= 0) {
        v = x[(u32(z) * p.dims.y + u32(y)) * p.dims.z + u32(x0)];
    }
    textureStore(tex, t.zyx, vec4<f32>(v, 0.0, 0.0, 0.0));
}
