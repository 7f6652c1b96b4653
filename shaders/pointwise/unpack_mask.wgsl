// A mask of bytes, four to a u32 word (as Recording::upload_mask packs it, element i in byte
// i % 4 of word i / 4), as 1 where true and 0 where false in `real`: masks travel as a quarter
// of f32's bytes (an eighth of f64's) and are widened here.
#import common/grid
#import common/real

struct Params { count: u32, pad: u32 }  // count: elements; mirrored in src/kernels/unpack_mask.rs

@group(0) @binding(0) var<storage, read> mask: array<u32>;
@group(0) @binding(1) var<storage, read_write> y: array<real>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        let byte = (mask[i / 4u] >> (8u * (i % 4u))) & 0xffu;
        y[i] = select(real(0.0), real(1.0), byte != 0u);
    }
}
