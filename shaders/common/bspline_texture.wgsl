// B-spline sampling through the texture unit's linear filter (Sigg and Hadwiger, "Fast
// third-order texture filtering", GPU Gems 2, ch. 20): along each axis the cubic taps at
// i - 1 .. i + 2 with weights w0..w3 are two linear fetches, at i - 1 + w1 / (w0 + w1) and
// i + 1 + w3 / (w2 + w3), weighted w0 + w1 and w2 + w3; a cubic sample of 3 axes costs 8 fetches
// instead of 64 loads. Order 1 is one fetch per axis, order 0 one at a texel's centre.
// The coefficients lie in a texture with BORDER texels added on each side of each of the array's
// axes, filled as the buffer path's taps fold (shaders/interpolate/spline_texture.wgsl): every
// tap of a folded coordinate is a texel, and for the unfolded modes (nearest, grid-constant) the
// sampler's clamp to the edge reads the border. Arrays of 2 axes are textures of depth one. The
// filter's weights have few fraction bits (8 on NVIDIA): src/ops/interpolate/mod.rs gives the
// error. A kernel that imports this declares `tex: texture_3d<f32>` and `lin: sampler`.
#import common/spline_fold

const BORDER: u32 = 2u;

// One axis' fetches: normalised texture coordinates and weights of one or two fetches; `cval`
// where the coordinate alone decides the sample.
struct Fetches {
    at: vec2<f32>,
    w: vec2<f32>,
    cval: bool,
}

// Axis of `n` samples read with `taps` taps at coordinate `c`.
fn axis_fetches(c: f32, n: u32, taps: u32) -> Fetches {
    var t: Fetches;
    var v = c;
    let unfolded = MODE == GRID_CONSTANT || MODE == NEAREST;
    if (!unfolded) {
        v = fold(v, f32(n), MODE);
    }
    t.cval = is_nan(c) || (!unfolded && v <= -1.0);
    // Array index j is texel j + BORDER, whose centre is at j + BORDER + 0.5.
    let centre = f32(BORDER) + 0.5;
    t.w = vec2<f32>(1.0, 0.0);
    if (taps == 1u) {
        t.at = vec2<f32>(floor(v + 0.5) + centre, 0.0);
    } else if (taps == 2u) {
        t.at = vec2<f32>(v + centre, 0.0);
    } else {
        let i = floor(v);
        let w = cubic_weights(v - i);
        t.w = vec2<f32>(w.x + w.y, w.z + w.w);
        t.at = vec2<f32>(i - 1.0 + w.y / t.w.x, i + 1.0 + w.w / t.w.y) + centre;
    }
    t.at /= f32(n + 2u * BORDER);
    return t;
}

fn fetch(x: f32, y: f32, z: f32) -> f32 {
    return textureSampleLevel(tex, lin, vec3<f32>(x, y, z), 0.0).x;
}

// Fetches along an axis of `taps` taps: one, or two for cubic.
fn fetches(taps: u32) -> u32 {
    return select(1u, 2u, taps == 4u);
}

// The weighted fetches of the three axes (slowest first). The loops below are the readable form;
// src/kernels/map_coordinates.rs writes them out per specialisation.
fn fetch_sum(az: Fetches, ay: Fetches, ax: Fetches) -> f32 {
    // unrolled: begin
    var sum = 0.0;
    for (var k = 0u; k < fetches(T1); k++) {
        for (var j = 0u; j < fetches(T2); j++) {
            for (var i = 0u; i < fetches(T3); i++) {
                sum += az.w[k] * ay.w[j] * ax.w[i] * fetch(ax.at[i], ay.at[j], az.at[k]);
            }
        }
    }
    return sum;
    // unrolled: end
}

// The array of axes `dims` (the last 2 or 3 of four) at coordinates `c`; cval where the mode says so.
fn sample(c: vec4<f32>, dims: vec4<u32>, cval: f32) -> f32 {
    // A texture of depth one for 2 axes: its one texel's centre.
    var az = Fetches(vec2<f32>(0.5, 0.0), vec2<f32>(1.0, 0.0), false);
    if (RANK >= 3u) {
        az = axis_fetches(c.y, dims.y, T1);
    }
    let ay = axis_fetches(c.z, dims.z, T2);
    let ax = axis_fetches(c.w, dims.w, T3);
    if (az.cval || ay.cval || ax.cval) {
        return cval;
    }
    return fetch_sum(az, ay, ax);
}
