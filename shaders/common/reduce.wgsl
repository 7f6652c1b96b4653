// Partial results of the reductions (shaders/reduce/). The importing kernel declares
// `override OP: u32` (codes in src/kernels/reduce_rows.rs), params `p` with a field `one`
// (always 1.0), and imports common/float.
//
// A partial is two words: `v`, and `w`, whose meaning depends on OP: for sums the low part of an
// unevaluated sum v + lo (lo's f32 bits), kept so sums stay compensated across passes; unused
// for min/max; the index of `v` for argmin/argmax (NO_INDEX: nothing seen yet).
struct Partial { v: f32, w: u32 }

const OP_SUM = 0u;
const OP_MIN = 1u;
const OP_MAX = 2u;
const OP_ARGMIN = 3u;
const OP_ARGMAX = 4u;
const NO_INDEX = 0xffffffffu;
const NAN_BITS = 0x7fc00000u;
const INF_BITS = 0x7f800000u;

// What the elements become as they are loaded (ReduceOp::pre in src/kernels/reduce_rows.rs):
// 0 themselves, 1 their magnitude (argmax of |x|), 2 their square (sum of squares).
override PRE: u32 = 0u;

fn pre(v: vec4<f32>) -> vec4<f32> {
    switch PRE {
        case 1u: { return abs(v); }
        case 2u: { return v * v; }
        default: { return v; }
    }
}

// Bit test, like is_nan: infinities and NaN have an all-ones exponent.
fn is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & INF_BITS) != INF_BITS;
}

// What combines with anything to give that thing.
fn empty_partial() -> Partial {
    switch OP {
        case OP_SUM: { return Partial(0.0, 0u); }
        case OP_MIN: { return Partial(bitcast<f32>(INF_BITS), 0u); }
        case OP_MAX: { return Partial(-bitcast<f32>(INF_BITS), 0u); }
        default: { return Partial(0.0, NO_INDEX); }
    }
}

// x * 1.0, with the 1.0 from the uniform params: shader compilers treat float arithmetic as
// real arithmetic (naga marks no operation exact), and would simplify (a + b) - a to b, which
// turns every rounding-error term below into zero. An opaque factor hides the identity.
fn opaque(x: f32) -> f32 {
    return x * p.one;
}

// (a.v + a.lo) + (b.v + b.lo) in double-f32: TwoSum of the high parts, errors into the low
// part, renormalised. A non-finite sum drops the low part, which holds NaN (inf - inf) then.
fn sum_partials(a: Partial, b: Partial) -> Partial {
    let s = opaque(a.v + b.v);
    if (!is_finite(s)) {
        return Partial(s, 0u);
    }
    let bb = opaque(s - a.v);
    let err = (a.v - (s - bb)) + (b.v - bb);
    let lo = err + bitcast<f32>(a.w) + bitcast<f32>(b.w);
    let hi = opaque(s + lo);
    return Partial(hi, bitcast<u32>(lo - (hi - s)));
}

// NaN propagates (numpy's min/max); WGSL's min/max leave NaN unspecified, so test first.
fn min_max_partials(a: Partial, b: Partial) -> Partial {
    if (is_nan(a.v)) { return a; }
    if (is_nan(b.v)) { return b; }
    if (OP == OP_MIN) { return Partial(min(a.v, b.v), 0u); }
    return Partial(max(a.v, b.v), 0u);
}

// The better candidate: NaN beats everything (numpy returns the first NaN); ties (equal values,
// or both NaN) go to the smaller index, so the result is the first occurrence whatever order
// the candidates meet in.
fn arg_partials(a: Partial, b: Partial) -> Partial {
    if (b.w == NO_INDEX) { return a; }
    if (a.w == NO_INDEX) { return b; }
    let a_nan = is_nan(a.v);
    let b_nan = is_nan(b.v);
    var a_wins: bool;
    if (a_nan || b_nan) {
        a_wins = select(a_nan, a.w < b.w, a_nan && b_nan);
    } else if (a.v == b.v) {
        a_wins = a.w < b.w;
    } else if (OP == OP_ARGMIN) {
        a_wins = a.v < b.v;
    } else {
        a_wins = a.v > b.v;
    }
    if (a_wins) { return a; }
    return b;
}

fn combine(a: Partial, b: Partial) -> Partial {
    switch OP {
        case OP_SUM: { return sum_partials(a, b); }
        case OP_MIN, OP_MAX: { return min_max_partials(a, b); }
        default: { return arg_partials(a, b); }
    }
}

// The word the final pass writes: the value's bits, or the index for argmin/argmax.
fn result_word(r: Partial) -> u32 {
    return select(bitcast<u32>(r.v), r.w, OP >= OP_ARGMIN);
}

// Four accumulators side by side (vec4 lanes), for the kernels' inner loops: each lane sees its
// elements in increasing index order, so argmin/argmax keep the first of equal values by
// replacing only on strictly better ones. `w` as in Partial, but a NaN flag for min/max.
struct Lanes { v: vec4<f32>, w: vec4<u32> }

fn is_nan4(x: vec4<f32>) -> vec4<bool> {
    return (bitcast<vec4<u32>>(x) & vec4(0x7fffffffu)) > vec4(INF_BITS);
}

fn empty_lanes() -> Lanes {
    let e = empty_partial();
    return Lanes(vec4(e.v), vec4(e.w));
}

// Adds `v` (at `index`) to the lanes where `inside` holds.
fn add_lanes(acc: Lanes, v: vec4<f32>, index: vec4<u32>, inside: vec4<bool>) -> Lanes {
    switch OP {
        case OP_SUM: {
            // TwoSum per lane (opaque factors as in sum_partials): the rounding error of each
            // addition goes into the low part.
            let y = select(vec4(0.0), v, inside);
            let s = (acc.v + y) * p.one;
            let bb = (s - acc.v) * p.one;
            let err = (acc.v - (s - bb)) + (y - bb);
            return Lanes(s, bitcast<vec4<u32>>(bitcast<vec4<f32>>(acc.w) + err));
        }
        case OP_MIN, OP_MAX: {
            // Plain min/max; a NaN seen is flagged and turns the lane into NaN at the end.
            let flag = acc.w | select(vec4(0u), vec4(1u), inside & is_nan4(v));
            if (OP == OP_MIN) {
                return Lanes(min(acc.v, select(vec4(bitcast<f32>(INF_BITS)), v, inside)), flag);
            }
            return Lanes(max(acc.v, select(vec4(-bitcast<f32>(INF_BITS)), v, inside)), flag);
        }
        default: {
            var better: vec4<bool>;
            if (OP == OP_ARGMIN) { better = v < acc.v; } else { better = v > acc.v; }
            let take = inside & ((acc.w == vec4(NO_INDEX)) | (!is_nan4(acc.v) & (is_nan4(v) | better)));
            return Lanes(select(acc.v, v, take), select(acc.w, index, take));
        }
    }
}

fn lane_partial(acc: Lanes, lane: u32) -> Partial {
    if (OP == OP_MIN || OP == OP_MAX) {
        return Partial(select(acc.v[lane], bitcast<f32>(NAN_BITS), acc.w[lane] != 0u), 0u);
    }
    return Partial(acc.v[lane], acc.w[lane]);
}

// The four lanes combined into one partial.
fn lanes_partial(acc: Lanes) -> Partial {
    let lo = combine(lane_partial(acc, 0u), lane_partial(acc, 1u));
    let hi = combine(lane_partial(acc, 2u), lane_partial(acc, 3u));
    return combine(lo, hi);
}
