// Complex-to-complex elementwise maps, two elements per thread.
// OP (src/kernels/complex_unary.rs): 0 c / max(|c|, eps) (unit modulus: the phase), 1 conj,
// 2 c * (a + ib) (complex scale).
#import common/grid
#import common/complex

override OP: u32;

struct Params { count: u32, pad: u32, a: f32, b: f32 }  // count in pairs; mirrored in complex_unary.rs

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> p: Params;

fn f(c: vec2<f32>) -> vec2<f32> {
    switch OP {
        case 0u: { return c / max(length(c), p.a); }
        case 1u: { return vec2(c.x, -c.y); }
        default: { return cmul(c, vec2(p.a, p.b)); }
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        let c = x[i];
        y[i] = vec4(f(c.xy), f(c.zw));
    }
}
