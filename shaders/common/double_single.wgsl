// Double-single arithmetic: a value as an f32 pair hi + lo (about 48 bits), by error-free
// transformations. Each rounding error is taken through a product with `one` (1.0, read from a
// uniform at run time): shader compilers that treat float arithmetic as associative (Mesa's NIR
// does, SPIR-V carrying no NoContraction) fold (a + b) - a into b and lose the error otherwise;
// contracting a product and a sum into an fma keeps every step exact.

// a + b as a pair: Knuth's two-sum.
fn ds_two_sum(a: f32, b: f32, one: f32) -> vec2<f32> {
    let s = a + b;
    let bb = s * one - a;
    return vec2<f32>(s, (a - (s - bb) * one) + (b - bb));
}

// a + b as a pair where |a| ≥ |b|: Dekker's fast two-sum.
fn ds_fast_two_sum(a: f32, b: f32, one: f32) -> vec2<f32> {
    let s = a + b;
    return vec2<f32>(s, b - (s * one - a));
}

fn ds_add(a: vec2<f32>, b: vec2<f32>, one: f32) -> vec2<f32> {
    let s = ds_two_sum(a.x, b.x, one);
    return ds_fast_two_sum(s.x, s.y + a.y + b.y, one);
}

// a as two halves of 12 bits: Veltkamp's split.
fn ds_split(a: f32, one: f32) -> vec2<f32> {
    let c = 4097.0 * a;
    let hi = c - (c * one - a);
    return vec2<f32>(hi, a - hi);
}

// a · b as a pair: Dekker's two-product (no fma needed).
fn ds_two_prod(a: f32, b: f32, one: f32) -> vec2<f32> {
    let p = a * b;
    let x = ds_split(a, one);
    let y = ds_split(b, one);
    return vec2<f32>(p, ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y);
}
