//! The PSF suite of `lucent bench`, against psfmodels (.device/psf_reference.py): the issue's
//! 128 × 256 × 256 vectorial PSF (psfmodels' defaults otherwise: NA 1.4 oil, 0.6 µm, 3
//! sub-pixels per pixel, planes 0.05 µm apart) and the scalar one, host array out as a user
//! calls `make_psf`. Host wall clock, median after warm-up.

use lucent::psf::{make_psf, Model, Planes, PsfOptions};
use lucent::{Error, Gpu};

use super::register::median_after_warm_up;
use super::{Args, Row};
use crate::Global;

pub fn suite(gpu: &Gpu, args: &Args, global: &Global) -> Result<Vec<Row>, Error> {
    let wanted = |case: &str| args.filter.as_deref().is_none_or(|f| case.contains(f));
    let mut rows = Vec::new();
    for (case, model, pz) in [("psf_vectorial", Model::Vectorial, 0.0), ("psf_scalar", Model::Scalar, 0.0), ("psf_vectorial_pz10", Model::Vectorial, 10.0)] {
        let (nz, nx) = (128usize, 256usize);
        if !wanted(case) {
            continue;
        }
        let o = PsfOptions { z: Planes::Count { nz, dz: 0.05 }, nx, pz, model, ..PsfOptions::default() };
        let ms = median_after_warm_up(5, || make_psf(gpu, &o).map(drop))?;
        if !global.quiet && !global.json {
            eprintln!("{case:<36} {:>12} {ms:>10.3} ms", format!("{nz}x{nx}x{nx}"));
        }
        rows.push(Row {
            case: case.into(),
            shape: vec![nz, nx, nx],
            mib: (nz * nx * nx * 4) as u64 >> 20,
            ms,
            gb_per_s: 0.0,
            percent_of_copy: 0.0,
            timer: "wall",
        });
    }
    // The confocal model: two widefield models (0.488 and 0.52 µm) and the pinhole's
    // convolution in every plane.
    if wanted("psf_confocal") {
        let (nz, nx) = (128usize, 256usize);
        let o = PsfOptions { z: Planes::Count { nz, dz: 0.05 }, nx, ..PsfOptions::default() };
        let c = lucent::psf::Confocal { ex_wvl: 0.488, em_wvl: 0.52, pinhole_au: 1.0, ..Default::default() };
        let ms = median_after_warm_up(5, || lucent::psf::confocal_psf(gpu, &o, &c).map(drop))?;
        if !global.quiet && !global.json {
            eprintln!("{:<36} {:>12} {ms:>10.3} ms", "psf_confocal", format!("{nz}x{nx}x{nx}"));
        }
        rows.push(Row {
            case: "psf_confocal".into(),
            shape: vec![nz, nx, nx],
            mib: (nz * nx * nx * 4) as u64 >> 20,
            ms,
            gb_per_s: 0.0,
            percent_of_copy: 0.0,
            timer: "wall",
        });
    }
    Ok(rows)
}
