// Complex lines (…, len) times one factor of len values, element by element, the factor repeated
// over the leading elements: FBP's filter response applied to every projection's spectrum, every
// span's and slice's log-polar spectrum times the kernel's. The factor is real (COMPLEX false:
// each line scaled by it) or complex (pairs of f32, re and im).
#import common/grid
#import common/complex

struct Params { len: u32, count: u32 }  // mirrored in src/kernels/multiply_lines.rs

override COMPLEX: bool = true;

@group(0) @binding(0) var<storage, read> x: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> factor: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        let k = i % p.len;
        if (COMPLEX) {
            out[i] = cmul(x[i], vec2<f32>(factor[2u * k], factor[2u * k + 1u]));
        } else {
            out[i] = x[i] * factor[k];
        }
    }
}
