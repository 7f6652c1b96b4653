"""Cone-beam tomography against ASTRA 2.5 (CUDA) on the same GPU, both called from Python with
numpy arrays in and out (how users call them), median wall time of `reps` calls after a warm-up:

  check   a small volume: lucent's FP and BP against ASTRA's (conventions and discretisation),
          and ASTRA's FP values at fixed pixels for lucent's tests;
  fdk N A FDK of N³ from A cone projections of N × N (the 3D Shepp-Logan's exact projections),
          each relative L2 to the phantom; cone FP and BP (lucent's astra and matched
          back-projectors), FP against the exact line integrals;
  iter N A [matched]  SIRT and CGLS, 100 iterations at N³ from A projections of N × N
           (projectors astra, texture, and matched unless the third argument is 0);
  cyl N A  the equiangular cylindrical detector (ASTRA 2.4's cyl_cone_vec, the source on the
           cylinder's axis): FP and BP against ASTRA's, FP against the exact line integrals;
  fista N A  FISTA-TV (100 iterations, 20 Chambolle steps each), SIRT and CGLS on noisy
           projections: time and relative L2 to the phantom (ASTRA has no TV solver);
  bigiter N A [its]  SIRT and CGLS beyond one buffer (lucent's resident slabs, projector
           texture) against ASTRA, a few iterations;
  big N A [astra]  FDK of N³ from A projections of N × N (lucent's FP of the phantom), lucent
           against ASTRA (with astra=1); run with LUCENT_MAX_BUFFER_BYTES to force slabs.

Run on the GPU machine with lucent's wheel and ASTRA (shared/bench/astra_cuda13.sh) on
PYTHONPATH: python3 benches/python_conebeam.py check | fdk 512 720 | iter 256 360 | cyl 256 360
| fista 256 360 | big 1024 1440 1"""
import json
import sys
import time

import astra
import numpy as np

import lucent

tomo = lucent.tomography


def timed(f, reps=3):
    out = f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)) * 1e3, out


def rel(a, b, mask=None):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if mask is not None:
        a, b = a[mask], b[mask]
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def geometry(n, angles, detector=None):
    """A circular cone beam seeing an N³ volume of unit voxels: source 2N from the centre,
    detector N beyond it (magnification 1.5), pixels of 1.5 so that N of them span the volume."""
    d = detector or n
    theta = np.linspace(0, 2 * np.pi, angles, endpoint=False)
    g = astra.create_proj_geom("cone", 1.5, 1.5, d, d, theta, 2.0 * n, 1.0 * n)
    return g, astra.create_vol_geom(n, n, n)


def astra_fp(vol, g, v):
    i, data = astra.create_sino3d_gpu(vol, g, v)
    astra.data3d.delete(i)
    return data


def astra_bp(data, g, v):
    i, vol = astra.create_backprojection3d_gpu(data, g, v)
    astra.data3d.delete(i)
    return vol


def astra_alg(name, data, g, v, iterations=1, options=None):
    rid = astra.data3d.create("-vol", v, 0)
    sid = astra.data3d.create("-sino", g, data)
    cfg = astra.astra_dict(name)
    cfg["ReconstructionDataId"], cfg["ProjectionDataId"] = rid, sid
    if options:
        cfg["option"] = options
    a = astra.algorithm.create(cfg)
    astra.algorithm.run(a, iterations)
    out = astra.data3d.get(rid)
    astra.algorithm.delete(a)
    astra.data3d.delete([rid, sid])
    return out


def inside_skull(n):
    c = (np.arange(n) + 0.5) / (n / 2) - 1
    z, y, x = np.meshgrid(c, c, c, indexing="ij")
    # The inner ellipsoid (y mirrored as lucent's phantom), shrunk by 10%.
    return (x / 0.6624) ** 2 + ((y - 0.0184) / 0.874) ** 2 + (z / 0.78) ** 2 <= 0.81


