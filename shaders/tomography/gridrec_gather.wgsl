// Gridding FBP (gridrec): each point m of the oversampled M × M frequency grid gathers the
// weighted polar samples c[a, k] (a projection's filtered spectrum at angle θ_a, frequency k)
// that lie within the kernel's reach, G[m] = Σ c[a, k] φ(m_x − u_x) φ(m_y − u_y) with the
// sample at u = s k (cos θ_a, −sin θ_a) (s = M / P grid units per frequency bin) and φ the
// "exponential of semicircle" kernel of width W, times (−1)^(m_x + m_y) so that the inverse
// transform lands the image's centre at M/2. Written at index (m mod M) for the transform.
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

fn kernel(d: f32) -> f32 {
    let z = 2.0 * d / p.width;
    return select(0.0, exp(p.beta * (sqrt(max(1.0 - z * z, 0.0)) - 1.0)), abs(z) <= 1.0);
}

// The samples within the kernel's reach of the point (gx, gy) of slice s.
fn gather(s: u32, gx: f32, gy: f32) -> vec2<f32> {
    let radius = sqrt(gx * gx + gy * gy);
    let reach = 0.5 * p.width * 1.41421356;
    // The angles whose lines pass within reach: all of them near the origin.
    var first = 0;
    var count = i32(p.angles);
    if (radius > reach) {
        var theta = atan2(-gy, gx);
        if (theta < 0.0) {
            theta += 3.14159265;
        }
        let spread = asin(reach / radius) / p.dtheta;
        first = i32(floor(theta / p.dtheta - spread));
        count = min(i32(ceil(theta / p.dtheta + spread)) - first + 1, i32(p.angles));
    }
    let n = i32(p.padded);
    let krange = reach / p.scale;
    var sum = vec2<f32>(0.0, 0.0);
    let base = s * p.angles * p.padded;
    for (var j = 0; j < count; j++) {
        let a = u32(((first + j) % i32(p.angles) + i32(p.angles)) % i32(p.angles));
        let cs = trig[a];
        let dirx = cs.x;
        let diry = -cs.y;
        let kc = (gx * dirx + gy * diry) / p.scale;
        let k0 = max(i32(ceil(kc - krange)), -n / 2);
        let k1 = min(i32(floor(kc + krange)), n / 2 - 1);
        for (var k = k0; k <= k1; k++) {
            let w = kernel(gx - p.scale * f32(k) * dirx) * kernel(gy - p.scale * f32(k) * diry);
            if (w > 0.0) {
                sum += w * c[base + a * p.padded + u32((k + n) % n)];
            }
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
    let limit = 0.5 * size + 0.5 * p.width * 1.41421356;
    var sum = vec2<f32>(0.0, 0.0);
    for (var py = -1; py <= 1; py++) {
        for (var px = -1; px <= 1; px++) {
            let gx = f32(mx) - f32(px) * size;
            let gy = f32(my) - f32(py) * size;
            if ((px == 0 && py == 0) || sqrt(gx * gx + gy * gy) <= limit) {
                sum += gather(s, gx, gy);
            }
        }
    }
    let sign = select(1.0, -1.0, ((mx + my) & 1) != 0);
    g[i] = sign * sum;
}
