// z = x + sign · (num / den) · y, the ratio read from two one-element arrays on the device (0
// where den is 0): CGLS's steps with no host round trip.
#import common/grid

struct Params { count: u32, sign: f32 }  // mirrored in src/kernels/axpy_ratio.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> y: array<f32>;
@group(0) @binding(2) var<storage, read> num: array<f32>;
@group(0) @binding(3) var<storage, read> den: array<f32>;
@group(0) @binding(4) var<storage, read_write> z: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        let d = den[0];
        let ratio = select(num[0] / d, 0.0, d == 0.0);
        z[i] = x[i] + p.sign * ratio * y[i];
    }
}
