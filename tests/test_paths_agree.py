"""One input, one answer on every path: every call of the recorded namespace
golden (``golden/make_numpy_golden.py``) is made eagerly, under ``jit``,
and as the primal output of ``jvp``, ``vjp`` and ``grad``, and must give
the same values (bit for bit), dtype, weak flag and shape, or the same
error, on every path. ``eval_shape`` must give the same shape, dtype and
weak flag wherever the eager call succeeds.

The golden's operands hold ones; each call is made a second time with
operands whose values test data safety (integers near their type's range,
floats beyond float16's and bfloat16's precision, Python scalars that fit
no narrow type), so that a path that skips a range check, or rounds where
another raises, is caught. A few calls beyond the golden's cover the
functions that take a ``dtype`` or store a value in an array (``asarray``
with a dtype given by position, ``sum``/``cumsum`` with ``dtype=``,
``.at[].set``/``.add``, ``full_like``, ``einsum``).

No reference is needed: the paths are compared with each other.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import golden_recorder

rec = golden_recorder()

# -- operands -------------------------------------------------------------------

# Values that test data safety: each array holds a value near the top of its
# type (beyond every narrower type's range or precision) and a small one of
# the other sign.
_STRESS_ARRAYS: dict[str, list[Any]] = {
    "b1": [True, False],
    "u1": [200, 3],
    "u2": [60000, 3],
    "u4": [4_000_000_000, 3],
    "u8": [2**63 + 5, 3],
    "i1": [100, -3],
    "i2": [30000, -3],
    "i4": [2_000_000_000, -3],
    "i8": [2**62, -3],
    "bf": [1e6, -0.5],
    "f2": [60000.0, -0.5],
    "f4": [1e6, -0.5],
    "f8": [1e300, -0.5],
    "c8": [1e6 + 2j, -0.5j],
    "c16": [1e300 + 1j, -0.5j],
}
_STRESS_SCALARS: dict[str, Any] = {
    "w:i": 1000,
    "w:f": 1e6,
    "w:c": 1e6 + 1j,
    "py:int": 1000,
    "py:float": 1e6,
    "py:complex": 1e6 + 1j,
    "py:bool": True,
}


def make_operand(label: str, stress: bool) -> Any:
    """The operand ``label`` (golden encoding) with the golden's values or,
    with ``stress``, the values above."""
    if not stress:
        return rec.make_operand(tnp, label)
    if label.startswith("py:"):
        return _STRESS_SCALARS[label]
    if label.startswith("w:"):
        return tnp.asarray(_STRESS_SCALARS[label])
    dtype = rec._NP_DTYPES[label]
    return tnp.asarray(np.array(_STRESS_ARRAYS[label], dtype=dtype))


# -- calls beyond the golden ----------------------------------------------------


def _extra(name: str, arity: int, fn: Callable[..., Any]) -> Any:
    return rec.Op(name, arity, name, lambda xnp, *a: fn(*a))


EXTRA_OPS = [
    _extra("asarray_bfloat16_positional", 1, lambda x: tnp.asarray(x, "bfloat16")),
    _extra("array_float16_positional", 1, lambda x: tnp.array(x, "float16")),
    _extra("asarray_int8", 1, lambda x: tnp.asarray(x, dtype="int8")),
    _extra("sum_float16", 1, lambda x: tnp.sum(x, dtype="float16")),
    _extra("cumsum_float16", 1, lambda x: tnp.cumsum(x, dtype="float16")),
    _extra("cumsum_int8", 1, lambda x: tnp.cumsum(x, dtype="int8")),
    _extra(
        "concatenate_float16",
        2,
        lambda a, b: tnp.concatenate(
            [tnp.atleast_1d(a), tnp.atleast_1d(b)], dtype="float16"
        ),
    ),
    _extra("at_set", 2, lambda a, b: tnp.atleast_1d(a).at[0].set(b)),
    _extra("at_add", 2, lambda a, b: tnp.atleast_1d(a).at[0].add(b)),
    _extra("full_like", 2, lambda a, b: tnp.full_like(a, b)),
    _extra("einsum", 2, lambda a, b: tnp.einsum("...,...->...", a, b)),
]

# -- the paths ------------------------------------------------------------------


def _split(operands: list[Any]) -> tuple[list[int], Callable[..., list[Any]]]:
    """The positions of the Array operands, and a function that puts new
    values there (Python scalars stay as they are: a traced function closes
    over them, as user code does)."""
    positions = [i for i, x in enumerate(operands) if isinstance(x, tl.Array)]

    def merge(*arrays: Any) -> list[Any]:
        out = list(operands)
        for i, a in zip(positions, arrays, strict=True):
            out[i] = a
        return out

    return positions, merge


def _differentiable(x: Any) -> bool:
    return bool(np.dtype(x.dtype).kind in "fc" or x.dtype == ml_dtypes.bfloat16)


def run_path(path: str, op: Any, operands: list[Any]) -> Any:
    positions, merge = _split(operands)
    arrays = [operands[i] for i in positions]

    def f(*arrays: Any) -> Any:
        return op.fn(tnp, *merge(*arrays))

    if path == "eager":
        return f(*arrays)
    if path == "jit":
        return tl.jit(f)(*arrays)
    if path == "eval_shape":
        return tl.eval_shape(f, *arrays)
    if path == "jvp":
        tangents = [
            tnp.zeros_like(a) if _differentiable(a) else np.zeros(a.shape, tl.float0)
            for a in arrays
        ]
        return tl.jvp(f, arrays, tangents)[0]
    if path == "vjp":
        return tl.vjp(f, *arrays)[0]
    if path == "grad":
        if not arrays:
            return f()

        def loss(*arrays: Any) -> tuple[Any, Any]:
            return tnp.zeros((), "float32"), f(*arrays)

        nums = tuple(range(len(arrays)))
        return tl.grad(loss, argnums=nums, has_aux=True, allow_int=True)(*arrays)[1]
    raise AssertionError(path)


def outcome(path: str, op: Any, operands: list[Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return run_path(path, op, operands)
        except Exception as exc:
            return exc


def _leaves(x: Any) -> list[Any]:
    return list(x) if isinstance(x, tuple) else [x]


def _same_bits(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
    if a.tobytes() == b.tobytes():
        return True
    if a.dtype.kind not in "fc" and a.dtype != ml_dtypes.bfloat16:
        return False
    # NaNs agree wherever they are (their payloads may differ); the rest,
    # signed zeros included, bit for bit.
    x = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64).ravel()
    y = b.astype(x.dtype).ravel()
    nan_x, nan_y = np.isnan(x), np.isnan(y)
    if not np.array_equal(nan_x, nan_y):
        return False
    keep = ~nan_x
    return x[keep].tobytes() == y[keep].tobytes()


def difference(want: Any, got: Any, abstract: bool = False) -> str | None:
    """What differs between two outcomes, or None."""
    if isinstance(want, BaseException) or isinstance(got, BaseException):
        if not (isinstance(want, BaseException) and isinstance(got, BaseException)):
            return f"{_show(want)} != {_show(got)}"
        if type(want) is not type(got) or str(want) != str(got):
            return f"{_show(want)} != {_show(got)}"
        return None
    w, g = _leaves(want), _leaves(got)
    if len(w) != len(g):
        return f"{len(w)} results != {len(g)}"
    for a, b in zip(w, g, strict=True):
        meta_a = (tuple(a.shape), np.dtype(a.dtype), bool(a.weak_type))
        meta_b = (tuple(b.shape), np.dtype(b.dtype), bool(getattr(b, "weak_type", 0)))
        if meta_a != meta_b:
            return f"{meta_a} != {meta_b}"
        if not abstract and not _same_bits(np.asarray(a), np.asarray(b)):
            return f"values {np.asarray(a)!r} != {np.asarray(b)!r}"
    return None


def _show(x: Any) -> str:
    if isinstance(x, BaseException):
        text = str(x).splitlines()[0] if str(x) else ""
        return f"{type(x).__name__}: {text[:160]}"
    return " ".join(
        f"{np.asarray(a)!r}/weak={getattr(a, 'weak_type', '?')}" for a in _leaves(x)
    )


def _zeroed(operands: list[Any]) -> list[Any]:
    """The operands with each Array's values replaced by zeros (its shape,
    dtype and weak flag kept)."""
    return [tnp.zeros_like(x) if isinstance(x, tl.Array) else x for x in operands]


def allowed(path: str, op: Any, operands: list[Any], want: Any, got: Any) -> bool:
    """Whether ``got`` on ``path`` differs from eager's ``want`` only as
    documented (docs/semantics.md, "One answer on every path"):

    - a call with several problems may report another of them under
      ``jit``, which finds the problems it can see while tracing (shapes,
      dtypes, Python scalars) before those of the arrays' values: the error
      it gives is the one eager gives for the same call on arrays of zeros;
    - differentiating a function that has no derivative raises, as JAX
      does (``nextafter``), though its value is computed eagerly;
    - ``power`` with a 0-d integer Array exponent: eagerly the exponent's
      value is known and it does not take part in promotion, as in JAX;
      under ``jit`` (and in ``eval_shape``) it is a traced array and is
      promoted (JAX does the same).
    """
    if not isinstance(got, BaseException):
        return path == "jit" and op.name == "power" and _int_0d(operands[1])
    if path == "jit" and isinstance(want, BaseException):
        return difference(outcome("eager", op, _zeroed(operands)), got) is None
    if path == "jit" and op.name == "power" and _int_0d(operands[1]):
        return True
    return (
        path != "jit"
        and type(got) is NotImplementedError
        and str(got).startswith("Differentiation rule for")
    )


def _int_0d(x: Any) -> bool:
    return isinstance(x, tl.Array) and x.ndim == 0 and x.dtype.kind in "iu"


PATHS = ["jit", "jvp", "vjp", "grad"]
MAX_REPORTED = 25


def cases(mode: str) -> Iterator[tuple[Any, tuple[str, ...]]]:
    ops = [rec.OPS[name] for name in rec.ops_of_mode(mode)]
    if rec.MODES[mode][1] != "strict":
        ops += EXTRA_OPS
    for op in ops:
        for combo in op.combinations(mode):
            yield op, combo


def _ops_chunks() -> list[tuple[str, int]]:
    """The test ids: a mode and a slice of its ops, so a failure names them
    and a run can be split."""
    return [(mode, part) for mode in rec.MODES for part in range(PARTS)]


PARTS = 4


@pytest.mark.parametrize("stress", [False, True], ids=["ones", "stress"])
@pytest.mark.parametrize(("mode", "part"), _ops_chunks())
def test_every_path_gives_the_eager_answer(mode: str, part: int, stress: bool) -> None:
    x64, promotion = rec.MODES[mode]
    failures: list[str] = []
    count = 0
    with tl.enable_x64(x64), tl.dtype_promotion(promotion):
        all_cases = list(cases(mode))
        size = math.ceil(len(all_cases) / PARTS)
        labels = {label for _, combo in all_cases for label in combo}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = {label: make_operand(label, stress) for label in labels}
        for op, combo in all_cases[part * size : (part + 1) * size]:
            operands = [values[label] for label in combo]
            want = outcome("eager", op, operands)
            for path in PATHS:
                got = outcome(path, op, operands)
                why = difference(want, got)
                count += 1
                if why is not None and not allowed(path, op, operands, want, got):
                    failures.append(f"{path} {op.expr} {combo}: {why}")
            traced_exponent = op.name == "power" and _int_0d(operands[1])
            if not isinstance(want, BaseException) and not traced_exponent:
                got = outcome("eval_shape", op, operands)
                why = difference(want, got, abstract=True)
                if why is not None:
                    failures.append(f"eval_shape {op.expr} {combo}: {why}")
    assert count > 0
    shown = "\n".join(failures[:MAX_REPORTED])
    assert not failures, f"{len(failures)} of {count} calls differ:\n{shown}"
