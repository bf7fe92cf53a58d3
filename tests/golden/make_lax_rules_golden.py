"""Record the JVPs of jax.lax functions: values, dtypes and weak flags.

Run with a Python that has JAX installed, from anywhere::

    python tests/golden/make_lax_rules_golden.py

It writes ``lax_rules.json`` beside this file. ``tests/test_lax_rules.py``
computes the same JVPs with the differentiation rules of ``typelattice.lax``
and compares; it also checks them against finite differences, their
transposes against them, and their own derivatives (second order).

The cases, the operands and the encoding live here so that the recording
and the tests build exactly the same calls. Importing this module needs only
NumPy and ml_dtypes (JAX is imported by ``main``).

A case is a function ``fn(lax, *operands)`` of the ``lax`` module given
(``jax.lax`` or ``typelattice.lax``) and operand specifications: floating
operands (``'x'``) take the dtype of the *variant* (``f4`` float32, ``bf``
bfloat16, ``c8`` complex64, ``f8`` float64 in 64-bit mode, ``w`` weak
float32, ``wm`` the first floating operand weak and the others strong
float32), with values drawn from a named domain (``'pos'``, ``'unit'``...)
or given; integer and bool operands (``'i'``, ``'b'``) are constants, whose
tangents are ``float0`` zeros. Tangents of floating operands are drawn from
[-1, 1] (the complex plane's square for complex operands). Draws are seeded
by the case's name, the variant and the operand's position.

An encoded result is ``[code, shape, values]``, the code being
``typelattice.dtype_code``'s (``w:`` prefixed when weak); complex values are
``[re, im]`` pairs; ``["float0", shape]`` for a ``float0`` tangent; a list of
those for several results; ``"!"`` plus the class of an exception raised.
Each row holds the function's result (``eager``) and the ``primal`` and
``tangent`` outputs of ``jax.jvp``: under ``jax.jvp`` JAX can lose the weak
flag of weak arrays (its rules build constants that are strong), so the
test compares weak flags with the eager result where they differ.
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

OUT = Path(__file__).with_name("lax_rules.json")

# Variant -> (dtype code of the floating operands, which are weak: "all",
# "first" or "none").
VARIANTS: dict[str, tuple[str, str]] = {
    "f4": ("f4", "none"),
    "bf": ("bf", "none"),
    "c8": ("c8", "none"),
    "f8": ("f8", "none"),
    "w": ("f4", "all"),
    "wm": ("f4", "first"),
}
X64_VARIANTS = {"f8"}
REAL_VARIANTS = ("f4", "bf", "f8", "w", "wm")

NP_DTYPES: dict[str, Any] = {
    "b1": np.bool_,
    "i1": np.int8,
    "i4": np.int32,
    "bf": ml_dtypes.bfloat16,
    "f2": np.float16,
    "f4": np.float32,
    "f8": np.float64,
    "c8": np.complex64,
    "c16": np.complex128,
}
CODES = {np.dtype(t): code for code, t in NP_DTYPES.items()}
CODES[np.dtype(np.int64)] = "i8"

# Domains of values: (low, high) of a uniform draw, or a rule below.
DOMAINS: dict[str, tuple[float, float]] = {
    "any": (-2.0, 2.0),
    "small": (-1.0, 1.0),
    "pos": (0.5, 2.0),
    "unit": (-0.8, 0.8),
    "gt1": (1.2, 3.0),
    "low": (-3.0, -2.0),
    "high": (2.0, 3.0),
}


class Operand(NamedTuple):
    """An operand: ``kind`` ``'x'`` (floating, of the variant's dtype unless
    ``dtype`` says), ``'i'`` (int32) or ``'b'`` (bool) constants; values from
    ``domain`` or ``values``."""

    kind: str
    shape: tuple[int, ...] = (2, 3)
    domain: str = "any"
    values: Any = None
    dtype: str | None = None


def x(shape: tuple[int, ...] = (2, 3), domain: str = "any", **kw: Any) -> Operand:
    return Operand("x", shape, domain, **kw)


def ints(values: Any) -> Operand:
    return Operand("i", np.shape(values), values=values)


def bools(values: Any) -> Operand:
    return Operand("b", np.shape(values), values=values)


class Case(NamedTuple):
    """A function of the ``lax`` module and its operands.

    ``variants``: where it runs; ``linear``: groups of operand positions in
    which the function is linear together (its transpose is checked);
    ``fd``: whether finite differences of the function (evaluated in
    float64) measure the JVP (not for dtype conversions, nor at kinks);
    ``jax``: whether JAX's JVP is compared (otherwise the reason it is not).
    """

    name: str
    expr: str
    fn: Callable[..., Any]
    operands: tuple[Operand, ...]
    variants: tuple[str, ...] = (*REAL_VARIANTS, "c8")
    linear: tuple[tuple[int, ...], ...] = ()
    fd: bool = True
    jax: str = ""


CASES: dict[str, Case] = {}


def case(
    name: str,
    expr: str,
    fn: Callable[..., Any],
    *operands: Operand,
    real: bool = False,
    **kw: Any,
) -> None:
    if real:
        kw.setdefault("variants", REAL_VARIANTS)
    variants = kw.get("variants", (*REAL_VARIANTS, "c8"))
    if sum(o.kind == "x" for o in operands) < 2:  # wm would be w
        kw["variants"] = tuple(v for v in variants if v != "wm")
    assert name not in CASES, name
    CASES[name] = Case(name, expr, fn, operands, **kw)


def _method(name: str, *args: Any, **kw: Any) -> Callable[..., Any]:
    return lambda lax, *xs: getattr(lax, name)(*xs, *args, **kw)


def _const(lax: Any, values: Any, like: Any) -> Any:
    """A constant of ``like``'s dtype (strong), built with ``lax``."""
    return lax.convert_element_type(np.asarray(values), like.dtype)


