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

import sys
from collections.abc import Callable, Sequence
from typing import Any, Final

import numpy as np

from typelattice import _config, _core, _devices, _dtypes
from typelattice._backends._backend import NUMPY, Backend, named
from typelattice._basearray import Array
from typelattice._promotion import _speedups

__all__ = [
    "ArrayImpl",
    "BackendArray",
    "check_mixed",
    "from_native",
    "from_numpy",
    "from_python_or_numpy",
    "native_result",
    "mixed_error",
    "operand",
    "place",
    "placed",
    "placement",
    "wrap",
]


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

    @property
    def backend(self) -> str:
        """The library computing this array: ``'numpy'``."""
        return "numpy"

    def to_device(self, device: Any, /, *, stream: Any = None) -> Array:
        """This array on ``device``: itself on the CPU (the NumPy backend's
        only device).

        Args:
          device: ``'cpu'``, ``typelattice.devices()[0]`` or None.
          stream: accepted for the Array API; must be None.

        Returns:
          This array.

        Raises:
          ValueError: another device (another library holds arrays there:
            ``asarray(x, backend='torch', device='cuda')``).

        >>> import typelattice.numpy as tnp
        >>> x = tnp.ones(2)
        >>> x.to_device('cpu') is x
        True
        """
        _no_stream(stream)
        name = _devices.device_name(device)
        if name is None or name == "cpu":
            return self
        raise ValueError(
            f"to_device: the NumPy backend holds arrays on the CPU only, not "
            f"on {name!r}; another library holds them there: "
            f"typelattice.numpy.asarray(x, backend='torch', device={name!r}) "
            f"or typelattice.device_put(x, {name!r}, backend='torch')"
        )

    def __array__(
        self, dtype: Any = None, copy: bool | None = None
    ) -> np.ndarray[Any, Any]:
        return _as_numpy(self._value, dtype, copy)

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


def _as_numpy(
    value: np.ndarray[Any, Any], dtype: Any, copy: bool | None
) -> np.ndarray[Any, Any]:
    """An array's values for NumPy's ``__array__(dtype, copy)``: read-only
    unless copied; ValueError where a conversion must copy and ``copy`` is
    False."""
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
    if t is BackendArray:
        # Never converted to NumPy behind the caller's back.
        raise TypeError(
            f"{fname}: argument {pos} is an array of the {x.backend} backend "
            f"(on {x.device!r}), which this function does not take yet; "
            "convert it explicitly: typelattice.numpy.asarray(x, backend='numpy')"
        )
    if isinstance(x, bool | int | float | complex) and not isinstance(x, np.generic):
        # Subclasses of Python scalars (IntEnum...) are strong, as in JAX.
        value = _core.from_numpy(np.asarray(x), fname, pos)
        return value, _core.aval(value.dtype, False)
    if hasattr(x, "__array__") and not isinstance(x, list | tuple | str):
        value = _core.from_array_like(x, fname, pos)
        return value, _core.aval(value.dtype, False)
    raise _core._not_arraylike(fname, pos, x)  # pyright: ignore[reportUnknownArgumentType]


# -- arrays of other libraries ------------------------------------------------


