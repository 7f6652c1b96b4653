"""lucent.dask on a two-process LocalCluster over a Zarr volume, against the whole-array result
computed in this process."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
zarr = pytest.importorskip("zarr")

import lucent
import lucent.dask
from conftest import rel


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


@pytest.fixture
def volume(tmp_path, rng):
    """A Zarr volume of blurred beads, chunked so that chunks meet inside along every axis."""
    x = np.zeros((24, 70, 61), np.float32)
    idx = tuple(rng.integers(0, n, 60) for n in x.shape)
    x[idx] = rng.uniform(1, 4, 60)
    x = lucent.ndimage.gaussian_filter(x, (1.0, 1.5, 1.5)) + 0.01 + 0.002 * rng.random(x.shape, np.float32)
    path = str(tmp_path / "volume.zarr")
    z = zarr.create_array(path, shape=x.shape, chunks=(12, 35, 31), dtype="f4")
    z[...] = x
    return x, da.from_zarr(path)


def test_every_worker_has_its_own_context(client):
    chosen = lucent.dask.assign_gpus(client)
    assert sorted(chosen) == sorted(client.scheduler_info()["workers"])
    names = client.run(lambda: __import__("lucent").context().info()["adapter"]["name"])
    assert len(names) == 2 and all(names.values())


def test_filters_on_a_cluster_equal_the_whole_array(client, volume):
    x, chunked = volume
    for mode in ["reflect", "constant", "wrap", "nearest", "mirror"]:
        got = lucent.dask.gaussian_filter(chunked, (1.2, 2.0, 2.5), mode=mode).compute()
        assert rel(got, lucent.ndimage.gaussian_filter(x, (1.2, 2.0, 2.5), mode=mode)) < 1e-6, mode
    for mode in ["reflect", "wrap"]:
        got = lucent.dask.uniform_filter(chunked, (3, 5, 4), mode=mode).compute()
        assert rel(got, lucent.ndimage.uniform_filter(x, (3, 5, 4), mode=mode)) < 1e-6, mode
    kernel = np.random.default_rng(1).random((3, 6, 5)).astype(np.float32)
    got = lucent.dask.fftconvolve(chunked, kernel).compute()
    assert rel(got, lucent.signal.fftconvolve(x, kernel, "same")) < 1e-5


def test_richardson_lucy_on_a_cluster_equals_the_whole_array(client, volume):
    x, chunked = volume
    psf = lucent.ndimage.gaussian_filter(np.pad(np.ones((1, 1, 1), np.float32), ((2, 2), (3, 3), (3, 3))), (1.0, 1.5, 1.5))
    whole = lucent.restoration.richardson_lucy(x, psf, 20, clip=False)
    # halos of tiled RL's guard plus blend widths: within tiled RL's 1e-3 of the whole array
    assert rel(lucent.dask.richardson_lucy(chunked, psf, 20, clip=False).compute(), whole) < 1e-3


def test_unsupported_arguments_raise():
    x = da.ones((8, 8), chunks=4)
    with pytest.raises(NotImplementedError):
        lucent.dask.fftconvolve(x, np.ones((3, 3)), mode="full")
    with pytest.raises(ValueError):
        lucent.dask.richardson_lucy(x, np.ones((3, 3, 3)))
