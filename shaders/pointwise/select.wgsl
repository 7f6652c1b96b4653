// z = cond > 0 ? x : y elementwise on f32 (numpy.where with a positive mask).
#import common/grid

struct Params { count: u32, pad: u32 }  // count in vec4s; mirrored in src/kernels/select.rs

@group(0) @binding(0) var<storage, read> cond: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> y: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> z: array<vec4<f32>>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        z[i] = select(y[i], x[i], cond[i] > vec4(0.0));
    }
}
