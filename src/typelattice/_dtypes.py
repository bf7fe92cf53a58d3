"""The type universe: which dtypes exist, their categories and short codes.

Every dtype is a NumPy ``np.dtype``. The extended types (bfloat16, the
float8/float6/float4 family, the narrow integers) come from ``ml_dtypes``;
NumPy sees them as opaque ``V``-kind types, so classification here never
relies on ``dtype.kind`` and instead looks the dtype up in one category table.

Weak types are the Python types ``int``, ``float`` and ``complex``, used
directly as lattice nodes (codes ``i*``, ``f*``, ``c*``).
"""

from __future__ import annotations

import builtins
import functools
import math
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

import ml_dtypes
import numpy as np

from typelattice import _config

if TYPE_CHECKING:
    from typelattice.typing import DTypeLike

__all__ = [
    "CATEGORIES",
    "EXTENDED_DTYPES",
    "STANDARD_DTYPES",
    "WEAK_TYPES",
    "can_cast",
    "canonicalize_dtype",
    "code_to_dtype",
    "dtype",
    "dtype_code",
    "finfo",
    "iinfo",
    "isdtype",
    "issubdtype",
]

# -- the universe -------------------------------------------------------------

# The standard types' codes, in the order of JAX's documented promotion table
# (docs/semantics.md, "Lattices").
_STANDARD: Final = {
    "b1": "bool",
    "u1": "uint8",
    "u2": "uint16",
    "u4": "uint32",
    "u8": "uint64",
    "i1": "int8",
    "i2": "int16",
    "i4": "int32",
    "i8": "int64",
    "bf": "bfloat16",
    "f2": "float16",
    "f4": "float32",
    "f8": "float64",
    "c8": "complex64",
    "c16": "complex128",
}

# ml_dtypes' small floats and narrow integers, in the order tables show them.
# Only those the installed ml_dtypes provides become part of the universe.
_SMALL_FLOAT_NAMES: Final = (
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
)
_NARROW_INT_NAMES: Final = ("int1", "int2", "int4", "uint1", "uint2", "uint4")


def _small_float_code(name: str) -> str:
    # float8_e4m3fn -> f8e4m3fn: bits, then the format, as ml_dtypes names it.
    return "f" + name.removeprefix("float").replace("_", "")


def _narrow_int_code(name: str) -> str:
    # int4 -> i4b, uint2 -> u2b: "b" for bits, so i4b is never confused with
    # i4 (int32, counted in bytes as NumPy's codes are).
    return ("u" if name.startswith("u") else "i") + name.lstrip("uint") + "b"


def _available(names: Iterable[str]) -> dict[str, np.dtype[Any]]:
    return {n: np.dtype(getattr(ml_dtypes, n)) for n in names if hasattr(ml_dtypes, n)}


SMALL_FLOATS: Final = _available(_SMALL_FLOAT_NAMES)
NARROW_INTS: Final = _available(_NARROW_INT_NAMES)

_CODE_TO_DTYPE: Final[dict[str, np.dtype[Any]]] = {
    **{code: np.dtype(name) for code, name in _STANDARD.items()},
    **{_small_float_code(n): d for n, d in SMALL_FLOATS.items()},
    **{_narrow_int_code(n): d for n, d in NARROW_INTS.items()},
}

#: The 15 standard strong types, in the order of the promotion table.
STANDARD_DTYPES: Final = tuple(_CODE_TO_DTYPE[c] for c in _STANDARD)
#: Every small float and narrow integer the installed ml_dtypes provides.
EXTENDED_DTYPES: Final = (*SMALL_FLOATS.values(), *NARROW_INTS.values())
#: Every strong type of the universe.
ALL_DTYPES: Final = STANDARD_DTYPES + EXTENDED_DTYPES
#: The weak lattice nodes: Python's int, float and complex.
WEAK_TYPES: Final = (builtins.int, builtins.float, builtins.complex)

