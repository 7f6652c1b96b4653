// Tiled direct correlation: y[o] = sum_j w[j] * x[origin + o + j] over a 1-4D output, the same
// semantics as correlate_window.wgsl (boundary MODE folds, constant mode reads `fill`), for
// kernels large enough that reusing loads pays. Host side: src/kernels/correlate_tiled.rs.
//
// One workgroup owns a tile of TILE_ROWS x (8 * XT) outputs in the two fastest axes at one
// coordinate of the two slow axes. For every slow tap (j0, j1) and every chunk of kernel rows it
// loads the input plane the tile needs (tile plus halo, folded at load time) into workgroup
// memory once; each thread then sums 8 neighbouring outputs along the contiguous axis, sliding a
// 12-value register window over its tile row four taps at a time (one vec4 load from workgroup
// memory and one vec4 of weights feed 32 FMAs). Weights are zero-padded by the host to whole
// vec4s per kernel row, so non-finite inputs may spread up to 3 samples beyond a window.
//
// Long windows (COMPENSATED, set by the host above a tap count, as in correlate_window.wgsl) are
// summed in blocks of 16 taps (four vec4s of weights, and at each kernel row's end) that are
// added with Neumaier's compensation; the plain f32 sum of T taps errs by up to ~T·u.
#import common/grid
#import common/boundary
#import common/real

override MODE: u32 = 0u;           // Boundary::code()
override TILE_VEC4S: u32 = 1024u;  // workgroup memory in vec4<real>s, sized by the host to the plan
override COMPENSATED: bool = false;

const THREADS: u32 = 256u;
const PER_THREAD: u32 = 8u;  // outputs per thread along the contiguous axis

// Mirrored in src/kernels/correlate_tiled.rs. Slots are numpy axis order padded on the left to 4D.
struct Params {
    out_dims: vec4<u32>,   // output shape
    in_dims: vec4<i32>,    // input shape
    origin: vec4<i32>,     // input coordinate that output 0 reads with tap 0
    k_dims: vec4<u32>,     // weight shape (k_dims.w: taps along the contiguous axis)
    tiles: vec4<u32>,      // tiles along x, tiles along y, workgroups in all, threads along x (XT)
    tile_rows: u32,        // THREADS / XT
    chunk_rows: u32,       // kernel rows per workgroup-memory load
    k_blocks: u32,         // vec4s of weights per kernel row: ceil(k_dims.w / 4)
    fill: f32,             // constant mode's value outside x (f32 precision in the f64 twin)
}

@group(0) @binding(0) var<storage, read> x: array<real>;
@group(0) @binding(1) var<storage, read> w: array<vec4<real>>;
@group(0) @binding(2) var<storage, read_write> y: array<real>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> tile: array<vec4<real>, TILE_VEC4S>;

// Loads `rows` x `cols4` vec4s of the input plane starting at (in_y, in_x); `plane` is the
// first row index of the folded slow coordinates (`plane_ok` false: constant mode, outside).
// Threads spread over a row's vec4s first, so neighbours read neighbouring samples, and fold
// their columns once for all rows.
fn load_tile(lid: u32, rows: u32, cols4: u32, plane: u32, plane_ok: bool, in_y: i32, in_x: i32) {
    let lanes = min(cols4, THREADS);
    let row_step = THREADS / lanes;
    let r0 = lid / lanes;
    if (r0 >= row_step) {
        return;  // the few threads past whole rows of lanes (no barrier inside)
    }
    for (var c = lid % lanes; c < cols4; c += lanes) {
        let cx = in_x + i32(4u * c);
        let f = vec4(boundary_fold(cx, p.in_dims.w, MODE), boundary_fold(cx + 1, p.in_dims.w, MODE),
                     boundary_fold(cx + 2, p.in_dims.w, MODE), boundary_fold(cx + 3, p.in_dims.w, MODE));
        let col_ok = f >= vec4(0);
        let col = vec4<u32>(max(f, vec4(0)));
        for (var r = r0; r < rows; r += row_step) {
            let cy = boundary_fold(in_y + i32(r), p.in_dims.z, MODE);
            let ok = col_ok & vec4(plane_ok && cy >= 0);
            let row = (plane + u32(max(cy, 0))) * u32(p.in_dims.w);
            let v = vec4(x[row + col.x], x[row + col.y], x[row + col.z], x[row + col.w]);
            tile[r * cols4 + c] = select(vec4(real(p.fill)), v, ok);
        }
    }
}

