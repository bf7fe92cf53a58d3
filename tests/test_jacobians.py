"""jacfwd, jacrev and hessian against JAX's results (tests/golden/
jacobians.json, recorded by tests/golden/make_jacobian_golden.py): every
leaf's path, shape, dtype, weak flag and values; and the two modes agree."""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import tree_util

sys.path.insert(0, str(pathlib.Path(__file__).parent / "golden"))
import make_jacobian_golden as rec  # noqa: E402

GOLDEN = json.loads(
    (pathlib.Path(__file__).parent / "golden" / "jacobians.json").read_text()
)["results"]


def run(name: str) -> Any:
    how, fun, args, options = rec.CASES[name]
    f = eval(fun, {"xp": tnp})
    values = [eval(a, {"xp": tnp}) for a in args]
    return getattr(tl, how)(f, **options)(*values)


@pytest.mark.parametrize("name", sorted(rec.CASES))
def test_as_jax(name: str) -> None:
    got = rec.leaves_of(tree_util, run(name))
    want = GOLDEN[name]
    assert [(g["path"], g["shape"], g["dtype"], g["weak"]) for g in got] == [
        (w["path"], w["shape"], w["dtype"], w["weak"]) for w in want
    ]
    for g, w in zip(got, want, strict=True):
        tol = 1e-2 if w["dtype"] == "bfloat16" else 1e-5
        np.testing.assert_allclose(g["values"], w["values"], rtol=tol, atol=tol)


def test_under_jit_as_eagerly() -> None:
    f = tl.jit(tl.jacrev(lambda x: tnp.tanh(x) * x.sum()))
    x = tnp.arange(3.0)
    np.testing.assert_allclose(
        np.asarray(f(x)),
        np.asarray(tl.jacfwd(lambda x: tnp.tanh(x) * x.sum())(x)),
        rtol=1e-6,
    )


def test_integer_input_is_refused_with_the_fix() -> None:
    with pytest.raises(TypeError, match="allow_int"):
        tl.jacrev(lambda x: x * 2.0)(tnp.arange(3))
    with pytest.raises(TypeError, match="real-valued outputs"):
        tl.jacrev(lambda x: (x > 0).astype("int32"))(tnp.arange(3.0))
