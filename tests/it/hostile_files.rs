//! Hostile and odd input for every reader (.npy, .tif/.tiff, .png): truncated files,
//! lying headers (dimensions far beyond the data, products that overflow 64 bits), oversized
//! dimensions, a symlink to /dev/zero, a directory, and a few hundred seeded byte flips of valid
//! small files. Each read must return `Err` (or a correct array), never panic, finish quickly and
//! stay within a small memory budget, passed in-process through `io::read_with_budget`.
//!
//! The memory bound is checked by a counting allocator: no single allocation made by a read (on
//! its thread) may exceed `MAX_ALLOCATION`, as a read that sized a buffer by a lying header would.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use lucent::io::{self, Loaded};
use lucent::Error;
use ndarray::{ArrayD, IxDyn};
use rand::{Rng, SeedableRng};

/// The budget given to the readers here.
const BUDGET: u64 = 1 << 20;
/// The largest single allocation any read may make (the budget plus the decoders' own buffers).
const MAX_ALLOCATION: usize = 8 << 20;
/// Beyond this an allocation is refused outright, so a runaway read aborts instead of swapping.
const REFUSE: usize = 256 << 20;

thread_local! {
    /// The largest allocation made on this thread since `read` reset it (const: no allocation).
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

/// The largest allocation of any thread, for a runaway read on a thread the decoders start.
static LARGEST_ANYWHERE: AtomicUsize = AtomicUsize::new(0);

fn note(size: usize) -> bool {
    LARGEST.with(|c| c.set(c.get().max(size)));
    LARGEST_ANYWHERE.fetch_max(size, Ordering::Relaxed);
    size <= REFUSE
}

struct Counting;

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !note(layout.size()) {
            return std::ptr::null_mut();
        }
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !note(layout.size()) {
            return std::ptr::null_mut();
        }
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !note(new_size) {
            return std::ptr::null_mut();
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Reads within the budget, quickly, without panicking or allocating beyond `MAX_ALLOCATION`.
fn read(path: &Path) -> lucent::Result<Loaded> {
    let start = Instant::now();
    LARGEST.with(|c| c.set(0));
    let result = std::panic::catch_unwind(|| io::read_with_budget(path, BUDGET)).unwrap_or_else(|_| panic!("reading {} panicked", path.display()));
    let largest = LARGEST.with(Cell::get);
    assert!(largest <= MAX_ALLOCATION, "reading {} allocated {largest} bytes at once", path.display());
    assert!(start.elapsed() < Duration::from_secs(2), "reading {} took {:?}", path.display(), start.elapsed());
    result
}

/// No thread allocated more than `REFUSE` at once (larger requests abort the test binary).
fn assert_bounded() {
    assert!(LARGEST_ANYWHERE.load(Ordering::Relaxed) <= REFUSE);
}

/// Asserts an `Error::File` whose message holds `words`.
fn expect_error(path: &Path, words: &str) {
    match read(path) {
        Err(Error::File { message, .. }) => assert!(message.contains(words), "{}: `{message}` lacks `{words}`", path.display()),
        other => panic!("{}: expected an error with `{words}`, got {other:?}", path.display()),
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn small_array() -> ArrayD<f32> {
    ArrayD::from_shape_vec(IxDyn(&[5, 7]), (0..35).map(|i| i as f32 * 0.5 - 3.0).collect()).unwrap()
}

/// Valid small files of every reader, by name (the extension picks the reader).
fn valid_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let a = small_array();
    let mut out = Vec::new();
    let mut add = |name: &str, write: &dyn Fn(&Path)| {
        let path = dir.join(name);
        write(&path);
        out.push((name.to_string(), std::fs::read(&path).unwrap()));
    };
    add("f32.npy", &|p| io::write_real(p, &a.view()).unwrap());
    add("c64.npy", &|p| io::write_complex(p, &a.mapv(|v| num_complex::Complex32::new(v, -v)).view()).unwrap());
    add("f32.tif", &|p| io::write_real(p, &a.view()).unwrap());
    add("stack.tif", &|p| io::write_real(p, &a.clone().into_shape_with_order(IxDyn(&[5, 7, 1])).unwrap().view()).unwrap());
    add("deflate.tif", &|p| {
        use tiff::encoder::{colortype::Gray16, Compression, DeflateLevel, TiffEncoder};
        let file = std::fs::File::create(p).unwrap();
        let enc = TiffEncoder::new(file).unwrap().with_compression(Compression::Deflate(DeflateLevel::Fast));
        let mut enc = enc;
        enc.write_image::<Gray16>(7, 5, &(0..35u16).map(|i| i * 1000).collect::<Vec<_>>()).unwrap();
    });
    add("lzw.tif", &|p| {
        use tiff::encoder::{colortype::Gray8, Compression, TiffEncoder};
        let file = std::fs::File::create(p).unwrap();
        let mut enc = TiffEncoder::new(file).unwrap().with_compression(Compression::Lzw);
        enc.write_image::<Gray8>(7, 5, &(0..35u8).collect::<Vec<_>>()).unwrap();
    });
    add("g8.png", &|p| io::write_real(p, &a.view()).unwrap());
    add("g16.png", &|p| {
        io::png::write(p, &a.view(), io::png::Depth::Sixteen).unwrap();
    });
    out
}

#[test]
fn valid_small_files_read_back() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in valid_files(dir.path()) {
        let path = write(dir.path(), &name, &bytes);
        let loaded = read(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(loaded.shape().iter().product::<usize>(), 35, "{name}");
    }
    assert_bounded();
}

#[test]
fn truncated_files_fail_at_every_offset() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in valid_files(dir.path()) {
        let whole = read(&write(dir.path(), &name, &bytes)).unwrap();
        for cut in 0..bytes.len() {
            let path = write(dir.path(), &format!("cut{cut}_{name}"), &bytes[..cut]);
            // Only what a decoder may skip (a PNG's closing chunk) may be cut without an error.
            if let Ok(loaded) = read(&path) {
                assert_eq!(loaded, whole, "{name} cut at {cut} of {} bytes read wrongly", bytes.len());
            }
            std::fs::remove_file(&path).unwrap();
        }
    }
    assert_bounded();
}

#[test]
fn mutated_files_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let files = valid_files(dir.path());
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    for case in 0..300 {
        for (name, bytes) in &files {
            let mut bytes = bytes.clone();
            for _ in 0..rng.random_range(1..=4) {
                let i = rng.random_range(0..bytes.len());
                bytes[i] = match rng.random_range(0..3) {
                    0 => bytes[i] ^ (1 << rng.random_range(0..8)),
                    1 => rng.random(),
                    _ => [0, 0xff, 0x7f, 0x80][rng.random_range(0..4)],
                };
            }
            let path = write(dir.path(), name, &bytes);
            // Ok is fine (a flipped sample value); a panic, a hang or a huge allocation is not.
            if let Ok(loaded) = read(&path) {
                assert!(loaded.shape().iter().product::<usize>() <= BUDGET as usize, "case {case} {name}");
            }
        }
    }
    assert_bounded();
}

// ---- lying headers ----

/// An .npy file with a version-1 header dict and raw data.
fn npy(dict: &str, data: &[u8]) -> Vec<u8> {
    let header = format!("{dict}\n");
    let (version, len) = match u16::try_from(header.len()) {
        Ok(n) => (1u8, n.to_le_bytes().to_vec()),
        Err(_) => (2u8, (header.len() as u32).to_le_bytes().to_vec()),
    };
    [b"\x93NUMPY".as_slice(), &[version, 0], &len, header.as_bytes(), data].concat()
}

fn npy_dict(descr: &str, shape: &str) -> String {
    format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}")
}

