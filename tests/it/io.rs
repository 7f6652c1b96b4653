//! File I/O: round trips for every format and dtype, byte orders, Fortran order, every npy
//! header version, and bad files (missing, garbage, truncated, wrong kind) giving `Error::File`.
//! Atomic writes leave nothing behind when they fail. No GPU needed.

use crate::common;

use std::path::{Path, PathBuf};

use common::{random, random_complex};
use lucent::io::{self, npy, png, Loaded};
use lucent::Error;
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use rand::Rng;

/// Odd and awkward shapes, 1-4D (and 0-D and empty for .npy, which can hold them).
const SHAPES: &[&[usize]] = &[&[1], &[7], &[3, 5], &[1, 1], &[2, 3, 5], &[2, 1, 3, 4], &[5, 1, 13, 4]];

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn random_array(dims: &[usize]) -> ArrayD<f32> {
    let n = dims.iter().product();
    ArrayD::from_shape_vec(IxDyn(dims), random(n)).unwrap()
}

/// Asserts `Error::File` naming `path`, with `words` in the message; returns the message.
fn expect_file_error<T: std::fmt::Debug>(result: lucent::Result<T>, path: &Path, words: &str) -> String {
    match result {
        Err(Error::File { path: p, message }) => {
            assert_eq!(p, path.display().to_string());
            assert!(message.contains(words), "message `{message}` lacks `{words}`");
            message
        }
        other => panic!("expected Error::File for {}, got {other:?}", path.display()),
    }
}

/// Lists the directory, to prove a failed write left no temporary file.
fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

// ---- npy written by hand, independently of the library's writer ----

/// An .npy file of `version` (1, 2 or 3) with the given header dict and raw data.
fn npy_file(version: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let mut out = b"\x93NUMPY".to_vec();
    out.extend_from_slice(&[version, 0]);
    let header = format!("{dict}\n");
    match version {
        1 => out.extend_from_slice(&(header.len() as u16).to_le_bytes()),
        _ => out.extend_from_slice(&(header.len() as u32).to_le_bytes()),
    }
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

fn dict(descr: &str, fortran: bool, shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let tuple = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let fortran = if fortran { "True" } else { "False" };
    format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {tuple}, }}")
}

/// Random values of one dtype: (descr without byte order, little-endian bytes per element,
/// the f32 the reader must return).
fn dtype_samples(code: &str, n: usize) -> Vec<(Vec<u8>, f32)> {
    let mut rng = rand::rng();
    (0..n)
        .map(|_| match code {
            "b1" => {
                let v = rng.random::<bool>();
                (vec![v as u8], v as u8 as f32)
            }
            "u1" => {
                let v = rng.random::<u8>();
                (v.to_le_bytes().to_vec(), v as f32)
            }
            "i1" => {
                let v = rng.random::<i8>();
                (v.to_le_bytes().to_vec(), v as f32)
            }
            "u2" => {
                let v = rng.random::<u16>();
                (v.to_le_bytes().to_vec(), v as f32)
            }
            "i2" => {
                let v = rng.random::<i16>();
                (v.to_le_bytes().to_vec(), v as f32)
            }
            "u4" => {
                let v = rng.random::<u32>();
                (v.to_le_bytes().to_vec(), v as f32)
            }
            "i4" => {
                let v = rng.random::<i32>();
                (v.to_le_bytes().to_vec(), v as f32)
            }
            "u8" => {
                let v = rng.random::<u64>();
                (v.to_le_bytes().to_vec(), v as f32)
            }
            "i8" => {
                let v = rng.random::<i64>();
                (v.to_le_bytes().to_vec(), v as f32)
            }
            "f4" => {
                let v = rng.random::<f32>() * 1e3 - 500.0;
                (v.to_le_bytes().to_vec(), v)
            }
            "f8" => {
                let v = rng.random::<f64>() * 1e3 - 500.0;
                (v.to_le_bytes().to_vec(), v as f32)
            }
            _ => unreachable!(),
        })
        .collect()
}

/// Reverses each scalar of `size` bytes: little- to big-endian.
fn swap(bytes: &[u8], size: usize) -> Vec<u8> {
    bytes.chunks_exact(size).flat_map(|c| c.iter().rev().copied()).collect()
}

