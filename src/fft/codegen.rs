//! WGSL for one FFT line pass, generated from its plan: every radix stage unrolled with its
//! butterflies written out over named registers, constants as literals computed in f64 on the
//! host. Generated per plan because WGSL has no templates and the drivers keep arrays indexed at
//! run time in slow local memory; a unit test validates the source of every planned length.
//!
//! The kernel transforms `lines` lines of length N. Line l = o·inner + i starts at
//! (o / split)·hi + (o % split)·lo + i and steps by `elem`, for input and output separately (the
//! four-step scheme writes its transposed output through the split). Inverse transforms are
//! conj(F(conj x)): conjugate on load and on store.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use super::butterfly::butterfly;
use super::plan::LinePass;
use super::twiddle::stage_offsets;
use crate::gpu::{BindingInfo, BindingKind, KernelInfo};

/// Everything that changes the generated source.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LineKernel {
    pub pass: LinePass,
    pub inverse: bool,
    /// Consecutive threads load consecutive elements of one line (else of consecutive lines).
    pub load_line_fast: bool,
    pub store_line_fast: bool,
    /// Four-step: multiply output k of line (o, i) by W_total^(k · (i / tw_div)).
    pub twiddle_out: bool,
    /// Conjugate each element as it is read, before anything else (an inverse Bluestein).
    pub conj_source: bool,
    /// Bluestein's pre-multiply: element j is x_j · tw[mul_in + j] for j < len_in, else 0.
    pub chirp_in: bool,
    /// Multiply output k by tw[mul_out + k] and store only k < len_out (Bluestein's spectrum
    /// product, or its post-multiply and crop).
    pub chirp_out: bool,
    /// Conjugate each element last, before the scale (an inverse Bluestein).
    pub conj_result: bool,
    /// Real forward transform of 2n reals packed as n complex: the store untangles the spectrum
    /// into n + 1 values per line (tables at mul_out: W_2n^k). Contiguous lines only.
    pub real_post: bool,
    /// Its inverse: the load packs n + 1 half-spectrum values into the n complex values whose
    /// inverse transform holds the 2n reals in pairs (tables at mul_in). Contiguous lines only.
    pub real_pre: bool,
    /// Zero padding fused into the load: element j is read only for j < len_in, else 0.
    pub pad_in: bool,
    /// Each element read is multiplied by the element at the same index of `aux` (a spectrum
    /// product fused into the load; `product_conj`: by its conjugate, a correlation).
    pub product_in: bool,
    pub product_conj: bool,
    /// The product divided by its magnitude, floored at 100 ε (phase correlation).
    pub product_normalized: bool,
    /// A cyclic window fused into the store: output k goes to (k + crop_shift) mod crop_mod,
    /// stored only below crop_len.
    pub crop_out: bool,
    /// Reads and writes `dst` (no `src`): each workgroup has read all of its lines before it
    /// writes any, so the transform may overwrite its input.
    pub in_place: bool,
    /// Rader's first pass (prime p, lines of N = p − 1): element q is loaded from position
    /// u32(tw[mul_in + q].x) = g^−q; the store of output 0 also writes x_0 (the line's element 0)
    /// at N and the raw output 0 at N + 1. Forward, no twiddle or real pieces.
    pub rader_gather: bool,
    /// Rader's second pass: element 0 is loaded plus element N (x_0); output q is stored at
    /// position u32(tw[mul_out + q].y) = g^q, and x_0 + A[0] (elements N and N + 1) at position 0.
    pub rader_scatter: bool,
    /// Lines holding two lines a, b of a real transform each (b `in_pair` elements after a,
    /// nothing at or past `in_pair_end`, see `lines::LinePair`). `pack_real`: the source is
    /// real, element j is x_a[j] + i·x_b[j]. `hermitian_pairs`: the source holds half spectra
    /// (N/2 + 1 values), element j is A_j + i·B_j of their full Hermitian spectra.
    pub pack_real: bool,
    pub hermitian_pairs: bool,
    /// The same on the store side (`out_pair`, `out_pair_end`). `unpack_real`: the destination is
    /// real, Re to line a and Im to line b. `untangle_pairs`: outputs k ≤ N/2 of the spectra
    /// X_a = (Z_k + conj Z_(N−k))/2 and X_b = (Z_k − conj Z_(N−k))/2i, read from workgroup memory.
    pub unpack_real: bool,
    pub untangle_pairs: bool,
    /// Computes in f64 (data, tables and workgroup memory; `real` is f64 in the source).
    pub double: bool,
}

impl LineKernel {
    /// Line groups each workgroup transforms: the plan's, where the first stage loads straight
    /// from memory into registers (not short lines). In place too: a group's lines are written
    /// only by the workgroup that reads them, after it has.
    pub fn loops(&self) -> usize {
        if self.direct_load() && !self.pass.radices.is_empty() {
            self.pass.loops
        } else {
            1
        }
    }

    /// Whether the first stage reads global memory straight into registers. Lines with few
    /// threads each (short ones) would make each load instruction touch many scattered
    /// segments: those load and store through workgroup memory in element order.
    fn direct_load(&self) -> bool {
        !(self.load_line_fast && self.pass.threads < 4 && !self.pass.radices.is_empty())
    }

    fn bindings(&self) -> &'static [BindingInfo] {
        match (self.in_place, self.product_in) {
            (false, false) => &BINDINGS[..4],
            (false, true) => BINDINGS,
            (true, false) => &BINDINGS[1..4],
            (true, true) => &BINDINGS[1..],
        }
    }
}

/// The parameter struct, mirrored by `Params` in src/fft/lines.rs.
const PARAMS: &str = "struct Params {
    lines: u32, inner: u32,
    in_split: u32, in_hi: u32, in_lo: u32, in_elem: u32,
    out_split: u32, out_hi: u32, out_lo: u32, out_elem: u32,
    scale: f32, tw_line: u32, tw_lo: u32, tw_hi: u32, tw_s: u32, tw_div: u32,
    mul_in: u32, len_in: u32, mul_out: u32, len_out: u32,
    crop_shift: u32, crop_len: u32, crop_mod: u32,
    in_pair: u32, in_pair_end: u32, out_pair: u32, out_pair_end: u32, scale_lo: f32,
}";