#[test]
fn npy_lying_headers_fail_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    expect_error(&write(d, "huge.npy", &npy(&npy_dict("<f4", "(100000, 100000)"), &[0; 64])), "truncated");
    expect_error(&write(d, "overflow.npy", &npy(&npy_dict("<f8", "(1099511627776, 1099511627776)"), &[])), "overflows");
    expect_error(&write(d, "max.npy", &npy(&npy_dict("<c16", "(18446744073709551615,)"), &[])), "overflows");
    expect_error(&write(d, "toolong.npy", &npy(&npy_dict("<f4", "(18446744073709551616,)"), &[])), "out of range");
    // Within the file's size but beyond the budget.
    let big = vec![0u8; 300_000 * 4];
    expect_error(&write(d, "budget.npy", &npy(&npy_dict("<f4", "(300000,)"), &big)), "host memory");
    // A version-2 header claiming 4 GiB, in a tiny file.
    let lying = [b"\x93NUMPY\x02\x00".as_slice(), &0xffff_fff0u32.to_le_bytes(), b"{}"].concat();
    expect_error(&write(d, "header.npy", &lying), "truncated in the header");
    // A long header, and brackets nested deep enough to overflow a recursive parser's stack.
    let long = format!("{}{}", npy_dict("<f4", "(2,)"), " ".repeat(2 << 20));
    expect_error(&write(d, "long.npy", &npy(&long, &[0; 8])), "headers up to");
    let nested = npy_dict("<f4", &format!("{}2{}", "(".repeat(100_000), ")".repeat(100_000)));
    expect_error(&write(d, "nested.npy", &npy(&nested, &[0; 4])), "nested too deeply");
    assert_bounded();
}

