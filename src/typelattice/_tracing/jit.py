"""Abstract evaluation: :func:`eval_shape`, :func:`jit` and :class:`ShapeDtypeStruct`.

Both run a function on :class:`~typelattice.Tracer` arguments, which
keep the shape, dtype and weak flag of the values they stand for. A Python
scalar argument becomes a *weak* tracer (a weak int32, float32 or complex64
in 32-bit mode), so the traced function promotes exactly as the eager one
does: ``jit(f)(x, 2)`` and ``f(x, 2)`` give the same dtypes.

Arguments may be nested in tuples, lists, dicts and namedtuples (``None``
is an empty container: the pytrees of :mod:`typelattice._tracing.tree`);
every other leaf must be an array or a scalar, or be marked static.
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import (
    Any,
    Final,
    Generic,
    NamedTuple,
    ParamSpec,
    TypeVar,
    cast,
    overload,
)

import numpy as np

from typelattice import _config, _core, _dtypes, _sharding
from typelattice._array import (
    ArrayImpl,
    BackendArray,
    check_mixed,
    from_python_or_numpy,
    native_result,
    wrap,
)
from typelattice._backends import IN_USE, NUMPY
from typelattice._backends import current as current_backend
from typelattice._basearray import Array
from typelattice._promotion import (
    _speedups,  # pyright: ignore[reportPrivateUsage]
)
from typelattice._tracing import tracer as _tr
from typelattice._tracing import tree as _tree
from typelattice._tracing.primitive import PRIMITIVES, PrimitiveEquation
from typelattice._tracing.trace import Equation, Native, Program, Source
from typelattice._tracing.tree import PyTreeDef

_new_object = object.__new__

__all__ = [
    "FUSE_CONVERSIONS",
    "CacheInfo",
    "ShapeDtypeStruct",
    "argument_value",
    "eval_shape",
    "fuse_conversions",
    "jit",
]

P = ParamSpec("P")
R = TypeVar("R")

_PY_KINDS = {int: "i", float: "f", complex: "c"}
_SCALAR_TYPES = frozenset((bool, int, float, complex))
_GONE = object()


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


# A Python scalar argument stands for a value of its lattice node's dtype:
# weak int32/float32/complex64 (64-bit types with enable_x64), strong bool.
# Per (type, x64): the aval, the dtype and the values that surely convert
# unchanged (ints in the dtype's range; floats, and complex parts, up to its
# largest finite value); beyond them, python_scalar_to decides exactly.
class _ScalarInput(NamedTuple):
    key: _core.Aval
    dtype: np.dtype[Any]
    lo: int | float
    hi: int | float


def _scalar_inputs() -> dict[tuple[type, bool], _ScalarInput]:
    table: dict[tuple[type, bool], _ScalarInput] = {}
    for x64 in (False, True):
        for t, kind in _PY_KINDS.items():
            dt = _dtypes.default_dtype(kind, x64)
            lo, hi = _dtypes.value_range(dt)
            table[t, x64] = _ScalarInput(_core.aval(dt, True), dt, lo, hi)
        table[bool, x64] = _ScalarInput(
            _core.aval(np.dtype(bool), False), np.dtype(bool), 0, 1
        )
    return table


_SCALAR_INPUTS: dict[tuple[type, bool], _ScalarInput] = _scalar_inputs()


def _scalar_input(leaf: Any, x64: bool) -> np.ndarray[Any, Any] | None:
    """A Python scalar argument (exactly bool, int, float or complex) as the
    0-d array its tracer stands for; None if it would change on the way
    (:func:`_scalar_argument` says why).

    The fast path of every jitted call with scalar arguments (JitCall in
    C mirrors it): a range check and one conversion, no messages built.
    """
    t = leaf.__class__
    info = _SCALAR_INPUTS[t, x64]
    if t is int:
        if info.lo <= leaf <= info.hi:
            return np.asarray(leaf, info.dtype)
        return None
    if t is float:
        if info.lo <= leaf <= info.hi:
            return np.asarray(leaf, info.dtype)
    elif t is complex:
        lo, hi = info.lo, info.hi
        if lo <= leaf.real <= hi and lo <= leaf.imag <= hi:
            return np.asarray(leaf, info.dtype)
    else:  # bool
        return np.asarray(leaf)
    # inf, nan, and floats beyond the largest finite value (which may still
    # round to it): checked exactly.
    try:
        return np.asarray(_core.python_scalar_to(leaf, info.dtype, ""))
    except OverflowError:
        return None


def _scalar_argument(
    leaf: Any, where: str, x64: bool
) -> tuple[np.ndarray[Any, Any], Abstract]:
    """A Python scalar argument's value and abstract value, for jit and
    eval_shape alike: refused, naming it, when its dtype cannot hold it."""
    info = _SCALAR_INPUTS[leaf.__class__, x64]
    value = _scalar_input(leaf, x64)
    if value is None:
        raise _scalar_overflow(where, leaf, info.dtype, x64)
    return value, (info.key, (), bool if leaf.__class__ is bool else info.key)


def _scalar_overflow(
    where: str, leaf: Any, dt: np.dtype[Any], x64: bool
) -> OverflowError:
    t: type = leaf.__class__
    if dt.kind in "iu":
        lo, hi = _dtypes.value_range(dt)
        detail = f"range {lo}..{hi}"
    else:
        detail = "it would become inf"
    if where.startswith("eval_shape"):  # it takes no static arguments
        fixes = ["bind it first, e.g. eval_shape(functools.partial(f, y=value), x)"]
    else:
        fixes = ["mark the argument static (static_argnums or static_argnames)"]
    if not x64 and _scalar_input(leaf, True) is not None:
        wide = _SCALAR_INPUTS[t, True].dtype
        fixes.insert(0, f"run it inside `{_core.X64_SCOPE}`, where it is a weak {wide}")
    mode = "" if x64 else " in 32-bit mode"
    return OverflowError(
        f"{where}: the Python {t.__name__} argument {leaf!r:.60} does not fit "
        f"in {dt} ({detail}), the dtype of a weak {t.__name__} "
        f"argument{mode}. Fix: {'; or '.join(fixes)}."
    )


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
        # Checked as jit checks it: eval_shape refuses what jit refuses.
        return _scalar_argument(leaf, where, _config.current().enable_x64)[1]
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
        return _scalar_argument(leaf, where, x64)
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


def argument_value(leaf: Any, where: str, pos: int, x64: bool) -> Any:
    """An argument of a transformation as an array: arrays and tracers as
    they are, Python scalars weak, NumPy values converted and copied."""
    if isinstance(leaf, ArrayImpl | _tr.Tracer | BackendArray):
        return leaf
    value, (key, _, _) = _argument(leaf, where, pos, x64)
    return wrap(value, key)


def _output(leaf: Any, trace: _tr.RecordingTrace, where: str) -> Any:
    """An output leaf as a tracer of ``trace`` or a concrete array."""
    if isinstance(leaf, _tr.JitTracer):
        if leaf._trace is not trace:  # pyright: ignore[reportPrivateUsage]
            leaf.check()
        return leaf
    if isinstance(leaf, ArrayImpl | BackendArray):
        return leaf
    converted = from_python_or_numpy(leaf, "asarray")  # (asarray's messages)
    if converted is not None:
        return converted
    raise TypeError(
        f"{where}: the function returned {leaf!r:.60} of type "
        f"{type(leaf).__name__}; results must be arrays or scalars (in "
        "tuples, lists and dicts)"
    )


# -- tracing -------------------------------------------------------------------


def _run_traced(
    call: Callable[[Any, Any], Any],
    tree: PyTreeDef,
    avals: Sequence[Abstract],
    where: str,
    abstract_only: bool = False,
) -> tuple[_tr.RecordingTrace, list[_tr.JitTracer], list[Any], PyTreeDef]:
    """Run ``call(args, kwargs)`` on tracers for the flattened arguments.

    Returns the finished trace, the argument tracers, the result leaves
    (tracers or concrete arrays) and the results' structure.
    """
    trace, token = _tr.start(where, abstract_only)
    try:
        tracers = [trace.new_tracer(*aval) for aval in avals]
        targs, tkwargs = tree.unflatten(tracers)
        out = call(targs, tkwargs)
        out_leaves, out_tree = _tree.flatten(out)
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
    (see :mod:`typelattice._tracing.abstract`), and creation functions
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
    leaves, tree = _tree.flatten((args, kwargs))
    avals = [_abstract(leaf, where) for leaf in leaves]

    def call(targs: Any, tkwargs: Any) -> Any:
        return fun(*targs, **tkwargs)

    _, _, results, out_tree = _run_traced(call, tree, avals, where, True)
    structs = [ShapeDtypeStruct(r.shape, r.dtype, r.weak_type) for r in results]
    return out_tree.unflatten(structs)


# -- conversions inside another library's kernels ---------------------------------
#
# The lattice decides every dtype, so a program on another library's arrays
# holds conversions: int32 + float32 is ``convert_element_type`` (int32 to
# float32, unchecked), then ``add`` of two float32 arrays. Run as recorded,
# that is a full-size converted copy, then the add. Where the backend has a
# function computing the binary primitive on the unconverted operands with
# the conversion inside its kernel (``Backend.promoting``: for torch, its
# own promotion, where it agrees with the lattice), the program calls that
# once instead. The values are the same by the hook's contract; what makes
# the rewrite sound is that nothing else sees the converted value:
#
# - it is read by exactly one equation, once (counted over the equations as
#   the code will run them, repeated computations already shared), and it
#   is not one of the program's outputs;
# - the conversion has no check (a checked one raises on values the new
#   dtype cannot hold: it must run where it is);
# - the reader is a binary primitive without parameters whose two operands
#   have one rank: a library's promotion may treat a 0-d operand otherwise
#   (torch computes a float16 array with a 0-d float32 tensor in float16).
#
# NumPy's programs are never rewritten: its C path converts inside ufuncs.

#: Whether programs on another library's arrays fuse conversions into the
#: kernels of the primitives that read them (read when a program is
#: generated; a list, so that a test can switch it: ``[:] = [False]``).
FUSE_CONVERSIONS: list[bool] = [True]


class _Promoted(Equation):
    """A binary primitive on operands of which one or both are converted:
    one call of the backend's promoting function on the unconverted
    operands (see the notes above)."""

    __slots__ = ("fn", "ins", "original", "out")

    def __init__(
        self,
        fn: Callable[..., Any],
        ins: list[tuple[int | None, Any]],
        out: int,
        original: str,
    ) -> None:
        self.fn = fn
        self.ins = ins  # (var, None), or (None, constant), per operand
        self.out = out
        self.original = original  # what it replaces, as a program shows it

    def inputs(self) -> Sequence[int]:
        return [v for v, _ in self.ins if v is not None]

    def outputs(self) -> Sequence[int]:
        return (self.out,)

    def pretty(self, var: Callable[[int], str]) -> str:
        return f"{var(self.out)} = {self.original}"

    def source(self, src: Source) -> str:
        operands = ", ".join(
            f"v{v}" if v is not None else src.constant(c) for v, c in self.ins
        )
        return f"v{self.out} = {src.constant(self.fn)}({operands})"


def _operand_info(
    entry: tuple[int | None, Any],
    avals: Sequence[tuple[_core.Aval, tuple[int, ...]]],
) -> tuple[np.dtype[Any], int]:
    """An equation operand's dtype and rank (a variable's, or a constant's)."""
    v, c = entry
    if v is not None:
        key, shape = avals[v]
        return key[0], len(shape)
    value: Any = np.asarray(c)
    return value.dtype, value.ndim


