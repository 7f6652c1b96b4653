//! The beamline pipeline (`tomography::reconstruct`, `lucent recon`): the streamed result equals
//! its steps done one by one (TomoPy's references, then FBP), in one band or many; ring removal
//! takes the rings away (artefact energy down ≥ 10×); DXchange HDF5 files round-trip; the CLI
//! writes what the library computes; bad input is refused before anything is written.

use crate::common;
use common::*;
use lucent::io::hdf5::{Part as H5Part, Scan, ScanWriter};
use lucent::tomography::{self, cpu, ArrayScan, Center, Filter, Geometry, ReconstructOptions, Samples, Stripe};
use lucent::GpuOptions;
use ndarray::{s, Array3, Axis};

/// A DXchange-like scan of `rows` slices of an n² phantom at `angles` angles over [0, π):
/// 16-bit counts I0 · gain · exp(−p) + dark, flats without the data's column gains (so columns
/// `stripes` carry rings), darks of 100.
struct Synthetic {
    data: Array3<u16>,
    flat: Array3<u16>,
    dark: Array3<u16>,
}

fn synthetic(n: usize, angles: usize, rows: usize, stripes: &[(usize, f64)]) -> Synthetic {
    let gpu = gpu();
    let g = Geometry::new(n, Geometry::equally_spaced(angles), None, None).unwrap();
    // Seen through a detector of finite resolution: edges a pixel or two wide.
    let sharp = lucent::phantom::shepp_logan::image(n).mapv(|v| v as f32);
    let phantom = lucent::ndimage::gaussian_filter(gpu, &sharp, &[1.5, 1.5], lucent::ndimage::Boundary::Nearest).unwrap();
    let mut data = Array3::<u16>::zeros((angles, rows, n));
    for r in 0..rows {
        let slice = phantom.mapv(|v| v * (1.0 + 0.15 * r as f32) * 2.0 / n as f32);
        let sinogram = tomography::radon(gpu, &slice, &g).unwrap();
        for a in 0..angles {
            for c in 0..n {
                let gain = stripes.iter().find(|s| s.0 == c).map_or(1.0, |s| s.1);
                data[[a, r, c]] = (20000.0 * gain * (-sinogram[[a, c]] as f64).exp() + 100.0).round() as u16;
            }
        }
    }
    let flat = Array3::from_shape_fn((3, rows, n), |(i, r, c)| (20100 + (i + r + c) % 3) as u16);
    let dark = Array3::from_elem((2, rows, n), 100u16);
    Synthetic { data, flat, dark }
}

fn scan_of(s: &Synthetic) -> ArrayScan {
    ArrayScan::new(Samples::U16(s.data.clone()), Some(Samples::U16(s.flat.clone())), Some(Samples::U16(s.dark.clone())), None).unwrap()
}

/// What the pipeline should compute: TomoPy's normalize and −log (f64), then FBP slice by slice.
fn by_steps(s: &Synthetic, center: f64) -> Array3<f32> {
    by_steps_with(s, center, |x| x)
}

/// [`by_steps`] with `stripe` applied to each sinogram (angles, cols) before FBP.
fn by_steps_with(s: &Synthetic, center: f64, stripe: impl Fn(ndarray::Array2<f64>) -> ndarray::Array2<f64>) -> Array3<f32> {
    let f = |a: &Array3<u16>| a.mapv(f64::from);
    let t = cpu::normalize(f(&s.data).view(), f(&s.flat).view(), f(&s.dark).view(), None).unwrap();
    let p = cpu::minus_log(t.view(), 1e-6).unwrap();
    let each: Vec<_> = p.axis_iter(Axis(1)).map(|sino| stripe(sino.to_owned()).mapv(|v| v as f32)).collect();
    let sinograms = ndarray::stack(Axis(0), &each.iter().map(|a| a.view()).collect::<Vec<_>>()).unwrap();
    let (angles, n) = (s.data.shape()[0], s.data.shape()[2]);
    let g = Geometry::new(n, Geometry::equally_spaced(angles), None, Some(center)).unwrap();
    tomography::fbp(gpu(), &sinograms, &g, Filter::Ramp).unwrap()
}

