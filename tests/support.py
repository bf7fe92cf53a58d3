"""Shared test helpers: the type universe, the input forms of each type,
arrays of a dtype and the check of a result, and the golden recorder of the
namespace tests."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import numpy as np

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import _dtypes

STRONG = list(_dtypes.ALL_DTYPES)
WEAK = [int, float, complex]
NODES: list[Any] = [*STRONG, *WEAK]
MODES = [(x64, promo) for x64 in (False, True) for promo in ("standard", "strict")]
MODE_IDS = [f"{'x64' if x64 else 'x32'}-{promo}" for x64, promo in MODES]


def run_without_speedups(code: str) -> list[str]:
    """The lines ``code`` prints, run by this Python in a new process with
    ``TYPELATTICE_NO_SPEEDUPS=1`` (the pure-Python paths, C extension off);
    fails the test with the process's errors if it fails."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "TYPELATTICE_NO_SPEEDUPS": "1"},
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def arr(values: Any, dtype: str = "int32") -> tnp.Array:
    """A strong Array of ``dtype`` holding ``values``."""
    return tnp.asarray(np.asarray(values, dtype=dtype))


def check(x: Any, dtype: str, weak: bool, values: Any = None) -> None:
    """``x`` is a concrete Array of ``dtype`` and weak flag ``weak`` (and
    holds ``values`` when given)."""
    assert isinstance(x, tnp.Array), repr(x)
    assert not isinstance(x, tl.Tracer), repr(x)
    assert (x.dtype, x.weak_type) == (np.dtype(dtype), weak), repr(x)
    if values is not None:
        np.testing.assert_array_equal(np.asarray(x), np.asarray(values, dtype=dtype))


class WeakCarrier:
    """A stand-in for an array that carries ``weak_type`` (as JAX's do)."""

    def __init__(self, dtype: Any, weak_type: bool = True) -> None:
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type

    def __repr__(self) -> str:
        return f"WeakCarrier({self.dtype}, weak_type={self.weak_type})"


def forms(node: Any) -> list[Any]:
    """Every way a user can pass ``node`` to result_type."""
    if node in WEAK and isinstance(node, type):
        value = {int: 3, float: 2.5, complex: 1j}[node]
        return [node, value]
    dt = np.dtype(node)
    out: list[Any] = [dt, dt.name, dt.type, np.zeros(2, dt), np.zeros((), dt)[()]]
    out.append(getattr(tnp, dt.name))  # typelattice.numpy's dtype object
    if dt == np.dtype(bool):
        out.append(True)
    return out


GOLDEN_DIR = Path(__file__).parent / "golden"


def recorder(script: str) -> ModuleType:
    """``golden/<script>``, a recording script, imported once: the operands,
    cases and encoding that its recorded JAX (or Flax) results refer to."""
    name = f"_typelattice_recorder_{script.removesuffix('.py')}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, GOLDEN_DIR / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def golden_recorder() -> ModuleType:
    """``golden/make_numpy_golden.py`` (see :func:`recorder`)."""
    return recorder("make_numpy_golden.py")


T = TypeVar("T")


def with_small_stack(fn: Callable[[], T]) -> T:
    """``fn()`` run with a recursion limit of 100 frames, in a thread of its
    own (whose stack starts nearly empty): a recursive walk of a graph of
    a thousand nodes raises RecursionError."""
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(100)
        try:
            results.append(fn())
        except BaseException as err:  # re-raised in the caller's thread
            errors.append(err)
        finally:
            sys.setrecursionlimit(limit)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return results[0]


def chain_edges(n: int) -> dict[str, list[str]]:
    return {f"n{i}": [f"n{i + 1}"] for i in range(n - 1)}


# The namespace functions written on ``typelattice.lax``: no shape rule, no
# lowering; their primitives accept tracers (tests/test_shape_on_lax.py
# checks each under jit, eval_shape and grad).
ON_LAX: frozenset[str] = frozenset(
    {
        *("reshape", "ravel", "transpose", "permute_dims", "matrix_transpose"),
        *("moveaxis", "swapaxes", "expand_dims", "squeeze", "broadcast_to"),
        *("broadcast_arrays", "broadcast_shapes", "atleast_1d", "atleast_2d"),
        *("atleast_3d", "flip", "roll", "tile", "repeat", "concatenate"),
        *("concat", "stack", "hstack", "vstack", "split", "diagonal", "compress"),
        *("take", "sort", "argsort", "_getitem", "_gather", "_scatter"),
    }
)


def program_equations(program: Any) -> list[str]:
    """The equation lines of a jitted function's program
    (``tl.jit(f).program(*args)``), stripped."""
    lines = str(program).splitlines()
    return [line.strip() for line in lines[1:-1]]


def same_array(got: Any, want: Any) -> None:
    """``got`` has ``want``'s dtype, weak flag, shape and values."""
    assert (got.dtype, got.weak_type, got.shape) == (
        want.dtype,
        want.weak_type,
        want.shape,
    )
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


#: How far a recorded float may be from JAX's, by dtype (control flow's
#: recorded cases, eager and under vmap).
RECORDED_TOLERANCE = {"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-6}


def compare_recorded(got: Any, want: Any, where: str) -> None:
    """``got`` against a recorded result ``want``: None, a list of results,
    or ``[dtype, weak flag, shape, values]`` (values within
    :data:`RECORDED_TOLERANCE`); ``where`` names it in failures."""
    if want is None:
        assert got is None, where
        return
    if isinstance(want[0], list) or want == []:
        assert isinstance(got, tuple | list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            compare_recorded(g, w, f"{where}[{i}]")
        return
    dtype, weak, shape, values = want
    assert (str(got.dtype), bool(got.weak_type), list(got.shape)) == (
        dtype,
        weak,
        shape,
    ), where
    tol = RECORDED_TOLERANCE.get(dtype, 0.0)
    np.testing.assert_allclose(
        np.asarray(got).astype(np.float64).ravel(), values, rtol=tol, err_msg=where
    )


@contextlib.contextmanager
def counting_conversions(module: ModuleType) -> Iterator[list[int]]:
    """The calls of the conversion (``convert_element_type``) of the torch
    backend ``module`` (``typelattice._backends.torch``), counted while the
    scope is open: the counter stands as the backend's own implementation,
    so the conversions inside torch's kernels that stand for it stay in
    force (programs and plans made inside the scope call it)."""
    from typelattice._lax._primitive import PRIMITIVES

    backend, convert = module.BACKEND, PRIMITIVES["convert_element_type"]
    calls = [0]
    original = backend.impl(convert)
    made = module._MADE[backend]

    def counted(*args: Any, **params: Any) -> Any:
        calls[0] += 1
        return original(*args, **params)

    backend.def_impl(convert, counted)
    made[convert] = counted
    try:
        yield calls
    finally:
        backend.def_impl(convert, original)
        made[convert] = original
