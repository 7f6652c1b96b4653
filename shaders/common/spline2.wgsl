// Cubic B-spline sampling of 2D coefficient arrays held in one buffer, zero beyond them. A
// kernel that imports this declares the coefficients as `coef: array<f32>`.
#import common/spline_fold

// The cubic B-spline with coefficients `coef[base..]` (rows × cols) at (row u, column v); taps
// beyond the array are 0.
fn spline2(base: u32, rows: u32, cols: u32, u: f32, v: f32) -> f32 {
    if (!(u > -2.0 && u < f32(rows) + 1.0 && v > -2.0 && v < f32(cols) + 1.0)) {
        return 0.0;
    }
    let fu = floor(u);
    let fv = floor(v);
    let wu = cubic_weights(u - fu);
    let wv = cubic_weights(v - fv);
    let r0 = i32(fu) - 1;
    let c0 = i32(fv) - 1;
    var sum = 0.0;
    for (var i = 0; i < 4; i++) {
        let r = r0 + i;
        if (r < 0 || r >= i32(rows)) {
            continue;
        }
        let row = base + u32(r) * cols;
        var s = 0.0;
        for (var j = 0; j < 4; j++) {
            let c = c0 + j;
            if (c >= 0 && c < i32(cols)) {
                s += wv[j] * coef[row + u32(c)];
            }
        }
        sum += wu[i] * s;
    }
    return sum;
}