/// Every binding a line kernel may have, in order: in-place kernels drop `src`, kernels without
/// a fused product drop `aux` (see `LineKernel::bindings`).
const BINDINGS: &[BindingInfo] = &[
    BindingInfo { kind: BindingKind::StorageRead, name: "src" },
    BindingInfo { kind: BindingKind::StorageReadWrite, name: "dst" },
    BindingInfo { kind: BindingKind::StorageRead, name: "tw" },
    BindingInfo { kind: BindingKind::Uniform, name: "p" },
    BindingInfo { kind: BindingKind::StorageRead, name: "aux" },
];

/// The kernel for `k`, generated once per distinct source and kept for the life of the process.
pub fn kernel(k: &LineKernel) -> &'static KernelInfo {
    static CACHE: Mutex<Option<HashMap<LineKernel, &'static KernelInfo>>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap();
    let map = cache.get_or_insert_with(HashMap::new);
    if let Some(info) = map.get(k) {
        return info;
    }
    let source = wgsl(k);
    // Readable in LUCENT_PROFILE reports (length, lines per workgroup, load/store direction) and
    // the same in every process: a hash of the source tells kernels apart (pipelines and dumped
    // shaders are keyed by name).
    let dir = |fast: bool| if fast { "line" } else { "cols" };
    let name = format!(
        "fft_lines{}_n{}x{}_{}_{}_{:016x}",
        if k.double { "_f64" } else { "" },
        k.pass.n,
        k.pass.batch,
        dir(k.load_line_fast),
        dir(k.store_line_fast),
        crate::gpu::content_hash(source.as_bytes())
    );
    let threads = (k.pass.threads * k.pass.batch) as u32;
    let info: &'static KernelInfo = Box::leak(Box::new(KernelInfo {
        name: Box::leak(name.into_boxed_str()),
        path: "generated by src/fft/codegen.rs",
        source: Box::leak(source.into_boxed_str()),
        entry: "main",
        workgroup_size: [threads, 1, 1],
        bindings: k.bindings(),
        params_size: Some(112),
        overrides: &[],
    }));
    map.insert(k.clone(), info);
    info
}

/// Element `idx` of this thread's line in workgroup memory (see `LinePass::stride`).
fn sm(k: &LineKernel, line: &str, idx: &str) -> String {
    if k.pass.padded {
        format!("buf[{line} + pad({idx})]")
    } else {
        format!("buf[{line} + {idx}]")
    }
}

/// Element `base + offset` of this thread's line, with `base`'s padded index computed once by the
/// kernel (`p{base}`) and the offset's folded into a constant: pad(base + offset) = pad(base) +
/// offset + offset / 16 unless base mod 16 + offset mod 16 reaches 16, which an offset that is a
/// multiple of 16 rules out and `aligned` asserts. (Constant offsets become immediates of the
/// shared-memory instructions: about 5% fewer instructions in NVIDIA's binaries.)
fn sm_at(k: &LineKernel, line: &str, base: &str, offset: usize, aligned: bool) -> String {
    match folded(k, base, offset, aligned) {
        Some(i) => format!("buf[{line} + {i}]"),
        None => sm(k, line, &format!("{base} + {offset}u")),
    }
}

/// As `sm_at`, in the real or imaginary half of a split-exchange line.
fn sm_half_at(k: &LineKernel, base: &str, offset: usize, aligned: bool) -> String {
    match folded(k, base, offset, aligned) {
        Some(i) => format!("half[line + {i}]"),
        None => sm_half(k, &format!("{base} + {offset}u")),
    }
}

/// Whether a radix-r stage after stages of ns writes outputs d + q·ns with d mod 16 + (q·ns) mod
/// 16 < 16 (see `sm_at`): d = r·j with r dividing 16, or d mod 16 = j mod ns with ns dividing 16
/// and 16 dividing ns·r.
fn outputs_aligned(r: usize, ns: usize) -> bool {
    if ns == 1 {
        16 % r == 0
    } else {
        16 % ns == 0 && (ns * r).is_multiple_of(16)
    }
}

fn folded(k: &LineKernel, base: &str, offset: usize, aligned: bool) -> Option<String> {
    (k.pass.padded && (offset.is_multiple_of(16) || aligned)).then(|| format!("p{base} + {}u", offset + offset / 16))
}

/// Element `idx` of the real or imaginary half of this thread's split-exchange line (see
/// `LinePass::split`).
fn sm_half(k: &LineKernel, idx: &str) -> String {
    if k.pass.padded {
        format!("half[line + pad({idx})]")
    } else {
        format!("half[line + {idx}]")
    }
}

/// The generated kernel. Threads are mapped to (line c, thread t) so that the first stage reads
/// its inputs straight from global memory coalesced: along the line for contiguous lines, across
/// adjacent lines for strided ones. Stockham's last stage writes outputs j + q·n/r, the same
/// pattern, so it stores straight to global memory too when the output runs the same way; only
/// the stages between exchange through workgroup memory (one round trip fewer at each end).
pub fn wgsl(k: &LineKernel) -> String {
    let g = Gen::new(k);
    let mut s = String::new();
    let w = &mut s;
    declarations(w, k, g.direct_load, g.direct_store, g.stages > 1 || !g.direct_store);
    g.prologue(w);
    if !g.direct_load {
        g.load_through_shared(w);
    }
    if g.stages == 0 {
        writeln!(w, "if (valid) {}", g.store("out_base", "in_base", "0u", "", &g.stored(&g.loaded("in_base", "0u"), "0u", "m"), false)).unwrap();
    }
    let offsets = stage_offsets(&k.pass.radices);
    let mut ns = 1;
    for (si, &r) in k.pass.radices.iter().enumerate() {
        g.stage(w, si, ns, &offsets);
        ns *= r;
    }
    if !g.direct_store {
        g.store_through_shared(w);
    }
    if g.looped {
        // The next group's first stage writes workgroup memory this one's last stage reads.
        writeln!(w, "workgroupBarrier(); group += groups; }}").unwrap();
    }
    writeln!(w, "}}").unwrap();
    s
}

/// `x` conjugated if `on`.
fn conj_if(on: bool, x: &str) -> String {
    if on {
        format!("vec2({x}.x, -{x}.y)")
    } else {
        x.to_string()
    }
}

