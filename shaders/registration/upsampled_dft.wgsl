// One axis of the matrix-multiply DFT (Guizar-Sicairos et al. 2008, scikit-image's
// `_upsampled_dft`): a complex array seen as (outer, n, inner) becomes (outer, r, inner), output
// k the sum over the axis' bins j of x[j] · table[k][j]. The table holds the kernel
// exp(2πi (k − offset) f_j / (full · upsample)) for the axis' signed frequencies (computed in f64
// on the host, src/kernels/upsampled_dft.rs). Where the axis is the last of a real transform's
// half spectrum (`mirrored` > 0), the bins the half leaves out are added from their Hermitian
// mirrors: bin full − j of line o is the conjugate of bin j of the mirrored line (every other
// axis' index negated mod its length). One output per thread.
#import common/grid
#import common/complex

struct Params {
    outer: u32,
    n: u32,           // the axis' bins in x
    inner: u32,
    r: u32,           // outputs along the axis
    full: u32,        // the table's row length: n, or the full length of a half spectrum
    mirrored: u32,    // bins 1..=mirrored whose mirrors full − j are added (0: none)
    count: u32,       // outer · r · inner
    unused: u32,
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

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    let q = i % p.inner;
    let k = i / p.inner % p.r;
    let o = i / (p.inner * p.r);
    let row = k * p.full;
    var sum = vec2<f32>(0.0);
    for (var j = 0u; j < p.n; j++) {
        sum += cmul(x[(o * p.n + j) * p.inner + q], table[row + j]);
    }
    if (p.mirrored > 0u) {
        let m = mirror(o);
        for (var j = 1u; j <= p.mirrored; j++) {
            let v = x[(m * p.n + j) * p.inner + q];
            sum += cmul(vec2<f32>(v.x, -v.y), table[row + p.full - j]);
        }
    }
    out[i] = sum;
}
