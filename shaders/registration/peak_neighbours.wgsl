// The magnitude of a correlation map at its peak and at the peak's two neighbours along each
// axis (wrapped, as the map is circular), written at `at` of a results array after the peak's
// flat index (its bits): what a parabola through three points needs for a sub-sample peak,
// gathered on the device so many registrations download one small array.
#import common/grid

struct Params { dims: vec4<u32>, rank: u32, at: u32, len: u32, unused: u32 }  // mirrored in src/kernels/peak_neighbours.rs

@group(0) @binding(0) var<storage, read> map: array<f32>;
@group(0) @binding(1) var<storage, read> index: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(local_invocation_index) lid: u32) {
    // Slot 0: the index; 1: the peak; 2 + 2a (+1): axis a's lower (upper) neighbour.
    if (lid >= 2u + 2u * p.rank) {
        return;
    }
    let flat = min(index[0], p.len - 1u);
    if (lid == 0u) {
        out[p.at] = bitcast<f32>(index[0]);
        return;
    }
    var cell = flat;
    if (lid >= 2u) {
        let axis = 4u - p.rank + (lid - 2u) / 2u;
        var stride = 1u;
        for (var a = 3u; a > axis; a--) {
            stride *= p.dims[a];
        }
        let n = p.dims[axis];
        let i = (flat / stride) % n;
        let moved = select((i + 1u) % n, (i + n - 1u) % n, (lid % 2u) == 0u);
        cell = flat - i * stride + moved * stride;
    }
    out[p.at + lid] = abs(map[cell]);
}