/// This thread's line of the group starting at line `first`, and where it is read.
const GROUP_LINE: &str = "let valid = first + c < p.lines; let l = min(first + c, p.lines - 1u); let in_base = base(l, p.in_split, p.in_hi, p.in_lo);";

/// The pieces of one kernel's source, and what they share.
struct Gen<'a> {
    k: &'a LineKernel,
    stages: usize,
    /// The first stage reads global memory straight into registers (`LineKernel::direct_load`).
    direct_load: bool,
    /// The last stage writes global memory straight from registers: the output runs the way the
    /// threads are mapped. (A length-1 line has no stage: it is copied, in any direction. The
    /// real post-processing pairs outputs k and n − k: those are read from workgroup memory.)
    direct_store: bool,
    /// Workgroups transform several line groups in turn (`LineKernel::loops`).
    looped: bool,
    /// Loads are guarded by len_in (chirped or zero-padded input).
    guard_in: bool,
}

impl<'a> Gen<'a> {
    fn new(k: &'a LineKernel) -> Self {
        let stages = k.pass.radices.len();
        let direct_load = k.direct_load();
        let direct_store = (k.store_line_fast == k.load_line_fast && direct_load && !k.real_post && !k.untangle_pairs) || stages == 0;
        check_flags(k, direct_load, direct_store);
        Gen { k, stages, direct_load, direct_store, looped: k.loops() > 1, guard_in: k.chirp_in || k.pad_in }
    }

    fn conj(&self, x: &str) -> String {
        conj_if(self.k.inverse, x)
    }

    /// What a load reads: element j of a line at `at` (the caller guards j < len_in when chirped).
    fn loaded(&self, at: &str, j: &str) -> String {
        let k = self.k;
        let x = if k.real_pre {
            format!("real_pre({at}, {j})")
        } else if k.hermitian_pairs {
            format!("hermitian_pairs({at}, {j})")
        } else if k.rader_gather {
            format!("rd({at} + u32(tw[p.mul_in + {j}].x) * p.in_elem)")
        } else if k.rader_scatter {
            format!("rader_dc({at}, {j})")
        } else {
            format!("rd({at} + ({j}) * p.in_elem)")
        };
        let x = conj_if(k.conj_source, &x);
        let x = if k.chirp_in { format!("cmul({x}, tw[p.mul_in + {j}])") } else { x };
        self.conj(&x)
    }

    fn in_range(&self, j: &str) -> String {
        if self.guard_in {
            format!(" && {j} < p.len_in")
        } else {
            String::new()
        }
    }

    /// What a store writes: conjugated back for the inverse, the four-step twiddle, the norm.
    fn stored(&self, v: &str, idx: &str, m: &str) -> String {
        let k = self.k;
        let v = if k.twiddle_out { format!("twiddled({v}, {idx}, {m})") } else { v.to_string() };
        let v = self.conj(&v);
        let v = if k.chirp_out { format!("cmul({v}, tw[p.mul_out + {idx}])") } else { v };
        format!("{} * scale()", conj_if(k.conj_result, &v))
    }

    /// The store of value `v` (raw: `raw`) as output `kk` (a frequency index) of the line whose
    /// output starts at `at` and input at `in_at`: only below len_out when chirped, at its
    /// windowed position when cropped, with Rader's extra values at output 0 (`maybe_first`).
    fn store(&self, at: &str, in_at: &str, kk: &str, raw: &str, v: &str, maybe_first: bool) -> String {
        let k = self.k;
        let n = k.pass.n;
        let mut s = String::from("{ ");
        let mut guards = Vec::new();
        if k.chirp_out {
            guards.push(format!("{kk} < p.len_out"));
        }
        let pos = if k.crop_out {
            s += &format!("let pos = ({kk} + p.crop_shift) % p.crop_mod; ");
            guards.push("pos < p.crop_len".to_string());
            "pos".to_string()
        } else if k.rader_scatter {
            format!("u32(tw[p.mul_out + {kk}].y)")
        } else {
            kk.to_string()
        };
        let mut write = format!("wr({at} + {pos} * p.out_elem, {v});");
        if k.rader_gather && maybe_first {
            let x0 = conj_if(k.conj_source, &format!("rd({in_at})"));
            write!(write, " if ({kk} == 0u) {{ wr({at} + {n}u * p.out_elem, {x0}); wr({at} + {}u * p.out_elem, {raw}); }}", n + 1).unwrap();
        }
        if k.rader_scatter && maybe_first {
            let x0 = format!("(rd({in_at} + {n}u * p.in_elem) + rd({in_at} + {}u * p.in_elem))", n + 1);
            write!(write, " if ({kk} == 0u) {{ wr({at}, {} * scale()); }}", conj_if(k.conj_result, &x0)).unwrap();
        }
        if guards.is_empty() {
            s += &write;
        } else {
            s += &format!("if ({}) {{ {write} }}", guards.join(" && "));
        }
        s + " }"
    }

    /// The first stage's radix, and its butterflies per line and per thread.
    fn first_stage(&self) -> (usize, usize, usize) {
        let p = &self.k.pass;
        let r0 = p.radices.first().copied().unwrap_or(1);
        (r0, p.n / r0, (p.n / r0).div_ceil(p.threads))
    }

    /// The first stage's global loads into registers `{reg}{b}_{q}`, declared before. (Looping,
    /// lanes of lines past p.lines keep the previous group's values: nothing of theirs is stored.)
    fn first_loads(&self, w: &mut String, reg: &str) {
        let t = self.k.pass.threads;
        let (r0, nb0, per0) = self.first_stage();
        for b in 0..per0 {
            let guard = if t * (b + 1) > nb0 { format!(" && j < {nb0}u") } else { String::new() };
            writeln!(w, "{{ let j = t + {}u; if (valid{guard}) {{", b * t).unwrap();
            for q in 0..r0 {
                let idx = format!("j + {}u", q * nb0);
                let x = self.loaded("in_base", &idx);
                if self.guard_in {
                    // Zero past len_in: registers y hold the previous group's values.
                    writeln!(w, "if ({idx} < p.len_in) {{ {reg}{b}_{q} = {x}; }} else {{ {reg}{b}_{q} = vec2<real>(); }}").unwrap();
                } else {
                    writeln!(w, "{reg}{b}_{q} = {x};").unwrap();
                }
            }
            writeln!(w, "}} }}").unwrap();
        }
    }