#[test]
fn the_pipeline_is_its_steps_in_one_band_or_many() {
    let s = synthetic(48, 72, 7, &[]);
    let want = by_steps(&s, 23.25);
    let options = ReconstructOptions { center: Center::At(23.25), ..ReconstructOptions::default() };
    // Buffers of 64 KiB: bands of a row or two.
    let small = open(GpuOptions { max_buffer_bytes: Some(64 << 10), ..GpuOptions::from_env().unwrap() });
    for (gpu, many) in [(gpu(), false), (&small, true)] {
        let (got, report) = tomography::reconstruct_array(gpu, &scan_of(&s), &options, &mut |_| {}).unwrap();
        assert_eq!(report.bands > 1, many, "{report:?}");
        assert_eq!(report.center, 23.25);
        assert_rel_l2(&got.into_dyn(), &want.mapv(f64::from).into_dyn(), 1e-5, &format!("{} bands", report.bands));
    }
    // Gridding FBP in the pipeline: each slice as tomography::fbp grids it.
    let gridrec = ReconstructOptions { method: tomography::Method::Gridrec, ..options };
    let (got, _) = tomography::reconstruct_array(gpu(), &scan_of(&s), &gridrec, &mut |_| {}).unwrap();
    let f = |a: &Array3<u16>| a.mapv(f64::from);
    let t = cpu::normalize(f(&s.data).view(), f(&s.flat).view(), f(&s.dark).view(), None).unwrap();
    let p = cpu::minus_log(t.view(), 1e-6).unwrap().mapv(|v| v as f32).permuted_axes([1, 0, 2]).as_standard_layout().to_owned();
    let g = Geometry::new(48, Geometry::equally_spaced(72), None, Some(23.25)).unwrap().with_method(tomography::Method::Gridrec);
    let want = tomography::fbp(gpu(), &p, &g, Filter::Ramp).unwrap();
    assert_rel_l2(&got.into_dyn(), &want.mapv(f64::from).into_dyn(), 1e-5, "gridrec");
}

/// ‖x − clean‖² over the slices' inscribed disks.
fn artefact_energy(x: &Array3<f32>, clean: &Array3<f32>) -> f64 {
    let mid = (x.shape()[1] as f64 - 1.0) / 2.0;
    let inside = |r: usize, c: usize| ((r as f64 - mid).powi(2) + (c as f64 - mid).powi(2)).sqrt() < mid - 2.0;
    (x - clean).indexed_iter().filter(|((_, r, c), _)| inside(*r, *c)).map(|(_, v)| (*v as f64).powi(2)).sum()
}

