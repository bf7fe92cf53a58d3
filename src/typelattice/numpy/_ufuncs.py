"""The elementwise functions of the namespace, as a table of :class:`Op`.

The table says, per function, which dtypes it accepts and how it computes,
following jax.numpy: arithmetic keeps the promoted dtype, transcendental
functions compute in an inexact type (an int32 array gives float32), the
comparisons return bool, bitwise functions take integers and bools only.
"""

from __future__ import annotations

import functools
import math
import operator
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, cast, overload

import numpy as np

from typelattice import _array, _config, _core, _dtypes
from typelattice._array import ArrayImpl, BackendArray, wrap
from typelattice._basearray import Array
from typelattice._lax import _elementwise as _lx
from typelattice._lax._elementwise import Check, negative_power_message
from typelattice._lax._primitive import broadcast_in_dim_p
from typelattice._tracing.ad import stop_gradient
from typelattice._tracing.primitive import Primitive
from typelattice._tracing.tracer import Tracer
from typelattice.numpy import _ufunc
from typelattice.numpy._elementwise import (
    DType,
    Op,
    broadcast,
    call,
    lax_function,
    make_binary,
    make_unary,
    operands,
    result,
)
from typelattice.numpy._shape import (
    _nonzero,  # pyright: ignore[reportPrivateUsage]
    _nonzero_operand,  # pyright: ignore[reportPrivateUsage]
)
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


def _np_logaddexp(a: Any, b: Any) -> Any:
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


def _np_logaddexp2(a: Any, b: Any) -> Any:
    """``log2(2**a + 2**b)``, complex included (as JAX)."""
    a = np.asarray(a)
    if a.dtype.kind != "c":
        return np.logaddexp2(a, b)
    ln2 = np.log(2).astype(a.dtype)
    return _np_logaddexp(a * ln2, np.asarray(b, dtype=a.dtype) * ln2) / ln2


def _np_arctan2(y: Any, x: Any) -> Any:
    """``arctan2``; for complex input the analytic continuation
    ``-i log((x + iy) / sqrt(x**2 + y**2))``, as JAX computes it (NumPy's
    ufunc is real-only)."""
    y = np.asarray(y)
    if y.dtype.kind != "c":
        return np.arctan2(y, x)
    x = np.asarray(x, dtype=y.dtype)
    return -1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))


# -- formulations -------------------------------------------------------------
# How each function computes with typelattice.lax, on operands already in the
# compute dtype (see Op): one primitive where one computes what NumPy's
# function computes, else a composition. Constants are 0-d arrays of the
# operand's dtype; comparisons and selections give piecewise constant
# functions their zero derivatives by the primitives' own rules.


def _const(x: Any, value: Any) -> Array:
    """A 0-d constant of ``x``'s dtype (weak: it takes ``x``'s flag)."""
    return wrap(np.asarray(value).astype(x.dtype), _core.aval(x.dtype, True))


def _zeros(x: Any) -> Any:
    """Zeros of ``x``'s shape and dtype, a constant."""
    return broadcast_in_dim_p.bind(
        _const(x, 0), shape=tuple(x.shape), broadcast_dimensions=()
    )


def _kind(x: Any) -> str:
    return _dtypes.kind_of(x.dtype)


def _only(prim: Primitive, kinds: str) -> Callable[[DType], Primitive | None]:
    """``prim`` for compute dtypes of ``kinds``, else the composition."""
    return lambda cd: prim if _dtypes.kind_of(cd) in kinds else None


def _bool_or(
    for_bool: Primitive, other: Primitive
) -> Callable[[DType], Primitive | None]:
    """``for_bool`` in bool (``add`` of bools is ``or``), else ``other``."""
    return lambda cd: for_bool if cd == np.bool_ else other


def _by_kind(prims: dict[str, Primitive]) -> Callable[[DType], Primitive | None]:
    return lambda cd: prims.get(_dtypes.kind_of(cd))


def _full_shape(x: Any, shape: tuple[int, ...]) -> Any:
    if tuple(x.shape) == shape:
        return x
    n = len(shape)
    dims = tuple(range(n - x.ndim, n))
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def _select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred``, else ``on_false``; constants of rank 0
    are broadcast to the others' shape."""
    shape = max((tuple(a.shape) for a in (pred, on_true, on_false)), key=len)
    return _lx.select_n_p.bind(
        _full_shape(pred, shape),
        _full_shape(on_false, shape),
        _full_shape(on_true, shape),
    )


def _truth(x: Any) -> Any:
    """``x != 0`` (bool as it is)."""
    if x.dtype == np.bool_:
        return x
    return _lx.ne_p.bind(x, _const(x, 0))


def _logical(prim: Primitive) -> Callable[[Any, Any], Any]:
    return lambda x, y: prim.bind(_truth(x), _truth(y))


def _complex_order(prim: Primitive) -> Callable[[Any, Any], Any]:
    """A comparison of complex numbers, as NumPy orders them: by real
    part, then by imaginary part."""

    def compare(x: Any, y: Any) -> Any:
        xr, yr = _lx.real_p.bind(x), _lx.real_p.bind(y)
        xi, yi = _lx.imag_p.bind(x), _lx.imag_p.bind(y)
        first = _lx.lt_p if prim in (_lx.lt_p, _lx.le_p) else _lx.gt_p
        return _lx.or_p.bind(
            first.bind(xr, yr),
            _lx.and_p.bind(_lx.eq_p.bind(xr, yr), prim.bind(xi, yi)),
        )

    return compare


def _fmod(x: Any, y: Any) -> Any:
    """C's fmod; an integer remainder by zero is 0, as NumPy's."""
    r = _lx.rem_p.bind(x, y)
    if _kind(x) not in "iu":
        return r
    return _select(_lx.eq_p.bind(y, _const(y, 0)), _const(r, 0), r)


