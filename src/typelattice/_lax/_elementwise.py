"""Elementwise primitives: arithmetic, math, bitwise, comparisons, selection
and dtype conversions.

Which dtypes each accepts follows ``jax.lax`` (measured on JAX 0.10): the
arithmetic takes integers, floats and complex numbers but not bool;
transcendental functions take floats and complex numbers (``cbrt``, ``erf``
and the gamma functions only floats); comparisons give bool; bitwise
functions take bools and integers, shifts and bit counts only integers.

Operands of one primitive share one dtype; their shapes are equal up to
axes of size 1, or one operand is a scalar (rank 0): different ranks are an
error, as in ``jax.lax``. The result is weak only when every operand is.

Float16, bfloat16 and the smaller floats are computed in float32 and
rounded, as XLA does for its math functions; ``erf``, ``erf_inv`` and the
gamma functions in float64.
"""

# Package-internal: the arrays' underscored slots are read by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import builtins
import enum
import functools
import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import numpy as np

from typelattice import _config, _core, _dtypes
from typelattice._lax import _special
from typelattice._lax._primitive import (
    Primitive,
    ShapedArray,
    UndefinedPrimal,
    Zero,
    aval_of,
    binds_operands,
    broadcast_in_dim_p,
    check_accepts,
    check_same_dtypes,
    defbatch_elementwise,
    defbilinear,
    defjvp,
    defjvp2,
    defjvp_unsupported,
    defjvp_zero,
    deflinear,
    instantiate,
    is_undefined,
    moveaxis,
    reduce_sum_p,
    reshape_p,
    to_array,
    to_arrays,
    zeros,
)
from typelattice._tracing.jaxpr import def_pp_params

if TYPE_CHECKING:
    from typelattice._basearray import Array
    from typelattice.typing import ArrayLike, DTypeLike

__all__ = [
    "RoundingMethod",
    "abs",
    "acos",
    "acosh",
    "add",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "bitcast_convert_type",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "cbrt",
    "ceil",
    "clamp",
    "clz",
    "complex",
    "conj",
    "convert_element_type",
    "cos",
    "cosh",
    "digamma",
    "div",
    "eq",
    "erf",
    "erf_inv",
    "erfc",
    "exp",
    "exp2",
    "expm1",
    "floor",
    "ge",
    "gt",
    "imag",
    "integer_pow",
    "is_finite",
    "le",
    "lgamma",
    "log",
    "log1p",
    "logistic",
    "lt",
    "max",
    "min",
    "mul",
    "ne",
    "neg",
    "nextafter",
    "population_count",
    "pow",
    "real",
    "rem",
    "round",
    "rsqrt",
    "select",
    "select_n",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "sub",
    "tan",
    "tanh",
]

NDArray = np.ndarray[Any, Any]
DType = np.dtype[Any]

# Kinds of dtypes, by _dtypes.kind_of: b(ool), i(nt), u(int), f(loat), c(omplex).
_ALL: Final = "biufc"
_NUMBER: Final = "iufc"
_ORDERED: Final = "biuf"
_INEXACT: Final = "fc"
_FLOAT: Final = "f"
_INT: Final = "iu"
_BITS: Final = "biu"

_BOOL: Final = np.dtype(bool)
_F32: Final = np.dtype(np.float32)
_F64: Final = np.dtype(np.float64)
_REAL_OF: Final[dict[DType, DType]] = {
    np.dtype(np.complex64): _F32,
    np.dtype(np.complex128): _F64,
}
_COMPLEX_OF: Final[dict[DType, DType]] = {
    _F32: np.dtype(np.complex64),
    _F64: np.dtype(np.complex128),
}


def _real_dtype(dt: DType) -> DType:
    return _REAL_OF.get(dt, dt)


# -- how values are computed ------------------------------------------------


class _Wide(enum.Enum):
    """The dtype a function computes real floats in."""

    NATIVE = 0  # the operand's own
    F32 = 1  # float32 for the floats narrower than float32 (as XLA)
    F64 = 2  # float64 for every real float (functions computed in double)


def _widen(x: NDArray, wide: _Wide) -> NDArray:
    if wide is _Wide.NATIVE or _dtypes.kind_of(x.dtype) != "f":
        return x
    if wide is _Wide.F64 or x.dtype.itemsize < 4:
        return x.astype(_F64 if wide is _Wide.F64 else _F32)
    return x


def _native(dt: DType, wide: _Wide) -> bool:
    """Whether values of ``dt`` are computed in ``dt`` itself (a NumPy
    builtin type, not widened)."""
    if not dt.isbuiltin:
        return False
    return (
        wide is _Wide.NATIVE
        or dt.kind != "f"
        or (wide is _Wide.F32 and dt.itemsize >= 4)
    )


def _as(value: Any, dt: DType) -> NDArray:
    """A computed value in the result's dtype."""
    return np.asarray(value).astype(dt, copy=False)


def broadcast_shapes(fname: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of an elementwise result: operands of rank 0 broadcast;
    the others have one rank and equal sizes, or size 1."""
    if len(set(shapes)) == 1:  # the common case
        return shapes[0]
    ranked = [s for s in shapes if s]
    if not ranked:
        return ()
    ranks = {len(s) for s in ranked}
    if len(ranks) != 1:
        raise TypeError(
            f"{fname}: arrays must have the same number of dimensions, got "
            f"{', '.join(str(s) for s in ranked)}. lax does not add axes: "
            "reshape or broadcast_in_dim the operand of lower rank first."
        )
    out: list[int] = []
    for sizes in zip(*ranked, strict=True):
        big = {d for d in sizes if d != 1}
        if len(big) > 1:
            raise TypeError(
                f"{fname} got incompatible shapes for broadcasting: "
                f"{', '.join(str(s) for s in ranked)}."
            )
        out.append(big.pop() if big else 1)
    return tuple(out)


# -- helpers of the differentiation rules ------------------------------------
#
# Rules compute with the primitives (the public functions below), so that a
# transformation tracing them records primitives. Constants are made from
# abstract values and keep the weak flag of the value they stand beside: a
# tangent has its primal's dtype and weak flag.


def _like(x: Any, value: Any) -> Array:
    """A constant of ``x``'s shape, dtype and weak flag, filled with
    ``value``."""
    aval = aval_of(x)
    return add(zeros(aval), value)


def _cast(x: Any, dtype: DType, weak: bool) -> Array:
    """``x`` in ``dtype`` with the weak flag ``weak`` (no-op when it is)."""
    if x.dtype == dtype and x.weak_type == weak:
        return x  # type: ignore[no-any-return]
    return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak)  # type: ignore[no-any-return]


def _mask(pred: Any, like: Any) -> Array:
    """A bool array as 0 and 1 of ``like``'s dtype and weak flag."""
    return _cast(pred, like.dtype, like.weak_type)


def _replace_zero(x: Any) -> Array:
    """``x`` with its zeros replaced by ones (to divide by it)."""
    return select(eq(x, 0), _like(x, 1), x)


def _broadcast_shape(x: Any, shape: tuple[int, ...]) -> Array:
    """An elementwise operand (of rank 0, or with axes of size 1) broadcast
    to the result's ``shape``."""
    if tuple(x.shape) == shape:
        return x  # type: ignore[no-any-return]
    dims = tuple(range(len(shape))) if x.ndim else ()
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)  # type: ignore[no-any-return]


def _broadcast_to(t: Any, aval: ShapedArray) -> Array:
    """A tangent broadcast to ``aval``'s shape, with its dtype and weak flag."""
    return _cast(_broadcast_shape(t, aval.shape), aval.dtype, aval.weak_type)


def _unbroadcast(aval: ShapedArray, ct: Any) -> Array:
    """The cotangent of an elementwise operand of ``aval`` from the
    cotangent ``ct`` of the (broadcast) result: summed over the axes the
    operand was broadcast along; ``aval``'s dtype and weak flag."""
    if tuple(ct.shape) != aval.shape:
        if not aval.shape:
            axes = tuple(range(ct.ndim))
        else:
            axes = tuple(
                i
                for i, (a, b) in enumerate(zip(aval.shape, ct.shape, strict=True))
                if a != b
            )
        ct = reduce_sum_p.bind(ct, axes=axes)
        ct = reshape_p.bind(ct, new_sizes=aval.shape, dimensions=None)
    return _cast(ct, aval.dtype, aval.weak_type)


def _square(x: Any) -> Array:
    return integer_pow(x, 2)


# -- unary ------------------------------------------------------------------


def _unary(
    name: str,
    kinds: str,
    fn: Callable[[NDArray], Any],
    *,
    out: Callable[[DType], DType] | None = None,
    wide: _Wide = _Wide.NATIVE,
) -> Primitive:
    """A primitive of one operand: accepted ``kinds``, ``fn`` on NumPy, the
    result's dtype (``out``, default the operand's), weak flag kept."""
    prim = Primitive(name)

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray) -> ShapedArray:
        check_accepts(name, x, kinds)
        return x if out is None else x.update(dtype=out(x.dtype))

    @prim.def_impl
    def _impl(x: NDArray) -> NDArray:
        return _as(fn(_widen(x, wide)), x.dtype if out is None else out(x.dtype))

    @prim.def_fast
    def _fast(x: ShapedArray) -> Callable[..., Any] | None:
        same = out is None or out(x.dtype) == x.dtype
        if same and _native(x.dtype, wide) and type(fn) is np.ufunc:
            return fn
        return None

    defbatch_elementwise(prim)
    return prim


def _sign(x: NDArray) -> NDArray:
    if x.dtype.kind == "c":
        size = np.abs(x)
        return np.where(size == 0, 0, x / np.where(size == 0, 1, size))
    # np.sign(-0.0) is 0.0; lax keeps the zero's sign.
    return np.where(x == 0, x, np.sign(x))


def _logistic(x: NDArray) -> NDArray:
    return 1 / (1 + np.exp(-x))


def _rsqrt(x: NDArray) -> NDArray:
    return 1 / np.sqrt(x)


def _exp2(x: NDArray) -> NDArray:
    if x.dtype.kind == "c":
        return np.exp(x * np.log(2).astype(x.dtype))  # type: ignore[no-any-return]
    return np.exp2(x)


# Each primitive is followed by its differentiation rules (JAX's maths): in
# the rules, g is the operand's tangent, ans the primitive's output.

neg_p = _unary("neg", _NUMBER, np.negative)
deflinear(neg_p, lambda ct, x: [neg(ct)])
sign_p = _unary("sign", _NUMBER, _sign, wide=_Wide.F32)
defjvp_zero(sign_p)
floor_p = _unary("floor", _FLOAT, np.floor, wide=_Wide.F32)
defjvp_zero(floor_p)
ceil_p = _unary("ceil", _FLOAT, np.ceil, wide=_Wide.F32)
defjvp_zero(ceil_p)
abs_p = _unary("abs", "ifc", np.abs, out=_real_dtype, wide=_Wide.F32)