def _polygamma(m: int) -> Callable[..., Any]:
    """``polygamma(m, x)``: public in jax.lax (``m`` an array), a primitive
    with ``m`` a parameter in typelattice.lax."""

    def fn(lax: Any, v: Any) -> Any:
        if lax.__name__.startswith("typelattice"):
            from typelattice._lax._elementwise import polygamma_p

            return polygamma_p.bind(v, m=m)
        return lax.polygamma(lax.full_like(v, m), v)

    return fn


# -- the cases ----------------------------------------------------------------

for _name, _domain in [
    ("neg", "any"),
    ("exp", "any"),
    ("exp2", "any"),
    ("log", "pos"),
    ("log1p", "pos"),
    ("expm1", "any"),
    ("sqrt", "pos"),
    ("rsqrt", "pos"),
    ("sin", "any"),
    ("cos", "any"),
    ("tan", "small"),
    ("asin", "unit"),
    ("acos", "unit"),
    ("atan", "any"),
    ("sinh", "any"),
    ("cosh", "any"),
    ("tanh", "any"),
    ("asinh", "any"),
    ("acosh", "gt1"),
    ("atanh", "unit"),
    ("logistic", "any"),
]:
    linear = ((0,),) if _name == "neg" else ()
    case(_name, f"lax.{_name}(x)", _method(_name), x(domain=_domain), linear=linear)

for _name, _domain in [
    ("cbrt", "nz"),
    ("erf", "any"),
    ("erfc", "any"),
    ("erf_inv", "unit"),
    ("lgamma", "nonint"),
    ("digamma", "nonint"),
    ("sign", "nz"),
    ("floor", "frac"),
    ("ceil", "frac"),
    ("round", "frac"),
    ("is_finite", "any"),
]:
    case(_name, f"lax.{_name}(x)", _method(_name), x(domain=_domain), real=True)

case("abs", "lax.abs(x)", _method("abs"), x(domain="nz"))
case("round_even", "lax.round(x, 1)", _method("round", 1), x(domain="frac"), real=True)
case("polygamma_1", "lax.polygamma(1, x)", _polygamma(1), x(domain="nonint"), real=True)
case("polygamma_2", "lax.polygamma(2, x)", _polygamma(2), x(domain="nonint"), real=True)
case(
    "conj",
    "lax.conj(x)",
    _method("conj"),
    x(),
    variants=("f4", "f8", "w", "c8"),
    linear=((0,),),
)
case("real", "lax.real(x)", _method("real"), x(), variants=("c8",), linear=((0,),))
case("imag", "lax.imag(x)", _method("imag"), x(), variants=("c8",), linear=((0,),))
for _y in (0, 1, 2, 3, -2):
    case(
        f"integer_pow_{_y}",
        f"lax.integer_pow(x, {_y})",
        _method("integer_pow", _y),
        x(domain="nz"),
    )
case(
    "convert_to_bf16",
    "lax.convert_element_type(x, bfloat16)",
    _method("convert_element_type", ml_dtypes.bfloat16),
    x(),
    variants=("f4", "f8", "w"),
    linear=((0,),),
    fd=False,
)
case(
    "convert_from_bf16",
    "lax.convert_element_type(x: bfloat16, float32)",
    _method("convert_element_type", np.float32),
    x(dtype="bf"),
    variants=("f4",),
    linear=((0,),),
    fd=False,
)
case(
    "convert_to_complex",
    "lax.convert_element_type(x, complex64)",
    _method("convert_element_type", np.complex64),
    x(),
    variants=("f4", "w"),
    linear=((0,),),
    fd=False,
)
case(
    "convert_to_real",
    "lax.convert_element_type(x, float32)",
    _method("convert_element_type", np.float32),
    x(),
    variants=("c8",),
    linear=((0,),),
    fd=False,
)
case(
    "convert_to_int",
    "lax.convert_element_type(x, int32)",
    _method("convert_element_type", np.int32),
    x(domain="frac"),
    real=True,
    fd=False,
)
case(
    "convert_from_int",
    "lax.convert_element_type(i, float32) * x",
    lambda lax, i, v: lax.mul(lax.convert_element_type(i, v.dtype), v),
    ints([[1, -2, 3], [0, 5, 7]]),
    x(),
    real=True,
)
case(
    "bitcast",
    "lax.bitcast_convert_type(x, int32)",
    _method("bitcast_convert_type", np.int32),
    x(dtype="f4"),
    variants=("f4",),
)

# Functions of integers and bools only: zero tangents of float0.
_I = ints([[7, -7, 0], [5, 100, -3]])
_J = ints([[2, 1, 3], [1, 0, 31]])
case(
    "population_count",
    "lax.population_count(i)",
    _method("population_count"),
    _I,
    variants=("f4",),
)
case("clz", "lax.clz(i)", _method("clz"), _I, variants=("f4",))
case("bitwise_not", "lax.bitwise_not(i)", _method("bitwise_not"), _I, variants=("f4",))
for _name in (
    "add",
    "mul",
    "div",
    "rem",
    "max",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "shift_left",
    "shift_right_logical",
    "shift_right_arithmetic",
):
    case(
        f"{_name}_int" if _name in ("add", "mul", "div", "rem", "max") else _name,
        f"lax.{_name}(i, j)",
        _method(_name),
        _I,
        _J,
        variants=("f4",),
    )
