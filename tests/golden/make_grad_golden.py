"""Record gradients of jax.numpy functions: values, dtypes and weak flags.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_grad_golden.py

(Case names as arguments re-record those cases only, keeping the others.)

It writes ``grad.json`` beside this file. ``tests/test_grad_golden.py``
differentiates the same functions of ``typelattice.numpy`` with
``typelattice.grad`` and ``typelattice.vjp`` and compares.

The cases, the operands and the encoding live here so that the recording
and the tests build exactly the same calls. Importing this module needs only
NumPy and ml_dtypes (JAX is imported by ``main``).

A case is a function ``fn(xnp, *operands)`` of the namespace given
(``jax.numpy`` or ``typelattice.numpy``), differentiated with respect to
every operand; constants (Python scalars, index arrays, masks) are written
in the function. The scalar loss differentiated is ``loss(xnp, fn(...))``:
the sum of the output (``"sum"``), of its squares (``"sq"``, for functions
that move elements, whose gradient then shows where each element went), or
of its squared magnitudes when it is complex (``sum(real(out * conj(out)))``);
a tuple or list output is summed over its items.

Variants name the operands' dtypes: ``f4`` float32, ``bf`` bfloat16, ``f2``
float16, ``f8`` float64 (in 64-bit mode), ``c8`` complex64, ``w`` Python
floats (weak float32 scalars), ``wc`` Python complex numbers, ``w8``
Python floats in 64-bit mode (weak float64), ``mix`` the first operand
bfloat16 and the others float32, ``wm`` the first a Python float and the
others float32 arrays. Values are drawn from a named domain
(``"pos"``, ``"unit"``...) or given, seeded by the case's name, the variant
and the operand's position, and recorded.

Each row holds ``args`` (the operands), ``out`` (``fn``'s result;
``primal``, the primal output of ``jax.vjp``, when it differs: an
operator applied to Python scalars gives a Python scalar),
``loss`` and ``grad`` (``jax.value_and_grad`` of the loss with respect to
every operand), ``ct`` (the dtype code of the cotangent
:func:`cotangent` builds from the output: the loss's derivative) and
``vjp`` (``jax.vjp`` of ``fn`` applied to that cotangent), or ``error``.

An encoded array is ``[code, shape, values]``, the code being
``typelattice.dtype_code``'s, prefixed by ``w:`` when weak; complex values
are ``[re, im]`` pairs; a Python scalar operand is ``{"py": value}``; a
list of encodings for a tuple or list; ``"!"`` plus the nearest built-in
exception class for an error.
"""

from __future__ import annotations

import json
import math
import platform
import sys
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

OUT = Path(__file__).with_name("grad.json")

NP_DTYPES: dict[str, Any] = {
    "b1": np.bool_,
    "i4": np.int32,
    "bf": ml_dtypes.bfloat16,
    "f2": np.float16,
    "f4": np.float32,
    "f8": np.float64,
    "c8": np.complex64,
    "c16": np.complex128,
}
CODES = {np.dtype(t): code for code, t in NP_DTYPES.items()}

# Variant -> the dtype code of each operand ("py" for a Python float, "pyc"
# for a Python complex): the first operand's, then the others'.
VARIANTS: dict[str, tuple[str, str]] = {
    "f4": ("f4", "f4"),
    "bf": ("bf", "bf"),
    "f2": ("f2", "f2"),
    "f8": ("f8", "f8"),
    "c8": ("c8", "c8"),
    "w": ("py", "py"),
    "wc": ("pyc", "pyc"),
    "mix": ("bf", "f4"),
    "wm": ("py", "f4"),
    "w8": ("py", "py"),
}
X64_VARIANTS = {"f8", "w8"}

REAL = ("f4", "bf", "f2", "f8")
ALL = (*REAL, "c8")

DOMAINS: dict[str, tuple[float, float]] = {
    "any": (-2.0, 2.0),
    "small": (-1.0, 1.0),
    "pos": (0.5, 2.0),
    "unit": (-0.8, 0.8),
    "gt1": (1.2, 3.0),
}


class Operand(NamedTuple):
    """A differentiated operand: its shape (``()`` in the Python-scalar
    variants), values drawn from ``domain`` or given."""

    shape: tuple[int, ...] = (2, 3)
    domain: str = "any"
    values: Any = None


def x(
    shape: tuple[int, ...] = (2, 3), domain: str = "any", values: Any = None
) -> Operand:
    if values is not None:
        shape = np.shape(values)
    return Operand(shape, domain, values)


class Case(NamedTuple):
    """A function of the namespace and its operands.

    ``variants``: the dtypes it runs in; ``loss``: ``"sum"`` or ``"sq"``;
    ``fd``: whether finite differences of the loss (in float64) measure
    the gradient (not for conversions to narrower dtypes).
    """

    name: str
    expr: str
    fn: Callable[..., Any]
    operands: tuple[Operand, ...]
    variants: tuple[str, ...]
    loss: str = "sum"
    fd: bool = True


CASES: dict[str, Case] = {}


def case(
    name: str,
    expr: str,
    fn: Callable[..., Any],
    *operands: Operand,
    variants: tuple[str, ...] = ALL,
    **kw: Any,
) -> None:
    assert name not in CASES, name
    if len(operands) < 2:  # the mixed variants need two operands
        variants = tuple(v for v in variants if v not in ("mix", "wm"))
    CASES[name] = Case(name, expr, fn, operands, variants, **kw)


