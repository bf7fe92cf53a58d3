"""Making arrays: asarray/array, zeros/ones/full/empty and their ``_like``
forms, ranges, eye, the scalar types (``tnp.int8(3)``) and ``astype``."""

# Package-internal: reads the arrays' underscored slots and _core's tables by
# design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import builtins
import functools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

import numpy as np
from numpy.lib.array_utils import normalize_axis_tuple

from typelattice import _array, _config, _core, _dtypes, _promotion
from typelattice._array import (
    ArrayImpl,
    BackendArray,
    from_numpy,
    from_python_or_numpy,
    wrap,
)
from typelattice._backends import Backend, of_native
from typelattice._basearray import Array
from typelattice._lax._elementwise import (
    Check,
    add_p,
    convert_element_type_p,
    div_p,
    eq_p,
    floor_p,
    mul_p,
    select_n_p,
    sub_p,
)
from typelattice._lax._primitive import broadcast_in_dim_p, reshape_p
from typelattice._lax._reductions import reduce_or_p
from typelattice._lax._structural import concatenate_p, iota_p, slice_p, transpose_p
from typelattice._tracing.ad import JVPTracer

_PY: Final = (builtins.int, builtins.float, builtins.complex)

_F = TypeVar("_F", bound=Callable[..., Any])


def _on_device(fn: _F) -> _F:
    """``fn`` (a creation function) taking ``device=`` and ``backend=``:
    its NumPy result moved to the backend and device that
    :func:`typelattice._array.placement` decides (a ``_like`` function's
    argument's, unless given; else the default backend's)."""
    like = fn.__name__.endswith("_like")
    name = fn.__name__

    @functools.wraps(fn)
    def made(
        *args: Any, device: Any = None, backend: str | None = None, **kwargs: Any
    ) -> Any:
        proto = (args[0] if args else kwargs.get("a")) if like else None
        while isinstance(proto, JVPTracer):  # (its value's backend)
            proto = proto.primal
        where = _array.placement(device, backend, proto, name)
        out = fn(*args, **kwargs)
        if where is None:
            return out
        if isinstance(out, tuple):
            return tuple(_array.place(o, where) for o in out)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        return _array.place(out, where)

    return made  # type: ignore[return-value]


def _requested(dtype: Any, where: str) -> np.dtype[Any]:
    """An explicitly requested dtype, with ``explicit_x64_dtypes`` applied.
    Python's ``int``, ``float`` and ``complex`` stand for the default types,
    as in JAX: they are no request for a 64-bit type."""
    try:
        dt = _dtypes.dtype(dtype, canonicalize=False)
    except TypeError as err:  # not a dtype: say which call's argument
        _core.reraise_named(where, err)
    state = _config.current()
    if dt in _dtypes.TO_32 and not state.enable_x64:
        if not _dtypes.is_explicit(dtype):
            return _dtypes.TO_32[dt]
        return _dtypes.explicit_x64(dt, state.explicit_x64_dtypes, where)
    return dt


def _leaves(obj: Any, out: list[Any]) -> None:
    if isinstance(obj, list | tuple):
        for item in obj:  # pyright: ignore[reportUnknownVariableType]
            _leaves(item, out)
    else:
        out.append(obj)


def asarray(
    a: Any,
    dtype: Any = None,
    order: str | None = None,
    *,
    copy: bool | None = None,
    device: Any = None,
    backend: str | None = None,
) -> Array:
    """Convert ``a`` to an :class:`Array`.

    Python scalars give weak arrays (``asarray(2)`` is a weak int32 in 32-bit
    mode), ``True`` a strong bool; NumPy arrays and lists give strong arrays
    of their canonical dtype; an explicit ``dtype`` gives a strong array.
    NumPy input is copied, so later changes to it do not show here.

    An array of another library (a torch tensor, a CuPy array, a Dask
    array) gives an Array of that library's backend, on its device,
    holding the array itself when its dtype is kept (no copy: the caller
    must not write to it afterwards, or pass ``copy=True``); a 64-bit one
    is narrowed in 32-bit mode, values checked, as a NumPy array is. With
    ``backend=`` or ``device=`` the Array is moved there (a copy between
    libraries or devices); without them an Array stays where it is and
    other data goes to the default backend
    (:func:`typelattice.default_backend`), NumPy unless set.

    Args:
      a: a Python scalar, a (nested) list or tuple of numbers and arrays, a
        NumPy array or scalar, an Array, or an object with ``__array__``.
      dtype: the dtype wanted; the values must fit it unchanged (an
        explicit 64-bit dtype in 32-bit mode follows
        ``explicit_x64_dtypes``).
      order: accepted for NumPy compatibility; ignored.
      copy: NumPy arrays and NumPy-held Arrays: accepted for NumPy
        compatibility (arrays are immutable, so copying is never
        observable); another library's array, and an Array holding one, is
        copied on its device with True, held as it is otherwise.
      device: the device of the result (``'cpu'``, ``'cuda'``,
        ``'cuda:1'``, a ``torch.device``, a CuPy device).
      backend: the library holding the result (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``).

    Returns:
      The Array (``a`` itself when it is an Array of that dtype, where
      it is asked to be).

    Raises:
      TypeError: strings, objects, or non-numeric data; complex values with
        a real ``dtype``.
      OverflowError: a value that the dtype cannot hold (an integer out of
        range, a float that would become inf, a 64-bit value in 32-bit mode),
        whether it is a Python number, a NumPy value or an Array. Rounding
        to the dtype's precision is not refused (``asarray(0.1, 'float16')``).

    >>> asarray(2)
    Array(2, dtype=int32, weak_type=True)
    >>> asarray([1, 2.5])
    Array([1. , 2.5], dtype=float32)
    >>> asarray(3, dtype='int8')
    Array(3, dtype=int8)
    """
    out = _asarray(a, dtype, copy, "asarray")
    if device is None and backend is None:
        if isinstance(a, Array) or type(out) is BackendArray:
            return out  # (an Array, or another library's array: where it is)
        return _array.place(out, _array.placement(None, None, None, "asarray"))
    return _array.place(out, _array.placement(device, backend, out, "asarray"))


