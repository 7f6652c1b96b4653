//! numpy's `.npy` format, read and written here directly (it is small): the magic
//! `\x93NUMPY`, a version (1.0: u16 header length; 2.0 and 3.0: u32), a Python dict literal
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }` padded with spaces to a
//! multiple of 64 bytes, then the raw elements.
//!
//! Read: bool, int8-64, uint8-64, float32/64 and complex64/128, either byte order, C or Fortran
//! order (Fortran data is returned in standard C layout). Written: little-endian float32 and
//! complex64 in C order, version 1.0 (2.0 when the header needs more than 65,535 bytes).
//!
//! Speed (files of many GiB are the use): little-endian float32 and complex64 are read straight into the final array
//! and written straight from it; other dtypes are converted in bounded pieces, so a read holds
//! the result plus at most one piece of raw bytes (Fortran order adds one transposed copy).

use std::borrow::Cow;
use std::io::{ErrorKind, Read, Write};
use std::path::Path;

use bytemuck::Pod;
use ndarray::{ArrayD, ArrayViewD, IxDyn, ShapeBuilder};
use num_complex::Complex32;
use rayon::prelude::*;

use super::Loaded;
use crate::error::Result;
use crate::host::{file_error, write_atomic, Precision, Slab};

const MAGIC: &[u8] = b"\x93NUMPY";

/// Longest header read: numpy writes a few hundred bytes (and refuses over 10,000 by default).
const MAX_HEADER: usize = 1 << 20;

/// Raw bytes converted per piece (dtypes other than little-endian f32/c64): bounds the memory a
/// read needs beyond its result, and is large enough that the per-piece cost vanishes.
const PIECE: usize = 16 << 20;

/// Bytes per read or write call on the direct paths: large calls run at memory speed.
const CALL: usize = 64 << 20;

/// Reads a `.npy` file using at most about `budget` bytes: the header first, then exactly the
/// bytes it promises, after checking them against the file's size and the budget.
pub fn read(path: &Path, budget: u64) -> Result<Loaded> {
    let (file, len) = super::open(path)?;
    // A regular file (known length) is read at positions by all cores once the header is checked.
    let positional = len.and(file.try_clone().ok());
    decode_from(std::io::BufReader::new(file), len, budget, PIECE, positional.as_ref()).map_err(|message| file_error(path, message))
}

/// Parses the bytes of a `.npy` file; the error is a message without the path.
pub fn decode(bytes: &[u8]) -> std::result::Result<Loaded, String> {
    decode_from(bytes, Some(bytes.len() as u64), u64::MAX, PIECE, None)
}

/// Parses a `.npy` stream of `len` bytes (None: unknown, as for a device or a pipe), converting
/// `piece` raw bytes at a time where the dtype needs conversion; `file`, the same file opened
/// again, for positional reads of data that needs no conversion.
fn decode_from(mut r: impl Read, len: Option<u64>, budget: u64, piece: usize, file: Option<&std::fs::File>) -> std::result::Result<Loaded, String> {
    let io = |e: std::io::Error| format!("cannot read: {e}");
    let mut prefix = read_up_to(&mut r, 10).map_err(io)?;
    if prefix.len() < MAGIC.len() || &prefix[..MAGIC.len()] != MAGIC {
        return Err("not an .npy file (no \\x93NUMPY magic)".into());
    }
    let (major, minor) = match prefix.get(6..8) {
        Some(v) => (v[0], v[1]),
        None => return Err("truncated in the header".into()),
    };
    let header_len = match major {
        1 => prefix.get(8..10).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize),
        2 | 3 => {
            prefix.extend(read_up_to(&mut r, 2).map_err(io)?);
            prefix.get(8..12).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        }
        _ => return Err(format!("unsupported .npy version {major}.{minor} (lucent reads 1.0, 2.0 and 3.0)")),
    };
    let header_len = header_len.ok_or("truncated in the header")?;
    let start = prefix.len() as u64;
    if len.is_some_and(|n| n.saturating_sub(start) < header_len as u64) {
        return Err("truncated in the header".into());
    }
    if header_len > MAX_HEADER {
        return Err(format!("corrupt header: {header_len} bytes long (lucent reads headers up to {MAX_HEADER} bytes)"));
    }
    let text = read_up_to(&mut r, header_len).map_err(io)?;
    if text.len() < header_len {
        return Err("truncated in the header".into());
    }
    // Version 1 and 2 headers are latin-1, version 3 UTF-8; valid dtype headers are ASCII.
    let text = std::str::from_utf8(&text).map_err(|_| "corrupt header: not text")?;
    let header = Header::parse(text)?;

    let count = header.shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64)).ok_or("shape overflows")?;
    let expected = count.checked_mul(header.dtype.size as u64).ok_or("shape overflows")?;
    if let Some(n) = len {
        let held = n.saturating_sub(start + header_len as u64);
        if held < expected {
            return Err(format!(
                "truncated: the header promises {expected} bytes of {} data for shape {:?}, the file holds {held}",
                header.dtype.descr, header.shape
            ));
        }
        if held > expected {
            return Err(format!("corrupt: {} unexpected bytes after the data", held - expected));
        }
    }
    // The budget counts the raw bytes and the converted elements together, a bound on what the
    // read holds (the result and at most one piece of raw bytes).
    let out = if header.dtype.kind == Kind::Complex { 8 } else { 4 };
    let need = count.checked_mul(out).and_then(|o| o.checked_add(expected));
    crate::host::check_budget(&format!("an array of shape {:?}", header.shape), need, budget)?;
    let expected = usize::try_from(expected).map_err(|_| "shape overflows")?;
    let count = usize::try_from(count).map_err(|_| "shape overflows")?;

    let positional = file.map(|f| (f, start + header_len as u64));
    let truncated = |held: usize| {
        format!("truncated: the header promises {expected} bytes of {} data for shape {:?}, the file holds {held}", header.dtype.descr, header.shape)
    };
    let loaded = match header.dtype.kind {
        Kind::Complex => {
            let mut values = crate::host::zeroed_vec::<Complex32>(count);
            let held = read_scalars(&mut r, &header.dtype, bytemuck::cast_slice_mut(&mut values), piece, positional).map_err(io)?;
            if held < expected {
                return Err(truncated(held));
            }
            Loaded::Complex(arrange(&header, values)?)
        }
        _ => {
            let mut values = crate::host::zeroed_vec::<f32>(count);
            let held = read_scalars(&mut r, &header.dtype, &mut values, piece, positional).map_err(io)?;
            if held < expected {
                return Err(truncated(held));
            }
            Loaded::Real(arrange(&header, values)?)
        }
    };
    // A stream of unknown length (a device, a pipe) must end here too.
    if len.is_none() && !read_up_to(&mut r, 1).map_err(io)?.is_empty() {
        return Err("corrupt: unexpected bytes after the data".into());
    }
    Ok(loaded)
}

/// Reads one f32 per scalar of `dtype` (two per complex element) into `out`; returns the bytes
/// read, fewer than promised only where the stream ended early.
fn read_scalars(r: &mut impl Read, dtype: &Dtype, out: &mut [f32], piece: usize, positional: Option<(&std::fs::File, u64)>) -> std::io::Result<usize> {
    let (kind, size) = dtype.scalar();
    if kind == Kind::Float && size == 4 && !dtype.big_endian && cfg!(target_endian = "little") {
        // Already the engine's layout: straight into the result, no second copy.
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
        #[cfg(unix)]
        if let Some((file, offset)) = positional {
            // Every core faults in and fills its own pieces of the fresh result (one core moved
            // ~1.2-2 GB/s, bounded by page faults).
            use std::os::unix::fs::FileExt;
            crate::host::read_pool()
                .install(|| bytes.par_chunks_mut(CALL).enumerate().try_for_each(|(i, call)| file.read_exact_at(call, offset + (i * CALL) as u64)))?;
            return Ok(bytes.len());
        }
        let mut held = 0;
        for call in bytes.chunks_mut(CALL) {
            let got = fill(r, call)?;
            held += got;
            if got < call.len() {
                break;
            }
        }
        return Ok(held);
    }
    // Converted a piece at a time: never the whole file's raw bytes in memory.
    let per_piece = (piece / size).max(1);
    let mut raw = vec![0u8; per_piece.min(out.len()) * size];
    let mut held = 0;
    for dst in out.chunks_mut(per_piece) {
        let src = &mut raw[..dst.len() * size];
        let got = fill(r, src)?;
        held += got;
        if got < src.len() {
            break;
        }
        convert(kind, size, dtype.big_endian, src, dst);
    }
    Ok(held)
}

/// Reads until `buf` is full or the stream ends; returns the bytes read.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match r.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Up to `n` bytes, fewer only at the end of the stream; never allocates more than `n`.
fn read_up_to(r: &mut impl Read, n: usize) -> std::io::Result<Vec<u8>> {
    let mut v = Vec::with_capacity(n);
    r.take(n as u64).read_to_end(&mut v)?;
    Ok(v)
}

/// Writes a float32 `.npy` (little-endian, C order), atomically.
pub fn write_f32(path: &Path, x: &ArrayViewD<f32>) -> Result<()> {
    write_npy(path, "<f4", x)
}

/// Writes an int32 `.npy` (little-endian, C order), atomically: scipy.ndimage.label's dtype.
pub fn write_i32(path: &Path, x: &ArrayViewD<i32>) -> Result<()> {
    write_npy(path, "<i4", x)
}

/// Writes a complex64 `.npy` (little-endian, C order), atomically.
pub fn write_c32(path: &Path, x: &ArrayViewD<Complex32>) -> Result<()> {
    write_npy(path, "<c8", x)
}

/// The header, then the elements' bytes: straight from the array's memory when it is in standard
/// layout, else copied in C order a piece at a time. `T` is made of 4-byte scalars.
fn write_npy<T: Pod>(path: &Path, descr: &str, x: &ArrayViewD<T>) -> Result<()> {
    write_atomic(path, |w| {
        let io = |e: std::io::Error| file_error(path, format!("write failed: {e}"));
        w.write_all(&header_bytes(descr, x.shape())).map_err(io)?;
        if let Some(all) = x.as_slice() {
            // BufWriter passes writes larger than its buffer straight to the file.
            return all.chunks(CALL / size_of::<T>()).try_for_each(|c| w.write_all(&little_endian(c))).map_err(io);
        }
        let mut piece = Vec::with_capacity((PIECE / size_of::<T>()).min(x.len()));
        for &v in x.iter() {
            piece.push(v);
            if piece.len() == piece.capacity() {
                w.write_all(&little_endian(&piece)).map_err(io)?;
                piece.clear();
            }
        }
        w.write_all(&little_endian(&piece)).map_err(io)
    })
}

/// Writes a `.npy` of `shape` (float32, or float16 for half precision) atomically from slabs
/// along axis 0 that `next` returns in order (None: no more; an error abandons the file). Each
/// slab is written by all cores.
pub fn write_slabs(path: &Path, shape: [usize; 3], precision: Precision, next: &mut dyn FnMut() -> Result<Option<Slab>>) -> Result<()> {
    let (descr, size) = match precision {
        Precision::F32 => ("<f4", 4),
        Precision::F16 => ("<f2", 2),
    };
    write_atomic(path, |w| {
        let io = |e: std::io::Error| file_error(path, format!("write failed: {e}"));
        w.write_all(&header_bytes(descr, &shape)).map_err(io)?;
        let mut rows = 0;
        while let Some(slab) = next()? {
            let s = slab.shape();
            if slab.precision() != precision || s[1..] != shape[1..] || rows + s[0] > shape[0] {
                return Err(file_error(
                    path,
                    format!("a {} slab of shape {s:?} after {rows} rows of a {} volume of {shape:?}", slab.precision().name(), precision.name()),
                ));
            }
            rows += s[0];
            let mut bytes = slab.bytes();
            if cfg!(target_endian = "big") {
                bytes.to_mut().chunks_exact_mut(size).for_each(<[u8]>::reverse);
            }
            w.flush().map_err(io)?;
            w.get_mut().write_all_parallel(&bytes).map_err(io)?;
            drop(bytes);
            slab.give_back();
        }
        if rows != shape[0] {
            return Err(file_error(path, format!("{rows} of {} rows were written", shape[0])));
        }
        Ok(())
    })
}

/// The bytes of f32 scalars in little-endian order (a copy only on big-endian machines).
fn little_endian<T: Pod>(values: &[T]) -> Cow<'_, [u8]> {
    let bytes: &[u8] = bytemuck::cast_slice(values);
    if cfg!(target_endian = "little") {
        return bytes.into();
    }
    let mut swapped = bytes.to_vec();
    swapped.chunks_exact_mut(4).for_each(<[u8]>::reverse);
    swapped.into()
}

/// The magic, version, length and padded dict of a C-order array (numpy aligns data to 64 bytes).
pub fn header_bytes(descr: &str, shape: &[usize]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let tuple = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}");
    let (version, len_bytes) = if dict.len() + 11 + 64 <= u16::MAX as usize { (1u8, 2) } else { (2u8, 4) };
    let unpadded = MAGIC.len() + 2 + len_bytes + dict.len() + 1;
    dict.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    dict.push('\n');
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(dict.len() as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bool,
    Int,
    Uint,
    Float,
    Complex,
}

#[derive(Debug)]
struct Dtype {
    descr: String,
    kind: Kind,
    /// Bytes per element (both parts for complex).
    size: usize,
    big_endian: bool,
}

impl Dtype {
    fn parse(descr: &str) -> std::result::Result<Dtype, String> {
        let unsupported = || format!("unsupported dtype `{descr}` (lucent reads bool, int8-64, uint8-64, float16/32/64, complex64/128)");
        let (order, rest) = match descr.chars().next() {
            Some(c @ ('<' | '>' | '|' | '=')) => (c, &descr[1..]),
            _ => ('|', descr),
        };
        let kind = match rest.get(..1) {
            Some("b") => Kind::Bool,
            Some("i") => Kind::Int,
            Some("u") => Kind::Uint,
            Some("f") => Kind::Float,
            Some("c") => Kind::Complex,
            _ => return Err(unsupported()),
        };
        let size: usize = rest[1..].parse().map_err(|_| unsupported())?;
        let ok = match kind {
            Kind::Bool => size == 1,
            Kind::Int | Kind::Uint => matches!(size, 1 | 2 | 4 | 8),
            Kind::Float => matches!(size, 2 | 4 | 8),
            Kind::Complex => matches!(size, 8 | 16),
        };
        if !ok {
            return Err(unsupported());
        }
        let big_endian = order == '>' || (order == '=' && cfg!(target_endian = "big"));
        Ok(Dtype { descr: descr.to_string(), kind, size, big_endian })
    }

    /// The kind and size of each scalar: a complex element is two floats.
    fn scalar(&self) -> (Kind, usize) {
        match self.kind {
            Kind::Complex => (Kind::Float, self.size / 2),
            kind => (kind, self.size),
        }
    }
}

/// Converts raw scalars of `kind` and `size` bytes (big-endian or little) to f32, nearest value
/// (see the module docs of `io`), in parallel: the conversion must keep up with the reads.
fn convert(kind: Kind, size: usize, big_endian: bool, raw: &[u8], out: &mut [f32]) {
    match (kind, size) {
        (Kind::Bool, _) => each(raw, out, |b: [u8; 1]| (b[0] != 0) as u8 as f32),
        (Kind::Uint, 1) => each(raw, out, |b: [u8; 1]| b[0] as f32),
        (Kind::Int, 1) => each(raw, out, |b: [u8; 1]| b[0] as i8 as f32),
        (Kind::Uint, 2) => each(raw, out, |b| u16::from_le_bytes(order(b, big_endian)) as f32),
        (Kind::Int, 2) => each(raw, out, |b| i16::from_le_bytes(order(b, big_endian)) as f32),
        (Kind::Uint, 4) => each(raw, out, |b| u32::from_le_bytes(order(b, big_endian)) as f32),
        (Kind::Int, 4) => each(raw, out, |b| i32::from_le_bytes(order(b, big_endian)) as f32),
        (Kind::Uint, 8) => each(raw, out, |b| u64::from_le_bytes(order(b, big_endian)) as f32),
        (Kind::Int, 8) => each(raw, out, |b| i64::from_le_bytes(order(b, big_endian)) as f32),
        (Kind::Float, 2) => each(raw, out, |b| crate::kernels::pack_half::half_value(u16::from_le_bytes(order(b, big_endian)))),
        (Kind::Float, 4) => each(raw, out, |b| f32::from_le_bytes(order(b, big_endian))),
        (Kind::Float, 8) => each(raw, out, |b| f64::from_le_bytes(order(b, big_endian)) as f32),
        _ => unreachable!("Dtype::parse admits only the sizes above"),
    }
}

/// A scalar's bytes in little-endian order.
fn order<const N: usize>(mut b: [u8; N], big_endian: bool) -> [u8; N] {
    if big_endian {
        b.reverse();
    }
    b
}

/// `out[i] = f(the i-th N-byte scalar of raw)`, in blocks on rayon's pool.
fn each<const N: usize>(raw: &[u8], out: &mut [f32], f: impl Fn([u8; N]) -> f32 + Sync) {
    const BLOCK: usize = 1 << 16;
    out.par_chunks_mut(BLOCK).zip(raw.par_chunks(BLOCK * N)).for_each(|(o, r)| {
        for (o, c) in o.iter_mut().zip(r.chunks_exact(N)) {
            *o = f(c.try_into().unwrap());
        }
    });
}

/// Shapes the elements, in standard (C) layout whatever the file's order.
fn arrange<T: Clone>(header: &Header, values: Vec<T>) -> std::result::Result<ArrayD<T>, String> {
    let shape = IxDyn(&header.shape);
    let array = if header.fortran_order {
        ArrayD::from_shape_vec(shape.f(), values).map(|a| a.as_standard_layout().into_owned())
    } else {
        ArrayD::from_shape_vec(shape, values)
    };
    array.map_err(|e| format!("corrupt: {e}"))
}

struct Header {
    dtype: Dtype,
    fortran_order: bool,
    shape: Vec<usize>,
}

impl Header {
    fn parse(text: &str) -> std::result::Result<Header, String> {
        let corrupt = |what: &str| format!("corrupt header ({what}): {}", text.trim_end());
        let mut p = Literal { s: text.as_bytes(), i: 0, depth: 0 };
        let Value::Dict(entries) = p.value().map_err(|e| corrupt(&e))? else {
            return Err(corrupt("not a dict"));
        };
        let get = |key: &str| entries.iter().find(|(k, _)| k == key).map(|(_, v)| v);
        let dtype = match get("descr") {
            Some(Value::Str(s)) => Dtype::parse(s)?,
            Some(Value::List(fields)) => return Err(format!("unsupported dtype: a structured array of {} fields is not an image", fields.len())),
            _ => return Err(corrupt("no 'descr' string")),
        };
        let fortran_order = match get("fortran_order") {
            Some(Value::Bool(b)) => *b,
            _ => return Err(corrupt("no 'fortran_order' boolean")),
        };
        let shape = match get("shape") {
            Some(Value::Tuple(items)) => items
                .iter()
                .map(|v| match v {
                    Value::Int(n) => Ok(*n),
                    _ => Err(corrupt("shape holds a non-integer")),
                })
                .collect::<std::result::Result<Vec<_>, _>>()?,
            _ => return Err(corrupt("no 'shape' tuple")),
        };
        Ok(Header { dtype, fortran_order, shape })
    }
}

/// The Python literals an `.npy` header uses.
#[derive(Debug)]
enum Value {
    Str(String),
    Bool(bool),
    Int(usize),
    None,
    Tuple(Vec<Value>),
    List(Vec<Value>),
    Dict(Vec<(String, Value)>),
}

/// A recursive-descent parser for those literals.
struct Literal<'a> {
    s: &'a [u8],
    i: usize,
    /// Open brackets around the current value: bounded, so a hostile header cannot overflow the stack.
    depth: usize,
}

impl Literal<'_> {
    fn skip_space(&mut self) {
        while self.s.get(self.i).is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8) -> std::result::Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected `{}` at byte {}", c as char, self.i))
        }
    }

    fn value(&mut self) -> std::result::Result<Value, String> {
        let open = matches!(self.peek(), Some(b'{' | b'(' | b'['));
        if open && self.depth >= 32 {
            return Err(format!("brackets nested too deeply at byte {}", self.i));
        }
        self.depth += open as usize;
        let value = self.bracketed_or_scalar();
        self.depth -= open as usize;
        value
    }

    fn bracketed_or_scalar(&mut self) -> std::result::Result<Value, String> {
        match self.peek().ok_or("unexpected end")? {
            b'{' => self.dict(),
            b'(' => self.sequence(b')').map(Value::Tuple),
            b'[' => self.sequence(b']').map(Value::List),
            b'\'' | b'"' => self.string().map(Value::Str),
            b'0'..=b'9' => self.int(),
            _ => self.word(),
        }
    }

    fn dict(&mut self) -> std::result::Result<Value, String> {
        self.expect(b'{')?;
        let mut entries = Vec::new();
        while self.peek() != Some(b'}') {
            let key = self.string()?;
            self.expect(b':')?;
            entries.push((key, self.value()?));
            if self.peek() == Some(b',') {
                self.i += 1;
            } else {
                break;
            }
        }
        self.expect(b'}')?;
        Ok(Value::Dict(entries))
    }

    fn sequence(&mut self, close: u8) -> std::result::Result<Vec<Value>, String> {
        self.i += 1; // the opening bracket, seen by `value`
        let mut items = Vec::new();
        while self.peek() != Some(close) {
            items.push(self.value()?);
            if self.peek() == Some(b',') {
                self.i += 1;
            } else {
                break;
            }
        }
        self.expect(close)?;
        Ok(items)
    }

    fn string(&mut self) -> std::result::Result<String, String> {
        let quote = self.peek().filter(|&c| c == b'\'' || c == b'"').ok_or(format!("expected a string at byte {}", self.i))?;
        let start = self.i + 1;
        let len = self.s[start..].iter().position(|&c| c == quote).ok_or("unterminated string")?;
        self.i = start + len + 1;
        Ok(String::from_utf8_lossy(&self.s[start..start + len]).into_owned())
    }

    fn int(&mut self) -> std::result::Result<Value, String> {
        let start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap();
        if self.s.get(self.i) == Some(&b'L') {
            self.i += 1; // Python 2 long suffix, in files written by old numpy
        }
        digits.parse().map(Value::Int).map_err(|_| format!("integer `{digits}` out of range"))
    }

    fn word(&mut self) -> std::result::Result<Value, String> {
        let start = self.i;
        while self.s.get(self.i).is_some_and(u8::is_ascii_alphabetic) {
            self.i += 1;
        }
        match &self.s[start..self.i] {
            b"True" => Ok(Value::Bool(true)),
            b"False" => Ok(Value::Bool(false)),
            b"None" => Ok(Value::None),
            _ => Err(format!("unexpected text at byte {start}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.npy` of `descr` holding `data`, C order.
    fn file(descr: &str, shape: &[usize], data: &[u8]) -> Vec<u8> {
        let mut out = header_bytes(descr, shape);
        out.extend_from_slice(data);
        out
    }

    fn real(loaded: Loaded) -> Vec<f32> {
        match loaded {
            Loaded::Real(a) => a.iter().copied().collect(),
            other => panic!("not real: {other:?}"),
        }
    }

    /// Pieces smaller than one element, than the data, and not a multiple of the element size:
    /// every conversion lands in its place, and the direct path reads in full.
    #[test]
    fn conversion_in_pieces_matches_the_whole() {
        let want: Vec<f32> = (0..1001).map(|i| (i as f32 - 500.0) * 0.25).collect();
        let f8: Vec<u8> = want.iter().flat_map(|&v| (v as f64).to_le_bytes()).collect();
        let be4: Vec<u8> = want.iter().flat_map(|&v| v.to_be_bytes()).collect();
        let le4: Vec<u8> = want.iter().flat_map(|&v| v.to_le_bytes()).collect();
        let i2: Vec<u8> = want.iter().flat_map(|&v| ((v * 4.0) as i16).to_le_bytes()).collect();
        let want_i2: Vec<f32> = want.iter().map(|&v| v * 4.0).collect();
        // Quarter steps up to 125: exact in half precision.
        let half = |v: f32| crate::kernels::pack_half::half_bits(v);
        let le2: Vec<u8> = want.iter().flat_map(|&v| half(v).to_le_bytes()).collect();
        let be2: Vec<u8> = want.iter().flat_map(|&v| half(v).to_be_bytes()).collect();
        for piece in [1, 7, 64, 1 << 20] {
            for (descr, data, want) in
                [("<f8", &f8, &want), (">f4", &be4, &want), ("<f4", &le4, &want), ("<i2", &i2, &want_i2), ("<f2", &le2, &want), (">f2", &be2, &want)]
            {
                let bytes = file(descr, &[7, 11, 13], data);
                let got = real(decode_from(&bytes[..], Some(bytes.len() as u64), u64::MAX, piece, None).unwrap());
                assert_eq!(&got, want, "{descr}, pieces of {piece} bytes");
            }
        }
    }

    #[test]
    fn complex_in_pieces_matches_the_whole() {
        let want: Vec<Complex32> = (0..301).map(|i| Complex32::new(i as f32, -(i as f32) / 3.0)).collect();
        let be8: Vec<u8> = want.iter().flat_map(|c| [c.re.to_be_bytes(), c.im.to_be_bytes()]).flatten().collect();
        let c16: Vec<u8> = want.iter().flat_map(|c| [(c.re as f64).to_le_bytes(), (c.im as f64).to_le_bytes()]).flatten().collect();
        for piece in [1, 24, 1 << 20] {
            for (descr, data) in [(">c8", &be8), ("<c16", &c16)] {
                let bytes = file(descr, &[301], data);
                match decode_from(&bytes[..], Some(bytes.len() as u64), u64::MAX, piece, None).unwrap() {
                    Loaded::Complex(a) => assert_eq!(a.iter().copied().collect::<Vec<_>>(), want, "{descr}, pieces of {piece}"),
                    other => panic!("not complex: {other:?}"),
                }
            }
        }
    }

    /// A stream of unknown length that ends early says how many bytes it held, on both paths.
    #[test]
    fn a_short_stream_is_truncated_on_both_paths() {
        for (descr, size) in [("<f4", 4), ("<f8", 8)] {
            let bytes = file(descr, &[100], &vec![0u8; 100 * size - 3]);
            let err = decode_from(&bytes[..], None, u64::MAX, 16, None).unwrap_err();
            assert!(err.contains(&format!("the file holds {}", 100 * size - 3)), "{descr}: {err}");
        }
    }
}
