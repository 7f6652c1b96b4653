// Projection's input on the log-polar grids: for span k, sample (ρ, φ) holds the image (its
// B-spline coefficients `coef`, batch × N × N) at the point z = e^ρ (cos φ, sin φ) mapped back,
// x = R (z − (1 − a_r) e₁) / a_r turned by kβ; 0 outside the object's disk.
#import common/grid
#import common/logpolar
#import common/spline2

@group(0) @binding(0) var<storage, read> coef: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let at = grid_sample(i, p);
    var v = 0.0;
    if (in_span(at.m, p)) {
        let phi = phi_of(at.m, p);
        let e = exp(p.rho0 + f32(at.j) * p.drho);
        let turned = vec2<f32>(e * cos(phi) - (1.0 - p.a_r), e * sin(phi)) * (p.radius / p.a_r);
        if (dot(turned, turned) <= p.radius * p.radius) {
            let cs = span_turn(at.k, p);
            let x = cs.x * turned.x - cs.y * turned.y;
            let y = cs.y * turned.x + cs.x * turned.y;
            v = spline2(at.b * p.size * p.size, p.size, p.size, p.mid - y, x + p.mid);
        }
    }
    out[i] = v;
}