def array(
    object: Any,  # noqa: A002 - NumPy's name
    dtype: Any = None,
    copy: bool = True,
    order: str | None = "K",
    ndmin: int = 0,
) -> Array:
    """Like :func:`asarray` (arrays are immutable, so copying is not observable).

    Args:
      object: what :func:`asarray` takes.
      dtype: the dtype wanted, as for :func:`asarray`.
      copy: as :func:`asarray`'s (another library's array, and an Array
        holding one, is copied on its device).
      order: accepted for NumPy compatibility; ignored.
      ndmin: the least number of dimensions; ones are prepended.

    Returns:
      The Array.

    Raises:
      TypeError, OverflowError: as :func:`asarray`.

    >>> array([[1, 2], [3, 4]], dtype='uint8')
    Array([[1, 2],
           [3, 4]], dtype=uint8)
    """
    out = _asarray(object, dtype, copy, "array")
    if ndmin > out.ndim:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out


def _asarray(
    a: Any, dtype: Any, copy: bool | None, where: str, use: str = "dtype"
) -> Array:
    # (use: what the fix in a message proposes, as _core.fix_for's.)
    target = None if dtype is None else _requested(dtype, where)
    t = type(a)  # pyright: ignore[reportUnknownVariableType]
    if isinstance(a, Array):
        given: Array = a
        if copy and isinstance(given, BackendArray):
            given = _native_copy(given)  # (it may hold a caller's array)
        if target is None or target == given.dtype:
            return given
        return convert_to(given, target, where)
    if target is None:
        # Python scalars (weak), NumPy values: converted as jit converts them.
        converted = from_python_or_numpy(a, where)
        if converted is not None:
            return converted
    elif t is bool or t in _PY:
        return from_numpy(_core.python_scalar_to(a, target, where, use))
    elif isinstance(a, np.ndarray | np.generic):
        raw = _core.from_numpy(a, where, 0)
        value = _core.checked_cast(raw, target, where, use=use)
        return from_numpy(_core.unshared(value, a))
    if isinstance(a, list | tuple):
        leaves: list[Any] = []
        _leaves(a, leaves)
        if builtins.any(isinstance(x, Array) for x in leaves):
            return _stacked(a, leaves, target, where, use)  # pyright: ignore[reportUnknownArgumentType]
        return from_numpy(_from_sequence(a, target, where, use))  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(a, str | bytes) or a is None:
        raise TypeError(
            f"{where}: cannot convert {a!r} to an array: only numbers, arrays "
            "and (nested) lists of them"
        )
    native = of_native(a)
    if native is not None:
        return _from_library(a, native, target, copy, where)
    if hasattr(a, "__array__") or hasattr(a, "__array_interface__"):
        # np.asarray, then a copy unless converting made one: such objects
        # may give their own buffer even when asked for a copy.
        raw = np.asarray(a)
        value = _core.from_numpy(raw, where, 0)
        if target is not None:
            value = _core.checked_cast(value, target, where)
        return from_numpy(_core.unshared(value, raw))
    if isinstance(a, _PY):  # subclasses of Python scalars are strong
        return _asarray(np.asarray(a), dtype, copy, where)
    raise TypeError(f"{where}: cannot convert {type(a).__name__} {a!r:.60} to an array")


def _native_copy(a: BackendArray) -> BackendArray:
    """An Array of another library sharing no memory with ``a``: copied on
    its device by its backend module's ``copy``."""
    backend = a._backend
    assert backend.copy is not None  # (a module's: named() completes it)
    value = backend.copy(a._value)
    return _array.native_result(value, a._key, a._shape, backend, a._device)


def _from_library(
    a: Any,
    backend: Backend,
    target: np.dtype[Any] | None,
    copy: bool | None,
    where: str,
) -> Array:
    """Another library's array as an Array of its backend: held as it is
    (or copied, with ``copy``), then converted to ``target`` (or, in 32-bit
    mode, a 64-bit dtype narrowed) by the backend, values checked."""
    out = _array.from_native(a, backend, False, where)
    if copy:
        out = _native_copy(out)
    if target is None:
        target = _dtypes.TO_32.get(out.dtype)
        if target is None or _config.current().enable_x64:
            return out
    return convert_to(out, target, where)


def _from_sequence(
    a: Sequence[Any], target: np.dtype[Any] | None, where: str, use: str = "dtype"
) -> Any:
    leaves: list[Any] = []
    _leaves(a, leaves)
    for leaf in leaves:
        if not isinstance(leaf, (*_PY, np.generic, np.ndarray, Array)):
            raise TypeError(
                f"{where}: lists may hold numbers and arrays, got "
                f"{type(leaf).__name__} {leaf!r:.60}"
            )
    if target is None:
        use = "default"
        if leaves:
            promoted = [_leaf_for_promotion(leaf, where) for leaf in leaves]
            target, _ = _promotion.lattice_result_type(*promoted)
        else:
            target = _dtypes.default_dtype("f")
    try:
        raw = np.array(_plain(a))
    except ValueError as err:  # ragged nesting
        _core.reraise_named(where, err)
    if raw.dtype not in _dtypes.ALL_SET:
        raise TypeError(f"{where}: cannot convert {a!r:.60} to a numeric array")
    return _core.checked_cast(raw, target, where, use=use)


