"""Control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop``,
``scan``, ``map`` and ``associative_scan``, as in ``jax.lax``.

Three primitives hold functions: ``cond`` (its branches), ``while`` (its
condition and body) and ``scan`` (its body). The public functions trace
each function once, on abstract values, into a
:class:`~typelattice._tracing.closed.ClosedProgram` (the equations jit
records, compiled into one Python function) and bind the primitive with
it as a parameter; the values the functions read from outside (arrays of
an enclosing ``jit``, values being differentiated) become the primitive's
first operands. So the primitives run like any other:

- eagerly, the implementation runs the compiled programs: the branch taken
  once, or the body once per step in a Python loop, with no dispatch per
  operation inside;
- under ``jit``, one equation of the program calls that implementation;
  ``eval_shape`` reads the programs' output types;
- forward differentiation binds the same primitive on the program of the
  JVP of its functions (:func:`~typelattice._tracing.closed.jvp_closed`,
  traced); reverse mode has no transposed programs: ``scan`` (and with it
  ``fori_loop`` with static bounds and ``map``) and ``cond`` run their
  programs' JVP step by step on the tracers of the linear record, which
  transposes as usual (``cond`` on a traced predicate differentiates both
  branches and selects); ``while_loop`` raises, as in JAX.

``fori_loop`` with concrete bounds is a ``scan``, else a ``while_loop``;
``map`` is a ``scan``; ``associative_scan`` is written with slicing and
concatenation primitives, as JAX's.
"""

# Package-internal: reads the arrays' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import builtins
import inspect
import weakref
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Final, TypeVar

import numpy as np

from typelattice import _config, _core, _promotion
from typelattice._array import ArrayImpl, BackendArray, wrap
from typelattice._backends import current as current_backend
from typelattice._lax._elementwise import (
    add,
    clamp,
    convert_element_type,
    lt,
    ne,
    select_n,
)
from typelattice._lax._primitive import Primitive
from typelattice._lax._reductions import reduce_or
from typelattice._lax._structural import (
    broadcast_in_dim,
    concatenate,
    expand_dims,
    reshape,
    rev,
    slice_in_dim,
    squeeze,
)
from typelattice._tracing import tree as _tree
from typelattice._tracing.ad import LinearTracer, _Level
from typelattice._tracing.batching import (
    BatchTrace,
    BatchTracer,
    end_rule_trace,
    rule_trace,
)
from typelattice._tracing.closed import (
    ClosedProgram,
    eval_closed,
    jvp_closed,
    padded,
    trace_closed,
)
from typelattice._tracing.jit import argument_value
from typelattice._tracing.primitive import (
    ShapedArray,
    Zero,
    aval_of,
    batch_size,
    bdim_at_front,
    broadcast_batch,
    float0,
    instantiate,
    moveaxis,
    tangent_aval,
    zeros,
)
from typelattice._tracing.tracer import Placeholder, Tracer

__all__ = [
    "associative_scan",
    "cond",
    "cond_p",
    "fori_loop",
    "map",
    "scan",
    "scan_p",
    "switch",
    "while_loop",
    "while_p",
]

_INT32: Final = np.dtype("int32")


# -- shared helpers -------------------------------------------------------------


def _values(leaves: Sequence[Any], where: str) -> list[Any]:
    """Pytree leaves as arrays or tracers (Python scalars weak)."""
    x64 = _config.current().enable_x64
    return [argument_value(x, where, i, x64) for i, x in enumerate(leaves)]


def _is_int(x: object) -> bool:
    """Whether an argument annotated as an int is one (callers pass anything)."""
    return isinstance(x, int)


def _str_short(aval: ShapedArray) -> str:
    """An abstract value as JAX's messages show it (``float32[2,3]``)."""
    return f"{aval.dtype.name}[{','.join(str(d) for d in aval.shape)}]"


def _typematch(a: ShapedArray, b: ShapedArray) -> bool:
    """Same shape and dtype (weak flags may differ), as JAX's typematch."""
    return a.shape == b.shape and a.dtype == b.dtype


def _mismatch(a: ShapedArray, b: ShapedArray) -> str:
    """Why two abstract values differ, as JAX says it."""
    if a.dtype != b.dtype and a.shape != b.shape:
        return ", so the shapes and dtypes do not match"
    if a.dtype != b.dtype:
        return ", so the dtypes do not match"
    return ", so the shapes do not match"


def _keystr(path: Sequence[Any]) -> str:
    """A path into a pytree as JAX's ``keystr`` writes it."""
    parts: list[str] = []
    for kind, key in path:
        parts.append(f".{key}" if kind == "attr" else f"[{key!r}]")
    return "".join(parts)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of each leaf of ``value``, in the order of its leaves."""
    if value is None:
        return []
    fields: tuple[str, ...] | None = getattr(value, "_fields", None)
    if isinstance(value, tuple) and fields is not None:
        out: list[tuple[Any, ...]] = []
        for name, child in zip(fields, value, strict=True):  # pyright: ignore
            out += _paths(child, (*path, ("attr", name)))
        return out
    if isinstance(value, tuple | list):
        out = []
        for i, child in enumerate(value):  # pyright: ignore
            out += _paths(child, (*path, ("index", i)))
        return out
    if isinstance(value, dict):
        out = []
        for key in sorted(value):  # pyright: ignore
            out += _paths(value[key], (*path, ("index", key)))
        return out
    return [path]


def _kind(value: Any) -> str:
    """A pytree node as JAX's structure messages name it."""
    if isinstance(value, tuple | list | dict) or value is None:
        return str(type(value))  # pyright: ignore
    return "pytree leaf"


def _structure_errors(
    a: Any, b: Any, path: tuple[Any, ...] = ()
) -> list[tuple[Any, ...]]:
    """Where two pytrees differ in structure: (path, a's kind, b's kind,
    explanation) for each first difference."""
    if type(a) is not type(b) and not (_kind(a) == _kind(b) == "pytree leaf"):
        return [(path, _kind(a), _kind(b), "their Python types differ")]
    if isinstance(a, tuple | list):
        if len(a) != len(b):  # pyright: ignore
            return [
                (
                    path,
                    f"{type(a).__name__} of length {len(a)}",  # pyright: ignore
                    f"{type(b).__name__} of length {len(b)}",  # pyright: ignore
                    "the lengths do not match",
                )
            ]
        found: list[tuple[Any, ...]] = []
        for i, (x, y) in enumerate(zip(a, b, strict=True)):  # pyright: ignore
            found += _structure_errors(x, y, (*path, ("index", i)))
        return found
    if isinstance(a, dict):
        if set(a) != set(b):  # pyright: ignore
            return [
                (
                    path,
                    f"dict with keys {sorted(a)}",  # pyright: ignore
                    f"dict with keys {sorted(b)}",  # pyright: ignore
                    "the keys do not match",
                )
            ]
        found = []
        for key in sorted(a):  # pyright: ignore
            found += _structure_errors(a[key], b[key], (*path, ("index", key)))  # pyright: ignore
        return found
    return []


def _capitalize(s: str) -> str:
    return s[0].upper() + s[1:]


