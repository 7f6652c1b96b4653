// The vector-geometry projectors' shared parts (src/ops/tomography/vector): one `View` per
// projection in the volume's index coordinates (voxel (k, j, i) at (i, j, k)), mirrored in
// `Views::packed`, and the parameters, mirrored in src/kernels/project_rays.rs.

struct View {
    source: vec4<f32>,  // cone: the source, w 1 (2: a fan of a stack, moving with the row); parallel: the rays' direction, w 0
    corner: vec4<f32>,  // pixel (0, 0)'s centre; w: the axis whose planes the rays cross
    u: vec4<f32>,       // one pixel along the columns; w: the rays' density factor
    v: vec4<f32>,       // one pixel along the rows; w: λ at the world's origin (FDK)
    col: vec4<f32>,     // column = (col·(x, 1)) / λ
    row: vec4<f32>,     // row = (row·(x, 1)) / λ
    den: vec4<f32>,     // λ = den·(x, 1): the fraction of the way from source to detector
    unused: vec4<f32>,
}

struct Params {
    nx: u32, ny: u32, nz: u32, rows: u32,
    cols: u32, angles: u32, count: u32, unused: u32,
    voxel: vec4<f32>,   // voxel sizes (world units) along x, y, z
}

struct Ray { origin: vec3<f32>, dir: vec3<f32> }

// The source of detector row `row`: a stack of fans has one per row (one slice per row).
fn source_at(w: View, row: f32) -> vec3<f32> {
    if (w.source.w > 1.5) {
        return w.source.xyz + row * w.v.xyz;
    }
    return w.source.xyz;
}
fn view_ray(w: View, row: f32, col: f32) -> Ray {
    let pixel = w.corner.xyz + col * w.u.xyz + row * w.v.xyz;
    if (w.source.w > 0.5) {
        let s = source_at(w, row);
        return Ray(s, pixel - s);
    }
    return Ray(pixel, w.source.xyz);
}

// Joseph's sampling of a ray across the planes of axis a0: in plane t its sample's other two
// coordinates (axes a0 + 1, a0 + 2, mod 3) are slope * t + intercept; `step` is the ray's length
// (world units) per plane.
struct Line { slope: vec2<f32>, intercept: vec2<f32>, step: f32 }

fn joseph_line(r: Ray, a0: u32, voxel: vec3<f32>) -> Line {
    let a1 = (a0 + 1u) % 3u;
    let a2 = (a0 + 2u) % 3u;
    let slope = vec2<f32>(r.dir[a1], r.dir[a2]) / r.dir[a0];
    let intercept = vec2<f32>(r.origin[a1], r.origin[a2]) - slope * r.origin[a0];
    return Line(slope, intercept, length(r.dir * voxel) / abs(r.dir[a0]));
}

fn unit(a: u32) -> vec3<f32> {
    return vec3<f32>(f32(a == 0u), f32(a == 1u), f32(a == 2u));
}

fn sizes(p: Params) -> vec3<u32> {
    return vec3<u32>(p.nx, p.ny, p.nz);
}

// Where point x (index coordinates) lands on view w's detector: (column, row, λ).
fn detector_point(w: View, x: vec3<f32>) -> vec3<f32> {
    let lambda = dot(w.den.xyz, x) + w.den.w;
    var row = (dot(w.row.xyz, x) + w.row.w) / lambda;
    if (w.source.w > 1.5) {
        row = x.z - w.corner.z;  // a stack: row k is slice k's fan
    }
    return vec3<f32>((dot(w.col.xyz, x) + w.col.w) / lambda, row, lambda);
}