def _stacked(
    a: Sequence[Any],
    leaves: list[Any],
    target: np.dtype[Any] | None,
    where: str,
    use: str,
) -> Array:
    """A (nested) list holding tracers, stacked with primitives: each leaf
    converted to the dtype (its values checked), then joined axis by axis."""
    if target is None:
        use = "default"
        promoted = [_leaf_for_promotion(leaf, where) for leaf in leaves]
        target, _ = _promotion.lattice_result_type(*promoted)
    dt: np.dtype[Any] = target

    def build(obj: Any) -> Any:
        if isinstance(obj, list | tuple):
            parts = [build(o) for o in obj]  # pyright: ignore[reportUnknownVariableType]
            shapes = {tuple(p.shape) for p in parts}
            if len(shapes) > 1:
                raise ValueError(
                    f"{where}: the list is ragged: its items have shapes "
                    f"{sorted(shapes)}"
                )
            rows = [
                reshape_p.bind(p, new_sizes=(1, *p.shape), dimensions=None)
                for p in parts
            ]
            return concatenate_p.bind(*rows, dimension=0)
        if isinstance(obj, Array):
            if obj.dtype == dt and not obj.weak_type:
                return obj
            check = Check(use, where, 0)
            return convert_element_type_p.bind(
                obj, new_dtype=dt, weak_type=False, check=check
            )
        return _asarray(obj, dt, None, where, use)

    return build(a)  # type: ignore[no-any-return]


def _plain(a: Any) -> Any:
    if isinstance(a, list | tuple):
        return [_plain(x) for x in a]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(a, Array):
        return np.asarray(a)
    return a


def _leaf_for_promotion(leaf: Any, where: str) -> Any:
    if isinstance(leaf, np.ndarray | np.generic):
        return _core.from_numpy(leaf, where, 0).dtype
    return leaf


def convert_to(
    x: Any, dtype: Any, where: str, fix: str | None = None, use: str = "dtype"
) -> Array:
    """``x`` converted to ``dtype`` given to ``where`` (a function's
    ``dtype=``): a strong result, refusing values the dtype cannot hold as
    every conversion but :func:`astype` does (see docs/semantics.md, "Data
    safety"). The message ends with ``fix`` when it is given (for an Array
    ``x``), else with a dtype that holds the values, proposed for ``use``
    (see ``_core.fix_for``: ``'dtype'``, ``'param_dtype'``...)."""
    dt = _requested(dtype, where)
    if isinstance(x, Array):
        if x.dtype == dt and not x.weak_type:
            return x
        check = Check(use, where, 0, fix)
        return convert_element_type_p.bind(  # type: ignore[no-any-return]
            x, new_dtype=dt, weak_type=False, check=check
        )
    return _asarray(x, dt, None, where, use)


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Array:
    """``x`` converted to ``dtype``: an explicit cast, so a strong result.

    This is the explicit conversion error messages suggest, and it is not
    checked for data loss (docs/semantics.md, "Data safety"): integers out
    of range wrap as in NumPy and JAX, floats become integers by truncation,
    saturated at the integer type's limits, NaN giving 0 (as JAX), large
    floats become inf, and complex to real drops the imaginary part with
    NumPy's ``ComplexWarning``.

    Args:
      x: an Array, a NumPy array or scalar, or a Python scalar.
      dtype: the dtype to convert to (an explicit 64-bit dtype in 32-bit
        mode follows ``explicit_x64_dtypes``).
      copy: accepted for the Array API; not observable.
      device: accepted for the Array API; ignored.

    Returns:
      A strong Array of ``dtype``.

    >>> astype(asarray(2), 'int8')
    Array(2, dtype=int8)
    >>> astype(asarray([1.7, -300.0, float('nan')]), 'int8')
    Array([   1, -128,    0], dtype=int8)
    >>> astype(asarray([300], dtype='int32'), 'uint8')
    Array([44], dtype=uint8)
    """
    dt = _requested(dtype, "astype")
    if type(x) in _PY or type(x) is bool:
        return _asarray(x, dt, None, "astype")
    if not isinstance(x, Array):
        value, _ = _array.operand(x, "astype", 0)
        x = from_numpy(np.asarray(value))
    if _dtypes.kind_of(x.dtype) == "c" and _dtypes.kind_of(dt) != "c":
        warnings.warn(
            f"casting {x.dtype} to {dt} discards the imaginary part; take "
            "typelattice.numpy.real(x) first to say so",
            np.exceptions.ComplexWarning,
            stacklevel=2,
        )
    # (Float to integer saturates and maps NaN to 0, as JAX does, instead of
    # NumPy's platform-dependent values: the primitive's conversion.)
    return convert_element_type_p.bind(x, new_dtype=dt, weak_type=False)  # type: ignore[no-any-return]


# -- filled arrays ----------------------------------------------------------


_shape = _core.shape_of  # (the name the abstract rules import)


def _default_or(dtype: Any, where: str, *fills: int) -> np.dtype[Any]:
    dt = _dtypes.default_dtype("f") if dtype is None else _requested(dtype, where)
    return _filling(dt, where, *fills)


def _filling(dt: np.dtype[Any], where: str, *fills: int) -> np.dtype[Any]:
    """``dt``, checked to hold the values a function fills in (zeros, ones):
    float8_e8m0fnu has no zero, for one."""
    for value in fills:
        if (dt, value) not in _FILLS_HELD:
            _core.python_scalar_to(value, dt, where, "dtype")
            _FILLS_HELD.add((dt, value))
    return dt


_FILLS_HELD: set[tuple[np.dtype[Any], int]] = set()


def _filled(dims: tuple[int, ...], value: Any, dt: np.dtype[Any], weak: bool) -> Array:
    """An array of ``dims`` filled with ``value`` (which ``dt`` holds): a
    scalar broadcast, which jit and eval_shape record without allocating
    its size."""
    scalar = wrap(np.asarray(value, dt), _core.aval(dt, weak))
    return broadcast_in_dim_p.bind(  # type: ignore[no-any-return]
        scalar, shape=dims, broadcast_dimensions=()
    )


