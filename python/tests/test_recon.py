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
    gain = np.ones(cols, "f4"); gain[[9, 23, 31]] = [1.05, 0.96, 1.04]
    data = (5000 * gain * np.exp(-p) + 100 + rng.random(p.shape)).astype("f4")
    flat = (5100 + rng.random((4, rows, cols))).astype("f4")
    dark = (100 + rng.random((2, rows, cols))).astype("f4")
    return data, flat, dark, theta


def by_steps(data, flat, dark, theta, center, stripe_size=None):
    t = (data - dark.mean(0)) / np.maximum(flat.mean(0) - dark.mean(0), 1e-6)
    sinograms = -np.log(np.maximum(t, 1e-6)).transpose(1, 0, 2)           # (rows, angles, cols)
    if stripe_size is not None:
        sinograms = np.stack([removal.remove_stripe_based_sorting(s, size=stripe_size, dim=1) for s in sinograms])
    return lucent.tomography.fbp(sinograms.astype("f4"), theta, center=center)


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
