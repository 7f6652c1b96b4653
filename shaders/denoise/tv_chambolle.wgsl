// One step of Chambolle's projection algorithm for total-variation denoising, in scikit-image's
// form (`_denoise_tv_chambolle_nd`): from the dual field p (one component per axis),
//   out = f − div p                      (the current estimate, written for every step)
//   g_a = out(v + e_a) − out(v)          (0 on each axis's last plane)
//   p'_a = (p_a − τ g_a) / (1 + τ/w · |g|),  τ = 1 / (2 · ndim).
// Arrays of `item` voxels in a batch: (nz, ny, nx) with leading 1s below three axes; component
// a of p (axis 3 − ndim + a of (z, y, x)) at a · count + i. Sums run in scikit-image's order.
#import common/grid
#import common/tv_chambolle

struct Params { nx: u32, ny: u32, nz: u32, ndim: u32, tau: f32, tau_over_weight: f32, count: u32, unused: u32 }  // mirrored in src/kernels/tv_chambolle.rs

@group(0) @binding(0) var<storage, read> f: array<f32>;
@group(0) @binding(1) var<storage, read> p: array<f32>;
@group(0) @binding(2) var<storage, read_write> p_next: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> q: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= q.count) {
        return;
    }
    let local = i % (q.nx * q.ny * q.nz);
    let here = estimate(i, local);
    out[i] = here;
    let g = gradient(i, local, here);
    let factor = sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) * q.tau_over_weight + 1.0;
    for (var a = 0u; a < q.ndim; a++) {
        let k = a * q.count + i;
        p_next[k] = (p[k] - q.tau * g[a]) / factor;
    }
}
