//! Zarr arrays (v2 and v3) and OME-Zarr images (NGFF 0.4 and 0.5) through zarrs, read whole or
//! by slabs of rows (the slowest axis), so a volume larger than host memory streams from disk to
//! disk ([`stream_rows`]).
//!
//! A path names a store by its first component ending in `.zarr`, and a node inside it by the rest:
//! `in.zarr/0` is the array `0` of the store `in.zarr`; `in.zarr` alone is that store's root, an
//! array, or an OME-Zarr image whose finest level is read. Any numeric data type converts to f32
//! as the other readers convert (bool, integers, float64; float16 is refused). The physical
//! metadata of an OME-Zarr level (axes, scale, translation) is kept in [`Ome`] and carried to
//! outputs.
//!
//! Outputs are OME-Zarr 0.5 images (Zarr v3): a group with one multiscales level `0`, zstd chunks,
//! written into a temporary directory beside the target and renamed over it when complete, so a
//! failed write leaves no partial store.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};
use serde_json::{json, Map, Value};
use zarrs::array::{data_type, Array, ArrayBuilder};
use zarrs::filesystem::FilesystemStore;
use zarrs::group::{Group, GroupBuilder};

use crate::error::{Error, Result};
use crate::host::{check_budget, file_error};
use crate::placement::Progress;

/// The physical metadata of an OME-Zarr level: its axes and coordinate transformations (scale,
/// translation) as the image's multiscales metadata holds them, and the image's name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ome {
    pub axes: Option<Value>,
    pub transforms: Option<Value>,
    pub name: Option<String>,
}

pub use super::is_zarr;

/// The store's directory and the node's path inside it ("/" for the root).
fn locate(path: &Path) -> Result<(PathBuf, String)> {
    let mut root = PathBuf::new();
    let mut inner = Vec::new();
    let mut found = false;
    for c in path.components() {
        if found {
            inner.push(c.as_os_str().to_string_lossy().into_owned());
        } else {
            root.push(c);
            found = c.as_os_str().to_string_lossy().to_ascii_lowercase().ends_with(".zarr");
        }
    }
    if !found {
        return Err(file_error(path, "is not in a Zarr store (no component ending in .zarr)".into()));
    }
    Ok((root, format!("/{}", inner.join("/"))))
}

fn zarr_error(path: &Path, e: impl std::fmt::Display) -> Error {
    file_error(path, format!("Zarr: {e}"))
}

/// The multiscales entry of an OME-Zarr group's attributes: 0.5 keeps it under "ome", 0.4 at the
/// top level.
fn multiscales(attributes: &Map<String, Value>) -> Option<&Value> {
    attributes.get("ome").and_then(|o| o.get("multiscales")).or_else(|| attributes.get("multiscales")).and_then(|m| m.get(0))
}

/// The level `level` of an image's multiscales entry (None: the first, the finest), its path
/// and metadata.
fn level_of(entry: &Value, level: Option<&str>) -> Option<(String, Ome)> {
    let datasets = entry.get("datasets")?.as_array()?;
    let dataset = match level {
        Some(name) => datasets.iter().find(|d| d.get("path").and_then(Value::as_str) == Some(name))?,
        None => datasets.first()?,
    };
    let ome = Ome {
        axes: entry.get("axes").cloned(),
        transforms: dataset.get("coordinateTransformations").cloned(),
        name: entry.get("name").and_then(Value::as_str).map(str::to_owned),
    };
    Some((dataset.get("path")?.as_str()?.to_owned(), ome))
}

/// A Zarr array opened for reading.
pub struct Source {
    array: Array<FilesystemStore>,
    path: PathBuf,
    ome: Ome,
}

