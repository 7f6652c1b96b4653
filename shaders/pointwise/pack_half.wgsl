// f32 values as IEEE binary16, two to a u32 word (the first in the low half, a last odd one
// with 0). Values that round beyond ±65504, and infinities and NaN, become ±infinity (which
// pack2x16float leaves undefined), so that the host sees them.
#import common/grid

struct Params { words: u32, values: u32 }  // mirrored in src/kernels/pack_half.rs

@group(0) @binding(0) var<storage, read> x: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> y: array<u32>;
@group(0) @binding(2) var<uniform> p: Params;

fn half_bits(v: f32) -> u32 {
    let b = bitcast<u32>(v);
    let sign = (b >> 16u) & 0x8000u;
    // Not finite (by its bits: comparisons may assume finite values), or rounding past 65504.
    if ((b & 0x7f800000u) == 0x7f800000u || (b & 0x7fffffffu) >= 0x477ff000u) {
        return sign | 0x7c00u;
    }
    return pack2x16float(vec2<f32>(v, 0.0)) & 0xffffu;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.words) {
        let v = x[i];
        let second = select(0u, half_bits(v.y), 2u * i + 1u < p.values);
        y[i] = half_bits(v.x) | (second << 16u);
    }
}
