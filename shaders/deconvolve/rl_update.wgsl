// Richardson-Lucy's multiplicative update in place, four elements per thread: e *= c, or with
// TV set e *= c * t (t: the total-variation factor from rl_tv.wgsl; without TV the wrapper binds
// c in its place and it is not read). In place saves a pass and a buffer: e is only read-write
// here, c and t only read.
#import common/grid

override TV: bool;

struct Params { count: u32, pad: u32 }  // count in vec4s; mirrored in src/kernels/rl_update.rs

@group(0) @binding(0) var<storage, read_write> e: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> c: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> t: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        var factor = c[i];
        if (TV) {
            factor *= t[i];
        }
        e[i] = e[i] * factor;
    }
}