def _abs_jvp(g: Array, ans: Array, x: Array) -> Array:
    if x.dtype.kind != "c":
        # At 0 (either sign) the slope is +1, as JAX's.
        return select(ge(x, 0), g, neg(g))
    # d|x| = Re(conj(x) dx) / |x|: complex-linear tangents, as JAX; 0 at 0.
    size = _cast(ans, x.dtype, ans.weak_type)
    return real(mul(g, div(conj(x), _replace_zero(size))))


defjvp2(abs_p, _abs_jvp)
exp_p = _unary("exp", _INEXACT, np.exp, wide=_Wide.F32)
defjvp2(exp_p, lambda g, ans, x: mul(g, ans))
exp2_p = _unary("exp2", _INEXACT, _exp2, wide=_Wide.F32)
defjvp2(exp2_p, lambda g, ans, x: mul(mul(g, ans), math.log(2)))
log_p = _unary("log", _INEXACT, np.log, wide=_Wide.F32)
defjvp(log_p, lambda g, x: div(g, x))
log1p_p = _unary("log1p", _INEXACT, np.log1p, wide=_Wide.F32)
defjvp(log1p_p, lambda g, x: div(g, add(x, 1)))
expm1_p = _unary("expm1", _INEXACT, np.expm1, wide=_Wide.F32)
defjvp2(expm1_p, lambda g, ans, x: mul(g, add(ans, 1)))
sqrt_p = _unary("sqrt", _INEXACT, np.sqrt, wide=_Wide.F32)
defjvp2(sqrt_p, lambda g, ans, x: mul(g, div(0.5, ans)))
rsqrt_p = _unary("rsqrt", _INEXACT, _rsqrt, wide=_Wide.F32)
defjvp2(rsqrt_p, lambda g, ans, x: mul(g, mul(div(ans, x), -0.5)))
cbrt_p = _unary("cbrt", _FLOAT, np.cbrt, wide=_Wide.F32)
defjvp2(cbrt_p, lambda g, ans, x: mul(g, div(integer_pow(ans, -2), 3)))
sin_p = _unary("sin", _INEXACT, np.sin, wide=_Wide.F32)
defjvp(sin_p, lambda g, x: mul(g, cos(x)))
cos_p = _unary("cos", _INEXACT, np.cos, wide=_Wide.F32)
defjvp(cos_p, lambda g, x: neg(mul(g, sin(x))))
tan_p = _unary("tan", _INEXACT, np.tan, wide=_Wide.F32)
defjvp2(tan_p, lambda g, ans, x: mul(g, add(_square(ans), 1)))
asin_p = _unary("asin", _INEXACT, np.arcsin, wide=_Wide.F32)
defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(1, _square(x)))))
acos_p = _unary("acos", _INEXACT, np.arccos, wide=_Wide.F32)
defjvp(acos_p, lambda g, x: mul(g, neg(rsqrt(sub(1, _square(x))))))
atan_p = _unary("atan", _INEXACT, np.arctan, wide=_Wide.F32)
defjvp(atan_p, lambda g, x: div(g, add(_square(x), 1)))
sinh_p = _unary("sinh", _INEXACT, np.sinh, wide=_Wide.F32)
defjvp(sinh_p, lambda g, x: mul(g, cosh(x)))
cosh_p = _unary("cosh", _INEXACT, np.cosh, wide=_Wide.F32)
defjvp(cosh_p, lambda g, x: mul(g, sinh(x)))
tanh_p = _unary("tanh", _INEXACT, np.tanh, wide=_Wide.F32)
defjvp2(tanh_p, lambda g, ans, x: mul(add(g, mul(g, ans)), sub(1, ans)))
asinh_p = _unary("asinh", _INEXACT, np.arcsinh, wide=_Wide.F32)
defjvp(asinh_p, lambda g, x: mul(g, rsqrt(add(_square(x), 1))))
acosh_p = _unary("acosh", _INEXACT, np.arccosh, wide=_Wide.F32)
defjvp(acosh_p, lambda g, x: mul(g, rsqrt(sub(_square(x), 1))))
atanh_p = _unary("atanh", _INEXACT, np.arctanh, wide=_Wide.F32)
defjvp(atanh_p, lambda g, x: mul(div(1, add(x, 1)), div(g, sub(1, x))))
logistic_p = _unary("logistic", _INEXACT, _logistic, wide=_Wide.F32)
defjvp2(logistic_p, lambda g, ans, x: mul(g, mul(ans, sub(1, ans))))
erf_p = _unary("erf", _FLOAT, _special.erf, wide=_Wide.F64)
# erf' = 2/sqrt(pi) exp(-x^2); erf_inv' = sqrt(pi)/2 exp(erf_inv(x)^2).
defjvp(erf_p, lambda g, x: mul(g, mul(exp(neg(_square(x))), 2 / math.sqrt(math.pi))))
erfc_p = _unary("erfc", _FLOAT, _special.erfc, wide=_Wide.F64)
defjvp(erfc_p, lambda g, x: mul(g, mul(exp(neg(_square(x))), -2 / math.sqrt(math.pi))))
erf_inv_p = _unary("erf_inv", _FLOAT, _special.erf_inv, wide=_Wide.F64)
defjvp2(
    erf_inv_p,
    lambda g, ans, x: mul(g, mul(exp(_square(ans)), math.sqrt(math.pi) / 2)),
)
# polygamma(m, x), the m-th derivative of digamma (m >= 1), is the
# derivative of digamma and of itself; as JAX's, but not public: its order is
# a parameter here, where jax.lax.polygamma takes it as an array.
polygamma_p = Primitive("polygamma")
defbatch_elementwise(polygamma_p)


@polygamma_p.def_abstract_eval
def _polygamma_abstract(x: ShapedArray, *, m: int) -> ShapedArray:
    check_accepts("polygamma", x, _FLOAT)
    if m < 1:
        raise ValueError(f"polygamma: the order m must be at least 1, got {m}")
    return x


@polygamma_p.def_impl
def _polygamma_impl(x: NDArray, *, m: int) -> NDArray:
    return _as(_special.polygamma(m, _widen(x, _Wide.F64)), x.dtype)


def _polygamma_jvp(g: Array, x: Array, *, m: int) -> Array:
    return mul(g, polygamma_p.bind(x, m=m + 1))


defjvp(polygamma_p, _polygamma_jvp)

lgamma_p = _unary("lgamma", _FLOAT, _special.lgamma, wide=_Wide.F64)
defjvp(lgamma_p, lambda g, x: mul(g, digamma(x)))
digamma_p = _unary("digamma", _FLOAT, _special.digamma, wide=_Wide.F64)
defjvp(digamma_p, lambda g, x: mul(g, polygamma_p.bind(x, m=1)))

is_finite_p = _unary(
    "is_finite", _FLOAT, np.isfinite, out=lambda _: _BOOL, wide=_Wide.F32
)
defjvp_zero(is_finite_p)
# np.invert is `not` on bools and the bitwise complement on integers.
not_p = _unary("not", _BITS, np.invert)
defjvp_zero(not_p)
# real and imag are real-linear; their transposes map into complex numbers.
real_p = _unary("real", "c", np.real, out=_real_dtype)
deflinear(real_p, lambda ct, x: [complex(ct, 0)])
imag_p = _unary("imag", "c", np.imag, out=_real_dtype)
deflinear(imag_p, lambda ct, x: [complex(0, neg(ct))])


# -- bit counts -------------------------------------------------------------


def _bit_pattern(x: NDArray) -> tuple[NDArray, int]:
    """An integer array's bits as uint64 (two's complement), and its width."""
    bits = _dtypes.iinfo(x.dtype).bits
    mask = np.uint64((1 << bits) - 1)
    return x.astype(np.int64).astype(np.uint64) & mask, bits


def _from_pattern(pattern: NDArray, dt: DType) -> NDArray:
    """The inverse of :func:`_bit_pattern`: bits read as ``dt``."""
    bits = _dtypes.iinfo(dt).bits
    if _dtypes.kind_of(dt) == "u":
        return pattern.astype(dt)
    if bits == 64:
        return pattern.view(np.int64).astype(dt)
    signed = pattern.astype(np.int64)
    signed = np.where(signed >= 1 << (bits - 1), signed - (1 << bits), signed)
    return signed.astype(dt)


def _population_count(x: NDArray) -> NDArray:
    pattern, _ = _bit_pattern(x)
    return np.bitwise_count(pattern).astype(x.dtype)


def _clz(x: NDArray) -> NDArray:
    pattern, bits = _bit_pattern(x)
    # The bit length by binary search: halve the remaining width each step.
    length = np.zeros(pattern.shape, np.int64)
    rest = pattern
    for step in (32, 16, 8, 4, 2, 1):
        high = rest >= np.uint64(1 << step)
        length = length + np.where(high, step, 0)
        rest = np.where(high, rest >> np.uint64(step), rest)
    length = length + (rest > 0)
    return (bits - length).astype(x.dtype)


population_count_p = _unary("population_count", _INT, _population_count)
defjvp_zero(population_count_p)
clz_p = _unary("clz", _INT, _clz)
defjvp_zero(clz_p)


# -- conversions and rounding -----------------------------------------------


