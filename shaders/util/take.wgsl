// numpy.take with indices on the device: element i of out is element index[i] of x (elements of
// `words` 32-bit words: f32, u32 or complex), so a value found by a reduction (an argmax) is
// read without a trip to the host; an index past the end gives NaN.
#import common/grid

struct Params { count: u32, len: u32, words: u32, unused: u32 }  // mirrored in src/kernels/take.rs

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> index: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 64u + lid;
    if (i < p.count * p.words) {
        let w = i % p.words;
        let at = index[i / p.words];
        out[i] = select(0x7fc00000u, x[min(at, p.len - 1u) * p.words + w], at < p.len);
    }
}
