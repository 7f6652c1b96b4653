//! FFT plans as plain data, decided without a GPU: how each axis length is factored into radix
//! stages, whether a line fits one workgroup (one dispatch per axis) or needs the four-step
//! scheme (two dispatches), and when a prime length needs Rader's or Bluestein's algorithm.

use crate::gpu::Tuning;

// The constants below that name a `LUCENT_FFT_*` variable are the planner's measured defaults; a
// GPU's `Tuning` (in `DeviceLimits`, from its options) overrides them one by one.

/// Radices with butterflies in src/fft/butterfly.rs (16, 15 and 9 as 4×4, 3×5 and 3×3 in
/// registers; 8, 4, 2 written out; 3, 5, 7, 11, 13 with literal roots, in symmetric pairs), in
/// stage order. Larger radices first: fewer stages, fewer round trips through workgroup memory.
const RADICES: [usize; 11] = [16, 15, 9, 8, 4, 2, 3, 5, 7, 11, 13];
/// The odd composites, used only where they save two stages (see `radix_plan`).
const ODD_COMPOSITES: [usize; 2] = [15, 9];
/// Threads per workgroup that short lines are batched up to (`LUCENT_FFT_THREADS` overrides):
/// smaller workgroups occupy the GPU more finely and their barriers wait for fewer warps
/// (measured: BENCHMARKS.md).
const WORKGROUP_THREADS: usize = 64;
/// Adjacent columns a strided pass reads, where memory allows (`LUCENT_FFT_COLUMNS` overrides):
/// 8 complex numbers are 64 bytes, whole 32-byte sectors. 16 where rows do not start on a sector
/// (columns apart not a multiple of 4: one sector more per group) in workgroups of at most 512
/// threads, and in passes of 8 elements a thread of at most 320 threads (split exchanges: 1024,
/// where 16 complex lines would not fit); larger workgroups lost (measured:
/// BENCHMARKS.md).
const STRIDED_LINES: usize = 8;
const STRIDED_LINES_WIDE: usize = 16;
const STRIDED_UNALIGNED_MAX_THREADS: usize = 512;
const STRIDED_WIDE_MAX_THREADS: usize = 320;
/// Lines a single pass over a strided axis must hold per workgroup, else the four-step scheme:
/// adjacent columns are what make its loads coalesce (`LUCENT_FFT_STRIDED_BATCH` overrides).
const STRIDED_MIN_BATCH: usize = 4;

/// Line groups a workgroup of at least LOOP_THREADS threads transforms in turn, loading the next
/// group's first stage while it transforms the current one: one group per 32 threads, up to
/// LOOPS (`LUCENT_FFT_LOOP` caps it, `LUCENT_FFT_LOOP_THREADS` sets the threshold). A workgroup
/// otherwise waits for its loads, then computes; large ones are few per multiprocessor, so the
/// memory idles (measured: BENCHMARKS.md).
const LOOPS: usize = 4;
/// Split-exchange passes (512-1024 threads, registers for two stages) loop over 2 groups, which
/// beat 4 (measured: BENCHMARKS.md).
const SPLIT_LOOPS: usize = 2;
const LOOP_THREADS: usize = 64;
/// Threads a looping pass dispatches at least, else it does not loop: two full waves of the
/// largest GPUs (132 multiprocessors of 2048 threads). `LUCENT_FFT_MIN_THREADS` overrides;
/// tests/it/fft_loops.rs tunes its GPU to 1 so that small transforms loop.
const MIN_THREADS: usize = 1 << 19;

/// The radices of `n` (None if a prime factor above 13 remains) and the elements a thread holds
/// for one stage (it does `elements / r` butterflies of radix r): 8,
/// or 16 where radices up to 16 take fewer stages (n = 16, 128, 256, 1024, 2048, 4096, 8192; and
/// factors 11 and 13, whose butterflies need more than 8). `LUCENT_FFT_REGISTERS=8|16` forces
/// one. Kernels of 8 take fewer registers, so more threads fit each multiprocessor, but a stage
/// more cost more than that (measured: BENCHMARKS.md). (32 made NVIDIA's shader compiler
/// take minutes.)
///
/// The odd composites 15 and 9 (16 elements) only where they take two stages fewer: where they
/// saved one they were slower (measured: BENCHMARKS.md).
fn radix_plan(n: usize, tuning: Tuning) -> Option<(Vec<usize>, usize)> {
    if let Some(forced) = tuning.registers {
        return radices_up_to(n, forced, false).map(|r| (r, forced));
    }
    let plain = match (radices_up_to(n, 8, false), radices_up_to(n, 16, false)?) {
        (Some(small), large) if small.len() <= large.len() => (small, 8),
        (_, large) => (large, 16),
    };
    match radices_up_to(n, 16, true) {
        Some(composite) if composite.len() + 2 <= plain.0.len() => Some((composite, 16)),
        _ => Some(plain),
    }
}

