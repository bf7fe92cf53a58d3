"""State dicts and Flax's msgpack format (the home of
``typelattice.flax.serialization``).

A *state dict* is a tree of dicts with string keys, the leaves kept as they
are: a registered type (dicts, lists, tuples, namedtuples, ``Partial``,
:class:`~typelattice.flax.core.FrozenDict`, struct dataclasses) turns into a
dict by its ``to_state_dict`` function and back, given a target of the same
type, by its ``from_state_dict`` function. The bytes are the state dict in
msgpack, arrays as msgpack extension 1 (``(shape, dtype name, C-order
bytes)``), NumPy scalars as extension 3 and Python complex numbers as
extension 2, which is how Flax writes them: files written by Flax read
here, and ours read in Flax, byte for byte the same (tests/golden/flax_bytes).

Restoring checks every array leaf against the target's (a deviation from
Flax, which restores whatever was saved): the shapes must be equal, and a
saved dtype other than the target's is converted only when every saved
value survives the conversion exactly; otherwise ValueError names the key
path, both shapes or dtypes, and the fix (see docs/flax.md, "Restoring").
"""

from __future__ import annotations

import enum
import importlib
import threading
import warnings
from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import Any, cast

import numpy as np

from typelattice import _dtypes
from typelattice import numpy as tnp
from typelattice._basearray import Array
from typelattice._tracing import tree
from typelattice._tracing.tree import Partial

__all__ = [
    "current_path",
    "from_bytes",
    "from_state_dict",
    "is_serializable",
    "msgpack_restore",
    "msgpack_serialize",
    "register_serialization_state",
    "to_bytes",
    "to_state_dict",
]

_ToState = Callable[[Any], Any]
_FromState = Callable[[Any, Any], Any]

_REGISTRY: dict[type, tuple[_ToState, _FromState]] = {}


class _NamedTuple:
    """The registry's key for every namedtuple class (they share handlers)."""


class _Path(threading.local):
    """The keys from the root to the value being restored (per thread)."""

    def __init__(self) -> None:
        self.names: list[str] = []


_path = _Path()


@contextmanager
def _at(name: str) -> Generator[None]:
    _path.names.append(name)
    try:
        yield
    finally:
        _path.names.pop()


def current_path() -> str:
    """The path of the value :func:`from_state_dict` is restoring, for the
    messages of restore functions: the keys from the root joined by ``/``
    (the root is ``.``).

    Returns:
      The path, ``''`` outside a restore.

    >>> current_path()
    ''
    """
    return "/".join(_path.names)


def _is_namedtuple(x: object) -> bool:
    return isinstance(x, tuple) and hasattr(cast(object, x), "_fields")


def _handlers(target: object) -> tuple[_ToState, _FromState] | None:
    return _REGISTRY.get(_NamedTuple if _is_namedtuple(target) else type(target))


def register_serialization_state(
    ty: type,
    ty_to_state_dict: Callable[[Any], Any],
    ty_from_state_dict: Callable[[Any, Any], Any],
    override: bool = False,
) -> None:
    """Register how values of ``ty`` become state dicts and come back.

    Args:
      ty: the class (exactly: subclasses register on their own).
      ty_to_state_dict: ``value -> state``, a dict with string keys (or a
        leaf).
      ty_from_state_dict: ``(target, state) -> value``, a copy of
        ``target`` holding ``state``; it restores its children with
        :func:`from_state_dict` (``name=`` the child's key).
      override: replace an earlier registration.

    Raises:
      ValueError: ``ty`` is registered already and ``override`` is False.

    >>> class Counter:
    ...     def __init__(self, n):
    ...         self.n = n
    >>> register_serialization_state(
    ...     Counter, lambda c: {'n': c.n}, lambda c, s: Counter(s['n']))
    >>> to_state_dict(Counter(3))
    {'n': 3}
    """
    if ty in _REGISTRY and not override:
        raise ValueError(
            f"a serialization handler for {ty.__name__!r} is registered already; "
            "pass override=True to replace it"
        )
    _REGISTRY[ty] = (ty_to_state_dict, ty_from_state_dict)