def _remainder(x: Any, y: Any) -> Any:
    """``x - floor(x / y) * y`` as NumPy's ``remainder``: the remainder of
    truncated division, moved by ``y`` when the signs differ; by zero, 0
    for integers and NaN for floats; a zero takes ``y``'s sign."""
    r = _lx.rem_p.bind(x, y)
    zero = _const(r, 0)
    nonzero = _lx.ne_p.bind(r, zero)
    if _kind(x) == "u":
        fix = _lx.and_p.bind(nonzero, _lx.lt_p.bind(y, zero))  # never
    else:
        fix = _lx.and_p.bind(
            nonzero, _lx.ne_p.bind(_lx.lt_p.bind(r, zero), _lx.lt_p.bind(y, zero))
        )
    out = _select(fix, _lx.add_p.bind(r, y), r)
    if _kind(x) in "iu":
        return _select(_lx.eq_p.bind(y, zero), zero, out)
    signed_zero = _select(_lx.lt_p.bind(y, zero), _const(r, -0.0), zero)
    return _select(_lx.eq_p.bind(out, zero), signed_zero, out)


def _floor_divide(x: Any, y: Any) -> Any:
    """NumPy's ``floor_divide``: for integers the quotient rounded down (0
    for a division by zero); for floats NumPy's ``divmod`` quotient,
    ``(x - fmod(x, y)) / y`` corrected by the remainder's sign, then
    rounded to the nearest whole number."""
    zero = _const(x, 0)
    if _kind(x) in "iu":
        q = _lx.div_p.bind(x, y)
        if _kind(x) == "i":
            r = _lx.rem_p.bind(x, y)
            signs = _lx.ne_p.bind(_lx.lt_p.bind(r, zero), _lx.lt_p.bind(y, zero))
            fix = _lx.and_p.bind(_lx.ne_p.bind(r, zero), signs)
            q = _select(fix, _lx.sub_p.bind(q, _const(x, 1)), q)
        return _select(_lx.eq_p.bind(y, zero), zero, q)
    mod = _lx.rem_p.bind(x, y)
    div = _lx.div_p.bind(_lx.sub_p.bind(x, mod), y)
    signs = _lx.ne_p.bind(_lx.lt_p.bind(y, zero), _lx.lt_p.bind(mod, zero))
    fix = _lx.and_p.bind(_lx.ne_p.bind(mod, zero), signs)
    div = _select(fix, _lx.sub_p.bind(div, _const(x, 1)), div)
    floor = _lx.floor_p.bind(div)
    half_up = _lx.gt_p.bind(_lx.sub_p.bind(div, floor), _const(x, 0.5))
    floor = _select(half_up, _lx.add_p.bind(floor, _const(x, 1)), floor)
    # A zero quotient takes the sign of x / y; a zero divisor gives x / y.
    exact = _lx.div_p.bind(x, y)
    signed_zero = _lx.mul_p.bind(exact, zero)
    out = _select(_lx.eq_p.bind(div, zero), signed_zero, floor)
    return _select(_lx.eq_p.bind(y, zero), exact, out)


def _int_power(x: Any, y: Any) -> Any:
    """Integer ``x ** y`` by repeated squaring in ``x``'s dtype (integers
    wrap, as NumPy's); the exponent's bits are read one by one, after a
    check (where it runs) that none is negative."""
    y = _lx.convert_element_type_p.bind(
        y, new_dtype=y.dtype, weak_type=y.weak_type, check=Check("exponent", "power", 1)
    )
    acc = _lx.add_p.bind(_zeros(x), _const(x, 1))
    base = x
    one = _const(y, 1)
    shift = _lx.shift_right_logical_p
    for _ in range(x.dtype.itemsize * 8):
        bit = _lx.ne_p.bind(_lx.and_p.bind(y, one), _const(y, 0))
        acc = _select(bit, _lx.mul_p.bind(acc, base), acc)
        base = _lx.mul_p.bind(base, base)
        y = shift.bind(y, one)
    return acc


def _logaddexp(x: Any, y: Any) -> Any:
    """``max(x, y) + log1p(exp(-|x - y|))``; NaN where ``x - y`` is (two
    infinities of one sign give that infinity). Complex operands: the one
    of larger real part plus ``log1p(exp(other - it))``."""
    if _kind(x) == "c":
        first = _lx.ge_p.bind(_lx.real_p.bind(x), _lx.real_p.bind(y))
        big, small = _select(first, x, y), _select(first, y, x)
        return _lx.add_p.bind(
            big, _lx.log1p_p.bind(_lx.exp_p.bind(_lx.sub_p.bind(small, big)))
        )
    amax = _lx.max_p.bind(x, y)
    delta = _lx.sub_p.bind(x, y)
    nan = _lx.ne_p.bind(delta, delta)
    safe = _select(nan, _const(delta, 0), delta)
    tail = _lx.log1p_p.bind(_lx.exp_p.bind(_lx.neg_p.bind(_lx.abs_p.bind(safe))))
    out = _lx.add_p.bind(amax, tail)
    equal_inf = _lx.and_p.bind(
        _lx.eq_p.bind(x, y), _lx.not_p.bind(_lx.is_finite_p.bind(x))
    )
    return _select(equal_inf, x, _select(nan, delta, out))


def _logaddexp2(x: Any, y: Any) -> Any:
    """``max(x, y) + log2(1 + 2**-|x - y|)``; complex operands: by
    :func:`_logaddexp` of ``x * ln 2`` and ``y * ln 2``, divided by ``ln 2``."""
    if _kind(x) == "c":
        ln2 = _const(x, math.log(2))
        both = _logaddexp(_lx.mul_p.bind(x, ln2), _lx.mul_p.bind(y, ln2))
        return _lx.div_p.bind(both, ln2)
    amax = _lx.max_p.bind(x, y)
    delta = _lx.sub_p.bind(x, y)
    nan = _lx.ne_p.bind(delta, delta)
    safe = _select(nan, _const(delta, 0), delta)
    tail = _lx.log1p_p.bind(_lx.exp2_p.bind(_lx.neg_p.bind(_lx.abs_p.bind(safe))))
    out = _lx.add_p.bind(amax, _lx.mul_p.bind(tail, _const(x, 1 / math.log(2))))
    equal_inf = _lx.and_p.bind(
        _lx.eq_p.bind(x, y), _lx.not_p.bind(_lx.is_finite_p.bind(x))
    )
    return _select(equal_inf, x, _select(nan, delta, out))