_WEAK_CODES: Final[dict[object, str]] = {
    builtins.int: "i*",
    builtins.float: "f*",
    builtins.complex: "c*",
}
_CODE_OF: Final[dict[object, str]] = {d: c for c, d in _CODE_TO_DTYPE.items()}
_CODE_OF.update(_WEAK_CODES)
_WEAK_OF_CODE: Final[dict[str, type]] = {
    "i*": builtins.int,
    "f*": builtins.float,
    "c*": builtins.complex,
}

_ALL_SET: Final = frozenset(ALL_DTYPES)
ALL_SET: Final = _ALL_SET

# -- categories ---------------------------------------------------------------


def _d(name: str) -> np.dtype[Any]:
    return np.dtype(name)


_SIGNED: Final[frozenset[np.dtype[Any]]] = frozenset(
    [_d("int8"), _d("int16"), _d("int32"), _d("int64")]
    + [d for n, d in NARROW_INTS.items() if not n.startswith("u")]
)
_UNSIGNED: Final[frozenset[np.dtype[Any]]] = frozenset(
    [_d("uint8"), _d("uint16"), _d("uint32"), _d("uint64")]
    + [d for n, d in NARROW_INTS.items() if n.startswith("u")]
)
_REAL_FLOATING: Final[frozenset[np.dtype[Any]]] = frozenset(
    [
        _d("bfloat16"),
        _d("float16"),
        _d("float32"),
        _d("float64"),
        *SMALL_FLOATS.values(),
    ]
)
_COMPLEX: Final[frozenset[np.dtype[Any]]] = frozenset(
    [_d("complex64"), _d("complex128")]
)
_BOOL: Final[frozenset[np.dtype[Any]]] = frozenset([_d("bool")])

#: Each category, by the Array API's name for it, as a set of dtypes.
CATEGORIES: Final[dict[str, frozenset[np.dtype[Any]]]] = {
    "bool": _BOOL,
    "signed integer": _SIGNED,
    "unsigned integer": _UNSIGNED,
    "integral": _SIGNED | _UNSIGNED,
    "real floating": _REAL_FLOATING,
    "complex floating": _COMPLEX,
    "numeric": _SIGNED | _UNSIGNED | _REAL_FLOATING | _COMPLEX,
}

# NumPy's abstract scalar classes, for issubdtype. NumPy itself classifies the
# ml_dtypes types as np.void; here bfloat16 is floating and int4 signed.
_ABSTRACT: Final[dict[type, frozenset[np.dtype[Any]]]] = {
    np.generic: _ALL_SET,
    np.number: CATEGORIES["numeric"],
    np.integer: CATEGORIES["integral"],
    np.signedinteger: _SIGNED,
    np.unsignedinteger: _UNSIGNED,
    np.inexact: _REAL_FLOATING | _COMPLEX,
    np.floating: _REAL_FLOATING,
    np.complexfloating: _COMPLEX,
}

#: Default dtype of each kind, 64-bit and 32-bit.
_DEFAULTS: Final = {
    True: {
        "b": _d("bool"),
        "i": _d("int64"),
        "u": _d("uint64"),
        "f": _d("float64"),
        "c": _d("complex128"),
    },
    False: {
        "b": _d("bool"),
        "i": _d("int32"),
        "u": _d("uint32"),
        "f": _d("float32"),
        "c": _d("complex64"),
    },
}
# 32-bit mode's canonical form of each 64-bit type.
TO_32: Final = {
    _d("int64"): _d("int32"),
    _d("uint64"): _d("uint32"),
    _d("float64"): _d("float32"),
    _d("complex128"): _d("complex64"),
}
# Python scalar types: their dtype before canonicalization (JAX's choice).
_PYTHON_SCALAR: Final[dict[type, np.dtype[Any]]] = {
    builtins.bool: _d("bool"),
    builtins.int: _d("int64"),
    builtins.float: _d("float64"),
    builtins.complex: _d("complex128"),
}


def kind_of(dt: np.dtype[Any]) -> str:
    """One of ``b i u f c`` for a dtype of the universe (ml_dtypes included)."""
    if dt in _REAL_FLOATING:
        return "f"
    if dt in _SIGNED:
        return "i"
    if dt in _UNSIGNED:
        return "u"
    if dt in _COMPLEX:
        return "c"
    return "b"