#[test]
fn npy_reads_every_real_dtype_in_both_byte_orders() {
    let shape = [3, 1, 5];
    for code in ["b1", "u1", "i1", "u2", "i2", "u4", "i4", "u8", "i8", "f4", "f8"] {
        let samples = dtype_samples(code, 15);
        let le: Vec<u8> = samples.iter().flat_map(|(b, _)| b.clone()).collect();
        let want: Vec<f32> = samples.iter().map(|s| s.1).collect();
        let size = samples[0].0.len();
        let orders: &[(&str, Vec<u8>)] = if size == 1 { &[("|", le.clone())] } else { &[("<", le.clone()), (">", swap(&le, size)), ("=", le.clone())] };
        for (order, data) in orders {
            let descr = format!("{order}{code}");
            let file = npy_file(1, &dict(&descr, false, &shape), data);
            match npy::decode(&file) {
                Ok(Loaded::Real(a)) => {
                    assert_eq!(a.shape(), &shape, "{descr}");
                    assert_eq!(a.iter().copied().collect::<Vec<_>>(), want, "{descr}");
                }
                other => panic!("{descr}: {other:?}"),
            }
        }
    }
}

#[test]
fn npy_reads_complex64_and_complex128_in_both_byte_orders() {
    let shape = [4, 3];
    let values = random_complex(12);
    let c8: Vec<u8> = values.iter().flat_map(|c| [c.re.to_le_bytes(), c.im.to_le_bytes()]).flatten().collect();
    let c16: Vec<u8> = values.iter().flat_map(|c| [(c.re as f64).to_le_bytes(), (c.im as f64).to_le_bytes()]).flatten().collect();
    let cases = [("<c8", c8.clone()), (">c8", swap(&c8, 4)), ("<c16", c16.clone()), (">c16", swap(&c16, 8))];
    for (descr, data) in cases {
        match npy::decode(&npy_file(1, &dict(descr, false, &shape), &data)) {
            Ok(Loaded::Complex(a)) => {
                assert_eq!(a.shape(), &shape);
                // f32 -> f64 -> f32 is exact, so equality holds for every case.
                assert_eq!(a.iter().copied().collect::<Vec<_>>(), values, "{descr}");
            }
            other => panic!("{descr}: {other:?}"),
        }
    }
}

#[test]
fn npy_reads_fortran_order_into_c_layout() {
    let a = random_array(&[2, 3, 4]);
    // Fortran order stores the first axis fastest: the C-order walk of the transpose.
    let data: Vec<u8> = a.t().iter().flat_map(|v| v.to_le_bytes()).collect();
    let loaded = npy::decode(&npy_file(1, &dict("<f4", true, &[2, 3, 4]), &data)).unwrap();
    let Loaded::Real(b) = loaded else { panic!("not real") };
    assert!(b.is_standard_layout());
    assert_eq!(b, a);
}

#[test]
fn npy_reads_header_versions_1_2_3_and_loose_headers() {
    let a = random_array(&[3, 2]);
    let data: Vec<u8> = a.iter().flat_map(|v| v.to_le_bytes()).collect();
    let loose = "{\"shape\":(3,2),\"fortran_order\":False,\"descr\":\"<f4\"}   ";
    let old_long = "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 2L), }";
    for (version, d) in
        [(1, dict("<f4", false, &[3, 2])), (2, dict("<f4", false, &[3, 2])), (3, dict("<f4", false, &[3, 2])), (1, loose.into()), (1, old_long.into())]
    {
        let Loaded::Real(b) = npy::decode(&npy_file(version, &d, &data)).unwrap() else { panic!("not real") };
        assert_eq!(b, a, "version {version}, {d}");
    }
}

