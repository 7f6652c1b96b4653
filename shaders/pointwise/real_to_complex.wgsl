// Complex array with the given real part and zero imaginary part, two elements per thread.
#import common/grid

struct Params { count: u32, pad: u32 }  // count in pairs; mirrored in src/kernels/real_to_complex.rs

@group(0) @binding(0) var<storage, read> x: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        let r = x[i];
        y[i] = vec4(r.x, 0.0, r.y, 0.0);
    }
}
