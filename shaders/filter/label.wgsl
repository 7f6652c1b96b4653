// Connected-component labelling (scipy.ndimage.label) by label equivalence on the device:
// STAGE 0 gives every true element of the mask its own index as label (NONE elsewhere); STAGE 1 hooks:
// each element takes the least label among its structure's neighbours and links its old label's
// element to it (atomicMin), raising `changed`; STAGE 2 compresses: each label replaced by its
// label's label until it points at itself. Labels only decrease and stay indices of elements of
// the same component, so the rounds end (a round with no change); then every component carries
// its least element's index (the host numbers those in raster order, as scipy does).
#import common/grid

override STAGE: u32;

struct Params { dims: vec4<u32>, count: u32, taps: u32, unused0: u32, unused1: u32 }  // mirrored in src/kernels/label.rs

@group(0) @binding(0) var<storage, read> x: array<u32>;  // the mask, one byte per element
@group(0) @binding(1) var<storage, read_write> labels: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> changed: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read> offsets: array<vec4<f32>>;
@group(0) @binding(4) var<uniform> p: Params;

const NONE: u32 = 0xffffffffu;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = workgroup_index(wid, nwg) * 256u + lid;
    if (i >= p.count) {
        return;
    }
    if (STAGE == 0u) {
        atomicStore(&labels[i], select(NONE, i, ((x[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) != 0u));
        return;
    }
    let own = atomicLoad(&labels[i]);
    if (own == NONE) {
        return;
    }
    if (STAGE == 2u) {
        var l = own;
        loop {
            let next = atomicLoad(&labels[l]);
            if (next >= l) {
                break;
            }
            l = next;
        }
        if (l < own) {
            atomicMin(&labels[i], l);
        }
        return;
    }
    var c: vec4<i32>;
    var rest = i;
    for (var a = 3; a >= 0; a--) {
        c[a] = i32(rest % p.dims[a]);
        rest = rest / p.dims[a];
    }
    let n = vec4<i32>(p.dims);
    var least = own;
    for (var t = 0u; t < p.taps; t++) {
        let q = c + vec4<i32>(offsets[t]);
        if (any(q < vec4<i32>(0)) || any(q >= n)) {
            continue;
        }
        let j = u32(((q.x * n.y + q.y) * n.z + q.z) * n.w + q.w);
        least = min(least, atomicLoad(&labels[j]));
    }
    if (least < own) {
        // Atomics only where they change something: a large component's elements would all
        // queue on its root's word, and every changed element on `changed`.
        if (least < atomicLoad(&labels[own])) {
            atomicMin(&labels[own], least);
        }
        atomicMin(&labels[i], least);
        if (atomicLoad(&changed[0]) == 0u) {
            atomicStore(&changed[0], 1u);
        }
    }
}