def default_dtype(kind: str, x64: bool | None = None) -> np.dtype[Any]:
    """The default dtype of a kind (``b i u f c``) in the given or current mode."""
    if x64 is None:
        x64 = _config.current().enable_x64
    return _DEFAULTS[x64][kind]


# -- conversion -----------------------------------------------------------------

_ACCEPTED: Final = (
    "a dtype, a dtype name or code (e.g. 'int8', 'bfloat16', 'u1'), a NumPy "
    "scalar type, bool/int/float/complex, or a value with a numeric .dtype"
)


def _unsupported(x: object, dt: object) -> TypeError:
    return TypeError(
        f"{x!r} has dtype {dt}, which typelattice does not support: only bool "
        "and numeric dtypes (including ml_dtypes' bfloat16, float8 and narrow "
        "integer types) take part in promotion"
    )


def _check(x: object, dt: np.dtype[Any]) -> np.dtype[Any]:
    """Return ``dt`` in native byte order if it is in the universe."""
    if dt in _ALL_SET:
        return dt
    if dt.byteorder not in "=|":
        native = dt.newbyteorder("=")
        if native in _ALL_SET:
            return native
    raise _unsupported(x, dt)


def _from_string(s: str) -> np.dtype[Any]:
    found = _CODE_TO_DTYPE.get(s)
    if found is not None:
        return found
    try:
        dt = np.dtype(s)
    except (TypeError, ValueError):  # ValueError: "a b, c", "i4,x"...
        raise TypeError(
            f"unknown dtype {s!r}: expected a NumPy dtype name (e.g. 'int8', "
            "'float32'), an ml_dtypes name (e.g. 'bfloat16', 'float8_e4m3fn') "
            f"or a code ({', '.join(_CODE_TO_DTYPE)})"
        ) from None
    return _check(s, dt)


def dtype(x: object, *, canonicalize: bool = True) -> np.dtype[Any]:
    """The dtype of a value or dtype-like, as an ``np.dtype``.

    In 32-bit mode (the default) the result is canonical: Python scalars give
    int32/float32/complex64, and NumPy values of a 64-bit type give its
    32-bit form. An explicitly named 64-bit dtype (``'int64'``,
    ``np.float64``...) follows ``explicit_x64_dtypes``: truncated with a
    warning (``'warn'``), refused (``'error'``) or kept (``'allow'``).

    Args:
      x: a dtype, a dtype name or code, a NumPy scalar type, a Python scalar
        or scalar type, or any value with a ``.dtype``.
      canonicalize: apply the 32-bit mode rules above (``False``: Python
        scalars give the 64-bit types and nothing is narrowed).

    Returns:
      The ``np.dtype``.

    Raises:
      TypeError: for anything that is not a bool or numeric dtype of the
        universe, naming the value.

    >>> dtype('bf')
    dtype(bfloat16)
    >>> dtype(3.0)
    dtype('float32')
    >>> dtype(3.0, canonicalize=False)
    dtype('float64')
    """
    dt = dtype_of(x)
    if not canonicalize:
        return dt
    state = _config.current()
    if state.enable_x64 or dt not in TO_32:
        return dt
    if is_explicit(x):
        return explicit_x64(dt, state.explicit_x64_dtypes, "dtype")
    return TO_32[dt]


def is_explicit(x: object) -> bool:
    """Whether ``x`` names a dtype (rather than being a value that has one).

    Python's ``int``/``float``/``complex`` types stand for default types and
    are not explicit requests.
    """
    if isinstance(x, type):
        return x not in _PYTHON_SCALAR
    return isinstance(x, np.dtype | str)


class X64DtypeWarning(UserWarning):
    """An explicitly requested 64-bit dtype was truncated in 32-bit mode.

    Raised instead with ``explicit_x64_dtypes('error')``; nothing happens
    with ``'allow'`` or in 64-bit mode (docs/semantics.md, "Modes").

    >>> import warnings, typelattice
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter('always')
    ...     typelattice.dtype('int64')
    dtype('int32')
    >>> caught[0].category.__name__
    'X64DtypeWarning'
    """


