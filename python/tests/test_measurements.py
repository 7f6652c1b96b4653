import warnings

import numpy as np
import pytest
import scipy.ndimage as ndi

import lucent

SHAPES = [(31,), (19, 23), (7, 11, 13), (3, 5, 6, 7)]
# center_of_mass runs on positive values (intensities): on signed ones a region's sum near 0
# makes it ill-conditioned, and scipy's float32 sum of the masses then decides its digits.
MOMENTS = ["sum_labels", "sum", "mean", "variance", "standard_deviation", "median", "center_of_mass"]
SELECTIONS = ["minimum", "maximum", "minimum_position", "maximum_position", "extrema"]


def same(a, b, exact, atol=1e-5):
    """``a`` is ``b``: the same nesting, types, dtypes and shapes, values equal (``exact``) or
    within ``atol`` and float32's relative rounding."""
    if isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            same(x, y, exact, atol)
        return
    if b is None or isinstance(b, slice):
        assert a == b, (a, b)
        return
    assert type(a) is type(b), (type(a), type(b))
    a_, b_ = np.asarray(a), np.asarray(b)
    assert a_.dtype == b_.dtype and a_.shape == b_.shape, (a_.dtype, b_.dtype, a_.shape, b_.shape)
    if b_.dtype == object:
        for x, y in zip(a_.ravel(), b_.ravel()):
            same(x, y, exact, atol)
    elif exact:
        assert np.array_equal(a_, b_, equal_nan=True), (a_, b_)
    else:
        np.testing.assert_allclose(a_, b_, rtol=2e-5, atol=atol, equal_nan=True)


def sum_tolerance(x):
    """scipy sums one region of float32 in float32 (lucent in float64): its error, up to a few
    float32 roundings of the sums of |x| and x², bounds the difference where a sum cancels."""
    if x.dtype != np.float32:
        return 1e-5
    wide = x.astype(np.float64)
    return 4 * np.finfo(np.float32).eps * (np.abs(wide).sum() + (wide * wide).sum())


def regions(rng, shape):
    """Labels as lucent and scipy label a random mask, and the index forms scipy accepts: none,
    a scalar, a list with repeats and absent labels, a 2-D array."""
    labels, n = ndi.label(rng.random(shape) > 0.55)
    index_list = [n, 1, 0, n + 4, 2, 2] if n >= 2 else [0, 1, 7]
    return labels, n, [None, 1, index_list, np.array([[1, 0], [n, n + 1]])]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["f4", "f8", "i2", "u1", "?"])