impl Source {
    pub fn open(path: &Path) -> Result<Source> {
        let (root, inner) = locate(path)?;
        if root.exists() && !root.is_dir() {
            return Err(file_error(path, format!("{} is a file, not a Zarr store (a directory)", root.display())));
        }
        if !root.is_dir() {
            return Err(file_error(path, format!("the Zarr store {} does not exist", root.display())));
        }
        let store = Arc::new(FilesystemStore::new(&root).map_err(|e| zarr_error(path, e))?);
        let group = Group::open(store.clone(), &inner).ok();
        let image = group.as_ref().and_then(|g| multiscales(g.attributes()).and_then(|m| level_of(m, None)));
        if let (Some(g), None) = (&group, &image) {
            // A group that is no image with a level to read: say so, not that it is no array.
            let what = match multiscales(g.attributes()) {
                Some(_) => "an OME-Zarr image with no datasets (its multiscales list no level with a path)",
                None => "a Zarr group, not an array or an OME-Zarr image: name one of its arrays (store.zarr/path)",
            };
            return Err(file_error(path, what.into()));
        }
        let (array_path, ome) = match image {
            Some((level, ome)) => (format!("{}/{level}", inner.trim_end_matches('/')), ome),
            None => {
                // An array, with its image's metadata when its parent group is one.
                let (parent, name) = inner.rsplit_once('/').unwrap_or(("", &inner));
                let parent = if parent.is_empty() { "/" } else { parent };
                let ome = match inner.as_str() {
                    "/" => None,
                    _ => Group::open(store.clone(), parent).ok().and_then(|g| multiscales(g.attributes()).and_then(|m| level_of(m, Some(name)))),
                };
                (inner.clone(), ome.map(|(_, o)| o).unwrap_or_default())
            }
        };
        let array = Array::open(store, &array_path).map_err(|e| zarr_error(path, e))?;
        let source = Source { array, path: path.to_path_buf(), ome };
        // A chunk is decoded whole, whatever part of it is read: it must fit the host budget
        // before any is (a chunk shape of 2^31 once failed "to fill whole buffer", or aborted
        // under a capped address space).
        let chunks = source.chunks();
        let element = source.array.data_type().fixed_size().unwrap_or(8) as u64;
        let bytes = chunks.iter().try_fold(element, |b, &n| b.checked_mul(n as u64));
        check_budget(&format!("one chunk of the array (shape {chunks:?})"), bytes, crate::host::host_budget_bytes()?).map_err(|m| file_error(path, m))?;
        source.convert(&vec![0..0; source.shape().len()])?; // the data type is one lucent converts
        Ok(source)
    }

    pub fn shape(&self) -> Vec<usize> {
        self.array.shape().iter().map(|&n| n as usize).collect()
    }

    pub fn ome(&self) -> &Ome {
        &self.ome
    }

    /// The array's first chunk's shape.
    pub fn chunks(&self) -> Vec<usize> {
        let zeros = vec![0; self.array.dimensionality()];
        self.array.chunk_shape(&zeros).map(|c| c.iter().map(|n| n.get() as usize).collect()).unwrap_or_else(|_| self.shape())
    }

    /// The rows `rows` (along the slowest axis), every other axis whole, as f32.
    pub fn read_rows(&self, rows: Range<usize>) -> Result<ArrayD<f32>> {
        let mut shape = self.shape();
        if shape.is_empty() || rows.end > shape[0] || rows.start > rows.end {
            return Err(file_error(&self.path, format!("rows {rows:?} of an array of shape {shape:?}")));
        }
        let subset: Vec<Range<u64>> = std::iter::once(rows.start as u64..rows.end as u64).chain(shape[1..].iter().map(|&n| 0..n as u64)).collect();
        shape[0] = rows.len();
        let values = self.convert(&subset)?;
        Ok(ArrayD::from_shape_vec(IxDyn(&shape), values).expect("zarrs returns the subset's elements"))
    }

    /// The window `window` (one range per axis) as f32.
    pub fn read_window(&self, window: &[Range<usize>]) -> Result<ArrayD<f32>> {
        let shape = self.shape();
        if window.len() != shape.len() || window.iter().zip(&shape).any(|(w, &n)| w.start > w.end || w.end > n) {
            return Err(file_error(&self.path, format!("the window {window:?} of an array of shape {shape:?}")));
        }
        let subset: Vec<Range<u64>> = window.iter().map(|w| w.start as u64..w.end as u64).collect();
        let dims: Vec<usize> = window.iter().map(|w| w.len()).collect();
        let values = self.convert(&subset)?;
        Ok(ArrayD::from_shape_vec(IxDyn(&dims), values).expect("zarrs returns the subset's elements"))
    }

