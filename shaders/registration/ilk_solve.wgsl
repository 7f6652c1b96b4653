// scikit-image's optical_flow_ilk, the local systems A x = b per point from the filtered terms
// of ilk_terms.wgsl (A's upper triangle, then b), solved by Cramer's rule; where |det A| is
// below 1e-14 the flow is 0, as scikit-image's identity system with b = 0. Mirrored in
// src/kernels/ilk_solve.rs.
#import common/grid

struct Params {
    count: u32,
    ndim: u32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<storage, read> terms: array<f32>;       // (terms, count)
@group(0) @binding(1) var<storage, read_write> flow: array<f32>;  // (ndim, count)
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let c = p.count;
    if (p.ndim == 2u) {
        let a00 = terms[i];
        let a01 = terms[c + i];
        let a11 = terms[2u * c + i];
        let b0 = terms[3u * c + i];
        let b1 = terms[4u * c + i];
        let det = a00 * a11 - a01 * a01;
        if (abs(det) < 1e-14) {
            flow[i] = 0.0;
            flow[c + i] = 0.0;
            return;
        }
        flow[i] = (a11 * b0 - a01 * b1) / det;
        flow[c + i] = (a00 * b1 - a01 * b0) / det;
        return;
    }
    let a00 = terms[i];
    let a01 = terms[c + i];
    let a02 = terms[2u * c + i];
    let a11 = terms[3u * c + i];
    let a12 = terms[4u * c + i];
    let a22 = terms[5u * c + i];
    let b = vec3(terms[6u * c + i], terms[7u * c + i], terms[8u * c + i]);
    let m = mat3x3<f32>(vec3(a00, a01, a02), vec3(a01, a11, a12), vec3(a02, a12, a22));
    let det = determinant(m);
    if (abs(det) < 1e-14) {
        flow[i] = 0.0;
        flow[c + i] = 0.0;
        flow[2u * c + i] = 0.0;
        return;
    }
    // Cramer: x_k = det(A with column k replaced by b) / det (A symmetric: columns = rows).
    flow[i] = determinant(mat3x3<f32>(b, m[1], m[2])) / det;
    flow[c + i] = determinant(mat3x3<f32>(m[0], b, m[2])) / det;
    flow[2u * c + i] = determinant(mat3x3<f32>(m[0], m[1], b)) / det;
}
