"""Dtype promotion: the join of the inputs on the promotion lattice.

Lattice nodes are ``np.dtype`` objects for strong types and the Python types
``int``, ``float`` and ``complex`` for the weak ones (``i*``, ``f*``,
``c*``). The lattices are dict literals of immediate upward edges (written
out in docs/semantics.md, "Lattices"), turned into
:class:`~typelattice.Lattice` objects, which check them once.

``result_type`` is on every operation's hot path, so answers are cached per
promotion mode, keyed on the argument *types* (or dtypes) rather than values:
see :func:`_arg_key` for why that key determines the answer.

The cached lookups of ``result_type``, ``lattice_result_type`` and
``promote_types`` have an optional C version, ``typelattice._speedups``, built
when the package is installed with a C compiler at hand. It only reads the
memos this module maintains, with the same keys, and calls the Python
function on any miss or unusual input, so the answers are the same either
way. Without the extension, or with the environment variable
``TYPELATTICE_NO_SPEEDUPS=1`` at import, the Python functions run themselves;
:data:`SPEEDUPS` says which is in use.
"""

from __future__ import annotations

import builtins
import functools
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar, cast, overload

import numpy as np

from typelattice import _config, _dtypes
from typelattice._config import _scope  # pyright: ignore[reportPrivateUsage]
from typelattice._dtypes import (
    ALL_DTYPES,
    NARROW_INTS,
    SMALL_FLOATS,
    STANDARD_DTYPES,
    kind_of,
)
from typelattice._lattice import JoinError, Lattice, LatticeError

if TYPE_CHECKING:
    from types import ModuleType

    from typelattice.typing import ArrayLike, DTypeLike

__all__ = [
    "TypePromotionError",
    "is_weakly_typed",
    "promote_types",
    "register_lattice",
    "result_type",
    "safe_to_cast",
]

Node = np.dtype[Any] | type


class TypePromotionError(ValueError):
    """The inputs have no implicit promotion in the current mode.

    The message names the inputs, the mode and the fix: an explicit cast,
    or ``dtype_promotion=standard`` in strict mode.

    >>> import typelattice
    >>> with typelattice.dtype_promotion('strict'):
    ...     typelattice.result_type('float32', 'int32')
    Traceback (most recent call last):
    typelattice.TypePromotionError: Input dtypes ('float32', 'int32') have no ...
    """


# -- the lattices ---------------------------------------------------------------

_b1, _u1, _u2, _u4, _u8, _i1, _i2, _i4, _i8, _bf, _f2, _f4, _f8, _c8, _c16 = (
    STANDARD_DTYPES
)
_SMALL: Final = tuple(SMALL_FLOATS.values())
_NARROW: Final = tuple(NARROW_INTS.values())
_INT, _FLOAT, _COMPLEX = builtins.int, builtins.float, builtins.complex


def standard_edges(x64: bool) -> dict[Node, list[Node]]:
    """The standard lattice's edges; 32-bit mode sends uint32 to int32."""
    return {
        _b1: [_INT],
        _INT: [_u1, _i1, *_NARROW],
        _u1: [_u2, _i2],
        _u2: [_u4, _i4],
        # In 32-bit mode uint32 ⊔ int32 must not create int64.
        _u4: [_u8, _i8 if x64 else _i4],
        _u8: [_FLOAT],
        _i1: [_i2],
        _i2: [_i4],
        _i4: [_i8],
        _i8: [_FLOAT],
        _FLOAT: [_bf, _f2, _COMPLEX, *_SMALL],
        _bf: [_f4],
        _f2: [_f4],
        _f4: [_f8, _c8],
        _f8: [_c16],
        _COMPLEX: [_c8],
        _c8: [_c16],
    }


def strict_edges() -> dict[Node, list[Node]]:
    """The strict lattice's edges: only weak types promote, within their kind."""
    integers = [_u1, _u2, _u4, _u8, _i1, _i2, _i4, _i8, *_NARROW]
    floats = [_bf, _f2, _f4, _f8, *_SMALL]
    return {
        _INT: [_FLOAT, *integers],
        _FLOAT: [_COMPLEX, *floats],
        _COMPLEX: [_c8, _c16],
        _b1: [],  # bool ⊔ anything else has no join in strict mode
    }