def _listed(diffs: list[str]) -> str:
    if len(diffs) == 1:
        return f"{_capitalize(diffs[0])}.\n"
    return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def _check_carry(
    name: str,
    fun: Callable[..., Any],
    in_tree: _tree.PyTreeDef,
    in_avals: Sequence[ShapedArray],
    out_tree: _tree.PyTreeDef,
    out_avals: Sequence[ShapedArray],
) -> None:
    """JAX's checks that a loop body's carry output matches its input."""
    try:
        carry_name: str | None = next(iter(inspect.signature(fun).parameters), None)
    except (TypeError, ValueError):
        carry_name = None

    def component(path: Sequence[Any]) -> str:
        if carry_name:
            if path:
                return f"the input carry component {carry_name}{_keystr(path)}"
            return f"the input carry {carry_name}"
        return f"the input carry at path {_keystr(path)}" if path else "the input carry"

    if in_tree != out_tree:
        a = in_tree.unflatten([0] * in_tree.num_leaves)
        b = out_tree.unflatten([0] * out_tree.num_leaves)
        diffs = [
            f"{component(p)} is a {k1} but the corresponding component of the "
            f"carry output is a {k2}, so {why}"
            for p, k1, k2, why in _structure_errors(a, b)
        ]
        if not diffs:
            diffs = [
                f"{component(())} has structure {in_tree} but the carry output "
                f"has {out_tree}, so their structures differ"
            ]
        raise TypeError(
            f"{name} function carry input and carry output must have the same "
            "pytree structure, but they differ:\n\n"
            f"{_listed(diffs)}\n"
            "Revise the function so that the carry output has the same pytree "
            "structure as the carry input."
        )
    paths = _paths(in_tree.unflatten([0] * in_tree.num_leaves))
    diffs = [
        f"{component(p)} has type {_str_short(a)} but the corresponding output "
        f"carry component has type {_str_short(b)}{_mismatch(a, b)}"
        for p, a, b in zip(paths, in_avals, out_avals, strict=True)
        if not _typematch(a, b)
    ]
    if diffs:
        raise TypeError(
            f"{name} function carry input and carry output must have equal types, "
            "but they differ:\n\n"
            f"{_listed(diffs)}\n"
            "Revise the function so that all output types match the corresponding "
            "input types."
        )


def _promote_weak(init: list[Any], out_avals: Sequence[ShapedArray]) -> bool:
    """JAX's promotion of a weak initial carry to the type the body gives it
    back (``0`` carried as a float becomes ``float32``): ``init`` updated in
    place; whether anything changed (the body is then traced again)."""
    changed = False
    for i, (x, out) in enumerate(zip(init, out_avals, strict=True)):
        a = aval_of(x)
        if a.weak_type and not _typematch(a, out):
            like = wrap(np.zeros((), out.dtype), _core.aval(out.dtype, out.weak_type))
            dt = _promotion.result_type(x, like)
            init[i] = convert_element_type(x, dt)
            changed = True
    return changed


T = TypeVar("T", bound=tuple[Any, ...])

# The functions traced for the primitives, by the user's function and what
# else decides the trace (the arguments' structure and abstract values, the
# configuration, the backend), as JAX keeps them: a body given again (to
# another call of lax.scan, eagerly or under jit) is not traced again, and
# its Python side effects happen once. A trace that read values of an
# enclosing trace is not kept (those values are that trace's); one that
# read a concrete array keeps it, as JAX does.
_TRACED: weakref.WeakKeyDictionary[Any, dict[Hashable, Any]] = (
    weakref.WeakKeyDictionary()
)
_TRACED_MAX: Final = 64  # per function (forgotten all at once when full)


def _memo(fun: Any, key: Hashable, make: Callable[[], T]) -> T:
    """``make()`` (a traced program, the enclosing values it read, ...),
    or what it gave for ``fun`` and ``key`` before."""
    full = (key, _config.current(), current_backend())
    try:
        table = _TRACED.get(fun)
        found = None if table is None else table.get(full)
    except TypeError:  # (a function that cannot be weakly referenced)
        return make()
    if found is not None:
        return found  # type: ignore[no-any-return]
    made = make()
    if made[1]:
        return made
    if table is None:
        table = _TRACED.setdefault(fun, {})
    if len(table) >= _TRACED_MAX:
        table.clear()
    table[full] = made
    return made


def _source_info(fun: Callable[..., Any]) -> str:
    """A function as JAX's messages name it: its name, file and line."""
    name = getattr(fun, "__name__", repr(fun))
    code = getattr(fun, "__code__", None)
    if code is None:
        return name
    return f"{name} at {code.co_filename}:{code.co_firstlineno}"


# -- batching of a program ---------------------------------------------------------


def _batch_program(
    closed: ClosedProgram,
    batched: Sequence[bool],
    size: int,
    force: Sequence[bool],
) -> tuple[ClosedProgram, list[Any], list[bool]]:
    """The program of ``closed`` run on ``size`` examples at once: its
    inputs marked ``batched`` hold every example along a first axis, the
    others one value for all; each output holds every example along a
    first axis where it varies between examples or ``force`` asks for it.
    Returns it, the values of enclosing traces it reads, and which outputs
    are batched."""
    in_avals = [
        a.update(shape=(size, *a.shape)) if b else a
        for a, b in zip(closed.in_avals, batched, strict=True)
    ]
    out_batched: list[bool] = []

    def fun(*args: Any) -> list[Any]:
        trace, token = rule_trace("vmap", size)
        try:
            return run(trace, args)
        finally:
            end_rule_trace(token)

    def run(trace: BatchTrace, args: Sequence[Any]) -> list[Any]:
        out_batched.clear()
        results: list[Any] = []
        with _Level([trace]):
            ins = [
                BatchTracer(trace, x, 0) if b else x
                for x, b in zip(args, batched, strict=True)
            ]
            for o, f in zip(eval_closed(closed, *ins), force, strict=True):
                if type(o) is BatchTracer and o._trace is trace:
                    results.append(moveaxis(o.value, o.batch_dim, 0))
                    out_batched.append(True)
                elif f:
                    results.append(broadcast_batch(o, size, 0))
                    out_batched.append(True)
                else:
                    results.append(o)
                    out_batched.append(False)
        return results

    program, outer, _ = trace_closed(fun, in_avals, "vmap")
    return program, outer, list(out_batched)


def _at_front(x: Any, dim: int | None, batched: bool, size: int) -> Any:
    """An operand of a batched program: with its batch axis first where
    the program takes it ``batched`` (broadcast if it has none)."""
    return bdim_at_front(x, dim, size) if batched else x


# -- cond and switch --------------------------------------------------------------

cond_p: Final = Primitive("cond", multiple_results=True)


@cond_p.def_abstract_eval
def _cond_abstract(
    index: ShapedArray, *ops: ShapedArray, branches: tuple[ClosedProgram, ...]
) -> tuple[ShapedArray, ...]:
    # The first branch's types, weak flags included, as JAX's (branch 0 of
    # a switch, the false branch of a cond): the others' differ at most in
    # their weak flags.
    return branches[0].out_avals


@cond_p.def_impl
def _cond_impl(
    index: Any, *ops: Any, branches: tuple[ClosedProgram, ...]
) -> tuple[Any, ...]:
    i = builtins.min(builtins.max(int(index), 0), len(branches) - 1)
    return branches[i].run(*ops)


@cond_p.def_jvp
def _cond_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    branches: tuple[ClosedProgram, ...],
) -> tuple[Any, Any]:
    index, ops = primals[0], list(primals[1:])
    op_tangents = list(tangents[1:])
    if any(type(t) is LinearTracer for t in op_tangents):
        return _cond_jvp_stepwise(index, ops, op_tangents, branches)
    nonzero = [type(t) is not Zero for t in op_tangents]
    out_avals = _cond_abstract(
        aval_of(index), *builtins.map(aval_of, ops), branches=branches
    )
    wanted = [tangent_aval(a).dtype != float0 for a in out_avals]
    jvps = [_jvp_program(b, nonzero, wanted) for b in branches]
    outer = [x for _, captured, _ in jvps for x in captured]
    merged = _merge_outer([(c, captured) for c, captured, _ in jvps], outer)
    given = [t for t in op_tangents if type(t) is not Zero]
    out = cond_p.bind(index, *outer, *ops, *given, branches=tuple(merged))
    n = len(out_avals)
    out_tangents: list[Any] = []
    it = iter(out[n:])
    for a, w in zip(out_avals, wanted, strict=True):
        out_tangents.append(next(it) if w else Zero(tangent_aval(a)))
    return tuple(out[:n]), out_tangents