def is_serializable(target: object) -> bool:
    """Whether ``target`` (a value or a class) has registered handlers.

    Args:
      target: a value or a class.

    Returns:
      True for a registered class or an instance of one.

    >>> is_serializable({}), is_serializable(1.0)
    (True, False)
    """
    cls = target if isinstance(target, type) else type(target)
    return cls in _REGISTRY


def to_state_dict(target: Any) -> Any:
    """The state dict of ``target``: registered nodes become dicts with
    string keys, leaves stay as they are.

    Args:
      target: a tree of registered nodes and leaves.

    Returns:
      The state dict (``target`` itself for a leaf).

    Raises:
      ValueError: two keys of a dict have the same string form.

    >>> to_state_dict({'w': [1.0, 2.0], 'b': (3,)})
    {'w': {'0': 1.0, '1': 2.0}, 'b': {'0': 3}}
    """
    handlers = _handlers(target)
    if handlers is None:
        return target
    return handlers[0](target)


def from_state_dict(target: Any, state: Any, name: str = ".") -> Any:
    """A copy of ``target`` holding ``state``.

    ``target`` gives the structure, and each array leaf of it the shape and
    dtype that the restored leaf must have: the saved array is checked and
    becomes a ``typelattice`` Array of the target's dtype. Other leaves
    (Python numbers, strings, None) take the saved value.

    Args:
      target: the value to restore into (its leaves' values are not used).
      state: a state dict, as :func:`to_state_dict` or
        :func:`msgpack_restore` returns.
      name: the key of ``target`` in its parent (for messages).

    Returns:
      The restored value, of ``target``'s structure.

    Raises:
      ValueError: the structures differ (a key missing or extra, a list of
        another length), an array's shape differs, or a saved dtype is not
        the target's and the conversion would change a value; the message
        names the key path and the fix.

    >>> import typelattice.numpy as tnp
    >>> from_state_dict({'w': tnp.zeros(2)}, {'w': [1.0, 2.0]})
    {'w': Array([1., 2.], dtype=float32)}
    >>> from_state_dict({'w': tnp.zeros(2)}, {'w': [1.0, 2.5, 3.0]})
    Traceback (most recent call last):
    ...
    ValueError: ./w: the target has shape (2,), the saved array shape (3,); \
build the target with the saved shape (or restore with target=None to see it)
    """
    handlers = _handlers(target)
    with _at(name):
        if handlers is None:
            return _restore_leaf(target, state)
        return handlers[1](target, state)


# -- leaves ---------------------------------------------------------------------


def _np(x: object) -> np.ndarray[Any, Any]:
    """``x`` as a NumPy array (for values narrowed by isinstance, whose
    array types NumPy's stubs leave partly unknown)."""
    out: np.ndarray[Any, Any] = np.asarray(cast(Any, x))
    return out


def _is_array(x: object) -> bool:
    return isinstance(x, Array | np.ndarray | np.generic)


def _saved_array(state: object) -> np.ndarray[Any, Any] | None:
    """The saved value as a NumPy array, or None for a non-array."""
    if isinstance(
        state, Array | np.ndarray | np.generic | bool | int | float | complex
    ):
        return _np(state)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(state, list) and all(
        isinstance(v, bool | int | float | complex) for v in cast(list[object], state)
    ):
        return _np(state)  # pyright: ignore[reportUnknownArgumentType]
    return None


