// Blind Richardson-Lucy's PSF kept a PSF: e /= s[0] (its sum, reduced on the device just before),
// four elements per thread; a sum that is not positive and finite leaves e as it is (the caller
// sees the estimate vanish rather than fill with infinities).
#import common/grid

struct Params { count: u32, pad: u32 }  // count in vec4s; mirrored in src/kernels/rl_normalize.rs

@group(0) @binding(0) var<storage, read_write> e: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> s: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    let total = s[0];
    if (i < p.count && total > 0.0 && total < 3.0e38) {
        e[i] = e[i] / total;
    }
}
