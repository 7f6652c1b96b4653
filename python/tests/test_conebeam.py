"""Fan, cone and 3D parallel beam through ASTRA's geometry dicts (lucent.tomography's
create_proj_geom / create_vol_geom, or an ASTRA script's own dicts): the dicts as ASTRA makes
them, projections of the 3D Shepp-Logan against its exact line integrals, the matched pair's
adjointness, FDK with Parker's weights, SIRT's constraints, CGLS, bad input."""
import numpy as np
import pytest

import lucent

tomo = lucent.tomography


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a, np.float64) - b) / np.linalg.norm(b))


def test_geometry_dicts_are_astras():
    # astra.create_vol_geom(4, 6) and (4, 6, 8), astra.create_proj_geom('cone', ...) (ASTRA 2.5).
    assert tomo.create_vol_geom(4, 6) == {"GridRowCount": 4, "GridColCount": 6, "option": {
        "WindowMinX": -3.0, "WindowMaxX": 3.0, "WindowMinY": -2.0, "WindowMaxY": 2.0}}
    v = tomo.create_vol_geom(4, 6, 8)
    assert v["GridSliceCount"] == 8 and v["option"]["WindowMinZ"] == -4.0 and v["option"]["WindowMaxX"] == 3.0
    v = tomo.create_vol_geom(4, 6, -1.0, 2.0, -3.0, 5.0)
    assert v["option"] == {"WindowMinX": -1.0, "WindowMaxX": 2.0, "WindowMinY": -3.0, "WindowMaxY": 5.0}
    g = tomo.create_proj_geom("cone", 1.5, 1.25, 10, 12, [0.0, 0.5], 100, 50)
    assert set(g) == {"type", "DetectorSpacingX", "DetectorSpacingY", "DetectorRowCount", "DetectorColCount",
                      "ProjectionAngles", "DistanceOriginSource", "DistanceOriginDetector"}
    with pytest.raises(ValueError, match="takes 7 arguments"):
        tomo.create_proj_geom("cone", 1.0, 1.0, 10, 10, [0.0])
    with pytest.raises(ValueError, match="type"):
        tomo.create_proj_geom("helix", 1.0)


def test_an_astra_scripts_dicts_work_as_they_are():
    # As an ASTRA script writes them (numpy arrays, numpy scalars, the vector form).
    angles = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    vectors = np.zeros((24, 12))
    vectors[:, 0], vectors[:, 1] = np.sin(angles) * 60, -np.cos(angles) * 60
    vectors[:, 3], vectors[:, 4] = -np.sin(angles) * 30, np.cos(angles) * 30
    vectors[:, 6], vectors[:, 7], vectors[:, 11] = np.cos(angles) * 1.5, np.sin(angles) * 1.5, 1.5
    proj_geom = {"type": "cone_vec", "DetectorRowCount": np.int64(20), "DetectorColCount": 26, "Vectors": vectors}
    cone = {"type": "cone", "DetectorSpacingX": 1.5, "DetectorSpacingY": 1.5, "DetectorRowCount": 20,
            "DetectorColCount": 26, "ProjectionAngles": angles, "DistanceOriginSource": np.float64(60),
            "DistanceOriginDetector": 30.0}
    vol_geom = {"GridRowCount": 16, "GridColCount": 16, "GridSliceCount": 16}
    x = np.random.default_rng(3).random((16, 16, 16), dtype=np.float32)
    a, b = tomo.forward_project(x, proj_geom, vol_geom), tomo.forward_project(x, cone, vol_geom)
    assert a.shape == (20, 24, 26)
    # The vector form of a circular cone (astra.functions.geom_2vec's) is the same geometry.
    assert rel(a, b) < 1e-6


def test_projections_approach_the_phantoms_line_integrals():
    v = tomo.create_vol_geom(64, 64, 64)
    g = tomo.create_proj_geom("cone", 1.5, 1.5, 56, 70, np.linspace(0, 2 * np.pi, 30, endpoint=False), 150, 75)
    volume, exact = lucent.phantom.shepp_logan_3d(v, g)
    got = tomo.forward_project(volume, g, v)
    # The phantom's one-voxel skull dominates the error at 64³ (0.08; 0.009 at 512³ on a GPU).
    assert rel(got, exact) < 0.1
    x = tomo.fdk(exact, g, v)
    inside = np.abs(volume - 0.2) < 1e-6
    assert np.abs(x[inside] - 0.2).mean() < 0.03


