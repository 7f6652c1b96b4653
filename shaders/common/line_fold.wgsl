// Sample k of a line of n samples extended without end by the spline prefilter's boundary
// (`init`: 0 whole-sample symmetric, 1 half-sample symmetric, 2 periodic), as its index in the
// line: scipy's initial values are the prefilter's passes over the line so extended.
fn fold_line(k: i32, n: i32, init: u32) -> i32 {
    var j = k;
    if (j < 0 || j >= n) {
        if (init == 2u) {
            j = ((j % n) + n) % n;
        } else {
            // Whole-sample period 2n − 2, half-sample 2n.
            let whole = init == 0u;
            let period = select(2 * n, 2 * n - 2, whole);
            j = ((j % period) + period) % period;
            if (j >= n) {
                j = period - j - select(1, 0, whole);
            }
        }
    }
    return j;
}

// [`fold_line`] where k lies within one reflection or period of the line (k in [-n, 2n - 1)):
// the same few selects for every k, where a branch on whether a sample folds would run both
// ways in a warp that holds line ends (spline_prefilter_lines.wgsl: 2.2× its time).
fn fold_line_once(k: i32, n: i32, init: u32) -> i32 {
    let periodic = init == 2u;
    let half = i32(init == 1u);
    let below = select(-k - half, k + n, periodic);
    let above = select(2 * n - 2 + half - k, k - n, periodic);
    return select(select(k, above, k >= n), below, k < 0);
}
