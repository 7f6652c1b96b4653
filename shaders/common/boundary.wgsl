// Boundary modes of scipy.ndimage, the WGSL twin of `Boundary::fold` (src/kernels/boundary.rs):
// mode 0 constant, 1 nearest, 2 reflect, 3 mirror, 4 wrap (`Boundary::code()`). Pass the mode
// as an `override` constant so the switch folds away.

// a mod n in [0, n) for n > 0 (WGSL's % truncates toward zero).
fn boundary_floor_mod(a: i32, n: i32) -> i32 {
    let r = a % n;
    return select(r, r + n, r < 0);
}

// Folds coordinate c into [0, n) (any distance outside: reflect and mirror are periodic);
// -1 means outside in constant mode. Interior coordinates skip the division.
fn boundary_fold(c: i32, n: i32, mode: u32) -> i32 {
    if (c >= 0 && c < n) {
        return c;
    }
    switch mode {
        case 1u: {  // nearest: a a a | a b c d | d d d
            return clamp(c, 0, n - 1);
        }
        case 2u: {  // reflect (half-sample): d c b a | a b c d | d c b a, period 2n
            let m = boundary_floor_mod(c, 2 * n);
            return select(m, 2 * n - 1 - m, m >= n);
        }
        case 3u: {  // mirror (whole-sample): d c b | a b c d | c b a, period 2n - 2
            if (n == 1) {
                return 0;
            }
            let m = boundary_floor_mod(c, 2 * n - 2);
            return select(m, 2 * n - 2 - m, m >= n);
        }
        case 4u: {  // wrap: a b c d | a b c d | a b c d
            return boundary_floor_mod(c, n);
        }
        default: {  // constant
            return -1;
        }
    }
}