@pytest.mark.parametrize("kind", ["fanflat", "cone_vec", "parallel3d"])
def test_the_matched_pair_is_adjoint(kind):
    rng = np.random.default_rng(5)
    if kind == "fanflat":
        g = tomo.create_proj_geom("fanflat", 1.3, 41, rng.random(17) * 6.28, 50, 20)
        v = tomo.create_vol_geom(23, 19)
    elif kind == "parallel3d":
        g = tomo.create_proj_geom("parallel3d", 1.1, 0.9, 13, 29, rng.random(11) * 3.14)
        v = tomo.create_vol_geom(15, 17, 11)
    else:
        t = rng.random(9) * 6.28
        vec = np.stack([np.sin(t) * 40, -np.cos(t) * 40, rng.random(9), -np.sin(t) * 20, np.cos(t) * 20, rng.random(9),
                        np.cos(t) * 1.4, np.sin(t) * 1.4, 0 * t, 0 * t + 0.1, 0 * t, 1.3 + 0 * t], axis=1)
        g = tomo.create_proj_geom("cone_vec", 14, 23, vec)
        v = tomo.create_vol_geom(13, 15, 11, -7, 8, -6, 7, -5, 6)
    shape = ([v["GridSliceCount"]] if "GridSliceCount" in v else []) + [v["GridRowCount"], v["GridColCount"]]
    x = rng.random(tuple(shape), dtype=np.float32)
    ax = tomo.forward_project(x, g, v)
    y = rng.random(ax.shape, dtype=np.float32)
    aty = tomo.back_project(y, g, v)
    left, right = np.vdot(ax.astype(np.float64), y), np.vdot(x.astype(np.float64), aty)
    assert abs(left - right) <= 1e-5 * abs(left)
    # The voxel-driven back-projector approximates it.
    assert tomo.back_project(y, g, v, "astra").shape == aty.shape


def test_fdk_takes_short_scans_with_parker_weights():
    n = 48
    v = tomo.create_vol_geom(n, n)
    yy, xx = np.mgrid[:n, :n] - (n - 1) / 2
    disc = ((xx ** 2 + yy ** 2) < (0.35 * n) ** 2).astype(np.float32)
    det, so, od = 72, 100.0, 50.0
    fan = np.arctan(det / 2 * 1.5 / (so + od))
    short = np.linspace(0, np.pi + 2 * fan + 0.05, 160)
    g = tomo.create_proj_geom("fanflat", 1.5, det, short, so, od)
    x = tomo.fdk(tomo.forward_project(disc, g, v), g, v)
    inner = ((xx ** 2 + yy ** 2) < (0.25 * n) ** 2)
    assert abs(x[inner].mean() - 1) < 0.02 and x[inner].std() < 0.05
    too_short = tomo.create_proj_geom("fanflat", 1.5, det, np.linspace(0, np.pi, 100), so, od)
    with pytest.raises(ValueError, match="fan angle"):
        tomo.fdk(np.zeros((100, det), "f4"), too_short, v)


def test_sirt_keeps_its_bounds_and_cgls_its_descent():
    v = tomo.create_vol_geom(20, 22, 18)
    g = tomo.create_proj_geom("cone", 1.5, 1.5, 24, 30, np.linspace(0, 2 * np.pi, 36, endpoint=False), 80, 40)
    truth = lucent.phantom.shepp_logan_3d(v)
    b = tomo.forward_project(truth, g, v)
    x, res = tomo.sirt(b, g, v, 30, min_constraint=0.0, max_constraint=0.5)
    assert x.min() >= 0 and x.max() <= 0.5 and res[-1] < 0.2 * res[0]
    x, res = tomo.cgls(b, g, v, 15)
    assert all(r1 < r0 for r0, r1 in zip(res, res[1:]))
    x, res = tomo.em(b, g, v, 10)
    assert x.min() >= 0 and res[-1] < res[0]
    # OS-SART: a sweep over subsets of 6 views does more than a SIRT iteration.
    x, res = tomo.sart(b, g, v, 3, subset_size=6, min_constraint=0.0)
    _, sirt_res = tomo.sirt(b, g, v, 4)
    assert x.min() >= 0 and res[-1] < sirt_res[-1]
    with pytest.raises(ValueError, match="subset"):
        tomo.sart(b, g, v, 3, subset_size=0)


