"""The elementwise functions of the namespace, as a table of :class:`Op`.

The table says, per function, which dtypes it accepts and how it computes,
following jax.numpy: arithmetic keeps the promoted dtype, transcendental
functions compute in an inexact type (an int32 array gives float32), the
comparisons return bool, bitwise functions take integers and bools only.
"""

from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING, Any, cast, overload

import numpy as np

from typelattice import _config, _dtypes
from typelattice.numpy import _core, _ufunc
from typelattice.numpy._array import Array, ArrayImpl, wrap
from typelattice.numpy._elementwise import (
    Op,
    apply,
    finish,
    install_operators,
    make_binary,
    make_unary,
    promote,
    run,
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
    make_binary(Op("add", np.add, 2)),
)
subtract = cast(
    "ufunc",
    make_binary(Op("subtract", np.subtract, 2, accept=_NUM)),
)
multiply = cast(
    "ufunc",
    make_binary(Op("multiply", np.multiply, 2)),
)
true_divide = make_binary(Op("true_divide", np.true_divide, 2, to="inexact"))
divide = make_binary(Op("divide", np.true_divide, 2, to="inexact"))
floor_divide = make_binary(
    Op("floor_divide", np.floor_divide, 2, accept="iuf", to="numeric", fp_int=True)
)
remainder = make_binary(
    Op("remainder", np.remainder, 2, accept="iuf", to="numeric", fp_int=True)
)
mod = make_binary(Op("mod", np.remainder, 2, accept="iuf", to="numeric", fp_int=True))
fmod = make_binary(Op("fmod", np.fmod, 2, accept="iuf", to="numeric", fp_int=True))
_power = make_binary(Op("power", np.power, 2, to="numeric", fp_int=True))
# The base alone, in its numeric type (bool becomes int32), weak flag kept.
_power_base = make_unary(Op("power", np.positive, 1, to="numeric"))
float_power = make_binary(Op("float_power", np.power, 2, to="inexact"))
logaddexp = cast(
    "ufunc",
    make_binary(
        Op("logaddexp", _logaddexp, 2, accept="fc", to="inexact", weak_if_all="complex")
    ),
)
logaddexp2 = cast(
    "ufunc",
    make_binary(
        Op("logaddexp2", _logaddexp2, 2, accept="fc", to="inexact", weak_if_all=True)
    ),
)
arctan2 = make_binary(Op("arctan2", _arctan2, 2, accept="fc", to="inexact"))
hypot = make_binary(
    Op(
        "hypot",
        np.hypot,
        2,
        accept="f",
        to="inexact",
        weak_if_all=True,
        error=ValueError,
    )
)
copysign = make_binary(Op("copysign", np.copysign, 2, accept="f", to="inexact"))
nextafter = make_binary(Op("nextafter", np.nextafter, 2, accept="f", to="inexact"))
heaviside = make_binary(
    Op("heaviside", np.heaviside, 2, accept="f", to="inexact", weak_if_all="first")
)
equal = make_binary(Op("equal", np.equal, 2, out="bool"))
not_equal = make_binary(Op("not_equal", np.not_equal, 2, out="bool"))
less = make_binary(Op("less", np.less, 2, out="bool"))
less_equal = make_binary(Op("less_equal", np.less_equal, 2, out="bool"))
greater = make_binary(Op("greater", np.greater, 2, out="bool"))
greater_equal = make_binary(Op("greater_equal", np.greater_equal, 2, out="bool"))
logical_and = cast(
    "ufunc",
    make_binary(Op("logical_and", np.logical_and, 2, out="bool", weak_if_all=True)),
)
logical_or = cast(
    "ufunc",
    make_binary(Op("logical_or", np.logical_or, 2, out="bool", weak_if_all=True)),
)
logical_xor = cast(
    "ufunc",
    make_binary(Op("logical_xor", np.logical_xor, 2, out="bool", weak_if_all=True)),
)
bitwise_and = cast(
    "ufunc",
    make_binary(Op("bitwise_and", np.bitwise_and, 2, accept=_INT)),
)
bitwise_or = cast(
    "ufunc",
    make_binary(Op("bitwise_or", np.bitwise_or, 2, accept=_INT)),
)
bitwise_xor = cast(
    "ufunc",
    make_binary(Op("bitwise_xor", np.bitwise_xor, 2, accept=_INT)),
)
left_shift = make_binary(Op("left_shift", np.left_shift, 2, to="numeric", accept="iu"))
right_shift = make_binary(
    Op("right_shift", np.right_shift, 2, to="numeric", accept="iu")
)
bitwise_left_shift = left_shift
bitwise_right_shift = right_shift
maximum = cast(
    "ufunc",
    make_binary(Op("maximum", np.maximum, 2)),
)
minimum = cast(
    "ufunc",
    make_binary(Op("minimum", np.minimum, 2)),
)
fmax = make_binary(Op("fmax", np.fmax, 2))
fmin = make_binary(Op("fmin", np.fmin, 2))