#[test]
fn ring_removal_takes_the_rings_away() {
    let (n, angles, rows) = (96, 144, 2);
    let clean_scan = synthetic(n, angles, rows, &[]);
    let ringed = synthetic(n, angles, rows, &[(21, 1.06), (37, 0.95), (52, 1.05), (70, 0.94)]);
    let at = |stripe| ReconstructOptions { center: Center::At(31.5), stripe, ..ReconstructOptions::default() };
    let clean = tomography::reconstruct_array(gpu(), &scan_of(&clean_scan), &at(Stripe::None), &mut |_| {}).unwrap().0;
    let rings = tomography::reconstruct_array(gpu(), &scan_of(&ringed), &at(Stripe::None), &mut |_| {}).unwrap().0;
    let removed = tomography::reconstruct_array(gpu(), &scan_of(&ringed), &at(Stripe::Sorting { size: 5, dim: 1 }), &mut |_| {}).unwrap().0;
    let (before, after) = (artefact_energy(&rings, &clean), artefact_energy(&removed, &clean));
    assert!(after * 10.0 <= before, "ring energy {before:e} → {after:e}");
    // And a scan without rings is barely touched (9e-5 against the rings' 1e-2 when written).
    let smoothed = tomography::reconstruct_array(gpu(), &scan_of(&clean_scan), &at(Stripe::Sorting { size: 5, dim: 1 }), &mut |_| {}).unwrap().0;
    let touched = artefact_energy(&smoothed, &clean);
    assert!(touched * 50.0 <= before, "the clean scan changed by {touched:e}");
    // The large-stripe method in the pipeline is TomoPy's on each sinogram.
    let large = Stripe::Large { snr: 3.0, size: 11, drop_ratio: 0.1, norm: true };
    let removed = tomography::reconstruct_array(gpu(), &scan_of(&ringed), &at(large), &mut |_| {}).unwrap().0;
    let want = by_steps_with(&ringed, 31.5, |x| cpu::remove_large_stripe(x.view(), 3.0, 11, 0.1, true).unwrap());
    assert_rel_l2(&removed.into_dyn(), &want.mapv(f64::from).into_dyn(), 1e-5, "large stripes");
    // So is the Fourier-wavelet method (on this small scan its damping takes more of the
    // object than the rings weigh: 5e-2 against 1e-2 when written, as TomoPy's does).
    let fw = Stripe::Fw { level: None, sigma: 2.0, pad: true };
    let removed = tomography::reconstruct_array(gpu(), &scan_of(&ringed), &at(fw), &mut |_| {}).unwrap().0;
    let want = by_steps_with(&ringed, 31.5, |x| cpu::remove_stripe_fw(x.view(), None, 2.0, true).unwrap());
    assert_rel_l2(&removed.into_dyn(), &want.mapv(f64::from).into_dyn(), 1e-5, "Fourier-wavelet");
}

