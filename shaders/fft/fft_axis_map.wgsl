// Element maps along one axis that the FFT needs between its line passes. The array is viewed
// as (outer, len, inner); each thread writes one element of the output (outer, len_out, inner).
// MODE (src/kernels/fft_axis_map.rs):
//   0 chirp:     y_k = k < len_in ? x_k · table_k : 0     (Bluestein pre-multiply and zero-pad)
//   1 multiply:  y_k = x_k · table_k                      (Bluestein: times the chirp's spectrum)
//   2 crop:      y_k = x_k · table_k, k < len_out        (Bluestein post-multiply and crop)
//   3 real post: the spectrum of n = 2M reals from the length-M transform Z of their pairs:
//                y_k = E_k + W_n^k O_k, E_k = (Z_k + conj Z_(M-k)) / 2, O_k = (Z_k - conj Z_(M-k)) / 2i,
//                k = 0..M, len_in = M, table W_n^k
//   4 real pre:  the inverse of 3: Z_k = E_k + i O_k with E_k = (X_k + conj X_(M-k)) / 2 and
//                O_k = (X_k - conj X_(M-k)) conj(W_n^k) / 2, k < M = len_out, len_in = M + 1;
//                the imaginary parts of X_0 and X_M are ignored (as numpy's irfft does)
//   5 real pairs: the spectra of two real lines a, b from the transform Z (length n = len_in) of
//                z = x_a + i x_b: X_a[k] = (Z_k + conj Z_(n-k)) / 2, X_b[k] = (Z_k - conj Z_(n-k)) / 2i,
//                k < len_out = n/2 + 1. The output is the real side: element (o, k, i) belongs to
//                line (o, i), whose pair is packed at (o / 2, ·, i) for PAIRS = 1 (rows 2m, 2m + 1)
//                or (o, ·, i / 2) for PAIRS = 2 (columns 2c, 2c + 1); inner_in is the packed inner
//   6 hermitian pairs: the inverse's packing: Z_k = A_k + i B_k (k < n = len_out), A and B the
//                full Hermitian spectra of lines a, b from their halves (len_in = n/2 + 1 values),
//                the imaginary parts of A_0 and, n even, A_(n/2) ignored (as numpy's irfft does);
//                B = 0 where line b is past the pair_count rows (columns). The output is the packed
//                side, the input the real side with inner_in columns
// CONJ_IN / CONJ_OUT conjugate input and output (inverse transforms as conj ∘ F ∘ conj).
#import common/real
#import common/complex

override MODE: u32;
override CONJ_IN: bool = false;
override CONJ_OUT: bool = false;
override PAIRS: u32 = 0u;  // 1: rows, 2: columns (modes 5 and 6)

// Mirrored in src/kernels/fft_axis_map.rs.
struct Params {
    count: u32,     // output elements
    len_in: u32,
    len_out: u32,
    inner: u32,     // of the output
    table: u32,     // offset of the table in `tw`
    scale: f32,
    inner_in: u32,  // of the input (the output's but for modes 5 and 6)
    pair_count: u32,  // mode 6: rows (PAIRS = 1) or columns (2) of the real side
    scale_lo: f32,  // what the f32 scale left of the f64 factor (added back in the f64 twin)
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read> src: array<vec2<real>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec2<real>>;
@group(0) @binding(2) var<storage, read> tw: array<vec2<real>>;
@group(0) @binding(3) var<uniform> p: Params;

fn load(o: u32, k: u32, i: u32) -> vec2<real> {
    let x = src[(o * p.len_in + k) * p.inner_in + i];
    return select(x, vec2(x.x, -x.y), CONJ_IN);
}

// Element k < len_out of the full Hermitian spectrum whose first len_in values are line (o, i).
fn hermitian(o: u32, k: u32, i: u32) -> vec2<real> {
    let mirror = k >= p.len_in;
    let kk = select(k, p.len_out - k, mirror);
    var x = load(o, kk, i);
    if (kk == 0u || 2u * kk == p.len_out) {
        x.y = 0.0;
    }
    return select(x, vec2(x.x, -x.y), mirror);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let e = (wid.x + nwg.x * (wid.y + nwg.y * wid.z)) * 256u + lid;
    if (e >= p.count) {
        return;
    }
    let i = e % p.inner;
    let ok = e / p.inner;
    let k = ok % p.len_out;
    let o = ok / p.len_out;
    var y = vec2<real>();
    switch MODE {
        case 0u: {
            if (k < p.len_in) {
                y = cmul(load(o, k, i), tw[p.table + k]);
            }
        }
        case 1u, 2u: {
            y = cmul(load(o, k, i), tw[p.table + k]);
        }
        case 3u: {
            let m = p.len_in;
            let zk = load(o, k % m, i);
            let zc = load(o, (m - k) % m, i);
            let zcc = vec2(zc.x, -zc.y);
            let e = 0.5 * (zk + zcc);
            let d = 0.5 * (zk - zcc);
            let od = vec2(d.y, -d.x);  // d / i
            y = e + cmul(tw[p.table + k], od);
        }
        case 4u: {
            let m = p.len_out;
            var xk = load(o, k, i);
            var xc = load(o, m - k, i);
            if (k == 0u) {
                xk = vec2(xk.x, 0.0);
                xc = vec2(xc.x, 0.0);
            }
            let xcc = vec2(xc.x, -xc.y);
            let e = 0.5 * (xk + xcc);
            let w = tw[p.table + k];
            let od = cmul(0.5 * (xk - xcc), vec2(w.x, -w.y));
            y = e + vec2(-od.y, od.x);  // e + i·od
        }
        case 5u: {
            let columns = PAIRS == 2u;
            let b = (select(o, i, columns) & 1u) == 1u;
            let po = select(o >> 1u, o, columns);
            let pi = select(i, i >> 1u, columns);
            let n = p.len_in;
            let zk = load(po, k % n, pi);
            let zc = load(po, (n - k) % n, pi);
            let zcc = vec2(zc.x, -zc.y);
            if (b) {
                let d = 0.5 * (zk - zcc);
                y = vec2(d.y, -d.x);  // d / i
            } else {
                y = 0.5 * (zk + zcc);
            }
        }
        case 6u: {
            let columns = PAIRS == 2u;
            let oa = select(2u * o, o, columns);
            let ia = select(i, 2u * i, columns);
            y = hermitian(oa, k, ia);
            if (select(2u * o, 2u * i, columns) + 1u < p.pair_count) {
                let b = hermitian(oa + u32(!columns), k, ia + u32(columns));
                y += vec2(-b.y, b.x);  // + i·B
            }
        }
        default: {}
    }
    var scale = real(p.scale);
    if (WIDE) {
        scale += real(p.scale_lo);
    }
    y *= scale;
    dst[e] = select(y, vec2(y.x, -y.y), CONJ_OUT);
}