class RoundingMethod(enum.IntEnum):
    """How :func:`round` breaks ties: ``AWAY_FROM_ZERO`` (``0``) or
    ``TO_NEAREST_EVEN`` (``1``)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


round_p = Primitive("round")
defbatch_elementwise(round_p)


@round_p.def_abstract_eval
def _round_abstract(x: ShapedArray, *, rounding_method: RoundingMethod) -> ShapedArray:
    check_accepts("round", x, _FLOAT)
    return x


@round_p.def_impl
def _round_impl(x: NDArray, *, rounding_method: RoundingMethod) -> NDArray:
    wide = _widen(x, _Wide.F32)
    if rounding_method is RoundingMethod.TO_NEAREST_EVEN:
        return _as(np.rint(wide), x.dtype)
    # Not floor(x + 0.5): in float32, 0.49999997 + 0.5 rounds up to 1.
    whole = np.trunc(wide)
    away = np.abs(wide - whole) >= 0.5
    return _as(np.where(away, whole + np.sign(wide), whole), x.dtype)


defjvp_zero(round_p)

# The result is strong unless weak_type says otherwise: the public function
# always makes it strong; rules use weak_type to give a tangent the weak flag
# of its primal (as jax.lax's parameter of the same name).
convert_element_type_p = Primitive("convert_element_type")
defbatch_elementwise(convert_element_type_p)


class Check(NamedTuple):
    """The ``check`` parameter of ``convert_element_type``: the conversion
    of an operand that a promotion plan marks as one that could change
    values (``typelattice.numpy``'s data safety). The values are checked
    where the conversion runs, eagerly, in a program (jit) or on the primal
    values of a differentiated function, and a value the new dtype cannot
    hold raises ``OverflowError`` naming the function and the operand.

    >>> Check("weak", "add", 1)
    Check('weak', 'add', 1)
    >>> Check("dtype", "sum", 0).how   # the argument that asked for the dtype
    'dtype'
    """

    #: ``"operand"``: an array operand (its dtype's values may not fit);
    #: ``"weak"``: a weak array, held to the rule of Python scalars;
    #: ``"exponent"``: integer exponents of an integer power, which must
    #: not be negative (TypeError: the result is no integer);
    #: otherwise the argument that asked for the dtype (``"dtype"``,
    #: ``"preferred_element_type"``, or ``"default"`` for a default dtype):
    #: the values must fit it, and the message proposes a dtype for that
    #: argument.
    how: str
    #: The namespace function the operand is given to, for the message.
    where: str
    #: The operand's position, for the message.
    position: int
    #: For a requested dtype: the fix the message ends with, instead of a
    #: dtype proposed for ``how``.
    fix: str | None = None

    def __repr__(self) -> str:
        if self.fix is not None:
            return (
                f"Check({self.how!r}, {self.where!r}, {self.position}, "
                f"fix={self.fix!r})"
            )
        return f"Check({self.how!r}, {self.where!r}, {self.position})"

    def __str__(self) -> str:
        return f"{self.how}:{self.where}:{self.position}"


@functools.cache
def _weak_bounds(src: DType, dt: DType) -> tuple[float, float] | tuple[()] | None:
    """How a weak operand of dtype ``src`` reaches ``dt``: None when no value
    can change (it is cast), else the bounds of the 0-d values that surely
    convert unchanged, or ``()`` when every value is checked (complex
    values, and floats becoming integers)."""
    if not _dtypes.can_lose_range(src, dt):
        return None
    src_kind = _dtypes.kind_of(src)
    if src_kind == "c" or (src_kind == "f" and _dtypes.kind_of(dt) in "iu"):
        return ()
    return _dtypes.value_range(dt)


def negative_power_message(where: str) -> str:
    """Why integers cannot be raised to negative integer powers, and the fix."""
    return (
        f"{where}: integers cannot be raised to negative integer powers. "
        "Cast the base to a float first, e.g. x.astype('float32') ** -1."
    )


@convert_element_type_p.def_noop
def _convert_noop(
    x: ShapedArray,
    *,
    new_dtype: DType,
    weak_type: bool = False,
    check: Check | None = None,
) -> bool:
    return check is None and new_dtype == x.dtype and weak_type == x.weak_type


@convert_element_type_p.def_abstract_eval
def _convert_abstract(
    x: ShapedArray,
    *,
    new_dtype: DType,
    weak_type: bool = False,
    check: Check | None = None,
) -> ShapedArray:
    return ShapedArray(x.shape, new_dtype, weak_type)


@convert_element_type_p.def_impl
def _convert_impl(
    x: NDArray,
    *,
    new_dtype: DType,
    weak_type: bool = False,
    check: Check | None = None,
) -> NDArray:
    if check is not None:
        if check.how == "exponent":
            if np.any(x < 0):
                raise TypeError(negative_power_message(check.where))
            return x.astype(new_dtype)
        if check.how == "weak":
            bounds = _weak_bounds(x.dtype, new_dtype)
            if bounds is None or (
                bounds and x.ndim == 0 and bounds[0] <= x.item() <= bounds[1]
            ):  # (a value that surely converts unchanged; nan, inf: checked)
                return x.astype(new_dtype)
            checked: NDArray = _core.weak_to(x, new_dtype, check.where)
        elif check.how == "operand":
            checked = _core.check_operand(x, new_dtype, check.where, check.position)
        else:  # a requested dtype: the fix proposes another for ``how``
            checked = _core.checked_cast(
                x, new_dtype, check.where, check.fix, use=check.how
            )
        return np.asarray(checked).astype(new_dtype)
    if x.dtype.kind == "c" and _dtypes.kind_of(new_dtype) != "c":
        x = x.real  # the warning was given by the public function
    if _dtypes.kind_of(x.dtype) == "f" and _dtypes.kind_of(new_dtype) in "iu":
        # Float to integer saturates and maps NaN to 0, as JAX (and
        # typelattice.numpy's astype), not NumPy's undefined values.
        info = _dtypes.iinfo(new_dtype)
        wide = np.nan_to_num(x.astype(np.float64), nan=0.0)
        return np.clip(wide, int(info.min), int(info.max)).astype(new_dtype)
    return x.astype(new_dtype, copy=False)  # (to its own dtype: x itself)


@convert_element_type_p.def_fast
def _convert_fast(
    x: ShapedArray,
    *,
    new_dtype: DType,
    weak_type: bool = False,
    check: Check | None = None,
) -> Callable[..., Any] | None:
    """``astype`` itself, where the implementation has nothing more to do
    (no check, not from complex, not from floats to integers)."""
    src, dst = _dtypes.kind_of(x.dtype), _dtypes.kind_of(new_dtype)
    if check is not None or src == "c" or (src == "f" and dst in "iu"):
        return None
    return operator.methodcaller("astype", new_dtype, copy=False)


def _convert_jvp(
    primals: Any,
    tangents: Any,
    *,
    new_dtype: DType,
    weak_type: bool = False,
    check: Check | None = None,
) -> tuple[Array, Any]:
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(
        x, new_dtype=new_dtype, weak_type=weak_type, check=check
    )
    if type(t) is Zero or _dtypes.kind_of(new_dtype) not in _INEXACT:
        return out, Zero.of(out)  # integer results have float0 tangents
    # (The primal's values were checked: the tangent is converted as is.)
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)


def _convert_transpose(
    ct: Any,
    x: UndefinedPrimal,
    *,
    new_dtype: DType,
    weak_type: bool = False,
    check: Check | None = None,
) -> list[Any]:
    # Back to the operand's dtype and weak flag: float32 parameters used in
    # bfloat16 get float32 cotangents; complex to real took the real part,
    # so real to complex is its transpose.
    old = x.aval
    if _dtypes.kind_of(old.dtype) not in _INEXACT:
        return [Zero.of(old)]
    return [
        convert_element_type_p.bind(ct, new_dtype=old.dtype, weak_type=old.weak_type)
    ]


@def_pp_params(convert_element_type_p)
def _convert_pp(params: dict[str, Any], out_avals: Any) -> dict[str, Any]:
    """As JAX prints it: the check shown only where there is one."""
    if params.get("check") is None:
        return {k: v for k, v in params.items() if k != "check"}
    return params


convert_element_type_p.def_jvp(_convert_jvp)
convert_element_type_p.def_transpose(_convert_transpose)


bitcast_convert_type_p = Primitive("bitcast_convert_type")


# A bitcast between widths adds or removes a last axis: the batch axis goes
# first, out of its way.
@bitcast_convert_type_p.def_batch
def _bitcast_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, int]:
    (x,), (d,) = args, dims
    assert d is not None
    return bitcast_convert_type_p.bind(moveaxis(x, d, 0), **params), 0


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract(x: ShapedArray, *, new_dtype: DType) -> ShapedArray:
    old = x.dtype
    size, new_size = old.itemsize, new_dtype.itemsize
    if size == new_size:
        shape = x.shape
    elif size > new_size:
        shape = (*x.shape, size // new_size)
    else:
        if not x.shape or x.shape[-1] * size != new_size:
            raise ValueError(
                f"lax.bitcast_convert_type: cannot convert an array of shape "
                f"{x.shape} from {old.name} ({8 * size} bits) to "
                f"{new_dtype.name} ({8 * new_size} bits): the last axis must "
                f"have {new_size // size} elements"
            )
        shape = x.shape[:-1]
    if old != new_dtype and (
        _dtypes.kind_of(old) in "bc" or _dtypes.kind_of(new_dtype) in "bc"
    ):
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values "
            "unless the operand and destination types match. Got operand "
            f"dtype={old.name}, new_dtype={new_dtype.name}. Convert the values "
            "instead with lax.convert_element_type, or use lax.real/lax.imag."
        )
    return ShapedArray(shape, new_dtype, False)


@bitcast_convert_type_p.def_impl
def _bitcast_impl(x: NDArray, *, new_dtype: DType) -> NDArray:
    # (A copy in C order: the bytes of the last axis are read in order.)
    out = np.array(x, order="C").view(new_dtype)
    if new_dtype.itemsize < x.dtype.itemsize:
        return out.reshape(*x.shape, x.dtype.itemsize // new_dtype.itemsize)
    return out.reshape(x.shape[:-1]) if new_dtype.itemsize > x.dtype.itemsize else out


defjvp_zero(bitcast_convert_type_p)


conj_p = Primitive("conj")
defbatch_elementwise(conj_p)
_CONJ_REAL: Final = (_F32, _F64)


@conj_p.def_abstract_eval
def _conj_abstract(x: ShapedArray) -> ShapedArray:
    # jax.lax.conj takes float32/float64 too, and makes them complex.
    if x.dtype not in _CONJ_REAL and _dtypes.kind_of(x.dtype) != "c":
        raise TypeError(
            f"conj does not accept dtype {x.dtype.name}. Accepted dtypes are "
            "subtypes of float32, float64, complexfloating."
        )
    return x.update(dtype=_COMPLEX_OF.get(x.dtype, x.dtype))


@conj_p.def_impl
def _conj_impl(x: NDArray) -> NDArray:
    dt: DType = _COMPLEX_OF[x.dtype] if x.dtype in _COMPLEX_OF else x.dtype
    return _as(np.conj(x.astype(dt)), dt)


def _conj_transpose(ct: Any, x: UndefinedPrimal) -> list[Any]:
    # conj of a real operand made it complex: its transpose keeps the real part.
    return [conj(ct) if x.aval.dtype.kind == "c" else real(ct)]


deflinear(conj_p, _conj_transpose)


integer_pow_p = Primitive("integer_pow")
defbatch_elementwise(integer_pow_p)


@integer_pow_p.def_abstract_eval
def _integer_pow_abstract(x: ShapedArray, *, y: int) -> ShapedArray:
    check_accepts("integer_pow", x, _NUMBER)
    if y < 0 and _dtypes.kind_of(x.dtype) in "iu":
        dims = ",".join(str(d) for d in x.shape)
        raise TypeError(
            f"Integers cannot be raised to negative powers, got "
            f"integer_pow({x.dtype.name}[{dims}], {y}). Convert to a floating "
            "type first, e.g. lax.convert_element_type(x, 'float32')."
        )
    return x


@integer_pow_p.def_impl
def _integer_pow_impl(x: NDArray, *, y: int) -> NDArray:
    # Repeated squaring in the operand's dtype (integers wrap), as XLA.
    base = _widen(x, _Wide.F32)
    acc = np.ones_like(base)
    n = builtins.abs(y)
    while n:
        if n & 1:
            acc = acc * base
        n >>= 1
        if n:
            base = base * base
    if y < 0:
        acc = 1 / acc
    return _as(acc, x.dtype)


@integer_pow_p.def_fast
def _integer_pow_fast(x: ShapedArray, *, y: int) -> Callable[..., Any] | None:
    """``np.square`` for ``y == 2``: the implementation's one product."""
    if y == 2 and _native(x.dtype, _Wide.F32) and _dtypes.kind_of(x.dtype) in "iuf":
        return np.square
    return None


def _integer_pow_jvp(g: Array, x: Array, *, y: int) -> Array:
    if y == 0:
        return _like(g, 0)
    if y == 1:
        return g
    return mul(g, mul(integer_pow(x, y - 1), y))


defjvp(integer_pow_p, _integer_pow_jvp)


# -- binary -----------------------------------------------------------------


def _binary(
    name: str,
    kinds: str,
    fn: Callable[[NDArray, NDArray], Any],
    *,
    compare: bool = False,
    promoting: str | None = None,
    wide: _Wide = _Wide.NATIVE,
) -> Primitive:
    """A primitive of two operands of one dtype: accepted ``kinds``, ``fn``
    on NumPy, bool results for comparisons; weak when both are.
    ``promoting`` names the typelattice.numpy function that promotes."""
    prim = Primitive(name)

    @prim.def_abstract_eval
    def _abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
        check_accepts(name, x, kinds, 0)
        check_accepts(name, y, kinds, 1)
        check_same_dtypes(name, (x, y), ("x", "y"), promoting)
        shape = broadcast_shapes(name, x.shape, y.shape)
        dt = _BOOL if compare else x.dtype
        return ShapedArray(shape, dt, x.weak_type and y.weak_type)

    @prim.def_impl
    def _impl(x: NDArray, y: NDArray) -> NDArray:
        return _as(fn(_widen(x, wide), _widen(y, wide)), _BOOL if compare else x.dtype)

    @prim.def_fast
    def _fast(x: ShapedArray, y: ShapedArray) -> Callable[..., Any] | None:
        plain = fn
        if x.dtype.kind == "f" and fn is _div:
            plain = np.true_divide
        elif x.dtype.kind != "c" and (fn is _MAX or fn is _MIN):
            plain = np.maximum if fn is _MAX else np.minimum
        if x.dtype == y.dtype and _native(x.dtype, wide) and type(plain) is np.ufunc:
            return plain
        return None

    defbatch_elementwise(prim, exact=False)
    return prim


def _div(x: NDArray, y: NDArray) -> NDArray:
    if _dtypes.kind_of(x.dtype) not in "iu":
        return np.true_divide(x, y)
    # Integer division truncates toward zero (C, XLA), unlike NumPy's //;
    # x / 0 is -1 (all bits set), as XLA defines it.
    zero = y == 0
    safe = np.where(zero, 1, y).astype(x.dtype)
    quotient = (x - np.fmod(x, safe)) // safe
    return np.where(zero, np.array(-1).astype(x.dtype), quotient)


def _rem(x: NDArray, y: NDArray) -> NDArray:
    # The remainder has the dividend's sign (C fmod), unlike NumPy's %;
    # for integers x % 0 is x, as XLA defines it.
    if _dtypes.kind_of(x.dtype) not in "iu":
        return np.fmod(x, y)
    zero = y == 0
    return np.where(zero, x, np.fmod(x, np.where(zero, 1, y).astype(x.dtype)))


def _lexicographic(pick_x: Callable[[NDArray, NDArray], NDArray]) -> Any:
    """max/min: complex numbers compare by real part, then imaginary part."""

    def fn(x: NDArray, y: NDArray) -> NDArray:
        if x.dtype.kind != "c":
            return np.maximum(x, y) if pick_x is np.greater else np.minimum(x, y)
        first = pick_x(x.real, y.real) | ((x.real == y.real) & pick_x(x.imag, y.imag))
        return np.where(first, x, y)

    return fn


def _atan2(x: NDArray, y: NDArray) -> NDArray:
    """``atan(x / y)`` with the quadrant of (y, x); for complex operands the
    analytic continuation ``i log((y - i x) / sqrt(x**2 + y**2))``, whose
    branch cuts are XLA's (``-i log((y + i x) / ...)`` differs on them)."""
    if x.dtype.kind != "c":
        return np.arctan2(x, y)
    return 1j * np.log((y - 1j * x) / np.sqrt(x * x + y * y))  # type: ignore[no-any-return]


def _nextafter(x: NDArray, y: NDArray) -> NDArray:
    """The float after ``x`` towards ``y``, by stepping the bit pattern
    (which works for every IEEE-like format, bfloat16 included)."""
    x, y = (np.array(a, copy=True) for a in np.broadcast_arrays(x, y))
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    bits: NDArray = x.view(unsigned)
    one: Any = unsigned.type(1)
    # Away from zero is +1 on the magnitude bits, toward zero -1.
    away = (y > x) == (x > 0)
    up: NDArray = bits + one
    down: NDArray = bits - one
    stepped = np.where(away, up, down).view(x.dtype)
    tiny = np.array(one).view(x.dtype)  # the smallest subnormal
    from_zero = np.where(y > x, tiny, -tiny)
    out = np.where(x == 0, from_zero, stepped)
    out = np.where(x == y, y, out)
    return np.where(np.isnan(x) | np.isnan(y), np.nan, out)


def _add_jvp(primals: Any, tangents: Any, *, sign: int) -> tuple[Array, Any]:
    """add (``sign=1``) and sub (``-1``): a Zero tangent adds nothing; the
    other is broadcast to the result."""
    (x, y), (tx, ty) = primals, tangents
    out = (add_p if sign > 0 else sub_p).bind(x, y)
    tx_zero, ty_zero = type(tx) is Zero, type(ty) is Zero
    if not ty_zero and sign < 0:
        ty = neg(ty)
    if tx_zero and ty_zero:
        return out, Zero.of(out)
    if tx_zero or ty_zero:
        return out, _broadcast_to(ty if tx_zero else tx, aval_of(out))
    return out, add(tx, ty)


def _add_transpose(ct: Any, x: Any, y: Any, *, sign: int = 1) -> list[Any]:
    ct_y = ct if sign > 0 else neg(ct)
    return [
        _unbroadcast(x.aval, ct) if is_undefined(x) else None,
        _unbroadcast(y.aval, ct_y) if is_undefined(y) else None,
    ]


add_p = _binary("add", _NUMBER, np.add, promoting="add")
add_p.def_jvp(functools.partial(_add_jvp, sign=1))
add_p.def_transpose(_add_transpose)
sub_p = _binary("sub", _NUMBER, np.subtract, promoting="subtract")
sub_p.def_jvp(functools.partial(_add_jvp, sign=-1))
sub_p.def_transpose(functools.partial(_add_transpose, sign=-1))
mul_p = _binary("mul", _NUMBER, np.multiply, promoting="multiply")
# Linear in each operand; never conjugated, whatever the dtype (module notes).
defbilinear(
    mul_p,
    lambda ct, x, y: _unbroadcast(x.aval, mul(ct, y)),
    lambda ct, x, y: _unbroadcast(y.aval, mul(x, ct)),
)
div_p = _binary("div", _NUMBER, _div, promoting="divide")
defjvp(
    div_p,
    lambda g, x, y: div(g, y),
    lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2)),
)