    /// The elements of `subset` as f32 (an empty subset reads nothing and checks the data type).
    fn convert(&self, subset: &[Range<u64>]) -> Result<Vec<f32>> {
        let dt = self.array.data_type();
        macro_rules! as_f32 {
            ($($name:ident: $t:ty => $f:expr),*) => {
                $(if *dt == data_type::$name() {
                    let v: Vec<$t> = self.array.retrieve_array_subset(&subset).map_err(|e| zarr_error(&self.path, e))?;
                    return Ok(v.into_iter().map($f).collect());
                })*
            };
        }
        as_f32!(
            float32: f32 => |x| x, float64: f64 => |x| x as f32,
            uint8: u8 => f32::from, uint16: u16 => f32::from, uint32: u32 => |x| x as f32, uint64: u64 => |x| x as f32,
            int8: i8 => f32::from, int16: i16 => f32::from, int32: i32 => |x| x as f32, int64: i64 => |x| x as f32,
            bool: bool => |b| f32::from(u8::from(b))
        );
        Err(file_error(&self.path, format!("Zarr data type {} (lucent reads bool, integers, float32 and float64)", dt)))
    }
}

/// Default axis names by rank: t for a fourth axis (time), then z, y, x.
fn default_axes(rank: usize) -> Value {
    let names = ["t", "z", "y", "x"];
    Value::Array(names[4 - rank.min(4)..].iter().map(|&n| json!({"name": n, "type": if n == "t" { "time" } else { "space" }})).collect())
}

/// An OME-Zarr 0.5 image being written: its level `0` in a temporary store renamed over the
/// target by [`Sink::finish`] (dropped unfinished, the temporary store is removed).
pub struct Sink {
    array: Array<FilesystemStore>,
    temporary: PathBuf,
    target: PathBuf,
    finished: bool,
}

impl Sink {
    /// An image of `shape` at `path` (a directory ending in .zarr), chunked by `chunks` (None:
    /// up to 256 along the last two axes, 16 along others), with `ome`'s axes and transforms
    /// where they fit the rank (else defaults: unit scale).
    pub fn create(path: &Path, shape: &[usize], chunks: Option<&[usize]>, ome: &Ome) -> Result<Sink> {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if !name.to_ascii_lowercase().ends_with(".zarr") {
            return Err(file_error(path, "a Zarr output is a directory whose name ends in .zarr".into()));
        }
        if shape.is_empty() || shape.contains(&0) {
            return Err(file_error(path, format!("cannot write an empty array of shape {shape:?}")));
        }
        super::check_directory(path)?;
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        crate::host::temporaries::remove_stale(dir, &name);
        let temporary = dir.join(format!(".{name}.lucent-{}.tmp", std::process::id()));
        let _ = std::fs::remove_dir_all(&temporary);
        // Tracked before it exists: a signal between the two would otherwise leave it behind.
        crate::host::temporaries::track(&temporary);
        if let Err(e) = std::fs::create_dir(&temporary) {
            crate::host::temporaries::untrack(&temporary);
            return Err(file_error(path, format!("cannot create {}: {e}", temporary.display())));
        }
        let array = Self::layout(&temporary, shape, chunks, ome).map_err(|e| zarr_error(path, e));
        let sink = |array| Sink { array, temporary: temporary.clone(), target: path.to_path_buf(), finished: false };
        match array {
            Ok(array) => Ok(sink(array)),
            Err(e) => {
                crate::host::temporaries::untrack(&temporary);
                let _ = std::fs::remove_dir_all(&temporary);
                Err(e)
            }
        }
    }

