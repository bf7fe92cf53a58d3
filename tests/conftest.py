from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Iterator

import pytest

import typelattice as tl
from counting_backend import CountingBackend
from typelattice import _config
from typelattice._backends import Backend, use


@pytest.fixture(autouse=True)
def _clean_config() -> Iterator[None]:
    """Every test starts and ends with the import-time configuration."""
    tl.config.reset()
    token = _config._scope.set(None)
    yield
    _config._scope.reset(token)
    tl.config.reset()


# TYPELATTICE_TEST_BACKEND=counting runs every test under the counting
# backend (tests/counting_backend.py): CI runs the golden suites so, to show
# that whatever they compute is computed by the primitives of the backend in
# force, with the same answers as the NumPy backend's. The other values run
# them under another library's backend: 'torch' and 'torch-cuda'
# (typelattice._backends.torch, on the CPU or the GPU), 'dask'
# (typelattice._backends.dask), 'cupy' (typelattice._backends.cupy, on a
# GPU) and 'xp-numpy' (the implementations generic over a NumPy-compatible
# namespace, on NumPy).
_BACKEND = os.environ.get("TYPELATTICE_TEST_BACKEND", "")
_BACKENDS = (
    "",
    "numpy",
    "counting",
    "torch",
    "torch-cuda",
    "dask",
    "cupy",
    "xp-numpy",
)
if _BACKEND not in _BACKENDS:
    raise SystemExit(
        f"TYPELATTICE_TEST_BACKEND={_BACKEND!r}: give one of "
        f"{', '.join(repr(b) for b in _BACKENDS[2:])}, or 'numpy' (the default)"
    )


def _test_backend() -> Backend | None:
    if _BACKEND == "counting":
        return CountingBackend()
    if _BACKEND == "xp-numpy":
        import numpy as np

        from typelattice._backends import _xp

        return _xp.register(Backend("xp-numpy"), np)
    if _BACKEND == "torch-cuda":
        from typelattice._backends.torch import backend_on

        return backend_on("cuda")
    if _BACKEND in ("torch", "dask", "cupy"):
        module = importlib.import_module(f"typelattice._backends.{_BACKEND}")
        backend: Backend = module.BACKEND
        return backend
    return None


TEST_BACKEND = _test_backend()
COUNTING = TEST_BACKEND if isinstance(TEST_BACKEND, CountingBackend) else None


@pytest.fixture(autouse=True)
def _backend() -> Iterator[None]:
    """Each test under the backend named by TYPELATTICE_TEST_BACKEND."""
    if TEST_BACKEND is None:
        yield
        return
    with contextlib.ExitStack() as scope:
        if _BACKEND == "dask":
            # Each primitive's graph is computed at once, and is tiny: in
            # this thread (a thread pool costs more than the tasks).
            dask = importlib.import_module("dask")
            scope.enter_context(dask.config.set(scheduler="synchronous"))
        scope.enter_context(use(TEST_BACKEND))
        yield


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if COUNTING is not None:
        calls = COUNTING.total()
        kinds = len(COUNTING.calls)
        terminalreporter.write_line(
            f"counting backend: {calls} primitive calls of {kinds} primitives"
        )


@pytest.fixture
def checked_native() -> Iterator[None]:
    """Every result of another library's backend checked against its
    abstract evaluation (the dtype and shape the implementation must
    compute): ``pytestmark = pytest.mark.usefixtures("checked_native")``."""
    from typelattice._tracing import primitive

    primitive.CHECK_NATIVE.append(True)
    yield
    primitive.CHECK_NATIVE.remove(True)
