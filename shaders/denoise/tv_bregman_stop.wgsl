// scikit-image's stopping rule for split-Bregman TV after a sweep: the root mean square change
// √(Σ change / count) at most eps stops it (the sweep's result stands). State: (stopped,
// sweeps taken).
// Mirrored in src/kernels/tv_bregman_stop.rs.
struct Params { count: f32, eps: f32, unused0: u32, unused1: u32 }

@group(0) @binding(0) var<storage, read> sum: array<f32>;
@group(0) @binding(1) var<storage, read_write> state: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(1)
fn main() {
    if (state[0] != 0.0) {
        return;
    }
    state[1] += 1.0;
    if (sqrt(sum[0] / p.count) <= p.eps) {
        state[0] = 1.0;
    }
}
