//! The engine an embedding app builds its own pipelines on: the device ([`Gpu`], its options and
//! arrays), the record-then-run executor ([`Recording`], [`Compiled`]) and the primitive
//! `record` forms (elementwise arithmetic, copies, layout, reductions, scans). The families
//! (`fft`, `signal`, `ndimage`, `restoration`, `registration`, `tomography`, `denoise`) add
//! their own `record_*` forms over the same [`Recording`].
//!
//! ```no_run
//! use lucent::engine::{binary::{self, BinaryOp}, reduce::{self, Reduction}, Gpu, Recording};
//! use ndarray::ArrayD;
//!
//! let gpu = Gpu::new()?;
//! let a = ArrayD::<f32>::ones(vec![3, 5]);
//! let mut rec = Recording::new(&gpu);
//! let x = rec.upload_f32(&a.view())?;
//! let y = binary::record(&mut rec, BinaryOp::Add, x, x)?;
//! let total = reduce::record(&mut rec, y, Reduction::Sum, None)?;
//! let out = rec.download(total);
//! let results = rec.run()?;
//! assert_eq!(results.f32(out)?.sum(), 30.0);
//! # Ok::<(), lucent::Error>(())
//! ```

pub use crate::gpu::{AdapterSummary, BindingInfo, BindingKind, Dtype, Gpu, GpuArray, GpuOptions, KernelInfo, PipelineStats, Shape, Tuning};
// How the families placed a call (the `placement` of their reports) and how far it has come.
pub use crate::graph::{Buf, Chunked, ChunkedDownload, Compiled, Download, NodeTime, Output, Recording, Results, RunReport};
pub use crate::placement::{Declined, Form, Placement, Progress};

// The primitive kernels, each with its typed `record` form and CPU twin.
pub use crate::kernels::{
    binary, broadcast, complex_to_real, complex_unary, copy_range, copy_vec4, count_nonfinite, fill, real_to_complex, select, take, unary,
};
// Direct window correlation (the kernels under `Method::Direct` and the ndimage filters).
pub use crate::kernels::{correlate_tiled, correlate_window};
// Layout (pad, crop, permute, flip, roll, fftshift), reductions and prefix sums, built from them.
pub use crate::ops::{layout, reduce, resident, scan};
