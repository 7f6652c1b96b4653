// Lewis's fast normalised cross-correlation, last step (scikit-image's match_template): from the
// correlation of the mean-centred image with the mean-centred template and the image's window
// sums s1 = Σx, s2 = Σx², the response (s1·s1/V subtracted from s2 in f32 on centred data)
//   num / sqrt((s2 - s1²/V) · tssd),
// clipped to [-1, 1], and 0 where the window's variance is within the rounding of its sums
// (`flat` × s2: a flat window, as scikit-image gives 0) or the template is flat. One element
// per thread.
#import common/grid

struct Params { count: u32, inv_volume: f32, tssd: f32, flat: f32 }  // mirrored in src/kernels/template_ncc.rs

@group(0) @binding(0) var<storage, read> numerator: array<f32>;
@group(0) @binding(1) var<storage, read> s1: array<f32>;
@group(0) @binding(2) var<storage, read> s2: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let sum = s1[i];
    let squares = s2[i];
    let variance = squares - sum * sum * p.inv_volume;
    let keep = variance > p.flat * squares && p.tssd > 0.0;
    let den = sqrt(max(variance, 0.0) * p.tssd);
    out[i] = select(0.0, clamp(numerator[i] / den, -1.0, 1.0), keep);
}
