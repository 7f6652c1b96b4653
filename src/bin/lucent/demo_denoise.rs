//! The denoising panel of `lucent demo`: the moving-edge series (an intensity ramp, a step
//! moving half a voxel per frame, a thin tube) with Gaussian noise, denoised by adaptive
//! filtering over 3 axes (each frame alone) and over all 4 together, and by block matching
//! across neighbouring frames (BM4D's groups from t ± 1), with the PSNR of each, over the
//! series and per frame.

use std::path::Path;
use std::time::Instant;

use lucent::denoise::Options;
use lucent::phantom::dynamic;
use lucent::{Error, Gpu};
use ndarray::{s, Array2, ArrayD, Axis};
use serde_json::{json, Value};

use crate::demo::Size;
use crate::demo_figure::{self, Mark, Panel, Plot, Series, COLOURS};
use crate::demo_report::Section;
use crate::report::ms_since;

/// The noise and the edge's speed (voxels per frame).
const SIGMA: f64 = 0.25;
const SPEED: f64 = 0.5;

/// The series' shape (t, z, y, x).
fn shape(size: Size) -> [usize; 4] {
    match size {
        Size::Full => [16, 32, 48, 48],
        Size::Small => [8, 16, 24, 24],
    }
}

/// Denoises the series both ways, writes the figures into `dir` and returns the report's
/// section (JSON) and the page's.
pub fn run(gpu: Option<&Gpu>, dir: &Path, seed: u64, size: Size) -> Result<(Value, Section), Error> {
    let start = Instant::now();
    let shape = shape(size);
    let clean = dynamic::moving_edge(shape, SPEED);
    let noisy = dynamic::noisy(&clean, SIGMA, seed ^ 0xDE_0153).mapv(|v| v as f32).into_dyn();
    let clean = clean.into_dyn();
    let mut denoised = Vec::new();
    let mut times = Vec::new();
    for dims in [3, 4] {
        let o = Options { dims: Some(dims), ..Options::default() };
        let t = Instant::now();
        let y = match gpu {
            Some(gpu) => lucent::denoise::adaptive_filter(gpu, &noisy, &o)?,
            None => lucent::denoise::cpu::adaptive_filter(&noisy.mapv(f64::from), &o)?.mapv(|v| v as f32),
        };
        times.push(ms_since(t));
        denoised.push(y);
    }
    // Block matching with the noise's σ known, groups gathered across t ± 1 (the small demo
    // searches ±4 voxels instead of ±7: a few seconds on a software GPU).
    let mut profile = lucent::denoise::Bm4dProfile::for_data(noisy.shape())?;
    if size == Size::Small {
        (profile.search_window_ht, profile.search_window_wiener) = ([4; 3], [4; 3]);
    }
    let t = Instant::now();
    let bm = match gpu {
        Some(gpu) => lucent::denoise::bm4d(gpu, &noisy, &lucent::denoise::Bm4dNoise::Sigma(SIGMA), Some(&profile), lucent::denoise::Bm4dStage::All)?,
        None => lucent::denoise::cpu::bm4d(&noisy.mapv(f64::from).view(), &lucent::denoise::Bm4dNoise::Sigma(SIGMA), Some(&profile), false, None)?
            .mapv(|v| v as f32),
    };
    times.push(ms_since(t));
    denoised.push(bm);
    let psnr = |x: &ArrayD<f32>| dynamic::psnr(&x.mapv(f64::from).view(), &clean.view());
    // Each frame against its clean frame.
    let per_frame = |x: &ArrayD<f32>| -> Vec<(f64, f64)> {
        let x = x.mapv(f64::from);
        (0..shape[0]).map(|t| (t as f64, dynamic::psnr(&x.index_axis(Axis(0), t), &clean.index_axis(Axis(0), t)))).collect()
    };
    let slice = |x: &ArrayD<f32>| -> Array2<f32> { x.slice(s![shape[0] / 2, shape[1] / 2, .., ..]).to_owned() };
    let clean32 = clean.mapv(|v| v as f32);
    let (lo, hi) = clean32.iter().fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
    let axes = ("y (voxels)", "x (voxels)");
    let db = [psnr(&noisy), psnr(&denoised[0]), psnr(&denoised[1]), psnr(&denoised[2])];
    let titles = [
        format!("Noisy ({:.1} dB)", db[0]),
        format!("Adaptive over 3 axes ({:.1} dB)", db[1]),
        format!("Adaptive over 4 axes ({:.1} dB)", db[2]),
        format!("Block matching, t ± 1 ({:.1} dB)", db[3]),
    ];
    let panels = [(titles[0].as_str(), &noisy), (&titles[1], &denoised[0]), (&titles[2], &denoised[1]), (&titles[3], &denoised[2]), ("Clean", &clean32)]
        .map(|(title, x)| Panel::new(title, slice(x), (1.0, 1.0), axes, "intensity").with_range((lo, hi)));
    let curves = [("noisy", &noisy), ("adaptive over 3 axes", &denoised[0]), ("adaptive over 4 axes", &denoised[1]), ("block matching", &denoised[2])];
    let series =
        curves.iter().zip(COLOURS).map(|((name, x), colour)| Series { name: name.to_string(), points: per_frame(x), mark: Mark::Line, colour }).collect();
    let (t, z) = (shape[0] / 2, shape[1] / 2);
    let figures = vec![
        demo_figure::images(
            "denoise.png",
            "One slice of the series",
            &format!("Frame {t}, plane z = {z}: the moving edge, the ramp and the thin tube, on the clean series' grey scale (values outside shown black or white); enlarged by nearest neighbour. Each title gives the whole series' PSNR."),
            &panels,
            3,
        )?,
        demo_figure::plots(
            "denoise_psnr.png",
            "PSNR per frame",
            &format!("Each frame's peak signal-to-noise ratio against its clean frame (peak: that clean frame's range). Filtering over time too (adaptive over 4 axes, block matching across t ± 1) draws on the neighbouring frames, where the edge moves {SPEED} voxel per frame; the first and last frames have neighbours on one side only."),
            &[Plot { title: "PSNR of each frame".into(), x: "frame (t)".into(), y: "PSNR (dB)".into(), series, log_y: false }],
            (1100, 420),
        )?,
    ];
    let arrays = [
        ("series_noisy.npy", noisy.view()),
        ("series_denoised_3d.npy", denoised[0].view()),
        ("series_denoised_4d.npy", denoised[1].view()),
        ("series_block_matching.npy", denoised[2].view()),
    ];
    let files = demo_figure::write_all(dir, &figures, &arrays)?;
    let total_ms = ms_since(start);
    let section = Section {
        title: "Denoising: 4D adaptive filtering and block matching".into(),
        text: format!(
            "A series of {shape:?} voxels (t, z, y, x): an intensity ramp, a step edge moving {SPEED} voxel per frame and a thin tube, with Gaussian noise of σ = {SIGMA}; \
             denoised by adaptive filtering (Eklund, Andersson and Knutsson 2011) over each frame's 3 axes alone and over all 4 together, \
             and by block matching and collaborative filtering (BM4D with σ known, groups gathered from the frames either side too)."
        ),
        numbers: vec![
            ("PSNR, noisy".into(), format!("{:.1} dB", db[0])),
            ("PSNR, denoised over 3 axes".into(), format!("{:.1} dB", db[1])),
            ("PSNR, denoised over 4 axes".into(), format!("{:.1} dB", db[2])),
            ("PSNR, block matching across t ± 1".into(), format!("{:.1} dB", db[3])),
            ("denoising over 3 axes".into(), format!("{:.0} ms", times[0])),
            ("denoising over 4 axes".into(), format!("{:.0} ms", times[1])),
            ("block matching".into(), format!("{:.0} ms", times[2])),
        ],
        figures,
    };
    let json = json!({
        "shape": shape,
        "sigma": SIGMA,
        "speed_voxels_per_frame": SPEED,
        "psnr_db": { "noisy": db[0], "denoised_3d": db[1], "denoised_4d": db[2], "block_matching": db[3] },
        "ms": { "total": total_ms, "denoise_3d": times[0], "denoise_4d": times[1], "block_matching": times[2] },
        "files": files,
        "panels": "denoise.png: the middle slice of the middle frame, noisy | adaptive over 3 axes | over 4 axes | block matching | clean, each with its PSNR; denoise_psnr.png: each frame's PSNR",
    });
    Ok((json, section))
}
