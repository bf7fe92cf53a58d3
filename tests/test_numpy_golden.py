"""typelattice.numpy against the dtypes and weak flags that jax.numpy gives.

``golden/numpy_ops.json`` was recorded from JAX by
``golden/make_numpy_golden.py``, which also defines the operands, the calls
and the encoding (see its docstring). For every mode, op and combination of
operands the same call is made here and must give JAX's result dtype and
``weak_type``; where JAX raised, the call must raise the recorded built-in
exception class or a subclass of it (``!ValueError`` is matched by
``TypePromotionError``, for example).

``TYPELATTICE_GOLDEN_MODULE=jax.numpy`` replays the data on jax.numpy itself
(in an environment that has JAX): every case must pass, which checks this
harness and the recorded file. CI does not install JAX and tests
typelattice.numpy.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import typelattice as tl
from support import GOLDEN_DIR, golden_recorder

MODULE = os.environ.get("TYPELATTICE_GOLDEN_MODULE", "typelattice.numpy")
MAX_REPORTED = 30


rec = golden_recorder()
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "numpy_ops.json").read_text())

xnp = importlib.import_module(MODULE)


@contextmanager
def configured(mode: str) -> Iterator[None]:
    """The 64-bit and promotion settings of ``mode``, for the module tested."""
    x64, promotion = rec.MODES[mode]
    if MODULE.startswith("jax"):
        import jax

        with jax.enable_x64(x64), jax.numpy_dtype_promotion(promotion):
            yield
    else:
        with tl.enable_x64(x64), tl.dtype_promotion(promotion):
            yield


def accepted(expected: str, got: Any) -> bool:
    if isinstance(got, BaseException):
        return expected.startswith("!") and expected[1:] in rec.builtin_bases(got)
    return rec.encode(got) == expected


def describe(got: Any) -> str:
    if isinstance(got, BaseException):
        message = str(got).splitlines()[0] if str(got) else ""
        if len(message) > 100:
            message = message[:97] + "..."
        return f"{type(got).__name__}: {message}"
    return rec.encode(got)


def deliberate_difference(mode: str, name: str, index: int, want: str) -> str | None:
    """What typelattice.numpy gives instead of JAX's answer, where the README
    ("Differences from JAX") documents a deliberate difference, else None.

    ``dot`` of an array with a weak scalar wider than their promoted type
    (e.g. uint8 with a Python int) is that promoted type, as ``multiply``
    gives: JAX 0.10 raises a TypeError from its ``preferred_element_type``
    check there. These are exactly the calls where JAX's ``dot`` raises and
    its ``multiply`` does not.
    """
    if name == "dot" and want == "!TypeError":
        product = GOLDEN["modes"][mode]["results"]["multiply"][index]
        if not product.startswith("!"):
            return str(product)
    return None


CASES = [
    pytest.param(mode, name, id=f"{mode}-{name}")
    for mode, body in GOLDEN["modes"].items()
    for name in body["results"]
]


def test_golden_file_matches_the_op_table() -> None:
    """The recorded file is up to date with the calls replayed here."""
    assert list(GOLDEN["modes"]) == list(rec.MODES)
    for mode, body in GOLDEN["modes"].items():
        assert body["operands"] == rec.operand_labels(mode)
        assert list(body["results"]) == rec.ops_of_mode(mode)
    for name, op in rec.OPS.items():
        assert GOLDEN["ops"][name]["expr"] == op.expr
        assert GOLDEN["ops"][name]["arity"] == op.arity


@pytest.mark.parametrize(("mode", "name"), CASES)
def test_op_matches_jax(mode: str, name: str) -> None:
    op = rec.OPS[name]
    expected = GOLDEN["modes"][mode]["results"][name]
    calls = rec.run_mode(xnp, configured, mode, op)
    assert len(calls) == len(expected), "golden file out of date: rerun its script"
    mismatches = []
    for index, ((combo, got), want) in enumerate(zip(calls, expected, strict=True)):
        if accepted(want, got):
            continue
        instead = deliberate_difference(mode, name, index, want)
        if instead is not None:
            if accepted(instead, got):
                continue
            want = f"{want} (typelattice: {instead})"
        mismatches.append(
            f"{name}({', '.join(combo)}): JAX {want}, got {describe(got)}"
        )
    if mismatches:
        shown = "\n".join(mismatches[:MAX_REPORTED])
        more = len(mismatches) - MAX_REPORTED
        tail = f"\n... and {more} more" if more > 0 else ""
        pytest.fail(
            f"{len(mismatches)} of {len(calls)} calls differ from JAX "
            f"in mode {mode} ({op.expr}):\n{shown}{tail}",
            pytrace=False,
        )