def power(x1: ArrayLike, x2: ArrayLike, /) -> Array:
    """``x1 ** x2`` elementwise, promoted as jax.numpy does.

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
        value = _core.ignore_fp_errors(np.power, np.asarray(base), exponent)
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


def _negative_power_error() -> TypeError:
    return TypeError(
        "power: integers cannot be raised to negative integer powers. "
        "Cast the base to a float first, e.g. x.astype('float32') ** -1."
    )


def divmod(x1: ArrayLike, x2: ArrayLike, /) -> tuple[Array, Array]:  # noqa: A001
    """``(floor_divide(x1, x2), remainder(x1, x2))``."""
    return floor_divide(x1, x2), remainder(x1, x2)


# -- unary ------------------------------------------------------------------

negative = make_unary(Op("negative", np.negative, 1, accept=_NUM))
positive = make_unary(Op("positive", np.positive, 1, identity_kinds="b"))
sign = make_unary(Op("sign", np.sign, 1, accept=_NUM))
reciprocal = make_unary(Op("reciprocal", np.reciprocal, 1, to="inexact"))
square = make_unary(Op("square", np.square, 1, to="numeric"))
sqrt = make_unary(Op("sqrt", np.sqrt, 1, to="inexact"))
cbrt = make_unary(Op("cbrt", np.cbrt, 1, accept="f", to="inexact"))
exp = make_unary(Op("exp", np.exp, 1, to="inexact"))
exp2 = make_unary(Op("exp2", np.exp2, 1, to="inexact"))
expm1 = make_unary(Op("expm1", np.expm1, 1, to="inexact"))
log = make_unary(Op("log", np.log, 1, to="inexact"))
log2 = make_unary(Op("log2", np.log2, 1, to="inexact", strong_kinds=_ALL))
log10 = make_unary(Op("log10", np.log10, 1, to="inexact", strong_kinds=_ALL))
log1p = make_unary(Op("log1p", np.log1p, 1, to="inexact"))
sin = make_unary(Op("sin", np.sin, 1, to="inexact"))
cos = make_unary(Op("cos", np.cos, 1, to="inexact"))
tan = make_unary(Op("tan", np.tan, 1, to="inexact"))
arcsin = make_unary(Op("arcsin", np.arcsin, 1, to="inexact"))
arccos = make_unary(Op("arccos", np.arccos, 1, to="inexact"))
arctan = make_unary(Op("arctan", np.arctan, 1, to="inexact"))
sinh = make_unary(Op("sinh", np.sinh, 1, to="inexact"))
cosh = make_unary(Op("cosh", np.cosh, 1, to="inexact"))
tanh = make_unary(Op("tanh", np.tanh, 1, to="inexact"))
arcsinh = make_unary(Op("arcsinh", np.arcsinh, 1, to="inexact"))
arccosh = make_unary(Op("arccosh", np.arccosh, 1, to="inexact"))
arctanh = make_unary(Op("arctanh", np.arctanh, 1, to="inexact"))
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh
atan2 = arctan2
floor = make_unary(Op("floor", np.floor, 1, accept="f", identity_kinds=_INT))
ceil = make_unary(Op("ceil", np.ceil, 1, accept="f", identity_kinds=_INT))
trunc = make_unary(Op("trunc", np.trunc, 1, accept="f", identity_kinds=_INT))
rint = make_unary(Op("rint", np.rint, 1, to="default_float", strong_kinds=_INT))
logical_not = make_unary(Op("logical_not", np.logical_not, 1, out="bool"))
invert = make_unary(Op("invert", np.invert, 1, accept=_INT))
bitwise_not = bitwise_invert = invert
isnan = make_unary(Op("isnan", np.isnan, 1, out="bool"))
isinf = make_unary(Op("isinf", np.isinf, 1, out="bool", strong_kinds=_ALL))
isfinite = make_unary(Op("isfinite", np.isfinite, 1, out="bool", strong_kinds=_INT))
conj = make_unary(Op("conj", np.conjugate, 1))
conjugate = conj
_abs = make_unary(Op("abs", np.absolute, 1, out="real", identity_kinds="bu"))
abs = absolute = _abs  # noqa: A001
_real = make_unary(Op("real", np.real, 1, out="real"))
_imag = make_unary(Op("imag", np.imag, 1, out="real"))
angle_op = Op("angle", np.angle, 1, to="default_float", out="real", strong_kinds="biuf")
_angle = make_unary(angle_op)


def real(val: ArrayLike, /) -> Array:
    """The real part (the array itself, copied, for real dtypes)."""
    return _real(val)


def imag(val: ArrayLike, /) -> Array:
    """The imaginary part (zeros of the same dtype for real dtypes)."""
    return _imag(val)


def angle(z: ArrayLike, deg: bool = False) -> Array:
    """The argument of complex numbers, in radians (or degrees)."""
    out = _angle(z)
    return multiply(out, 180 / np.pi) if deg else out


def round(a: ArrayLike, decimals: int = 0, out: None = None) -> Array:  # noqa: A001
    """Round to ``decimals`` places; integer arrays are returned unchanged
    when ``decimals >= 0``, as in jax.numpy.

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
            ),
        )
    return apply(op, (a,))


