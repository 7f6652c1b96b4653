// Gridding FBP (gridrec): each point m of the oversampled M × M frequency grid gathers the
// weighted polar samples c[a, k] (a projection's filtered spectrum at angle θ_a, frequency k)
// that lie within the kernel's square, G[m] = Σ c[a, k] φ(m_x − u_x) φ(m_y − u_y) with the
// sample at u = s k (cos θ_a, −sin θ_a) (s = M / P grid units per frequency bin) and φ the
// "exponential of semicircle" kernel of width W, times (−1)^(m_x + m_y) so that the inverse
// transform lands the image's centre at M/2. Written at index (m mod M) for the transform.
// The Nyquist bin k = −P/2 is left out: it has no partner +P/2, and with two real slices in
// one complex sinogram its share would mix them.
#import common/grid

// Mirrored in src/kernels/gridrec_gather.rs.
struct Params { slices: u32, angles: u32, padded: u32, size: u32, scale: f32, width: f32, beta: f32, dtheta: f32 }

// cos θ_a, sin θ_a.
@group(0) @binding(0) var<storage, read> trig: array<vec2<f32>>;
// (slices, angles, padded) complex, frequencies in FFT order.
@group(0) @binding(1) var<storage, read> c: array<vec2<f32>>;
// (slices, size, size) complex.
@group(0) @binding(2) var<storage, read_write> g: array<vec2<f32>>;
@group(0) @binding(3) var<uniform> p: Params;

// φ at offset d (0 beyond W/2).
fn kernel(d: f32) -> f32 {
    let z = d * (2.0 / p.width);
    let q = 1.0 - z * z;
    return select(0.0, exp(p.beta * (sqrt(max(q, 0.0)) - 1.0)), q > 0.0);
}

// The k whose samples k·step lie within ±h of x: [lo, hi] (empty when lo > hi).
fn reach_of(x: f32, step: f32, h: f32) -> vec2<f32> {
    if (abs(step) < 1e-7) {
        return select(vec2<f32>(1.0, -1.0), vec2<f32>(-1e9, 1e9), abs(x) <= h);
    }
    let t0 = (x - h) / step;
    let t1 = (x + h) / step;
    return vec2<f32>(min(t0, t1), max(t0, t1));
}

// The samples within the kernel's square around the point (gx, gy), from the polar samples
// starting at `base`.
fn gather(base: u32, gx: f32, gy: f32) -> vec2<f32> {
    let h = 0.5 * p.width;
    let reach = h * 1.41421356;
    let angles = i32(p.angles);
    let r2 = gx * gx + gy * gy;
    // The angles whose lines pass within reach: all of them near the origin.
    var first = 0;
    var count = angles;
    if (r2 > reach * reach) {
        var theta = atan2(-gy, gx);
        if (theta < 0.0) {
            theta += 3.14159265;
        }
        let spread = asin(reach / sqrt(r2)) / p.dtheta;
        first = i32(floor(theta / p.dtheta - spread));
        count = min(i32(ceil(theta / p.dtheta + spread)) - first + 1, angles);
    }
    // Angle indices past either end are the same lines turned by π (k covers both signs).
    var a = first % angles;
    if (a < 0) {
        a += angles;
    }
    let half = i32(p.padded / 2u);
    var sum = vec2<f32>(0.0, 0.0);
    for (var j = 0; j < count; j++) {
        let cs = trig[a];
        let dx = p.scale * cs.x;
        let dy = -p.scale * cs.y;
        let kx = reach_of(gx, dx, h);
        let ky = reach_of(gy, dy, h);
        let k0 = max(i32(ceil(max(kx.x, ky.x))), 1 - half);
        let k1 = min(i32(floor(min(kx.y, ky.y))), half - 1);
        let row = base + u32(a) * p.padded;
        for (var k = k0; k <= k1; k++) {
            let w = kernel(gx - f32(k) * dx) * kernel(gy - f32(k) * dy);
            sum += w * c[row + u32(select(k, k + 2 * half, k < 0))];
        }
        a += 1;
        if (a == angles) {
            a = 0;
        }
    }
    return sum;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    let plane = p.size * p.size;
    if (i >= p.slices * plane) {
        return;
    }
    let s = i / plane;
    let iy = (i % plane) / p.size;
    let ix = i % p.size;
    let half = i32(p.size / 2u);
    // m in [−M/2, M/2), stored at m mod M.
    let my = select(i32(iy), i32(iy) - i32(p.size), i32(iy) >= half);
    let mx = select(i32(ix), i32(ix) - i32(p.size), i32(ix) >= half);
    // The grid is periodic: points within the kernel's reach of its edge also gather the
    // samples near the opposite edge (the point's images one period away).
    let size = f32(p.size);
    let edge = 0.5 * size - 0.5 * p.width;
    let base = s * p.angles * p.padded;
    var sum = gather(base, f32(mx), f32(my));
    if (abs(f32(mx)) >= edge || abs(f32(my)) >= edge) {
        for (var py = -1; py <= 1; py++) {
            for (var px = -1; px <= 1; px++) {
                if (px != 0 || py != 0) {
                    sum += gather(base, f32(mx) - f32(px) * size, f32(my) - f32(py) * size);
                }
            }
        }
    }
    let sign = select(1.0, -1.0, ((mx + my) & 1) != 0);
    g[i] = sign * sum;
}
