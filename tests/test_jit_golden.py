"""jit, eval_shape and the size-taking functions at their edges, replayed
against what JAX did: ``golden/jit_edges.json`` was recorded by
``golden/make_jit_golden.py`` (which holds the cases), so no JAX is needed.

Covered: which static_argnums/static_argnames JAX accepts for each kind of
signature (and when), the Python scalar arguments jit and eval_shape refuse,
nonzero/where/argwhere/flatnonzero/compress with every kind of ``size=``,
and arange's None forms, eagerly, under jit and in eval_shape.
"""

from __future__ import annotations

import json
import math
import types
from pathlib import Path
from typing import Any

import pytest

import typelattice as tl
import typelattice.numpy as tnp
from golden.make_jit_golden import CASES, outcome

GOLDEN: dict[str, Any] = json.loads(
    (Path(__file__).parent / "golden" / "jit_edges.json").read_text()
)["cases"]

NAMESPACE = types.SimpleNamespace(
    np=tnp, jit=tl.jit, eval_shape=tl.eval_shape, enable_x64=tl.enable_x64
)

# Where typelattice decides differently, on purpose: the outcome it gives.
DIFFERENCES: dict[str, str] = {
    # A Python float argument that would become inf in float32 is refused
    # (docs/semantics.md, "Data safety"); JAX passes inf.
    "jit x * 1e39": "OverflowError",
    "eval_shape x * 1e39": "OverflowError",
    "jit x * complex(1e39, 0)": "OverflowError",
    "eval_shape x * complex(1e39, 0)": "OverflowError",
}


def _same_values(mine: Any, theirs: Any) -> bool:
    if isinstance(theirs, list):
        return (
            isinstance(mine, list)
            and len(mine) == len(theirs)
            and all(_same_values(a, b) for a, b in zip(mine, theirs, strict=True))
        )
    if isinstance(theirs, float) and math.isnan(theirs):
        return isinstance(mine, float) and math.isnan(mine)
    return bool(mine == theirs)


def test_every_case_is_recorded() -> None:
    assert sorted(GOLDEN) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_jax(name: str) -> None:
    mine = outcome(CASES[name], NAMESPACE)
    theirs = GOLDEN[name]
    if name in DIFFERENCES:
        assert "value" in theirs, "JAX refuses too: drop the listed difference"
        assert mine.get("raises", [None])[0] == DIFFERENCES[name], mine
        return
    if "raises" in theirs:
        assert mine.get("raises", [None])[0] == theirs["raises"][0], mine
        return
    assert "value" in mine, mine
    assert len(mine["value"]) == len(theirs["value"])
    for got, want in zip(mine["value"], theirs["value"], strict=True):
        assert got[:3] == want[:3], (got, want)  # dtype, weak flag, shape
        assert _same_values(got[3], want[3]), (got, want)
