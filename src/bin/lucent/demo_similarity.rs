//! The similarity panel of `lucent demo`: a textured Shepp-Logan phantom and a copy turned,
//! scaled and shifted (imreg_dft's `transform_img` geometry), registered back by
//! `lucent::registration::similarity` (Fourier-Mellin); the images before and after, their
//! differences and a checkerboard of the reference and the registered image, and the true
//! registering transform against the found one.

use std::path::Path;
use std::time::Instant;

use lucent::ndimage::AffineMap;
use lucent::phantom::{shepp_logan, Rng};
use lucent::registration::{self, SimilarityOptions};
use lucent::{Error, Gpu};
use ndarray::{Array2, ArrayD, Ix2};
use serde_json::{json, Value};

use crate::demo::Size;
use crate::demo_figure::{self, Panel};
use crate::demo_report::Section;
use crate::report::ms_since;

/// The transform that makes the moving image: scale, angle (degrees), shift (rows, columns).
pub const SCALE: f64 = 1.15;
pub const ANGLE: f64 = 23.0;
pub const TVEC: [f64; 2] = [6.5, -4.25];

/// The image's side.
fn side(size: Size) -> usize {
    match size {
        Size::Full => 256,
        Size::Small => 128,
    }
}

/// The Shepp-Logan phantom plus smoothed noise (σ 2 px, standard deviation 0.05): the phantom's
/// few flat regions give the correlations little to hold; the texture gives them plenty.
fn textured(gpu: &Gpu, n: usize, seed: u64) -> Result<Array2<f32>, Error> {
    let mut rng = Rng::new(seed ^ 0x51_41);
    let noise = Array2::from_shape_fn((n, n), |_| rng.uniform() as f32 - 0.5);
    let smooth = lucent::ndimage::gaussian_filter(gpu, &noise, &[2.0], lucent::ndimage::Boundary::Reflect)?;
    let sd = (smooth.iter().map(|&v| (v as f64).powi(2)).sum::<f64>() / smooth.len() as f64).sqrt();
    let phantom = shepp_logan::image(n);
    Ok(Array2::from_shape_fn((n, n), |p| (phantom[p] + 0.05 * smooth[p] as f64 / sd) as f32))
}

/// The map's input point for output `p`.
fn apply(m: &AffineMap, p: [f64; 2]) -> [f64; 2] {
    [0, 1].map(|i| m.offset[i] + m.matrix[i][0] * p[0] + m.matrix[i][1] * p[1])
}

/// The output point the map sends to input `q`.
fn solve(m: &AffineMap, q: [f64; 2]) -> [f64; 2] {
    let a = &m.matrix;
    let det = a[0][0] * a[1][1] - a[0][1] * a[1][0];
    let (u, v) = (q[0] - m.offset[0], q[1] - m.offset[1]);
    [(a[1][1] * u - a[0][1] * v) / det, (a[0][0] * v - a[1][0] * u) / det]
}

/// The scale and angle that register the moving image back: the inverse turn and the zoom the
/// moving image's map actually made (imreg_dft's canvas rounds its size).
fn truth(n: usize) -> Result<(f64, f64), Error> {
    let made = registration::similarity_map(&[n, n], SCALE, ANGLE, TVEC)?;
    Ok(((made.matrix[0][0] * made.matrix[1][1] - made.matrix[0][1] * made.matrix[1][0]).sqrt(), -ANGLE))
}

/// The shift that, with `scale` and `angle`, brings the image's centre back where it was. It
/// depends on the angle: imreg_dft's turned canvas, and so its cut, changes size with it.
fn true_tvec(n: usize, scale: f64, angle: f64) -> Result<[f64; 2], Error> {
    let made = registration::similarity_map(&[n, n], SCALE, ANGLE, TVEC)?;
    let unshifted = registration::similarity_map(&[n, n], scale, angle, [0.0, 0.0])?;
    let c = (n as f64 - 1.0) / 2.0;
    // The registering map sends c to the moving image's point q that shows the reference's c:
    // unshifted(c − tvec) = q.
    let back = solve(&unshifted, solve(&made, [c, c]));
    Ok([c - back[0], c - back[1]])
}

/// How far the found registering transform followed by the moving image's map moves the image's
/// centre (0 for a perfect registration), in pixels.
fn centre_error(n: usize, found: &registration::Similarity) -> Result<f64, Error> {
    let made = registration::similarity_map(&[n, n], SCALE, ANGLE, TVEC)?;
    let back = registration::similarity_map(&[n, n], found.scale, found.angle, found.tvec)?;
    let c = (n as f64 - 1.0) / 2.0;
    let p = apply(&made, apply(&back, [c, c]));
    Ok((p[0] - c).hypot(p[1] - c))
}

/// ‖a − b‖ / ‖b‖ over the central half, where the moving image has content after any turn.
fn rms_difference(a: &Array2<f32>, b: &Array2<f32>) -> f64 {
    let n = b.nrows();
    let (mut num, mut den) = (0.0, 0.0);
    for ((i, j), &want) in b.indexed_iter() {
        if (n / 4..3 * n / 4).contains(&i) && (n / 4..3 * n / 4).contains(&j) {
            num += ((a[[i, j]] - want) as f64).powi(2);
            den += (want as f64).powi(2);
        }
    }
    (num / den).sqrt()
}