#[test]
fn npy_round_trips_float32_and_complex64_in_every_shape() {
    let dir = tmp();
    let mut shapes: Vec<&[usize]> = SHAPES.to_vec();
    shapes.extend([&[][..], &[0, 3][..]]); // 0-D and empty: .npy holds them too
    for dims in shapes {
        let path = dir.path().join("a.npy");
        let a = random_array(dims);
        io::write_real(&path, &a.view()).unwrap();
        assert_eq!(io::read_real(&path).unwrap(), a, "{dims:?}");
        // numpy aligns the data to 64 bytes; so do we.
        let len = std::fs::metadata(&path).unwrap().len() as usize;
        assert_eq!((len - a.len() * 4) % 64, 0);

        let n = a.len();
        let c = ArrayD::from_shape_vec(IxDyn(dims), random_complex(n)).unwrap();
        io::write_complex(&path, &c.view()).unwrap();
        assert_eq!(io::read_complex(&path).unwrap(), c, "{dims:?}");
    }
    // A non-standard layout (a transposed view) is written in its logical C order.
    let a = random_array(&[3, 4]);
    let path = dir.path().join("t.npy");
    io::write_real(&path, &a.t().into_dyn()).unwrap();
    assert_eq!(io::read_real(&path).unwrap(), a.t().into_dyn());
}

