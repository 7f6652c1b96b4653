// scikit-image's stopping rule for Chambolle's TV, per item on the device: the step's energy E
// (the item's sum of energy terms over its voxel count); the first step keeps E as E_0, a later
// one stops the item when |E_previous − E| < eps · E_0. State per item: (stopped, E_0,
// E_previous, steps taken).
#import common/grid

struct Params { items: u32, eps: f32, inv_count: f32, unused: u32 }  // mirrored in src/kernels/tv_stop.rs

@group(0) @binding(0) var<storage, read> sums: array<f32>;
@group(0) @binding(1) var<storage, read> before: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> after: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 64u + lid;
    if (i >= p.items) {
        return;
    }
    let s = before[i];
    let e = sums[i] * p.inv_count;
    if (s.x != 0.0) {
        after[i] = s;
    } else if (s.w == 0.0) {
        after[i] = vec4<f32>(0.0, e, e, 1.0);
    } else if (abs(s.z - e) < p.eps * s.y) {
        after[i] = vec4<f32>(1.0, s.y, e, s.w + 1.0);
    } else {
        after[i] = vec4<f32>(0.0, s.y, e, s.w + 1.0);
    }
}
