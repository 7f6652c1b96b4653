// NaN test on the bits: compilers may fold `x != x` away under fast-math assumptions.
fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}
