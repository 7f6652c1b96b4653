// Wiener-Hunt deconvolution's filter, applied to the image's half spectrum (scikit-image's
// `wiener` with its default regulariser): Y · conj(H) / (|H|² + balance · |L|²), with H the
// PSF's transfer function and L the transfer function of the discrete Laplacian
// (2·ndim at the centre, −1 at each axis neighbour), L(k) = Σ_d (2 − 2 cos(2π k_d / n_d)),
// real. One thread per frequency of the rfftn half spectrum (last axis n/2 + 1).
#import common/grid
#import common/complex
#import common/laplacian
struct Params { count: u32, ndim: u32, unused0: u32, unused1: u32, dims: vec4<u32>, half: vec4<u32>, balance: f32, unused2: f32, unused3: f32, unused4: f32 }  // mirrored in src/kernels/wiener_filter.rs
@group(0) @binding(0) var<storage, read> spectrum: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> transfer: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let laplacian = half_spectrum_laplacian(i, p.ndim, p.dims, p.half);
    let h = transfer[i];
    out[i] = cmul_conj(spectrum[i], h) / (dot(h, h) + p.balance * laplacian * laplacian);
}
