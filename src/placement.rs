//! Placement: how a call is laid out on the devices it has (whole, in chunks, in slabs, in
//! tiles, split), and what every layout shares. The ops decide their own layouts today, each
//! trying the largest form first and falling back to a smaller one when an attempt does not fit;
//! what those fallbacks have in common lives here, once:
//!
//! - [`Misfit`] and [`does_not_fit`]: which errors mean "does not fit here, try a smaller form"
//!   (every fallback asks this one classification);
//! - [`Progress`]: the one shape of the progress callbacks of long calls (iterations, tiles,
//!   slabs, parts, slices, stages).
//!
//! Timings are [`crate::host::ms_since`]. This layer sits above `graph` and below `kernels`, so
//! `fft` and the ops may use it.

use serde::Serialize;

use crate::error::Error;

/// Why an attempt did not fit where it was tried: the one classification of the errors that send
/// a call to a smaller form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misfit {
    /// A size beyond a limit known before anything ran ([`Error::TooLarge`]): one buffer
    /// binding, the device's memory budget, a part or tile budget. The same data in more,
    /// smaller buffers (chunks) may fit; so may any form that holds less at once.
    Limit,
    /// The device ran out of memory while allocating ([`Error::OutOfMemory`], after the
    /// recycled buffers were released). The same total in more buffers would not fit either:
    /// only a form that holds less at once (slabs, tiles, parts) may.
    Memory,
}

impl Misfit {
    /// The misfit `e` reports, if it is one; any other error is an answer, not a reason to try
    /// another form.
    pub fn of(e: &Error) -> Option<Misfit> {
        match e {
            Error::TooLarge { .. } => Some(Misfit::Limit),
            Error::OutOfMemory(_) => Some(Misfit::Memory),
            _ => None,
        }
    }
}

/// Whether `e` means "this does not fit here": the form that failed should give way to one that
/// holds less at once. Forms that only spread the same total over more buffers (chunks) ask
/// `Misfit::of(e) == Some(Misfit::Limit)` instead.
pub fn does_not_fit(e: &Error) -> bool {
    Misfit::of(e).is_some()
}

/// How far a long call has come: the one shape of every progress callback (Richardson-Lucy's
/// iterations, tiles, the slabs and parts of a convolution, a stack's slices, the passes of
/// adaptive filtering, B-scans registered).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Progress {
    /// What `done` and `total` count: "iterations", "slabs", "parts", "slices", "B-scans", or
    /// the pass of a call made of several ("structure", "reconstruction").
    pub stage: &'static str,
    /// Units done so far, over the whole call (over every tile, slab or batch item).
    pub done: usize,
    /// Units the whole call has (a stopping rule may end it sooner).
    pub total: usize,
    /// The piece this step belongs to, where a call runs in pieces with counts of their own
    /// (a tile of tiled Richardson-Lucy and its iterations).
    pub piece: Option<Piece>,
    /// Richardson-Lucy: the relative change this iteration measured, when its stopping rule
    /// measured one.
    pub relative_change: Option<f64>,
}

/// One piece of a call that runs in pieces (a tile), and how far it has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Piece {
    /// This piece (0-based) ...
    pub index: usize,
    /// ... of how many.
    pub count: usize,
    /// Units this piece has done, of its own `total`.
    pub done: usize,
    pub total: usize,
}

impl Progress {
    /// `done` of `total` units of `stage`, with no piece and no measured change.
    pub fn new(stage: &'static str, done: usize, total: usize) -> Progress {
        Progress { stage, done, total, piece: None, relative_change: None }
    }

    /// This progress with the relative change an iteration measured (or none).
    pub fn with_change(self, relative_change: Option<f64>) -> Progress {
        Progress { relative_change, ..self }
    }

    /// This progress within `piece`.
    pub fn in_piece(self, piece: Piece) -> Progress {
        Progress { piece: Some(piece), ..self }
    }
}
