"""Recording namespace operations on tracers, and replaying them on NumPy.

A trace records :class:`Equation` objects, each reading and writing
variables (the numbers of tracers). Two kinds are recorded:

- a primitive bound to tracers
  (:class:`~typelattice._tracing.primitive.PrimitiveEquation`): the
  elementwise functions of the namespace, and every function written with
  ``typelattice.lax``, reach the trace this way; its replay is one call of
  the primitive's NumPy function.
- :class:`Call`: a namespace function still computed with NumPy on the
  values is evaluated abstractly, by the shape rule attached to it (see
  :mod:`typelattice._tracing.abstract`), and replayed by calling the same
  function on placeholders that hold the real values: the same code path,
  so the same dtypes and weak flags, which replay checks (the shapes too).

:class:`Program` turns a finished trace into one Python function (source
generated, then compiled) that runs the recorded NumPy calls in order with
floating point warnings off once for the whole program, each computation
that the trace repeats (the same primitive on the same operands) once. It
knows equations only through :class:`Equation`'s methods (their variables,
how each is shown, the line of source that replays it, what determines its
values).
"""

# Package-internal: reads the arrays' and tracers' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
import itertools
import math
import sys
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Final, TypeVar, cast

import numpy as np

from typelattice import _core
from typelattice._array import ArrayImpl
from typelattice._tracing import abstract, tree
from typelattice._tracing.tracer import (
    ACTIVE,
    ConcretizationTypeError,
    Trace,
    Tracer,
    TransformTracer,
    current_trace,
    describe,
    dummy,
    innermost_trace,
    placeholder,
)

__all__ = [
    "LOWERINGS",
    "NotDifferentiableError",
    "TRACED",
    "Call",
    "Equation",
    "Program",
    "code_bytes",
    "lowering",
    "traced",
]


def _this_trace(tracers: Sequence[Tracer]) -> Trace:
    trace = current_trace()
    for t in tracers:
        if t._trace is not trace:
            t.check()  # raises: a leaked tracer, or another trace's
    assert trace is not None
    return trace


# -- equations ------------------------------------------------------------------


def _sole_reference_count() -> int:
    """What ``sys.getrefcount`` gives for an array held by one local name
    only, as a program's code asks it (interpreters count the argument or
    borrow it)."""
    held = np.empty(1)
    return sys.getrefcount(held)


_SOLE: Final = _sole_reference_count()


class Source:
    """A program being written: the values its lines refer to by name."""

    def __init__(self, avals: Sequence[tuple[_core.Aval, tuple[int, ...]]]) -> None:
        self.avals = avals
        self.scope: dict[str, Any] = {
            "_set": _core._EXTOBJ.set,
            "_reset": _core._EXTOBJ.reset,
            "_ignore": _core._IGNORE,
            "_asarray": np.asarray,
            "_contiguous": np.ascontiguousarray,
            "_full": np.full,
            "_refs": sys.getrefcount,
            "_sole": _SOLE,
        }
        self._counter = itertools.count()

    def constant(self, value: Any) -> str:
        """How the program's source names ``value`` (a literal, or a name
        bound in its globals)."""
        if type(value) in (int, bool) or value is None:
            return repr(value)
        label = f"c{next(self._counter)}"
        self.scope[label] = value
        return label


class Equation:
    """One recorded operation: the variables it reads and writes, how it is
    shown, and the line of Python that replays it."""

    __slots__ = ()

    def inputs(self) -> Sequence[int]:
        """The variables it reads."""
        raise NotImplementedError

    def outputs(self) -> Sequence[int]:
        """The variables it writes."""
        raise NotImplementedError

    def pretty(self, var: Callable[[int], str]) -> str:
        """One line for :meth:`Program.pretty`; ``var`` shows a variable
        with its abstract value."""
        raise NotImplementedError

    def source(self, src: Source) -> str:
        """A Python statement setting ``v<n>`` for each output from the
        inputs' ``v<n>``, with the values it needs bound in ``src``."""
        raise NotImplementedError

    def source_reusing(self, src: Source, dying: Sequence[int]) -> str:
        """:meth:`source`, free to compute into the buffer of an input among
        ``dying`` (read for the last time here) when nothing else holds it."""
        return self.source(src)

    def key(self) -> Hashable | None:
        """What determines its outputs' values: two equations of one key
        compute the same values (a program computes them once); None when
        the equation is not to be shared."""
        return None

    def renamed(self, names: Mapping[int, int]) -> Equation | None:
        """The same equation reading ``names[v]`` for each input ``v`` among
        ``names``, or None when it cannot be rewritten."""
        return None


