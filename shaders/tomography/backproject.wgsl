// Parallel-beam back-projection in the strip model (common/strip): every pixel sums, over the
// angles, the bins its footprint reaches (at most three), each weighted by the footprint's share
// in it (0 beyond the detector). The adjoint of project.wgsl.
#import common/grid
#import common/strip

@group(0) @binding(0) var<storage, read> sino: array<f32>;
@group(0) @binding(1) var<storage, read> trig: array<vec2<f32>>;  // (cos θ, sin θ) per angle
@group(0) @binding(2) var<storage, read_write> image: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 64u + lid;
    if (i >= p.count) {
        return;
    }
    let c = i % p.size;
    let r = (i / p.size) % p.size;
    let b = i / (p.size * p.size);
    let x = f32(c) - p.mid;
    let y = p.mid - f32(r);
    let detectors = i32(p.detectors);
    var sum = 0.0;
    var row = b * p.angles * p.detectors;
    for (var a = 0u; a < p.angles; a++) {
        let cs = trig[a];
        let u = x * cs.x + y * cs.y + p.center;
        let shape = strip_shape(cs);
        let first = max(i32(ceil(u - 0.5 - shape.y)), 0);
        let last = min(i32(floor(u + 0.5 + shape.y)), detectors - 1);
        for (var k = first; k <= last; k++) {
            sum += sino[row + u32(k)] * strip_weight(u, f32(k), shape);
        }
        row += p.detectors;
    }
    image[i] = sum;
}
