// The structure tensor T = q qᵀ + Q Qᵀ per sample from the monomial filters' responses, packed
// two to a complex value (response r in pair r/2, the real part for even r, the imaginary part,
// scaled by the pair's power of two, for odd r): the DIMS odd responses q_i, then the even ones
// Q_ij (i ≤ j, row by row). Writes the DIMS(DIMS+1)/2 components of T, one after another.
#import common/grid

override DIMS: u32;

struct Params {  // mirrored in src/kernels/denoise.rs
    count: u32,
    unused0: u32,
    unused1: u32,
    unused2: u32,
    inverse_scales: array<vec4<f32>, 2>,
}

@group(0) @binding(0) var<storage, read> responses: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> tensor: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

fn response(r: u32, i: u32) -> f32 {
    let pair = r / 2u;
    let v = responses[pair * p.count + i];
    if (r % 2u == 0u) {
        return v.x;
    }
    return v.y * p.inverse_scales[pair / 4u][pair % 4u];
}

// The index of component (i, j), i ≤ j, in row-by-row order.
fn component(i: u32, j: u32) -> u32 {
    let a = min(i, j);
    let b = max(i, j);
    return a * (2u * DIMS + 1u - a) / 2u + (b - a);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    var q: array<f32, 4>;
    var even: array<f32, 10>;
    for (var a = 0u; a < DIMS; a++) {
        q[a] = response(a, i);
    }
    let components = DIMS * (DIMS + 1u) / 2u;
    for (var c = 0u; c < components; c++) {
        even[c] = response(DIMS + c, i);
    }
    for (var a = 0u; a < DIMS; a++) {
        for (var b = a; b < DIMS; b++) {
            var t = q[a] * q[b];
            for (var k = 0u; k < DIMS; k++) {
                t += even[component(a, k)] * even[component(k, b)];
            }
            tensor[component(a, b) * p.count + i] = t;
        }
    }
}
