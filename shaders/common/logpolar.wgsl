// The log-polar method's grids (src/ops/tomography/logpolar.rs): each of the 3 spans of angles
// (β = π/3 each) has a grid of nrho × ntheta samples over a period of 2β in φ, on which the
// object, rotated by −kβ, lies in the disk of radius a_r centred at (1 − a_r, 0). Column m
// holds φ = (m − ntheta/4 − 2)·dtheta (cyclically) and row j ρ = rho0 + j·drho. The inputs store
// only `width` = ntheta/2 + 4 columns (the span ±β/2 and two either side; the rest is zero);
// the outputs all ntheta, of which those the inputs store are read.

struct Params {
    size: u32, angles: u32, detectors: u32, count: u32,
    nrho: u32, ntheta: u32, extra: u32, width: u32,
    radius: f32, a_r: f32, rho0: f32, drho: f32,
    dtheta: f32, span: f32, angle0: f32, dangle: f32,
    center: f32, mid: f32, scale: f32, unused1: f32,
}  // mirrored in src/kernels/logpolar.rs

// Thread i's sample of the inputs' stored grids: column m, row j, span k, slice b.
struct GridSample { m: u32, j: u32, k: u32, b: u32 }

fn grid_sample(i: u32, p: Params) -> GridSample {
    let m = i % p.width;
    let j = (i / p.width) % p.nrho;
    let k = (i / (p.width * p.nrho)) % 3u;
    return GridSample(m, j, k, i / (p.width * p.nrho * 3u));
}

// The stored column of angle φ, and whether column m lies within the span.
fn column(phi: f32, p: Params) -> f32 {
    return phi / p.dtheta + f32(p.ntheta / 4u + 2u);
}

fn in_span(m: u32, p: Params) -> bool {
    return m >= 2u && m < p.ntheta / 2u + 2u;
}

fn phi_of(m: u32, p: Params) -> f32 {
    return (f32(m) - f32(p.ntheta / 4u + 2u)) * p.dtheta;
}

// Span k's rotation of the plane by −kβ: (cos kβ, sin kβ).
fn span_turn(k: u32, p: Params) -> vec2<f32> {
    let a = f32(k) * p.span;
    return vec2<f32>(cos(a), sin(a));
}
