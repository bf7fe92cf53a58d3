"""The elementwise functions of the namespace, as a table of :class:`Op`.

The table says, per function, which dtypes it accepts and how it computes,
following jax.numpy: arithmetic keeps the promoted dtype, transcendental
functions compute in an inexact type (an int32 array gives float32), the
comparisons return bool, bitwise functions take integers and bools only.
"""

from __future__ import annotations

import functools
import operator
import textwrap
from typing import TYPE_CHECKING, Any, Final, cast, overload

import numpy as np

from typelattice import _array, _config, _core, _dtypes
from typelattice import _lax as lax
from typelattice._array import ArrayImpl, wrap
from typelattice._basearray import Array
from typelattice._tracing import abstract
from typelattice._tracing.ad import stop_gradient
from typelattice._tracing.trace import lowering, traced
from typelattice.numpy import _lower, _ufunc
from typelattice.numpy._creation import asarray
from typelattice.numpy._elementwise import (
    ZERO_DERIVATIVE,
    Op,
    apply,
    finish,
    make_binary,
    make_unary,
    promote,
    run,
)
from typelattice.numpy._shape import _nonzero  # pyright: ignore[reportPrivateUsage]
from typelattice.numpy._ufunc import ufunc

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike

# The weak flags of results follow jax.numpy's, quirks included: log2 and
# log10 are strong (JAX divides by a strong constant), isinf is strong, and
# isfinite of an integer is a strong constant while isnan's stays weak.
_NUM = "iufc"  # no bool
_REAL = "biuf"
_INT = "biu"
_ALL = "biufc"

# -- docstrings -------------------------------------------------------------
# Every function made from an Op gets its docstring from _doc: a summary and
# an example written next to its definition, and the rest (promotion, Args,
# Returns, Raises) composed here, once, from what the Op says.

_KIND_NAMES: Final = {
    "b": "bool",
    "i": "signed integer",
    "u": "unsigned integer",
    "f": "floating",
    "c": "complex",
}


def _kinds(kinds: str) -> str:
    names = dict(_KIND_NAMES)
    if "i" in kinds and "u" in kinds:  # "integer", not "signed and unsigned"
        names["i"], kinds = "integer", kinds.replace("u", "")
    words = [names[k] for k in _ALL if k in kinds]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _compute_kind(op: Op, kind: str) -> str:
    """The kind an operand of ``kind`` is computed in (``compute_dtype``)."""
    if op.to in ("inexact", "default_float") and kind in _INT:
        return "f"
    if op.to == "numeric" and kind == "b":
        return "i"
    return kind


def _promotion_words(op: Op) -> str:
    if op.nin == 1:
        words = (
            "A Python scalar operand is weak, with its kind's default dtype "
            "(int32, float32 or complex64; 64-bit with ``enable_x64``)."
        )
    else:
        words = (
            "``x`` and ``y`` are promoted together on the type lattice before "
            "NumPy computes: a Python scalar is weak and defers to the other "
            "operand's dtype (an int8 array with ``2`` stays int8), and arrays "
            "of two dtypes compute in their join (int32 with float32: float32)."
        )
    if op.to == "inexact":
        words += (
            " Bool and integer operands are computed in float32 (64-bit "
            "integers in float64), as in JAX."
        )
    elif op.to == "default_float":
        words += (
            " Bool and integer operands are computed in the default float "
            "type (float32; float64 with ``enable_x64``)."
        )
    elif op.to == "numeric":
        words += " Bool operands are computed in int32."
    return words + ' See docs/semantics.md, "Lattices" and "Weak types".'


def _returns_words(op: Op) -> str:
    if op.out == "bool":
        what = "dtype bool"
    elif op.out == "real":
        what = "the promoted dtype, or for complex its real type (complex64: float32)"
    elif op.to in ("inexact", "default_float", "numeric"):
        what = "the dtype computed in (above)"
    else:
        what = "the promoted dtype"
    if op.identity_kinds:
        what += f"; {_kinds(op.identity_kinds)} input is returned unchanged"
    rule = op.weak_if_all
    if op.strong_kinds == _ALL:
        weak = "Always strong, as in JAX."
    elif rule == "first":
        weak = "Weak only when the promoted type is weak and ``x`` is weak."
    elif rule == "complex":
        weak = (
            "Weak when the promoted type is weak, except that a complex "
            "result is weak only when every operand is."
        )
    elif rule:
        weak = (
            "Weak only when every operand is weak (a Python scalar or a weak "
            "array), as in JAX."
        )
    elif op.nin == 1:
        weak = "Weak when the operand is (a Python scalar or a weak array)."
    else:
        weak = (
            "Weak when the promoted type is weak: every operand a Python "
            "scalar or a weak array (or a bool with a Python scalar)."
        )
    if op.strong_kinds and op.strong_kinds != _ALL:
        weak += f" Strong for {_kinds(op.strong_kinds)} input, as in JAX."
    return f"An Array of {what}. {weak}"


def _item(name: str, text: str) -> str:
    return textwrap.fill(
        f"{name}: {text}", 76, initial_indent="  ", subsequent_indent="    "
    )


def _doc(fn: Any, summary: str, example: str) -> None:
    """Give the elementwise function ``fn`` (made from an Op) its docstring.

    Args:
      fn: the function.
      summary: one sentence saying what it computes.
      example: doctest lines, run after ``import typelattice.numpy as tnp``.
    """
    op: Op = fn._op
    operand = "an Array, a NumPy array or scalar, or a Python scalar (not a list)."
    args = [_item("x", operand)]
    if op.nin == 2:
        args.append(_item("y", "the same; it broadcasts with ``x``."))
    refused = "".join(
        k
        for k in _ALL
        if k not in op.identity_kinds and _compute_kind(op, k) not in op.accept
    )
    raises = [
        _item(
            "OverflowError",
            "an operand whose value the compute dtype cannot hold (an "
            "integer that would change, a finite value that would become "
            'inf); see docs/semantics.md, "Data safety".',
        )
    ]
    if refused:
        raises.insert(0, _item(op.error.__name__, f"{_kinds(refused)} operands."))
    text = "\n".join(
        [
            textwrap.fill(summary, 76),
            "",
            textwrap.fill(_promotion_words(op), 76),
            "",
            "Args:",
            *args,
            "",
            "Returns:",
            textwrap.fill(
                _returns_words(op), 76, initial_indent="  ", subsequent_indent="  "
            ),
            "",
            "Raises:",
            *raises,
            "",
            ">>> import typelattice.numpy as tnp",
            example,
            "",
        ]
    )
    fn.__doc__ = text
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is not None:  # the Python function behind the C one
        wrapped.__doc__ = text


