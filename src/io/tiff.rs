//! Grayscale TIFF through the `tiff` crate. A file of n pages of h x w reads as (n, h, w), or
//! (h, w) for a single page: pages are the slowest axis, as ImageJ and tifffile stack them.
//! Samples may be 8/16/32/64-bit integers (signed or not) or 16/32/64-bit floats, uncompressed,
//! LZW or Deflate. Written: float32, uncompressed, one page per slice (BigTIFF beyond 4 GB).
//!
//! Speed: the `tiff` crate decodes page by page on one core (~1-1.6 GB/s). Stacks of uncompressed
//! strips of 8/16/32-bit integers or float32, either byte order, are instead read straight into
//! the result at their positions by all cores, as `.npy` is; anything else is decoded.

use std::borrow::Cow;
use std::io::{BufReader, Read, Seek, Write};
use std::path::Path;

use ::tiff::decoder::{Decoder, DecodingResult, Limits};
use ::tiff::encoder::colortype::{self, Gray32, Gray32Float};
use ::tiff::encoder::{TiffEncoder, TiffKind, TiffKindBig, TiffKindStandard, TiffValue};
use ::tiff::tags::{ByteOrder, Tag};
use ::tiff::ColorType;
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};
use rayon::prelude::*;

use crate::error::Result;
use crate::host::{file_error, write_atomic, Precision, Slab};

/// Reads every page of a grayscale TIFF using at most about `budget` bytes: every page's size is
/// checked against its strips (which must lie within the file) and the budget before anything
/// is read. Uncompressed strips of plain samples are read straight into the result by all cores
/// ([`Run`]); any other page sends the whole file through the decoder, page by page.
pub fn read(path: &Path, budget: u64) -> Result<ArrayD<f32>> {
    read_by(path, budget, true).map(|(values, _)| values)
}

/// [`read`] through the decoder whatever the pages, with the number of runs that `read` reads
/// directly (None: it decodes too). For tests that compare the two ways.
#[doc(hidden)]
pub fn read_decoded(path: &Path, budget: u64) -> Result<(ArrayD<f32>, Option<usize>)> {
    read_by(path, budget, false)
}

fn read_by(path: &Path, budget: u64, direct: bool) -> Result<(ArrayD<f32>, Option<usize>)> {
    let err = |message: String| file_error(path, message);
    let (file, len) = super::open(path)?;
    // The strips are checked against the file's size, which a device or a pipe does not have.
    let len = len.ok_or_else(|| err("is not a regular file; lucent reads TIFF from files only".into()))?;
    #[cfg(unix)]
    let positional = file.try_clone().map_err(|e| err(format!("cannot read: {e}")))?;
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

    let stack = scan(&mut decoder, len, budget).map_err(err)?;
    let total = stack.pages * stack.samples();
    let values = match &stack.runs {
        #[cfg(unix)]
        Some(runs) if direct => read_runs(&positional, runs, total).map_err(|e| err(format!("cannot read: {e}")))?,
        _ => decode_pages(&mut decoder, stack.pages, stack.samples()).map_err(err)?,
    };
    let (h, w) = (stack.h as usize, stack.w as usize);
    let dims = if stack.pages == 1 { vec![h, w] } else { vec![stack.pages, h, w] };
    let values = ArrayD::from_shape_vec(IxDyn(&dims), values).map_err(|_| err("corrupt: a page holds the wrong number of samples".into()))?;
    Ok((values, stack.runs.map(|runs| runs.len())))
}

/// What a walk of the directory chain found: equal pages of h x w, and where their samples lie
/// when every page can be read without the decoder.
struct Stack {
    pages: usize,
    h: u32,
    w: u32,
    runs: Option<Vec<Run>>,
}

impl Stack {
    fn samples(&self) -> usize {
        self.w as usize * self.h as usize
    }
}

/// Samples that lie one after another both in the file (from byte `at`) and in the result.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Run {
    at: u64,
    samples: usize,
    sample: Sample,
}

/// A sample type read without the decoder: `kind` is the SampleFormat (1 unsigned, 2 signed
/// integer, 3 IEEE float), `bytes` its size, `swap` whether its byte order is not the host's.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Sample {
    kind: u16,
    bytes: usize,
    swap: bool,
}

