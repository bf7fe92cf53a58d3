"""typelattice.numpy: a jax.numpy-style namespace on NumPy, with weak types.

Arrays carry a ``weak_type`` flag, and every function promotes its operands
with typelattice's lattice before NumPy computes, so results have JAX's
dtypes: ``int8_array * 2`` stays int8, ``int32 + float32`` is float32, and
``bfloat16 + 1.0`` stays bfloat16.

>>> import typelattice.numpy as tnp
>>> x = tnp.asarray([1, 2, 3], dtype='int8')
>>> x * 2
Array([2, 4, 6], dtype=int8)
>>> tnp.asarray([1, 2], dtype='int32') + tnp.asarray([0.5, 1.5], dtype='float32')
Array([1.5, 3.5], dtype=float32)
>>> tnp.asarray(1.5)
Array(1.5, dtype=float32, weak_type=True)
"""

import numpy as _np

from typelattice._basearray import Array
from typelattice._core import RankPromotionWarning
from typelattice._dtypes import can_cast, finfo, iinfo, isdtype, issubdtype
from typelattice._promotion import promote_types, result_type
from typelattice.numpy._array_methods import register_array_methods
from typelattice.numpy._creation import (
    ScalarType,
    arange,
    array,
    asarray,
    astype,
    empty,
    empty_like,
    eye,
    full,
    full_like,
    identity,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from typelattice.numpy._linalg import (
    dot,
    einsum,
    inner,
    matmul,
    outer,
    tensordot,
    vdot,
)
from typelattice.numpy._pad import pad
from typelattice.numpy._reductions import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    cumprod,
    cumsum,
    max,
    mean,
    min,
    prod,
    ptp,
    std,
    sum,
    trace,
    var,
)
from typelattice.numpy._shape import (
    argsort,
    argwhere,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
    compress,
    concat,
    concatenate,
    diagonal,
    expand_dims,
    flatnonzero,
    flip,
    hstack,
    matrix_transpose,
    moveaxis,
    nonzero,
    permute_dims,
    ravel,
    repeat,
    reshape,
    roll,
    searchsorted,
    sort,
    split,
    squeeze,
    stack,
    swapaxes,
    take,
    take_along_axis,
    tile,
    transpose,
    vstack,
)
from typelattice.numpy._ufunc import ufunc
from typelattice.numpy._ufuncs import (
    abs,
    absolute,
    acos,
    acosh,
    add,
    angle,
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    around,
    asin,
    asinh,
    atan,
    atan2,
    atanh,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    cbrt,
    ceil,
    clip,
    conj,
    conjugate,
    copysign,
    cos,
    cosh,
    divide,
    divmod,
    equal,
    exp,
    exp2,
    expm1,
    float_power,
    floor,
    floor_divide,
    fmax,
    fmin,
    fmod,
    greater,
    greater_equal,
    heaviside,
    hypot,
    imag,
    invert,
    isfinite,
    isinf,
    isnan,
    left_shift,
    less,
    less_equal,
    log,
    log1p,
    log2,
    log10,
    logaddexp,
    logaddexp2,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    nextafter,
    not_equal,
    positive,
    power,
    real,
    reciprocal,
    remainder,
    right_shift,
    rint,
    round,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    true_divide,
    trunc,
    where,
)

#: The array type, as ``jax.numpy.ndarray``.
ndarray = Array

# NumPy's dtype class, as jax.numpy.dtype (Flax code annotates with it).
dtype = _np.dtype

# NumPy's abstract scalar classes, for issubdtype(x.dtype, tnp.floating).
generic = _np.generic
number = _np.number
integer = _np.integer
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
inexact = _np.inexact
floating = _np.floating
complexfloating = _np.complexfloating

pi = _np.pi
e = _np.e
inf = _np.inf
nan = _np.nan
newaxis = None

bool_ = ScalarType("bool")
bool = bool_  # noqa: A001 - jax.numpy's name
uint8 = ScalarType("uint8")
uint16 = ScalarType("uint16")
uint32 = ScalarType("uint32")
uint64 = ScalarType("uint64")
int8 = ScalarType("int8")
int16 = ScalarType("int16")
int32 = ScalarType("int32")
int64 = ScalarType("int64")
bfloat16 = ScalarType("bfloat16")
float16 = ScalarType("float16")
float32 = ScalarType("float32")
float64 = ScalarType("float64")
complex64 = ScalarType("complex64")
complex128 = ScalarType("complex128")
single, double = float32, float64
csingle, cdouble = complex64, complex128

