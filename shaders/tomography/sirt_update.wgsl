// SIRT's update x ← clamp(x + relaxation · c · v, lo, hi): c the inverse column sums (0 outside
// the reconstruction mask), v the back-projected weighted residual.
#import common/grid

struct Params { count: u32, relaxation: f32, lo: f32, hi: f32 }  // mirrored in src/kernels/sirt_update.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> c: array<f32>;
@group(0) @binding(2) var<storage, read> v: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        out[i] = clamp(x[i] + p.relaxation * c[i] * v[i], p.lo, p.hi);
    }
}
