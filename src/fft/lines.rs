//! The FFT line pass: one Stockham FFT per line, all stages in workgroup memory. Its WGSL is
//! generated per plan by `src/fft/codegen.rs` (every stage unrolled over named registers).

use bytemuck::{Pod, Zeroable};

use super::codegen::{self, LineKernel};
use super::plan::{min_threads, LinePass};
use crate::gpu::Dtype;
use crate::graph::{Buf, Recording};

/// Mirrors `Params` in the generated WGSL (src/fft/codegen.rs).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct Params {
    pub lines: u32,
    pub inner: u32,
    pub in_split: u32,
    pub in_hi: u32,
    pub in_lo: u32,
    pub in_elem: u32,
    pub out_split: u32,
    pub out_hi: u32,
    pub out_lo: u32,
    pub out_elem: u32,
    pub scale: f32,
    pub tw_line: u32,
    pub tw_lo: u32,
    pub tw_hi: u32,
    pub tw_s: u32,
    pub tw_div: u32,
    pub mul_in: u32,
    pub len_in: u32,
    pub mul_out: u32,
    pub len_out: u32,
    pub crop_shift: u32,
    pub crop_len: u32,
    pub crop_mod: u32,
    pub in_pair: u32,
    pub in_pair_end: u32,
    pub out_pair: u32,
    pub out_pair_end: u32,
    /// What the f32 `scale` left of the f64 factor (f64 kernels add it back).
    pub scale_lo: f32,
}

/// Where the lines of one pass sit: line l = o·inner + i starts at
/// (o / split)·hi + (o % split)·lo + i and steps by `elem`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lines {
    pub split: u32,
    pub hi: u32,
    pub lo: u32,
    pub elem: u32,
}

impl Lines {
    /// Lines along the middle axis of an (outer, n, inner) array.
    pub fn axis(n: usize, inner: usize) -> Lines {
        Lines { split: 1, hi: (n * inner) as u32, lo: 0, elem: inner as u32 }
    }
}

/// The four-step twiddle fused into the store: output k of line (o, i) times
/// W_total^(k · (i / div)), from two tables at `lo` (W^b, b < s) and `hi` (W^(a·s)).
#[derive(Clone, Copy, Debug)]
pub struct StoreTwiddle {
    pub lo: u32,
    pub hi: u32,
    pub s: u32,
    pub div: u32,
}

/// Bluestein's element-wise products fused into a pass: element j of each line times
/// tw[table + j], only j < len (loads: zero beyond; stores: nothing beyond).
#[derive(Clone, Copy, Debug)]
pub struct Chirp {
    pub table: u32,
    pub len: u32,
}

/// A cyclic window of the output lines: output k is stored at (k + shift) mod modulus, and only
/// if that is below len (a crop fused into the store).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crop {
    pub shift: u32,
    pub len: u32,
    pub modulus: u32,
}

/// One of the two passes of Rader's algorithm for a prime p (lines of p − 1; src/fft/gpu.rs),
/// with Rader's index table at `indices` (see `Twiddles::rader_indices`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rader {
    /// Loads element q from position g^−q; stores x_0 and the raw DC output after each line's
    /// p − 1 outputs (the spectrum product itself is a `chirp_out`).
    Gather { indices: u32 },
    /// Adds x_0 (stored after the line) to element 0 as it loads; stores output q at position
    /// g^q and x_0 + A[0] at position 0.
    Scatter { indices: u32 },
}

/// Two lines a, b of a real transform held by one line of a pass (src/fft/real_pair.rs,
/// `real_pairs`): b starts `offset` elements after a, laid out alike. Elements at or beyond `end`
/// belong to no line (b past an odd count of lines): zero when loaded, not stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinePair {
    pub offset: u32,
    pub end: u32,
}

/// What a pass loads from line pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairsIn {
    /// A real source: element j is x_a[j] + i·x_b[j].
    Real(LinePair),
    /// Half spectra of n/2 + 1 values: element j is A_j + i·B_j, A and B their full Hermitian
    /// spectra (imaginary parts of A_0 and, n even, A_(n/2) ignored, as numpy's irfft does).
    Hermitian(LinePair),
}

/// What a pass stores to line pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairsOut {
    /// A real destination: Re z to line a, Im z to line b.
    Real(LinePair),
    /// The spectra of a and b untangled from Z: X_a[k] = (Z_k + conj Z_(n−k))/2 and
    /// X_b[k] = (Z_k − conj Z_(n−k))/2i, k ≤ n/2.
    Untangled(LinePair),
}

