// One pair of reconstruction responses added into the result: out (+)= w_a x.re + w_b x.im / s,
// x the pair's complex response (two real responses packed; at `pair_at` of a stack), w the
// reconstruction weights
// interpolated linearly from the low-resolution stack at every sample (weight 1 for the
// lowpass response, index 0). Axes are padded to four at the front; along an axis of factor 2
// full-resolution sample g sits at low-resolution coordinate min(g / 2, total − 1), as
// ops::denoise::cpu::upsample places it; `full_start` and `low_start` are the windows' origins
// in the whole volume.
#import common/grid

struct Params {  // mirrored in src/kernels/denoise.rs
    dims: vec4<u32>,
    low_dims: vec4<u32>,
    full_start: vec4<u32>,
    low_start: vec4<u32>,
    low_total: vec4<u32>,
    factors: vec4<u32>,
    count: u32,
    low_count: u32,
    // Response indices of the pair's parts; b = 0xffffffff when the pair has one response.
    a: u32,
    b: u32,
    inverse_scale: f32,
    accumulate: u32,
    // Where the pair starts in `pair` (a stack of pairs, or one).
    pair_at: u32,
    unused: u32,
}

@group(0) @binding(0) var<storage, read> pair: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    // The sample's index per axis, its low-resolution cell and the weight of its upper corner.
    var rest = i;
    var cell: array<u32, 4>;
    var frac: array<f32, 4>;
    var step: array<u32, 4>;
    var stride = 1u;
    for (var k = 0u; k < 4u; k++) {
        let axis = 3u - k;
        let idx = rest % p.dims[axis];
        rest = rest / p.dims[axis];
        let g = idx + p.full_start[axis];
        var low = g;
        var f = 0.0;
        if (p.factors[axis] == 2u) {
            low = g / 2u;
            if (g % 2u == 1u && low + 1u < p.low_total[axis]) {
                f = 0.5;
            }
            low = min(low, p.low_total[axis] - 1u);
        }
        cell[axis] = low - p.low_start[axis];
        frac[axis] = f;
        step[axis] = stride;
        stride *= p.low_dims[axis];
    }
    var base = 0u;
    for (var axis = 0u; axis < 4u; axis++) {
        base += cell[axis] * step[axis];
    }
    var wa = 0.0;
    var wb = 0.0;
    for (var corner = 0u; corner < 16u; corner++) {
        var w = 1.0;
        var at = base;
        for (var axis = 0u; axis < 4u; axis++) {
            if ((corner >> axis) & 1u) == 1u {
                w *= frac[axis];
                at += step[axis];
            } else {
                w *= 1.0 - frac[axis];
            }
        }
        if (w == 0.0) {
            continue;
        }
        if (p.a > 0u) {
            wa += w * weights[(p.a - 1u) * p.low_count + at];
        }
        if (p.b != 0xffffffffu) {
            wb += w * weights[(p.b - 1u) * p.low_count + at];
        }
    }
    if (p.a == 0u) {
        wa = 1.0;
    }
    let x = pair[p.pair_at + i];
    var y = wa * x.x;
    if (p.b != 0xffffffffu) {
        y += wb * x.y * p.inverse_scale;
    }
    if (p.accumulate == 1u) {
        y += out[i];
    }
    out[i] = y;
}
