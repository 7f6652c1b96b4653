// The strip model of a parallel-beam ray: a unit-square pixel projects onto the detector as a
// trapezoid (the convolution of boxes |cos θ| and |sin θ| wide) of unit area; detector bin k
// receives the part within [k − ½, k + ½]. Params: both projector kernels' parameters.

struct Params { size: u32, detectors: u32, angles: u32, count: u32, center: f32, mid: f32, unused0: u32, unused1: u32 }  // mirrored in src/kernels/project.rs

// One angle's ray and footprint, made on the host in f64 (src/ops/tomography/mod.rs): (cos θ,
// sin θ), the trapezoid's flat top and base half-widths w1 and w2, its height h, and
// q = h / (2 (w2 − w1)) for its sloped parts (0 where it has none).
struct Ray { cs: vec2<f32>, w1: f32, w2: f32, h: f32, q: f32, unused0: f32, unused1: f32 }

// The trapezoid's area left of s (its centre at 0).
fn strip_cdf(s: f32, ray: Ray) -> f32 {
    if (s <= -ray.w2) {
        return 0.0;
    }
    if (s >= ray.w2) {
        return 1.0;
    }
    if (s < -ray.w1) {
        return ray.q * (s + ray.w2) * (s + ray.w2);
    }
    if (s > ray.w1) {
        return 1.0 - ray.q * (ray.w2 - s) * (ray.w2 - s);
    }
    return 0.5 * ray.h * (ray.w2 - ray.w1) + ray.h * (s + ray.w1);
}

// The share of a pixel at detector coordinate u (its centre) falling into bin k.
fn strip_weight(u: f32, k: f32, ray: Ray) -> f32 {
    return strip_cdf(k + 0.5 - u, ray) - strip_cdf(k - 0.5 - u, ray);
}