def _comparable(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``x`` in a NumPy type that compares its values exactly."""
    if _dtypes.isdtype(x.dtype, "complex floating"):
        return x.astype(np.complex128)
    if _dtypes.isdtype(x.dtype, "real floating"):
        return x.astype(np.float64)
    return x


def _same_values(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> bool:
    """Whether ``a`` and ``b`` hold the same values (NaN for NaN, the sign
    of zero included)."""
    a, b = _comparable(a), _comparable(b)
    with np.errstate(all="ignore"):
        equal = a == b
        if a.dtype.kind in "fc":
            equal |= np.isnan(a) & np.isnan(b)
            if a.dtype.kind == "f":
                equal &= np.signbit(a) == np.signbit(b)
    return bool(np.all(equal))


def _exact_conversion(
    saved: np.ndarray[Any, Any], dtype: np.dtype[Any]
) -> np.ndarray[Any, Any] | None:
    """``saved`` converted to ``dtype`` when every value survives exactly;
    None otherwise."""
    if saved.dtype.kind == "c" and dtype.kind != "c":
        if np.any(saved.imag != 0):
            return None
        saved = saved.real
    if _dtypes.isdtype(dtype, "integral") and saved.size:
        # An integer type holds the integers of its range: the round trip
        # below would not see a wrap (-1 -> uint32 -> -1).
        if saved.dtype.kind != "b" and not _in_range(saved, dtype):
            return None
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # (Conversions of NaN warn; the comparison below catches them.)
        warnings.simplefilter("ignore")
        converted = saved.astype(dtype)
        back = converted.astype(saved.dtype)
    return converted if _same_values(back, saved) else None


def _in_range(saved: np.ndarray[Any, Any], dtype: np.dtype[Any]) -> bool:
    info = _dtypes.iinfo(dtype)
    low: int | float
    high: int | float
    if _dtypes.isdtype(saved.dtype, "integral"):
        low, high = int(saved.min()), int(saved.max())
    else:
        as_float = _comparable(saved)
        if not np.all(np.isfinite(as_float)):
            return False
        low, high = float(as_float.min()), float(as_float.max())
    return bool(info.min <= low and high <= info.max)


def _into(
    saved: np.ndarray[Any, Any], dtype: np.dtype[Any], where: str, what: str
) -> Array:
    """``saved`` as an Array of ``dtype`` (of its 32-bit counterpart when
    64-bit mode is off), when the conversion keeps every value."""
    canonical = _dtypes.canonicalize_dtype(dtype)
    if saved.dtype == canonical:
        return tnp.asarray(saved.copy())
    converted = _exact_conversion(saved, canonical)
    if converted is not None:
        return tnp.asarray(converted)
    if canonical != dtype:
        raise ValueError(
            f"{where}: the saved {saved.dtype} values are not exact in "
            f"{canonical} ({dtype} without 64-bit mode); read them with "
            "64-bit mode on (typelattice.enable_x64())"
        )
    raise ValueError(
        f"{where}: the saved array is {saved.dtype} and the {what} {dtype}, "
        f"and converting changes its values; restore into a target of dtype "
        f"{saved.dtype} (then convert with .astype('{dtype}') if the change is "
        "wanted)"
    )


def _restore_leaf(target: Any, state: Any) -> Any:
    if not _is_array(target):
        # Python numbers, strings, None: the saved value, as Flax does.
        if isinstance(state, np.ndarray | np.generic):
            arr = _np(state)  # pyright: ignore[reportUnknownArgumentType]
            return _into(arr, arr.dtype, current_path(), "array")
        return state
    where = current_path()
    shape = tuple(np.shape(target))
    dtype = np.dtype(target.dtype)
    saved = _saved_array(state)
    if saved is None:
        raise ValueError(
            f"{where}: the target holds an array of shape {shape} and dtype "
            f"{dtype}, the saved state a {type(state).__name__} "
            f"({_short(state)}); build the target with the saved structure "
            "(or restore with target=None to see it)"
        )
    if saved.shape != shape:
        raise ValueError(
            f"{where}: the target has shape {shape}, the saved array shape "
            f"{saved.shape}; build the target with the saved shape (or "
            "restore with target=None to see it)"
        )
    # (Python numbers saved take the target's dtype on the same terms.)
    return _into(saved, dtype, where, "target")


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- the registered containers --------------------------------------------------


def _dict_state(xs: dict[Any, Any]) -> dict[str, Any]:
    keys = {str(k) for k in xs}
    if len(keys) != len(xs):
        raise ValueError(
            f"the keys {sorted(map(repr, xs))} of a dict have the same string "
            "form, which a state dict's keys are; give them distinct names"
        )
    return {str(k): to_state_dict(v) for k, v in xs.items()}


def _expect_dict(state: object, what: str) -> dict[str, Any]:
    if not isinstance(state, dict):
        raise ValueError(
            f"{current_path()}: the target is a {what}, the saved state a "
            f"{type(state).__name__} ({_short(state)}); build the target with "
            "the saved structure (or restore with target=None to see it)"
        )
    return state  # pyright: ignore[reportUnknownVariableType]


def _keys_differ(target_keys: set[str], saved_keys: set[str]) -> ValueError:
    missing = sorted(target_keys - saved_keys)
    extra = sorted(saved_keys - target_keys)
    parts: list[str] = []
    if missing:
        parts.append(f"the target's keys {missing} are not in the saved state")
    if extra:
        parts.append(f"the saved keys {extra} are not in the target")
    return ValueError(
        f"{current_path()}: {' and '.join(parts)}; build the target with the "
        "saved structure (or restore with target=None to see it)"
    )


def _restore_dict(xs: dict[Any, Any], state: Any) -> dict[Any, Any]:
    saved = _expect_dict(state, "dict")
    target_keys = {str(k) for k in xs}
    if target_keys != set(saved):
        # Flax ignores saved keys the target lacks; we refuse to drop them.
        raise _keys_differ(target_keys, set(saved))
    return {k: from_state_dict(v, saved[str(k)], name=str(k)) for k, v in xs.items()}


def _list_state(xs: list[Any] | tuple[Any, ...]) -> dict[str, Any]:
    return {str(i): to_state_dict(x) for i, x in enumerate(xs)}


def _restore_list(xs: list[Any] | tuple[Any, ...], state: Any) -> list[Any]:
    saved = _expect_dict(state, type(xs).__name__)
    if len(saved) != len(xs):
        raise ValueError(
            f"{current_path()}: the target {type(xs).__name__} has {len(xs)} "
            f"items, the saved state {len(saved)}; build the target with the "
            "saved structure (or restore with target=None to see it)"
        )
    expected = {str(i) for i in range(len(xs))}
    if set(saved) != expected:
        raise _keys_differ(expected, set(saved))
    return [from_state_dict(x, saved[str(i)], name=str(i)) for i, x in enumerate(xs)]


def _namedtuple_state(nt: Any) -> dict[str, Any]:
    return {k: to_state_dict(getattr(nt, k)) for k in nt._fields}


def _restore_namedtuple(xs: Any, state: Any) -> Any:
    saved = _expect_dict(state, type(xs).__name__)
    if set(saved) == {"name", "fields", "values"}:
        # An older Flax wrote namedtuples as their name, fields and values.
        saved = {
            saved["fields"][str(i)]: saved["values"][str(i)]
            for i in range(len(saved["fields"]))
        }
    fields = set(xs._fields)
    if set(saved) != fields:
        raise _keys_differ(fields, set(saved))
    return type(xs)(
        **{k: from_state_dict(getattr(xs, k), saved[k], name=k) for k in xs._fields}
    )


def _partial_state(p: Partial[Any]) -> dict[str, Any]:
    return {"args": to_state_dict(p.args), "keywords": to_state_dict(p.keywords)}


def _restore_partial(p: Partial[Any], state: Any) -> Partial[Any]:
    saved = _expect_dict(state, "Partial")
    args = from_state_dict(p.args, saved["args"], name="args")
    keywords = from_state_dict(p.keywords, saved["keywords"], name="keywords")
    return Partial(p.func, *args, **keywords)


register_serialization_state(dict, _dict_state, _restore_dict)
register_serialization_state(list, _list_state, _restore_list)
register_serialization_state(
    tuple, _list_state, lambda xs, state: tuple(_restore_list(xs, state))
)
register_serialization_state(_NamedTuple, _namedtuple_state, _restore_namedtuple)
register_serialization_state(Partial, _partial_state, _restore_partial)


# -- msgpack ---------------------------------------------------------------------


def _msgpack() -> Any:
    """The msgpack module, loaded on first use (an optional dependency)."""
    try:
        return importlib.import_module("msgpack")
    except ImportError:
        raise ImportError(
            "typelattice.flax.serialization writes and reads msgpack, which is "
            "not installed; pip install 'typelattice[flax]' (or pip install "
            "msgpack)"
        ) from None


class _Ext(enum.IntEnum):
    """Flax's msgpack extension codes."""

    ndarray = 1
    native_complex = 2
    npscalar = 3


#: Arrays larger than this many bytes are written in chunks, as Flax does.
MAX_CHUNK_SIZE = 2**30


def _array_bytes(arr: np.ndarray[Any, Any]) -> bytes:
    if arr.dtype.hasobject or arr.dtype.fields is not None:
        raise ValueError(
            f"an array of dtype {arr.dtype} cannot be serialized; only "
            "arrays of numbers and booleans can"
        )
    return bytes(
        _msgpack().packb(
            (arr.shape, arr.dtype.name, arr.tobytes("C")), use_bin_type=True
        )
    )


def _dtype_named(name: bytes) -> np.dtype[Any]:
    # The small float and int types are ml_dtypes types, which NumPy does not
    # find by name; the lattice's type universe does.
    return _dtypes.dtype(name.decode("ascii"), canonicalize=False)


def _array_from(data: bytes) -> np.ndarray[Any, Any]:
    shape, name, buffer = _msgpack().unpackb(data, raw=True)
    return np.frombuffer(buffer, dtype=_dtype_named(name)).reshape(shape)


def _pack(x: Any) -> Any:
    msgpack = _msgpack()
    if isinstance(x, Array):
        x = np.asarray(x)
    if isinstance(x, np.ndarray):
        return msgpack.ExtType(_Ext.ndarray, _array_bytes(_np(x)))  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(x, np.generic):
        return msgpack.ExtType(_Ext.npscalar, _array_bytes(_np(x)))  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(x, complex):
        return msgpack.ExtType(_Ext.native_complex, msgpack.packb((x.real, x.imag)))
    raise TypeError(
        f"cannot serialize a {type(x).__name__} ({_short(x)}); a state dict "
        "holds dicts with string keys, lists, numbers, strings, None and "
        "arrays (register its class with register_serialization_state)"
    )


def _unpack(code: int, data: bytes) -> Any:
    if code == _Ext.ndarray:
        return _array_from(data)
    if code == _Ext.native_complex:
        real, imag = _msgpack().unpackb(data)
        return complex(real, imag)
    if code == _Ext.npscalar:
        return _array_from(data)[()]
    return _msgpack().ExtType(code, data)


def _to_numpy(d: Any) -> Any:
    """Arrays in dicts (and at the root) as NumPy arrays, as Flax converts
    its arrays before chunking."""
    if isinstance(d, dict):
        out: dict[Any, Any] = {}
        for k, v in d.items():  # pyright: ignore[reportUnknownVariableType]
            out[k] = np.asarray(v) if isinstance(v, Array) else _to_numpy(v)
        return out
    if isinstance(d, Array):
        return np.asarray(d)
    return d


def _chunk(arr: np.ndarray[Any, Any]) -> dict[str, Any]:
    size = max(1, MAX_CHUNK_SIZE // arr.dtype.itemsize)
    flat = arr.reshape(-1)
    chunks = [flat[i : i + size] for i in range(0, flat.size, size)]
    return {
        "__msgpack_chunked_array__": True,
        "shape": {str(i): n for i, n in enumerate(arr.shape)},
        "chunks": {str(i): c for i, c in enumerate(chunks)},
    }


def _chunked(d: Any) -> Any:
    if isinstance(d, dict):
        return {k: _chunked(v) for k, v in cast(dict[str, Any], d).items()}
    if not isinstance(d, np.ndarray):
        return d
    arr = _np(d)  # pyright: ignore[reportUnknownArgumentType]
    return _chunk(arr) if arr.size * arr.dtype.itemsize > MAX_CHUNK_SIZE else arr


def _unchunked(d: Any) -> Any:
    if isinstance(d, dict):
        node = cast(dict[str, Any], d)
        if "__msgpack_chunked_array__" in node:
            shape = tuple(node["shape"][str(i)] for i in range(len(node["shape"])))
            chunks = [node["chunks"][str(i)] for i in range(len(node["chunks"]))]
            return np.concatenate(chunks).reshape(shape)
        return {k: _unchunked(v) for k, v in node.items()}
    return d


def _arrays(d: Any, path: str = ".") -> Any:
    """The NumPy arrays and scalars read as typelattice Arrays (copies: the
    read arrays are views of the bytes), 64-bit ones in 32-bit mode only
    when their values are exact in the 32-bit type."""
    if isinstance(d, dict):
        return {
            k: _arrays(v, f"{path}/{k}")
            for k, v in d.items()  # pyright: ignore[reportUnknownVariableType]
        }
    if isinstance(d, list):
        return [
            _arrays(v, f"{path}/{i}")
            for i, v in enumerate(d)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
        ]
    if isinstance(d, np.ndarray | np.generic):
        saved = _np(d)  # pyright: ignore[reportUnknownArgumentType]
        return _into(saved, saved.dtype, path, "array")
    return d


def msgpack_serialize(pytree: Any, in_place: bool = False) -> bytes:
    """A tree of dicts, lists, numbers, strings and arrays as msgpack bytes,
    in Flax's format.

    Without ``in_place``, the tree is first rebuilt by
    :func:`~typelattice.tree_util.tree_map`, which orders each dict's keys
    (as Flax's does); with it, the dicts keep their order. The tree itself
    is never changed.

    Args:
      pytree: the tree (use :func:`to_bytes` for registered classes).
      in_place: keep the dicts' order (Flax's flag of the same name also
        lets it change the tree; here it never does).

    Returns:
      The bytes.

    Raises:
      ImportError: msgpack is not installed.
      TypeError: a leaf cannot be written (a tuple, an object).

    >>> import typelattice.numpy as tnp
    >>> data = msgpack_serialize({'w': tnp.ones(2, 'bfloat16')})
    >>> msgpack_restore(data)
    {'w': Array([1, 1], dtype=bfloat16)}
    """
    if not in_place:
        pytree = tree.tree_map(lambda x: x, pytree)
    pytree = _chunked(_to_numpy(pytree))
    return bytes(_msgpack().packb(pytree, default=_pack, strict_types=True))


def _read(data: bytes) -> Any:
    """The tree the bytes hold, its arrays NumPy arrays of the saved dtypes."""
    state = _msgpack().unpackb(data, ext_hook=_unpack, raw=False, strict_map_key=False)
    return _unchunked(state)


def msgpack_restore(encoded_pytree: bytes) -> Any:
    """The tree that :func:`msgpack_serialize` wrote, its arrays as
    typelattice Arrays of the saved dtypes.

    Args:
      encoded_pytree: msgpack bytes in Flax's format.

    Returns:
      The tree of dicts, lists, numbers, strings and Arrays.

    Raises:
      ImportError: msgpack is not installed.
      ValueError: the bytes are not msgpack (msgpack's own errors are
        ValueErrors).

    >>> msgpack_restore(msgpack_serialize({'a': 1, 'b': [2.5, None]}))
    {'a': 1, 'b': [2.5, None]}
    """
    return _arrays(_read(encoded_pytree))


def to_bytes(target: Any) -> bytes:
    """``target``'s state dict as msgpack bytes, in Flax's format.

    Args:
      target: a tree of registered nodes (dicts, lists, tuples,
        namedtuples, FrozenDicts, struct dataclasses) and leaves.

    Returns:
      The bytes; the same as Flax's ``to_bytes`` of the same tree.

    Raises:
      ImportError: msgpack is not installed.

    >>> import typelattice.numpy as tnp
    >>> params = {'w': tnp.arange(3.0)}
    >>> from_bytes(params, to_bytes(params))
    {'w': Array([0., 1., 2.], dtype=float32)}
    """
    return msgpack_serialize(to_state_dict(target), in_place=True)


def from_bytes(target: Any, encoded_bytes: bytes) -> Any:
    """A copy of ``target`` holding the state that ``encoded_bytes`` saved
    (see :func:`from_state_dict` for the checks).

    Args:
      target: a value of the saved structure; its array leaves give the
        shapes and dtypes.
      encoded_bytes: bytes that :func:`to_bytes` (here or in Flax) wrote.

    Returns:
      The restored value.

    Raises:
      ImportError: msgpack is not installed.
      ValueError: the saved structure, a shape or a dtype does not fit the
        target (the message names the key path and the fix).

    >>> import typelattice.numpy as tnp
    >>> data = to_bytes({'w': tnp.asarray([1.5, 2.0])})
    >>> from_bytes({'w': tnp.zeros(2, 'int8')}, data)
    Traceback (most recent call last):
    ...
    ValueError: ./w: the saved array is float32 and the target int8, and \
converting changes its values; restore into a target of dtype float32 (then \
convert with .astype('int8') if the change is wanted)
    """
    # (The saved arrays meet the target's dtypes before any conversion.)
    return from_state_dict(target, _read(encoded_bytes))
