"""Vectorisation: :func:`vmap`.

``vmap(f)`` runs ``f`` once on :class:`BatchTracer` objects: each carries
a value holding every example along one axis (its ``batch_dim``), and has
the shape, dtype and weak flag of one example. A primitive applied to them
runs its batching rule (registered where the primitive is defined, with
``Primitive.def_batch``): ``rule(args, dims, **params) -> (out, out_dim)``,
``dims`` giving each operand's batch axis or ``None`` for an operand that
is the same for every example. The rules bind primitives again, so a
batched function can be differentiated, jitted or batched once more.

A :class:`BatchTrace` is numbered among the differentiation traces
(:mod:`typelattice._tracing.ad`): ``vmap(grad(f))`` batches the primitives
of the derivative, ``grad(vmap(f))`` differentiates the batching rules'
primitives. Under ``jit`` the rules' primitives are recorded, so
``jit(vmap(f))`` is one program of batched primitives.

A ``vmap`` given an ``axis_name`` makes that name known to the collective
primitives (``psum``, ``axis_index``...) while ``f`` runs:
:func:`axis_trace` finds the trace of a name.
"""

# Package-internal: reads the arrays' and tracers' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import collections
import contextvars
import functools
import inspect
import operator
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NoReturn, SupportsIndex, cast

import numpy as np

from typelattice import _config
from typelattice._array import ArrayImpl, BackendArray, check_mixed
from typelattice._tracing import tree
from typelattice._tracing.ad import _depth, _Level
from typelattice._tracing.jit import argument_value
from typelattice._tracing.primitive import (
    PRIMITIVES,
    Primitive,
    aval_of,
    broadcast_batch,
    moveaxis,
)
from typelattice._tracing.tracer import (
    ConcretizationTypeError,
    NoValues,
    Trace,
    Tracer,
    UnexpectedTracerError,
    innermost_trace,
)

__all__ = [
    "BatchTrace",
    "BatchTracer",
    "axis_trace",
    "end_rule_trace",
    "rule_trace",
    "bind_collective",
    "def_collective",
    "not_mapped",
    "sum_batch",
    "vmap",
]

#: The batch axis of a value that is the same for every example.
not_mapped = None

#: How many argument (and result) structures a vmapped function remembers.
_CACHE_MAX = 64

# The named axes of the vmaps running in this context, innermost last.
_axes: contextvars.ContextVar[tuple[tuple[Hashable, BatchTrace], ...]] = (
    contextvars.ContextVar("typelattice_vmap_axes", default=())
)


class BatchTrace(Trace):
    """One run of a vmapped function: its tracers hold every example.

    ``size`` is the number of examples, ``axis_name`` the name collectives
    use for this batch (or None)."""

    __slots__ = ("axis_name", "size")

    def __init__(self, name: str, size: int, axis_name: Hashable | None) -> None:
        super().__init__(name, _depth.get())
        self.size = size
        self.axis_name = axis_name

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        if not self.alive:
            _dead(self)
        values: list[Any] = []
        dims: list[int | None] = []
        batched = False
        collective = None
        if self.axis_name is not None and "axis_name" in params:
            if self.axis_name in params["axis_name"]:
                collective = _COLLECTIVE.get(prim)
        for x in args:
            if type(x) is BatchTracer and x._trace is self:
                values.append(x.value)
                dims.append(x.batch_dim)
                batched = True
            else:
                values.append(x)
                dims.append(None)
        if collective is not None:  # a reduction over this trace's axis
            out, out_dim = collective(self, values, dims, **params)
            return self.lift(out, out_dim)
        if not batched:  # constants to this trace
            return prim.bind(*values, **params)
        rule = prim.batch
        if rule is None:
            raise NotImplementedError(
                f"Batching rule for '{prim.name}' not implemented"
            )
        if self.axis_name is not None or _rule_trace.get() is not None:
            # (a rule that batches a function of its own, as the control
            # flow primitives' do, names its trace after this one: the
            # function's collectives over this axis reduce over this batch;
            # an unnamed vmap inside such a function names nothing)
            token = _rule_trace.set(self if self.axis_name is not None else None)
            try:
                out, out_dim = rule(values, dims, **params)
            finally:
                _rule_trace.reset(token)
        else:
            out, out_dim = rule(values, dims, **params)
        if prim.multiple_results:
            return tuple(self.lift(o, d) for o, d in zip(out, out_dim, strict=True))
        return self.lift(out, out_dim)

    def lift(self, value: Any, dim: int | None) -> Any:
        """A tracer of this trace for ``value`` batched along ``dim`` (the
        value itself when it is not batched)."""
        if dim is None:
            return value
        return BatchTracer(self, value, dim)


