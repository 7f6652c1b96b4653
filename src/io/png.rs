//! PNG through the `image` crate (PNG codec only). Read: 8 or 16-bit grayscale as (height,
//! width). Colour and gray+alpha PNGs are rejected, not converted: a silent colour-to-gray
//! mix would change measured intensities. Written: 2D previews, linearly scaled so the finite
//! min..max maps to 0..255 (8-bit) or 0..65535 (16-bit).

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use image::{DynamicImage, ImageBuffer, ImageFormat, ImageReader, Luma};
use ndarray::{ArrayD, ArrayViewD, IxDyn};

use super::{atomic::write_atomic, file_error};
use crate::error::Result;

/// Bits per pixel of a written PNG.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    Eight,
    Sixteen,
}

impl Depth {
    fn max_level(self) -> f64 {
        match self {
            Depth::Eight => 255.0,
            Depth::Sixteen => 65535.0,
        }
    }
}

/// Reads an 8 or 16-bit grayscale PNG.
pub fn read(path: &Path) -> Result<ArrayD<f32>> {
    let err = |message: String| file_error(path, message);
    let file = File::open(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let image = ImageReader::with_format(BufReader::new(file), ImageFormat::Png)
        .decode()
        .map_err(|e| err(format!("not a readable PNG: {e}")))?;
    let dims = IxDyn(&[image.height() as usize, image.width() as usize]);
    let values: Vec<f32> = match image {
        DynamicImage::ImageLuma8(b) => b.into_raw().into_iter().map(f32::from).collect(),
        DynamicImage::ImageLuma16(b) => b.into_raw().into_iter().map(f32::from).collect(),
        other => {
            return Err(err(format!(
                "is {:?}; lucent reads grayscale PNG only (convert it to 8 or 16-bit gray first)",
                other.color()
            )))
        }
    };
    ArrayD::from_shape_vec(dims, values).map_err(|e| err(format!("corrupt: {e}")))
}

/// Writes a 2D array as a grayscale PNG, atomically, scaling its finite min..max to the full
/// range of `depth` (NaN and -inf become 0, +inf the top level; a constant image is all 0).
/// Returns the (min, max) that was mapped, for reports and colour bars.
pub fn write(path: &Path, x: &ArrayViewD<f32>, depth: Depth) -> Result<(f32, f32)> {
    let err = |message: String| file_error(path, message);
    if x.ndim() != 2 || x.is_empty() {
        return Err(err(format!("PNG holds a non-empty 2D image, not an array of shape {:?}", x.shape())));
    }
    let (h, w) = (x.shape()[0], x.shape()[1]);
    let (Ok(h32), Ok(w32)) = (u32::try_from(h), u32::try_from(w)) else {
        return Err(err(format!("a {h}x{w} image is beyond PNG's 32-bit dimensions")));
    };
    let (lo, hi) = finite_range(x);
    let levels = scale_to_levels(x, lo, hi, depth);
    write_atomic(path, |file| {
        let result = match depth {
            Depth::Eight => {
                let pixels: Vec<u8> = levels.iter().map(|&l| l as u8).collect();
                ImageBuffer::<Luma<u8>, _>::from_raw(w32, h32, pixels).unwrap().write_to(file, ImageFormat::Png)
            }
            Depth::Sixteen => {
                let pixels: Vec<u16> = levels.iter().map(|&l| l as u16).collect();
                ImageBuffer::<Luma<u16>, _>::from_raw(w32, h32, pixels).unwrap().write_to(file, ImageFormat::Png)
            }
        };
        result.map_err(|e| err(format!("PNG write failed: {e}")))
    })?;
    Ok((lo, hi))
}

/// The smallest and largest finite values; (0, 0) when there are none.
fn finite_range(x: &ArrayViewD<f32>) -> (f32, f32) {
    let finite = x.iter().copied().filter(|v| v.is_finite());
    let range = finite.fold(None, |r: Option<(f32, f32)>, v| Some(r.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v)))));
    range.unwrap_or((0.0, 0.0))
}

/// Integer levels in 0..=max_level, rounded to nearest, in row-major order.
fn scale_to_levels(x: &ArrayViewD<f32>, lo: f32, hi: f32, depth: Depth) -> Vec<u32> {
    let top = depth.max_level();
    let span = hi as f64 - lo as f64;
    x.iter()
        .map(|&v| {
            if v.is_nan() || span <= 0.0 {
                return 0;
            }
            ((v as f64 - lo as f64) / span * top).round().clamp(0.0, top) as u32
        })
        .collect()
}