def check():
    n, a = 48, 30
    g, v = geometry(n, a)
    rng = np.random.default_rng(1)
    vol = rng.random((n, n, n), dtype=np.float32)
    ours, theirs = tomo.forward_project(vol, g, v), astra_fp(vol, g, v)
    row = dict(case="check", n=n, angles=a, fp_rel_to_astra=rel(ours, theirs))
    sino = rng.random(ours.shape, dtype=np.float32)
    row["bp_astra_rel_to_astra"] = rel(tomo.back_project(sino, g, v, "astra"), astra_bp(sino, g, v))
    row["bp_matched_rel_to_astra"] = rel(tomo.back_project(sino, g, v, "matched"), astra_bp(sino, g, v))
    # A fixed object (the 3D phantom at 24³, a tilted cone_vec) for lucent's tests.
    v24 = astra.create_vol_geom(24, 26, 22)
    theta = [0.3, 1.4, 2.9]
    vectors = [[np.sin(t) * 60, -np.cos(t) * 60, 3.0, -np.sin(t) * 30 + 1, np.cos(t) * 30, -2.0,
                np.cos(t) * 1.6, np.sin(t) * 1.6, 0.1, 0.0, 0.15, 1.5] for t in theta]
    g24 = astra.create_proj_geom("cone_vec", 20, 30, np.array(vectors))
    phantom = lucent.phantom.shepp_logan_3d(v24)
    p_astra, p_ours = astra_fp(phantom, g24, v24), tomo.forward_project(phantom, g24, v24)
    pixels = [(10, 0, 15), (4, 1, 12), (15, 2, 20), (9, 1, 7), (12, 0, 25), (10, 2, 14)]
    row["cone_vec_rel_to_astra"] = rel(p_ours, p_astra)
    row["astra_values"] = {str(p): float(p_astra[p]) for p in pixels}
    row["lucent_values"] = {str(p): float(p_ours[p]) for p in pixels}
    print(json.dumps(row), flush=True)


def fdk(n, a):
    g, v = geometry(n, a)
    t = time.perf_counter()
    phantom, exact = lucent.phantom.shepp_logan_3d(v, g)
    print(json.dumps(dict(case="phantom", n=n, angles=a, seconds=time.perf_counter() - t)), flush=True)
    mask = inside_skull(n)
    row = dict(case="fdk", n=n, angles=a)
    row["lucent_fdk_ms"], x = timed(lambda: tomo.fdk(exact, g, v))
    row["lucent_fdk_rel_to_phantom"], row["lucent_fdk_rel_inside"] = rel(x, phantom), rel(x, phantom, mask)
    del x
    row["astra_fdk_ms"], y = timed(lambda: astra_alg("FDK_CUDA", exact, g, v))
    row["astra_fdk_rel_to_phantom"], row["astra_fdk_rel_inside"] = rel(y, phantom), rel(y, phantom, mask)
    del y
    print(json.dumps(row), flush=True)
    row = dict(case="fp_bp", n=n, angles=a)
    row["lucent_fp_ms"], p = timed(lambda: tomo.forward_project(phantom, g, v))
    row["lucent_fp_rel_to_exact"] = rel(p, exact)
    row["astra_fp_ms"], q = timed(lambda: astra_fp(phantom, g, v))
    row["astra_fp_rel_to_exact"], row["fp_rel_to_astra"] = rel(q, exact), rel(p, q)
    del p, q
    row["lucent_bp_astra_ms"], b = timed(lambda: tomo.back_project(exact, g, v, "astra"))
    row["lucent_bp_texture_ms"], t = timed(lambda: tomo.back_project(exact, g, v, "texture"))
    row["astra_bp_ms"], c = timed(lambda: astra_bp(exact, g, v))
    row["bp_rel_to_astra"], row["bp_texture_rel_to_astra"] = rel(b, c), rel(t, c)
    del b, c, t
    row["lucent_bp_matched_ms"], _ = timed(lambda: tomo.back_project(exact, g, v, "matched"), reps=1)
    print(json.dumps(row), flush=True)


def iterative(n, a, with_matched=1, iterations=100):
    g, v = geometry(n, a)
    phantom, exact = lucent.phantom.shepp_logan_3d(v, g)
    for name, ours in (("SIRT3D_CUDA", "sirt"), ("CGLS3D_CUDA", "cgls")):
        row = dict(case=ours, n=n, angles=a, iterations=iterations)
        row["astra_ms"], y = timed(lambda: astra_alg(name, exact, g, v, iterations), reps=1)
        row["astra_rel_to_phantom"] = rel(y, phantom)
        for projector in ("astra", "texture", "matched")[:3 if with_matched else 2]:
            f = getattr(tomo, ours)
            ms, (x, res) = timed(lambda: f(exact, g, v, iterations, projector=projector), reps=1)
            row[f"lucent_{projector}_ms"] = ms
            row[f"lucent_{projector}_rel_to_phantom"] = rel(x, phantom)
            row[f"lucent_{projector}_rel_to_astra"] = rel(x, y)
            row[f"lucent_{projector}_residual_first_last"] = [res[0], res[-1]]
        print(json.dumps(row), flush=True)


