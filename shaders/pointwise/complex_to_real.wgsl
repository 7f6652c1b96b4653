// Real-valued function of a complex array, two elements per thread.
// OP (src/kernels/complex_to_real.rs): 0 |c|, 1 |c|^2, 2 re, 3 im.
#import common/grid

override OP: u32;

struct Params { count: u32, pad: u32 }  // count in complex pairs; mirrored in complex_to_real.rs

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec2<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let c = x[i];
    switch OP {
        case 0u: { y[i] = vec2(length(c.xy), length(c.zw)); }
        case 1u: { y[i] = vec2(dot(c.xy, c.xy), dot(c.zw, c.zw)); }
        case 2u: { y[i] = c.xz; }
        default: { y[i] = c.yw; }
    }
}