    fn layout(dir: &Path, shape: &[usize], chunks: Option<&[usize]>, ome: &Ome) -> std::result::Result<Array<FilesystemStore>, String> {
        let rank = shape.len();
        let fits = |v: &Option<Value>| v.as_ref().filter(|v| v.as_array().is_some_and(|a| a.len() == rank)).cloned();
        let axes = fits(&ome.axes).unwrap_or_else(|| default_axes(rank));
        let transforms = ome
            .transforms
            .clone()
            .filter(|t| {
                t.as_array().is_some_and(|ts| {
                    ts.iter().all(|t| ["scale", "translation"].iter().any(|k| t.get(k).and_then(Value::as_array).is_some_and(|a| a.len() == rank)))
                })
            })
            .unwrap_or_else(|| json!([{"type": "scale", "scale": vec![1.0; rank]}]));
        let mut image = json!({"axes": axes, "datasets": [{"path": "0", "coordinateTransformations": transforms}]});
        if let Some(name) = &ome.name {
            image["name"] = json!(name);
        }
        let attributes = json!({"ome": {"version": "0.5", "multiscales": [image]}});
        let store = Arc::new(FilesystemStore::new(dir).map_err(|e| e.to_string())?);
        let mut group = GroupBuilder::new();
        group.attributes(attributes.as_object().expect("an object").clone());
        group.build(store.clone(), "/").map_err(|e| e.to_string())?.store_metadata().map_err(|e| e.to_string())?;
        let chunks: Vec<u64> = match chunks {
            Some(c) if c.len() == rank && c.iter().all(|&n| n > 0) => c.iter().zip(shape).map(|(&c, &n)| c.min(n) as u64).collect(),
            _ => shape.iter().enumerate().map(|(i, &n)| n.min(if i + 2 >= rank { 256 } else { 16 }) as u64).collect(),
        };
        let names: Vec<String> =
            axes.as_array().expect("axes are a list").iter().map(|a| a.get("name").and_then(Value::as_str).unwrap_or("").to_owned()).collect();
        let array = ArrayBuilder::new(shape.iter().map(|&n| n as u64).collect::<Vec<_>>(), chunks, data_type::float32(), 0.0f32)
            .bytes_to_bytes_codecs(vec![Arc::new(zarrs::array::codec::ZstdCodec::new(3, false))])
            .dimension_names(Some(names))
            .build(store, "/0")
            .map_err(|e| e.to_string())?;
        array.store_metadata().map_err(|e| e.to_string())?;
        Ok(array)
    }

    /// The level's chunk shape.
    pub fn chunks(&self) -> Vec<usize> {
        let zeros = vec![0; self.array.dimensionality()];
        self.array.chunk_shape(&zeros).map(|c| c.iter().map(|n| n.get() as usize).collect()).expect("a regular grid")
    }

    /// Writes `x` as the rows from `start` on (every other axis whole).
    pub fn write_rows(&self, start: usize, x: &ArrayViewD<f32>) -> Result<()> {
        let shape = self.array.shape();
        if x.ndim() != shape.len() || x.shape()[1..].iter().zip(&shape[1..]).any(|(&a, &b)| a as u64 != b) || (start + x.shape()[0]) as u64 > shape[0] {
            return Err(file_error(&self.target, format!("rows of shape {:?} from row {start} do not fit an array of shape {shape:?}", x.shape())));
        }
        let subset: Vec<Range<u64>> = std::iter::once(start as u64..(start + x.shape()[0]) as u64).chain(shape[1..].iter().map(|&n| 0..n)).collect();
        let values: Vec<f32> = x.iter().copied().collect();
        self.array.store_array_subset(&subset.as_slice(), values).map_err(|e| zarr_error(&self.target, e))
    }

    /// Puts the complete image at the target path, replacing what was there.
    pub fn finish(mut self) -> Result<()> {
        // From here the temporary is the move's to remove (now, or inside host::all_or_nothing).
        self.finished = true;
        let (temporary, target) = (self.temporary.clone(), self.target.clone());
        crate::host::move_into_place(&self.temporary, move || replace_store(&temporary, &target))
    }
}

