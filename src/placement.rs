//! Placement: how a call is laid out on the devices it has ([`Form`]: whole, in chunks, in
//! slabs, in tiles, split), decided in one place:
//!
//! - [`Ladder`]: every op that can be cut offers its forms to one, largest first. A form whose
//!   declared [`Needs`] exceed the device's budgets (one buffer binding, the device memory
//!   budget) is ruled out before anything is allocated; one that runs and does not fit gives way
//!   to the next; the first that runs is the answer. What each op knows is only its forms, in
//!   order, and what each needs.
//! - [`Misfit`] and [`does_not_fit`]: which errors mean "does not fit here, try a smaller form".
//! - [`Placement`]: what the ladder decided (the form, its pieces, the forms that gave way and
//!   why), the one placement report every op that places fills (`--json`'s `placement`).
//! - [`Progress`]: the one shape of the progress callbacks of long calls (iterations, tiles,
//!   slabs, parts, slices, stages).
//!
//! Forms planned from the budgets with no larger form to try (tomography's batches, adaptive
//! filtering's slabs) report [`Placement::planned`]. Timings are [`crate::host::ms_since`]. This
//! layer sits above `graph` and below `kernels`, so `fft` and the ops may use it.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// The forms a call can take on the devices it has, from the one that holds the most on a
/// device at once to the least.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// On one device, each array in one buffer (by FFT or by direct sums).
    Whole,
    /// On one device, the arrays held in several buffers along axis 0.
    Chunks,
    /// Slabs of rows along axis 0, each with the halo it reads, streamed through the devices or
    /// resident on several.
    Slabs,
    /// Overlapping tiles with guard bands, blended (Richardson-Lucy; a PSF grid is always tiled).
    Tiles,
    /// An FFT convolution in frequency parts along axis 0, each computed alone.
    Split,
}

/// A form that gave way to a smaller one, and why: the budget it would exceed, or the error its
/// attempt met.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Declined {
    pub form: Form,
    pub why: String,
}

/// How a call was placed: the form that ran, the pieces it ran in (chunks, slabs, tiles or
/// parts; 1 whole), and the larger forms that gave way first, in the order they were offered.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Placement {
    pub form: Form,
    pub pieces: usize,
    pub declined: Vec<Declined>,
}

impl Placement {
    /// A form planned from the budgets, with no larger form tried first.
    pub fn planned(form: Form, pieces: usize) -> Placement {
        Placement { form, pieces, declined: Vec::new() }
    }
}

/// What a form holds on one device at once, as the op declares it before running it (0: not
/// declared; the run itself then finds out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// The largest single buffer.
    pub buffer: u64,
    /// Every buffer alive at once.
    pub device: u64,
}

/// Which misfits make a form give way to the next one offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveWay {
    /// Any misfit: the next form holds less at once.
    OnMisfit,
    /// Only a limit ([`Misfit::Limit`]): the next form holds the same total in more buffers
    /// (chunks), so a device out of memory would be out of memory there too.
    OnLimit,
}

/// The one decider of how a call is placed; see the module's documentation.
#[derive(Debug, Default)]
pub struct Ladder {
    declined: Vec<Declined>,
}

impl Ladder {
    pub fn new() -> Ladder {
        Ladder::default()
    }

    /// Whether `needs` fit `gpu`'s budgets (buffer binding, device memory budget); when they do
    /// not, `form` is ruled out with the budget it would exceed.
    pub fn fits(&mut self, form: Form, gpu: &Gpu, needs: Needs) -> bool {
        let why = if needs.buffer > gpu.max_buffer_bytes() {
            format!("a buffer of {} bytes is beyond one binding ({} bytes)", needs.buffer, gpu.max_buffer_bytes())
        } else if needs.device > gpu.memory_budget_bytes() {
            format!("{} bytes on the device are beyond its memory budget ({} bytes, LUCENT_DEVICE_MEMORY_BYTES)", needs.device, gpu.memory_budget_bytes())
        } else {
            return true;
        };
        self.rule_out(form, why);
        false
    }

    /// Rules `form` out for a reason the op knows (its halo would outweigh a slab, say).
    pub fn rule_out(&mut self, form: Form, why: impl Into<String>) {
        self.declined.push(Declined { form, why: why.into() });
    }

    /// Runs `form`: `Some` result when it ran, `None` when it gave way (by `give_way`; the
    /// ladder records why), any other error as it is.
    pub fn attempt<T>(&mut self, form: Form, give_way: GiveWay, run: impl FnOnce() -> Result<T>) -> Result<Option<T>> {
        match run() {
            Ok(t) => Ok(Some(t)),
            Err(e) if gives_way(&e, give_way) => {
                self.rule_out(form, e.to_string());
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The placement: `form` ran, in `pieces`, after the forms that gave way.
    pub fn placed(self, form: Form, pieces: usize) -> Placement {
        Placement { form, pieces, declined: self.declined }
    }
}

fn gives_way(e: &Error, give_way: GiveWay) -> bool {
    match give_way {
        GiveWay::OnMisfit => does_not_fit(e),
        GiveWay::OnLimit => Misfit::of(e) == Some(Misfit::Limit),
    }
}

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