/// Samples per piece of a run read by one task (16 MiB of f32): large reads run at memory
/// speed, and a run of many pieces keeps every core busy.
const PIECE: usize = 4 << 20;

/// Walks every page, checking its type and size, its strips against the file, and the whole
/// stack against the budget, then plans the direct read (see [`plan_page`]). Nothing is read.
fn scan<R: Read + Seek>(decoder: &mut Decoder<R>, len: u64, budget: u64) -> std::result::Result<Stack, String> {
    // The plan is kept only where it can be read (positional reads need unix).
    let mut stack = Stack { pages: 0, h: 0, w: 0, runs: cfg!(unix).then(Vec::new) };
    let mut raw_max = 0u64;
    loop {
        let page = stack.pages;
        let at = |m: String| format!("page {page}: {m}");
        let (w, h) = decoder.dimensions().map_err(|e| at(e.to_string()))?;
        let bits = match decoder.colortype().map_err(|e| at(e.to_string()))? {
            ColorType::Gray(bits @ (8 | 16 | 32 | 64)) => bits as u64,
            other => return Err(format!("page {page} is {other:?}; lucent reads grayscale TIFF with 8 to 64-bit samples only")),
        };
        if page == 0 {
            (stack.h, stack.w) = (h, w);
        } else if (stack.h, stack.w) != (h, w) {
            return Err(format!("page {page} is {h}x{w}, page 0 is {}x{}; a stack needs equal pages", stack.h, stack.w));
        }
        let samples = w as u64 * h as u64;
        let raw = samples.checked_mul(bits / 8);
        let strips = check_strips(decoder, raw.unwrap_or(u64::MAX), len).map_err(at)?;
        if let Some(runs) = &mut stack.runs {
            if !plan_page(decoder, strips.as_ref(), w, runs).map_err(|e| at(e.to_string()))? {
                stack.runs = None;
            }
        }
        // The pages as f32, and besides them the plan or (through the decoder) the largest
        // page's raw samples, which a page other than float32 is decoded into first.
        raw_max = raw_max.max(raw.unwrap_or(u64::MAX));
        let scratch = match &stack.runs {
            Some(runs) => (runs.len() * size_of::<Run>()) as u64,
            None => raw_max,
        };
        let need = (page as u64 + 1).checked_mul(samples).and_then(|n| n.checked_mul(4)).and_then(|n| n.checked_add(scratch));
        crate::host::check_budget(&format!("page {page} ({h}x{w}, {bits}-bit samples)"), need, budget)?;
        stack.pages += 1;
        if !decoder.more_images() {
            return Ok(stack);
        }
        decoder.next_image().map_err(|e| format!("page {}: {e}", page + 1))?;
    }
}

/// Appends the current page's strips to `runs` (merging strips that follow each other in the
/// file) when the page needs no decoder: uncompressed, no predictor, BlackIsZero, one sample per
/// pixel of 8, 16 or 32-bit integers or 32-bit floats, in strips that each hold exactly their
/// rows. Returns false for any other page.
fn plan_page<R: Read + Seek>(decoder: &mut Decoder<R>, strips: Option<&Strips>, w: u32, runs: &mut Vec<Run>) -> ::tiff::TiffResult<bool> {
    let Some(Strips { offsets, counts, tiled: false }) = strips else { return Ok(false) };
    let h = decoder.dimensions()?.1 as u64;
    let sample = Sample {
        // The decoder takes the first SampleFormat value for every sample.
        kind: decoder.find_tag_unsigned_vec::<u16>(Tag::SampleFormat)?.and_then(|v| v.first().copied()).unwrap_or(1),
        bytes: match decoder.colortype()? {
            ColorType::Gray(bits @ (8 | 16 | 32)) => bits as usize / 8,
            _ => 0, // not read here
        },
        swap: decoder.byte_order() != ByteOrder::native(),
    };
    let mut tag = |tag| decoder.find_tag_unsigned::<u64>(tag);
    let plain = matches!((sample.kind, sample.bytes), (1 | 2, 1 | 2 | 4) | (3, 4))
        && tag(Tag::Compression)?.unwrap_or(1) == 1
        && tag(Tag::Predictor)?.unwrap_or(1) == 1
        && tag(Tag::PhotometricInterpretation)? == Some(1)
        && tag(Tag::SamplesPerPixel)?.unwrap_or(1) == 1
        && tag(Tag::PlanarConfiguration)?.unwrap_or(1) == 1;
    let rows = tag(Tag::RowsPerStrip)?.unwrap_or(h).min(h);
    if !plain || rows == 0 || offsets.len() != counts.len() || offsets.len() as u64 != h.div_ceil(rows) {
        return Ok(false);
    }
    for (k, (&at, &count)) in offsets.iter().zip(counts).enumerate() {
        let samples = (h - k as u64 * rows).min(rows) * w as u64;
        if Some(count) != samples.checked_mul(sample.bytes as u64) {
            return Ok(false);
        }
        let samples = samples as usize;
        match runs.last_mut() {
            Some(last) if last.sample == sample && last.at + (last.samples * sample.bytes) as u64 == at => last.samples += samples,
            _ => runs.push(Run { at, samples, sample }),
        }
    }
    Ok(true)
}

