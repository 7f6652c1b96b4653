// Element maps along one axis that the FFT needs between its line passes. The array is viewed
// as (outer, len, inner); each thread writes one element of the output (outer, len_out, inner).
// MODE (src/kernels/fft_axis_map.rs):
//   0 chirp:     y_k = k < len_in ? x_k · table_k : 0     (Bluestein pre-multiply and zero-pad)
//   1 multiply:  y_k = x_k · table_k                      (Bluestein: times the chirp's spectrum)
//   2 crop:      y_k = x_k · table_k, k < len_out        (Bluestein post-multiply and crop)
//   3 hermitian: y_k = k < len_in ? x_k : conj(x_(len_out - k))   (half spectrum to full)
//   4 truncate:  y_k = x_k, k < len_out                  (full spectrum to half)
//   5 real post: the spectrum of n = 2M reals from the length-M transform Z of their pairs:
//                y_k = E_k + W_n^k O_k, E_k = (Z_k + conj Z_(M-k)) / 2, O_k = (Z_k - conj Z_(M-k)) / 2i,
//                k = 0..M, len_in = M, table W_n^k
//   6 real pre:  the inverse of 5: Z_k = E_k + i O_k with E_k = (X_k + conj X_(M-k)) / 2 and
//                O_k = (X_k - conj X_(M-k)) conj(W_n^k) / 2, k < M = len_out, len_in = M + 1;
//                the imaginary parts of X_0 and X_M are ignored (as numpy's irfft does)
// CONJ_IN / CONJ_OUT conjugate input and output (inverse transforms as conj ∘ F ∘ conj).
#import common/complex

override MODE: u32;
override CONJ_IN: bool = false;
override CONJ_OUT: bool = false;

// Mirrored in src/kernels/fft_axis_map.rs.
struct Params {
    count: u32,     // output elements
    len_in: u32,
    len_out: u32,
    inner: u32,
    table: u32,     // offset of the table in `tw`
    scale: f32,
    pad0: u32,
    pad1: u32,
}

@group(0) @binding(0) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> tw: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

fn load(o: u32, k: u32, i: u32) -> vec2<f32> {
    let x = src[(o * p.len_in + k) * p.inner + i];
    return select(x, vec2(x.x, -x.y), CONJ_IN);
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
    var y = vec2(0.0);
    switch MODE {
        case 0u: {
            if (k < p.len_in) {
                y = cmul(load(o, k, i), tw[p.table + k]);
            }
        }
        case 1u, 2u: {
            y = cmul(load(o, k, i), tw[p.table + k]);
        }
        case 5u: {
            let m = p.len_in;
            let zk = load(o, k % m, i);
            let zc = load(o, (m - k) % m, i);
            let zcc = vec2(zc.x, -zc.y);
            let e = 0.5 * (zk + zcc);
            let d = 0.5 * (zk - zcc);
            let od = vec2(d.y, -d.x);  // d / i
            y = e + cmul(tw[p.table + k], od);
        }
        case 6u: {
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
        case 3u: {
            if (k < p.len_in) {
                y = load(o, k, i);
            } else {
                let x = load(o, p.len_out - k, i);
                y = vec2(x.x, -x.y);
            }
        }
        default: {
            y = load(o, k, i);
        }
    }
    y *= p.scale;
    dst[e] = select(y, vec2(y.x, -y.y), CONJ_OUT);
}
