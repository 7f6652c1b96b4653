// A footprint's reads (the rank and extreme filters): the output index as coordinates of an
// array of up to 4 axes (slots padded on the left), and tap o's element folded by the mode
// (common/boundary.wgsl; the index is -1 outside in constant mode).

fn footprint_coords(i: u32, dims: vec4<u32>) -> vec4<i32> {
    var c: vec4<i32>;
    var rest = i;
    for (var a = 3; a >= 0; a--) {
        c[a] = i32(rest % dims[a]);
        rest = rest / dims[a];
    }
    return c;
}

fn footprint_index(c: vec4<i32>, o: vec4<i32>, n: vec4<i32>, mode: u32) -> i32 {
    var index = 0;
    for (var a = 0; a < 4; a++) {
        let j = boundary_fold(c[a] + o[a], n[a], mode);
        if (j < 0) {
            return -1;
        }
        index = index * n[a] + j;
    }
    return index;
}

// Whether the footprint whose offsets lie in [lo, hi] along each slot fits inside the array at
// `c`: then every tap is read at its linear offset (`footprint_at`), without folding.
fn footprint_inside(c: vec4<i32>, n: vec4<i32>, lo: vec4<i32>, hi: vec4<i32>) -> bool {
    return all(c + lo >= vec4<i32>(0)) && all(c + hi < n);
}

fn footprint_at(i: u32, o: vec4<i32>, n: vec4<i32>) -> u32 {
    return u32(i32(i) + dot(o, vec4<i32>(n.y * n.z * n.w, n.z * n.w, n.w, 1)));
}
