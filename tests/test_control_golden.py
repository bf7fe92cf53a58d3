"""typelattice.lax's control flow against what jax.lax gives: for carries
and branch results of mixed dtypes (int8, uint8, bfloat16, float16,
float32, weak scalars), the results' dtypes, weak flags, shapes and values,
or the exceptions' classes and messages.

``golden/control.json`` was recorded from JAX 0.10 by
``golden/make_control_golden.py``, which builds the calls from a namespace
(see its docstring); each is made here eagerly and under ``jit``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import lax

rec = recorder("make_control_golden.py")
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "control.json").read_text())
CASES = rec.cases()

# Relative tolerances per dtype name (the narrow floats round each step).
TOLERANCE = {"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-6}


def test_the_recorded_cases_are_the_recorders() -> None:
    assert sorted(GOLDEN["cases"]) == sorted(CASES)


def _compare(got: Any, want: Any, where: str) -> None:
    if want is None:
        assert got is None, where
        return
    if isinstance(want[0], list) or want == []:
        assert isinstance(got, tuple | list) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _compare(g, w, f"{where}[{i}]")
        return
    dtype, weak, shape, values = want
    assert (str(got.dtype), bool(got.weak_type), list(got.shape)) == (
        dtype,
        weak,
        shape,
    ), where
    tol = TOLERANCE.get(dtype, 0.0)
    np.testing.assert_allclose(
        np.asarray(got).astype(np.float64).ravel(), values, rtol=tol, err_msg=where
    )


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_control_flow_matches_jax(name: str, jitted: bool) -> None:
    want = GOLDEN["cases"][name]
    call = CASES[name]

    def run() -> Any:
        return call(lax, tnp)

    if isinstance(want, dict):
        with pytest.raises(Exception) as info:
            tl.jit(run)() if jitted else run()
        assert rec.encode_error(info.value) == want
        return
    got = tl.jit(run)() if jitted else run()
    _compare(got, want, name)
