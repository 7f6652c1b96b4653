//! `GpuArray`: a device buffer with a 1-4D row-major shape (numpy axis order) and an element type.

use std::borrow::Cow;
use std::sync::Arc;

use ndarray::{ArrayD, ArrayViewD, IxDyn};
use num_complex::Complex32;

use super::{Gpu, Pooled};
use crate::error::{Error, Result};

/// Element type: f32, complex f32 stored interleaved as WGSL `vec2<f32>`, u32 (indices, e.g.
/// the result of argmax), or f64 and complex f64 (kernels with an f64 twin, on devices with
/// `SHADER_F64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    F32,
    C32,
    U32,
    F64,
    C64,
}

impl Dtype {
    pub fn bytes(self) -> u64 {
        match self {
            Dtype::F32 | Dtype::U32 => 4,
            Dtype::C32 | Dtype::F64 => 8,
            Dtype::C64 => 16,
        }
    }
    /// Whether kernels need `SHADER_F64` for it.
    pub fn is_f64(self) -> bool {
        matches!(self, Dtype::F64 | Dtype::C64)
    }
    /// The complex type of the same precision (F32 → C32, F64 → C64; complex types unchanged).
    pub fn complex(self) -> Dtype {
        match self {
            Dtype::F64 | Dtype::C64 => Dtype::C64,
            _ => Dtype::C32,
        }
    }
    /// The real type of the same precision.
    pub fn real(self) -> Dtype {
        match self {
            Dtype::F64 | Dtype::C64 => Dtype::F64,
            Dtype::U32 => Dtype::U32,
            _ => Dtype::F32,
        }
    }
    /// 32-bit words per element.
    pub fn words(self) -> u32 {
        (self.bytes() / 4) as u32
    }
}

/// The real element types kernels compute in: f32 on every device, f64 on devices with
/// `SHADER_F64` ([`Gpu::has_f64`]) through the kernels' f64 twins (`KernelInfo::for_dtype`).
pub trait Real: ndarray::NdFloat + bytemuck::Pod + crate::check::Finite + Default {
    const DTYPE: Dtype;
    /// Complex numbers of this precision.
    const COMPLEX: Dtype;
    fn from_f64(v: f64) -> Self;
    fn as_f64(self) -> f64;
    /// `x` itself where `Self` is f32: generic front doors hand f32 data to paths written for
    /// f32 without a copy.
    fn f32_view<'a>(x: ArrayViewD<'a, Self>) -> Option<ArrayViewD<'a, f32>>;
    /// An f32 result in this type (moved for f32, converted for f64).
    fn from_f32s(y: ArrayD<f32>) -> ArrayD<Self>;
}

impl Real for f32 {
    const DTYPE: Dtype = Dtype::F32;
    const COMPLEX: Dtype = Dtype::C32;
    fn from_f64(v: f64) -> f32 {
        v as f32
    }
    fn as_f64(self) -> f64 {
        self as f64
    }
    fn f32_view<'a>(x: ArrayViewD<'a, f32>) -> Option<ArrayViewD<'a, f32>> {
        Some(x)
    }
    fn from_f32s(y: ArrayD<f32>) -> ArrayD<f32> {
        y
    }
}

impl Real for f64 {
    const DTYPE: Dtype = Dtype::F64;
    const COMPLEX: Dtype = Dtype::C64;
    fn from_f64(v: f64) -> f64 {
        v
    }
    fn as_f64(self) -> f64 {
        self
    }
    fn f32_view<'a>(_: ArrayViewD<'a, f64>) -> Option<ArrayViewD<'a, f32>> {
        None
    }
    fn from_f32s(y: ArrayD<f32>) -> ArrayD<f64> {
        y.mapv(|v| v as f64)
    }
}

/// Data of type `T` as f32, where f64 data must be computed in f32 ([`Gpu::narrows`]).
pub fn narrowed<T: Real>(x: &ArrayViewD<T>) -> ArrayD<f32> {
    x.mapv(|v| v.as_f64() as f32)
}

/// An f32 result back in the data's type `T`.
pub fn widened<T: Real, D: ndarray::Dimension>(y: &ndarray::Array<f32, D>) -> ndarray::Array<T, D> {
    y.mapv(|v| T::from_f64(v as f64))
}

