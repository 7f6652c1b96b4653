// scikit-image's optical_flow_ilk, one warp's local terms per point: the warped moving image's
// gradient g (numpy.gradient: central differences, one-sided at the ends), the error
// e = g · flow + reference − warped, and the products the window filter sums: g_a g_b for
// a ≤ b (itertools' combinations_with_replacement order), then g_a e. Planes of `out`:
// product k at out[k * count + i]. Mirrored in src/kernels/ilk_terms.rs.
#import common/grid

struct Params {
    count: u32,
    ndim: u32,
    pad0: u32,
    pad1: u32,
    dims: vec4<u32>,   // the image's shape, (n0, n1[, n2])
}

@group(0) @binding(0) var<storage, read> warped: array<f32>;
@group(0) @binding(1) var<storage, read> reference: array<f32>;
@group(0) @binding(2) var<storage, read> flow: array<f32>;         // (ndim, count)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;    // (terms, count)
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let nd = p.ndim;
    var g: array<f32, 3>;
    var stride = 1u;
    for (var a = i32(nd) - 1; a >= 0; a--) {
        let n = p.dims[a];
        let at = (i / stride) % n;
        var d = 0.0;
        if (n > 1u) {
            if (at == 0u) {
                d = warped[i + stride] - warped[i];
            } else if (at == n - 1u) {
                d = warped[i] - warped[i - stride];
            } else {
                d = 0.5 * (warped[i + stride] - warped[i - stride]);
            }
        }
        g[a] = d;
        stride *= n;
    }
    var e = reference[i] - warped[i];
    for (var a = 0u; a < nd; a++) {
        e += g[a] * flow[a * p.count + i];
    }
    var k = 0u;
    for (var a = 0u; a < nd; a++) {
        for (var b = a; b < nd; b++) {
            out[k * p.count + i] = g[a] * g[b];
            k++;
        }
    }
    for (var a = 0u; a < nd; a++) {
        out[k * p.count + i] = g[a] * e;
        k++;
    }
}