def _div_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    if is_undefined(y):
        raise ValueError("div is linear in its dividend only; its divisor is known")
    return [_unbroadcast(x.aval, div(ct, y)), None]


div_p.def_transpose(_div_transpose)
rem_p = _binary("rem", "iuf", _rem, promoting="fmod")
# rem(x, y) = x - y trunc(x / y): slopes 1 and -trunc(x / y).
defjvp2(
    rem_p,
    lambda g, ans, x, y: _broadcast_to(g, aval_of(ans)),
    lambda g, ans, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))),
)


def _balanced_eq(x: Array, ans: Array, y: Array) -> Array:
    """Where ``x`` gave max(x, y) (or min): 1, or 1/2 on ties, so that the
    tangents of equal operands share the slope, as JAX's."""
    return div(_mask(eq(x, ans), ans), add(_mask(eq(y, ans), ans), 1))


_MAX = _lexicographic(np.greater)
max_p = _binary("max", _ALL, _MAX, promoting="maximum")
defjvp2(
    max_p,
    lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
    lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)),
)
_MIN = _lexicographic(np.less)
min_p = _binary("min", _ALL, _MIN, promoting="minimum")
defjvp2(
    min_p,
    lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
    lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)),
)
atan2_p = _binary("atan2", _INEXACT, _atan2, promoting="arctan2", wide=_Wide.F32)
defjvp(
    atan2_p,
    lambda g, x, y: mul(g, div(y, add(_square(x), _square(y)))),
    lambda g, x, y: mul(g, div(neg(x), add(_square(x), _square(y)))),
)
nextafter_p = _binary("nextafter", _FLOAT, _nextafter, promoting="nextafter")
defjvp_unsupported(
    nextafter_p, "jax.lax.nextafter has no derivative either; it steps to a neighbour"
)
and_p = _binary("and", _BITS, np.bitwise_and, promoting="bitwise_and")
defjvp_zero(and_p)
or_p = _binary("or", _BITS, np.bitwise_or, promoting="bitwise_or")
defjvp_zero(or_p)
xor_p = _binary("xor", _BITS, np.bitwise_xor, promoting="bitwise_xor")
defjvp_zero(xor_p)
eq_p = _binary("eq", _ALL, np.equal, compare=True, promoting="equal")
defjvp_zero(eq_p)
ne_p = _binary("ne", _ALL, np.not_equal, compare=True, promoting="not_equal")
defjvp_zero(ne_p)
lt_p = _binary("lt", _ORDERED, np.less, compare=True, promoting="less")
defjvp_zero(lt_p)
le_p = _binary("le", _ORDERED, np.less_equal, compare=True, promoting="less_equal")
defjvp_zero(le_p)
gt_p = _binary("gt", _ORDERED, np.greater, compare=True, promoting="greater")
defjvp_zero(gt_p)
ge_p = _binary(
    "ge", _ORDERED, np.greater_equal, compare=True, promoting="greater_equal"
)
defjvp_zero(ge_p)


def _shift(kind: str) -> Callable[[NDArray, NDArray], NDArray]:
    """Shifts on the bit pattern; a shift by a negative amount or by the
    width or more gives 0 (arithmetic right shifts: the sign bits), as XLA
    defines it, where NumPy and C leave it undefined."""

    def fn(x: NDArray, y: NDArray) -> NDArray:
        pattern, bits = _bit_pattern(x)
        amount = y.astype(np.int64)
        inside = (amount >= 0) & (amount < bits)
        by = np.where(inside, amount, 0).astype(np.uint64)
        mask = np.uint64((1 << bits) - 1)
        if kind == "left":
            out = np.where(inside, (pattern << by) & mask, np.uint64(0))
        else:
            out = np.where(inside, pattern >> by, np.uint64(0))
            if kind == "arithmetic":
                negative = (pattern >> np.uint64(bits - 1)) == 1
                fill = np.where(inside, mask ^ (mask >> by), mask)
                out = np.where(negative, out | fill, out)
        return _from_pattern(out, x.dtype)

    return fn


shift_left_p = _binary("shift_left", _INT, _shift("left"), promoting="left_shift")
defjvp_zero(shift_left_p)
shift_right_logical_p = _binary(
    "shift_right_logical", _INT, _shift("logical"), promoting="right_shift"
)
defjvp_zero(shift_right_logical_p)
shift_right_arithmetic_p = _binary(
    "shift_right_arithmetic", _INT, _shift("arithmetic"), promoting="right_shift"
)
defjvp_zero(shift_right_arithmetic_p)