// Adds the block *acc to the sum *sum with Neumaier's compensation (the lost bits into *err),
// per lane, and clears the block.
fn flush(sum: ptr<function, vec4<real>>, err: ptr<function, vec4<real>>, acc: ptr<function, vec4<real>>) {
    let s = *sum;
    let v = *acc;
    let t = s + v;
    *err += select((v - t) + s, (s - t) + v, abs(s) >= abs(v));
    *sum = t;
    *acc = vec4<real>(0.0);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    // Extra workgroups of a folded grid leave before any barrier (uniformly).
    let g = workgroup_index(wid, nwg);
    if (g >= p.tiles.z) {
        return;
    }
    let xt = p.tiles.w;
    var q = g / p.tiles.x;
    let x0 = (g - q * p.tiles.x) * PER_THREAD * xt;  // first output column of the tile
    let y0 = (q % p.tiles.y) * p.tile_rows;          // first output row
    q = q / p.tiles.y;
    let o1 = q % p.out_dims.y;
    let o0 = q / p.out_dims.y;
    let tx = lid % xt;
    let ty = lid / xt;
    let k = p.k_dims;
    let kb = p.k_blocks;
    let cols4 = 2u * xt + kb;  // tile row: 8 * XT outputs plus the halo, in vec4s
    let in_x = p.origin.w + i32(x0);

    var acc0 = vec4<real>(0.0);  // outputs x0 + 8 tx + 0..3
    var acc1 = vec4<real>(0.0);  // outputs x0 + 8 tx + 4..7
    var sum0 = vec4<real>(0.0);  // COMPENSATED: the blocks' sums and their lost bits
    var sum1 = vec4<real>(0.0);
    var err0 = vec4<real>(0.0);
    var err1 = vec4<real>(0.0);
    for (var j0 = 0u; j0 < k.x; j0++) {
        let c0 = boundary_fold(p.origin.x + i32(o0 + j0), p.in_dims.x, MODE);
        for (var j1 = 0u; j1 < k.y; j1++) {
            let c1 = boundary_fold(p.origin.y + i32(o1 + j1), p.in_dims.y, MODE);
            let plane_ok = min(c0, c1) >= 0;
            let plane = (u32(max(c0, 0)) * u32(p.in_dims.y) + u32(max(c1, 0))) * u32(p.in_dims.z);
            for (var jy0 = 0u; jy0 < k.z; jy0 += p.chunk_rows) {
                let chunk = min(p.chunk_rows, k.z - jy0);
                workgroupBarrier();  // every thread is done with the previous chunk
                load_tile(lid, p.tile_rows + chunk - 1u, cols4, plane, plane_ok,
                          p.origin.z + i32(y0 + jy0), in_x);
                workgroupBarrier();
                let w_row0 = ((j0 * k.y + j1) * k.z + jy0) * kb;
                for (var jy = 0u; jy < chunk; jy++) {
                    let base = (ty + jy) * cols4 + 2u * tx;
                    let wb = w_row0 + jy * kb;
                    var a = tile[base];
                    var b = tile[base + 1u];
                    for (var blk = 0u; blk < kb; blk++) {
                        let c = tile[base + 2u + blk];
                        let w4 = w[wb + blk];
                        acc0 = fma(vec4(w4.x), a, acc0);
                        acc1 = fma(vec4(w4.x), b, acc1);
                        acc0 = fma(vec4(w4.y), vec4(a.yzw, b.x), acc0);
                        acc1 = fma(vec4(w4.y), vec4(b.yzw, c.x), acc1);
                        acc0 = fma(vec4(w4.z), vec4(a.zw, b.xy), acc0);
                        acc1 = fma(vec4(w4.z), vec4(b.zw, c.xy), acc1);
                        acc0 = fma(vec4(w4.w), vec4(a.w, b.xyz), acc0);
                        acc1 = fma(vec4(w4.w), vec4(b.w, c.xyz), acc1);
                        a = b;
                        b = c;
                        if (COMPENSATED && blk % 4u == 3u) {
                            flush(&sum0, &err0, &acc0);
                            flush(&sum1, &err1, &acc1);
                        }
                    }
                    if (COMPENSATED) {
                        flush(&sum0, &err0, &acc0);
                        flush(&sum1, &err1, &acc1);
                    }
                }
            }
        }
    }

    if (COMPENSATED) {
        acc0 = sum0 + err0;
        acc1 = sum1 + err1;
    }

    let oy = y0 + ty;
    let ox = x0 + PER_THREAD * tx;
    if (oy >= p.out_dims.z) {
        return;
    }
    let out_row = ((o0 * p.out_dims.y + o1) * p.out_dims.z + oy) * p.out_dims.w;
    for (var e = 0u; e < 4u; e++) {
        if (ox + e < p.out_dims.w) {
            y[out_row + ox + e] = acc0[e];
        }
        if (ox + 4u + e < p.out_dims.w) {
            y[out_row + ox + 4u + e] = acc1[e];
        }
    }
}
