// project_rays.wgsl through the texture unit, as ASTRA's cone_FP: the volume in a bordered
// texture (interpolate/spline_texture, zeros around), each sample one linear fetch at a plane's
// integer coordinate (exact along the view's axis; in the plane the unit's weights, 8-bit
// fractions on NVIDIA, as ASTRA's).
#import common/grid
#import common/views

const BORDER: f32 = 2.0;  // kernels::spline_texture::BORDER

@group(0) @binding(0) var tex: texture_3d<f32>;
@group(0) @binding(1) var lin: sampler;
@group(0) @binding(2) var<storage, read> views: array<View>;
@group(0) @binding(3) var<storage, read_write> projections: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 64u + lid;
    if (i >= p.count) {
        return;
    }
    let col = i % p.cols;
    let a = (i / p.cols) % p.angles;
    let row = i / (p.cols * p.angles);
    let w = views[a];
    let r = view_ray(w, f32(row), f32(col));
    let a0 = u32(w.corner.w);
    let a1 = (a0 + 1u) % 3u;
    let a2 = (a0 + 2u) % 3u;
    let n = sizes(p);
    let texels = vec3<f32>(n) + 2.0 * BORDER;
    var sum = 0.0;
    if (r.dir[a0] != 0.0) {
        let line = joseph_line(r, a0, p.voxel.xyz);
        let planes = plane_range(line, a0, n);
        let lo = planes.x;
        let hi = planes.y;
        // Texture coordinates: texel i + BORDER's centre for index i, normalised.
        let e0 = unit(a0) / texels;
        let start = (unit(a1) * line.intercept.x + unit(a2) * line.intercept.y + BORDER + 0.5) / texels;
        let slope = (unit(a1) * line.slope.x + unit(a2) * line.slope.y) / texels;
        for (var t = i32(lo); t <= i32(hi); t++) {
            let at = start + f32(t) * (slope + e0);
            sum += textureSampleLevel(tex, lin, at, 0.0).x;
        }
        sum *= line.step;
    }
    projections[i] = sum;
}