pow_p = Primitive("pow")
defbatch_elementwise(pow_p, exact=False)


@pow_p.def_abstract_eval
def _pow_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    # The exponent may be any integer type, or the base's inexact type.
    check_accepts("pow", x, _INEXACT, 0)
    ykind = _dtypes.kind_of(y.dtype)
    if ykind not in "iufc" or (ykind in "fc" and y.dtype != x.dtype):
        raise TypeError(
            "the first argument to pow must have an inexact dtype (float or "
            "complex), and the second argument must have an inexact or integer "
            "dtype, and two inexact dtypes must match, but got "
            f"{x.dtype.name} and {y.dtype.name} respectively. Convert the "
            f"exponent first, e.g. lax.convert_element_type(y, '{x.dtype.name}')."
        )
    shape = broadcast_shapes("pow", x.shape, y.shape)
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


@pow_p.def_impl
def _pow_impl(x: NDArray, y: NDArray) -> NDArray:
    if _dtypes.kind_of(y.dtype) in "iu":
        # An integer exponent: computed in double, where every int32 is
        # exact, then rounded to the base's type.
        wide = np.complex128 if x.dtype.kind == "c" else np.float64
        out = np.power(x.astype(wide), y.astype(np.float64))
    else:
        out = np.power(_widen(x, _Wide.F32), _widen(y, _Wide.F32))
    if x.dtype.kind == "c":
        # XLA's complex power is exp(y log x): at x = 0 it is 1 for y = 0,
        # 0 for a positive real y, and NaN otherwise (NumPy says 0).
        y = np.asarray(y)
        real_positive = (np.imag(y) == 0) & (np.real(y) > 0)
        at_zero = np.where(
            y == 0, 1, np.where(real_positive, 0, complex(np.nan, np.nan))
        )
        out = np.where(x == 0, at_zero, out)
    return _as(out, x.dtype)


def _pow_jvp_x(g: Array, ans: Array, x: Array, y: Array) -> Array:
    """d(x**y)/dx = y x**(y-1); for an integer y, 0 where y is 0 (so that
    x = 0 gives no NaN), as JAX's."""
    if _dtypes.kind_of(y.dtype) not in "iu":
        return mul(g, mul(y, pow(x, sub(y, 1))))
    factor = _cast(y, x.dtype, y.weak_type)
    slope = mul(_replace_zero(factor), pow(x, sub(y, 1)))
    at_zero = _broadcast_shape(eq(y, 0), tuple(slope.shape))
    return mul(g, select(at_zero, _like(slope, 0), slope))


# d(x**y)/dy = log(x) x**y, with log(1) at x = 0 (where x**y is 0 or 1);
# an integer exponent has no tangent.
defjvp2(
    pow_p,
    _pow_jvp_x,
    lambda g, ans, x, y: mul(g, mul(log(_replace_zero(x)), ans)),
)


complex_p = Primitive("complex")
defbatch_elementwise(complex_p, exact=False)


@complex_p.def_abstract_eval
def _complex_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    for pos, aval in enumerate((x, y)):
        if aval.dtype not in _COMPLEX_OF:
            raise TypeError(
                f"complex does not accept dtype {aval.dtype.name} at position "
                f"{pos}. Accepted dtypes at position {pos} are subtypes of "
                "float32, float64."
            )
    check_same_dtypes("complex", (x, y), ("x", "y"))
    shape = broadcast_shapes("complex", x.shape, y.shape)
    return ShapedArray(shape, _COMPLEX_OF[x.dtype], x.weak_type and y.weak_type)


@complex_p.def_impl
def _complex_impl(x: NDArray, y: NDArray) -> NDArray:
    # The parts stored as they are (``x + 1j * y`` would turn an infinite
    # imaginary part's real part into NaN).
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), _COMPLEX_OF[x.dtype])
    out.real = x
    out.imag = y
    return out


def _complex_transpose(ct: Any, x: Any, y: Any) -> list[Any]:
    # The transposes of t -> complex(t, 0) and t -> complex(0, t).
    return [
        _unbroadcast(x.aval, real(ct)) if is_undefined(x) else None,
        _unbroadcast(y.aval, imag(neg(ct))) if is_undefined(y) else None,
    ]


deflinear(complex_p, _complex_transpose)


# -- selection --------------------------------------------------------------

select_n_p = Primitive("select_n")
defbatch_elementwise(select_n_p)
_elementwise_rule = select_n_p.batch
assert _elementwise_rule is not None
_select_n_elementwise_batch: Callable[..., Any] = _elementwise_rule


@select_n_p.def_batch
def _select_n_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> Any:
    # The cases of select_n have one shape (only `which` may be a scalar),
    # but the elementwise rule leaves an unbatched scalar as it is beside
    # batched operands (right for add, not here: vmap of where(c, x + 1, 3)
    # over scalars x). Beside a batched case (or `which`), an unbatched case
    # gets the batch axis first; then every case is batched along axis 0.
    cases, case_dims = args[1:], dims[1:]
    batched = [i for i, d in enumerate(case_dims) if d is not None]
    if len(batched) == len(cases):
        return _select_n_elementwise_batch(args, dims, **params)
    # (No batched case: `which` is batched, and the cases get its axis.)
    size = int(args[0].shape[dims[0]]) if not batched else 0
    example: tuple[int, ...] = tuple(cases[0].shape)
    if batched:
        ref, ref_dim = cases[batched[0]], case_dims[batched[0]]
        assert ref_dim is not None
        size = int(ref.shape[ref_dim])
        example = tuple(n for i, n in enumerate(ref.shape) if i != ref_dim)
    moved: list[Any] = []
    for c, d in zip(cases, case_dims, strict=True):
        if d is None:
            moved.append(
                broadcast_in_dim_p.bind(
                    c,
                    shape=(size, *example),
                    broadcast_dimensions=tuple(range(1, 1 + len(example))),
                )
            )
        else:
            moved.append(moveaxis(c, d, 0))
    new_dims = [dims[0], *([0] * len(cases))]
    return _select_n_elementwise_batch([args[0], *moved], new_dims, **params)


@select_n_p.def_abstract_eval
def _select_n_abstract(which: ShapedArray, *cases: ShapedArray) -> ShapedArray:
    if len(cases) == 0:
        raise ValueError("lax.select_n() must have at least one case")
    kind = _dtypes.kind_of(which.dtype)
    if kind not in "biu":
        raise TypeError(
            f"select `which` must be boolean or integer type, got "
            f"{which.dtype.name}. Compare first, e.g. lax.ne(which, 0)."
        )
    if kind == "b" and len(cases) > 2:
        raise TypeError(
            "select with boolean `which` cannot have > 2 cases; use an "
            "integer `which` to choose among more"
        )
    check_same_dtypes(
        "select", cases, [f"cases[{i}]" for i in range(len(cases))], "where"
    )
    shapes = {c.shape for c in cases}
    if len(shapes) != 1:
        raise TypeError(
            f"select cases must have the same shapes, got "
            f"{[c.shape for c in cases]}. Broadcast them first "
            "(lax.broadcast_in_dim)."
        )
    shape = cases[0].shape
    if which.shape and which.shape != shape:
        raise TypeError(
            f"select `which` must be scalar or have the same shape as cases, "
            f"got `which` shape {which.shape} but case shape {shape}."
        )
    return cases[0].update(weak_type=all(c.weak_type for c in cases))


@select_n_p.def_impl
def _select_n_impl(which: NDArray, *cases: NDArray) -> NDArray:
    if which.dtype == _BOOL:
        if len(cases) == 1:
            return np.array(cases[0], copy=True)
        if which.size >= _BITWISE_FROM and which.shape == cases[0].shape:
            chosen = _select_bits(which, cases[1], cases[0])
            if chosen is not None:
                return chosen
        return np.where(which, cases[1], cases[0])
    # An index out of range picks the nearest case, as XLA's clamp does.
    index = np.clip(which.astype(np.int64), 0, len(cases) - 1)
    out = np.broadcast_to(cases[0], cases[0].shape).copy()
    for i, case in enumerate(cases[1:], start=1):
        out = np.where(index == i, case, out)
    return out


# From this many elements, a two-way select picks bits with masks rather than
# with np.where, whose speed depends on how predictable the mask is (about
# five times slower for a random mask of 65536 elements).
_BITWISE_FROM: Final = 4096
_UINTS: Final = {n: np.dtype(f"u{n}") for n in (1, 2, 4, 8)}


def _select_bits(which: NDArray, yes: NDArray, no: NDArray) -> NDArray | None:
    """``where(which, yes, no)`` for operands of one dtype and shape, by
    their bits: ``no ^ ((yes ^ no) * which)`` in unsigned integers of their
    size (one new array, three passes); None for dtypes of other sizes
    (complex128...)."""
    uint = _UINTS.get(yes.dtype.itemsize)
    if uint is None or yes.dtype != no.dtype:
        return None
    y = np.ascontiguousarray(yes).view(uint)
    n = np.ascontiguousarray(no).view(uint)
    out = np.bitwise_xor(y, n)
    np.multiply(out, which, out=out, casting="unsafe")  # (bits kept or zeroed)
    out ^= n
    chosen: NDArray = out.view(yes.dtype)
    return chosen


def _select_n_jvp(primals: Any, tangents: Any) -> tuple[Array, Any]:
    which, *cases = primals
    out = select_n_p.bind(which, *cases)
    if all(type(t) is Zero for t in tangents[1:]):
        return out, Zero.of(out)
    chosen = select_n_p.bind(which, *(instantiate(t) for t in tangents[1:]))
    return out, _cast(chosen, out.dtype, out.weak_type)


def _select_n_transpose(ct: Any, which: Any, *cases: Any) -> list[Any]:
    # Linear in the cases: each gets the cotangent where it was chosen.
    if is_undefined(which):
        raise ValueError("select_n is not linear in `which`; it must be known")
    none = zeros(aval_of(ct))
    out: list[Any] = [None]
    for i, case in enumerate(cases):
        if not is_undefined(case):
            out.append(None)
            continue
        picked = select_n_p.bind(
            which, *(ct if j == i else none for j in range(len(cases)))
        )
        out.append(_cast(picked, case.aval.dtype, case.aval.weak_type))
    return out


select_n_p.def_jvp(_select_n_jvp)
select_n_p.def_transpose(_select_n_transpose)


clamp_p = Primitive("clamp")
defbatch_elementwise(clamp_p)


@clamp_p.def_abstract_eval
def _clamp_abstract(lo: ShapedArray, x: ShapedArray, hi: ShapedArray) -> ShapedArray:
    check_same_dtypes("clamp", (lo, x, hi), ("min", "x", "max"), "clip")
    for name, bound in (("min", lo), ("max", hi)):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(
                f"clamp requires {name}.shape == operand.shape or {name}.shape "
                f"== (), got {name}.shape={bound.shape}, operand.shape={x.shape}."
            )
    return x.update(weak_type=lo.weak_type and x.weak_type and hi.weak_type)