def _broadcast_to(fill: Any, dims: tuple[int, ...], where: str) -> Array:
    """``fill`` broadcast to ``dims`` as NumPy broadcasts (trailing axes)."""
    own = tuple(fill.shape)
    if own == dims:
        return fill  # type: ignore[no-any-return]
    try:
        fits = np.broadcast_shapes(own, dims) == dims
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{where}: fill_value of shape {own} cannot be broadcast to the "
            f"shape {dims}"
        )
    axes = tuple(range(len(dims) - len(own), len(dims)))
    return broadcast_in_dim_p.bind(  # type: ignore[no-any-return]
        fill, shape=dims, broadcast_dimensions=axes
    )


@_on_device
def zeros(
    shape: Any, dtype: Any = None, *, device: Any = None, backend: str | None = None
) -> Array:
    """An array of zeros (the default float type unless ``dtype``).

    Args:
      shape: an int or a sequence of ints (non-negative).
      dtype: the dtype (default: float32, float64 with ``enable_x64``).
      device: where the array is made (``'cpu'``, ``'cuda:1'``, a
        ``torch.device``...; see :func:`asarray`).
      backend: the library holding it (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``); default: the default backend.

    Returns:
      A strong Array.

    >>> zeros(3, 'int8')
    Array([0, 0, 0], dtype=int8)
    >>> zeros((1, 2))
    Array([[0., 0.]], dtype=float32)
    """
    return _filled(_shape(shape, "zeros"), 0, _default_or(dtype, "zeros", 0), False)


@_on_device
def ones(
    shape: Any, dtype: Any = None, *, device: Any = None, backend: str | None = None
) -> Array:
    """An array of ones (the default float type unless ``dtype``).

    Args:
      shape: an int or a sequence of ints (non-negative).
      dtype: the dtype (default: float32, float64 with ``enable_x64``).
      device: where the array is made (``'cpu'``, ``'cuda:1'``, a
        ``torch.device``...; see :func:`asarray`).
      backend: the library holding it (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``); default: the default backend.

    Returns:
      A strong Array.

    >>> ones((2, 2), 'int8')
    Array([[1, 1],
           [1, 1]], dtype=int8)
    """
    return _filled(_shape(shape, "ones"), 1, _default_or(dtype, "ones", 1), False)


@_on_device
def empty(
    shape: Any, dtype: Any = None, *, device: Any = None, backend: str | None = None
) -> Array:
    """Like :func:`zeros` (an immutable array's contents must be defined).

    Args:
      shape: an int or a sequence of ints (non-negative).
      dtype: the dtype (default: float32, float64 with ``enable_x64``).
      device: where the array is made (``'cpu'``, ``'cuda:1'``, a
        ``torch.device``...; see :func:`asarray`).
      backend: the library holding it (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``); default: the default backend.

    Returns:
      A strong Array of zeros.

    >>> empty(2)
    Array([0., 0.], dtype=float32)
    """
    return _filled(_shape(shape, "empty"), 0, _default_or(dtype, "empty", 0), False)


@_on_device
def full(
    shape: Any,
    fill_value: Any,
    dtype: Any = None,
    *,
    device: Any = None,
    backend: str | None = None,
) -> Array:
    """An array filled with ``fill_value``; weak when the value is a Python
    scalar and no dtype is given, as in jax.numpy.

    Args:
      shape: an int or a sequence of ints (non-negative).
      fill_value: a scalar or an array broadcastable to ``shape``.
      dtype: the dtype (default: ``fill_value``'s, as :func:`asarray`
        gives it); the value must fit it unchanged.
      device: where the array is made (``'cpu'``, ``'cuda:1'``, a
        ``torch.device``...; see :func:`asarray`).
      backend: the library holding it (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``); default: the default backend.

    Returns:
      The Array.

    Raises:
      OverflowError: ``fill_value`` does not fit ``dtype`` (``full(2, 300,
        'int8')``).

    >>> full(2, 7)
    Array([7, 7], dtype=int32, weak_type=True)
    """
    fill = _asarray(fill_value, dtype, None, "full")
    return _broadcast_to(fill, _shape(shape, "full"), "full")


def _like(
    a: Any, dtype: Any, shape: Any, where: str
) -> tuple[np.dtype[Any], bool, tuple[int, ...]]:
    if isinstance(a, Array):
        dt, weak, own = a.dtype, a.weak_type, a.shape
    else:
        v, key = _array.operand(a, where, 0)
        state = _config.current()
        dt = _core.key_dtype(key, state.enable_x64)
        weak, own = _core.key_weak(key), np.shape(v)
    if dtype is not None:
        dt, weak = _requested(dtype, where), False
    dims = own if shape is None else _shape(shape, where)
    return dt, weak and dt.kind != "b", dims


@_on_device
def zeros_like(
    a: Any,
    dtype: Any = None,
    shape: Any = None,
    *,
    device: Any = None,
    backend: str | None = None,
) -> Array:
    """Zeros with ``a``'s shape, dtype and weak flag (unless overridden).

    Args:
      a: an Array, a NumPy array or a scalar.
      dtype: a dtype instead of ``a``'s (the result is then strong).
      shape: a shape instead of ``a``'s.
      device: where the array is made (``'cpu'``, ``'cuda:1'``, a
        ``torch.device``...; see :func:`asarray`).
      backend: the library holding it (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``); default: the default backend.

    Returns:
      The Array.

    >>> zeros_like(asarray(2))
    Array(0, dtype=int32, weak_type=True)
    """
    dt, weak, dims = _like(a, dtype, shape, "zeros_like")
    return _filled(dims, 0, _filling(dt, "zeros_like", 0), weak)