def _hypot(x: Any, y: Any) -> Any:
    """``sqrt(x**2 + y**2)``, scaled by the larger magnitude so that the
    squares cannot overflow; infinite if either is."""
    ax, ay = _lx.abs_p.bind(x), _lx.abs_p.bind(y)
    big, small = _lx.max_p.bind(ax, ay), _lx.min_p.bind(ax, ay)
    one = _const(big, 1)
    safe = _select(_lx.eq_p.bind(big, _const(big, 0)), one, big)
    ratio = _lx.div_p.bind(small, safe)
    root = _lx.sqrt_p.bind(_lx.add_p.bind(_lx.mul_p.bind(ratio, ratio), one))
    out = _lx.mul_p.bind(big, root)
    inf = _const(big, np.inf)
    either_inf = _lx.or_p.bind(_lx.eq_p.bind(ax, inf), _lx.eq_p.bind(ay, inf))
    return _select(either_inf, _lx.add_p.bind(_zeros(out), inf), out)


def _nan_ignoring(prim: Primitive) -> Callable[[Any, Any], Any]:
    """fmax, fmin: ``prim``, except that a NaN gives way to a number."""

    def fn(x: Any, y: Any) -> Any:
        chosen = _select(_lx.ne_p.bind(x, x), y, prim.bind(x, y))
        return _select(_lx.ne_p.bind(y, y), x, chosen)

    return fn


def _copysign(x: Any, y: Any) -> Any:
    """``|x|`` with the sign bit of ``y`` (read from its bits: ``-0.0``
    and NaNs have one too)."""
    ax = _lx.abs_p.bind(x)
    bits = np.dtype(f"int{y.dtype.itemsize * 8}")
    pattern = _lx.bitcast_convert_type_p.bind(y, new_dtype=bits)
    negative = _lx.lt_p.bind(pattern, _const(pattern, 0))
    return _select(negative, _lx.neg_p.bind(ax), ax)


def _heaviside(x: Any, y: Any) -> Any:
    """0 below zero, 1 above, ``y`` at zero (NaN for NaN): piecewise
    constant, so ``y`` is a constant of the derivative too."""
    zero = _const(x, 0)
    y = stop_gradient(y)
    step = _select(_lx.gt_p.bind(x, zero), _const(x, 1), y)
    step = _select(_lx.lt_p.bind(x, zero), zero, step)
    return _select(_lx.ne_p.bind(x, x), x, step)


def _power_of(x: Any, y: Any) -> Any:
    if _kind(x) in "iu":
        return _int_power(x, y)
    return _lx.pow_p.bind(x, y)


def _identity(x: Any) -> Any:
    return x


def _reciprocal(x: Any) -> Any:
    return _lx.div_p.bind(_const(x, 1), x)


def _log_base(base: float) -> Callable[[Any], Any]:
    """``log(x) / log(base)``, as JAX computes ``log2`` and ``log10``."""
    return lambda x: _lx.div_p.bind(_lx.log_p.bind(x), _const(x, math.log(base)))


def _trunc(x: Any) -> Any:
    """Rounded toward zero: ``ceil`` below zero, ``floor`` above."""
    negative = _lx.lt_p.bind(x, _const(x, 0))
    return _select(negative, _lx.ceil_p.bind(x), _lx.floor_p.bind(x))


def _rint(x: Any) -> Any:
    """Rounded half to even (complex numbers part by part)."""
    if _kind(x) == "c":
        parts = (_lx.real_p.bind(x), _lx.imag_p.bind(x))
        return _lx.complex_p.bind(*(_rint(p) for p in parts))
    return _lx.round_p.bind(x, rounding_method=_lx.RoundingMethod.TO_NEAREST_EVEN)


def _isnan(x: Any) -> Any:
    return _lx.ne_p.bind(x, x)  # (never true for integers)


def _isinf(x: Any) -> Any:
    kind = _kind(x)
    if kind == "c":
        return _lx.or_p.bind(_isinf(_lx.real_p.bind(x)), _isinf(_lx.imag_p.bind(x)))
    if kind != "f":
        return _lx.ne_p.bind(x, x)  # False
    return _lx.eq_p.bind(_lx.abs_p.bind(x), _const(x, np.inf))


def _isfinite(x: Any) -> Any:
    kind = _kind(x)
    if kind == "c":
        return _lx.and_p.bind(
            _lx.is_finite_p.bind(_lx.real_p.bind(x)),
            _lx.is_finite_p.bind(_lx.imag_p.bind(x)),
        )
    if kind != "f":
        return _lx.eq_p.bind(x, x)  # True
    return _lx.is_finite_p.bind(x)


def _logical_not(x: Any) -> Any:
    return _lx.eq_p.bind(x, _const(x, 0))


def _imag_of_real(x: Any) -> Any:
    return _zeros(x)  # (complex numbers: imag_p)


def _angle_of(x: Any) -> Any:
    """``atan2(imag(x), real(x))`` (0 or pi for real numbers)."""
    if _kind(x) == "c":
        return _lx.atan2_p.bind(_lx.imag_p.bind(x), _lx.real_p.bind(x))
    return _lx.atan2_p.bind(_const(x, 0), x)


# -- binary ------------------------------------------------------------------

