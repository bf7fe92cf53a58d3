"""typelattice.lax against the results jax.lax gives: dtype, weak flag,
shape and values, or the class of the exception raised.

``golden/lax_ops.json`` was recorded from JAX 0.10 by
``golden/make_lax_golden.py``, which also defines the operands and the calls
(see its docstring). Every recorded call is made here on typelattice.lax.
Where a Python scalar meets arrays of a dtype that holds it, the file's
``alt`` result (JAX with the scalar given that dtype) is expected instead of
JAX's TypeError: the one deliberate difference, documented in docs/lax.md.

While the calls run, every primitive's binding is checked: the dtype and
shape its eager implementation computes must be the ones its abstract
evaluation announced. A final test checks that the recorded calls reach
every primitive, so each one's rules are exercised.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import lax
from typelattice._lax._primitive import PRIMITIVES, Primitive, ShapedArray

MAX_REPORTED = 20


def _recorder() -> ModuleType:
    return recorder("make_lax_golden.py")


rec = _recorder()
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "lax_ops.json").read_text())

# Relative and absolute tolerances per result dtype: a few units in the last
# place of the narrow floats; NumPy's and XLA's float32 math functions differ
# by some ulps too (and JAX's lgamma(1.0) is 4.8e-7, not 0).
TOLERANCE: dict[str, tuple[float, float]] = {
    "bf": (1.6e-2, 1e-2),
    "f2": (2e-3, 1e-3),
    "f4": (3e-5, 2e-6),
    "c8": (3e-5, 2e-6),
    "f8": (1e-12, 1e-14),
    "c16": (1e-12, 1e-14),
}

# Primitive name -> number of bindings checked; filled by the replays.
BOUND: dict[str, int] = {}
_REPLAYED: dict[tuple[str, str], list[tuple[dict[str, Any], Any]]] = {}


def _check_binding(
    prim: Primitive, args: tuple[Any, ...], params: dict[str, Any], out: Any
) -> None:
    assert prim.abstract_eval is not None
    avals = [ShapedArray(a.shape, a.dtype, a.weak_type) for a in args]
    announced = prim.abstract_eval(*avals, **params)
    results = out if prim.multiple_results else (out,)
    expected = announced if prim.multiple_results else (announced,)
    assert len(results) == len(expected)
    for got, want in zip(results, expected, strict=True):
        assert (got.shape, got.dtype, got.weak_type) == (
            want.shape,
            want.dtype,
            want.weak_type,
        ), f"{prim.name}: implementation gave {got.dtype}{got.shape}, not {want}"
    BOUND[prim.name] = BOUND.get(prim.name, 0) + 1


@pytest.fixture
def checked_bindings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    original = Primitive.bind

    def bind(self: Primitive, *args: Any, **params: Any) -> Any:
        out = original(self, *args, **params)
        _check_binding(self, args, params, out)
        return out

    monkeypatch.setattr(Primitive, "bind", bind)
    yield


def replay(mode: str, name: str) -> list[tuple[dict[str, Any], Any]]:
    """Each recorded row of the case with typelattice's outcome (cached)."""
    key = (mode, name)
    if key not in _REPLAYED:
        case = rec.CASES[name]
        out = []
        with tl.enable_x64(rec.MODES[mode]), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for row in GOLDEN["modes"][mode][name]:
                operands = [rec.make_operand(tnp, label) for label in row["args"]]
                out.append((row, rec.outcome(lax, case, operands)))
        _REPLAYED[key] = out
    return _REPLAYED[key]


def _close(code: str, want: list[Any], got: list[Any]) -> bool:
    kind = code.removeprefix("w:")
    if kind not in TOLERANCE:
        return want == got
    complex_ = kind.startswith("c")
    a = np.array([complex(*v) if complex_ else v for v in want])
    b = np.array([complex(*v) if complex_ else v for v in got])
    rtol, atol = TOLERANCE[kind]
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


