"""The process-wide GPU context."""

from __future__ import annotations

import threading
from typing import Any, Optional

from . import _lucent

Context = _lucent.Context
Context.__doc__ = """One GPU and its caches (FFT plans, kernel spectra, pipelines).

``Context(adapter=None)`` opens the adapter whose name contains ``adapter``, or whose index it
is; None takes the ``LUCENT_ADAPTER`` environment variable, else the best adapter (discrete >
integrated > CPU). Pass it to any function as ``context=``, or make it the default with
:func:`set_context`.

>>> import lucent
>>> ctx = lucent.Context()
>>> sorted(ctx.info())[:2]
['adapter', 'device_memory_bytes']
"""

_lock = threading.Lock()
_default: Optional[Context] = None


def context() -> Context:
    """The process-wide context, opened on first use.

    >>> import lucent
    >>> lucent.context() is lucent.context()
    True
    """
    global _default
    with _lock:
        if _default is None:
            _default = Context()
        return _default


def set_context(ctx: Context) -> None:
    """Makes ``ctx`` the context of every later call that passes none (e.g. one GPU per Dask
    worker: ``lucent.set_context(lucent.Context(adapter="1"))``)."""
    global _default
    if not isinstance(ctx, Context):
        raise TypeError(f"set_context takes a lucent.Context, not {type(ctx).__name__}")
    with _lock:
        _default = ctx


def resolve(ctx: Optional[Context]) -> Context:
    return context() if ctx is None else ctx


def adapters() -> list[dict[str, Any]]:
    """Every GPU adapter this process can see (name, backend, type, driver).

    >>> import lucent
    >>> len(lucent.adapters()) >= 1
    True
    """
    return _lucent.adapters()


def info() -> dict[str, Any]:
    """lucent's version, the default context's adapter and limits, and every adapter.

    >>> import lucent
    >>> lucent.info()["version"] == lucent.__version__
    True
    """
    return {"version": _lucent.__version__, **context().info(), "adapters": adapters()}
