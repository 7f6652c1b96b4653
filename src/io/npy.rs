//! numpy's `.npy` format, read and written here directly (it is small): the magic
//! `\x93NUMPY`, a version (1.0: u16 header length; 2.0 and 3.0: u32), a Python dict literal
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }` padded with spaces to a
//! multiple of 64 bytes, then the raw elements.
//!
//! Read: bool, int8-64, uint8-64, float32/64 and complex64/128, either byte order, C or Fortran
//! order (Fortran data is returned in standard C layout). Written: little-endian float32 and
//! complex64 in C order, version 1.0 (2.0 when the header needs more than 65,535 bytes).

use std::io::{Read, Write};
use std::path::Path;

use ndarray::{ArrayD, ArrayViewD, IxDyn, ShapeBuilder};
use num_complex::Complex32;

use super::{atomic::write_atomic, file_error, Loaded};
use crate::error::Result;

const MAGIC: &[u8] = b"\x93NUMPY";

/// Longest header read: numpy writes a few hundred bytes (and refuses over 10,000 by default).
const MAX_HEADER: usize = 1 << 20;

/// Reads a `.npy` file using at most about `budget` bytes: the header first, then exactly the
/// bytes it promises, after checking them against the file's size and the budget.
pub fn read(path: &Path, budget: u64) -> Result<Loaded> {
    let (file, len) = super::open(path)?;
    decode_from(std::io::BufReader::new(file), len, budget).map_err(|message| file_error(path, message))
}

/// Parses the bytes of a `.npy` file; the error is a message without the path.
pub fn decode(bytes: &[u8]) -> std::result::Result<Loaded, String> {
    decode_from(bytes, Some(bytes.len() as u64), u64::MAX)
}

/// Parses a `.npy` stream of `len` bytes (None: unknown, as for a device or a pipe).
fn decode_from(mut r: impl Read, len: Option<u64>, budget: u64) -> std::result::Result<Loaded, String> {
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
    // The raw bytes and the converted elements live together for a moment.
    let out = if header.dtype.kind == Kind::Complex { 8 } else { 4 };
    let need = count.checked_mul(out).and_then(|o| o.checked_add(expected));
    super::check_budget(&format!("an array of shape {:?}", header.shape), need, budget)?;
    let expected = usize::try_from(expected).map_err(|_| "shape overflows")?;

    let data = read_up_to(&mut r, expected).map_err(io)?;
    if data.len() < expected {
        return Err(format!(
            "truncated: the header promises {expected} bytes of {} data for shape {:?}, the file holds {}",
            header.dtype.descr,
            header.shape,
            data.len()
        ));
    }
    // A stream of unknown length (a device, a pipe) must end here too.
    if len.is_none() && !read_up_to(&mut r, 1).map_err(io)?.is_empty() {
        return Err("corrupt: unexpected bytes after the data".into());
    }
    let data = header.dtype.to_little_endian(&data);
    let loaded = match header.dtype.kind {
        Kind::Complex => Loaded::Complex(arrange(&header, to_complex(&header.dtype, &data))?),
        _ => Loaded::Real(arrange(&header, to_real(&header.dtype, &data))?),
    };
    Ok(loaded)
}

/// Up to `n` bytes, fewer only at the end of the stream; never allocates more than `n`.
fn read_up_to(r: &mut impl Read, n: usize) -> std::io::Result<Vec<u8>> {
    let mut v = Vec::with_capacity(n);
    r.take(n as u64).read_to_end(&mut v)?;
    Ok(v)
}

/// Writes a float32 `.npy` (little-endian, C order), atomically.
pub fn write_f32(path: &Path, x: &ArrayViewD<f32>) -> Result<()> {
    write_atomic(path, |w| {
        let io = |e: std::io::Error| file_error(path, format!("write failed: {e}"));
        w.write_all(&header_bytes("<f4", x.shape())).map_err(io)?;
        for v in x.iter() {
            w.write_all(&v.to_le_bytes()).map_err(io)?;
        }
        Ok(())
    })
}

/// Writes a complex64 `.npy` (little-endian, C order), atomically.
pub fn write_c32(path: &Path, x: &ArrayViewD<Complex32>) -> Result<()> {
    write_atomic(path, |w| {
        let io = |e: std::io::Error| file_error(path, format!("write failed: {e}"));
        w.write_all(&header_bytes("<c8", x.shape())).map_err(io)?;
        for v in x.iter() {
            w.write_all(&v.re.to_le_bytes()).map_err(io)?;
            w.write_all(&v.im.to_le_bytes()).map_err(io)?;
        }
        Ok(())
    })
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
        let unsupported = || format!("unsupported dtype `{descr}` (lucent reads bool, int8-64, uint8-64, float32/64, complex64/128)");
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
            Kind::Float => matches!(size, 4 | 8),
            Kind::Complex => matches!(size, 8 | 16),
        };
        if !ok {
            return Err(unsupported());
        }
        let big_endian = order == '>' || (order == '=' && cfg!(target_endian = "big"));
        Ok(Dtype { descr: descr.to_string(), kind, size, big_endian })
    }

    /// The data with every scalar (each part of a complex) in little-endian order.
    fn to_little_endian<'a>(&self, data: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        let part = if self.kind == Kind::Complex { self.size / 2 } else { self.size };
        if !self.big_endian || part == 1 {
            return data.into();
        }
        let mut swapped = data.to_vec();
        swapped.chunks_exact_mut(part).for_each(<[u8]>::reverse);
        swapped.into()
    }
}

/// Decodes little-endian N-byte scalars.
fn each<const N: usize, T>(data: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
    data.chunks_exact(N).map(|c| f(c.try_into().unwrap())).collect()
}

/// Real elements as f32 (nearest value; see the module docs of `io`).
fn to_real(dtype: &Dtype, data: &[u8]) -> Vec<f32> {
    match (dtype.kind, dtype.size) {
        (Kind::Bool, _) => data.iter().map(|&b| (b != 0) as u8 as f32).collect(),
        (Kind::Uint, 1) => data.iter().map(|&b| b as f32).collect(),
        (Kind::Int, 1) => data.iter().map(|&b| b as i8 as f32).collect(),
        (Kind::Uint, 2) => each(data, |b| u16::from_le_bytes(b) as f32),
        (Kind::Int, 2) => each(data, |b| i16::from_le_bytes(b) as f32),
        (Kind::Uint, 4) => each(data, |b| u32::from_le_bytes(b) as f32),
        (Kind::Int, 4) => each(data, |b| i32::from_le_bytes(b) as f32),
        (Kind::Uint, 8) => each(data, |b| u64::from_le_bytes(b) as f32),
        (Kind::Int, 8) => each(data, |b| i64::from_le_bytes(b) as f32),
        (Kind::Float, 4) => each(data, f32::from_le_bytes),
        (Kind::Float, 8) => each(data, |b| f64::from_le_bytes(b) as f32),
        _ => unreachable!("Dtype::parse admits only the sizes above"),
    }
}

fn to_complex(dtype: &Dtype, data: &[u8]) -> Vec<Complex32> {
    let parts: Vec<f32> = match dtype.size {
        8 => each(data, f32::from_le_bytes),
        _ => each(data, |b| f64::from_le_bytes(b) as f32),
    };
    parts.chunks_exact(2).map(|p| Complex32::new(p[0], p[1])).collect()
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
            Some(Value::List(fields)) => {
                return Err(format!("unsupported dtype: a structured array of {} fields is not an image", fields.len()))
            }
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
