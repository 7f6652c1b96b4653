// One Stockham autosort FFT of length N on every line of a batch, all radix stages inside one
// workgroup: lines are loaded into workgroup memory, each stage reads R elements per butterfly
// into registers, twiddles, transforms and writes them back in Stockham order, under barriers.
// The plan (src/fft/plan.rs) picks the radices and the thread layout; src/kernels/fft_lines.rs
// passes them as override constants, so each variant is compiled with constant loops.
//
// A line is addressed as base + j * elem, with base = (o / split) * hi + (o % split) * lo + i,
// where the line index l = o * inner + i. Plain axis transforms use split = 1; the four-step
// scheme uses the split to write its transposed output directly (no transpose pass).
// Inverse transforms are conj(F(conj(x))): conjugate on load and on store.

override N: u32;            // line length of this pass
override T: u32;            // threads per line
override BATCH: u32;        // lines per workgroup
override R0: u32 = 0u;      // radices of the stages, 0 = unused
override R1: u32 = 0u;
override R2: u32 = 0u;
override R3: u32 = 0u;
override R4: u32 = 0u;
override R5: u32 = 0u;
override R6: u32 = 0u;
override R7: u32 = 0u;
override INVERSE: bool = false;
override LOAD_LINE_FAST: bool = true;   // consecutive threads load consecutive elements of a line
override STORE_LINE_FAST: bool = true;  // ... store (false: consecutive lines, for strided axes)
override TWIDDLE_OUT: bool = false;     // four-step: multiply output k by W_total^(k * m)

// Mirrored in src/kernels/fft_lines.rs.
struct Params {
    lines: u32,
    inner: u32,
    in_split: u32,
    in_hi: u32,
    in_lo: u32,
    in_elem: u32,
    out_split: u32,
    out_hi: u32,
    out_lo: u32,
    out_elem: u32,
    scale: f32,
    tw_line: u32,   // offset of W_N^t, t < N, in the twiddle table
    tw_lo: u32,     // four-step: offset of W_total^b, b < tw_s
    tw_hi: u32,     // four-step: offset of W_total^(a * tw_s)
    tw_s: u32,
    tw_div: u32,    // four-step: m = i / tw_div
}

@group(0) @binding(0) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> tw: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> buf: array<vec2<f32>, N * BATCH>;

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// -i * a
fn mul_neg_i(a: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.y, -a.x);
}

fn conj_if(a: vec2<f32>, c: bool) -> vec2<f32> {
    return select(a, vec2<f32>(a.x, -a.y), c);
}

// W_N^t from the host-computed table.
fn w(t: u32) -> vec2<f32> {
    return tw[p.tw_line + t];
}

var<private> v: array<vec2<f32>, 16>;

// Forward DFT of length R on v[o .. o + R].
fn butterfly(R: u32, o: u32) {
    switch R {
        case 2u: {
            let a = v[o]; let b = v[o + 1u];
            v[o] = a + b; v[o + 1u] = a - b;
        }
        case 3u: {
            let c1 = -0.5; let s1 = -0.86602540378443864676;
            let a = v[o]; let b = v[o + 1u]; let c = v[o + 2u];
            let t1 = b + c; let t2 = a + c1 * t1; let t3 = s1 * (b - c);
            v[o] = a + t1;
            v[o + 1u] = vec2(t2.x - t3.y, t2.y + t3.x);
            v[o + 2u] = vec2(t2.x + t3.y, t2.y - t3.x);
        }
        case 4u: {
            let a = v[o]; let b = v[o + 1u]; let c = v[o + 2u]; let d = v[o + 3u];
            let t0 = a + c; let t1 = a - c; let t2 = b + d; let t3 = mul_neg_i(b - d);
            v[o] = t0 + t2; v[o + 1u] = t1 + t3; v[o + 2u] = t0 - t2; v[o + 3u] = t1 - t3;
        }
        case 5u: {
            let c1 = 0.30901699437494742410; let c2 = -0.80901699437494742410;
            let s1 = -0.95105651629515357212; let s2 = -0.58778525229247312917;
            let a = v[o]; let b = v[o + 1u]; let c = v[o + 2u]; let d = v[o + 3u]; let e = v[o + 4u];
            let p1 = b + e; let m1 = b - e; let p2 = c + d; let m2 = c - d;
            let r1 = a + c1 * p1 + c2 * p2; let r2 = a + c2 * p1 + c1 * p2;
            let i1 = s1 * m1 + s2 * m2; let i2 = s2 * m1 - s1 * m2;
            v[o] = a + p1 + p2;
            v[o + 1u] = vec2(r1.x - i1.y, r1.y + i1.x);
            v[o + 4u] = vec2(r1.x + i1.y, r1.y - i1.x);
            v[o + 2u] = vec2(r2.x - i2.y, r2.y + i2.x);
            v[o + 3u] = vec2(r2.x + i2.y, r2.y - i2.x);
        }
        case 8u: {
            let h = 0.70710678118654752440;
            // Two radix-4 transforms on the even and odd halves, then the radix-2 combination.
            let a0 = v[o]; let a1 = v[o + 2u]; let a2 = v[o + 4u]; let a3 = v[o + 6u];
            let b0 = v[o + 1u]; let b1 = v[o + 3u]; let b2 = v[o + 5u]; let b3 = v[o + 7u];
            let e0 = a0 + a2; let e1 = a0 - a2; let e2 = a1 + a3; let e3 = mul_neg_i(a1 - a3);
            let E0 = e0 + e2; let E1 = e1 + e3; let E2 = e0 - e2; let E3 = e1 - e3;
            let f0 = b0 + b2; let f1 = b0 - b2; let f2 = b1 + b3; let f3 = mul_neg_i(b1 - b3);
            let F0 = f0 + f2; var F1 = f1 + f3; var F2 = f0 - f2; var F3 = f1 - f3;
            // W_8^1 = (h, -h), W_8^2 = -i, W_8^3 = (-h, -h)
            F1 = vec2(h * (F1.x + F1.y), h * (F1.y - F1.x));
            F2 = mul_neg_i(F2);
            F3 = vec2(h * (F3.y - F3.x), -h * (F3.x + F3.y));
            v[o] = E0 + F0; v[o + 4u] = E0 - F0;
            v[o + 1u] = E1 + F1; v[o + 5u] = E1 - F1;
            v[o + 2u] = E2 + F2; v[o + 6u] = E2 - F2;
            v[o + 3u] = E3 + F3; v[o + 7u] = E3 - F3;
        }
        default: {
            // Any other radix (7, 11, 13): direct DFT with W_R^q = W_N^(q N / R) from the table.
            var out: array<vec2<f32>, 16>;
            let step = N / R;
            for (var q = 0u; q < R; q++) {
                var s = v[o];
                for (var r = 1u; r < R; r++) {
                    s += cmul(v[o + r], w(((q * r) % R) * step));
                }
                out[q] = s;
            }
            for (var q = 0u; q < R; q++) {
                v[o + q] = out[q];
            }
        }
    }
}

