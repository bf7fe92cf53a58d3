"""The machinery every operation of the namespace shares.

An operation is written in two parts: a *plan*, which depends only on the
operands' abstract values (dtype and weak flag) and the configuration, and
says which dtype NumPy computes in and what the result's dtype and weak flag
are; and a NumPy call on operands already converted to that dtype. Plans are
cached per configuration, so after the first call an operation costs one dict
lookup on top of NumPy's own work, and NumPy's promotion never decides a
dtype.

With :mod:`typelattice._array` it is the array layer: the plans' structures
(:class:`Plan`, the :class:`Conversion` codes shared with ``_speedups.c``),
operand conversion and the checks that refuse data loss. Tracing
(:mod:`typelattice._tracing`) and the namespace (:mod:`typelattice.numpy`)
build on it; it imports neither.
"""

# Package-internal: reads the arrays' underscored slots and the promotion
# engine's private functions by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import enum
import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple, NoReturn

import numpy as np

from typelattice import _config, _dtypes, _promotion

__all__ = [
    "Aval",
    "Conv",
    "Conversion",
    "Plan",
    "RankPromotionWarning",
    "check_rank",
    "convert",
    "from_array_like",
    "ignore_fp_errors",
    "python_scalar_to",
    "result_of",
    "unshared",
]

DType = np.dtype[Any]
Key = tuple[DType, bool]
_PY_SCALARS: Final = {int: "i", float: "f", complex: "c"}
_BOOL: Final = np.dtype(bool)


class Aval(tuple[np.dtype[Any], bool]):
    """An abstract value: an operand's ``(dtype, weak_type)``, interned.

    Make them with :func:`aval`: equal avals are the same object, so they
    hash and compare by identity, which keeps plan-cache lookups cheap on
    every operation. Duck-types as an array for
    :func:`typelattice.lattice_result_type` (``dtype`` and ``weak_type``).
    """

    __slots__ = ()
    __hash__ = object.__hash__

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    @property
    def dtype(self) -> DType:
        return self[0]

    @property
    def weak_type(self) -> bool:
        return self[1]

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self[1] else ""
        return f"Aval({self[0]}{weak})"


_AVALS: dict[tuple[DType, bool], Aval] = {}


def aval(dt: DType, weak: bool) -> Aval:
    """The interned :class:`Aval` of a dtype and weak flag."""
    found = _AVALS.get((dt, weak))
    if found is None:
        found = _AVALS.setdefault((dt, weak), Aval((dt, weak)))
    return found


# -- plans ------------------------------------------------------------------

# The structures of an operation's plan, shared by the elementwise
# functions (numpy/_elementwise.py, which builds them), their C fast path
# (_speedups.c, which reads them) and tracing (which records them).


class Conversion(enum.IntEnum):
    """How an operand reaches the dtype an operation computes in.

    The same codes are the ``enum conversion`` of ``_speedups.c``, which
    reads plans too; its table ``CONVERSIONS`` must equal this enum, or the
    extension is not used (a build from other sources).
    """

    KEEP = 0  # an array already in the compute dtype
    CAST = 1  # an array of a dtype whose every value converts: cast in the call
    INT = 2  # a Python int for a NumPy integer dtype: range check only
    SCALAR = 3  # a Python scalar: checked conversion
    WEAK = 4  # a weak array (a Python scalar's value): checked conversion
    # An array of a dtype some of whose values may not convert (uint32 to
    # int32, int32 to float16): its values are checked (_core.check_operand),
    # then it is cast like CAST. Decided from the two dtypes alone, so that
    # same-dtype and widening operations never read their operands.
    CHECK = 5


class Conv(NamedTuple):
    """One operand's conversion in a plan."""

    how: Conversion
    lo: int  # INT: the compute dtype's range
    hi: float  # INT: its top; SCALAR to a float dtype: its largest value


