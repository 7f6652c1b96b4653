// The control tensor of every sample's structure tensor T, turned into the reconstruction
// weights ⟨C, M_k⟩: T's eigenvalues and eigenvectors by cyclic Jacobi rotations, the magnitude
// mapping M(‖T‖ / largest) as the first eigenvalue c_1, the isotropy mapping of the eigenvalue
// ratios for the rest (c_(k+1) = c_k μ(λ_(k+1)/λ_k)), C = γ0 Σ c_k e_k e_kᵀ, and the weights
// Σ_c C_c m[k][c]. The f64 twin is ops::denoise::cpu::control_tensor.
#import common/grid

override DIMS: u32;

struct Params {  // mirrored in src/kernels/denoise.rs
    count: u32,
    largest: f32,
    sigma: f32,
    alpha: f32,
    beta: f32,
    isotropy_alpha: f32,
    isotropy_beta: f32,
    gamma0: f32,
    // m[k][c] at 10k + c.
    coefficients: array<vec4<f32>, 25>,
}

@group(0) @binding(0) var<storage, read> tensor: array<f32>;
@group(0) @binding(1) var<storage, read_write> weights: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

fn coefficient(k: u32, c: u32) -> f32 {
    let at = 10u * k + c;
    return p.coefficients[at / 4u][at % 4u];
}

fn magnitude(x: f32) -> f32 {
    if (x <= 0.0) {
        return 0.0;
    }
    return pow(x, p.beta) / (pow(x, p.alpha + p.beta) + pow(p.sigma, p.beta));
}

fn isotropy(ratio: f32) -> f32 {
    let x = clamp(ratio, 0.0, 1.0);
    let a = p.isotropy_alpha;
    let num = pow(x * (1.0 - a), p.isotropy_beta);
    let other = pow(a * (1.0 - x), p.isotropy_beta);
    if (num + other == 0.0) {
        return 0.0;
    }
    return num / (num + other);
}

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 128u + lid;
    if (i >= p.count) {
        return;
    }
    var a: array<array<f32, 4>, 4>;
    var v: array<array<f32, 4>, 4>;
    var c = 0u;
    var norm2 = 0.0;
    for (var r = 0u; r < DIMS; r++) {
        for (var s = r; s < DIMS; s++) {
            let t = tensor[c * p.count + i];
            a[r][s] = t;
            a[s][r] = t;
            norm2 += select(2.0, 1.0, r == s) * t * t;
            c++;
        }
        v[r][r] = 1.0;
    }
    // Cyclic Jacobi: each rotation zeroes a[r][s]; a few sweeps reach f32 precision for d ≤ 4.
    for (var sweep = 0u; sweep < 6u; sweep++) {
        for (var r = 0u; r + 1u < DIMS; r++) {
            for (var s = r + 1u; s < DIMS; s++) {
                let ars = a[r][s];
                if (abs(ars) <= 1e-30 * sqrt(norm2) || ars == 0.0) {
                    continue;
                }
                let theta = (a[s][s] - a[r][r]) / (2.0 * ars);
                let t = sign(theta + select(0.0, 1e-30, theta == 0.0)) / (abs(theta) + sqrt(theta * theta + 1.0));
                let cs = 1.0 / sqrt(t * t + 1.0);
                let sn = t * cs;
                for (var k = 0u; k < DIMS; k++) {
                    let akr = a[k][r];
                    let aks = a[k][s];
                    a[k][r] = cs * akr - sn * aks;
                    a[k][s] = sn * akr + cs * aks;
                }
                for (var k = 0u; k < DIMS; k++) {
                    let ark = a[r][k];
                    let ask = a[s][k];
                    a[r][k] = cs * ark - sn * ask;
                    a[s][k] = sn * ark + cs * ask;
                }
                for (var k = 0u; k < DIMS; k++) {
                    let vkr = v[k][r];
                    let vks = v[k][s];
                    v[k][r] = cs * vkr - sn * vks;
                    v[k][s] = sn * vkr + cs * vks;
                }
            }
        }
    }
    // Eigenvalues in descending order (selection of the largest remaining).
    var order: array<u32, 4> = array<u32, 4>(0u, 1u, 2u, 3u);
    for (var k = 0u; k < DIMS; k++) {
        var best = k;
        for (var m = k + 1u; m < DIMS; m++) {
            if (a[order[m]][order[m]] > a[order[best]][order[best]]) {
                best = m;
            }
        }
        let swap = order[k];
        order[k] = order[best];
        order[best] = swap;
    }
    var gain = 0.0;
    if (p.largest > 0.0) {
        gain = magnitude(sqrt(norm2) / p.largest);
    }
    var control: array<array<f32, 4>, 4>;
    for (var k = 0u; k < DIMS; k++) {
        let e = order[k];
        if (k > 0u) {
            let previous = a[order[k - 1u]][order[k - 1u]];
            var ratio = 1.0;
            if (previous > 0.0) {
                ratio = max(a[e][e], 0.0) / previous;
            }
            gain *= isotropy(ratio);
        }
        for (var r = 0u; r < DIMS; r++) {
            for (var s = 0u; s < DIMS; s++) {
                control[r][s] += p.gamma0 * gain * v[r][e] * v[s][e];
            }
        }
    }
    let components = DIMS * (DIMS + 1u) / 2u;
    for (var k = 0u; k < components; k++) {
        var w = 0.0;
        var cc = 0u;
        for (var r = 0u; r < DIMS; r++) {
            for (var s = r; s < DIMS; s++) {
                w += control[r][s] * coefficient(k, cc);
                cc++;
            }
        }
        weights[k * p.count + i] = w;
    }
}
