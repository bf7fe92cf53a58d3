"""Replaying recorded primitives: the programs of ``jit``.

A trace records :class:`Equation` objects, each reading and writing
variables (the numbers of tracers): a primitive bound to tracers
(:class:`~typelattice._tracing.primitive.PrimitiveEquation`; every function
of the namespace reaches the trace this way), or a constant made by the
program (:class:`~typelattice._tracing.primitive.Filled`).

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

import itertools
import math
import sys
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from typelattice import _core
from typelattice._tracing.tracer import (
    RecordingTrace,
    describe,
)

__all__ = [
    "Barrier",
    "NotDifferentiableError",
    "Equation",
    "Program",
    "body_lines",
    "code_bytes",
]


# -- equations ------------------------------------------------------------------


def _sole_reference_count() -> int:
    """What ``sys.getrefcount`` gives for an array held by one local name
    only, as a program's code asks it (interpreters count the argument or
    borrow it)."""
    held = np.empty(1)
    return sys.getrefcount(held)


_SOLE: Final = _sole_reference_count()


#: The backend and device a program computes on, when not NumPy's: its
#: values are that library's arrays (see docs/backends.md).
Native = tuple[Any, str]

#: A rewrite of a program's equations, applied after its repeated
#: computations are shared and before its lines are written:
#: ``rewrite(eqns, outs, avals)`` returns equations computing the same
#: values of ``outs`` (jit's conversions fused into the kernels of the
#: backend of another library, for one).
Rewrite = Callable[
    [list["Equation"], Sequence[int], Sequence[tuple[_core.Aval, tuple[int, ...]]]],
    list["Equation"],
]


def _same(value: Any) -> Any:
    return value


class Source:
    """A program being written: the values its lines refer to by name.

    ``native``: the backend and device of a program on another library's
    arrays (None: NumPy's). Its lines call that backend's implementations;
    its NumPy constants are converted once, when it is written."""

    def __init__(
        self,
        avals: Sequence[tuple[_core.Aval, tuple[int, ...]]],
        native: Native | None = None,
    ) -> None:
        self.avals = avals
        self.native = native
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
        if native is not None:
            backend, device = native
            from_numpy = backend.from_numpy

            def full(shape: tuple[int, ...], value: Any) -> Any:
                return from_numpy(np.full(shape, value), device)

            self.scope.update(_asarray=_same, _contiguous=_same, _full=full)
        self._counter = itertools.count()

    def constant(self, value: Any) -> str:
        """How the program's source names ``value`` (a literal, or a name
        bound in its globals; a NumPy value on a program's own backend)."""
        if type(value) in (int, bool) or value is None:
            return repr(value)
        if self.native is not None and isinstance(value, np.ndarray | np.generic):
            backend, device = self.native
            value = backend.from_numpy(np.asarray(value), device)  # pyright: ignore[reportUnknownArgumentType]
        return self.held(value)

    def held(self, value: Any) -> str:
        """A name bound to ``value`` as it is, in the program's globals."""
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


class Barrier(Equation):
    """``v<new> = v<old>``: a value under a second name that a program
    never merges with the first (it has no key), so that the equations
    reading it are not merged with those reading the first name (JAX's
    ``optimization_barrier``): the backward pass's second run of a
    checkpointed function stays a second run."""

    __slots__ = ("new", "old")

    def __init__(self, new: int, old: int) -> None:
        self.new = new
        self.old = old

    def inputs(self) -> Sequence[int]:
        return (self.old,)

    def outputs(self) -> Sequence[int]:
        return (self.new,)

    def pretty(self, var: Callable[[int], str]) -> str:
        return f"{var(self.new)} = optimization_barrier({var(self.old)})"

    def source(self, src: Source) -> str:
        return f"v{self.new} = v{self.old}"


def shown(value: Any) -> str:
    """A recorded constant as a program shows it."""
    if value.__class__ is not np.ndarray:
        return repr(value)
    array: np.ndarray[Any, Any] = value
    if array.ndim == 0:
        return f"{array.item()!r}:{array.dtype}"
    return f"const:{array.dtype}{list(array.shape)}"


class NotDifferentiableError(TypeError):
    """A value being differentiated was converted to a NumPy array, which
    would drop its derivative."""


# -- replaying --------------------------------------------------------------------


class Program:
    """A trace compiled to one Python function of the input values.

    ``run(*values)`` returns the values of ``outs``, in order.
    """

    def __init__(
        self,
        trace: RecordingTrace,
        ins: Sequence[int],
        outs: Sequence[int],
        native: Native | None = None,
        rewrite: Rewrite | None = None,
    ) -> None:
        eqns = _live(trace.eqns, outs)
        self.trace = trace
        self.eqns = eqns
        self.ins = list(ins)
        self.outs = list(outs)
        self.native = native
        self.source, scope = _generate(
            eqns, self.ins, self.outs, trace.avals, native, rewrite
        )
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

    def live_peak(self) -> int:
        """The most bytes of intermediate values the program holds at once
        (its inputs excluded), each dropped after its last reader as the
        generated code drops it."""
        eqns = _shared(self.eqns, self.outs)
        avals = self.trace.avals

        def nbytes(v: int) -> int:
            key, shape = avals[v]
            return math.prod(shape) * np.dtype(key[0]).itemsize

        last = _last_uses(eqns)
        kept = set(self.outs).union(self.ins)
        live = peak = 0
        for i, eqn in enumerate(eqns):
            live += sum(nbytes(v) for v in eqn.outputs())
            peak = max(peak, live)
            for v in set(eqn.inputs()).union(eqn.outputs()):
                if last[v] == i and v not in kept:
                    live -= nbytes(v)
        return peak

    def pretty(self) -> str:
        """The recorded operations, one a line, with their dtypes."""
        avals = self.trace.avals

        def var(v: int) -> str:
            return f"v{v}:{describe(*avals[v])}"

        lines = [f"program({', '.join(var(v) for v in self.ins)}):"]
        lines += [f"  {eqn.pretty(var)}" for eqn in self.eqns]
        lines.append(f"  return ({', '.join(f'v{v}' for v in self.outs)})")
        return "\n".join(lines)


def _last_uses(eqns: Sequence[Equation]) -> dict[int, int]:
    """Per variable, the index of the last equation that writes or reads
    it: where the generated code drops it."""
    last: dict[int, int] = {}
    for i, eqn in enumerate(eqns):
        for v in eqn.outputs():
            last[v] = i
        for v in eqn.inputs():
            last[v] = i
    return last


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
    native: Native | None = None,
    rewrite: Rewrite | None = None,
) -> tuple[str, dict[str, Any]]:
    """Python source of ``program(*ins) -> outs``, and its globals."""
    body, scope = body_lines(eqns, ins, outs, avals, native, rewrite)
    params = ", ".join(f"v{v}" for v in ins)
    results = "".join(f"v{v}, " for v in outs)
    lines = [f"def program({params}):"]
    if body:
        lines += ["    token = _set(_ignore)", "    try:"]
        lines += [f"        {line}" for line in body]
        lines += ["    finally:", "        _reset(token)"]
    lines.append(f"    return ({results})")
    return "\n".join(lines) + "\n", scope


def body_lines(
    eqns: Sequence[Equation],
    ins: Sequence[int],
    outs: Sequence[int],
    avals: Sequence[tuple[_core.Aval, tuple[int, ...]]],
    native: Native | None = None,
    rewrite: Rewrite | None = None,
) -> tuple[list[str], dict[str, Any]]:
    """The statements computing the variables ``outs`` from ``ins`` (named
    ``v<n>``), to run with floating point warnings off, and their globals;
    they never rebind nor delete ``ins`` and ``outs``. ``rewrite``, when
    given, rewrites the equations once their repeated computations are
    shared (so that it sees each value's readers as the code will)."""
    eqns = _shared(eqns, outs)
    if rewrite is not None:
        eqns = rewrite(eqns, outs, avals)
    src = Source(avals, native)
    # Each intermediate value is dropped after the last equation that reads
    # it, as eager code drops its temporaries: a program holding every value
    # to the end needs memory for all of them at once, and on large arrays
    # the fresh allocations made it several times slower than eager calls.
    last = _last_uses(eqns)
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
    return body, src.scope
