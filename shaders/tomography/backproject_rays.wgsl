// The exact transpose of project_rays.wgsl: every voxel gathers, per view, the rays whose
// sample in its plane lies within one voxel of it (the detector pixels inside the projection
// of that 2×2 square, found through the view's homography), each with the forward projector's
// weight, recomputed the same way.
#import common/grid
#import common/views

@group(0) @binding(0) var<storage, read> projections: array<f32>;
@group(0) @binding(1) var<storage, read> views: array<View>;
@group(0) @binding(2) var<storage, read_write> volume: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

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
        let a0 = u32(w.corner.w);
        let a1 = (a0 + 1u) % 3u;
        let a2 = (a0 + 2u) % 3u;
        let e1 = unit(a1);
        let e2 = unit(a2);
        var lo = vec2<f32>(3.0e38);
        var hi = vec2<f32>(-3.0e38);
        for (var c = 0u; c < 4u; c++) {
            let q = pos + select(-1.0, 1.0, (c & 1u) != 0u) * e1 + select(-1.0, 1.0, (c & 2u) != 0u) * e2;
            let d = detector_point(w, q, p.voxel.xyz).xy;
            lo = min(lo, d);
            hi = max(hi, d);
        }
        // The pixels whose centres lie in that box, a hundredth of a pixel wider for rounding
        // (f32 coordinates err by ~1e-5 pixels; a pixel at the square's edge weighs 0); a
        // cylinder's map bends the square's edges: half a pixel wider (extra pixels weigh 0).
        let margin = select(0.01, 0.5, cylindrical(w));
        let c0 = max(i32(ceil(lo.x - margin)), 0);
        let c1 = min(i32(floor(hi.x + margin)), i32(p.cols) - 1);
        let r0 = max(i32(ceil(lo.y - margin)), 0);
        let r1 = min(i32(floor(hi.y + margin)), i32(p.rows) - 1);
        let target_ = vec2<f32>(pos[a1], pos[a2]);
        for (var row = r0; row <= r1; row++) {
            for (var col = c0; col <= c1; col++) {
                let r = view_ray(w, f32(row), f32(col));
                if (r.dir[a0] == 0.0) {
                    continue;
                }
                let line = joseph_line(r, a0, p.voxel.xyz);
                let q = line.slope * pos[a0] + line.intercept;
                let weight = max(vec2<f32>(1.0) - abs(q - target_), vec2<f32>(0.0));
                let value = projections[(u32(row) * p.angles + a) * p.cols + u32(col)];
                sum += value * weight.x * weight.y * line.step;
            }
        }
    }
    volume[i] = sum;
}