def node_label(node: object) -> str:
    """The short code of a lattice node (``u1``, ``bf``, ``f*``...)."""
    # Nodes are dtypes or Python scalar types; labels are asked for any node.
    return _dtypes.dtype_code(cast("DTypeLike", node))


_LATTICES: dict[tuple[str, bool], Lattice[Node]] = {}
_REGISTERED: dict[str, Lattice[Node]] = {}


def get_lattice(promotion: str | None = None, x64: bool | None = None) -> Lattice[Node]:
    """The promotion lattice for a mode (the current one by default).

    Its nodes are ``np.dtype`` objects and, for the weak types, the Python
    types ``int``, ``float`` and ``complex``.

    Args:
      promotion: ``'standard'``, ``'strict'`` or a name given to
        :func:`register_lattice` (default: the ``dtype_promotion`` in force).
      x64: which bit width's lattice (default: the ``enable_x64`` in force);
        only the standard lattice differs.

    Returns:
      The :class:`~typelattice.Lattice`, built once and cached.

    Raises:
      ValueError: an unknown promotion name, listing the valid ones.

    >>> lat = get_lattice('standard', x64=True)
    >>> lat.join(np.dtype('uint32'), np.dtype('int32'))
    dtype('int64')
    >>> get_lattice('standard', x64=False).join(np.dtype('uint32'), np.dtype('int32'))
    dtype('int32')
    """
    if promotion is None or x64 is None:
        state = _config.current()
        promotion = state.dtype_promotion if promotion is None else promotion
        x64 = state.enable_x64 if x64 is None else x64
    found = _REGISTERED.get(promotion)
    if found is not None:
        return found
    key = (promotion, x64 and promotion == "standard")
    lattice = _LATTICES.get(key)
    if lattice is None:
        if promotion == "standard":
            lattice = Lattice(standard_edges(x64), label=node_label)
        elif promotion == "strict":
            lattice = Lattice(strict_edges(), label=node_label)
        else:
            _config.validate("dtype_promotion", promotion)
            raise AssertionError(promotion)  # validate raised
        _LATTICES[key] = lattice
    return lattice


def _promotion_node(x: object, where: str) -> Node:
    """A node of a lattice being registered, as promotion's node."""
    if isinstance(x, str):
        try:
            return _dtypes.code_to_dtype(x)
        except TypeError:
            pass
        try:  # a dtype's name ('int8'): say which code to write
            fix = f"write {_dtypes.dtype_code(x)!r} for {x}"
        except TypeError:
            fix = f"the codes are {', '.join(_dtypes.codes())}"
        raise TypeError(f"{where}: node {x!r} is not a type code; {fix}") from None
    if isinstance(x, type) and x in _dtypes.WEAK_TYPES:
        return x
    if isinstance(x, np.dtype | type):
        try:
            return _dtypes.dtype_of(x)  # pyright: ignore[reportUnknownArgumentType]
        except TypeError as err:
            raise TypeError(f"{where}: node {x!r}: {err}") from None
    raise TypeError(
        f"{where}: node {x!r} ({type(x).__name__}) is not a type; the nodes of a "
        "promotion lattice are type codes ('i1', 'f4', 'f*'...), NumPy dtypes "
        "or scalar types, or int, float and complex"
    )


