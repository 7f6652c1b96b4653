// Writes a 32-bit pattern into the first `count` words of a buffer (zeros, NaN poison): `bits`
// into even words, `bits_odd` into odd ones (the two halves of an f64; equal for 32-bit types).
#import common/grid

struct Params { count: u32, bits: u32, bits_odd: u32, pad: u32 }  // mirrored in src/kernels/fill.rs

@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@group(0) @binding(1) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        out[i] = select(p.bits, p.bits_odd, (i & 1u) == 1u);
    }
}