/// Complex data of type `T` as complex f32 (see [`narrowed`]).
pub fn narrowed_complex<T: Real>(x: &ArrayViewD<num_complex::Complex<T>>) -> ArrayD<Complex32> {
    x.mapv(|v| Complex32::new(v.re.as_f64() as f32, v.im.as_f64() as f32))
}

/// A complex f32 result back in the data's precision `T`.
pub fn widened_complex<T: Real, D: ndarray::Dimension>(y: &ndarray::Array<Complex32, D>) -> ndarray::Array<num_complex::Complex<T>, D> {
    y.mapv(|v| num_complex::Complex::new(T::from_f64(v.re as f64), T::from_f64(v.im as f64)))
}

/// An f64 parameter as the f32 pair (hi, lo) whose sum in f64 is it to 48 bits: f64 kernels take
/// f32 parameters and add the low part back (`WIDE`), f32 kernels use the high part.
pub fn f32_pair(v: f64) -> (f32, f32) {
    let hi = v as f32;
    (hi, (v - hi as f64) as f32)
}

/// A validated shape: 1 to 4 axes, none of length zero, slowest axis first.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Shape(Vec<usize>);

impl Shape {
    pub fn new(dims: &[usize]) -> Result<Shape> {
        if dims.is_empty() || dims.len() > 4 {
            return Err(Error::Invalid(format!("arrays have 1 to 4 axes, got shape {dims:?}")));
        }
        if dims.contains(&0) {
            return Err(Error::Empty(format!("shape {dims:?} has no elements")));
        }
        // Every later size (elements, bytes) is a product of these: it must not wrap.
        if dims.iter().try_fold(4u64, |n, &d| n.checked_mul(d as u64)).is_none() {
            return Err(Error::TooLarge { what: format!("an array of shape {dims:?}"), bytes: u64::MAX, limit: u64::MAX });
        }
        Ok(Shape(dims.to_vec()))
    }
    pub fn dims(&self) -> &[usize] {
        &self.0
    }
    pub fn ndim(&self) -> usize {
        self.0.len()
    }
    pub fn len(&self) -> usize {
        self.0.iter().product()
    }
    pub fn is_empty(&self) -> bool {
        false
    }
    /// The shape padded on the left with ones to 4 axes.
    pub fn dims4(&self) -> [usize; 4] {
        let mut d = [1; 4];
        d[4 - self.0.len()..].copy_from_slice(&self.0);
        d
    }
}

/// A device array. Cloning shares the buffer.
#[derive(Clone, Debug)]
pub struct GpuArray {
    pub(crate) buffer: Arc<Pooled>,
    shape: Shape,
    dtype: Dtype,
}

impl GpuArray {
    /// An array with unspecified contents.
    pub fn empty(gpu: &Gpu, dims: &[usize], dtype: Dtype) -> Result<GpuArray> {
        gpu.check_dtype(dtype)?;
        let shape = Shape::new(dims)?;
        let bytes = shape.len() as u64 * dtype.bytes();
        let buffer = gpu.create_buffer(&format!("lucent.array{dims:?}"), bytes)?;
        Ok(GpuArray { buffer: Arc::new(buffer), shape, dtype })
    }

    pub(crate) fn from_buffer(buffer: Arc<Pooled>, shape: Shape, dtype: Dtype) -> GpuArray {
        GpuArray { buffer, shape, dtype }
    }

    pub fn upload_f32(gpu: &Gpu, data: &ArrayViewD<f32>) -> Result<GpuArray> {
        Self::upload_real(gpu, data)
    }

    /// A real array (f32, or f64 for the f64 kernels).
    pub fn upload_real<T: Real>(gpu: &Gpu, data: &ArrayViewD<T>) -> Result<GpuArray> {
        Self::upload(gpu, data.shape(), T::DTYPE, &row_major_bytes(data))
    }

    /// 32-bit words as a U32 array.
    pub fn upload_u32(gpu: &Gpu, values: &[u32]) -> Result<GpuArray> {
        Self::upload(gpu, &[values.len()], Dtype::U32, bytemuck::cast_slice(values))
    }