def cylinder(n, a):
    """The cone geometry's vectors on a cylinder about the source (R = source to detector)."""
    g, v = geometry(n, a)
    vectors = astra.geom_2vec(g)["Vectors"]
    radius = np.full((len(vectors), 1), 3.0 * n)
    return astra.create_proj_geom("cyl_cone_vec", n, n, np.hstack([vectors, radius])), v


def cyl(n, a):
    g, v = cylinder(n, a)
    phantom, exact = lucent.phantom.shepp_logan_3d(v, g)
    row = dict(case="cyl_cone_vec", n=n, angles=a)
    row["lucent_fp_ms"], p = timed(lambda: tomo.forward_project(phantom, g, v))
    row["astra_fp_ms"], q = timed(lambda: astra_fp(phantom, g, v))
    row["lucent_fp_rel_to_exact"], row["astra_fp_rel_to_exact"], row["fp_rel_to_astra"] = rel(p, exact), rel(q, exact), rel(p, q)
    del p, q
    row["lucent_bp_astra_ms"], b = timed(lambda: tomo.back_project(exact, g, v, "astra"))
    row["astra_bp_ms"], c = timed(lambda: astra_bp(exact, g, v))
    row["bp_rel_to_astra"] = rel(b, c)
    del b, c
    row["lucent_bp_matched_ms"], _ = timed(lambda: tomo.back_project(exact, g, v, "matched"), reps=1)
    print(json.dumps(row), flush=True)


def fista(n, a, iterations=100):
    g, v = geometry(n, a)
    phantom, exact = lucent.phantom.shepp_logan_3d(v, g)
    noisy = exact + np.random.default_rng(5).normal(0, 0.02 * exact.max(), exact.shape).astype(np.float32)
    for name, call in (("fista_tv", lambda: tomo.fista(noisy, g, v, iterations, tv_weight=float(n) / 8, min_constraint=0.0)),
                       ("sirt", lambda: tomo.sirt(noisy, g, v, iterations, min_constraint=0.0)),
                       ("cgls", lambda: tomo.cgls(noisy, g, v, 30))):
        ms, (x, res) = timed(call, reps=1)
        print(json.dumps(dict(case=name, n=n, angles=a, iterations=iterations if name != "cgls" else 30, ms=ms,
                              rel_to_phantom=rel(x, phantom), rel_inside=rel(x, phantom, inside_skull(n)),
                              residual_first_last=[res[0], res[-1]])), flush=True)


def big(n, a, with_astra=0):
    g, v = geometry(n, a)
    t = time.perf_counter()
    phantom = lucent.phantom.shepp_logan_3d(v, sub=1)
    data = tomo.forward_project(phantom, g, v)
    row = dict(case="fdk_big", n=n, angles=a, projections_gb=data.nbytes / 1e9, setup_s=time.perf_counter() - t)
    row["lucent_fdk_ms"], x = timed(lambda: tomo.fdk(data, g, v), reps=1)
    row["lucent_fdk_rel_inside"] = rel(x, phantom, inside_skull(n))
    if with_astra:
        row["astra_fdk_ms"], y = timed(lambda: astra_alg("FDK_CUDA", data, g, v), reps=1)
        row["astra_fdk_rel_inside"], row["fdk_rel_to_astra"] = rel(y, phantom, inside_skull(n)), rel(x, y)
    print(json.dumps(row), flush=True)


def bigiter(n, a, iterations=5):
    """SIRT and CGLS beyond one buffer (lucent in resident slabs), a few iterations."""
    g, v = geometry(n, a)
    phantom = lucent.phantom.shepp_logan_3d(v, sub=1)
    data = tomo.forward_project(phantom, g, v)
    for name, ours in (("SIRT3D_CUDA", "sirt"), ("CGLS3D_CUDA", "cgls")):
        row = dict(case=ours + "_big", n=n, angles=a, iterations=iterations, projections_gb=data.nbytes / 1e9)
        t = time.perf_counter()
        x, res = getattr(tomo, ours)(data, g, v, iterations, projector="texture")
        row["lucent_texture_ms"] = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        y = astra_alg(name, data, g, v, iterations)
        row["astra_ms"] = (time.perf_counter() - t) * 1e3
        row["rel_to_astra"], row["lucent_rel_inside"], row["astra_rel_inside"] = rel(x, y), rel(x, phantom, inside_skull(n)), rel(y, phantom, inside_skull(n))
        del x, y
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "check"
    args = [int(a) for a in sys.argv[2:]]
    {"check": check, "fdk": fdk, "iter": iterative, "cyl": cyl, "fista": fista, "big": big, "bigiter": bigiter}[what](*args)
