"""Move the last bits of every transcendental result, to find the examples
whose printed output depends on them.

NumPy computes ``exp``, ``log``, ``sin``, ``cbrt``, ``power`` and their kin
with different code on different CPUs (SIMD loops for AVX-512, AVX2 or
none, the C library elsewhere), and the results may differ in the last
places: ``cbrt(27)`` in float32 is ``3.`` on one machine and ``2.9999998``
on another, both within NumPy's accuracy. Only the arithmetic operators and
the square root of real numbers are correctly rounded everywhere.

:func:`install` replaces those functions, in ``numpy`` and in ``math``
(``erf``, ``erfc``, ``lgamma``, ``exp``, ``log``), by ones whose results are
a few units in the last place higher (``"up"``) or lower (``"down"``): as
far as NumPy's accuracy allows, so still a correct answer. It must run
before typelattice is imported, which captures the functions it calls.
Results the C standard fixes exactly (``exp(0)``, ``log(1)``,
``atan2(0, x)``, ``pow(x, 0)``, ``pow(1, y)``, zeros, infinities, NaN) are
left alone.

As a pytest plugin (``-p last_bit`` with ``TYPELATTICE_LAST_BIT=up`` or
``down`` in the environment) it installs itself at startup and reports at
the end how many results it moved, by function.
"""

from __future__ import annotations

import math
import os
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

# NumPy's functions whose results move, by the rule of _exact_inputs.
UNARY = (
    "sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh arctanh "
    "exp exp2 expm1 log log2 log10 log1p cbrt"
).split()
BINARY = ("arctan2", "hypot", "power", "float_power", "logaddexp", "logaddexp2")
# Exact or correctly rounded for real numbers, not for complex ones.
COMPLEX = ("absolute", "sqrt")
MATH = ("erf", "erfc", "lgamma", "exp", "log")

# How far results move, in ulps: as far as NumPy's accuracy tests allow
# (umath-validation-set-*.csv: up to 4 for float32, 1 or 2 for float64;
# float16 results within 1 of float32's rounded).
ULPS = int(os.environ.get("TYPELATTICE_LAST_BIT_ULPS", "4"))
HALF_ULPS = 1

moved: Counter[str] = Counter()


