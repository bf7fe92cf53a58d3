"""jit gives what eager evaluation gives, for every recorded namespace call.

Every op of ``golden/make_numpy_golden.py`` (the grid of dtypes, weak arrays
and Python scalars that the golden tests replay against JAX), in every mode,
is run eagerly and under :func:`typelattice.jit`, with the operands passed
as arguments (Python scalars become weak tracers): the dtype, the weak flag
and the values must agree, and a call that raises eagerly must raise the
same exception class under jit. eval_shape gives the eager call's shapes,
dtypes and weak flags (and exception classes) on the same grid.

The differences are JAX's own, in ``power`` with a weak integer scalar
exponent (a Python int, or a weak int array). Eagerly the exponent is a
concrete integer: the result keeps the base's weak flag, and a bool base
becomes int32. Under jit the exponent is a traced weak int: a weak integer
base gives a strong int, and a bool base the default int (int64 with
x64). jax.jit does the same (checked by ``test_power_differences_are_jax_own``
when JAX is installed).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import golden_recorder

rec = golden_recorder()


def _outcome(fn: Any, operands: list[Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*operands)
        except Exception as exc:
            return exc


def _leaves(result: Any) -> list[Any]:
    if isinstance(result, tuple | list):
        return [leaf for item in result for leaf in _leaves(item)]
    return [result]


def _same(eager: Any, jitted: Any) -> str | None:
    """Why ``jitted`` differs from ``eager``, or None."""
    if isinstance(eager, BaseException) or isinstance(jitted, BaseException):
        if isinstance(eager, BaseException) and isinstance(jitted, type(eager)):
            return None
        return f"eager {eager!r:.120}, jit {jitted!r:.120}"
    a, b = _leaves(eager), _leaves(jitted)
    if len(a) != len(b):
        return f"eager gave {len(a)} arrays, jit {len(b)}"
    for x, y in zip(a, b, strict=True):
        if not isinstance(y, tnp.Array):
            return f"jit gave {type(y).__name__}"
        if (x.dtype, x.weak_type, x.shape) != (y.dtype, y.weak_type, y.shape):
            return f"eager {x!r}, jit {y!r}"
        if not np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True):
            return f"values: eager {x!r}, jit {y!r}"
    return None


def _jax_difference(name: str, combo: tuple[str, ...]) -> bool:
    if name != "power":
        return False
    base, exponent = combo
    weak_int_base = base in ("w:i", "py:int") and exponent == "py:bool"
    return (
        exponent in ("w:i", "py:int")
        and base in ("w:i", "py:int", "b1", "py:bool")
        or weak_int_base
    )


CASES = [
    pytest.param(mode, name, id=f"{mode}-{name}")
    for mode in rec.MODES
    for name in rec.ops_of_mode(mode)
]


@pytest.mark.parametrize(("mode", "name"), CASES)
def test_jit_matches_eager(mode: str, name: str) -> None:
    op = rec.OPS[name]
    x64, promotion = rec.MODES[mode]
    mismatches = []
    with tl.enable_x64(x64), tl.dtype_promotion(promotion):
        values = {label: rec.make_operand(tnp, label) for label in op.labels(mode)}

        def eager(*operands: Any) -> Any:
            return op.fn(tnp, *operands)

        jitted = tl.jit(eager)
        for combo in op.combinations(mode):
            operands = [values[label] for label in combo]
            why = _same(_outcome(eager, operands), _outcome(jitted, operands))
            if why is not None and not _jax_difference(name, combo):
                mismatches.append(f"{name}({', '.join(combo)}): {why}")
    if mismatches:
        shown = "\n".join(mismatches[:30])
        pytest.fail(
            f"{len(mismatches)} calls differ under jit in mode {mode}:\n{shown}",
            pytrace=False,
        )


def _same_struct(eager: Any, shaped: Any) -> str | None:
    """Why the result of ``eval_shape`` differs from ``eager``'s, or None."""
    if isinstance(eager, BaseException) or isinstance(shaped, BaseException):
        if isinstance(eager, BaseException) and isinstance(shaped, type(eager)):
            return None
        return f"eager {eager!r:.120}, eval_shape {shaped!r:.120}"
    a, b = _leaves(eager), _leaves(shaped)
    if len(a) != len(b):
        return f"eager gave {len(a)} arrays, eval_shape {len(b)}"
    for x, y in zip(a, b, strict=True):
        if not isinstance(y, tl.ShapeDtypeStruct):
            return f"eval_shape gave {type(y).__name__}"
        if (x.shape, x.dtype, x.weak_type) != (y.shape, y.dtype, y.weak_type):
            return f"eager {x!r}, eval_shape {y!r}"
    return None


@pytest.mark.parametrize(("mode", "name"), CASES)
def test_eval_shape_matches_eager(mode: str, name: str) -> None:
    """eval_shape gives the shape, dtype and weak flag of the eager call (the
    same exception class when that raises), as jit does (with the same
    differences, from traced Python scalar exponents)."""
    op = rec.OPS[name]
    x64, promotion = rec.MODES[mode]
    mismatches = []
    with tl.enable_x64(x64), tl.dtype_promotion(promotion):
        values = {label: rec.make_operand(tnp, label) for label in op.labels(mode)}

        def eager(*operands: Any) -> Any:
            return op.fn(tnp, *operands)

        for combo in op.combinations(mode):
            operands = [values[label] for label in combo]
            shaped = _outcome(functools.partial(tl.eval_shape, eager), operands)
            why = _same_struct(_outcome(eager, operands), shaped)
            if why is not None and not _jax_difference(name, combo):
                mismatches.append(f"{name}({', '.join(combo)}): {why}")
    if mismatches:
        shown = "\n".join(mismatches[:30])
        pytest.fail(
            f"{len(mismatches)} calls differ under eval_shape in mode {mode}:\n{shown}",
            pytrace=False,
        )


@pytest.mark.jax
def test_power_differences_are_jax_own() -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy

    def ours(x: Any) -> Any:
        """The same operand for typelattice (weak arrays stay weak)."""
        if not isinstance(x, jax.Array):
            return x
        return tnp.asarray(x.item()) if x.weak_type else tnp.asarray(np.asarray(x))

    weak = jnp.asarray(1)
    for base, exponent in [(weak, weak), (weak, 1), (weak, True), (1, weak), (1, 1)]:
        eager = jnp.power(base, exponent)
        jitted = jax.jit(jnp.power)(base, exponent)
        assert (eager.dtype, eager.weak_type) == (np.dtype("int32"), True)
        assert (jitted.dtype, jitted.weak_type) == (np.dtype("int32"), False)
        mine = tl.jit(tnp.power)(ours(base), ours(exponent))
        assert (mine.dtype, mine.weak_type) == (np.dtype("int32"), False)
    with jax.enable_x64(True), tl.enable_x64(True):
        weak = jnp.asarray(1)
        bools = jnp.asarray([True, False])
        for base, exponent in [(bools, weak), (bools, 1), (True, 1)]:
            assert jnp.power(base, exponent).dtype == np.dtype("int32")
            assert jax.jit(jnp.power)(base, exponent).dtype == np.dtype("int64")
            mine = tl.jit(tnp.power)(ours(base), ours(exponent))
            assert mine.dtype == np.dtype("int64")