/// Moves the finished store `temporary` to `target`, replacing what is there (kept aside until
/// the move succeeded); on failure `temporary` is removed and `target` left as it was.
fn replace_store(temporary: &Path, target: &Path) -> Result<()> {
    let old = target.with_file_name(format!(".{}.lucent-{}.old", target.file_name().unwrap_or_default().to_string_lossy(), std::process::id()));
    let existed = target.exists();
    if existed {
        if let Err(e) = std::fs::rename(target, &old) {
            let _ = std::fs::remove_dir_all(temporary);
            return Err(file_error(target, format!("cannot replace: {e}")));
        }
    }
    if let Err(e) = std::fs::rename(temporary, target) {
        if existed {
            let _ = std::fs::rename(&old, target);
        }
        let _ = std::fs::remove_dir_all(temporary);
        return Err(file_error(target, format!("cannot write: {e}")));
    }
    if existed {
        let _ = std::fs::remove_dir_all(&old);
    }
    Ok(())
}

impl Drop for Sink {
    fn drop(&mut self) {
        if !self.finished {
            crate::host::temporaries::untrack(&self.temporary);
            let _ = std::fs::remove_dir_all(&self.temporary);
        }
    }
}

/// Reads a whole Zarr array as f32, refused before reading when it exceeds `budget` bytes.
pub fn read(path: &Path, budget: u64) -> Result<ArrayD<f32>> {
    let source = Source::open(path)?;
    let shape = source.shape();
    let bytes = shape.iter().try_fold(4u64, |b, &n| b.checked_mul(n as u64));
    check_budget(&format!("the array (shape {shape:?}) as float32"), bytes, budget).map_err(|m| file_error(path, m))?;
    source.read_rows(0..shape.first().copied().unwrap_or(0))
}

/// Writes `x` as an OME-Zarr image at `path`, with the axes and transforms of `like`'s (an OME-Zarr
/// input's) where they fit.
pub fn write(path: &Path, x: &ArrayViewD<f32>, like: Option<&Ome>) -> Result<()> {
    let sink = Sink::create(path, x.shape(), None, like.unwrap_or(&Ome::default()))?;
    sink.write_rows(0, x)?;
    sink.finish()
}

/// [`write`] like the OME-Zarr image `like` (its axes and transforms), where there is one.
pub fn write_like(path: &Path, x: &ArrayViewD<f32>, like: Option<&Path>) -> Result<()> {
    let like = like.map(Source::open).transpose()?;
    write(path, x, like.as_ref().map(Source::ome))
}

/// How [`stream_rows`] ran.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Streamed {
    pub slabs: usize,
    pub slab_rows: usize,
    /// Rows read before and after each slab (fewer at the array's ends).
    pub halo: [usize; 2],
    /// The most host memory one slab's input and output took, in bytes.
    pub peak_slab_bytes: u64,
}

/// The rows per slab such that `copies` arrays of a slab with its halo fit `budget` bytes,
/// rounded down to a whole number of output chunks along the rows where that leaves at least one.
pub fn slab_rows(shape: &[usize], halo: [usize; 2], copies: u64, budget: u64, chunk_rows: usize) -> Result<usize> {
    let row_bytes = shape[1..].iter().try_fold(4u64, |b, &n| b.checked_mul(n as u64)).unwrap_or(u64::MAX);
    let rows = (budget / copies.max(1) / row_bytes.max(1)).saturating_sub((halo[0] + halo[1]) as u64) as usize;
    if rows == 0 {
        return Err(Error::Invalid(format!(
            "a host memory budget of {budget} bytes holds no slab of rows of shape {:?} with a halo of {halo:?} rows ({copies} copies of {row_bytes} bytes a row); set LUCENT_HOST_BUDGET_BYTES higher",
            &shape[1..]
        )));
    }
    let rows = rows.min(shape[0]);
    Ok(if rows >= chunk_rows { rows / chunk_rows * chunk_rows } else { rows })
}

