// Padfield's masked normalised cross-correlation, last step (after masked_ncc and the maxima of
// the denominator and the overlap): numerator / denominator clipped to [-1, 1], zero where the
// denominator is at most 1000 ε of its largest or the overlap below `ratio` of its largest, as
// scikit-image's cross_correlate_masked. One element per thread.
#import common/grid

struct Params { count: u32, ratio: f32 }  // mirrored in src/kernels/masked_ncc.rs

@group(0) @binding(0) var<storage, read> numerator: array<f32>;
@group(0) @binding(1) var<storage, read> denominator: array<f32>;
@group(0) @binding(2) var<storage, read> overlap: array<f32>;
@group(0) @binding(3) var<storage, read> largest_denominator: array<f32>;
@group(0) @binding(4) var<storage, read> largest_overlap: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;
@group(0) @binding(6) var<uniform> p: Params;

const EPS: f32 = 1.1920929e-7;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let den = denominator[i];
    let keep = den > 1e3 * EPS * largest_denominator[0] && overlap[i] >= p.ratio * largest_overlap[0];
    out[i] = select(0.0, clamp(numerator[i] / den, -1.0, 1.0), keep);
}
