//! Record-then-run executor. An algorithm records uploads, kernel dispatches over buffer proxies
//! (`Buf`) and downloads; `compile` plans buffer lifetimes (temporaries share pooled buffers once
//! their last reader has run), builds every bind group once and packs all kernel parameters into
//! one uniform buffer; `run` encodes the whole recording into one compute pass and submits once.
//! A compiled recording can be run again (iterations) without re-planning.

mod chunks;
mod compiled;
mod plan;

pub use chunks::{row_ranges, Chunked, ChunkedDownload};
pub use compiled::{Compiled, NodeTime, Results, RunReport, Started};

use ndarray::ArrayViewD;
use num_complex::Complex32;

use crate::error::{Error, Result};
use crate::gpu::{Dtype, Gpu, GpuArray, KernelInfo, Shape};

/// A buffer proxy inside one recording.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Buf(pub(crate) usize);

/// A value the run copies back to the host.
#[derive(Clone, Copy, Debug)]
pub struct Download(pub(crate) usize);

/// A value the run leaves on the device, returned as a `GpuArray`.
#[derive(Clone, Copy, Debug)]
pub struct Output(pub(crate) usize);

pub(crate) enum Source {
    /// A caller's array: read and written in place, never pooled.
    External(GpuArray),
    /// Host data written before each run.
    Upload(Vec<u8>),
    /// A temporary: its buffer comes from the pool.
    Temp,
    /// Another view (shape, element type) of the pooled value with this index.
    Alias(usize),
    /// An `R32Float` texture of 2 or 3 axes, created for the recording (kernels write it as a
    /// storage texture and read it through the sampler).
    Texture,
}

pub(crate) struct Value {
    pub shape: Shape,
    pub dtype: Dtype,
    pub source: Source,
    /// Downloaded or output: alive until the end of the run.
    pub kept: bool,
}

impl Value {
    pub fn bytes(&self) -> u64 {
        self.shape.len() as u64 * self.dtype.bytes()
    }
    /// Bytes bound to kernels: whole vec4s of the element type (32 bytes for f64), so the
    /// vec4 kernels' arrayLength covers every element.
    pub fn padded_bytes(&self) -> u64 {
        let align = if self.dtype.is_f64() { 32 } else { 16 };
        self.bytes().div_ceil(align) * align
    }
}

pub(crate) struct Dispatch {
    pub kernel: &'static KernelInfo,
    pub constants: Vec<(&'static str, f64)>,
    pub params: Vec<u8>,
    pub bufs: Vec<Buf>,
    pub workgroups: u64,
    pub label: String,
}

pub struct Recording<'g> {
    pub(crate) gpu: &'g Gpu,
    pub(crate) values: Vec<Value>,
    pub(crate) nodes: Vec<Dispatch>,
    pub(crate) downloads: Vec<Buf>,
    pub(crate) outputs: Vec<Buf>,
    pub(crate) poison: bool,
    pub(crate) profile: bool,
}

impl<'g> Recording<'g> {
    pub fn new(gpu: &'g Gpu) -> Self {
        let (poison, profile) = (gpu.options().poison, gpu.options().profile);
        Recording { gpu, values: Vec::new(), nodes: Vec::new(), downloads: Vec::new(), outputs: Vec::new(), poison, profile }
    }

    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// Fill every temporary with NaN when it is handed out, so a kernel that leaves an element
    /// unwritten shows up in the result (default: the `Gpu`'s `poison` option).
    pub fn set_poison(&mut self, poison: bool) {
        self.poison = poison;
    }

    /// Time every node with GPU timestamps, one compute pass each, where the adapter has them
    /// (default: the `Gpu`'s `profile` option); `RunReport::nodes` then lists them.
    pub fn set_profile(&mut self, profile: bool) {
        self.profile = profile;
    }

    fn push(&mut self, shape: Shape, dtype: Dtype, source: Source) -> Buf {
        self.values.push(Value { shape, dtype, source, kept: false });
        Buf(self.values.len() - 1)
    }

    /// Uses a caller's device array in place.
    pub fn input(&mut self, array: &GpuArray) -> Buf {
        self.push(array.shape().clone(), array.dtype(), Source::External(array.clone()))
    }

    pub fn upload_f32(&mut self, data: &ArrayViewD<f32>) -> Result<Buf> {
        self.upload_real(data)
    }

    /// A real array (f32, or f64 for the f64 kernels).
    pub fn upload_real<T: crate::gpu::Real>(&mut self, data: &ArrayViewD<T>) -> Result<Buf> {
        self.upload(data.shape(), T::DTYPE, || crate::gpu::row_major_bytes(data).into_owned())
    }

    /// Values given in f64 (weights, tables) as an array of the real type `dtype` (F32 or F64).
    pub fn upload_as(&mut self, data: &ArrayViewD<f64>, dtype: Dtype) -> Result<Buf> {
        match dtype {
            Dtype::F64 => self.upload_real(data),
            Dtype::F32 => self.upload_real(&data.mapv(|v| v as f32).view()),
            other => Err(Error::Dtype(format!("values to upload as {other:?}: expected a real type"))),
        }
    }