@clamp_p.def_impl
def _clamp_impl(lo: NDArray, x: NDArray, hi: NDArray) -> NDArray:
    if x.dtype.kind == "c":
        # XLA clamps complex numbers by their real parts alone: x is
        # replaced by min when not above it, then by max when above that.
        low = np.where(np.real(x) > np.real(lo), x, lo)
        return _as(np.where(np.real(low) > np.real(hi), hi, low), x.dtype)
    return _as(np.minimum(np.maximum(x, lo), hi), x.dtype)


def _clamp_rule(
    which: str,
) -> Any:
    """The tangent of clamp due to ``which`` operand's tangent: it passes
    where that operand is the result strictly (none does at a tie, as JAX);
    complex numbers compare by real part, as the implementation."""

    def rule(g: Array, ans: Array, lo: Array, x: Array, hi: Array) -> Array:
        lo, x, hi = (real(v) if v.dtype.kind == "c" else v for v in (lo, x, hi))
        if which == "min":
            chosen = bitwise_and(gt(lo, x), lt(lo, hi))
        elif which == "x":
            chosen = bitwise_and(gt(x, lo), lt(x, hi))
        else:
            chosen = lt(hi, x)
        g = _broadcast_to(g, aval_of(ans))
        return select(chosen, g, _like(g, 0))

    return rule


defjvp2(clamp_p, _clamp_rule("min"), _clamp_rule("x"), _clamp_rule("max"))


# -- public functions -------------------------------------------------------


def _no_accuracy(fname: str, accuracy: object) -> None:
    if accuracy is not None:
        raise NotImplementedError(
            f"lax.{fname}: accuracy={accuracy!r} is not supported; leave it "
            "out (None) for the default implementation"
        )


def _unary_call(prim: Primitive, x: ArrayLike) -> Array:
    return prim.bind(to_array(x, prim.name, 0))  # type: ignore[no-any-return]


def _binary_call(prim: Primitive, x: ArrayLike, y: ArrayLike) -> Array:
    return prim.bind(*to_arrays(prim.name, (x, y)))  # type: ignore[no-any-return]


def neg(x: ArrayLike) -> Array:
    """Elementwise negation, ``-x``; unsigned integers wrap.

    Args:
      x: an integer, floating or complex array (not bool).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> neg(np.int8([1, -2]))
    Array([-1,  2], dtype=int8)
    """
    return _unary_call(neg_p, x)


def sign(x: ArrayLike) -> Array:
    """Elementwise sign: -1, 0 or 1 (``x / |x|`` for complex numbers).

    Args:
      x: an integer, floating or complex array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> sign(np.float32([-2.5, 0.0, 3.0]))
    Array([-1.,  0.,  1.], dtype=float32)
    """
    return _unary_call(sign_p, x)


def floor(x: ArrayLike) -> Array:
    """Elementwise floor.

    Args:
      x: a floating array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> floor(np.float32([-1.5, 1.5]))
    Array([-2.,  1.], dtype=float32)
    """
    return _unary_call(floor_p, x)


def ceil(x: ArrayLike) -> Array:
    """Elementwise ceiling.

    Args:
      x: a floating array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> ceil(np.float32([-1.5, 1.5]))
    Array([-1.,  2.], dtype=float32)
    """
    return _unary_call(ceil_p, x)


def round(  # noqa: A001 - jax.lax's name
    x: ArrayLike,
    rounding_method: RoundingMethod | int = RoundingMethod.AWAY_FROM_ZERO,
) -> Array:
    """Elementwise rounding to the nearest integer value.

    Args:
      x: a floating array.
      rounding_method: how ties round: :attr:`RoundingMethod.AWAY_FROM_ZERO`
        (``0``, the default) or :attr:`RoundingMethod.TO_NEAREST_EVEN`
        (``1``).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> round(np.float32([0.5, 1.5, 2.5]))
    Array([1., 2., 3.], dtype=float32)
    >>> round(np.float32([0.5, 1.5, 2.5]), RoundingMethod.TO_NEAREST_EVEN)
    Array([0., 2., 2.], dtype=float32)
    """
    try:
        method = RoundingMethod(rounding_method)
    except ValueError:
        raise ValueError(
            f"lax.round: {rounding_method!r} is not a valid RoundingMethod; use "
            "RoundingMethod.AWAY_FROM_ZERO (0) or RoundingMethod.TO_NEAREST_EVEN (1)"
        ) from None
    return round_p.bind(to_array(x, "round", 0), rounding_method=method)  # type: ignore[no-any-return]


def abs(x: ArrayLike) -> Array:  # noqa: A001 - jax.lax's name
    """Elementwise absolute value; ``|x|`` of a complex number is real.

    The most negative integer stays negative (it wraps), as in ``jax.lax``.

    Args:
      x: a signed integer, floating or complex array.

    Returns:
      An array of ``x``'s shape and weak flag, of its dtype (complex64 gives
      float32, complex128 float64).

    >>> abs(np.complex64([3 + 4j])).round(4)
    Array([5.], dtype=float32)
    """
    return _unary_call(abs_p, x)