class _Alias(Equation):
    """A second name of a value (of an equation computed once for two)."""

    __slots__ = ("new", "old")

    def __init__(self, new: int, old: int) -> None:
        self.new = new
        self.old = old

    def inputs(self) -> Sequence[int]:
        return (self.old,)

    def outputs(self) -> Sequence[int]:
        return (self.new,)

    def source(self, src: Source) -> str:
        return f"v{self.new} = v{self.old}"


class Call(Equation):
    """A recorded call of a namespace function (replayed on placeholders).

    The call's arguments are kept flattened (:mod:`.tree`), with the
    positions of the traced ones, so that replay only fills those in.
    """

    __slots__ = ("fn", "ins", "leaves", "name", "outs", "slots", "trace", "treedef")

    def __init__(
        self,
        trace: Trace,
        name: str,
        fn: Callable[..., Any],
        leaves: list[Any],
        treedef: tree.TreeDef,
        outs: list[int],
    ) -> None:
        """A call of ``fn`` whose arguments ``(args, kwargs)`` flatten to
        ``leaves`` and ``treedef``; ``outs`` are its results' variables."""
        self.trace = trace
        self.name = name
        self.fn = fn
        self.treedef = treedef
        # Per traced argument: its position among the leaves and variable.
        self.slots = [
            (pos, leaf._var)
            for pos, leaf in enumerate(leaves)
            if isinstance(leaf, Tracer)
        ]
        self.leaves = [None if isinstance(x, Tracer) else x for x in leaves]
        self.ins = list(dict.fromkeys(var for _, var in self.slots))
        self.outs = outs

    def inputs(self) -> Sequence[int]:
        return self.ins

    def outputs(self) -> Sequence[int]:
        return self.outs

    def pretty(self, var: Callable[[int], str]) -> str:
        outs = ", ".join(var(v) for v in self.outs) or "()"
        shown = ", ".join(f"v{v}" for v in self.ins)
        return f"{outs} = {self.name}({shown}, ...)"

    def source(self, src: Source) -> str:
        call = src.constant(self.replayer())
        targets = "".join(f"v{v}, " for v in self.outs) or "_"
        return f"{targets} = {call}({', '.join(f'v{v}' for v in self.ins)})"

    def replayer(self) -> Callable[..., tuple[Any, ...]]:
        """The function that replays this call on values of ``ins``."""
        fn, name, treedef, template = self.fn, self.name, self.treedef, self.leaves
        avals = self.trace.avals
        in_keys = [(var, avals[var][0]) for var in self.ins]
        slots = self.slots
        expected = [avals[var] for var in self.outs]

        def replay(*values: Any) -> tuple[Any, ...]:
            held = {
                var: placeholder(np.asarray(v), key)
                for (var, key), v in zip(in_keys, values, strict=True)
            }
            leaves = list(template)
            for pos, var in slots:
                leaves[pos] = held[var]
            args, kwargs = treedef.unflatten(leaves)
            result = fn(*args, **kwargs)
            if isinstance(result, ArrayImpl):  # (one array: the common case)
                out = [result]
            else:
                out = [x for x in tree.leaves(result) if isinstance(x, ArrayImpl)]
            got = [(x._key, x._value.shape) for x in out]
            if got != expected:
                shown = ", ".join(describe(k, s) for k, s in got)
                traced = ", ".join(describe(k, s) for k, s in expected)
                raise RuntimeError(
                    f"typelattice internal error: {name} gave {shown} when run, "
                    f"{traced} when traced; please report it"
                )
            return tuple([x._value for x in out])

        return replay


def shown(value: Any) -> str:
    """A recorded constant as a program shows it."""
    if value.__class__ is not np.ndarray:
        return repr(value)
    array: np.ndarray[Any, Any] = value
    if array.ndim == 0:
        return f"{array.item()!r}:{array.dtype}"
    return f"const:{array.dtype}{list(array.shape)}"


# -- recording ----------------------------------------------------------------