def _dead(trace: BatchTrace) -> NoReturn:
    raise UnexpectedTracerError(
        f"a value traced by {trace.name} was used after it returned: a "
        "vmapped function must return its results rather than store them "
        "(in a global, an attribute or a list) for later use"
    )


class BatchTracer(NoValues, Tracer):
    """Every example of a value of a vmapped function, stacked along
    ``batch_dim`` of ``value``.

    Functions see one example: its shape, dtype and weak flag. Its values
    differ per example, so nothing may turn it into a Python value (a
    Python ``if`` on it raises :class:`ConcretizationTypeError`, as in
    JAX; use ``typelattice.numpy.where``).

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> def f(x):
    ...     print(type(x).__name__, x.shape)
    ...     return x.sum()
    >>> tl.vmap(f)(tnp.ones((4, 3)))
    BatchTracer (3,)
    Array([3., 3., 3., 3.], dtype=float32)
    """

    __slots__ = ("batch_dim", "value")

    def __init__(self, trace: BatchTrace, value: Any, batch_dim: int) -> None:
        self._trace = trace
        self.value = value
        self.batch_dim = batch_dim

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.value.dtype  # type: ignore[no-any-return]

    @property
    def shape(self) -> tuple[int, ...]:
        shape = tuple(self.value.shape)
        d = self.batch_dim
        return shape[:d] + shape[d + 1 :]

    @property
    def weak_type(self) -> bool:
        return self.value.weak_type  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"BatchTracer<{repr(aval_of(self))[12:-1]}>"

    __str__ = __repr__

    def _refuse(self, what: str) -> NoReturn:
        if not self._trace.alive:
            _dead(self._trace)  # type: ignore[arg-type]
        raise ConcretizationTypeError(
            f"{what} needs the value of {self!r}, which differs from one "
            f"example to the next under {self._trace.name}: compute with "
            "typelattice.numpy functions (typelattice.numpy.where instead of "
            "a Python `if`)"
        )

    def __reduce__(self) -> NoReturn:
        raise TypeError(f"cannot pickle {self!r}: it is being vmapped")

    def __copy__(self) -> BatchTracer:
        return self

    def __deepcopy__(self, memo: Any) -> BatchTracer:
        return self


# The named vmap whose batching rule is running.
_rule_trace: contextvars.ContextVar[BatchTrace | None] = contextvars.ContextVar(
    "typelattice_vmap_rule", default=None
)


def rule_trace(name: str, size: int) -> tuple[BatchTrace, Any]:
    """A trace to batch a function of a batching rule (a body of ``scan``)
    over ``size`` examples, named as the vmap whose rule runs, and a token
    for :func:`end_rule_trace`: collectives in that function over the
    vmap's axis name reduce over this trace's examples, which are the
    vmap's."""
    outer = _rule_trace.get()
    axis_name = None if outer is None else outer.axis_name
    trace = BatchTrace(name, size, axis_name)
    token = None
    if axis_name is not None:
        token = _axes.set((*_axes.get(), (axis_name, trace)))
    return trace, token


def end_rule_trace(token: Any) -> None:
    """Undo what :func:`rule_trace` named."""
    if token is not None:
        _axes.reset(token)


def axis_trace(name: Hashable) -> BatchTrace:
    """The trace of the running ``vmap`` whose ``axis_name`` is ``name``
    (the innermost of that name).

    Raises:
      NameError: no running ``vmap`` has that axis name."""
    for n, trace in reversed(_axes.get()):
        if n == name:
            return trace
    raise NameError(
        f"unbound axis name: {name}. Collective operations (psum, pmean, pmax, "
        "pmin, axis_index) name an axis of an enclosing "
        f"typelattice.vmap(..., axis_name={name!r})"
    )


# The rules of the collectives over a vmap's own named axis (see
# def_collective).
_COLLECTIVE: dict[Primitive, Callable[..., Any]] = {}


def def_collective(
    prim: Primitive,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register (a decorator) the rule of a collective primitive over the
    named axis of the ``vmap`` processing it:
    ``rule(trace, args, dims, **params) -> (out, out_dim)``, ``trace``
    being that vmap's :class:`BatchTrace` (its ``size``, its
    ``axis_name``). Other traces use the primitive's batching rule."""

    def register(rule: Callable[..., Any]) -> Callable[..., Any]:
        _COLLECTIVE[prim] = rule
        return rule

    return register