#[derive(Clone, Debug)]
pub struct Pass {
    pub plan: LinePass,
    pub inverse: bool,
    pub lines: usize,
    pub inner: usize,
    pub input: Lines,
    pub output: Lines,
    pub scale: f64,
    pub roots: u32,
    pub twiddle: Option<StoreTwiddle>,
    /// Conjugate the input as read, and the result as stored (around a Bluestein transform).
    pub conj_source: bool,
    pub conj_result: bool,
    pub chirp_in: Option<Chirp>,
    pub chirp_out: Option<Chirp>,
    /// Real transforms of even length along the contiguous axis: the untangling of the half-length
    /// complex transform fused into the store (forward) or the load (inverse); tables W_2n^k.
    pub real_post: Option<u32>,
    pub real_pre: Option<u32>,
    /// Input lines hold this many elements, zero beyond (padding fused into the load).
    pub pad_in: Option<u32>,
    /// Each element read is multiplied by the same element of a second array; `record` is then
    /// given that array.
    pub product: Option<super::Product>,
    pub crop: Option<Crop>,
    pub rader: Option<Rader>,
    pub pairs_in: Option<PairsIn>,
    pub pairs_out: Option<PairsOut>,
}

impl Pass {
    /// Whether the pass may overwrite its input: lines read and written in the same places and
    /// lengths, each workgroup reading all of its own lines before writing them.
    pub fn in_place_ok(&self) -> bool {
        self.input == self.output
            && self.real_post.is_none()
            && self.real_pre.is_none()
            && self.pad_in.is_none()
            && self.crop.is_none()
            && self.pairs_in.is_none()
            && self.pairs_out.is_none()
    }

    /// Whether the pass writes reals (pairs of real lines).
    pub fn real_out(&self) -> bool {
        matches!(self.pairs_out, Some(PairsOut::Real(_)))
    }

    /// A plain pass over `lines` lines (no fusions), for the builders to adjust.
    #[allow(clippy::too_many_arguments)]
    pub fn plain(plan: LinePass, inverse: bool, lines: usize, inner: usize, input: Lines, output: Lines, scale: f64, roots: u32) -> Pass {
        Pass {
            plan,
            inverse,
            lines,
            inner,
            input,
            output,
            scale,
            roots,
            twiddle: None,
            conj_source: false,
            conj_result: false,
            chirp_in: None,
            chirp_out: None,
            real_post: None,
            real_pre: None,
            pad_in: None,
            product: None,
            crop: None,
            rader: None,
            pairs_in: None,
            pairs_out: None,
        }
    }
}

impl LineKernel {
    /// The kernel that runs `pass`: its plan with `loops` line groups per workgroup, and a flag
    /// for each fusion the pass carries (in place: `dst` is also the source). The one place a
    /// pass's fusions become the flags that shape the generated source; the pattern names every
    /// field of `Pass`, so a new one does not compile until it is mapped or ignored here.
    pub fn for_pass(pass: &Pass, loops: usize, in_place: bool, double: bool) -> LineKernel {
        let Pass {
            plan,
            inverse,
            lines: _,
            inner: _,
            input,
            output,
            scale: _,
            roots: _,
            twiddle,
            conj_source,
            conj_result,
            chirp_in,
            chirp_out,
            real_post,
            real_pre,
            pad_in,
            product,
            crop,
            rader,
            pairs_in,
            pairs_out,
        } = pass;
        LineKernel {
            pass: LinePass { loops, ..plan.clone() },
            inverse: *inverse,
            // Contiguous lines load along the line; strided ones across lines, so loads coalesce.
            load_line_fast: input.elem == 1,
            store_line_fast: output.elem == 1,
            twiddle_out: twiddle.is_some(),
            conj_source: *conj_source,
            chirp_in: chirp_in.is_some(),
            chirp_out: chirp_out.is_some(),
            conj_result: *conj_result,
            real_post: real_post.is_some(),
            real_pre: real_pre.is_some(),
            pad_in: pad_in.is_some(),
            product_in: product.is_some(),
            product_conj: matches!(product, Some(super::Product::MulConj | super::Product::CrossPower)),
            product_normalized: *product == Some(super::Product::CrossPower),
            crop_out: crop.is_some(),
            in_place,
            rader_gather: matches!(rader, Some(Rader::Gather { .. })),
            rader_scatter: matches!(rader, Some(Rader::Scatter { .. })),
            pack_real: matches!(pairs_in, Some(PairsIn::Real(_))),
            hermitian_pairs: matches!(pairs_in, Some(PairsIn::Hermitian(_))),
            unpack_real: matches!(pairs_out, Some(PairsOut::Real(_))),
            untangle_pairs: matches!(pairs_out, Some(PairsOut::Untangled(_))),
            double,
        }
    }
}

