// MLEM's update f ← f · max(b / n, 0): the back-projected ratio b over the back-projection of
// ones n (floored above 0 on the host side), never below 0.
#import common/grid

struct Params { count: u32, unused: u32 }  // mirrored in src/kernels/em.rs

@group(0) @binding(0) var<storage, read> f: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read> n: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        out[i] = f[i] * max(b[i] / n[i], 0.0);
    }
}