    /// A mask as bytes (1 true, 0 false), four to a u32 word (the last padded with 0): a U32
    /// array of ⌈n/4⌉ words (at least one), a quarter of an f32 upload.
    pub fn upload_mask(gpu: &Gpu, data: &ArrayViewD<bool>) -> Result<GpuArray> {
        use rayon::prelude::*;
        let mut bytes: Vec<u8> = match data.as_slice() {
            Some(s) => s.par_iter().map(|&v| u8::from(v)).collect(),
            None => data.iter().map(|&v| u8::from(v)).collect(),
        };
        bytes.resize(4 * data.len().div_ceil(4).max(1), 0);
        Self::upload(gpu, &[bytes.len() / 4], Dtype::U32, &bytes)
    }

    /// 16-bit values two to a u32 word, the first in the low half (a last odd value padded with
    /// 0): a U32 array of ⌈n/2⌉ words, half the bytes of f32.
    pub fn upload_u16(gpu: &Gpu, values: &[u16]) -> Result<GpuArray> {
        Self::upload(gpu, &[u16_words(values.len())], Dtype::U32, &u16_bytes(values))
    }

    /// Overwrites the whole array with `bytes` (its size exactly): for arrays a compiled
    /// recording reads, run again on new data. Ordered before any later submission.
    pub fn write(&self, gpu: &Gpu, bytes: &[u8]) -> Result<()> {
        if bytes.len() as u64 != self.bytes() {
            return Err(Error::Shape(format!("{} bytes written into an array of {} ({:?} {:?})", bytes.len(), self.bytes(), self.dims(), self.dtype)));
        }
        gpu.scoped(|| gpu.write_whole(&self.buffer, 0, bytes))?
    }

    /// [`GpuArray::write`] of 16-bit values packed as [`GpuArray::upload_u16`] packs them.
    pub fn write_u16(&self, gpu: &Gpu, values: &[u16]) -> Result<()> {
        self.write(gpu, &u16_bytes(values))
    }

    pub fn upload_c32(gpu: &Gpu, data: &ArrayViewD<Complex32>) -> Result<GpuArray> {
        Self::upload(gpu, data.shape(), Dtype::C32, &row_major_bytes(data))
    }

    /// Values computed in f64 (tables) as complex numbers of the real type `real`'s precision.
    pub fn upload_complex_as(gpu: &Gpu, data: &ArrayViewD<num_complex::Complex64>, real: Dtype) -> Result<GpuArray> {
        match real {
            Dtype::F64 | Dtype::C64 => Self::upload_complex(gpu, data),
            _ => Self::upload_complex(gpu, &data.mapv(|c| Complex32::new(c.re as f32, c.im as f32)).view()),
        }
    }

    /// Complex data of either precision.
    pub fn upload_complex<T: Real>(gpu: &Gpu, data: &ArrayViewD<num_complex::Complex<T>>) -> Result<GpuArray> {
        Self::upload(gpu, data.shape(), T::COMPLEX, &row_major_bytes(data))
    }

    fn upload(gpu: &Gpu, dims: &[usize], dtype: Dtype, bytes: &[u8]) -> Result<GpuArray> {
        let array = Self::empty(gpu, dims, dtype)?;
        gpu.scoped(|| super::write_buffer(gpu, &array.buffer, bytes))??;
        Ok(array)
    }

    /// A complex array of either precision, streamed back by all cores straight into the result.
    pub fn download_complex<T: Real>(&self, gpu: &Gpu) -> Result<ArrayD<num_complex::Complex<T>>> {
        self.expect_dtype(T::COMPLEX)?;
        Ok(ArrayD::from_shape_vec(IxDyn(self.dims()), self.download_elements(gpu)?).unwrap())
    }

    pub fn download_f32(&self, gpu: &Gpu) -> Result<ArrayD<f32>> {
        self.expect_dtype(Dtype::F32)?;
        Ok(ArrayD::from_shape_vec(IxDyn(self.dims()), self.download_elements(gpu)?).unwrap())
    }