def fuse_conversions(
    backend: Any,
    eqns: list[Equation],
    outs: Sequence[int],
    avals: Sequence[tuple[_core.Aval, tuple[int, ...]]],
) -> list[Equation]:
    """``eqns`` with each unchecked conversion whose value only one binary
    primitive reads fused into it, where ``backend.promoting`` has a
    function for the operands' dtypes (see the notes above).

    Args:
      backend: the backend the program computes on (not NumPy's).
      eqns: the program's equations, repeated computations shared.
      outs: the program's outputs.
      avals: each variable's abstract value and shape.

    Returns:
      The equations to write, computing the same outputs.
    """
    convert = PRIMITIVES["convert_element_type"]
    reads: dict[int, int] = {}
    for eqn in eqns:
        for v in eqn.inputs():
            reads[v] = reads.get(v, 0) + 1
    returned = set(outs)
    # The conversions that may be fused, by the variable they make.
    fusible: dict[int, int] = {}
    for i, eqn in enumerate(eqns):
        if (
            type(eqn) is PrimitiveEquation
            and eqn.prim is convert
            and eqn.params.get("check") is None
            and len(eqn.outs) == 1
        ):
            out = eqn.outs[0]
            if reads.get(out) == 1 and out not in returned:
                fusible[out] = i
    if not fusible:
        return list(eqns)
    kept: list[Equation | None] = list(eqns)
    for j, eqn in enumerate(eqns):
        if (
            type(eqn) is not PrimitiveEquation
            or eqn.params
            or eqn.prim.multiple_results
            or len(eqn.ins) != 2
            or len(eqn.outs) != 1
        ):
            continue
        found = [fusible.get(v) if v is not None else None for v, _ in eqn.ins]
        if found[0] is None and found[1] is None:
            continue
        (_, rank0), (_, rank1) = (_operand_info(e, avals) for e in eqn.ins)
        if rank0 != rank1:
            continue  # (a 0-d operand with an array: see the notes)
        common, _ = _operand_info(eqn.ins[0], avals)
        if _operand_info(eqn.ins[1], avals)[0] != common:
            continue  # (never so: lax's binary operands share their dtype)
        # Both conversions fused if the backend can, else either one.
        choices = [found] if None in found else [found, [found[0], None]]
        if None not in found:
            choices.append([None, found[1]])
        for choice in choices:
            dtypes: list[np.dtype[Any] | None] = []
            ins: list[tuple[int | None, Any]] = []
            for entry, at in zip(eqn.ins, choice, strict=True):
                if at is None:
                    dtypes.append(None)
                    ins.append((entry[0], None) if entry[0] is not None else entry)
                else:
                    conversion = cast("PrimitiveEquation", eqns[at])
                    source = conversion.ins[0]
                    dtypes.append(_operand_info(source, avals)[0])
                    ins.append((source[0], None) if source[0] is not None else source)
            fn = backend.promoting(eqn.prim, dtypes, common)
            if fn is None:
                continue
            for at in choice:
                if at is not None:
                    kept[at] = None
            shown = eqn.pretty(lambda v: f"v{v}").partition(" = ")[2]
            kept[j] = _Promoted(fn, ins, eqn.outs[0], shown)
            break
    return [eqn for eqn in kept if eqn is not None]


