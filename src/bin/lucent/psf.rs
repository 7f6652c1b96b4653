//! `lucent psf`: a widefield PSF model (psfmodels 0.3.3's `make_psf`: vectorial, scalar or
//! Gaussian) written to a file, on the GPU, or with `--device cpu` or no adapter on the f64
//! reference.

use std::path::PathBuf;
use std::time::Instant;

use lucent::psf::{self, Model, Planes, PsfOptions};
use lucent::{io, Error};
use serde_json::json;

use crate::report::{self, Report, Stages};
use crate::Global;

#[derive(clap::Args)]
#[command(after_help = "Every length is in µm; the names and defaults are psfmodels'.

Examples:
  lucent psf -o psf.tif
  lucent psf -o psf.npy --nz 65 --dz 0.2 --nx 127 --dxy 0.1 --na 1.1 --ni 1.33 --ni0 1.33 --ns 1.33 --wvl 0.52 --pz 5
  lucent psf -o psf.npy --z 4.0,4.5,5.0 --model scalar --pz 4.5 --json
  lucent psf -o confocal.tif --pinhole-au 1 --ex-wvl 0.488 --em-wvl 0.52 --na 1.2 --ni 1.33 --ni0 1.33 --ns 1.33")]
pub struct Args {
    /// Output: float32 .npy, .tif/.tiff or .zarr (planes × nx × nx).
    #[arg(short, long)]
    output: PathBuf,
    /// The model: vectorial (Aguet et al. 2009), scalar (Gibson-Lanni) or gaussian.
    #[arg(long, value_enum, default_value_t = Model::Vectorial)]
    model: Model,
    /// Planes centred on the source (psfmodels' integer z).
    #[arg(long, default_value_t = 51, conflicts_with = "z")]
    nz: usize,
    /// Pixels along y and x.
    #[arg(long, default_value_t = PsfOptions::default().nx)]
    nx: usize,
    /// Pixel size in the sample.
    #[arg(long, default_value_t = PsfOptions::default().dxy, allow_hyphen_values = true)]
    dxy: f64,
    /// Distance between planes.
    #[arg(long, default_value_t = 0.05, conflicts_with = "z")]
    dz: f64,
    /// The planes' positions relative to the coverslip instead (comma-separated).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    z: Option<Vec<f64>>,
    #[command(flatten)]
    optics: Optics,
    /// Keep the model's scale instead of dividing by the largest value.
    #[arg(long)]
    no_normalize: bool,
    /// A confocal PSF (psfmodels' confocal_psf) with a pinhole of this diameter in Airy units:
    /// the excitation PSF times the emission PSF convolved with the pinhole in each plane.
    #[arg(long, allow_hyphen_values = true)]
    pinhole_au: Option<f64>,
    /// With --pinhole-au: the excitation wavelength (µm).
    #[arg(long, requires = "pinhole_au", allow_hyphen_values = true)]
    ex_wvl: Option<f64>,
    /// With --pinhole-au: the emission wavelength (µm; the pinhole's Airy unit is 1.22 em_wvl / NA).
    #[arg(long, requires = "pinhole_au", allow_hyphen_values = true)]
    em_wvl: Option<f64>,
}

/// The microscope's optics with psfmodels' names and defaults (lengths in µm): shared by `lucent
/// psf` and `lucent deconvolve --psf-model`.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct Optics {
    /// The point source's height above the coverslip.
    #[arg(long, default_value_t = PsfOptions::default().pz, allow_hyphen_values = true)]
    pz: f64,
    /// Numerical aperture.
    #[arg(long, default_value_t = PsfOptions::default().na, allow_hyphen_values = true)]
    na: f64,
    /// Emission wavelength.
    #[arg(long, default_value_t = PsfOptions::default().wvl, allow_hyphen_values = true)]
    wvl: f64,
    /// Sample refractive index.
    #[arg(long, default_value_t = PsfOptions::default().ns, allow_hyphen_values = true)]
    ns: f64,
    /// Immersion medium index, experimental and design.
    #[arg(long, default_value_t = PsfOptions::default().ni, allow_hyphen_values = true)]
    ni: f64,
    #[arg(long, default_value_t = PsfOptions::default().ni0, allow_hyphen_values = true)]
    ni0: f64,
    /// Coverslip index, experimental and design.
    #[arg(long, default_value_t = PsfOptions::default().ng, allow_hyphen_values = true)]
    ng: f64,
    #[arg(long, default_value_t = PsfOptions::default().ng0, allow_hyphen_values = true)]
    ng0: f64,
    /// Coverslip thickness, experimental and design.
    #[arg(long, default_value_t = PsfOptions::default().tg, allow_hyphen_values = true)]
    tg: f64,
    #[arg(long, default_value_t = PsfOptions::default().tg0, allow_hyphen_values = true)]
    tg0: f64,
    /// The objective's working distance (immersion thickness, design).
    #[arg(long, default_value_t = PsfOptions::default().ti0, allow_hyphen_values = true)]
    ti0: f64,
    /// Sub-pixels per pixel along each axis, summed (pixel integration).
    #[arg(long, default_value_t = PsfOptions::default().oversample_factor)]
    oversample_factor: usize,
}

impl Optics {
    /// The source's height above the coverslip (µm).
    pub fn pz(&self) -> f64 {
        self.pz
    }