    pub fn upload_c32(&mut self, data: &ArrayViewD<Complex32>) -> Result<Buf> {
        self.upload(data.shape(), Dtype::C32, || crate::gpu::row_major_bytes(data).into_owned())
    }

    /// A mask as bytes (1 true, 0 false), four to a u32 word (the last padded with 0): a
    /// quarter of an f32 upload; kernels read element i as byte i % 4 of word i / 4.
    /// Uploaded now, as [`Recording::upload_once_f32`] (one run reads it).
    pub fn upload_mask(&mut self, data: &ArrayViewD<bool>) -> Result<Buf> {
        let array = GpuArray::upload_mask(self.gpu, data)?;
        Ok(self.input(&array))
    }

    /// Uploads `data` now, without keeping a copy for later runs: for large data a recording
    /// runs once (the caller's array is written straight into the device's staging memory).
    pub fn upload_once_f32(&mut self, data: &ArrayViewD<f32>) -> Result<Buf> {
        self.upload_once_real(data)
    }

    /// [`Recording::upload_once_f32`] for any real type.
    pub fn upload_once_real<T: crate::gpu::Real>(&mut self, data: &ArrayViewD<T>) -> Result<Buf> {
        let array = GpuArray::upload_real(self.gpu, data)?;
        Ok(self.input(&array))
    }

    /// Complex data of either precision, uploaded once (see `upload_once_f32`).
    pub fn upload_once_complex<T: crate::gpu::Real>(&mut self, data: &ArrayViewD<num_complex::Complex<T>>) -> Result<Buf> {
        let array = GpuArray::upload_complex(self.gpu, data)?;
        Ok(self.input(&array))
    }

    /// [`Recording::upload_once_f32`] for complex data.
    pub fn upload_once_c32(&mut self, data: &ArrayViewD<Complex32>) -> Result<Buf> {
        let array = GpuArray::upload_c32(self.gpu, data)?;
        Ok(self.input(&array))
    }

    /// Checks the size before `bytes` copies the data (once).
    fn upload(&mut self, dims: &[usize], dtype: Dtype, bytes: impl FnOnce() -> Vec<u8>) -> Result<Buf> {
        self.gpu.check_dtype(dtype)?;
        let shape = Shape::new(dims)?;
        self.gpu.check_buffer_size("upload", shape.len() as u64 * dtype.bytes())?;
        Ok(self.push(shape, dtype, Source::Upload(bytes())))
    }

    /// A temporary of the given shape; its buffer is shared with others whose lifetimes do not overlap.
    pub fn temp(&mut self, dims: &[usize], dtype: Dtype) -> Result<Buf> {
        self.gpu.check_dtype(dtype)?;
        let shape = Shape::new(dims)?;
        self.gpu.check_buffer_size(&format!("array of shape {dims:?}"), shape.len() as u64 * dtype.bytes())?;
        Ok(self.push(shape, dtype, Source::Temp))
    }

    /// An f32 texture of `dims` (2 or 3 axes, slowest first), for kernels that write it as a
    /// storage texture and kernels that sample it. It holds no buffer: it cannot be downloaded,
    /// output or reinterpreted.
    pub fn texture(&mut self, dims: &[usize]) -> Result<Buf> {
        if !(2..=3).contains(&dims.len()) {
            return Err(Error::Shape(format!("a texture of shape {dims:?}: textures have 2 or 3 axes")));
        }
        let shape = Shape::new(dims)?;
        let limits = self.gpu.limits();
        let max = if dims.len() == 2 { limits.max_texture_dimension_2d } else { limits.max_texture_dimension_3d };
        if dims.iter().any(|&n| n > max as usize) {
            return Err(Error::Invalid(format!("a texture of shape {dims:?}: this adapter's textures hold at most {max} texels per axis")));
        }
        Ok(self.push(shape, Dtype::F32, Source::Texture))
    }

    pub fn is_texture(&self, b: Buf) -> bool {
        matches!(self.values[b.0].source, Source::Texture)
    }

    /// A new temporary of `like`'s shape with element type `dtype`.
    pub fn temp_like(&mut self, like: Buf, dtype: Dtype) -> Result<Buf> {
        let dims = self.dims(like).to_vec();
        self.temp(&dims, dtype)
    }

