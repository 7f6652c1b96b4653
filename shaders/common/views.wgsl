// The vector-geometry projectors' shared parts (src/ops/tomography/vector): one `View` per
// projection in the volume's index coordinates (voxel (k, j, i) at (i, j, k)), mirrored in
// `Views::packed`, and the parameters, mirrored in src/kernels/project_rays.rs.

// A cylindrical detector (source.w 3, `Cylinder` in src/ops/tomography/vector/mod.rs) reads
// the fields in brackets.
struct View {
    source: vec4<f32>,  // cone: the source, w 1 (2: a fan of a stack, moving with the row; 3: a cylindrical detector); parallel: the rays' direction, w 0
    corner: vec4<f32>,  // pixel (0, 0)'s centre [the cylinder's axis level with the detector's centre]; w: the axis whose planes the rays cross
    u: vec4<f32>,       // one pixel along the columns [the radial vector]; w: the rays' density factor [radians per column]
    v: vec4<f32>,       // one pixel along the rows; w: λ at the world's origin (FDK)
    col: vec4<f32>,     // column = (col·(x, 1)) / λ [the tangential vector; w: the middle column]
    row: vec4<f32>,     // row = (row·(x, 1)) / λ [the radial unit vector (world); w: the source's offset along it]
    den: vec4<f32>,     // λ = den·(x, 1): the fraction of the way from source to detector [tangential unit vector; offset]
    extra: vec4<f32>,   // [the axis's unit vector; offset]
    curve: vec4<f32>,   // [R, 1/|v|, the middle row, offsets_a² + offsets_b² − R²]
}

struct Params {
    nx: u32, ny: u32, nz: u32, rows: u32,
    cols: u32, angles: u32, count: u32, unused: u32,
    voxel: vec4<f32>,   // voxel sizes (world units) along x, y, z
}

struct Ray { origin: vec3<f32>, dir: vec3<f32> }

// The source of detector row `row`: a stack of fans has one per row (one slice per row).
// Whether any view is a stack's fan (set per dispatch, as CYLINDER).
override STACKED: bool = false;
fn stacked(w: View) -> bool {
    return STACKED && w.source.w > 1.5 && w.source.w < 2.5;
}
fn source_at(w: View, row: f32) -> vec3<f32> {
    if (stacked(w)) {
        return w.source.xyz + row * w.v.xyz;
    }
    return w.source.xyz;
}
// Whether any view's detector is a cylinder (set per dispatch: flat detectors' kernels then
// carry none of its arithmetic).
override CYLINDER: bool = false;
fn cylindrical(w: View) -> bool {
    return CYLINDER && w.source.w > 2.5;
}
fn pixel_of(w: View, row: f32, col: f32) -> vec3<f32> {
    if (cylindrical(w)) {
        let theta = (col - w.col.w) * w.u.w;
        return w.corner.xyz + cos(theta) * w.u.xyz + sin(theta) * w.col.xyz + (row - w.curve.z) * w.v.xyz;
    }
    return w.corner.xyz + col * w.u.xyz + row * w.v.xyz;
}
fn view_ray(w: View, row: f32, col: f32) -> Ray {
    let pixel = pixel_of(w, row, col);
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

// The first and last planes of axis a0 whose samples on `line` reach a volume of n voxels (taps
// within one voxel of it); last < first where none does.
fn plane_range(line: Line, a0: u32, n: vec3<u32>) -> vec2<f32> {
    let a1 = (a0 + 1u) % 3u;
    let a2 = (a0 + 2u) % 3u;
    var lo = 0.0;
    var hi = f32(n[a0] - 1u);
    let extent = vec2<f32>(f32(n[a1]), f32(n[a2]));
    for (var c = 0u; c < 2u; c++) {
        if (line.slope[c] != 0.0) {
            let t1 = (-1.0 - line.intercept[c]) / line.slope[c];
            let t2 = (extent[c] - line.intercept[c]) / line.slope[c];
            lo = max(lo, floor(min(t1, t2)));
            hi = min(hi, ceil(max(t1, t2)));
        } else if (line.intercept[c] <= -1.0 || line.intercept[c] >= extent[c]) {
            hi = -1.0;
        }
    }
    return vec2<f32>(lo, hi);
}
fn unit(a: u32) -> vec3<f32> {
    return vec3<f32>(f32(a == 0u), f32(a == 1u), f32(a == 2u));
}

fn sizes(p: Params) -> vec3<u32> {
    return vec3<u32>(p.nx, p.ny, p.nz);
}

// The rays' density factor at pixel (row, col): 1 / |det(u, v, pixel − source)|, u the
// pixel's step along its row (a flat detector's is the same everywhere).
fn density_at(w: View, row: f32, col: f32) -> f32 {
    if (!cylindrical(w)) {
        return w.u.w;
    }
    let theta = (col - w.col.w) * w.u.w;
    let step = (cos(theta) * w.col.xyz - sin(theta) * w.u.xyz) * w.u.w;
    return 1.0 / abs(dot(cross(step, w.v.xyz), pixel_of(w, row, col) - w.source.xyz));
}
// Where point x (index coordinates; voxels of `voxel` world units) lands on view w's detector:
// (column, row, λ). A cylinder's: the ray's far intersection with it, as ASTRA's projectPoint.
fn detector_point(w: View, x: vec3<f32>, voxel: vec3<f32>) -> vec3<f32> {
    if (cylindrical(w)) {
        let dw = (x - w.source.xyz) * voxel;
        let r = vec3<f32>(dot(dw, w.row.xyz), dot(dw, w.den.xyz), dot(dw, w.extra.xyz));
        let qa = r.x * r.x + r.y * r.y;
        let qb = 2.0 * (r.x * w.row.w + r.y * w.den.w);
        let qc = w.curve.w;
        let root = sqrt(max(qb * qb - 4.0 * qa * qc, 0.0));
        let t = select(2.0 * qc / (-qb - root), (-qb + root) / (2.0 * qa), qb <= 0.0);
        let theta = asin(clamp((t * r.y + w.den.w) / w.curve.x, -1.0, 1.0));
        return vec3<f32>(theta / w.u.w + w.col.w, (t * r.z + w.extra.w) * w.curve.y + w.curve.z, 1.0 / t);
    }
    let lambda = dot(w.den.xyz, x) + w.den.w;
    var row = (dot(w.row.xyz, x) + w.row.w) / lambda;
    if (stacked(w)) {
        row = x.z - w.corner.z;  // a stack: row k is slice k's fan
    }
    return vec3<f32>((dot(w.col.xyz, x) + w.col.w) / lambda, row, lambda);
}

// The voxel-driven back-projector's weight of view w's value at voxel `pos` (index coordinates)
// landing at `point` (column, row, λ): FDK's (λ₀ / λ)², or the rays' density there (the forward
// projector's continuous adjoint).
fn voxel_weight(w: View, pos: vec3<f32>, point: vec3<f32>, voxel: vec3<f32>, fdk: bool) -> f32 {
    let lambda = point.z;
    if (fdk) {
        let ratio = w.v.w / lambda;
        return ratio * ratio;
    }
    if (w.source.w > 0.5) {
        return length((pos - source_at(w, point.y)) * voxel) * density_at(w, point.y, point.x) / (lambda * lambda * lambda);
    }
    return w.u.w;  // parallel rays' density
}