def _fn(name: str, *args: Any, **kw: Any) -> Callable[..., Any]:
    """``xnp.<name>(*operands, *args, **kw)``."""
    return lambda xnp, *xs: getattr(xnp, name)(*xs, *args, **kw)


# -- elementwise functions ----------------------------------------------------

_MASK = [[True, False, True], [False, True, True]]

# Unary: name, domain of the real variants, whether complex numbers are
# accepted (their real parts from the same domain, imaginary parts in
# [-0.5, 0.5]: away from every branch cut).
UNARY: list[tuple[str, str, bool]] = [
    ("sin", "any", True),
    ("cos", "any", True),
    ("tan", "small", True),
    ("arcsin", "unit", True),
    ("arccos", "unit", True),
    ("arctan", "any", True),
    ("sinh", "any", True),
    ("cosh", "any", True),
    ("tanh", "any", True),
    ("arcsinh", "any", True),
    ("arccosh", "gt1", True),
    ("arctanh", "unit", True),
    ("exp", "any", True),
    ("exp2", "any", True),
    ("expm1", "any", True),
    ("log", "pos", True),
    ("log2", "pos", True),
    ("log10", "pos", True),
    ("log1p", "pos", True),
    ("sqrt", "pos", True),
    ("cbrt", "nz", False),
    ("square", "any", True),
    ("reciprocal", "nz", True),
    ("negative", "any", True),
    ("positive", "any", True),
    ("abs", "nz", True),
    ("real", "any", True),
    ("imag", "any", True),
    ("conj", "any", True),
    ("conjugate", "any", True),
    ("angle", "pos", True),
    ("floor", "frac", False),
    ("ceil", "frac", False),
    ("trunc", "frac", False),
    ("rint", "frac", False),
    ("round", "frac", False),
    ("sign", "nz", False),
]
for _name, _domain, _complex in UNARY:
    case(
        _name,
        f"{_name}(x)",
        _fn(_name),
        x(domain=_domain),
        variants=(*ALL, "w", "wc", "w8") if _complex else (*REAL, "w", "w8"),
    )
case(
    "round_1",
    "round(x, 1)",
    _fn("round", 1),
    x(values=[[0.12, -0.33, 1.41], [2.07, -1.18, 0.96]]),
    variants=REAL,
)
case("neg_op", "-x", lambda xnp, a: -a, x())
case("abs_op", "abs(x)", lambda xnp, a: abs(a), x(domain="nz"))
case("pow_op_int", "x ** 3", lambda xnp, a: a**3, x(), variants=(*ALL, "w"))
case("pow_op_half", "x ** 0.5", lambda xnp, a: a**0.5, x(domain="pos"))
case("rpow_op", "2.0 ** x", lambda xnp, a: 2.0**a, x(), variants=(*ALL, "w"))
case("power_int", "power(x, 3)", lambda xnp, a: xnp.power(a, 3), x())
case("power_neg_int", "power(x, -2)", lambda xnp, a: xnp.power(a, -2), x(domain="nz"))

# Values of the remainder cases: quotients x / y stay 0.3 or more from
# integers (the jumps of the derivative in y) in every dtype.
_Y = [[0.7, 1.3, -1.9], [0.9, -1.1, 1.6]]
_Q = [[2.3, -1.4, 1.7], [-3.6, 0.3, 1.45]]
_XMOD = (np.asarray(_Y) * np.asarray(_Q)).round(4).tolist()
_XMOD2 = [[0.6, -3.3, 1.4], [4.5, -0.7, 2.6]]  # x / 2.0 away from integers
_YMOD2 = [[0.7, 0.9, -1.6], [1.3, -0.3, 0.85]]  # 2.0 / y away from integers

# Binary: name, domain of x, domain of y, complex accepted, the Python
# scalar of the cases f(x, s) and f(s, x).
BINARY: list[tuple[str, Any, Any, bool, float]] = [
    ("add", "any", "any", True, 2.0),
    ("subtract", "any", "any", True, 2.0),
    ("multiply", "any", "any", True, 2.0),
    ("divide", "any", "nz", True, 2.0),
    ("true_divide", "any", "nz", True, 2.0),
    ("power", "pos", "any", True, 2.0),
    ("float_power", "pos", "any", True, 2.0),
    ("maximum", "any", "any", False, 0.5),
    ("minimum", "any", "any", False, 0.5),
    ("fmax", "any", "any", False, 0.5),
    ("fmin", "any", "any", False, 0.5),
    ("arctan2", "any", "pos", False, 2.0),
    ("hypot", "nz", "nz", False, 2.0),
    ("logaddexp", "any", "any", False, 0.5),
    ("logaddexp2", "any", "any", False, 0.5),
    ("copysign", "nz", "nz", False, -1.5),
    ("remainder", _XMOD, _Y, False, 2.0),
    ("mod", _XMOD, _Y, False, 2.0),
    ("fmod", _XMOD, _Y, False, 2.0),
    ("floor_divide", _XMOD, _Y, False, 2.0),
    ("heaviside", "nz", "any", False, 0.5),
]


def _operand(domain: Any) -> Operand:
    if isinstance(domain, str):
        return x(domain=domain)
    return x(values=domain)