def register_lattice(name: str, lattice: Lattice[Any]) -> None:
    """Make ``dtype_promotion(name)`` promote on ``lattice``.

    The lattice's nodes are short codes (``'u1'``, ``'f*'``...) or dtypes and
    ``int``/``float``/``complex``; every strong type of the universe that can
    appear in an operation should be a node (promotion refuses the others).

    A name is registered once: registering the same lattice again does
    nothing, and a different one under a taken name is refused, because
    results, caches and jitted functions computed under that name would
    silently disagree with the new lattice.

    Args:
      name: the name ``dtype_promotion(name)`` and ``config.update`` take: a
        non-empty string, not ``'standard'`` or ``'strict'``.
      lattice: a :class:`~typelattice.Lattice` (checked when it was built).

    Returns:
      None.

    Args:
      name: the new ``dtype_promotion`` value; not ``'standard'`` or
        ``'strict'``. Registering a name again replaces its lattice.
      lattice: a :class:`~typelattice.Lattice` whose nodes are codes, dtypes
        or ``int``/``float``/``complex``.

    Raises:
      TypeError: for a name that is not a string, a lattice that is not a
        ``Lattice``, or a node that is not a type.
      ValueError: for an empty or built-in name, a name registered with
        another lattice, or two nodes that name the same type.

    >>> import typelattice
    >>> lat = typelattice.Lattice({'i*': ['i1', 'f*'], 'i1': ['f4'], 'f*': ['f4']})
    >>> typelattice.register_lattice('tiny', lat)
    >>> with typelattice.dtype_promotion('tiny'):
    ...     typelattice.result_type('int8', 1.0)
    dtype('float32')
    """
    # The annotations do not bind callers without a type checker.
    if not isinstance(name, str):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise TypeError(
            f"register_lattice: the name must be a str, got {name!r} "
            f"({type(name).__name__}); for example register_lattice('mine', lattice)"
        )
    where = f"register_lattice({name!r})"
    if not name or name != name.strip():
        # The environment variable TYPELATTICE_DTYPE_PROMOTION is read
        # stripped, so a name with spaces around it could never be selected.
        raise ValueError(
            f"{where}: the name must be non-empty, without spaces around it; "
            f"for example register_lattice({name.strip() or 'mine'!r}, lattice)"
        )
    if name in ("standard", "strict"):
        raise ValueError(
            f"{where}: {name!r} is a built-in mode and cannot be replaced; "
            f"register the lattice under a name of its own, for example "
            f"register_lattice('{name}_custom', lattice)"
        )
    if not isinstance(lattice, Lattice):  # pyright: ignore[reportUnnecessaryIsInstance]
        shown = repr(lattice)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise TypeError(
            f"{where}: the lattice must be a typelattice.Lattice, got {shown} "
            f"({type(lattice).__name__}); build one with "
            "typelattice.Lattice(edges), where edges maps each node to the "
            "nodes above it, or typelattice.Lattice.from_file(path)"
        )
    nodes = {a: _promotion_node(a, where) for a in lattice.nodes}
    first: dict[Node, object] = {}
    for a, n in nodes.items():
        other = first.setdefault(n, a)
        if other is not a:
            named = n.__name__ if isinstance(n, type) else str(n)
            raise ValueError(
                f"{where}: the nodes {other!r} and {a!r} both stand for "
                f"{named} (code {node_label(n)!r}); keep one of them"
            )
    edges = {nodes[a]: [nodes[b] for b in lattice.successors(a)] for a in nodes}
    old = _REGISTERED.get(name)
    if old is not None:
        if {a: set(old.successors(a)) for a in old.nodes} == {
            a: set(ups) for a, ups in edges.items()
        }:
            return  # the same lattice again: nothing changes
        raise ValueError(
            f"{where}: {name!r} is registered already, with another lattice; "
            "register this one under a new name, for example "
            f"register_lattice('{name}_2', lattice)"
        )
    _REGISTERED[name] = Lattice(edges, label=node_label)
    _config.register_promotion_name(name)


# -- arguments to nodes -----------------------------------------------------------

_PYTHON_WEAK: Final[dict[type, str]] = {_INT: "i", _FLOAT: "f", _COMPLEX: "c"}
_WEAK_NODE_OF_KIND: Final = {"i": _INT, "u": _INT, "f": _FLOAT, "c": _COMPLEX}


def is_weakly_typed(x: object) -> bool:
    """Whether ``x`` is weakly typed: a Python int/float/complex value, or an
    array whose ``weak_type`` flag is set. ``bool`` is never weak.

    Args:
      x: any value.

    Returns:
      True for weak values (see docs/semantics.md, "Weak types").

    >>> import numpy as np
    >>> is_weakly_typed(1.0), is_weakly_typed(True), is_weakly_typed(np.float32(1))
    (True, False, False)
    """
    if type(x) in _PYTHON_WEAK:
        return True
    weak = getattr(x, "weak_type", None)
    if weak is None:
        weak = getattr(getattr(x, "aval", None), "weak_type", False)
    return bool(weak)


