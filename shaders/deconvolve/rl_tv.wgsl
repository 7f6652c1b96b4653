// Total-variation factor of Richardson-Lucy-TV (Dey et al. 2006), one element per thread:
// t = 1 / (1 - λ div(∇x / |∇x|)) on the estimate x, which the update multiplies in. Forward
// differences, zero at the image's last element of each axis (zero flux), and the backward
// divergence, their adjoint; a zero gradient contributes 0. Elements outside the image (the
// zero margin of the padded arrays) get 1. The CPU twin is src/kernels/rl_tv.rs.
//
// x may be one chunk of an array split along its first axis: the differences that cross the
// chunk's edges read the last row of the chunk before (`prev`) and the first row of the one after
// (`next`); for a whole array both are x itself and never read.
#import common/grid

// Mirrored in src/kernels/rl_tv.rs. Shapes padded with leading 1s to 4 axes; the last `spatial`
// axes are differentiated (a leading batch axis is not).
struct Params {
    dims: vec4<u32>,    // this chunk
    extent: vec4<u32>,  // the image, counted from this chunk's first row along the chunked axis
    spatial: u32,
    count: u32,
    lambda: f32,
    axis: u32,          // the chunked axis (the array's first) among the 4
    first: u32,         // this chunk's first row in the whole array
    prev_rows: u32,     // rows of the chunk before
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> prev: array<f32>;
@group(0) @binding(2) var<storage, read> next: array<f32>;
@group(0) @binding(3) var<storage, read_write> t: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

// The element at c, whose chunked coordinate may be -1 (the chunk before) or one past the
// chunk's rows (the chunk after).
fn value(c: vec4<i32>) -> f32 {
    var w = vec4<u32>(max(c, vec4(0)));
    w[p.axis] = 0u;
    let within = ((w.x * p.dims.y + w.y) * p.dims.z + w.z) * p.dims.w + w.w;
    let row = c[p.axis];
    var stride = 1u;
    for (var a = p.axis + 1u; a < 4u; a++) {
        stride *= p.dims[a];
    }
    if (row < 0) {
        return prev[(p.prev_rows - 1u) * stride + within];
    }
    if (u32(row) >= p.dims[p.axis]) {
        return next[within];
    }
    return x[u32(row) * stride + within];
}

fn unit(a: u32) -> vec4<i32> {
    var e = vec4(0);
    e[a] = 1;
    return e;
}

// ∇x / |∇x| at c (inside the image), 0 on the non-differentiated axes.
fn normalized_gradient(c: vec4<i32>) -> vec4<f32> {
    let here = value(c);
    var g = vec4(0.0);
    for (var a = 4u - p.spatial; a < 4u; a++) {
        if (c[a] + 1 < i32(p.extent[a])) {
            g[a] = value(c + unit(a)) - here;
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
    let ci = vec4<i32>(c);
    let u = normalized_gradient(ci);
    var div = 0.0;
    for (var a = 4u - p.spatial; a < 4u; a++) {
        div += u[a];
        // The whole array's first element along the axis has no predecessor.
        let global = select(c[a], c[a] + p.first, a == p.axis);
        if (global > 0u) {
            div -= normalized_gradient(ci - unit(a))[a];
        }
    }
    t[i] = 1.0 / (1.0 - p.lambda * div);
}