/// A little-endian TIFF: the 8-byte header, one IFD of (tag, type, value) entries (type 3 SHORT,
/// 4 LONG) whose next-IFD offset is `next`, then `data`.
fn tiff(entries: &[(u16, u16, u32)], next: u32, data: &[u8]) -> Vec<u8> {
    let mut out = b"II*\0".to_vec();
    out.extend(8u32.to_le_bytes());
    out.extend((entries.len() as u16).to_le_bytes());
    for &(tag, kind, value) in entries {
        out.extend(tag.to_le_bytes());
        out.extend(kind.to_le_bytes());
        out.extend(1u32.to_le_bytes());
        match kind {
            3 => out.extend([(value as u16).to_le_bytes(), [0, 0]].concat()),
            _ => out.extend(value.to_le_bytes()),
        }
    }
    out.extend(next.to_le_bytes());
    out.extend(data);
    out
}

/// A float32 grayscale page of w x h with one strip of `strip` bytes at `offset` (0: right after
/// the IFD), compressed with `compression` (1: none, 8: deflate).
fn tiff_page(w: u32, h: u32, bits: u32, compression: u32, offset: u32, strip: &[u8], next: u32) -> Vec<u8> {
    let at = if offset == 0 { 8 + 2 + 10 * 12 + 4 } else { offset };
    let format = if bits == 32 { 3 } else { 1 };
    let entries = [
        (256, 4, w),
        (257, 4, h),
        (258, 3, bits),
        (259, 3, compression),
        (262, 3, 1),
        (273, 4, at),
        (277, 3, 1),
        (278, 4, h),
        (279, 4, strip.len() as u32),
        (339, 3, format),
    ];
    tiff(&entries, next, strip)
}

#[test]
fn tiff_lying_headers_fail_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A 198-byte file whose header claims 100000 x 100000 float32 pixels (40 GB) in a 64-byte strip.
    let lying = tiff_page(100_000, 100_000, 32, 1, 0, &[0; 64], 0);
    assert_eq!(lying.len(), 198);
    expect_error(&write(d, "lying.tif", &lying), "truncated");
    expect_error(&write(d, "max.tif", &tiff_page(u32::MAX, u32::MAX, 64, 1, 0, &[0; 64], 0)), "truncated");
    expect_error(&write(d, "beyond.tif", &tiff_page(4, 4, 32, 1, 1 << 30, &[0; 64], 0)), "beyond the file's end");
    // Compressed data cannot be checked against its size; the budget stops it.
    expect_error(&write(d, "deflate.tif", &tiff_page(100_000, 100_000, 32, 8, 0, &[0; 64], 0)), "host memory");
    // A tag claiming more values than the file holds (the first directory is read before limits).
    let mut counted = lying.clone();
    counted[74..78].copy_from_slice(&60_000_000u32.to_le_bytes()); // StripOffsets' count
    expect_error(&write(d, "count.tif", &counted), "claims 60000000 values");
    // A directory that points back to itself.
    let cycle = tiff_page(4, 4, 32, 1, 0, &[0; 64], 8);
    assert!(read(&write(d, "cycle.tif", &cycle)).is_err());
    // A valid file beyond the budget.
    let page = vec![0u8; 600 * 600 * 4];
    expect_error(&write(d, "budget.tif", &tiff_page(600, 600, 32, 1, 0, &page, 0)), "host memory");
    // The same page is fine with room for it.
    let path = d.join("budget.tif");
    assert_eq!(io::read_with_budget(&path, 1 << 24).unwrap().shape(), &[600, 600]);
    assert_bounded();
}

