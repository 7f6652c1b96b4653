// Sorts each column of (slices, rows, cols) along its rows, ascending (equal values keep their
// row order), one workgroup per column, by a bitonic network in workgroup memory: the sorted
// values, and for each input element the flat index its value went to, so that an array of the
// sorted shape is put back in the input's order by `take` (numpy's argsort and its inverse).
// The stripe removals of Vo et al. 2018 (sorting-based, large stripes) are built on it.
#import common/grid

// The rows padded to a power of two (at most CAPACITY, mirrored in src/kernels/sort_columns.rs).
override SIZE: u32;
const CAPACITY: u32 = 4096u;

struct Params { slices: u32, rows: u32, cols: u32, unused: u32 }  // mirrored in src/kernels/sort_columns.rs

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> sorted: array<f32>;
@group(0) @binding(2) var<storage, read_write> position: array<u32>;
@group(0) @binding(3) var<uniform> p: Params;

var<workgroup> keys: array<f32, CAPACITY>;
var<workgroup> rows: array<u32, CAPACITY>;

// Whether the pair (key, row) at a comes after the one at b.
fn after(a: u32, b: u32) -> bool {
    return keys[a] > keys[b] || (keys[a] == keys[b] && rows[a] > rows[b]);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let column = workgroup_index(wid, nwg);
    if (column >= p.slices * p.cols) {
        return;
    }
    let s = column / p.cols;
    let c = column % p.cols;
    // Padding sorts last: the largest f32 and rows past the end.
    for (var i = lid; i < SIZE; i += 256u) {
        keys[i] = select(3.4028235e38, x[(s * p.rows + min(i, p.rows - 1u)) * p.cols + c], i < p.rows);
        rows[i] = i;
    }
    for (var k = 2u; k <= SIZE; k <<= 1u) {
        for (var j = k >> 1u; j > 0u; j >>= 1u) {
            workgroupBarrier();
            for (var t = lid; t < SIZE / 2u; t += 256u) {
                let a = (t / j) * 2u * j + t % j;
                let b = a + j;
                if (after(a, b) == ((a & k) == 0u)) {
                    let key = keys[a];
                    keys[a] = keys[b];
                    keys[b] = key;
                    let row = rows[a];
                    rows[a] = rows[b];
                    rows[b] = row;
                }
            }
        }
    }
    workgroupBarrier();
    for (var i = lid; i < p.rows; i += 256u) {
        let o = (s * p.rows + i) * p.cols + c;
        sorted[o] = keys[i];
        position[(s * p.rows + rows[i]) * p.cols + c] = o;
    }
}
