"""Gradients of typelattice.numpy functions against those JAX computes.

``golden/grad.json`` was recorded from JAX 0.10 by
``golden/make_grad_golden.py``, which also defines the functions, their
losses and the encoding (see its docstring). For every recorded row:

1. ``typelattice.value_and_grad`` of the loss with respect to every
   operand: the loss and each gradient have JAX's dtype and weak flag
   exactly, and its values within a tolerance of the dtype;
2. ``typelattice.vjp`` of the function, applied to the cotangent that is
   the loss's derivative: the same, against JAX's ``vjp``; the function's
   output (eager, and the primal of ``vjp``) has JAX's dtype, weak flag
   and shape.

One difference is accepted: the gradient of a weak argument (a Python
scalar) is weak in typelattice, always; JAX's is strong where its
derivative rules build strong constants (log2, log10, float_power of weak
floats, every function of Python complex numbers through ``real``).

Each row runs twice: directly, and with every namespace call's
linearization remembered first on other values (the floating operands
reversed), as reverse mode does for calls it has seen.

Independently of JAX, the float64 rows are checked against central finite
differences of the loss, computed in float64.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, ON_LAX, recorder
from test_on_lax import WRITTEN_ON_LAX
from typelattice._tracing import ad


def _recorder() -> ModuleType:
    return recorder("make_grad_golden.py")


rec = _recorder()
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "grad.json").read_text())

# Relative tolerance per dtype, and absolute tolerance relative to the
# largest magnitude of the expected values. XLA computes the derivative
# formulas of narrow floats in float32 and rounds once where NumPy rounds
# after every operation: up to 2 units in the last place of bfloat16 (2**-8)
# and 3 of float16 (2**-11) apart; float32 and complex64 up to 5 (their
# math functions differ too); float64 up to 6 (orders of summation). The
# narrow floats' bounds are about twice the largest difference recorded.
TOLERANCE: dict[str, tuple[float, float]] = {
    "bf": (1.6e-2, 8e-3),
    "f2": (3e-3, 1.5e-3),
    "f4": (2e-6, 5e-7),
    "c8": (3e-6, 5e-7),
    "f8": (1e-13, 1e-14),
    "c16": (1e-13, 1e-14),
}

# Rows known to fail (a case's name, or ``name-variant`` for one row ->
# the reason), expected to fail until fixed.
XFAIL: dict[str, str] = {}


def _params() -> Iterator[Any]:
    for name, body in GOLDEN["cases"].items():
        for variant in body["variants"]:
            marks = []
            reason = XFAIL.get(f"{name}-{variant}", XFAIL.get(name))
            if reason is not None:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            yield pytest.param(name, variant, id=f"{name}-{variant}", marks=marks)


PARAMS = list(_params())


def _operands(row: dict[str, Any]) -> list[Any]:
    """The recorded operands as typelattice arrays (Python scalars as they
    are); call inside the variant's mode."""
    out: list[Any] = []
    for encoded in row["args"]:
        value = rec.decode(encoded)
        out.append(value if isinstance(value, float | complex) else tnp.asarray(value))
    return out


def _close(code: str, want: list[Any], got: list[Any]) -> bool:
    kind = code.removeprefix("w:")
    if kind not in TOLERANCE:
        return bool(want == got)
    if kind.startswith("c"):
        a = np.array([complex(*v) for v in want], np.complex128)
        b = np.array([complex(*v) for v in got], np.complex128)
    else:
        a = np.array(want, np.float64)
        b = np.array(got, np.float64)
    rtol, atol = TOLERANCE[kind]
    scale = max(1.0, float(np.max(np.abs(a), initial=0.0)))
    return bool(np.allclose(b, a, rtol=rtol, atol=atol * scale, equal_nan=True))