for _name, _dx, _dy, _complex, _s in BINARY:
    _mixed = ("w", "mix", "wm", "w8")
    _variants = (*ALL, *_mixed) if _complex else (*REAL, *_mixed)
    case(
        _name,
        f"{_name}(x, y)",
        _fn(_name),
        _operand(_dx),
        _operand(_dy),
        variants=_variants,
    )
    _mod = _name in ("remainder", "mod", "fmod", "floor_divide")
    case(
        f"{_name}_xs",
        f"{_name}(x, {_s})",
        lambda xnp, a, name=_name, s=_s: getattr(xnp, name)(a, s),
        x(values=_XMOD2) if _mod else _operand(_dx),
        variants=(*ALL, "w") if _complex else (*REAL, "w"),
    )
    case(
        f"{_name}_sx",
        f"{_name}({_s}, x)",
        lambda xnp, a, name=_name, s=_s: getattr(xnp, name)(s, a),
        x(values=_YMOD2) if _mod else _operand(_dy),
        variants=(*ALL, "w") if _complex else (*REAL, "w"),
    )
case(
    "nextafter",
    "nextafter(x, y)",
    _fn("nextafter"),
    x(),
    x(),
    variants=("f4", "f8"),
    fd=False,
)
case(
    "divmod",
    "divmod(x, y)",
    _fn("divmod"),
    x(values=_XMOD),
    x(values=_Y),
    variants=(*REAL, "mix"),
)
case(
    "add_broadcast",
    "add(x: (3, 1), y: (4,))",
    _fn("add"),
    x((3, 1)),
    x((4,)),
    variants=(*ALL, "mix"),
)
case(
    "multiply_broadcast",
    "multiply(x: (2, 1, 3), y: (4, 1))",
    _fn("multiply"),
    x((2, 1, 3)),
    x((4, 1)),
    variants=(*ALL, "mix"),
)
case(
    "divide_scalar_array",
    "divide(x: (), y: (2, 3))",
    _fn("divide"),
    x(()),
    x(domain="nz"),
    variants=(*ALL, "mix", "wm"),
)
case("add_op", "x + y", lambda xnp, a, b: a + b, x(), x(), variants=(*ALL, "mix", "wm"))
case(
    "truediv_op",
    "x / y",
    lambda xnp, a, b: a / b,
    x(),
    x(domain="nz"),
    variants=(*ALL, "wm"),
)
case(
    "rtruediv_op",
    "2.0 / x",
    lambda xnp, a: 2.0 / a,
    x(domain="nz"),
    variants=(*ALL, "w"),
)
case("mul_int_op", "x * 3", lambda xnp, a: a * 3, x(), variants=(*ALL, "w"))
case(
    "multiply_int_array",
    "x * int32 array",
    lambda xnp, a: a * xnp.asarray(np.asarray([[1, -2, 3], [4, 0, -6]], np.int32)),
    x(),
    variants=(*ALL, "w"),
)
case(
    "add_bool_array",
    "x + bool array",
    lambda xnp, a: xnp.add(a, xnp.asarray(np.asarray(_MASK))),
    x(),
    variants=(*ALL, "w"),
)

# -- reductions ---------------------------------------------------------------

_R = (2, 3)
for _name, _domain in [
    ("sum", "any"),
    ("mean", "any"),
    ("prod", "nz"),
    ("max", "any"),
    ("min", "any"),
    ("amax", "any"),
    ("amin", "any"),
    ("ptp", "any"),
    ("var", "any"),
    ("std", "any"),
]:
    _real_only = _name in ("max", "min", "amax", "amin", "ptp")
    _v = REAL if _real_only else ALL
    case(
        _name,
        f"{_name}(x)",
        _fn(_name),
        x(_R, _domain),
        variants=(*_v, "w") if _name not in ("ptp", "var", "std") else _v,
    )
    case(
        f"{_name}_axis0",
        f"{_name}(x, axis=0)",
        _fn(_name, axis=0),
        x(_R, _domain),
        variants=_v,
    )
    case(
        f"{_name}_axis1_keepdims",
        f"{_name}(x: (3, 4), axis=1, keepdims=True)",
        _fn(_name, axis=1, keepdims=True),
        x((3, 4), _domain),
        variants=_v,
    )
case(
    "sum_axes",
    "sum(x: (2, 3, 4), axis=(0, 2))",
    _fn("sum", axis=(0, 2)),
    x((2, 3, 4)),
)
case(
    "sum_dtype",
    "sum(x, dtype=float32)",
    lambda xnp, a: xnp.sum(a, dtype=xnp.float32),
    x(),
    variants=("f4", "bf", "f2"),
)
case(
    "mean_dtype",
    "mean(x, dtype=float32)",
    lambda xnp, a: xnp.mean(a, dtype=xnp.float32),
    x(),
    variants=("f4", "bf", "f2"),
)
case("var_ddof", "var(x, ddof=1)", _fn("var", ddof=1), x())
case("std_axis0_ddof", "std(x, axis=0, ddof=1)", _fn("std", axis=0, ddof=1), x((3, 2)))
case(
    "max_axes",
    "max(x: (2, 3, 4), axis=(1, 2))",
    _fn("max", axis=(1, 2)),
    x((2, 3, 4)),
    variants=REAL,
)
for _name in ("cumsum", "cumprod"):
    _domain = "nz" if _name == "cumprod" else "any"
    case(f"{_name}", f"{_name}(x)", _fn(_name), x(_R, _domain))
    case(f"{_name}_axis0", f"{_name}(x, axis=0)", _fn(_name, axis=0), x(_R, _domain))
    case(
        f"{_name}_axis1",
        f"{_name}(x: (3, 4), axis=1)",
        _fn(_name, axis=1),
        x((3, 4), _domain),
    )