_X64_FIX: Final = (
    "turn on 64-bit mode (typelattice.config.update('enable_x64', True), a "
    "typelattice.enable_x64() scope, or TYPELATTICE_ENABLE_X64=1)"
)


def explicit_x64(dt: np.dtype[Any], policy: str, where: str) -> np.dtype[Any]:
    """Apply ``explicit_x64_dtypes`` to an explicitly requested 64-bit dtype.

    Note: JAX always truncates with a warning; 'error' and 'allow' are ours
    (docs/semantics.md, "Modes").

    Args:
      dt: the requested dtype (int64, uint64, float64 or complex128).
      policy: ``'warn'``, ``'error'`` or ``'allow'``.
      where: the function that received the request, for messages.
    """
    narrow = TO_32.get(dt)
    if narrow is None or policy == "allow":
        return dt
    if policy == "error":
        raise ValueError(
            f"{where}: dtype {dt} was requested explicitly, but 64-bit types "
            f"are off (enable_x64=False) and explicit_x64_dtypes='error'. "
            f"Use {narrow}, or {_X64_FIX}."
        )
    warnings.warn(
        f"{where}: explicitly requested dtype {dt} is not available with "
        f"enable_x64=False and is truncated to {narrow}. To keep it, "
        f"{_X64_FIX}; explicit_x64_dtypes='allow' keeps it too.",
        X64DtypeWarning,
        stacklevel=3,
    )
    return narrow


def dtype_of(x: object) -> np.dtype[Any]:
    t = type(x)
    # Narrowed by isinstance, x has unknown type parameters for pyright
    # (np.dtype[Unknown]); any parameter will do here.
    if isinstance(x, np.dtype):
        return _check(x, x)  # pyright: ignore[reportUnknownArgumentType]
    scalar = _PYTHON_SCALAR.get(t)  # bool is matched exactly, before int
    if scalar is not None:
        return scalar
    if t is str:
        return _from_string(x)  # type: ignore[arg-type]
    if isinstance(x, type):
        scalar = _PYTHON_SCALAR.get(x)
        if scalar is not None:
            return scalar
        if issubclass(x, np.generic) and x not in _ABSTRACT:
            return _check(x, np.dtype(x))  # pyright: ignore[reportUnknownArgumentType]
        if issubclass(x, np.dtype):  # a NumPy DType class, e.g. Int8DType
            try:
                return _check(x, x())  # type: ignore[call-overload]
            except TypeError:
                pass
        raise TypeError(f"cannot interpret {x!r} as a dtype: expected {_ACCEPTED}")
    if isinstance(x, np.generic | np.ndarray):
        return _check(x, x.dtype)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
    if x is None:
        raise TypeError(f"cannot interpret None as a dtype: expected {_ACCEPTED}")
    inner = getattr(x, "dtype", None)
    if inner is not None:
        try:
            dt = np.dtype(inner)
        except TypeError:
            raise TypeError(
                f"{x!r} has a .dtype {inner!r} that NumPy cannot interpret"
            ) from None
        return _check(x, dt)
    if hasattr(x, "__array__"):
        return _check(x, np.asarray(x).dtype)
    if isinstance(x, int | float | complex):
        # Subclasses of Python scalars (IntEnum members...) are strongly typed
        # values of the 64-bit type of their kind, as in JAX.
        return _check(x, np.result_type(x))
    raise TypeError(f"cannot interpret {x!r} as a dtype: expected {_ACCEPTED}")


def canonicalize_dtype(x: DTypeLike) -> np.dtype[Any]:
    """The dtype used for ``x`` in the current mode.

    With ``enable_x64`` off (the default), int64, uint64, float64 and
    complex128 become int32, uint32, float32 and complex64; everything else
    is unchanged. Unlike :func:`dtype`, an explicit 64-bit name is narrowed
    without a warning.

    Args:
      x: a dtype-like.

    Returns:
      The ``np.dtype`` in force for it.

    >>> import typelattice
    >>> canonicalize_dtype('float64')
    dtype('float32')
    >>> with typelattice.enable_x64():
    ...     canonicalize_dtype('float64')
    dtype('float64')
    """
    dt = x if isinstance(x, np.dtype) and x in _ALL_SET else dtype_of(x)
    if _config.current().enable_x64:
        return dt
    return TO_32.get(dt, dt)


