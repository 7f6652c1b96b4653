"""Shared fixtures: fresh random data every run (its seed printed on failure), relative errors."""

import os

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    seed = int.from_bytes(os.urandom(4), "little")
    request.node.user_properties.append(("seed", seed))
    print(f"random seed {seed}")
    return np.random.default_rng(seed)


def rel(a, b):
    """The relative L2 error of ``a`` against the reference ``b`` (computed in float64)."""
    a, b = np.asarray(a, np.complex128), np.asarray(b, np.complex128)
    assert a.shape == b.shape, f"shape {a.shape}, expected {b.shape}"
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))