def _cond_jvp_stepwise(
    index: Any,
    ops: list[Any],
    op_tangents: list[Any],
    branches: tuple[ClosedProgram, ...],
) -> tuple[Any, Any]:
    """Reverse mode: the JVP of the branch taken, run on the tracers of the
    linear record; on a traced index, of every branch, selected."""
    if not isinstance(index, Tracer):
        i = builtins.min(builtins.max(int(index), 0), len(branches) - 1)
        taken, taken_t = jvp_closed(branches[i], ops, op_tangents)
        return tuple(taken), taken_t
    results = [jvp_closed(b, ops, op_tangents) for b in branches]
    outs = [select_n(index, *o) for o in zip(*[r[0] for r in results], strict=True)]
    touts: list[Any] = []
    for ts in zip(*[r[1] for r in results], strict=True):
        if all(type(t) is Zero for t in ts):
            touts.append(ts[0])
        else:
            touts.append(select_n(index, *[instantiate(t) for t in ts]))
    return tuple(outs), touts


def _merge_outer(
    programs: Sequence[tuple[ClosedProgram, list[Any]]], outer: list[Any]
) -> list[ClosedProgram]:
    """Each program taking every one of ``outer`` first (those it does not
    read as unused inputs), then its own arguments."""
    merged: list[ClosedProgram] = []
    for closed, captured in programs:
        own = {id(x): i for i, x in enumerate(captured)}
        n = len(captured)
        spec: list[int | ShapedArray] = [
            own[id(x)] if id(x) in own else aval_of(x) for x in outer
        ]
        spec += list(range(n, len(closed.in_avals)))
        merged.append(padded(closed, spec))
    return merged


@cond_p.def_batch
def _cond_batch(
    args: Sequence[Any],
    dims: Sequence[int | None],
    *,
    branches: tuple[ClosedProgram, ...],
) -> tuple[tuple[Any, ...], tuple[int | None, ...]]:
    # As JAX: on a batched index every branch runs on every example and
    # select_n picks each example's result; otherwise the branches are
    # batched alike (an output batched in one branch is in all).
    size = batch_size(args, dims)
    index, ops = args[0], list(args[1:])
    ops_b = [d is not None for d in dims[1:]]
    n_out = len(branches[0].out_avals)
    if dims[0] is not None:
        index = moveaxis(index, dims[0], 0)
        hi = np.array(len(branches) - 1, np.int32)
        index = clamp(np.array(0, np.int32), index, hi)
        ops = [
            moveaxis(x, d, 0) if d is not None else x
            for x, d in zip(ops, dims[1:], strict=True)
        ]
        outs: list[list[Any]] = []
        for b in branches:
            program, reads, _ = _batch_program(b, ops_b, size, [True] * n_out)
            outs.append(eval_closed(program, *reads, *ops))
        results: list[Any] = []
        for cases in zip(*outs, strict=True):
            shape = tuple(cases[0].shape)
            which = broadcast_in_dim(index, shape, (0,)) if len(shape) > 1 else index
            results.append(select_n(which, *cases))
        return tuple(results), (0,) * n_out
    force = [False] * n_out
    while True:
        batched = [_batch_program(b, ops_b, size, force) for b in branches]
        grown = [any(o[2][i] for o in batched) for i in range(n_out)]
        if grown == force:
            break
        force = grown
    outer: list[Any] = []
    for _, captured, _ in batched:
        outer += [x for x in captured if all(x is not y for y in outer)]
    merged = _merge_outer([(c, captured) for c, captured, _ in batched], outer)
    moved = [
        _at_front(x, d, b, size) for x, d, b in zip(ops, dims[1:], ops_b, strict=True)
    ]
    out = cond_p.bind(index, *outer, *moved, branches=tuple(merged))
    return tuple(out), tuple(0 if f else None for f in force)


def _check_branches(
    api: str,
    names: Sequence[str],
    funs: Sequence[Callable[..., Any]],
    trees: Sequence[_tree.PyTreeDef],
    avals: Sequence[Sequence[ShapedArray]],
) -> None:
    """JAX's checks that two branches return one structure and types."""
    name1, name2 = names
    head = f"{name1} is {_source_info(funs[0])}\n{name2} is {_source_info(funs[1])}\n\n"
    tree1, tree2 = trees
    if tree1 != tree2:
        a = tree1.unflatten([0] * tree1.num_leaves)
        b = tree2.unflatten([0] * tree2.num_leaves)

        def where(p: Sequence[Any]) -> str:
            return f" at path {_keystr(p)}" if p else ""

        diffs = [
            f"{name1} output{where(p)} is a {k1} but {name2} output{where(p)} "
            f"is a {k2}, so {why}"
            for p, k1, k2, why in _structure_errors(a, b)
        ]
        if diffs:
            listed = (
                f"{diffs[0]}.\n"
                if len(diffs) == 1
                else "\n".join(f"  * {d};\n" for d in diffs[:-1])
                + f"  * {diffs[-1]}.\n"
            )
            raise TypeError(
                f"{api} branch outputs must have the same pytree structure, but "
                f"they differ:\n\n{head}{listed}\n"
                f"Revise {name1} and/or {name2} so that they have the same "
                "pytree structure."
            )
    paths = _paths(tree1.unflatten([0] * tree1.num_leaves))
    diffs = [
        f"the output of {name1}{f' at path {_keystr(p)}' if p else ''} has type "
        f"{_str_short(a)} but the corresponding output of {name2} has type "
        f"{_str_short(b)}{_mismatch(a, b)}"
        for p, a, b in zip(paths, avals[0], avals[1], strict=True)
        if not _typematch(a, b)
    ]
    if diffs:
        listed = (
            f"{_capitalize(diffs[0])}.\n"
            if len(diffs) == 1
            else "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"
        )
        raise TypeError(
            f"{api} branches must have equal output types but they differ.\n\n"
            f"{head}{listed}\n"
            f"Revise {name1} and/or {name2} so that all output types match."
        )


def _switch_internal(
    api: str,
    index: Any,
    branches: Sequence[Callable[..., Any]],
    names: Sequence[str],
    operands: Sequence[Any],
) -> Any:
    leaves, in_tree = _tree.flatten(list(operands))
    values = _values(leaves, api)
    avals = [aval_of(v) for v in values]
    traced: list[tuple[ClosedProgram, list[Any], _tree.PyTreeDef]] = []
    key = ("branch", in_tree, tuple(avals))

    def tracing(fun: Callable[..., Any]) -> Callable[[], Any]:
        def call(*tracers: Any) -> Any:
            return fun(*in_tree.unflatten(list(tracers)))

        return lambda: trace_closed(call, avals, api)

    for fun in branches:
        traced.append(_memo(fun, key, tracing(fun)))
    for i in range(1, len(traced)):
        pair = (names[0], names[i])
        _check_branches(
            api,
            pair,
            (branches[0], branches[i]),
            (traced[0][2], traced[i][2]),
            (traced[0][0].out_avals, traced[i][0].out_avals),
        )
    outer: list[Any] = []
    seen: set[int] = set()
    for _, captured, _ in traced:
        for x in captured:
            if id(x) not in seen:
                seen.add(id(x))
                outer.append(x)
    merged = _merge_outer([(c, captured) for c, captured, _ in traced], outer)
    out = cond_p.bind(index, *outer, *values, branches=tuple(merged))
    return traced[0][2].unflatten(list(out))


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """Apply the branch ``branches[index]`` to ``operands``.

    The index is clamped into range (as JAX does). Every branch is traced,
    and all must return the same structure of the same types.

    Args:
      index: an integer scalar (array or Python int).
      branches: the functions, each of ``*operands``.
      *operands: their arguments (pytrees of arrays).

    Returns:
      The chosen branch's result.

    Raises:
      TypeError: ``index`` is not an integer scalar, or the branches'
        results differ in structure or types.
      ValueError: ``branches`` is empty.

    >>> from typelattice import lax
    >>> lax.switch(1, [lambda x: x - 1, lambda x: x * 10], 4.0)
    Array(40., dtype=float32, weak_type=True)
    >>> lax.switch(7, [lambda x: x - 1, lambda x: x * 10], 4.0)
    Array(40., dtype=float32, weak_type=True)
    """
    if np.ndim(index) != 0:
        raise TypeError(
            f"Branch index must be scalar, got {index} of shape {np.shape(index)}."
        )
    index_value = _values([index], "switch")[0]
    dt = index_value.dtype
    if dt.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {dt}")
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if len(branches) == 1:
        return branches[0](*operands)
    i32 = convert_element_type(index_value, _INT32)
    hi = np.array(len(branches) - 1, np.int32)
    i32 = clamp(np.array(0, np.int32), i32, hi)
    names = ["branch 0", *[f"branch{i}" for i in range(1, len(branches))]]
    return _switch_internal("switch", i32, branches, names, operands)