add = cast(
    "ufunc",
    make_binary(Op("add", np.add, 2, prim=_bool_or(_lx.or_p, _lx.add_p))),
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
    make_binary(Op("subtract", np.subtract, 2, accept=_NUM, prim=_lx.sub_p)),
)
_doc(
    subtract,
    "Subtract ``y`` from ``x`` elementwise (the ``-`` operator).",
    ">>> tnp.subtract(tnp.asarray([5, 7], dtype='uint8'), 2)\n"
    "Array([3, 5], dtype=uint8)",
)
multiply = cast(
    "ufunc",
    make_binary(Op("multiply", np.multiply, 2, prim=_bool_or(_lx.and_p, _lx.mul_p))),
)
_doc(
    multiply,
    "Multiply ``x`` by ``y`` elementwise (the ``*`` operator).",
    ">>> tnp.multiply(tnp.asarray([1.5, 2], dtype='bfloat16'), 2.0)\n"
    "Array([3, 4], dtype=bfloat16)",
)
true_divide = make_binary(
    Op("true_divide", np.true_divide, 2, to="inexact", prim=_lx.div_p)
)
_doc(
    true_divide,
    "Divide ``x`` by ``y`` elementwise (the ``/`` operator; ``divide`` is the same).",
    ">>> tnp.true_divide(tnp.asarray([1, 2, 3], dtype='int16'), 2)\n"
    "Array([0.5, 1. , 1.5], dtype=float32)",
)
divide = make_binary(Op("divide", np.true_divide, 2, to="inexact", prim=_lx.div_p))
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
        lower=_floor_divide,
        full=True,
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
        lower=_remainder,
        full=True,
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
        lower=_remainder,
        full=True,
    )
)
_doc(
    mod,
    "The remainder of ``x // y``, with the sign of ``y`` (``remainder``, the "
    "``%`` operator).",
    ">>> tnp.mod(tnp.asarray([7, -7], dtype='int16'), 3)\nArray([1, 2], dtype=int16)",
)
fmod = make_binary(
    Op(
        "fmod",
        np.fmod,
        2,
        accept="iuf",
        to="numeric",
        fp_int=True,
        lower=_fmod,
        full=True,
    )
)
_doc(
    fmod,
    "The remainder of ``x / y`` truncated towards zero: it has the sign of "
    "``x`` (C's ``fmod``).",
    ">>> tnp.fmod(tnp.asarray([7, -7], dtype='int8'), 3)\nArray([ 1, -1], dtype=int8)",
)

# Integer results are strong: JAX computes them from the unpromoted operands.
_power = make_binary(
    Op(
        "power",
        np.power,
        2,
        to="numeric",
        fp_int=True,
        strong_kinds=_INT,
        lower=_power_of,
        full=True,
    )
)
# An inexact base with a strong integer exponent array: strong too.
_power_strong = make_binary(
    Op(
        "power",
        np.power,
        2,
        to="numeric",
        fp_int=True,
        strong_kinds=_ALL,
        lower=_power_of,
        full=True,
    )
)


def _integer_power_op(exponent: int) -> Op:
    """``x ** exponent`` for a concrete integer exponent: the base alone,
    in its numeric type (bool becomes int32), weak flag kept, raised by
    repeated multiplication (JAX's ``integer_pow``)."""
    op = _INTEGER_POWERS.get(exponent)
    if op is None:

        def raised(x: Any) -> Any:
            kind = _kind(x)
            if exponent < 0 and kind in "iu":
                raise _negative_power_error()
            if kind == "f" and not -1 <= exponent <= 2 and _holds(x.dtype, exponent):
                # The C library's pow, correctly rounded where repeated
                # products are not (as NumPy computes it); x**2 and 1/x are
                # exact as products, with exact derivatives.
                return _lx.pow_p.bind(x, _const(x, exponent))
            return _lx.integer_pow_p.bind(x, y=exponent)

        op = _INTEGER_POWERS.setdefault(
            exponent, Op("power", np.power, 1, to="numeric", lower=raised)
        )
    return op


_INTEGER_POWERS: dict[int, Op] = {}


def _holds(dt: DType, n: int) -> bool:
    """Whether the float dtype ``dt`` holds the integer ``n`` exactly."""
    if not -(2**53) <= n <= 2**53:  # (abs is this module's)
        return False
    with np.errstate(over="ignore"):
        return bool(np.asarray(float(n)).astype(dt).astype(np.float64) == n)


float_power = make_binary(Op("float_power", np.power, 2, to="inexact", prim=_lx.pow_p))
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
            _np_logaddexp,
            2,
            accept="fc",
            to="inexact",
            weak_if_all="complex",
            lower=_logaddexp,
            full=True,
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
            _np_logaddexp2,
            2,
            accept="fc",
            to="inexact",
            weak_if_all=True,
            lower=_logaddexp2,
            full=True,
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
    Op("arctan2", _np_arctan2, 2, accept="fc", to="inexact", prim=_lx.atan2_p)
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
        lower=_hypot,
        full=True,
    )
)
_doc(
    hypot,
    "``sqrt(x**2 + y**2)`` elementwise, without overflow in the squares.",
    ">>> tnp.hypot(tnp.asarray([3.0, 5.0], dtype='float32'), 4.0).round(4)\n"
    "Array([5.    , 6.4031], dtype=float32)",
)


