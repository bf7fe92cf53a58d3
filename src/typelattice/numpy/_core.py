"""The machinery every operation of the namespace shares.

An operation is written in two parts: a *plan*, which depends only on the
operands' abstract values (dtype and weak flag) and the configuration, and
says which dtype NumPy computes in and what the result's dtype and weak flag
are; and a NumPy call on operands already converted to that dtype. Plans are
cached per configuration, so after the first call an operation costs one dict
lookup on top of NumPy's own work, and NumPy's promotion never decides a
dtype.
"""

# Package-internal: reads the arrays' underscored slots and the promotion
# engine's private functions by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn

import numpy as np

from typelattice import _config, _dtypes, _promotion

if TYPE_CHECKING:
    from typelattice.numpy._array import ArrayImpl

__all__ = [
    "Aval",
    "RankPromotionWarning",
    "check_rank",
    "convert",
    "ignore_fp_errors",
    "operand",
    "python_scalar_to",
    "result_of",
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


class RankPromotionWarning(UserWarning):
    """Operands of different ranks were broadcast (``rank_promotion='warn'``)."""


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


# -- operands ---------------------------------------------------------------


_X64_FIX = (
    "To keep it, turn on 64-bit mode (typelattice.enable_x64(), or "
    "typelattice.config.update('enable_x64', True))."
)


def _where(where: str | Callable[[], str]) -> str:
    return where if isinstance(where, str) else where()


def checked_cast(
    value: np.ndarray[Any, Any],
    dt: DType,
    where: str | Callable[[], str],
    fix: str,
) -> np.ndarray[Any, Any]:
    """``value`` converted to ``dt``, refusing to change an integer's value or
    to turn a finite float into inf (SPEC §4); ``fix`` ends the message.

    ``where`` starts the message; a function building it is called only when
    the conversion fails (the hot paths must not format dtypes per call).
    """
    if value.dtype == dt:
        return value
    kind = _dtypes.kind_of(dt)
    src = value.dtype.kind
    if kind in "iu" and src in "iu" and value.size:  # bools fit every integer
        info = _dtypes.iinfo(dt)
        lo, hi = int(value.min()), int(value.max())
        if lo < int(info.min) or hi > int(info.max):
            bad = lo if lo < int(info.min) else hi
            raise OverflowError(
                f"{_where(where)}: value {bad} does not fit in {dt} (range "
                f"{int(info.min)}..{int(info.max)}). {fix}"
            )
    out: np.ndarray[Any, Any] = ignore_fp_errors(value.astype, dt)
    if kind in "fc" and src in "fciu" and value.size:
        grew = np.isfinite(value) & ~np.isfinite(out)
        if grew.any():
            bad = value[grew].flat[0]
            raise OverflowError(
                f"{_where(where)}: value {bad} overflows {dt} (it would become "
                f"inf). {fix}"
            )
    return out


def weak_to(value: np.ndarray[Any, Any], dt: DType, where: str) -> Any:
    """A weak array's values in ``dt``, refusing to change them, like a Python
    scalar's (a weak array is a Python scalar that became an array)."""
    return checked_cast(
        value,
        dt,
        lambda: f"{where} (a weak {value.dtype} array converted to {dt})",
        "Cast explicitly, e.g. x.astype('int32'), if the change is intended.",
    )


def narrow_to_32(value: np.ndarray[Any, Any], where: str) -> np.ndarray[Any, Any]:
    """A 64-bit NumPy array in its 32-bit form, refusing to change values.

    Note: JAX silently wraps integers and turns large floats into inf here;
    we raise instead (SPEC §4).
    """
    narrow = _dtypes.TO_32[value.dtype]
    return checked_cast(
        value,
        narrow,
        lambda: f"{where} ({value.dtype} becomes {narrow} with enable_x64=False)",
        _X64_FIX,
    )


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


def operand(x: Any, fname: str, pos: int) -> tuple[Any, object]:
    """``(value, key)`` of one argument of an operation.

    The value is an ndarray or a Python scalar. The key decides the plan: an
    array's ``(dtype, weak)`` pair, or the type of a Python scalar.

    Raises:
      TypeError: lists, tuples, strings, objects, non-numeric arrays (as JAX).
    """
    t = type(x)  # pyright: ignore[reportUnknownVariableType]
    if t is _ArrayImpl[0]:
        return x._value, x._key
    if t in _PY_SCALARS or t is bool:
        return x, t
    if isinstance(x, np.ndarray | np.generic):
        value = from_numpy(x, fname, pos)
        return value, aval(value.dtype, False)
    if isinstance(x, _ArrayImpl[0]):
        return x._value, x._key
    if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
        # Subclasses of Python scalars (IntEnum...) are strong, as in JAX.
        value = from_numpy(np.asarray(x), fname, pos)
        return value, aval(value.dtype, False)
    if hasattr(x, "__array__") and not isinstance(x, list | tuple | str):
        value = from_numpy(np.asarray(x), fname, pos)
        return value, aval(value.dtype, False)
    raise _not_arraylike(fname, pos, x)  # pyright: ignore[reportUnknownArgumentType]


# Filled by _array at import (a one-element list avoids an import cycle).
_ArrayImpl: list[type[ArrayImpl]] = []


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


def python_scalar_to(value: Any, dt: DType, fname: str) -> Any:
    """A Python scalar converted to ``dt``, refusing to change its value.

    Note: JAX wraps integers that do not fit (``uint8_array + 1000``) and
    lets finite floats become inf; we raise (SPEC §4).
    """
    kind = _dtypes.kind_of(dt)
    t = type(value)  # pyright: ignore[reportUnknownVariableType]
    if kind in "iu" and t is int:
        info = _dtypes.iinfo(dt)
        if not int(info.min) <= value <= int(info.max):
            raise OverflowError(
                f"{fname}: Python int {value} does not fit in {dt} (range "
                f"{int(info.min)}..{int(info.max)}). Use an array of a wider "
                f"dtype, e.g. x.astype('int32'), or "
                f"typelattice.numpy.asarray({value}, dtype=...) explicitly."
            )
        return np.asarray(value, dt)
    if kind in "iu" and t is bool:
        return np.asarray(value, dt)
    if t is int and abs(value) > 2**1023:
        raise OverflowError(
            f"{fname}: Python int {value} is too large for {dt}; it would "
            "become inf. Compute with Python floats or a wider dtype explicitly."
        )
    out = ignore_fp_errors(np.asarray, value, dt)
    if kind in "fc":
        if t is complex:
            finite = math.isfinite(value.real) and math.isfinite(value.imag)
            got = complex(out)
            grew = not (math.isfinite(got.real) and math.isfinite(got.imag))
        else:
            finite = math.isfinite(value)
            grew = not math.isfinite(complex(out).real)
        if finite and grew:
            became = "inf" if np.isinf(out).any() else "nan"
            raise OverflowError(
                f"{fname}: Python {t.__name__} {value} cannot be represented in "
                f"{dt} (it would become {became}). Use a wider dtype "
                f"explicitly, e.g. x.astype('float32')."
            )
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


def broadcast_error(fname: str, shapes: Sequence[tuple[int, ...]]) -> NoReturn:
    shown = " and ".join(str(s) for s in shapes)
    raise ValueError(
        f"{fname}: shapes {shown} do not broadcast together: each axis must "
        "match or be 1 (counting from the last)"
    )


# -- converting to the computation dtype ------------------------------------


def convert(value: Any, dt: DType, fname: str) -> Any:
    """One operand's value in dtype ``dt`` (Python scalars checked)."""
    t = type(value)  # pyright: ignore[reportUnknownVariableType]
    if t is np.ndarray:
        if value.dtype == dt:
            return value
        return ignore_fp_errors(value.astype, dt)
    return python_scalar_to(value, dt, fname)


def index_of(x: Any, what: str) -> int:
    """``operator.index`` with a message naming the argument."""
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"{what} must be an integer, got {x!r}") from None
