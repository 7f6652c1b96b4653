// Parallel-beam forward projection in the strip model (common/strip), the exact adjoint of
// backproject.wgsl: bin k receives from each pixel the part of its footprint within the bin.
// Gathered per (image, angle, bin): along whichever image axis the rays cross more steeply, each
// row or column holds at most four pixels whose footprint reaches the bin, found by solving for
// them.
#import common/grid
#import common/strip

@group(0) @binding(0) var<storage, read> image: array<f32>;
// The image with its rows and columns swapped: where a warp's neighbouring bins need
// neighbouring rows of one column, they read neighbouring addresses here.
@group(0) @binding(1) var<storage, read> transposed: array<f32>;
@group(0) @binding(2) var<storage, read> rays: array<Ray>;
@group(0) @binding(3) var<storage, read_write> sino: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 64u + lid;
    if (i >= p.count) {
        return;
    }
    let k = i % p.detectors;
    let a = (i / p.detectors) % p.angles;
    let b = i / (p.detectors * p.angles);
    let ray = rays[a];
    let cs = ray.cs;
    let base = b * p.size * p.size;
    let bin = f32(k);
    let last = f32(p.size) - 1.0;
    let reach = 0.5 + ray.w2;
    var sum = 0.0;
    if (abs(cs.y) >= abs(cs.x)) {
        let inverse = 1.0 / cs.y;
        // Per column c (x fixed): rows whose footprint reaches bin k.
        for (var c = 0u; c < p.size; c++) {
            let x = f32(c) - p.mid;
            let y0 = (bin - p.center - x * cs.x - reach) * inverse;
            let y1 = (bin - p.center - x * cs.x + reach) * inverse;
            let r0 = max(ceil(p.mid - max(y0, y1)), 0.0);
            let r1 = min(floor(p.mid - min(y0, y1)), last);
            for (var r = r0; r <= r1; r += 1.0) {
                let u = x * cs.x + (p.mid - r) * cs.y + p.center;
                sum += transposed[base + c * p.size + u32(r)] * strip_weight(u, bin, ray);
            }
        }
    } else {
        let inverse = 1.0 / cs.x;
        // Per row r (y fixed): columns whose footprint reaches bin k.
        for (var r = 0u; r < p.size; r++) {
            let y = p.mid - f32(r);
            let x0 = (bin - p.center - y * cs.y - reach) * inverse;
            let x1 = (bin - p.center - y * cs.y + reach) * inverse;
            let c0 = max(ceil(min(x0, x1) + p.mid), 0.0);
            let c1 = min(floor(max(x0, x1) + p.mid), last);
            for (var c = c0; c <= c1; c += 1.0) {
                let u = (c - p.mid) * cs.x + y * cs.y + p.center;
                sum += image[base + r * p.size + u32(c)] * strip_weight(u, bin, ray);
            }
        }
    }
    sino[i] = sum;
}
