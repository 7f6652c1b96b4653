// The minimum or the maximum over a window of K samples along one axis (scipy.ndimage's
// minimum_filter1d / maximum_filter1d, and minimum_filter / maximum_filter over a box as one pass
// per axis, as scipy runs them) by van Herk and Gil-Werman's blocks: the cost per output does not
// grow with K. Output q reads the window [q + lo, q + lo + K) of the line (samples outside from
// the mode; constant mode: cval). Each thread takes a block of K outputs q = bK + j, whose windows
// span blocks A = [bK + lo, bK + lo + K) and B, the next K samples: output j is the extreme of
// A's suffix from j and B's prefix before j, two running extremes over 2K reads.
// Threads run across lines first (the axis's inner index fastest), so strided lines coalesce.
#import common/grid
#import common/boundary
#import common/real

override MODE: u32;
override MAXIMUM: bool;

struct Params {
    len: u32,      // samples along the axis
    inner: u32,    // elements after the axis (its stride)
    blocks: u32,   // blocks of K outputs per line
    k: u32,        // window
    lo: i32,       // the window's start relative to its output
    count: u32,    // threads: lines × blocks
    cval: f32,
    unused: u32,
}  // mirrored in src/kernels/box_extreme.rs

@group(0) @binding(0) var<storage, read> x: array<real>;
@group(0) @binding(1) var<storage, read_write> y: array<real>;
@group(0) @binding(2) var<uniform> p: Params;

fn pick(a: real, b: real) -> real {
    return select(min(a, b), max(a, b), MAXIMUM);
}

// Sample u of the line starting at `base` (any u: folded by the mode).
fn sample(base: u32, u: i32) -> real {
    let c = boundary_fold(u, i32(p.len), MODE);
    return select(x[base + u32(max(c, 0)) * p.inner], real(p.cval), c < 0);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = workgroup_index(wid, nwg) * 256u + lid;
    if (t >= p.count) {
        return;
    }
    let i = t % p.inner;
    let rest = t / p.inner;
    let b = rest % p.blocks;
    let o = rest / p.blocks;
    let base = o * p.len * p.inner + i;
    let first = b * p.k;
    let outputs = min(p.k, p.len - first);
    let a0 = i32(first) + p.lo;
    // A's suffixes, written as they grow (the last output first).
    var s = sample(base, a0 + i32(p.k) - 1);
    for (var j = i32(p.k) - 1; j >= 0; j--) {
        s = pick(s, sample(base, a0 + j));
        if (u32(j) < outputs) {
            y[base + (first + u32(j)) * p.inner] = s;
        }
    }
    // B's prefixes joined in.
    if (outputs > 1u) {
        var q = sample(base, a0 + i32(p.k));
        for (var j = 1u; j < outputs; j++) {
            if (j > 1u) {
                q = pick(q, sample(base, a0 + i32(p.k) + i32(j) - 1));
            }
            let at = base + (first + j) * p.inner;
            y[at] = pick(y[at], q);
        }
    }
}