def mismatch(want: Any, got: Any) -> str | None:
    """Why ``got`` (a result of typelattice) is not the encoded ``want``,
    or None."""
    if isinstance(want, dict):
        # A Python scalar: JAX's primal output of functions that return
        # their Python scalar argument unchanged (positive, real...),
        # where typelattice gives its weak array.
        w = want["py"]
        w = complex(*w) if isinstance(w, list) else w
        weak_scalar = isinstance(got, tnp.Array) and got.weak_type and got.shape == ()
        if not (isinstance(got, float | complex) or weak_scalar):
            return f"JAX a Python scalar, got {got!r}"
        return None if np.isclose(complex(got), w, rtol=1e-6) else f"JAX {w}, got {got}"
    if isinstance(want, list) and want and isinstance(want[0], list | dict):
        if not isinstance(got, list | tuple) or len(got) != len(want):
            return f"JAX {len(want)} results, got {got!r}"
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            why = mismatch(w, g)
            if why:
                return f"[{i}] {why}"
        return None
    code, shape, values = rec.encode(got)
    if (code, shape) != (want[0], want[1]):
        return f"JAX {want[0]}{want[1]}, got {code}{shape}"
    if not _close(code, want[2], values):
        return f"values: JAX {want[2]}, got {values}"
    return None


def _as_arguments(want: list[Any], args: list[Any]) -> list[Any]:
    """JAX's encoded gradients, weak where the argument is (see the
    module's notes)."""
    out = []
    for w, a in zip(want, args, strict=True):
        if isinstance(a, float | complex) and not w[0].startswith("w:"):
            w = [f"w:{w[0]}", *w[1:]]
        out.append(w)
    return out


def _function(case: Any) -> Callable[..., Any]:
    return lambda *a: case.fn(tnp, *a)


def _loss(case: Any) -> Callable[..., Any]:
    return lambda *a: rec.loss(tnp, case, case.fn(tnp, *a))


