// Richardson-Lucy's relative blur, four elements per thread: r = o / (b + eps) as scikit-image
// computes it, 0 where (b + eps) < filter_eps when FILTER is set (skimage's filter_epsilon), and 0
// where o is 0 (equal to o / (b + eps) whenever b + eps > 0; it keeps 0/0 out of the zero margin
// of the padded arrays, where o and b are both zero). The CPU twin is src/kernels/rl_ratio.rs.
#import common/grid

override FILTER: bool;

struct Params { count: u32, pad: u32, eps: f32, filter_eps: f32 }  // count in vec4s; mirrored in src/kernels/rl_ratio.rs

@group(0) @binding(0) var<storage, read> o: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> r: array<vec4<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i < p.count) {
        let observed = o[i];
        let conv = b[i] + vec4(p.eps);
        var q = select(observed / conv, vec4(0.0), observed == vec4(0.0));
        if (FILTER) {
            q = select(q, vec4(0.0), conv < vec4(p.filter_eps));
        }
        r[i] = q;
    }
}