@_on_device
def ones_like(
    a: Any,
    dtype: Any = None,
    shape: Any = None,
    *,
    device: Any = None,
    backend: str | None = None,
) -> Array:
    """Ones with ``a``'s shape, dtype and weak flag (unless overridden).

    Args:
      a: an Array, a NumPy array or a scalar.
      dtype: a dtype instead of ``a``'s (the result is then strong).
      shape: a shape instead of ``a``'s.
      device: where the array is made (``'cpu'``, ``'cuda:1'``, a
        ``torch.device``...; see :func:`asarray`).
      backend: the library holding it (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``); default: the default backend.

    Returns:
      The Array.

    >>> ones_like(asarray([1, 2], dtype='uint8'), dtype='float32')
    Array([1., 1.], dtype=float32)
    """
    dt, weak, dims = _like(a, dtype, shape, "ones_like")
    return _filled(dims, 1, _filling(dt, "ones_like", 1), weak)


@_on_device
def empty_like(
    a: Any,
    dtype: Any = None,
    shape: Any = None,
    *,
    device: Any = None,
    backend: str | None = None,
) -> Array:
    """Like :func:`zeros_like` (an immutable array's contents must be defined).

    Args:
      a: an Array, a NumPy array or a scalar.
      dtype: a dtype instead of ``a``'s (the result is then strong).
      shape: a shape instead of ``a``'s.
      device: where the array is made (``'cpu'``, ``'cuda:1'``, a
        ``torch.device``...; see :func:`asarray`).
      backend: the library holding it (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``); default: the default backend.

    Returns:
      An Array of zeros.

    >>> empty_like(asarray([1.5]))
    Array([0.], dtype=float32)
    """
    dt, weak, dims = _like(a, dtype, shape, "empty_like")
    return _filled(dims, 0, _filling(dt, "empty_like", 0), weak)


@_on_device
def full_like(
    a: Any,
    fill_value: Any,
    dtype: Any = None,
    shape: Any = None,
    *,
    device: Any = None,
    backend: str | None = None,
) -> Array:
    """``fill_value`` in ``a``'s shape, dtype and weak flag (unless overridden).

    Args:
      a: an Array, a NumPy array or a scalar.
      fill_value: a scalar or an array broadcastable to the shape; it must
        fit the dtype unchanged.
      dtype: a dtype instead of ``a``'s (the result is then strong).
      shape: a shape instead of ``a``'s.
      device: where the array is made (``'cpu'``, ``'cuda:1'``, a
        ``torch.device``...; see :func:`asarray`).
      backend: the library holding it (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``); default: the default backend.

    Returns:
      The Array.

    Raises:
      OverflowError: ``fill_value`` does not fit the dtype.

    >>> full_like(zeros(2, 'uint8'), 255)
    Array([255, 255], dtype=uint8)
    """
    dt, weak, dims = _like(a, dtype, shape, "full_like")
    fill: Any
    if isinstance(fill_value, Array):
        # Its values are checked where the conversion runs (eagerly, in a
        # program, on the primal values under grad).
        check = Check("dtype", "full_like", 1)
        fill = convert_element_type_p.bind(
            fill_value, new_dtype=dt, weak_type=weak, check=check
        )
    else:
        if type(fill_value) in _PY or type(fill_value) is bool:
            value = _core.python_scalar_to(fill_value, dt, "full_like", "dtype")
        else:
            raw = np.asarray(_array.operand(fill_value, "full_like", 1)[0])
            value = _core.unshared(_core.checked_cast(raw, dt, "full_like"), raw)
        fill = wrap(np.asarray(value), _core.aval(dt, weak))
    return _broadcast_to(fill, dims, "full_like")


# -- ranges -----------------------------------------------------------------


@_on_device
def arange(
    start: Any,
    stop: Any = None,
    step: Any = None,
    dtype: Any = None,
    *,
    device: Any = None,
    backend: str | None = None,
) -> Array:
    """Evenly spaced values in ``[start, stop)``: a strong array of the
    promoted type of the arguments (int32 for Python ints in 32-bit mode).

    With ``stop`` None, ``start`` is the end of the range, which begins
    at 0 (``arange(5, None, 2)`` is ``[0, 2, 4]``, as in NumPy and JAX).
    The bounds are static (Python or NumPy scalars, or concrete 0-d
    Arrays): they decide the length.

    Args:
      start: the first value; with ``stop`` omitted or None, the end (from
        0). Never None.
      stop: the end, excluded.
      step: the spacing (default 1, also for None).
      dtype: the dtype instead of the promoted one; the values must fit it.
      device: where the array is made (``'cpu'``, ``'cuda:1'``, a
        ``torch.device``...; see :func:`asarray`).
      backend: the library holding it (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``); default: the default backend.

    Returns:
      A 1-d strong Array.

    Raises:
      TypeError: a start of None, a bool dtype, or an array argument that
        is not 0-d.
      OverflowError: values that ``dtype`` cannot hold.

    >>> arange(4)
    Array([0, 1, 2, 3], dtype=int32)
    >>> arange(0, 1, 0.25)
    Array([0.  , 0.25, 0.5 , 0.75], dtype=float32)
    >>> arange(5, None, 2)
    Array([0, 2, 4], dtype=int32)
    """
    if start is None:
        # As NumPy and jax.numpy (TypeError), with a fix.
        raise TypeError(
            "arange: start is None; give the end of the range first, e.g. "
            "arange(5) or arange(5, step=2), or both ends, arange(0, 5)"
        )
    args = [x for x in (start, stop, step) if x is not None]
    for i, x in enumerate(args):
        _core.check_array_like(x, "arange", i)
        if np.ndim(x):
            raise TypeError(
                f"arange: argument {i} must be a scalar, got shape {x.shape}"
            )
    if stop is None:  # the one-bound form, a step or not: it ends at start
        start, stop = 0, start
    bounds = [start, stop] if step is None else [start, stop, step]
    plain = [x.item() if isinstance(x, Array) else x for x in bounds]
    if dtype is None:
        dt, _ = _promotion.lattice_result_type(*args)
        use = "default"
    else:
        dt = _requested(dtype, "arange")
        use = "dtype"
    kind = _dtypes.kind_of(dt)
    if kind == "b":
        raise TypeError(
            "arange: dtype bool is not supported (as in jax.numpy); compare "
            "instead, e.g. arange(n) > 0"
        )
    if kind in "iu" and any(isinstance(x, float | np.floating) for x in plain):
        return _integer_range(plain, dt, use)
    return _numpy_range(plain, dt, use)