def bind_collective(
    prim: Primitive, args: Sequence[Any], params: dict[str, Any]
) -> Any:
    """Bind a collective primitive (parameter ``axis_name``: a tuple of
    names): processed by the innermost of the traces of ``args`` and of the
    named vmaps, so that a vmap reduces over its axis even an operand that
    is not batched by it (an operand the same for every example)."""
    top = innermost_trace(args)
    for name in params["axis_name"]:
        trace = axis_trace(name)
        if top is None or trace.level > top.level:
            top = trace
    assert top is not None
    return top.process_primitive(prim, args, params)


def sum_batch(x: Any) -> Any:
    """The sum of ``x`` over its first axis (a batch's examples)."""
    return PRIMITIVES["reduce_sum"].bind(x, axes=(0,))


# -- axis specifications -----------------------------------------------------------


def _check_spec(what: str, spec: Any) -> None:
    """That every leaf of an ``in_axes``/``out_axes`` specification is an
    int or None."""
    bad = [
        a
        for a in _spec_leaves(spec)
        if a is not None and (type(a) is not int and not isinstance(a, np.integer))
    ]
    if bad:
        raise TypeError(
            f"vmap {what} must be an int, None, or (nested) container with "
            f"those types as leaves, but got {spec}."
        )


def _children(node: Any) -> list[Any] | None:
    """The children of a tuple, list or dict (a dict's in sorted-key
    order), or None for anything else."""
    if isinstance(node, tuple | list):
        return list(cast("Sequence[Any]", node))
    if isinstance(node, dict):
        d = cast("dict[Any, Any]", cast(object, node))
        return [d[k] for k in tree._sorted_keys(d)]
    return None


def _keys(d: Any) -> set[Any]:
    return set(cast("dict[Any, Any]", d))


def _spec_leaves(spec: Any) -> list[Any]:
    children = _children(spec)
    if children is None:
        return [spec]
    return [a for s in children for a in _spec_leaves(s)]


def _broadcast_prefix(what: str, spec: Any, value: Any) -> list[Any]:
    """The axis of each leaf of ``value`` (in pytree order), ``spec`` being
    a prefix of its structure whose leaves are ints or None."""
    out: list[Any] = []

    def walk(s: Any, v: Any) -> None:
        if s is None or type(s) is int or isinstance(s, np.integer):
            axis = None if s is None else operator.index(cast("SupportsIndex", s))
            out.extend([axis] * len(tree.leaves(v)))
            return
        specs, values = _children(s), _children(v)
        same_keys = not isinstance(s, dict) or _keys(s) == _keys(v)
        ts, tv = type(cast(object, s)), type(cast(object, v))
        same_type = ts is tv or (ts is tuple and issubclass(tv, tuple))
        if (
            specs is not None
            and values is not None
            and same_type
            and same_keys
            and len(specs) == len(values)
        ):
            for a, b in zip(specs, values, strict=True):
                walk(a, b)
            return
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the "
            f"corresponding value, got specification {spec} for value tree "
            f"{tree.flatten(value)[1]}."
        )

    walk(spec, value)
    return out


def _short(x: Any) -> str:
    """``float32[3]``: an argument's type as JAX's messages write it."""
    name = np.dtype(x.dtype).name
    return f"{name}[{','.join(str(d) for d in x.shape)}]"


def _paths(obj: Any, prefix: str) -> list[str]:
    """The paths (``[0]['a']``) of a pytree's leaves, in pytree order."""
    if isinstance(obj, dict):
        d = cast("dict[Any, Any]", cast(object, obj))
        return [
            p for k in tree._sorted_keys(d) for p in _paths(d[k], f"{prefix}[{k!r}]")
        ]
    if isinstance(obj, tuple | list):
        items = cast("Sequence[Any]", obj)
        return [p for i, o in enumerate(items) for p in _paths(o, f"{prefix}[{i}]")]
    if obj is None:
        return []
    leaves = tree.leaves(obj)
    return [prefix] * len(leaves)