def test_osem_and_fista_tv():
    v = tomo.create_vol_geom(20, 22, 18)
    g = tomo.create_proj_geom("cone", 1.5, 1.5, 24, 30, np.linspace(0, 2 * np.pi, 36, endpoint=False), 80, 40)
    truth = lucent.phantom.shepp_logan_3d(v)
    b = tomo.forward_project(truth, g, v)
    # OSEM with one subset of every view is MLEM; with subsets it goes further per sweep.
    x_em, res_em = tomo.em(b, g, v, 4)
    x_one, res_one = tomo.osem(b, g, v, 4, subset_size=36)
    assert rel(x_one, x_em) < 1e-5 and np.allclose(res_one, res_em, rtol=1e-5)
    x, res = tomo.osem(b, g, v, 4, subset_size=6)
    assert x.min() >= 0 and res[-1] < res_em[-1]
    # FISTA-TV on noisy projections of a piecewise-constant volume (a ball and a box): nearer it
    # than plain FISTA, and than SIRT at its best (semi-convergence near 40 iterations here).
    z, y, x = np.mgrid[:18, :20, :22]
    blocks = 0.5 * (((z - 9) ** 2 + (y - 8) ** 2 + (x - 12) ** 2) < 36) + ((abs(z - 8) < 4) & (abs(y - 13) < 3) & (abs(x - 6) < 3))
    truth = blocks.astype("f4")
    b = tomo.forward_project(truth, g, v)
    noisy = b + np.random.default_rng(3).normal(0, 0.05 * b.max(), b.shape).astype("f4")
    tv, res = tomo.fista(noisy, g, v, 60, tv_weight=2.0, min_constraint=0.0)
    plain, _ = tomo.fista(noisy, g, v, 60, tv_weight=0.0, min_constraint=0.0)
    sirt, _ = tomo.sirt(noisy, g, v, 60, min_constraint=0.0)
    assert tv.min() >= 0 and res[-1] < 0.5 * res[0]
    assert rel(tv, truth) < 0.7 * min(rel(plain, truth), rel(sirt, truth)), (rel(tv, truth), rel(plain, truth), rel(sirt, truth))
    with pytest.raises(ValueError, match="TV weight"):
        tomo.fista(b, g, v, 3, tv_weight=-1.0)
    with pytest.raises(ValueError, match="negative count"):
        tomo.osem(-b, g, v, 3)


def test_a_cylindrical_detector():
    # The equiangular fan of medical CT: a cylinder about the source (R = 60 + 40); a huge radius
    # (1e4; f32 keeps ~1e-4 of the cylinder's centre that far off) is nearly the flat detector.
    v = tomo.create_vol_geom(20, 22, 12)
    angles = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    flat = tomo.create_proj_geom("cone", 1.5, 1.5, 16, 30, angles, 60, 40)
    rows = [[np.sin(t) * 60, -np.cos(t) * 60, 0, -np.sin(t) * 40, np.cos(t) * 40, 0, np.cos(t) * 1.5, np.sin(t) * 1.5, 0, 0, 0, 1.5]
            for t in angles]
    truth = lucent.phantom.shepp_logan_3d(v)
    near_flat = tomo.forward_project(truth, tomo.create_proj_geom("cyl_cone_vec", 16, 30, [r + [1e4] for r in rows]), v)
    assert rel(near_flat, tomo.forward_project(truth, flat, v)) < 1e-3
    # Converging to the exact line integrals (the phantom inside a cube: 0.175 at 24³, 0.113 at 48³).
    g = tomo.create_proj_geom("cyl_cone_vec", 32, 40, [r + [100.0] for r in rows])
    errors = []
    for n in (24, 48):
        cube = tomo.create_vol_geom(n, n, n, -12, 12, -12, 12, -12, 12)
        phantom, exact = lucent.phantom.shepp_logan_3d(cube, g)
        errors.append(rel(tomo.forward_project(phantom, g, cube), exact))
    assert errors[1] < 0.7 * errors[0] and errors[1] < 0.13, errors
    p = tomo.forward_project(truth, g, v)
    x, res = tomo.cgls(p, g, v, 10)
    assert res[-1] < 0.1 * res[0]
    with pytest.raises(ValueError, match="FDK takes"):
        tomo.fdk(p, g, v)