/// `op` applied slab by slab along the rows of `source` into `sink`: each slab read with `halo`
/// rows before and after (fewer at the ends), `op` returning an array of its input's shape, of
/// which the slab's own rows are written. `progress` (stage "rows": done, of how many) after each slab.
pub fn stream_rows(
    source: &Source,
    sink: &Sink,
    slab: usize,
    halo: [usize; 2],
    mut op: impl FnMut(ArrayD<f32>) -> Result<ArrayD<f32>>,
    mut progress: impl FnMut(Progress),
) -> Result<Streamed> {
    let rows = source.shape()[0];
    let slab = slab.max(1);
    let mut streamed = Streamed { slabs: 0, slab_rows: slab, halo, peak_slab_bytes: 0 };
    for start in (0..rows).step_by(slab) {
        let end = (start + slab).min(rows);
        let (lo, hi) = (start.saturating_sub(halo[0]), (end + halo[1]).min(rows));
        let input = source.read_rows(lo..hi)?;
        let in_shape = input.shape().to_vec();
        let output = op(input)?;
        if output.shape() != in_shape.as_slice() {
            return Err(Error::Shape(format!("a slab of shape {in_shape:?} gave a result of shape {:?}", output.shape())));
        }
        let bytes = 2 * 4 * output.len() as u64;
        streamed.peak_slab_bytes = streamed.peak_slab_bytes.max(bytes);
        sink.write_rows(start, &output.slice_axis(Axis(0), Slice::from(start - lo..end - lo)))?;
        streamed.slabs += 1;
        progress(Progress::new("rows", end, rows));
    }
    Ok(streamed)
}

/// Raw projections (angles, rows, cols) in a Zarr array, read by bands of rows as the pipeline
/// asks for them ([`crate::tomography::reconstruct`]); flats and darks, small, held in memory.
pub struct ZarrScan {
    pub data: Source,
    pub flat: Option<crate::tomography::Samples>,
    pub dark: Option<crate::tomography::Samples>,
}

impl ZarrScan {
    pub fn new(data: Source, flat: Option<crate::tomography::Samples>, dark: Option<crate::tomography::Samples>) -> Result<ZarrScan> {
        let shape = data.shape();
        let [_, r, c] = shape[..] else {
            return Err(file_error(&data.path, format!("projections of shape {shape:?}: (angles, rows, cols) expected")));
        };
        for (what, part) in [("flat fields", &flat), ("dark fields", &dark)] {
            if let Some(p) = part {
                if p.shape()[1..] != [r, c] || p.shape()[0] == 0 {
                    return Err(crate::Error::Shape(format!("{what} of shape {:?} for projections of {shape:?}", p.shape())));
                }
            }
        }
        Ok(ZarrScan { data, flat, dark })
    }
}

impl crate::tomography::ScanSource for ZarrScan {
    fn shape(&self) -> [usize; 3] {
        let s = self.data.shape();
        [s[0], s[1], s[2]]
    }

    fn count(&self, part: crate::tomography::Part) -> usize {
        use crate::tomography::Part;
        match part {
            Part::Data => self.data.shape()[0],
            Part::Flat => self.flat.as_ref().map_or(0, |f| f.shape()[0]),
            Part::Dark => self.dark.as_ref().map_or(0, |d| d.shape()[0]),
        }
    }

    fn read(&self, part: crate::tomography::Part, images: Option<Range<usize>>, rows: Range<usize>) -> Result<crate::tomography::Samples> {
        use crate::tomography::{Part, Samples};
        let held = match part {
            Part::Data => {
                let [n, _, c] = self.shape();
                let window = [images.unwrap_or(0..n), rows, 0..c];
                let band = self.data.read_window(&window)?;
                return Ok(Samples::F32(band.into_dimensionality().expect("three axes")));
            }
            Part::Flat => self.flat.as_ref(),
            Part::Dark => self.dark.as_ref(),
        };
        let p = held.ok_or_else(|| crate::Error::Invalid(format!("the scan has no {part:?} images")))?;
        let n = p.shape()[0];
        let images = images.unwrap_or(0..n);
        if images.end > n || rows.end > p.shape()[1] {
            return Err(crate::Error::Shape(format!("images {images:?}, rows {rows:?} of {:?}", p.shape())));
        }
        Ok(p.window(images, rows))
    }

    fn theta_degrees(&self) -> Option<Vec<f64>> {
        None
    }
}