case("trace", "trace(x: (3, 4))", _fn("trace"), x((3, 4)))
case("trace_offset", "trace(x: (3, 4), offset=1)", _fn("trace", offset=1), x((3, 4)))
case("sum_method", "x.sum(axis=1)", lambda xnp, a: a.sum(axis=1), x())
case("mean_method", "x.mean()", lambda xnp, a: a.mean(), x(), variants=ALL)

# -- moving elements: shapes, indexing, selection -----------------------------


def _moving(
    name: str, expr: str, fn: Callable[..., Any], *ops: Operand, **kw: Any
) -> None:
    kw.setdefault("variants", ALL)
    case(name, expr, fn, *ops, loss="sq", **kw)


_moving("reshape", "reshape(x, (3, 2))", _fn("reshape", (3, 2)), x())
_moving("reshape_method", "x.reshape(-1)", lambda xnp, a: a.reshape(-1), x())
_moving("ravel", "ravel(x)", _fn("ravel"), x())
_moving("transpose", "transpose(x)", _fn("transpose"), x())
_moving(
    "transpose_axes",
    "transpose(x: (2, 3, 4), (1, 2, 0))",
    _fn("transpose", (1, 2, 0)),
    x((2, 3, 4)),
)
_moving("T", "x.T", lambda xnp, a: a.T, x())
_moving("permute_dims", "permute_dims(x, (1, 0))", _fn("permute_dims", (1, 0)), x())
_moving(
    "matrix_transpose",
    "matrix_transpose(x: (2, 3, 4))",
    _fn("matrix_transpose"),
    x((2, 3, 4)),
)
_moving("swapaxes", "swapaxes(x: (2, 3, 4), 0, 2)", _fn("swapaxes", 0, 2), x((2, 3, 4)))
_moving(
    "moveaxis", "moveaxis(x: (2, 3, 4), 0, -1)", _fn("moveaxis", 0, -1), x((2, 3, 4))
)
_moving("expand_dims", "expand_dims(x, 1)", _fn("expand_dims", 1), x())
_moving("squeeze", "squeeze(x: (1, 3, 1))", _fn("squeeze"), x((1, 3, 1)))
_moving("squeeze_axis", "squeeze(x: (1, 3), axis=0)", _fn("squeeze", axis=0), x((1, 3)))
_moving(
    "broadcast_to",
    "broadcast_to(x: (3,), (2, 3))",
    _fn("broadcast_to", (2, 3)),
    x((3,)),
)
_moving(
    "broadcast_to_middle",
    "broadcast_to(x: (2, 1, 3), (2, 4, 3))",
    _fn("broadcast_to", (2, 4, 3)),
    x((2, 1, 3)),
)
_moving(
    "broadcast_arrays",
    "broadcast_arrays(x: (3, 1), y: (4,))",
    _fn("broadcast_arrays"),
    x((3, 1)),
    x((4,)),
    variants=(*ALL, "mix"),
)
_moving("flip", "flip(x)", _fn("flip"), x())
_moving("flip_axis", "flip(x, axis=1)", _fn("flip", axis=1), x())
_moving("roll", "roll(x, 2)", _fn("roll", 2), x())
_moving("roll_axis", "roll(x, -1, axis=1)", _fn("roll", -1, axis=1), x())
_moving("tile", "tile(x, (2, 1))", _fn("tile", (2, 1)), x())
_moving("tile_int", "tile(x: (3,), 2)", _fn("tile", 2), x((3,)))
_moving("repeat", "repeat(x, 2, axis=0)", _fn("repeat", 2, axis=0), x())
_moving("repeat_flat", "repeat(x, 2)", _fn("repeat", 2), x())
_moving(
    "repeat_counts",
    "repeat(x, [1, 3, 0], axis=1)",
    lambda xnp, a: xnp.repeat(a, xnp.asarray([1, 3, 0]), axis=1),
    x(),
)
_moving(
    "concatenate",
    "concatenate([x: (2, 3), y: (1, 3)])",
    lambda xnp, a, b: xnp.concatenate([a, b]),
    x(),
    x((1, 3)),
    variants=(*ALL, "mix"),
)
_moving(
    "concatenate_axis1",
    "concatenate([x, y: (2, 2), x], axis=1)",
    lambda xnp, a, b: xnp.concatenate([a, b, a], axis=1),
    x(),
    x((2, 2)),
    variants=(*ALL, "mix"),
)
_moving(
    "concat",
    "concat((x, y), axis=0)",
    lambda xnp, a, b: xnp.concat((a, b), axis=0),
    x(),
    x(),
)
_moving(
    "stack",
    "stack([x, y], axis=1)",
    lambda xnp, a, b: xnp.stack([a, b], axis=1),
    x(),
    x(),
    variants=(*ALL, "mix"),
)
_moving(
    "hstack", "hstack([x, y])", lambda xnp, a, b: xnp.hstack([a, b]), x(), x((2, 1))
)
_moving(
    "vstack", "vstack([x: (3,), y])", lambda xnp, a, b: xnp.vstack([a, b]), x((3,)), x()
)
_moving("split", "split(x: (2, 6), 3, axis=1)", _fn("split", 3, axis=1), x((2, 6)))
_moving("split_at", "split(x: (5, 2), [1, 3])", _fn("split", [1, 3]), x((5, 2)))
_moving(
    "atleast_1d", "atleast_1d(x: ())", _fn("atleast_1d"), x(()), variants=(*ALL, "w")
)
_moving("array", "array(x)", _fn("array"), x())
for _name in ("zeros_like", "ones_like"):
    # The result does not depend on the values: zero gradients.
    _moving(
        _name,
        f"{_name}(x) * 0 + x",
        lambda xnp, a, name=_name: getattr(xnp, name)(a) * 0 + a,
        x(),
    )
