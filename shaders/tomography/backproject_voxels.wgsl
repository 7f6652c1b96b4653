// Voxel-driven back-projection in any vector geometry (common/views), as ASTRA's cone_BP and
// par3d_BP: each voxel's centre projected onto every view's detector, the projection bilinearly
// interpolated there (0 beyond it) and weighed by the rays' density (the forward projector's
// continuous adjoint) or, with FDK, by (λ₀ / λ)².
#import common/grid
#import common/views

override FDK: bool = false;

@group(0) @binding(0) var<storage, read> projections: array<f32>;
@group(0) @binding(1) var<storage, read> views: array<View>;
@group(0) @binding(2) var<storage, read_write> volume: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

fn tap(a: u32, row: i32, col: i32) -> f32 {
    if (row < 0 || col < 0 || row >= i32(p.rows) || col >= i32(p.cols)) {
        return 0.0;
    }
    return projections[(u32(row) * p.angles + a) * p.cols + u32(col)];
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 64u + lid;
    if (i >= p.count) {
        return;
    }
    let pos = vec3<f32>(f32(i % p.nx), f32((i / p.nx) % p.ny), f32(i / (p.nx * p.ny)));
    var sum = 0.0;
    for (var a = 0u; a < p.angles; a++) {
        let w = views[a];
        let point = detector_point(w, pos, p.voxel.xyz);
        let d = point.xy;
        let d0 = floor(d);
        let f = d - d0;
        let c = i32(d0.x);
        let r = i32(d0.y);
        let value = (1.0 - f.y) * ((1.0 - f.x) * tap(a, r, c) + f.x * tap(a, r, c + 1))
            + f.y * ((1.0 - f.x) * tap(a, r + 1, c) + f.x * tap(a, r + 1, c + 1));
        sum += value * voxel_weight(w, pos, point, p.voxel.xyz, FDK);
    }
    volume[i] = sum;
}