/// Registers the pair, writes the figure and the images into `dir`, returns the report's section
/// (JSON) and the page's; without a GPU (similarity has no CPU form) the panel is left out.
pub fn run(gpu: Option<&Gpu>, dir: &Path, seed: u64, size: Size) -> Result<(Value, Option<Section>), Error> {
    let Some(gpu) = gpu else {
        return Ok((json!({ "skipped": "similarity registration runs on a GPU only" }), None));
    };
    let n = side(size);
    let reference = textured(gpu, n, seed)?;
    let made = registration::transform_similarity(gpu, &reference.view().into_dyn(), SCALE, ANGLE, TVEC, 0.0, 3)?;
    let t = Instant::now();
    let found = registration::similarity(gpu, &reference.view().into_dyn(), &made.view(), &SimilarityOptions::default())?;
    let register_ms = ms_since(t);
    let registered = registration::transform_similarity(gpu, &made.view(), found.scale, found.angle, found.tvec, found.bgval, 3)?;
    let (moving, registered) = (two_d(made), two_d(registered));
    let (true_scale, true_angle) = truth(n)?;
    let true_tvec = true_tvec(n, found.scale, found.angle)?;
    let centre = centre_error(n, &found)?;
    let (before, after) = (rms_difference(&moving, &reference), rms_difference(&registered, &reference));

    let range = reference.iter().fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    let spread = range.1 - range.0;
    let checker = Array2::from_shape_fn((n, n), |(i, j)| if (i / (n / 8) + j / (n / 8)).is_multiple_of(2) { reference[[i, j]] } else { registered[[i, j]] });
    let axes = ("y (pixels)", "x (pixels)");
    let grey = "intensity";
    let difference = "difference from the reference";
    let panels = vec![
        Panel::new("Reference", reference.clone(), (1.0, 1.0), axes, grey).with_range(range),
        Panel::new(&format!("Moving: turned {ANGLE}°, scaled {SCALE}, shifted"), moving.clone(), (1.0, 1.0), axes, grey).with_range(range),
        Panel::new("Moving, registered", registered.clone(), (1.0, 1.0), axes, grey).with_range(range),
        Panel::new("Moving − reference, before", &moving - &reference, (1.0, 1.0), axes, difference).with_range((-spread / 2.0, spread / 2.0)),
        Panel::new("Registered − reference, after", &registered - &reference, (1.0, 1.0), axes, difference).with_range((-spread / 2.0, spread / 2.0)),
        Panel::new("Checkerboard: reference | registered", checker, (1.0, 1.0), axes, grey).with_range(range),
    ];
    let figure = demo_figure::images(
        "similarity.png",
        "A turned, scaled and shifted pair",
        "The reference, the moving image and the moving image registered by the found transform (one grey scale); the differences from the reference before and after registration (half the reference's range either side); and a checkerboard of squares taken alternately from the reference and the registered image, where a misregistration shows as broken edges. Outside the moving image's field the registered image is its border value. Enlarged by nearest neighbour.",
        &panels,
        3,
    )?;
    let arrays = [("similarity_reference.npy", reference.view().into_dyn()), ("similarity_moving.npy", moving.view().into_dyn())];
    let files = demo_figure::write_all(dir, std::slice::from_ref(&figure), &arrays)?;
    let section = Section {
        title: "Registration: rotation, scale and translation".into(),
        text: format!(
            "A Shepp-Logan phantom of {n}×{n} pixels with smoothed noise for texture, and a copy turned by {ANGLE}°, scaled by {SCALE} and shifted by {TVEC:?} pixels (imreg_dft's transform_img). \
             The transform that registers the copy back found by the Fourier-Mellin method (imreg_dft's similarity): the log-polar magnitude spectra phase-correlated for the angle and the scale, then the translation by cross-correlation, upsampled 20 times."
        ),
        numbers: vec![
            ("angle (degrees), true | found".into(), format!("{true_angle:.3} | {:.3}", found.angle)),
            ("scale, true | found".into(), format!("{true_scale:.5} | {:.5}", found.scale)),
            ("shift (rows, columns) for the found angle and scale, true | found".into(), format!("({:.2}, {:.2}) | ({:.2}, {:.2})", true_tvec[0], true_tvec[1], found.tvec[0], found.tvec[1])),
            ("registration error of the image centre".into(), format!("{centre:.3} px")),
            ("relative RMS difference over the central half, before | after".into(), format!("{before:.3} | {after:.3}")),
            ("similarity registration".into(), format!("{register_ms:.0} ms")),
        ],
        figures: vec![figure],
    };
    let json = json!({
        "shape": [n, n],
        "made": { "scale": SCALE, "angle": ANGLE, "tvec": TVEC },
        "true": { "scale": true_scale, "angle": true_angle, "tvec_for_found_angle_and_scale": true_tvec },
        "found": found,
        "centre_error_px": centre,
        "relative_rms_difference": { "before": before, "after": after },
        "ms": { "register": register_ms },
        "files": files,
        "panels": "similarity.png: reference | moving | registered; moving − reference | registered − reference | a checkerboard of the reference and the registered image",
    });
    Ok((json, Some(section)))
}

fn two_d(x: ArrayD<f32>) -> Array2<f32> {
    x.into_dimensionality::<Ix2>().expect("a 2D image")
}