def mismatch(want: Any, got: Any) -> str | None:
    """Why ``got`` (an outcome) is not the encoded ``want``, or None."""
    if isinstance(want, str):
        if isinstance(got, BaseException):
            if want[1:] in rec.builtin_bases(got):
                return None
            return f"JAX {want}, got {type(got).__name__}: {got}"
        return f"JAX {want}, got {rec.encode(got)[:2]}"
    if isinstance(got, BaseException):
        return f"JAX {want[:2]}, got {type(got).__name__}: {str(got)[:120]}"
    if isinstance(want[0], list):  # a tuple or list of results
        if not isinstance(got, list | tuple) or len(got) != len(want):
            return f"JAX {len(want)} results, got {got!r}"
        for w, g in zip(want, got, strict=True):
            why = mismatch(w, g)
            if why:
                return why
        return None
    code, shape, values = rec.encode(got)
    if (code, shape) != (want[0], want[1]):
        return f"JAX {want[0]}{want[1]}, got {code}{shape}"
    if not _close(code, want[2], values):
        return f"values: JAX {want[2]}, got {values}"
    return None


CASES = [
    pytest.param(mode, name, id=f"{mode}-{name}")
    for mode, body in GOLDEN["modes"].items()
    for name in body
]


def test_golden_file_matches_the_cases() -> None:
    """The recorded file is up to date with the calls replayed here."""
    assert list(GOLDEN["modes"]) == list(rec.MODES)
    assert GOLDEN["cases"] == {name: c.expr for name, c in rec.CASES.items()}
    for mode, body in GOLDEN["modes"].items():
        assert list(body) == list(rec.CASES)
        for name, rows in body.items():
            combos = [tuple(row["args"]) for row in rows]
            assert combos == [tuple(c) for c in rec.CASES[name].combos(mode)]


def test_alt_results_are_only_python_scalar_calls_jax_refuses() -> None:
    """The deliberate difference is confined to calls with a Python scalar
    (not bool) that JAX refused with a TypeError."""
    alt = 0
    for body in GOLDEN["modes"].values():
        for rows in body.values():
            for row in rows:
                if "alt" in row:
                    alt += 1
                    assert row["jax"] == "!TypeError"
                    assert set(row["args"]) & {"py:int", "py:float", "py:complex"}
    assert alt > 100  # e.g. lax.add(int8, 2) in every mode


@pytest.mark.usefixtures("checked_bindings")
@pytest.mark.parametrize(("mode", "name"), CASES)
def test_case_matches_jax(mode: str, name: str) -> None:
    problems = []
    for row, got in replay(mode, name):
        why = mismatch(row.get("alt", row["jax"]), got)
        if why:
            problems.append(f"{name}({', '.join(row['args'])}): {why}")
    if problems:
        shown = "\n".join(problems[:MAX_REPORTED])
        pytest.fail(
            f"{len(problems)} calls differ from JAX in mode {mode} "
            f"({rec.CASES[name].expr}):\n{shown}",
            pytrace=False,
        )


@pytest.mark.usefixtures("checked_bindings")
def test_every_primitive_is_reached() -> None:
    for mode, body in GOLDEN["modes"].items():
        for name in body:
            replay(mode, name)
    assert BOUND, "no binding was checked"
    missing = sorted(set(PRIMITIVES) - set(BOUND))
    # Bound only by differentiation rules (checked in test_lax_rules.py):
    # the sum of tangents, the derivatives of digamma and of window maxima
    # (select_and_gather_add, select_and_scatter_add); the linear
    # algebra, checked against JAX's results in test_lax_linalg.py; and
    # check_index, typelattice.numpy's index check, which jax.lax lacks
    # (tests/test_shape_on_lax.py); and the primitives whose parameter is a
    # computation, bound by the ufunc methods (tests/test_ufunc_methods_on_lax.py);
    # the collectives, bound under a named vmap (tests/test_vmap.py),
    # and the control flow primitives, whose parameters are functions
    # (tests/test_control_golden.py).
    assert missing == [
        "add_any",
        "axis_index",
        "check_index",
        "cond",
        "cumulative_reduce",
        "pmax",
        "pmin",
        "polygamma",
        "psum",
        "qr",
        "reduce",
        "reduce_segments",
        "scan",
        "scatter_apply",
        "scatter_combine",
        "select_and_gather_add",
        "select_and_scatter_add",
        "triangular_solve",
        "while",
    ]
