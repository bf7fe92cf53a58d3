"""Closed sub-programs: the functions that control flow primitives hold.

A control flow primitive (``cond``, ``while``, ``scan``) takes functions as
parameters: its branches, its loop body. Each is traced once, on abstract
values, into a :class:`ClosedProgram`: the equations recorded (the
:class:`~.primitive.PrimitiveEquation` s that ``jit`` records), the
abstract values in and out, and a :class:`~.trace.Program` compiled from
them, which the primitive's implementation calls once per branch taken or
per step of its loop. A closed program is compared by identity, so that it
can be a primitive's parameter (plans and equations hash their parameters).

Values that the traced function reads from outside (arrays of an
enclosing ``jit``, values being differentiated) become extra inputs of the
program, placed first: :func:`trace_closed` returns them, and the
primitive takes them as operands, so that every transformation of the
enclosing computation sees them (JAX's "consts" of a closed jaxpr).

A closed program can be run again under another transformation:
:func:`eval_closed` binds its primitives one by one on any operands (the
tracers of a new trace make a new program of it), and :func:`jvp_closed`
applies the primitives' JVP rules to values and tangents (the JVP rules of
the control flow primitives trace it into the program of their derivative).
"""

# Package-internal: reads the tracers' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from typelattice import _core
from typelattice._array import ArrayImpl, BackendArray, from_python_or_numpy, wrap
from typelattice._tracing import ad as _ad
from typelattice._tracing import tracer as _tr
from typelattice._tracing import tree as _tree
from typelattice._tracing.primitive import (
    Filled,
    PrimitiveEquation,
    ShapedArray,
    Zero,
    aval_of,
    full,
)
from typelattice._tracing.trace import Equation, Program, Source, body_lines, shown
from typelattice._tracing.tree import PyTreeDef

__all__ = [
    "ClosedProgram",
    "SubTrace",
    "eval_closed",
    "jvp_closed",
    "padded",
    "trace_closed",
]