def _range_length(start: Any, stop: Any, step: Any) -> int:
    """The length of ``arange(start, stop, step)`` as NumPy computes it:
    ``ceil((stop - start) / step)`` in the bounds' own arithmetic (a true
    division, so a zero step raises ZeroDivisionError as in NumPy)."""
    with np.errstate(all="ignore"):
        quotient = (stop - start) / step
    if isinstance(quotient, complex | np.complexfloating):
        # NumPy's length of a complex range: the shorter of the two parts'.
        z = complex(quotient)  # pyright: ignore[reportUnknownArgumentType]
        parts = (z.real, z.imag)
        if not all(math.isfinite(p) for p in parts):
            span = math.nan
        else:
            span = float(builtins.min(math.ceil(p) for p in parts))
    else:
        span = float(quotient)
    if not math.isfinite(span):
        raise ValueError(
            f"arange: cannot compute the length of the range from {start!r} to "
            f"{stop!r} by {step!r}; give finite bounds and a nonzero step"
        )
    return builtins.max(0, math.ceil(span))


def _numpy_range(plain: list[Any], dt: np.dtype[Any], use: str) -> Array:
    """``arange`` with the values NumPy's ``arange`` gives, converted to
    ``dt``: NumPy computes in int64 (integer bounds) or float64 (else),
    stores ``start`` and ``start + step`` (added in the bounds' own
    arithmetic) and fills the rest with ``start + i * delta``, ``delta``
    the difference of those two stored values. The same operations on
    ``iota`` give the same bits. The values are monotonic, so the ones
    that decide whether ``dt`` holds them are known here: they are checked
    now, on every path (eval_shape included)."""
    start, stop = plain[0], plain[1]
    step = plain[2] if len(plain) > 2 else 1
    n = _range_length(start, stop, step)
    nd: np.dtype[Any]
    if any(isinstance(x, complex | np.complexfloating) for x in plain):
        nd = np.dtype(np.complex128)
    elif all(isinstance(x, int | np.integer) for x in plain):
        nd = np.dtype(np.int64)
    else:
        nd = np.dtype(np.float64)
    with np.errstate(all="ignore"):
        first = nd.type(start)
        second = nd.type(start + step)
        delta = nd.type(second - first)
        # The last value, and for a float range that does not fit ``dt``
        # the first one that does not (the one the message names).
        last = nd.type(first + (n - 1) * delta) if n > 2 else second
    ends = np.array([first, last][: builtins.min(n, 2)], nd)
    if nd != dt and _core.lost_value(ends, dt) is not None:
        bad = ends
        if nd.kind != "i" and _core.lost_value(ends[:1], dt) is None:
            # Values grow in magnitude: the first that does not fit.
            lo, hi = 1, n - 1
            while lo < hi:
                mid = (lo + hi) // 2
                with np.errstate(all="ignore"):
                    v = second if mid == 1 else nd.type(first + mid * delta)
                if _core.lost_value(np.array([v], nd), dt) is None:
                    lo = mid + 1
                else:
                    hi = mid
            with np.errstate(all="ignore"):
                v = second if lo == 1 else nd.type(first + lo * delta)
            bad = np.array([v], nd)
        _core.check_fits(bad, dt, "arange", use=use)
    return _stepped(first, delta, second, n, nd, dt)


def _stepped(
    first: Any, delta: Any, second: Any, n: int, nd: np.dtype[Any], dt: np.dtype[Any]
) -> Array:
    """NumPy's range of ``n`` values of ``nd`` (``first``, ``second``, then
    ``first + i * delta``) on ``iota``, converted to ``dt`` (which holds
    the values: checked). Integers are exact in any dtype that holds every
    ``i * delta``: computed in ``dt`` then; floats keep ``second`` as given
    when ``first + delta`` rounds differently."""
    if nd.kind != "i" and n < 3:  # the values themselves
        values: Any = wrap(np.array([first, second][:n], nd), _core.aval(nd, False))
    else:
        lo = 0
        work = nd
        if nd.kind == "i":
            if (
                dt.kind in "iu"
                and _fits_int(first, dt)
                and _fits_int((n - 1) * delta, dt)
            ):
                work = dt
            elif first == 0 and delta == 1 and dt in _EXACT_IOTA:
                work = dt  # iota's values are the integers rounded once
        elif any(
            _range_value(first, delta, i, nd) != np.array(v, nd).tobytes()
            for i, v in ((0, first), (1, second))
        ):
            lo = 2  # the first two values as given, the formula from the third
        length = n - lo
        if work.kind == "c":  # the integers as the real parts
            real = np.dtype(np.float32 if work == np.complex64 else np.float64)
            values = iota_p.bind(dtype=real, shape=(length,), dimension=0)
            values = convert_element_type_p.bind(
                values, new_dtype=work, weak_type=False
            )
        else:
            values = iota_p.bind(dtype=work, shape=(length,), dimension=0)
        if lo:
            values = add_p.bind(values, _filled((length,), lo, work, False))
        if nd.kind != "i" or delta != 1:
            values = mul_p.bind(values, _filled((length,), delta, work, False))
        if nd.kind != "i" or first != 0:
            values = add_p.bind(values, _filled((length,), first, work, False))
        if lo:
            pair = wrap(np.array([first, second], nd), _core.aval(nd, False))
            values = concatenate_p.bind(pair, values, dimension=0)
    if values.dtype == dt:
        return values  # type: ignore[no-any-return]
    return convert_element_type_p.bind(  # type: ignore[no-any-return]
        values, new_dtype=dt, weak_type=False
    )


#: The dtypes whose ``iota`` rounds each integer once, as a conversion does.
_EXACT_IOTA: Final = frozenset(np.dtype(t) for t in ("float32", "float64"))


