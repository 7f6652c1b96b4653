// Raw detector rows to what reconstruction takes: TomoPy's outlier replacement
// (remove_outlier: a value `dif` or more above its median becomes the median), flat and dark
// normalisation (tomopy.normalize: (x − dark) / max(flat − dark, 1e-6), clipped above
// `cutoff`) and −log with a floor, written in projection or in sinogram order. Threads run in
// the input's order (angle, row, column), so reads and writes are coalesced along the columns.
#import common/grid

// The input holds 16-bit counts, two to a word, the first in the low half (else f32 bits).
override U16: bool;
// `median` holds each raw value's median (the outlier test is applied).
override OUTLIERS: bool;
// 0: the raw value as f32 (whole input rows); 1: the transmission; 2: its −log.
override MODE: u32;
// Output (rows, angles, cols), sinograms, instead of (angles, rows, cols).
override SINOGRAMS: bool;

// Mirrored in src/kernels/prep_normalize.rs. raw_rows: rows per angle in `raw` (and `median`),
// row0: the first of them written.
struct Params { angles: u32, rows: u32, cols: u32, raw_rows: u32, row0: u32, dif: f32, cutoff: f32, floor: f32 }

@group(0) @binding(0) var<storage, read> raw: array<u32>;
@group(0) @binding(1) var<storage, read> median: array<f32>;
// The flat mean, then the dark mean, each (rows, cols) for the output's rows.
@group(0) @binding(2) var<storage, read> flat_dark: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    let plane = p.rows * p.cols;
    if (i >= p.angles * plane) {
        return;
    }
    let a = i / plane;
    let rc = i % plane;
    let r = rc / p.cols;
    let c = rc % p.cols;
    let k = (a * p.raw_rows + p.row0 + r) * p.cols + c;
    var v: f32;
    if (U16) {
        v = f32((raw[k >> 1u] >> ((k & 1u) * 16u)) & 0xffffu);
    } else {
        v = bitcast<f32>(raw[k]);
    }
    if (OUTLIERS) {
        let m = median[k];
        if (v - m >= p.dif) {
            v = m;
        }
    }
    if (MODE != 0u) {
        let flat = flat_dark[rc];
        let dark = flat_dark[plane + rc];
        v = min((v - dark) / max(flat - dark, 1e-6), p.cutoff);
        if (MODE == 2u) {
            v = -log(max(v, p.floor));
        }
    }
    let o = select((a * p.rows + r) * p.cols + c, (r * p.angles + a) * p.cols + c, SINOGRAMS);
    out[o] = v;
}