for _name in ("reduce_and", "reduce_or"):
    case(
        _name,
        f"lax.{_name}(b, (1,))",
        _method(_name, (1,)),
        bools([[True, False, True], [True, True, True]]),
        variants=("f4",),
    )
case(
    "reduce_xor",
    "lax.reduce_xor(i, (0,))",
    _method("reduce_xor", (0,)),
    _I,
    variants=("f4",),
)
case(
    "iota",
    "lax.iota(float32, 4)",
    lambda lax: lax.iota(np.float32, 4),
    variants=("f4",),
)

# Comparisons and argmax of floating operands: zero tangents of bool/int results.
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    case(_name, f"lax.{_name}(x, y)", _method(_name), x(), x(), real=True)
case(
    "argmax",
    "lax.argmax(x, 1, int32)",
    _method("argmax", 1, np.int32),
    x(),
    real=True,
)
case(
    "argmin",
    "lax.argmin(x, 0, int32)",
    _method("argmin", 0, np.int32),
    x(),
    real=True,
)

# Binary.
case("add", "lax.add(x, y)", _method("add"), x(), x(), linear=((0, 1),))
case("sub", "lax.sub(x, y)", _method("sub"), x(), x(), linear=((0, 1),))
case("mul", "lax.mul(x, y)", _method("mul"), x(), x(), linear=((0,), (1,)))
case("div", "lax.div(x, y)", _method("div"), x(), x(domain="nz"), linear=((0,),))
case(
    "add_broadcast",
    "lax.add(x: (3, 1), y: (3, 4))",
    _method("add"),
    x((3, 1)),
    x((3, 4)),
    linear=((0, 1), (0,), (1,)),
)
case(
    "sub_scalar",
    "lax.sub(x: (), y: (2, 3))",
    _method("sub"),
    x(()),
    x(),
    linear=((0, 1), (0,), (1,)),
)
case(
    "mul_broadcast",
    "lax.mul(x: (1, 3), y: (2, 3))",
    _method("mul"),
    x((1, 3)),
    x(),
    linear=((0,), (1,)),
)
case(
    "div_scalar",
    "lax.div(x: (2, 3), y: ())",
    _method("div"),
    x(),
    x((), domain="nz"),
    linear=((0,),),
)
case(
    "rem", "lax.rem(x, y)", _method("rem"), x(domain="high"), x(domain="pos"), real=True
)
case(
    "rem_scalar",
    "lax.rem(x: (), y: (2, 3))",
    _method("rem"),
    x((), domain="high"),
    x(domain="pos"),
    real=True,
)
case("pow", "lax.pow(x, y)", _method("pow"), x(domain="pos"), x())
case(
    "pow_scalar",
    "lax.pow(x: (), y: (2, 3))",
    _method("pow"),
    x((), domain="pos"),
    x(),
)
case(
    "pow_int",
    "lax.pow(x, i)",
    _method("pow"),
    x(domain="pos"),
    ints([[0, 1, 2], [3, -1, -2]]),
)
case(
    "pow_int_at_zero",
    "lax.pow(x, i) at x = 0",
    _method("pow"),
    x(values=[[0.0, 0.0, 0.0], [0.0, 1.0, 2.0]]),
    ints([[0, 1, 2], [3, 0, 0]]),
    fd=False,
)
case(
    "pow_at_zero",
    "lax.pow(x, y) at x = 0",
    _method("pow"),
    x(values=[[0.0, 0.0, 0.0], [1.0, 2.0, 0.5]]),
    x(values=[[1.0, 2.0, 3.0], [0.0, 1.5, 2.0]]),
    real=True,
    fd=False,
)
case("max", "lax.max(x, y)", _method("max"), x(), x())
case("min", "lax.min(x, y)", _method("min"), x(), x())
case(
    "max_ties",
    "lax.max(x, y) with ties",
    _method("max"),
    x(values=[[1.0, 2.0, 3.0], [-1.0, 0.0, 5.0]]),
    x(values=[[1.0, 0.0, 3.0], [-1.0, 0.5, 4.0]]),
    real=True,
    fd=False,
)
case(
    "min_ties",
    "lax.min(x, y) with ties",
    _method("min"),
    x(values=[[1.0, 2.0, 3.0], [-1.0, 0.0, 5.0]]),
    x(values=[[1.0, 0.0, 3.0], [-1.0, 0.5, 4.0]]),
    real=True,
    fd=False,
)
case("atan2", "lax.atan2(x, y)", _method("atan2"), x(), x(domain="pos"))
case(
    "complex",
    "lax.complex(x, y)",
    _method("complex"),
    x(),
    x(),
    variants=("f4", "f8", "w", "wm"),
    linear=((0, 1),),
)
case(
    "complex_scalar",
    "lax.complex(x: (), y: (2, 3))",
    _method("complex"),
    x(()),
    x(),
    variants=("f4", "w", "wm"),
    linear=((0, 1),),
)
case(
    "nextafter",
    "lax.nextafter(x, y)",
    _method("nextafter"),
    x(),
    x(),
    variants=("f4",),
    fd=False,
)
case(
    "abs_at_zero",
    "lax.abs(x) at 0",
    _method("abs"),
    x(values=[[0.0, -0.0, 1.0], [-1.0, 2.0, -2.0]]),
    fd=False,
)
case(
    "sqrt_at_zero",
    "lax.sqrt(x) at 0",
    _method("sqrt"),
    x(values=[[0.0, 1.0, 4.0], [0.25, 2.0, 9.0]]),
    real=True,
    fd=False,
)

