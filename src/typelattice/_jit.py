"""Abstract evaluation: :func:`eval_shape`, :func:`jit` and :class:`ShapeDtypeStruct`.

Both run a function on :class:`~typelattice.numpy.Tracer` arguments, which
keep the shape, dtype and weak flag of the values they stand for. A Python
scalar argument becomes a *weak* tracer (a weak int32, float32 or complex64
in 32-bit mode), so the traced function promotes exactly as the eager one
does: ``jit(f)(x, 2)`` and ``f(x, 2)`` give the same dtypes.

Arguments may be nested in tuples, lists and dicts (``None`` is an empty
container); every other leaf must be an array or a scalar, or be marked
static.
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Generic, NamedTuple, ParamSpec, TypeVar, overload

import numpy as np

from typelattice import _config, _dtypes
from typelattice._promotion import (
    _speedups,  # pyright: ignore[reportPrivateUsage]
)
from typelattice.numpy import _core
from typelattice.numpy import _tracer as _tr
from typelattice.numpy._array import Array, ArrayImpl, wrap
from typelattice.numpy._trace import Program

_new_object = object.__new__

__all__ = ["CacheInfo", "ShapeDtypeStruct", "eval_shape", "jit"]

P = ParamSpec("P")
R = TypeVar("R")

_PY_KINDS = {int: "i", float: "f", complex: "c"}


class ShapeDtypeStruct:
    """A shape, a dtype and a weak flag: an array without values.

    What :func:`eval_shape` returns for each array, and what it takes in
    place of one. Immutable and hashable.

    Args:
      shape: the dimensions, non-negative integers.
      dtype: a dtype-like, kept as given (no 32-bit narrowing).
      weak_type: whether it stands for a weak array.

    Raises:
      TypeError: a shape entry that is not an integer, or no dtype.
      ValueError: a negative dimension.

    >>> s = ShapeDtypeStruct((2, 3), 'float32')
    >>> s
    ShapeDtypeStruct(shape=(2, 3), dtype=float32)
    >>> s.ndim, s.size, s.weak_type
    (2, 6, False)
    """

    __slots__ = ("dtype", "shape", "weak_type")

    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    weak_type: bool

    def __init__(
        self, shape: Iterable[int], dtype: Any, weak_type: bool = False
    ) -> None:
        dims: list[int] = []
        for d in shape:
            try:
                dim = operator.index(d)
            except TypeError:
                raise TypeError(
                    f"ShapeDtypeStruct: shape entries must be integers, got {d!r}"
                ) from None
            if dim < 0:
                raise ValueError(f"ShapeDtypeStruct: negative dimension {dim}")
            dims.append(dim)
        if dtype is None:
            raise TypeError("ShapeDtypeStruct: dtype is required (None given)")
        object.__setattr__(self, "shape", tuple(dims))
        object.__setattr__(self, "dtype", _dtypes.dtype(dtype, canonicalize=False))
        object.__setattr__(self, "weak_type", bool(weak_type))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("ShapeDtypeStruct is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("ShapeDtypeStruct is immutable")

    def __reduce__(self) -> tuple[type[ShapeDtypeStruct], tuple[Any, ...]]:
        return (ShapeDtypeStruct, (self.shape, self.dtype, self.weak_type))

    def __copy__(self) -> ShapeDtypeStruct:
        return self

    def __deepcopy__(self, memo: object) -> ShapeDtypeStruct:
        return self

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self.shape)

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype}{weak})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ShapeDtypeStruct):
            return NotImplemented
        return (self.shape, self.dtype, self.weak_type) == (
            other.shape,
            other.dtype,
            other.weak_type,
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))


# -- pytrees ----------------------------------------------------------------------

# A tree's structure: None for a leaf, else (kind, detail, children).
TreeDef = tuple[Any, ...] | None


def _flatten(obj: Any, leaves: list[Any]) -> TreeDef:
    t = obj.__class__
    if t is tuple or t is list:
        return (t, None, tuple([_flatten(x, leaves) for x in obj]))
    if t is dict:
        keys = sorted(obj)
        return (dict, tuple(keys), tuple([_flatten(obj[k], leaves) for k in keys]))
    if obj is None:
        return (None, None, ())
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # pyright: ignore[reportUnknownArgumentType] - a namedtuple
        items: tuple[Any, ...] = obj  # pyright: ignore[reportUnknownVariableType]
        return (t, None, tuple([_flatten(x, leaves) for x in items]))
    leaves.append(obj)
    return None


def _unflatten(tree: TreeDef, leaves: Iterable[Any]) -> Any:
    it = iter(leaves)

    def build(node: TreeDef) -> Any:
        if node is None:
            return next(it)
        kind, detail, children = node
        items = [build(child) for child in children]
        if kind is None:
            return None
        if kind is list:
            return items
        if kind is tuple:
            return tuple(items)
        if kind is dict:
            return dict(zip(detail, items, strict=True))
        return kind(*items)  # a namedtuple

    return build(tree)


# -- arguments --------------------------------------------------------------------


def _not_an_array(where: str, leaf: object, static_hint: bool) -> TypeError:
    hint = (
        "; mark it static with static_argnums/static_argnames"
        if static_hint
        else "; pass it with functools.partial instead"
    )
    return TypeError(
        f"{where}: argument {leaf!r:.60} of type {type(leaf).__name__} is not "
        f"an array or a scalar{hint}"
    )


def _scalar_key(t: type, x64: bool) -> _core.Aval:
    if t is bool:
        return _core.aval(np.dtype(bool), False)
    return _core.aval(_dtypes.default_dtype(_PY_KINDS[t], x64), True)


# An argument's abstract value: (key, shape, what elementwise plans see).
Abstract = tuple[_core.Aval, tuple[int, ...], object]


def _abstract(leaf: Any, where: str) -> Abstract:
    """The abstract value an argument of eval_shape stands for."""
    t = leaf.__class__
    if isinstance(leaf, Array):
        key = _core.aval(leaf.dtype, leaf.weak_type)
        return key, leaf.shape, key
    if isinstance(leaf, ShapeDtypeStruct):
        dt = leaf.dtype
        if dt in _dtypes.TO_32 and not _config.current().enable_x64:
            policy = _config.current().explicit_x64_dtypes
            dt = _dtypes.explicit_x64(dt, policy, where)
        key = _core.aval(dt, leaf.weak_type)
        return key, leaf.shape, key
    if t in _PY_KINDS or t is bool:
        key = _scalar_key(t, _config.current().enable_x64)
        return key, (), bool if t is bool else key
    if isinstance(leaf, np.ndarray | np.generic):
        value: np.ndarray[Any, Any] = np.asarray(leaf)  # pyright: ignore[reportUnknownArgumentType]
        dt = value.dtype
        if dt not in _dtypes.ALL_SET:
            raise TypeError(f"{where}: unsupported dtype {dt} of argument {leaf!r:.60}")
        if dt in _dtypes.TO_32 and not _config.current().enable_x64:
            dt = _dtypes.TO_32[dt]
        key = _core.aval(dt, False)
        return key, value.shape, key
    raise _not_an_array(where, leaf, static_hint=False)


def _argument(leaf: Any, where: str, pos: int, x64: bool) -> tuple[Any, Abstract]:
    """A jit argument's value (canonical, checked, never the caller's
    mutable array) and its abstract value."""
    t = leaf.__class__
    if t in _PY_KINDS or t is bool:
        key = _scalar_key(t, x64)
        value = np.asarray(_core.python_scalar_to(leaf, key[0], where))
        return value, (key, (), bool if t is bool else key)
    if isinstance(leaf, ArrayImpl):
        key = leaf._key  # pyright: ignore[reportPrivateUsage]
        value = leaf._value  # pyright: ignore[reportPrivateUsage]
        return value, (key, value.shape, key)
    if isinstance(leaf, np.ndarray | np.generic):
        raw: Any = leaf  # pyright: ignore[reportUnknownVariableType]
        # A result may be this argument or a view of it: it must not change
        # when the caller's array does.
        value = _core.unshared(_core.from_numpy(raw, where, pos), raw)
        key = _core.aval(value.dtype, False)
        return value, (key, value.shape, key)
    raise _not_an_array(where, leaf, static_hint=True)


def _output(leaf: Any, trace: _tr.Trace, where: str) -> Any:
    """An output leaf as a tracer of ``trace`` or a concrete array."""
    if isinstance(leaf, _tr.Tracer):
        if leaf._trace is not trace:  # pyright: ignore[reportPrivateUsage]
            leaf.check()
        return leaf
    if isinstance(leaf, ArrayImpl):
        return leaf
    if (
        type(leaf) in _PY_KINDS
        or type(leaf) is bool
        or isinstance(leaf, np.ndarray | np.generic)
    ):
        from typelattice.numpy._creation import asarray

        return asarray(leaf)
    raise TypeError(
        f"{where}: the function returned {leaf!r:.60} of type "
        f"{type(leaf).__name__}; results must be arrays or scalars (in "
        "tuples, lists and dicts)"
    )


# -- tracing -------------------------------------------------------------------


def _run_traced(
    call: Callable[[Any, Any], Any],
    tree: TreeDef,
    avals: Sequence[Abstract],
    where: str,
    abstract_only: bool = False,
) -> tuple[_tr.Trace, list[_tr.Tracer], list[Any], TreeDef]:
    """Run ``call(args, kwargs)`` on tracers for the flattened arguments.

    Returns the finished trace, the argument tracers, the result leaves
    (tracers or concrete arrays) and the results' structure.
    """
    trace, token = _tr.start(where, abstract_only)
    try:
        tracers = [trace.new_tracer(*aval) for aval in avals]
        targs, tkwargs = _unflatten(tree, tracers)
        out = call(targs, tkwargs)
        out_leaves: list[Any] = []
        out_tree = _flatten(out, out_leaves)
        results = [_output(leaf, trace, where) for leaf in out_leaves]
    finally:
        _tr.stop(trace, token)
    return trace, tracers, results, out_tree


# -- eval_shape -----------------------------------------------------------------


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes, dtypes and weak flags ``fun(*args, **kwargs)`` would give.

    Arguments are arrays, :class:`ShapeDtypeStruct` objects or Python
    scalars (weak), nested in tuples, lists and dicts; ``fun`` runs once on
    tracers, and the result has the structure of ``fun``'s with a
    :class:`ShapeDtypeStruct` for each array. Nothing is computed at the
    arrays' sizes: elementwise operations resolve their dtypes, the other
    functions run on small stand-ins with rules for their result shapes
    (see :mod:`typelattice.numpy._abstract`), and creation functions
    (``zeros``, ``arange``...) called in ``fun`` give tracers, as in JAX.

    Args:
      fun: the function to evaluate abstractly.
      *args: its positional arguments: arrays, :class:`ShapeDtypeStruct`
        objects, Python scalars (weak tracers), or containers of them.
      **kwargs: its keyword arguments, likewise.

    Returns:
      ``fun``'s result with each array replaced by a
      :class:`ShapeDtypeStruct` (other values as ``fun`` returned them).

    Raises:
      Whatever the eager call would raise for those dtypes and shapes
      (TypePromotionError, OverflowError, ValueError...);
      ConcretizationTypeError where ``fun`` needs a value (``bool(x)``).

    >>> import typelattice.numpy as tnp
    >>> x = ShapeDtypeStruct((1000, 1000), 'int8')
    >>> eval_shape(lambda x, y: (x * y, x.sum(axis=0)), x, 2)
    (ShapeDtypeStruct(shape=(1000, 1000), dtype=int8), \
ShapeDtypeStruct(shape=(1000,), dtype=int32))
    """
    where = f"eval_shape({getattr(fun, '__name__', 'fun')})"
    leaves: list[Any] = []
    tree = _flatten((args, kwargs), leaves)
    avals = [_abstract(leaf, where) for leaf in leaves]

    def call(targs: Any, tkwargs: Any) -> Any:
        return fun(*targs, **tkwargs)

    _, _, results, out_tree = _run_traced(call, tree, avals, where, True)
    structs = [ShapeDtypeStruct(r.shape, r.dtype, r.weak_type) for r in results]
    return _unflatten(out_tree, structs)