    /// Registers y := the first stage's inputs of the group starting at line `first`.
    fn load_group(&self, w: &mut String, first: &str) {
        writeln!(w, "{{ let first = {first}; {GROUP_LINE}").unwrap();
        self.first_loads(w, "y");
        writeln!(w, "}}").unwrap();
    }

    /// The entry point up to this thread's line: its workgroup's group of lines (the loop over
    /// groups, looping), its position in the group, where its line is read and written.
    fn prologue(&self, w: &mut String) {
        let (k, p) = (self.k, &self.k.pass);
        let (t, batch) = (p.threads, p.batch);
        writeln!(w, "@compute @workgroup_size({})", t * batch).unwrap();
        writeln!(w, "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {{")
            .unwrap();
        writeln!(w, "let group0 = wid.x + nwg.x * (wid.y + nwg.y * wid.z);").unwrap();
        writeln!(w, "if (group0 * {batch}u >= p.lines) {{ return; }}").unwrap();
        if k.load_line_fast {
            writeln!(w, "let t = lid % {t}u; let c = lid / {t}u;").unwrap();
        } else {
            writeln!(w, "let c = lid % {batch}u; let t = lid / {batch}u;").unwrap();
        }
        writeln!(w, "let line = c * {}u;", p.stride).unwrap();
        if p.padded {
            writeln!(w, "let pt = pad(t);").unwrap();
        }
        if self.looped {
            // Groups group0, group0 + groups, ...: registers y hold the next group's first inputs.
            let (r0, _, per0) = self.first_stage();
            writeln!(w, "let groups = nwg.x * nwg.y * nwg.z;").unwrap();
            for b in 0..per0 {
                for q in 0..r0 {
                    writeln!(w, "var y{b}_{q} = vec2<real>();").unwrap();
                }
            }
            self.load_group(w, &format!("group0 * {batch}u"));
            writeln!(w, "var group = group0;").unwrap();
            writeln!(w, "loop {{").unwrap();
            writeln!(w, "let first = group * {batch}u; if (first >= p.lines) {{ break; }}").unwrap();
        } else {
            writeln!(w, "let first = group0 * {batch}u;").unwrap();
        }
        writeln!(w, "{GROUP_LINE}").unwrap();
        if self.direct_store {
            writeln!(w, "let out_base = base(l, p.out_split, p.out_hi, p.out_lo);").unwrap();
            if k.twiddle_out {
                writeln!(w, "let m = (l % p.inner) / p.tw_div;").unwrap();
            }
        } else {
            // Another thread stores this line: keep its addresses where every thread can see them.
            writeln!(w, "if (t == 0u) {{ line_out[c] = base(l, p.out_split, p.out_hi, p.out_lo); line_m[c] = (l % p.inner) / p.tw_div; }}").unwrap();
        }
    }

    /// Global loads in element order into workgroup memory (lines of few threads each); every
    /// read issued before any is stored, for memory parallelism.
    fn load_through_shared(&self, w: &mut String) {
        let (k, p) = (self.k, &self.k.pass);
        let (n, batch, stride) = (p.n, p.batch, p.stride);
        let (wg, total) = (p.threads * batch, n * batch);
        let rounds = total.div_ceil(wg);
        let (c_load, j_load) = if k.load_line_fast { (format!("e / {n}u"), format!("e % {n}u")) } else { (format!("e % {batch}u"), format!("e / {batch}u")) };
        writeln!(w, "if (t == 0u) {{ line_in[c] = in_base; }}").unwrap();
        writeln!(w, "workgroupBarrier();").unwrap();
        writeln!(w, "{{").unwrap();
        for r in 0..rounds {
            let guard = if (r + 1) * wg > total { format!("e{r} < {total}u && ") } else { String::new() };
            writeln!(w, "let e{r} = lid + {}u; var v{r} = vec2<real>();", r * wg).unwrap();
            writeln!(w, "{{ let e = e{r}; let c = {c_load}; let j = {j_load};").unwrap();
            writeln!(w, "  if ({guard}first + c < p.lines{}) {{ v{r} = {}; }} }}", self.in_range("j"), self.loaded("line_in[c]", "j")).unwrap();
        }
        for r in 0..rounds {
            let guard = if (r + 1) * wg > total { format!("if (e{r} < {total}u) ") } else { String::new() };
            writeln!(w, "{guard}{{ let e = e{r}; let c = {c_load}; let j = {j_load}; {} = v{r}; }}", sm(k, &format!("c * {stride}u"), "j")).unwrap();
        }
        writeln!(w, "}}").unwrap();
        writeln!(w, "workgroupBarrier();").unwrap();
    }