def _size_error(
    fun: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    leaves: list[Any],
    axes: list[int | None],
) -> NoReturn:
    """JAX's error for mapped axes of different sizes: each size, how many
    axes had it, and one argument that did."""
    try:
        names: list[str] | None = list(
            inspect.signature(fun).bind(*args, **kwargs).signature.parameters
        )
    except (TypeError, ValueError):
        names = None
    paths: list[str] = []
    for i, a in enumerate(args):
        for p in _paths(a, ""):
            name = f"args[{i}]" if names is None or i >= len(names) else names[i]
            paths.append(f"argument {name}{p}" if names else f"{name}{p}")
    for k in tree._sorted_keys(kwargs):
        paths.extend(f"argument {k}{p}" for p in _paths(kwargs[k], ""))
    found = [
        (int(leaf.shape[a]), a, f"{path} of type {_short(leaf)}")
        for leaf, a, path in zip(leaves, axes, paths, strict=True)
        if a is not None
    ]
    counts = collections.Counter(size for size, _, _ in found).most_common()
    lines = ["vmap got inconsistent sizes for array axes to be mapped:"]
    for k, (size, n) in enumerate(counts):
        _, axis, example = next(f for f in found if f[0] == size)
        if n == 1:
            lines.append(f"  * one axis had size {size}: axis {axis} of {example};")
        elif k == 0:
            lines.append(
                f"  * most axes ({n} of them) had size {size}, e.g. axis {axis} "
                f"of {example};"
            )
        else:
            lines.append(
                f"  * some axes ({n} of them) had size {size}, e.g. axis {axis} "
                f"of {example};"
            )
    raise ValueError("\n".join(lines)[:-1])


# -- vmap ------------------------------------------------------------------------


