// One axis of the exact Euclidean distance transform (Felzenszwalb and Huttenlocher 2012): per
// line, the lower envelope of the parabolas w²(q − p)² + f(p) over the line's samples p, then the
// envelope's value at every q. Passes over every axis in turn give squared distances to the
// nearest zero of the input (scipy.ndimage.distance_transform_edt with `sampling`, w the axis'
// spacing). With FIRST the pass reads the input itself: f = 0 at its zeros, "far" elsewhere.
// "Far" is 3.0e38 (no finite parabola), skipped when the envelope is built; a line with no
// finite sample stays far. One thread per line; v (the envelope's sample indices) and z (its
// breakpoints) in scratch buffers of n + 1 per line, interleaved (entry k of line l at
// k·lines + l) so that neighbouring threads touch neighbouring words. With FEATURES (scipy's
// return_indices) each element also gets the linear index of its nearest zero: the first pass
// the sample its envelope picks, later passes that sample's index from the previous pass (`near`
// bound to a one-element dummy otherwise).
#import common/grid
#import common/real

override FIRST: bool;
override FEATURES: bool = false;

// w2: the spacing² as f32 and what that left (the f64 twin adds it back).
struct Params { dims: vec4<u32>, axis: u32, lines: u32, w2: f32, w2_lo: f32 }  // mirrored in src/kernels/edt_axis.rs

@group(0) @binding(0) var<storage, read> f: array<real>;
@group(0) @binding(1) var<storage, read_write> d: array<real>;
@group(0) @binding(2) var<storage, read_write> v: array<u32>;
@group(0) @binding(3) var<storage, read_write> z: array<real>;
@group(0) @binding(4) var<storage, read> near_in: array<u32>;  // the previous pass's (not FIRST)
@group(0) @binding(5) var<storage, read_write> near: array<u32>;
@group(0) @binding(6) var<uniform> p: Params;

const FAR: real = 3.0e38;

fn spacing2() -> real {
    return select(real(p.w2), real(p.w2) + real(p.w2_lo), WIDE);
}

fn value(at: u32) -> real {
    if (FIRST) {
        return select(0.0, FAR, f[at] != 0.0);
    }
    return f[at];
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let line = workgroup_index(wid, nwg) * 64u + lid;
    if (line >= p.lines) {
        return;
    }
    // The line's first element and stride: the other axes' coordinates from the line index.
    var stride = 1u;
    for (var a = 3u; a > p.axis; a--) {
        stride *= p.dims[a];
    }
    let n = p.dims[p.axis];
    let inner = line % stride;
    let outer = line / stride;
    let base = outer * stride * n + inner;
    let w2 = spacing2();
    var k = -1;
    for (var q = 0u; q < n; q++) {
        let fq = value(base + q * stride);
        if (fq >= FAR) {
            continue;
        }
        let qf = real(q);
        var s = -FAR;
        loop {
            if (k < 0) {
                s = -FAR;
                break;
            }
            let pv = v[u32(k) * p.lines + line];
            let pf = real(pv);
            let fp = value(base + pv * stride);
            s = ((fq + w2 * qf * qf) - (fp + w2 * pf * pf)) / (2.0 * w2 * (qf - pf));
            if (s > z[u32(k) * p.lines + line]) {
                break;
            }
            k -= 1;
        }
        k += 1;
        v[u32(k) * p.lines + line] = q;
        z[u32(k) * p.lines + line] = s;
    }
    if (k < 0) {
        for (var q = 0u; q < n; q++) {
            d[base + q * stride] = FAR;
            if (FEATURES) {
                near[base + q * stride] = 0xffffffffu;  // no zero on this line (read by no later pass)
            }
        }
        return;
    }
    let last = k;
    var j = 0;
    for (var q = 0u; q < n; q++) {
        let qf = real(q);
        while (j < last && z[u32(j + 1) * p.lines + line] < qf) {
            j += 1;
        }
        let pv = v[u32(j) * p.lines + line];
        let dq = qf - real(pv);
        d[base + q * stride] = w2 * dq * dq + value(base + pv * stride);
        if (FEATURES) {
            let at = base + pv * stride;
            near[base + q * stride] = select(near_in[at], at, FIRST);
        }
    }
}