    /// Radix stage `si` after stages of `ns`: its inputs from global memory (the first, direct),
    /// from workgroup memory or from the split exchange's registers; its butterflies; its outputs
    /// to global memory (the last, direct) or to workgroup memory.
    fn stage(&self, w: &mut String, si: usize, ns: usize, offsets: &[usize]) {
        let (k, p) = (self.k, &self.k.pass);
        let (n, t, batch, stages) = (p.n, p.threads, p.batch, self.stages);
        let (direct_load, direct_store, looped) = (self.direct_load, self.direct_store, self.looped);
        let r = p.radices[si];
        let (is_first, is_last) = (si == 0, si + 1 == stages);
        let load_global = is_first && direct_load;
        let store_global = is_last && direct_store;
        let nb = n / r;
        let per = nb.div_ceil(t);
        // Split exchange: the next stage's inputs, filled at the end of this one.
        let next = (p.split && !is_last).then(|| {
            let r = p.radices[si + 1];
            (r, n / r, n / r / t)
        });
        if let Some((r, _, per)) = next {
            for b in 0..per {
                for q in 0..r {
                    writeln!(w, "var s{}_{b}_{q}: vec2<real>;", si + 1).unwrap();
                }
            }
        }
        writeln!(w, "{{ // stage {si}: radix {r}, {nb} butterflies after stages of {ns}").unwrap();
        for b in 0..per {
            let guard = t * (b + 1) > nb;
            writeln!(w, "let j{b} = t + {}u;", b * t).unwrap();
            if load_global && looped {
                // Loaded during the previous group (or before the loop).
                for q in 0..r {
                    writeln!(w, "var x{b}_{q} = y{b}_{q};").unwrap();
                }
                continue;
            }
            for q in 0..r {
                writeln!(w, "var x{b}_{q} = vec2<real>();").unwrap();
            }
            if load_global {
                continue;
            }
            if guard {
                writeln!(w, "if (j{b} < {nb}u) {{").unwrap();
            }
            for q in 0..r {
                if p.split {
                    writeln!(w, "x{b}_{q} = s{si}_{b}_{q};").unwrap();
                } else {
                    // j{b} = t + b·t
                    writeln!(w, "x{b}_{q} = {};", sm_at(k, "line", "t", b * t + q * nb, false)).unwrap();
                }
            }
            if guard {
                writeln!(w, "}}").unwrap();
            }
        }
        if load_global && looped {
            // The next group's loads, issued before this group's butterflies.
            self.load_group(w, &format!("(group + groups) * {batch}u"));
        } else if load_global {
            self.first_loads(w, "x");
        }
        // Stages read and write the same workgroup memory: all reads before any write.
        // (In place, a single stage's loads must all precede its stores too.)
        if (!load_global && !store_global && !p.split) || (k.in_place && load_global && store_global) {
            writeln!(w, "workgroupBarrier();").unwrap();
        }
        let aligned = outputs_aligned(r, ns);
        for b in 0..per {
            let guard = t * (b + 1) > nb;
            let cond = match (store_global, guard) {
                (true, true) => format!("valid && j{b} < {nb}u"),
                (true, false) => "valid".to_string(),
                (false, true) => format!("j{b} < {nb}u"),
                (false, false) => String::new(),
            };
            if !cond.is_empty() {
                writeln!(w, "if ({cond}) {{").unwrap();
            }
            if ns > 1 {
                writeln!(w, "let k{b} = j{b} % {ns}u;").unwrap();
                for q in 1..r {
                    writeln!(w, "x{b}_{q} = cmul(x{b}_{q}, tw[p.tw_line + {}u + k{b}]);", offsets[si] + (q - 1) * ns).unwrap();
                }
                writeln!(w, "let d{b} = (j{b} / {ns}u) * {}u + k{b};", ns * r).unwrap();
            } else {
                writeln!(w, "let d{b} = j{b} * {r}u;").unwrap();
            }
            if p.padded && !store_global {
                writeln!(w, "let pd{b} = pad(d{b});").unwrap();
            }
            let regs: Vec<String> = (0..r).map(|q| format!("x{b}_{q}")).collect();
            butterfly(w, &regs, &format!("b{b}_"), k.double);
            for q in 0..r {
                let idx = format!("d{b} + {}u", q * ns);
                if store_global {
                    let v = self.stored(&format!("x{b}_{q}"), &format!("({idx})"), "m");
                    writeln!(w, "{}", self.store("out_base", "in_base", &format!("({idx})"), &format!("x{b}_{q}"), &v, q == 0)).unwrap();
                } else if p.split {
                    writeln!(w, "{} = x{b}_{q}.x;", sm_half_at(k, &format!("d{b}"), q * ns, aligned)).unwrap();
                } else {
                    writeln!(w, "{} = x{b}_{q};", sm_at(k, "line", &format!("d{b}"), q * ns, aligned)).unwrap();
                }
            }
            if !cond.is_empty() {
                writeln!(w, "}}").unwrap();
            }
        }
        if let Some((r2, nb2, per2)) = next {
            // Real parts are in place: read the next stage's, then the same for the imaginary parts.
            let read = |w: &mut String, part: &str| {
                for b in 0..per2 {
                    for q in 0..r2 {
                        writeln!(w, "s{}_{b}_{q}.{part} = {};", si + 1, sm_half_at(k, "t", b * t + q * nb2, false)).unwrap();
                    }
                }
            };
            writeln!(w, "workgroupBarrier();").unwrap();
            read(w, "x");
            writeln!(w, "workgroupBarrier();").unwrap();
            for b in 0..per {
                for q in 0..r {
                    writeln!(w, "{} = x{b}_{q}.y;", sm_half_at(k, &format!("d{b}"), q * ns, aligned)).unwrap();
                }
            }
            writeln!(w, "workgroupBarrier();").unwrap();
            read(w, "y");
            writeln!(w, "workgroupBarrier();").unwrap();
        } else if !store_global {
            writeln!(w, "workgroupBarrier();").unwrap();
        }
        writeln!(w, "}}").unwrap();
    }

    /// The outputs read back from workgroup memory in the order that keeps the global writes
    /// coalesced, all reads first (the output runs across the threads' lines, or pairs outputs
    /// k and n − k).
    fn store_through_shared(&self, w: &mut String) {
        let (k, p) = (self.k, &self.k.pass);
        let (n, batch, stride) = (p.n, p.batch, p.stride);
        let wg = p.threads * batch;
        let half_len = n / 2 + 1;
        let n_out = if k.real_post {
            n + 1
        } else if k.untangle_pairs {
            2 * half_len
        } else {
            n
        };
        let (total, rounds) = (n_out * batch, (n_out * batch).div_ceil(wg));
        let (c_store, k_store) =
            if k.store_line_fast { (format!("e / {n_out}u"), format!("e % {n_out}u")) } else { (format!("e % {batch}u"), format!("e / {batch}u")) };
        for r in 0..rounds {
            let guard = if (r + 1) * wg > total { format!("if (e{r} < {total}u) ") } else { String::new() };
            let read = if k.real_post {
                format!("real_post(c * {stride}u, k)")
            } else if k.untangle_pairs {
                format!("untangle(c * {stride}u, k)")
            } else {
                sm(k, &format!("c * {stride}u"), "k")
            };
            writeln!(w, "let e{r} = lid + {}u; var v{r} = vec2<real>();", r * wg).unwrap();
            writeln!(w, "{guard}{{ let e = e{r}; let c = {c_store}; let k = {k_store}; v{r} = {read}; }}").unwrap();
        }
        for r in 0..rounds {
            let guard = if (r + 1) * wg > total { format!("e{r} < {total}u && ") } else { String::new() };
            writeln!(w, "{{ let e = e{r}; let c = {c_store}; let k = {k_store};").unwrap();
            let v = self.stored(&format!("v{r}"), "k", "line_m[c]");
            let in_at = "base(first + c, p.in_split, p.in_hi, p.in_lo)";
            if k.untangle_pairs {
                // Line b's values go `out_pair` further, if it exists.
                writeln!(w, "  let b = k >= {half_len}u; let at = line_out[c] + select(0u, p.out_pair, b);").unwrap();
                writeln!(
                    w,
                    "  if ({guard}first + c < p.lines && (!b || at < p.out_pair_end)) {}",
                    self.store("at", in_at, &format!("(k % {half_len}u)"), &format!("v{r}"), &v, true)
                )
                .unwrap();
            } else {
                writeln!(w, "  if ({guard}first + c < p.lines) {}", self.store("line_out[c]", in_at, "k", &format!("v{r}"), &v, true)).unwrap();
            }
            writeln!(w, "}}").unwrap();
        }
    }
}

