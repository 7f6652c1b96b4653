// z = x (op) y elementwise, four reals per thread (f32, or f64 in the twin). Complex arrays are interleaved, so complex
// add/sub are the real ones and the complex products treat each vec4 as two complex numbers.
#import common/grid
#import common/real
#import common/complex

override OP: u32;

struct Params { count: u32, pad: u32 }  // count in vec4s; mirrored in src/kernels/binary.rs

@group(0) @binding(0) var<storage, read> x: array<vec4<real>>;
@group(0) @binding(1) var<storage, read> y: array<vec4<real>>;
@group(0) @binding(2) var<storage, read_write> z: array<vec4<real>>;
@group(0) @binding(3) var<uniform> p: Params;

fn f(a: vec4<real>, b: vec4<real>) -> vec4<real> {
    switch OP {
        case 0u: { return a + b; }
        case 1u: { return a - b; }
        case 2u: { return a * b; }
        case 3u: { return a / b; }
        case 4u: { return max(a, b); }
        case 5u: { return min(a, b); }
        case 6u: { return vec4(cmul(a.xy, b.xy), cmul(a.zw, b.zw)); }
        case 7u: { return vec4(cmul_conj(a.xy, b.xy), cmul_conj(a.zw, b.zw)); }
        default: {
            // The cross-power spectrum: |x·conj(y)| floored at 100 ε (CROSS_POWER_FLOOR).
            let u = cmul_conj(a.xy, b.xy);
            let v = cmul_conj(a.zw, b.zw);
            return vec4(u / max(length(u), 1.1920929e-5), v / max(length(v), 1.1920929e-5));
        }
    }
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        z[i] = f(x[i], y[i]);
    }
}