# -- codes --------------------------------------------------------------------


def dtype_code(x: DTypeLike, weak: bool = False) -> str:
    """The short code of a dtype-like's lattice node (the notation of JAX's
    promotion table; see docs/semantics.md, "Lattices").

    Strong types give ``b1 u1 ... c16``, ``bf``, and for the extended types
    ``f8e4m3fn``-style (small floats) and ``i4b``-style (narrow integers)
    codes. ``int``/``float``/``complex``, or any numeric dtype with
    ``weak=True``, give ``i*``, ``f*`` or ``c*`` (a weak bool stays ``b1``).

    Args:
      x: a dtype-like.
      weak: give the weak node of ``x``'s kind.

    Returns:
      The code, a str.

    Raises:
      TypeError: ``x`` is not a dtype of the universe.

    >>> dtype_code('uint8')
    'u1'
    >>> dtype_code(float), dtype_code('int16', weak=True), dtype_code('int4')
    ('f*', 'i*', 'i4b')
    """
    if type(x) is type and x in WEAK_TYPES:
        return _WEAK_CODES[x]
    dt = dtype_of(x)
    if weak:
        kind = kind_of(dt)
        if kind != "b":
            return {"i": "i*", "u": "i*", "f": "f*", "c": "c*"}[kind]
    return _CODE_OF[dt]


def code_to_dtype(code: str) -> np.dtype[Any] | type:
    """The dtype for a short code, or the Python type for a weak code.

    Args:
      code: a code such as ``'u1'``, ``'bf'``, ``'f8e4m3fn'``, ``'i4b'`` or
        ``'f*'``.

    Returns:
      The ``np.dtype``, or ``int``/``float``/``complex`` for ``i* f* c*``.

    Raises:
      TypeError: for an unknown code, listing the known ones.

    >>> code_to_dtype('u1'), code_to_dtype('f*')
    (dtype('uint8'), <class 'float'>)
    """
    if code in _CODE_TO_DTYPE:
        return _CODE_TO_DTYPE[code]
    if code in _WEAK_OF_CODE:
        return _WEAK_OF_CODE[code]
    raise TypeError(
        f"unknown dtype code {code!r}: the codes are "
        f"{', '.join([*_CODE_TO_DTYPE, *_WEAK_OF_CODE])}"
    )


def codes() -> tuple[str, ...]:
    """Every short code: strong types, then ``i* f* c*``."""
    return (*_CODE_TO_DTYPE, *_WEAK_OF_CODE)


# -- classification -------------------------------------------------------------


def issubdtype(arg1: DTypeLike, arg2: DTypeLike) -> bool:
    """Whether ``arg1`` is ``arg2`` or in the category ``arg2``.

    Like ``numpy.issubdtype``, but the ml_dtypes types are classified as what
    they are: bfloat16 and the float8 types are ``np.floating``, ``int4`` is
    a ``np.signedinteger`` (NumPy calls them all ``np.void``).

    Args:
      arg1: a dtype-like.
      arg2: a dtype-like, or one of NumPy's abstract classes
        (``np.floating``, ``np.integer``, ``np.number``...).

    Returns:
      Whether ``arg1`` is ``arg2`` or belongs to it.

    >>> import numpy as np
    >>> issubdtype('bfloat16', np.floating), issubdtype('int4', np.signedinteger)
    (True, True)
    >>> issubdtype('int8', np.floating)
    False
    """
    a = dtype_of(arg1)
    if isinstance(arg2, type) and arg2 in _ABSTRACT:
        return a in _ABSTRACT[arg2]
    return a == dtype_of(arg2)


_KINDS_HELP: Final = ", ".join(repr(k) for k in CATEGORIES)


