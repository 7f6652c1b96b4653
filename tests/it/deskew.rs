//! Deskewing light-sheet stacks (lucent::ndimage::deskew, `lucent deskew`): the GPU against the
//! f64 reference at the same map, the geometry against cudaDecon's deskew kernel written out in
//! f64, the coverslip frame against where a point source must land, slabs of rows against one
//! pass, the CLI on files (GPU and CPU) and its refusals.

use crate::common;
use common::*;
use lucent::ndimage::{self, cpu, Deskew, Sampler, Sampling, SplineMode};
use ndarray::{Array3, ArrayD, Ix3};

fn sampling(order: u32, cval: f32) -> Sampling {
    Sampling { order, mode: SplineMode::Constant, cval, prefilter: true, sampler: Sampler::Buffer }
}

fn stack(dims: &[usize]) -> Array3<f32> {
    rand_array(dims).into_dimensionality::<Ix3>().unwrap()
}

fn reference(x: &Array3<f32>, d: &Deskew, how: &Sampling) -> ArrayD<f64> {
    let (map, out) = ndimage::deskew_map(x.shape(), d).unwrap();
    cpu::map_coordinates(&x.mapv(|v| v as f64).into_dyn(), &ndimage::coordinates(&map, &out), how)
}

/// `got` against the reference except at samples whose coordinate lies within 1e-6 of the
/// stack's first or last sample along an axis the map moves (the others are read where they
/// are): mode constant jumps to the pad there, and f32 or
/// f64 rounding of a coordinate that is exactly 0 (the middle plane of an even stack) decides.
fn assert_deskewed(got: &ArrayD<f32>, x: &Array3<f32>, d: &Deskew, how: &Sampling, what: &str) {
    let want = reference(x, d, how);
    assert_eq!(got.shape(), want.shape(), "{what}");
    let (map, out) = ndimage::deskew_map(x.shape(), d).unwrap();
    let coords = ndimage::coordinates(&map, &out);
    let n = want.len();
    let moved: Vec<usize> = (0..3).filter(|&a| (0..3).any(|b| map.matrix[a][b] != if a == b { 1.0 } else { 0.0 })).collect();
    let knife = |k: usize| {
        moved.iter().any(|&a| {
            let c = coords.as_slice().unwrap()[a * n + k];
            c.abs() < 1e-6 || (c - (x.shape()[a] - 1) as f64).abs() < 1e-6
        })
    };
    let keep: Vec<usize> = (0..n).filter(|&k| !knife(k)).collect();
    assert!(keep.len() * 4 >= n * 3, "{what}: {} of {n} samples on an edge", n - keep.len());
    let pick = |v: Vec<f64>| ArrayD::from_shape_vec(ndarray::IxDyn(&[keep.len()]), keep.iter().map(|&k| v[k]).collect()).unwrap();
    let got = pick(got.iter().map(|&v| v as f64).collect()).mapv(|v| v as f32);
    assert_resampled(&got, &pick(want.iter().copied().collect()), what);
}

/// Awkward sizes, both frames, angles either side, orders 1 and 3, a cropped and shifted width:
/// within the interpolation engine's bound (relative L2 and largest error 1e-5) of the f64
/// reference, temporaries poisoned.
#[test]
fn deskew_matches_the_f64_reference() {
    let gpu = poisoned_gpu();
    let cases = [
        (vec![13usize, 5, 17], Deskew { angle: 31.5, dzdata: 0.37, dxdata: 0.104, ..Default::default() }),
        (vec![7, 3, 29], Deskew { angle: -32.45, dzdata: 0.5, dxdata: 0.1, ..Default::default() }),
        (vec![11, 4, 9], Deskew { angle: 58.0, dzdata: 0.21, dxdata: 0.147, width: 15, shift: -2.5, ..Default::default() }),
        (vec![13, 5, 17], Deskew { angle: 31.5, dzdata: 0.37, dxdata: 0.104, rotate: true, ..Default::default() }),
        (vec![6, 2, 23], Deskew { angle: -47.0, dzdata: 0.8, dxdata: 0.2, rotate: true, ..Default::default() }),
    ];
    for (dims, d) in &cases {
        let x = stack(dims);
        for order in [1, 3] {
            let how = sampling(order, 0.3);
            let got = ndimage::deskew(gpu, &x, d, &how).unwrap().into_dyn();
            assert_deskewed(&got, &x, d, &how, &format!("{dims:?} {d:?} order {order}"));
        }
    }
}