fn workgroup_threads(tuning: Tuning) -> usize {
    tuning.threads.unwrap_or(WORKGROUP_THREADS)
}

/// Columns a strided pass over lines `columns` apart, `threads` a line of `elements` a thread,
/// reads at once; `halves` for a split exchange of lines 16 of which do not fit as complex
/// numbers; 16 for 8 elements a thread only in `wide` transforms (see STRIDED_LINES,
/// `wide_columns`).
fn strided_lines(columns: usize, threads: usize, elements: usize, halves: bool, wide: bool, tuning: Tuning) -> usize {
    let wide_threads = threads * STRIDED_LINES_WIDE;
    let wide_max = if halves { 1024 } else { STRIDED_WIDE_MAX_THREADS };
    match tuning.columns {
        Some(forced) => forced,
        None if !columns.is_multiple_of(4) && wide_threads <= STRIDED_UNALIGNED_MAX_THREADS => STRIDED_LINES_WIDE,
        None if wide && elements == 8 && wide_threads <= wide_max => STRIDED_LINES_WIDE,
        None => STRIDED_LINES,
    }
}

fn strided_min_batch(tuning: Tuning) -> usize {
    tuning.strided_batch.unwrap_or(STRIDED_MIN_BATCH)
}

/// Line groups a workgroup of `threads` threads transforms in turn (see LOOPS); at most
/// SPLIT_LOOPS for `split` exchanges.
fn loops(threads: usize, split: bool, tuning: Tuning) -> usize {
    let cap = tuning.loops.unwrap_or(if split { SPLIT_LOOPS } else { LOOPS });
    let min = tuning.loop_threads.unwrap_or(LOOP_THREADS);
    if threads >= min {
        (threads / 32).clamp(1, cap)
    } else {
        1
    }
}

/// Whether a transform of `elements` complex numbers is large enough for 16-column passes of
/// 8 elements a thread (see STRIDED_LINES): at least 8 × `min_threads`, so that halving the
/// workgroups still fills the GPU twice over; below that 8 were faster (measured:
/// BENCHMARKS.md).
pub fn wide_columns(elements: usize, tuning: Tuning) -> bool {
    elements >= 8 * min_threads(tuning)
}

/// Threads a looping pass dispatches at least (see MIN_THREADS).
pub fn min_threads(tuning: Tuning) -> usize {
    tuning.min_threads.unwrap_or(MIN_THREADS)
}

/// Whether lines of length `n` are padded inside workgroup memory (one element after every 16),
/// where memory allows: only lines of even length that a warp's lanes run `along`. Their
/// stages write elements r apart along the line, so power-of-two strides would put lanes on
/// the same banks. Odd lengths step by odd strides, which need no padding; lanes of a
/// strided pass run across lines, which the line stride keeps apart (`line_stride`); padding
/// there only cost index arithmetic and memory (measured: BENCHMARKS.md).
/// `LUCENT_FFT_PAD=0|1` forces it off or on.
fn padded_inside(n: usize, along: bool, tuning: Tuning) -> bool {
    tuning.pad.unwrap_or(along && n.is_multiple_of(2))
}

/// `LUCENT_FFT_BANKS=0`: line strides merely odd, as before the strides kept lines on distinct
/// banks (for A/B measurements; see `line_stride`).
fn bank_strides(tuning: Tuning) -> bool {
    tuning.banks.unwrap_or(true)
}

/// `LUCENT_FFT_SPLIT=0` turns split-exchange passes off (for A/B measurements).
fn split_enabled(tuning: Tuning) -> bool {
    tuning.split.unwrap_or(true)
}

/// What the device allows one workgroup, and the GPU's overrides of the defaults above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    pub workgroup_bytes: usize,
    pub max_threads: usize,
    pub tuning: Tuning,
}