#[test]
fn npy_bad_files_give_file_errors() {
    let dir = tmp();
    let good = npy_file(1, &dict("<f4", false, &[2, 3]), &[0u8; 24]);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("garbage", b"this is not an npy file at all".to_vec(), "not an .npy file"),
        ("empty", Vec::new(), "not an .npy file"),
        ("truncated data", good[..good.len() - 1].to_vec(), "truncated"),
        ("truncated header", good[..20].to_vec(), "truncated in the header"),
        ("trailing bytes", [good.clone(), vec![0; 4]].concat(), "unexpected bytes"),
        ("version 9", npy_file(9, &dict("<f4", false, &[2, 3]), &[0; 24]), "unsupported .npy version"),
        ("string dtype", npy_file(1, &dict("<U3", false, &[2]), &[0; 24]), "unsupported dtype"),
        ("long double", npy_file(1, &dict("<f16", false, &[2]), &[0; 32]), "unsupported dtype"),
        ("structured", npy_file(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", &[0; 8]), "structured"),
        ("no shape", npy_file(1, "{'descr': '<f4', 'fortran_order': False, }", &[0; 8]), "corrupt header"),
        ("negative shape", npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", &[]), "corrupt header"),
        ("not a dict", npy_file(1, "['<f4']", &[]), "corrupt header"),
        ("unclosed", npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,", &[0; 8]), "corrupt header"),
        ("overflowing shape", npy_file(1, &dict("<f8", false, &[1 << 40, 1 << 40]), &[]), "overflows"),
    ];
    for (name, bytes, words) in cases {
        let path = dir.path().join(format!("{}.npy", name.replace(' ', "_")));
        std::fs::write(&path, bytes).unwrap();
        expect_file_error(io::read(&path), &path, words);
    }
    let missing = dir.path().join("missing.npy");
    expect_file_error(io::read(&missing), &missing, "cannot read");
}

#[test]
fn kinds_and_extensions_are_checked() {
    let dir = tmp();
    let c = ArrayD::from_shape_vec(IxDyn(&[2, 2]), random_complex(4)).unwrap();
    let complex = dir.path().join("c.npy");
    io::write_complex(&complex, &c.view()).unwrap();
    expect_file_error(io::read_real(&complex), &complex, "complex data where real");

    let real = dir.path().join("r.npy");
    io::write_real(&real, &random_array(&[2, 2]).view()).unwrap();
    expect_file_error(io::read_complex(&real), &real, "real data where complex");

    let tif = dir.path().join("c.tif");
    expect_file_error(io::write_complex(&tif, &c.view()), &tif, "only be written to .npy");
    let odd = dir.path().join("a.xyz");
    expect_file_error(io::write_real(&odd, &random_array(&[2]).view()), &odd, "unknown extension");
    expect_file_error(io::read(&odd), &odd, "unknown extension");
    // Extensions are case-insensitive.
    let upper = dir.path().join("A.NPY");
    io::write_real(&upper, &random_array(&[3]).view()).unwrap();
    assert_eq!(io::read_real(&upper).unwrap().shape(), &[3]);
}

// ---- TIFF ----

#[test]
fn tiff_round_trips_float32_pages() {
    let dir = tmp();
    for dims in [&[1, 1][..], &[5, 7], &[13, 3], &[3, 5, 7], &[2, 1, 9]] {
        for ext in ["tif", "tiff"] {
            let path = dir.path().join(format!("a.{ext}"));
            let a = random_array(dims);
            io::write_real(&path, &a.view()).unwrap();
            assert_eq!(io::read_real(&path).unwrap(), a, "{dims:?}");
        }
    }
    // A one-page stack reads back as a 2D image: pages are only an axis when there are several.
    let path = dir.path().join("one.tif");
    let a = random_array(&[1, 4, 6]);
    io::write_real(&path, &a.view()).unwrap();
    assert_eq!(io::read_real(&path).unwrap(), a.into_shape_with_order(IxDyn(&[4, 6])).unwrap());
}

/// Float32 pages of 37x53 (decoded straight into the stack), written from standard and strided
/// arrays, and an LZW-compressed float32 stack written by the tiff crate (the same path).
#[test]
fn tiff_float32_stacks_round_trip_at_37x53() {
    use tiff::encoder::{colortype::Gray32Float, Compression, TiffEncoder};
    let dir = tmp();
    let path = dir.path().join("f.tif");
    let a = random_array(&[3, 37, 53]);
    io::write_real(&path, &a.view()).unwrap();
    assert_eq!(io::read_real(&path).unwrap(), a);
    let strided = a.slice(ndarray::s![..;-1, ..;2, 1..]).into_dyn();
    io::write_real(&path, &strided).unwrap();
    assert_eq!(io::read_real(&path).unwrap(), strided);

    let mut enc = TiffEncoder::new(std::io::BufWriter::new(std::fs::File::create(&path).unwrap())).unwrap().with_compression(Compression::Lzw);
    for page in a.outer_iter() {
        enc.write_image::<Gray32Float>(53, 37, page.as_slice().unwrap()).unwrap();
    }
    drop(enc);
    assert_eq!(io::read_real(&path).unwrap(), a);
}

/// Writes integer pages with the tiff crate directly, as a microscope would.
fn write_tiff_pages<C>(path: &Path, pages: &[Vec<C::Inner>], w: u32, h: u32)
where
    C: tiff::encoder::colortype::ColorType,
    [C::Inner]: tiff::encoder::TiffValue,
{
    let file = std::fs::File::create(path).unwrap();
    let mut enc = tiff::encoder::TiffEncoder::new(std::io::BufWriter::new(file)).unwrap();
    for p in pages {
        enc.write_image::<C>(w, h, p).unwrap();
    }
}

#[test]
fn tiff_reads_integer_stacks_without_rescaling() {
    use tiff::encoder::colortype::{Gray16, Gray32, Gray8, GrayI16};
    let dir = tmp();
    let mut rng = rand::rng();
    let (pages, h, w) = (3usize, 5u32, 7u32);
    let n = (h * w) as usize;
    let path = dir.path().join("int.tif");

    let u8s: Vec<Vec<u8>> = (0..pages).map(|_| (0..n).map(|_| rng.random()).collect()).collect();
    write_tiff_pages::<Gray8>(&path, &u8s, w, h);
    let want: Vec<f32> = u8s.concat().iter().map(|&v| v as f32).collect();
    check_stack(&path, &[pages, h as usize, w as usize], &want);

    let u16s: Vec<Vec<u16>> = (0..pages).map(|_| (0..n).map(|_| rng.random()).collect()).collect();
    write_tiff_pages::<Gray16>(&path, &u16s, w, h);
    check_stack(&path, &[pages, h as usize, w as usize], &u16s.concat().iter().map(|&v| v as f32).collect::<Vec<_>>());

    let i16s: Vec<Vec<i16>> = vec![(0..n).map(|_| rng.random()).collect()];
    write_tiff_pages::<GrayI16>(&path, &i16s, w, h);
    check_stack(&path, &[h as usize, w as usize], &i16s.concat().iter().map(|&v| v as f32).collect::<Vec<_>>());

    // 32-bit integers beyond 2^24 round to the nearest f32, as documented.
    let u32s: Vec<Vec<u32>> = (0..2).map(|_| (0..n).map(|_| rng.random()).collect()).collect();
    write_tiff_pages::<Gray32>(&path, &u32s, w, h);
    check_stack(&path, &[2, h as usize, w as usize], &u32s.concat().iter().map(|&v| v as f32).collect::<Vec<_>>());
}

/// A TIFF written by hand in either byte order: pages of w x h samples of `size` bytes (given as
/// little-endian bytes), `rows` rows per strip. Each page's strips are stored in reverse order,
/// so only their offsets put them in place; the page's directory follows them.
fn tiff_by_hand(big_endian: bool, (w, h, rows): (u32, u32, u32), (size, format): (usize, u16), pages: &[Vec<u8>]) -> Vec<u8> {
    let u16s = |v: u16| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
    let u32s = |v: u32| if big_endian { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut out = if big_endian { b"MM".to_vec() } else { b"II".to_vec() };
    out.extend(u16s(42));
    let mut link = out.len(); // where the next directory's offset goes
    out.extend([0; 4]);
    for page in pages {
        let strips: Vec<&[u8]> = page.chunks(rows as usize * w as usize * size).collect();
        let mut offsets = vec![0; strips.len()];
        for (k, strip) in strips.iter().enumerate().rev() {
            offsets[k] = out.len() as u32;
            out.extend(if big_endian { swap(strip, size) } else { strip.to_vec() });
        }
        let counts: Vec<u32> = strips.iter().map(|s| s.len() as u32).collect();
        // A LONG array of one value is held in its entry, of more at an offset (word-aligned).
        let mut array = |values: &[u32]| {
            out.resize(out.len().next_multiple_of(2), 0);
            let at = out.len() as u32;
            values.iter().for_each(|&v| out.extend(u32s(v)));
            if values.len() == 1 {
                values[0]
            } else {
                at
            }
        };
        let (offsets_at, counts_at) = (array(&offsets), array(&counts));
        let n = strips.len() as u32;
        let entries = [
            (256, 4, 1, w),
            (257, 4, 1, h),
            (258, 3, 1, size as u32 * 8),
            (259, 3, 1, 1),
            (262, 3, 1, 1),
            (273, 4, n, offsets_at),
            (277, 3, 1, 1),
            (278, 4, 1, rows),
            (279, 4, n, counts_at),
            (339, 3, 1, format as u32),
        ];
        let ifd = out.len() as u32;
        out[link..link + 4].copy_from_slice(&u32s(ifd));
        out.extend(u16s(entries.len() as u16));
        for (tag, kind, count, value) in entries {
            out.extend(u16s(tag).into_iter().chain(u16s(kind)).chain(u32s(count)));
            // A SHORT is held in the first two bytes of its entry's value, in the file's order.
            out.extend(if kind == 3 { [u16s(value as u16), [0, 0]].concat() } else { u32s(value).to_vec() });
        }
        link = out.len();
        out.extend([0; 4]);
    }
    out
}

/// Multi-page, multi-strip stacks of every sample type in both byte orders (7 pages of 131x97,
/// strips of 13 rows and a last one of 6, stored in reverse): uncompressed 8 to 32-bit pages are
/// read directly (one run per strip), 64-bit ones through the decoder, and both ways return
/// exactly the values written (float32 from random bits: NaN payloads, subnormals, infinities).
/// Strips written one after another by the tiff crate merge into one run per page.
#[test]
fn tiff_direct_reads_match_the_decoder_and_the_written_values() {
    use tiff::encoder::colortype::{Gray16, Gray32Float};
    let (pages, h, w, rows) = (7, 97u32, 131u32, 13u32);
    let n = (h * w) as usize;
    let dir = tmp();
    let bits = |a: &ArrayD<f32>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let mut rng = rand::rng();
    let types = [("f4", 3), ("u1", 1), ("i1", 2), ("u2", 1), ("i2", 2), ("u4", 1), ("i4", 2), ("f8", 3), ("u8", 1)];
    for ((code, format), big_endian) in types.into_iter().flat_map(|t| [(t, false), (t, true)]) {
        let samples: Vec<(Vec<u8>, f32)> = match code {
            "f4" => (0..pages * n).map(|_| rng.random::<u32>()).map(|b| (b.to_le_bytes().to_vec(), f32::from_bits(b))).collect(),
            _ => dtype_samples(code, pages * n),
        };
        let size = samples[0].0.len();
        let data: Vec<Vec<u8>> = samples.chunks(n).map(|page| page.iter().flat_map(|s| s.0.clone()).collect()).collect();
        let path = dir.path().join(format!("{code}{big_endian}.tif"));
        std::fs::write(&path, tiff_by_hand(big_endian, (w, h, rows), (size, format), &data)).unwrap();
        let want: Vec<u32> = samples.iter().map(|s| s.1.to_bits()).collect();
        let direct = io::read_real(&path).unwrap();
        let (decoded, runs) = io::tiff::read_decoded(&path, u64::MAX).unwrap();
        let what = format!("{code}, big-endian {big_endian}");
        assert_eq!(direct.shape(), &[pages, h as usize, w as usize], "{what}");
        assert!(bits(&direct) == want, "{what}: the direct read differs from the values written");
        assert!(bits(&decoded) == want, "{what}: the decoder differs from the values written");
        assert_eq!(runs, (size <= 4).then_some(pages * h.div_ceil(rows) as usize), "{what}");
    }

    let path = dir.path().join("crate.tif");
    let f32s = random_array(&[pages, h as usize, w as usize]);
    let u16s: Vec<u16> = (0..n).map(|_| rng.random()).collect();
    let mut enc = tiff::encoder::TiffEncoder::new(std::io::BufWriter::new(std::fs::File::create(&path).unwrap())).unwrap();
    for page in f32s.outer_iter() {
        let mut image = enc.new_image::<Gray32Float>(w, h).unwrap();
        image.rows_per_strip(rows).unwrap();
        image.write_data(page.as_slice().unwrap()).unwrap();
    }
    // A last page of another type: each page converts as its own type says.
    let mut image = enc.new_image::<Gray16>(w, h).unwrap();
    image.rows_per_strip(rows).unwrap();
    image.write_data(&u16s).unwrap();
    drop(enc);
    let mut want: Vec<f32> = f32s.iter().copied().collect();
    want.extend(u16s.iter().map(|&v| v as f32));
    check_stack(&path, &[pages + 1, h as usize, w as usize], &want);
    assert_eq!(io::tiff::read_decoded(&path, u64::MAX).unwrap().1, Some(pages + 1));
}

fn check_stack(path: &Path, dims: &[usize], want: &[f32]) {
    let a = io::read_real(path).unwrap();
    assert_eq!(a.shape(), dims);
    assert_eq!(a.iter().copied().collect::<Vec<_>>(), want);
}

#[test]
fn tiff_bad_files_give_file_errors() {
    use tiff::encoder::colortype::{Gray8, RGB8};
    let dir = tmp();
    let rgb = dir.path().join("rgb.tif");
    write_tiff_pages::<RGB8>(&rgb, &[vec![7u8; 4 * 3 * 3]], 4, 3);
    expect_file_error(io::read(&rgb), &rgb, "grayscale");

    let mixed = dir.path().join("mixed.tif");
    let file = std::fs::File::create(&mixed).unwrap();
    let mut enc = tiff::encoder::TiffEncoder::new(std::io::BufWriter::new(file)).unwrap();
    enc.write_image::<Gray8>(4, 3, &[1u8; 12]).unwrap();
    enc.write_image::<Gray8>(3, 4, &[1u8; 12]).unwrap();
    drop(enc);
    expect_file_error(io::read(&mixed), &mixed, "equal pages");

    let good = dir.path().join("good.tif");
    io::write_real(&good, &random_array(&[3, 64, 64]).view()).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let truncated = dir.path().join("truncated.tif");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    expect_file_error(io::read(&truncated), &truncated, "");
    let garbage = dir.path().join("garbage.tiff");
    std::fs::write(&garbage, b"II*\0garbage that is not a directory").unwrap();
    expect_file_error(io::read(&garbage), &garbage, "");

    let four_d = dir.path().join("four.tif");
    expect_file_error(io::write_real(&four_d, &random_array(&[2, 2, 2, 2]).view()), &four_d, "2D images or 3D stacks");
    assert!(!four_d.exists());
}

// ---- PNG ----

#[test]
fn png_previews_scale_min_max_to_full_range() {
    let dir = tmp();
    for (depth, top) in [(png::Depth::Eight, 255.0f64), (png::Depth::Sixteen, 65535.0)] {
        for dims in [&[1, 1][..], &[5, 7], &[13, 2]] {
            let path = dir.path().join("p.png");
            let mut a = random_array(dims);
            if a.len() > 2 {
                a[[0, 1]] = f32::NAN; // excluded from the range, written as 0
            }
            let (lo, hi) = png::write(&path, &a.view(), depth).unwrap();
            let back = io::read_real(&path).unwrap();
            assert_eq!(back.shape(), dims);
            for (&v, &b) in a.iter().zip(back.iter()) {
                let want = if v.is_nan() || hi <= lo { 0.0 } else { ((v as f64 - lo as f64) / (hi as f64 - lo as f64) * top).round() };
                assert_eq!(b as f64, want, "value {v} in {lo}..{hi}");
            }
            if a.len() > 2 {
                assert_eq!(back.iter().copied().fold(f32::MIN, f32::max) as f64, top);
                assert!(back.iter().any(|&b| b == 0.0));
            }
        }
    }
    // write_real makes 8-bit previews.
    let path = dir.path().join("r.png");
    io::write_real(&path, &random_array(&[4, 5]).view()).unwrap();
    assert_eq!(io::read_real(&path).unwrap().iter().copied().fold(0.0, f32::max), 255.0);
    let three_d = dir.path().join("3d.png");
    expect_file_error(io::write_real(&three_d, &random_array(&[2, 2, 2]).view()), &three_d, "2D image");
}

#[test]
fn png_reads_gray_and_rejects_colour() {
    let dir = tmp();
    let mut rng = rand::rng();
    let (w, h) = (7u32, 3u32);
    let gray8: Vec<u8> = (0..w * h).map(|_| rng.random()).collect();
    let path = dir.path().join("g8.png");
    image::GrayImage::from_raw(w, h, gray8.clone()).unwrap().save(&path).unwrap();
    let a = io::read_real(&path).unwrap();
    assert_eq!(a.shape(), &[3, 7]);
    assert_eq!(a.iter().copied().collect::<Vec<_>>(), gray8.iter().map(|&v| v as f32).collect::<Vec<_>>());

    let gray16: Vec<u16> = (0..w * h).map(|_| rng.random()).collect();
    let path = dir.path().join("g16.png");
    image::ImageBuffer::<image::Luma<u16>, _>::from_raw(w, h, gray16.clone()).unwrap().save(&path).unwrap();
    let a = io::read_real(&path).unwrap();
    assert_eq!(a.iter().copied().collect::<Vec<_>>(), gray16.iter().map(|&v| v as f32).collect::<Vec<_>>());

    let path = dir.path().join("rgb.png");
    image::RgbImage::from_raw(w, h, vec![9; (w * h * 3) as usize]).unwrap().save(&path).unwrap();
    expect_file_error(io::read(&path), &path, "grayscale PNG only");
    let path = dir.path().join("garbage.png");
    std::fs::write(&path, b"\x89PNG\r\n\x1a\ngarbage").unwrap();
    expect_file_error(io::read(&path), &path, "not a readable PNG");
}

// ---- atomic writes ----

#[test]
fn failed_writes_leave_no_file() {
    let dir = tmp();
    let a = random_array(&[3, 4]);
    // Into a missing directory: nothing is created anywhere.
    for name in ["missing/a.npy", "missing/a.tif", "missing/a.png"] {
        let path = dir.path().join(name);
        expect_file_error(io::write_real(&path, &a.view()), &path, "cannot create");
        assert!(!path.exists());
    }
    assert!(entries(dir.path()).is_empty());

    // A failure half-way through: the old file survives intact and no temporary remains.
    let path = dir.path().join("keep.npy");
    io::write_real(&path, &a.view()).unwrap();
    let before = std::fs::read(&path).unwrap();
    let result = lucent::host::write_atomic(&path, |w| {
        use std::io::Write;
        w.write_all(b"half of a file").unwrap();
        Err(Error::Invalid("simulated failure".into()))
    });
    assert!(matches!(result, Err(Error::Invalid(_))));
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(entries(dir.path()), vec![path.clone()]);

    // And a failure on a fresh path creates nothing.
    let fresh = dir.path().join("fresh.npy");
    let _ = lucent::host::write_atomic(&fresh, |_| Err(Error::Invalid("simulated failure".into())));
    assert!(!fresh.exists());
    assert_eq!(entries(dir.path()), vec![path]);
}

/// Several outputs written inside `all_or_nothing` move into place together: a failure at the
/// last (after an .npy, a TIFF and a Zarr store were finished) leaves every target as it was and
/// no temporary; without a failure all are written.
#[test]
fn outputs_written_together_are_all_written_or_none() {
    let dir = tmp();
    let (old, new) = (random_array(&[3, 4]), random_array(&[5, 2]));
    let paths = ["a.npy", "b.tif", "c.zarr"].map(|n| dir.path().join(n));
    for p in &paths {
        io::write_real(p, &old.view()).unwrap();
    }
    let listing = |d: &Path| {
        let mut e = entries(d);
        e.sort();
        e
    };
    let before = listing(dir.path());
    let result = lucent::host::all_or_nothing(|| {
        for p in &paths {
            io::write_real(p, &new.view())?;
        }
        lucent::host::write_atomic(&dir.path().join("d.csv"), |_| Err(Error::Invalid("simulated full disk".into())))
    });
    assert!(matches!(result, Err(Error::Invalid(_))), "{result:?}");
    assert_eq!(listing(dir.path()), before, "a temporary was left or a target replaced");
    for p in &paths {
        assert_eq!(io::read_real(p).unwrap(), old, "{} was replaced", p.display());
    }
    lucent::host::all_or_nothing(|| paths.iter().try_for_each(|p| io::write_real(p, &new.view()))).unwrap();
    assert_eq!(listing(dir.path()), before);
    for p in &paths {
        assert_eq!(io::read_real(p).unwrap(), new, "{}", p.display());
    }
}

/// The `.npy` fast read and write paths through files at a size of many elements (37x53x3): float32
/// and complex64 read in place, float64, int16 and big-endian float32 converted, Fortran order
/// rearranged, and writes from standard and strided arrays.
#[test]
fn npy_every_fast_path_round_trips_through_files() {
    let shape = [37, 53, 3];
    let n = shape.iter().product();
    let dir = tmp();
    for (code, order, fortran) in [("f4", "<", false), ("f8", "<", false), ("i2", "<", false), ("f4", ">", false), ("f4", "<", true), ("i2", ">", true)] {
        let samples = dtype_samples(code, n);
        let le: Vec<u8> = samples.iter().flat_map(|(b, _)| b.clone()).collect();
        let data = if order == ">" { swap(&le, samples[0].0.len()) } else { le };
        let values: Vec<f32> = samples.iter().map(|s| s.1).collect();
        // The file's order: Fortran stores the first axis fastest.
        let want = if fortran {
            ArrayD::from_shape_vec(IxDyn(&shape).f(), values).unwrap().as_standard_layout().into_owned()
        } else {
            ArrayD::from_shape_vec(IxDyn(&shape), values).unwrap()
        };
        let path = dir.path().join(format!("{order}{code}{fortran}.npy"));
        std::fs::write(&path, npy_file(1, &dict(&format!("{order}{code}"), fortran, &shape), &data)).unwrap();
        assert_eq!(io::read_real(&path).unwrap(), want, "{order}{code}, fortran {fortran}");
    }
    // complex64 written and read back, and read from a file written by hand.
    let c = ArrayD::from_shape_vec(IxDyn(&shape), random_complex(n)).unwrap();
    let path = dir.path().join("c.npy");
    io::write_complex(&path, &c.view()).unwrap();
    assert_eq!(io::read_complex(&path).unwrap(), c);
    let c8: Vec<u8> = c.iter().flat_map(|v| [v.re.to_le_bytes(), v.im.to_le_bytes()]).flatten().collect();
    std::fs::write(&path, npy_file(1, &dict("<c8", false, &shape), &c8)).unwrap();
    assert_eq!(io::read_complex(&path).unwrap(), c);
    // Writes from a strided view (copied in pieces) in logical C order, real and complex.
    let a = random_array(&shape);
    let path = dir.path().join("w.npy");
    io::write_real(&path, &a.view()).unwrap();
    assert_eq!(io::read_real(&path).unwrap(), a);
    let strided = a.slice(ndarray::s![.., ..;2, ..]).permuted_axes([2, 0, 1]).into_dyn();
    io::write_real(&path, &strided).unwrap();
    assert_eq!(io::read_real(&path).unwrap(), strided);
    let strided = c.slice(ndarray::s![..;3, .., 1..]).reversed_axes().into_dyn();
    io::write_complex(&path, &strided).unwrap();
    assert_eq!(io::read_complex(&path).unwrap(), strided);
}