def _logaddexp(a: Any, b: Any) -> Any:
    """``log(exp(a) + exp(b))``; NumPy's ufunc is real-only, JAX's is not."""
    a = np.asarray(a)
    if a.dtype.kind != "c":
        return np.logaddexp(a, b)
    a, b = np.broadcast_arrays(a, np.asarray(b, dtype=a.dtype))
    first = a.real >= b.real
    # NumPy's stubs give where() on arrays of type Any an unknown type.
    big = np.where(first, a, b)  # pyright: ignore[reportUnknownVariableType]
    small = np.where(first, b, a)  # pyright: ignore[reportUnknownVariableType]
    return big + np.log1p(np.exp(small - big))  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]


def _logaddexp2(a: Any, b: Any) -> Any:
    """``log2(2**a + 2**b)``, complex included (as JAX)."""
    a = np.asarray(a)
    if a.dtype.kind != "c":
        return np.logaddexp2(a, b)
    ln2 = np.log(2).astype(a.dtype)
    return _logaddexp(a * ln2, np.asarray(b, dtype=a.dtype) * ln2) / ln2


def _arctan2(y: Any, x: Any) -> Any:
    """``arctan2``; for complex input the analytic continuation
    ``-i log((x + iy) / sqrt(x**2 + y**2))``, as JAX computes it (NumPy's
    ufunc is real-only)."""
    y = np.asarray(y)
    if y.dtype.kind != "c":
        return np.arctan2(y, x)
    x = np.asarray(x, dtype=y.dtype)
    return -1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))


# -- binary ------------------------------------------------------------------

add = cast(
    "ufunc",
    make_binary(Op("add", np.add, 2, lower=lax.add)),
)
_doc(
    add,
    "Add ``x`` and ``y`` elementwise (the ``+`` operator).",
    ">>> tnp.add(tnp.asarray([1, 2, 3], dtype='int8'), 2)\n"
    "Array([3, 4, 5], dtype=int8)\n"
    ">>> tnp.add(tnp.asarray([1, 2], dtype='int32'), tnp.asarray([0.5, 0.5], "
    "dtype='float32'))\n"
    "Array([1.5, 2.5], dtype=float32)",
)
subtract = cast(
    "ufunc",
    make_binary(Op("subtract", np.subtract, 2, accept=_NUM, lower=lax.sub)),
)
_doc(
    subtract,
    "Subtract ``y`` from ``x`` elementwise (the ``-`` operator).",
    ">>> tnp.subtract(tnp.asarray([5, 7], dtype='uint8'), 2)\n"
    "Array([3, 5], dtype=uint8)",
)
multiply = cast(
    "ufunc",
    make_binary(Op("multiply", np.multiply, 2, lower=lax.mul)),
)
_doc(
    multiply,
    "Multiply ``x`` by ``y`` elementwise (the ``*`` operator).",
    ">>> tnp.multiply(tnp.asarray([1.5, 2], dtype='bfloat16'), 2.0)\n"
    "Array([3, 4], dtype=bfloat16)",
)
true_divide = make_binary(
    Op("true_divide", np.true_divide, 2, to="inexact", lower=lax.div)
)
_doc(
    true_divide,
    "Divide ``x`` by ``y`` elementwise (the ``/`` operator; ``divide`` is the same).",
    ">>> tnp.true_divide(tnp.asarray([1, 2, 3], dtype='int16'), 2)\n"
    "Array([0.5, 1. , 1.5], dtype=float32)",
)
divide = make_binary(Op("divide", np.true_divide, 2, to="inexact", lower=lax.div))
_doc(
    divide,
    "Divide ``x`` by ``y`` elementwise (``true_divide``, the ``/`` operator).",
    ">>> tnp.divide(tnp.asarray([1, 2, 3], dtype='int8'), 4)\n"
    "Array([0.25, 0.5 , 0.75], dtype=float32)",
)
floor_divide = make_binary(
    Op(
        "floor_divide",
        np.floor_divide,
        2,
        accept="iuf",
        to="numeric",
        fp_int=True,
        lower=ZERO_DERIVATIVE,
    )
)
_doc(
    floor_divide,
    "Divide ``x`` by ``y`` and round down to an integer value (the ``//`` operator).",
    ">>> tnp.floor_divide(tnp.asarray([7, -7], dtype='int8'), 2)\n"
    "Array([ 3, -4], dtype=int8)\n"
    ">>> tnp.floor_divide(tnp.asarray([7.5], dtype='float32'), 2)\n"
    "Array([3.], dtype=float32)",
)
remainder = make_binary(
    Op(
        "remainder",
        np.remainder,
        2,
        accept="iuf",
        to="numeric",
        fp_int=True,
        lower=_lower.floor_mod,
    )
)
_doc(
    remainder,
    "The remainder of ``x // y``, with the sign of ``y`` (the ``%`` operator; "
    "``mod`` is the same).",
    ">>> tnp.remainder(tnp.asarray([7, -7], dtype='int8'), 3)\n"
    "Array([1, 2], dtype=int8)",
)
mod = make_binary(
    Op(
        "mod",
        np.remainder,
        2,
        accept="iuf",
        to="numeric",
        fp_int=True,
        lower=_lower.floor_mod,
    )
)
_doc(
    mod,
    "The remainder of ``x // y``, with the sign of ``y`` (``remainder``, the "
    "``%`` operator).",
    ">>> tnp.mod(tnp.asarray([7, -7], dtype='int16'), 3)\nArray([1, 2], dtype=int16)",
)
fmod = make_binary(
    Op("fmod", np.fmod, 2, accept="iuf", to="numeric", fp_int=True, lower=lax.rem)
)
_doc(
    fmod,
    "The remainder of ``x / y`` truncated towards zero: it has the sign of "
    "``x`` (C's ``fmod``).",
    ">>> tnp.fmod(tnp.asarray([7, -7], dtype='int8'), 3)\nArray([ 1, -1], dtype=int8)",
)
_power = make_binary(Op("power", np.power, 2, to="numeric", fp_int=True, lower=lax.pow))
# The base alone, in its numeric type (bool becomes int32), weak flag kept.
_power_base = make_unary(
    Op("power", np.positive, 1, to="numeric", lower=_lower.identity)
)
float_power = make_binary(Op("float_power", np.power, 2, to="inexact", lower=lax.pow))
_doc(
    float_power,
    "``x`` raised to the power ``y``, computed in an inexact type.",
    ">>> tnp.float_power(tnp.asarray([2, 3], dtype='int32'), 2).round(4)\n"
    "Array([4., 9.], dtype=float32)",
)
logaddexp = cast(
    "ufunc",
    make_binary(
        Op(
            "logaddexp",
            _logaddexp,
            2,
            accept="fc",
            to="inexact",
            weak_if_all="complex",
            lower=_lower.logaddexp,
        )
    ),
)
_doc(
    logaddexp,
    "``log(exp(x) + exp(y))`` elementwise, without overflow for large inputs.",
    ">>> tnp.logaddexp(tnp.asarray([0.0, 100.0], dtype='float32'), 0.0).round(4)\n"
    "Array([  0.6931, 100.    ], dtype=float32)",
)
logaddexp2 = cast(
    "ufunc",
    make_binary(
        Op(
            "logaddexp2",
            _logaddexp2,
            2,
            accept="fc",
            to="inexact",
            weak_if_all=True,
            lower=_lower.logaddexp2,
        )
    ),
)
_doc(
    logaddexp2,
    "``log2(2**x + 2**y)`` elementwise, without overflow for large inputs.",
    ">>> tnp.logaddexp2(tnp.asarray([1.0, 3.0], dtype='float16'), 1.0).round(1)\n"
    "Array([2. , 3.3], dtype=float16)",
)
arctan2 = make_binary(
    Op("arctan2", _arctan2, 2, accept="fc", to="inexact", lower=lax.atan2)
)
_doc(
    arctan2,
    "The arc tangent of ``x / y``, in the quadrant given by the signs of both "
    "(``atan2`` is the same function).",
    ">>> tnp.arctan2(tnp.asarray([1.0, -1.0], dtype='float32'), -1.0).round(4)\n"
    "Array([ 2.3562, -2.3562], dtype=float32)",
)
hypot = make_binary(
    Op(
        "hypot",
        np.hypot,
        2,
        accept="f",
        to="inexact",
        weak_if_all=True,
        error=ValueError,
        lower=_lower.hypot,
    )
)
_doc(
    hypot,
    "``sqrt(x**2 + y**2)`` elementwise, without overflow in the squares.",
    ">>> tnp.hypot(tnp.asarray([3.0, 5.0], dtype='float32'), 4.0).round(4)\n"
    "Array([5.    , 6.4031], dtype=float32)",
)


