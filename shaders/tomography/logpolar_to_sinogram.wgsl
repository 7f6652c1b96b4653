// Projection's output: bin t of angle θ reads the span holding θ (θ beyond [−β/2, π − β/2) by
// g(θ + π, t) = g(θ, −t)) at θ′ = θ − kβ and the line's distance s = a_r t / R + (1 − a_r) cos θ′
// from the disk's origin: the B-spline with coefficients `coef` (batch, 3, nrho, ntheta) at
// (ln s, θ′), times s · scale; bins beyond the object's disk are 0.
#import common/grid
#import common/logpolar
#import common/spline2

@group(0) @binding(0) var<storage, read> coef: array<f32>;
@group(0) @binding(1) var<storage, read_write> sino: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

const PI: f32 = 3.14159265358979;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let bin = i % p.detectors;
    let a = (i / p.detectors) % p.angles;
    let b = i / (p.detectors * p.angles);
    var t = f32(bin) - p.center;
    var v = 0.0;
    if (abs(t) <= p.radius) {
        let theta = p.angle0 + f32(a) * p.dangle;
        let turns = floor((theta + 0.5 * p.span) / PI);
        let wrapped = theta - turns * PI;
        if (i32(turns) % 2 != 0) {
            t = -t;
        }
        let k = min(u32(max(floor((wrapped + 0.5 * p.span) / p.span), 0.0)), 2u);
        let tp = wrapped - f32(k) * p.span;
        let s = p.a_r * t / p.radius + (1.0 - p.a_r) * cos(tp);
        let grid = p.nrho * p.ntheta;
        v = s * p.scale * spline2((b * 3u + k) * grid, p.nrho, p.ntheta, (log(s) - p.rho0) / p.drho, column(tp, p));
    }
    sino[i] = v;
}