class Plan(NamedTuple):
    """What an operation does for operands of given keys (cached per
    configuration). ``_speedups.c`` reads it by position: keep the order."""

    # The plain NumPy function of the one primitive computing the operation
    # on operands in ``cd`` (the C path calls it), or None.
    fn: Callable[..., Any] | None
    convs: tuple[Conv, ...]  # per operand
    out_key: Aval  # the result's (dtype, weak)
    fp: bool  # NumPy's floating point warnings must be silenced
    cd: DType  # the compute dtype


class RankPromotionWarning(UserWarning):
    """Operands of different ranks were broadcast (``rank_promotion='warn'``).

    >>> import warnings, typelattice, typelattice.numpy as tnp
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter('always')
    ...     with typelattice.rank_promotion('warn'):
    ...         _ = tnp.zeros((2, 3)) + tnp.zeros(3)
    >>> caught[0].category.__name__
    'RankPromotionWarning'
    """


# -- floating point errors --------------------------------------------------


# NumPy reports overflow, division by zero and invalid values as warnings;
# JAX computes IEEE results silently, and so do we. np.errstate costs about a
# microsecond per use; setting NumPy's own context variable directly costs a
# tenth of that, so that is used when this NumPy has it.
class _ErrstateVar:
    """The fallback: np.errstate behind the ContextVar interface used below."""

    def set(self, value: object) -> Any:
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def reset(self, token: Any) -> None:
        token.__exit__(None, None, None)


_EXTOBJ: Any
_IGNORE: object = None
try:
    from numpy._core._ufunc_config import (  # type: ignore[attr-defined,no-redef]
        _extobj_contextvar as _EXTOBJ,  # pyright: ignore[reportAttributeAccessIssue, reportConstantRedefinition, reportUnknownVariableType]
    )

    with np.errstate(all="ignore"):
        _IGNORE = _EXTOBJ.get()  # pyright: ignore[reportConstantRedefinition, reportUnknownMemberType, reportUnknownVariableType]
except (ImportError, AttributeError):  # pragma: no cover - other NumPy layouts
    _EXTOBJ = _ErrstateVar()  # pyright: ignore[reportConstantRedefinition]


