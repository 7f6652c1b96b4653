// Joseph's forward projection in any vector geometry (common/views), as ASTRA's cone_FP and
// par3d_FP: each pixel's central ray crosses the planes of its view's axis, summing the volume
// bilinearly interpolated in each plane (0 outside), times its length per plane.
// backproject_rays.wgsl is the exact transpose.
#import common/grid
#import common/views

@group(0) @binding(0) var<storage, read> volume: array<f32>;
// The volume with x and y swapped, (Z, X, Y): views whose rays cross x planes sample each plane
// along y, and a warp's neighbouring pixels read neighbouring addresses here.
@group(0) @binding(1) var<storage, read> transposed: array<f32>;
@group(0) @binding(2) var<storage, read> views: array<View>;
@group(0) @binding(3) var<storage, read_write> projections: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

fn tap(swapped: bool, i: u32) -> f32 {
    if (swapped) {
        return transposed[i];
    }
    return volume[i];
}

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
    let swapped = a0 == 0u;
    let strides = select(vec3<u32>(1u, p.nx, p.nx * p.ny), vec3<u32>(p.ny, 1u, p.nx * p.ny), swapped);
    var sum = 0.0;
    if (r.dir[a0] != 0.0) {
        let line = joseph_line(r, a0, p.voxel.xyz);
        let planes = plane_range(line, a0, n);
        let lo = planes.x;
        let hi = planes.y;
        let n1 = i32(n[a1]);
        let n2 = i32(n[a2]);
        for (var t = i32(lo); t <= i32(hi); t++) {
            let q = line.slope * f32(t) + line.intercept;
            let q0 = floor(q);
            let f = q - q0;
            let j = i32(q0.x);
            let k = i32(q0.y);
            let base = u32(t) * strides[a0];
            var s = 0.0;
            if (j >= 0 && j < n1) {
                if (k >= 0 && k < n2) {
                    s += (1.0 - f.x) * (1.0 - f.y) * tap(swapped, base + u32(j) * strides[a1] + u32(k) * strides[a2]);
                }
                if (k + 1 >= 0 && k + 1 < n2) {
                    s += (1.0 - f.x) * f.y * tap(swapped, base + u32(j) * strides[a1] + u32(k + 1) * strides[a2]);
                }
            }
            if (j + 1 >= 0 && j + 1 < n1) {
                if (k >= 0 && k < n2) {
                    s += f.x * (1.0 - f.y) * tap(swapped, base + u32(j + 1) * strides[a1] + u32(k) * strides[a2]);
                }
                if (k + 1 >= 0 && k + 1 < n2) {
                    s += f.x * f.y * tap(swapped, base + u32(j + 1) * strides[a1] + u32(k + 1) * strides[a2]);
                }
            }
            sum += s;
        }
        sum *= line.step;
    }
    projections[i] = sum;
}
