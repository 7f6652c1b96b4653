// The joint histogram of Mattes mutual information per workgroup (the host's reduce adds the
// workgroups'): over the points where the fixed mask is set and the moving samples' support is
// whole (COMMON = 1: and `other_support`'s too, for a step's comparison over the points both
// transforms cover), each point adds a zero-order Parzen window on the fixed value's bin and a
// cubic B-spline window over four moving bins, as ITK's MattesMutualInformation (two bins of
// padding at each end). Sums in a workgroup are fixed point (2^16 per unit weight) in shared
// atomics: wgpu has no float atomics; a workgroup visits at most 2^14 points, so no bin
// overflows. Mirrored in src/kernels/registration_histogram.rs.
#import common/grid

override COMMON: u32;

struct Params {
    count: u32,
    per_thread: u32,
    bins: u32,          // at most 64
    pad: u32,
    hist: vec4<f32>,    // fixed min, 1 / fixed bin width, moving min, 1 / moving bin width
}

@group(0) @binding(0) var<storage, read> fixed: array<vec2<f32>>;   // (value, mask 0/1)
@group(0) @binding(1) var<storage, read> values: array<f32>;
@group(0) @binding(2) var<storage, read> support: array<f32>;
@group(0) @binding(3) var<storage, read> other_support: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;      // (workgroups, bins²)
@group(0) @binding(5) var<uniform> p: Params;

const WG = 256u;
const MOST = 4096u;
const ONE = 65536.0;

var<workgroup> hist: array<atomic<u32>, MOST>;

fn cubic(x: f32) -> f32 {
    let a = abs(x);
    if (a < 1.0) {
        return 2.0 / 3.0 - a * a + 0.5 * a * a * a;
    }
    if (a < 2.0) {
        let b = 2.0 - a;
        return b * b * b / 6.0;
    }
    return 0.0;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let group = workgroup_index(wid, nwg);
    let b = p.bins;
    for (var j = lid; j < b * b; j += WG) {
        atomicStore(&hist[j], 0u);
    }
    workgroupBarrier();
    for (var t = 0u; t < p.per_thread; t++) {
        let i = (group * p.per_thread + t) * WG + lid;
        if (i >= p.count) {
            break;
        }
        let fm = fixed[i];
        if (fm.y < 0.5 || support[i] < 0.999 || (COMMON == 1u && other_support[i] < 0.999)) {
            continue;
        }
        let row = u32(clamp(floor((fm.x - p.hist.x) * p.hist.y + 2.0), 2.0, f32(b - 3u)));
        let eta = (values[i] - p.hist.z) * p.hist.w + 2.0;
        let first = u32(clamp(floor(eta), 2.0, f32(b - 3u))) - 1u;
        for (var k = 0u; k < 4u; k++) {
            let w = cubic(f32(first + k) - eta);
            atomicAdd(&hist[row * b + first + k], u32(round(w * ONE)));
        }
    }
    workgroupBarrier();
    for (var j = lid; j < b * b; j += WG) {
        out[group * b * b + j] = f32(atomicLoad(&hist[j])) / ONE;
    }
}
