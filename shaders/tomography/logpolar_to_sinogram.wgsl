// Projection's output: bin t of angle θ reads the span k holding θ at θ′ = θ − kβ (θ beyond
// [−β/2, π − β/2) by g(θ + π, t) = g(θ, −t); `spans` per angle: k, θ′, −1 where mirrored, decided
// on the host) and the line's distance s = a_r t / R + (1 − a_r) cos θ′
// from the disk's origin: the B-spline with coefficients `coef` (batch, 3, nrho, ntheta) at
// (ln s, θ′), times s · scale; bins beyond the object's disk are 0.
#import common/grid
#import common/logpolar
#import common/spline2

@group(0) @binding(0) var<storage, read> coef: array<f32>;
@group(0) @binding(1) var<storage, read> spans: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> sino: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

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
    let angle = spans[a];
    let t = (f32(bin) - p.center) * angle.z;
    var v = 0.0;
    if (abs(t) <= p.radius) {
        let k = u32(angle.x);
        let tp = angle.y;
        let s = p.a_r * t / p.radius + (1.0 - p.a_r) * cos(tp);
        let grid = p.nrho * p.ntheta;
        v = s * p.scale * spline2((b * 3u + k) * grid, p.nrho, p.ntheta, (log(s) - p.rho0) / p.drho, column(tp, p));
    }
    sino[i] = v;
}
