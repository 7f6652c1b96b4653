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