F = TypeVar("F", bound=Callable[..., Any])

#: Every function made to accept tracers, in the order of definition.
TRACED: list[Callable[..., Any]] = []


def traced(
    rule: abstract.Rule,
    *,
    creation: abstract.Rule | None = None,
    name: str | None = None,
) -> Callable[[F], F]:
    """Make a namespace function accept tracers, with its shape rule: a
    decorator, written where the function is defined.

    Called with tracers among its arguments (in any pytree), the function
    is evaluated by ``rule`` (one of :mod:`typelattice._tracing.abstract`'s
    rules, or :func:`~typelattice._tracing.abstract.full_size`) and
    recorded as a :class:`Call`; called without tracers in an abstract-only
    trace (eval_shape), a creation function gives tracers by its
    ``creation`` rule. Otherwise, and whenever no trace is running, it runs
    as written.

    Args:
      rule: the shape rule for calls with tracers.
      creation: the rule for calls without tracers inside eval_shape.
      name: the name in programs and messages (the function's name without
        its leading underscore by default).

    Returns:
      The decorator. The function it returns keeps the rules as
      ``_rule`` and ``_creation`` and the undecorated function as
      ``_traced``; it is listed in :data:`TRACED`.

    Raises:
      TypeError: a rule that is not a function.
    """
    for given in (rule, creation or rule):
        if not callable(given):
            raise TypeError(
                "traced: the shape rule must be a rule of "
                f"typelattice._tracing.abstract, got {given!r:.60}"
            )

    def attach(fn: F) -> F:
        label = fn.__name__.lstrip("_") if name is None else name

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if ACTIVE:
                return _call(fn, label, rule, creation, args, kwargs)
            return fn(*args, **kwargs)

        wrapper._traced = fn  # type: ignore[attr-defined]
        wrapper._rule = rule  # type: ignore[attr-defined]
        wrapper._creation = creation  # type: ignore[attr-defined]
        TRACED.append(wrapper)
        return cast(F, wrapper)

    return attach


def _call(
    fn: Callable[..., Any],
    name: str,
    rule: abstract.Rule,
    creation: abstract.Rule | None,
    args: Any,
    kwargs: Any,
) -> Any:
    leaves, treedef = tree.flatten_call(args, kwargs)
    for x in leaves:
        if isinstance(x, TransformTracer):

            def evaluate(leaves: list[Any]) -> Any:
                args, kwargs = treedef.unflatten(leaves)
                return _call(fn, name, rule, creation, args, kwargs)

            return _lower(fn, name, args, kwargs, leaves, treedef, evaluate)
    tracers = [x for x in leaves if isinstance(x, Tracer)]
    if not tracers:
        trace = None if creation is None else abstract.creation_trace()
        if creation is None or trace is None:
            return fn(*args, **kwargs)
        try:
            out = creation(name, fn, args, kwargs)
        except abstract.Fallback as fallback:
            if fallback.error is not None:
                raise fallback.error from None  # (no stand-in sizes in it)
            return fn(*args, **kwargs)  # evaluated for real
    else:
        trace = _this_trace(tracers)
        try:
            out = _evaluate(
                fn, name, rule, args, kwargs, leaves, treedef, trace.abstract_only
            )
        except ConcretizationTypeError as err:
            err.add_note(f"(in typelattice.numpy.{name})")
            raise
    made: list[int] = []

    def as_tracer(x: Any) -> Any:
        if isinstance(x, ArrayImpl):
            tracer = trace.new_tracer(x._key, x._value.shape)
            made.append(tracer._var)
            return tracer
        return x

    result = tree.tree_map(as_tracer, out)
    trace.record(Call(trace, name, fn, leaves, treedef, made))
    return result


#: Per namespace function (undecorated): its lowering, the same function
#: written with primitives, which differentiation traces run.
LOWERINGS: dict[Callable[..., Any], Callable[..., Any]] = {}