def _fits_int(value: int, dt: np.dtype[Any]) -> bool:
    info = np.iinfo(dt)
    return int(info.min) <= value <= int(info.max)


def _range_value(first: Any, delta: Any, i: int, nd: np.dtype[Any]) -> bytes:
    """The bits of ``first + i * delta`` computed in ``nd`` as the range is."""
    with np.errstate(all="ignore"):
        return np.array(nd.type(i) * nd.type(delta) + nd.type(first), nd).tobytes()


def _integer_range(plain: list[Any], dt: np.dtype[Any], use: str) -> Array:
    """``arange`` with float bounds and an integer dtype, as NumPy and JAX
    compute it: the length from the float bounds, then ``start`` and
    ``step`` converted to the dtype (truncated toward zero) and the values
    ``start + i * step`` (so ``arange(0, 2, 0.3, dtype=int)`` is all 0).
    Note: JAX saturates a ``start`` or ``step`` the dtype cannot hold
    (``arange(-1.5, 3, dtype='uint8')`` starts at 0); we raise."""
    start: Any
    stop: Any
    step: Any
    if len(plain) == 1:
        start, stop, step = 0, plain[0], 1
    else:
        start, stop = plain[0], plain[1]
        step = plain[2] if len(plain) > 2 else 1
    if step == 0:
        raise ValueError("arange: step must not be 0")
    n = max(0, int(np.ceil((float(stop) - float(start)) / float(step))))
    first, stride = (
        int(_core.checked_cast(np.asarray(v, np.float64), dt, "arange", use=use))
        for v in (start, step)
    )
    int64 = np.dtype(np.int64)
    if n:  # the extremes decide whether ``dt`` holds the values
        ends = np.array([first, first + (n - 1) * stride], int64)
        _core.check_fits(ends, dt, "arange", use=use)
    return _stepped(first, stride, first + stride, n, int64, dt)


@_on_device
def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    *,
    device: Any = None,
    backend: str | None = None,
) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop``, computed in
    the default float type (or ``dtype``).

    Args:
      start: the first value.
      stop: the last value (or the end, with ``endpoint=False``).
      num: how many values.
      endpoint: include ``stop``.
      retstep: also return the spacing.
      dtype: the result's dtype; for an integer dtype the values are
        rounded down.
      axis: where the new axis goes, for array ``start``/``stop``.
      device: where the array is made (``'cpu'``, ``'cuda:1'``, a
        ``torch.device``...; see :func:`asarray`).
      backend: the library holding it (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``); default: the default backend.

    Returns:
      A strong Array, or ``(array, step)`` with ``retstep``.

    Raises:
      ValueError: a negative ``num``.

    >>> linspace(0, 1, 5)
    Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    num = _core.index_of(num, "linspace: num")
    _core.check_array_like(start, "linspace", 0)
    _core.check_array_like(stop, "linspace", 1)
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    joined, _ = _promotion.lattice_result_type(start, stop)
    # Computed in an inexact type, as JAX: 64-bit integers give float64,
    # other integers float32.
    if _dtypes.kind_of(joined) in "fc":
        compute = joined
    else:
        compute = np.dtype("float64") if joined.itemsize == 8 else np.dtype("float32")
    dt = compute if dtype is None else _requested(dtype, "linspace")
    use = "default" if dtype is None else "dtype"
    lo, hi = (x if isinstance(x, Array) else _operand(x) for x in (start, stop))
    # NumPy's computation, in its inexact type of the ends (float64 for
    # integers and Python numbers): ``start + i * step`` (``step`` the
    # difference over ``div``; ``i / div * delta`` when a step is 0), the
    # last value ``stop`` itself.
    nd = np.result_type(lo.dtype, hi.dtype)
    if _dtypes.kind_of(nd) not in "fc":
        nd = np.dtype(np.float64)
    try:
        shape = tuple(np.broadcast_shapes(lo.shape, hi.shape))
        (axis,) = normalize_axis_tuple(axis, len(shape) + 1, "destination")
    except (TypeError, ValueError) as err:  # NumPy's: no name
        _core.reraise_named("linspace", err)
    lo, hi = (_spread(_as(x, nd), shape) for x in (lo, hi))
    dims = (num, *shape)
    inner = tuple(range(1, len(dims)))
    delta = sub_p.bind(hi, lo)
    real = nd
    if _dtypes.kind_of(nd) == "c":
        real = np.dtype(np.float32 if nd == np.complex64 else np.float64)
    index = _as(iota_p.bind(dtype=real, shape=(num,), dimension=0), nd)
    y = _spread(index, dims, (0,))
    div = (num - 1) if endpoint else num
    step: Any
    if div > 0:
        count = _filled(shape, div, nd, False)
        step = div_p.bind(delta, count)
        zero = _reduce_any(eq_p.bind(step, _filled(shape, 0, nd, False)))
        # (NumPy's special case for steps that underflow to 0: all elements
        # are computed the slower way when any step is 0.)
        by_step = mul_p.bind(y, _spread(step, dims, inner))
        if type(zero) is ArrayImpl and not zero._value:
            y = by_step  # known: no step is 0 (ends that are not traced)
        else:
            by_delta = mul_p.bind(
                div_p.bind(y, _spread(count, dims, inner)),
                _spread(delta, dims, inner),
            )
            y = select_n_p.bind(_spread(zero, dims), by_step, by_delta)
    else:  # no step: 0 values, or 1 with its end
        step = _filled(shape, np.nan, nd, False)
        y = mul_p.bind(y, _spread(delta, dims, inner))
    y = add_p.bind(y, _spread(lo, dims, inner))
    if endpoint and num > 1:
        head = slice_p.bind(
            y,
            start_indices=(0,) * len(dims),
            limit_indices=(num - 1, *shape),
            strides=(1,) * len(dims),
        )
        y = concatenate_p.bind(head, _spread(hi, (1, *shape), inner), dimension=0)
    if axis:
        order = list(inner)
        order.insert(axis, 0)
        y = transpose_p.bind(y, permutation=tuple(order))
    if _dtypes.kind_of(dt) in "iu":
        # Integer results are the floor of the values (as JAX), which must
        # fit: JAX saturates them.
        y = floor_p.bind(y)
    if nd != dt:
        check = Check(use, "linspace", 0)
        y = convert_element_type_p.bind(y, new_dtype=dt, weak_type=False, check=check)
    if retstep:
        return y, _as(step, compute)
    return y