class SubTrace(_tr.RecordingTrace):
    """The trace of a function that a primitive holds: jit's recording, above
    every trace running when it starts (so that it records what its
    function does to values of those traces), where such values (tracers of
    other traces) become inputs of its own."""

    __slots__ = ("captured", "const_weak", "outer")

    encloses = True

    def __init__(self, name: str, level: int) -> None:
        super().__init__(name, _tr.current_trace(), False)
        self.level = level
        #: The values of enclosing traces read, and their variables here.
        self.outer: list[Any] = []
        self.captured: dict[int, _tr.JitTracer] = {}
        #: Per equation (by identity), the weak flags of its constant
        #: operands (a program keeps only their NumPy values).
        self.const_weak: dict[int, tuple[bool, ...]] = {}

    def capture(self, x: Any) -> Any:
        """``x`` as a value of this trace: a tracer of another trace becomes
        an input variable (the same one each time it is read)."""
        if isinstance(x, _tr.JitTracer) and x._trace is self:
            return x
        if not isinstance(x, _tr.Tracer):
            return x
        inner = self.captured.get(id(x))
        if inner is None:
            aval = aval_of(x)
            inner = self.new_tracer(_core.aval(aval.dtype, aval.weak_type), aval.shape)
            self.captured[id(x)] = inner
            self.outer.append(x)
        return inner

    def process_primitive(
        self, prim: Any, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        args = [self.capture(x) for x in args]
        out = prim.record(self, args, params)
        eqn = self.eqns[-1]
        weak = tuple(x._key[1] for x in args if not isinstance(x, _tr.JitTracer))
        if any(weak):
            self.const_weak[id(eqn)] = weak
        return out


class ClosedProgram:
    """A function traced into a program of its own: ``in_avals`` in,
    ``out_avals`` out, ``run(*values)`` on NumPy values (the enclosing
    trace's values it read first, as :func:`trace_closed` returns them).

    Compared and hashed by identity.

    >>> import numpy as np
    >>> from typelattice import lax
    >>> f32 = ShapedArray((), np.dtype('float32'))
    >>> closed, outer, _ = trace_closed(lambda x: lax.mul(x, x), [f32], 'f')
    >>> print(closed.pretty())
    { lambda ; v0:float32[]. let
        v1:float32[] = lax.mul(v0, v0)
      in (v1) }
    >>> closed.run(np.float32(3.0))
    (array(9., dtype=float32),)
    """

    __slots__ = (
        "__weakref__",
        "const_weak",
        "eqns",
        "loops",
        "in_avals",
        "in_vars",
        "out_avals",
        "out_vars",
        "program",
        "run",
        "trace",
    )

    def __init__(
        self,
        trace: _tr.RecordingTrace,
        in_vars: Sequence[int],
        out_vars: Sequence[int],
        const_weak: dict[int, tuple[bool, ...]],
    ) -> None:
        self.trace = trace
        self.in_vars = tuple(in_vars)
        self.out_vars = tuple(out_vars)
        avals = trace.avals
        self.in_avals = tuple(ShapedArray(avals[v][1], *avals[v][0]) for v in in_vars)
        self.out_avals = tuple(ShapedArray(avals[v][1], *avals[v][0]) for v in out_vars)
        self.program = Program(trace, self.in_vars, self.out_vars)
        self.eqns: list[Any] = self.program.eqns
        self.const_weak = const_weak
        self.run: Callable[..., tuple[Any, ...]] = self.program.run
        self.loops: dict[tuple[int, int], Callable[..., Any]] = {}

    def __repr__(self) -> str:
        ins = ", ".join(_short(a) for a in self.in_avals)
        outs = ", ".join(_short(a) for a in self.out_avals)
        return f"{{ ({ins}) -> ({outs}): {len(self.eqns)} equations }}"

    def pretty(self) -> str:
        """The equations, one a line, between the inputs and the outputs."""
        avals = self.trace.avals

        def var(v: int) -> str:
            return f"v{v}:{_tr.describe(*avals[v])}"

        ins = ", ".join(var(v) for v in self.in_vars)
        lines = [f"{{ lambda ; {ins}. let"]
        lines += [f"    {eqn.pretty(var)}" for eqn in self.eqns]
        outs = ", ".join(f"v{v}" for v in self.out_vars)
        lines.append(f"  in ({outs}) }}")
        return "\n".join(lines)

    def scan_loop(self, num_consts: int, num_carry: int) -> Callable[..., Any]:
        """This program as the body of a loop, compiled once per split of
        its inputs: ``loop(consts, carry, xs, ys, steps)`` runs it for each
        index ``i`` of ``steps`` on ``consts``, the carry and ``x[i]`` for
        each ``x`` of ``xs``, writes its other results into ``y[i]`` for
        each ``y`` of ``ys``, and returns the last carry. The steps run in
        one generated function (no call per step), with floating point
        warnings off once around them, as a program runs.

        >>> import numpy as np
        >>> from typelattice import lax
        >>> f32 = ShapedArray((), np.dtype('float32'))
        >>> closed, _, _ = trace_closed(
        ...     lambda c, x: (lax.add(c, x), lax.mul(c, x)), [f32, f32], 'f')
        >>> ys = [np.zeros(3, np.float32)]
        >>> loop = closed.scan_loop(0, 1)
        >>> loop((), (np.float32(0),), (np.float32([1, 2, 3]),), ys, range(3))
        (array(6., dtype=float32),)
        >>> ys[0]
        array([0., 2., 9.], dtype=float32)
        """
        key = (num_consts, num_carry)
        loop = self.loops.get(key)
        if loop is not None:
            return loop
        ins, outs = self.in_vars, self.out_vars
        consts = ins[:num_consts]
        carry = ins[num_consts : num_consts + num_carry]
        xs = ins[num_consts + num_carry :]
        body, scope = body_lines(self.eqns, ins, outs, self.trace.avals)

        def names(vs: Sequence[Any]) -> str:
            return "".join(f"{v}, " for v in vs)

        lines = ["def loop(consts, carry, xs, ys, steps):"]
        n_ys = len(outs) - num_carry
        for what, vs in (
            ("consts", [f"v{v}" for v in consts]),
            ("carry", [f"v{v}" for v in carry]),
            ("xs", [f"_x{j}" for j in range(len(xs))]),
            ("ys", [f"_y{j}" for j in range(n_ys)]),
        ):
            if vs:
                lines.append(f"    {names(vs)}= {what}")
        lines += ["    token = _set(_ignore)", "    try:", "        for _i in steps:"]
        step = [f"v{v} = _x{j}[_i]" for j, v in enumerate(xs)]
        step += body
        # (the outputs stored before the carry is renamed: an output may be
        # an input's variable)
        step += [f"_y{j}[_i] = v{v}" for j, v in enumerate(outs[num_carry:])]
        if carry:
            new = [f"v{v}" for v in outs[:num_carry]]
            step.append(f"{names([f'v{v}' for v in carry])}= {names(new)}")
        lines += [f"            {line}" for line in step or ["pass"]]
        lines += ["    finally:", "        _reset(token)"]
        lines.append(f"    return ({names([f'v{v}' for v in carry])})")
        source = "\n".join(lines) + "\n"
        code = compile(source, f"<typelattice.scan {self.trace.name}>", "exec")
        exec(code, scope)
        made: Callable[..., Any] = scope["loop"]
        self.loops[key] = made
        return made

    def reordered(self, order: Sequence[int]) -> ClosedProgram:
        """The same program returning its outputs ``order[0]``,
        ``order[1]``..."""
        outs = [self.out_vars[i] for i in order]
        return ClosedProgram(self.trace, self.in_vars, outs, self.const_weak)


def padded(closed: ClosedProgram, spec: Sequence[int | ShapedArray]) -> ClosedProgram:
    """``closed`` taking other inputs: per entry of ``spec``, its input of
    that position, or (an abstract value) an input it does not read.

    >>> import numpy as np
    >>> from typelattice import lax
    >>> f32 = ShapedArray((), np.dtype('float32'))
    >>> closed, _, _ = trace_closed(lambda x: lax.neg(x), [f32], 'f')
    >>> wider = padded(closed, [ShapedArray((2,), np.dtype('int8')), 0])
    >>> wider.in_avals
    (ShapedArray(int8[2]), ShapedArray(float32[]))
    >>> wider.run(np.zeros(2, np.int8), np.float32(1))
    (array(-1., dtype=float32),)
    """
    trace = closed.trace
    ins: list[int] = []
    for entry in spec:
        if isinstance(entry, ShapedArray):
            key = _core.aval(entry.dtype, entry.weak_type)
            ins.append(trace.new_tracer(key, entry.shape)._var)
        else:
            ins.append(closed.in_vars[entry])
    return ClosedProgram(trace, ins, closed.out_vars, closed.const_weak)


def _short(aval: ShapedArray) -> str:
    return _tr.describe(_core.aval(aval.dtype, aval.weak_type), aval.shape)


def trace_closed(
    fun: Callable[..., Any], in_avals: Sequence[ShapedArray], where: str
) -> tuple[ClosedProgram, list[Any], PyTreeDef]:
    """Trace ``fun(*tracers)``, one tracer per abstract value, into a closed
    program.

    Args:
      fun: a function of the tracers, returning a pytree of arrays (or
        Python scalars).
      in_avals: the abstract values of its arguments.
      where: the name of the trace, in messages.

    Returns:
      The program (whose inputs are the values of enclosing traces that
      ``fun`` read, then its arguments), those values, and the structure of
      ``fun``'s result.

    >>> import numpy as np
    >>> import typelattice.numpy as tnp
    >>> f32 = ShapedArray((), np.dtype('float32'))
    >>> closed, outer, tree = trace_closed(lambda x: (x + 1, x), [f32], 'f')
    >>> closed.out_avals, outer, tree
    ((ShapedArray(float32[]), ShapedArray(float32[])), [], PyTreeDef((*, *)))
    """
    # Above every differentiation running now; a differentiation that
    # starts inside ``fun`` is above it in turn.
    level = max([_ad.next_level(), *(t.level + 1 for t in _tr.ACTIVE)])
    trace = SubTrace(where, level)
    token = _tr.enter(trace)
    depth = _ad.push_levels(level + 1)
    try:
        tracers = [
            trace.new_tracer(_core.aval(a.dtype, a.weak_type), a.shape)
            for a in in_avals
        ]
        out = fun(*tracers)
        leaves, out_tree = _tree.flatten(out)
        outs: list[int] = []
        for leaf in leaves:
            if not isinstance(leaf, _tr.Tracer | ArrayImpl | BackendArray):
                converted = from_python_or_numpy(leaf, "asarray")
                if converted is None:
                    raise TypeError(
                        f"{where}: the function returned {leaf!r:.60} of type "
                        f"{type(leaf).__name__}; results must be arrays or "
                        "scalars (in tuples, lists and dicts)"
                    )
                leaf = converted
            if type(leaf) is not _tr.JitTracer or leaf._trace is not trace:
                leaf = _as_variable(trace, trace.capture(leaf))
            outs.append(leaf._var)
    finally:
        _ad.pop_levels(depth)
        _tr.stop(trace, token)
    ins = [t._var for t in trace.captured.values()] + [t._var for t in tracers]
    closed = ClosedProgram(trace, ins, outs, trace.const_weak)
    return closed, trace.outer, out_tree


def _as_variable(trace: SubTrace, x: Any) -> _tr.JitTracer:
    """A constant result as a variable of ``trace`` (a program returns
    variables only)."""
    if isinstance(x, _tr.JitTracer):
        return x
    tracer = trace.new_tracer(x._key, x._value.shape)
    trace.record(Held(x._value, tracer._var))
    return tracer


class Held(Equation):
    """A constant array that the program returns as it is."""

    __slots__ = ("out", "value")

    def __init__(self, value: Any, out: int) -> None:
        self.value = value
        self.out = out

    def inputs(self) -> Sequence[int]:
        return ()

    def outputs(self) -> Sequence[int]:
        return (self.out,)

    def pretty(self, var: Callable[[int], str]) -> str:
        return f"{var(self.out)} = {shown(self.value)}"

    def source(self, src: Source) -> str:
        return f"v{self.out} = {src.constant(self.value)}"


def _constant(closed: ClosedProgram, eqn: Any) -> Any:
    """The array a :class:`Filled` or :class:`Held` equation makes."""
    key, shape = closed.trace.avals[int(eqn.out)]
    if type(eqn) is Filled:
        return full(ShapedArray(shape, *key), eqn.value)
    return wrap(eqn.value, key)


def eval_closed(closed: ClosedProgram, *args: Any) -> list[Any]:
    """Run ``closed`` by binding its primitives on ``args`` (arrays or any
    transformation's tracers): the same computation, seen by the
    transformations running.

    >>> import numpy as np
    >>> import typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> f32 = ShapedArray((), np.dtype('float32'))
    >>> closed, _, _ = trace_closed(lambda x: lax.mul(x, 3.0), [f32], 'f')
    >>> eval_closed(closed, tnp.float32(2))
    [Array(6., dtype=float32)]
    """
    env: dict[int, Any] = dict(zip(closed.in_vars, args, strict=True))
    for eqn in closed.eqns:
        if type(eqn) is not PrimitiveEquation:
            env[eqn.out] = _constant(closed, eqn)
            continue
        operands = _operands(closed, eqn, env)
        out = eqn.prim.bind(*operands, **eqn.params)
        if eqn.prim.multiple_results:
            env.update(zip(eqn.outs, out, strict=True))
        else:
            env[eqn.outs[0]] = out
    return [env[v] for v in closed.out_vars]


def _operands(
    closed: ClosedProgram, eqn: PrimitiveEquation, env: dict[int, Any]
) -> list[Any]:
    weak = iter(closed.const_weak.get(id(eqn), ()))
    operands: list[Any] = []
    for v, c in eqn.ins:
        if v is not None:
            operands.append(env[v])
        else:
            w = next(weak, False)
            operands.append(
                c if isinstance(c, _tr.Tracer) else wrap(c, _core.aval(c.dtype, w))
            )
    return operands


def jvp_closed(
    closed: ClosedProgram, primals: Sequence[Any], tangents: Sequence[Any]
) -> tuple[list[Any], list[Any]]:
    """The values of ``closed`` on ``primals`` and their tangents, given the
    inputs' ``tangents`` (arrays, tracers, or :class:`Zero`): each
    equation's primitive's JVP rule applied in turn (a primitive whose
    operands' tangents are all zero is bound on the values only).

    >>> import numpy as np
    >>> import typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> f32 = ShapedArray((), np.dtype('float32'))
    >>> closed, _, _ = trace_closed(lambda x: lax.mul(x, x), [f32], 'f')
    >>> jvp_closed(closed, [tnp.float32(3)], [tnp.float32(1)])
    ([Array(9., dtype=float32)], [Array(6., dtype=float32)])
    """
    env: dict[int, tuple[Any, Any]] = {
        v: (p, t) for v, p, t in zip(closed.in_vars, primals, tangents, strict=True)
    }
    for eqn in closed.eqns:
        if type(eqn) is not PrimitiveEquation:
            value = _constant(closed, eqn)
            env[eqn.out] = (value, Zero.of(value))
            continue
        ins: list[Any] = []
        ts: list[Any] = []
        weak = iter(closed.const_weak.get(id(eqn), ()))
        for v, c in eqn.ins:
            if v is not None:
                p, t = env[v]
            else:
                w = next(weak, False)
                p = c if isinstance(c, _tr.Tracer) else wrap(c, _core.aval(c.dtype, w))
                t = Zero.of(p)
            ins.append(p)
            ts.append(t)
        prim = eqn.prim
        if all(type(t) is Zero for t in ts):
            out = prim.bind(*ins, **eqn.params)
            outs = list(out) if prim.multiple_results else [out]
            touts: list[Any] = [Zero.of(o) for o in outs]
        else:
            if prim.jvp is None:
                raise NotImplementedError(
                    f"Differentiation rule for '{prim.name}' not implemented"
                )
            out, tout = prim.jvp(ins, ts, **eqn.params)
            outs = list(out) if prim.multiple_results else [out]
            touts = list(tout) if prim.multiple_results else [tout]
        for v, o, t in zip(eqn.outs, outs, touts, strict=True):
            env[v] = (o, t)
    results = [env[v] for v in closed.out_vars]
    return [p for p, _ in results], [t for _, t in results]
