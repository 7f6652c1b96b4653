"""The beamline pipeline (lucent.tomography.reconstruct) against its steps done by the
reference packages: a DXchange file written by h5py (chunked, gzip) read band by band, numpy's
TomoPy-style normalisation and −log, algotom's sorting-based ring removal, then FBP."""

import numpy as np
import pytest

import lucent
from conftest import rel

h5py = pytest.importorskip("h5py")
removal = pytest.importorskip("algotom.prep.removal")


def scan(rng, angles=48, rows=5, cols=40):
    """Float counts (no ties) of a few boxes, column gain errors the flats miss (rings)."""
    theta = np.linspace(0, np.pi, angles, endpoint=False)
    slab = np.zeros((rows, cols, cols), "f4")
    slab[:, 10:25, 12:30] = 0.03
    slab[:, 18:22, 5:15] = 0.05
    p = lucent.tomography.radon(slab, theta).transpose(1, 0, 2)           # (angles, rows, cols)
    gain = np.ones(cols, "f4"); gain[[9, 23, cols - 9]] = [1.05, 0.96, 1.04]
    # Drawn again until no sinogram column has two values within 8 float32 steps of each other
    # after normalisation and −log: near ties may be sorted either way (the device rounds
    # differently from numpy), which moves the sorting filter's outputs between them.
    while True:
        data = (5000 * gain * np.exp(-p) + 100 + 200 * rng.random(p.shape)).astype("f4")
        flat = (5100 + rng.random((4, rows, cols))).astype("f4")
        dark = (100 + rng.random((2, rows, cols))).astype("f4")
        t = (data - dark.mean(0)) / np.maximum(flat.mean(0) - dark.mean(0), 1e-6)
        ordered = np.sort(-np.log(np.maximum(t, 1e-6)), axis=0)
        if np.all(np.diff(ordered, axis=0) > 8 * np.spacing(np.maximum(np.abs(ordered[1:]), np.abs(ordered[:-1])))):
            return data, flat, dark, theta


def by_steps(data, flat, dark, theta, center, stripe_size=None, method="auto"):
    t = (data - dark.mean(0)) / np.maximum(flat.mean(0) - dark.mean(0), 1e-6)
    sinograms = -np.log(np.maximum(t, 1e-6)).transpose(1, 0, 2)           # (rows, angles, cols)
    if stripe_size is not None:
        sinograms = np.stack([removal.remove_stripe_based_sorting(s, size=stripe_size, dim=1) for s in sinograms])
    return lucent.tomography.fbp(sinograms.astype("f4"), theta, center=center, method=method)


def test_reconstruct_is_its_steps(rng):
    data, flat, dark, theta = scan(rng)
    volume, report = lucent.tomography.reconstruct(data, flat, dark, theta, center=19.25)
    assert report["center"] == 19.25 and volume.shape == (5, 40, 40)
    assert rel(volume, by_steps(data, flat, dark, theta, 19.25)) < 1e-5
    rings, _ = lucent.tomography.reconstruct(data, flat, dark, theta, center=19.5, stripe="sorting", stripe_size=5)
    assert rel(rings, by_steps(data, flat, dark, theta, 19.5, stripe_size=5)) < 1e-5


def test_dxchange_file_by_h5py(rng, tmp_path):
    data, flat, dark, theta = scan(rng, rows=7)
    counts = np.round(data).astype(np.uint16)
    path = tmp_path / "scan.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("/exchange/data", data=counts, chunks=(8, 2, 40), compression="gzip")
        f.create_dataset("/exchange/data_white", data=np.round(flat).astype(np.uint16))
        f.create_dataset("/exchange/data_dark", data=np.round(dark).astype(np.uint16))
        f.create_dataset("/exchange/theta", data=np.degrees(theta))
    from_file, report = lucent.tomography.reconstruct(path, center=19.5)
    from_arrays, _ = lucent.tomography.reconstruct(counts, np.round(flat).astype(np.uint16), np.round(dark).astype(np.uint16), theta, center=19.5)
    np.testing.assert_array_equal(from_file, from_arrays)
    assert report["slices"] == 7 and report["angles"] == 48
    # Streamed to a file: the same volume; the automatic centre near the true 19.5.
    out = tmp_path / "volume.npy"
    none, report = lucent.tomography.reconstruct(str(path), output=out)
    assert none is None and abs(report["center"] - 19.5) <= 0.5, report
    assert np.load(out).shape == (7, 40, 40)
    # lucent.io reads the file's projections too.
    np.testing.assert_array_equal(lucent.io.read(path), counts.astype("f4"))


