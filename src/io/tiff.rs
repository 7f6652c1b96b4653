//! Grayscale TIFF through the `tiff` crate. A file of n pages of h x w reads as (n, h, w), or
//! (h, w) for a single page: pages are the slowest axis, as ImageJ and tifffile stack them.
//! Samples may be 8/16/32/64-bit integers (signed or not) or 16/32/64-bit floats, uncompressed,
//! LZW or Deflate. Written: float32, uncompressed, one page per slice (BigTIFF beyond 4 GB).

use std::fs::File;
use std::io::{BufReader, Seek, Write};
use std::path::Path;

use ::tiff::decoder::{Decoder, DecodingResult, Limits};
use ::tiff::encoder::{colortype::Gray32Float, TiffEncoder, TiffKind, TiffKindBig, TiffKindStandard};
use ::tiff::ColorType;
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

use super::{atomic::write_atomic, file_error};
use crate::error::Result;

/// Reads every page of a grayscale TIFF.
pub fn read(path: &Path) -> Result<ArrayD<f32>> {
    let err = |message: String| file_error(path, message);
    let file = File::open(path).map_err(|e| err(format!("cannot read: {e}")))?;
    let mut decoder = Decoder::new(BufReader::new(file)).map_err(|e| err(format!("not a readable TIFF: {e}")))?;
    // One page may be as large as the memory allows; the default cap is 256 MiB.
    let mut limits = Limits::default();
    limits.decoding_buffer_size = usize::MAX;
    decoder = decoder.with_limits(limits);

    let mut values = Vec::new();
    let mut pages = 0;
    let mut size = None;
    loop {
        let (w, h) = decoder.dimensions().map_err(|e| err(format!("page {pages}: {e}")))?;
        match decoder.colortype().map_err(|e| err(format!("page {pages}: {e}")))? {
            ColorType::Gray(8 | 16 | 32 | 64) => {}
            other => {
                return Err(err(format!(
                    "page {pages} is {other:?}; lucent reads grayscale TIFF with 8 to 64-bit samples only"
                )))
            }
        }
        if *size.get_or_insert((h, w)) != (h, w) {
            let (h0, w0) = size.unwrap();
            return Err(err(format!("page {pages} is {h}x{w}, page 0 is {h0}x{w0}; a stack needs equal pages")));
        }
        let page = decoder.read_image().map_err(|e| err(format!("page {pages}: {e}")))?;
        values.extend(to_f32(page));
        pages += 1;
        if !decoder.more_images() {
            break;
        }
        decoder.next_image().map_err(|e| err(format!("page {pages}: {e}")))?;
    }
    let (h, w) = size.unwrap();
    let dims = if pages == 1 { vec![h as usize, w as usize] } else { vec![pages, h as usize, w as usize] };
    ArrayD::from_shape_vec(IxDyn(&dims), values).map_err(|_| err("corrupt: a page holds the wrong number of samples".into()))
}

/// Writes a 2D array as one float32 page or a 3D array as one page per slice, atomically.
pub fn write_f32(path: &Path, x: &ArrayViewD<f32>) -> Result<()> {
    let err = |message: String| file_error(path, message);
    let stack = match x.ndim() {
        2 => x.view().insert_axis(Axis(0)),
        3 => x.view(),
        n => return Err(err(format!("TIFF holds 2D images or 3D stacks, not a {n}-D array of shape {:?}", x.shape()))),
    };
    let (h, w) = (stack.shape()[1], stack.shape()[2]);
    let (Ok(h32), Ok(w32)) = (u32::try_from(h), u32::try_from(w)) else {
        return Err(err(format!("a {h}x{w} page is beyond TIFF's 32-bit dimensions")));
    };
    if stack.is_empty() {
        return Err(err(format!("cannot write an empty array of shape {:?}", x.shape())));
    }
    // Standard TIFF addresses 4 GiB; leave room for the directories.
    let big = stack.len() * 4 > u32::MAX as usize - (1 << 24);
    write_atomic(path, |file| {
        let result = if big {
            TiffEncoder::<_, TiffKindBig>::new_generic(file).and_then(|e| write_pages(e, &stack, w32, h32))
        } else {
            TiffEncoder::<_, TiffKindStandard>::new_generic(file).and_then(|e| write_pages(e, &stack, w32, h32))
        };
        result.map_err(|e| err(format!("TIFF write failed: {e}")))
    })
}

fn write_pages<W: Write + Seek, K: TiffKind>(
    mut encoder: TiffEncoder<W, K>,
    stack: &ArrayViewD<f32>,
    w: u32,
    h: u32,
) -> ::tiff::TiffResult<()> {
    for page in stack.outer_iter() {
        let data: Vec<f32> = page.iter().copied().collect();
        encoder.write_image::<Gray32Float>(w, h, &data)?;
    }
    Ok(())
}

/// Samples as f32, nearest value, no rescaling (see the `io` module docs).
fn to_f32(page: DecodingResult) -> Vec<f32> {
    match page {
        DecodingResult::U8(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::U16(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::U32(v) => v.into_iter().map(|s| s as f32).collect(),
        DecodingResult::U64(v) => v.into_iter().map(|s| s as f32).collect(),
        DecodingResult::I8(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::I16(v) => v.into_iter().map(f32::from).collect(),
        DecodingResult::I32(v) => v.into_iter().map(|s| s as f32).collect(),
        DecodingResult::I64(v) => v.into_iter().map(|s| s as f32).collect(),
        DecodingResult::F16(v) => v.into_iter().map(|s| s.to_f32()).collect(),
        DecodingResult::F32(v) => v,
        DecodingResult::F64(v) => v.into_iter().map(|s| s as f32).collect(),
    }
}
