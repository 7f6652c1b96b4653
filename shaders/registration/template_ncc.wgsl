// Lewis's fast normalised cross-correlation, last step (scikit-image's match_template): from the
// correlation of the mean-centred image with the mean-centred template and the image's window
// sums s1 = Σx and s2 = Σx² as double-single pairs (window_sum.wgsl), the response
//   num / sqrt((s2 - s1²/V) · tssd),
// with V·s2 - s1² taken from the pairs by exact products, clipped to
// [-1, 1], and 0 where that variance is within the pairs' rounding (`flat` × V·s2: a flat
// window, where scikit-image gives 0) or the template is flat. One element per thread.
#import common/grid
#import common/double_single

struct Params { count: u32, volume: f32, tssd: f32, flat: f32, one: f32, unused0: u32, unused1: u32, unused2: u32 }  // mirrored in src/kernels/template_ncc.rs

@group(0) @binding(0) var<storage, read> numerator: array<f32>;
@group(0) @binding(1) var<storage, read> s1_hi: array<f32>;
@group(0) @binding(2) var<storage, read> s1_lo: array<f32>;
@group(0) @binding(3) var<storage, read> s2_hi: array<f32>;
@group(0) @binding(4) var<storage, read> s2_lo: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let a = s1_hi[i];
    let b = s2_hi[i];
    // V·s2 - s1², V times the window's variance: the two large products exactly as pairs,
    // whose high parts cancel exactly.
    let vs2 = ds_two_prod(p.volume, b, p.one);
    let s1s1 = ds_two_prod(a, a, p.one);
    let spread = (vs2.x - s1s1.x) + ((vs2.y - s1s1.y) + p.volume * s2_lo[i] - 2.0 * a * s1_lo[i]);
    let keep = spread > p.flat * p.volume * b && p.tssd > 0.0;
    let den = sqrt(max(spread / p.volume, 0.0) * p.tssd);
    out[i] = select(0.0, clamp(numerator[i] / den, -1.0, 1.0), keep);
}