def ignore_fp_errors(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with NumPy's floating point warnings off."""
    token = _EXTOBJ.set(_IGNORE)
    try:
        return fn(*args, **kwargs)
    finally:
        _EXTOBJ.reset(token)


# -- data safety: conversions must not change values -------------------------
#
# Every conversion an operation makes on its own (an operand to the dtype it
# computes in, a value to a dtype= it was given, 64-bit NumPy input to 32-bit
# mode) goes through the functions below. Rounding to the new dtype's
# precision is allowed, as in JAX and NumPy; a change beyond that (see
# _dtypes.can_lose_range) raises OverflowError naming the value, the dtypes
# and a fix that works in the active mode (docs/semantics.md, "Data safety").
# Note: JAX wraps integers and lets finite floats become inf here; we raise.

X64_SCOPE: Final = "with typelattice.enable_x64():"

# The dtypes a fix may suggest, by family, in the order they are tried:
# integers by size (the signedness asked for first), then the IEEE floats
# (bfloat16 holds the range of float32 with a third of its precision: it is
# never the suggestion for values that need range).
_INTEGERS: Final = tuple(
    np.dtype(f"{sign}int{bits}") for bits in (8, 16, 32, 64) for sign in ("", "u")
)
_REALS: Final = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
_COMPLEXES: Final = (np.dtype("complex64"), np.dtype("complex128"))


def _holds(dt: DType, lo: Any, hi: Any) -> bool:
    """Whether every value in ``[lo, hi]`` converts to ``dt`` by rounding only."""
    kind = _dtypes.kind_of(dt)
    if kind in "iu":
        if any(isinstance(v, float) and not math.isfinite(v) for v in (lo, hi)):
            return False
        dst_lo, dst_hi = _dtypes.value_range(dt)
        return bool(dst_lo <= math.trunc(lo) and math.trunc(hi) <= dst_hi)
    try:
        lo, hi = float(lo), float(hi)
    except OverflowError:  # a Python int beyond every float
        return False
    limit = _dtypes.overflow_limit(dt)
    return all(not math.isfinite(v) or abs(v) < limit for v in (lo, hi))


def wider_dtype(dt: DType, lo: Any, hi: Any, keep_range: bool) -> DType | None:
    """The dtype a fix suggests: the first of ``dt``'s family that holds every
    value in ``[lo, hi]`` (and, with ``keep_range``, every value of ``dt``, so
    that the other operands fit too); integers that no integer type holds
    get a float. None when no dtype holds them."""
    kind = _dtypes.kind_of(dt)
    if kind == "c":
        candidates: tuple[DType, ...] = _COMPLEXES
    elif kind == "f":
        candidates = _REALS
    else:
        unsigned_first = kind == "u"
        ints = sorted(
            _INTEGERS, key=lambda d: (d.itemsize, (d.kind == "u") != unsigned_first)
        )
        # A float for integers keeps their digits where one can (float16 for
        # int8, float64 for int32): float32 would hold the range of uint64
        # but round nearly all of its values.
        bits = _dtypes.iinfo(dt).bits if kind in "iu" else 1
        reals = [r for r in _REALS if _dtypes.finfo(r).nmant + 1 >= bits]
        candidates = (*ints, *(reals or _REALS[-1:]))
    if keep_range:
        dt_lo, dt_hi = _dtypes.value_range(dt)
        lo, hi = min(lo, dt_lo), max(hi, dt_hi)
    return next((c for c in candidates if _holds(c, lo, hi)), None)


def fix_for(dt: DType, lo: Any, hi: Any, use: str) -> str:
    """The sentence that ends a data-loss message: a dtype that holds the
    values in ``[lo, hi]`` and how to use it, in the active mode.

    ``use`` says how: ``'operands'`` (convert an operation's array operands
    to a dtype that also holds ``dt``'s values), ``'array'`` (convert the
    array an update or a fill value goes into), ``'dtype'``,
    ``'new_dtype'``, ``'preferred_element_type'`` or ``'param_dtype'`` (pass
    it as that argument instead of ``dt``), ``'default'`` (``dt`` was
    inferred: pass a ``dtype=``, or run in 64-bit mode where the default
    holds it).
    """
    wider = wider_dtype(dt, lo, hi, keep_range=use in ("operands", "array"))
    if wider is None:
        return (
            "Fix: no dtype holds it; compute with Python numbers, or scale the "
            "values into range first."
        )
    name = wider.name
    x64 = _config.current().enable_x64
    if use in (
        "dtype",
        "new_dtype",
        "default",
        "preferred_element_type",
        "param_dtype",
    ):
        keyword = "dtype" if use == "default" else use
        how = f"give a {keyword} that holds it, e.g. {keyword}='{name}'"
    elif use == "array":
        how = f"convert the array first, e.g. x.astype('{name}')"
    else:
        how = f"convert the array operands to {name} first, e.g. x.astype('{name}')"
    if wider in _dtypes.TO_32 and not x64:
        how += f", inside `{X64_SCOPE}` (64-bit types need 64-bit mode)"
    elif use == "default" and not x64 and dt in _dtypes.TO_32.values():
        wide = next(w for w, n in _dtypes.TO_32.items() if n == dt)
        if _holds(wide, lo, hi):
            how += f"; or run it inside `{X64_SCOPE}`, where the default is {wide}"
    return f"Fix: {how}."


def _x64_fix() -> str:
    return (
        f"turn on 64-bit mode (`{X64_SCOPE}`, or "
        "typelattice.config.update('enable_x64', True))"
    )


def _became(bad: Any, dt: DType) -> str:
    """What ``bad`` would become in the floating dtype ``dt``."""
    if _dtypes.kind_of(dt) == "c":
        out = ignore_fp_errors(np.asarray(complex(bad)).astype, dt)
        return str(complex(out))
    if isinstance(bad, complex):
        bad = bad.real  # a real dtype: the imaginary part is zero (checked)
    out = ignore_fp_errors(np.asarray(float(bad)).astype, dt)
    return str(float(out.astype(np.float64)))


def loss_error(where: str, what: str, bad: Any, dt: DType, fix: str) -> OverflowError:
    """The error for ``bad``, which ``dt`` cannot hold; ``what`` says what
    it is ("value {bad}", "Python int {bad}", "operand 0 (a uint32 array)
    holds {bad}, which")."""
    if _dtypes.kind_of(dt) in "iu":
        lo, hi = _dtypes.value_range(dt)
        detail = f"range {lo}..{hi}"
    else:
        detail = f"it would become {_became(bad, dt)}"
    subject = what.format(bad=bad)
    return OverflowError(f"{where}: {subject} does not fit in {dt} ({detail}). {fix}")


def _an(dt: DType) -> str:
    """``dt``'s name with its article: "an int32 array", "a uint8 array"."""
    return f"{'an' if dt.name.startswith('int') else 'a'} {dt.name}"


def converted(value: np.ndarray[Any, Any], dt: DType) -> np.ndarray[Any, Any]:
    """``value.astype(dt)``, NumPy's floating point warnings off; through
    float64 (or int64, complex128), which hold every value of the smaller
    types exactly, where ml_dtypes has no direct conversion (between some
    float8 types, between narrow integers)."""
    try:
        return ignore_fp_errors(value.astype, dt)  # type: ignore[no-any-return]
    except TypeError:
        kind = _dtypes.kind_of(value.dtype)
        wide = np.complex128 if kind == "c" else np.float64 if kind == "f" else np.int64
        return ignore_fp_errors(value.astype(wide).astype, dt)  # type: ignore[no-any-return]


def _item(x: Any) -> Any:
    """A NumPy scalar or 0-d array as a Python number (ml_dtypes' types too)."""
    a = np.asarray(x)
    kind = _dtypes.kind_of(a.dtype)
    if kind in "biu":
        return int(a) if a.dtype.kind in "biu" else int(a.astype(np.int64))
    if kind == "c":
        return complex(a.astype(np.complex128))
    return float(a.astype(np.float64))


def lost_value(value: np.ndarray[Any, Any], dt: DType) -> Any:
    """The first value of ``value`` that converting to ``dt`` would change by
    more than rounding (a Python number), or None.

    Reads ``value`` only when such a change is possible for its dtype
    (``_dtypes.can_lose_range``), and then only what decides: integers
    convert monotonically, so their extreme values do, and only on a side
    that can leave ``dt``'s range (one ``max`` for uint32 to int32).
    """
    src = value.dtype
    if not value.size or not _dtypes.can_lose_range(src, dt):
        return None
    # A broadcast array repeats its values along axes of stride 0 (the
    # stand-ins of jit and eval_shape have only such axes): read them once.
    if 0 in value.strides:
        once = tuple(slice(None) if s else slice(0, 1) for s in value.strides)
        value = value[once]
    if _dtypes.kind_of(src) in "biu":
        lo, hi = _dtypes.value_range(src)
        dst_lo, dst_hi = _dtypes.value_range(dt)
        sides = [np.max] if hi > dst_hi else []
        if lo < dst_lo:
            sides.append(np.min)
        for extreme in sides:
            v = _item(extreme(value))
            if not _int_fits(v, dt):
                return v
        return None
    # Floating and complex values: each one is checked.
    wide = value.astype(np.complex128 if _dtypes.kind_of(src) == "c" else np.float64)
    if _dtypes.kind_of(dt) in "iu":
        part = wide.real
        dst_lo, dst_hi = _dtypes.value_range(dt)
        with np.errstate(invalid="ignore"):
            t = np.trunc(part)
            bad = ~np.isfinite(part) | (t < dst_lo) | (t >= float(dst_hi + 1))
    else:
        out = converted(value, dt)
        if _dtypes.kind_of(dt) == "c":
            pairs = [(wide.real, out.real), (wide.imag, out.imag)]
        else:
            pairs = [(wide.real, out)]
        bad = np.zeros(value.shape, bool)
        limit = _dtypes.overflow_limit(dt)
        for w, o in pairs:
            o = o.astype(np.float64)
            finite = np.isfinite(w)
            lost = ~np.isfinite(o)
            if _dtypes.saturates(dt):
                lost |= np.abs(w) >= limit
            bad |= finite & lost
            bad |= np.isnan(w) & ~np.isnan(o)
            bad |= np.isinf(w) & (o != w)
    if not bad.any():
        return None
    first = wide.reshape(-1)[int(np.argmax(bad.reshape(-1)))]
    return first.item() if _dtypes.kind_of(src) == "c" else float(first)


def _int_fits(v: int, dt: DType) -> bool:
    """Whether the integer ``v`` converts to ``dt`` by rounding only."""
    if _dtypes.kind_of(dt) in "iu":
        lo, hi = _dtypes.value_range(dt)
        return lo <= v <= hi
    out = converted(np.asarray(v), dt).astype(np.complex128).real
    if not math.isfinite(out):
        return False
    return not (_dtypes.saturates(dt) and abs(v) >= _dtypes.overflow_limit(dt))


def checked_cast(
    value: np.ndarray[Any, Any],
    dt: DType,
    where: str,
    fix: str | None = None,
    use: str = "dtype",
) -> np.ndarray[Any, Any]:
    """``value`` converted to ``dt``, refusing to change a value by more than
    rounding (docs/semantics.md, "Data safety"; a float becomes an integer by
    truncation, as in JAX). The message ends with ``fix``, or else with a
    dtype that holds the values, said for ``use`` (see :func:`fix_for`)."""
    if value.dtype == dt:
        return value
    check_fits(value, dt, where, fix, use)
    if _dtypes.kind_of(value.dtype) == "c" and _dtypes.kind_of(dt) != "c":
        value = value.real  # the imaginary parts are zero (checked)
    return converted(value, dt)


def check_fits(
    value: np.ndarray[Any, Any],
    dt: DType,
    where: str,
    fix: str | None = None,
    use: str = "dtype",
) -> None:
    """Raise OverflowError if converting ``value`` to ``dt`` would change a
    value by more than rounding (:func:`checked_cast` without converting),
    TypeError if it would drop a nonzero imaginary part."""
    if _dtypes.kind_of(value.dtype) == "c" and _dtypes.kind_of(dt) != "c":
        imag = value.imag != 0
        if imag.any():
            z = complex(value.reshape(-1)[int(np.argmax(imag.reshape(-1)))])
            raise TypeError(
                f"{where}: value {z} is complex and {dt} is real (its imaginary "
                "part would be lost). Fix: take the real part explicitly "
                "(typelattice.numpy.real(x)), or use a complex dtype, e.g. "
                "dtype='complex64'."
            )
    bad = lost_value(value, dt)
    if bad is not None:
        if fix is None:
            fix = _fix_for_values(value, dt, bad, use)
        raise loss_error(where, "value {bad}", bad, dt, fix)


def _fix_for_values(value: np.ndarray[Any, Any], dt: DType, bad: Any, use: str) -> str:
    """A fix for all of ``value``'s values (their extremes), not only ``bad``."""
    if isinstance(bad, complex):
        bad = max(abs(bad.real), abs(bad.imag))
    finite = value if _dtypes.kind_of(value.dtype) in "biu" else None
    if finite is not None:
        lo, hi = _item(finite.min()), _item(finite.max())
    else:
        wide = np.abs(value.astype(np.complex128)).astype(np.float64)
        top = float(np.nanmax(np.where(np.isfinite(wide), wide, 0)))
        lo, hi = min(-top, bad), max(top, bad)
    return fix_for(dt, lo, hi, use)


def check_operand(
    value: np.ndarray[Any, Any], dt: DType, fname: str, pos: int
) -> np.ndarray[Any, Any]:
    """An array operand of ``fname`` whose dtype may not convert to ``dt``
    without a loss (a plan's ``Conversion.CHECK``), checked; returned as
    it is (the NumPy call converts it) or, when converting would only
    reinterpret its bits (integers of one size whose values fit), as a
    view of ``dt``, which NumPy then reads without converting.

    Raises:
      OverflowError: a value ``dt`` cannot hold.
    """
    bad = lost_value(value, dt)
    if bad is not None:
        lo, hi = _dtypes.value_range(value.dtype)
        raise loss_error(
            fname,
            f"operand {pos} ({_an(value.dtype)} array) holds {{bad}}, which",
            bad,
            dt,
            f"{fname} computes in {dt}, the promoted dtype of its operands. "
            + fix_for(dt, lo, hi, "operands"),
        )
    src = value.dtype
    if src.kind in "iu" and dt.kind in "iu" and src.itemsize == dt.itemsize:
        return value.view(dt)
    return value


def weak_to(value: np.ndarray[Any, Any], dt: DType, where: str) -> Any:
    """A weak array's values in ``dt``, refusing to change them, like a Python
    scalar's (a weak array is a Python scalar that became an array)."""
    if value.dtype == dt:
        return value
    bad = lost_value(value, dt)
    if bad is not None:
        fix = _fix_for_values(value, dt, bad, "operands")
        what = f"a weak {value.dtype} array holds {{bad}}, which"
        raise loss_error(where, what, bad, dt, fix)
    return ignore_fp_errors(value.astype, dt)


def narrow_to_32(value: np.ndarray[Any, Any], where: str) -> np.ndarray[Any, Any]:
    """A 64-bit NumPy array in its 32-bit form, refusing to change values.

    Note: JAX silently wraps integers and turns large floats into inf here;
    we raise instead (docs/semantics.md, "Data safety").
    """
    narrow = _dtypes.TO_32[value.dtype]
    if lost_value(value, narrow) is None:  # (no message to build)
        return converted(value, narrow)
    return checked_cast(
        value,
        narrow,
        f"{where} ({value.dtype} becomes {narrow} with enable_x64=False)",
        f"Fix: to keep it, {_x64_fix()}.",
    )


# -- operands ---------------------------------------------------------------


def _not_arraylike(fname: str, pos: int, x: object) -> TypeError:
    what = type(x).__name__
    if isinstance(x, list | tuple):
        return TypeError(
            f"{fname} requires ndarray or scalar arguments, got {what} at "
            f"position {pos}. Convert it first: typelattice.numpy.asarray(...)."
        )
    return TypeError(
        f"{fname}: argument at position {pos} is a {what} ({x!r:.60}); "
        "expected an array or a bool/int/float/complex scalar"
    )


def check_array_like(x: Any, fname: str, pos: int) -> None:
    """Refuse, as :func:`operand` does, an argument that is neither an array
    nor a scalar (a list, a string, any other object): for functions that
    read their arguments' dtypes first, which would call it a bad dtype."""
    if isinstance(x, list | tuple | str | bytes) or not (
        isinstance(x, np.ndarray | np.generic | bool | int | float | complex)
        or hasattr(x, "__array__")
    ):
        raise _not_arraylike(fname, pos, x)  # pyright: ignore[reportUnknownArgumentType]


def from_numpy(x: Any, fname: str, pos: int) -> np.ndarray[Any, Any]:
    """A NumPy array or scalar as the ndarray an operation sees (canonical)."""
    value = np.asarray(x)
    dt = value.dtype
    if dt not in _dtypes.ALL_SET:
        if dt.byteorder not in "=|" and dt.newbyteorder("=") in _dtypes.ALL_SET:
            value = value.astype(dt.newbyteorder("="))
            dt = value.dtype
        else:
            raise TypeError(
                f"{fname}: argument at position {pos} has dtype {dt}; only bool "
                "and numeric dtypes (including ml_dtypes' types) are supported"
            )
    if dt in _dtypes.TO_32 and not _config.current().enable_x64:
        value = narrow_to_32(value, fname)
    return value


def from_array_like(x: Any, fname: str, pos: int) -> np.ndarray[Any, Any]:
    """An object with ``__array__`` (not a NumPy array) as new memory.

    Such objects may hand out their own buffer, whatever ``copy=`` asks
    (NumPy trusts ``__array__(copy=True)``), so the array they give is
    copied, unless the conversion to a supported dtype copied it already.
    """
    raw = np.asarray(x)
    value = from_numpy(raw, fname, pos)
    return raw.copy() if value is raw else value


def unshared(value: np.ndarray[Any, Any], x: Any) -> np.ndarray[Any, Any]:
    """``value``, made from the argument ``x``, or a copy of it when it may be
    memory of the NumPy array ``x``, which its caller can still change.

    For operations whose NumPy result can be a view of an input (reshape,
    real, broadcast_to...): a result owns its memory or views an Array's
    (docs/semantics.md, "Data safety"). Arrays' own memory is never copied.
    """
    if isinstance(x, np.ndarray) and np.may_share_memory(value, x):  # pyright: ignore[reportUnknownArgumentType]
        return value.copy()
    return value


def key_dtype(key: object, x64: bool) -> DType:
    """The dtype an operand with this key has before promotion."""
    if isinstance(key, tuple):
        return key[0]  # type: ignore[no-any-return]
    if key is bool:
        return _BOOL
    return _dtypes.default_dtype(_PY_SCALARS[key], x64)  # type: ignore[index]


def key_weak(key: object) -> bool:
    return bool(key[1]) if isinstance(key, tuple) else key is not bool  # pyright: ignore[reportUnknownArgumentType]


def result_of(keys: Sequence[object], state: _config.State) -> tuple[DType, bool]:
    """The lattice join of some operands' keys: (dtype, weak) to compute in.

    Keys stand for their operands in promotion as they are: an Aval has
    ``dtype`` and ``weak_type``, a Python scalar type is its weak node.
    """
    dt, weak, _ = _promotion._lattice_result(tuple(keys), state)
    return dt, weak


# -- Python scalars ---------------------------------------------------------


def python_scalar_to(value: Any, dt: DType, fname: str, use: str = "operands") -> Any:
    """A Python scalar converted to ``dt``, refusing to change its value by
    more than rounding (a float becomes an integer by truncation).

    ``use`` says what the fix in a message proposes (see :func:`fix_for`):
    ``'operands'`` for an operation's operand, ``'dtype'`` for a value given
    with ``dtype=``.

    Note: JAX wraps integers that do not fit (``uint8_array + 1000``) and
    lets finite floats become inf; we raise (docs/semantics.md, "Data
    safety").
    """
    kind = _dtypes.kind_of(dt)
    t = type(value)  # pyright: ignore[reportUnknownVariableType]
    name = t.__name__
    if t is complex and kind != "c":
        raise TypeError(
            f"{fname}: the Python complex {value!r} cannot be converted to {dt}, "
            "which is real (its imaginary part would be lost). Fix: take the "
            "real part explicitly (z.real), or use a complex dtype, e.g. "
            "dtype='complex64'."
        )
    if kind == "b":
        return np.asarray(value, dt)  # a truth value
    if t is bool:  # 0 or 1 (float8_e8m0fnu has no 0)
        return python_scalar_to(int(value), dt, fname, use)
    if kind in "iu":
        whole = value
        if t is float:
            if not math.isfinite(value):
                raise loss_error(
                    fname,
                    f"Python {name} {{bad}}",
                    value,
                    dt,
                    fix_for(dt, value, value, use),
                )
            whole = math.trunc(value)  # toward zero, as JAX and NumPy
        lo, hi = _dtypes.value_range(dt)
        if not lo <= whole <= hi:
            raise loss_error(
                fname,
                f"Python {name} {{bad}}",
                value,
                dt,
                fix_for(dt, whole, whole, use),
            )
        return np.asarray(whole, dt)
    if t is int and abs(value) > 2**1023:
        fix = fix_for(dt, value, value, use)
        raise loss_error(fname, "Python int {bad}", value, dt, fix)
    out = ignore_fp_errors(np.asarray, value, dt)
    if t is complex:
        parts = [(value.real, complex(out).real), (value.imag, complex(out).imag)]
    else:
        parts = [(float(value), complex(out).real)]
    limit = _dtypes.overflow_limit(dt)
    for v, got in parts:
        if math.isfinite(v):
            lost = not math.isfinite(got) or (_dtypes.saturates(dt) and abs(v) >= limit)
        else:  # inf and nan stay, or the dtype has no such value
            lost = math.isnan(v) != math.isnan(got) or (math.isinf(v) and got != v)
        if lost:
            size = max(abs(p) for p, _ in parts)
            fix = fix_for(dt, -size, size, use)
            raise loss_error(fname, f"Python {name} {{bad}}", value, dt, fix)
    return out


# -- broadcasting ranks -----------------------------------------------------


def check_rank(fname: str, shapes: Sequence[tuple[int, ...]], policy: str) -> None:
    """Apply ``rank_promotion`` to operands of different ranks (scalars aside)."""
    if policy == "allow":
        return
    ranks = {len(s) for s in shapes if len(s)}
    if len(ranks) < 2:
        return
    shown = ", ".join(str(s) for s in shapes)
    msg = (
        f"{fname}: operands with shapes {shown} have different ranks and would "
        f"be broadcast with rank_promotion={policy!r}. Add the missing axes "
        "explicitly (expand_dims, reshape, x[None, :]), or allow it with "
        "typelattice.rank_promotion('allow')."
    )
    if policy == "raise":
        raise ValueError(msg)
    warnings.warn(msg, RankPromotionWarning, stacklevel=4)


def prefixed(name: str, err: BaseException | str) -> str:
    """``err``'s message with ``name: `` in front, once: NumPy's own messages
    may start with the function's name already (``matmul: Input operand
    ...``), and a message passed on may have been prefixed before."""
    text = str(err)
    return text if text.startswith(f"{name}: ") else f"{name}: {text}"


def reraise_named(name: str, err: Exception) -> NoReturn:
    """Raise NumPy's (or Python's) error about an argument, which does not say
    which call it came from (``'str' object cannot be interpreted as an
    integer``, ``axis 3 is out of bounds``), as a TypeError or ValueError
    naming ``name``. Any other error is raised as it is: ours name their
    function already, and a tracer's ConcretizationTypeError keeps its type.
    """
    if type(err) in (TypeError, IndexError, ZeroDivisionError):
        raise type(err)(prefixed(name, err)) from None
    if isinstance(err, ValueError):
        raise ValueError(prefixed(name, err)) from None
    raise err


def broadcast_error(fname: str, shapes: Sequence[tuple[int, ...]]) -> NoReturn:
    shown = " and ".join(str(s) for s in shapes)
    raise ValueError(
        f"{fname}: shapes {shown} do not broadcast together: each axis must "
        "match or be 1 (counting from the last)"
    )


# -- converting to the computation dtype ------------------------------------


def convert(value: Any, dt: DType, fname: str, use: str = "operands") -> Any:
    """One operand's value in dtype ``dt``, checked like every conversion an
    operation makes (see :func:`checked_cast`; ``use`` as there)."""
    t = type(value)  # pyright: ignore[reportUnknownVariableType]
    if t is np.ndarray:
        return checked_cast(value, dt, fname, use=use)
    return python_scalar_to(value, dt, fname, use)


def index_of(x: Any, what: str) -> int:
    """``operator.index`` with a message naming the argument (a tracer's
    ConcretizationTypeError, which says why it has no value, passes)."""
    try:
        return operator.index(x)
    except TypeError as err:
        if type(err) is not TypeError:
            raise
        raise TypeError(f"{what} must be an integer, got {x!r}") from None


def shape_of(shape: Any, where: str) -> tuple[int, ...]:
    """A shape argument (an int or a sequence of ints) as a tuple, checked."""
    lengths: Any = shape
    if isinstance(shape, int | np.integer) or getattr(shape, "ndim", None) == 0:
        lengths = (shape,)  # a 0-d array (or tracer) is one length
    try:
        dims = tuple(index_of(d, f"{where}: shape") for d in lengths)
    except TypeError as err:
        if type(err) is not TypeError:
            raise
        raise TypeError(
            f"{where}: shape must be an int or a sequence of ints, got {shape!r}"
        ) from None
    if any(d < 0 for d in dims):
        raise ValueError(f"{where}: negative dimensions are not allowed, got {dims}")
    return dims
