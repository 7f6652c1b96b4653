// scipy.ndimage.fourier_shift: every element of a complex spectrum of 1-4 axes times the
// product of per-axis phase factors, exp(-2πi · shift · frequency), tabled on the host in f64
// (`table` holds each axis's factors one after another, from `start[a]`). Complex f64 data in
// the f64 twin (`real`), the table then in f64 too.
#import common/grid
#import common/real
#import common/complex

struct Params {
    dims: vec4<u32>,
    start: vec4<u32>,
    rank: u32,
    count: u32,
    pad0: u32,
    pad1: u32,
}  // mirrored in src/kernels/phase_ramp.rs

@group(0) @binding(0) var<storage, read> x: array<vec2<real>>;
@group(0) @binding(1) var<storage, read> table: array<vec2<real>>;
@group(0) @binding(2) var<storage, read_write> y: array<vec2<real>>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    var v = x[i];
    var rest = i;
    for (var a = p.rank; a > 0u; a--) {
        let k = rest % p.dims[a - 1u];
        rest /= p.dims[a - 1u];
        v = cmul(v, table[p.start[a - 1u] + k]);
    }
    y[i] = v;
}
