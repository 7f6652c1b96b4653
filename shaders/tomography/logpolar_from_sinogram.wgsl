// Back-projection's input on the log-polar grids: for span k, sample (ρ, φ) with |φ| < β/2 holds
// the sinogram at θ = kβ + φ and the detector coordinate t of the line at distance e^ρ from the
// disk's origin, t = R (e^ρ − (1 − a_r) cos φ) / a_r (θ beyond [0, π) by the symmetry
// g(θ + π, t) = g(θ, −t)); 0 elsewhere. `coef`: the extended sinograms' B-spline coefficients.
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
        var a = (f32(at.k) * p.span + phi - p.angle0) / p.dangle;
        let turns = floor(a / f32(p.angles));
        a -= turns * f32(p.angles);
        var t = p.radius * (exp(p.rho0 + f32(at.j) * p.drho) - (1.0 - p.a_r) * cos(phi)) / p.a_r;
        if (i32(turns) % 2 != 0) {
            t = -t;
        }
        let rows = p.angles + 2u * p.extra;
        v = spline2(at.b * rows * p.detectors, rows, p.detectors, a + f32(p.extra), t + p.center);
    }
    out[i] = v;
}