class BackendArray(Array):
    """An Array holding another library's array (a torch tensor, a CuPy
    array, a Dask array), computed by that library's backend.

    Not public: made by ``typelattice.numpy.asarray`` of such an array, by
    ``backend=``/``device=`` of the creation functions, and by every
    primitive applied to such Arrays. The dtype and weak flag are the
    lattice's (``_key``, interned as :class:`ArrayImpl`'s), the shape the
    abstract evaluation's; the native value (``_value``) has that dtype and
    shape, and nothing changes it: no method writes to it, and the
    libraries get it read-only where they can (NumPy) or as it is (DLPack,
    which has no read-only flag in torch or CuPy).
    """

    __slots__ = ("_backend", "_device", "_key", "_shape", "_value")

    _value: Any
    _key: _core.Aval
    _shape: tuple[int, ...]
    _backend: Backend
    _device: str

    def __init__(self) -> None:
        raise TypeError(
            "arrays of other libraries are made with typelattice.numpy.asarray("
            "x) or with backend= of the creation functions"
        )

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element type, an ``np.dtype``."""
        return self._key[0]

    @property
    def shape(self) -> tuple[int, ...]:
        """The length of each axis, a tuple of ints."""
        return self._shape

    @property
    def weak_type(self) -> bool:
        """Whether the array is weak (see :attr:`Array.weak_type`)."""
        return self._key[1]

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for d in self._shape:
            n *= d
        return n

    @property
    def nbytes(self) -> int:
        """The size of the elements in bytes."""
        return self.size * self._key[0].itemsize

    @property
    def _promotion_key(self) -> _core.Aval:
        return self._key

    @property
    def backend(self) -> str:
        """The library computing this array: ``'torch'``, ``'cupy'``,
        ``'dask'``..."""
        return self._backend.name

    @property
    def device(self) -> str:  # type: ignore[override]
        """The device holding the data, as the library names it (``'cpu'``,
        ``'cuda:0'``): the Array API's ``x.device``."""
        return self._device

    def devices(self) -> set[Any]:
        """The devices holding the data: ``{x.device}``."""
        return {self._device}

    def to_device(self, device: Any, /, *, stream: Any = None) -> Array:
        """This array on another device of its backend (itself when it is
        there already).

        Args:
          device: ``'cpu'``, ``'cuda'``, ``'cuda:1'``, a ``torch.device`` or
            a CuPy device.
          stream: accepted for the Array API; must be None.

        Returns:
          The array on ``device``, with this array's dtype and weak flag.

        Raises:
          ValueError: a stream was given.
        """
        _no_stream(stream)
        return placed(self, self._backend, _devices.device_name(device))

    def __array__(
        self, dtype: Any = None, copy: bool | None = None
    ) -> np.ndarray[Any, Any]:
        # The library's conversion: a copy from a GPU, a computation for
        # Dask, the memory itself for a torch tensor on the CPU (read-only).
        value: np.ndarray[Any, Any] = np.asarray(self._backend.to_numpy(self._value))
        return _as_numpy(value, dtype, copy)

    def __dlpack__(self, **kwargs: Any) -> Any:
        # The library's own export: DLPack has no read-only flag that torch
        # or CuPy honour; a consumer must not write to it (docs/backends.md).
        return self._value.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._value.__dlpack_device__()  # type: ignore[no-any-return]

    def block_until_ready(self) -> Array:
        """This array once its library has computed it (a torch tensor's
        CUDA device synchronised; a Dask array stays lazy)."""
        if self._device.startswith("cuda") and self._backend.name == "torch":
            torch: Any = sys.modules["torch"]  # (loaded: it made the tensor)
            torch.cuda.synchronize(self._device)
        return self

    def __repr__(self) -> str:
        name = self._key[0].name
        weak = ", weak_type=True" if self._key[1] else ""
        where = f"backend={self._backend.name!r}, device={self._device!r}"
        if self.size > _REPR_MAX:
            # Not computed (a Dask array of 10**9 elements stays lazy).
            return f"Array(shape={self._shape}, dtype={name}{weak}, {where})"
        value = np.asarray(self)
        if value.size == 0:
            return f"Array([], shape={self._shape}, dtype={name}{weak}, {where})"
        body = np.array2string(value, separator=", ", prefix="Array(")
        return f"Array({body}, dtype={name}{weak}, {where})"

    def __str__(self) -> str:
        return str(np.asarray(self))

    def __format__(self, spec: str) -> str:
        if not self._shape:
            return format(np.asarray(self).item(), spec)
        return format(str(self), spec)

    def tobytes(self, order: str = "C") -> bytes:
        return np.asarray(self).tobytes(order=order)  # type: ignore[arg-type]

    def __reduce__(self) -> Any:
        # A round trip through NumPy: unpickled on the same backend and
        # device (the library must be installed where it is loaded).
        return (
            _rebuild_native,
            (self._backend.name, self._device, np.asarray(self), self._key[1]),
        )

    def __copy__(self) -> BackendArray:
        return self

    def __deepcopy__(self, memo: Any) -> BackendArray:
        return self


#: Above this many elements the repr of another library's array shows no
#: values (computing them may take long: a Dask array).
_REPR_MAX: Final = 1000


def _no_stream(stream: Any) -> None:
    if stream is not None:
        raise ValueError(
            f"to_device: stream={stream!r} is not supported; pass stream=None"
        )


def _rebuild_native(
    name: str, device: str, value: np.ndarray[Any, Any], weak: bool
) -> BackendArray:
    backend = named(name)
    return native_result(
        backend.from_numpy(value, device),
        _core.aval(value.dtype, weak),
        value.shape,
        backend,
        device,
    )


_new_native = object.__new__


def native_result(
    value: Any, key: _core.Aval, shape: tuple[int, ...], backend: Backend, device: str
) -> BackendArray:
    """A :class:`BackendArray` of a native value known to be of ``key``'s
    dtype and of ``shape``, on ``device``."""
    out: BackendArray = _new_native(BackendArray)
    out._value = value
    out._key = key
    out._shape = shape
    out._backend = backend
    out._device = device
    return out


def from_native(
    value: Any, backend: Backend, weak: bool = False, where: str = "asarray"
) -> BackendArray:
    """A :class:`BackendArray` of a library's array, as it is (no copy).

    Raises:
      TypeError: its dtype is not one of typelattice's.
    """
    dtype_of, shape_of, device_of = (
        backend.dtype_of,
        backend.shape_of,
        backend.device_of,
    )
    assert dtype_of is not None and shape_of is not None and device_of is not None
    dt = dtype_of(value)
    if dt not in _dtypes.ALL_SET:
        raise TypeError(f"{where}: unsupported dtype {dt} for an Array")
    shape = tuple(int(d) for d in shape_of(value))
    return native_result(value, _core.aval(dt, weak), shape, backend, device_of(value))


