// One Gibbs step of unsupervised Wiener-Hunt deconvolution (Orieux, Giovannelli and Rodet 2010;
// scikit-image's unsupervised_wiener) on an rfftn half spectrum, one thread per frequency:
// the object's sample x = gn conj(H) Y / P + sqrt(0.5 / P) (n1 + i n2), P = gn |H|² + gx |L|² (p_k),
// L the discrete Laplacian's transfer function; the terms of the next draws' sums (the residual
// |Y − H x|² and |L x|², weighted 2 off the half spectrum's first column as scikit-image's
// image_quad_norm), and once past the burn-in the running sum of samples and the terms of the
// change of their mean. The normals come from a counter-based hash of (seed, iteration,
// frequency): Box-Muller on two 24-bit uniforms (src/ops/deconvolve/unsupervised.rs's f64 twin
// draws the same ones).
#import common/grid
#import common/complex
#import common/laplacian

struct Params { count: u32, ndim: u32, seed: u32, hermitian: u32, dims: vec4<u32>, half: vec4<u32>, scale: f32, unused0: f32, unused1: f32, unused2: f32 }  // mirrored in src/kernels/gibbs_wiener.rs

@group(0) @binding(0) var<storage, read> spectrum: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> transfer: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> total: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> terms: array<f32>;
// gn, gx (f32 bits), the iteration, the phase (0: burn-in; 1: the first sample summed; 2: summed
// with the change measured), t = iteration − burnin (f32 bits).
@group(0) @binding(4) var<storage, read> state: array<u32>;
@group(0) @binding(5) var<uniform> p: Params;

const TWO_PI: f32 = 6.283185307179586;

// PCG's output permutation on a 32-bit state (Jarzynski and Olano 2020).
fn pcg(v: u32) -> u32 {
    let s = v * 747796405u + 2891336453u;
    let w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let laplacian = half_spectrum_laplacian(i, p.ndim, p.dims, p.half);
    let first_column = i % p.half[p.ndim - 1u] == 0u;
    let gn = bitcast<f32>(state[0]);
    let gx = bitcast<f32>(state[1]);
    let iteration = state[2];
    let phase = state[3];
    let t = bitcast<f32>(state[4]);
    let y = spectrum[i] * p.scale;
    let h = transfer[i];
    let p_k = gn * dot(h, h) + gx * laplacian * laplacian;
    let a = pcg(i ^ pcg(iteration ^ pcg(p.seed)));
    let b = pcg(a);
    let u1 = f32((a >> 8u) + 1u) * 5.9604645e-8;  // (0, 1]
    let u2 = f32(b >> 8u) * 5.9604645e-8;         // [0, 1)
    let radius = sqrt(-2.0 * log(u1));
    let normals = vec2<f32>(radius * cos(TWO_PI * u2), radius * sin(TWO_PI * u2));
    let x = gn * cmul_conj(y, h) / p_k + sqrt(0.5 / p_k) * normals;
    var weight = 2.0;
    if (first_column || p.hermitian == 0u) {
        weight = 1.0;
    }
    let residual = y - cmul(x, h);
    let rough = x * laplacian;
    var change = 0.0;
    var size = 0.0;
    if (phase > 0u) {
        let before = total[i];
        let after = before + x;
        total[i] = after;
        if (phase == 2u) {
            change = length(after / t - before / (t - 1.0));
            size = length(after);
        }
    }
    terms[i] = weight * dot(residual, residual);
    terms[p.count + i] = weight * dot(rough, rough);
    terms[2u * p.count + i] = change;
    terms[3u * p.count + i] = size;
}