# Selection.
_P = bools([[True, False, True], [False, False, True]])
case("select", "lax.select(p, x, y)", _method("select"), _P, x(), x(), linear=((1, 2),))
case(
    "select_n",
    "lax.select_n(i, x, y, z)",
    _method("select_n"),
    ints([[0, 1, 2], [2, 5, -1]]),
    x(),
    x(),
    x(),
    linear=((1, 2, 3),),
)
case(
    "select_scalar",
    "lax.select(p: (), x, y)",
    _method("select"),
    bools(False),
    x(),
    x(),
    linear=((1, 2),),
)
case(
    "clamp",
    "lax.clamp(lo, x, hi)",
    _method("clamp"),
    x(domain="small"),
    x(values=[[-2.0, 0.0, 3.0], [0.5, -0.25, -3.0]]),
    x(domain="high"),
    real=True,
)
case(
    "clamp_complex",
    "lax.clamp(lo, x, hi) of complex numbers (by their real parts)",
    _method("clamp"),
    x(domain="small"),
    x(values=[[-2.0, 0.0, 3.0], [0.5, -0.25, -3.0]]),
    x(domain="high"),
    variants=("c8",),
    jax="JAX's rule for clamp compares complex numbers, which its lax refuses",
)
case(
    "clamp_scalar",
    "lax.clamp(lo: (), x, hi: ())",
    _method("clamp"),
    x((), values=-1.0),
    x(values=[[-2.0, 0.0, 3.0], [0.5, -0.25, -3.0]]),
    x((), values=1.5),
    real=True,
    jax="JAX's rule for clamp fails for bounds of rank 0 (cases of unequal shapes)",
)
case(
    "clamp_at_bounds",
    "lax.clamp(lo, x, hi) at the bounds",
    _method("clamp"),
    x(values=[[-1.0, -1.0, 0.0], [1.0, 0.0, 0.0]]),
    x(values=[[-1.0, 1.0, 0.0], [1.0, 0.5, 2.0]]),
    x(values=[[1.0, 1.0, 1.0], [2.0, 0.5, 2.0]]),
    real=True,
    fd=False,
)

# Shapes.
case(
    "broadcast_in_dim",
    "lax.broadcast_in_dim(x: (2, 1), (3, 2, 4), (1, 2))",
    _method("broadcast_in_dim", (3, 2, 4), (1, 2)),
    x((2, 1)),
    linear=((0,),),
)
case(
    "expand_dims",
    "lax.expand_dims(x, (0, -1))",
    _method("expand_dims", (0, -1)),
    x(),
    linear=((0,),),
)
case(
    "full",
    "lax.full((2, 3), x: ())",
    lambda lax, v: lax.full((2, 3), v),
    x(()),
    linear=((0,),),
)
case(
    "reshape", "lax.reshape(x, (3, 2))", _method("reshape", (3, 2)), x(), linear=((0,),)
)
case(
    "reshape_dims",
    "lax.reshape(x: (2, 3, 2), (4, 3), (2, 0, 1))",
    _method("reshape", (4, 3), (2, 0, 1)),
    x((2, 3, 2)),
    linear=((0,),),
)
case(
    "transpose",
    "lax.transpose(x: (2, 3, 2), (2, 0, 1))",
    _method("transpose", (2, 0, 1)),
    x((2, 3, 2)),
    linear=((0,),),
)
case(
    "squeeze",
    "lax.squeeze(x: (1, 3, 1), (0, 2))",
    _method("squeeze", (0, 2)),
    x((1, 3, 1)),
    linear=((0,),),
)
case("rev", "lax.rev(x, (1,))", _method("rev", (1,)), x(), linear=((0,),))
case(
    "concatenate",
    "lax.concatenate([x: (2, 3), y: (2, 1), z: (2, 2)], 1)",
    lambda lax, *xs: lax.concatenate(xs, 1),
    x(),
    x((2, 1)),
    x((2, 2)),
    linear=((0, 1, 2),),
)
case(
    "pad",
    "lax.pad(x, v: (), [(1, -1, 1), (0, 2, 0)])",
    _method("pad", [(1, -1, 1), (0, 2, 0)]),
    x(),
    x(()),
    linear=((0, 1),),
)
case(
    "slice",
    "lax.slice(x: (4, 5), (1, 0), (4, 5), (2, 2))",
    _method("slice", (1, 0), (4, 5), (2, 2)),
    x((4, 5)),
    linear=((0,),),
)
case(
    "dynamic_slice",
    "lax.dynamic_slice(x: (4, 5), (i, j), (2, 3))",
    lambda lax, v, i, j: lax.dynamic_slice(v, (i, j), (2, 3)),
    x((4, 5)),
    ints(1),
    ints(4),
    linear=((0,),),
)
case(
    "dynamic_update_slice",
    "lax.dynamic_update_slice(x: (4, 5), u: (2, 2), (i, j))",
    lambda lax, v, u, i, j: lax.dynamic_update_slice(v, u, (i, j)),
    x((4, 5)),
    x((2, 2)),
    ints(3),
    ints(-2),
    linear=((0, 1),),
)