# -- jit --------------------------------------------------------------------------


class CacheInfo(NamedTuple):
    """Statistics of a jitted function's cache of traced programs, as
    :func:`functools.lru_cache` reports them.

    Attributes:
      hits: calls that found their program in the cache.
      misses: calls that traced (a new signature, or one forgotten).
      maxsize: the most programs kept (``jit``'s ``cache_size``; None: no
        limit).
      currsize: programs in the cache now.

    >>> import typelattice, typelattice.numpy as tnp
    >>> f = typelattice.jit(lambda x: x + 1)
    >>> _ = f(tnp.zeros(2)), f(tnp.ones(2)), f(tnp.zeros(3))
    >>> f.cache_info()
    CacheInfo(hits=1, misses=2, maxsize=4096, currsize=2)
    """

    hits: int
    misses: int
    maxsize: int | None
    currsize: int


#: How many traced programs a jitted function keeps by default (as JAX's
#: tracing caches). Beyond it, the least recently used one is forgotten.
DEFAULT_CACHE_SIZE: Final = 4096


class _Entry:
    """One traced signature: the program and how to build the results."""

    __slots__ = (
        "__weakref__",
        "consts",
        "fast_keys",
        "key",
        "keys",
        "lone",
        "native",
        "program",
        "run",
        "shapes",
        "single",
        "tree",
    )

    def __init__(
        self,
        program: Program,
        keys: list[_core.Aval],
        consts: list[tuple[int, Any]],
        tree: PyTreeDef,
    ) -> None:
        self.program = program
        self.run = program.run
        self.keys = keys  # of the program's outputs
        self.consts = consts  # (position, array) of outputs that are constants
        self.tree = tree
        # The key of the result when it is one computed array (the common
        # case, built without walking the tree).
        self.lone = tree.is_leaf and not consts
        self.single = keys[0] if self.lone else None
        # Where the cache holds it: its key, and the flat keys of the calls
        # that find it without flattening (forgotten with it).
        self.key: Hashable = None
        self.fast_keys: list[tuple[Any, ...]] = []
        # The backend and device of another library's program (its outputs
        # are that library's arrays, of these shapes).
        self.native: Native | None = None
        self.shapes: list[tuple[int, ...]] = []

    def results(self, outs: Sequence[Any]) -> Any:
        """The function's result from the program's outputs."""
        if self.native is not None:
            backend, device = self.native
            if self.lone:
                return native_result(
                    outs[0], self.keys[0], self.shapes[0], *self.native
                )
            arrays: list[Any] = [
                native_result(v, key, shape, backend, device)
                for v, key, shape in zip(outs, self.keys, self.shapes, strict=True)
            ]
            for pos, const in self.consts:
                arrays.insert(pos, const)
            return self.tree.unflatten(arrays)
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
        return self.tree.unflatten(results)