def _number(x: Any) -> Any:
    """``x`` as float64 or complex128 (NaN for what is not a number)."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if x.dtype.kind in "iufbV":
        return x.astype(np.float64)
    return np.full(x.shape, np.nan)


def _finite_nonzero(x: Any) -> Any:
    x = _number(x)
    return np.isfinite(x) & (x != 0)


def _exact_inputs(name: str, args: tuple[Any, ...]) -> Any:
    """Where the C standard (Annex F) fixes the result, or the function is
    correctly rounded: False where its result may be off in the last
    places."""
    if name == "arccos":  # acos(0) is pi/2, rounded as the function rounds
        x = _number(args[0])
        return ~np.isfinite(x) | (x == 1)
    if name in UNARY:
        return ~_finite_nonzero(args[0])
    if name in COMPLEX:
        z = _number(args[0])
        if z.dtype.kind != "c":
            return np.ones(z.shape, bool)
        if name == "absolute":  # hypot(x, 0) is |x|
            return ~(_finite_nonzero(z.real) & _finite_nonzero(z.imag))
        return ~_finite_nonzero(z)
    x, y = _number(args[0]), _number(args[1])
    finite = np.isfinite(x) & np.isfinite(y)
    if name in ("arctan2", "hypot"):
        return ~(_finite_nonzero(x) & _finite_nonzero(y))
    if name in ("power", "float_power"):
        return ~finite | (x == 0) | (x == 1) | (y == 0)
    return ~finite  # logaddexp(x, -inf) is x


def _step(values: Any, up: bool) -> Any:
    """``values`` (real floats) a few ulps towards +inf (``up``) or -inf,
    by stepping the bit pattern; zeros and non-finite values kept."""
    bits = values.view(f"u{values.dtype.itemsize}")
    negative = (bits >> (8 * values.dtype.itemsize - 1)).astype(bool)
    keep = ~_finite_nonzero(values)
    ulps = HALF_ULPS if values.dtype.itemsize == 2 else ULPS
    delta = np.where(keep, 0, np.where(negative == up, -ulps, ulps))
    return (bits + delta.astype(bits.dtype)).view(values.dtype)


def _nudge(result: Any, exact: Any, up: bool) -> tuple[Any, int]:
    """``result`` moved where ``exact`` is False; the number of values
    moved."""
    r = np.array(result, copy=True)
    if r.dtype.kind == "c":
        r.real = _nudge(r.real, exact, up)[0]
        r.imag = _nudge(r.imag, exact, up)[0]
    elif r.dtype.kind == "f":
        exact = np.broadcast_to(exact, r.shape)
        r = np.where(exact, r, _step(r, up)).astype(r.dtype)
    else:  # integers, bool, objects: nothing to move
        return result, 0
    count = int(np.sum(np.asarray(r != result)))
    if isinstance(result, np.ndarray):
        return r, count
    return r[()], count


class Nudged:
    """A NumPy ufunc whose floating results are moved (its methods,
    ``reduce`` and the rest, are the ufunc's own)."""

    def __init__(self, ufunc: np.ufunc, name: str, up: bool) -> None:
        self._ufunc = ufunc
        self._name = name
        self._up = up

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        inputs = args[: self._ufunc.nin]
        if "out" in kwargs:  # the result may overwrite an input
            inputs = tuple(np.array(x, copy=True) for x in inputs)
        exact = _exact_inputs(self._name, inputs)
        result = self._ufunc(*args, **kwargs)
        if np.asarray(result).dtype.kind == "V":
            # ml_dtypes' loops (bfloat16, float8) compute in float32 and
            # round: the last bit moves there.
            wide = self._ufunc(*(np.asarray(x, np.float32) for x in inputs))
            nudged, count = _nudge(wide, exact, self._up)
            nudged = np.asarray(nudged).astype(np.asarray(result).dtype)
            if not isinstance(result, np.ndarray):
                nudged = nudged[()]
        else:
            nudged, count = _nudge(result, exact, self._up)
        moved[self._name] += count
        out = kwargs.get("out")
        if out is not None:
            target = out[0] if isinstance(out, tuple) else out
            target[...] = nudged
            return result
        return nudged

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._ufunc, attr)


def _nudged_math(fn: Callable[..., float], name: str, up: bool) -> Any:
    def call(*args: float) -> float:
        y = fn(*args)
        if any(x == 0 or not math.isfinite(x) for x in (*args, y)):
            return y
        moved[f"math.{name}"] += 1
        for _ in range(ULPS):
            y = math.nextafter(y, math.inf if up else -math.inf)
        return y

    return call


def install(direction: str) -> None:
    """Replace the functions (``direction``: ``"up"`` or ``"down"``)."""
    if direction not in ("up", "down"):
        raise ValueError(f"direction must be 'up' or 'down', not {direction!r}")
    if "typelattice" in sys.modules:
        raise RuntimeError("install() must run before typelattice is imported")
    # ml_dtypes adds its loops to NumPy's ufuncs, found by name, at import.
    import ml_dtypes  # noqa: F401

    up = direction == "up"
    wrappers: dict[int, Nudged] = {}
    for name in (*UNARY, *BINARY, *COMPLEX):
        ufunc = getattr(np, name)
        wrappers[id(ufunc)] = Nudged(ufunc, name, up)
    # The aliases too: np.asin is np.arcsin, np.pow is np.power.
    for attr in dir(np):
        wrapper = wrappers.get(id(getattr(np, attr, None)))
        if wrapper is not None:
            setattr(np, attr, wrapper)
    for name in MATH:
        setattr(math, name, _nudged_math(getattr(math, name), name, up))


_DIRECTION = os.environ.get("TYPELATTICE_LAST_BIT")
if _DIRECTION is not None:
    install(_DIRECTION)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    counts = ", ".join(f"{name}={n}" for name, n in sorted(moved.items()))
    terminalreporter.write_line(f"last bit moved {_DIRECTION}: {counts}")
