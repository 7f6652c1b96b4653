//! PNG through the `image` crate (PNG codec only). Read: 8 or 16-bit grayscale as (height,
//! width). Colour and gray+alpha PNGs are rejected, not converted: a silent colour-to-gray
//! mix would change measured intensities. Written: 2D previews, linearly scaled so the finite
//! min..max maps to 0..255 (8-bit) or 0..65535 (16-bit).

use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use image::codecs::png::PngDecoder;
use image::{DynamicImage, ImageBuffer, ImageFormat, Limits, Luma};
use ndarray::{ArrayD, ArrayViewD, IxDyn};

use crate::error::Result;
use crate::host::{file_error, write_atomic};

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

/// Reads an 8 or 16-bit grayscale PNG using at most about `budget` bytes: its header (the IHDR
/// chunk) is checked against the file's size and the budget before anything is decoded.
pub fn read(path: &Path, budget: u64) -> Result<ArrayD<f32>> {
    let err = |message: String| file_error(path, message);
    let (file, len) = super::open(path)?;
    let len = len.ok_or_else(|| err("is not a regular file; lucent reads PNG from files only".into()))?;
    let mut r = BufReader::new(file);
    // The signature, then the IHDR chunk: length, "IHDR", width, height, bit depth, colour type.
    let mut head = [0u8; 26];
    let valid = r.read_exact(&mut head).is_ok() && head[..8] == *b"\x89PNG\r\n\x1a\n" && head[12..16] == *b"IHDR";
    if !valid {
        return Err(err("not a readable PNG: no PNG signature and image header".into()));
    }
    let word = |i: usize| u32::from_be_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]) as u64;
    let (w, h, depth) = (word(16), word(20), head[24]);
    let colour = match head[25] {
        0 => None,
        2 => Some("RGB"),
        3 => Some("indexed (palette)"),
        4 => Some("grayscale with alpha"),
        6 => Some("RGBA"),
        n => return Err(err(format!("not a readable PNG: invalid colour type {n}"))),
    };
    if let Some(colour) = colour {
        return Err(err(format!("is {colour}; lucent reads grayscale PNG only (convert it to 8 or 16-bit gray first)")));
    }
    let pixels = w * h; // both below 2^32: no overflow
    let raw = pixels.checked_mul(if depth == 16 { 2 } else { 1 });
    // Deflate expands at most 1032:1, so a short file cannot hold a huge image.
    if raw.is_none_or(|r| r / 1100 > len) {
        return Err(err(format!("corrupt: a {h}x{w} image cannot be stored in a file of {len} bytes")));
    }
    let need = raw.and_then(|r| r.checked_add(pixels.checked_mul(4)?));
    crate::host::check_budget(&format!("a {h}x{w} {depth}-bit image"), need, budget).map_err(err)?;
    r.seek(SeekFrom::Start(0)).map_err(|e| err(format!("cannot read: {e}")))?;
    let mut limits = Limits::default();
    limits.max_alloc = Some(budget);
    let image = PngDecoder::with_limits(r, limits).and_then(DynamicImage::from_decoder).map_err(|e| err(format!("not a readable PNG: {e}")))?;
    let dims = IxDyn(&[image.height() as usize, image.width() as usize]);
    let values: Vec<f32> = match image {
        DynamicImage::ImageLuma8(b) => b.into_raw().into_iter().map(f32::from).collect(),
        DynamicImage::ImageLuma16(b) => b.into_raw().into_iter().map(f32::from).collect(),
        other => return Err(err(format!("is {:?}; lucent reads grayscale PNG only (convert it to 8 or 16-bit gray first)", other.color()))),
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