/// The deskewed frame is cudaDecon's: its kernel (deskew_kernel: x_in = x − width/2 + shift −
/// f·(z − nz/2) + nx/2, linear between columns, the pad beyond) and its width
/// (nx + ⌊nz·dz·|cos θ|/dx⌋), written out here in f64. Samples at exactly x_in = nx − 1, which
/// cudaDecon pads and scipy reads, are skipped.
#[test]
fn deskewed_frame_is_cudadecons() {
    let gpu = gpu();
    for (dims, d) in [
        ([9usize, 4, 21], Deskew { angle: 31.5, dzdata: 0.4, dxdata: 0.104, ..Default::default() }),
        ([10, 3, 16], Deskew { angle: -30.0, dzdata: 0.3, dxdata: 0.1, shift: 3.0, ..Default::default() }),
        ([8, 2, 12], Deskew { angle: 45.0, dzdata: 0.25, dxdata: 0.1, width: 30, ..Default::default() }),
    ] {
        let x = stack(&dims);
        let pad = -7.25f32;
        let got = ndimage::deskew(gpu, &x, &d, &sampling(1, pad)).unwrap();
        let [nz, ny, nx] = dims;
        let theta = if d.angle < 0.0 { d.angle + 180.0 } else { d.angle }.to_radians();
        let f = theta.cos() * d.dzdata / d.dxdata;
        let width = if d.width > 0 { d.width } else { nx + (nz as f64 * d.dzdata * theta.cos().abs() / d.dxdata).floor() as usize };
        assert_eq!(got.shape(), [nz, ny, width], "{d:?}");
        let mut compared = 0;
        for ((z, y, xo), &g) in got.indexed_iter() {
            let xin = (xo as f64 - width as f64 / 2.0 + d.shift) - f * (z as f64 - nz as f64 / 2.0) + nx as f64 / 2.0;
            if (xin - (nx - 1) as f64).abs() < 1e-9 {
                continue;
            }
            let want = if xin >= 0.0 && xin < (nx - 1) as f64 {
                let (i, t) = (xin.floor() as usize, xin - xin.floor());
                (1.0 - t) * x[[z, y, i]] as f64 + t * x[[z, y, i + 1]] as f64
            } else {
                pad as f64
            };
            assert!((g as f64 - want).abs() <= 1e-5, "{d:?} at ({z}, {y}, {xo}): {g} vs cudaDecon's {want}");
            compared += 1;
        }
        assert!(compared * 10 >= got.len() * 9, "{d:?}: only {compared} of {} compared", got.len());
    }
}

/// Coverslip frame: a source at raw (k, j, i) lands at height i·sin θ and along the stage at
/// k·dz/dx + i·cos θ from the stack's first X, in voxels of dxdata (the centroid of a blob of
/// σ 2.5 raw voxels: a single voxel falls between the coarser output samples).
#[test]
fn coverslip_frame_puts_a_point_where_the_sample_is() {
    let gpu = gpu();
    for d in [
        Deskew { angle: 31.5, dzdata: 0.4, dxdata: 0.104, rotate: true, ..Default::default() },
        Deskew { angle: -40.0, dzdata: 0.3, dxdata: 0.1, rotate: true, ..Default::default() },
    ] {
        let (nz, ny, nx) = (40usize, 3usize, 60usize);
        let (k, j, i) = (21usize, 1usize, 33usize);
        let x = Array3::from_shape_fn((nz, ny, nx), |(a, b, c)| {
            let r2 = (a as f64 - k as f64).powi(2) + (c as f64 - i as f64).powi(2);
            if b == j {
                (-r2 / (2.0 * 2.5 * 2.5)).exp() as f32
            } else {
                0.0
            }
        });
        let got = ndimage::deskew(gpu, &x, &d, &sampling(1, 0.0)).unwrap();
        let theta = if d.angle < 0.0 { d.angle + 180.0 } else { d.angle }.to_radians();
        let (c, s) = (theta.cos(), theta.sin());
        let x0 = [0.0, (nx - 1) as f64 * c].into_iter().fold(f64::MAX, f64::min);
        let want_z = i as f64 * s;
        let want_x = k as f64 * d.dzdata / d.dxdata + i as f64 * c - x0;
        let plane = got.index_axis(ndarray::Axis(1), j);
        let (mut mass, mut mz, mut mx) = (0.0, 0.0, 0.0);
        for ((z, xo), &v) in plane.indexed_iter() {
            mass += v as f64;
            mz += v as f64 * z as f64;
            mx += v as f64 * xo as f64;
        }
        assert!(mass > 1.0, "{d:?}: the source is lost ({mass})");
        let (cz, cx) = (mz / mass, mx / mass);
        assert!((cz - want_z).abs() < 0.1 && (cx - want_x).abs() < 0.1, "{d:?}: centroid ({cz:.2}, {cx:.2}), expected ({want_z:.2}, {want_x:.2})");
        assert!(got.index_axis(ndarray::Axis(1), 0).iter().all(|&v| v == 0.0), "other rows stay empty");
    }
}

