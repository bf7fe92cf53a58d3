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

import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, compare_recorded, recorder
from typelattice import lax

rec = recorder("make_control_golden.py")
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "control.json").read_text())
CASES = rec.cases()


# Relative tolerances per dtype name (the narrow floats round each step).
def test_the_recorded_cases_are_the_recorders() -> None:
    assert sorted(GOLDEN["cases"]) == sorted(CASES)


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
    compare_recorded(got, want, name)
