// Padfield's masked normalised cross-correlation (scikit-image's cross_correlate_masked), first
// step, one element per thread, in place: from the inverse transforms of the mask and image
// products (overlap = fm ⋆ gm, fixed_part = f ⋆ gm, moving_part = fm ⋆ g, a = f ⋆ g,
// d = f² ⋆ gm, e = fm ⋆ g²) the overlap count (rounded, at least ε), the numerator (into a) and
// the denominator (into d). src/ops/registration/masked.rs; masked_ncc_finish then divides.
#import common/grid

struct Params { count: u32, unused: u32 }  // mirrored in src/kernels/masked_ncc.rs

@group(0) @binding(0) var<storage, read_write> overlap: array<f32>;
@group(0) @binding(1) var<storage, read> fixed_part: array<f32>;
@group(0) @binding(2) var<storage, read> moving_part: array<f32>;
@group(0) @binding(3) var<storage, read_write> a: array<f32>;
@group(0) @binding(4) var<storage, read_write> d: array<f32>;
@group(0) @binding(5) var<storage, read> e: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;

const EPS: f32 = 1.1920929e-7;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let n = max(round(overlap[i]), EPS);
    let f = fixed_part[i];
    let m = moving_part[i];
    let fixed_denom = max(d[i] - f * f / n, 0.0);
    let moving_denom = max(e[i] - m * m / n, 0.0);
    overlap[i] = n;
    a[i] = a[i] - f * m / n;
    d[i] = sqrt(fixed_denom * moving_denom);
}