# Reductions.
case(
    "reduce_sum",
    "lax.reduce_sum(x, (1,))",
    _method("reduce_sum", (1,)),
    x(),
    linear=((0,),),
)
case(
    "reduce_sum_all",
    "lax.reduce_sum(x, (0, 1))",
    _method("reduce_sum", (0, 1)),
    x(),
    linear=((0,),),
)
case(
    "reduce_prod",
    "lax.reduce_prod(x: (2, 3, 2), (0, 2))",
    _method("reduce_prod", (0, 2)),
    x((2, 3, 2)),
)
case(
    "reduce_prod_zeros",
    "lax.reduce_prod(x, (1,)) with zeros",
    _method("reduce_prod", (1,)),
    x((3, 3), values=[[1.5, 0.0, -2.0], [0.0, 3.0, 0.0], [0.5, 2.0, 1.25]]),
    real=True,
)
case("reduce_max", "lax.reduce_max(x, (1,))", _method("reduce_max", (1,)), x())
case("reduce_min", "lax.reduce_min(x, (0,))", _method("reduce_min", (0,)), x())
case(
    "reduce_max_ties",
    "lax.reduce_max(x, (1,)) with ties",
    _method("reduce_max", (1,)),
    x(values=[[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
    real=True,
    fd=False,
)


# Window reductions (pooling). A window maximum's tangent is its chosen
# element's; select_and_scatter_add, the transpose of that choice, has no
# public jax.lax function: the case binds it (JAX's private function).
def _window_choice(lax: Any, s: Any, v: Any) -> Any:
    window = {
        "window_dimensions": (2, 2),
        "window_strides": (1, 2),
        "padding": ((1, 0), (0, 1)),
    }
    if lax.__name__.startswith("typelattice"):
        from typelattice._lax._windowed import select_and_scatter_add_p

        return select_and_scatter_add_p.bind(
            s, v, select="ge", base_dilation=(1, 1), window_dilation=(1, 1), **window
        )
    from jax._src.lax import windowed_reductions

    return windowed_reductions._select_and_scatter_add(s, v, lax.ge_p, **window)


case(
    "reduce_window_sum",
    "lax.reduce_window(x: (3, 4), 0, add, (2, 2), (1, 2), [(1, 0), (0, 1)])",
    lambda lax, v: lax.reduce_window(v, 0, lax.add, (2, 2), (1, 2), [(1, 0), (0, 1)]),
    x((3, 4)),
    linear=((0,),),
)
case(
    "reduce_window_sum_dilated",
    "lax.reduce_window(x: (4, 5), 0, add, (2, 2), (2, 1), [(1, 1), (0, 2)], "
    "(2, 1), (1, 2))",
    lambda lax, v: lax.reduce_window(
        v, 0, lax.add, (2, 2), (2, 1), [(1, 1), (0, 2)], (2, 1), (1, 2)
    ),
    x((4, 5)),
    linear=((0,),),
)
case(
    "reduce_window_max",
    "lax.reduce_window(x: (3, 4), -inf, max, (2, 2), (1, 1), 'SAME')",
    lambda lax, v: lax.reduce_window(v, -np.inf, lax.max, (2, 2), (1, 1), "SAME"),
    x((3, 4)),
    real=True,
)
case(
    "reduce_window_max_dilated",
    "lax.reduce_window(x: (4, 5), -inf, max, (2, 2), (1, 2), 'SAME', (2, 1), (1, 2))",
    lambda lax, v: lax.reduce_window(
        v, -np.inf, lax.max, (2, 2), (1, 2), "SAME", (2, 1), (1, 2)
    ),
    x((4, 5)),
    real=True,
)
case(
    "reduce_window_min",
    "lax.reduce_window(x: (3, 4), inf, min, (3, 2), (2, 1), 'VALID')",
    lambda lax, v: lax.reduce_window(v, np.inf, lax.min, (3, 2), (2, 1), "VALID"),
    x((3, 4)),
    real=True,
)
case(
    "select_and_scatter_add",
    "select_and_scatter_add(s: (3, 2), x: (3, 4), ge, (2, 2), (1, 2), "
    "[(1, 0), (0, 1)])",
    _window_choice,
    x((3, 2)),
    x((3, 4)),
    real=True,
    linear=((0,),),
)
case("cumsum", "lax.cumsum(x, 1)", _method("cumsum", 1), x(), linear=((0,),))
case(
    "cumsum_reverse",
    "lax.cumsum(x, 0, reverse=True)",
    _method("cumsum", 0, True),
    x(),
    linear=((0,),),
)
case("cumprod", "lax.cumprod(x: (2, 5), 1)", _method("cumprod", 1), x((2, 5)))
case(
    "cumprod_zeros",
    "lax.cumprod(x, 1, reverse=True) with zeros",
    _method("cumprod", 1, True),
    x((2, 5), values=[[1.5, 0.0, -2.0, 0.5, 3.0], [0.0, 3.0, 0.0, 2.0, -1.0]]),
    real=True,
)
case("cummax", "lax.cummax(x: (2, 5), 1)", _method("cummax", 1), x((2, 5)))
case(
    "cummin_reverse",
    "lax.cummin(x: (2, 5), 1, reverse=True)",
    _method("cummin", 1, True),
    x((2, 5)),
)
case("sort", "lax.sort(x: (2, 4), 1)", _method("sort", 1), x((2, 4)))
case(
    "sort_two",
    "lax.sort((x, y), 0, num_keys=1)",
    lambda lax, a, b: lax.sort((a, b), 0, num_keys=1),
    x((4, 2)),
    x((4, 2)),
    real=True,
)
case(
    "sort_with_ints",
    "lax.sort((i, x), 1, num_keys=1)",
    lambda lax, i, a: lax.sort((i, a), 1, num_keys=1),
    ints([[3, 1, 2], [0, 2, 1]]),
    x(),
)

# Contractions.
_MATMUL = (((1,), (0,)), ((), ()))
case(
    "dot_general",
    "lax.dot_general(x: (2, 3), y: (3, 4), matmul)",
    lambda lax, a, b: lax.dot_general(a, b, _MATMUL),
    x((2, 3)),
    x((3, 4)),
    linear=((0,), (1,)),
)
case(
    "dot_general_batch",
    "lax.dot_general(x: (2, 3, 4), y: (2, 4, 5), batch 0, contract 2 with 1)",
    lambda lax, a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
    x((2, 3, 4)),
    x((2, 4, 5)),
    linear=((0,), (1,)),
)
case(
    "dot_general_order",
    "lax.dot_general(x: (3, 2, 4), y: (4, 5, 3), contract (2, 0) with (0, 2))",
    lambda lax, a, b: lax.dot_general(a, b, (((2, 0), (0, 2)), ((), ()))),
    x((3, 2, 4)),
    x((4, 5, 3)),
    linear=((0,), (1,)),
)
case(
    "dot_general_rhs_batch",
    "lax.dot_general(x: (3, 2), y: (4, 2, 3), batch 1 with 1, contract 0 with 2)",
    lambda lax, a, b: lax.dot_general(a, b, (((0,), (2,)), ((1,), (1,)))),
    x((3, 2)),
    x((4, 2, 3)),
    linear=((0,), (1,)),
)
case(
    "dot_general_mixed",
    "lax.dot_general(x: bfloat16, y: float32)",
    lambda lax, a, b: lax.dot_general(a, b, _MATMUL),
    x((2, 3), dtype="bf"),
    x((3, 2)),
    variants=("f4",),
    linear=((0,), (1,)),
)
case(
    "dot_general_real_complex",
    "lax.dot_general(x: float32, y: complex64)",
    lambda lax, a, b: lax.dot_general(a, b, _MATMUL),
    x((2, 3), dtype="f4"),
    x((3, 2)),
    variants=("c8",),
    linear=((0,), (1,)),
)
case(
    "dot_general_int",
    "lax.dot_general(i: int32, y)",
    lambda lax, i, b: lax.dot_general(i, b, _MATMUL),
    ints([[1, -2, 3], [0, 4, 1]]),
    x((3, 2)),
    variants=("f4", "f8", "w"),
    linear=((1,),),
)
case(
    "dot_general_preferred",
    "lax.dot_general(x, y, preferred_element_type=float32)",
    lambda lax, a, b: lax.dot_general(a, b, _MATMUL, preferred_element_type=np.float32),
    x((2, 3)),
    x((3, 2)),
    variants=("bf", "f4"),
    linear=((0,), (1,)),
    fd=False,
)

# Indexing.
_ROWS = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,)}
_ELEMENTS = {"offset_dims": (), "collapsed_slice_dims": (0,), "start_index_map": (0,)}
_S_ROWS = {
    "update_window_dims": (1,),
    "inserted_window_dims": (0,),
    "scatter_dims_to_operand_dims": (0,),
}
_S_ELEMENTS = {
    "update_window_dims": (),
    "inserted_window_dims": (0,),
    "scatter_dims_to_operand_dims": (0,),
}


def _gather(dn: dict[str, Any], sizes: tuple[int, ...], **kw: Any) -> Any:
    return lambda lax, v, i: lax.gather(
        v, i, lax.GatherDimensionNumbers(**dn), sizes, **kw
    )


def _scatter(name: str, dn: dict[str, Any], **kw: Any) -> Any:
    return lambda lax, v, i, u: getattr(lax, name)(
        v, i, u, lax.ScatterDimensionNumbers(**dn), **kw
    )


case(
    "gather_rows",
    "lax.gather(x: (4, 3), [[2], [0], [2]], rows)",
    _gather(_ROWS, (1, 3)),
    x((4, 3)),
    ints([[2], [0], [2]]),
    linear=((0,),),
)
case(
    "gather_clip",
    "lax.gather(x: (4,), [[5], [-2], [1]], elements, mode='clip')",
    _gather(_ELEMENTS, (1,), mode="clip"),
    x((4,)),
    ints([[5], [-2], [1]]),
    linear=((0,),),
)
case(
    "gather_fill",
    "lax.gather(x: (4,), [[1], [5], [3]], elements, mode='fill', fill_value=2)",
    _gather(_ELEMENTS, (1,), mode="fill", fill_value=2.0),
    x((4,)),
    ints([[1], [5], [3]]),
    linear=((0,),),
)
case(
    "gather_batching",
    "lax.gather(x: (2, 3), i: (2, 1), take along axis 1)",
    _gather(
        {
            "offset_dims": (),
            "collapsed_slice_dims": (1,),
            "start_index_map": (1,),
            "operand_batching_dims": (0,),
            "start_indices_batching_dims": (0,),
        },
        (1, 1),
    ),
    x((2, 3)),
    ints([[2], [0]]),
    linear=((0,),),
)
_SCATTER_AT = ints([[1], [3], [1], [9]])
case(
    "scatter_add",
    "lax.scatter_add(x: (5,), [[1], [3], [1], [9]], u: (4,))",
    _scatter("scatter_add", _S_ELEMENTS),
    x((5,)),
    _SCATTER_AT,
    x((4,)),
    linear=((0, 2),),
)
case(
    "scatter_add_clip",
    "lax.scatter_add(x: (5,), [[1], [3], [1], [9]], u: (4,), mode='clip')",
    _scatter("scatter_add", _S_ELEMENTS, mode="clip"),
    x((5,)),
    _SCATTER_AT,
    x((4,)),
    linear=((0, 2),),
)
case(
    "scatter_add_rows",
    "lax.scatter_add(x: (4, 3), [[3], [0]], u: (2, 3), rows)",
    _scatter("scatter_add", _S_ROWS),
    x((4, 3)),
    ints([[3], [0]]),
    x((2, 3)),
    linear=((0, 2),),
)
case(
    "scatter",
    "lax.scatter(x: (5,), [[1], [3], [1], [9]], u: (4,))",
    _scatter("scatter", _S_ELEMENTS),
    x((5,)),
    _SCATTER_AT,
    x((4,)),
    linear=((0, 2),),
)
case(
    "scatter_rows",
    "lax.scatter(x: (4, 3), [[3], [0], [3]], u: (3, 3), rows)",
    _scatter("scatter", _S_ROWS),
    x((4, 3)),
    ints([[3], [0], [3]]),
    x((3, 3)),
    linear=((0, 2),),
)
case(
    "scatter_mul",
    "lax.scatter_mul(x: (5,), [[1], [3], [1], [9]], constant updates)",
    lambda lax, v, i: lax.scatter_mul(
        v,
        i,
        _const(lax, [2.0, -0.5, 1.5, 3.0], v),
        lax.ScatterDimensionNumbers(**_S_ELEMENTS),
    ),
    x((5,)),
    _SCATTER_AT,
    linear=((0,),),
)
case(
    "scatter_mul_updates",
    "lax.scatter_mul(x: (5,), [[1], [3], [1], [9]], u: (4,))",
    _scatter("scatter_mul", _S_ELEMENTS),
    x((5,)),
    _SCATTER_AT,
    x((4,)),
    variants=("f4",),
    fd=False,
)
for _name in ("scatter_min", "scatter_max"):
    case(
        _name,
        f"lax.{_name}(x: (5,), [[1], [3], [1], [2]], u: (4,))",
        _scatter(_name, _S_ELEMENTS),
        x((5,)),
        ints([[1], [3], [1], [2]]),
        x((4,)),
        real=True,
    )
case(
    "scatter_max_ties",
    "lax.scatter_max(x: (4,), [[1], [1], [2], [0]], u: (4,)) with ties",
    _scatter("scatter_max", _S_ELEMENTS),
    x((4,), values=[1.0, 2.0, 3.0, 4.0]),
    ints([[1], [1], [2], [0]]),
    x((4,), values=[2.0, 2.0, 1.0, 4.0]),
    real=True,
    fd=False,
)


# Linear algebra (compared with JAX in test_lax_linalg.py, whose recorder
# is make_linalg_golden.py).
_LINALG = "compared with JAX's in test_lax_linalg.py"
case(
    "qr",
    "lax.linalg.qr(x: (3, 2), full_matrices=False)",
    lambda lax, a: lax.linalg.qr(a, full_matrices=False),
    x((3, 2)),
    variants=("f4", "f8"),
    jax=_LINALG,
)
case(
    "triangular_solve",
    "lax.linalg.triangular_solve(a: (3, 3), b: (2, 3))",
    lambda lax, a, b: lax.linalg.triangular_solve(a, b),
    x((3, 3), domain="pos"),
    x((2, 3)),
    variants=("f4", "f8", "c8"),
    linear=((1,),),
    jax=_LINALG,
)
case(
    "triangular_solve_left",
    "lax.linalg.triangular_solve(a: (3, 3), b: (3, 2), left, lower, a^H)",
    lambda lax, a, b: lax.linalg.triangular_solve(
        a, b, left_side=True, lower=True, transpose_a=True, conjugate_a=True
    ),
    x((3, 3), domain="pos"),
    x((3, 2)),
    variants=("f4", "f8", "c8"),
    linear=((1,),),
    jax=_LINALG,
)


# -- operands -----------------------------------------------------------------


def _rng(*keys: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32("/".join(map(str, keys)).encode()))


def _draw(domain: str, shape: tuple[int, ...], rng: np.random.Generator) -> Any:
    if domain in DOMAINS:
        return rng.uniform(*DOMAINS[domain], shape)
    if domain == "nz":  # away from 0, either sign
        return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.5, 2.0, shape)
    whole = rng.integers(-2, 3, shape).astype(np.float64)
    if domain == "nonint":  # away from the poles of gamma
        return whole + rng.uniform(0.2, 0.8, shape)
    if domain == "frac":  # away from integers and halves (kinks of rounding)
        return whole + rng.choice([0.2, 0.7], shape) + rng.uniform(0, 0.1, shape)
    raise ValueError(domain)


