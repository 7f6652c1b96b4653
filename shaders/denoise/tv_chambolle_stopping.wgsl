// tv_chambolle's step with scikit-image's stopping rule kept on the device: besides the next
// dual field it writes each voxel's energy terms of this step's estimate, (out − f)² + w |∇out|,
// which tv_stop sums per item, and the result: this step's estimate, or the previous result
// where the item stopped before this step (state.x ≠ 0), so that a stopped item keeps the
// estimate of the step that met the rule, as scikit-image returns it.
#import common/grid
#import common/tv_chambolle

// Mirrored in src/kernels/tv_chambolle.rs (StoppingParams).
struct Params { nx: u32, ny: u32, nz: u32, ndim: u32, tau: f32, tau_over_weight: f32, count: u32, weight: f32 }

@group(0) @binding(0) var<storage, read> f: array<f32>;
@group(0) @binding(1) var<storage, read> p: array<f32>;
@group(0) @binding(2) var<storage, read> result_before: array<f32>;
// Per item: stopped (0 or 1), the first energy, the last, the steps counted.
@group(0) @binding(3) var<storage, read> state: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> p_next: array<f32>;
@group(0) @binding(5) var<storage, read_write> result: array<f32>;
@group(0) @binding(6) var<storage, read_write> energy: array<f32>;
@group(0) @binding(7) var<uniform> q: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= q.count) {
        return;
    }
    let per_item = q.nx * q.ny * q.nz;
    let local = i % per_item;
    let here = estimate(i, local);
    let g = gradient(i, local, here);
    let norm = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    let d = here - f[i];
    energy[i] = d * d + q.weight * norm;
    result[i] = select(here, result_before[i], state[i / per_item].x != 0.0);
    let factor = norm * q.tau_over_weight + 1.0;
    for (var a = 0u; a < q.ndim; a++) {
        let k = a * q.count + i;
        p_next[k] = (p[k] - q.tau * g[a]) / factor;
    }
}