def _dtype_and_weak(
    x: object, state: _config.State
) -> tuple[np.dtype[Any], bool, bool]:
    """One argument's (dtype, weak), and whether that answer may be cached
    (not when it warned)."""
    x64 = state.enable_x64
    t = type(x)
    kind = _PYTHON_WEAK.get(t)  # bool is its own type, never in this table
    if kind is None and t is type:
        kind = _PYTHON_WEAK.get(x)  # type: ignore[call-overload]
    if kind is not None:
        return _dtypes.default_dtype(kind, x64), True, True
    if x is None:
        return _dtypes.default_dtype("f", x64), False, True
    dt = _dtypes.dtype_of(x)
    if t is np.ndarray or isinstance(x, np.dtype | np.generic | str | type):
        weak = False
    else:
        weak = is_weakly_typed(x)
        if hasattr(x, "weak_type") and not weak:
            # A library array made with a 64-bit type keeps it (see
            # docs/semantics.md, "Modes"). A
            # weak one requested no type and is narrowed like a Python
            # scalar, as in JAX: keeping it would make joins non-associative
            # (bool, weak complex128, weak complex128 in 32-bit mode).
            return dt, weak, True
    if x64 or dt not in _dtypes.TO_32:
        return dt, weak, True
    # Not cached: a 64-bit dtype and an array of it share a cache key (the
    # dtype class), but the dtype follows explicit_x64_dtypes (it may warn,
    # raise or stay 64-bit) and the array does not.
    if _dtypes.is_explicit(x):  # pyright: ignore[reportUnknownArgumentType]
        policy = state.explicit_x64_dtypes
        return _dtypes.explicit_x64(dt, policy, "result_type"), weak, False
    # Values of a 64-bit type (NumPy arrays, scalars) are canonicalized, as
    # in JAX: in 32-bit mode they stand for their 32-bit form.
    return _dtypes.TO_32[dt], weak, False


def _node(dt: np.dtype[Any], weak: bool) -> Node:
    if weak:
        return _WEAK_NODE_OF_KIND.get(kind_of(dt), dt)  # a weak bool stays b1
    return dt


def _describe(node: Node) -> str:
    if isinstance(node, type):
        return f"{node.__name__} (weak)"
    return str(node)


def _no_join_error(nodes: Iterable[Node], promotion: str) -> TypePromotionError:
    nodes = tuple(dict.fromkeys(nodes))
    names = "(" + ", ".join(repr(_describe(n)) for n in nodes) + ")"
    head = f"Input dtypes {names} have no available implicit dtype promotion path"
    if promotion != "standard":
        return TypePromotionError(
            f"{head} when dtype_promotion={promotion}. Try explicitly casting "
            "inputs to the desired output type, or set dtype_promotion=standard."
        )
    small: list[str] = sorted({n.name[5] for n in nodes if n in SMALL_FLOATS.values()})  # type: ignore[union-attr]
    if small:
        bits = " and ".join(f"{b}-bit" for b in sorted(small, reverse=True))
        return TypePromotionError(
            f"{head}. To avoid unintended promotion, {bits} floats do not "
            "promote implicitly: cast them explicitly, e.g. x.astype('float32')."
        )
    narrow = sorted({_dtypes.iinfo(n).bits for n in nodes if n in _NARROW})
    if narrow:
        bits = " and ".join(f"{b}-bit" for b in sorted(narrow, reverse=True))
        return TypePromotionError(
            f"{head}. To avoid unintended promotion, {bits} integers do not "
            "promote implicitly: cast them explicitly, e.g. x.astype('int32')."
        )
    return TypePromotionError(
        f"{head}. Try explicitly casting inputs to the desired output type."
    )


def _join(lattice: Lattice[Node], nodes: Iterable[Node], promotion: str) -> Node:
    nodes = tuple(nodes)
    try:
        return lattice.join(*nodes)
    except JoinError:
        raise _no_join_error(nodes, promotion) from None
    except LatticeError as err:
        # A registered lattice may leave types out: they promote with nothing,
        # and the user sees the same error as for any pair without a join.
        if err.kind != "unknown node":
            raise
        raise _no_join_error(nodes, promotion) from None


