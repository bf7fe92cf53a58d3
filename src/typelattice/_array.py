"""The NumPy-backed array: :class:`ArrayImpl`, and making one from NumPy.

An ``ArrayImpl`` holds a NumPy array and a ``weak_type`` flag; its operators
and methods are :class:`~typelattice._basearray.Array`'s, the namespace's
functions.

The array's memory is its own or another Array's (reshape, transpose, slices
and other primitives' results are views, as NumPy's), never memory a caller
can still change: a NumPy argument whose memory an Array would share is
copied when it becomes an operand (:func:`operand`, ``_core.unshared``).
It is never handed out writable: NumPy, DLPack and pickle get read-only
ndarrays over it whose last base refuses writable buffers (:data:`read_only`),
so no NumPy call can turn the flag back on; and NumPy's ufunc methods and
``out=`` are refused (``ufunc.at`` writes even into read-only memory).

This module and :mod:`typelattice._core` are the array layer: tracing
(:mod:`typelattice._tracing`) and the namespace (:mod:`typelattice.numpy`)
build on them, and they import neither.
"""

# Package-internal: reads the arrays' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from typelattice import _config, _core, _dtypes
from typelattice._basearray import Array
from typelattice._promotion import _speedups

__all__ = ["ArrayImpl", "from_numpy", "from_python_or_numpy", "operand", "wrap"]