/// Reads the runs, in order, into a fresh array of `total` samples: each run in pieces of at most
/// [`PIECE`] samples, every piece read at its position and converted in place by a task of its
/// own (one core moves ~1.2-2 GB/s, bounded by page faults and the copy).
#[cfg(unix)]
fn read_runs(file: &std::fs::File, runs: &[Run], total: usize) -> std::io::Result<Vec<f32>> {
    use std::os::unix::fs::FileExt;
    let mut values = crate::host::zeroed_vec::<f32>(total);
    let mut rest = values.as_mut_slice();
    let mut pieces = Vec::new();
    for run in runs {
        for start in (0..run.samples).step_by(PIECE) {
            let n = PIECE.min(run.samples - start);
            if n > rest.len() {
                return Err(std::io::Error::other("the strips hold more samples than the pages"));
            }
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(n);
            rest = tail;
            pieces.push((run.at + (start * run.sample.bytes) as u64, run.sample, piece));
        }
    }
    if !rest.is_empty() {
        return Err(std::io::Error::other("the strips hold fewer samples than the pages"));
    }
    crate::host::read_pool().install(|| {
        pieces.into_par_iter().try_for_each(|(at, sample, piece)| {
            // The raw samples go to the end of the piece's memory, then widen to f32 front to back.
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(piece);
            let from = bytes.len() - bytes.len() / 4 * sample.bytes;
            file.read_exact_at(&mut bytes[from..], at)?;
            to_f32_in_place(bytes, from, sample);
            Ok::<_, std::io::Error>(())
        })
    })?;
    Ok(values)
}

/// Converts the samples at `bytes[from..]` (the last ones of `bytes`) to the f32 values that
/// fill all of `bytes`, in the host's order. Front to back, a value never overwrites a sample
/// not yet read: value i ends at byte 4(i + 1), sample i + 1 starts at `from` + size(i + 1),
/// and `from` = (4 - size) n, which is at least (4 - size)(i + 1).
fn to_f32_in_place(bytes: &mut [u8], from: usize, sample: Sample) {
    fn each<const N: usize>(bytes: &mut [u8], from: usize, swap: bool, f: impl Fn([u8; N]) -> f32) {
        for i in 0..(bytes.len() - from) / N {
            let mut raw: [u8; N] = bytes[from + i * N..][..N].try_into().unwrap();
            if swap {
                raw.reverse();
            }
            bytes[4 * i..4 * i + 4].copy_from_slice(&f(raw).to_ne_bytes());
        }
    }
    let swap = sample.swap;
    match (sample.kind, sample.bytes) {
        (3, 4) if !swap => {} // already the result's layout
        (3, 4) => each(bytes, from, swap, f32::from_ne_bytes),
        (1, 1) => each(bytes, from, swap, |b: [u8; 1]| f32::from(b[0])),
        (2, 1) => each(bytes, from, swap, |b: [u8; 1]| f32::from(b[0] as i8)),
        (1, 2) => each(bytes, from, swap, |b| f32::from(u16::from_ne_bytes(b))),
        (2, 2) => each(bytes, from, swap, |b| f32::from(i16::from_ne_bytes(b))),
        (1, 4) => each(bytes, from, swap, |b| u32::from_ne_bytes(b) as f32),
        (2, 4) => each(bytes, from, swap, |b| i32::from_ne_bytes(b) as f32),
        _ => unreachable!("plan_page admits only the types above"),
    }
}