def _weak_dtype(node: type, x64: bool) -> np.dtype[Any]:
    return _dtypes.default_dtype(_PYTHON_WEAK[node], x64)


def _lattice_result(
    args: tuple[object, ...], state: _config.State
) -> tuple[np.dtype[Any], bool, bool]:
    """The (dtype, weak) an operation computes in, and whether the answer may
    be cached: the join of the arguments' nodes, or of their strong dtypes
    when every argument is weak (docs/semantics.md, "Weak types")."""
    if not args:
        raise ValueError("result_type() needs at least one array or dtype")
    x64 = state.enable_x64
    triples = [_dtype_and_weak(a, state) for a in args]
    cacheable = all(c for _, _, c in triples)
    if len(triples) == 1:
        dt, weak, _ = triples[0]
        return dt, weak and kind_of(dt) != "b", cacheable
    dtypes = {dt for dt, _, _ in triples}
    all_weak = all(weak for _, weak, _ in triples)
    promotion = state.dtype_promotion
    lattice = get_lattice(promotion, x64)
    if len(dtypes) == 1 and not all_weak:
        return dtypes.pop(), False, cacheable
    if all_weak and promotion != "strict":
        # Join the strong counterparts and keep the result weak: weak int16
        # with weak int16 stays int16 rather than becoming the default int.
        out = _join(lattice, dtypes, promotion)
        weak = True
    else:
        out = _join(lattice, (_node(dt, w) for dt, w, _ in triples), promotion)
        weak = isinstance(out, type)
    dt = _weak_dtype(out, x64) if isinstance(out, type) else out
    return dt, weak and kind_of(dt) != "b", cacheable


def _public(dt: np.dtype[Any], weak: bool, x64: bool) -> np.dtype[Any]:
    """What result_type reports for an operation's dtype: a weak result as
    the default dtype of its kind.

    Note: JAX fails with a KeyError for a weak narrow-integer result (NumPy
    calls int4 kind 'V'); here it is the default int like any weak integer
    (docs/semantics.md, "Differences from JAX").
    """
    return _dtypes.default_dtype(kind_of(dt), x64) if weak else dt


# -- the cache ------------------------------------------------------------------

# Argument types whose instances all promote alike: the key is the type.
_TYPE_KEYED: Final = frozenset({bool, int, float, complex})


def _arg_key(x: object) -> object:
    """A hashable key that determines ``_dtype_and_weak(x)``, or ``_NO_KEY``.

    Keys are classes (a Python scalar type, a NumPy scalar type or a NumPy
    DType class), strings, ``None``, or a value's own ``_promotion_key``.
    A class passed as an argument promotes exactly like its instances do
    (``np.int8`` like ``np.int8(3)``, ``int`` like ``3``, ``Int8DType`` like
    ``np.dtype('int8')``), so the two share keys. That makes
    ``tuple(map(type, args))`` a valid key whenever every argument is a value
    of a type in ``_TYPE_KEYED``, a NumPy scalar or a dtype: the fast path.
    """
    t = type(x)
    # For pyright, NumPy classes narrowed here have unknown type parameters.
    if t in _TYPE_KEYED or issubclass(t, np.generic):
        return t  # pyright: ignore[reportUnknownVariableType]
    if t is np.ndarray or isinstance(x, np.dtype):
        dt = x.dtype if t is np.ndarray else x  # type: ignore[attr-defined]
        # Keyed by DType class; parametric ones (strings, datetimes) never
        # promote, so a class always stands for a single dtype here.
        return type(dt)  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    if t is str or t is type or x is None:
        return x
    key = getattr(x, "_promotion_key", None)
    return _NO_KEY if key is None else key


_NO_KEY: Final = object()
_MEMO_LIMIT: Final = 20_000


# -- the optional C accelerator ---------------------------------------------------

_SPEEDUPS_API: Final = 7  # the extension's API_VERSION this module speaks