class ArrayImpl(Array):
    """The NumPy-backed concrete :class:`Array`.

    Not public: arrays are made with ``typelattice.numpy.asarray`` (and
    checked with ``isinstance(x, tnp.Array)``). ``ArrayImpl(value)`` copies
    ``value`` and keeps its dtype.
    """

    __slots__ = ("_key", "_value")

    _value: np.ndarray[Any, Any]
    _key: _core.Aval

    def __init__(self, value: np.ndarray[Any, Any], weak_type: bool = False) -> None:
        # Not a public constructor (typelattice.numpy.asarray is): it keeps
        # the dtype as it is, but never the caller's memory.
        raw = np.asarray(value)
        if raw.dtype not in _dtypes.ALL_SET:
            raise TypeError(f"unsupported dtype {raw.dtype} for an Array")
        if not isinstance(value, list | tuple | int | float | complex):
            raw = raw.copy()  # np.asarray made new memory only for those
        self._value = raw
        self._key = _core.aval(raw.dtype, bool(weak_type))

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element type, an ``np.dtype``."""
        return self._key[0]

    @property
    def shape(self) -> tuple[int, ...]:
        """The length of each axis, a tuple of ints."""
        shape: tuple[int, ...] = self._value.shape
        return shape

    @property
    def weak_type(self) -> bool:
        """Whether the array is weak (see :attr:`Array.weak_type`)."""
        return self._key[1]

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return self._value.ndim

    @property
    def size(self) -> int:
        """The number of elements."""
        return self._value.size

    @property
    def nbytes(self) -> int:
        """The size of the elements in bytes."""
        return self._value.nbytes

    @property
    def _promotion_key(self) -> _core.Aval:
        # Lets typelattice.result_type cache answers for these arrays.
        return self._key

    def __array__(
        self, dtype: Any = None, copy: bool | None = None
    ) -> np.ndarray[Any, Any]:
        value = self._value
        if dtype is not None and np.dtype(dtype) != value.dtype:
            if copy is False:
                raise ValueError(
                    f"converting an Array of dtype {value.dtype} to {dtype} "
                    "makes a copy, and copy=False forbids it; pass copy=None "
                    "(or convert first: x.astype(...))"
                )
            return value.astype(dtype)
        if copy:
            return value.copy()
        return read_only(value)

    def __dlpack__(self, **kwargs: Any) -> Any:
        # Exported read-only: consumers must not change an immutable array.
        return read_only(self._value).__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._value.__dlpack_device__()

    def __bool__(self) -> bool:
        return bool(self._value)

    # Python values out of the memory directly: nothing to hand out read-only.
    def item(self, *args: int) -> bool | int | float | complex:
        return self._value.item(*args)  # type: ignore[no-any-return]

    def tolist(self) -> Any:
        return self._value.tolist()

    def tobytes(self, order: str = "C") -> bytes:
        return self._value.tobytes(order=order)  # type: ignore[arg-type]

    def __float__(self) -> float:
        return float(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __complex__(self) -> complex:
        return complex(self._value)

    def __len__(self) -> int:
        if not self._value.ndim:
            raise TypeError("len() of an unsized (0-d) array")
        return len(self._value)

    def __repr__(self) -> str:
        value = self._value
        name = value.dtype.name
        body = np.array2string(value, separator=", ", prefix="Array(")
        weak = ", weak_type=True" if self._key[1] else ""
        if value.size == 0:  # "[]" alone would hide the shape
            return f"Array([], shape={value.shape}, dtype={name}{weak})"
        return f"Array({body}, dtype={name}{weak})"

    def __str__(self) -> str:
        return str(self._value)

    def __format__(self, spec: str) -> str:
        if not self._value.ndim:
            return format(self._value.item(), spec)
        return format(str(self), spec)

    def __reduce__(self) -> Any:
        # Read-only, so pickle's out-of-band buffers (protocol 5) are too.
        return (_rebuild, (read_only(self._value), self._key[1]))

    def __copy__(self) -> ArrayImpl:
        return self

    def __deepcopy__(self, memo: Any) -> ArrayImpl:
        return self


def _rebuild(value: np.ndarray[Any, Any], weak: bool) -> ArrayImpl:
    if value.base is None and value.flags.owndata:  # unpickled into new memory
        return from_numpy(value, weak)
    # A view of a buffer the loader was given (pickle protocol 5), which its
    # caller still holds.
    return ArrayImpl(value, weak)


class _ReadOnlyMemory:
    """An Array's memory as NumPy gets it without the C extension: through
    ``__array_interface__``, marked read-only.

    It has no buffer, so NumPy cannot make an array over it writable. (The
    extension's ``ReadOnlyMemory`` also hides the ndarray it holds; this
    one keeps it in a private slot.)
    """

    __slots__ = ("_value",)

    def __init__(self, value: np.ndarray[Any, Any]) -> None:
        self._value = value  # keeps the memory alive

    @property
    def __array_interface__(self) -> dict[str, Any]:
        interface = self._value.__array_interface__
        interface["data"] = (interface["data"][0], True)  # read-only
        # Raw bytes: NumPy cannot read back the type strings of ml_dtypes'
        # types ('<f1'); the caller views them as the dtype.
        interface["typestr"] = f"|V{self._value.itemsize}"
        del interface["descr"]
        return interface


def _read_only_view(value: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return np.asarray(_ReadOnlyMemory(value)).view(value.dtype)


read_only: Callable[[np.ndarray[Any, Any]], np.ndarray[Any, Any]] = (
    _read_only_view if _speedups is None else _speedups.read_only_view
)
"""A read-only ndarray of an Array's memory, as NumPy and other libraries
get it (``value``: the Array's ndarray).

NumPy lets whoever holds an ndarray that owns its memory turn its WRITEABLE
flag back on, and reaches that ndarray from every view of it through
``.base``. So what is handed out is never the Array's ndarray nor a view of
it: it is an ndarray over the same memory whose last base is an object that
refuses writable buffers (which NumPy asks for before setting WRITEABLE) and
does not give the Array's ndarray out.
"""


_new_object = object.__new__


def wrap(value: Any, key: _core.Aval) -> ArrayImpl:
    """An ArrayImpl from a NumPy result already in ``key``'s dtype."""
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    out: ArrayImpl = _new_object(ArrayImpl)
    out._value = value
    out._key = key
    return out


def from_numpy(value: np.ndarray[Any, Any], weak: bool = False) -> ArrayImpl:
    """Wrap an ndarray whose dtype is in the universe (any weak flag)."""
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    return wrap(value, _core.aval(value.dtype, weak))


def from_python_or_numpy(a: Any, where: str) -> ArrayImpl | None:
    """``a`` as :func:`typelattice.numpy.asarray` converts it when it is a
    Python scalar (weak, of its kind's default dtype; a bool is strong) or
    a NumPy array or scalar (canonical, copied if it may share the caller's
    memory); None for anything else.

    Raises:
      OverflowError, TypeError: as ``asarray`` (errors start with ``where``).
    """
    t = type(a)  # pyright: ignore[reportUnknownVariableType]
    if t is bool:
        return from_numpy(_core.python_scalar_to(a, np.dtype(bool), where, "dtype"))
    kind = _core._PY_SCALARS.get(t)  # pyright: ignore[reportUnknownArgumentType]
    if kind is not None:
        dt = _dtypes.default_dtype(kind, _config.current().enable_x64)
        return from_numpy(_core.python_scalar_to(a, dt, where, "default"), weak=True)
    if isinstance(a, np.ndarray | np.generic):
        return from_numpy(_core.unshared(_core.from_numpy(a, where, 0), a))
    return None


def operand(
    x: Any, fname: str, pos: int, *, borrow: bool = False
) -> tuple[Any, object]:
    """``(value, key)`` of one argument of an operation.

    The value is an ndarray or a Python scalar; an ndarray is never memory
    of a NumPy array the caller passed (that one is copied), so results may
    view it as they view an Array's memory. With ``borrow``, a NumPy
    array's memory is taken as it is, for a caller that computes new memory
    from it and returns neither it nor a view of it (the elementwise
    functions: ``numpy._elementwise.result``); no copy. The key decides the
    plan: an array's ``(dtype, weak)`` pair, or the type of a Python scalar.

    Raises:
      TypeError: lists, tuples, strings, objects, non-numeric arrays (as JAX).
    """
    t = type(x)  # pyright: ignore[reportUnknownVariableType]
    if t is ArrayImpl:
        return x._value, x._key
    if t in _core._PY_SCALARS or t is bool:
        return x, t
    if isinstance(x, np.ndarray):
        # New memory: an Array made of it (and its views) must not change
        # when the caller writes to its array.
        value = _core.from_numpy(x, fname, pos)
        if not borrow:
            value = _core.unshared(value, x)
        return value, _core.aval(value.dtype, False)
    if isinstance(x, np.generic):
        value = _core.from_numpy(x, fname, pos)
        return value, _core.aval(value.dtype, False)
    if isinstance(x, ArrayImpl):
        return x._value, x._key
    if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
        # Subclasses of Python scalars (IntEnum...) are strong, as in JAX.
        value = _core.from_numpy(np.asarray(x), fname, pos)
        return value, _core.aval(value.dtype, False)
    if hasattr(x, "__array__") and not isinstance(x, list | tuple | str):
        value = _core.from_array_like(x, fname, pos)
        return value, _core.aval(value.dtype, False)
    raise _core._not_arraylike(fname, pos, x)  # pyright: ignore[reportUnknownArgumentType]
