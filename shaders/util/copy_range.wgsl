// dst[dst_at + i] = src[src_at + i] for i < count, in 32-bit words: rows moved between buffers
// (the halo of a chunk gathered from its neighbours).
#import common/grid

struct Params { count: u32, src_at: u32, dst_at: u32, pad: u32 }  // mirrored in src/kernels/copy_range.rs

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        dst[p.dst_at + i] = src[p.src_at + i];
    }
}