_NO_OPERAND: Final = object()


def cond(
    pred: Any,
    true_fun: Callable[..., Any],
    false_fun: Callable[..., Any],
    *operands: Any,
    operand: Any = _NO_OPERAND,
) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``.

    Both functions are traced and must return the same structure of the
    same types (weak flags may differ: the result has ``false_fun``'s, as
    in JAX). A number ``pred`` counts as true when nonzero.

    Args:
      pred: a scalar: bool, or a number.
      true_fun: the function applied when ``pred`` is true.
      false_fun: the function applied otherwise.
      *operands: their arguments (pytrees of arrays).
      operand: one argument, the older way (not with ``operands``).

    Returns:
      The chosen function's result.

    Raises:
      TypeError: ``pred`` is not a scalar, or the results differ.

    >>> from typelattice import lax
    >>> import typelattice.numpy as tnp
    >>> lax.cond(tnp.float32(3) > 0, lambda x: x * 2, lambda x: -x, tnp.int8(5))
    Array(10, dtype=int8)
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError(
                "if 'operand' keyword is passed then no positional operands can be "
                f"passed, got operand={operand!r} and positional operands {operands}"
            )
        operands = (operand,)
    if pred is None:
        raise TypeError("cond predicate is None")
    if isinstance(pred, Sequence) or np.ndim(pred) != 0:
        kind = (
            f"type {type(pred)}"  # pyright: ignore[reportUnknownArgumentType]
            if isinstance(pred, Sequence)
            else f"shape {np.shape(pred)}."
        )
        raise TypeError(f"Pred must be a scalar, got {pred} of {kind}")
    value = _values([pred], "cond")[0]
    kind = value.dtype.kind
    if kind != "b":
        if kind not in "iuf":
            raise TypeError(
                f"Pred type must be either boolean or number, got {value.dtype}."
            )
        value = ne(value, 0)
    index = convert_element_type(value, _INT32)
    return _cond_internal(index, true_fun, false_fun, operands)


def _cond_internal(
    index: Any,
    true_fun: Callable[..., Any],
    false_fun: Callable[..., Any],
    operands: Sequence[Any],
) -> Any:
    """cond's checks name ``true_fun`` first, its branches are (false, true)."""
    leaves, in_tree = _tree.flatten(list(operands))
    values = _values(leaves, "cond")
    avals = [aval_of(v) for v in values]

    def traced(fun: Callable[..., Any]) -> tuple[ClosedProgram, list[Any], Any]:
        def call(*tracers: Any) -> Any:
            return fun(*in_tree.unflatten(list(tracers)))

        key = ("branch", in_tree, tuple(avals))
        return _memo(fun, key, lambda: trace_closed(call, avals, "cond"))

    t, f = traced(true_fun), traced(false_fun)
    _check_branches(
        "cond",
        ("true_fun", "false_fun"),
        (true_fun, false_fun),
        (t[2], f[2]),
        (t[0].out_avals, f[0].out_avals),
    )
    outer: list[Any] = list(f[1])
    outer += [x for x in t[1] if all(x is not y for y in outer)]
    merged = _merge_outer([(f[0], f[1]), (t[0], t[1])], outer)
    out = cond_p.bind(index, *outer, *values, branches=tuple(merged))
    return t[2].unflatten(list(out))


# -- differentiation of a program -------------------------------------------------


def _jvp_program(
    closed: ClosedProgram, nonzero: Sequence[bool], wanted: Sequence[bool]
) -> tuple[ClosedProgram, list[Any], list[bool]]:
    """The program of ``closed``'s JVP: its inputs ``closed``'s, then the
    tangents of those marked ``nonzero``; its outputs ``closed``'s, then
    the tangents of those ``wanted`` (zeros where they are zero) and of the
    others that are not zero. Returns it, the values of enclosing traces it
    reads, and which outputs have a tangent."""
    in_avals = list(closed.in_avals)
    t_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzero, strict=True) if nz]
    out_has: list[bool] = []

    def fun(*args: Any) -> Any:
        primals = list(args[: len(in_avals)])
        given = iter(args[len(in_avals) :])
        tangents = [
            next(given) if nz else Zero(tangent_aval(a))
            for a, nz in zip(in_avals, nonzero, strict=True)
        ]
        outs, touts = jvp_closed(closed, primals, tangents)
        out_has.clear()
        kept: list[Any] = []
        for t, w in zip(touts, wanted, strict=True):
            if w and type(t) is Zero and t.aval.dtype != float0:
                t = zeros(t.aval)
            has = type(t) is not Zero
            out_has.append(has)
            if has:
                kept.append(t)
        return [*outs, *kept]

    jvp, outer, _ = trace_closed(fun, [*in_avals, *t_avals], "jvp")
    return jvp, outer, list(out_has)


# -- while_loop -------------------------------------------------------------------

while_p: Final = Primitive("while", multiple_results=True)


@while_p.def_abstract_eval
def _while_abstract(
    *args: ShapedArray,
    cond_jaxpr: ClosedProgram,
    body_jaxpr: ClosedProgram,
    cond_nconsts: int,
    body_nconsts: int,
) -> tuple[ShapedArray, ...]:
    return tuple(body_jaxpr.out_avals)


@while_p.def_impl
def _while_impl(
    *args: Any,
    cond_jaxpr: ClosedProgram,
    body_jaxpr: ClosedProgram,
    cond_nconsts: int,
    body_nconsts: int,
) -> tuple[Any, ...]:
    cond_consts = args[:cond_nconsts]
    body_consts = args[cond_nconsts : cond_nconsts + body_nconsts]
    carry = tuple(args[cond_nconsts + body_nconsts :])
    test, body = cond_jaxpr.run, body_jaxpr.run
    while test(*cond_consts, *carry)[0]:
        carry = body(*body_consts, *carry)
    return carry


_WHILE_REVERSE: Final = (
    "Reverse-mode differentiation does not work for lax.while_loop or "
    "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or using "
    "fori_loop with static start/stop."
)


@while_p.def_jvp
def _while_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    cond_jaxpr: ClosedProgram,
    body_jaxpr: ClosedProgram,
    cond_nconsts: int,
    body_nconsts: int,
) -> tuple[Any, Any]:
    if any(type(t) is LinearTracer for t in tangents):
        raise ValueError(_WHILE_REVERSE)
    nc = cond_nconsts + body_nconsts
    cond_consts = list(primals[:cond_nconsts])
    body_consts = list(primals[cond_nconsts:nc])
    carry = list(primals[nc:])
    bconst_nz = [type(t) is not Zero for t in tangents[cond_nconsts:nc]]
    carry_t = list(tangents[nc:])
    carry_nz = [type(t) is not Zero for t in carry_t]
    while True:
        jvp, outer, out_has = _jvp_program(body_jaxpr, bconst_nz + carry_nz, carry_nz)
        grown = [a or b for a, b in zip(carry_nz, out_has, strict=True)]
        if grown == carry_nz:
            break
        carry_nz = grown
    n = len(carry)
    # The body's JVP takes (outer, body consts, their tangents, carry, carry
    # tangents); it was traced as (outer, consts, carry, const tangents,
    # carry tangents).
    nb = body_nconsts
    nct = sum(bconst_nz)
    k = len(outer)
    spec: list[int | ShapedArray] = [
        *range(k),
        *range(k, k + nb),
        *range(k + nb + n, k + nb + n + nct),
        *range(k + nb, k + nb + n),
        *range(k + nb + n + nct, len(jvp.in_avals)),
    ]
    body = padded(jvp, spec)
    t_avals = [
        tangent_aval(aval_of(c)) for c, nz in zip(carry, carry_nz, strict=True) if nz
    ]
    test = padded(cond_jaxpr, [*range(len(cond_jaxpr.in_avals)), *t_avals])
    given_c = [t for t in tangents[cond_nconsts:nc] if type(t) is not Zero]
    given = [
        instantiate(t) if type(t) is Zero else t
        for t, nz in zip(carry_t, carry_nz, strict=True)
        if nz
    ]
    out = while_p.bind(
        *cond_consts,
        *outer,
        *body_consts,
        *given_c,
        *carry,
        *given,
        cond_jaxpr=test,
        body_jaxpr=body,
        cond_nconsts=cond_nconsts,
        body_nconsts=k + nb + nct,
    )
    it = iter(out[n:])
    out_t = [
        next(it) if nz else Zero(tangent_aval(a))
        for a, nz in zip(body_jaxpr.out_avals, carry_nz, strict=True)
    ]
    return tuple(out[:n]), out_t