/// A stack beyond one buffer is deskewed in slabs with the same result: slabs of rows (the
/// coverslip frame) bit for bit, the same kernel reading the same values at the same
/// coordinates; slabs of planes (the deskewed frame) within the engine's bound of the f64
/// reference, each slab's coordinates rounded from its own offset.
#[test]
fn slabs_equal_one_pass() {
    let x = stack(&[12, 23, 31]);
    for (d, bits) in [
        (Deskew { angle: 31.5, dzdata: 0.4, dxdata: 0.104, ..Default::default() }, false),
        (Deskew { angle: 31.5, dzdata: 0.4, dxdata: 0.104, rotate: true, ..Default::default() }, true),
    ] {
        let how = sampling(3, 0.5);
        let whole = ndimage::deskew(gpu(), &x, &d, &how).unwrap();
        // A buffer of a few planes or rows: several slabs, the last one shorter.
        let small = open(lucent::GpuOptions { max_buffer_bytes: Some(6 * 23 * 80 * 4), poison: true, ..lucent::GpuOptions::from_env().unwrap() });
        let slabs = ndimage::deskew(&small, &x, &d, &how).unwrap();
        if bits {
            assert_eq!(whole, slabs, "{d:?}");
        } else {
            assert_deskewed(&slabs.into_dyn(), &x, &d, &how, &format!("{d:?} in slabs of planes"));
        }
    }
}

#[test]
fn deskew_refusals() {
    let x = stack(&[4, 3, 5]);
    let how = sampling(1, 0.0);
    let base = Deskew::default();
    for (d, words) in [
        (Deskew { angle: 0.0, ..base }, "no skew"),
        (Deskew { angle: 180.0, ..base }, "between -180 and 180"),
        (Deskew { dzdata: f64::NAN, ..base }, "must be finite"),
        (Deskew { dxdata: -0.1, ..base }, "positive"),
        (Deskew { dxdata: 1e-9, ..base }, "check the units"),
        (Deskew { rotate: true, width: 10, ..base }, "whole stack"),
    ] {
        let err = ndimage::deskew(gpu(), &x, &d, &how).unwrap_err().to_string();
        assert!(err.contains(words), "{d:?}: {err}");
    }
    let mut bad = x.clone();
    bad[[1, 1, 1]] = f32::NAN;
    assert!(ndimage::deskew(gpu(), &bad, &base, &how).unwrap_err().to_string().contains("input"));
}