def _load_speedups() -> tuple[ModuleType | None, str]:
    """The C extension if it is to be used, and a description of the choice."""
    raw = os.environ.get("TYPELATTICE_NO_SPEEDUPS", "").strip()
    off = _config._BOOL_WORDS.get(raw.lower()) if raw else False  # pyright: ignore[reportPrivateUsage]
    if off is None:
        raise ValueError(
            f"environment variable TYPELATTICE_NO_SPEEDUPS={raw!r}: must be "
            f"one of {', '.join(_config._BOOL_WORDS)} or empty"  # pyright: ignore[reportPrivateUsage]
        )
    if off:
        return None, "pure Python (TYPELATTICE_NO_SPEEDUPS is set)"
    try:
        import typelattice._speedups as _speedups
    except ModuleNotFoundError as err:
        if err.name != "typelattice._speedups":
            raise
        return None, "pure Python (typelattice._speedups is not built)"
    except ImportError as err:  # built, but does not load here
        return None, f"pure Python (typelattice._speedups does not load: {err})"
    if getattr(_speedups, "API_VERSION", None) != _SPEEDUPS_API:
        # An editable install whose extension was built from older sources.
        return None, "pure Python (typelattice._speedups is stale: reinstall)"
    _speedups.configure(_scope, np.ndarray, np.generic, np.dtype)
    return _speedups, "C (typelattice._speedups)"


# SPEEDUPS says which implementation of the cached lookups is in use (reports).
_speedups, SPEEDUPS = _load_speedups()

# The global state's caches, kept current by _config (the common case: no
# scope in force, one ContextVar read and one dict lookup).
_global_memo: dict[Any, Any] = {}
_global_promotion_memo: dict[Any, Any] = {}


def _track_global(state: _config.State) -> None:
    global _global_memo, _global_promotion_memo
    _global_memo, _global_promotion_memo = state.memo, state.promotion_memo
    if _speedups is not None:
        _speedups.set_global_memos(
            state.memo, state.promotion_memo, state.rank_promotion == "allow", state
        )


_config.on_global_change(_track_global)


def _cached(args: tuple[object, ...], state: _config.State) -> tuple[Any, ...]:
    """The memo entry for ``args``: (public dtype, weak, operation dtype)."""
    memo = state.memo
    try:
        key = tuple([_arg_key(a) for a in args])
        if _NO_KEY in key:
            raise LookupError
        found = memo.get(key)
        if found is not None:
            return found  # type: ignore[no-any-return]
    except (LookupError, TypeError):
        key = None
    dt, weak, cacheable = _lattice_result(args, state)
    entry = (_public(dt, weak, state.enable_x64), weak, dt)
    if key is not None and cacheable:
        if len(memo) > _MEMO_LIMIT:
            memo.clear()
        memo[key] = entry
    return entry


@overload
def result_type(
    *args: ArrayLike | DTypeLike | None, return_weak_type_flag: Literal[False] = ...
) -> np.dtype[Any]: ...
@overload
def result_type(
    *args: ArrayLike | DTypeLike | None, return_weak_type_flag: Literal[True]
) -> tuple[np.dtype[Any], bool]: ...
@overload
def result_type(
    *args: ArrayLike | DTypeLike | None, return_weak_type_flag: bool
) -> np.dtype[Any] | tuple[np.dtype[Any], bool]: ...


