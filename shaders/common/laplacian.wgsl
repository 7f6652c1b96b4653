// The discrete Laplacian's transfer function (2·ndim at the centre, −1 at each axis neighbour)
// at frequency i of an rfftn half spectrum of `half` (real arrays of `dims`, ndim axes in the
// last slots): L(k) = Σ_d (2 − 2 cos(2π k_d / n_d)), real. scikit-image's Wiener regulariser.
const LAPLACIAN_TWO_PI: f32 = 6.283185307179586;

fn half_spectrum_laplacian(i: u32, ndim: u32, dims: vec4<u32>, half: vec4<u32>) -> f32 {
    var rest = i;
    var laplacian = 0.0;
    for (var d = 0u; d < ndim; d++) {
        let axis = ndim - 1u - d;
        let k = rest % half[axis];
        rest = rest / half[axis];
        // k / n in [0, 1): the angle's rounding stays below an ulp of 2π.
        laplacian += 2.0 - 2.0 * cos(LAPLACIAN_TWO_PI * (f32(k) / f32(dims[axis])));
    }
    return laplacian;
}