@while_p.def_batch
def _while_batch(
    args: Sequence[Any],
    dims: Sequence[int | None],
    *,
    cond_jaxpr: ClosedProgram,
    body_jaxpr: ClosedProgram,
    cond_nconsts: int,
    body_nconsts: int,
) -> tuple[tuple[Any, ...], tuple[int | None, ...]]:
    # As JAX: the carry's batched entries found by iterating to a fixed
    # point; a predicate that varies between examples batches the whole
    # carry, and the loop runs until no example's predicate holds, each
    # example's carry changing only while its own does.
    size = batch_size(args, dims)
    nc = cond_nconsts + body_nconsts
    b = [d is not None for d in dims]
    cconst_b, bconst_b, carry_b = b[:cond_nconsts], b[cond_nconsts:nc], b[nc:]
    n = len(carry_b)
    while True:
        test, test_outer, pred_b = _batch_program(
            cond_jaxpr, cconst_b + carry_b, size, [False]
        )
        wanted = [True] * n if pred_b[0] else carry_b
        body, body_outer, out_b = _batch_program(
            body_jaxpr, bconst_b + wanted, size, wanted
        )
        grown = [x or y for x, y in zip(wanted, out_b, strict=True)]
        if grown == carry_b:
            break
        carry_b = grown
    moved = [
        _at_front(x, d, f, size)
        for x, d, f in zip(args, dims, b[:nc] + carry_b, strict=True)
    ]
    cconsts, bconsts, carry = moved[:cond_nconsts], moved[cond_nconsts:nc], moved[nc:]
    test_consts = [*test_outer, *cconsts]
    body_consts = [*body_outer, *bconsts]
    if pred_b[0]:
        test, test_consts, body, body_consts = _while_selecting(
            test, test_consts, body, body_consts
        )
    out = while_p.bind(
        *test_consts,
        *body_consts,
        *carry,
        cond_jaxpr=test,
        body_jaxpr=body,
        cond_nconsts=len(test_consts),
        body_nconsts=len(body_consts),
    )
    return tuple(out), tuple(0 if f else None for f in carry_b)


def _while_selecting(
    test: ClosedProgram,
    test_consts: list[Any],
    body: ClosedProgram,
    body_consts: list[Any],
) -> tuple[ClosedProgram, list[Any], ClosedProgram, list[Any]]:
    """A batched while loop's condition and body (with their constant
    operands) when its predicate is batched: the loop goes on while any
    example's predicate holds, and the body keeps the carry of the
    examples whose predicate fails."""
    nt, nb = len(test_consts), len(body_consts)

    def any_holds(*args: Any) -> Any:
        return [reduce_or(eval_closed(test, *args)[0], (0,))]

    def step(*args: Any) -> list[Any]:
        carry = list(args[nt + nb :])
        pred = eval_closed(test, *args[:nt], *carry)[0]
        new = eval_closed(body, *args[nt:])
        kept: list[Any] = []
        for old, x in zip(carry, new, strict=True):
            shape = tuple(x.shape)
            which = broadcast_in_dim(pred, shape, (0,)) if len(shape) > 1 else pred
            kept.append(select_n(which, old, x))
        return kept

    any_test, any_outer, _ = trace_closed(any_holds, list(test.in_avals), "vmap")
    stepped, step_outer, _ = trace_closed(
        step, [*test.in_avals[:nt], *body.in_avals], "vmap"
    )
    return (
        any_test,
        [*any_outer, *test_consts],
        stepped,
        [*step_outer, *test_consts, *body_consts],
    )


def while_loop(
    cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any
) -> Any:
    """Apply ``body_fun`` to the carry while ``cond_fun`` holds.

    The carry keeps one structure and types: the body must return what it
    receives (a weak initial value, a Python scalar, takes the type the
    body gives it, as in JAX). Differentiable in forward mode only.

    Args:
      cond_fun: the carry to a boolean scalar.
      body_fun: the carry to the next carry.
      init_val: the first carry (a pytree of arrays).

    Returns:
      The carry when ``cond_fun`` first fails.

    Raises:
      TypeError: ``cond_fun`` does not return a boolean scalar, or
        ``body_fun`` changes the carry's structure or types.

    >>> from typelattice import lax
    >>> lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2), (0, 1.0))
    (Array(5, dtype=int32, weak_type=True), Array(32., dtype=float32, weak_type=True))
    """
    if not (callable(body_fun) and callable(cond_fun)):
        raise TypeError(
            "lax.while_loop: body_fun and cond_fun arguments should be callable."
        )
    leaves, in_tree = _tree.flatten(init_val)
    init = _values(leaves, "while_loop")

    def traced() -> tuple[Any, ...]:
        avals = [aval_of(x) for x in init]

        def test(*tracers: Any) -> Any:
            return cond_fun(in_tree.unflatten(list(tracers)))

        key = ("while", in_tree, tuple(avals))
        tested = _memo(cond_fun, key, lambda: trace_closed(test, avals, "while_loop"))
        trees: list[_tree.PyTreeDef] = []

        def step(*tracers: Any) -> Any:
            out = body_fun(in_tree.unflatten(list(tracers)))
            out_leaves, tree = _tree.flatten(out)
            trees.append(tree)
            return out_leaves

        def make() -> tuple[ClosedProgram, list[Any], _tree.PyTreeDef]:
            closed, outer, _ = trace_closed(step, avals, "while_loop")
            return closed, outer, trees[0]

        stepped = _memo(body_fun, key, make)
        return tested, stepped, stepped[2], avals

    tested, stepped, out_tree, avals = traced()
    body, body_outer, _ = stepped
    if len(body.out_avals) == len(avals) and _promote_weak(init, body.out_avals):
        tested, stepped, out_tree, avals = traced()
        body, body_outer, _ = stepped
    test, test_outer, test_tree = tested
    if not test_tree.is_leaf:
        raise TypeError(
            f"cond_fun must return a boolean scalar, but got pytree {test_tree}."
        )
    t = test.out_avals[0]
    if t.dtype != np.dtype(bool) or t.shape:
        raise TypeError(
            f"cond_fun must return a boolean scalar, but got output type(s) [{t!r}]."
        )
    _check_carry("while_loop body", body_fun, in_tree, avals, out_tree, body.out_avals)
    out = while_p.bind(
        *test_outer,
        *body_outer,
        *init,
        cond_jaxpr=test,
        body_jaxpr=body,
        cond_nconsts=len(test_outer),
        body_nconsts=len(body_outer),
    )
    return in_tree.unflatten(list(out))


# -- scan -------------------------------------------------------------------------

scan_p: Final = Primitive("scan", multiple_results=True)