def _static_positions(
    fun: Callable[..., Any],
    name: str,
    static_argnums: Sequence[int],
    static_argnames: Sequence[str],
) -> tuple[frozenset[int], frozenset[str]]:
    """The positions and names of the static arguments, each given one
    completed with the other from ``fun``'s signature; ValueError for one
    that names no parameter (as JAX, whose rules these are: any position
    is valid with ``*args``, any name with ``**kwargs``, except the names of
    positional-only parameters; no signature, no check)."""
    nums: set[int] = set()
    for i in static_argnums:
        try:
            nums.add(operator.index(i))
        except TypeError:
            raise TypeError(
                f"jit({name}): static_argnums must be integers (positions of "
                f"arguments), got {i!r:.60}; name arguments with "
                "static_argnames instead"
            ) from None
    names: set[str] = set()
    given: object
    for given in cast("Sequence[object]", static_argnames):  # (any objects)
        if not isinstance(given, str):
            raise TypeError(
                f"jit({name}): static_argnames must be strings (names of "
                f"parameters), got {given!r:.60}; give positions with "
                "static_argnums instead"
            )
        names.add(given)
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature
        return frozenset(nums), frozenset(names)
    short = getattr(fun, "__name__", name)  # (the message starts with name)
    kinds = inspect.Parameter
    positional = [
        p
        for p in params
        if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
    ]
    n = len(positional)
    shown = ", ".join(p.name for p in positional) or "none"
    if not any(p.kind is kinds.VAR_POSITIONAL for p in params):
        bad = sorted(i for i in nums if not -n <= i < n)
        if bad:
            if n == 0:
                takes = f"{short} takes no positional arguments"
            elif n == 1:
                takes = f"{short} takes 1 positional argument ({shown}): 0 or -1"
            else:
                takes = (
                    f"{short} takes {n} positional arguments ({shown}): 0 to "
                    f"{n - 1}, or -{n} to -1 from the end"
                )
            raise ValueError(
                f"jit({name}): static_argnums={tuple(sorted(nums))}: "
                f"{', '.join(map(str, bad))} "
                f"{'is not the position' if len(bad) == 1 else 'are not positions'}"
                f" of a parameter; {takes}. Give the position of a parameter, "
                "or static_argnames=... with its name."
            )
    only = sorted(names & {p.name for p in params if p.kind is kinds.POSITIONAL_ONLY})
    if only:
        where = ", ".join(
            f"static_argnums={i}" for i, p in enumerate(positional) if p.name in only
        )
        raise ValueError(
            f"jit({name}): static_argnames={only} names positional-only "
            f"parameters of {short}, which no call passes by name. Use "
            f"{where} instead."
        )
    if not any(p.kind is kinds.VAR_KEYWORD for p in params):
        named = {
            p.name
            for p in params
            if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)
        }
        unknown = sorted(names - named)
        if unknown:
            raise ValueError(
                f"jit({name}): static_argnames={unknown} names no parameter of "
                f"{short} (its parameters: {', '.join(sorted(named)) or 'none'}). "
                "Give the name of a parameter, or static_argnums=... with "
                "its position."
            )
    for i, p in enumerate(positional):
        # (Negative positions count from the end of each call's arguments.)
        if i in nums and p.kind is kinds.POSITIONAL_OR_KEYWORD:
            names.add(p.name)
        if p.name in names:
            nums.add(i)
    return frozenset(nums), frozenset(names)


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
        cache_size: int | None = DEFAULT_CACHE_SIZE,
        shardings: tuple[Any, Any] = (None, None),
    ) -> None:
        functools.update_wrapper(self, fun)
        # (in_shardings, out_shardings): checked when tracing.
        self._shardings = shardings
        self._fun = fun
        self._name = getattr(fun, "__qualname__", getattr(fun, "__name__", "fun"))
        self._nums, self._names = _static_positions(
            fun, self._name, static_argnums, static_argnames
        )
        self._has_static = bool(self._nums or self._names)
        self._maxsize = cache_size
        # The traced programs by their full key (structure, abstract values,
        # static values, configuration) ...
        self._cache: dict[Hashable, _Entry] = {}
        # ... the same entries, for calls with arrays and Python scalars as
        # positional arguments only, under a flat key: (configuration, then
        # per argument its aval and shape, or its Python type and ()) ...
        self._fast: dict[tuple[Any, ...], _Entry] = {}
        # ... and every entry, least recently used first (the C path moves
        # the entries it finds to the end too).
        self._order: dict[_Entry, None] = {}
        # Misses and evictions change the three together: one thread at a
        # time (hits only move an entry within _order, safe without it).
        self._lock = threading.Lock()
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
        """Hits, misses (each a trace), the cache's size limit and how many
        traced programs it holds.

        Returns:
          A :class:`CacheInfo`, as ``functools.lru_cache`` gives.

        >>> import typelattice, typelattice.numpy as tnp
        >>> f = typelattice.jit(lambda x: x + 1, cache_size=2)
        >>> for n in (1, 2, 3, 3):
        ...     _ = f(tnp.zeros(n))
        >>> f.cache_info()
        CacheInfo(hits=1, misses=3, maxsize=2, currsize=2)
        """
        return CacheInfo(self._hits, self._misses, self._maxsize, len(self._order))

    def clear_cache(self) -> None:
        """Forget every traced program (the next call traces again).

        >>> import typelattice, typelattice.numpy as tnp
        >>> f = typelattice.jit(lambda x: -x)
        >>> _ = f(tnp.zeros(2))
        >>> f.clear_cache()
        >>> f.cache_info().currsize
        0
        """
        with self._lock:
            self._cache.clear()
            self._fast.clear()
            self._order.clear()

    def _used(self, entry: _Entry) -> None:
        """Count a hit on ``entry`` and make it the most recently used."""
        self._hits += 1
        order = self._order
        if order.pop(entry, _GONE) is not _GONE:  # (unless evicted meanwhile)
            order[entry] = None

    def _store(
        self, key: Hashable, entry: _Entry, fast_key: tuple[Any, ...] | None
    ) -> None:
        """Keep a new entry, forgetting the least recently used ones beyond
        the cache size."""
        maxsize = self._maxsize
        if maxsize is not None and maxsize <= 0:
            return
        entry.key = key
        with self._lock:
            if self._cache.setdefault(key, entry) is not entry:
                return  # another thread traced this signature meanwhile: keep that
            self._order[entry] = None
            if fast_key is not None:
                self._fast[fast_key] = entry
                entry.fast_keys.append(fast_key)
            if maxsize is None:
                return
            order = self._order
            while len(order) > maxsize:
                self._forget(next(iter(order)))

    def _also_under(self, entry: _Entry, fast_key: tuple[Any, ...]) -> None:
        """Find ``entry`` under ``fast_key`` too, unless it was evicted."""
        with self._lock:
            if entry in self._order:
                self._fast[fast_key] = entry
                entry.fast_keys.append(fast_key)

    def _forget(self, entry: _Entry) -> None:
        """Drop ``entry`` from the cache (the lock held)."""
        self._order.pop(entry, None)
        if self._cache.get(entry.key) is entry:
            del self._cache[entry.key]
        for k in entry.fast_keys:
            if self._fast.get(k) is entry:
                del self._fast[k]

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
    ) -> tuple[PyTreeDef, list[Any], tuple[Any, ...]]:
        """The dynamic arguments' structure and leaves, and the static values."""
        if self._has_static:
            dyn_args, dyn_kwargs, statics = self._split(args, kwargs)
        else:
            dyn_args, dyn_kwargs, statics = args, kwargs, ()
        leaves, tree = _tree.flatten((dyn_args, dyn_kwargs))
        return tree, leaves, statics

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
        state = _config.current()
        # A program calls the implementations of the backend in force when
        # it was traced: one is kept per backend. Entries under flat keys
        # are the NumPy backend's.
        backend = current_backend() if IN_USE else NUMPY
        fast_key: tuple[Any, ...] | None = None
        flat: list[Any]
        values: list[Any]
        if (
            not kwargs
            and not self._has_static
            and args
            and args[0].__class__ is BackendArray
        ):
            # Another library's arrays as the positional arguments: the
            # entry is also kept under a flat key, the configuration then per
            # argument its backend, device, abstract value and shape. (A
            # Backend never equals what starts a NumPy-held argument's part,
            # an aval or a Python type: the keys never meet those below.)
            # Keys are stored by the full path once check_mixed passed.
            flat = [state]
            values = []
            for a in args:
                native_arg: Any = a
                if native_arg.__class__ is not BackendArray:
                    break
                flat += (
                    native_arg._backend,
                    native_arg._device,
                    native_arg._key,
                    native_arg._shape,
                )
                values.append(native_arg._value)
            else:
                fast_key = tuple(flat)
                entry = self._fast.get(fast_key)
                if entry is not None:
                    self._used(entry)
                    return entry.results(entry.run(*values))  # type: ignore[no-any-return]
        elif not kwargs and not self._has_static and backend is NUMPY:
            # The common call: arrays and Python scalars as positional
            # arguments. Its entry is also kept under a flat key (the
            # configuration, then per argument its abstract value and shape,
            # or its Python type), cheap to build, hash and compare. The C
            # path (JitCall) answers these calls the same way.
            flat = [state]
            values = []
            for a in args:
                arg: Any = a
                t = arg.__class__
                if t is ArrayImpl:
                    v = arg._value
                    flat.append(arg._key)
                    flat.append(v.shape)
                elif t in _SCALAR_TYPES:
                    v = _scalar_input(a, state.enable_x64)
                    if v is None:  # refused below, with the reason
                        break
                    flat.append(t)
                    flat.append(())
                else:
                    break
                values.append(v)
            else:
                fast_key = tuple(flat)
                entry = self._fast.get(fast_key)
                if entry is not None:
                    self._used(entry)
                    outs = entry.run(*values)
                    single = entry.single
                    if single is not None and type(outs[0]) is np.ndarray:
                        result: ArrayImpl = _new_object(ArrayImpl)
                        result._value = outs[0]  # pyright: ignore[reportPrivateUsage]
                        result._key = single  # pyright: ignore[reportPrivateUsage]
                        return result  # type: ignore[return-value]
                    return entry.results(outs)  # type: ignore[no-any-return]
        tree, leaves, statics = self._dynamic(args, kwargs)
        values = []
        sig: list[Any] = []
        native: Native | None = None
        where = f"jit({self._name})"
        for leaf in leaves:
            if leaf.__class__ is ArrayImpl:  # the common case, inline
                v = leaf._value
                values.append(v)
                sig.append((leaf._key, v.shape, leaf._key))
            elif isinstance(leaf, _tr.JitTracer):
                leaf.check()  # raises: no trace is running here
                raise AssertionError("unreachable")
            elif isinstance(leaf, _tr.Tracer):
                # Differentiated: run in the transformation, which records
                # primitives (inside an enclosing jit, that jit's program).
                return self._inline(args, kwargs)  # type: ignore[no-any-return]
            elif leaf.__class__ is BackendArray:
                # Another library's array: a program of its backend and
                # device (one per backend and device), on its arrays.
                if native is None:
                    check_mixed(where, tuple(leaves))
                    native = (leaf._backend, leaf._device)
                values.append(leaf._value)
                sig.append((leaf._key, leaf._shape, leaf._key))
            else:
                v, abstract = _argument(leaf, where, len(values), state.enable_x64)
                values.append(v)
                sig.append(abstract)
        place: Any = backend
        if native is not None:
            # (NumPy values, 0-d by check_mixed, join the program's device)
            owner, device = native
            values = [
                owner.from_numpy(v, device) if isinstance(v, np.ndarray) else v
                for v in values
            ]
            place = native
        cache_key = (tree, tuple(sig), statics, state, place)
        entry = self._cache.get(cache_key)
        if entry is None:
            self._misses += 1
            entry = self._trace(args, kwargs, tree, sig, where, native)
            self._store(cache_key, entry, fast_key)
        else:
            self._used(entry)
            if fast_key is not None:  # (a Python scalar, or a weak array)
                self._also_under(entry, fast_key)
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
            if isinstance(leaf, _tr.Tracer | BackendArray):
                held.append(leaf)
            else:
                value, (key, _, _) = _argument(leaf, where, len(held), x64)
                held.append(_tr.placeholder(value, key))
        inner_args, inner_kwargs = tree.unflatten(held)
        call_args, call_kwargs = self._merge(args, kwargs, inner_args, inner_kwargs)
        fun: Callable[..., Any] = self._fun
        return fun(*call_args, **call_kwargs)

    def _trace(
        self,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        tree: PyTreeDef,
        sig: Sequence[Abstract],
        where: str,
        native: Native | None = None,
    ) -> _Entry:
        fun: Callable[..., Any] = self._fun

        def call(dyn_args: Any, dyn_kwargs: Any) -> Any:
            call_args, call_kwargs = self._merge(args, kwargs, dyn_args, dyn_kwargs)
            return fun(*call_args, **call_kwargs)

        trace, tracers, results, out_tree = _run_traced(call, tree, sig, where)
        if self._shardings[0] is not None or self._shardings[1] is not None:
            self._check_shardings(
                tree.unflatten(tracers)[0], out_tree.unflatten(results)
            )
        outs: list[int] = []
        keys: list[_core.Aval] = []
        consts: list[tuple[int, Any]] = []
        for pos, r in enumerate(results):
            if isinstance(r, _tr.JitTracer):
                outs.append(r._var)  # pyright: ignore[reportPrivateUsage]
                keys.append(r._key)  # pyright: ignore[reportPrivateUsage]
            else:
                consts.append((pos, r))
        ins = [t._var for t in tracers]  # pyright: ignore[reportPrivateUsage]
        rewrite = None
        if native is not None and FUSE_CONVERSIONS[0]:
            rewrite = functools.partial(fuse_conversions, native[0])
        program = Program(trace, ins, outs, native, rewrite)
        entry = _Entry(program, keys, consts, out_tree)
        if native is not None:
            entry.native = native
            entry.shapes = [trace.avals[v][1] for v in outs]
            entry.single = None
        return entry

    def _check_shardings(self, dyn_args: tuple[Any, ...], results: Any) -> None:
        """Check in_shardings and out_shardings against the traced
        arguments and results."""
        where = f"jit({self._name})"
        ins, outs = self._shardings
        if ins is not None:
            if not isinstance(ins, tuple | list) or isinstance(
                ins, _sharding.PartitionSpec
            ):  # (one for every argument)
                ins = (ins,) * len(dyn_args)
            elif len(ins) != len(dyn_args):  # pyright: ignore[reportUnknownArgumentType]
                raise ValueError(
                    f"{where}: in_shardings has {len(ins)} entries for "  # pyright: ignore[reportUnknownArgumentType]
                    f"{len(dyn_args)} positional (non-static) arguments; give "
                    "one per argument"
                )
            _sharding.check_tree(tuple(ins), dyn_args, f"{where} in_shardings")  # pyright: ignore[reportUnknownArgumentType]
        if outs is not None:
            _sharding.check_tree(outs, results, f"{where} out_shardings")

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
        >>> print(f.program(tnp.zeros(3, 'float32'), 2.0))
        program(v0:float32[3], v1:float32[] weak):
          v2:float32[3] = lax.mul(v0, v1)
          v3:float32[3] = lax.add(v2, 1.0:float32)
          return (v3)
        """
        tree, leaves, _ = self._dynamic(args, kwargs)
        where = f"jit({self._name})"
        sig = [_abstract(leaf, where) for leaf in leaves]
        return self._trace(args, kwargs, tree, sig, where).program


if _speedups is not None:
    # The flat-key path of __call__ in C (the method stays the fallback).
    _speedups.configure_jit(
        _tr._current,  # pyright: ignore[reportPrivateUsage]
        tuple(
            _SCALAR_INPUTS[t, x64].dtype
            for t in (int, float, complex)
            for x64 in (False, True)
        )
        + (np.dtype(bool),),
        np.asarray,
    )
    _python_call: Callable[..., Any] = vars(Jitted)["__call__"]
    setattr(Jitted, "__call__", _speedups.JitCall(_python_call))  # noqa: B010


def _listed(value: Any, what: str, kind: type) -> tuple[Any, ...]:
    """One ``kind`` or an iterable of them, as a tuple (each checked later)."""
    if isinstance(value, kind):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        noun = "position" if kind is int else "parameter name"
        raise TypeError(
            f"jit: {what} must be a {noun} or a sequence of them, got {value!r:.60}"
        ) from None


@overload
def jit(
    fun: Callable[P, R],
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    donate_argnums: int | Sequence[int] = (),
    donate_argnames: str | Sequence[str] = (),
    in_shardings: Any = None,
    out_shardings: Any = None,
    cache_size: int | None = DEFAULT_CACHE_SIZE,
) -> Jitted[P, R]: ...
@overload
def jit(
    fun: None = None,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    donate_argnums: int | Sequence[int] = (),
    donate_argnames: str | Sequence[str] = (),
    in_shardings: Any = None,
    out_shardings: Any = None,
    cache_size: int | None = DEFAULT_CACHE_SIZE,
) -> Callable[[Callable[P, R]], Jitted[P, R]]: ...


def jit(
    fun: Callable[P, R] | None = None,
    *,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    donate_argnums: int | Sequence[int] = (),
    donate_argnames: str | Sequence[str] = (),
    in_shardings: Any = None,
    out_shardings: Any = None,
    cache_size: int | None = DEFAULT_CACHE_SIZE,
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
      static_argnames: names of such arguments. Each position and name
        must be one of ``fun``'s parameters (as in JAX).
      donate_argnums: positions of arguments whose buffers JAX may reuse
        for the results. Accepted so that JAX code runs; nothing is reused
        here (arrays are immutable, and a result never aliases an
        argument), so donated arguments stay valid after the call.
      donate_argnames: names of such arguments (the same: accepted).
      in_shardings: how the positional (non-static) arguments are laid out
        across devices: None, one sharding for all, or a tuple with one
        pytree prefix of shardings (``typelattice.sharding``) per
        argument. Checked against the arguments when ``fun`` is traced;
        every array stays whole on the one device.
      out_shardings: the same for the results (a pytree prefix of them).
      cache_size: how many traced programs to keep (4096 by default, as
        JAX's caches; None: no limit). When a new one would exceed it, the
        least recently used is forgotten, and traced again if needed.

    Returns:
      A :class:`Jitted` function (without ``fun``: a decorator making one);
      ``cache_info()`` reports its cache.

    Raises:
      TypeError: ``fun`` is not callable, or a static argument or the cache
        size is not an integer or a name.
      ValueError: a static argument names no parameter of ``fun``, or the
        cache size is negative. When traced: the shardings are not pytree
        prefixes of the arguments or results, or do not fit their shapes.

    >>> import typelattice.numpy as tnp
    >>> @jit
    ... def f(x, y):
    ...     return tnp.tanh(x) * y + 1
    >>> f(tnp.asarray([0.0, 1.0], dtype='bfloat16'), 2.0)
    Array([1, 2.53125], dtype=bfloat16)
    >>> f.cache_info()
    CacheInfo(hits=0, misses=1, maxsize=4096, currsize=1)
    """
    nums = _listed(static_argnums, "static_argnums", int)
    names = _listed(static_argnames, "static_argnames", str)
    # Donation is checked, then has no effect (see the docstring).
    for what, listed, kind in (
        ("donate_argnums", _listed(donate_argnums, "donate_argnums", int), int),
        ("donate_argnames", _listed(donate_argnames, "donate_argnames", str), str),
    ):
        for item in listed:
            if not isinstance(item, kind) or isinstance(item, bool):
                raise TypeError(
                    f"jit: {what} must be {kind.__name__}s, got {item!r:.60}"
                )
    if cache_size is not None:
        what = (
            "jit: cache_size must be a non-negative integer (the number of "
            f"traced programs kept) or None for no limit, got {cache_size!r:.60}"
        )
        if isinstance(cache_size, bool):
            raise TypeError(what)
        try:
            cache_size = operator.index(cache_size)
        except TypeError:
            raise TypeError(what) from None
        if cache_size < 0:
            raise ValueError(what)
    shardings = (in_shardings, out_shardings)
    if fun is None:
        return lambda f: Jitted(f, nums, names, cache_size, shardings)
    if not callable(fun):
        raise TypeError(f"jit: expected a function, got {fun!r:.60}")
    return Jitted(fun, nums, names, cache_size, shardings)


# Reprs and pickles use the public names (typelattice.ShapeDtypeStruct).
for _cls in (CacheInfo, Jitted, ShapeDtypeStruct):
    _cls.__module__ = "typelattice"
del _cls