_moving(
    "empty_like",
    "where(True, x, empty_like(x))",  # its values are not defined
    lambda xnp, a: xnp.where(True, a, xnp.empty_like(a)),
    x(),
)
_moving(
    "full_like",
    "full_like(x, 2.0) * x",
    lambda xnp, a: xnp.full_like(a, 2.0) * a,
    x(),
    variants=(*ALL, "w"),
)
_moving("atleast_2d", "atleast_2d(x: (3,))", _fn("atleast_2d"), x((3,)))
_moving("atleast_3d", "atleast_3d(x)", _fn("atleast_3d"), x())
_moving("slice", "x[1:, ::2]", lambda xnp, a: a[1:, ::2], x((3, 4)))
_moving("slice_reverse", "x[::-1, 1:]", lambda xnp, a: a[::-1, 1:], x())
_moving("index_int", "x[1]", lambda xnp, a: a[1], x())
_moving("index_neg", "x[-1, 1:]", lambda xnp, a: a[-1, 1:], x())
_moving("index_newaxis", "x[..., None]", lambda xnp, a: a[..., None], x())
_moving(
    "index_list",
    "x[[0, 2]]",
    lambda xnp, a: a[xnp.asarray([0, 2])],
    x((3, 2)),
)
_moving(
    "index_repeated",
    "x[[1, 0, 1]]",
    lambda xnp, a: a[xnp.asarray([1, 0, 1])],
    x(),
)
_moving(
    "index_columns",
    "x[:, [2, 0]]",
    lambda xnp, a: a[:, xnp.asarray([2, 0])],
    x(),
)
_moving(
    "index_pairs",
    "x[[0, 1, 1], [2, 0, 2]]",
    lambda xnp, a: a[xnp.asarray([0, 1, 1]), xnp.asarray([2, 0, 2])],
    x(),
)
_moving(
    "index_mask",
    "x[mask]",
    lambda xnp, a: a[xnp.asarray(_MASK)],
    x(),
)
_moving(
    "take",
    "take(x, [0, 2], axis=1)",
    lambda xnp, a: xnp.take(a, xnp.asarray([0, 2]), axis=1),
    x(),
)
_moving(
    "take_flat",
    "take(x, [5, 0, 5])",
    lambda xnp, a: xnp.take(a, xnp.asarray([5, 0, 5])),
    x(),
)
_moving(
    "take_along_axis",
    "take_along_axis(x, [[0, 2], [1, 1]], axis=1)",
    lambda xnp, a: xnp.take_along_axis(a, xnp.asarray([[0, 2], [1, 1]]), axis=1),
    x(),
)
_moving("pad", "pad(x, ((1, 0), (2, 1)))", _fn("pad", ((1, 0), (2, 1))), x())
_moving(
    "pad_reflect",
    "pad(x, 1, mode='reflect')",
    _fn("pad", 1, mode="reflect"),
    x(),
)
_moving(
    "pad_edge",
    "pad(x, ((0, 2), (1, 1)), mode='edge')",
    _fn("pad", ((0, 2), (1, 1)), mode="edge"),
    x(),
)
_moving("diagonal", "diagonal(x: (3, 3))", _fn("diagonal"), x((3, 3)))
_moving("diagonal_offset", "diagonal(x, offset=1)", _fn("diagonal", offset=1), x())
_moving(
    "compress",
    "compress([True, False, True], x, axis=1)",
    lambda xnp, a: xnp.compress(xnp.asarray([True, False, True]), a, axis=1),
    x(),
)
_moving(
    "where",
    "where(mask, x, y)",
    lambda xnp, a, b: xnp.where(xnp.asarray(_MASK), a, b),
    x(),
    x(),
    variants=(*ALL, "mix", "wm"),
)
_moving(
    "where_scalar",
    "where(mask, x, 0.5)",
    lambda xnp, a: xnp.where(xnp.asarray(_MASK), a, 0.5),
    x(),
    variants=(*ALL, "w"),
)
_moving(
    "where_scalar_first",
    "where(mask, 0.5, x)",
    lambda xnp, a: xnp.where(xnp.asarray(_MASK), 0.5, a),
    x(),
)
_moving(
    "clip", "clip(x, -0.5, 1.0)", _fn("clip", -0.5, 1.0), x(), variants=(*REAL, "w")
)
_moving("clip_min", "clip(x, min=0.0)", _fn("clip", min=0.0), x(), variants=REAL)
_moving(
    "clip_arrays",
    "clip(x, lo, hi)",
    lambda xnp, a, lo, hi: xnp.clip(a, lo, hi),
    x(),
    x(domain="small"),
    x(values=[[1.5, 0.5, 0.25], [2.0, 0.75, 1.5]]),
    variants=REAL,
)
_moving("sort", "sort(x)", _fn("sort"), x((3, 4)), variants=REAL)
_moving("sort_axis0", "sort(x, axis=0)", _fn("sort", axis=0), x((3, 4)), variants=REAL)
_moving("sort_flat", "sort(x, axis=None)", _fn("sort", axis=None), x(), variants=REAL)

