// Non-local means, scikit-image's slow mode (`fast_mode=False`, `_nl_means_denoising_2d`/`_3d`
// of 0.26): each pixel q the mean of the pixels of its search window (±d, clipped to the image)
// weighted by fast_exp(−max(0, dist)), dist = Σ w(x) (Σ_ch (patch_q − patch)² − channels ·
// 2σ²) with Gaussian patch weights w (normalised in the table), accumulated in scikit-image's
// order and abandoned (weight 0) once it passes 5 at the start of a patch row (a patch plane
// for volumes). The padded image (planes, rows, cols, channels) is padded by s/2 on the
// spatial axes (one plane unpadded for an image).
#import common/grid
#import common/fast_exp

// Mirrored in src/kernels/nlm_slow.rs.
struct Params { planes: u32, rows: u32, cols: u32, channels: u32, size: u32, distance: u32, volume: u32, noise: f32 }

@group(0) @binding(0) var<storage, read> padded: array<f32>;
// The patch weights, s^ndim in row-major order.
@group(0) @binding(1) var<storage, read> w: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let q = workgroup_index(wid, nwg) * 64u + lid;
    if (q >= p.planes * p.rows * p.cols) {
        return;
    }
    let s = i32(p.size);
    let o = s / 2;
    let d = i32(p.distance);
    let pl = i32(q / (p.rows * p.cols));
    let r = i32((q / p.cols) % p.rows);
    let c = i32(q % p.cols);
    let volume = p.volume != 0u;
    let po = select(0, o, volume);
    // The padded image's sizes.
    let prow = i32(p.rows) + 2 * o;
    let pcol = i32(p.cols) + 2 * o;
    let ch = i32(p.channels);
    // Patch axes: the first is planes for a volume, rows for an image; the inner ones follow.
    let outer = s;
    let inner = select(s, s * s, volume);
    // The channels' weighted sums accumulate in place.
    let at = q * p.channels;
    for (var e = 0u; e < p.channels; e++) {
        out[at + e] = 0.0;
    }
    var weight_sum = 0.0;
    let i0 = max(0, pl - d);
    let i1 = min(i32(p.planes), pl + d + 1);
    for (var i = i0; i < i1; i++) {
        for (var j = max(0, r - d); j < min(i32(p.rows), r + d + 1); j++) {
            for (var k = max(0, c - d); k < min(i32(p.cols), c + d + 1); k++) {
                var dist = 0.0;
                var gone = false;
                for (var a = 0; a < outer; a++) {
                    if (dist > 5.0) {
                        gone = true;
                        break;
                    }
                    for (var b = 0; b < inner; b++) {
                        // Offsets in the patch (plane, row, col).
                        var dp = 0;
                        var dr = a;
                        var dc = b;
                        if (volume) {
                            dp = a;
                            dr = b / s;
                            dc = b % s;
                        }
                        let x = ((pl + dp) * prow + r + dr) * pcol + c + dc;
                        let y = ((i + dp) * prow + j + dr) * pcol + k + dc;
                        let wt = w[a * inner + b];
                        for (var e = 0; e < ch; e++) {
                            let t = padded[x * ch + e] - padded[y * ch + e];
                            dist += wt * (t * t - p.noise);
                        }
                    }
                }
                let weight = select(fast_exp(-max(0.0, dist)), 0.0, gone);
                weight_sum += weight;
                let centre = (((i + po) * prow + j + o) * pcol + k + o) * ch;
                for (var e = 0; e < ch; e++) {
                    out[at + u32(e)] += weight * padded[centre + e];
                }
            }
        }
    }
    for (var e = 0u; e < p.channels; e++) {
        out[at + e] /= weight_sum;
    }
}