@scan_p.def_abstract_eval
def _scan_abstract(
    *args: ShapedArray,
    jaxpr: ClosedProgram,
    length: int,
    reverse: bool,
    unroll: int,
    num_consts: int,
    num_carry: int,
) -> tuple[ShapedArray, ...]:
    outs = jaxpr.out_avals
    ys = [a.update(shape=(length, *a.shape)) for a in outs[num_carry:]]
    return (*outs[:num_carry], *ys)


@scan_p.def_impl
def _scan_impl(
    *args: Any,
    jaxpr: ClosedProgram,
    length: int,
    reverse: bool,
    unroll: int,
    num_consts: int,
    num_carry: int,
) -> tuple[Any, ...]:
    consts = args[:num_consts]
    carry = tuple(args[num_consts : num_consts + num_carry])
    xs = args[num_consts + num_carry :]
    ys = [np.empty((length, *a.shape), a.dtype) for a in jaxpr.out_avals[num_carry:]]
    steps = range(length - 1, -1, -1) if reverse else range(length)
    loop = jaxpr.scan_loop(num_consts, num_carry)
    return (*loop(consts, carry, xs, ys, steps), *ys)


@scan_p.def_jvp
def _scan_jvp(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    *,
    jaxpr: ClosedProgram,
    length: int,
    reverse: bool,
    unroll: int,
    num_consts: int,
    num_carry: int,
) -> tuple[Any, Any]:
    params = {
        "length": length,
        "reverse": reverse,
        "unroll": unroll,
        "num_consts": num_consts,
        "num_carry": num_carry,
    }
    if any(type(t) is LinearTracer for t in tangents):
        return _scan_jvp_stepwise(primals, tangents, jaxpr, params)
    nk, nc = num_consts, num_carry
    nonzero = [type(t) is not Zero for t in tangents]
    const_nz, carry_nz, xs_nz = nonzero[:nk], nonzero[nk : nk + nc], nonzero[nk + nc :]
    ny = len(jaxpr.out_avals) - nc
    while True:
        wanted = [*carry_nz, *([False] * ny)]
        jvp, outer, out_has = _jvp_program(jaxpr, const_nz + carry_nz + xs_nz, wanted)
        grown = [a or b for a, b in zip(carry_nz, out_has[:nc], strict=True)]
        if grown == carry_nz:
            break
        carry_nz = grown
    ys_has = out_has[nc:]
    # Traced as (outer, consts, carry, xs, their tangents); bound as
    # (outer, consts, const tangents, carry, carry tangents, xs, xs tangents).
    k = len(outer)
    nx = len(xs_nz)
    nct, ncc, nxt = sum(const_nz), sum(carry_nz), sum(xs_nz)
    base = k + nk + nc + nx
    spec: list[int | ShapedArray] = [
        *range(k + nk),
        *range(base, base + nct),
        *range(k + nk, k + nk + nc),
        *range(base + nct, base + nct + ncc),
        *range(k + nk + nc, base),
        *range(base + nct + ncc, base + nct + ncc + nxt),
    ]
    body = padded(jvp, spec)
    # Outputs: (carry, ys, carry tangents, ys tangents) to (carry, carry
    # tangents, ys, ys tangents).
    n_out = len(jaxpr.out_avals)
    nyt = sum(ys_has)
    body = body.reordered(
        [
            *range(nc),
            *range(n_out, n_out + ncc),
            *range(nc, n_out),
            *range(n_out + ncc, n_out + ncc + nyt),
        ]
    )
    consts, carry, xs = (
        list(primals[:nk]),
        list(primals[nk : nk + nc]),
        list(primals[nk + nc :]),
    )
    ts = list(tangents)
    const_t = [t for t in ts[:nk] if type(t) is not Zero]
    carry_t = [
        instantiate(t) for t, nz in zip(ts[nk : nk + nc], carry_nz, strict=True) if nz
    ]
    xs_t = [t for t in ts[nk + nc :] if type(t) is not Zero]
    out = scan_p.bind(
        *outer,
        *consts,
        *const_t,
        *carry,
        *carry_t,
        *xs,
        *xs_t,
        jaxpr=body,
        length=length,
        reverse=reverse,
        unroll=unroll,
        num_consts=k + nk + nct,
        num_carry=nc + ncc,
    )
    it_carry_t = iter(out[nc : nc + ncc])
    it_ys_t = iter(out[nc + ncc + ny :])
    out_avals = _scan_abstract(*builtins.map(aval_of, primals), jaxpr=jaxpr, **params)
    carry_out_t = [
        next(it_carry_t) if nz else Zero(tangent_aval(a))
        for a, nz in zip(out_avals[:nc], carry_nz, strict=True)
    ]
    ys_t = [
        next(it_ys_t) if has else Zero(tangent_aval(a))
        for a, has in zip(out_avals[nc:], ys_has, strict=True)
    ]
    primal_out = (*out[:nc], *out[nc + ncc : nc + ncc + ny])
    return primal_out, [*carry_out_t, *ys_t]


@scan_p.def_batch
def _scan_batch(
    args: Sequence[Any],
    dims: Sequence[int | None],
    *,
    jaxpr: ClosedProgram,
    length: int,
    reverse: bool,
    unroll: int,
    num_consts: int,
    num_carry: int,
) -> tuple[tuple[Any, ...], tuple[int | None, ...]]:
    # As JAX: the body batched, its carry batched where the initial carry
    # is or where the body makes it vary (found by iterating to a fixed
    # point); the scanned arrays carry their batch axis second, after the
    # scanned axis, so each step's slice has it first.
    size = batch_size(args, dims)
    nk, nc = num_consts, num_carry
    b = [d is not None for d in dims]
    const_b, carry_b, xs_b = b[:nk], b[nk : nk + nc], b[nk + nc :]
    ny = len(jaxpr.out_avals) - nc
    while True:
        body, outer, out_b = _batch_program(
            jaxpr, const_b + carry_b + xs_b, size, carry_b + [False] * ny
        )
        grown = [x or y for x, y in zip(carry_b, out_b[:nc], strict=True)]
        if grown == carry_b:
            break
        carry_b = grown
    consts = [
        _at_front(x, d, f, size)
        for x, d, f in zip(args[:nk], dims[:nk], const_b, strict=True)
    ]
    carry = [
        _at_front(x, d, f, size)
        for x, d, f in zip(args[nk : nk + nc], dims[nk : nk + nc], carry_b, strict=True)
    ]
    xs = [
        x if d is None else moveaxis(x, d, 1)
        for x, d in zip(args[nk + nc :], dims[nk + nc :], strict=True)
    ]
    out = scan_p.bind(
        *outer,
        *consts,
        *carry,
        *xs,
        jaxpr=body,
        length=length,
        reverse=reverse,
        unroll=unroll,
        num_consts=len(outer) + nk,
        num_carry=nc,
    )
    out_dims = [0 if f else None for f in carry_b]
    out_dims += [1 if f else None for f in out_b[nc:]]
    return tuple(out), tuple(out_dims)