def exp(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise ``e ** x``.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> exp(np.float32([0.0, 1.0])).round(4)
    Array([1.    , 2.7183], dtype=float32)
    """
    _no_accuracy("exp", accuracy)
    return _unary_call(exp_p, x)


def exp2(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise ``2 ** x``.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> exp2(np.float32([3.0, -1.0])).round(4)
    Array([8. , 0.5], dtype=float32)
    """
    _no_accuracy("exp2", accuracy)
    return _unary_call(exp2_p, x)


def log(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise natural logarithm.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> log(np.float32([1.0, 0.0]))
    Array([  0., -inf], dtype=float32)
    """
    _no_accuracy("log", accuracy)
    return _unary_call(log_p, x)


def log1p(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise ``log(1 + x)``, accurate near 0.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> log1p(np.float32([0.0]))
    Array([0.], dtype=float32)
    """
    _no_accuracy("log1p", accuracy)
    return _unary_call(log1p_p, x)


def expm1(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise ``exp(x) - 1``, accurate near 0.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> expm1(np.float32([0.0]))
    Array([0.], dtype=float32)
    """
    _no_accuracy("expm1", accuracy)
    return _unary_call(expm1_p, x)


def sqrt(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise square root.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> sqrt(np.float32([4.0, -1.0]))
    Array([ 2., nan], dtype=float32)
    """
    _no_accuracy("sqrt", accuracy)
    return _unary_call(sqrt_p, x)


def rsqrt(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise reciprocal square root, ``1 / sqrt(x)``.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> rsqrt(np.float32([4.0]))
    Array([0.5], dtype=float32)
    """
    _no_accuracy("rsqrt", accuracy)
    return _unary_call(rsqrt_p, x)


def cbrt(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise cube root (negative for negative ``x``).

    Args:
      x: a floating array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> cbrt(np.float32([-8.0, 27.0])).round(4)
    Array([-2.,  3.], dtype=float32)
    """
    _no_accuracy("cbrt", accuracy)
    return _unary_call(cbrt_p, x)


def sin(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise sine.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> sin(np.float32([0.0]))
    Array([0.], dtype=float32)
    """
    _no_accuracy("sin", accuracy)
    return _unary_call(sin_p, x)


def cos(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise cosine.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> cos(np.float32([0.0]))
    Array([1.], dtype=float32)
    """
    _no_accuracy("cos", accuracy)
    return _unary_call(cos_p, x)


def tan(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise tangent.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> tan(np.float32([0.0]))
    Array([0.], dtype=float32)
    """
    _no_accuracy("tan", accuracy)
    return _unary_call(tan_p, x)


def asin(x: ArrayLike) -> Array:
    """Elementwise arcsine.

    Args:
      x: a floating or complex array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag (NaN outside [-1, 1]
      for real ``x``).

    >>> asin(np.float32([0.0, 2.0]))
    Array([ 0., nan], dtype=float32)
    """
    return _unary_call(asin_p, x)


def acos(x: ArrayLike) -> Array:
    """Elementwise arccosine.

    Args:
      x: a floating or complex array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> acos(np.float32([1.0]))
    Array([0.], dtype=float32)
    """
    return _unary_call(acos_p, x)


def atan(x: ArrayLike) -> Array:
    """Elementwise arctangent.

    Args:
      x: a floating or complex array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> atan(np.float32([0.0]))
    Array([0.], dtype=float32)
    """
    return _unary_call(atan_p, x)


def sinh(x: ArrayLike) -> Array:
    """Elementwise hyperbolic sine.

    Args:
      x: a floating or complex array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> sinh(np.float32([0.0]))
    Array([0.], dtype=float32)
    """
    return _unary_call(sinh_p, x)


def cosh(x: ArrayLike) -> Array:
    """Elementwise hyperbolic cosine.

    Args:
      x: a floating or complex array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> cosh(np.float32([0.0]))
    Array([1.], dtype=float32)
    """
    return _unary_call(cosh_p, x)


def tanh(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise hyperbolic tangent.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> tanh(np.float32([0.0]))
    Array([0.], dtype=float32)
    """
    _no_accuracy("tanh", accuracy)
    return _unary_call(tanh_p, x)


def asinh(x: ArrayLike) -> Array:
    """Elementwise inverse hyperbolic sine.

    Args:
      x: a floating or complex array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> asinh(np.float32([0.0]))
    Array([0.], dtype=float32)
    """
    return _unary_call(asinh_p, x)


def acosh(x: ArrayLike) -> Array:
    """Elementwise inverse hyperbolic cosine.

    Args:
      x: a floating or complex array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> acosh(np.float32([1.0]))
    Array([0.], dtype=float32)
    """
    return _unary_call(acosh_p, x)


def atanh(x: ArrayLike) -> Array:
    """Elementwise inverse hyperbolic tangent.

    Args:
      x: a floating or complex array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> atanh(np.float32([0.0]))
    Array([0.], dtype=float32)
    """
    return _unary_call(atanh_p, x)


def logistic(x: ArrayLike, *, accuracy: None = None) -> Array:
    """Elementwise logistic sigmoid, ``1 / (1 + exp(-x))``.

    Args:
      x: a floating or complex array.
      accuracy: only None (the default implementation).

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> logistic(np.float32([0.0]))
    Array([0.5], dtype=float32)
    """
    _no_accuracy("logistic", accuracy)
    return _unary_call(logistic_p, x)


def erf(x: ArrayLike) -> Array:
    """Elementwise error function.

    Args:
      x: a floating array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> erf(np.float32([0.0, 10.0]))
    Array([0., 1.], dtype=float32)
    """
    return _unary_call(erf_p, x)


def erfc(x: ArrayLike) -> Array:
    """Elementwise complementary error function, ``1 - erf(x)``.

    Args:
      x: a floating array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> erfc(np.float32([0.0]))
    Array([1.], dtype=float32)
    """
    return _unary_call(erfc_p, x)


def erf_inv(x: ArrayLike) -> Array:
    """Elementwise inverse of the error function (``±inf`` at ``±1``, NaN
    outside ``[-1, 1]``).

    Args:
      x: a floating array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> erf_inv(np.float32([0.0, 1.0]))
    Array([ 0., inf], dtype=float32)
    """
    return _unary_call(erf_inv_p, x)


def lgamma(x: ArrayLike) -> Array:
    """Elementwise ``log |gamma(x)|`` (``inf`` at the poles 0, -1, ...).

    Args:
      x: a floating array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> lgamma(np.float32([1.0, 3.0]))
    Array([0.       , 0.6931472], dtype=float32)
    """
    return _unary_call(lgamma_p, x)


def digamma(x: ArrayLike) -> Array:
    """Elementwise digamma, the derivative of ``lgamma`` (NaN at the poles).

    Args:
      x: a floating array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> digamma(np.float32([1.0]))
    Array([-0.5772157], dtype=float32)
    """
    return _unary_call(digamma_p, x)


def is_finite(x: ArrayLike) -> Array:
    """Elementwise: whether ``x`` is neither infinite nor NaN.

    Args:
      x: a floating array.

    Returns:
      A bool array of ``x``'s shape, weak when ``x`` is.

    >>> is_finite(np.float32([1.0, np.inf, np.nan]))
    Array([ True, False, False], dtype=bool)
    """
    return _unary_call(is_finite_p, x)


def bitwise_not(x: ArrayLike) -> Array:
    """Elementwise bitwise complement (logical not for bools).

    Args:
      x: a bool or integer array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> bitwise_not(np.uint8([0, 15]))
    Array([255, 240], dtype=uint8)
    """
    return _unary_call(not_p, x)


def population_count(x: ArrayLike) -> Array:
    """Elementwise number of set bits (of the two's complement pattern).

    Args:
      x: an integer array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> population_count(np.int8([-1, 3]))
    Array([8, 2], dtype=int8)
    """
    return _unary_call(population_count_p, x)


def clz(x: ArrayLike) -> Array:
    """Elementwise number of leading zero bits.

    Args:
      x: an integer array.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> clz(np.int8([0, 1, -1]))
    Array([8, 7, 0], dtype=int8)
    """
    return _unary_call(clz_p, x)


def real(x: ArrayLike) -> Array:
    """Elementwise real part of a complex array.

    Args:
      x: a complex array (real arrays are refused, as ``jax.lax``).

    Returns:
      An array of the real dtype of ``x`` (complex64 gives float32), its
      shape and weak flag.

    >>> real(np.complex64([1 + 2j]))
    Array([1.], dtype=float32)
    """
    return _unary_call(real_p, x)


def imag(x: ArrayLike) -> Array:
    """Elementwise imaginary part of a complex array.

    Args:
      x: a complex array.

    Returns:
      An array of the real dtype of ``x``, its shape and weak flag.

    >>> imag(np.complex64([1 + 2j]))
    Array([2.], dtype=float32)
    """
    return _unary_call(imag_p, x)


def conj(x: ArrayLike) -> Array:
    """Elementwise complex conjugate.

    Args:
      x: a complex array, or a float32/float64 one (made complex).

    Returns:
      A complex array of ``x``'s shape and weak flag.

    >>> conj(np.complex64([1 + 2j]))
    Array([1.-2.j], dtype=complex64)
    """
    return _unary_call(conj_p, x)


def integer_pow(x: ArrayLike, y: int) -> Array:
    """Elementwise ``x ** y`` for a fixed integer ``y``, by repeated
    multiplication in ``x``'s dtype (integers wrap).

    Args:
      x: an integer, floating or complex array.
      y: a Python int; negative only for floating and complex ``x``.

    Returns:
      An array of ``x``'s dtype, shape and weak flag.

    >>> integer_pow(np.int8([2, 3]), 3)
    Array([ 8, 27], dtype=int8)
    """
    try:
        exponent = operator.index(y)
    except TypeError:
        raise TypeError(f"lax.integer_pow: y must be an int, got {y!r}") from None
    return integer_pow_p.bind(to_array(x, "integer_pow", 0), y=exponent)  # type: ignore[no-any-return]


def add(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise ``x + y``, without promotion.

    Args:
      x, y: arrays of one dtype (integer, floating or complex); a Python
        scalar takes the other operand's dtype.

    Returns:
      An array of that dtype, weak when both operands are.

    Raises:
      TypeError: the dtypes differ (convert one with
        :func:`convert_element_type`, or use ``typelattice.numpy.add``).

    >>> add(np.int8([1, 2]), 3)
    Array([4, 5], dtype=int8)
    """
    return _binary_call(add_p, x, y)


def sub(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise ``x - y``, without promotion.

    Args:
      x, y: arrays of one dtype (integer, floating or complex).

    Returns:
      An array of that dtype, weak when both operands are.

    >>> sub(np.float32([1.0]), 0.5)
    Array([0.5], dtype=float32)
    """
    return _binary_call(sub_p, x, y)


def mul(x: ArrayLike, y: ArrayLike, *, out_dtype: None = None) -> Array:
    """Elementwise ``x * y``, without promotion.

    Args:
      x, y: arrays of one dtype (integer, floating or complex).
      out_dtype: only None; to multiply in a wider type, convert the
        operands first with :func:`convert_element_type`.

    Returns:
      An array of that dtype, weak when both operands are.

    >>> mul(np.int8([100]), np.int8([2]))
    Array([-56], dtype=int8)
    """
    if out_dtype is not None:
        raise NotImplementedError(
            "lax.mul: out_dtype is not supported; convert the operands first, "
            "e.g. lax.mul(lax.convert_element_type(x, dt), "
            "lax.convert_element_type(y, dt))"
        )
    return _binary_call(mul_p, x, y)


def div(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise ``x / y``; integer division truncates toward zero.

    As in ``jax.lax`` (XLA), an integer divided by zero gives -1 (all bits
    set), and the most negative integer divided by -1 gives itself.

    Args:
      x, y: arrays of one dtype (integer, floating or complex).

    Returns:
      An array of that dtype, weak when both operands are.

    >>> div(np.int8([7, -7]), np.int8([2, 2]))
    Array([ 3, -3], dtype=int8)
    """
    return _binary_call(div_p, x, y)


def rem(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise remainder of :func:`div`, with the sign of ``x`` (C's
    ``fmod``); an integer ``x`` rem 0 is ``x``.

    Args:
      x, y: arrays of one dtype (integer or floating).

    Returns:
      An array of that dtype, weak when both operands are.

    >>> rem(np.int8([7, -7]), np.int8([2, 2]))
    Array([ 1, -1], dtype=int8)
    """
    return _binary_call(rem_p, x, y)


def pow(x: ArrayLike, y: ArrayLike) -> Array:  # noqa: A001 - jax.lax's name
    """Elementwise ``x ** y``.

    Args:
      x: a floating or complex array.
      y: an array of ``x``'s dtype or of any integer dtype (a Python scalar
        takes ``x``'s dtype).

    Returns:
      An array of ``x``'s dtype, weak when both operands are.

    >>> pow(np.float32([2.0]), np.int32([3]))
    Array([8.], dtype=float32)
    """
    return _binary_call(pow_p, x, y)


def max(x: ArrayLike, y: ArrayLike) -> Array:  # noqa: A001 - jax.lax's name
    """Elementwise maximum; NaN wins; complex numbers compare by real part,
    then imaginary part.

    Args:
      x, y: arrays of one dtype.

    Returns:
      An array of that dtype, weak when both operands are.

    >>> max(np.float32([1.0, 5.0]), 2.0)
    Array([2., 5.], dtype=float32)
    """
    return _binary_call(max_p, x, y)


def min(x: ArrayLike, y: ArrayLike) -> Array:  # noqa: A001 - jax.lax's name
    """Elementwise minimum; NaN wins; complex numbers compare by real part,
    then imaginary part.

    Args:
      x, y: arrays of one dtype.

    Returns:
      An array of that dtype, weak when both operands are.

    >>> min(np.float32([1.0, 5.0]), 2.0)
    Array([1., 2.], dtype=float32)
    """
    return _binary_call(min_p, x, y)


def atan2(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise arctangent of ``x / y``, in the quadrant of ``(y, x)``.

    Args:
      x, y: arrays of one floating or complex dtype.

    Returns:
      An array of that dtype, weak when both operands are.

    >>> atan2(np.float32([1.0]), np.float32([1.0])).round(4)
    Array([0.7854], dtype=float32)
    """
    return _binary_call(atan2_p, x, y)


def nextafter(x1: ArrayLike, x2: ArrayLike) -> Array:
    """Elementwise: the next representable value after ``x1`` towards ``x2``.

    Args:
      x1, x2: arrays of one floating dtype.

    Returns:
      An array of that dtype, weak when both operands are.

    >>> nextafter(np.float16([1.0]), np.float16([2.0]))
    Array([1.001], dtype=float16)
    """
    return _binary_call(nextafter_p, x1, x2)


def bitwise_and(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise bitwise and (logical and for bools).

    Args:
      x, y: arrays of one bool or integer dtype.

    Returns:
      An array of that dtype, weak when both operands are.

    >>> bitwise_and(np.uint8([12]), np.uint8([10]))
    Array([8], dtype=uint8)
    """
    return _binary_call(and_p, x, y)


def bitwise_or(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise bitwise or (logical or for bools).

    Args:
      x, y: arrays of one bool or integer dtype.

    Returns:
      An array of that dtype, weak when both operands are.

    >>> bitwise_or(np.uint8([12]), np.uint8([10]))
    Array([14], dtype=uint8)
    """
    return _binary_call(or_p, x, y)


def bitwise_xor(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise bitwise exclusive or.

    Args:
      x, y: arrays of one bool or integer dtype.

    Returns:
      An array of that dtype, weak when both operands are.

    >>> bitwise_xor(np.uint8([12]), np.uint8([10]))
    Array([6], dtype=uint8)
    """
    return _binary_call(xor_p, x, y)


def shift_left(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise ``x << y``; shifting by the width or more, or by a
    negative amount, gives 0.

    Args:
      x, y: arrays of one integer dtype.

    Returns:
      An array of that dtype, weak when both operands are.

    >>> shift_left(np.int8([1, 1]), np.int8([3, 8]))
    Array([8, 0], dtype=int8)
    """
    return _binary_call(shift_left_p, x, y)


def shift_right_logical(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise logical right shift (zeros shifted in, whatever the
    sign); shifting by the width or more gives 0.

    Args:
      x, y: arrays of one integer dtype.

    Returns:
      An array of that dtype, weak when both operands are.

    >>> shift_right_logical(np.int8([-1]), np.int8([1]))
    Array([127], dtype=int8)
    """
    return _binary_call(shift_right_logical_p, x, y)


def shift_right_arithmetic(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise arithmetic right shift (copies of the sign bit shifted
    in, unsigned integers included); shifting by the width or more gives 0
    or -1.

    Args:
      x, y: arrays of one integer dtype.

    Returns:
      An array of that dtype, weak when both operands are.

    >>> shift_right_arithmetic(np.int8([-8]), np.int8([2]))
    Array([-2], dtype=int8)
    """
    return _binary_call(shift_right_arithmetic_p, x, y)


def eq(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise ``x == y``.

    Args:
      x, y: arrays of one dtype.

    Returns:
      A bool array, weak when both operands are.

    >>> eq(np.int8([1, 2]), 2)
    Array([False,  True], dtype=bool)
    """
    return _binary_call(eq_p, x, y)


def ne(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise ``x != y``.

    Args:
      x, y: arrays of one dtype.

    Returns:
      A bool array, weak when both operands are.

    >>> ne(np.int8([1, 2]), 2)
    Array([ True, False], dtype=bool)
    """
    return _binary_call(ne_p, x, y)


def lt(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise ``x < y``.

    Args:
      x, y: arrays of one dtype, not complex.

    Returns:
      A bool array, weak when both operands are.

    >>> lt(np.int8([1, 2]), 2)
    Array([ True, False], dtype=bool)
    """
    return _binary_call(lt_p, x, y)


def le(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise ``x <= y``.

    Args:
      x, y: arrays of one dtype, not complex.

    Returns:
      A bool array, weak when both operands are.

    >>> le(np.int8([1, 3]), 2)
    Array([ True, False], dtype=bool)
    """
    return _binary_call(le_p, x, y)


def gt(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise ``x > y``.

    Args:
      x, y: arrays of one dtype, not complex.

    Returns:
      A bool array, weak when both operands are.

    >>> gt(np.int8([1, 3]), 2)
    Array([False,  True], dtype=bool)
    """
    return _binary_call(gt_p, x, y)


def ge(x: ArrayLike, y: ArrayLike) -> Array:
    """Elementwise ``x >= y``.

    Args:
      x, y: arrays of one dtype, not complex.

    Returns:
      A bool array, weak when both operands are.

    >>> ge(np.int8([1, 2]), 2)
    Array([False,  True], dtype=bool)
    """
    return _binary_call(ge_p, x, y)


def complex(x: ArrayLike, y: ArrayLike) -> Array:  # noqa: A001 - jax.lax's name
    """Elementwise ``x + 1j * y``.

    Args:
      x, y: arrays of one dtype, float32 or float64.

    Returns:
      A complex64 (complex128) array, weak when both operands are.

    >>> complex(np.float32([1.0]), np.float32([2.0]))
    Array([1.+2.j], dtype=complex64)
    """
    return _binary_call(complex_p, x, y)


def select_n(which: ArrayLike, *cases: ArrayLike) -> Array:
    """Elementwise choice among ``cases``: ``cases[which]``.

    Args:
      which: a bool array (two cases at most: False picks ``cases[0]``) or
        an integer array (an index out of range picks the nearest case), of
        the cases' shape or a scalar.
      *cases: arrays of one dtype and one shape.

    Returns:
      An array of the cases' dtype and shape, weak when every case is.

    >>> ones, twos = np.int8([1, 1, 1]), np.int8([2, 2, 2])
    >>> select_n(np.int32([0, 2, 1]), ones, twos, 3 * ones)
    Array([1, 3, 2], dtype=int8)
    """
    return select_n_p.bind(  # type: ignore[no-any-return]
        to_array(which, "select_n", 0), *to_arrays("select_n", cases, first=1)
    )


def select(pred: ArrayLike, on_true: ArrayLike, on_false: ArrayLike) -> Array:
    """Elementwise ``on_true if pred else on_false``, without promotion.

    Args:
      pred: a bool array of the operands' shape, or a scalar.
      on_true, on_false: arrays of one dtype and one shape (scalars are not
        broadcast, as in ``jax.lax``).

    Returns:
      An array of their dtype and shape, weak when both are.

    >>> select(np.array([True, False]), np.int8([1, 1]), np.int8([0, 0]))
    Array([1, 0], dtype=int8)
    >>> select(True, np.int8(1), 0)
    Array(1, dtype=int8)
    """
    return select_n_p.bind(  # type: ignore[no-any-return]
        to_array(pred, "select", 0),
        *reversed(to_arrays("select", (on_true, on_false), first=1)),
    )


def clamp(min: ArrayLike, x: ArrayLike, max: ArrayLike) -> Array:  # noqa: A002
    """Elementwise ``min(max(x, min), max)``, without promotion; complex
    numbers are compared by their real parts alone, as XLA does.

    Args:
      min: the lower bound: an array of ``x``'s shape, or a scalar.
      x: an array.
      max: the upper bound, like ``min``.

    Returns:
      An array of ``x``'s dtype and shape, weak when all three are.

    >>> clamp(0, np.int8([-5, 3, 9]), 5)
    Array([0, 3, 5], dtype=int8)
    """
    lo, value, hi = to_arrays("clamp", (min, x, max))
    return clamp_p.bind(lo, value, hi)  # type: ignore[no-any-return]


def _new_dtype(fname: str, new_dtype: DTypeLike) -> DType:
    """An explicitly requested dtype, ``explicit_x64_dtypes`` applied."""
    dt = _dtypes.dtype(new_dtype, canonicalize=False)
    state = _config.current()
    if dt in _dtypes.TO_32 and not state.enable_x64:
        return _dtypes.explicit_x64(dt, state.explicit_x64_dtypes, f"lax.{fname}")
    return dt


def convert_element_type(operand: ArrayLike, new_dtype: DTypeLike) -> Array:
    """``operand``'s values in ``new_dtype``: the explicit conversion.

    Integers wrap, floats converted to integers saturate (NaN gives 0) and
    complex numbers converted to real types lose their imaginary part (with
    a ComplexWarning), as ``jax.lax`` and ``typelattice.numpy.astype``. A
    Python scalar must fit ``new_dtype`` (OverflowError otherwise).

    Args:
      operand: an array or scalar.
      new_dtype: the dtype (in 32-bit mode a 64-bit one follows
        ``explicit_x64_dtypes``).

    Returns:
      A strong array of ``new_dtype`` and ``operand``'s shape.

    >>> convert_element_type(np.float32([1.7, -1.7, 300.0]), 'int8')
    Array([  1,  -1, 127], dtype=int8)
    """
    dt = _new_dtype("convert_element_type", new_dtype)
    return _convert(operand, dt, "convert_element_type", "new_dtype")


def _convert(operand: ArrayLike, dt: DType, fname: str, use: str) -> Array:
    """:func:`convert_element_type` to ``dt`` for ``lax.<fname>``, whose
    argument ``use`` names the dtype (in the message of a Python scalar
    that ``dt`` cannot hold)."""
    complex_in = type(operand) is builtins.complex
    if complex_in or type(operand) in (int, float):
        # A Python scalar is converted as a value, straight to ``dt``
        # (rounding allowed: 2**31 becomes float32 2147483648.0, as in JAX),
        # never through the default dtype of its kind, which may not hold it;
        # only a value that ``dt`` cannot hold raises. As JAX: a Python
        # complex becomes bool by its real part (warned below); other real
        # types refuse it.
        value = operand.real if _dtypes.kind_of(dt) == "b" else operand
        exact = _core.python_scalar_to(value, dt, f"lax.{fname}", use)
        x = to_array(exact, fname, 0)
        source = "a Python complex"
    else:
        x = to_array(operand, fname, 0)
        complex_in = x.dtype.kind == "c"
        source = x.dtype.name
    if complex_in and _dtypes.kind_of(dt) != "c":
        warnings.warn(
            f"lax.{fname}: converting {source} to {dt.name} "
            "discards the imaginary part; take lax.real(x) first to say so",
            np.exceptions.ComplexWarning,
            stacklevel=3,
        )
    return convert_element_type_p.bind(x, new_dtype=dt, weak_type=False)  # type: ignore[no-any-return]


def bitcast_convert_type(operand: ArrayLike, new_dtype: DTypeLike) -> Array:
    """``operand``'s bytes read as ``new_dtype``.

    A narrower type adds a last axis (float32 to uint8: 4 elements); a wider
    one takes the last axis, which must hold exactly one element's bytes.

    Args:
      operand: an array (bool and complex only to their own type).
      new_dtype: the dtype to read the bytes as.

    Returns:
      A strong array of ``new_dtype``.

    >>> bitcast_convert_type(np.float32([1.0]), 'int32')
    Array([1065353216], dtype=int32)
    """
    dt = _new_dtype("bitcast_convert_type", new_dtype)
    x = to_array(operand, "bitcast_convert_type", 0)
    return bitcast_convert_type_p.bind(x, new_dtype=dt)  # type: ignore[no-any-return]


# The public functions whose positional arguments are exactly their
# primitive's operands (keywords, if any, are options such as ``accuracy``):
# with the C accelerator, their calls on arrays bind in C (binds_operands).
# Every one converts its operands with to_array or to_arrays, so calls on an
# array and a Python scalar bind in C too.
_OPERANDS_ONLY: Final[dict[str, Primitive]] = {
    "neg": neg_p,
    "sign": sign_p,
    "floor": floor_p,
    "ceil": ceil_p,
    "abs": abs_p,
    "exp": exp_p,
    "exp2": exp2_p,
    "log": log_p,
    "log1p": log1p_p,
    "expm1": expm1_p,
    "sqrt": sqrt_p,
    "rsqrt": rsqrt_p,
    "cbrt": cbrt_p,
    "sin": sin_p,
    "cos": cos_p,
    "tan": tan_p,
    "asin": asin_p,
    "acos": acos_p,
    "atan": atan_p,
    "sinh": sinh_p,
    "cosh": cosh_p,
    "tanh": tanh_p,
    "asinh": asinh_p,
    "acosh": acosh_p,
    "atanh": atanh_p,
    "logistic": logistic_p,
    "erf": erf_p,
    "erfc": erfc_p,
    "erf_inv": erf_inv_p,
    "lgamma": lgamma_p,
    "digamma": digamma_p,
    "is_finite": is_finite_p,
    "bitwise_not": not_p,
    "population_count": population_count_p,
    "clz": clz_p,
    "real": real_p,
    "imag": imag_p,
    "conj": conj_p,
    "add": add_p,
    "sub": sub_p,
    "mul": mul_p,
    "div": div_p,
    "rem": rem_p,
    "pow": pow_p,
    "max": max_p,
    "min": min_p,
    "atan2": atan2_p,
    "nextafter": nextafter_p,
    "bitwise_and": and_p,
    "bitwise_or": or_p,
    "bitwise_xor": xor_p,
    "shift_left": shift_left_p,
    "shift_right_logical": shift_right_logical_p,
    "shift_right_arithmetic": shift_right_arithmetic_p,
    "eq": eq_p,
    "ne": ne_p,
    "lt": lt_p,
    "le": le_p,
    "gt": gt_p,
    "ge": ge_p,
    "complex": complex_p,
    "clamp": clamp_p,
}
for _name, _prim in _OPERANDS_ONLY.items():
    globals()[_name] = binds_operands(_prim, globals()[_name], scalars=True)
