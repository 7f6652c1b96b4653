//! A volume written while it is computed: slabs of slices (along axis 0, in order) go to a
//! writer thread that streams them into a `.npy`, a TIFF stack or an OME-Zarr image, so the
//! computation of the next slab overlaps the writing of the last and the volume never has to
//! be whole in memory. Written atomically: a failure on either side leaves no file.

use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver};

use super::{file_error, Format};
use crate::error::{Error, Result};
use crate::host::{Precision, Slab};

enum Message {
    Slab(Slab),
    /// The producer failed: the writer abandons the file.
    Abort,
}

/// Runs `produce`, which hands each slab (first slice, slices) of a volume of `shape` to the
/// function it is given, in order, while a second thread writes them to `path` (by extension:
/// .npy, .tif/.tiff or .zarr) in `precision` (half precision: .npy and TIFF).
pub fn write_streamed<T>(
    path: &Path,
    shape: [usize; 3],
    precision: Precision,
    produce: impl FnOnce(&mut dyn FnMut(usize, Slab) -> Result<()>) -> Result<T>,
) -> Result<T> {
    super::check_output(path, 3, false)?;
    let format = Format::from_path(path)?;
    if format == Format::Png {
        return Err(file_error(path, "a volume is written to .npy, .tif or .zarr, not .png".into()));
    }
    if precision == Precision::F16 && !matches!(format, Format::Npy | Format::Tiff) {
        return Err(file_error(path, "a float16 volume is written to .npy or .tif".into()));
    }
    if shape.contains(&0) {
        return Err(file_error(path, format!("cannot write an empty volume of shape {shape:?}")));
    }
    // Slabs in flight: one being written and up to [`WAITING`] waiting, so that the writer's
    // pace (a page cache's, a disk's) and the producer's even out.
    let (tx, rx) = sync_channel::<Message>(WAITING);
    std::thread::scope(|s| {
        let writer = s.spawn(move || write(path, format, shape, precision, rx));
        let mut next = 0;
        let produced = produce(&mut |start, slab| {
            if start != next {
                return Err(Error::Invalid(format!("slices from {start} written after {next}: the slabs must come in order")));
            }
            next += slab.shape()[0];
            tx.send(Message::Slab(slab)).map_err(|_| file_error(path, "the writer stopped".into()))
        });
        if produced.is_err() {
            let _ = tx.send(Message::Abort);
        }
        drop(tx);
        let written = writer.join().map_err(|_| file_error(path, "the writer stopped unexpectedly".into()));
        crate::host::recycle::release();
        let written = written?;
        // The producer's error first: a writer that stopped because of it says less.
        let value = produced?;
        written.map(|()| value)
    })
}

/// Slabs that wait for the writer at most.
const WAITING: usize = 3;

fn write(path: &Path, format: Format, shape: [usize; 3], precision: Precision, rx: Receiver<Message>) -> Result<()> {
    let mut next = || -> Result<Option<Slab>> {
        match rx.recv() {
            Ok(Message::Slab(slab)) => Ok(Some(slab)),
            Ok(Message::Abort) => Err(file_error(path, "abandoned: the computation failed".into())),
            Err(_) => Ok(None),
        }
    };
    match format {
        Format::Npy => super::npy::write_slabs(path, shape, precision, &mut next),
        Format::Tiff => super::tiff::write_slabs(path, shape, precision, &mut next),
        #[cfg(feature = "zarr")]
        Format::Zarr => {
            let sink = super::zarr::Sink::create(path, &shape, None, &super::zarr::Ome::default())?;
            let mut rows = 0;
            while let Some(slab) = next()? {
                let Slab::F32(slab) = slab else {
                    return Err(file_error(path, "a float16 slab for a float32 store".into()));
                };
                sink.write_rows(rows, &slab.view().into_dyn())?;
                rows += slab.shape()[0];
            }
            if rows != shape[0] {
                return Err(file_error(path, format!("{rows} of {} slices were written", shape[0])));
            }
            sink.finish()
        }
        _ => Err(file_error(path, "a volume is written to .npy, .tif or .zarr".into())),
    }
}
