// Whether an array holds a NaN or an infinity: flag[0] becomes 1 if any element has an all-ones
// exponent (f32 words, or the high words of f64 values: HIGH_WORDS = 1), else stays as the caller set
// it (0). Complex arrays are their real words. A bit test, so no compiler can fold it away.
#import common/grid

override HIGH_WORDS: u32 = 0u;

// threads: the grid's threads; each tests every threads-th element from its own (coalesced
// steps), so a few workgroups a multiprocessor cover any array (one thread an element ran at a
// third of the copy roof).
struct Params { count: u32, threads: u32 }  // count in elements (f32 words, or f64 values); mirrored in src/kernels/count_nonfinite.rs

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read_write> flag: array<atomic<u32>>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    var bad = false;
    for (var i = workgroup_index(wid, nwg) * 256u + lid; i < p.count; i += p.threads) {
        if (HIGH_WORDS == 1u) {
            bad = bad || (x[2u * i + 1u] & 0x7ff00000u) == 0x7ff00000u;
        } else {
            bad = bad || (x[i] & 0x7f800000u) == 0x7f800000u;
        }
    }
    if (bad) {
        atomicStore(&flag[0], 1u);
    }
}
