import threading
import time

import numpy as np
import pytest

import lucent


def test_info_and_adapters():
    info = lucent.info()
    assert info["version"] == lucent.__version__
    assert info["adapter"]["name"] and info["max_buffer_bytes"] > 0
    assert any(a["name"] == info["adapter"]["name"] for a in lucent.adapters())
    assert "lucent.Context" in repr(lucent.context())


def test_explicit_context():
    ctx = lucent.Context(adapter=lucent.adapters()[0]["name"])
    x = np.random.rand(10, 12).astype(np.float32)
    assert np.array_equal(lucent.fft.fftn(x, context=ctx), lucent.fft.fftn(x))
    before = lucent.context()
    try:
        lucent.set_context(ctx)
        assert lucent.context() is ctx
    finally:
        lucent.set_context(before)
    with pytest.raises(TypeError):
        lucent.set_context("gpu0")
    with pytest.raises(RuntimeError, match="no GPU adapter matches"):
        lucent.Context(adapter="no such adapter")


def test_the_gil_is_released_while_the_gpu_works():
    image = np.random.rand(96, 96, 64).astype(np.float32)
    psf = np.ones((5, 5, 5), np.float32)
    lucent.restoration.richardson_lucy(image, psf, 1)  # plans and pipelines made
    done = threading.Event()

    def work():
        lucent.restoration.richardson_lucy(image, psf, 20)
        done.set()

    ticks = [time.perf_counter()]
    worker = threading.Thread(target=work)
    worker.start()
    while not done.is_set():
        time.sleep(0.002)
        ticks.append(time.perf_counter())
    worker.join()
    seconds = ticks[-1] - ticks[0]
    # Holding the GIL, the call would stop this loop from its start to its end: one gap as long
    # as the call. Released, the loop goes on (gaps of a scheduler's time slice, even when loaded).
    assert seconds > 0.2, "the call was too short to tell"
    assert max(np.diff(ticks)) < 0.5 * seconds, (max(np.diff(ticks)), seconds)


def test_threads_share_one_context():
    x = np.random.rand(40, 40).astype(np.float32)
    expected = lucent.signal.fftconvolve(x, x[:5, :5], "same")
    results = [None] * 4

    def run(i):
        results[i] = lucent.signal.fftconvolve(x, x[:5, :5], "same")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(r, expected) for r in results)


def test_scalars_and_bad_counts_raise_value_errors():
    # (scipy.ndimage's filters take a 0-d input, a filter over no axes: lucent's too, test_dtypes.py)
    for call in [lambda: lucent.fft.fftn(np.float32(3)), lambda: lucent.ndimage.rotate(np.float32(3), 10),
                 lambda: lucent.restoration.richardson_lucy(np.ones((5, 5)), np.ones((3, 3)), -1),
                 lambda: lucent.restoration.richardson_lucy(np.ones((5, 5)), np.ones((3, 3)), 2.5),
                 lambda: lucent.tomography.mlem(np.ones((4, 8)), np.arange(4) * 0.7, -3)]:
        with pytest.raises(ValueError):
            call()