/// `lucent deskew` on files, on the GPU and the CPU reference: the API's result, pycudadecon's
/// default pad (the last plane's median), the report's shapes; bad options refused in one line
/// with nothing written.
#[test]
fn cli_deskew() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let x = stack(&[9, 4, 14]).mapv(|v| v + 2.0);
    lucent::io::write_real(path("raw.npy"), &x.view().into_dyn()).unwrap();
    let d = Deskew { angle: 31.5, dzdata: 0.4, dxdata: 0.104, ..Default::default() };
    let pad = ndimage::deskew_pad_default(&x) as f32;
    let mut last: Vec<f32> = x.index_axis(ndarray::Axis(0), 8).iter().copied().collect();
    last.sort_by(f32::total_cmp);
    assert_eq!(pad, 0.5 * (last[27] + last[28]), "an even count's median is the mean of the middle two");
    let want_shape = ndimage::deskew_map(x.shape(), &d).unwrap().1;
    for device in ["auto", "cpu"] {
        let out = path(&format!("d-{device}.npy"));
        let r = lucent_json(&["--device", device, "deskew", &path("raw.npy"), "-o", &out, "--dzdata", "0.4", "--dxdata", "0.104"], &[("LUCENT_POISON", "1")]);
        assert_eq!(r["command"], "deskew", "{r}");
        assert_eq!(r["shape_out"], serde_json::json!(want_shape), "{r}");
        assert_deskewed(&lucent::io::read_real(&out).unwrap(), &x, &d, &sampling(1, pad), &format!("lucent deskew on {device}"));
    }
    let r = lucent_json(
        &["deskew", &path("raw.npy"), "-o", &path("c.npy"), "--dzdata", "0.4", "--dxdata", "0.104", "--rotate", "--order", "3", "--pad-val", "0"],
        &[],
    );
    let rotated = Deskew { rotate: true, ..d };
    assert_deskewed(&lucent::io::read_real(path("c.npy")).unwrap(), &x, &rotated, &sampling(3, 0.0), "lucent deskew --rotate");
    assert_eq!(r["details"]["frame"], "coverslip", "{r}");
    for (extra, words) in [
        (&["--angle", "0"][..], "no skew"),
        (&["--dzdata", "nan"][..], "must be finite"),
        (&["--rotate", "--width", "20"][..], "whole stack"),
        (&["--order", "6"][..], "invalid value"),
    ] {
        let out = lucent_cli(&[&["deskew", &path("raw.npy"), "-o", &path("bad.npy")][..], extra].concat(), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(words) && stderr.trim().lines().count() == 1, "{extra:?}: {stderr}");
        assert!(!std::path::Path::new(&path("bad.npy")).exists());
    }
    lucent::io::write_real(path("flat.npy"), &rand_array(&[5, 6]).view()).unwrap();
    let out = lucent_cli(&["deskew", &path("flat.npy"), "-o", &path("bad.npy")], &[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("3 axes"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// skew_psf moves plane k of a centred blob by −f·(k − kc) columns about the widened centre,
/// keeps it non-negative, and a skewed blob deskewed again is the blob (where both reach).
#[test]
fn skewed_psf_is_the_deskew_undone() {
    let d = Deskew { angle: 31.5, dzdata: 0.3, dxdata: 0.1, ..Default::default() };
    let (nz, ny, nx) = (9usize, 7usize, 15usize);
    let blob = ndarray::Array3::from_shape_fn((nz, ny, nx), |(k, j, i)| {
        let (a, b, c) = (k as f64 - 4.0, j as f64 - 3.0, i as f64 - 7.0);
        (-(a * a / 8.0 + b * b / 3.0 + c * c / 3.0)).exp()
    });
    let skewed = ndimage::skew_psf(&blob.view(), &d).unwrap();
    let f = 31.5f64.to_radians().cos() * 0.3 / 0.1;
    let width = skewed.shape()[2];
    assert_eq!(width, nx + 2 * (f * 4.0).ceil() as usize);
    assert!(skewed.iter().all(|&v| v >= 0.0));
    for k in 0..nz {
        let plane = skewed.index_axis(ndarray::Axis(0), k);
        let (mass, moment) = plane.indexed_iter().fold((0.0, 0.0), |(m, s), ((_, i), &v)| (m + v, s + v * i as f64));
        let want = (width as f64 - 1.0) / 2.0 - f * (k as f64 - 4.0);
        assert!((moment / mass - want).abs() < 0.05, "plane {k}: centroid {:.3}, expected {want:.3}", moment / mass);
    }
}

/// `lucent deconvolve --deskew` with a model PSF equals its steps run one by one: the model made
/// in the deskewed frame (planes dz·sin θ apart) and skewed (`skew_psf`) given as a PSF file,
/// then `lucent deskew` of the result; the refusals.
#[test]
fn cli_deconvolve_then_deskew() {
    use lucent::psf::{Model, Planes, PsfOptions};
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let x = rand_array(&[14, 20, 48]).mapv(|v| v + 0.5);
    lucent::io::write_real(path("raw.npy"), &x.view()).unwrap();
    let d = Deskew { angle: 31.5, dzdata: 0.3, dxdata: 0.1, ..Default::default() };
    let model = lucent::psf::cpu::make_psf(&PsfOptions {
        z: Planes::Count { nz: 7, dz: d.deskewed_dz() },
        nx: 9,
        dxy: 0.1,
        na: 1.1,
        ni: 1.33,
        ni0: 1.33,
        ns: 1.33,
        wvl: 0.52,
        model: Model::Scalar,
        ..Default::default()
    })
    .unwrap();
    // The model as the CLI holds it (float32), then skewed in f64.
    let skewed = ndimage::skew_psf(&model.mapv(|v| v as f32 as f64).view(), &d).unwrap().mapv(|v| v as f32);
    lucent::io::write_real(path("skewed.npy"), &skewed.view().into_dyn()).unwrap();
    let optics = ["--na", "1.1", "--ni", "1.33", "--ni0", "1.33", "--ns", "1.33", "--wvl", "0.52"];
    let (raw, one_path) = (path("raw.npy"), path("one.npy"));
    for extra in [&["-n", "3"][..], &["--method", "wiener", "--balance", "0.05"]] {
        let whole = [
            &["deconvolve", &raw, "-o", &one_path, "--psf-model", "scalar", "--dxy", "0.1", "--dz", "0.3", "--deskew", "31.5", "--psf-size", "7,9"][..],
            &optics,
            extra,
        ]
        .concat();
        let r = lucent_json(&whole, &[]);
        assert_eq!(r["options"]["deskew"]["angle"], 31.5, "{r}");
        lucent_json(&[&["deconvolve", &path("raw.npy"), "-o", &path("a.npy"), "--psf", &path("skewed.npy")][..], extra].concat(), &[]);
        lucent_json(&["deskew", &path("a.npy"), "-o", &path("b.npy"), "--angle", "31.5", "--dzdata", "0.3", "--dxdata", "0.1"], &[]);
        let (one, steps) = (lucent::io::read_real(path("one.npy")).unwrap(), lucent::io::read_real(path("b.npy")).unwrap());
        assert_eq!(r["shape_out"], serde_json::json!(steps.shape()), "{r}");
        let worst = one.iter().zip(&steps).fold(0.0f32, |m, (a, b)| m.max((a - b).abs()));
        assert_eq!(one, steps, "{extra:?}: --deskew differs from its steps by up to {worst:e}");
    }
    lucent::io::write_real(path("flat.npy"), &x.index_axis(ndarray::Axis(0), 0).to_owned().view()).unwrap();
    for (args, words) in [
        (vec!["deconvolve", &path("raw.npy"), "-o", &path("y.npy"), "--psf", &path("skewed.npy"), "--deskew", "31.5", "--dz", "0.3"], "needs --dxy"),
        (vec!["deconvolve", &path("raw.npy"), "-o", &path("y.npy"), "--psf", &path("skewed.npy"), "--dxy", "0.1"], "--dxy belongs to --psf-model or --deskew"),
        (
            vec!["deconvolve", &path("flat.npy"), "-o", &path("y.npy"), "--psf", &path("skewed.npy"), "--deskew", "31.5", "--dz", "0.3", "--dxy", "0.1"],
            "3 axes",
        ),
        (vec!["deconvolve", &path("raw.npy"), "-o", &path("y.npy"), "--psf", &path("skewed.npy"), "--deskew", "0", "--dz", "0.3", "--dxy", "0.1"], "no skew"),
        (vec!["deconvolve", &path("raw.npy"), "-o", &path("y.npy"), "--psf", &path("skewed.npy"), "--coverslip"], "--deskew"),
    ] {
        let out = lucent_cli(&args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(words) && stderr.trim().lines().count() == 1, "{args:?}: {stderr}");
        assert!(!std::path::Path::new(&path("y.npy")).exists());
    }
}
