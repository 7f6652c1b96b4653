"""lucent.ndimage.deskew against scipy.ndimage.affine_transform at the same map (the frames'
maps written out here from the documented geometry) and against cudaDecon's deskew kernel
(pycudadecon's deskewGPU) transcribed in numpy; pycudadecon's defaults and dtype."""

import numpy as np
import pytest
import scipy.ndimage as ndi

import lucent
from conftest import rel


def _theta(angle):
    return np.deg2rad(angle + 180 if angle < 0 else angle)


def _deskewed_map(shape, dxdata, dzdata, angle, width=0, shift=0):
    nz, _, nx = shape
    t = _theta(angle)
    f = np.cos(t) * dzdata / dxdata
    w = width or int(nx + np.floor(nz * dzdata * abs(np.cos(t)) / dxdata))
    m = np.array([[1, 0, 0], [0, 1, 0], [-f, 0, 1]], float)
    return m, [0, 0, f * nz / 2 + nx / 2 - w / 2 + shift], (nz, shape[1], w)


def _coverslip_map(shape, dxdata, dzdata, angle):
    nz, ny, nx = shape
    t = _theta(angle)
    c, s, r = np.cos(t), np.sin(t), dxdata / dzdata
    xs = [0, (nx - 1) * c, (nz - 1) / r, (nz - 1) / r + (nx - 1) * c]
    out = (int(np.floor((nx - 1) * s)) + 1, ny, int(np.floor(max(xs) - min(xs))) + 1)
    return np.array([[-r * c / s, 0, r], [0, 1, 0], [1 / s, 0, 0]]), [r * min(xs), 0, 0], out


def _assert_equal(got, want, x, m, o):
    # Except where a coordinate lies within 1e-6 of the stack's first or last sample along an
    # axis the map moves (the others are read where they are): mode
    # constant jumps to the pad there, and rounding of a coordinate that is exactly 0 (the
    # middle plane of an even stack) decides.
    assert got.shape == want.shape
    c = np.tensordot(m, np.indices(want.shape), 1) + np.reshape(o, (3, 1, 1, 1))
    edge = np.zeros(want.shape, bool)
    for a in [a for a in range(3) if not np.array_equal(m[a], np.eye(3)[a])]:
        edge |= (np.abs(c[a]) < 1e-6) | (np.abs(c[a] - (x.shape[a] - 1)) < 1e-6)
    assert edge.mean() < 0.25
    g, w = got[~edge], want[~edge]
    assert rel(g, w) < 1e-5 and np.abs(g - w).max() <= 1e-5 * np.abs(w).max()


@pytest.mark.parametrize("order", [1, 3])
@pytest.mark.parametrize("shape,dxdata,dzdata,angle,width,shift", [
    ((17, 6, 23), 0.104, 0.4, 31.5, 0, 0),
    ((9, 4, 31), 0.1, 0.3, -32.45, 0, 0),
    ((12, 5, 15), 0.147, 0.21, 58.0, 21, -3),
])
def test_deskew_matches_scipy(rng, order, shape, dxdata, dzdata, angle, width, shift):
    x = rng.random(shape).astype("f4") + 1
    got = lucent.ndimage.deskew(x, dxdata, dzdata, angle, width, shift, pad_val=0.25, order=order)
    m, o, out = _deskewed_map(shape, dxdata, dzdata, angle, width, shift)
    want = ndi.affine_transform(x.astype(float), m, o, output_shape=out, order=order, mode="constant", cval=0.25)
    _assert_equal(got, want, x, m, o)


@pytest.mark.parametrize("order", [1, 3])
@pytest.mark.parametrize("angle", [31.5, -40.0])
def test_coverslip_frame_matches_scipy(rng, order, angle):
    x = rng.random((14, 5, 19)).astype("f4")
    got = lucent.ndimage.deskew(x, 0.104, 0.35, angle, pad_val=0, rotate=True, order=order)
    m, o, out = _coverslip_map(x.shape, 0.104, 0.35, angle)
    want = ndi.affine_transform(x.astype(float), m, o, output_shape=out, order=order, mode="constant", cval=0)
    _assert_equal(got, want, x, m, o)


def test_geometry_is_cudadecons(rng):
    # deskew_kernel of cudaDecon: x_in = (x - width/2 + shift) - f (z - nz/2) + nx/2, linear
    # inside [0, nx - 1), the pad outside; samples exactly at nx - 1 (cudaDecon pads them,
    # scipy reads them) are left out.
    x = rng.random((10, 3, 18)).astype("f4")
    nz, ny, nx = x.shape
    for angle, shift in [(31.5, 0), (-30.0, 2)]:
        got = lucent.ndimage.deskew(x, 0.1, 0.3, angle, shift=shift, pad_val=-5)
        f = np.cos(_theta(angle)) * 0.3 / 0.1
        w = got.shape[2]
        assert w == nx + int(np.floor(nz * 0.3 * abs(np.cos(_theta(angle))) / 0.1))
        xo = np.arange(w)
        for z in range(nz):
            xin = (xo - w / 2 + shift) - f * (z - nz / 2) + nx / 2
            inside = (xin >= 0) & (xin < nx - 1)
            i = np.floor(np.where(inside, xin, 0)).astype(int)
            t = np.where(inside, xin, 0) - i
            want = np.where(inside, (1 - t) * x[z][:, i] + t * x[z][:, np.minimum(i + 1, nx - 1)], -5)
            keep = np.abs(xin - (nx - 1)) > 1e-9
            np.testing.assert_allclose(got[z][:, keep], want[:, keep], atol=1e-5)


def test_pycudadecon_defaults_and_dtype(rng):
    x = rng.integers(100, 1000, (6, 4, 12)).astype("u2")
    got = lucent.ndimage.deskew(x, dzdata=0.3)
    assert got.dtype == np.uint16
    m, o, out = _deskewed_map(x.shape, 0.1, 0.3, 31.5)
    want = ndi.affine_transform(x.astype(float), m, o, output_shape=out, order=1, mode="constant", cval=np.median(x[-1]))
    c = np.tensordot(m, np.indices(out), 1) + np.reshape(o, (3, 1, 1, 1))
    inside = np.all([(np.abs(c[a]) > 1e-6) & (np.abs(c[a] - (x.shape[a] - 1)) > 1e-6) for a in (2,)], axis=0)
    assert np.abs(got.astype(float) - want.astype("u2"))[inside].max() <= 1
    with pytest.raises(ValueError, match="3 axes"):
        lucent.ndimage.deskew(x[0])
    with pytest.raises(ValueError, match="no skew"):
        lucent.ndimage.deskew(x, angle=0)
    with pytest.raises(ValueError, match="whole stack"):
        lucent.ndimage.deskew(x, width=30, rotate=True)