// One Stockham stage of radix R after stages whose radices multiply to NS, on line slot base.
fn stage(R: u32, NS: u32, base: u32, t: u32) {
    if (R == 0u) {
        return;
    }
    let nb = N / R;          // butterflies per line
    let per = 16u / R;       // butterflies per thread (the plan makes T * per >= nb)
    for (var b = 0u; b < per; b++) {
        let j = t + b * T;
        if (j < nb) {
            for (var r = 0u; r < R; r++) {
                v[b * R + r] = buf[base + j + r * nb];
            }
        }
    }
    workgroupBarrier();
    let tw_step = N / (NS * R);
    for (var b = 0u; b < per; b++) {
        let j = t + b * T;
        if (j < nb) {
            let k = j % NS;
            for (var r = 1u; r < R; r++) {
                v[b * R + r] = cmul(v[b * R + r], w(k * r * tw_step));
            }
            butterfly(R, b * R);
            let d = (j / NS) * NS * R + k;
            for (var r = 0u; r < R; r++) {
                buf[base + d + r * NS] = v[b * R + r];
            }
        }
    }
    workgroupBarrier();
}

fn line_base(l: u32, split: u32, hi: u32, lo: u32) -> u32 {
    let o = l / p.inner;
    let i = l - o * p.inner;
    return (o / split) * hi + (o % split) * lo + i;
}

@compute @workgroup_size(T * BATCH)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let first = (wid.x + nwg.x * (wid.y + nwg.y * wid.z)) * BATCH;
    if (first >= p.lines) {
        return;
    }
    // Load BATCH lines into workgroup memory.
    for (var e = lid; e < N * BATCH; e += T * BATCH) {
        let c = select(e % BATCH, e / N, LOAD_LINE_FAST);
        let j = select(e / BATCH, e % N, LOAD_LINE_FAST);
        let l = first + c;
        if (l < p.lines) {
            buf[c * N + j] = conj_if(src[line_base(l, p.in_split, p.in_hi, p.in_lo) + j * p.in_elem], INVERSE);
        }
    }
    workgroupBarrier();
    let c = lid / T;
    let t = lid - c * T;
    let base = c * N;
    var ns = 1u;
    stage(R0, ns, base, t); ns *= max(R0, 1u);
    stage(R1, ns, base, t); ns *= max(R1, 1u);
    stage(R2, ns, base, t); ns *= max(R2, 1u);
    stage(R3, ns, base, t); ns *= max(R3, 1u);
    stage(R4, ns, base, t); ns *= max(R4, 1u);
    stage(R5, ns, base, t); ns *= max(R5, 1u);
    stage(R6, ns, base, t); ns *= max(R6, 1u);
    stage(R7, ns, base, t);
    // Store, with the four-step twiddle and the norm's scale.
    for (var e = lid; e < N * BATCH; e += T * BATCH) {
        let c = select(e % BATCH, e / N, STORE_LINE_FAST);
        let k = select(e / BATCH, e % N, STORE_LINE_FAST);
        let l = first + c;
        if (l < p.lines) {
            var x = buf[c * N + k];
            if (TWIDDLE_OUT) {
                let o = l / p.inner;
                let m = (l - o * p.inner) / p.tw_div;
                let q = k * m;
                x = cmul(x, cmul(tw[p.tw_hi + q / p.tw_s], tw[p.tw_lo + q % p.tw_s]));
            }
            dst[line_base(l, p.out_split, p.out_hi, p.out_lo) + k * p.out_elem] = conj_if(x, INVERSE) * p.scale;
        }
    }
}
