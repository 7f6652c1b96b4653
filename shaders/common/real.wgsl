// The real type of a kernel that has an f64 twin: build.rs compiles every kernel importing this
// snippet twice, as written (f32) and with `real` = f64 (`KernelInfo::for_dtype`). Such kernels
// keep data and sums in `real`, parameters in f32/u32 (f64 values passed as an f32 pair: hi + lo).
// f64 has no exp/log/trig in SPIR-V: twins compute those through f32, so kernels use them only
// where that precision is enough.
alias real = f32;
const BELOW_ONE: real = 0.99999994;  // the largest value below 1 (f64 twin: 1 − 2^-53)
const WIDE: bool = false;  // whether `real` is f64 (to add back what f32 parameters left)
