// Prefix sums along the middle axis of `x` viewed as (outer, len, inner), inner > 1.
//
// One thread per column (o, i) and chunk of `chunk` elements along len; consecutive threads take
// consecutive i, so every step of the loop reads and writes consecutive words. The running sum
// is Kahan-compensated. With few columns, len is cut into chunks so that enough threads run
// (reduce-then-scan, like scan_rows.wgsl):
//   PHASE 0  each thread writes its chunk's total to out[thread], viewed as (outer, chunks, inner);
//            the totals are scanned exclusively along chunks (recursively);
//   PHASE 1  each thread scans its chunk starting from offsets[thread].
// Columns scanned whole (chunks == 1) take a single PHASE 2 pass.
#import common/grid

override EXCLUSIVE: bool = false;
override PHASE: u32 = 2u;

const BATCH: u32 = 8u;

// Mirrored in src/kernels/scan_columns.rs.
struct Params {
    len: u32,     // length of the scanned axis
    inner: u32,   // stride between consecutive elements along it
    chunk: u32,   // elements of len per thread
    chunks: u32,  // len.div_ceil(chunk)
    threads: u32, // outer * chunks * inner
    zero: u32,    // always 0: see opaque()
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> offsets: array<f32>;   // PHASE 1 only (else bound to x)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // scan (PHASE 1, 2) or chunk totals (PHASE 0)
@group(0) @binding(3) var<uniform> p: Params;

// The identity, hidden from the compiler: Mesa (lavapipe) reassociates float additions and so
// cancels Kahan's compensation to zero (measured: the plain sum's error, bit for bit), and
// NVIDIA's compiler weakened it (2-3x Kahan's error). Routing the three intermediates through an
// XOR with a runtime zero keeps every rounding where Kahan puts it.
fn opaque(v: f32) -> f32 {
    return bitcast<f32>(bitcast<u32>(v) ^ p.zero);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = workgroup_index(wid, nwg) * 256u + lid; // = (o * chunks + c) * inner + i
    if (t >= p.threads) {
        return;
    }
    let i = t % p.inner;
    let oc = t / p.inner;
    let c = oc % p.chunks;
    let o = oc / p.chunks;
    let l0 = c * p.chunk;
    let steps = min(p.chunk, p.len - l0);
    var at = (o * p.len + l0) * p.inner + i;

    // Kahan: sum - comp tracks the exact running total to about one rounding.
    var sum = 0.0;
    var comp = 0.0;
    if (PHASE == 1u) {
        sum = offsets[t];
    }
    // BATCH loads in flight per thread before the dependent Kahan chain uses them.
    for (var l = 0u; l < steps; l += BATCH) {
        var v: array<f32, BATCH>;
        for (var b = 0u; b < BATCH; b++) {
            if (l + b < steps) {
                v[b] = x[at + b * p.inner];
            }
        }
        for (var b = 0u; b < BATCH; b++) {
            if (l + b < steps) {
                if (PHASE != 0u && EXCLUSIVE) {
                    out[at] = sum - comp;
                }
                let y = opaque(v[b] - comp);
                let next = sum + y;
                comp = opaque(opaque(next) - sum) - y;
                sum = next;
                if (PHASE != 0u && !EXCLUSIVE) {
                    out[at] = sum - comp;
                }
                at += p.inner;
            }
        }
    }
    if (PHASE == 0u) {
        out[t] = sum - comp;
    }
}