def test_a_2d_geometry_with_a_3d_volume_is_a_stack():
    g = tomo.create_proj_geom("fanflat", 1.4, 41, np.linspace(0, 2 * np.pi, 48, endpoint=False), 60, 30)
    flat, stack = tomo.create_vol_geom(24, 26), tomo.create_vol_geom(24, 26, 5)
    x = np.random.default_rng(4).random((5, 24, 26), dtype=np.float32)
    p = tomo.forward_project(x, g, stack)
    assert p.shape == (5, 48, 41)
    for k in range(5):
        assert rel(p[k], tomo.forward_project(x[k], g, flat)) < 1e-6
    r = tomo.fdk(p, g, stack)
    assert rel(r[2], tomo.fdk(p[2], g, flat)) < 1e-6
    s, res = tomo.sirt(p, g, stack, 5)
    assert s.shape == x.shape and res[-1] < res[0]


def test_bad_input_is_refused():
    v = tomo.create_vol_geom(8, 8, 8)
    g = tomo.create_proj_geom("cone", 1.0, 1.0, 8, 8, [0.0, 1.0], 20, 10)
    with pytest.raises(ValueError, match="shape|geometry of"):
        tomo.forward_project(np.zeros((8, 8, 9), "f4"), g, v)
    with pytest.raises(ValueError, match="2D volume geometry|3D projection"):
        tomo.forward_project(np.zeros((8, 8), "f4"), g, tomo.create_vol_geom(8, 8))
    with pytest.raises(ValueError, match="inside the volume"):
        tomo.forward_project(np.zeros((8, 8, 8), "f4"), tomo.create_proj_geom("cone", 1.0, 1.0, 8, 8, [0.0], 3, 10), v)
    with pytest.raises(ValueError, match="not finite|NaN|non-finite"):
        tomo.forward_project(np.full((8, 8, 8), np.nan, "f4"), g, v)
    with pytest.raises(ValueError, match="overflows"):
        tomo.forward_project(np.full((8, 8, 8), 3e38, "f4"), g, v)
    with pytest.raises(ValueError, match="half turn"):
        tomo.fdk(np.zeros((8, 2, 8), "f4"), tomo.create_proj_geom("parallel3d", 1.0, 1.0, 8, 8, [0.0, 1.0]), v)
    # A cone_vec whose orbit is no circle (the second source higher).
    vec = np.array([[0, -20, 0, 0, 10, 0, 1, 0, 0, 0, 0, 1], [20, 0, 3, -10, 0, 0, 0, 1, 0, 0, 0, 1]], float)
    with pytest.raises(ValueError, match="FDK takes"):
        tomo.fdk(np.zeros((8, 2, 8), "f4"), tomo.create_proj_geom("cone_vec", 8, 8, vec), v)
    with pytest.raises(TypeError):
        tomo.forward_project(np.zeros((8, 8, 8), "f4"), "cone", v)
    with pytest.raises(ValueError, match="iterations"):
        tomo.sirt(np.zeros((8, 2, 8), "f4"), g, v, 0)


def test_find_offset_of_a_shifted_detector():
    angles = np.linspace(0, 2 * np.pi, 160, endpoint=False)
    so, od, w, shift = 200.0, 100.0, 1.5, -1.8
    vec = np.stack([np.sin(angles) * so, -np.cos(angles) * so, -np.sin(angles) * od + shift * np.cos(angles) * w,
                    np.cos(angles) * od + shift * np.sin(angles) * w, np.cos(angles) * w, np.sin(angles) * w], axis=1)
    v = tomo.create_vol_geom(128, 128)
    data = tomo.forward_project(lucent.phantom.shepp_logan(128), tomo.create_proj_geom("fanflat_vec", 150, vec), v)
    offset, tried = tomo.find_offset(data, tomo.create_proj_geom("fanflat", w, 150, angles, so, od), 6)
    assert abs(offset - shift) <= 0.3 and len(tried) > 20
    with pytest.raises(ValueError, match="fan or cone"):
        tomo.find_offset(data, tomo.create_proj_geom("parallel", 1.0, 150, angles))