    /// The buffer's elements, streamed back through the reused staging buffers by all cores
    /// (a staging buffer made per call and one core copying moved 0.5 GB/s).
    fn download_elements<T: bytemuck::Pod>(&self, gpu: &Gpu) -> Result<Vec<T>> {
        let words = self.len() * self.dtype.words() as usize;
        // Zeroed lazily by the allocator (vec! writes every element of a non-primitive type).
        let mut out = crate::host::zeroed_vec::<T>(self.len());
        gpu.read_window_into(&[(&**self.buffer, words)], &[], 4, &[0], &[words], bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    /// f32 arrays, one after another, as one host array of shape `dims` (chunks of an array
    /// along axis 0, joined), copied through a small reused staging buffer.
    pub fn download_joined_f32(gpu: &Gpu, arrays: &[GpuArray], dims: &[usize]) -> Result<ArrayD<f32>> {
        Self::download_joined(gpu, arrays, dims)
    }

    /// [`GpuArray::download_joined_f32`] for arrays of any real type `T`.
    pub fn download_joined<T: Real>(gpu: &Gpu, arrays: &[GpuArray], dims: &[usize]) -> Result<ArrayD<T>> {
        let len: usize = dims.iter().product();
        if arrays.iter().map(|a| a.len()).sum::<usize>() != len || arrays.iter().any(|a| a.dtype != T::DTYPE) {
            return Err(Error::Shape(format!(
                "{:?} arrays of {} elements do not make shape {dims:?}",
                T::DTYPE,
                arrays.iter().map(|a| a.len()).sum::<usize>()
            )));
        }
        let mut out = crate::host::zeroed_vec::<T>(len);
        let sources: Vec<(&wgpu::Buffer, usize)> = arrays.iter().map(|a| (&**a.buffer, a.len())).collect();
        gpu.read_window_into(&sources, &[], std::mem::size_of::<T>(), &[0], &[len], bytemuck::cast_slice_mut(&mut out))?;
        Ok(ArrayD::from_shape_vec(IxDyn(dims), out).expect("sizes checked"))
    }

    /// The window `start .. start + size` (every axis) of f32 arrays stacked along axis 0 (the
    /// chunks of one array), cropped on the host as it streams back: no cropped copy is made
    /// on the device.
    pub fn download_window_f32(gpu: &Gpu, arrays: &[GpuArray], start: &[usize], size: &[usize]) -> Result<ArrayD<f32>> {
        let mut out = crate::host::zeroed_vec(size.iter().product());
        GpuArray::download_window_into_f32(gpu, arrays, start, size, &mut out)?;
        Ok(ArrayD::from_shape_vec(IxDyn(size), out).expect("sizes checked"))
    }

    /// [`GpuArray::download_window_f32`] into the caller's memory (C order, the window's size).
    pub fn download_window_into_f32(gpu: &Gpu, arrays: &[GpuArray], start: &[usize], size: &[usize], out: &mut [f32]) -> Result<()> {
        let first = arrays.first().ok_or_else(|| Error::Invalid("no arrays to download".into()))?;
        let row_dims = &first.dims()[1..];
        if arrays.iter().any(|a| a.dtype != Dtype::F32 || &a.dims()[1..] != row_dims) {
            return Err(Error::Shape(format!(
                "arrays of shapes {:?} do not stack as f32 along axis 0",
                arrays.iter().map(|a| a.dims().to_vec()).collect::<Vec<_>>()
            )));
        }
        let sources: Vec<(&wgpu::Buffer, usize)> = arrays.iter().map(|a| (&**a.buffer, a.dims()[0])).collect();
        gpu.read_window_into(&sources, row_dims, 4, start, size, bytemuck::cast_slice_mut(out))
    }

    pub fn download_c32(&self, gpu: &Gpu) -> Result<ArrayD<Complex32>> {
        self.expect_dtype(Dtype::C32)?;
        Ok(ArrayD::from_shape_vec(IxDyn(self.dims()), self.download_elements(gpu)?).unwrap())
    }

    pub fn download_u32(&self, gpu: &Gpu) -> Result<ArrayD<u32>> {
        self.expect_dtype(Dtype::U32)?;
        Ok(ArrayD::from_shape_vec(IxDyn(self.dims()), self.download_elements(gpu)?).unwrap())
    }

    /// Fills the whole buffer with NaN, so a test can tell an element nothing wrote.
    pub fn poison(&self, gpu: &Gpu) {
        let words = (self.buffer.size() / 4) as usize;
        gpu.queue.write_buffer(&self.buffer, 0, bytemuck::cast_slice(&vec![f32::NAN; words]));
    }

    /// The same buffer seen with another shape or element type of the same byte size.
    pub fn reinterpret(&self, dims: &[usize], dtype: Dtype) -> Result<GpuArray> {
        let shape = Shape::new(dims)?;
        if shape.len() as u64 * dtype.bytes() != self.bytes() {
            return Err(Error::Shape(format!("cannot view {:?} {:?} as {dims:?} {dtype:?}", self.dims(), self.dtype)));
        }
        Ok(GpuArray { buffer: self.buffer.clone(), shape, dtype })
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }
    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }
    pub fn dtype(&self) -> Dtype {
        self.dtype
    }
    pub fn len(&self) -> usize {
        self.shape.len()
    }
    pub fn is_empty(&self) -> bool {
        false
    }
    pub fn bytes(&self) -> u64 {
        self.len() as u64 * self.dtype.bytes()
    }

    pub fn expect_dtype(&self, dtype: Dtype) -> Result<()> {
        if self.dtype != dtype {
            return Err(Error::Dtype(format!("expected {dtype:?}, the array holds {:?}", self.dtype)));
        }
        Ok(())
    }
}

/// The bytes of `a` in row-major order: borrowed when it already is row-major.
pub(crate) fn row_major_bytes<'a, T: bytemuck::Pod + Send + Sync>(a: &'a ArrayViewD<T>) -> Cow<'a, [u8]> {
    if let Some(s) = a.as_slice() {
        return Cow::Borrowed(bytemuck::cast_slice(s));
    }
    // Row by row, by all cores, straight into the bytes: ndarray's element iterator over a
    // dynamic-rank view builds an index per element (~20 ns: 5 s for a slab of a 1 GiB stack),
    // and one core copying rows into a vector and that into bytes took two passes.
    let size = std::mem::size_of::<T>();
    let Some((&row, outer)) = a.shape().split_last() else {
        return Cow::Owned(bytemuck::bytes_of(&a[[]]).to_vec());
    };
    let mut bytes = crate::host::zeroed_vec::<u8>(a.len() * size);
    let mut rows_dims = outer.to_vec();
    rows_dims.push(row * size);
    let mut dst = ndarray::ArrayViewMutD::from_shape(rows_dims, &mut bytes).expect("the bytes of every row");
    ndarray::Zip::from(dst.rows_mut()).and(a.rows()).par_for_each(|mut d, r| {
        let d = d.as_slice_mut().expect("a row of contiguous bytes");
        match r.as_slice() {
            Some(s) => d.copy_from_slice(bytemuck::cast_slice(s)),
            None => d.chunks_exact_mut(size).zip(r.iter()).for_each(|(d, v)| d.copy_from_slice(bytemuck::bytes_of(v))),
        }
    });
    Cow::Owned(bytes)
}