/// The flag combinations `wgsl` supports (each assert says why the others are not).
fn check_flags(k: &LineKernel, direct_load: bool, direct_store: bool) {
    let p = &k.pass;
    let (n, t, stages) = (p.n, p.threads, p.radices.len());
    assert!(!((k.real_post || k.untangle_pairs) && stages == 0), "untangling needs a line of at least 2");
    assert!(!(k.pack_real && k.hermitian_pairs || k.unpack_real && k.untangle_pairs), "one kind of pair per side");
    let pairs = k.pack_real || k.hermitian_pairs || k.unpack_real || k.untangle_pairs;
    assert!(!pairs || !(k.in_place || k.real_pre || k.real_post), "pairs of real lines: out of place");
    assert!(!((k.untangle_pairs || k.hermitian_pairs) && p.split), "untangled pairs: whole lines in workgroup memory");
    assert!(
        !(k.pack_real && k.product_in) && !(k.untangle_pairs && (k.inverse || k.crop_out || k.chirp_out || k.twiddle_out)),
        "untangled spectra come from plain forward passes"
    );
    assert!(!(k.hermitian_pairs && (k.pad_in || k.chirp_in || k.rader_gather)), "Hermitian pairs load whole lines");
    assert!(!(k.real_pre && k.pad_in || k.real_post && k.crop_out), "no padding of packed spectra, no window of untangled ones");
    let rader = k.rader_gather || k.rader_scatter;
    assert!(
        !rader || (stages > 0 && !k.chirp_in && !k.twiddle_out && !k.real_pre && !k.real_post && !k.pad_in && !k.crop_out && !k.in_place),
        "Rader's passes combine with none of these"
    );
    assert!(!(k.rader_gather && (k.inverse || k.rader_scatter)), "Rader's first pass is a forward transform");
    assert!(
        !p.split || (direct_load && direct_store && p.radices.iter().all(|&r| (n / r) % t == 0)),
        "split exchange: loaded and stored directly, stages even over the threads"
    );
}

