// Parallel-beam back-projection in the strip model (common/strip): every pixel sums, over the
// angles, the bins its footprint reaches (at most three), each weighted by the footprint's share
// in it (0 beyond the detector). The adjoint of project.wgsl.
#import common/grid
#import common/strip

@group(0) @binding(0) var<storage, read> sino: array<f32>;
@group(0) @binding(1) var<storage, read> rays: array<Ray>;
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
        let ray = rays[a];
        let u = x * ray.cs.x + y * ray.cs.y + p.center;
        let first = max(i32(ceil(u - 0.5 - ray.w2)), 0);
        let last = min(i32(floor(u + 0.5 + ray.w2)), detectors - 1);
        // Each bin's share is the footprint's area between its edges: one area per edge.
        var below = strip_cdf(f32(first) - 0.5 - u, ray);
        for (var k = first; k <= last; k++) {
            let above = strip_cdf(f32(k) + 0.5 - u, ray);
            sum += sino[row + u32(k)] * (above - below);
            below = above;
        }
        row += p.detectors;
    }
    image[i] = sum;
}