def isdtype(dtype: DTypeLike, kind: DTypeLike | tuple[DTypeLike, ...]) -> bool:
    """Array API ``isdtype``: whether ``dtype`` is of ``kind``.

    Args:
      dtype: a dtype-like.
      kind: a category name (``'bool'``, ``'signed integer'``,
        ``'unsigned integer'``, ``'integral'``, ``'real floating'``,
        ``'complex floating'``, ``'numeric'``), a dtype, or a tuple of these.

    Returns:
      Whether ``dtype`` is in (one of) the categories or is the dtype.

    Raises:
      ValueError: an unknown category name, listing the valid ones.

    >>> isdtype('bfloat16', 'real floating'), isdtype('uint4', 'integral')
    (True, True)
    >>> isdtype('int8', ('bool', 'complex floating'))
    False
    """
    dt = dtype_of(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str) and k in CATEGORIES:
            if dt in CATEGORIES[k]:
                return True
        elif isinstance(k, str) and " " in k:
            raise ValueError(f"unknown dtype kind {k!r}: expected one of {_KINDS_HELP}")
        else:
            if dt == dtype_of(k):
                return True
    return False


def finfo(x: DTypeLike) -> ml_dtypes.finfo:
    """Machine limits of a floating or complex dtype, ml_dtypes types included.

    Args:
      x: a floating or complex dtype-like.

    Returns:
      ``ml_dtypes.finfo`` for it (``bits``, ``eps``, ``max``, ``tiny``...).

    Raises:
      TypeError: for a non-floating dtype, naming the fix (``iinfo``).

    >>> finfo('bfloat16').bits, float(finfo('float8_e4m3fn').max)
    (16, 448.0)
    """
    dt = dtype_of(x)
    if dt not in _REAL_FLOATING and dt not in _COMPLEX:
        raise TypeError(
            f"finfo needs a floating or complex dtype, got {dt}; for integer "
            "types use typelattice.iinfo"
        )
    return ml_dtypes.finfo(dt)  # type: ignore[no-untyped-call]


def iinfo(x: DTypeLike) -> ml_dtypes.iinfo:
    """Machine limits of an integer dtype, narrow integers included.

    Args:
      x: an integer dtype-like.

    Returns:
      ``ml_dtypes.iinfo`` for it (``bits``, ``min``, ``max``).

    Raises:
      TypeError: for a non-integer dtype, naming the fix (``finfo``).

    >>> iinfo('int4').min, iinfo('uint8').max
    (-8, 255)
    """
    dt = dtype_of(x)
    if dt not in _SIGNED and dt not in _UNSIGNED:
        raise TypeError(
            f"iinfo needs an integer dtype, got {dt}; for floating types use "
            "typelattice.finfo"
        )
    return ml_dtypes.iinfo(dt)  # type: ignore[no-untyped-call]


# -- casting --------------------------------------------------------------------


def can_cast(from_: Any, to: Any, casting: str = "safe") -> bool:
    """Whether NumPy's ``casting`` rule allows converting ``from_`` to ``to``.

    This is NumPy's rule, not the promotion lattice: for that, see
    :func:`typelattice.safe_to_cast`.

    Args:
      from_: a dtype-like or an array (ml_dtypes types included).
      to: a dtype-like or an array.
      casting: ``'no'``, ``'equiv'``, ``'safe'``, ``'same_kind'`` or
        ``'unsafe'``, as in NumPy.

    Returns:
      Whether the conversion is allowed.

    >>> can_cast('int8', 'int16'), can_cast('float32', 'int32')
    (True, False)
    """
    src = dtype_of(from_)
    dst = dtype_of(to)
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError(
            "can_cast: casting must be one of 'no', 'equiv', 'safe', "
            f"'same_kind', 'unsafe', got {casting!r}"
        )
    return np.can_cast(src, dst, casting=casting)  # type: ignore[arg-type]


# -- ranges: which conversions can change a value -------------------------------
#
# Data safety (docs/semantics.md, "Data safety"): a conversion an operation
# makes on its own may round a value to the precision of the new dtype, as
# JAX and NumPy do, but must not change it beyond that: no integer outside the
# new dtype's range, no finite value that becomes inf or nan or saturates at
# the largest value, no inf or nan that the new dtype cannot hold. These
# functions decide from the two dtypes alone whether a conversion can do so,
# so that only such conversions read their operand's values.


