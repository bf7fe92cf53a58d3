"""Functions with custom derivative rules against JAX's results.

``golden/custom.json`` was recorded from JAX 0.10 by
``golden/make_custom_golden.py``, which defines the cases: the examples
of JAX's guide to custom derivative rules, each under ``grad``, ``jit``,
``jvp``, ``vjp`` and their nestings, and the errors of broken rules. Here
the same cases run with typelattice: every result has JAX's dtype, weak
flag and shape exactly and its values within float32 rounding (NaN where
JAX gives NaN); every error has JAX's class and its message begins as
JAX's does.

One difference is deliberate: a ``bwd`` rule giving a cotangent of
another dtype than its argument's (float16 for a float32 argument) is
refused with a ValueError, where JAX returns a gradient of the rule's
dtype: a gradient has its argument's dtype. And ``jvp`` of a function
whose rule computes on Python floats gives weak float32 arrays where JAX
gives the Python floats themselves.
"""

from __future__ import annotations

import json
import math
import types
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice.custom_derivatives import SymbolicZero

rec = recorder("make_custom_golden.py")
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "custom.json").read_text())

LIB = types.SimpleNamespace(
    np=tnp,
    custom_jvp=tl.custom_jvp,
    custom_vjp=tl.custom_vjp,
    grad=tl.grad,
    jit=tl.jit,
    jvp=tl.jvp,
    vjp=tl.vjp,
    value_and_grad=tl.value_and_grad,
    SymbolicZero=SymbolicZero,
)

# (case, result) -> what typelattice gives instead, and why (see above).
DIFFERENT: dict[tuple[str, str], Any] = {
    ("errors", "bwd_wrong_dtype"): [
        "!",
        "ValueError",
        "Custom VJP bwd rule must produce an output with the same type as the "
        "args tuple of the primal function, but at output[1] the bwd rule "
        "produced an output of type float16[] corresponding to an input of "
        "type float32[], so the dtypes do not match",
    ],
    # JAX's jvp gives the rule's Python floats back as they are; typelattice
    # gives arrays (weak, as Python scalars become).
    ("nondiff_functions", "app_jvp"): [["w:f4", [], [27.0]], ["w:f4", [], [2.0]]],
}


def _prefix(message: str) -> str:
    """What of JAX's message typelattice's begins with: up to the part
    that shows values (JAX's tree structures, the rule's output)."""
    for cut in (" but got ", " but at "):
        if cut in message:
            return message[: message.index(cut)]
    return message


def compare(got: Any, want: Any, where: str) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and set(got) == {"py"}, where
        assert got["py"] == pytest.approx(want["py"], rel=1e-6), where
        return
    if want and want[0] == "!":
        assert got[:2] == want[:2], f"{where}: {got}"
        assert got[2].startswith(_prefix(want[2])), f"{where}: {got[2]}"
        return
    if want and isinstance(want[0], list | dict):
        assert len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            compare(g, w, f"{where}[{k}]")
        return
    code, shape, values = want
    assert got[:2] == [code, shape], where
    expected = np.array([math.nan if v is None else v for v in values])
    np.testing.assert_allclose(
        np.array([math.nan if v is None else v for v in got[2]]),
        expected,
        rtol=2e-6 if code.endswith(("f4", "f8")) else 1e-3,
        atol=1e-7,
        err_msg=where,
    )


@pytest.mark.parametrize("name", list(rec.CASES))
def test_results_are_jaxs(name: str) -> None:
    want = GOLDEN["cases"][name]
    got = rec.run_case(LIB, name)
    assert set(got) == set(want)
    for key, expected in want.items():
        compare(got[key], DIFFERENT.get((name, key), expected), f"{name}.{key}")


def test_every_case_is_recorded() -> None:
    assert set(GOLDEN["cases"]) == set(rec.CASES)
