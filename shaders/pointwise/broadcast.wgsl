// z = x (op) y with numpy's broadcasting over up to four axes, one element per thread (f32, or
// f64 in the twin): an operand's stride is 0 along the axes it is broadcast over, and a scalar is
// a one-element array broadcast along every axis. Comparisons give 1 or 0 in `real`. OP codes
// and the CPU twin: src/kernels/broadcast.rs.
#import common/grid
#import common/real

override OP: u32;

// Mirrored in src/kernels/broadcast.rs: the output's dims (slowest first) and each operand's
// element strides along them.
struct Params { count: u32, pad0: u32, pad1: u32, pad2: u32, dims: vec4<u32>, sx: vec4<u32>, sy: vec4<u32> }

@group(0) @binding(0) var<storage, read> x: array<real>;
@group(0) @binding(1) var<storage, read> y: array<real>;
@group(0) @binding(2) var<storage, read_write> z: array<real>;
@group(0) @binding(3) var<uniform> p: Params;

fn truth(c: bool) -> real {
    return select(real(0.0), real(1.0), c);
}

fn f(a: real, b: real) -> real {
    switch OP {
        case 0u: { return a + b; }
        case 1u: { return a - b; }
        case 2u: { return a * b; }
        case 3u: { return a / b; }
        case 4u: { return max(a, b); }
        case 5u: { return min(a, b); }
        case 6u: { return truth(a < b); }
        case 7u: { return truth(a <= b); }
        case 8u: { return truth(a > b); }
        case 9u: { return truth(a >= b); }
        case 10u: { return truth(a == b); }
        default: { return truth(a != b); }
    }
}

fn offset(at: vec4<u32>, s: vec4<u32>) -> u32 {
    return at.x * s.x + at.y * s.y + at.z * s.z + at.w * s.w;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    // i's coordinates (i0, i1, i2, i3) in the output.
    let i3 = i % p.dims.w;
    let r = i / p.dims.w;
    let i2 = r % p.dims.z;
    let r2 = r / p.dims.z;
    let i1 = r2 % p.dims.y;
    let i0 = r2 / p.dims.y;
    let at = vec4(i0, i1, i2, i3);
    z[i] = f(x[offset(at, p.sx)], y[offset(at, p.sy)]);
}