/// One dispatch that transforms lines of length `n` inside workgroup memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LinePass {
    pub n: usize,
    pub radices: Vec<usize>,
    /// Threads per line.
    pub threads: usize,
    /// Lines per workgroup.
    pub batch: usize,
    /// Workgroup memory padded by one element in 16 (against bank conflicts), when it fits.
    pub padded: bool,
    /// Workgroup-memory elements from one line of the workgroup to the next (`line_stride`).
    pub stride: usize,
    /// Split exchange: each thread keeps its elements in registers and stages exchange real
    /// parts, then imaginary parts, through half the memory (`split_line_pass`): contiguous
    /// lines too long for workgroup memory as complex numbers, one a workgroup, or columns,
    /// more of them than would fit as complex numbers. Loaded and stored in one direction.
    pub split: bool,
    /// Line groups (of `batch` lines) per workgroup, one after the other: the first stage's
    /// inputs of the next group are loaded while the current one is transformed, so memory
    /// stays busy while a workgroup computes (see `codegen::wgsl`).
    pub loops: usize,
}

/// How one axis of length `n` is transformed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AxisPlan {
    /// One dispatch.
    Single(LinePass),
    /// n = n1 · n2: a pass of length n1 over stride n2 with the twiddles W_n^(k1 j2) fused into
    /// its store, then a pass of length n2 whose store writes the transposed result in place.
    FourStep { n: usize, first: LinePass, second: LinePass },
    /// Chirp-z: pre-multiply and zero-pad to the smooth length `m` ≥ 2n − 1, transform, multiply
    /// by the chirp's spectrum, transform back, post-multiply and crop.
    Bluestein { n: usize, m: usize, inner: Box<AxisPlan> },
    /// Prime n: with g a primitive root mod n, X[g^m] − x_0 is the cyclic convolution of
    /// x[g^−q] with W_n^(g^s), length n − 1 (`inner`, one pass), done in two passes of that length.
    Rader { n: usize, root: usize, inner: LinePass },
}

