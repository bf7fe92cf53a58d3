"""The elementwise functions are written once, on typelattice.lax.

Eagerly (the Python path, as with ``TYPELATTICE_NO_SPEEDUPS=1``), under
``jit`` and under differentiation the same code runs: it binds primitives.
The C path computes the plan's NumPy function, which is the function the
primitive's own implementation calls for those dtypes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import _config, _core
from typelattice._tracing.primitive import Primitive, ShapedArray
from typelattice.numpy import _elementwise, _ufuncs

# Functions that return their operand unchanged for every dtype: nothing
# to compute, so nothing is bound.
RETURNS_ITS_OPERAND = {"positive"}


def _elementwise_functions() -> dict[str, Any]:
    return {
        name: fn
        for name, fn in vars(_ufuncs).items()
        if not name.startswith("_") and hasattr(fn, "_op")
    }


FUNCTIONS = _elementwise_functions()


def _python(fn: Any) -> Any:
    """The Python function behind a C one."""
    return getattr(fn, "__wrapped__", fn)


def _operand(op: _elementwise.Op) -> Any:
    """An operand ``op`` accepts and computes on (not returned as it is)."""
    for dtype in ("float32", "complex64", "int32", "bool"):
        kind = np.dtype(dtype).kind
        if kind in op.identity_kinds:
            continue
        try:
            _elementwise.compute_dtype(
                op.name, op.accept, op.to, np.dtype(dtype), False
            )
        except (TypeError, ValueError):
            continue
        if op.name in ("conj", "real", "imag", "angle") and kind != "c":
            continue  # (real input: the value itself, or zeros)
        return tnp.asarray(np.array([1, 2, 3]).astype(dtype))
    raise AssertionError(f"no operand for {op}")


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_the_python_path_binds_primitives(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fn = FUNCTIONS[name]
    op: _elementwise.Op = fn._op
    bound: list[str] = []
    bind = Primitive.bind

    def recording(self: Primitive, *args: Any, **params: Any) -> Any:
        bound.append(self.name)
        return bind(self, *args, **params)

    monkeypatch.setattr(Primitive, "bind", recording)
    x = _operand(op)
    out = _python(fn)(*[x] * op.nin)
    if name in RETURNS_ITS_OPERAND:
        assert out is x and not bound
    else:
        assert bound, f"{name} bound no primitive"


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_the_plan_function_is_the_primitives(name: str) -> None:
    """A plan's NumPy function (what the C path calls) is the plain function
    of the one primitive the Python path binds, for every compute dtype."""
    op: _elementwise.Op = FUNCTIONS[name]._op
    state = _config.current()
    for dtype in ("bool", "int8", "uint16", "int32", "float16", "float32", "complex64"):
        key = _core.aval(np.dtype(dtype), False)
        try:
            plan = _elementwise.build_plan(op, (key,) * op.nin, state)
        except (TypeError, ValueError):
            continue
        prim = op.primitive(plan.cd)
        if plan.fn is None:
            continue
        assert prim is not None and prim.fast is not None, (name, dtype)
        aval = ShapedArray((), plan.cd, False)
        assert plan.fn is prim.fast(*[aval] * op.nin, **op.params), (name, dtype)


def test_jit_records_primitives() -> None:
    f = tl.jit(lambda x: tnp.tanh(x) * 2 + tnp.hypot(x, 1.0))
    text = str(f.program(tnp.zeros(3, "float32")))
    assert "lax.tanh" in text and "lax.mul" in text and "lax.sqrt" in text


def test_a_checked_conversion_is_checked_when_a_program_runs() -> None:
    f = tl.jit(lambda x, k: x * k)
    x = tnp.asarray([1, 2], dtype="int8")
    np.testing.assert_array_equal(np.asarray(f(x, 3)), [3, 6])
    with pytest.raises(OverflowError, match="multiply"):
        f(x, 300)


def test_piecewise_constant_functions_have_zero_derivatives() -> None:
    x = tnp.asarray([-1.5, 0.25, 2.5], dtype="float32")
    for fn in (tnp.floor, tnp.ceil, tnp.trunc, tnp.rint, tnp.sign, tnp.round):
        g = tl.grad(lambda v, fn=fn: fn(v).sum())(x)
        np.testing.assert_array_equal(np.asarray(g), [0, 0, 0])
    g = tl.grad(lambda v: tnp.floor_divide(v, 2.0).sum())(x)
    np.testing.assert_array_equal(np.asarray(g), [0, 0, 0])