/// `a` with the dimension type `D` the caller started from (one-call functions compute on
/// dynamic-rank arrays and give back what they were given: the rank never changes).
pub(crate) fn with_dim<T, D: ndarray::Dimension>(a: ArrayD<T>) -> Result<ndarray::Array<T, D>> {
    a.into_dimensionality::<D>().map_err(|e| Error::Shape(format!("result of unexpected rank: {e}")))
}

/// Words that hold `n` 16-bit values two to a word (at least one).
pub fn u16_words(n: usize) -> usize {
    n.div_ceil(2).max(1)
}

/// 16-bit values as [`u16_words`] little-endian words, the first of each pair in the low half
/// (borrowed where the machine's layout is that already).
fn u16_bytes(values: &[u16]) -> Cow<'_, [u8]> {
    if cfg!(target_endian = "little") && values.len().is_multiple_of(2) && !values.is_empty() {
        return Cow::Borrowed(bytemuck::cast_slice(values));
    }
    let packed: Vec<u32> =
        (0..u16_words(values.len())).map(|w| values.get(2 * w).map_or(0, |&v| v as u32) | values.get(2 * w + 1).map_or(0, |&v| (v as u32) << 16)).collect();
    Cow::Owned(bytemuck::cast_slice(&packed).to_vec())
}