def value_range(dt: np.dtype[Any]) -> tuple[int | float, int | float]:
    """The lowest and highest finite values of ``dt`` (of each component of a
    complex dtype; for float8_e8m0fnu, which has no zero, the smallest
    positive value).

    >>> value_range(np.dtype('int8')), value_range(np.dtype('float16'))
    ((-128, 127), (-65504.0, 65504.0))
    """
    kind = kind_of(dt)
    if kind == "b":
        return 0, 1
    if kind in "iu":
        info = iinfo(dt)
        return int(info.min), int(info.max)
    fi = finfo(dt)
    return float(fi.min), float(fi.max)


@functools.cache
def overflow_limit(dt: np.dtype[Any]) -> float:
    """The magnitude from which a finite value no longer rounds to a finite
    value of the floating (or complex) dtype ``dt``: its largest value plus
    half a unit in the last place there. Below it, converting only rounds.

    >>> overflow_limit(np.dtype('float16'))
    65520.0
    """
    fi = finfo(dt)
    top = float(fi.max)
    # The spacing of the largest binade: 2**(exponent - mantissa bits).
    ulp = 2.0 ** (math.floor(math.log2(top)) - int(fi.nmant))
    return top + ulp / 2


@functools.cache
def _nonfinite_kept(dt: np.dtype[Any]) -> tuple[bool, bool]:
    """Whether ``dt`` holds inf and nan (converted from float64, they stay)."""
    if kind_of(dt) not in "fc":
        return False, False
    with np.errstate(all="ignore"):
        held: np.ndarray[Any, Any] = np.array([np.inf, np.nan]).astype(dt)
        back: np.ndarray[Any, Any] = held.astype(np.complex128).real
    return bool(np.isposinf(back[:1]).all()), bool(np.isnan(back[1:]).all())


@functools.cache
def rounds_every_float(dt: np.dtype[Any]) -> bool:
    """Whether every float converts to the floating dtype ``dt`` by rounding
    alone up to its largest value, with inf and nan kept: IEEE-like types
    (signed, with zero, inf and nan), not float8_e8m0fnu (no zero, no sign)
    nor the types without inf or nan (float8_e4m3fn, float4_e2m1fn...)."""
    lo, hi = value_range(dt)
    return kind_of(dt) == "f" and _nonfinite_kept(dt) == (True, True) and lo == -hi


def saturates(dt: np.dtype[Any]) -> bool:
    """Whether a floating dtype has no inf, so that converting a value beyond
    its range may give its largest value instead of inf (float4_e2m1fn,
    the float6 types, float8_e8m0fnu)."""
    return not _nonfinite_kept(dt)[0]


@functools.cache
def can_lose_range(src: np.dtype[Any], dst: np.dtype[Any]) -> bool:
    """Whether converting some value of ``src`` to ``dst`` can change it by
    more than rounding (see above). False for a dtype to itself, for every
    widening conversion, and for conversions to bool (a truth test).

    >>> can_lose_range(np.dtype('uint32'), np.dtype('int32'))
    True
    >>> can_lose_range(np.dtype('int16'), np.dtype('float16'))
    False
    >>> can_lose_range(np.dtype('int32'), np.dtype('float16'))
    True
    """
    if src == dst or kind_of(dst) == "b":
        return False
    lo, hi = value_range(src)
    dst_lo, dst_hi = value_range(dst)
    if kind_of(dst) in "iu":  # floats become integers by truncation
        lo, hi = math.trunc(lo), math.trunc(hi)
    if lo < dst_lo or hi > dst_hi:
        return True
    if kind_of(src) in "fc":
        # inf and nan: integers have neither; some small floats lack one.
        src_inf, src_nan = _nonfinite_kept(src)
        dst_inf, dst_nan = _nonfinite_kept(dst)
        return (src_inf and not dst_inf) or (src_nan and not dst_nan)
    return False
