// scipy.ndimage.affine_transform (and shift, zoom, rotate through it), one output per thread:
// output index o reads the sampled array at matrix·o + offset, through the `sample` of the
// kernel's sampling snippet (common/bspline or common/bspline_texture) with per-axis taps (one
// along axes the transform leaves alone, so they need no prefilter). Arrays are seen with 4
// axes, leading ones of one sample added. Bindings 0-1, the sampled array's after them.
#import common/grid
#import common/real

struct Params {
    matrix: array<vec4<f32>, 4>,  // row a: input axis a's coordinate from the output index
    offset: vec4<f32>,            // (the prefilter's padding included)
    matrix_lo: array<vec4<f32>, 4>,  // what f32 left of each, and what that left: the f64 twin
    offset_lo: vec4<f32>,            // adds them back, the f64 values exactly (hi + lo) + lo2
    matrix_lo2: array<vec4<f32>, 4>,
    offset_lo2: vec4<f32>,
    dims: vec4<u32>,              // the sampled array's axes
    out_dims: vec4<u32>,          // the output's axes
    points: u32,
    cval: f32,
    unused0: u32,
    unused1: u32,
}  // mirrored in src/kernels/affine_sample.rs

@group(0) @binding(0) var<storage, read_write> out: array<real>;
@group(0) @binding(1) var<uniform> p: Params;

// Row a of the matrix (the f64 twin's exactly; the f32 kernel's as before).
fn row(a: u32) -> vec4<real> {
    if (WIDE) {
        return (vec4<real>(p.matrix[a]) + vec4<real>(p.matrix_lo[a])) + vec4<real>(p.matrix_lo2[a]);
    }
    return vec4<real>(p.matrix[a]);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.points) {
        return;
    }
    let o = vec4<real>(vec4<u32>(i / (p.out_dims.y * p.out_dims.z * p.out_dims.w),
                                i / (p.out_dims.z * p.out_dims.w) % p.out_dims.y,
                                i / p.out_dims.w % p.out_dims.z,
                                i % p.out_dims.w));
    let m = array<vec4<real>, 4>(row(0u), row(1u), row(2u), row(3u));
    var c = vec4<real>(dot(m[0], o), dot(m[1], o), dot(m[2], o), dot(m[3], o)) + vec4<real>(p.offset);
    if (WIDE) {
        c = vec4<real>(dot(m[0], o), dot(m[1], o), dot(m[2], o), dot(m[3], o))
            + ((vec4<real>(p.offset) + vec4<real>(p.offset_lo)) + vec4<real>(p.offset_lo2));
    }
    out[i] = sample(c, p.dims, real(p.cval));
}