def _copysign_lower(x: Array, y: Array) -> Array:
    """``|x|`` with the sign bit of ``y`` (a constant of the derivative), the
    sign bit read by copysign itself."""
    ax = lax.abs(x)
    one = _lower._full_like(ax, 1)  # pyright: ignore[reportPrivateUsage]
    negative = lax.lt(copysign(one, stop_gradient(y)), 0)
    return lax.select(negative, lax.neg(ax), ax)


copysign = make_binary(
    Op("copysign", np.copysign, 2, accept="f", to="inexact", lower=_copysign_lower)
)
_doc(
    copysign,
    "The magnitude of ``x`` with the sign of ``y``, elementwise.",
    ">>> tnp.copysign(tnp.asarray([1.5, -2.0], dtype='float32'), -1.0)\n"
    "Array([-1.5, -2. ], dtype=float32)",
)
nextafter = make_binary(
    Op("nextafter", np.nextafter, 2, accept="f", to="inexact", lower=lax.nextafter)
)
_doc(
    nextafter,
    "The next representable value after ``x`` towards ``y``, in the promoted dtype.",
    ">>> tnp.nextafter(tnp.asarray([1.0], dtype='float16'), 2.0)\n"
    "Array([1.001], dtype=float16)",
)
heaviside = make_binary(
    Op(
        "heaviside",
        np.heaviside,
        2,
        accept="f",
        to="inexact",
        weak_if_all="first",
        lower=ZERO_DERIVATIVE,
    )
)
_doc(
    heaviside,
    "The Heaviside step function of ``x``: 0 below zero, ``y`` at zero, 1 above.",
    ">>> tnp.heaviside(tnp.asarray([-1.5, 0.0, 2.0], dtype='float32'), 0.5)\n"
    "Array([0. , 0.5, 1. ], dtype=float32)",
)
equal = make_binary(Op("equal", np.equal, 2, out="bool"))
_doc(
    equal,
    "``x == y`` elementwise (the ``==`` operator).",
    ">>> tnp.equal(tnp.asarray([1, 2, 3], dtype='int8'), 2)\n"
    "Array([False,  True, False], dtype=bool)",
)
not_equal = make_binary(Op("not_equal", np.not_equal, 2, out="bool"))
_doc(
    not_equal,
    "``x != y`` elementwise (the ``!=`` operator).",
    ">>> tnp.not_equal(tnp.asarray([1, 2, 3], dtype='int8'), 2)\n"
    "Array([ True, False,  True], dtype=bool)",
)
less = make_binary(Op("less", np.less, 2, out="bool"))
_doc(
    less,
    "``x < y`` elementwise (the ``<`` operator).",
    ">>> tnp.less(tnp.asarray([1, 2, 3], dtype='uint8'), 2)\n"
    "Array([ True, False, False], dtype=bool)",
)
less_equal = make_binary(Op("less_equal", np.less_equal, 2, out="bool"))
_doc(
    less_equal,
    "``x <= y`` elementwise (the ``<=`` operator).",
    ">>> tnp.less_equal(tnp.asarray([1.5, 2.5], dtype='float32'), 2)\n"
    "Array([ True, False], dtype=bool)",
)
greater = make_binary(Op("greater", np.greater, 2, out="bool"))
_doc(
    greater,
    "``x > y`` elementwise (the ``>`` operator).",
    ">>> tnp.greater(tnp.asarray([1, 2, 3], dtype='int16'), 2)\n"
    "Array([False, False,  True], dtype=bool)",
)
greater_equal = make_binary(Op("greater_equal", np.greater_equal, 2, out="bool"))
_doc(
    greater_equal,
    "``x >= y`` elementwise (the ``>=`` operator).",
    ">>> tnp.greater_equal(tnp.asarray([1, 2, 3], dtype='int16'), 2)\n"
    "Array([False,  True,  True], dtype=bool)",
)
logical_and = cast(
    "ufunc",
    make_binary(Op("logical_and", np.logical_and, 2, out="bool", weak_if_all=True)),
)
_doc(
    logical_and,
    "The truth value of ``x and y`` elementwise (nonzero is true).",
    ">>> tnp.logical_and(tnp.asarray([0, 1, 2], dtype='int8'), True)\n"
    "Array([False,  True,  True], dtype=bool)",
)
logical_or = cast(
    "ufunc",
    make_binary(Op("logical_or", np.logical_or, 2, out="bool", weak_if_all=True)),
)
_doc(
    logical_or,
    "The truth value of ``x or y`` elementwise (nonzero is true).",
    ">>> tnp.logical_or(tnp.asarray([0.0, 0.5], dtype='float32'), False)\n"
    "Array([False,  True], dtype=bool)",
)
logical_xor = cast(
    "ufunc",
    make_binary(Op("logical_xor", np.logical_xor, 2, out="bool", weak_if_all=True)),
)
_doc(
    logical_xor,
    "Whether exactly one of ``x`` and ``y`` is true, elementwise (nonzero is true).",
    ">>> tnp.logical_xor(tnp.asarray([True, False]), True)\n"
    "Array([False,  True], dtype=bool)",
)
bitwise_and = cast(
    "ufunc",
    make_binary(Op("bitwise_and", np.bitwise_and, 2, accept=_INT)),
)
_doc(
    bitwise_and,
    "The bits set in both ``x`` and ``y`` (the ``&`` operator).",
    ">>> tnp.bitwise_and(tnp.asarray([12, 10], dtype='uint8'), 6)\n"
    "Array([4, 2], dtype=uint8)",
)
bitwise_or = cast(
    "ufunc",
    make_binary(Op("bitwise_or", np.bitwise_or, 2, accept=_INT)),
)
_doc(
    bitwise_or,
    "The bits set in ``x`` or ``y`` (the ``|`` operator).",
    ">>> tnp.bitwise_or(tnp.asarray([12, 10], dtype='uint8'), 1)\n"
    "Array([13, 11], dtype=uint8)",
)
bitwise_xor = cast(
    "ufunc",
    make_binary(Op("bitwise_xor", np.bitwise_xor, 2, accept=_INT)),
)
_doc(
    bitwise_xor,
    "The bits set in exactly one of ``x`` and ``y`` (the ``^`` operator).",
    ">>> tnp.bitwise_xor(tnp.asarray([12, 10], dtype='uint8'), 6)\n"
    "Array([10, 12], dtype=uint8)",
)
left_shift = make_binary(Op("left_shift", np.left_shift, 2, to="numeric", accept="iu"))
_doc(
    left_shift,
    "The bits of ``x`` shifted left by ``y`` (the ``<<`` operator; "
    "``bitwise_left_shift`` is the same function).",
    ">>> tnp.left_shift(tnp.asarray([1, 3], dtype='int8'), 2)\n"
    "Array([ 4, 12], dtype=int8)",
)
right_shift = make_binary(
    Op("right_shift", np.right_shift, 2, to="numeric", accept="iu")
)
_doc(
    right_shift,
    "The bits of ``x`` shifted right by ``y``, keeping the sign (the ``>>`` "
    "operator; ``bitwise_right_shift`` is the same function).",
    ">>> tnp.right_shift(tnp.asarray([16, -16], dtype='int8'), 2)\n"
    "Array([ 4, -4], dtype=int8)",
)
bitwise_left_shift = left_shift
bitwise_right_shift = right_shift
maximum = cast(
    "ufunc",
    make_binary(Op("maximum", np.maximum, 2, lower=lax.max)),
)
_doc(
    maximum,
    "The larger of ``x`` and ``y``, elementwise (NaN if either is NaN).",
    ">>> tnp.maximum(tnp.asarray([1, 5], dtype='int8'), 3)\nArray([3, 5], dtype=int8)",
)
minimum = cast(
    "ufunc",
    make_binary(Op("minimum", np.minimum, 2, lower=lax.min)),
)
_doc(
    minimum,
    "The smaller of ``x`` and ``y``, elementwise (NaN if either is NaN).",
    ">>> tnp.minimum(tnp.asarray([1.0, 5.0], dtype='float16'), 3)\n"
    "Array([1., 3.], dtype=float16)",
)
fmax = make_binary(Op("fmax", np.fmax, 2, lower=_lower.fmax))
_doc(
    fmax,
    "The larger of ``x`` and ``y``, elementwise, ignoring a NaN when the "
    "other is a number.",
    ">>> tnp.fmax(tnp.asarray([1.0, float('nan')], dtype='float32'), 2.0)\n"
    "Array([2., 2.], dtype=float32)",
)
fmin = make_binary(Op("fmin", np.fmin, 2, lower=_lower.fmin))
_doc(
    fmin,
    "The smaller of ``x`` and ``y``, elementwise, ignoring a NaN when the "
    "other is a number.",
    ">>> tnp.fmin(tnp.asarray([1.0, float('nan')], dtype='float32'), 2.0)\n"
    "Array([1., 2.], dtype=float32)",
)


