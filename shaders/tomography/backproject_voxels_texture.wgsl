// backproject_voxels.wgsl through the texture unit, as ASTRA's cone_BP: the projections
// (rows, angles, cols) in a bordered texture (interpolate/spline_texture, zeros around), each
// voxel's value per view one linear fetch at (column, view, row), exact along the views' axis,
// the column and row weights the unit's (8-bit fractions on NVIDIA, as ASTRA's).
#import common/grid
#import common/views

const BORDER: f32 = 2.0;  // kernels::spline_texture::BORDER

@group(0) @binding(0) var tex: texture_3d<f32>;
@group(0) @binding(1) var lin: sampler;
@group(0) @binding(2) var<storage, read> views: array<View>;
@group(0) @binding(3) var<storage, read_write> volume: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 64u + lid;
    if (i >= p.count) {
        return;
    }
    let pos = vec3<f32>(f32(i % p.nx), f32((i / p.nx) % p.ny), f32(i / (p.nx * p.ny)));
    let texels = vec3<f32>(f32(p.cols), f32(p.angles), f32(p.rows)) + 2.0 * BORDER;
    var sum = 0.0;
    for (var a = 0u; a < p.angles; a++) {
        let w = views[a];
        let point = detector_point(w, pos, p.voxel.xyz);
        let at = (vec3<f32>(point.x, f32(a), point.y) + BORDER + 0.5) / texels;
        let value = textureSampleLevel(tex, lin, at, 0.0).x;
        sum += value * voxel_weight(w, pos, point, p.voxel.xyz, false);
    }
    volume[i] = sum;
}