def placed(x: Array, backend: Backend, device: str | None) -> Array:
    """``x`` (an ArrayImpl or a BackendArray) on ``backend`` and ``device``
    (None: the backend's default device, or ``x``'s own when it is on that
    backend already): the data copied across when it is elsewhere.

    Raises:
      ValueError: ``x`` is not concrete (a tracer).
    """
    t = type(x)
    if t is BackendArray:
        assert isinstance(x, BackendArray)
        if x._backend is backend:
            if device is None or device == x._device:
                return x
            put = backend.put
            assert put is not None
            return from_native(put(x._value, device), backend, x._key[1])
        host: np.ndarray[Any, Any] = np.asarray(x)
        key = x._key
    elif isinstance(x, ArrayImpl):
        host, key = x._value, x._key
    else:
        return x  # a tracer: placed by the program that computes it
    if backend is NUMPY:
        if device not in (None, "cpu"):
            raise ValueError(
                f"the NumPy backend holds arrays on the CPU only, not on "
                f"{device!r}: pass backend='torch' or 'cupy' with that device"
            )
        return from_numpy(np.array(host), key[1]) if t is BackendArray else x
    out = from_native(backend.from_numpy(host, device), backend, key[1])
    if out._key is not key:  # (a library's dtype, e.g. none for bfloat16)
        raise TypeError(
            f"the {backend.name} backend gave {out.dtype} for an array of "
            f"{key[0]}; its from_numpy must keep the dtype"
        )
    return out


#: The backend of each library's device objects, by their type's module.
_DEVICE_LIBRARIES: Final = {"torch": "torch", "cupy": "cupy"}


def placement(
    device: Any, backend: str | None, like: Any = None, where: str = "asarray"
) -> tuple[Backend, str | None] | None:
    """Where an array made by a creation function goes: ``(backend,
    device)``, or None for the NumPy backend (the usual case, decided
    without a lookup).

    ``backend`` and ``device`` as given; else ``like``'s (an Array of
    another library: ``zeros_like`` follows its argument); else a
    library's device object decides (a ``torch.device`` is torch's); else
    the default backend and device (:func:`typelattice.default_backend`).

    Raises:
      ValueError: an unknown backend, or a device the NumPy backend lacks
        with no backend named.
    """
    name = _devices.device_name(device)
    if backend is None:
        if type(like) is BackendArray:
            return like._backend, like._device if name is None else name
        if name is None or name == "cpu":
            state = _config.current()
            if state.default_backend == "numpy":
                return None
            backend = state.default_backend
            if name is None:
                name = state.default_device
        else:
            top = type(device).__module__.partition(".")[0]
            backend = _DEVICE_LIBRARIES.get(top)
            if backend is None:
                state = _config.current()
                if state.default_backend == "numpy":
                    raise ValueError(
                        f"{where}: device={name!r} is not a device of the NumPy "
                        "backend: name the library holding it, backend='torch' "
                        "or backend='cupy' (or set typelattice.default_backend)"
                    )
                backend = state.default_backend
    found = named(backend)
    if found is NUMPY:
        if name not in (None, "cpu"):
            raise ValueError(
                f"{where}: the NumPy backend holds arrays on the CPU only, not "
                f"on {name!r}"
            )
        return None
    return found, name


def place(x: Array, where: tuple[Backend, str | None] | None) -> Array:
    """``x`` moved as :func:`placement` decided (None: NumPy's)."""
    if where is None:
        return x if type(x) is not BackendArray else placed(x, NUMPY, None)
    return placed(x, where[0], where[1])


def _where(x: Any) -> str:
    if type(x) is BackendArray:
        return f"{x._backend.name} on {x._device!r}"
    return "numpy on 'cpu'"


def mixed_error(fname: str, first: BackendArray, other: Any) -> TypeError:
    """The error of operands of two backends or devices in one operation."""
    return TypeError(
        f"{fname}: operands on two backends or devices, {_where(first)} "
        f"(shape {first.shape}) and {_where(other)} (shape "
        f"{tuple(np.shape(other))}); nothing moves between them unasked: "
        f"move one with x.to_device({first._device!r}) or "
        f"typelattice.numpy.asarray(x, backend={first._backend.name!r}, "
        f"device={first._device!r}) (or typelattice.device_put); NumPy "
        "arrays and Python scalars join other backends as 0-d values only"
    )


def check_mixed(fname: str, args: Sequence[Any], *, held: bool = True) -> None:
    """Refuse the arguments of one operation when an array of another
    library is among them with an array of another backend or device, or
    with a NumPy array (or, with ``held``, a NumPy-held Array) of more than
    0 dimensions. (``typelattice.lax``'s functions take NumPy-held Arrays:
    the constants of rules and formulations are such Arrays.)

    Raises:
      TypeError: naming both backends and devices, and the fix.
    """
    first: BackendArray | None = None
    for x in args:
        if type(x) is BackendArray:
            first = x
            break
    if first is None:
        return
    for x in args:
        if type(x) is BackendArray:
            if x._backend is not first._backend or x._device != first._device:
                raise mixed_error(fname, first, x)
        elif held and isinstance(x, ArrayImpl) and x._value.ndim:
            raise mixed_error(fname, first, x)
        elif isinstance(x, np.ndarray) and x.ndim:  # pyright: ignore[reportUnknownMemberType]
            raise mixed_error(fname, first, x)