copysign = make_binary(
    Op("copysign", np.copysign, 2, accept="f", to="inexact", lower=_copysign, full=True)
)
_doc(
    copysign,
    "The magnitude of ``x`` with the sign of ``y``, elementwise.",
    ">>> tnp.copysign(tnp.asarray([1.5, -2.0], dtype='float32'), -1.0)\n"
    "Array([-1.5, -2. ], dtype=float32)",
)
nextafter = make_binary(
    Op("nextafter", np.nextafter, 2, accept="f", to="inexact", prim=_lx.nextafter_p)
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
        lower=_heaviside,
        full=True,
    )
)
_doc(
    heaviside,
    "The Heaviside step function of ``x``: 0 below zero, ``y`` at zero, 1 above.",
    ">>> tnp.heaviside(tnp.asarray([-1.5, 0.0, 2.0], dtype='float32'), 0.5)\n"
    "Array([0. , 0.5, 1. ], dtype=float32)",
)
equal = make_binary(Op("equal", np.equal, 2, out="bool", prim=_lx.eq_p))
_doc(
    equal,
    "``x == y`` elementwise (the ``==`` operator).",
    ">>> tnp.equal(tnp.asarray([1, 2, 3], dtype='int8'), 2)\n"
    "Array([False,  True, False], dtype=bool)",
)
not_equal = make_binary(Op("not_equal", np.not_equal, 2, out="bool", prim=_lx.ne_p))
_doc(
    not_equal,
    "``x != y`` elementwise (the ``!=`` operator).",
    ">>> tnp.not_equal(tnp.asarray([1, 2, 3], dtype='int8'), 2)\n"
    "Array([ True, False,  True], dtype=bool)",
)
less = make_binary(
    Op(
        "less",
        np.less,
        2,
        out="bool",
        prim=_only(_lx.lt_p, _REAL),
        lower=_complex_order(_lx.lt_p),
        full=True,
    )
)
_doc(
    less,
    "``x < y`` elementwise (the ``<`` operator).",
    ">>> tnp.less(tnp.asarray([1, 2, 3], dtype='uint8'), 2)\n"
    "Array([ True, False, False], dtype=bool)",
)
less_equal = make_binary(
    Op(
        "less_equal",
        np.less_equal,
        2,
        out="bool",
        prim=_only(_lx.le_p, _REAL),
        lower=_complex_order(_lx.le_p),
        full=True,
    )
)
_doc(
    less_equal,
    "``x <= y`` elementwise (the ``<=`` operator).",
    ">>> tnp.less_equal(tnp.asarray([1.5, 2.5], dtype='float32'), 2)\n"
    "Array([ True, False], dtype=bool)",
)
greater = make_binary(
    Op(
        "greater",
        np.greater,
        2,
        out="bool",
        prim=_only(_lx.gt_p, _REAL),
        lower=_complex_order(_lx.gt_p),
        full=True,
    )
)
_doc(
    greater,
    "``x > y`` elementwise (the ``>`` operator).",
    ">>> tnp.greater(tnp.asarray([1, 2, 3], dtype='int16'), 2)\n"
    "Array([False, False,  True], dtype=bool)",
)
greater_equal = make_binary(
    Op(
        "greater_equal",
        np.greater_equal,
        2,
        out="bool",
        prim=_only(_lx.ge_p, _REAL),
        lower=_complex_order(_lx.ge_p),
        full=True,
    )
)
_doc(
    greater_equal,
    "``x >= y`` elementwise (the ``>=`` operator).",
    ">>> tnp.greater_equal(tnp.asarray([1, 2, 3], dtype='int16'), 2)\n"
    "Array([False,  True,  True], dtype=bool)",
)
logical_and = cast(
    "ufunc",
    make_binary(
        Op(
            "logical_and",
            np.logical_and,
            2,
            out="bool",
            weak_if_all=True,
            prim=_only(_lx.and_p, "b"),
            lower=_logical(_lx.and_p),
        )
    ),
)
_doc(
    logical_and,
    "The truth value of ``x and y`` elementwise (nonzero is true).",
    ">>> tnp.logical_and(tnp.asarray([0, 1, 2], dtype='int8'), True)\n"
    "Array([False,  True,  True], dtype=bool)",
)
logical_or = cast(
    "ufunc",
    make_binary(
        Op(
            "logical_or",
            np.logical_or,
            2,
            out="bool",
            weak_if_all=True,
            prim=_only(_lx.or_p, "b"),
            lower=_logical(_lx.or_p),
        )
    ),
)
_doc(
    logical_or,
    "The truth value of ``x or y`` elementwise (nonzero is true).",
    ">>> tnp.logical_or(tnp.asarray([0.0, 0.5], dtype='float32'), False)\n"
    "Array([False,  True], dtype=bool)",
)
logical_xor = cast(
    "ufunc",
    make_binary(
        Op(
            "logical_xor",
            np.logical_xor,
            2,
            out="bool",
            weak_if_all=True,
            prim=_only(_lx.xor_p, "b"),
            lower=_logical(_lx.xor_p),
        )
    ),
)
_doc(
    logical_xor,
    "Whether exactly one of ``x`` and ``y`` is true, elementwise (nonzero is true).",
    ">>> tnp.logical_xor(tnp.asarray([True, False]), True)\n"
    "Array([False,  True], dtype=bool)",
)
bitwise_and = cast(
    "ufunc",
    make_binary(Op("bitwise_and", np.bitwise_and, 2, accept=_INT, prim=_lx.and_p)),
)
_doc(
    bitwise_and,
    "The bits set in both ``x`` and ``y`` (the ``&`` operator).",
    ">>> tnp.bitwise_and(tnp.asarray([12, 10], dtype='uint8'), 6)\n"
    "Array([4, 2], dtype=uint8)",
)
bitwise_or = cast(
    "ufunc",
    make_binary(Op("bitwise_or", np.bitwise_or, 2, accept=_INT, prim=_lx.or_p)),
)
_doc(
    bitwise_or,
    "The bits set in ``x`` or ``y`` (the ``|`` operator).",
    ">>> tnp.bitwise_or(tnp.asarray([12, 10], dtype='uint8'), 1)\n"
    "Array([13, 11], dtype=uint8)",
)
bitwise_xor = cast(
    "ufunc",
    make_binary(Op("bitwise_xor", np.bitwise_xor, 2, accept=_INT, prim=_lx.xor_p)),
)
_doc(
    bitwise_xor,
    "The bits set in exactly one of ``x`` and ``y`` (the ``^`` operator).",
    ">>> tnp.bitwise_xor(tnp.asarray([12, 10], dtype='uint8'), 6)\n"
    "Array([10, 12], dtype=uint8)",
)
left_shift = make_binary(
    Op(
        "left_shift",
        np.left_shift,
        2,
        to="numeric",
        accept="iu",
        prim=_lx.shift_left_p,
    )
)
_doc(
    left_shift,
    "The bits of ``x`` shifted left by ``y`` (the ``<<`` operator; "
    "``bitwise_left_shift`` is the same function).",
    ">>> tnp.left_shift(tnp.asarray([1, 3], dtype='int8'), 2)\n"
    "Array([ 4, 12], dtype=int8)",
)
right_shift = make_binary(
    Op(
        "right_shift",
        np.right_shift,
        2,
        to="numeric",
        accept="iu",
        prim=_by_kind(
            {"i": _lx.shift_right_arithmetic_p, "u": _lx.shift_right_logical_p}
        ),
    )
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
    make_binary(Op("maximum", np.maximum, 2, prim=_lx.max_p)),
)
_doc(
    maximum,
    "The larger of ``x`` and ``y``, elementwise (NaN if either is NaN).",
    ">>> tnp.maximum(tnp.asarray([1, 5], dtype='int8'), 3)\nArray([3, 5], dtype=int8)",
)
minimum = cast(
    "ufunc",
    make_binary(Op("minimum", np.minimum, 2, prim=_lx.min_p)),
)
_doc(
    minimum,
    "The smaller of ``x`` and ``y``, elementwise (NaN if either is NaN).",
    ">>> tnp.minimum(tnp.asarray([1.0, 5.0], dtype='float16'), 3)\n"
    "Array([1., 3.], dtype=float16)",
)
fmax = make_binary(Op("fmax", np.fmax, 2, lower=_nan_ignoring(_lx.max_p), full=True))
_doc(
    fmax,
    "The larger of ``x`` and ``y``, elementwise, ignoring a NaN when the "
    "other is a number.",
    ">>> tnp.fmax(tnp.asarray([1.0, float('nan')], dtype='float32'), 2.0)\n"
    "Array([2., 2.], dtype=float32)",
)
fmin = make_binary(Op("fmin", np.fmin, 2, lower=_nan_ignoring(_lx.min_p), full=True))
_doc(
    fmin,
    "The smaller of ``x`` and ``y``, elementwise, ignoring a NaN when the "
    "other is a number.",
    ">>> tnp.fmin(tnp.asarray([1.0, float('nan')], dtype='float32'), 2.0)\n"
    "Array([1., 2.], dtype=float32)",
)