def result_type(
    *args: ArrayLike | DTypeLike | None, return_weak_type_flag: bool = False
) -> np.dtype[Any] | tuple[np.dtype[Any], bool]:
    """The dtype of an operation on ``args``, JAX's promotion rules.

    Args:
      *args: dtypes, dtype names, NumPy scalar types, Python scalars (weak) or
        the types ``int``/``float``/``complex`` (weak), ``bool``, NumPy
        scalars and arrays, arrays carrying ``weak_type``, ``None`` (the
        default float type).
      return_weak_type_flag: also return whether the result is weak.

    Returns:
      The promoted dtype, canonical for the current mode (32-bit types unless
      ``enable_x64``), and with ``return_weak_type_flag`` the weak flag.

    Raises:
      TypePromotionError: the inputs have no join in the current mode.
      TypeError: an argument is not a bool or numeric dtype-like.
      ValueError: no argument.

    >>> import numpy as np
    >>> result_type('int8', 'uint8')
    dtype('int16')
    >>> result_type(np.zeros(3, 'int8'), 2)
    dtype('int8')
    >>> result_type('bfloat16', 1.0, return_weak_type_flag=True)
    (dtype(bfloat16), False)
    >>> result_type(1, 1.0, return_weak_type_flag=True)
    (dtype('float32'), True)
    """
    scope = _scope.get()
    memo = _global_memo if scope is None else scope.resolve().memo
    entry = memo.get(tuple(map(type, args)))
    if entry is None:
        # NumPy arrays: keyed by their DType class (see _arg_key). For
        # pyright, type(a) does not narrow a union with classes (type[int]...).
        entry = memo.get(
            tuple([type(a.dtype) if type(a) is np.ndarray else type(a) for a in args])  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType, reportAttributeAccessIssue]
        )
        if entry is None:
            entry = _cached(args, _config.current())
    return (entry[0], entry[1]) if return_weak_type_flag else entry[0]


def lattice_result_type(*args: Any) -> tuple[np.dtype[Any], bool]:
    """The (dtype, weak) an operation on ``args`` computes in.

    Unlike :func:`result_type`, a weak result keeps its own width (weak int16
    with weak int16 is weak int16) and is not replaced by the default type of
    its kind: this is the dtype array operations use.

    Args:
      *args: what :func:`result_type` takes.

    Returns:
      ``(dtype, weak)``: the dtype to compute in and whether the result is
      weak.

    Raises:
      TypePromotionError: the inputs have no join in the current mode.

    >>> lattice_result_type('int16', 1)
    (dtype('int16'), False)
    >>> import typelattice
    >>> w = typelattice.ShapeDtypeStruct((), 'int16', weak_type=True)
    >>> lattice_result_type(w, w), result_type(w, w)
    ((dtype('int16'), True), dtype('int32'))
    """
    # The same lookup as result_type's, written out in both: a shared helper
    # would add a Python call to every operation's hot path.
    scope = _scope.get()
    memo = _global_memo if scope is None else scope.resolve().memo
    entry = memo.get(tuple(map(type, args)))
    if entry is None:
        entry = memo.get(
            tuple([type(a.dtype) if type(a) is np.ndarray else type(a) for a in args])  # pyright: ignore[reportUnknownArgumentType]
        )
        if entry is None:
            entry = _cached(args, _config.current())
    return entry[2], entry[1]


# -- promote_types ------------------------------------------------------------------


def _dtype_like_node(x: object) -> Node:
    if type(x) is type and x in _PYTHON_WEAK:
        return x
    if x is None:
        return np.dtype("float64")  # as np.dtype(None)
    if isinstance(x, np.dtype | str | type):
        return _dtypes.dtype_of(x)  # pyright: ignore[reportUnknownArgumentType]
    raise TypeError(
        f"promote_types takes dtypes, dtype names or scalar types, not {x!r}; "
        "for values use result_type"
    )


_WEAK_64: Final = {t: _dtypes.default_dtype(k, True) for t, k in _PYTHON_WEAK.items()}
# A cached (a, b) key could only be confused with another one holding Python's
# int/float/complex if a dtype hashed exactly like one of those types (NumPy
# dtypes compare equal to them). Checked once; never true in practice.
_PROMOTE_CACHE_SAFE: Final = all(hash(d) != hash(t) for t, d in _WEAK_64.items())