@pytest.fixture(params=["direct", "remembered"])
def remembered(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Reverse mode run directly, or from linearizations remembered on
    other values (each namespace call's, from its first call)."""
    on = request.param == "remembered"
    monkeypatch.setattr(ad, "REMEMBER_AFTER", 0 if on else None)
    return on


def _flipped(args: list[Any]) -> list[Any]:
    """The floating arrays among ``args`` with their elements reversed
    (other values, the same)."""
    return [
        tnp.flip(a) if isinstance(a, tnp.Array) and a.dtype.kind in "fc" else a
        for a in args
    ]


@pytest.mark.parametrize(("name", "variant"), PARAMS)
def test_gradient_as_jax(name: str, variant: str, remembered: bool) -> None:
    case = rec.CASES[name]
    row = GOLDEN["cases"][name]["variants"][variant]
    fn = _function(case)
    with tl.enable_x64(variant in rec.X64_VARIANTS):
        args = _operands(row)
        argnums = tuple(range(len(args)))
        if remembered:  # (first on other values: none may be kept)
            try:
                tl.value_and_grad(_loss(case), argnums=argnums)(*_flipped(args))
                tl.vjp(fn, *_flipped(args))
            except Exception:  # noqa: BLE001 (the rows that raise)
                pass
        if "error" in row:
            with pytest.raises(Exception) as info:
                tl.value_and_grad(_loss(case), argnums=argnums)(*args)
            assert row["error"][1:] in rec.builtin_bases(info.value), info.value
            return
        problems: list[str] = []

        def check(stage: str, want: Any, got: Any) -> None:
            why = mismatch(want, got)
            if why:
                problems.append(f"{stage}: {why}")

        check("output", row["out"], fn(*args))
        value, grads = tl.value_and_grad(_loss(case), argnums=argnums)(*args)
        check("loss", row["loss"], value)
        check("grad", _as_arguments(row["grad"], args), list(grads))
        primal, vjp_fn = tl.vjp(fn, *args)
        check("vjp primal", row.get("primal", row["out"]), primal)
        ct = rec.cotangent(tnp, case, primal)
        codes = [
            rec.encode(c)[0] for c in (ct if isinstance(ct, tuple | list) else [ct])
        ]
        if codes != row["ct"]:
            problems.append(f"cotangent: JAX {row['ct']}, got {codes}")
        check("vjp", _as_arguments(row["vjp"], args), list(vjp_fn(ct)))
    assert not problems, f"{case.expr} [{variant}]:\n" + "\n".join(problems)


FD_PARAMS = [
    p
    for p in PARAMS
    if p.values[1] == "f8"
    and rec.CASES[p.values[0]].fd
    and "error" not in GOLDEN["cases"][p.values[0]]["variants"]["f8"]
]


@pytest.mark.parametrize(("name", "variant"), FD_PARAMS)
def test_gradient_as_finite_differences(name: str, variant: str) -> None:
    """Each gradient element against ``(L(x + h) - L(x - h)) / 2h``, in
    float64."""
    case = rec.CASES[name]
    row = GOLDEN["cases"][name]["variants"][variant]
    loss = _loss(case)
    with tl.enable_x64():
        values = [rec.decode(a) for a in row["args"]]
        args = [tnp.asarray(v) for v in values]
        grads = tl.grad(loss, argnums=tuple(range(len(args))))(*args)
        for i, (v, g) in enumerate(zip(values, grads, strict=True)):
            assert (g.dtype, g.weak_type) == (np.dtype(np.float64), False)
            estimate = np.zeros(v.shape)
            for j in np.ndindex(v.shape):
                h = 1e-6 * max(1.0, abs(float(v[j])))
                sides = []
                for step in (h, -h):
                    moved = v.copy()
                    moved[j] += step
                    call = [*args[:i], tnp.asarray(moved), *args[i + 1 :]]
                    sides.append(float(loss(*call)))
                estimate[j] = (sides[0] - sides[1]) / (2 * h)
            np.testing.assert_allclose(
                np.asarray(g),
                estimate,
                rtol=1e-6,
                atol=1e-6,
                err_msg=f"{case.expr}: gradient of operand {i}",
            )


# Functions with a lowering whose results are integers or bools: nothing to
# differentiate.
INTEGER_RESULTS = {
    "all",
    "any",
    "argmax",
    "argmin",
    "argsort",
    "argwhere",
    "flatnonzero",
    "nonzero",
    "searchsorted",
}


# Functions written with primitives that take no array to differentiate.
NO_ARRAY_ARGUMENT = {
    "arange",
    "broadcast_shapes",
    "empty",
    "eye",
    "full",
    "identity",
    "ones",
    "zeros",
}


def _has_lowering(function: Any) -> bool:
    op = getattr(function, "op", None)  # elementwise functions
    if op is not None:
        # All computed with primitives; bool and integer results
        # (comparisons, isnan, bitwise functions...) have no gradient to
        # record, as INTEGER_RESULTS.
        inexact = "f" in op.accept or "c" in op.accept
        return op.out != "bool" and inexact
    # Written with primitives.
    return (
        bool(getattr(function, "_lax", False))
        or getattr(function, "__name__", "") in ON_LAX
        or function in WRITTEN_ON_LAX
    )


def test_every_differentiable_function_has_a_case() -> None:
    """Each public function of typelattice.numpy that differentiation can
    run is called by a recorded case (by name or through an alias)."""
    named = {m for c in rec.CASES.values() for m in re.findall(r"(\w+)\(", c.expr)}
    covered = {id(getattr(tnp, n)) for n in named if hasattr(tnp, n)}
    missing = [
        name
        for name in dir(tnp)
        if not name.startswith("_")
        and callable(function := getattr(tnp, name))
        and _has_lowering(function)
        and id(function) not in covered
        and name not in INTEGER_RESULTS
        and name not in NO_ARRAY_ARGUMENT
    ]
    assert not missing, f"no gradient case calls {missing}"
    assert not set(XFAIL) - {p.id for p in PARAMS} - set(rec.CASES)