# -- dtype conversions --------------------------------------------------------

_moving(
    "astype_bfloat16",
    "x.astype(bfloat16)",
    lambda xnp, a: a.astype(xnp.bfloat16),
    x(),
    variants=("f4", "f2", "f8"),
    fd=False,
)
_moving(
    "astype_float32",
    "x.astype(float32)",
    lambda xnp, a: a.astype(xnp.float32),
    x(),
    variants=("bf", "f2", "f4", "f8"),
    fd=False,
)
_moving(
    "astype_float16",
    "astype(x, float16)",
    lambda xnp, a: xnp.astype(a, xnp.float16),
    x(),
    variants=("f4", "bf", "f8"),
    fd=False,
)
_moving(
    "astype_complex64",
    "x.astype(complex64)",
    lambda xnp, a: a.astype(xnp.complex64),
    x(),
    variants=("f4", "bf", "c8"),
    fd=False,
)
case(
    "astype_int32_times_x",
    "x.astype(int32) * x",
    lambda xnp, a: a.astype(xnp.int32) * a,
    x(domain="frac"),
    variants=REAL,
)
case(
    "mixed_precision",
    "(x.astype(bfloat16) * y.astype(bfloat16)).astype(float32)",
    lambda xnp, a, b: (a.astype(xnp.bfloat16) * b.astype(xnp.bfloat16)).astype(
        xnp.float32
    ),
    x(),
    x(),
    variants=("f4", "f8", "mix"),
    fd=False,
)
case(
    "asarray_dtype",
    "asarray(x, dtype=float32) * 2",
    lambda xnp, a: xnp.asarray(a, dtype=xnp.float32) * 2,
    x(),
    variants=("f4", "bf"),
)

# -- products -----------------------------------------------------------------

_PRODUCTS = (*ALL, "mix")
_moving(
    "matmul",
    "matmul(x: (2, 3), y: (3, 4))",
    _fn("matmul"),
    x(),
    x((3, 4)),
    variants=_PRODUCTS,
)
_moving(
    "matmul_batch",
    "matmul(x: (2, 2, 3), y: (3, 2))",
    _fn("matmul"),
    x((2, 2, 3)),
    x((3, 2)),
    variants=_PRODUCTS,
)
_moving(
    "matmul_vector",
    "matmul(x: (3,), y: (3, 4))",
    _fn("matmul"),
    x((3,)),
    x((3, 4)),
    variants=_PRODUCTS,
)
_moving(
    "matmul_op", "x @ y", lambda xnp, a, b: a @ b, x(), x((3, 2)), variants=_PRODUCTS
)
_moving("dot", "dot(x: (2, 3), y: (3,))", _fn("dot"), x(), x((3,)), variants=_PRODUCTS)
_moving(
    "dot_matrices",
    "dot(x: (2, 3), y: (3, 2))",
    _fn("dot"),
    x(),
    x((3, 2)),
    variants=_PRODUCTS,
)
_moving("dot_scalar", "dot(x, 2.0)", lambda xnp, a: xnp.dot(a, 2.0), x(), variants=ALL)
_moving("vdot", "vdot(x, y)", _fn("vdot"), x(), x(), variants=_PRODUCTS)
_moving(
    "inner",
    "inner(x: (2, 3), y: (4, 3))",
    _fn("inner"),
    x(),
    x((4, 3)),
    variants=_PRODUCTS,
)
_moving(
    "outer",
    "outer(x: (3,), y: (4,))",
    _fn("outer"),
    x((3,)),
    x((4,)),
    variants=_PRODUCTS,
)
_moving(
    "tensordot",
    "tensordot(x: (2, 3), y: (3, 4), axes=1)",
    _fn("tensordot", axes=1),
    x(),
    x((3, 4)),
    variants=_PRODUCTS,
)
case(
    "linspace",
    "linspace(x: (), y: (), num=5)",
    _fn("linspace", num=5),
    x(()),
    x(()),
    variants=REAL,
)
case(
    "linspace_arrays",
    "linspace(x: (3,), y: (3,), num=4, axis=1)",
    _fn("linspace", num=4, axis=1),
    x((3,)),
    x((3,)),
    variants=REAL,
)
_moving(
    "tensordot_axes",
    "tensordot(x: (2, 3, 4), y: (4, 2), axes=([0, 2], [1, 0]))",
    _fn("tensordot", axes=([0, 2], [1, 0])),
    x((2, 3, 4)),
    x((4, 2)),
    variants=_PRODUCTS,
)
_moving(
    "tensordot_full",
    "tensordot(x, y, axes=2)",
    _fn("tensordot", axes=2),
    x(),
    x(),
    variants=_PRODUCTS,
)
for _name, _spec, _shapes in [
    ("einsum_matmul", "ij,jk->ik", [(2, 3), (3, 4)]),
    ("einsum_batch", "bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("einsum_total", "ij,ij->", [(2, 3), (2, 3)]),
    ("einsum_outer", "i,j->ij", [(3,), (2,)]),
    ("einsum_transpose", "ij->ji", [(2, 3)]),
    ("einsum_diagonal", "ii->i", [(3, 3)]),
    ("einsum_three", "ij,jk,k->i", [(2, 3), (3, 4), (4,)]),
]:
    _moving(
        _name,
        f"einsum({_spec!r}, ...)",
        lambda xnp, *ops, spec=_spec: xnp.einsum(spec, *ops),
        *(x(s) for s in _shapes),
        variants=_PRODUCTS,
    )

# A composition: a small layer and its loss.
case(
    "layer",
    "mean(tanh(x @ w + b) ** 2)",
    lambda xnp, a, w, b: xnp.mean(xnp.tanh(a @ w + b) ** 2),
    x((4, 3)),
    x((3, 2), "small"),
    x((2,), "small"),
    variants=(*ALL, "mix"),
)
case(
    "softmax_cross_entropy",
    "-sum(log(exp(z) / sum(exp(z), axis=1, keepdims=True))[rows, labels])",
    lambda xnp, z: (
        -xnp.sum(
            xnp.log(xnp.exp(z) / xnp.sum(xnp.exp(z), axis=1, keepdims=True))[
                xnp.asarray([0, 1, 2]), xnp.asarray([2, 0, 1])
            ]
        )
    ),
    x((3, 4)),
    variants=REAL,
)


# -- operands -----------------------------------------------------------------


def _rng(*keys: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32("/".join(map(str, keys)).encode()))


def _draw(domain: str, shape: tuple[int, ...], rng: np.random.Generator) -> Any:
    if domain in DOMAINS:
        return rng.uniform(*DOMAINS[domain], shape)
    if domain == "nz":  # away from 0, either sign
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)
    if domain == "frac":  # away from integers and halves (jumps of rounding)
        whole = rng.integers(-2, 3, shape).astype(np.float64)
        return whole + rng.choice([0.2, 0.7], shape) + rng.uniform(0, 0.1, shape)
    raise ValueError(domain)


