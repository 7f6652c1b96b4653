// Total-variation factor of Richardson-Lucy-TV (Dey et al. 2006), one element per thread:
// t = 1 / (1 - λ div(∇x / |∇x|)) on the estimate x, which the update multiplies in. Forward
// differences, zero at the image's last element of each axis (zero flux), and the backward
// divergence, their adjoint; a zero gradient contributes 0. Elements outside the image (the
// zero margin of the padded arrays) get 1. The CPU twin is src/kernels/rl_tv.rs.
#import common/grid

// Mirrored in src/kernels/rl_tv.rs. Shapes padded with leading 1s to 4 axes; the last `spatial`
// axes are differentiated (a leading batch axis is not).
struct Params {
    dims: vec4<u32>,    // the padded array
    extent: vec4<u32>,  // the image inside it
    spatial: u32,
    count: u32,
    lambda: f32,
    pad: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> t: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

fn index(c: vec4<u32>) -> u32 {
    return ((c.x * p.dims.y + c.y) * p.dims.z + c.z) * p.dims.w + c.w;
}

fn unit(a: u32) -> vec4<u32> {
    var e = vec4(0u);
    e[a] = 1u;
    return e;
}

// ∇x / |∇x| at c (inside the image), 0 on the non-differentiated axes.
fn normalized_gradient(c: vec4<u32>) -> vec4<f32> {
    let here = x[index(c)];
    var g = vec4(0.0);
    for (var a = 4u - p.spatial; a < 4u; a++) {
        if (c[a] + 1u < p.extent[a]) {
            g[a] = x[index(c + unit(a))] - here;
        }
    }
    let norm = length(g);
    return select(vec4(0.0), g / norm, norm > 0.0);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let c = vec4(i / (p.dims.y * p.dims.z * p.dims.w), (i / (p.dims.z * p.dims.w)) % p.dims.y, (i / p.dims.w) % p.dims.z, i % p.dims.w);
    if (any(c >= p.extent)) {
        t[i] = 1.0;
        return;
    }
    let u = normalized_gradient(c);
    var div = 0.0;
    for (var a = 4u - p.spatial; a < 4u; a++) {
        div += u[a];
        if (c[a] > 0u) {
            div -= normalized_gradient(c - unit(a))[a];
        }
    }
    t[i] = 1.0 / (1.0 - p.lambda * div);
}