/// Decodes the `pages` pages of `samples` samples each, from the first, into a fresh array.
fn decode_pages<R: Read + Seek>(decoder: &mut Decoder<R>, pages: usize, samples: usize) -> std::result::Result<Vec<f32>, String> {
    let mut values = crate::host::zeroed_vec::<f32>(pages * samples);
    decoder.seek_to_image(0).map_err(|e| format!("page 0: {e}"))?;
    for (page, out) in values.chunks_exact_mut(samples.max(1)).enumerate() {
        if page > 0 {
            decoder.next_image().map_err(|e| format!("page {page}: {e}"))?;
        }
        read_page(decoder, out).map_err(|e| format!("page {page}: {e}"))?;
    }
    Ok(values)
}

/// Decodes the current page into `out`: float32 samples straight into it (no page buffer, no
/// copy), other types into a page of their own, then converted.
fn read_page<R: Read + Seek>(decoder: &mut Decoder<R>, out: &mut [f32]) -> std::result::Result<(), String> {
    // The decoder takes the first SampleFormat value (3: IEEE float) for every sample.
    let float = decoder.find_tag_unsigned_vec::<u16>(Tag::SampleFormat).map_err(|e| e.to_string())?.and_then(|v| v.first().copied()) == Some(3);
    if float && decoder.colortype().map_err(|e| e.to_string())? == ColorType::Gray(32) {
        return decoder.read_image_bytes(bytemuck::cast_slice_mut(out)).map_err(|e| e.to_string());
    }
    let page = to_f32(decoder.read_image().map_err(|e| e.to_string())?);
    if page.len() != out.len() {
        return Err("corrupt: the page holds the wrong number of samples".into());
    }
    out.copy_from_slice(&page);
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

/// Where a page's strips (or tiles) lie in the file.
struct Strips {
    offsets: Vec<u64>,
    counts: Vec<u64>,
    tiled: bool,
}

/// Checks that the page's strips (or tiles) lie within the file of `len` bytes and, when
/// uncompressed, hold at least the `raw` bytes its dimensions promise. Returns them where the
/// page has byte counts (without, the decoder reports the problem itself).
fn check_strips<R: Read + Seek>(decoder: &mut Decoder<R>, raw: u64, len: u64) -> std::result::Result<Option<Strips>, String> {
    let tags = |d: &mut Decoder<R>, tag| d.find_tag_unsigned_vec::<u64>(tag).map_err(|e| e.to_string());
    let (offsets, counts, tiled) = match tags(decoder, Tag::StripOffsets)? {
        Some(offsets) => (offsets, tags(decoder, Tag::StripByteCounts)?, false),
        None => (tags(decoder, Tag::TileOffsets)?.unwrap_or_default(), tags(decoder, Tag::TileByteCounts)?, true),
    };
    let Some(counts) = counts else { return Ok(None) };
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
    Ok(Some(Strips { offsets, counts, tiled }))
}

/// Writes a 2D array as one float32 page or a 3D array as one page per slice, atomically.
pub fn write_f32(path: &Path, x: &ArrayViewD<f32>) -> Result<()> {
    write_gray::<Gray32Float>(path, x)
}

/// [`write_f32`] of uint32 samples (labels).
pub fn write_u32(path: &Path, x: &ArrayViewD<u32>) -> Result<()> {
    write_gray::<Gray32>(path, x)
}

fn write_gray<C: colortype::ColorType>(path: &Path, x: &ArrayViewD<C::Inner>) -> Result<()>
where
    C::Inner: Copy,
    [C::Inner]: TiffValue,
{
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
            TiffEncoder::<_, TiffKindBig>::new_generic(file).and_then(|e| write_pages::<_, _, C>(e, &stack, w32, h32))
        } else {
            TiffEncoder::<_, TiffKindStandard>::new_generic(file).and_then(|e| write_pages::<_, _, C>(e, &stack, w32, h32))
        };
        result.map_err(|e| err(format!("TIFF write failed: {e}")))
    })
}

