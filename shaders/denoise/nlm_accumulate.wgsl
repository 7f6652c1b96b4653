// Non-local means, scikit-image's fast mode: shift t's share of every interior pixel q of the
// padded image P (planes, rows, cols, channels; one plane for an image). A pixel p's patch
// distance to p + t is dist(p) = max(Σ_{i = 1 − o}^{o} S(p + i · stride), 0) / (channels · h² ·
// s^ndim), S the box sums over the other axes (nlm_rows, then nlm_box for volumes), its weight
// w(p) = α · fast_exp(−dist(p)), 0 beyond 5 (α = ½ for t_col = 0: those shifts come twice);
// q gathers (w(q) P(q + t), w(q)) as the patch at q and (w(q − t) P(q − t), w(q − t)) as the
// shifted one — what scikit-image scatters to both ends of each pair. The accumulator holds
// per interior pixel the channels' weighted sums, then the weights' sum.
#import common/grid
#import common/fast_exp

struct Params {  // mirrored in src/kernels/nlm_accumulate.rs
    rows: u32, cols: u32, channels: u32, offset: u32,
    shift: i32, stride: u32, pad_planes: u32, pad: u32,
    inner_rows: u32, inner_cols: u32, inner_count: u32, alpha: f32,
    h2s2: f32, unused0: u32, unused1: u32, unused2: u32,
}

@group(0) @binding(0) var<storage, read> padded: array<f32>;
@group(0) @binding(1) var<storage, read> sums: array<f32>;
@group(0) @binding(2) var<storage, read> before: array<f32>;
@group(0) @binding(3) var<storage, read_write> after: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

// The weight of the pair (x, x + t), x flat.
fn weight(x: i32) -> f32 {
    let o = i32(p.offset);
    var s = 0.0;
    for (var i = 1 - o; i <= o; i++) {
        s += sums[x + i * i32(p.stride)];
    }
    let dist = max(s, 0.0) / p.h2s2;
    return select(p.alpha * fast_exp(-dist), 0.0, dist > 5.0);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let k = workgroup_index(wid, nwg) * 256u + lid;
    if (k >= p.inner_count) {
        return;
    }
    let plane = p.pad_planes + k / (p.inner_rows * p.inner_cols);
    let row = p.pad + (k / p.inner_cols) % p.inner_rows;
    let col = p.pad + k % p.inner_cols;
    let x = i32((plane * p.rows + row) * p.cols + col);
    let channels = p.channels;
    let w_here = weight(x);
    let w_there = weight(x - p.shift);
    let ahead = u32(x + p.shift) * channels;
    let behind = u32(x - p.shift) * channels;
    let at = k * (channels + 1u);
    for (var ch = 0u; ch < channels; ch++) {
        after[at + ch] = before[at + ch] + w_here * padded[ahead + ch] + w_there * padded[behind + ch];
    }
    after[at + channels] = before[at + channels] + w_here + w_there;
}