def operand_code(variant: str, position: int) -> str:
    first, rest = VARIANTS[variant]
    return first if position == 0 else rest


def operands(case: Case, variant: str) -> list[Any]:
    """The operands of ``case`` in ``variant``: NumPy arrays of their
    dtypes, or Python floats and complex numbers. Values are rounded to
    4 decimals, so that every dtype holds nearly the same numbers."""
    out: list[Any] = []
    for pos, op in enumerate(case.operands):
        code = operand_code(variant, pos)
        rng = _rng(case.name, variant, pos)
        if op.values is not None:
            raw = np.asarray(op.values, np.float64)
        else:
            raw = _draw(op.domain, op.shape, rng)
        if code in ("c8", "pyc"):
            raw = raw + 1j * rng.uniform(-0.5, 0.5, np.shape(raw))
        raw = np.round(raw, 4)
        if code in ("py", "pyc"):
            out.append(complex(raw.flat[0]) if code == "pyc" else float(raw.flat[0]))
        else:
            out.append(np.asarray(raw).astype(NP_DTYPES[code]))
    return out


# -- the loss and its derivative -----------------------------------------------


def _items(out: Any) -> list[Any]:
    return list(out) if isinstance(out, tuple | list) else [out]


def _is_complex(a: Any) -> bool:
    return np.dtype(a.dtype).kind == "c"


def loss(xnp: Any, case: Case, out: Any) -> Any:
    """The real scalar differentiated: see the module's notes."""
    total: Any = None
    for o in _items(out):
        if _is_complex(o):
            term = xnp.sum(xnp.real(o * xnp.conj(o)))
        elif case.loss == "sq":
            term = xnp.sum(o * o)
        else:
            term = xnp.sum(o)
        total = term if total is None else total + term
    return total


def cotangent(xnp: Any, case: Case, out: Any) -> Any:
    """The loss's derivative with respect to the output (in JAX's
    convention for complex numbers): the cotangent whose ``vjp`` is the
    gradient."""
    cts = []
    for o in _items(out):
        if _is_complex(o):
            cts.append(2 * xnp.conj(o))
        elif case.loss == "sq":
            cts.append(2 * o)
        else:
            cts.append(xnp.ones_like(o))
    if isinstance(out, tuple):
        return tuple(cts)
    if isinstance(out, list):
        return cts
    return cts[0]


# -- encoding -----------------------------------------------------------------


def _number(v: float, code: str) -> Any:
    if not math.isfinite(v):
        return str(v)  # nan, inf, -inf
    if code in ("f8", "c16"):
        return v
    # The shortest decimal that float32 reads back: every narrower float
    # is a float32 too.
    return float(np.format_float_positional(np.float32(v), unique=True, trim="-"))


