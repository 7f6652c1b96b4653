// How many elements of x equal x[index[0]] (the value an argmax found), added into out[0]
// (zeroed before): whether a maximum is unique, learnt without reading the array back.
#import common/grid

struct Params { count: u32, unused: u32 }  // mirrored in src/kernels/count_equal.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> index: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> found: atomic<u32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    // Workgroup memory is not zeroed for us (pipelines skip it).
    if (lid == 0u) {
        atomicStore(&found, 0u);
    }
    workgroupBarrier();
    let i = workgroup_index(wid, nwg) * 256u + lid;
    let value = x[min(index[0], p.count - 1u)];
    if (i < p.count && x[i] == value) {
        atomicAdd(&found, 1u);
    }
    workgroupBarrier();
    if (lid == 0u) {
        let n = atomicLoad(&found);
        if (n > 0u) {
            atomicAdd(&out[0], n);
        }
    }
}
