//! Radix butterflies written out as WGSL over named registers: the code that replaces r
//! registers by their length-r DFT (forward), with its constants as literals computed in f64
//! (rounded to f32 for f32 kernels). Radices 2, 4, 8 and the odd primes 3-13 directly; 9, 15 and 16 as two small ones in
//! registers (`composite`).

use std::fmt::Write as _;

/// Literal of an f64 constant: f32's nearest, or in f64 kernels every digit (WGSL's abstract
/// floats hold f64).
fn lit(x: f64, double: bool) -> String {
    if double {
        format!("{x:?}")
    } else {
        format!("{:?}", x as f32)
    }
}

/// Complex product of register `x` with the constant e^(-2πi q/r).
fn times_root(x: &str, q: usize, r: usize, double: bool) -> String {
    let q = q % r;
    if q == 0 {
        return x.to_string();
    }
    if (4 * q).is_multiple_of(r) {
        return match 4 * q / r {
            1 => format!("vec2({x}.y, -{x}.x)"), // -i
            2 => format!("(-{x})"),
            _ => format!("vec2(-{x}.y, {x}.x)"), // +i
        };
    }
    let a = -2.0 * std::f64::consts::PI * q as f64 / r as f64;
    let (c, s) = (lit(a.cos(), double), lit(a.sin(), double));
    format!("vec2({x}.x * {c} - {x}.y * {s}, {x}.x * {s} + {x}.y * {c})")
}

/// Code that replaces registers `x[0..r]` by their length-r DFT (forward).
pub(super) fn butterfly(out: &mut String, x: &[String], pre: &str, double: bool) {
    let r = x.len();
    match r {
        1 => {}
        2 => {
            writeln!(out, "let {pre}a = {0}; {0} = {pre}a + {1}; {1} = {pre}a - {1};", x[0], x[1]).unwrap();
        }
        4 => {
            writeln!(out, "let {pre}t0 = {0} + {2}; let {pre}t1 = {0} - {2}; let {pre}t2 = {1} + {3}; let {pre}t3 = {1} - {3};", x[0], x[1], x[2], x[3])
                .unwrap();
            writeln!(out, "{} = {pre}t0 + {pre}t2; {} = {pre}t0 - {pre}t2;", x[0], x[2]).unwrap();
            writeln!(out, "{} = {pre}t1 + vec2({pre}t3.y, -{pre}t3.x); {} = {pre}t1 - vec2({pre}t3.y, -{pre}t3.x);", x[1], x[3]).unwrap();
        }
        8 => {
            // Radix-4 on even and odd halves, twiddle the odd half by W_8^k, combine.
            let even: Vec<String> = [0, 2, 4, 6].iter().map(|&i| x[i].clone()).collect();
            let odd: Vec<String> = [1, 3, 5, 7].iter().map(|&i| x[i].clone()).collect();
            butterfly(out, &even, &format!("{pre}e"), double);
            butterfly(out, &odd, &format!("{pre}o"), double);
            for (k, o) in odd.iter().enumerate().skip(1) {
                writeln!(out, "{o} = {};", times_root(o, k, 8, double)).unwrap();
            }
            for (k, e) in even.iter().enumerate() {
                writeln!(out, "let {pre}s{k} = {e};").unwrap();
            }
            // Outputs k and k+4 live in registers x[2k'] ... keep natural order: X_k -> x[k].
            for (k, o) in odd.iter().enumerate() {
                writeln!(out, "let {pre}d{k} = {o};").unwrap();
            }
            for k in 0..4 {
                writeln!(out, "{} = {pre}s{k} + {pre}d{k}; {} = {pre}s{k} - {pre}d{k};", x[k], x[k + 4]).unwrap();
            }
        }
        16 => composite(out, x, 4, 4, pre, double),
        15 => composite(out, x, 3, 5, pre, double),
        9 => composite(out, x, 3, 3, pre, double),
        _ => {
            // Odd primes (3, 5, 7, 11, 13): x_j and x_{r−j} meet the same cosine and sine, so
            // with s_j = x_j + x_{r−j}, d_j = x_j − x_{r−j}, a_k = x_0 + Σ cos(2πjk/r)·s_j and
            // b_k = Σ sin(2πjk/r)·d_j, y_k = a_k − i·b_k and y_{r−k} = a_k + i·b_k: real-scalar
            // products, half the work of a direct DFT's complex ones.
            assert!(r % 2 == 1, "radix {r} has no butterfly");
            let m = r / 2;
            for j in 1..=m {
                writeln!(out, "let {pre}s{j} = {0} + {1}; let {pre}d{j} = {0} - {1};", x[j], x[r - j]).unwrap();
            }
            let angle = |j: usize, k: usize| 2.0 * std::f64::consts::PI * ((j * k) % r) as f64 / r as f64;
            for k in 1..=m {
                let a: Vec<String> = (1..=m).map(|j| format!("{pre}s{j} * {}", lit(angle(j, k).cos(), double))).collect();
                let b: Vec<String> = (1..=m).map(|j| format!("{pre}d{j} * {}", lit(angle(j, k).sin(), double))).collect();
                writeln!(out, "let {pre}a{k} = {} + {}; let {pre}b{k} = {};", x[0], a.join(" + "), b.join(" + ")).unwrap();
            }
            let sums: Vec<String> = (1..=m).map(|j| format!("{pre}s{j}")).collect();
            writeln!(out, "{0} = {0} + {1};", x[0], sums.join(" + ")).unwrap();
            for k in 1..=m {
                writeln!(out, "{} = {pre}a{k} + vec2({pre}b{k}.y, -{pre}b{k}.x); {} = {pre}a{k} + vec2(-{pre}b{k}.y, {pre}b{k}.x);", x[k], x[r - k]).unwrap();
            }
        }
    }
}

/// DFT of length r = a·b in registers by Cooley-Tukey: b transforms of length a over
/// x[b·n1 + n2], twiddles W_r^(n2·k1), a transforms of length b, then the outputs moved from
/// register b·k1 + k2 to their natural place k1 + a·k2.
fn composite(out: &mut String, x: &[String], a: usize, b: usize, pre: &str, double: bool) {
    let r = a * b;
    for n2 in 0..b {
        let sub: Vec<String> = (0..a).map(|n1| x[b * n1 + n2].clone()).collect();
        butterfly(out, &sub, &format!("{pre}c{n2}_"), double);
    }
    for n2 in 1..b {
        for k1 in 1..a {
            let reg = &x[b * k1 + n2];
            writeln!(out, "{reg} = {};", times_root(reg, n2 * k1, r, double)).unwrap();
        }
    }
    for k1 in 0..a {
        let sub: Vec<String> = (0..b).map(|n2| x[b * k1 + n2].clone()).collect();
        butterfly(out, &sub, &format!("{pre}r{k1}_"), double);
    }
    for (i, reg) in x.iter().enumerate() {
        writeln!(out, "let {pre}p{i} = {reg};").unwrap();
    }
    for k1 in 0..a {
        for k2 in 0..b {
            writeln!(out, "{} = {pre}p{};", x[k1 + a * k2], b * k1 + k2).unwrap();
        }
    }
}
