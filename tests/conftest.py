from __future__ import annotations

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
# force, with the same answers as the NumPy backend's.
# TYPELATTICE_TEST_BACKEND=torch runs them under the PyTorch backend
# (typelattice._backends.torch; torch must be installed): operands are
# converted to tensors, computed by torch and converted back;
# TYPELATTICE_TEST_BACKEND=torch-cuda does so on the GPU.
_BACKEND = os.environ.get("TYPELATTICE_TEST_BACKEND", "")
if _BACKEND not in ("", "numpy", "counting", "torch", "torch-cuda"):
    raise SystemExit(
        f"TYPELATTICE_TEST_BACKEND={_BACKEND!r}: give 'counting', 'torch', "
        "'torch-cuda', or 'numpy' (the default)"
    )
COUNTING = CountingBackend() if _BACKEND == "counting" else None
if _BACKEND == "torch":
    from typelattice._backends.torch import BACKEND as _TORCH

    _IN_FORCE: Backend | None = _TORCH
elif _BACKEND == "torch-cuda":
    from typelattice._backends.torch import backend_on

    _IN_FORCE = backend_on("cuda")
else:
    _IN_FORCE = COUNTING


@pytest.fixture(autouse=True)
def _backend() -> Iterator[None]:
    """Each test under the backend named by TYPELATTICE_TEST_BACKEND."""
    if _IN_FORCE is None:
        yield
        return
    with use(_IN_FORCE):
        yield


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if COUNTING is not None:
        calls = COUNTING.total()
        kinds = len(COUNTING.calls)
        terminalreporter.write_line(
            f"counting backend: {calls} primitive calls of {kinds} primitives"
        )