impl AxisPlan {
    pub fn len(&self) -> usize {
        match self {
            AxisPlan::Single(p) => p.n,
            AxisPlan::FourStep { n, .. } | AxisPlan::Bluestein { n, .. } | AxisPlan::Rader { n, .. } => *n,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Factors `n` into supported radices, largest first; None if a prime factor above 13 remains
/// (or above 8, where `tuning` forces 8 registers).
pub fn factor(n: usize, tuning: Tuning) -> Option<Vec<usize>> {
    radix_plan(n, tuning).map(|(radices, _)| radices)
}

/// Greedy in RADICES order: the fewest stages (15s take a 3 and a 5 each, then 9s pair the 3s).
fn radices_up_to(n: usize, largest: usize, composites: bool) -> Option<Vec<usize>> {
    let mut rest = n;
    let mut out = Vec::new();
    for &r in RADICES.iter().filter(|&&r| r <= largest && (composites || !ODD_COMPOSITES.contains(&r))) {
        while rest.is_multiple_of(r) && rest > 1 {
            out.push(r);
            rest /= r;
        }
    }
    (rest == 1).then_some(out)
}

/// Threads one line needs when each holds `elements` per stage: the busiest stage's butterflies.
fn threads_per_line(n: usize, radices: &[usize], elements: usize) -> usize {
    radices.iter().map(|&r| (n / r).div_ceil(elements / r)).max().unwrap_or(1).max(1)
}

/// The line pass for length `n` if one workgroup can hold at least one line, for lines
/// `columns` apart: 1, contiguous; else they are columns (a strided axis, or a transposing
/// store), read a power of two at a time. A warp's lanes run along the lines where they are
/// contiguous, else across them (as the kernel loads them).
pub fn line_pass(n: usize, limits: DeviceLimits, columns: usize, wide: bool) -> Option<LinePass> {
    lanes_line_pass(n, limits, columns, columns == 1, wide)
}

/// `line_pass` for lanes that run `along` the lines or across them, whatever `columns` is (the
/// four-step's second pass loads contiguous lines and stores them as columns).
fn lanes_line_pass(n: usize, limits: DeviceLimits, columns: usize, along: bool, wide: bool) -> Option<LinePass> {
    let strided = columns > 1;
    let (radices, elements) = radix_plan(n, limits.tuning)?;
    if radices.len() > 8 || n * 8 > limits.workgroup_bytes {
        return None;
    }
    let threads = threads_per_line(n, &radices, elements);
    if threads > limits.max_threads {
        return None;
    }
    // As many lines per workgroup as memory allows, up to workgroup_threads() in all; strided
    // passes strided_lines() columns (at least a warp of threads).
    // (At least 256 elements even so: lines of one element ran at half speed in 64.)
    let wanted = if strided {
        strided_lines(columns, threads, elements, false, wide, limits.tuning).max(32 / threads)
    } else {
        (workgroup_threads(limits.tuning) / threads).max(256 / n.max(1)).max(1)
    };
    let (batch, padded, stride) = fit_lines(n, threads, wanted, strided, along, 8, limits);
    Some(LinePass { n, radices, threads, batch, padded, stride, split: false, loops: loops(threads * batch, false, limits.tuning) })
}

/// The most lines of `n` elements of `word` bytes (8: complex; 4: a split exchange's real or
/// imaginary parts) that fit one workgroup's memory and thread limit at `threads` a line, up to
/// `wanted` (powers of two where `strided`), padded where `padded_inside` asks and it fits; with
/// the stride between them.
fn fit_lines(n: usize, threads: usize, wanted: usize, strided: bool, along: bool, word: usize, limits: DeviceLimits) -> (usize, bool, usize) {
    let stride = |b: usize, padded: bool| line_stride(n, padded, b, if along { Lanes::Elements(threads) } else { Lanes::Lines(b) }, 128 / word, limits.tuning);
    let fits = |b: usize, padded: bool| b * threads <= limits.max_threads && b * stride(b, padded) * word <= limits.workgroup_bytes;
    let most = |padded: bool| (1..=wanted).filter(|&b| !strided || b.is_power_of_two()).take_while(|&b| fits(b, padded)).last();
    let (batch, padded) = match most(true).filter(|_| padded_inside(n, along, limits.tuning)) {
        Some(b) => (b, true),
        None => (most(false).unwrap_or(1), false),
    };
    (batch, padded, stride(batch, padded))
}

/// The split-exchange pass for lines `columns` apart whose real parts fit workgroup memory, with
/// every stage's butterflies spread evenly over the threads: one contiguous line whose complex
/// numbers do not fit, or columns (as many as `line_pass` would read, where memory allows: twice
/// as many as whole complex lines; `plan_axis` takes it where it holds more), which beat fewer
/// columns a pass and the four-step's two passes (measured: BENCHMARKS.md).
pub fn split_line_pass(n: usize, limits: DeviceLimits, columns: usize, wide: bool) -> Option<LinePass> {
    let strided = columns > 1;
    let (radices, elements) = radix_plan(n, limits.tuning)?;
    if radices.len() > 8 || n * 4 > limits.workgroup_bytes || (!strided && n * 8 <= limits.workgroup_bytes) {
        return None;
    }
    let threads = threads_per_line(n, &radices, elements);
    if threads > limits.max_threads || radices.iter().any(|&r| !(n / r).is_multiple_of(threads)) {
        return None;
    }
    let wanted = if strided {
        strided_lines(columns, threads, elements, n * STRIDED_LINES_WIDE * 8 > limits.workgroup_bytes, wide, limits.tuning).max(32 / threads)
    } else {
        1
    };
    let (batch, padded, stride) = fit_lines(n, threads, wanted, strided, !strided, 4, limits);
    Some(LinePass { n, radices, threads, batch, padded, stride, split: true, loops: loops(threads * batch, true, limits.tuning) })
}

/// How a warp's lanes map onto a workgroup's lines: consecutive lanes take consecutive elements
/// of one line, `threads` a line (contiguous passes), or the same element of consecutive lines,
/// `batch` of them (strided passes).
#[derive(Clone, Copy, Debug)]
enum Lanes {
    Elements(usize),
    Lines(usize),
}

/// Workgroup-memory elements from one line to the next: the line (padded: one element after
/// every 16), rounded up so that the lanes of one bank cycle reach distinct banks where they
/// read consecutive elements of their lines: `slots` of them, 16 lanes of a half-warp for 8-byte
/// elements (a pair of the 32 banks each), 32 for 4-byte ones. Lanes f + F·g (f < F) at
/// line·stride + element: F lines side by side (strided passes) need stride = (slots/F)·odd,
/// lines of F < slots threads stride = F·odd, otherwise any odd stride.
/// (A merely odd stride put lines c and c + stride⁻¹ mod 16 of an 8-line batch on the same
/// banks: a 2-way conflict on every access; measured: BENCHMARKS.md.)
fn line_stride(n: usize, padded: bool, batch: usize, lanes: Lanes, slots: usize, tuning: Tuning) -> usize {
    let base = if padded { n + n / 16 } else { n };
    if !bank_strides(tuning) {
        return if padded { base | 1 } else { base };
    }
    if batch == 1 {
        return base;
    }
    let spacing = match lanes {
        Lanes::Lines(b) if b < slots => slots / b,
        Lanes::Elements(t) if t < slots && slots.is_multiple_of(t) => t,
        _ => 1,
    };
    // The smallest multiple of `spacing` at or above base whose quotient is odd.
    let q = base.div_ceil(spacing);
    spacing * (q | 1)
}

/// Smallest 2^a 3^b 5^c 7^d at or above `min`: a fast length for Bluestein's padded transform.
pub fn smooth_at_least(min: usize) -> usize {
    smooth_over(min, &[3, 5, 7])
}

/// Smallest 2^a times a product of `odd` primes (each any number of times) at or above `min`.
pub fn smooth_over(min: usize, odd: &[usize]) -> usize {
    let best = min.next_power_of_two();
    // Every product of the odd primes below `best`, each doubled up to `min`.
    let mut products = vec![1usize];
    for &p in odd {
        let mut more = Vec::new();
        for &q in &products {
            let mut x = q * p;
            while x < best {
                more.push(x);
                x *= p;
            }
        }
        products.extend(more);
    }
    products
        .into_iter()
        .map(|mut x| {
            while x < min {
                x *= 2;
            }
            x
        })
        .fold(best, usize::min)
}

/// Bluestein's padded length: among the lengths with a plan from `min` to 1.3·min, the cheapest
/// by length × stages, a stage counting p/8 more than 1 for each odd prime factor p of its radix
/// (a butterfly of p costs ~p²/2 products): 513 → 640 (16·8·5) rather than 525 (3·5·5·7) or 528
/// (16·3·11).
pub fn bluestein_len(min: usize, tuning: Tuning) -> usize {
    let cost = |m: usize| {
        let stage = |mut r: usize| {
            let mut c = 1.0;
            for &p in RADICES.iter().filter(|&&p| p % 2 == 1 && !ODD_COMPOSITES.contains(&p)) {
                while r.is_multiple_of(p) {
                    (c, r) = (c + p as f64 / 8.0, r / p);
                }
            }
            c
        };
        m as f64 * factor(m, tuning).unwrap().into_iter().map(stage).sum::<f64>()
    };
    let mut best = smooth_at_least(min);
    let mut m = best + 1;
    while (m as f64) <= 1.3 * min as f64 {
        if factor(m, tuning).is_some() && cost(m) < cost(best) {
            best = m;
        }
        m += 1;
    }
    best
}

/// Plans one axis of length `n` whose lines lie `columns` apart (1: contiguous). On a strided
/// axis, a single pass whose workgroup holds fewer than `strided_min_batch` lines (or all
/// `columns`) gives way to the four-step scheme: strided passes read `batch` adjacent columns at
/// once, so too few lines waste most of each memory transaction.
pub fn plan_axis(n: usize, limits: DeviceLimits, columns: usize, wide: bool) -> Option<AxisPlan> {
    let min_batch = strided_min_batch(limits.tuning).min(columns);
    let complex = line_pass(n, limits, columns, wide);
    // A split exchange where it holds more lines than whole complex numbers would (or any).
    let split = split_line_pass(n, limits, columns, wide).filter(|s| split_enabled(limits.tuning) && complex.as_ref().is_none_or(|c| s.batch > c.batch));
    let single = split.or(complex);
    if let Some(p) = single.clone().filter(|p| p.batch >= min_batch) {
        return Some(AxisPlan::Single(p));
    }
    if factor(n, limits.tuning).is_some() {
        return four_step(n, limits, columns, wide).or(single.map(AxisPlan::Single));
    }
    if let Some(rader) = rader(n, limits, min_batch, columns, wide) {
        return Some(rader);
    }
    let m = bluestein_len(2 * n - 1, limits.tuning);
    let inner = plan_axis(m, limits, columns, wide)?;
    Some(AxisPlan::Bluestein { n, m, inner: Box::new(inner) })
}

/// Rader's plan for a prime `n` whose n − 1 is one pass holding `min_batch` lines (two passes
/// of n − 1 move far less than Bluestein's two of m ≥ 2n − 1); None otherwise.
fn rader(n: usize, limits: DeviceLimits, min_batch: usize, columns: usize, wide: bool) -> Option<AxisPlan> {
    if n < 3 || !is_prime(n) {
        return None;
    }
    let inner = line_pass(n - 1, limits, columns, wide).filter(|p| p.batch >= min_batch)?;
    Some(AxisPlan::Rader { n, root: primitive_root(n), inner })
}

fn is_prime(n: usize) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| !n.is_multiple_of(d))
}

/// The smallest generator of the multiplicative group mod the prime `p`: g^((p−1)/q) ≠ 1 for
/// every prime factor q of p − 1.
pub fn primitive_root(p: usize) -> usize {
    let order = p - 1;
    let mut factors = Vec::new();
    let mut rest = order;
    let mut d = 2;
    while d * d <= rest {
        if rest.is_multiple_of(d) {
            factors.push(d);
            while rest.is_multiple_of(d) {
                rest /= d;
            }
        }
        d += 1;
    }
    if rest > 1 {
        factors.push(rest);
    }
    (1..p).find(|&g| factors.iter().all(|&q| pow_mod(g, order / q, p) != 1)).expect("a prime has a primitive root")
}

/// b^e mod m.
pub fn pow_mod(b: usize, mut e: usize, m: usize) -> usize {
    let (mut b, mut r, m) = (b as u128 % m as u128, 1u128 % m as u128, m as u128);
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % m;
        }
        b = b * b % m;
        e >>= 1;
    }
    r as usize
}