@lax_function
def power(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 ** x2`` elementwise, promoted as jax.numpy does (the ``**``
    operator).

    A concrete integer exponent (a Python int, or a 0-d integer array) does
    not take part in promotion: the result has the base's dtype and weak
    flag (bool computes in int32), computed by repeated multiplication as
    JAX's ``integer_pow``. Otherwise the operands are promoted together, as
    by :func:`multiply`.

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
        out = call(_integer_power_op(exponent), (x1,))
        if type(x2) is BackendArray and type(out) is not BackendArray:
            # (x1: a scalar; the result goes where the exponent is)
            out = _array.placed(out, x2._backend, x2._device)  # pyright: ignore[reportPrivateUsage]
        return out
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
    return _power_strong(x1, x2) if mixed else _power(x1, x2)


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


def _negative_power_error() -> TypeError:
    return TypeError(negative_power_message("power"))


@lax_function
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

negative = make_unary(Op("negative", np.negative, 1, accept=_NUM, prim=_lx.neg_p))
_doc(
    negative,
    "``-x`` elementwise (the unary ``-`` operator).",
    ">>> tnp.negative(tnp.asarray([1, -2], dtype='int8'))\n"
    "Array([-1,  2], dtype=int8)\n"
    ">>> tnp.negative(2.5)\n"
    "Array(-2.5, dtype=float32, weak_type=True)",
)
positive = make_unary(
    Op("positive", np.positive, 1, identity_kinds="b", lower=_identity)
)
_doc(
    positive,
    "``+x`` elementwise: the values unchanged (the unary ``+`` operator).",
    ">>> tnp.positive(tnp.asarray([1, -2], dtype='int8'))\nArray([ 1, -2], dtype=int8)",
)
sign = make_unary(Op("sign", np.sign, 1, accept=_NUM, prim=_lx.sign_p))
_doc(
    sign,
    "-1, 0 or 1 by the sign of ``x`` (for complex, ``x / abs(x)``).",
    ">>> tnp.sign(tnp.asarray([-3, 0, 2], dtype='int8'))\n"
    "Array([-1,  0,  1], dtype=int8)",
)
reciprocal = make_unary(
    Op("reciprocal", np.reciprocal, 1, to="inexact", lower=_reciprocal)
)
_doc(
    reciprocal,
    "``1 / x`` elementwise.",
    ">>> tnp.reciprocal(tnp.asarray([1, 2, 4], dtype='int32'))\n"
    "Array([1.  , 0.5 , 0.25], dtype=float32)",
)
square = make_unary(
    Op("square", np.square, 1, to="numeric", prim=_lx.integer_pow_p, params={"y": 2})
)
_doc(
    square,
    "``x * x`` elementwise.",
    ">>> tnp.square(tnp.asarray([2, 3], dtype='int8'))\n"
    "Array([4, 9], dtype=int8)\n"
    ">>> tnp.square(tnp.asarray([True, False]))\n"
    "Array([1, 0], dtype=int32)",
)
sqrt = make_unary(Op("sqrt", np.sqrt, 1, to="inexact", prim=_lx.sqrt_p))
_doc(
    sqrt,
    "The non-negative square root of ``x`` (NaN for negative reals).",
    ">>> tnp.sqrt(tnp.asarray([1, 4, 9], dtype='uint8'))\n"
    "Array([1., 2., 3.], dtype=float32)\n"
    ">>> tnp.sqrt(2.0)\n"
    "Array(1.4142135, dtype=float32, weak_type=True)",
)
cbrt = make_unary(Op("cbrt", np.cbrt, 1, accept="f", to="inexact", prim=_lx.cbrt_p))
_doc(
    cbrt,
    "The cube root of ``x``, negative for negative ``x``.",
    ">>> tnp.cbrt(tnp.asarray([-8.0, 27.0], dtype='float32')).round(4)\n"
    "Array([-2.,  3.], dtype=float32)",
)
exp = make_unary(Op("exp", np.exp, 1, to="inexact", prim=_lx.exp_p))
_doc(
    exp,
    "``e`` raised to the power ``x``.",
    ">>> tnp.exp(tnp.asarray([0.0, 1.0], dtype='float16')).round(1)\n"
    "Array([1. , 2.7], dtype=float16)",
)
exp2 = make_unary(Op("exp2", np.exp2, 1, to="inexact", prim=_lx.exp2_p))
_doc(
    exp2,
    "2 raised to the power ``x``.",
    ">>> tnp.exp2(tnp.asarray([0, 3], dtype='int8')).round(4)\n"
    "Array([1., 8.], dtype=float32)",
)
expm1 = make_unary(Op("expm1", np.expm1, 1, to="inexact", prim=_lx.expm1_p))
_doc(
    expm1,
    "``exp(x) - 1``, accurate for ``x`` near zero.",
    ">>> tnp.expm1(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([0.    , 1.7183], dtype=float32)\n"
    ">>> x = tnp.asarray(2e-4, dtype='float32')\n"
    ">>> (tnp.expm1(x) / x).round(5)  # 1 + x/2 + ...: no digits lost to exp(x)'s 1\n"
    "Array(1.0001, dtype=float32)",
)
log = make_unary(Op("log", np.log, 1, to="inexact", prim=_lx.log_p))
_doc(
    log,
    "The natural logarithm of ``x``.",
    ">>> tnp.log(tnp.asarray([1.0, 2.718282], dtype='float32')).round(4)\n"
    "Array([0., 1.], dtype=float32)",
)
log2 = make_unary(
    Op("log2", np.log2, 1, to="inexact", strong_kinds=_ALL, lower=_log_base(2))
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
    Op("log10", np.log10, 1, to="inexact", strong_kinds=_ALL, lower=_log_base(10))
)
_doc(
    log10,
    "The base-10 logarithm of ``x``.",
    ">>> tnp.log10(tnp.asarray([1.0, 100.0], dtype='float32')).round(4)\n"
    "Array([0., 2.], dtype=float32)",
)
log1p = make_unary(Op("log1p", np.log1p, 1, to="inexact", prim=_lx.log1p_p))
_doc(
    log1p,
    "``log(1 + x)``, accurate for ``x`` near zero.",
    ">>> tnp.log1p(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([0.    , 0.6931], dtype=float32)\n"
    ">>> x = tnp.asarray(2e-4, dtype='float32')\n"
    ">>> (tnp.log1p(x) / x).round(5)  # 1 - x/2 + ...: no digits lost to 1 + x\n"
    "Array(0.9999, dtype=float32)",
)
sin = make_unary(Op("sin", np.sin, 1, to="inexact", prim=_lx.sin_p))
_doc(
    sin,
    "The sine of ``x`` (radians).",
    ">>> tnp.sin(tnp.asarray([0.0, 1.5707964], dtype='float32')).round(4)\n"
    "Array([0., 1.], dtype=float32)",
)
cos = make_unary(Op("cos", np.cos, 1, to="inexact", prim=_lx.cos_p))
_doc(
    cos,
    "The cosine of ``x`` (radians).",
    ">>> tnp.cos(tnp.asarray([0, 1], dtype='int8')).round(4)\n"
    "Array([1.    , 0.5403], dtype=float32)",
)
tan = make_unary(Op("tan", np.tan, 1, to="inexact", prim=_lx.tan_p))
_doc(
    tan,
    "The tangent of ``x`` (radians).",
    ">>> tnp.tan(tnp.asarray([0.0, 0.7853982], dtype='float32')).round(4)\n"
    "Array([0., 1.], dtype=float32)",
)
arcsin = make_unary(Op("arcsin", np.arcsin, 1, to="inexact", prim=_lx.asin_p))
_doc(
    arcsin,
    "The inverse sine of ``x``, in radians (``asin`` is the same function).",
    ">>> tnp.arcsin(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([0.    , 1.5708], dtype=float32)",
)
arccos = make_unary(Op("arccos", np.arccos, 1, to="inexact", prim=_lx.acos_p))
_doc(
    arccos,
    "The inverse cosine of ``x``, in radians (``acos`` is the same function).",
    ">>> tnp.arccos(tnp.asarray([1.0, 0.0], dtype='float32')).round(4)\n"
    "Array([0.    , 1.5708], dtype=float32)",
)
arctan = make_unary(Op("arctan", np.arctan, 1, to="inexact", prim=_lx.atan_p))
_doc(
    arctan,
    "The inverse tangent of ``x``, in radians (``atan`` is the same function).",
    ">>> tnp.arctan(tnp.asarray([0, 1], dtype='int16')).round(4)\n"
    "Array([0.    , 0.7854], dtype=float32)",
)
sinh = make_unary(Op("sinh", np.sinh, 1, to="inexact", prim=_lx.sinh_p))
_doc(
    sinh,
    "The hyperbolic sine of ``x``.",
    ">>> tnp.sinh(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([0.    , 1.1752], dtype=float32)",
)
cosh = make_unary(Op("cosh", np.cosh, 1, to="inexact", prim=_lx.cosh_p))
_doc(
    cosh,
    "The hyperbolic cosine of ``x``.",
    ">>> tnp.cosh(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([1.    , 1.5431], dtype=float32)",
)
tanh = make_unary(Op("tanh", np.tanh, 1, to="inexact", prim=_lx.tanh_p))
_doc(
    tanh,
    "The hyperbolic tangent of ``x``.",
    ">>> tnp.tanh(tnp.asarray([0.0, 1.0], dtype='bfloat16'))\n"
    "Array([0, 0.761719], dtype=bfloat16)",
)
arcsinh = make_unary(Op("arcsinh", np.arcsinh, 1, to="inexact", prim=_lx.asinh_p))
_doc(
    arcsinh,
    "The inverse hyperbolic sine of ``x`` (``asinh`` is the same function).",
    ">>> tnp.arcsinh(tnp.asarray([0.0, 1.0], dtype='float32')).round(4)\n"
    "Array([0.    , 0.8814], dtype=float32)",
)
arccosh = make_unary(Op("arccosh", np.arccosh, 1, to="inexact", prim=_lx.acosh_p))
_doc(
    arccosh,
    "The inverse hyperbolic cosine of ``x`` (``acosh`` is the same function).",
    ">>> tnp.arccosh(tnp.asarray([1.0, 2.0], dtype='float32')).round(4)\n"
    "Array([0.   , 1.317], dtype=float32)",
)
arctanh = make_unary(Op("arctanh", np.arctanh, 1, to="inexact", prim=_lx.atanh_p))
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
    Op("floor", np.floor, 1, accept="f", identity_kinds=_INT, prim=_lx.floor_p)
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
    Op("ceil", np.ceil, 1, accept="f", identity_kinds=_INT, prim=_lx.ceil_p)
)
_doc(
    ceil,
    "The smallest integer value not less than ``x``, in ``x``'s dtype.",
    ">>> tnp.ceil(tnp.asarray([-1.5, 2.5], dtype='float32'))\n"
    "Array([-1.,  3.], dtype=float32)",
)
trunc = make_unary(
    Op("trunc", np.trunc, 1, accept="f", identity_kinds=_INT, lower=_trunc)
)
_doc(
    trunc,
    "``x`` rounded towards zero to an integer value, in ``x``'s dtype.",
    ">>> tnp.trunc(tnp.asarray([-1.5, 2.5], dtype='float32'))\n"
    "Array([-1.,  2.], dtype=float32)",
)
rint = make_unary(
    Op("rint", np.rint, 1, to="default_float", strong_kinds=_INT, lower=_rint)
)
_doc(
    rint,
    "``x`` rounded to the nearest integer value, ties to even.",
    ">>> tnp.rint(tnp.asarray([0.5, 1.5, 2.7], dtype='float32'))\n"
    "Array([0., 2., 3.], dtype=float32)\n"
    ">>> tnp.rint(tnp.asarray([3], dtype='int8'))\n"
    "Array([3.], dtype=float32)",
)
logical_not = make_unary(
    Op(
        "logical_not",
        np.logical_not,
        1,
        out="bool",
        prim=_only(_lx.not_p, "b"),
        lower=_logical_not,
    )
)
_doc(
    logical_not,
    "The truth value of ``not x`` elementwise (nonzero is true).",
    ">>> tnp.logical_not(tnp.asarray([0, 2], dtype='int8'))\n"
    "Array([ True, False], dtype=bool)",
)
invert = make_unary(Op("invert", np.invert, 1, accept=_INT, prim=_lx.not_p))
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
isnan = make_unary(Op("isnan", np.isnan, 1, out="bool", lower=_isnan))
_doc(
    isnan,
    "Whether ``x`` is NaN (for complex: either part).",
    ">>> tnp.isnan(tnp.asarray([1.0, float('nan')], dtype='float32'))\n"
    "Array([False,  True], dtype=bool)",
)
isinf = make_unary(
    Op("isinf", np.isinf, 1, out="bool", strong_kinds=_ALL, lower=_isinf)
)
_doc(
    isinf,
    "Whether ``x`` is positive or negative infinity (for complex: either part).",
    ">>> tnp.isinf(tnp.asarray([1.0, float('inf')], dtype='float32'))\n"
    "Array([False,  True], dtype=bool)",
)
isfinite = make_unary(
    Op("isfinite", np.isfinite, 1, out="bool", strong_kinds=_INT, lower=_isfinite)
)
_doc(
    isfinite,
    "Whether ``x`` is neither infinite nor NaN (for complex: both parts).",
    ">>> tnp.isfinite(tnp.asarray([1.0, float('inf'), float('nan')], "
    "dtype='float32'))\n"
    "Array([ True, False, False], dtype=bool)",
)
conj = make_unary(
    Op(
        "conj",
        np.conjugate,
        1,
        prim=_only(_lx.conj_p, "c"),
        lower=_identity,
    )
)
_doc(
    conj,
    "The complex conjugate of ``x``; real input is returned as it is "
    "(``conjugate`` is the same function).",
    ">>> tnp.conj(tnp.asarray([1+2j, 3-1j], dtype='complex64'))\n"
    "Array([1.-2.j, 3.+1.j], dtype=complex64)",
)
conjugate = conj
_abs = make_unary(
    Op("abs", np.absolute, 1, out="real", identity_kinds="bu", prim=_lx.abs_p)
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
_real = make_unary(
    Op(
        "real",
        np.real,
        1,
        out="real",
        prim=_only(_lx.real_p, "c"),
        lower=_identity,
    )
)
_imag = make_unary(
    Op(
        "imag",
        np.imag,
        1,
        out="real",
        prim=_only(_lx.imag_p, "c"),
        lower=_imag_of_real,
    )
)
angle_op = Op(
    "angle",
    np.angle,
    1,
    to="default_float",
    out="real",
    strong_kinds="biuf",
    lower=_angle_of,
)
_angle = make_unary(angle_op)


@lax_function
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


@lax_function
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


@lax_function
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


@lax_function
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
                lower=_round_to(decimals),
            ),
        )
    return call(op, (a,))


