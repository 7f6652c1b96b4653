// out = in, 16 bytes per thread: the bandwidth roof `lucent bench` measures against.
#import common/grid

struct Params { count: u32, pad: u32 }  // vec4 count; mirrored in src/kernels/copy_vec4.rs

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        dst[i] = src[i];
    }
}