_ROUND_OPS: dict[int, Op] = {}
around = round


def clip(
    arr: ArrayLike | None = None,
    /,
    min: Any = None,
    max: Any = None,  # noqa: A002
) -> Array:
    """Limit values to ``[min, max]``; the result is promoted with the bounds.

    >>> import typelattice.numpy as tnp
    >>> tnp.clip(tnp.asarray([1, 5, 9], dtype='int8'), 2, 6)
    Array([2, 5, 6], dtype=int8)
    """
    if arr is None:
        raise TypeError("clip: missing the array argument")
    for x in (arr, min, max):
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


def positive_or_copy(x: ArrayLike) -> Array:
    """``x`` as an array of its own dtype and weak flag (bool allowed)."""
    v, key = _core.operand(x, "clip", 0)
    if not isinstance(key, _core.Aval):
        from typelattice.numpy._creation import asarray

        return asarray(x)
    return wrap(np.asarray(v), key)


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

    >>> import typelattice.numpy as tnp
    >>> tnp.where(tnp.asarray([True, False]), tnp.asarray([1, 2], dtype='int8'), 0)
    Array([1, 0], dtype=int8)
    >>> tnp.where(tnp.asarray([0, 3, 4]), size=3, fill_value=-1)
    (Array([ 1,  2, -1], dtype=int32),)
    """
    if x is None and y is None:
        from typelattice.numpy._shape import nonzero

        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    if size is not None or fill_value is not None:
        raise ValueError(
            "where: size and fill_value are for where(condition) alone (the "
            "nonzero form), not with x and y"
        )
    cv, _ = _core.operand(condition, "where", 0)
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
install_operators(globals())
