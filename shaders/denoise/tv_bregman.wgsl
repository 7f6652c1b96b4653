// scikit-image's split-Bregman TV (`_denoise_tv_bregman`, 0.26): one anti-diagonal r + c = k of
// its Gauss-Seidel sweep. Its raster loop reads (r − 1, c) and (r, c − 1) as updated this sweep
// and (r + 1, c), (r, c + 1) as left by the last one: exactly the diagonals before and after
// this one, so the sweep diagonal by diagonal is its loop. Arrays (padded by one on the
// spatial axes): u of (rows + 2, cols + 2, dims), and dx, dy, bx, by one after another in
// `split`; the image and each voxel's squared change (rows, cols, dims). Nothing moves once
// `state[0]` says stopped.
#import common/grid

// Mirrored in src/kernels/tv_bregman.rs.
struct Params { rows: u32, cols: u32, dims: u32, k: u32, weight: f32, lam: f32, norm: f32, isotropic: u32 }

@group(0) @binding(0) var<storage, read> image: array<f32>;
@group(0) @binding(1) var<storage, read_write> u: array<f32>;
@group(0) @binding(2) var<storage, read_write> split: array<f32>;
@group(0) @binding(3) var<storage, read_write> change: array<f32>;
@group(0) @binding(4) var<storage, read> state: array<f32>;
@group(0) @binding(5) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let t = workgroup_index(wid, nwg) * 64u + lid;
    let r_lo = max(1u, select(1u, p.k - p.cols, p.k > p.cols));
    let r_hi = min(p.rows, p.k - 1u);
    if (state[0] != 0.0 || r_hi < r_lo || t >= (r_hi - r_lo + 1u) * p.dims) {
        return;
    }
    let r = r_lo + t / p.dims;
    let c = p.k - r;
    let ch = t % p.dims;
    let w = p.cols + 2u;
    let at = (r * w + c) * p.dims + ch;
    let right = at + p.dims;
    let left = at - p.dims;
    let down = at + w * p.dims;
    let up = at - w * p.dims;
    // dx, dy, bx, by: the four quarters of `split`.
    let n = (p.rows + 2u) * w * p.dims;
    let uprev = u[at];
    let ux = u[right] - uprev;
    let uy = u[down] - uprev;
    let unew = (p.lam * (u[down] + u[up] + u[right] + u[left]
        + split[left] - split[at] + split[n + up] - split[n + at]
        - split[2u * n + left] + split[2u * n + at] - split[3u * n + up] + split[3u * n + at]) + p.weight * image[((r - 1u) * p.cols + c - 1u) * p.dims + ch]) / p.norm;
    u[at] = unew;
    let step = unew - uprev;
    change[((r - 1u) * p.cols + c - 1u) * p.dims + ch] = step * step;
    let bxx = split[2u * n + at];
    let byy = split[3u * n + at];
    var dxx: f32;
    var dyy: f32;
    if (p.isotropic != 0u) {
        let tx = ux + bxx;
        let ty = uy + byy;
        let s = sqrt(tx * tx + ty * ty);
        dxx = s * p.lam * tx / (s * p.lam + 1.0);
        dyy = s * p.lam * ty / (s * p.lam + 1.0);
    } else {
        let inv = 1.0 / p.lam;
        let sx = ux + bxx;
        dxx = select(select(0.0, sx + inv, sx < -inv), sx - inv, sx > inv);
        let sy = uy + byy;
        dyy = select(select(0.0, sy + inv, sy < -inv), sy - inv, sy > inv);
    }
    split[at] = dxx;
    split[n + at] = dyy;
    split[2u * n + at] = bxx + ux - dxx;
    split[3u * n + at] = byy + uy - dyy;
}
