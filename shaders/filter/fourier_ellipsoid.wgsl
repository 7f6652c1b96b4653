// scipy.ndimage.fourier_ellipsoid: every element of a complex spectrum of 1-3 axes times the
// transform of an ellipsoid, a function of r = sqrt(Σ t_a²) with t_a = π · size_a · f_a tabled
// per axis on the host (`table` holds each axis's values one after another, from `start[a]`):
// sin r / r in 1-D, 2 J1(r) / r in 2-D, 3 (sin r − r cos r) / r³ in 3-D (its series below
// r = 0.5, where the difference would cancel in f32).
#import common/grid
#import common/bessel

struct Params {
    dims: vec4<u32>,
    start: vec4<u32>,
    rank: u32,
    count: u32,
    pad0: u32,
    pad1: u32,
}  // mirrored in src/kernels/fourier_ellipsoid.rs

@group(0) @binding(0) var<storage, read> x: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> table: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

fn ellipsoid(r: f32, rank: u32) -> f32 {
    if (r == 0.0) {
        return 1.0;
    }
    let e = cis(r);
    if (rank == 1u) {
        return e.y / r;
    }
    if (rank == 2u) {
        return 2.0 * bessel_j1(r) / r;
    }
    if (r < 0.5) {
        let r2 = r * r;
        return 1.0 + r2 * (-1.0 / 10.0 + r2 * (1.0 / 280.0 + r2 * (-1.0 / 15120.0 + r2 / 1330560.0)));
    }
    return 3.0 * (e.y - r * e.x) / (r * r * r);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    var rest = i;
    var r2 = 0.0;
    for (var a = p.rank; a > 0u; a--) {
        let k = rest % p.dims[a - 1u];
        rest /= p.dims[a - 1u];
        let t = table[p.start[a - 1u] + k];
        r2 += t * t;
    }
    y[i] = x[i] * ellipsoid(sqrt(r2), p.rank);
}