def float_dtype(case: Case, operand: Operand, variant: str) -> np.dtype[Any]:
    return np.dtype(NP_DTYPES[operand.dtype or VARIANTS[variant][0]])


def operand_values(case: Case, variant: str) -> list[tuple[Any, bool]]:
    """The operands of ``case`` in ``variant`` as NumPy values (in their
    dtype) and weak flags."""
    weak_rule = VARIANTS[variant][1]
    out: list[tuple[Any, bool]] = []
    seen_x = 0
    for pos, op in enumerate(case.operands):
        if op.kind == "i":
            out.append((np.asarray(op.values, np.int32), False))
            continue
        if op.kind == "b":
            out.append((np.asarray(op.values, np.bool_), False))
            continue
        dt = float_dtype(case, op, variant)
        rng = _rng(case.name, variant, pos)
        if op.values is not None:
            raw = np.asarray(op.values, np.float64)
        else:
            raw = _draw(op.domain, op.shape, rng)
        if dt.kind == "c":
            scale = 0.5 if op.values is None else 0.0
            raw = raw + 1j * scale * rng.uniform(-1, 1, np.shape(raw))
        weak = weak_rule == "all" or (weak_rule == "first" and seen_x == 0)
        seen_x += 1
        out.append((np.asarray(raw).astype(dt), weak and op.dtype is None))
    return out


