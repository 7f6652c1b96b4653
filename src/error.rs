//! One error type for the whole crate: user input never panics, it returns one of these.

use thiserror::Error;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, Error)]
pub enum Error {
    #[error("no GPU adapter found{0}; install a Vulkan driver (on Debian/Ubuntu: apt-get install mesa-vulkan-drivers for the lavapipe software GPU)")]
    NoAdapter(String),
    #[error("no GPU adapter matches {0}")]
    AdapterNotFound(String),
    #[error("could not open the GPU device: {0}")]
    Device(String),
    #[error("{what} needs {bytes} bytes, beyond the limit of {limit} bytes")]
    TooLarge { what: String, bytes: u64, limit: u64 },
    #[error("shape mismatch: {0}")]
    Shape(String),
    #[error("empty array: {0}")]
    Empty(String),
    #[error("invalid argument: {0}")]
    Invalid(String),
    #[error("non-finite value in {0}")]
    NonFinite(String),
    #[error("wrong element type: {0}")]
    Dtype(String),
    #[error("GPU validation error: {0}")]
    Validation(String),
    #[error("GPU out of memory: {0}")]
    OutOfMemory(String),
    #[error("GPU device lost or timed out: {0}")]
    DeviceLost(String),
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl Error {
    /// Converts a wgpu error caught by an error scope.
    pub(crate) fn from_wgpu(e: wgpu::Error) -> Self {
        match e {
            wgpu::Error::OutOfMemory { .. } => Error::OutOfMemory(e.to_string()),
            other => Error::Validation(other.to_string()),
        }
    }
}
