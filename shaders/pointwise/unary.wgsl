// y = f(x) elementwise on f32 (f64 in the twin), four elements per thread. OP selects f (src/kernels/unary.rs).
#import common/grid
#import common/real

override OP: u32;

struct Params { count: u32, pad: u32, a: f32, b: f32 }  // count in vec4s; mirrored in unary.rs

@group(0) @binding(0) var<storage, read> x: array<vec4<real>>;
@group(0) @binding(1) var<storage, read_write> y: array<vec4<real>>;
@group(0) @binding(2) var<uniform> p: Params;

fn f(v: vec4<real>) -> vec4<real> {
    switch OP {
        case 0u: { return v * real(p.a) + real(p.b); }                  // affine (scale, offset)
        case 1u: { return clamp(v, vec4(real(p.a)), vec4(real(p.b))); } // clamp to [a, b]
        case 2u: { return abs(v); }
        case 3u: { return sqrt(v); }
        // SPIR-V has no f64 exp/log: the f64 twin takes them in f32.
        case 4u: { return vec4<real>(exp(vec4<f32>(v))); }
        case 5u: { return vec4<real>(log(vec4<f32>(v))); }
        case 6u: { return max(v, vec4(real(p.a))); }
        case 7u: { return min(v, vec4(real(p.a))); }
        case 8u: { return v * real(p.a); }                              // scale alone (no fused add)
        case 9u: { return v + real(p.a); }                              // offset alone
        // 1 / v, 0 where |v| < a (SIRT's inverse row and column sums, as ASTRA's)
        default: { return select(vec4(real(1)) / v, vec4(real(0)), abs(v) < vec4(real(p.a))); }
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
