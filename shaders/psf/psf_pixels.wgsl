// A PSF model's planes from its radial profiles (psf_radial.wgsl): each output pixel the sum of
// its sf × sf sub-pixels (psfmodels' pixel integration; the fine grid spans 2·xymax + 1
// sub-pixels centred on the axis, so with nx·sf even the last pixel has one row and column
// fewer, as in psfmodels), each the profile linearly interpolated at the sub-pixel's radius
// (in sub-pixels), 0 beyond it. One thread per output pixel.
#import common/grid
struct Params { count: u32, nx: u32, sf: u32, xymax: u32, rmax: u32, unused0: u32, unused1: u32, unused2: u32 }  // mirrored in src/kernels/psf_pixels.rs
@group(0) @binding(0) var<storage, read> profile: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let plane = p.nx * p.nx;
    let k = i / plane;
    let oy = (i % plane) / p.nx;
    let ox = i % p.nx;
    let base = k * p.rmax;
    let last = 2u * p.xymax;
    var sum = 0.0;
    for (var fy = oy * p.sf; fy < min(oy * p.sf + p.sf, last + 1u); fy++) {
        let y = f32(i32(fy) - i32(p.xymax));
        for (var fx = ox * p.sf; fx < min(ox * p.sf + p.sf, last + 1u); fx++) {
            let x = f32(i32(fx) - i32(p.xymax));
            let r = sqrt(x * x + y * y);
            let r0 = u32(r);
            if (r0 + 1u < p.rmax) {
                let dr = r - f32(r0);
                sum += dr * profile[base + r0 + 1u] + (1.0 - dr) * profile[base + r0];
            }
        }
    }
    out[i] = sum;
}