def _round_to(decimals: int) -> Callable[[Any], Any]:
    """Rounding to ``decimals`` places as NumPy computes it: scaled by a
    power of ten, rounded half to even, scaled back (complex numbers part
    by part)."""

    def rounded(x: Any) -> Any:
        if decimals == 0:
            return _rint(x)
        if _kind(x) == "c":
            parts = (_lx.real_p.bind(x), _lx.imag_p.bind(x))
            re, im = (rounded(p) for p in parts)
            return _lx.complex_p.bind(re, im)
        if decimals > 0:
            scale = _const(x, 10.0**decimals)
            return _lx.div_p.bind(_rint(_lx.mul_p.bind(x, scale)), scale)
        scale = _const(x, 10.0**-decimals)
        return _lx.mul_p.bind(_rint(_lx.div_p.bind(x, scale)), scale)

    return rounded


_ROUND_OPS: dict[int, Op] = {}
around = round


@lax_function
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


@lax_function
def positive_or_copy(x: ArrayLike) -> Array:
    """``x`` as an array of its own dtype and weak flag (bool allowed)."""
    return call(_AS_ARRAY, (x,))


_AS_ARRAY = Op("clip", np.positive, 1, identity_kinds=_ALL)


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


@lax_function
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
        return _where_nonzero(condition, size, fill_value)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    if size is not None or fill_value is not None:
        raise ValueError(
            "where: size and fill_value are for where(condition) alone (the "
            "nonzero form), not with x and y"
        )
    _array.check_mixed("where", (condition, x, y))
    if isinstance(condition, Tracer | BackendArray):
        cond: Any = stop_gradient(condition)
    else:
        cv, _ = _array.operand(condition, "where", 0)
        cond = wrap(np.asarray(cv), _core.aval(np.asarray(cv).dtype, False))
    if cond.dtype != np.bool_:
        cond = _truth(cond)  # tested for truth
    (vx, vy), shapes, plan, borrowed = operands(_WHERE, (x, y))
    ops = [cond, vx, vy]
    broadcast("where", ops, [tuple(cond.shape), *shapes], _config.current(), True)
    cond, vx, vy = ops
    return result(_select(cond, vx, vy), plan.out_key, borrowed)


def _where_nonzero(
    condition: ArrayLike,
    size: int | None,
    fill_value: ArrayLike | tuple[ArrayLike, ...] | None,
) -> tuple[Array, ...]:
    x, n = _nonzero_operand(condition, size, "where")
    return _nonzero(x, n, fill_value, "where")


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
