// Complex spectra (…, len) times one complex spectrum of len values, element by element: every
// span's and slice's log-polar spectrum times the kernel's.
#import common/grid
#import common/complex

struct Params { len: u32, count: u32 }  // mirrored in src/kernels/logpolar.rs

@group(0) @binding(0) var<storage, read> x: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> h: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        out[i] = cmul(x[i], h[i % p.len]);
    }
}
