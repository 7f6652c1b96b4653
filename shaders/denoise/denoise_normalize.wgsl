// Normalised convolution's last step for a stack of arrays: every array of the stack divided by
// the filtered certainty, sample by sample (out[c·count + i] = x[c·count + i] / w[i]).
#import common/grid

struct Params { count: u32, arrays: u32 }  // mirrored in src/kernels/denoise.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count * p.arrays) {
        out[i] = x[i] / w[i % p.count];
    }
}