/// Records `pass` from `src` into `dst` (the same buffer: in place, where `in_place_ok`); `aux`
/// is the second operand of a fused product. The tables' type sets the precision (C64: f64).
pub fn record(rec: &mut Recording, pass: &Pass, src: Buf, dst: Buf, table: Buf, aux: Option<Buf>) {
    assert_eq!(pass.product.is_some(), aux.is_some(), "a fused product needs its operand");
    assert!(pass.chirp_in.is_none() || pass.pad_in.is_none(), "the chirp's length pads already");
    let plan = &pass.plan;
    let tw = pass.twiddle;
    // Rader's index table: at mul_in for the gather (no chirp_in there), mul_out for the scatter.
    let (gather, scatter) = match pass.rader {
        Some(Rader::Gather { indices }) => (Some(indices), None),
        Some(Rader::Scatter { indices }) => (None, Some(indices)),
        None => (None, None),
    };
    let pair_in = pass.pairs_in.map(|(PairsIn::Real(l) | PairsIn::Hermitian(l))| l);
    let pair_out = pass.pairs_out.map(|(PairsOut::Real(l) | PairsOut::Untangled(l))| l);
    let p = Params {
        lines: pass.lines as u32,
        inner: pass.inner as u32,
        in_split: pass.input.split,
        in_hi: pass.input.hi,
        in_lo: pass.input.lo,
        in_elem: pass.input.elem,
        out_split: pass.output.split,
        out_hi: pass.output.hi,
        out_lo: pass.output.lo,
        out_elem: pass.output.elem,
        scale: crate::gpu::f32_pair(pass.scale).0,
        tw_line: pass.roots,
        tw_lo: tw.map_or(0, |t| t.lo),
        tw_hi: tw.map_or(0, |t| t.hi),
        tw_s: tw.map_or(1, |t| t.s),
        tw_div: tw.map_or(1, |t| t.div),
        mul_in: pass.chirp_in.map(|c| c.table).or(pass.real_pre).or(gather).unwrap_or(0),
        len_in: pass.chirp_in.map(|c| c.len).or(pass.pad_in).unwrap_or(0),
        mul_out: pass.chirp_out.map(|c| c.table).or(pass.real_post).or(scatter).unwrap_or(0),
        len_out: pass.chirp_out.map_or(0, |c| c.len),
        crop_shift: pass.crop.map_or(0, |c| c.shift),
        crop_len: pass.crop.map_or(0, |c| c.len),
        crop_mod: pass.crop.map_or(1, |c| c.modulus),
        in_pair: pair_in.map_or(0, |l| l.offset),
        in_pair_end: pair_in.map_or(0, |l| l.end),
        out_pair: pair_out.map_or(0, |l| l.offset),
        out_pair_end: pair_out.map_or(0, |l| l.end),
        scale_lo: crate::gpu::f32_pair(pass.scale).1,
    };
    let groups = (pass.lines as u64).div_ceil(plan.batch as u64);
    // Few line groups fill the GPU one per workgroup (the loop's registers would cost occupancy).
    let min_groups = (min_threads(rec.gpu().options().tuning) / (plan.threads * plan.batch)).max(1) as u64;
    let loops = if groups >= 2 * min_groups { plan.loops } else { 1 };
    let line_kernel = LineKernel::for_pass(pass, loops, src == dst, rec.dtype(table) == Dtype::C64);
    let kernel = codegen::kernel(&line_kernel);
    // Looping workgroups take groups in turn; at least min_groups of them, to fill any GPU.
    let workgroups = groups.div_ceil(line_kernel.loops() as u64).max(groups.min(min_groups));
    let bufs = [src, dst, table];
    let bufs = if src == dst { &bufs[1..] } else { &bufs[..] };
    let bufs: Vec<Buf> = bufs.iter().copied().chain(aux).collect();
    rec.dispatch(kernel, &[], bytemuck::bytes_of(&p), &bufs, workgroups);
}