def encode(result: Any, weak: bool | None = None) -> Any:
    """``[code, shape, values]`` of an array (see the module's notes)."""
    if isinstance(result, BaseException):
        return f"!{builtin_bases(result)[0]}"
    if isinstance(result, list | tuple):
        return [encode(r) for r in result]
    if isinstance(result, float | complex):
        return {
            "py": [result.real, result.imag] if isinstance(result, complex) else result
        }
    dt = np.dtype(result.dtype)
    values = np.asarray(result)
    if dt not in CODES and dt.kind == "V":  # float0 (bfloat16 is "V" too)
        return ["float0", list(values.shape)]
    code = CODES.get(dt, f"?{dt.name}")
    if weak is None:
        weak = bool(getattr(result, "weak_type", False))
    flat: list[Any]
    if dt.kind == "c":
        flat = [
            [_number(v.real, code), _number(v.imag, code)]
            for v in values.astype(np.complex128).ravel()
        ]
    elif dt.kind == "b":
        flat = [bool(v) for v in values.ravel()]
    elif dt.kind in "iu":
        flat = [int(v) for v in values.ravel()]
    else:
        flat = [_number(float(v), code) for v in values.astype(np.float64).ravel()]
    return [f"w:{code}" if weak else code, list(values.shape), flat]


def decode(encoded: Any) -> Any:
    """The operand an ``args`` entry describes: a NumPy array, or a Python
    float or complex number."""
    if isinstance(encoded, dict):
        v = encoded["py"]
        return complex(*v) if isinstance(v, list) else float(v)
    code, shape, values = encoded
    dt = np.dtype(NP_DTYPES[code.removeprefix("w:")])
    if dt.kind == "c":
        values = [complex(*v) for v in values]
    return (
        np.asarray(values, np.complex128 if dt.kind == "c" else np.float64)
        .astype(dt)
        .reshape(shape)
    )


def builtin_bases(exc: BaseException) -> list[str]:
    """The names of the built-in exception classes ``exc`` is an instance of,
    nearest first."""
    import builtins

    return [
        c.__name__
        for c in type(exc).__mro__
        if getattr(builtins, c.__name__, None) is c and issubclass(c, BaseException)
    ]


# ---------------------------------------------------------------------- main


def record(jax: Any, case: Case, variant: str) -> dict[str, Any]:
    """One row of the file: JAX's gradient of the case in the variant."""
    import jax.numpy as jnp

    args = operands(case, variant)
    row: dict[str, Any] = {"args": [encode(a) for a in args]}
    argnums = tuple(range(len(args)))
    jargs = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]

    def fn(*a: Any) -> Any:
        return case.fn(jnp, *a)

    try:
        out = fn(*jargs)
        value, grads = jax.value_and_grad(
            lambda *a: loss(jnp, case, fn(*a)), argnums=argnums
        )(*jargs)
        primal, vjp_fn = jax.vjp(fn, *jargs)
        ct = cotangent(jnp, case, primal)
        cts = vjp_fn(ct)
    except Exception as exc:
        row["error"] = encode(exc)
        return row
    row.update(out=encode(out))
    if encode(primal) != row["out"]:  # an operator on Python scalars
        row.update(primal=encode(primal))
    row.update(
        loss=encode(value),
        grad=encode(list(grads)),
        ct=[encode(c)[0] for c in _items(ct)],
        vjp=encode(list(cts)),
    )
    return row


def main() -> None:
    import jax

    data: dict[str, Any] = {
        "description": (
            "Gradients of jax.numpy functions (values, dtypes, weak flags), "
            "recorded by tests/golden/make_grad_golden.py"
        ),
        "versions": {
            "jax": jax.__version__,
            "numpy": np.__version__,
            "ml_dtypes": ml_dtypes.__version__,
            "python": platform.python_version(),
        },
        "cases": {},
    }
    errors = 0
    # Names given on the command line: record those cases only, keeping the
    # others as recorded before.
    only = set(sys.argv[1:])
    if only:
        unknown = only - set(CASES)
        if unknown:
            raise SystemExit(f"no such cases: {sorted(unknown)}")
        data["cases"] = json.loads(OUT.read_text())["cases"]
    for name, c in CASES.items():
        if only and name not in only:
            continue
        rows: dict[str, Any] = {}
        for variant in c.variants:
            with jax.enable_x64(variant in X64_VARIANTS), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows[variant] = record(jax, c, variant)
            if "error" in rows[variant]:
                errors += 1
                print(
                    f"{name} [{variant}]: JAX raised {rows[variant]['error']}",
                    file=sys.stderr,
                )
        data["cases"][name] = {"expr": c.expr, "variants": rows}
    lines = ["{"]
    for key in ("description", "versions"):
        lines.append(f"  {json.dumps(key)}: {json.dumps(data[key])},")
    lines.append('  "cases": {')
    items = list(data["cases"].items())
    for j, (name, body) in enumerate(items):
        comma = "," if j < len(items) - 1 else ""
        lines.append(
            f"    {json.dumps(name)}: {json.dumps(body, separators=(',', ':'))}{comma}"
        )
    lines.append("  }")
    lines.append("}")
    OUT.write_text("\n".join(lines) + "\n")
    rows_n = sum(len(b["variants"]) for b in data["cases"].values())
    print(
        f"{len(items)} cases, {rows_n} rows ({errors} errors) written to {OUT}",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