    /// Whether every value is psfmodels' default (none was given).
    pub fn is_default(&self) -> bool {
        let d = PsfOptions::default();
        let given = [self.pz, self.na, self.wvl, self.ns, self.ni, self.ni0, self.ng, self.ng0, self.tg, self.tg0, self.ti0];
        let default = [d.pz, d.na, d.wvl, d.ns, d.ni, d.ni0, d.ng, d.ng0, d.tg, d.tg0, d.ti0];
        given == default && self.oversample_factor == d.oversample_factor
    }

    /// The model's options: `z` planes of `nx` × `nx` pixels of `dxy`.
    pub fn options(&self, model: Model, z: Planes, nx: usize, dxy: f64, normalize: bool) -> PsfOptions {
        PsfOptions {
            z,
            nx,
            dxy,
            pz: self.pz,
            na: self.na,
            wvl: self.wvl,
            ns: self.ns,
            ni: self.ni,
            ni0: self.ni0,
            ng: self.ng,
            ng0: self.ng0,
            tg: self.tg,
            tg0: self.tg0,
            ti0: self.ti0,
            oversample_factor: self.oversample_factor,
            normalize,
            model,
        }
    }
}

/// The options as the reports list them.
pub fn options_json(o: &PsfOptions) -> serde_json::Value {
    json!({
        "model": format!("{:?}", o.model).to_lowercase(),
        "z": match &o.z { Planes::Count { nz, dz } => json!({ "nz": nz, "dz": dz }), Planes::Positions(z) => json!(z) },
        "nx": o.nx, "dxy": o.dxy, "pz": o.pz, "NA": o.na, "wvl": o.wvl,
        "ns": o.ns, "ni": o.ni, "ni0": o.ni0, "ng": o.ng, "ng0": o.ng0,
        "tg": o.tg, "tg0": o.tg0, "ti0": o.ti0,
        "oversample_factor": o.oversample_factor, "normalize": o.normalize,
    })
}

/// The model on `gpu`, or on the f64 reference without one.
pub fn make(gpu: Option<&lucent::Gpu>, o: &PsfOptions) -> Result<ndarray::Array3<f32>, Error> {
    match gpu {
        Some(g) => psf::make_psf(g, o),
        None => psf::cpu::make_psf(o).map(|p| p.mapv(|v| v as f32)),
    }
}

impl Args {
    /// With --pinhole-au: the confocal parameters (the wavelengths default to --wvl).
    fn confocal(&self) -> Result<Option<psf::Confocal>, Error> {
        let Some(pinhole_au) = self.pinhole_au else { return Ok(None) };
        if self.optics.wvl != PsfOptions::default().wvl {
            return Err(Error::Invalid("a confocal PSF takes --ex-wvl and --em-wvl, not --wvl".into()));
        }
        let d = psf::Confocal::default();
        let c = psf::Confocal { ex_wvl: self.ex_wvl.unwrap_or(d.ex_wvl), em_wvl: self.em_wvl.unwrap_or(d.em_wvl), pinhole_au, ..d };
        c.check()?;
        Ok(Some(c))
    }

    fn options(&self) -> PsfOptions {
        let z = match &self.z {
            Some(z) => Planes::Positions(z.clone()),
            None => Planes::Count { nz: self.nz, dz: self.dz },
        };
        self.optics.options(self.model, z, self.nx, self.dxy, !self.no_normalize)
    }
}

pub fn run(global: &Global, args: &Args) -> Result<(), Error> {
    let start = Instant::now();
    let o = args.options();
    o.check()?;
    let confocal = args.confocal()?;
    io::check_output(&args.output, 3, false)?;
    let mut stages = Stages::default();
    let gpu = stages.open(|| global.gpu())?;
    let y = stages.compute(|| match (&confocal, gpu.as_ref()) {
        (None, gpu) => make(gpu, &o),
        (Some(c), Some(gpu)) => psf::confocal_psf(gpu, &o, c),
        (Some(c), None) => psf::cpu::confocal_psf(&o, c).map(|p| p.mapv(|v| v as f32)),
    })?;
    let y = y.into_dyn();
    crate::batch::check_result(&y.view())?;
    stages.write(|| io::write_real(&args.output, &y.view()))?;
    let ms = stages.total(start);
    let total = ms.total;
    if global.json {
        Report {
            output: report::path(&args.output),
            shape_out: Some(y.shape().to_vec()),
            options: match &confocal {
                None => options_json(&o),
                Some(c) => {
                    let mut j = options_json(&o);
                    j.as_object_mut().expect("an object").remove("wvl");
                    j.as_object_mut().expect("an object").insert("confocal".into(), json!(c));
                    j
                }
            },
            ms,
            ..Report::new("psf", report::device(gpu.as_ref()))
        }
        .print();
    } else if !global.quiet {
        let light = match &confocal {
            None => format!("λ {} µm", o.wvl),
            Some(c) => format!("confocal: λ {} µm in, {} µm out, pinhole {} AU", c.ex_wvl, c.em_wvl, c.pinhole_au),
        };
        eprintln!(
            "lucent: wrote a {:?} PSF {:?} (NA {}, {light}, source {} µm deep) on {} in {total:.0} ms",
            o.model,
            y.shape(),
            o.na,
            o.pz,
            crate::Global::device_name(gpu.as_ref())
        );
    }
    Ok(())
}
