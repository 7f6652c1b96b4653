// MLEM's ratio of the counts g to the projections q, g / (max(q, 0) + ε), and the terms
// g ln(g / (max(q, 0) + ε)) of the KL divergence (0 where g is 0).
#import common/grid

struct Params { count: u32, epsilon: f32 }  // mirrored in src/kernels/em.rs

@group(0) @binding(0) var<storage, read> g: array<f32>;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read_write> ratio: array<f32>;
@group(0) @binding(3) var<storage, read_write> terms: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

const TINY: f32 = 1.17549435e-38;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        let r = g[i] / (max(q[i], 0.0) + p.epsilon);
        ratio[i] = r;
        terms[i] = g[i] * log(max(r, TINY));
    }
}
