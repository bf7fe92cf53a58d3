"""typelattice.vmap of typelattice.lax against ``jax.vmap`` of jax.lax:
dtype, weak flag, shape and values of every recorded call.

``golden/vmap.json`` was recorded from JAX 0.10 by
``golden/make_vmap_golden.py``, which defines the batches (the functions
and operands are those of ``make_lax_golden.py``): each array operand
batched along the first axis, along the last, or only the first operand
batched. A final test checks that the recorded calls batch every primitive
that the lax golden reaches.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from test_lax_golden import mismatch
from typelattice import lax
from typelattice._lax._elementwise import convert_element_type_p
from typelattice._lax._primitive import PRIMITIVES, Primitive

rec = recorder("make_vmap_golden.py")
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "vmap.json").read_text())
MAX_REPORTED = 20

# Primitive name -> number of batching rules run by the replays.
BATCHED: dict[str, int] = {}


def make(values: np.ndarray[Any, Any], weak: bool) -> Any:
    x = tnp.asarray(values)
    if weak:
        x = convert_element_type_p.bind(x, new_dtype=x.dtype, weak_type=True)
    return x


@pytest.fixture
def counted_rules(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Count the batching rules the replays run."""
    for prim in PRIMITIVES.values():
        rule = prim.batch
        if rule is None:
            continue

        def counting(
            *args: Any, _p: Primitive = prim, _r: Any = rule, **kw: Any
        ) -> Any:
            BATCHED[_p.name] = BATCHED.get(_p.name, 0) + 1
            return _r(*args, **kw)

        monkeypatch.setattr(prim, "batch", counting)
    yield


CASES = [
    pytest.param(mode, name, id=f"{mode}-{name}")
    for mode, body in GOLDEN["modes"].items()
    for name in body
]


@pytest.mark.usefixtures("counted_rules")
@pytest.mark.parametrize(("mode", "name"), CASES)
def test_vmap_matches_jax(mode: str, name: str) -> None:
    case = rec.CASES[name]
    problems = []
    with tl.enable_x64(rec.MODES[mode]), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in GOLDEN["modes"][mode][name]:
            operands = [rec.lax_rec.make_operand(tnp, label) for label in row["args"]]
            got = rec.outcome(
                lambda: rec.call(tl.vmap, lax, case, operands, row["variant"], make)  # noqa: B023
            )
            why = mismatch(row["jax"], got)
            if why:
                problems.append(f"{row['variant']} ({', '.join(row['args'])}): {why}")
    if problems:
        shown = "\n".join(problems[:MAX_REPORTED])
        pytest.fail(
            f"{len(problems)} vmapped calls differ from JAX in mode {mode} "
            f"({case.expr}):\n{shown}",
            pytrace=False,
        )


def test_golden_has_every_variant() -> None:
    rows = [r for body in GOLDEN["modes"].values() for rs in body.values() for r in rs]
    assert {r["variant"] for r in rows} == set(rec.VARIANTS)
    assert len(rows) > 1500
