// Up to 16 real filters of one window shape by direct sums, every input value loaded once for
// all of them: out = the responses packed two to a complex value (filter 2q in pair q's real
// part, 2q + 1 in its imaginary part, pair q at q·count), from the input already extended past
// its borders (valid correlation: the output is the input less taps − 1 per axis). Weights are
// the flipped (correlation) taps, four filters to a vec4, GROUPS vec4s per tap. Axes are
// padded to four at the front (taps 1 there).
#import common/grid

override GROUPS: u32;

struct Params {  // mirrored in src/kernels/denoise.rs
    dims: vec4<u32>,
    padded: vec4<u32>,
    taps: vec4<u32>,
    count: u32,
    filters: u32,
    unused0: u32,
    unused1: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> weights: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

fn pick(a0: vec4<f32>, a1: vec4<f32>, a2: vec4<f32>, a3: vec4<f32>, k: u32) -> f32 {
    var v = a0;
    if (k >= 12u) {
        v = a3;
    } else if (k >= 8u) {
        v = a2;
    } else if (k >= 4u) {
        v = a1;
    }
    return v[k % 4u];
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let i3 = i % p.dims.w;
    let i2 = (i / p.dims.w) % p.dims.z;
    let i1 = (i / (p.dims.w * p.dims.z)) % p.dims.y;
    let i0 = i / (p.dims.w * p.dims.z * p.dims.y);
    let s2 = p.padded.w;
    let s1 = s2 * p.padded.z;
    let s0 = s1 * p.padded.y;
    let base = i0 * s0 + i1 * s1 + i2 * s2 + i3;
    var a0 = vec4<f32>(0.0);
    var a1 = vec4<f32>(0.0);
    var a2 = vec4<f32>(0.0);
    var a3 = vec4<f32>(0.0);
    var t = 0u;
    for (var a = 0u; a < p.taps.x; a++) {
        for (var b = 0u; b < p.taps.y; b++) {
            for (var c = 0u; c < p.taps.z; c++) {
                let row = base + a * s0 + b * s1 + c * s2;
                for (var e = 0u; e < p.taps.w; e++) {
                    let v = x[row + e];
                    let w = t * GROUPS;
                    a0 += v * weights[w];
                    if (GROUPS > 1u) {
                        a1 += v * weights[w + 1u];
                    }
                    if (GROUPS > 2u) {
                        a2 += v * weights[w + 2u];
                    }
                    if (GROUPS > 3u) {
                        a3 += v * weights[w + 3u];
                    }
                    t++;
                }
            }
        }
    }
    for (var q = 0u; 2u * q < p.filters; q++) {
        var pair = vec2<f32>(pick(a0, a1, a2, a3, 2u * q), 0.0);
        if (2u * q + 1u < p.filters) {
            pair.y = pick(a0, a1, a2, a3, 2u * q + 1u);
        }
        out[q * p.count + i] = pair;
    }
}