def _operand(x: Any) -> Array:
    """A Python or NumPy value of ``linspace`` as a strong array of its NumPy
    dtype (a Python int is int64 here, as in NumPy's computation)."""
    value = np.array(x)
    return wrap(value, _core.aval(value.dtype, False))


def _as(x: Any, dt: np.dtype[Any]) -> Any:
    """``x`` converted to ``dt`` (strong), as NumPy converts: unchecked."""
    if x.dtype == dt and not x.weak_type:
        return x
    return convert_element_type_p.bind(x, new_dtype=dt, weak_type=False)


def _spread(x: Any, dims: tuple[int, ...], axes: tuple[int, ...] | None = None) -> Any:
    """``x`` broadcast to ``dims``, its axes becoming ``axes`` (by default
    the trailing ones, as NumPy broadcasts)."""
    if axes is None:
        axes = tuple(range(len(dims) - x.ndim, len(dims)))
    else:
        axes = axes[len(axes) - x.ndim :]
    if tuple(x.shape) == dims:
        return x
    return broadcast_in_dim_p.bind(x, shape=dims, broadcast_dimensions=axes)


def _reduce_any(x: Any) -> Any:
    """Whether any element of the bool array ``x`` is true (a 0-d array)."""
    if not x.ndim:
        return x
    return reduce_or_p.bind(x, axes=tuple(range(x.ndim)))


@_on_device
def eye(
    N: int,
    M: int | None = None,
    k: int = 0,
    dtype: Any = None,
    *,
    device: Any = None,
    backend: str | None = None,
) -> Array:
    """A 2-d array with ones on the ``k``-th diagonal.

    Args:
      N: the number of rows.
      M: the number of columns (default ``N``).
      k: the diagonal: 0 the main one, positive above, negative below.
      dtype: the dtype (default: float32, float64 with ``enable_x64``).
      device: where the array is made (``'cpu'``, ``'cuda:1'``, a
        ``torch.device``...; see :func:`asarray`).
      backend: the library holding it (``'numpy'``, ``'torch'``,
        ``'cupy'``, ``'dask'``); default: the default backend.

    Returns:
      A strong Array.

    >>> eye(2, 3, k=1, dtype='int8')
    Array([[0, 1, 0],
           [0, 0, 1]], dtype=int8)
    """
    dt = _default_or(dtype, "eye", 0, 1)
    n = _core.index_of(N, "eye: N")
    m = n if M is None else _core.index_of(M, "eye: M")
    diagonal = _core.index_of(k, "eye: k")
    dims = _shape((n, m), "eye")
    # Row and column numbers compared: true on the k-th diagonal.
    wide = builtins.max(n, m) + abs(diagonal) >= 2**31
    index = np.dtype(np.int64 if wide else np.int32)
    rows = broadcast_in_dim_p.bind(
        iota_p.bind(dtype=index, shape=(n,), dimension=0),
        shape=dims,
        broadcast_dimensions=(0,),
    )
    cols = broadcast_in_dim_p.bind(
        iota_p.bind(dtype=index, shape=(m,), dimension=0),
        shape=dims,
        broadcast_dimensions=(1,),
    )
    if diagonal:
        rows = add_p.bind(rows, _filled(dims, diagonal, index, False))
    return convert_element_type_p.bind(  # type: ignore[no-any-return]
        eq_p.bind(rows, cols), new_dtype=dt, weak_type=False
    )


def identity(n: int, dtype: Any = None) -> Array:
    """The ``n`` by ``n`` identity matrix.

    Args:
      n: the number of rows and columns.
      dtype: the dtype (default: float32, float64 with ``enable_x64``).

    Returns:
      A strong Array.

    >>> identity(2)
    Array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    return eye(n, dtype=dtype)


# -- scalar types -----------------------------------------------------------


class ScalarType:
    """A dtype object that also makes 0-d arrays: ``tnp.int8(3)``.

    Usable wherever a dtype is expected (``tnp.zeros(3, tnp.bfloat16)``),
    and equal to the dtypes it names. Calling it converts a value as
    ``asarray(x, dtype=...)`` does: checked, strong.

    Args:
      name: the dtype's name (the namespace makes one per type).

    Attributes:
      dtype: the ``np.dtype``.

    >>> import typelattice.numpy as tnp
    >>> tnp.int8(3), tnp.int8 == 'int8'
    (Array(3, dtype=int8), True)
    >>> tnp.zeros(2, tnp.bfloat16)
    Array([0, 0], dtype=bfloat16)
    """

    __slots__ = ("_promotion_key", "dtype")

    def __init__(self, name: str) -> None:
        self.dtype = np.dtype(name)
        # result_type caches its answers for this argument under the key of
        # the dtype it names (its DType class): they promote alike.
        self._promotion_key = type(self.dtype)

    def __call__(self, x: Any = 0) -> Array:
        return asarray(x, dtype=self.dtype)

    def __repr__(self) -> str:
        return f"typelattice.numpy.{self.dtype.name}"

    def __eq__(self, other: object) -> bool:
        # Anything that names no dtype of the universe (a string NumPy cannot
        # parse included) is simply not equal, as for np.dtype.
        try:
            return self.dtype == _dtypes.dtype(other, canonicalize=False)
        except (TypeError, ValueError):
            return NotImplemented

    def __hash__(self) -> int:
        return hash(self.dtype)
