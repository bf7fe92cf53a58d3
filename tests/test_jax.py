"""Comparison with JAX itself, the reference implementation.

Skipped when JAX is not installed (CI does not install it). Every pair of
types, Python scalar types and weakly typed arrays, in the four modes.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest

import typelattice as tl
from support import MODE_IDS, MODES, NODES, STRONG, WeakCarrier

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax_dtypes = pytest.importorskip("jax._src.dtypes")

pytestmark = pytest.mark.jax

# Documented differences (README, "Differences from JAX"): JAX fails with a
# KeyError on a weak narrow-integer result of result_type; JAX keeps a single
# non-numeric dtype such as StringDType where typelattice raises TypeError.


@contextmanager
def mode(x64: bool, promotion: str) -> Iterator[None]:
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", x64)
    try:
        with (
            jax.numpy_dtype_promotion(promotion),
            tl.enable_x64(x64),
            tl.dtype_promotion(promotion),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore")
            yield
    finally:
        jax.config.update("jax_enable_x64", old)


def run(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        out = fn(*args)
    except (tl.TypePromotionError, jax_dtypes.TypePromotionError):
        return "no promotion"
    except TypeError:
        return "TypeError"
    except KeyError:
        return "KeyError"
    if isinstance(out, tuple):
        return (np.dtype(out[0]).name, bool(out[1]))
    return np.dtype(out).name


def jax_result_type(*args: Any) -> Any:
    """JAX's result_type, where WeakCarrier arguments become weak tracers."""
    slots = [i for i, a in enumerate(args) if isinstance(a, WeakCarrier)]
    if not slots:
        return jax_dtypes.result_type(*args, return_weak_type_flag=True)
    found: dict[str, Any] = {}

    def f(*tracers: Any) -> Any:
        full = list(args)
        for i, t in zip(slots, tracers, strict=True):
            full[i] = t
        found["out"] = jax_dtypes.result_type(*full, return_weak_type_flag=True)
        return jnp.zeros(())

    structs = [jax.ShapeDtypeStruct((), args[i].dtype, weak_type=True) for i in slots]
    jax.eval_shape(f, *structs)
    return found["out"]


def ours(*args: Any) -> Any:
    return tl.result_type(*args, return_weak_type_flag=True)


@pytest.mark.parametrize(("x64", "promotion"), MODES, ids=MODE_IDS)
def test_result_type_and_promote_types_of_every_pair(x64: bool, promotion: str) -> None:
    diffs = []
    with mode(x64, promotion):
        for a in NODES:
            for b in NODES:
                mine, theirs = (
                    run(ours, a, b),
                    run(jax_result_type, a, b),
                )
                if mine != theirs:
                    diffs.append(("result_type", a, b, mine, theirs))
                mine = run(tl.promote_types, a, b)
                theirs = run(jnp.promote_types, a, b)
                if mine != theirs:
                    diffs.append(("promote_types", a, b, mine, theirs))
    assert diffs == []


@pytest.mark.parametrize(("x64", "promotion"), MODES, ids=MODE_IDS)
def test_weak_arrays_with_every_type(x64: bool, promotion: str) -> None:
    diffs = []
    weak = [WeakCarrier(d) for d in STRONG]
    with mode(x64, promotion):
        for w in weak:
            for other in [*NODES, *weak]:
                for args in ((w, other), (other, w)):
                    theirs = run(jax_result_type, *args)
                    if theirs == "KeyError":
                        continue  # JAX's bug with weak narrow ints
                    mine = run(ours, *args)
                    if mine != theirs:
                        diffs.append((args, mine, theirs))
    assert diffs == []


@pytest.mark.parametrize(("x64", "promotion"), MODES, ids=MODE_IDS)
def test_input_forms(x64: bool, promotion: str) -> None:
    forms = [
        1, 1.0, 1j, True, int, float, complex, bool, None,
        np.int8(1), np.float64(1), np.int64(1), np.uint64(1), np.complex128(1),
        np.array(1, "int64"), np.array([1.0]), np.array(1, "float16"),
        "int8", "bfloat16", "int64", "float64", np.int8, np.float64,
        np.dtype("int64"), np.dtype("O"), "str", [1, 2], object(),
    ]  # fmt: skip
    diffs = []
    with mode(x64, promotion):
        for a in forms:
            mine, theirs = run(ours, a), run(jax_result_type, a)
            if mine != theirs:
                diffs.append(((a,), mine, theirs))
            for b in forms[:12]:
                mine = run(ours, a, b)
                theirs = run(jax_result_type, a, b)
                if mine != theirs:
                    diffs.append(((a, b), mine, theirs))
    assert diffs == []


@pytest.mark.parametrize("x64", [False, True])
def test_classification_and_limits(x64: bool) -> None:
    kinds = ["bool", "signed integer", "unsigned integer", "integral",
             "real floating", "complex floating", "numeric"]  # fmt: skip
    abstract = [np.floating, np.integer, np.signedinteger, np.unsignedinteger,
                np.inexact, np.complexfloating, np.number, np.generic]  # fmt: skip
    with mode(x64, "standard"):
        for d in STRONG:
            for k in kinds:
                assert tl.isdtype(d, k) == jnp.isdtype(d, k), (d, k)
            for cls in abstract:
                assert tl.issubdtype(d, cls) == jnp.issubdtype(d, cls), (d, cls)
            assert tl.canonicalize_dtype(d) == jax_dtypes.canonicalize_dtype(d)
            if tl.isdtype(d, ("real floating", "complex floating")):
                assert tl.finfo(d).bits == jnp.finfo(d).bits
                assert float(tl.finfo(d).eps) == float(jnp.finfo(d).eps)
                assert float(tl.finfo(d).max) == float(jnp.finfo(d).max)
            elif tl.isdtype(d, "integral"):
                assert tl.iinfo(d).min == jnp.iinfo(d).min
                assert tl.iinfo(d).max == jnp.iinfo(d).max