# -- jit --------------------------------------------------------------------------


class CacheInfo(NamedTuple):
    """Statistics of a jitted function's cache of traced programs.

    Attributes:
      hits: calls that found their program in the cache.
      misses: calls that traced (a new signature).
      traces: traces run (as many as misses).
      currsize: programs in the cache now.

    >>> import typelattice, typelattice.numpy as tnp
    >>> f = typelattice.jit(lambda x: x + 1)
    >>> _ = f(tnp.zeros(2)), f(tnp.ones(2)), f(tnp.zeros(3))
    >>> f.cache_info()
    CacheInfo(hits=1, misses=2, traces=2, currsize=2)
    """

    hits: int
    misses: int
    traces: int
    currsize: int


class _Entry:
    """One traced signature: the program and how to build the results."""

    __slots__ = ("consts", "keys", "program", "run", "single", "tree")

    def __init__(
        self,
        program: Program,
        keys: list[_core.Aval],
        consts: list[tuple[int, Any]],
        tree: TreeDef,
    ) -> None:
        self.program = program
        self.run = program.run
        self.keys = keys  # of the program's outputs
        self.consts = consts  # (position, array) of outputs that are constants
        self.tree = tree
        # The key of the result when it is one computed array (the common
        # case, built without walking the tree).
        self.single = keys[0] if tree is None and not consts else None

    def results(self, outs: Sequence[Any]) -> Any:
        """The function's result from the program's outputs."""
        single = self.single
        if single is not None:
            v = outs[0]
            return wrap(v if type(v) is np.ndarray else np.asarray(v), single)
        results: list[Any] = [
            wrap(v if type(v) is np.ndarray else np.asarray(v), key)
            for v, key in zip(outs, self.keys, strict=True)
        ]
        for pos, const in self.consts:
            results.insert(pos, const)
        return _unflatten(self.tree, results)


