// The components' numbers in raster order (scipy.ndimage.label's), on the device, from labels
// that carry each component's least element index (label.wgsl's result): STAGE 0 marks the
// roots (the elements whose label is their own index), 32 to a u32 word; the host counts the
// roots before each word (`before`); STAGE 1 gives every element its root's number in place,
// before[w] + the roots below it in its word + 1 (0 for the background).
#import common/grid

override STAGE: u32;

struct Params { count: u32, words: u32, unused0: u32, unused1: u32 }  // mirrored in src/kernels/label_number.rs

@group(0) @binding(0) var<storage, read_write> labels: array<u32>;
@group(0) @binding(1) var<storage, read_write> bits: array<u32>;   // STAGE 0 writes, STAGE 1 reads
@group(0) @binding(2) var<storage, read> before: array<u32>;       // STAGE 1 (a stand-in in STAGE 0)
@group(0) @binding(3) var<uniform> p: Params;

const NONE: u32 = 0xffffffffu;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (STAGE == 0u) {
        if (i >= p.words) {
            return;
        }
        var word = 0u;
        for (var k = 0u; k < 32u && 32u * i + k < p.count; k++) {
            word |= u32(labels[32u * i + k] == 32u * i + k) << k;
        }
        bits[i] = word;
        return;
    }
    if (i >= p.count) {
        return;
    }
    let root = labels[i];
    if (root == NONE) {
        labels[i] = 0u;
        return;
    }
    let w = root >> 5u;
    labels[i] = before[w] + countOneBits(bits[w] & ((1u << (root & 31u)) - 1u)) + 1u;
}
