// Non-local means' weights (nlm_accumulate, nlm_slow).
// scikit-image's fast_exp (Schraudolph 1999): the double whose high word is
// trunc(EXP_A · y) + EXP_BC and low word 0, here in f32 (exact but for the product's rounding,
// which can move the integer by one: 2^-20 relative).
fn fast_exp(y: f32) -> f32 {
    let hi = i32(1512775.3951951857 * y) + 1072632447;
    let m = f32(hi & 0xfffff) / 1048576.0;
    return ldexp(1.0 + m, (hi >> 20u) - 1023);
}