def lowering(
    function: Callable[..., Any],
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``function``'s lowering: a decorator, on a function of the
    same signature written with ``typelattice.lax`` primitives (or with
    namespace functions that have lowerings), placed after ``function``'s
    definition. Differentiation transformations run it whenever one of the
    arguments is one of their tracers; its results must equal
    ``function``'s, dtypes and weak flags included (the tests check)."""
    undecorated = getattr(function, "_traced", None)
    if undecorated is None:
        raise TypeError(f"lowering: {function!r} is not a traced namespace function")

    def register(lower: Callable[..., Any]) -> Callable[..., Any]:
        LOWERINGS[undecorated] = lower
        function._lower = lower  # type: ignore[attr-defined]
        return lower

    return register


def _lower(
    fn: Callable[..., Any],
    name: str,
    args: Any,
    kwargs: Any,
    leaves: list[Any],
    treedef: tree.TreeDef,
    evaluate: Callable[[list[Any]], Any],
) -> Any:
    """``fn`` on arguments among which a differentiation tracer: by its
    lowering (run by the innermost differentiation trace, which takes the
    value from ``evaluate``, ``fn`` on the primal values), or, without one,
    by running it (its own code then calls namespace functions that have
    lowerings, or fails as below)."""
    lower = LOWERINGS.get(fn)
    if lower is not None:

        def run(leaves: list[Any]) -> Any:
            args, kwargs = treedef.unflatten(leaves)
            return lower(*args, **kwargs)

        trace = innermost_trace(leaves)
        return trace.process_lowering(fn, run, leaves, treedef, evaluate)
    try:
        return fn(*args, **kwargs)
    except NotDifferentiableError as err:
        raise NotImplementedError(
            f"typelattice.numpy.{name} cannot be differentiated: it computes "
            "with NumPy on the values (docs/autodiff.md lists the functions that "
            "can be differentiated). Compute it outside the differentiated "
            "function, or write it with functions that can be differentiated."
        ) from err


class NotDifferentiableError(TypeError):
    """A value being differentiated was converted to a NumPy array, which
    would drop its derivative."""


def _evaluate(
    fn: Callable[..., Any],
    name: str,
    rule: abstract.Rule,
    args: Any,
    kwargs: Any,
    leaves: list[Any],
    treedef: tree.TreeDef,
    abstract_only: bool,
) -> Any:
    """``fn``'s result on the tracers' abstract values, as placeholders: by
    its rule, or by running it on full-size placeholders (the rule
    :func:`~typelattice._tracing.abstract.full_size`, or a rule that cannot
    answer).

    A call the rule finds invalid is run on full-size placeholders too, for
    the exact error, except in an abstract-only trace (eval_shape) when the
    operands are too big: there the rule's error is raised."""
    error: Exception | None = None
    if rule is not abstract.full_size:
        try:
            return rule(name, fn, args, kwargs)
        except abstract.Fallback as fallback:
            error = fallback.error
    if error is not None and abstract_only:
        distinct = {t._var: t for t in leaves if isinstance(t, Tracer)}.values()
        if sum(math.prod(t._shape) for t in distinct) > abstract.RERUN_LIMIT:
            # Too big to run for real: the stand-ins' error, said so.
            shown = ", ".join(repr(t) for t in distinct)
            error.add_note(
                f"(typelattice.numpy.{name} was evaluated on stand-ins of small "
                f"sizes for {shown}: sizes in this message are the stand-ins')"
            )
            raise error

    full_args, full_kwargs = treedef.unflatten(
        [dummy(x._key, x._shape) if isinstance(x, Tracer) else x for x in leaves]
    )
    return abstract.run_placeholders(fn, full_args, full_kwargs)


# -- replaying --------------------------------------------------------------------


class Program:
    """A trace compiled to one Python function of the input values.

    ``run(*values)`` returns the values of ``outs``, in order.
    """

    def __init__(self, trace: Trace, ins: Sequence[int], outs: Sequence[int]) -> None:
        eqns = _live(trace.eqns, outs)
        self.trace = trace
        self.eqns = eqns
        self.ins = list(ins)
        self.outs = list(outs)
        self.source, scope = _generate(eqns, self.ins, self.outs, trace.avals)
        code = compile(self.source, f"<typelattice.jit {trace.name}>", "exec")
        exec(code, scope)
        self.run: Callable[..., tuple[Any, ...]] = scope["program"]
        #: The bytes of the arrays it holds as constants.
        self.constant_bytes = sum(
            v.nbytes for v in scope.values() if isinstance(v, np.ndarray)
        )
        #: About the bytes its code and globals hold (see :func:`code_bytes`).
        self.code_bytes = code_bytes(self.source)

    def __repr__(self) -> str:
        return self.pretty()

    def pretty(self) -> str:
        """The recorded operations, one a line, with their dtypes."""
        avals = self.trace.avals

        def var(v: int) -> str:
            return f"v{v}:{describe(*avals[v])}"

        lines = [f"program({', '.join(var(v) for v in self.ins)}):"]
        lines += [f"  {eqn.pretty(var)}" for eqn in self.eqns]
        lines.append(f"  return ({', '.join(f'v{v}' for v in self.outs)})")
        return "\n".join(lines)


def code_bytes(source: str) -> int:
    """About the bytes that the function compiled from ``source`` holds:
    its code object (bytecode, names, line and exception tables), function
    and globals. Measured with tracemalloc on CPython 3.11 over programs of
    one to thousands of lines: 5 to 7.5 bytes per character of source, plus
    a few KiB for a small one; this says more."""
    return 4096 + 8 * len(source)


def _live(eqns: Sequence[Equation], outs: Sequence[int]) -> list[Equation]:
    """The equations the outputs depend on, in order (dead code dropped)."""
    needed = set(outs)
    kept: list[Equation] = []
    for eqn in reversed(eqns):
        if needed.intersection(eqn.outputs()):
            kept.append(eqn)
            needed.update(eqn.inputs())
    kept.reverse()
    return kept


def _shared(eqns: Sequence[Equation], outs: Sequence[int]) -> list[Equation]:
    """``eqns`` with each computation that is repeated (the same primitive
    on the same operands, as the optimiser's bias corrections of every
    parameter, or a JVP rule's second ``exp``) computed once: the later
    ones' readers read the first one's outputs. A repeated equation whose
    output is returned is kept (each output its own array)."""
    seen: dict[Hashable, Sequence[int]] = {}
    names: dict[int, int] = {}
    aliased: set[int] = set()
    returned = set(outs)
    kept: list[Equation] = []
    for eqn in eqns:
        if names:
            read = [v for v in eqn.inputs() if v in names]
            if read:
                renamed = eqn.renamed(names)
                if renamed is None:  # (it reads the values by their names)
                    for v in read:
                        if v not in aliased:
                            aliased.add(v)
                            kept.append(_Alias(v, names[v]))
                else:
                    eqn = renamed
        key = eqn.key()
        if key is not None:
            first = seen.get(key)
            if first is None:
                seen[key] = eqn.outputs()
            elif not returned.intersection(eqn.outputs()):
                names.update(zip(eqn.outputs(), first, strict=True))
                continue
        kept.append(eqn)
    return kept


def _generate(
    eqns: Sequence[Equation],
    ins: Sequence[int],
    outs: Sequence[int],
    avals: Sequence[tuple[_core.Aval, tuple[int, ...]]],
) -> tuple[str, dict[str, Any]]:
    """Python source of ``program(*ins) -> outs``, and its globals."""
    eqns = _shared(eqns, outs)
    src = Source(avals)
    # Each intermediate value is dropped after the last equation that reads
    # it, as eager code drops its temporaries: a program holding every value
    # to the end needs memory for all of them at once, and on large arrays
    # the fresh allocations made it several times slower than eager calls.
    last: dict[int, int] = {}
    for i, eqn in enumerate(eqns):
        for v in eqn.outputs():
            last[v] = i
        for v in eqn.inputs():
            last[v] = i
    kept = set(outs).union(ins)
    drops: dict[int, list[int]] = {}
    for v, i in last.items():
        if v not in kept:
            drops.setdefault(i, []).append(v)
    body: list[str] = []
    for i, eqn in enumerate(eqns):
        dying = drops.get(i, ())
        body.append(eqn.source_reusing(src, dying) if dying else eqn.source(src))
        if i in drops:
            body.append("del " + ", ".join(f"v{v}" for v in sorted(drops[i])))
    params = ", ".join(f"v{v}" for v in ins)
    results = "".join(f"v{v}, " for v in outs)
    lines = [f"def program({params}):"]
    if body:
        lines += ["    token = _set(_ignore)", "    try:"]
        lines += [f"        {line}" for line in body]
        lines += ["    finally:", "        _reset(token)"]
    lines.append(f"    return ({results})")
    return "\n".join(lines) + "\n", src.scope