def tangent_values(case: Case, variant: str) -> list[Any]:
    """A tangent per operand: values of the operand's dtype, or None for
    integer and bool operands (whose tangents are zeros of float0)."""
    out: list[Any] = []
    for pos, (value, _) in enumerate(operand_values(case, variant)):
        if value.dtype.kind in "biu":
            out.append(None)
            continue
        rng = _rng(case.name, variant, pos, "tangent")
        t = rng.uniform(-1, 1, value.shape)
        if value.dtype.kind == "c":
            t = t + 1j * rng.uniform(-1, 1, value.shape)
        out.append(np.asarray(t).astype(value.dtype))
    return out


# -- encoding -----------------------------------------------------------------


def _value(v: Any) -> Any:
    if isinstance(v, complex):
        return [_value(v.real), _value(v.imag)]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)  # nan, inf, -inf
    return v


def encode(result: Any, weak: bool | None = None) -> Any:
    """``[code, shape, values]`` of an array (see the module's notes)."""
    if isinstance(result, BaseException):
        return f"!{builtin_bases(result)[0]}"
    if isinstance(result, list | tuple):
        return [encode(r) for r in result]
    dt = np.dtype(result.dtype)
    values = np.asarray(result)
    if dt.kind == "V":  # float0
        return ["float0", list(values.shape)]
    code = CODES.get(dt, f"?{dt.name}")
    if weak is None:
        weak = getattr(result, "weak_type", None)
        if weak is None:
            weak = bool(result.aval.weak_type)
    if dt.kind == "c":
        flat: list[Any] = [complex(v) for v in values.astype(np.complex128).ravel()]
    elif dt.kind == "b":
        flat = [bool(v) for v in values.ravel()]
    elif dt.kind in "iu":
        flat = [int(v) for v in values.ravel()]
    else:
        flat = [float(v) for v in values.astype(np.float64).ravel()]
    return [
        f"w:{code}" if weak else code,
        list(values.shape),
        [_value(v) for v in flat],
    ]


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


