// Complex numbers as vec2<real> (re, im), matching Rust's Complex32 layout (real = f32 but in
// the f64 twins of kernels over `real`).
#import common/real

fn cmul(a: vec2<real>, b: vec2<real>) -> vec2<real> {
    return vec2<real>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
// a * conj(b)
fn cmul_conj(a: vec2<real>, b: vec2<real>) -> vec2<real> {
    return vec2<real>(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y);
}
