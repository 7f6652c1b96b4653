// Richardson-Lucy's multiplicative update in place, four elements per thread: e *= c, times t
// with TV set (t: the total-variation factor from rl_tv.wgsl) and times w with WEIGHTED set
// (w: Bertero-Boccacci's inverse weights 1 / max(Hᵀ M, floor), computed once at setup). A
// factor that is off is not read; the wrapper binds c in its place. In place saves a pass and a
// buffer: e is only read-write here, c, t and w only read. Products only (the weights are
// stored inverted), so the CPU twin in src/kernels/rl_update.rs matches exactly.
#import common/grid

override TV: bool;
override WEIGHTED: bool;

struct Params { count: u32, pad: u32 }  // count in vec4s; mirrored in src/kernels/rl_update.rs

@group(0) @binding(0) var<storage, read_write> e: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> c: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> t: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> w: array<vec4<f32>>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        var factor = c[i];
        if (TV) {
            factor *= t[i];
        }
        if (WEIGHTED) {
            factor *= w[i];
        }
        e[i] = e[i] * factor;
    }
}