/// A PNG signature and IHDR chunk (CRC not computed: the header is checked before decoding).
fn png_header(w: u32, h: u32, depth: u8, colour: u8) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    out.extend(w.to_be_bytes());
    out.extend(h.to_be_bytes());
    out.extend([depth, colour, 0, 0, 0]);
    out.extend([0; 4]);
    out
}

#[test]
fn png_lying_headers_fail_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    expect_error(&write(d, "huge.png", &png_header(100_000, 100_000, 8, 0)), "cannot be stored");
    expect_error(&write(d, "max.png", &png_header(u32::MAX, u32::MAX, 16, 0)), "cannot be stored");
    expect_error(&write(d, "palette.png", &png_header(4, 4, 8, 3)), "is indexed (palette); lucent reads grayscale PNG only");
    expect_error(&write(d, "alpha.png", &png_header(4, 4, 8, 4)), "grayscale with alpha");
    expect_error(&write(d, "rgb.png", &png_header(4, 4, 8, 2)), "is RGB");
    expect_error(&write(d, "bad.png", &png_header(4, 4, 8, 9)), "invalid colour type");
    // A valid random image beyond the budget, and then with room for it.
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let pixels: Vec<u8> = (0..600 * 600).map(|_| rng.random()).collect();
    let path = d.join("budget.png");
    image::GrayImage::from_raw(600, 600, pixels).unwrap().save(&path).unwrap();
    expect_error(&path, "host memory");
    assert_eq!(io::read_with_budget(&path, 1 << 24).unwrap().shape(), &[600, 600]);
    // A highly compressible image is not mistaken for a lying header.
    let path = d.join("zeros.png");
    image::GrayImage::from_raw(2000, 2000, vec![0; 2000 * 2000]).unwrap().save(&path).unwrap();
    assert_eq!(io::read_with_budget(&path, 1 << 26).unwrap().shape(), &[2000, 2000]);
    assert_bounded();
}

// ---- odd paths ----

#[test]
fn directories_say_so() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["x.npy", "x.tif", "x.png", "noext"] {
        let path = dir.path().join(name);
        std::fs::create_dir(&path).unwrap();
        expect_error(&path, "is a directory");
    }
    expect_error(Path::new("."), "is a directory");
}

#[cfg(unix)]
#[test]
fn a_symlink_to_dev_zero_is_refused_quickly() {
    let dir = tempfile::tempdir().unwrap();
    for (name, words) in [("z.npy", "no \\x93NUMPY magic"), ("z.tif", "not a regular file"), ("z.png", "not a regular file")] {
        let path = dir.path().join(name);
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        expect_error(&path, words);
    }
    assert_bounded();
}

#[cfg(unix)]
#[test]
fn a_valid_npy_stream_is_read_exactly() {
    // A non-regular file (a FIFO) with a valid .npy: the promised bytes are read, no more.
    let dir = tempfile::tempdir().unwrap();
    let a = small_array();
    let file = dir.path().join("a.npy");
    io::write_real(&file, &a.view()).unwrap();
    let fifo = dir.path().join("fifo.npy");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let bytes = std::fs::read(&file).unwrap();
    let fifo2 = fifo.clone();
    let writer = std::thread::spawn(move || std::fs::write(&fifo2, bytes).unwrap());
    let Loaded::Real(b) = read(&fifo).unwrap() else { panic!("not real") };
    writer.join().unwrap();
    assert_eq!(b, a);
}
