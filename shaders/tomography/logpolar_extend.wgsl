// The sinograms (batch, angles, detectors) with `extra` rows before and after, continued by the
// symmetry g(θ + π, t) = g(θ, −t) (the centre at the detector's middle): row −e is row
// angles − e reversed, row angles + e row e reversed.
#import common/grid
#import common/logpolar

@group(0) @binding(0) var<storage, read> sino: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let rows = p.angles + 2u * p.extra;
    let k = i % p.detectors;
    let row = (i / p.detectors) % rows;
    let b = i / (p.detectors * rows);
    var a = i32(row) - i32(p.extra);
    var bin = k;
    if (a < 0 || a >= i32(p.angles)) {
        a = select(a - i32(p.angles), a + i32(p.angles), a < 0);
        bin = p.detectors - 1u - k;
    }
    out[i] = sino[(b * p.angles + u32(a)) * p.detectors + bin];
}