def _scan_jvp_stepwise(
    primals: Sequence[Any],
    tangents: Sequence[Any],
    jaxpr: ClosedProgram,
    params: dict[str, Any],
) -> tuple[Any, Any]:
    """Reverse mode: the body's JVP run step by step on the tracers of the
    linear record (which then transposes primitive by primitive), the
    values computed by the same primitives as the program's."""
    nk, nc, length = params["num_consts"], params["num_carry"], params["length"]
    out_avals = _scan_abstract(*builtins.map(aval_of, primals), jaxpr=jaxpr, **params)
    if length == 0:
        out = scan_p.bind(*primals, jaxpr=jaxpr, **params)
        carry_t = list(tangents[nk : nk + nc])
        return out, [*carry_t, *[Zero(tangent_aval(a)) for a in out_avals[nc:]]]
    consts, carry = list(primals[:nk]), list(primals[nk : nk + nc])
    consts_t, carry_t = list(tangents[:nk]), list(tangents[nk : nk + nc])
    xs, xs_t = list(primals[nk + nc :]), list(tangents[nk + nc :])
    steps = range(length - 1, -1, -1) if params["reverse"] else range(length)
    ys: list[list[Any]] = []
    ys_t: list[list[Any]] = []
    for i in steps:
        x = [_index(v, i) for v in xs]
        x_t = [
            Zero(tangent_aval(aval_of(v))) if type(t) is Zero else _index(t, i)
            for v, t in zip(x, xs_t, strict=True)
        ]
        outs, touts = jvp_closed(
            jaxpr, [*consts, *carry, *x], [*consts_t, *carry_t, *x_t]
        )
        carry, carry_t = outs[:nc], touts[:nc]
        ys.append(outs[nc:])
        ys_t.append(touts[nc:])
    if params["reverse"]:
        ys.reverse()
        ys_t.reverse()
    stacked = [_stack(list(col)) for col in zip(*ys, strict=True)] if ys else []
    stacked_t: list[Any] = []
    for col, a in zip(zip(*ys_t, strict=True), out_avals[nc:], strict=True):
        if all(type(t) is Zero for t in col):
            stacked_t.append(Zero(tangent_aval(a)))
        else:
            stacked_t.append(_stack([instantiate(t) for t in col]))
    if len(stacked) < len(out_avals) - nc:  # (no outputs per step)
        stacked = [zeros(a) for a in out_avals[nc:]]
        stacked_t = [Zero(tangent_aval(a)) for a in out_avals[nc:]]
    return (*carry, *stacked), [*carry_t, *stacked_t]


def _index(x: Any, i: int) -> Any:
    """``x[i]`` along the first axis, with primitives."""
    return squeeze(slice_in_dim(x, i, i + 1, axis=0), (0,))


def _stack(xs: list[Any]) -> Any:
    """The arrays stacked along a new first axis, with primitives."""
    return concatenate([expand_dims(x, (0,)) for x in xs], 0)


def _leading(x: Any) -> int:
    shape = (
        np.shape(x) if not isinstance(x, Tracer | ArrayImpl | BackendArray) else x.shape
    )
    if not shape:
        shown = _str_short(aval_of(x))
        raise ValueError(f"scan got value with no leading axis to scan over: {shown}.")
    return int(shape[0])


def _scan_length(xs: Sequence[Any], length: int | None) -> int:
    """The number of steps: ``length`` or the leading axis of ``xs``."""
    if length is not None:
        try:
            length = int(length)
        except Exception:
            raise TypeError(
                "The `length` argument to `scan` expects a concrete `int` value."
            ) from None
        if not all(_leading(x) == length for x in xs):
            sizes = [_leading(x) for x in xs]
            raise ValueError(
                f"scan got `length` argument of {length} which disagrees with "
                f"leading axis sizes {sizes}."
            )
        return length
    if not xs:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    sizes = [_leading(x) for x in xs]
    if len(set(sizes)) != 1:
        raise ValueError(
            "scan got values with different leading axis sizes: "
            f"{', '.join(str(s) for s in sizes)}."
        )
    return sizes[0]


class _Shown:
    """An abstract value as a pytree leaf is shown in JAX's messages."""

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return ("~" if self.aval.weak_type else "") + _str_short(self.aval)


def scan(
    f: Callable[[Any, Any], tuple[Any, Any]],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
    _split_transpose: bool = False,
) -> tuple[Any, Any]:
    """Loop ``f`` over the leading axis of ``xs``, carrying a state.

    As JAX's ``lax.scan``: in Python terms ::

        def scan(f, init, xs, length=None):
            carry, ys = init, []
            for x in xs:
                carry, y = f(carry, x)
                ys.append(y)
            return carry, np.stack(ys)

    ``f`` is traced once; the loop then runs its program (no Python
    dispatch per operation). The carry must keep its structure and types (a
    weak initial value takes the type ``f`` gives it, as in JAX).

    Args:
      f: ``(carry, x) -> (carry, y)``.
      init: the first carry (a pytree of arrays).
      xs: a pytree of arrays with a common leading axis, or None.
      length: the number of steps (needed when ``xs`` is None).
      reverse: run from the last step to the first (``ys`` in the order
        of ``xs``).
      unroll: accepted for compatibility (steps per loop iteration in
        JAX); the results do not depend on it.

    Returns:
      ``(carry, ys)``: the last carry and the stacked ``y``.

    Raises:
      TypeError: ``f`` does not return a pair, or changes the carry.
      ValueError: the lengths disagree, or none is given.

    >>> from typelattice import lax
    >>> import typelattice.numpy as tnp
    >>> lax.scan(lambda c, x: (c + x, c * x), 0.0, tnp.arange(1.0, 4.0))
    (Array(6., dtype=float32), Array([0., 2., 9.], dtype=float32))
    """
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")
    init_leaves, init_tree = _tree.flatten(init)
    xs_leaves, xs_tree = _tree.flatten(xs)
    carry = _values(init_leaves, "scan")
    xs_values = _values(xs_leaves, "scan")
    n = _scan_length(xs_values, length)
    if isinstance(unroll, bool):
        unroll = builtins.max(n, 1) if unroll else 1
    if not _is_int(unroll) or unroll < 0:
        raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")
    x_avals = [aval_of(x).update(shape=aval_of(x).shape[1:]) for x in xs_values]
    nc = len(carry)

    def traced() -> tuple[ClosedProgram, list[Any], _tree.PyTreeDef, _tree.PyTreeDef]:
        avals = [aval_of(c) for c in carry]
        key = ("scan", init_tree, xs_tree, tuple(avals), tuple(x_avals))
        return _memo(f, key, lambda: trace(avals))

    def trace(
        avals: list[ShapedArray],
    ) -> tuple[ClosedProgram, list[Any], _tree.PyTreeDef, _tree.PyTreeDef]:
        trees: list[_tree.PyTreeDef] = []

        def body(*tracers: Any) -> Any:
            c = init_tree.unflatten(list(tracers[:nc]))
            x = xs_tree.unflatten(list(tracers[nc:]))
            out = f(c, x)
            if not isinstance(out, tuple | list) or len(out) != 2:  # pyright: ignore
                leaves, tree = _tree.flatten(out)
                shown = [_Shown(aval_of(_values([v], "scan")[0])) for v in leaves]
                raise TypeError(
                    f"scan body output must be a pair, got {tree.unflatten(shown)}."
                )
            c_leaves, c_tree = _tree.flatten(out[0])
            y_leaves, y_tree = _tree.flatten(out[1])
            trees[:] = [c_tree, y_tree]
            return [*c_leaves, *y_leaves]

        closed, outer, _ = trace_closed(body, [*avals, *x_avals], "scan")
        return closed, outer, trees[0], trees[1]

    closed, outer, c_tree, y_tree = traced()
    if c_tree == init_tree and _promote_weak(carry, closed.out_avals[:nc]):
        closed, outer, c_tree, y_tree = traced()
    in_avals = [aval_of(c) for c in carry]
    out_carry: Sequence[ShapedArray] = (
        closed.out_avals[:nc] if c_tree == init_tree else ()
    )
    _check_carry("scan body", f, init_tree, in_avals, c_tree, out_carry)
    out = scan_p.bind(
        *outer,
        *carry,
        *xs_values,
        jaxpr=closed,
        length=n,
        reverse=bool(reverse),
        unroll=int(unroll),
        num_consts=len(outer),
        num_carry=nc,
    )
    return init_tree.unflatten(list(out[:nc])), y_tree.unflatten(list(out[nc:]))


# -- the functions written on them ------------------------------------------------


def _concrete(x: Any) -> bool:
    """Whether a bound's value is known now (not a tracer's)."""
    return not isinstance(x, Tracer | Placeholder)


