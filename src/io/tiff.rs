//! Grayscale TIFF through the `tiff` crate. A file of n pages of h x w reads as (n, h, w), or
//! (h, w) for a single page: pages are the slowest axis, as ImageJ and tifffile stack them.
//! Samples may be 8/16/32/64-bit integers (signed or not) or 16/32/64-bit floats, uncompressed,
//! LZW or Deflate. Written: float32, uncompressed, one page per slice (BigTIFF beyond 4 GB).

use std::borrow::Cow;
use std::io::{BufReader, Read, Seek, Write};
use std::path::Path;

use ::tiff::decoder::{Decoder, DecodingResult, Limits};
use ::tiff::encoder::{colortype::Gray32Float, TiffEncoder, TiffKind, TiffKindBig, TiffKindStandard};
use ::tiff::tags::Tag;
use ::tiff::ColorType;
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

use super::{atomic::write_atomic, file_error};
use crate::error::Result;

/// Reads every page of a grayscale TIFF using at most about `budget` bytes: each page's size is
/// checked against its strips (which must lie within the file) and the budget before decoding.
pub fn read(path: &Path, budget: u64) -> Result<ArrayD<f32>> {
    let err = |message: String| file_error(path, message);
    let (file, len) = super::open(path)?;
    // The strips are checked against the file's size, which a device or a pipe does not have.
    let len = len.ok_or_else(|| err("is not a regular file; lucent reads TIFF from files only".into()))?;
    let mut reader = BufReader::new(file);
    check_first_directory(&mut reader, len, budget).map_err(err)?;
    let mut decoder = Decoder::new(reader).map_err(|e| err(format!("not a readable TIFF: {e}")))?;
    // One page, or one strip, may be as large as the budget (the crate's defaults are 256 and
    // 128 MiB); tag values keep the crate's 1 MiB cap.
    let cap = usize::try_from(budget).unwrap_or(usize::MAX);
    let mut limits = Limits::default();
    limits.decoding_buffer_size = cap;
    limits.intermediate_buffer_size = cap;
    decoder = decoder.with_limits(limits);

    let mut values = Vec::new();
    let mut pages = 0;
    let mut size = None;
    loop {
        let (w, h) = decoder.dimensions().map_err(|e| err(format!("page {pages}: {e}")))?;
        let bits = match decoder.colortype().map_err(|e| err(format!("page {pages}: {e}")))? {
            ColorType::Gray(bits @ (8 | 16 | 32 | 64)) => bits as u64,
            other => {
                return Err(err(format!(
                    "page {pages} is {other:?}; lucent reads grayscale TIFF with 8 to 64-bit samples only"
                )))
            }
        };
        if *size.get_or_insert((h, w)) != (h, w) {
            let (h0, w0) = size.unwrap();
            return Err(err(format!("page {pages} is {h}x{w}, page 0 is {h0}x{w0}; a stack needs equal pages")));
        }
        let samples = w as u64 * h as u64;
        let raw = samples.checked_mul(bits / 8);
        check_strips(&mut decoder, raw.unwrap_or(u64::MAX), len).map_err(|m| err(format!("page {pages}: {m}")))?;
        // The pages read so far as f32, this page's samples and their f32 copy.
        let need = (values.len() as u64).checked_add(samples).and_then(|n| n.checked_mul(4)).and_then(|n| n.checked_add(raw?));
        let what = format!("page {pages} ({h}x{w}, {bits}-bit samples)");
        super::check_budget(&what, need, budget).map_err(err)?;
        read_page(&mut decoder, bits, samples as usize, &mut values).map_err(|e| err(format!("page {pages}: {e}")))?;
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

/// Appends the current page's samples to `values` as f32. Float32 samples are decoded straight
/// into `values` (no page buffer, no copy); other types are decoded, then converted.
fn read_page<R: Read + Seek>(decoder: &mut Decoder<R>, bits: u64, samples: usize, values: &mut Vec<f32>) -> ::tiff::TiffResult<()> {
    // The decoder takes the first SampleFormat value (3: IEEE float) for every sample.
    let float = decoder.find_tag_unsigned_vec::<u16>(Tag::SampleFormat)?.and_then(|v| v.first().copied()) == Some(3);
    if float && bits == 32 {
        let start = values.len();
        if start == 0 {
            // Fresh zeroed memory costs no writes, where `resize` writes every zero first.
            *values = bytemuck::zeroed_vec(samples);
        } else {
            values.resize(start + samples, 0.0);
        }
        return decoder.read_image_bytes(bytemuck::cast_slice_mut(&mut values[start..]));
    }
    values.extend(to_f32(decoder.read_image()?));
    Ok(())
}

/// `Decoder::new` reads the first directory before limits can be set, sizing each tag's buffer
/// by its count (up to 256 MiB): refuse first the counts that the file or the budget cannot hold.
/// Anything else that is wrong is left to the decoder to report.
fn check_first_directory(r: &mut (impl Read + Seek), len: u64, budget: u64) -> std::result::Result<(), String> {
    let mut head = [0u8; 16];
    let got = r.read(&mut head).map_err(|e| format!("cannot read: {e}"))?;
    let le = match &head[..2] {
        b"II" => true,
        b"MM" => false,
        _ => return rewind(r),
    };
    let num = |b: &[u8]| b.iter().enumerate().fold(0u64, |n, (i, &v)| n | (v as u64) << (8 * if le { i } else { b.len() - 1 - i }));
    let big = num(&head[2..4]) == 43;
    let ifd = if big { num(&head[8..16]) } else { num(&head[4..8]) };
    let entry_len = if big { 20 } else { 12 };
    let mut buf = [0u8; 20];
    if got < 16 || r.seek(std::io::SeekFrom::Start(ifd)).is_err() || r.read_exact(&mut buf[..if big { 8 } else { 2 }]).is_err() {
        return rewind(r);
    }
    let entries = if big { num(&buf[..8]) } else { num(&buf[..2]) };
    let value_size = std::mem::size_of::<::tiff::decoder::ifd::Value>() as u64;
    for _ in 0..entries.min(len / entry_len) {
        if r.read_exact(&mut buf[..entry_len as usize]).is_err() {
            break;
        }
        let (tag, kind) = (num(&buf[..2]), num(&buf[2..4]));
        let count = if big { num(&buf[4..12]) } else { num(&buf[4..8]) };
        let size = match kind {
            3 | 8 => 2,
            4 | 9 | 11 | 13 => 4,
            5 | 10 | 12 | 16 | 17 | 18 => 8,
            _ => 1,
        };
        let fits = |unit: u64, limit: u64| count.checked_mul(unit).is_some_and(|b| b <= limit);
        if !fits(size, len) || !fits(value_size, budget) {
            return Err(format!("corrupt: tag {tag} claims {count} values, more than the file of {len} bytes holds"));
        }
    }
    rewind(r)
}

fn rewind(r: &mut impl Seek) -> std::result::Result<(), String> {
    r.rewind().map_err(|e| format!("cannot read: {e}"))
}

/// Checks that the page's strips (or tiles) lie within the file of `len` bytes and, when
/// uncompressed, hold at least the `raw` bytes its dimensions promise.
fn check_strips<R: Read + Seek>(decoder: &mut Decoder<R>, raw: u64, len: u64) -> std::result::Result<(), String> {
    let tags = |d: &mut Decoder<R>, tag| d.find_tag_unsigned_vec::<u64>(tag).map_err(|e| e.to_string());
    let (offsets, counts) = match tags(decoder, Tag::StripOffsets)? {
        Some(offsets) => (offsets, tags(decoder, Tag::StripByteCounts)?),
        None => (tags(decoder, Tag::TileOffsets)?.unwrap_or_default(), tags(decoder, Tag::TileByteCounts)?),
    };
    // Without byte counts the decoder reports the problem itself.
    let Some(counts) = counts else { return Ok(()) };
    for (&offset, &count) in offsets.iter().zip(&counts) {
        if offset.checked_add(count).is_none_or(|end| end > len) {
            return Err(format!("truncated: data at byte {offset} ({count} bytes) is beyond the file's end at {len}"));
        }
    }
    let held = counts.iter().fold(0u64, |sum, &c| sum.saturating_add(c));
    let compression = decoder.find_tag_unsigned::<u16>(Tag::Compression).map_err(|e| e.to_string())?.unwrap_or(1);
    if compression == 1 && held < raw {
        return Err(format!("truncated: the header promises {raw} bytes of samples, the file holds {held}"));
    }
    Ok(())
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
        // A page in standard layout is written from the array's memory; a strided one is copied.
        let data = page.as_slice().map_or_else(|| Cow::Owned(page.iter().copied().collect()), Cow::Borrowed);
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
