// Chambolle's TV step's shared parts (tv_chambolle, tv_chambolle_stopping): axis strides and
// sizes of the item (nz, ny, nx), and the estimate f − div p at a voxel. The importing kernel
// declares f, p and q (its Params with nx, ny, nz, ndim, count).
// Axis a's stride, its size, and v's coordinate along it.
fn stride(a: u32) -> u32 {
    let axis = 3u - q.ndim + a;
    return select(select(1u, q.nx, axis == 1u), q.nx * q.ny, axis == 0u);
}
fn size(a: u32) -> u32 {
    let axis = 3u - q.ndim + a;
    return select(select(q.nx, q.ny, axis == 1u), q.nz, axis == 0u);
}

// f + (−Σ_a p_a(v) + Σ_a p_a(v − e_a)), the shifted terms only inside the array.
fn estimate(i: u32, local: u32) -> f32 {
    var s = 0.0;
    for (var a = 0u; a < q.ndim; a++) {
        s += p[a * q.count + i];
    }
    var d = -s;
    for (var a = 0u; a < q.ndim; a++) {
        let st = stride(a);
        if ((local / st) % size(a) >= 1u) {
            d += p[a * q.count + i - st];
        }
    }
    return f[i] + d;
}


// The forward differences of the estimate (0 on each axis's last plane; unused axes 0).
fn gradient(i: u32, local: u32, here: f32) -> array<f32, 3> {
    var g = array<f32, 3>(0.0, 0.0, 0.0);
    for (var a = 0u; a < q.ndim; a++) {
        let st = stride(a);
        if ((local / st) % size(a) + 1u < size(a)) {
            g[a] = estimate(i + st, local + st) - here;
        }
    }
    return g;
}
