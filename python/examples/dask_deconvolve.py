"""Richardson-Lucy of a Zarr volume on a Dask cluster, one lucent worker per GPU.

    # one machine: a local cluster of N worker processes (one GPU each where there are several)
    python dask_deconvolve.py --workers 2 --shape 64,512,512 --chunks 64,256,256
    # many machines: `dask scheduler` on one host, `dask worker tcp://HOST:8786 --nworkers G
    # --nthreads 1` on each GPU host (G = its GPUs), then
    python dask_deconvolve.py --scheduler tcp://HOST:8786 --input specimen.zarr/0 --output restored.zarr

Without --input a synthetic volume of beads is written to a temporary Zarr store first. Prints the
wall time of the deconvolution (the volume read from Zarr, deconvolved chunk by chunk with
lucent's guard bands as halos, written to Zarr)."""

import argparse
import os
import tempfile
import time

import dask.array as da
import distributed
import numpy as np
import zarr

import lucent
import lucent.dask


def beads(shape, count, seed=0):
    rng = np.random.default_rng(seed)
    x = np.full(shape, 0.05, np.float32)
    x[tuple(rng.integers(0, n, count) for n in shape)] = rng.uniform(1, 4, count)
    return x


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--scheduler", help="a running scheduler's address (default: a local cluster)")
    p.add_argument("--workers", type=int, default=2, help="local cluster: worker processes")
    p.add_argument("--input", help="a Zarr array (default: synthetic beads)")
    p.add_argument("--output", help="the restored Zarr array (default: a temporary store)")
    p.add_argument("--shape", default="64,512,512")
    p.add_argument("--chunks", default="64,256,256")
    p.add_argument("--iterations", type=int, default=20)
    args = p.parse_args()

    tmp = tempfile.mkdtemp()
    if args.input is None:
        shape = tuple(int(n) for n in args.shape.split(","))
        chunks = tuple(int(n) for n in args.chunks.split(","))
        psf = lucent.ndimage.gaussian_filter(np.pad(np.ones((1, 1, 1), np.float32), 4), 1.5)
        observed = lucent.signal.fftconvolve(beads(shape, shape[0] * 20), psf / psf.sum(), "same").clip(0)
        args.input = os.path.join(tmp, "observed.zarr")
        zarr.create_array(args.input, shape=shape, chunks=chunks, dtype="f4")[...] = observed
    else:
        psf = lucent.ndimage.gaussian_filter(np.pad(np.ones((1, 1, 1), np.float32), 4), 1.5)
    output = args.output or os.path.join(tmp, "restored.zarr")

    cluster = None if args.scheduler else distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                                                   dashboard_address=None)
    with distributed.Client(args.scheduler or cluster) as client:
        chosen = lucent.dask.assign_gpus(client)
        names = client.run(lambda: __import__("lucent").context().info()["adapter"]["name"])
        print(f"{len(chosen)} workers: {sorted(set(names.values()))}")
        volume = da.from_zarr(args.input)
        restored = lucent.dask.richardson_lucy(volume, psf, args.iterations, clip=False, init=None, normalize_psf=True)
        start = time.perf_counter()
        restored.to_zarr(output, overwrite=True)
        seconds = time.perf_counter() - start
        print(f"{volume.shape} in chunks {volume.chunksize}, {args.iterations} iterations: {seconds:.2f} s -> {output}")
    if cluster is not None:
        cluster.close()


if __name__ == "__main__":
    main()