@traced(abstract.copying)
def power(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 ** x2`` elementwise, promoted as jax.numpy does (the ``**``
    operator).

    A concrete integer exponent (a Python int, or a 0-d integer array) does
    not take part in promotion: the result has the base's dtype and weak
    flag (bool computes in int32). Otherwise the operands are promoted
    together, as by :func:`multiply`.

    Args:
      x1: the base: an Array, a NumPy array or scalar, or a Python scalar.
      x2: the exponent, the same kinds.

    Returns:
      An Array of the base's dtype for a concrete integer exponent, else of
      the promoted dtype.

    Raises:
      TypeError: an integer base with a negative integer exponent (the
        result is not an integer; cast to float first).

    >>> import typelattice.numpy as tnp
    >>> tnp.power(tnp.asarray([1, 2, 3], dtype='int8'), 2)
    Array([1, 4, 9], dtype=int8)
    """
    exponent = _integer_scalar(x2)
    if exponent is not None:
        # As JAX: a concrete integer exponent does not take part in
        # promotion; the result has the base's (numeric) dtype and weak flag.
        base = _power_base(x1)
        if exponent < 0 and _dtypes.kind_of(base.dtype) in "iu":
            raise _negative_power_error()
        value = _core.ignore_fp_errors(_integer_power, np.asarray(base), exponent)
        return wrap(
            np.asarray(value, dtype=base.dtype), _core.aval(base.dtype, base.weak_type)
        )
    try:
        out = _power(x1, x2)
    except ValueError as err:
        if "negative integer powers" not in str(err):
            raise
        raise _negative_power_error() from None
    kind = _dtypes.kind_of(out.dtype)
    # An inexact base with a strong integer exponent array: JAX computes
    # with the exponent unpromoted, so the result is strong.
    mixed = (
        isinstance(x2, Array | np.ndarray)
        and not getattr(x2, "weak_type", False)
        and _dtypes.kind_of(_dtypes.dtype_of(x2)) in "iu"
        and not isinstance(x1, bool | int)
        and (
            isinstance(x1, float | complex)
            or _dtypes.kind_of(_dtypes.dtype_of(x1)) in "fc"
        )
    )
    if out.weak_type and (kind in "iu" or mixed):
        # JAX computes these from the unpromoted operands: a strong result.
        return wrap(np.asarray(out), _core.aval(out.dtype, False))
    return out


def _integer_scalar(x: Any) -> int | None:
    """``x`` as an int if it is a concrete integer scalar (JAX's test)."""
    if isinstance(x, float | complex) or (
        isinstance(x, Array | np.ndarray | np.generic)
        and (np.ndim(x) or _dtypes.kind_of(_dtypes.dtype_of(x)) not in "biu")  # pyright: ignore[reportUnknownArgumentType]
    ):
        return None
    index: Any = operator.index  # x is Any; pyright narrows it too far
    try:
        return int(index(x))
    except TypeError:
        return None


def _integer_power(base: np.ndarray[Any, Any], exponent: int) -> Any:
    """``base ** exponent`` in ``base``'s dtype, for a concrete integer
    exponent, as JAX's ``integer_pow``.

    NumPy converts the exponent to the base's dtype, which may not hold it:
    ``uint8 ** 300`` raises NumPy's bare OverflowError, ``float16 ** 70001``
    computes ``x ** inf`` and ``bfloat16 ** 257`` computes ``x ** 256``,
    both losing the sign of a negative base. Such exponents are applied by
    repeated squaring in the base's dtype, as JAX does.
    """
    dt = base.dtype
    n = -exponent if exponent < 0 else exponent  # (abs is this module's)
    if _dtypes.kind_of(dt) in "iu":
        lo, hi = _dtypes.value_range(dt)
        exact = lo <= exponent <= hi
    else:  # float64 holds every integer up to 2**53; each float holds fewer
        exact = n <= 2**53 and _core.converted(np.asarray(float(exponent)), dt).astype(
            np.complex128
        ).real == float(exponent)
    if exact:
        return np.power(base, exponent)
    result, square = None, base
    while True:
        if n & 1:
            result = square if result is None else result * square
        n >>= 1
        if not n:
            break
        square = square * square
    assert result is not None  # exponent 0 is exact in every dtype
    return np.ones_like(result) / result if exponent < 0 else result


def _negative_power_error() -> TypeError:
    return TypeError(
        "power: integers cannot be raised to negative integer powers. "
        "Cast the base to a float first, e.g. x.astype('float32') ** -1."
    )


@traced(abstract.copying)
def divmod(x1: ArrayLike, x2: ArrayLike, /) -> tuple[Array, Array]:  # noqa: A001
    """``(floor_divide(x1, x2), remainder(x1, x2))``: Python's ``divmod``.

    Args:
      x1: the dividend: an Array, a NumPy array or scalar, or a Python scalar.
      x2: the divisor, the same kinds; promoted with ``x1``.

    Returns:
      Two Arrays of the promoted dtype (int32 for bool).

    Raises:
      TypeError: complex operands.

    >>> import typelattice.numpy as tnp
    >>> tnp.divmod(tnp.asarray([7, -7], dtype='int8'), 2)
    (Array([ 3, -4], dtype=int8), Array([1, 1], dtype=int8))
    """
    return floor_divide(x1, x2), remainder(x1, x2)


# -- unary ------------------------------------------------------------------

negative = make_unary(Op("negative", np.negative, 1, accept=_NUM, lower=lax.neg))
_doc(
    negative,
    "``-x`` elementwise (the unary ``-`` operator).",
    ">>> tnp.negative(tnp.asarray([1, -2], dtype='int8'))\n"
    "Array([-1,  2], dtype=int8)\n"
    ">>> tnp.negative(2.5)\n"
    "Array(-2.5, dtype=float32, weak_type=True)",
)
positive = make_unary(
    Op("positive", np.positive, 1, identity_kinds="b", lower=_lower.identity)
)
_doc(
    positive,
    "``+x`` elementwise: the values unchanged (the unary ``+`` operator).",
    ">>> tnp.positive(tnp.asarray([1, -2], dtype='int8'))\nArray([ 1, -2], dtype=int8)",
)
sign = make_unary(Op("sign", np.sign, 1, accept=_NUM, lower=ZERO_DERIVATIVE))
_doc(
    sign,
    "-1, 0 or 1 by the sign of ``x`` (for complex, ``x / abs(x)``).",
    ">>> tnp.sign(tnp.asarray([-3, 0, 2], dtype='int8'))\n"
    "Array([-1,  0,  1], dtype=int8)",
)
reciprocal = make_unary(
    Op("reciprocal", np.reciprocal, 1, to="inexact", lower=_lower.reciprocal)
)
_doc(
    reciprocal,
    "``1 / x`` elementwise.",
    ">>> tnp.reciprocal(tnp.asarray([1, 2, 4], dtype='int32'))\n"
    "Array([1.  , 0.5 , 0.25], dtype=float32)",
)
square = make_unary(Op("square", np.square, 1, to="numeric", lower=_lower.square))
_doc(
    square,
    "``x * x`` elementwise.",
    ">>> tnp.square(tnp.asarray([2, 3], dtype='int8'))\n"
    "Array([4, 9], dtype=int8)\n"
    ">>> tnp.square(tnp.asarray([True, False]))\n"
    "Array([1, 0], dtype=int32)",
)
sqrt = make_unary(Op("sqrt", np.sqrt, 1, to="inexact", lower=lax.sqrt))
_doc(
    sqrt,
    "The non-negative square root of ``x`` (NaN for negative reals).",
    ">>> tnp.sqrt(tnp.asarray([1, 4, 9], dtype='uint8'))\n"
    "Array([1., 2., 3.], dtype=float32)\n"
    ">>> tnp.sqrt(2.0)\n"
    "Array(1.4142135, dtype=float32, weak_type=True)",
)
cbrt = make_unary(Op("cbrt", np.cbrt, 1, accept="f", to="inexact", lower=lax.cbrt))
_doc(
    cbrt,
    "The cube root of ``x``, negative for negative ``x``.",
    ">>> tnp.cbrt(tnp.asarray([-8.0, 27.0], dtype='float32')).round(4)\n"
    "Array([-2.,  3.], dtype=float32)",
)
exp = make_unary(Op("exp", np.exp, 1, to="inexact", lower=lax.exp))
_doc(
    exp,
    "``e`` raised to the power ``x``.",
    ">>> tnp.exp(tnp.asarray([0.0, 1.0], dtype='float16')).round(1)\n"
    "Array([1. , 2.7], dtype=float16)",
)
exp2 = make_unary(Op("exp2", np.exp2, 1, to="inexact", lower=lax.exp2))
_doc(
    exp2,
    "2 raised to the power ``x``.",
    ">>> tnp.exp2(tnp.asarray([0, 3], dtype='int8')).round(4)\n"
    "Array([1., 8.], dtype=float32)",
)
expm1 = make_unary(Op("expm1", np.expm1, 1, to="inexact", lower=lax.expm1))
_doc(
    expm1,
    "``exp(x) - 1``, accurate for ``x`` near zero.",
    ">>> tnp.expm1(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([0.    , 1.7183], dtype=float32)\n"
    ">>> x = tnp.asarray(2e-4, dtype='float32')\n"
    ">>> (tnp.expm1(x) / x).round(5)  # 1 + x/2 + ...: no digits lost to exp(x)'s 1\n"
    "Array(1.0001, dtype=float32)",
)
log = make_unary(Op("log", np.log, 1, to="inexact", lower=lax.log))
_doc(
    log,
    "The natural logarithm of ``x``.",
    ">>> tnp.log(tnp.asarray([1.0, 2.718282], dtype='float32')).round(4)\n"
    "Array([0., 1.], dtype=float32)",
)
log2 = make_unary(
    Op("log2", np.log2, 1, to="inexact", strong_kinds=_ALL, lower=_lower.log2)
)
_doc(
    log2,
    "The base-2 logarithm of ``x``.",
    ">>> tnp.log2(tnp.asarray([1, 8], dtype='int32')).round(4)\n"
    "Array([0., 3.], dtype=float32)\n"
    ">>> tnp.log2(8.0).round(4)\n"
    "Array(3., dtype=float32)",
)
log10 = make_unary(
    Op("log10", np.log10, 1, to="inexact", strong_kinds=_ALL, lower=_lower.log10)
)
_doc(
    log10,
    "The base-10 logarithm of ``x``.",
    ">>> tnp.log10(tnp.asarray([1.0, 100.0], dtype='float32')).round(4)\n"
    "Array([0., 2.], dtype=float32)",
)
log1p = make_unary(Op("log1p", np.log1p, 1, to="inexact", lower=lax.log1p))
_doc(
    log1p,
    "``log(1 + x)``, accurate for ``x`` near zero.",
    ">>> tnp.log1p(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([0.    , 0.6931], dtype=float32)\n"
    ">>> x = tnp.asarray(2e-4, dtype='float32')\n"
    ">>> (tnp.log1p(x) / x).round(5)  # 1 - x/2 + ...: no digits lost to 1 + x\n"
    "Array(0.9999, dtype=float32)",
)
sin = make_unary(Op("sin", np.sin, 1, to="inexact", lower=lax.sin))
_doc(
    sin,
    "The sine of ``x`` (radians).",
    ">>> tnp.sin(tnp.asarray([0.0, 1.5707964], dtype='float32')).round(4)\n"
    "Array([0., 1.], dtype=float32)",
)
cos = make_unary(Op("cos", np.cos, 1, to="inexact", lower=lax.cos))
_doc(
    cos,
    "The cosine of ``x`` (radians).",
    ">>> tnp.cos(tnp.asarray([0, 1], dtype='int8')).round(4)\n"
    "Array([1.    , 0.5403], dtype=float32)",
)
tan = make_unary(Op("tan", np.tan, 1, to="inexact", lower=lax.tan))
_doc(
    tan,
    "The tangent of ``x`` (radians).",
    ">>> tnp.tan(tnp.asarray([0.0, 0.7853982], dtype='float32')).round(4)\n"
    "Array([0., 1.], dtype=float32)",
)
arcsin = make_unary(Op("arcsin", np.arcsin, 1, to="inexact", lower=lax.asin))
_doc(
    arcsin,
    "The inverse sine of ``x``, in radians (``asin`` is the same function).",
    ">>> tnp.arcsin(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([0.    , 1.5708], dtype=float32)",
)
arccos = make_unary(Op("arccos", np.arccos, 1, to="inexact", lower=lax.acos))
_doc(
    arccos,
    "The inverse cosine of ``x``, in radians (``acos`` is the same function).",
    ">>> tnp.arccos(tnp.asarray([1.0, 0.0], dtype='float32')).round(4)\n"
    "Array([0.    , 1.5708], dtype=float32)",
)
arctan = make_unary(Op("arctan", np.arctan, 1, to="inexact", lower=lax.atan))
_doc(
    arctan,
    "The inverse tangent of ``x``, in radians (``atan`` is the same function).",
    ">>> tnp.arctan(tnp.asarray([0, 1], dtype='int16')).round(4)\n"
    "Array([0.    , 0.7854], dtype=float32)",
)
sinh = make_unary(Op("sinh", np.sinh, 1, to="inexact", lower=lax.sinh))
_doc(
    sinh,
    "The hyperbolic sine of ``x``.",
    ">>> tnp.sinh(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([0.    , 1.1752], dtype=float32)",
)
cosh = make_unary(Op("cosh", np.cosh, 1, to="inexact", lower=lax.cosh))
_doc(
    cosh,
    "The hyperbolic cosine of ``x``.",
    ">>> tnp.cosh(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([1.    , 1.5431], dtype=float32)",
)
tanh = make_unary(Op("tanh", np.tanh, 1, to="inexact", lower=lax.tanh))
_doc(
    tanh,
    "The hyperbolic tangent of ``x``.",
    ">>> tnp.tanh(tnp.asarray([0.0, 1.0], dtype='bfloat16'))\n"
    "Array([0, 0.761719], dtype=bfloat16)",
)
arcsinh = make_unary(Op("arcsinh", np.arcsinh, 1, to="inexact", lower=lax.asinh))
_doc(
    arcsinh,
    "The inverse hyperbolic sine of ``x`` (``asinh`` is the same function).",
    ">>> tnp.arcsinh(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([0.    , 0.8814], dtype=float32)",
)
arccosh = make_unary(Op("arccosh", np.arccosh, 1, to="inexact", lower=lax.acosh))
_doc(
    arccosh,
    "The inverse hyperbolic cosine of ``x`` (``acosh`` is the same function).",
    ">>> tnp.arccosh(tnp.asarray([1.0, 2.0], dtype='float32')).round(4)\n"
    "Array([0.   , 1.317], dtype=float32)",
)
arctanh = make_unary(Op("arctanh", np.arctanh, 1, to="inexact", lower=lax.atanh))
_doc(
    arctanh,
    "The inverse hyperbolic tangent of ``x`` (``atanh`` is the same function).",
    ">>> tnp.arctanh(tnp.asarray([0.0, 0.5], dtype='float32')).round(4)\n"
    "Array([0.    , 0.5493], dtype=float32)",
)
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh
atan2 = arctan2
floor = make_unary(
    Op("floor", np.floor, 1, accept="f", identity_kinds=_INT, lower=ZERO_DERIVATIVE)
)
_doc(
    floor,
    "The largest integer value not greater than ``x``, in ``x``'s dtype.",
    ">>> tnp.floor(tnp.asarray([-1.5, 2.5], dtype='float32'))\n"
    "Array([-2.,  2.], dtype=float32)\n"
    ">>> tnp.floor(tnp.asarray([3], dtype='int8'))\n"
    "Array([3], dtype=int8)",
)
ceil = make_unary(
    Op("ceil", np.ceil, 1, accept="f", identity_kinds=_INT, lower=ZERO_DERIVATIVE)
)
_doc(
    ceil,
    "The smallest integer value not less than ``x``, in ``x``'s dtype.",
    ">>> tnp.ceil(tnp.asarray([-1.5, 2.5], dtype='float32'))\n"
    "Array([-1.,  3.], dtype=float32)",
)
trunc = make_unary(
    Op("trunc", np.trunc, 1, accept="f", identity_kinds=_INT, lower=ZERO_DERIVATIVE)
)
_doc(
    trunc,
    "``x`` rounded towards zero to an integer value, in ``x``'s dtype.",
    ">>> tnp.trunc(tnp.asarray([-1.5, 2.5], dtype='float32'))\n"
    "Array([-1.,  2.], dtype=float32)",
)
rint = make_unary(
    Op("rint", np.rint, 1, to="default_float", strong_kinds=_INT, lower=ZERO_DERIVATIVE)
)
_doc(
    rint,
    "``x`` rounded to the nearest integer value, ties to even.",
    ">>> tnp.rint(tnp.asarray([0.5, 1.5, 2.7], dtype='float32'))\n"
    "Array([0., 2., 3.], dtype=float32)\n"
    ">>> tnp.rint(tnp.asarray([3], dtype='int8'))\n"
    "Array([3.], dtype=float32)",
)
logical_not = make_unary(Op("logical_not", np.logical_not, 1, out="bool"))
_doc(
    logical_not,
    "The truth value of ``not x`` elementwise (nonzero is true).",
    ">>> tnp.logical_not(tnp.asarray([0, 2], dtype='int8'))\n"
    "Array([ True, False], dtype=bool)",
)
invert = make_unary(Op("invert", np.invert, 1, accept=_INT))
_doc(
    invert,
    "The bits of ``x`` flipped; for bool, logical not (the ``~`` operator; "
    "``bitwise_not`` and ``bitwise_invert`` are the same function).",
    ">>> tnp.invert(tnp.asarray([0, 5], dtype='uint8'))\n"
    "Array([255, 250], dtype=uint8)\n"
    ">>> tnp.invert(tnp.asarray([True, False]))\n"
    "Array([False,  True], dtype=bool)",
)
bitwise_not = bitwise_invert = invert
isnan = make_unary(Op("isnan", np.isnan, 1, out="bool"))
_doc(
    isnan,
    "Whether ``x`` is NaN (for complex: either part).",
    ">>> tnp.isnan(tnp.asarray([1.0, float('nan')], dtype='float32'))\n"
    "Array([False,  True], dtype=bool)",
)
isinf = make_unary(Op("isinf", np.isinf, 1, out="bool", strong_kinds=_ALL))
_doc(
    isinf,
    "Whether ``x`` is positive or negative infinity (for complex: either part).",
    ">>> tnp.isinf(tnp.asarray([1.0, float('inf')], dtype='float32'))\n"
    "Array([False,  True], dtype=bool)",
)
isfinite = make_unary(Op("isfinite", np.isfinite, 1, out="bool", strong_kinds=_INT))
_doc(
    isfinite,
    "Whether ``x`` is neither infinite nor NaN (for complex: both parts).",
    ">>> tnp.isfinite(tnp.asarray([1.0, float('inf'), float('nan')], "
    "dtype='float32'))\n"
    "Array([ True, False, False], dtype=bool)",
)
conj = make_unary(Op("conj", np.conjugate, 1, lower=_lower.conj))
_doc(
    conj,
    "The complex conjugate of ``x``; real input is returned as it is "
    "(``conjugate`` is the same function).",
    ">>> tnp.conj(tnp.asarray([1+2j, 3-1j], dtype='complex64'))\n"
    "Array([1.-2.j, 3.+1.j], dtype=complex64)",
)
conjugate = conj
_abs = make_unary(
    Op("abs", np.absolute, 1, out="real", identity_kinds="bu", lower=lax.abs)
)
abs = absolute = _abs  # noqa: A001
_doc(
    abs,
    "The absolute value of ``x``; for complex, the magnitude in the real type "
    "(``absolute`` is the same function).",
    ">>> tnp.abs(tnp.asarray([-3, 2], dtype='int8'))\n"
    "Array([3, 2], dtype=int8)\n"
    ">>> tnp.abs(tnp.asarray([3+4j], dtype='complex64')).round(4)\n"
    "Array([5.], dtype=float32)",
)
_real = make_unary(Op("real", np.real, 1, out="real", lower=_lower.real))
_imag = make_unary(Op("imag", np.imag, 1, out="real", lower=_lower.imag))
angle_op = Op(
    "angle",
    np.angle,
    1,
    to="default_float",
    out="real",
    strong_kinds="biuf",
    lower=_lower.angle,
)
_angle = make_unary(angle_op)


@traced(abstract.copying)
def real(val: ArrayLike, /) -> Array:
    """The real part (the values themselves for real dtypes).

    Args:
      val: an Array, a NumPy array or scalar, or a Python scalar.

    Returns:
      An Array of the real dtype (complex64 gives float32), with ``val``'s
      weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.real(tnp.asarray([1+2j], dtype='complex64'))
    Array([1.], dtype=float32)
    """
    return _real(val)


@traced(abstract.copying)
def imag(val: ArrayLike, /) -> Array:
    """The imaginary part (zeros of the same dtype for real dtypes).

    Args:
      val: an Array, a NumPy array or scalar, or a Python scalar.

    Returns:
      An Array of the real dtype (complex64 gives float32), with ``val``'s
      weak flag.

    >>> import typelattice.numpy as tnp
    >>> tnp.imag(tnp.asarray([1+2j], dtype='complex64'))
    Array([2.], dtype=float32)
    """
    return _imag(val)


@traced(abstract.copying)
def angle(z: ArrayLike, deg: bool = False) -> Array:
    """The argument of complex numbers, in radians (or degrees).

    Args:
      z: an Array, a NumPy array or scalar, or a Python scalar.
      deg: give degrees instead of radians.

    Returns:
      An Array of the real inexact dtype: complex64 gives float32, real
      input the default float type.

    >>> import typelattice.numpy as tnp
    >>> tnp.angle(tnp.asarray([1j, -1], dtype='complex64'))
    Array([1.5707964, 3.1415927], dtype=float32)
    >>> tnp.angle(tnp.asarray([1j]), deg=True)
    Array([90.], dtype=float32)
    """
    out = _angle(z)
    return multiply(out, 180 / np.pi) if deg else out


@traced(abstract.copying)
def round(a: ArrayLike, decimals: int = 0, out: None = None) -> Array:  # noqa: A001
    """Round to ``decimals`` places, ties to even; integer arrays are
    returned unchanged when ``decimals >= 0``, as in jax.numpy (``around``
    is the same function).

    Args:
      a: an Array, a NumPy array or scalar, or a Python scalar.
      decimals: the number of decimal places (negative: tens, hundreds...).
      out: not supported (arrays are immutable); must be None.

    Returns:
      An Array with ``a``'s dtype and weak flag.

    Raises:
      ValueError: a bool array.

    >>> import typelattice.numpy as tnp
    >>> tnp.round(tnp.asarray([1.25, 2.5]), 1)
    Array([1.2, 2.5], dtype=float32)
    """
    decimals = _core.index_of(decimals, "round: decimals")
    if out is not None:
        raise TypeError(
            "round: the out argument is not supported (arrays are immutable)"
        )
    if isinstance(a, bool) or getattr(a, "dtype", None) == np.bool_:
        raise ValueError("round: bool arrays cannot be rounded; use astype first")
    op = _ROUND_OPS.get(decimals)
    if op is None:
        op = _ROUND_OPS.setdefault(
            decimals,
            Op(
                "round",
                functools.partial(np.round, decimals=decimals),
                1,
                accept="fc",
                identity_kinds=_INT if decimals >= 0 else "",
                lower=ZERO_DERIVATIVE,
            ),
        )
    return apply(op, (a,))


_ROUND_OPS: dict[int, Op] = {}
around = round


@traced(abstract.copying)
def clip(
    arr: ArrayLike | None = None,
    /,
    min: Any = None,
    max: Any = None,  # noqa: A002
) -> Array:
    """Limit values to ``[min, max]``; the result is promoted with the bounds.

    It is ``minimum(maximum(arr, min), max)``: a Python scalar bound is weak
    and must fit ``arr``'s dtype.

    Args:
      arr: an Array, a NumPy array or scalar, or a Python scalar.
      min: the lower bound, or None.
      max: the upper bound, or None.

    Returns:
      An Array of ``arr``'s dtype promoted with the bounds'.

    Raises:
      ValueError: complex values (they have no order).
      OverflowError: a Python scalar bound that ``arr``'s dtype cannot hold.

    >>> import typelattice.numpy as tnp
    >>> tnp.clip(tnp.asarray([1, 5, 9], dtype='int8'), 2, 6)
    Array([2, 5, 6], dtype=int8)
    """
    if arr is None:
        raise TypeError("clip: missing the array argument")
    for pos, x in enumerate((arr, min, max)):
        if x is not None:
            _core.check_array_like(x, "clip", pos)
        if isinstance(x, complex) or (
            x is not None
            and not isinstance(x, bool | int | float)
            and _dtypes.kind_of(_dtypes.dtype_of(x)) == "c"
        ):
            raise ValueError(
                "clip does not accept complex values (they have no order); "
                "clip the real and imaginary parts separately"
            )
    out = arr if isinstance(arr, ArrayImpl) else positive_or_copy(arr)
    if min is not None:
        out = maximum(out, min)
    if max is not None:
        out = minimum(out, max)
    return out


@traced(abstract.copying)
def positive_or_copy(x: ArrayLike) -> Array:
    """``x`` as an array of its own dtype and weak flag (bool allowed)."""
    v, key = _array.operand(x, "clip", 0)
    if not isinstance(key, _core.Aval):
        return asarray(x)
    return wrap(_core.unshared(np.asarray(v), x), key)


@overload
def where(
    condition: ArrayLike,
    x: None = None,
    y: None = None,
    /,
    *,
    size: int | None = None,
    fill_value: ArrayLike | tuple[ArrayLike, ...] | None = None,
) -> tuple[Array, ...]: ...


@overload
def where(
    condition: ArrayLike,
    x: ArrayLike,
    y: ArrayLike,
    /,
    *,
    size: None = None,
    fill_value: None = None,
) -> Array: ...


@traced(abstract.copying)
def where(
    condition: ArrayLike,
    x: ArrayLike | None = None,
    y: ArrayLike | None = None,
    /,
    *,
    size: int | None = None,
    fill_value: ArrayLike | tuple[ArrayLike, ...] | None = None,
) -> Array | tuple[Array, ...]:
    """Elements of ``x`` where ``condition`` is true, of ``y`` elsewhere.

    ``x`` and ``y`` are promoted together; ``condition`` is tested for
    truth whatever its dtype. With the condition alone it is
    :func:`nonzero` (``size`` and ``fill_value`` as there).

    Args:
      condition: an array or scalar, tested for truth.
      x: the values where ``condition`` is true.
      y: the values elsewhere; promoted with ``x`` (not with
        ``condition``). Give both or neither.
      size: with the condition alone, as :func:`nonzero`.
      fill_value: with the condition alone, as :func:`nonzero`.

    Returns:
      An Array of ``x`` and ``y``'s promoted dtype, of the three arguments'
      broadcast shape; with the condition alone, a tuple of index arrays.

    Raises:
      ValueError: only one of ``x`` and ``y``, or ``size``/``fill_value``
        with them.
      TypeError: a ``size`` that is not a non-negative integer (as
        jax.numpy).

    >>> import typelattice.numpy as tnp
    >>> tnp.where(tnp.asarray([True, False]), tnp.asarray([1, 2], dtype='int8'), 0)
    Array([1, 0], dtype=int8)
    >>> tnp.where(tnp.asarray([0, 3, 4]), size=3, fill_value=-1)
    (Array([ 1,  2, -1], dtype=int32),)
    """
    if x is None and y is None:
        return _nonzero(condition, size, fill_value, "where")
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    if size is not None or fill_value is not None:
        raise ValueError(
            "where: size and fill_value are for where(condition) alone (the "
            "nonzero form), not with x and y"
        )
    cv, _ = _array.operand(condition, "where", 0)
    cond = np.asarray(cv, dtype=bool)
    (vx, vy), plan = promote(_WHERE, (x, y))
    out_key = plan.out_key
    state = _config.current()
    if state.rank_promotion != "allow":
        shapes = [cond.shape, np.shape(vx), np.shape(vy)]
        _core.check_rank("where", shapes, state.rank_promotion)
    return finish(run("where", np.where, [cond, vx, vy], False), out_key)


_WHERE = Op("where", np.where, 2)


def _attach_ufunc_methods() -> None:
    """The ufunc methods (``add.reduce``...) of the functions that are
    ufuncs in jax.numpy, with their identities."""
    for fn, identity in (
        (add, 0),
        (multiply, 1),
        (subtract, None),
        (maximum, None),
        (minimum, None),
        (logaddexp, -np.inf),
        (logaddexp2, -np.inf),
        (logical_and, True),
        (logical_or, False),
        (logical_xor, False),
        (bitwise_and, -1),
        (bitwise_or, 0),
        (bitwise_xor, 0),
    ):
        _ufunc.attach(fn, identity)


_attach_ufunc_methods()


# -- lowerings (for differentiation) --------------------------------------------


def _power_lower(x1: Any, x2: Any, /) -> Any:
    """A concrete integer exponent: repeated products (lax.integer_pow),
    as eagerly; otherwise the promoted lax.pow."""
    result = _lower.expected(power, x1, x2)
    exponent = _integer_scalar(x2)
    if exponent is not None:
        return _lower.finish(lax.integer_pow(_power_base(x1), exponent), result)
    return _lower.finish(_power(x1, x2), result)


def _divmod_lower(x1: Any, x2: Any, /) -> Any:
    return floor_divide(x1, x2), remainder(x1, x2)


def _where_lower(
    condition: Any,
    x: Any = None,
    y: Any = None,
    /,
    *,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    if x is None and y is None:  # the indices of the nonzero elements
        return where(stop_gradient(condition), size=size, fill_value=fill_value)
    result = _lower.expected(where, condition, x, y, size=size, fill_value=fill_value)
    shape = tuple(result.shape)
    cond = stop_gradient(condition)
    if getattr(cond, "dtype", None) != np.bool_ or not isinstance(cond, Array):
        cond = not_equal(asarray(cond), 0)  # tested for truth
    test = _lower.broadcast(cond, shape)
    chosen = lax.select(
        test,
        _lower.broadcast(_lower.like(x, result), shape),
        _lower.broadcast(_lower.like(y, result), shape),
    )
    return _lower.finish(chosen, result)


lowering(power)(_power_lower)
lowering(divmod)(_divmod_lower)
lowering(where)(_where_lower)
lowering(round)(_lower.constant(round))
lowering(positive_or_copy)(_lower.identity)