def promote_types(a: DTypeLike, b: DTypeLike) -> np.dtype[Any]:
    """The join of two dtype-likes on the current mode's lattice.

    Unlike :func:`result_type`, nothing is canonicalized (as in JAX): in
    32-bit mode ``promote_types('uint32', 'int64')`` is int64. ``int``,
    ``float`` and ``complex`` are the weak nodes; a weak result is given as
    the 64-bit type of its kind.

    Args:
      a: a dtype, dtype name or code, scalar type, or ``int``/``float``/
        ``complex`` (the weak types).
      b: the same.

    Returns:
      The join, as an ``np.dtype``.

    Raises:
      TypePromotionError: the two have no join in the current mode.
      TypeError: an argument is not a dtype-like.

    >>> promote_types('int8', 'uint8')
    dtype('int16')
    >>> promote_types(int, float)
    dtype('float64')
    >>> promote_types('bfloat16', 'float16')
    dtype('float32')
    """
    scope = _scope.get()
    try:
        if scope is None:
            return _global_promotion_memo[(a, b)]  # type: ignore[no-any-return]
        return scope.resolve().promotion_memo[(a, b)]  # type: ignore[no-any-return]
    except (KeyError, TypeError):  # not cached yet, or unhashable
        pass
    state = _config.current()
    promotion = state.dtype_promotion
    lattice = get_lattice(promotion, state.enable_x64)
    out = _join(lattice, (_dtype_like_node(a), _dtype_like_node(b)), promotion)
    result = _WEAK_64[out] if isinstance(out, type) else out
    if _PROMOTE_CACHE_SAFE and _cacheable_dtype_like(a) and _cacheable_dtype_like(b):
        state.promotion_memo[(a, b)] = result
    return result


def _cacheable_dtype_like(x: object) -> bool:
    return x is None or type(x) in (str, type) or isinstance(x, np.dtype)


def safe_to_cast(
    input_dtype_or_value: ArrayLike | DTypeLike,
    output_dtype_or_value: ArrayLike | DTypeLike,
) -> bool:
    """Whether converting to the output type loses nothing under promotion.

    True iff the two canonical dtypes are equal or promoting the input with
    the output's dtype gives the output's dtype.

    Args:
      input_dtype_or_value: a dtype-like or a value (Python scalars are
        weak).
      output_dtype_or_value: a dtype-like or a value, taken as strong.

    Returns:
      Whether the conversion is a promotion (or no change).

    Raises:
      TypePromotionError: the two have no join in the current mode (as JAX).

    >>> safe_to_cast('int8', 'int32'), safe_to_cast('float32', 'int32')
    (True, False)
    >>> safe_to_cast(1, 'uint8')
    True
    """
    in_dt = _dtypes.dtype(input_dtype_or_value, canonicalize=True)
    out_dt = _dtypes.dtype(output_dtype_or_value, canonicalize=True)
    if in_dt == out_dt:
        return True
    # The output is taken as strongly typed, whatever was passed.
    return bool(result_type(input_dtype_or_value, out_dt) == out_dt)


def promotion_table(
    nodes: Iterable[Node], promotion: str | None = None, x64: bool | None = None
) -> list[list[Node | None]]:
    """The lattice's join table over ``nodes`` (``None`` where there is no join)."""
    return get_lattice(promotion, x64).table(list(nodes))


def all_nodes() -> tuple[Node, ...]:
    """Every strong type of the universe, then ``int``, ``float``, ``complex``."""
    return (*ALL_DTYPES, _INT, _FLOAT, _COMPLEX)


def edges_literal(lattice: Lattice[Node]) -> Mapping[str, list[str]]:
    """A lattice's edges as codes, e.g. ``{'b1': ['i*'], ...}``."""
    return {
        node_label(a): [node_label(b) for b in lattice.successors(a)]
        for a in lattice.nodes
    }


# The pure-Python functions, whichever version the public names hold. The C
# versions call them on a miss; tests compare the two.
_py_result_type: Final = result_type
_py_lattice_result_type: Final = lattice_result_type
_py_promote_types: Final = promote_types

_F = TypeVar("_F", bound=Callable[..., Any])


def _fast_path(
    kind: Literal["result_type", "lattice_result_type", "promote_types"], fn: _F
) -> _F:
    """The C version of ``fn``, with its name, docstring and signature."""
    assert _speedups is not None
    fast = _speedups.FastPath(kind, fn)
    functools.update_wrapper(fast, fn)  # also sets __wrapped__ = fn
    return cast(_F, fast)


if _speedups is not None:
    result_type = _fast_path("result_type", result_type)
    lattice_result_type = _fast_path("lattice_result_type", lattice_result_type)
    promote_types = _fast_path("promote_types", promote_types)
