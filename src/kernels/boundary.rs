//! scipy.ndimage's boundary modes: the CPU twin of `shaders/common/boundary.wgsl`'s `fold`, and
//! the `MODE` override code of every kernel that imports it (gather, the spatial filters).

use crate::error::{Error, Result};

/// What lies outside an array, named and defined as in scipy.ndimage (numpy.pad's name in
/// brackets). For input `a b c d`:
///
/// | mode           | left      | input     | right     |
/// |----------------|-----------|-----------|-----------|
/// | `Constant(k)`  | `k k k`   | `a b c d` | `k k k`   |
/// | `Nearest` (edge) | `a a a` | `a b c d` | `d d d`   |
/// | `Reflect` (symmetric) | `c b a` | `a b c d` | `d c b` |
/// | `Mirror` (reflect) | `d c b` | `a b c d` | `c b a`   |
/// | `Wrap` (wrap)  | `b c d`   | `a b c d` | `a b c`   |
///
/// Any distance outside is defined: reflect and mirror repeat periodically (periods 2n and
/// 2n - 2), as scipy.ndimage does and as numpy.pad does for pads wider than the array. A mirror of
/// a length-1 axis repeats its one element. For complex arrays `Constant(k)` means k + 0i; for u32
/// arrays k must be a whole number in range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Boundary {
    Constant(f32),
    Nearest,
    Reflect,
    Mirror,
    Wrap,
}

impl Boundary {
    /// scipy.ndimage's names of the modes, as [`Boundary::from_name`] takes them.
    pub const NAMES: [&'static str; 5] = ["reflect", "constant", "nearest", "mirror", "wrap"];

    /// The mode scipy.ndimage calls `name`, with `cval` for "constant" (and only there: a
    /// non-zero `cval` with another mode is an error, as it would be ignored). A NaN or infinite
    /// `cval` is an error ([`Boundary::constant`]).
    pub fn from_name(name: &str, cval: f32) -> Result<Boundary> {
        let constant = Boundary::constant(cval)?;
        let b = match name {
            "constant" => return Ok(constant),
            "reflect" => Boundary::Reflect,
            "nearest" => Boundary::Nearest,
            "mirror" => Boundary::Mirror,
            "wrap" => Boundary::Wrap,
            other => return Err(Error::Invalid(format!("unknown boundary mode `{other}` (one of {})", Boundary::NAMES.join(", ")))),
        };
        match cval {
            0.0 => Ok(b),
            _ => Err(Error::Invalid(format!("cval {cval} applies only to the constant mode, not {name}"))),
        }
    }

    /// `Constant(cval)` with a finite `cval`: a NaN or infinity outside would reach every output
    /// a kernel touches (scipy's results differ by mode; lucent refuses it, as it refuses
    /// non-finite input). The one check of `cval`: [`Boundary::from_name`] makes its constant
    /// here, and the filters' entry points check a `Boundary` given to them with
    /// [`Boundary::check`].
    pub fn constant(cval: f32) -> Result<Boundary> {
        if !cval.is_finite() {
            return Err(Error::NonFinite(format!("filter cval: {cval} (must be finite)")));
        }
        Ok(Boundary::Constant(cval))
    }

    /// `Ok` for a boundary [`Boundary::constant`] accepts (every mode but a non-finite constant).
    pub fn check(self) -> Result<()> {
        match self {
            Boundary::Constant(cval) => Boundary::constant(cval).map(drop),
            _ => Ok(()),
        }
    }

    /// scipy.ndimage's name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            Boundary::Constant(_) => "constant",
            Boundary::Nearest => "nearest",
            Boundary::Reflect => "reflect",
            Boundary::Mirror => "mirror",
            Boundary::Wrap => "wrap",
        }
    }

    /// The value outside for `Constant`, else 0 (scipy's `cval`).
    pub fn cval(self) -> f32 {
        match self {
            Boundary::Constant(c) => c,
            _ => 0.0,
        }
    }

    /// The `MODE` override of the kernels that apply a boundary (gather.wgsl's `fold`).
    pub fn code(self) -> u32 {
        match self {
            Boundary::Constant(_) => 0,
            Boundary::Nearest => 1,
            Boundary::Reflect => 2,
            Boundary::Mirror => 3,
            Boundary::Wrap => 4,
        }
    }

    /// Folds coordinate `c` into `0..n` (n > 0); `None` where constant mode supplies the value.
    /// The CPU twin of gather.wgsl's `fold`.
    pub fn fold(self, c: i64, n: i64) -> Option<i64> {
        if (0..n).contains(&c) {
            return Some(c);
        }
        match self {
            Boundary::Constant(_) => None,
            Boundary::Nearest => Some(c.clamp(0, n - 1)),
            Boundary::Reflect => {
                let m = c.rem_euclid(2 * n);
                Some(if m >= n { 2 * n - 1 - m } else { m })
            }
            Boundary::Mirror if n == 1 => Some(0),
            Boundary::Mirror => {
                let m = c.rem_euclid(2 * n - 2);
                Some(if m >= n { 2 * n - 2 - m } else { m })
            }
            Boundary::Wrap => Some(c.rem_euclid(n)),
        }
    }
}