/// Writes a stack of `shape` (pages, h, w; float32, or float16 for half precision) atomically
/// from slabs of pages that `next` returns in order (None: no more; an error abandons the
/// file).
pub fn write_slabs(path: &Path, shape: [usize; 3], precision: Precision, next: &mut dyn FnMut() -> Result<Option<Slab>>) -> Result<()> {
    let err = |message: String| file_error(path, message);
    let (Ok(h), Ok(w)) = (u32::try_from(shape[1]), u32::try_from(shape[2])) else {
        return Err(err(format!("a {}x{} page is beyond TIFF's 32-bit dimensions", shape[1], shape[2])));
    };
    let bytes = if precision == Precision::F16 { 2 } else { 4 };
    let big = shape.iter().product::<usize>() * bytes > u32::MAX as usize - (1 << 24);
    write_atomic(path, |file| {
        let mut pages = 0;
        let mut write = |page: &mut dyn FnMut(PageOf) -> ::tiff::TiffResult<()>| -> Result<()> {
            while let Some(slab) = next()? {
                let s = slab.shape();
                if slab.precision() != precision || s[1..] != shape[1..] || pages + s[0] > shape[0] {
                    return Err(err(format!(
                        "a {} slab of shape {s:?} after {pages} pages of a {} stack of {shape:?}",
                        slab.precision().name(),
                        precision.name()
                    )));
                }
                pages += s[0];
                let failed = |e: ::tiff::TiffError| err(format!("TIFF write failed: {e}"));
                match &slab {
                    Slab::F32(a) => {
                        a.as_standard_layout().outer_iter().try_for_each(|p| page(PageOf::F32(p.as_slice().expect("standard layout"))).map_err(failed))?
                    }
                    Slab::F16(a) => {
                        a.as_standard_layout().outer_iter().try_for_each(|p| page(PageOf::F16(p.as_slice().expect("standard layout"))).map_err(failed))?
                    }
                }
                slab.give_back();
            }
            if pages != shape[0] {
                return Err(err(format!("{pages} of {} pages were written", shape[0])));
            }
            Ok(())
        };
        let start = |e: ::tiff::TiffError| err(format!("TIFF write failed: {e}"));
        if big {
            let mut e = TiffEncoder::<_, TiffKindBig>::new_generic(file).map_err(start)?;
            write(&mut |p| match p {
                PageOf::F32(v) => e.write_image::<Gray32Float>(w, h, v),
                PageOf::F16(v) => e.write_image::<Gray16Float>(w, h, v),
            })
        } else {
            let mut e = TiffEncoder::<_, TiffKindStandard>::new_generic(file).map_err(start)?;
            write(&mut |p| match p {
                PageOf::F32(v) => e.write_image::<Gray32Float>(w, h, v),
                PageOf::F16(v) => e.write_image::<Gray16Float>(w, h, v),
            })
        }
    })
}

/// One page's samples as written.
enum PageOf<'a> {
    F32(&'a [f32]),
    /// IEEE binary16 bit patterns.
    F16(&'a [u16]),
}

/// Grey IEEE half-precision samples (BitsPerSample 16, SampleFormat IEEEFP), from their bit
/// patterns: the tiff crate writes 16-bit floats' tags but has no colour type for them.
struct Gray16Float;
impl colortype::ColorType for Gray16Float {
    type Inner = u16;
    const TIFF_VALUE: ::tiff::tags::PhotometricInterpretation = ::tiff::tags::PhotometricInterpretation::BlackIsZero;
    const BITS_PER_SAMPLE: &'static [u16] = &[16];
    const SAMPLE_FORMAT: &'static [::tiff::tags::SampleFormat] = &[::tiff::tags::SampleFormat::IEEEFP];

    fn horizontal_predict(row: &[u16], result: &mut Vec<u16>) {
        // No predictor is asked for (uncompressed pages); as for the crate's float types.
        result.extend_from_slice(row);
    }
}

fn write_pages<W: Write + Seek, K: TiffKind, C: colortype::ColorType>(
    mut encoder: TiffEncoder<W, K>,
    stack: &ArrayViewD<C::Inner>,
    w: u32,
    h: u32,
) -> ::tiff::TiffResult<()>
where
    C::Inner: Copy,
    [C::Inner]: TiffValue,
{
    for page in stack.outer_iter() {
        // A page in standard layout is written from the array's memory; a strided one is copied.
        let data: Cow<[C::Inner]> = page.as_slice().map_or_else(|| Cow::Owned(page.iter().copied().collect()), Cow::Borrowed);
        encoder.write_image::<C>(w, h, &data)?;
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
