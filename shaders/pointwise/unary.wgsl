// y = f(x) elementwise on f32, four elements per thread. OP selects f (src/kernels/unary.rs).
#import common/grid

override OP: u32;

struct Params { count: u32, pad: u32, a: f32, b: f32 }  // count in vec4s; mirrored in unary.rs

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

fn f(v: vec4<f32>) -> vec4<f32> {
    switch OP {
        case 0u: { return v * p.a + p.b; }                  // affine (scale, offset)
        case 1u: { return clamp(v, vec4(p.a), vec4(p.b)); } // clamp to [a, b]
        case 2u: { return abs(v); }
        case 3u: { return sqrt(v); }
        case 4u: { return exp(v); }
        case 5u: { return log(v); }
        case 6u: { return max(v, vec4(p.a)); }
        case 7u: { return min(v, vec4(p.a)); }
        case 8u: { return v * p.a; }                        // scale alone (no fused add)
        default: { return v + p.a; }                        // offset alone
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        y[i] = f(x[i]);
    }
}