    /// The same bytes seen with another shape or element type (e.g. a real array of even length
    /// as complex pairs). The view and the original share one buffer and one lifetime.
    pub fn reinterpret(&mut self, b: Buf, dims: &[usize], dtype: Dtype) -> Result<Buf> {
        let shape = Shape::new(dims)?;
        let v = &self.values[b.0];
        if shape.len() as u64 * dtype.bytes() != v.bytes() {
            return Err(Error::Shape(format!("cannot view {:?} {:?} as {dims:?} {dtype:?}", v.shape.dims(), v.dtype)));
        }
        let source = match &v.source {
            Source::Texture => return Err(Error::Invalid("a texture cannot be reinterpreted".into())),
            Source::External(a) => Source::External(a.reinterpret(dims, dtype)?),
            Source::Alias(root) => Source::Alias(*root),
            _ => Source::Alias(b.0),
        };
        Ok(self.push(shape, dtype, source))
    }

    /// The value that owns `b`'s buffer.
    pub(crate) fn root(&self, b: usize) -> usize {
        match self.values[b].source {
            Source::Alias(r) => r,
            _ => b,
        }
    }

    pub fn shape(&self, b: Buf) -> &Shape {
        &self.values[b.0].shape
    }
    pub fn dims(&self, b: Buf) -> &[usize] {
        self.values[b.0].shape.dims()
    }
    pub fn dtype(&self, b: Buf) -> Dtype {
        self.values[b.0].dtype
    }

    /// Checks that `b` has the expected element type.
    pub fn expect_dtype(&self, b: Buf, dtype: Dtype, what: &str) -> Result<()> {
        if self.dtype(b) != dtype {
            return Err(Error::Dtype(format!("{what}: expected {dtype:?}, got {:?}", self.dtype(b))));
        }
        Ok(())
    }

    /// Checks that two values have the same shape.
    pub fn expect_same_shape(&self, a: Buf, b: Buf, what: &str) -> Result<()> {
        if self.dims(a) != self.dims(b) {
            return Err(Error::Shape(format!("{what}: {:?} vs {:?}", self.dims(a), self.dims(b))));
        }
        Ok(())
    }

    /// Records one kernel dispatch. `workgroups` is the total count; the executor folds counts
    /// beyond the per-dimension limit into a 2D/3D grid (kernels linearise it with
    /// `common/grid`). `bufs` bind the kernel's non-uniform bindings in order.
    pub fn dispatch(&mut self, kernel: &'static KernelInfo, constants: &[(&'static str, f64)], params: &[u8], bufs: &[Buf], workgroups: u64) {
        assert_eq!(bufs.len(), kernel.buffer_count(), "{}: wrong number of buffers", kernel.name);
        assert_eq!(
            kernel.params_size.map(|s| s as usize),
            (!params.is_empty()).then_some(params.len()),
            "{}: parameter struct size differs from the WGSL one",
            kernel.name
        );
        self.nodes.push(Dispatch {
            kernel,
            constants: constants.to_vec(),
            params: params.to_vec(),
            bufs: bufs.to_vec(),
            workgroups: workgroups.max(1),
            label: kernel.name.to_string(),
        });
    }

    /// Copies `b` back to the host at the end of each run.
    pub fn download(&mut self, b: Buf) -> Download {
        self.values[b.0].kept = true;
        let root = self.root(b.0);
        self.values[root].kept = true;
        self.downloads.push(b);
        Download(self.downloads.len() - 1)
    }

    /// Keeps `b` on the device after the run, returned as a `GpuArray` (the same buffer each run).
    pub fn output(&mut self, b: Buf) -> Output {
        self.values[b.0].kept = true;
        let root = self.root(b.0);
        self.values[root].kept = true;
        self.outputs.push(b);
        Output(self.outputs.len() - 1)
    }

    pub fn compile(self) -> Result<Compiled> {
        let start = std::time::Instant::now();
        let compiled = Compiled::new(self);
        trace("compile", start);
        compiled
    }

    /// Compiles and runs once.
    pub fn run(self) -> Result<Results> {
        let gpu = self.gpu;
        self.compile()?.run(gpu)
    }

    /// Runs the recording and streams `y` back by all cores straight into the result
    /// (`GpuArray::download_joined`): a one-call op's large result, without the copy of its
    /// words that a [`Recording::download`] makes (and, for f64, a second into f64s).
    pub fn run_fetch<T: crate::gpu::Real>(mut self, y: Buf) -> Result<ndarray::ArrayD<T>> {
        let (gpu, dims) = (self.gpu, self.dims(y).to_vec());
        let o = self.output(y);
        GpuArray::download_joined::<T>(gpu, &[self.run()?.array(o)], &dims)
    }

    /// Compiles and submits once without waiting for the GPU; returns the outputs in the order
    /// they were asked for ([`Compiled::launch`]).
    pub fn launch(self) -> Result<Vec<GpuArray>> {
        let gpu = self.gpu;
        self.compile()?.launch(gpu)
    }

    /// Compiles and runs once without blocking the caller's thread on the GPU
    /// ([`Compiled::run_async`]).
    pub async fn run_async(self) -> Result<Results> {
        let gpu = self.gpu;
        self.compile()?.run_async(gpu).await
    }
}

pub(crate) use crate::gpu::trace;