def test_measurements_match_scipy(rng, shape, dtype):
    x = (rng.standard_normal(shape) * 20).astype(dtype)
    if dtype != "?":  # distinct values, so every minimum and maximum has one position
        x = (rng.permutation(x.size).reshape(shape) - x.size // 3).astype(dtype) if dtype[0] in "iu" else x
    labels, n, indexes = regions(rng, shape)
    atol = sum_tolerance(x)
    with warnings.catch_warnings():  # scipy's mean of an empty region divides by 0
        warnings.simplefilter("ignore", RuntimeWarning)
        for index in indexes:
            for name in MOMENTS:
                v = np.abs(x) + 1 if name == "center_of_mass" and dtype in ("f4", "f8") else x
                got = getattr(lucent.ndimage, name)(v, labels, index)
                same(got, getattr(ndi, name)(v, labels, index), exact=False, atol=atol)
            # Positions only where values are distinct: scipy breaks ties by an unstable sort.
            for name in SELECTIONS if np.unique(x).size == x.size else ("minimum", "maximum"):
                got = getattr(lucent.ndimage, name)(x, labels, index)
                same(got, getattr(ndi, name)(x, labels, index), exact=True)
            if np.ndim(index) < 2:  # scipy's labeled_comprehension fails on a 2-D index
                got = lucent.ndimage.histogram(x, -15, 25.5, 7, labels, index)
                same(got, ndi.histogram(x, -15, 25.5, 7, labels, index), exact=True)
        for name in MOMENTS + SELECTIONS:  # no labels: the whole array
            v = np.abs(x) + 1 if name == "center_of_mass" and dtype in ("f4", "f8") else x
            same(getattr(lucent.ndimage, name)(v), getattr(ndi, name)(v), exact=name in SELECTIONS, atol=atol)
    same(lucent.ndimage.find_objects(labels), ndi.find_objects(labels), exact=True)
    same(lucent.ndimage.find_objects(labels, max_label=n + 2), ndi.find_objects(labels, max_label=n + 2), exact=True)


def test_labels_of_other_types_and_broadcasting(rng):
    # Negative and sparse labels, uint16 and float labels of integer value, labels broadcast.
    x = rng.standard_normal((9, 14)).astype("f4")
    for labels in (rng.integers(-3, 4, (9, 14)), rng.integers(0, 3, (9, 14)).astype("u2") * 1000,
                   rng.integers(0, 3, (9, 14)).astype("f8"), rng.integers(0, 3, (1, 14))):
        for index in (None, [-3, 1, 2, 1000, 5], 2):
            for name in MOMENTS + SELECTIONS:
                if name == "center_of_mass":  # signed values: see MOMENTS
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    try:
                        expected = getattr(ndi, name)(x, labels, index)
                    except ValueError:  # an empty region's extrema: scipy's error, and lucent's
                        with pytest.raises(ValueError, match="no elements"):
                            getattr(lucent.ndimage, name)(x, labels, index)
                        continue
                    same(getattr(lucent.ndimage, name)(x, labels, index), expected, exact=name in SELECTIONS,
                         atol=sum_tolerance(x))


def test_labeled_comprehension_matches_scipy(rng):
    x = rng.standard_normal((12, 10))
    labels, n = ndi.label(x > 0.2)
    index = [3, 1, n + 2, 2]
    for f, dtype, default in ((np.mean, float, -1.0), (np.size, int, 0), (lambda v: v.max() - v.min(), "f8", np.nan)):
        same(lucent.ndimage.labeled_comprehension(x, labels, index, f, dtype, default),
             ndi.labeled_comprehension(x, labels, index, f, dtype, default), exact=False)
    pos = lambda v, p: p[np.argmax(v)]  # noqa: E731
    same(lucent.ndimage.labeled_comprehension(x, labels, index, pos, int, -1, pass_positions=True),
         ndi.labeled_comprehension(x, labels, index, pos, int, -1, pass_positions=True), exact=True)
    same(lucent.ndimage.labeled_comprehension(x, labels, 2, np.sum, float, 0.0),
         ndi.labeled_comprehension(x, labels, 2, np.sum, float, 0.0), exact=False)


def test_measurements_refuse_bad_input():
    x = np.ones((4, 5))
    with pytest.raises(TypeError, match="Complex"):
        lucent.ndimage.mean(x.astype(complex))
    with pytest.raises(ValueError, match="integers"):
        lucent.ndimage.sum_labels(x, labels=np.full((4, 5), 0.5), index=[1])
    with pytest.raises(ValueError):
        lucent.ndimage.mean(x, labels=np.ones((3, 5), int))
    with pytest.raises(ValueError, match="monotonically"):
        lucent.ndimage.histogram(x, 2, 1, 4)
    with pytest.raises(ValueError, match="bins"):
        lucent.ndimage.histogram(x, 0, 1, 0)
    with pytest.raises(ValueError, match="no elements"):
        lucent.ndimage.minimum(x, labels=np.zeros((4, 5), int), index=3)
    with pytest.raises(TypeError, match="integers"):
        lucent.ndimage.find_objects(x)


def test_many_regions_are_checked_against_the_host_budget():
    # Each region's accumulators are counted before they are allocated (a budget of 1 MB here).
    import os
    import subprocess
    import sys
    code = ("import numpy as np, lucent\n"
            "try:\n"
            "    lucent.ndimage.mean(np.ones(10), np.ones(10, int), np.arange(100000))\n"
            "except ValueError as e:\n"
            "    print('refused:', e)\n")
    env = dict(os.environ, LUCENT_HOST_BUDGET_BYTES="1000000")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert "refused:" in out.stdout and "100000 regions" in out.stdout, out.stdout + out.stderr
    assert len(lucent.ndimage.mean(np.ones(10), np.ones(10, int), np.arange(1000))) == 1000
