// Every line of a complex array (lines, len) multiplied element-wise by one real response of
// len values: FBP's filter applied to each projection's spectrum.
#import common/grid

struct Params { len: u32, count: u32 }  // mirrored in src/kernels/filter_lines.rs

@group(0) @binding(0) var<storage, read> x: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> response: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        out[i] = x[i] * response[i % p.len];
    }
}
