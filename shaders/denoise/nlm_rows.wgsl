// Non-local means, scikit-image's fast mode (Darbon et al. 2008, Froment 2014), for one patch
// shift t = (t_row, t_col) of the padded image P (rows, cols, channels): the sums along a row of
// the squared differences, R(r, c) = Σ_{j = c − o + 1}^{c + o} (Σ_ch (P(r, j) − P(r + t_row,
// j + t_col))² − channels · 2σ²), o = s / 2 — scikit-image's patch distance spans (s − 1)²
// pixels, its integral image's box. 0 where the sum would leave the image (never read).
#import common/grid

struct Params { rows: u32, cols: u32, channels: u32, offset: u32, t_row: i32, t_col: i32, noise: f32, unused: u32 }  // mirrored in src/kernels/nlm.rs

@group(0) @binding(0) var<storage, read> padded: array<f32>;
@group(0) @binding(1) var<storage, read_write> sums: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.rows * p.cols) {
        return;
    }
    let r = i32(i / p.cols);
    let c = i32(i % p.cols);
    let o = i32(p.offset);
    let first = c - o + 1;
    let last = c + o;
    let rows = i32(p.rows);
    let cols = i32(p.cols);
    if (first < 0 || last >= cols || first + p.t_col < 0 || last + p.t_col >= cols || r + p.t_row < 0 || r + p.t_row >= rows) {
        sums[i] = 0.0;
        return;
    }
    let channels = i32(p.channels);
    var s = 0.0;
    for (var j = first; j <= last; j++) {
        var d = 0.0;
        let a = (r * cols + j) * channels;
        let b = ((r + p.t_row) * cols + j + p.t_col) * channels;
        for (var ch = 0; ch < channels; ch++) {
            let t = padded[a + ch] - padded[b + ch];
            d += t * t;
        }
        s += d - p.noise;
    }
    sums[i] = s;
}