class Jitted(Generic[P, R]):
    """A function traced once per abstract signature and replayed on NumPy.

    Made by :func:`jit`; call it like the function it wraps. It keeps the
    wrapped function's name and docstring.

    Args:
      fun: the function.
      static_argnums: positions of the static arguments.
      static_argnames: names of the static arguments.

    >>> import typelattice, typelattice.numpy as tnp
    >>> @typelattice.jit
    ... def double(x):
    ...     'Twice x.'
    ...     return 2 * x
    >>> double, double.__doc__
    (<jitted double>, 'Twice x.')
    >>> double(tnp.asarray([1, 2], dtype='uint8'))
    Array([2, 4], dtype=uint8)
    """

    def __init__(
        self,
        fun: Callable[P, R],
        static_argnums: Sequence[int],
        static_argnames: Sequence[str],
    ) -> None:
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._name = getattr(fun, "__qualname__", getattr(fun, "__name__", "fun"))
        nums = set(static_argnums)
        names = set(static_argnames)
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):  # builtins without a signature
            params = []
        positional = [
            p.name
            for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        for i, pname in enumerate(positional):
            if i in nums and params[i].kind is not inspect.Parameter.POSITIONAL_ONLY:
                names.add(pname)
            if pname in names:
                nums.add(i)
        self._nums = frozenset(nums)
        self._names = frozenset(names)
        self._has_static = bool(nums or names)
        self._cache: dict[Hashable, _Entry] = {}
        # The same entries, for calls with arrays as positional arguments
        # only, under a flat key: (configuration, aval, shape, aval, ...).
        self._fast: dict[tuple[Any, ...], _Entry] = {}
        self._hits = 0
        self._misses = 0

    def __repr__(self) -> str:
        return f"<jitted {self._name}>"

    def __get__(self, obj: object, objtype: type | None = None) -> Any:
        # As a method: bind like a function.
        if obj is None:
            return self
        call: Callable[..., Any] = self
        bound: Any = obj
        return functools.partial(call, bound)

    def cache_info(self) -> CacheInfo:
        """Hits, misses (each a trace) and cached programs.

        Returns:
          A :class:`CacheInfo`.

        >>> import typelattice, typelattice.numpy as tnp
        >>> f = typelattice.jit(lambda x, k: x * k)
        >>> _ = f(tnp.zeros(2), 2), f(tnp.zeros(2), 3)   # k: a weak tracer
        >>> f.cache_info()
        CacheInfo(hits=1, misses=1, traces=1, currsize=1)
        """
        return CacheInfo(self._hits, self._misses, self._misses, len(self._cache))

    def clear_cache(self) -> None:
        """Forget every traced program (the next call traces again).

        >>> import typelattice, typelattice.numpy as tnp
        >>> f = typelattice.jit(lambda x: -x)
        >>> _ = f(tnp.zeros(2))
        >>> f.clear_cache()
        >>> f.cache_info().currsize
        0
        """
        self._cache.clear()
        self._fast.clear()

    def _split(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any], tuple[Any, ...]]:
        """(dynamic args, dynamic kwargs, static values)."""
        n = len(args)
        nums = {i + n if i < 0 else i for i in self._nums}
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._names}
        statics: list[Any] = [(i, args[i]) for i in sorted(nums) if i < n]
        statics += [(k, kwargs[k]) for k in sorted(kwargs) if k in self._names]
        for where, value in statics:
            try:
                hash(value)
            except TypeError:
                what = f"position {where}" if isinstance(where, int) else f"{where!r}"
                raise TypeError(
                    f"jit({self._name}): the static argument at {what} must be "
                    f"hashable, got {type(value).__name__} {value!r:.60}. Pass a "
                    "tuple instead of a list, or make it a dynamic (array) argument."
                ) from None
        # Equal values of different types (2, 2.0, True) trace differently.
        typed = tuple((where, value.__class__, value) for where, value in statics)
        return dyn_args, dyn_kwargs, typed

    def _dynamic(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[TreeDef, list[Any], tuple[Any, ...]]:
        """The dynamic arguments' structure and leaves, and the static values."""
        if self._has_static:
            dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        else:
            dyn_args, dyn_kwargs, statics = args, kwargs, ()
        leaves: list[Any] = []
        return _flatten((dyn_args, dyn_kwargs), leaves), leaves, statics

    def _merge(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        dyn_args: Sequence[Any],
        dyn_kwargs: dict[str, Any],
    ) -> tuple[list[Any], dict[str, Any]]:
        """The call's arguments with the dynamic ones replaced."""
        n = len(args)
        nums = {i + n if i < 0 else i for i in self._nums}
        it = iter(dyn_args)
        merged = [a if i in nums else next(it) for i, a in enumerate(args)]
        merged_kw = {
            k: (v if k in self._names else dyn_kwargs[k]) for k, v in kwargs.items()
        }
        return merged, merged_kw

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if _tr.current_trace() is not None:
            return self._inline(args, kwargs)  # type: ignore[no-any-return]
        fast_key: tuple[Any, ...] | None = None
        if not kwargs and not self._has_static:
            # The common call: arrays as positional arguments. Its entry is
            # also kept under a flat key (the configuration, then each
            # array's abstract value and shape), cheap to hash and compare.
            flat: list[Any] = [_config.current()]
            arrays: list[Any] = []
            for a in args:
                if type(a) is not ArrayImpl:
                    break
                v = a._value  # pyright: ignore[reportPrivateUsage]
                arrays.append(v)
                flat.append(a._key)  # pyright: ignore[reportPrivateUsage]
                flat.append(v.shape)
            else:
                fast_key = tuple(flat)
                entry = self._fast.get(fast_key)
                if entry is not None:
                    self._hits += 1
                    outs = entry.program.run(*arrays)
                    single = entry.single
                    if single is not None and type(outs[0]) is np.ndarray:
                        result: ArrayImpl = _new_object(ArrayImpl)
                        result._value = outs[0]  # pyright: ignore[reportPrivateUsage]
                        result._key = single  # pyright: ignore[reportPrivateUsage]
                        return result  # type: ignore[return-value]
                    return entry.results(outs)  # type: ignore[no-any-return]
        tree, leaves, statics = self._dynamic(args, kwargs)
        state = _config.current()
        values: list[Any] = []
        sig: list[Any] = []
        where = f"jit({self._name})"
        for leaf in leaves:
            if leaf.__class__ is ArrayImpl:  # the common case, inline
                v = leaf._value
                values.append(v)
                sig.append((leaf._key, v.shape, leaf._key))
            elif isinstance(leaf, _tr.Tracer):
                leaf.check()  # raises: no trace is running here
                raise AssertionError("unreachable")
            else:
                v, abstract = _argument(leaf, where, len(values), state.enable_x64)
                values.append(v)
                sig.append(abstract)
        cache_key = (tree, tuple(sig), statics, state)
        entry = self._cache.get(cache_key)
        if entry is None:
            self._misses += 1
            entry = self._trace(args, kwargs, tree, sig, where)
            self._cache[cache_key] = entry
        else:
            self._hits += 1
        if fast_key is not None:
            self._fast[fast_key] = entry
        return entry.results(entry.program.run(*values))  # type: ignore[no-any-return]

    def _inline(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Called inside another trace: run ``fun`` there (the enclosing
        program records its operations), with the concrete dynamic arguments
        as placeholders, so that they are not concrete to ``fun``, as when
        it is called directly."""
        where = f"jit({self._name})"
        tree, leaves, _ = self._dynamic(args, kwargs)
        x64 = _config.current().enable_x64
        held: list[Any] = []
        for leaf in leaves:
            if isinstance(leaf, _tr.Tracer):
                held.append(leaf)
            else:
                value, (key, _, _) = _argument(leaf, where, len(held), x64)
                held.append(_tr.placeholder(value, key))
        inner_args, inner_kwargs = _unflatten(tree, held)
        call_args, call_kwargs = self._merge(args, kwargs, inner_args, inner_kwargs)
        fun: Callable[..., Any] = self._fun
        return fun(*call_args, **call_kwargs)

    def _trace(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tree: TreeDef,
        sig: Sequence[Abstract],
        where: str,
    ) -> _Entry:
        fun: Callable[..., Any] = self._fun

        def call(dyn_args: Any, dyn_kwargs: Any) -> Any:
            call_args, call_kwargs = self._merge(args, kwargs, dyn_args, dyn_kwargs)
            return fun(*call_args, **call_kwargs)

        trace, tracers, results, out_tree = _run_traced(call, tree, sig, where)
        outs: list[int] = []
        keys: list[_core.Aval] = []
        consts: list[tuple[int, Any]] = []
        for pos, r in enumerate(results):
            if isinstance(r, _tr.Tracer):
                outs.append(r._var)  # pyright: ignore[reportPrivateUsage]
                keys.append(r._key)  # pyright: ignore[reportPrivateUsage]
            else:
                consts.append((pos, r))
        ins = [t._var for t in tracers]  # pyright: ignore[reportPrivateUsage]
        program = Program(trace, ins, outs)
        return _Entry(program, keys, consts, out_tree)

    def program(self, *args: P.args, **kwargs: P.kwargs) -> Program:
        """The program traced for these arguments (traced now if needed):
        its operations with their resolved dtypes, for inspection.

        Args:
          *args: arguments as for a call.
          **kwargs: keyword arguments as for a call.

        Returns:
          The program; ``print`` it to read it.

        >>> import typelattice.numpy as tnp
        >>> f = jit(lambda x, y: x * y + 1)
        >>> print(f.program(tnp.zeros(3, 'int8'), 2))
        program(v0:int8[3], v1:int32[] weak):
          v2:int8[3] = multiply(v0, v1->int8)
          v3:int8[3] = add(v2, 1)
          return (v3)
        """
        tree, leaves, _ = self._dynamic(args, kwargs)
        where = f"jit({self._name})"
        sig = [_abstract(leaf, where) for leaf in leaves]
        return self._trace(args, kwargs, tree, sig, where).program


if _speedups is not None:
    # The flat-key path of __call__ in C (the method stays the fallback).
    _speedups.configure_jit(_tr._current)  # pyright: ignore[reportPrivateUsage]
    _python_call: Callable[..., Any] = vars(Jitted)["__call__"]
    setattr(Jitted, "__call__", _speedups.JitCall(_python_call))  # noqa: B010


@overload
def jit(
    fun: Callable[P, R],
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> Jitted[P, R]: ...
@overload
def jit(
    fun: None = None,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> Callable[[Callable[P, R]], Jitted[P, R]]: ...


def jit(
    fun: Callable[P, R] | None = None,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
) -> Jitted[P, R] | Callable[[Callable[P, R]], Jitted[P, R]]:
    """``fun`` traced once per abstract signature, then replayed on NumPy.

    The first call with given argument shapes, dtypes and weak flags (and
    static values, and configuration) runs ``fun`` on tracers and records
    its operations with every dtype resolved; later calls run the recorded
    NumPy calls directly. Python scalar arguments are weak, so results have
    the dtypes and weak flags of the eager call. Python side effects (print,
    appending to a list) happen while tracing only.

    Args:
      fun: the function; or omit it to get a decorator.
      static_argnums: positions of arguments passed to ``fun`` as they are
        (hashable; each new value traces again), for values that decide
        shapes or Python control flow.
      static_argnames: names of such arguments.

    Returns:
      A :class:`Jitted` function (without ``fun``: a decorator making one).

    Raises:
      TypeError: ``fun`` is not callable.

    >>> import typelattice.numpy as tnp
    >>> @jit
    ... def f(x, y):
    ...     return tnp.tanh(x) * y + 1
    >>> f(tnp.asarray([0.0, 1.0], dtype='bfloat16'), 2.0)
    Array([1, 2.53125], dtype=bfloat16)
    >>> f.cache_info()
    CacheInfo(hits=0, misses=1, traces=1, currsize=1)
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else static_argnums
    names = (static_argnames,) if isinstance(static_argnames, str) else static_argnames
    if fun is None:
        return lambda f: Jitted(f, tuple(nums), tuple(names))
    if not callable(fun):
        raise TypeError(f"jit: expected a function, got {fun!r:.60}")
    return Jitted(fun, tuple(nums), tuple(names))