/// The kernel's bindings, workgroup memory and helper functions (reads, writes, the real and
/// Rader pieces, the four-step twiddle).
fn declarations(w: &mut String, k: &LineKernel, direct_load: bool, direct_store: bool, uses_shared: bool) {
    let p = &k.pass;
    let (n, t, batch) = (p.n, p.threads, p.batch);
    let stride = p.stride;
    let half_len = n / 2 + 1;
    writeln!(w, "// FFT of length {n}, radices {:?}, {t} threads per line, {batch} lines per workgroup.", p.radices).unwrap();
    writeln!(w, "alias real = {};", if k.double { "f64" } else { "f32" }).unwrap();
    writeln!(w, "{PARAMS}").unwrap();
    // The norm's factor: an f32 pair in f64 (hi + lo), so 1/n is exact to f64 precision.
    let scale = if k.double { "f64(p.scale) + f64(p.scale_lo)" } else { "p.scale" };
    writeln!(w, "fn scale() -> real {{ return {scale}; }}").unwrap();
    for (i, b) in k.bindings().iter().enumerate() {
        let real = (b.name == "src" && k.pack_real) || (b.name == "dst" && k.unpack_real);
        let array = if real { "array<real>" } else { "array<vec2<real>>" };
        let (space, ty) = match b.kind {
            BindingKind::Uniform => ("uniform", "Params"),
            BindingKind::StorageReadWrite => ("storage, read_write", array),
            _ => ("storage, read", array),
        };
        writeln!(w, "@group(0) @binding({i}) var<{space}> {}: {ty};", b.name).unwrap();
    }
    let src = if k.in_place { "dst" } else { "src" };
    if k.product_in {
        let other = if k.product_conj { "vec2(o.x, -o.y)" } else { "o" };
        // The floor: CROSS_POWER_FLOOR in src/kernels/binary.rs.
        let normalized = if k.product_normalized { " z = z / max(length(z), 1.1920929e-5);" } else { "" };
        writeln!(w, "fn product(v: vec2<real>, i: u32) -> vec2<real> {{ let o = aux[i]; var z = cmul(v, {other});{normalized} return z; }}").unwrap();
    }
    if p.split {
        writeln!(w, "var<workgroup> half: array<real, {}>;", batch * stride).unwrap();
    } else if uses_shared {
        writeln!(w, "var<workgroup> buf: array<vec2<real>, {}>;", batch * stride).unwrap();
    }
    if !direct_load {
        writeln!(w, "var<workgroup> line_in: array<u32, {batch}>;").unwrap();
    }
    if !direct_store {
        writeln!(w, "var<workgroup> line_out: array<u32, {batch}>;").unwrap();
        writeln!(w, "var<workgroup> line_m: array<u32, {batch}>;").unwrap();
    }
    writeln!(w, "fn pad(i: u32) -> u32 {{ return i + (i >> 4u); }}").unwrap();
    writeln!(w, "fn cmul(a: vec2<real>, b: vec2<real>) -> vec2<real> {{ return vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }}").unwrap();
    writeln!(w, "fn base(l: u32, split: u32, hi: u32, lo: u32) -> u32 {{ let o = l / p.inner; let i = l - o * p.inner; return (o / split) * hi + (o % split) * lo + i; }}").unwrap();
    // Every read of the source and write of the destination: element i (of line a, with line b's
    // beside it for real pairs).
    if k.pack_real {
        writeln!(
            w,
            "fn rd(i: u32) -> vec2<real> {{ let b = i + p.in_pair; return vec2({src}[i], select(0.0, {src}[min(b, p.in_pair_end - 1u)], b < p.in_pair_end)); }}"
        )
        .unwrap();
    } else if k.product_in {
        writeln!(w, "fn rd(i: u32) -> vec2<real> {{ return product({src}[i], i); }}").unwrap();
    } else {
        writeln!(w, "fn rd(i: u32) -> vec2<real> {{ return {src}[i]; }}").unwrap();
    }
    if k.unpack_real {
        writeln!(w, "fn wr(i: u32, v: vec2<real>) {{ dst[i] = v.x; let b = i + p.out_pair; if (b < p.out_pair_end) {{ dst[b] = v.y; }} }}").unwrap();
    } else {
        writeln!(w, "fn wr(i: u32, v: vec2<real>) {{ dst[i] = v; }}").unwrap();
    }
    if k.hermitian_pairs {
        // Element j of the full spectrum whose half starts at `at`; line b's beside it.
        writeln!(w, "fn hermitian(at: u32, j: u32) -> vec2<real> {{ let mirror = j >= {half_len}u; let kk = select(j, {n}u - j, mirror); var x = rd(at + kk * p.in_elem);").unwrap();
        writeln!(w, "  if (kk == 0u || 2u * kk == {n}u) {{ x.y = 0.0; }} return select(x, vec2(x.x, -x.y), mirror); }}").unwrap();
        writeln!(w, "fn hermitian_pairs(at: u32, j: u32) -> vec2<real> {{ var z = hermitian(at, j);").unwrap();
        writeln!(w, "  if (at + p.in_pair < p.in_pair_end) {{ let b = hermitian(at + p.in_pair, j); z += vec2(-b.y, b.x); }} return z; }}").unwrap();
    }
    if k.untangle_pairs {
        // Output k < 2(N/2 + 1): X_a[k], then X_b[k − N/2 − 1].
        let (zk, zc) = (sm(k, "line", &format!("kk % {n}u")), sm(k, "line", &format!("({n}u - kk) % {n}u")));
        writeln!(w, "fn untangle(line: u32, k: u32) -> vec2<real> {{ let b = k >= {half_len}u; let kk = select(k, k - {half_len}u, b); let zk = {zk}; let zc = {zc}; let zcc = vec2(zc.x, -zc.y);").unwrap();
        writeln!(w, "  if (b) {{ let d = 0.5 * (zk - zcc); return vec2(d.y, -d.x); }} return 0.5 * (zk + zcc); }}").unwrap();
    }
    if k.real_post {
        let (zk, zc) = (sm(k, "line", &format!("k % {n}u")), sm(k, "line", &format!("({n}u - k) % {n}u")));
        writeln!(w, "fn real_post(line: u32, k: u32) -> vec2<real> {{ let zk = {zk}; let zc = {zc}; let zcc = vec2(zc.x, -zc.y);").unwrap();
        writeln!(w, "  let e = 0.5 * (zk + zcc); let d = 0.5 * (zk - zcc); return e + cmul(tw[p.mul_out + k], vec2(d.y, -d.x)); }}").unwrap();
    }
    if k.real_pre {
        writeln!(w, "fn real_pre(at: u32, k: u32) -> vec2<real> {{ var xk = rd(at + k); var xc = rd(at + {n}u - k);").unwrap();
        writeln!(w, "  if (k == 0u) {{ xk = vec2(xk.x, 0.0); xc = vec2(xc.x, 0.0); }}").unwrap();
        writeln!(w, "  let xcc = vec2(xc.x, -xc.y); let w = tw[p.mul_in + k]; let od = cmul(0.5 * (xk - xcc), vec2(w.x, -w.y));").unwrap();
        writeln!(w, "  return 0.5 * (xk + xcc) + vec2(-od.y, od.x); }}").unwrap();
    }
    if k.rader_scatter {
        writeln!(
            w,
            "fn rader_dc(at: u32, j: u32) -> vec2<real> {{ var v = rd(at + j * p.in_elem); if (j == 0u) {{ v += rd(at + {n}u * p.in_elem); }} return v; }}"
        )
        .unwrap();
    }
    writeln!(
        w,
        "fn twiddled(v: vec2<real>, k: u32, m: u32) -> vec2<real> {{ let q = k * m; return cmul(v, cmul(tw[p.tw_hi + q / p.tw_s], tw[p.tw_lo + q % p.tw_s])); }}"
    )
    .unwrap();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fft::plan::{line_pass, split_line_pass, DeviceLimits, LinePass};
    use crate::gpu::Tuning;

    fn validate(source: &str) -> Result<(), String> {
        let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
            .validate(&module)
            .map(|_| ())
            .map_err(|e| e.emit_to_string(source))
    }

    #[test]
    fn folded_padded_indices_are_exact() {
        let pad = |i: usize| i + (i >> 4);
        for r in [2, 3, 4, 5, 7, 8, 11, 13, 16] {
            for ns in [1, 2, 3, 4, 8, 12, 16, 32, 48, 64, 256] {
                let aligned = outputs_aligned(r, ns);
                for j in 0..4 * ns * r {
                    // The output base of butterfly j, as the generated kernel computes it.
                    let d = if ns == 1 { j * r } else { (j / ns) * ns * r + j % ns };
                    for q in 0..r {
                        let offset = q * ns;
                        if aligned || offset.is_multiple_of(16) {
                            assert_eq!(pad(d + offset), pad(d) + offset + offset / 16, "r={r} ns={ns} j={j} q={q}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_planned_length_generates_valid_wgsl() {
        for limits in [
            DeviceLimits { workgroup_bytes: 32768, max_threads: 1024, tuning: Tuning::default() },
            DeviceLimits { workgroup_bytes: 49152, max_threads: 1024, tuning: Tuning::default() },
        ] {
            for n in 1..=12288 {
                // Split-exchange columns, where there are any, on a sample of lengths.
                if let Some(columns) = split_line_pass(n, limits, 100, true).filter(|p| p.batch > 1 && (n % 5 == 0 || n % 97 == 1)) {
                    for (inverse, twiddle_out, chirp) in [(false, false, false), (true, true, n % 2 == 0)] {
                        let k = LineKernel {
                            inverse,
                            twiddle_out,
                            conj_source: chirp,
                            chirp_in: chirp,
                            chirp_out: chirp,
                            pad_in: !chirp,
                            product_in: true,
                            crop_out: !chirp,
                            ..plain(&columns, false)
                        };
                        check(n, &k);
                    }
                }
                let Some(pass) = line_pass(n, limits, if n % 2 == 1 { 1 + n % 8 } else { 1 }, true).or_else(|| split_line_pass(n, limits, 1, true)) else {
                    continue;
                };
                // The variants only toggle small pieces; check them all on a sample of lengths.
                let flags: &[(bool, bool, bool, bool, bool)] = if n % 97 == 1 {
                    &[(false, true, true, false, false), (true, false, false, true, false), (true, true, false, true, false), (true, false, false, false, true)]
                } else {
                    &[(n % 2 == 0, true, true, false, n % 3 == 0)]
                };
                for &(inverse, load_line_fast, store_line_fast, twiddle_out, chirp) in flags {
                    // Split-exchange passes load and store directly, along one direction.
                    if pass.split && load_line_fast != store_line_fast {
                        continue;
                    }
                    let k = LineKernel {
                        pass: pass.clone(),
                        inverse,
                        load_line_fast,
                        store_line_fast,
                        twiddle_out,
                        conj_source: chirp,
                        chirp_in: chirp,
                        chirp_out: chirp,
                        conj_result: chirp,
                        real_post: n % 5 == 1 && n > 1 && !chirp && store_line_fast && !pass.split,
                        real_pre: n % 7 == 1 && !chirp && load_line_fast && !pass.split,
                        pad_in: !chirp && n % 7 != 1,
                        product_in: n % 2 == 1 || n % 7 == 1,
                        product_conj: n % 4 == 1,
                        product_normalized: n % 3 == 0,
                        in_place: n % 2 == 0 && load_line_fast == store_line_fast,
                        rader_gather: false,
                        rader_scatter: false,
                        crop_out: n % 3 == 1 && !(n % 5 == 1 && n > 1 && !chirp && store_line_fast && !pass.split),
                        pack_real: false,
                        hermitian_pairs: false,
                        unpack_real: false,
                        untangle_pairs: false,
                        double: n % 11 == 3,
                    };
                    check(n, &k);
                }
                // Rader's two passes (lines of p − 1), on a sample: contiguous and strided, with
                // and without the conjugations of an inverse transform.
                if n > 1 && !pass.split && (n % 97 == 1 || n == 16 || n == 256) {
                    for (fast, conj) in [(true, false), (false, true)] {
                        let plain = plain(&pass, fast);
                        let gather = LineKernel { conj_source: conj, chirp_out: true, rader_gather: true, ..plain.clone() };
                        let scatter = LineKernel { inverse: true, conj_result: conj, rader_scatter: true, ..plain };
                        for k in [gather, scatter] {
                            check(n, &k);
                        }
                    }
                }
                // Pairs of real lines, on a sample: a real source or destination in any pass
                // (Rader's, Bluestein's, four-step's, split-exchange), and the single passes that
                // pack Hermitian spectra or untangle, along or across lines.
                if limits.workgroup_bytes == 32768 && [2, 15, 100, 375, 4802].contains(&n) {
                    for fast in [true, false] {
                        if pass.split && !fast {
                            continue;
                        }
                        let plain = plain(&pass, fast);
                        // The other direction on one side (split-exchange passes run along lines only).
                        let across = fast == pass.split;
                        let real_in = LineKernel { pack_real: true, ..plain.clone() };
                        let real_out = LineKernel { inverse: true, unpack_real: true, ..plain.clone() };
                        let mut kernels = vec![
                            LineKernel { pad_in: true, ..real_in.clone() },
                            LineKernel { chirp_in: true, chirp_out: true, ..real_in.clone() },
                            LineKernel { twiddle_out: true, store_line_fast: across, ..real_in.clone() },
                            LineKernel { conj_result: true, chirp_out: true, ..real_out.clone() },
                            LineKernel { load_line_fast: across, ..real_out.clone() },
                        ];
                        if !pass.split {
                            kernels.extend([
                                LineKernel { chirp_out: true, rader_gather: true, ..real_in.clone() },
                                LineKernel { conj_result: true, rader_scatter: true, ..real_out.clone() },
                                LineKernel { untangle_pairs: true, pad_in: true, ..real_in },
                                LineKernel { untangle_pairs: true, store_line_fast: !fast, ..plain.clone() },
                                LineKernel { hermitian_pairs: true, product_in: true, ..real_out },
                                LineKernel { inverse: true, hermitian_pairs: true, store_line_fast: !fast, ..plain },
                            ]);
                        }
                        for k in kernels {
                            check(n, &k);
                        }
                    }
                }
            }
        }
    }

    /// Validates `k`'s source, and on a sample of lengths (every 5th and the special cases'),
    /// its source for workgroups that loop over line groups.
    fn check(n: usize, k: &LineKernel) {
        let looping = LineKernel { pass: LinePass { loops: 4, ..k.pass.clone() }, ..k.clone() };
        let sampled = n.is_multiple_of(5) || n % 97 == 1 || [2, 15, 16, 100, 256, 375, 4802].contains(&n);
        for k in [k, &looping].into_iter().take(if sampled { 2 } else { 1 }) {
            if let Err(e) = validate(&wgsl(k)) {
                panic!("n={n} {k:?}:\n{e}");
            }
        }
    }

    /// A kernel for `pass` with no fusions, along (`fast`) or across lines.
    fn plain(pass: &LinePass, fast: bool) -> LineKernel {
        LineKernel {
            pass: pass.clone(),
            inverse: false,
            load_line_fast: fast,
            store_line_fast: fast,
            twiddle_out: false,
            conj_source: false,
            chirp_in: false,
            chirp_out: false,
            conj_result: false,
            real_post: false,
            real_pre: false,
            pad_in: false,
            product_in: false,
            product_conj: false,
            product_normalized: false,
            crop_out: false,
            in_place: false,
            rader_gather: false,
            rader_scatter: false,
            pack_real: false,
            hermitian_pairs: false,
            unpack_real: false,
            untangle_pairs: false,
            double: false,
        }
    }
}