def vmap(
    fun: Callable[..., Any],
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Hashable | None = None,
    axis_size: int | None = None,
    spmd_axis_name: Hashable | tuple[Hashable, ...] | None = None,
) -> Callable[..., Any]:
    """Vectorise ``fun``: map it over an axis of its arguments, as
    ``jax.vmap``.

    ``fun`` runs once, on values standing for one example each, and every
    operation it applies is batched by its primitive's rule: the result is
    that of ``fun`` on each example, stacked, in dtypes and weak flags as
    ``fun`` gives them.

    Args:
      fun: the function to map, of arrays (in tuples, lists and dicts).
      in_axes: the axis of the arguments to map: an int (negative counts
        from the end), None (the argument is the same for every example,
        passed as it is), or a tuple of these with one entry per positional
        argument, entries being prefixes of the arguments' structure.
        Keyword arguments are mapped along axis 0.
      out_axes: where the mapped axis goes in the results (same forms;
        None for a result that must be the same for every example).
      axis_name: a name for the mapped axis, which the collectives
        (``typelattice.lax.psum``, ``pmean``, ``pmax``, ``pmin``,
        ``axis_index``) take.
      axis_size: the number of examples, needed when no argument is mapped.
      spmd_axis_name: accepted for JAX's signature; there is one device, so
        it changes nothing.

    Returns:
      The batched function, taking the arguments of ``fun`` with the mapped
      axes added.

    Raises:
      ValueError: the mapped axes have different sizes, an axis is out of
        range, no argument is mapped and ``axis_size`` is not given, or a
        result that varies is asked for with ``out_axes=None``.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> x = tnp.arange(6.0).reshape(2, 3)
    >>> tl.vmap(tnp.sum)(x)
    Array([ 3., 12.], dtype=float32)
    >>> tl.vmap(lambda a, b: a * b, in_axes=(1, None))(x, 2)
    Array([[ 0.,  6.],
           [ 2.,  8.],
           [ 4., 10.]], dtype=float32)
    >>> tl.vmap(lambda a: a + 1)(tnp.zeros(3, 'int8')).dtype
    dtype('int8')
    """
    del spmd_axis_name  # one device: nothing to shard
    if isinstance(in_axes, list):
        in_axes = tuple(cast("list[Any]", cast(object, in_axes)))
    if not (
        in_axes is None
        or type(in_axes) in (int, tuple)
        or isinstance(in_axes, np.integer)
    ):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries "
            "corresponding to the positional arguments passed to the function, "
            f"but got {in_axes}."
        )
    _check_spec("in_axes", in_axes)
    _check_spec("out_axes", out_axes)
    name = f"vmap({getattr(fun, '__name__', type(fun).__name__)})"
    tuple_spec = type(cast(object, in_axes)) is tuple
    n_spec = len(cast("tuple[Any, ...]", in_axes)) if tuple_spec else None

    # The axis of each leaf, per structure of the arguments (and of the
    # results): the specification's prefix is matched once per structure.
    in_cache: dict[tree.PyTreeDef, list[int | None]] = {}
    out_cache: dict[tree.PyTreeDef, list[int | None]] = {}

    @functools.wraps(fun)
    def vmap_f(*args: Any, **kwargs: Any) -> Any:
        if n_spec is not None and n_spec != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries "
                "corresponding to the positional arguments passed to the "
                f"function, but got len(in_axes)={n_spec}, "
                f"len(args)={len(args)}"
            )
        leaves, structure = tree.flatten((args, kwargs))
        # (Arguments of another library with larger NumPy ones, or of two
        # backends or devices: refused as jit and the namespace refuse them.)
        check_mixed(name, tuple(leaves))
        found = in_cache.get(structure)
        if found is None:
            found = _broadcast_prefix("in_axes", (in_axes, 0), (args, kwargs))
            if len(in_cache) < _CACHE_MAX:
                in_cache[structure] = found
        axes = list(found)
        x64 = _config.current().enable_x64
        if not leaves and axis_size is None:
            raise ValueError(
                "vmap wrapped function must be passed at least one argument "
                "containing an array or axis_size must be specified, got empty "
                f"*args={args} and **kwargs={kwargs}"
            )
        values: list[Any] = []
        for i, (leaf, a) in enumerate(zip(leaves, axes, strict=True)):
            if a is None:
                values.append(leaf)
                continue
            v = argument_value(leaf, "vmap", i, x64)
            n = len(v.shape)
            if not -n <= a < n:
                least = a + 1 if a >= 0 else -a
                raise ValueError(
                    f"vmap was requested to map its argument along axis {a}, "
                    f"which implies that its rank should be at least {least}, "
                    f"but is only {n} (its shape is {tuple(v.shape)})"
                )
            axes[i] = a % n
            values.append(v)
        sizes = {
            int(v.shape[a]) for v, a in zip(values, axes, strict=True) if a is not None
        }
        if axis_size is not None:
            sizes.add(int(axis_size))
        if not sizes:
            raise ValueError(
                "vmap must have at least one non-None value in in_axes or "
                "axis_size must be specified"
            )
        if len(sizes) > 1:
            _size_error(fun, args, kwargs, values, axes)
        size = sizes.pop()
        trace = BatchTrace(name, size, axis_name)
        named = _axes.get()
        token = _axes.set((*named, (axis_name, trace))) if axis_name else None
        try:
            with _Level([trace]):
                ins = [
                    v if a is None else BatchTracer(trace, v, a)
                    for v, a in zip(values, axes, strict=True)
                ]
                call_args, call_kwargs = structure.unflatten(ins)
                out = fun(*call_args, **call_kwargs)
                outs, out_structure = tree.flatten(out)
                out_dims = out_cache.get(out_structure)
                if out_dims is None:
                    out_dims = _broadcast_prefix("out_axes", out_axes, out)
                    if len(out_cache) < _CACHE_MAX:
                        out_cache[out_structure] = out_dims
                results = [
                    _output(trace, leaf, d, x64)
                    for leaf, d in zip(outs, out_dims, strict=True)
                ]
        finally:
            if token is not None:
                _axes.reset(token)
        return out_structure.unflatten(results)

    return vmap_f


def _output(trace: BatchTrace, leaf: Any, dst: int | None, x64: bool) -> Any:
    """A result of the vmapped function with its batch axis at ``dst`` (a
    result that does not vary broadcast along it)."""
    if type(leaf) is BatchTracer and leaf._trace is trace:
        value, dim = leaf.value, leaf.batch_dim
    else:
        value, dim = leaf, None
    if dst is None:
        if dim is not None:
            raise ValueError(
                "at vmap out_axes, got axis spec None but output was batched on "
                f"axis {dim}: the result differs between examples; give it an "
                "int out_axes (e.g. 0), or return a value that does not depend "
                "on the mapped arguments"
            )
        return value
    if not isinstance(value, ArrayImpl | Tracer | BackendArray):
        value = argument_value(value, "vmap", 0, x64)
    n = len(value.shape) + (dim is None)
    if not -n <= dst < n:
        raise ValueError(
            f"axis {dst} is out of bounds for array of dimension {n}: out_axes "
            f"must lie in [-{n}, {n}) for a result of rank {n - 1} with its "
            "mapped axis"
        )
    dst %= n
    if dim is None:
        return broadcast_batch(value, trace.size, dst)
    return moveaxis(value, dim, dst)
