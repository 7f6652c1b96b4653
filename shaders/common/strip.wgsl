// The strip model of a parallel-beam ray: a unit-square pixel projects onto the detector as a
// trapezoid (the convolution of boxes |cos θ| and |sin θ| wide) of unit area; detector bin k
// receives the part within [k − ½, k + ½]. `shape` holds (w1, w2, h): the flat top's and the
// base's half-widths and the height. Params: both projector kernels' parameters.

struct Params { size: u32, detectors: u32, angles: u32, count: u32, center: f32, mid: f32, unused0: u32, unused1: u32 }  // mirrored in src/kernels/project.rs

fn strip_shape(cs: vec2<f32>) -> vec3<f32> {
    let a = abs(cs.x);
    let b = abs(cs.y);
    return vec3<f32>(0.5 * abs(a - b), 0.5 * (a + b), 1.0 / max(a, b));
}

// The trapezoid's area left of s (its centre at 0).
fn strip_cdf(s: f32, shape: vec3<f32>) -> f32 {
    let w1 = shape.x;
    let w2 = shape.y;
    let h = shape.z;
    if (s <= -w2) {
        return 0.0;
    }
    if (s >= w2) {
        return 1.0;
    }
    if (s < -w1) {
        return h * (s + w2) * (s + w2) / (2.0 * (w2 - w1));
    }
    if (s > w1) {
        return 1.0 - h * (w2 - s) * (w2 - s) / (2.0 * (w2 - w1));
    }
    return 0.5 * h * (w2 - w1) + h * (s + w1);
}

// The share of a pixel at detector coordinate u (its centre) falling into bin k.
fn strip_weight(u: f32, k: f32, shape: vec3<f32>) -> f32 {
    return strip_cdf(k + 0.5 - u, shape) - strip_cdf(k - 0.5 - u, shape);
}