/// Splits a smooth `n` (lines `columns` apart) into n1 · n2, both single passes, as close to √n
/// as possible.
fn four_step(n: usize, limits: DeviceLimits, columns: usize, wide: bool) -> Option<AxisPlan> {
    // Both passes are strided (even for n2 = 1): the first reads columns n2 apart, the second
    // writes them.
    let apart = |n2: usize| (n2 * columns).max(2);
    let mut best: Option<(usize, usize)> = None;
    let mut d = 1;
    while d * d <= n {
        if n.is_multiple_of(d) {
            for (n1, n2) in [(d, n / d), (n / d, d)] {
                if line_pass(n1, limits, apart(n2), wide).is_some() && line_pass(n2, limits, apart(n2), wide).is_some() {
                    let balance = n1.max(n2);
                    if best.is_none_or(|(b1, b2)| balance < b1.max(b2)) {
                        best = Some((n1, n2));
                    }
                }
            }
        }
        d += 1;
    }
    let (n1, n2) = best?;
    let second = lanes_line_pass(n2, limits, apart(n2), columns == 1, wide)?;
    Some(AxisPlan::FourStep { n, first: line_pass(n1, limits, apart(n2), wide)?, second })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAVAPIPE: DeviceLimits = DeviceLimits { workgroup_bytes: 32768, max_threads: 1024, tuning: Tuning::NONE };
    const NVIDIA: DeviceLimits = DeviceLimits { workgroup_bytes: 49152, max_threads: 1024, tuning: Tuning::NONE };

    #[test]
    fn factors_multiply_back() {
        for n in 1..5000 {
            if let Some(f) = factor(n, Tuning::default()) {
                assert_eq!(f.iter().product::<usize>(), n);
            }
        }
        assert_eq!(factor(4096, Tuning::default()), Some(vec![16, 16, 16]));
        assert_eq!(factor(1000, Tuning::default()), Some(vec![8, 5, 5, 5]));
        // Odd composites where they save two stages, not one.
        assert_eq!(factor(243, Tuning::default()), Some(vec![9, 9, 3]));
        assert_eq!(factor(225, Tuning::default()), Some(vec![15, 15]));
        assert_eq!(factor(375, Tuning::default()), Some(vec![3, 5, 5, 5]));
        assert_eq!(factor(27, Tuning::default()), Some(vec![3, 3, 3]));
        assert_eq!(factor(17, Tuning::default()), None);
        assert_eq!(factor(1, Tuning::default()), Some(vec![]));
    }

    #[test]
    fn every_radix_stage_fits_the_registers() {
        for n in 1..=4096 {
            if let Some(p) = line_pass(n, LAVAPIPE, 1, true) {
                let elements = radix_plan(n, Tuning::default()).unwrap().1;
                for &r in &p.radices {
                    assert!(p.threads * (elements / r) >= n / r, "n={n} r={r}");
                }
                let words = p.batch * p.stride;
                assert!(words * 8 <= LAVAPIPE.workgroup_bytes, "n={n}");
            }
        }
    }

    #[test]
    fn columns_per_strided_pass() {
        let batch = |n: usize, columns: usize| line_pass(n, NVIDIA, columns, true).unwrap().batch;
        // 16 elements a thread: 16 columns where rows start off a 32-byte sector (81 or 91125
        // apart), within 512 threads (243: 27 threads a line; 128: 8), else 8.
        assert_eq!((batch(243, 81), batch(243, 100), batch(128, 91125), batch(128, 65536)), (16, 8, 16, 8));
        // 8 elements a thread: 16 within 320 threads (100: 20 a line), else 8 (192: 32; 200: 40).
        assert_eq!((batch(100, 91125), batch(100, 37500), batch(192, 256), batch(200, 125)), (16, 16, 8, 8));
    }

    #[test]
    fn lanes_of_a_bank_cycle_read_distinct_banks() {
        // The lanes of one bank cycle reading consecutive elements of their lines: 16 lanes of
        // a half-warp on complex numbers (8 bytes, 16 bank pairs), 32 on a split exchange's real
        // or imaginary parts (4 bytes, 32 banks); lanes run along lines of threads dividing
        // that, or across lines.
        for n in 2..=4096 {
            for columns in [1, 8, 100, 91125] {
                let passes = [line_pass(n, NVIDIA, columns, true), split_line_pass(n, NVIDIA, columns, true)];
                for (p, slots) in passes.into_iter().zip([16usize, 32]).filter_map(|(p, s)| p.map(|p| (p, s))) {
                    let along = columns == 1;
                    if p.batch == 1 || (along && !slots.is_multiple_of(p.threads)) {
                        continue;
                    }
                    let lane = |l: usize| if along { (l / p.threads, l % p.threads) } else { (l % p.batch, l / p.batch) };
                    let mut banks: Vec<usize> =
                        (0..slots).map(lane).filter(|&(line, _)| line < p.batch).map(|(line, e)| (line * p.stride + e) % slots).collect();
                    let lanes = banks.len();
                    banks.sort_unstable();
                    banks.dedup();
                    assert_eq!(banks.len(), lanes, "n={n} columns={columns} {p:?}");
                }
            }
        }
    }

    #[test]
    fn long_columns_exchange_real_and_imaginary_halves() {
        // Columns whose complex lines fit 4 to a workgroup (48 KiB) take 8 as split exchanges;
        // those that already fit 8, or whose stages are uneven over the threads, do not.
        for (n, columns) in [(1024, 16384), (729, 12352), (1024, 1000)] {
            assert_eq!(line_pass(n, NVIDIA, columns, true).unwrap().batch, if n == 729 { 8 } else { 4 });
            match plan_axis(n, NVIDIA, columns, true) {
                Some(AxisPlan::Single(p)) => assert_eq!((p.split, p.batch), (n != 729, 8), "{n}"),
                other => panic!("{other:?}"),
            }
        }
        // 512 points fit 8 complex columns, 16 as split exchanges (8 elements a thread: 16 wanted).
        assert!(matches!(plan_axis(512, NVIDIA, 512, true), Some(AxisPlan::Single(LinePass { split: true, batch: 16, .. }))));
        // Not in transforms too small to be wide (`wide_columns`): 8 complex.
        assert!(matches!(plan_axis(512, NVIDIA, 512, false), Some(AxisPlan::Single(LinePass { split: false, batch: 8, .. }))));
        assert!(!wide_columns(512 * 512, Tuning::default()) && wide_columns(16 * 512 * 512, Tuning::default()));
        assert!(split_line_pass(1000, NVIDIA, 9008, true).is_none());
        // Lavapipe (32 KiB): 625 and 729-point columns.
        for n in [625, 729] {
            assert!(matches!(plan_axis(n, LAVAPIPE, 7, true), Some(AxisPlan::Single(LinePass { split: true, batch: 8, .. }))), "{n}");
        }
    }

    #[test]
    fn long_and_prime_axes() {
        assert!(matches!(plan_axis(4096, LAVAPIPE, 1, true), Some(AxisPlan::Single(_))));
        match plan_axis(1 << 20, LAVAPIPE, 1, true) {
            Some(AxisPlan::FourStep { first, second, .. }) => assert_eq!(first.n * second.n, 1 << 20),
            other => panic!("{other:?}"),
        }
        match plan_axis(4093, LAVAPIPE, 1, true) {
            Some(AxisPlan::Bluestein { m, .. }) => assert!((2 * 4093 - 1..=8192).contains(&m)),
            other => panic!("{other:?}"),
        }
        assert_eq!(bluestein_len(513, Tuning::default()), 640);
        // A strided 4096 that would fit one line per workgroup goes four-step instead.
        assert!(matches!(plan_axis(4096, LAVAPIPE, 4, true), Some(AxisPlan::FourStep { .. })));
        // 8192 contiguous: one split-exchange pass (real parts 32 KiB); strided, four-step.
        assert!(matches!(plan_axis(8192, LAVAPIPE, 1, true), Some(AxisPlan::Single(LinePass { split: true, threads: 512, .. }))));
        assert!(matches!(plan_axis(8192, LAVAPIPE, 4, true), Some(AxisPlan::FourStep { .. })));
        // 2^24 needs two passes of 4096.
        assert!(matches!(plan_axis(1 << 24, LAVAPIPE, 1, true), Some(AxisPlan::FourStep { .. })));
    }

    #[test]
    fn rader_where_p_minus_1_is_one_pass_else_bluestein() {
        // Up to 4 columns, a strided axis needs a batch of all of them.
        let pick = |n: usize, min_batch: usize| match plan_axis(n, LAVAPIPE, min_batch, true) {
            Some(AxisPlan::Rader { n: pn, root, inner }) => {
                assert_eq!((pn, inner.n, root), (n, n - 1, primitive_root(n)));
                assert!(inner.batch >= min_batch);
                "rader"
            }
            Some(AxisPlan::Bluestein { .. }) => "bluestein",
            other => panic!("{n}: {other:?}"),
        };
        for n in [17, 19, 29, 31, 37, 41, 61, 97, 257, 641, 769, 1153, 3329] {
            assert_eq!(pick(n, 1), "rader", "{n}");
        }
        // n − 1 with a prime factor above 13 (47 − 1 = 2·23, 59 − 1 = 2·29, 83 − 1 = 2·41,
        // 4093 − 1 = 4·3·11·31), or too long for one workgroup (8191 − 1 = 2·3²·5·7·13),
        // composite non-smooth lengths (17², 2·17), and primes whose n − 1 holds too few lines
        // per workgroup for a strided axis.
        for n in [47, 59, 83, 4093, 8191, 289, 34] {
            assert_eq!(pick(n, 1), "bluestein", "{n}");
        }
        assert_eq!(line_pass(3328, LAVAPIPE, 1, true).unwrap().batch, 1);
        assert_eq!(pick(3329, 4), "bluestein");
        assert_eq!(pick(257, 4), "rader");
        // Small primes stay single butterflies (no Rader).
        assert!(matches!(plan_axis(13, LAVAPIPE, 1, true), Some(AxisPlan::Single(_))));
    }

    #[test]
    fn primitive_roots_generate_every_residue() {
        assert_eq!(primitive_root(17), 3);
        assert_eq!(primitive_root(257), 3);
        assert_eq!(primitive_root(7), 3);
        assert_eq!(primitive_root(3), 2);
        assert_eq!(primitive_root(2), 1);
        for p in (3..5000).filter(|&p| is_prime(p)) {
            let g = primitive_root(p);
            let mut seen = vec![false; p];
            let mut x = 1;
            for _ in 0..p - 1 {
                assert!(!seen[x], "p={p} g={g}: order below p − 1");
                seen[x] = true;
                x = x * g % p;
            }
            // The smallest: every smaller candidate has a shorter order.
            let order = |h: usize| (1..).scan(h, |x, e| Some((std::mem::replace(x, *x * h % p), e))).find(|&(x, _)| x == 1).unwrap().1;
            assert!((2..g).all(|h| order(h) < p - 1), "p={p}");
            assert_eq!(pow_mod(g, p - 1, p), 1);
        }
        assert!(is_prime(4093) && !is_prime(4095) && !is_prime(1) && !is_prime(289));
    }

    #[test]
    fn smooth_lengths() {
        assert_eq!(smooth_at_least(1), 1);
        assert_eq!(smooth_at_least(513), 525);
        assert_eq!(smooth_at_least(8185), 8192);
        for min in 1..3000 {
            let s = smooth_at_least(min);
            assert!(s >= min && factor(s, Tuning::default()).is_some());
            assert!((min..s).all(|x| {
                let mut y = x;
                for p in [2, 3, 5, 7] {
                    while y % p == 0 {
                        y /= p;
                    }
                }
                y != 1
            }));
        }
    }
}
