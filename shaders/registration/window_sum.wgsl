// Sums over every window of `m` elements along one axis of an array seen as (outer, n, inner),
// in double-single arithmetic (each value an f32 pair hi + lo, about 48 bits): template
// matching's window sums, whose variance s2 - s1²/V cancels far below f32's precision. With
// FIRST the input is one plain f32 array (bound twice) and SQUARE sums its squares, each exact
// as a pair. Each thread slides one window along a run of RUN outputs: the first sum whole,
// then each next one by the element entering less the one leaving (O(1) per output, not O(m)).
// Along an array's last axis (inner 1) runs would make a warp's loads scatter: RUN is 1 there.
#import common/grid
#import common/double_single

struct Params { outer: u32, n: u32, inner: u32, m: u32, out_n: u32, count: u32, one: f32, unused: u32 }  // mirrored in src/kernels/window_sum.rs


override FIRST: u32 = 0u;
override SQUARE: u32 = 0u;
override RUN: u32 = 32u;

@group(0) @binding(0) var<storage, read> x_hi: array<f32>;
@group(0) @binding(1) var<storage, read> x_lo: array<f32>;
@group(0) @binding(2) var<storage, read_write> out_hi: array<f32>;
@group(0) @binding(3) var<storage, read_write> out_lo: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

fn value(at: u32) -> vec2<f32> {
    if (FIRST == 1u) {
        let v = x_hi[at];
        if (SQUARE == 1u) {
            return ds_two_prod(v, v, p.one);
        }
        return vec2<f32>(v, 0.0);
    }
    return vec2<f32>(x_hi[at], x_lo[at]);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = workgroup_index(wid, nwg) * 256u + lid;
    if (t >= p.count) {
        return;
    }
    let runs = (p.out_n + RUN - 1u) / RUN;
    let k = t % p.inner;
    let rest = t / p.inner;
    let first = (rest % runs) * RUN;
    let o = rest / runs;
    var at = (o * p.n + first) * p.inner + k;
    var sum = vec2<f32>(0.0, 0.0);
    for (var j = 0u; j < p.m; j++) {
        sum = ds_add(sum, value(at + j * p.inner), p.one);
    }
    var out_at = (o * p.out_n + first) * p.inner + k;
    let last = min(RUN, p.out_n - first);
    for (var s = 0u; s < last; s++) {
        out_hi[out_at] = sum.x;
        out_lo[out_at] = sum.y;
        if (s + 1u < last) {
            let leaving = value(at);
            let change = ds_add(value(at + p.m * p.inner), vec2<f32>(-leaving.x, -leaving.y), p.one);
            sum = ds_add(sum, change, p.one);
        }
        at += p.inner;
        out_at += p.inner;
    }
}
