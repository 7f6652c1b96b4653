// The log-polar method's grids (src/ops/tomography/logpolar.rs): each of the 3 spans of angles
// (β = π/3 each) has a grid of nrho × ntheta samples, ρ = rho0 + j·drho and φ = (m − ntheta/2)·dtheta,
// on which the object, rotated by −kβ, lies in the disk of radius a_r centred at (1 − a_r, 0).

struct Params {
    size: u32, angles: u32, detectors: u32, count: u32,
    nrho: u32, ntheta: u32, extra: u32, unused0: u32,
    radius: f32, a_r: f32, rho0: f32, drho: f32,
    dtheta: f32, span: f32, angle0: f32, dangle: f32,
    center: f32, mid: f32, scale: f32, unused1: f32,
}  // mirrored in src/kernels/logpolar.rs

// Span k's rotation of the plane by −kβ: (cos kβ, sin kβ).
fn span_turn(k: u32, p: Params) -> vec2<f32> {
    let a = f32(k) * p.span;
    return vec2<f32>(cos(a), sin(a));
}
