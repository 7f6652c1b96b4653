// Biggs-Andrews prediction for accelerated Richardson-Lucy, four elements per thread:
// y = max(x + α (x − previous), 0) with α = clamp(cross / square, 0, 1), or 0 when square is 0.
// cross = Σ gₖ·gₖ₋₁ and square = Σ gₖ₋₁·gₖ₋₁ are the 1-element sums the previous iteration left
// on the device; every thread derives α from them, which saves a dispatch and a buffer and keeps
// the host out of the loop. Mirrored by `cpu` in src/kernels/rl_predict.rs.
#import common/grid

struct Params { count: u32, pad: u32 }  // count in vec4s; mirrored in src/kernels/rl_predict.rs

@group(0) @binding(0) var<storage, read> x: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> previous: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> g_cross: array<f32>;
@group(0) @binding(3) var<storage, read> g_square: array<f32>;
@group(0) @binding(4) var<storage, read_write> y: array<vec4<f32>>;
@group(0) @binding(5) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        let s = g_square[0];
        let alpha = select(0.0, clamp(g_cross[0] / s, 0.0, 1.0), s > 0.0);
        let xi = x[i];
        y[i] = max(xi + alpha * (xi - previous[i]), vec4<f32>(0.0));
    }
}
