// Non-local means over volumes: nlm_rows's sums summed again along another axis,
// out(x) = Σ_{k = 1 − o}^{o} in(x + k · stride) (stride: the axis's step in the flattened
// array), 0 where that leaves the array (never read).
#import common/grid

struct Params { count: u32, offset: u32, stride: u32, unused: u32 }  // mirrored in src/kernels/nlm_box.rs

@group(0) @binding(0) var<storage, read> sums: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let o = i32(p.offset);
    let first = i32(i) + (1 - o) * i32(p.stride);
    let last = i32(i) + o * i32(p.stride);
    if (first < 0 || last >= i32(p.count)) {
        out[i] = 0.0;
        return;
    }
    var s = 0.0;
    for (var k = 1 - o; k <= o; k++) {
        s += sums[i32(i) + k * i32(p.stride)];
    }
    out[i] = s;
}