def fori_loop(
    lower: Any,
    upper: Any,
    body_fun: Callable[[Any, Any], Any],
    init_val: Any,
    *,
    unroll: int | bool | None = None,
) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)``.

    With bounds known now (Python ints, arrays) the loop is a :func:`scan`
    (differentiable in both modes); with traced bounds it is a
    :func:`while_loop` (forward mode only), as in JAX.

    Args:
      lower: the first index (an integer scalar).
      upper: the bound, excluded (an integer scalar of ``lower``'s type).
      body_fun: ``(i, val) -> val``.
      init_val: the first value (a pytree of arrays).
      unroll: for a scan, as :func:`scan`'s; only with static bounds.

    Returns:
      The last value.

    Raises:
      TypeError: the bounds' types differ.
      ValueError: ``unroll`` with traced bounds.

    >>> from typelattice import lax
    >>> lax.fori_loop(0, 4, lambda i, v: v + i, 0)
    Array(6, dtype=int32, weak_type=True)
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    lo, hi = _values([lower, upper], "fori_loop")
    lo_dt, hi_dt = lo.dtype, hi.dtype
    dtype: np.dtype[Any] | None = lo_dt if lo_dt == hi_dt else None
    if dtype is None and lo_dt.kind == "i" and hi_dt.kind == "i":
        if lo.weak_type and not hi.weak_type:
            dtype = hi_dt
        elif hi.weak_type and not lo.weak_type:
            dtype = lo_dt
    if dtype is None:
        raise TypeError(
            "lower and upper arguments to fori_loop must have equal types, got "
            f"{lo_dt.name} and {hi_dt.name}"
        )
    if _concrete(lower) and _concrete(upper):
        lower_, upper_ = int(lower), int(upper)
        steps = builtins.max(upper_ - lower_, 0)

        (_, result), _ = scan(
            _wrapped("fori_scan", body_fun, _fori_scan_body),
            (lower_, init_val),
            None,
            length=steps,
            unroll=False if unroll is None else unroll,
        )
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(
            "Can only use `unroll` in `fori_loop` if the loop bounds are statically "
            "known."
        )
    if lo_dt != dtype:
        lo = convert_element_type(lo, dtype)
    if hi_dt != dtype:
        hi = convert_element_type(hi, dtype)

    step = _wrapped("fori_while", body_fun, _fori_while_body)
    _, _, result = while_loop(_fori_test, step, (lo, hi, init_val))
    return result


# fori_loop's and map's loops around a function are made once per function
# (while it lives), as JAX's, so that their traces are kept (see _memo).
_WRAPPED: weakref.WeakKeyDictionary[Any, dict[str, Callable[..., Any]]] = (
    weakref.WeakKeyDictionary()
)


def _wrapped(
    kind: str, fun: Any, make: Callable[[Callable[[], Any]], Callable[..., Any]]
) -> Callable[..., Any]:
    """``make(get)``, ``get`` returning ``fun`` (held weakly when it can be),
    kept per ``fun`` and ``kind``."""
    try:
        table = _WRAPPED.setdefault(fun, {})
    except TypeError:  # (a function that cannot be weakly referenced)
        return make(lambda: fun)
    found = table.get(kind)
    if found is None:
        found = table[kind] = make(weakref.ref(fun))
    return found


def _fori_scan_body(get: Callable[[], Any]) -> Callable[..., Any]:
    def scanned(loop_carry: Any, _: Any) -> Any:
        i, x = loop_carry
        return (add(i, 1), get()(i, x)), None

    return scanned


def _fori_test(loop_carry: Any) -> Any:
    i, stop, _ = loop_carry
    return lt(i, stop)


def _fori_while_body(get: Callable[[], Any]) -> Callable[..., Any]:
    def step(loop_carry: Any) -> Any:
        i, stop, x = loop_carry
        return add(i, 1), stop, get()(i, x)

    return step


def _map_body(get: Callable[[], Any]) -> Callable[..., Any]:
    def step(carry: Any, x: Any) -> Any:
        return carry, get()(x)

    return step


def map(  # noqa: A001 - jax.lax's name
    f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None
) -> Any:
    """``f`` applied to each slice of ``xs`` along its leading axis, results
    stacked: a :func:`scan` with no carry.

    Args:
      f: a function of one slice (a pytree like ``xs``'s).
      xs: a pytree of arrays with a common leading axis.
      batch_size: accepted as in JAX (slices per step there); the results
        do not depend on it.

    Returns:
      ``f``'s results, stacked along a new leading axis.

    >>> from typelattice import lax
    >>> import typelattice.numpy as tnp
    >>> lax.map(lambda x: x * x, tnp.arange(4))
    Array([0, 1, 4, 9], dtype=int32)
    """
    if batch_size is not None:
        if not _is_int(batch_size) or batch_size <= 0:
            raise ValueError(
                f"batch_size must be a positive integer, got {batch_size!r}"
            )

    _, ys = scan(_wrapped("map", f, _map_body), (), xs)
    return ys


def associative_scan(
    fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0
) -> Any:
    """The inclusive scan of ``elems`` along ``axis`` by the associative
    ``fn``, in a logarithmic number of steps (JAX's parallel prefix
    algorithm): ``fn`` is applied to whole arrays of pairs.

    Args:
      fn: an associative function of two pytrees like ``elems``
        (elementwise over the axis).
      elems: a pytree of arrays of one length along ``axis``.
      reverse: scan from the end.
      axis: the axis.

    Returns:
      A pytree like ``elems``: the running combinations.

    Raises:
      ValueError: the arrays' lengths along ``axis`` differ.

    >>> from typelattice import lax
    >>> import typelattice.numpy as tnp
    >>> lax.associative_scan(lax.add, tnp.arange(5))
    Array([ 0,  1,  3,  6, 10], dtype=int32)
    """
    leaves, tree = _tree.flatten(elems)
    values = _values(leaves, "associative_scan")
    if not values:
        return elems
    ndim = len(values[0].shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    axis = axis % ndim
    if reverse:
        values = [rev(v, (axis,)) for v in values]
    n = values[0].shape[axis]
    if not all(v.shape[axis] == n for v in values[1:]):
        raise ValueError(
            "Array inputs to associative_scan must have the same first dimension. "
            f"(saw: {[v.shape for v in values]})"
        )

    def combine(a: list[Any], b: list[Any]) -> list[Any]:
        out, _ = _tree.flatten(fn(tree.unflatten(a), tree.unflatten(b)))
        return list(out)

    def cut(x: Any, start: int, stop: int | None, stride: int = 1) -> Any:
        return slice_in_dim(x, start, stop, stride, axis)

    def interleave(evens: Any, odds: Any) -> Any:
        # evens[0], odds[0], evens[1], odds[1]...: the pairs side by side,
        # then merged into one axis; an even left over goes last.
        k = odds.shape[axis]
        pairs = concatenate(
            [
                expand_dims(cut(evens, 0, k), (axis + 1,)),
                expand_dims(odds, (axis + 1,)),
            ],
            axis + 1,
        )
        shape = list(evens.shape)
        shape[axis] = 2 * k
        merged = reshape(pairs, tuple(shape))
        if evens.shape[axis] > k:
            merged = concatenate([merged, cut(evens, k, None)], axis)
        return merged

    def prefix(xs: list[Any]) -> list[Any]:
        m = xs[0].shape[axis]
        if m < 2:
            return xs
        # Combined neighbours (0,1), (2,3)...: their prefixes are the odd
        # positions' results; an even position's is its left odd result
        # combined with it.
        pairs = combine(
            [cut(x, 0, m - 1, 2) for x in xs], [cut(x, 1, None, 2) for x in xs]
        )
        odd = prefix(pairs)
        tail = [cut(x, 2, None, 2) for x in xs]
        k = tail[0].shape[axis]
        even = (
            combine([cut(o, 0, k) for o in odd], tail)
            if k
            else [cut(x, 0, 0) for x in xs]
        )
        even = [
            concatenate([cut(x, 0, 1), e], axis) for x, e in zip(xs, even, strict=True)
        ]
        return [interleave(e, o) for e, o in zip(even, odd, strict=True)]

    out = prefix(values)
    if reverse:
        out = [rev(v, (axis,)) for v in out]
    return tree.unflatten(out)
