"""The golden calls through a second backend: every recorded call of
typelattice.lax (``golden/lax_ops.json``) and of the namespace
(``golden/make_numpy_golden.py``, with the golden's operands and with the
values that test data safety, as tests/test_paths_agree.py makes them) gives
under the counting backend (tests/counting_backend.py) exactly what it
gives under the NumPy backend: values bit for bit, dtype, weak flag and
shape, or the same error. A backend implements primitives and nothing else,
so whatever reaches a primitive is computed by the backend in force.

Every lax call that succeeds binds a primitive, eagerly and (its results
the same) in a jitted function. Namespace functions bind primitives once
they are written on lax; :data:`BINDING` lists those whose every call does.
The gradients of the recorded namespace functions
(``golden/make_grad_golden.py``), computed with primitives, are the same
through the counting backend too.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter
from typing import Any

import pytest

import typelattice as tl
import typelattice.numpy as tnp
from counting_backend import CountingBackend
from support import GOLDEN_DIR, recorder
from test_paths_agree import cases, difference, make_operand, outcome
from test_paths_agree import rec as namespace_rec
from typelattice import lax
from typelattice._backends import use
from typelattice._tracing import ad

lax_rec = recorder("make_lax_golden.py")
LAX_GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "lax_ops.json").read_text())
grad_rec = recorder("make_grad_golden.py")
GRAD_GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "grad.json").read_text())
MAX_REPORTED = 20

# The namespace functions (golden op names) each of whose calls that
# succeeds binds at least one primitive (a function binding on every call
# but missing here fails the test). The golden functions not listed return
# an operand as it is for some operands, binding nothing, as in JAX: the
# identities (positive, real of a real array, floor of an integer one...)
# and the moves of elements that give a view of an immutable Array
# (ravel, transpose, squeeze...).
BINDING: list[str] = [
    "add",
    "all",
    "angle",
    "any",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "argmax",
    "argmin",
    "argsort",
    "at_add",
    "at_set",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "cbrt",
    "clip_min",
    "concatenate",
    "concatenate_float16",
    "copysign",
    "cos",
    "cosh",
    "cumprod",
    "cumsum",
    "cumsum_float16",
    "cumsum_int8",
    "divide",
    "divmod",
    "dot",
    "einsum",
    "empty_like",
    "equal",
    "exp",
    "exp2",
    "expand_dims_0",
    "expm1",
    "float_power",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "greater",
    "greater_equal",
    "heaviside",
    "hypot",
    "imag",
    "inner",
    "invert",
    "isfinite",
    "isinf",
    "isnan",
    "left_shift",
    "less",
    "less_equal",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logaddexp2",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "max",
    "maximum",
    "mean",
    "mean_dtype_float16",
    "min",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "nextafter",
    "not_equal",
    "ones_like",
    "outer",
    "power",
    "prod",
    "reciprocal",
    "remainder",
    "right_shift",
    "rint",
    "sign",
    "sin",
    "sinh",
    "sort",
    "sqrt",
    "square",
    "stack",
    "std",
    "subtract",
    "sum",
    "sum_dtype_int8",
    "sum_float16",
    "tan",
    "tanh",
    "true_divide",
    "var",
    "vdot",
    "where",
    "zeros_like",
]


def _differ(want: Any, got: Any) -> str | None:
    """What differs between two outcomes (results, a list or tuple of them,
    or exceptions), or None."""
    if isinstance(want, list):
        want = tuple(want)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(got, list):
        got = tuple(got)  # pyright: ignore[reportUnknownArgumentType]
    return difference(want, got)


def _fail(problems: list[str], what: str) -> None:
    if problems:
        shown = "\n".join(problems[:MAX_REPORTED])
        pytest.fail(f"{len(problems)} {what}:\n{shown}", pytrace=False)


def _jitted(case: Any, operands: list[Any]) -> Any:
    """``case`` under jit, its Array operands traced (Python scalars closed
    over, as user code does)."""
    at = [i for i, x in enumerate(operands) if isinstance(x, tl.Array)]

    def f(*arrays: Any) -> Any:
        merged = list(operands)
        for i, a in zip(at, arrays, strict=True):
            merged[i] = a
        return case.fn(lax, *merged)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return tl.jit(f)(*[operands[i] for i in at])
        except Exception as exc:
            return exc


@pytest.mark.parametrize("mode", list(LAX_GOLDEN["modes"]))
def test_lax_golden_calls_through_the_counting_backend(mode: str) -> None:
    counting = CountingBackend()
    problems: list[str] = []
    computed = 0
    with tl.enable_x64(lax_rec.MODES[mode]), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, rows in LAX_GOLDEN["modes"][mode].items():
            case = lax_rec.CASES[name]
            for row in rows:
                call = f"{name}({', '.join(row['args'])})"
                operands = [lax_rec.make_operand(tnp, label) for label in row["args"]]
                want = lax_rec.outcome(lax, case, operands)
                before = counting.total()
                with use(counting):
                    got = lax_rec.outcome(lax, case, operands)
                why = _differ(want, got)
                if why:
                    problems.append(f"{call}: {why}")
                    continue
                if isinstance(want, BaseException):
                    continue
                if counting.total() == before:
                    problems.append(f"{call}: computed no primitive")
                computed += 1
                with use(counting):
                    why = _differ(want, _jitted(case, operands))
                if why:
                    problems.append(f"jit {call}: {why}")
    _fail(problems, f"lax calls differ under the counting backend in mode {mode}")
    assert computed > 1000


@pytest.mark.parametrize("stress", [False, True], ids=["ones", "stress"])
@pytest.mark.parametrize("mode", list(namespace_rec.MODES))
def test_namespace_golden_calls_through_the_counting_backend(
    mode: str, stress: bool
) -> None:
    counting = CountingBackend()
    problems: list[str] = []
    succeeded: Counter[str] = Counter()
    bound: Counter[str] = Counter()
    x64, promotion = namespace_rec.MODES[mode]
    with tl.enable_x64(x64), tl.dtype_promotion(promotion):
        all_cases = list(cases(mode))
        labels = {label for _, combo in all_cases for label in combo}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = {label: make_operand(label, stress) for label in labels}
        for op, combo in all_cases:
            operands = [values[label] for label in combo]
            want = outcome("eager", op, operands)
            before = counting.total()
            with use(counting):
                got = outcome("eager", op, operands)
            why = _differ(want, got)
            if why:
                problems.append(f"{op.name}({', '.join(combo)}): {why}")
            elif not isinstance(got, BaseException):
                succeeded[op.name] += 1
                bound[op.name] += counting.total() > before
    _fail(problems, f"namespace calls differ under the counting backend in {mode}")
    assert sum(succeeded.values()) > 500
    for name in BINDING:
        if name in succeeded:
            assert bound[name] == succeeded[name], (
                f"{name}: {succeeded[name] - bound[name]} of its {succeeded[name]} "
                "calls computed no primitive"
            )
    new = sorted(n for n in succeeded if n not in BINDING and bound[n] == succeeded[n])
    assert not new, f"every call of {new} binds a primitive now: add them to BINDING"


def _gradient(case: Any, args: list[Any]) -> Any:
    def loss(*a: Any) -> Any:
        return grad_rec.loss(tnp, case, case.fn(tnp, *a))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            value, grads = tl.value_and_grad(loss, argnums=tuple(range(len(args))))(
                *args
            )
        except Exception as exc:
            return exc
    return (value, *grads)


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
def test_gradients_through_the_counting_backend(
    x64: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each call linearized anew: a program remembered under one backend
    # would compute a later call under the other.
    monkeypatch.setattr(ad, "REMEMBER_AFTER", None)
    counting = CountingBackend()
    problems: list[str] = []
    computed = 0  # (the gradients that bound a primitive)
    with tl.enable_x64(x64):
        for name, body in GRAD_GOLDEN["cases"].items():
            case = grad_rec.CASES[name]
            for variant, row in body["variants"].items():
                if (variant in grad_rec.X64_VARIANTS) != x64:
                    continue
                args = [grad_rec.decode(a) for a in row["args"]]
                args = [
                    a if isinstance(a, float | complex) else tnp.asarray(a)
                    for a in args
                ]
                want = _gradient(case, args)
                before = counting.total()
                with use(counting):
                    got = _gradient(case, args)
                why = _differ(want, got)
                if why:
                    problems.append(f"{case.expr} [{variant}]: {why}")
                # (A piecewise constant function's gradient is a symbolic
                # zero: nothing to compute.)
                computed += counting.total() > before
    _fail(problems, "gradients differ under the counting backend")
    assert computed > 50