def test_gridrec_and_half_precision(rng, tmp_path):
    # Gridding FBP (TomoPy's gridrec; three rows: a pair of slices in one complex sinogram and
    # one alone) is its steps too; float16 as tomocupy writes it: numpy's rounding of the
    # float32 volume when returned, the device's in the file.
    data, flat, dark, theta = scan(rng, rows=3)
    gridded, _ = lucent.tomography.reconstruct(data, flat, dark, theta, center=19.5, method="gridrec")
    assert rel(gridded, by_steps(data, flat, dark, theta, 19.5, method="gridrec")) < 1e-5
    half, _ = lucent.tomography.reconstruct(data, flat, dark, theta, center=19.5, method="gridrec", dtype="float16")
    assert half.dtype == np.float16
    np.testing.assert_array_equal(half, gridded.astype(np.float16))
    out = tmp_path / "half.npy"
    lucent.tomography.reconstruct(data, flat, dark, theta, center=19.5, method="gridrec", dtype="float16", output=out)
    written = np.load(out)
    assert written.dtype == np.float16
    # The device rounds to the nearest half or its neighbour: within one step of 2^-10.
    step = np.maximum(np.abs(gridded) * 2.0**-10, 2.0**-24)
    assert np.all(np.abs(written.astype("f4") - gridded) <= step)
    with pytest.raises(OSError, match="float16 volume is written to .npy or .tif"):
        lucent.tomography.reconstruct(data, flat, dark, theta, center=19.5, dtype="float16", output=tmp_path / "v.zarr")
    assert not (tmp_path / "v.zarr").exists()


def test_bad_input_is_refused(rng):
    data, flat, dark, theta = scan(rng, rows=2)
    with pytest.raises(ValueError, match="3 axes"):
        lucent.tomography.reconstruct(data[0], flat, dark)
    with pytest.raises(ValueError, match="flat fields of shape"):
        lucent.tomography.reconstruct(data, flat[:, :1], dark)
    with pytest.raises(ValueError, match="paganin takes"):
        lucent.tomography.reconstruct(data, flat, dark, paganin={"distance": 3})
    bad = data.copy(); bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite|NaN"):
        lucent.tomography.reconstruct(bad, flat, dark, center=19.5)


def tomopy_reference():
    """TomoPy's functions, copied into benches/tomopy_reference.py (TomoPy is not on the
    package index; the copy names its commit)."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "benches" / "tomopy_reference.py"
    if not path.exists():
        pytest.skip("benches/tomopy_reference.py is not beside the package")
    spec = importlib.util.spec_from_file_location("tomopy_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_preprocessing_steps_are_tomopys(rng):
    t = tomopy_reference()
    data, flat, dark, _ = scan(rng, angles=37, rows=6, cols=29)
    data[3, 2, 7] += 4000                                                   # a zinger
    np64 = lambda a: np.asarray(a, np.float64)
    assert rel(lucent.tomography.normalize(data, flat, dark, cutoff=1.02), t.normalize(np64(data), np64(flat), np64(dark), 1.02)) < 1e-6
    cleaned = lucent.tomography.remove_outlier(data, 500, size=3)
    assert rel(cleaned, t.remove_outlier(np64(data), 500, 3)) < 1e-7 and cleaned[3, 2, 7] < data[3, 2, 7] - 3000
    transmission = lucent.tomography.normalize(data, flat, dark)
    p = lucent.tomography.minus_log(transmission)
    assert rel(p, -np.log(np64(transmission))) < 1e-6
    # Sinograms without ties (equal values may be ordered either way by numpy's sort): −log in
    # f64 of counts jittered below f32's resolution at 5000 (float32 counts repeat in a column).
    jittered = np64(data) + 1e-3 * rng.random(data.shape)
    p = (-np.log(t.normalize(jittered, np64(flat), np64(dark)))).astype("f4")
    assert all(len(np.unique(p[:, r, c])) == p.shape[0] for r in range(p.shape[1]) for c in range(p.shape[2]))
    for size, dim in [(None, 1), (5, 2)]:
        want = np.stack([t.remove_stripe_based_sorting(np64(p[:, r]), size, dim) for r in range(p.shape[1])], axis=1)
        assert rel(lucent.tomography.remove_stripe_based_sorting(p, size, dim), want) < 1e-6, (size, dim)
    want = np.stack([removal.remove_stripe_based_sorting(p[:, r], size=5, dim=1) for r in range(p.shape[1])], axis=1)
    assert rel(lucent.tomography.remove_stripe_based_sorting(p, 5), want) < 1e-6                # algotom's too
    big = p.copy(); big[:, :, 12:15] *= 1.4
    want = np.stack([t.remove_large_stripe(np64(big[:, r]), 3, 11, 0.1, True)[0] for r in range(big.shape[1])], axis=1)
    assert rel(lucent.tomography.remove_large_stripe(big, 3, 11), want) < 1e-6
    assert rel(lucent.tomography.retrieve_phase(transmission, 1e-4, 30, 25, 1e-3), t.retrieve_phase(np64(transmission), 1e-4, 30, 25, 1e-3)) < 2e-6
    sinogram = np64(p[:, 3])
    assert lucent.tomography.find_center_vo(p, ind=3, smin=-6, smax=6) == t.find_center_vo(sinogram, -6, 6)[0]


def test_fourier_wavelet_is_tomopys(rng):
    t = tomopy_reference()
    p = rng.random((40, 3, 33)).astype("f4") + np.linspace(0, 1, 33, dtype="f4")
    p[:, :, 11] += 0.3
    got = lucent.tomography.remove_stripe_fw(p, level=4)
    want = np.stack([t.remove_stripe_fw(np.float64(p[:, r]), level=4) for r in range(3)], axis=1)
    assert rel(got, want) < 2e-6
    # TomoPy's default level comes from the whole stack's largest axis.
    default = lucent.tomography.remove_stripe_fw(p)
    level = int(np.ceil(np.log2(max(p.shape))))
    assert rel(default, np.stack([t.remove_stripe_fw(np.float64(p[:, r]), level=level) for r in range(3)], axis=1)) < 2e-6
