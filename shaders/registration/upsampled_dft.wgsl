// One axis of the matrix-multiply DFT (Guizar-Sicairos et al. 2008, scikit-image's
// `_upsampled_dft`): a complex array seen as (outer, n, inner) becomes (outer, r, inner), output
// k the sum over the axis' bins j of x[j] · exp(2πi (k − offset) f_j / (full · upsample)) for the
// axis' signed frequencies f_j. Along k the kernel is a geometric series: the table holds, per
// bin, its ratio and its value at the first output of each chunk of KC (computed in f64 on the
// host, src/kernels/upsampled_dft.rs), and the thread steps through its KC outputs. Where the
// axis is the last of a real transform's half spectrum (`mirrored` > 0), the bins the half
// leaves out are added from their Hermitian mirrors: bin full − j of line o is the conjugate of
// bin j of the mirrored line (every other axis' index negated mod its length).
// Each thread sums KC consecutive outputs of one (o, q) over one of `splits` spans of the bins
// (the direct ones, then the mirrored): the bins are read once per KC outputs, and short axes
// with few lines still fill the GPU. With
// several spans the partial sums go to out[span] and src/kernels/upsampled_dft.rs adds them.
#import common/grid
#import common/complex

const KC: u32 = 16u;  // KC in src/kernels/upsampled_dft.rs

struct Params {
    outer: u32,
    n: u32,           // the axis' bins in x
    inner: u32,
    r: u32,           // outputs along the axis
    rpad: u32,        // r rounded up to KC
    full: u32,        // the table's bins: n, or the full length of a half spectrum
    mirrored: u32,    // bins 1..=mirrored whose mirrors full − j are added (0: none)
    count: u32,       // threads: splits · outer · (rpad / KC) · inner
    span: u32,        // bins (direct, then mirrored) each split sums
    unused0: u32,
    unused1: u32,
    unused2: u32,
    lines: vec4<u32>, // the outer axes as 4 (leading ones 1), to mirror a line's index
}  // mirrored in src/kernels/upsampled_dft.rs

@group(0) @binding(0) var<storage, read> x: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> table: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> out: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

// Line o's Hermitian mirror: each outer axis' index negated modulo its length.
fn mirror(o: u32) -> u32 {
    let d = p.lines;
    let i = vec4<u32>(o / (d.y * d.z * d.w), o / (d.z * d.w) % d.y, o / d.w % d.z, o % d.w);
    let m = (d - i) % d;
    return ((m.x * d.y + m.y) * d.z + m.z) * d.w + m.w;
}

@compute @workgroup_size(128)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 128u + lid;
    if (i >= p.count) {
        return;
    }
    // Neighbouring threads take neighbouring (o, q) of one chunk of outputs: they read the same
    // table entries (one broadcast) and, along inner axes, neighbouring bins.
    let chunks = p.rpad / KC;
    let q = i % p.inner;
    let o = i / p.inner % p.outer;
    let k0 = i / (p.inner * p.outer) % chunks * KC;
    let split = i / (p.inner * p.outer * chunks);
    let first = split * p.span;
    let last = min(first + p.span, p.n + p.mirrored);
    let base = split * p.outer * p.r * p.inner;
    // The loops below are the readable form; src/kernels/upsampled_dft.rs writes the KC
    // accumulators out (an array indexed by a counter would live in local memory on NVIDIA).
    // unrolled: begin
    var acc: array<vec2<f32>, KC>;
    let row = chunks + 1u;  // per bin: the ratio, then each chunk's first value
    for (var j = first; j < min(last, p.n); j++) {
        let v = x[(o * p.n + j) * p.inner + q];
        let ratio = table[j * row];
        var e = cmul(v, table[j * row + 1u + k0 / KC]);
        for (var s = 0u; s < KC; s++) {
            acc[s] += e;
            e = cmul(e, ratio);
        }
    }
    if (last > p.n) {
        let m = mirror(o);
        for (var j = max(first, p.n) - p.n + 1u; j <= last - p.n; j++) {
            let w = x[(m * p.n + j) * p.inner + q];
            let v = vec2<f32>(w.x, -w.y);
            let ratio = table[(p.full - j) * row];
            var e = cmul(v, table[(p.full - j) * row + 1u + k0 / KC]);
            for (var s = 0u; s < KC; s++) {
                acc[s] += e;
                e = cmul(e, ratio);
            }
        }
    }
    for (var s = 0u; s < KC; s++) {
        if (k0 + s < p.r) {
            out[base + (o * p.r + k0 + s) * p.inner + q] = acc[s];
        }
    }
    // unrolled: end
}
