// Block matching's result: the 64-bit fixed-point sums (bm_filter) divided, num / den.
#import common/grid

// Mirrored in src/kernels/bm_normalize.rs.
struct Params { count: u32, unused0: u32, unused1: u32, unused2: u32 }

@group(0) @binding(0) var<storage, read> num: array<u32>;
@group(0) @binding(1) var<storage, read> den: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

fn fixed(low: u32, high: u32) -> f32 {
    return f32(bitcast<i32>(high)) + f32(low) * 2.3283064365386963e-10;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 64u + lid;
    if (i >= p.count) {
        return;
    }
    out[i] = fixed(num[2u * i], num[2u * i + 1u]) / fixed(den[2u * i], den[2u * i + 1u]);
}