# ml_dtypes' types (ml_dtypes >= 0.5 has them all).
float8_e3m4 = ScalarType("float8_e3m4")
float8_e4m3 = ScalarType("float8_e4m3")
float8_e8m0fnu = ScalarType("float8_e8m0fnu")
float8_e4m3b11fnuz = ScalarType("float8_e4m3b11fnuz")
float8_e4m3fn = ScalarType("float8_e4m3fn")
float8_e4m3fnuz = ScalarType("float8_e4m3fnuz")
float8_e5m2 = ScalarType("float8_e5m2")
float8_e5m2fnuz = ScalarType("float8_e5m2fnuz")
float6_e2m3fn = ScalarType("float6_e2m3fn")
float6_e3m2fn = ScalarType("float6_e3m2fn")
float4_e2m1fn = ScalarType("float4_e2m1fn")
int1 = ScalarType("int1")
int2 = ScalarType("int2")
int4 = ScalarType("int4")
uint1 = ScalarType("uint1")
uint2 = ScalarType("uint2")
uint4 = ScalarType("uint4")


__all__ = [
    "Array",
    "RankPromotionWarning",
    "ScalarType",
    "abs",
    "absolute",
    "acos",
    "acosh",
    "add",
    "all",
    "amax",
    "amin",
    "angle",
    "any",
    "arange",
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
    "argwhere",
    "around",
    "array",
    "asarray",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "bfloat16",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "bool",
    "bool_",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "can_cast",
    "cbrt",
    "cdouble",
    "ceil",
    "clip",
    "complex128",
    "complex64",
    "complexfloating",
    "compress",
    "concat",
    "concatenate",
    "conj",
    "conjugate",
    "copysign",
    "cos",
    "cosh",
    "csingle",
    "diagonal",
    "cumprod",
    "cumsum",
    "divide",
    "divmod",
    "dot",
    "double",
    "dtype",
    "e",
    "einsum",
    "empty",
    "empty_like",
    "equal",
    "exp",
    "exp2",
    "expand_dims",
    "expm1",
    "eye",
    "finfo",
    "flatnonzero",
    "flip",
    "float16",
    "float32",
    "float64",
    "float_power",
    "floating",
    "floor",
    "floor_divide",
    "fmax",
    "fmin",
    "fmod",
    "full",
    "full_like",
    "generic",
    "greater",
    "greater_equal",
    "heaviside",
    "hstack",
    "hypot",
    "identity",
    "iinfo",
    "imag",
    "inexact",
    "inf",
    "inner",
    "int16",
    "int32",
    "int64",
    "int8",
    "integer",
    "invert",
    "isdtype",
    "isfinite",
    "isinf",
    "isnan",
    "issubdtype",
    "left_shift",
    "less",
    "less_equal",
    "linspace",
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
    "matrix_transpose",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mod",
    "moveaxis",
    "multiply",
    "nan",
    "ndarray",
    "negative",
    "newaxis",
    "nextafter",
    "nonzero",
    "not_equal",
    "number",
    "ones",
    "ones_like",
    "outer",
    "pad",
    "permute_dims",
    "pi",
    "positive",
    "power",
    "prod",
    "ptp",
    "promote_types",
    "ravel",
    "real",
    "reciprocal",
    "remainder",
    "repeat",
    "reshape",
    "result_type",
    "right_shift",
    "rint",
    "roll",
    "round",
    "searchsorted",
    "sign",
    "signedinteger",
    "sin",
    "single",
    "sinh",
    "sort",
    "split",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "swapaxes",
    "take",
    "take_along_axis",
    "tan",
    "tanh",
    "tensordot",
    "tile",
    "trace",
    "transpose",
    "true_divide",
    "trunc",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    "ufunc",
    "unsignedinteger",
    "var",
    "vdot",
    "vstack",
    "where",
    "zeros",
    "zeros_like",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e8m0fnu",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float4_e2m1fn",
    "int1",
    "int2",
    "int4",
    "uint1",
    "uint2",
    "uint4",
]

# Array's operators and methods, set on the concrete array and the tracers.
register_array_methods()
del register_array_methods