def _jax_operands(jax: Any, case: Case, variant: str) -> tuple[list[Any], list[Any]]:
    import jax.numpy as jnp
    from jax._src.lax.lax import _convert_element_type

    primals = []
    for value, weak in operand_values(case, variant):
        array = jnp.asarray(value)
        if weak:
            array = _convert_element_type(array, array.dtype, weak_type=True)
        primals.append(array)
    tangents = []
    for p, t in zip(primals, tangent_values(case, variant), strict=True):
        if t is None:
            tangents.append(np.zeros(p.shape, jax.dtypes.float0))
        else:
            array = jnp.asarray(t)
            if p.aval.weak_type:
                array = _convert_element_type(array, array.dtype, weak_type=True)
            tangents.append(array)
    return primals, tangents


def main() -> None:
    import jax

    data: dict[str, Any] = {
        "description": (
            "JVPs of jax.lax functions (primal and tangent: dtype, weak flag, "
            "shape, values), recorded by tests/golden/make_lax_rules_golden.py"
        ),
        "versions": {
            "jax": jax.__version__,
            "numpy": np.__version__,
            "ml_dtypes": ml_dtypes.__version__,
            "python": platform.python_version(),
        },
        "cases": {},
    }
    for name, c in CASES.items():
        if c.jax:
            continue
        rows: dict[str, Any] = {}
        for variant in c.variants:
            with jax.enable_x64(variant in X64_VARIANTS), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                primals, tangents = _jax_operands(jax, c, variant)
                try:
                    out, t_out = jax.jvp(
                        lambda *a, c=c: c.fn(jax.lax, *a), primals, tangents
                    )
                    rows[variant] = {
                        "eager": encode(c.fn(jax.lax, *primals)),
                        "primal": encode(out),
                        "tangent": encode(t_out),
                    }
                except Exception as exc:
                    rows[variant] = {"error": encode(exc)}
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
    print(f"{len(items)} cases written to {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
