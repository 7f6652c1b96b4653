// Back-projection's output: every pixel inside the object's disk (radius R) sums, over the
// spans, the B-spline with coefficients `coef` (batch, 3, nrho, ntheta) at its log-polar
// coordinates, times `scale`; pixels outside are 0.
#import common/grid
#import common/logpolar
#import common/spline2

@group(0) @binding(0) var<storage, read> coef: array<f32>;
@group(0) @binding(1) var<storage, read_write> image: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let c = i % p.size;
    let r = (i / p.size) % p.size;
    let b = i / (p.size * p.size);
    let x = f32(c) - p.mid;
    let y = p.mid - f32(r);
    var sum = 0.0;
    if (x * x + y * y <= p.radius * p.radius) {
        let grid = p.nrho * p.ntheta;
        for (var k = 0u; k < 3u; k++) {
            let cs = span_turn(k, p);
            let z = vec2<f32>(p.a_r * (cs.x * x + cs.y * y) / p.radius + 1.0 - p.a_r, p.a_r * (cs.x * y - cs.y * x) / p.radius);
            let rho = 0.5 * log(dot(z, z));
            let phi = atan2(z.y, z.x);
            sum += spline2((b * 3u + k) * grid, p.nrho, p.ntheta, (rho - p.rho0) / p.drho, column(phi, p));
        }
    }
    image[i] = sum * p.scale;
}