#[test]
fn dxchange_files_round_trip() {
    let dir = std::env::temp_dir().join(format!("lucent-recon-h5-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("scan.h5");
    let s = synthetic(20, 9, 5, &[(7, 1.1)]);
    let theta: Vec<f64> = (0..9).map(|i| i as f64 * 20.0).collect();
    let w = ScanWriter::create(&path, [9, 5, 20], 3, 2, &theta).unwrap();
    // In pieces of images and of rows, as the benchmark's generator writes.
    w.write(H5Part::Data, [0, 0], &s.data.slice(s![..4, .., ..])).unwrap();
    w.write(H5Part::Data, [4, 0], &s.data.slice(s![4.., ..2, ..])).unwrap();
    w.write(H5Part::Data, [4, 2], &s.data.slice(s![4.., 2.., ..])).unwrap();
    w.write(H5Part::Flat, [0, 0], &s.flat.view()).unwrap();
    w.write(H5Part::Dark, [0, 0], &s.dark.view()).unwrap();
    assert!(!path.exists(), "written in place before it was finished");
    w.finish().unwrap();
    let scan = Scan::open(&path).unwrap();
    assert_eq!(scan.shape(), [9, 5, 20]);
    assert_eq!(scan.theta_degrees().unwrap(), &theta[..]);
    assert_eq!(scan.read(H5Part::Data, None, 0..5).unwrap(), Samples::U16(s.data.clone()));
    assert_eq!(scan.read(H5Part::Data, Some(2..7), 1..4).unwrap(), Samples::U16(s.data.slice(s![2..7, 1..4, ..]).to_owned()));
    assert_eq!(scan.read(H5Part::Flat, None, 2..3).unwrap(), Samples::U16(s.flat.slice(s![.., 2..3, ..]).to_owned()));
    // io::read gives the projections as f32.
    let all = lucent::io::read_real(&path).unwrap();
    assert_eq!(all, s.data.mapv(f32::from).into_dyn());
    // An unfinished writer leaves nothing.
    let other = dir.join("unfinished.h5");
    drop(ScanWriter::create(&other, [2, 2, 2], 1, 1, &[0.0, 90.0]).unwrap());
    assert!(std::fs::read_dir(&dir).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().contains("unfinished")));
    // Truncated: refused on opening, naming the dataset.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.join("cut.h5");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let e = Scan::open(&cut).map(|_| ()).unwrap_err().to_string();
    assert!(e.contains("cut.h5"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn cli_recon_writes_what_the_library_computes() {
    let dir = std::env::temp_dir().join(format!("lucent-recon-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let s = synthetic(32, 40, 4, &[(11, 1.05)]);
    let theta: Vec<f64> = (0..40).map(|i| i as f64 * 180.0 / 40.0).collect();
    let w = ScanWriter::create(p("scan.h5"), [40, 4, 32], 3, 2, &theta).unwrap();
    w.write(H5Part::Data, [0, 0], &s.data.view()).unwrap();
    w.write(H5Part::Flat, [0, 0], &s.flat.view()).unwrap();
    w.write(H5Part::Dark, [0, 0], &s.dark.view()).unwrap();
    w.finish().unwrap();
    let options = ReconstructOptions { center: Center::At(15.5), stripe: Stripe::Sorting { size: 5, dim: 1 }, ..ReconstructOptions::default() };
    let want = tomography::reconstruct_array(gpu(), &scan_of(&s), &options, &mut |_| {}).unwrap().0;
    for out in ["v.npy", "v.tif", "v.zarr"] {
        let report = lucent_json(&["recon", &p("scan.h5"), "-o", &p(out), "--center", "15.5", "--stripe", "sorting", "--stripe-size", "5"], &[]);
        assert_eq!(report["command"], "recon");
        assert_eq!(report["shape_out"], serde_json::json!([4, 32, 32]), "{report}");
        assert_eq!(report["details"]["center"], 15.5);
        let got = lucent::io::read_real(p(out)).unwrap();
        assert_eq!(got, want.clone().into_dyn(), "{out}");
    }
    // The same scan as a Zarr array (read band by band) with flats and darks in .npy files.
    lucent::io::write_real(p("data.zarr"), &s.data.mapv(f32::from).into_dyn().view()).unwrap();
    lucent::io::write_real(p("flat.npy"), &s.flat.mapv(f32::from).into_dyn().view()).unwrap();
    lucent::io::write_real(p("dark.npy"), &s.dark.mapv(f32::from).into_dyn().view()).unwrap();
    let args = [
        "recon",
        &p("data.zarr"),
        "--flat",
        &p("flat.npy"),
        "--dark",
        &p("dark.npy"),
        "-o",
        &p("z.npy"),
        "--center",
        "15.5",
        "--stripe",
        "sorting",
        "--stripe-size",
        "5",
    ];
    lucent_json(&args, &[]);
    assert_eq!(lucent::io::read_real(p("z.npy")).unwrap(), want.clone().into_dyn(), "from Zarr");
    // Half precision (--dtype float16, packed on the device): each value the nearest half or
    // its neighbour on the other side, in .npy ('<f2') and TIFF (16-bit IEEE float) files.
    for out in ["h.npy", "h.tif"] {
        let report =
            lucent_json(&["recon", &p("scan.h5"), "-o", &p(out), "--center", "15.5", "--stripe", "sorting", "--stripe-size", "5", "--dtype", "float16"], &[]);
        assert_eq!(report["options"]["dtype"], "float16");
        let got = lucent::io::read_real(p(out)).unwrap();
        assert_eq!(got.shape(), want.shape());
        if out.ends_with(".npy") {
            let header = std::fs::read(p(out)).unwrap();
            assert!(String::from_utf8_lossy(&header[..128]).contains("'descr': '<f2'"), "{out}: not float16");
        }
        for (&g, &w) in got.iter().zip(want.iter()) {
            // Halves hold 11 significant bits: a step of 2^-10 of the value (2^-24 near 0).
            let step = (w.abs() * 2f32.powi(-10)).max(2f32.powi(-24));
            assert!((g - w).abs() <= step, "{out}: {g} for {w}");
        }
        assert!(got.iter().zip(want.iter()).any(|(g, w)| g != w), "{out}: no value rounded (still float32?)");
    }
    // Refusals, nothing written: flats beside an HDF5 scan, a bad centre, a PNG volume.
    for (args, needle) in
        [(vec!["--flat", "f.npy"], "holds its own flat"), (vec!["--center", "middle"], "--center middle"), (vec!["--outliers", "-3"], "outlier threshold")]
    {
        let (scan, bad) = (p("scan.h5"), p("bad.npy"));
        let mut all = vec!["recon", &scan, "-o", &bad];
        all.extend(args.iter().copied());
        let out = lucent_cli(&all, &[]);
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success() && err.contains(needle), "{args:?}: {err}");
        assert!(!dir.join("bad.npy").exists());
    }
    let out = lucent_cli(&["recon", &p("scan.h5"), "-o", &p("bad.zarr"), "--center", "15.5", "--dtype", "float16"], &[]);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success() && err.contains("float16 volume is written to .npy or .tif"), "{err}");
    assert!(!dir.join("bad.zarr").exists());
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn automatic_centre_and_axis_off_the_middle() {
    // The scan's axis 2 pixels right of the detector's middle: the automatic centre finds it
    // (within half a pixel) and the reconstruction equals that at the centre found.
    let (n, angles, rows) = (64, 90, 2);
    let s = synthetic(n, angles, rows, &[]);
    let shifted = Synthetic {
        data: ndarray::concatenate![Axis(2), s.data.slice(s![.., .., ..2]).to_owned(), s.data.slice(s![.., .., ..n - 2]).to_owned()],
        flat: s.flat.clone(),
        dark: s.dark.clone(),
    };
    let (got, report) = tomography::reconstruct_array(gpu(), &scan_of(&shifted), &ReconstructOptions::default(), &mut |_| {}).unwrap();
    assert!((report.center - 33.5).abs() <= 0.5, "centre {}", report.center);
    assert_rel_l2(&got.into_dyn(), &by_steps(&shifted, report.center).mapv(f64::from).into_dyn(), 1e-5, "at the centre found");
}

#[test]
fn phase_retrieval_in_the_pipeline_is_tomopys() {
    // Paganin on whole projections (a first pass through host memory), then −log and FBP.
    let s = synthetic(40, 36, 6, &[]);
    let paganin = tomography::Paganin { pixel_size: 1e-4, distance: 30.0, energy: 25.0, alpha: 1e-3, pad: true };
    let options = ReconstructOptions { center: Center::At(19.5), paganin: Some(paganin), ..ReconstructOptions::default() };
    let (got, report) = tomography::reconstruct_array(gpu(), &scan_of(&s), &options, &mut |_| {}).unwrap();
    assert!(report.phase_ms > 0.0);
    let f = |a: &Array3<u16>| a.mapv(f64::from);
    let t = cpu::normalize(f(&s.data).view(), f(&s.flat).view(), f(&s.dark).view(), None).unwrap();
    let phase = cpu::retrieve_phase(t.view(), 1e-4, 30.0, 25.0, 1e-3, true).unwrap();
    let p = cpu::minus_log(phase.view(), 1e-6).unwrap().mapv(|v| v as f32);
    let sinograms = p.permuted_axes([1, 0, 2]).as_standard_layout().to_owned();
    let g = Geometry::new(40, Geometry::equally_spaced(36), None, Some(19.5)).unwrap();
    let want = tomography::fbp(gpu(), &sinograms, &g, Filter::Ramp).unwrap();
    assert_rel_l2(&got.into_dyn(), &want.mapv(f64::from).into_dyn(), 1e-5, "Paganin");
}
