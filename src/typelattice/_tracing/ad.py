"""Automatic differentiation: ``jvp``, ``vjp``, ``grad``, ``value_and_grad``.

Both modes run the function on tracers of a :class:`JVPTrace`: each
:class:`JVPTracer` carries a primal value and its tangent. Every primitive
applied to them runs its JVP rule (registered where the primitive is
defined), which computes the primal result and its tangent with primitives
again. Namespace functions given these tracers run their lowering (the
same function written with primitives, :func:`~.trace.lowering`).

- :func:`jvp` (forward mode) gives tangents as arrays.
- :func:`vjp` (reverse mode) gives the input tangents as tracers of a
  :class:`LinearTrace`, which records every primitive applied to them: the
  JVP rules apply only linear primitives to tangents, so the record is the
  linear map ``t -> J t``, whose transpose runs backwards through the
  primitives' transpose rules (:func:`backward_pass`). The record holds the
  values the linear map needs (JAX's residuals); nothing else is kept.

Traces are numbered as they start (:attr:`JVPTrace.level`); a primitive is
processed by the trace of the highest level among its operands' tracers,
the others being constants to it, so transformations nest: second
derivatives differentiate the rules of the first. Tracers of jit and
eval_shape sit below them all, so ``jit(grad(f))`` records the primitives
of the forward and backward passes in one program.

Dtypes follow JAX: a tangent or cotangent has its primal's dtype and weak
flag; bool and integer values have symbolic zero tangents of the dtype
:data:`~.primitive.float0`; ``grad`` of a function of an integer argument
raises unless ``allow_int=True``.
"""

# Package-internal: reads the arrays' and tracers' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import contextvars
import functools
import operator
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any, Final, NoReturn, cast

import numpy as np

from typelattice import _config, _core, _dtypes
from typelattice._array import ArrayImpl, BackendArray, placed, wrap
from typelattice._basearray import Array
from typelattice._tracing import tracer as _tracer
from typelattice._tracing import tree
from typelattice._tracing.jit import argument_value
from typelattice._tracing.primitive import (
    Primitive,
    PrimitiveEquation,
    ShapedArray,
    UndefinedPrimal,
    Zero,
    add_tangents,
    aval_of,
    float0,
    full,
    zeros,
)
from typelattice._tracing.trace import NotDifferentiableError, Program, code_bytes
from typelattice._tracing.tracer import (
    ACTIVE,
    JitTracer,
    Trace,
    Tracer,
    UnexpectedTracerError,
)

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "LinearTrace",
    "LinearTracer",
    "RecordedCall",
    "grad",
    "jvp",
    "linearize",
    "stop_gradient",
    "value_and_grad",
    "vjp",
]

# The number of differentiation traces running in this context: the level
# of the next one.
_depth: contextvars.ContextVar[int] = contextvars.ContextVar(
    "typelattice_ad_depth", default=0
)


def next_level() -> int:
    """The level of the next differentiation trace to start here."""
    return _depth.get()


def push_levels(level: int) -> contextvars.Token[int]:
    """Number the differentiation traces that start from now on from
    ``level`` (those of a function traced inside a primitive, above the
    trace recording it); :func:`pop_levels` undoes it."""
    return _depth.set(max(level, _depth.get()))


def pop_levels(token: contextvars.Token[int]) -> None:
    """Undo :func:`push_levels`."""
    _depth.reset(token)


class _Level:
    """Push ``n`` levels for the duration of a ``with`` block."""

    def __init__(self, traces: Sequence[Any]) -> None:
        self.traces = traces

    def __enter__(self) -> None:
        self.token = _depth.set(_depth.get() + len(self.traces))
        ACTIVE.extend(self.traces)

    def __exit__(self, *exc: object) -> None:
        for t in self.traces:
            t.alive = False
            ACTIVE.remove(t)
        _depth.reset(self.token)


def _dead(trace: Any) -> NoReturn:
    raise UnexpectedTracerError(
        f"a value traced by {trace.name} was used after it returned: a "
        "differentiated function must return its results rather than store "
        "them (in a global, an attribute or a list) for later use"
    )


# -- forward mode ---------------------------------------------------------------


class JVPTrace(Trace):
    """One differentiation in progress: its tracers carry tangents (in
    reverse mode, tracers of its linear ``record``)."""

    __slots__ = ("record",)

    differentiates = True

    def __init__(self, name: str, record: LinearTrace | None = None) -> None:
        super().__init__(name, _depth.get())
        self.record = record

    def process_lowering(
        self,
        key: Hashable,
        run: Callable[[list[Any]], Any],
        leaves: list[Any],
        structure: Hashable,
        evaluate: Callable[[list[Any]], Any],
    ) -> Any:
        """A namespace function on ``leaves``: its value is the function's
        own, ``evaluate`` on the primal values (as it is computed without
        differentiation: the same checks, errors and bits); its tangents
        are those of its lowering, ``run(leaves)`` (in reverse mode from its
        remembered linearization when the call has been seen: see
        :class:`_Linearized`)."""
        if not self.alive:
            _dead(self)
        record = self.record
        # The primal values, and the call's signature as it goes (None when
        # it cannot be remembered: forward mode, or a leaf that is no array
        # of this differentiation nor a static value).
        primals: list[Any] = []
        sig: list[Any] | None = None
        if record is not None and REMEMBER_AFTER is not None:
            sig = [key, structure, _config.current()]
        for leaf in leaves:
            t = type(cast(object, leaf))
            if t is JVPTracer and leaf._trace is self:
                p = leaf.primal
                primals.append(p)
                if sig is not None:
                    tangent = leaf.tangent
                    if (
                        type(p) is not ArrayImpl
                        or type(tangent) is not LinearTracer
                        or tangent._trace is not record
                    ):
                        sig = None
                    else:
                        sig += (True, p._key, p._value.shape)
                continue
            primals.append(leaf)
            if sig is None:
                continue
            if t is ArrayImpl:
                sig += (False, leaf._key, leaf._value.shape)
            elif t is float:
                sig += (t, leaf.hex())  # (-0.0 and 0.0 apart)
            elif t is complex:
                sig += (t, leaf.real.hex(), leaf.imag.hex())
            elif t in _STATIC_LEAVES or isinstance(leaf, np.dtype):
                sig += (t, leaf)
            elif t is slice and all(
                type(i) in _STATIC_LEAVES for i in (leaf.start, leaf.stop, leaf.step)
            ):
                sig += (t, leaf.start, leaf.stop, leaf.step)
            else:  # a tracer of another trace, a mutable or unknown value
                sig = None
        value = evaluate(primals)
        if sig is None or record is None:
            return _with_value(self, run(leaves), value, key)
        sig_key = tuple(sig)
        found = _REMEMBERED.get(sig_key)
        if type(found) is _Linearized:
            return found.apply(self, record, leaves, value)
        if not _sighted(_REMEMBERED, sig_key, found):
            return _with_value(self, run(leaves), value, key)
        made = _Linearized.make(self, record, run, leaves, sig_key)
        _keep(_REMEMBERED, sig_key, made, 0 if made is None else made.held)
        if made is None:
            return _with_value(self, run(leaves), value, key)
        # Checked once: every call of this signature gives the same avals.
        _check_avals(made, value, key)
        return made.apply(self, record, leaves, value)

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        if not self.alive:
            _dead(self)
        primals: list[Any] = []
        tangents: list[Any] = []
        nonzero = False
        for x in args:
            if isinstance(x, JVPTracer) and x._trace is self:
                primals.append(x.primal)
                tangents.append(x.tangent)
                nonzero = nonzero or type(x.tangent) is not Zero
            else:
                primals.append(x)
                tangents.append(Zero.of(x))
        if not nonzero:  # constants to this trace: no tangent to carry
            return prim.bind(*primals, **params)
        if prim.jvp is None:
            raise NotImplementedError(
                f"Differentiation rule for '{prim.name}' not implemented"
            )
        out, tangent = prim.jvp(primals, tangents, **params)
        if prim.multiple_results:
            return tuple(self.lift(o, t) for o, t in zip(out, tangent, strict=True))
        return self.lift(out, tangent)

    def lift(self, primal: Any, tangent: Any) -> Any:
        """A tracer of this trace (or the primal itself, when its tangent is
        a symbolic zero: nothing to carry)."""
        if type(tangent) is Zero:
            return primal
        return JVPTracer(self, primal, tangent)


def _aval_key(x: Any) -> tuple[Any, ...]:
    return (tuple(x.shape), np.dtype(x.dtype), bool(x.weak_type))


def _check_avals(lin: _Linearized, value: Any, key: Hashable) -> None:
    """That the function's results ``value`` have the avals of its
    remembered lowering's (see :func:`_with_value`)."""
    want, structure = tree.flatten(value)
    got = [_aval_key(w) if isinstance(w, Array) else None for w in want]
    if structure != lin.out_tree or any(
        g is not None and g != w for g, w in zip(lin.lowered, got, strict=True)
    ):
        raise AssertionError(
            f"the lowering of {key!r} gives {lin.lowered}, the function {got}"
        )


def _with_value(trace: JVPTrace, lowered: Any, value: Any, key: Hashable) -> Any:
    """The lowering's results with the primal values replaced by ``value``,
    the function's own results (same structure, shapes, dtypes and weak
    flags: the lowerings are written to give them, and the tests check)."""
    t: type[object] = type(cast(object, lowered))
    if t is JVPTracer and type(value) is ArrayImpl and lowered._trace is trace:
        # One array (every elementwise function): written out.
        p = lowered.primal
        if type(p) is ArrayImpl and (
            p._key != value._key or p._value.shape != value._value.shape
        ):
            raise AssertionError(
                f"the lowering of {key!r} gives {_aval_key(p)}, the "
                f"function {_aval_key(value)}"
            )
        return JVPTracer(trace, value, lowered.tangent)
    if t is ArrayImpl and type(value) is ArrayImpl:
        return value
    out, structure = tree.flatten(lowered)
    want, want_structure = tree.flatten(value)
    if structure != want_structure:
        raise AssertionError(
            f"the lowering of {key!r} gives {structure}, the function {want_structure}"
        )
    merged: list[Any] = []
    for o, w in zip(out, want, strict=True):
        if type(o) is JVPTracer and o._trace is trace:
            if _aval_key(o.primal) != _aval_key(w):
                raise AssertionError(
                    f"the lowering of {key!r} gives {_aval_key(o.primal)}, the "
                    f"function {_aval_key(w)}"
                )
            merged.append(JVPTracer(trace, w, o.tangent))
        else:
            merged.append(w)
    return structure.unflatten(merged)


class JVPTracer(Tracer):
    """A value being differentiated: its primal value and its tangent.

    Functions see an array (``isinstance(x, typelattice.Array)`` holds) with
    its primal's shape, dtype and weak flag. Python control flow on its
    value works (``if x > 0``), as in JAX, outside jit.
    """

    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal: Any, tangent: Any) -> None:
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.primal.dtype  # type: ignore[no-any-return]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.primal.shape)

    @property
    def weak_type(self) -> bool:
        return self.primal.weak_type  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"JVPTracer<{_describe(aval_of(self))}>"

    __str__ = __repr__

    def __array__(
        self, dtype: Any = None, copy: bool | None = None
    ) -> np.ndarray[Any, Any]:
        raise NotDifferentiableError(
            f"{self!r} was converted to a NumPy array, which would drop its "
            "derivative: inside a differentiated function, compute with "
            "typelattice.numpy functions (or typelattice.lax)"
        )

    def __bool__(self) -> bool:
        return bool(self.primal)

    def __int__(self) -> int:
        return int(self.primal)

    def __float__(self) -> float:
        return float(self.primal)

    def __complex__(self) -> complex:
        return complex(self.primal)

    def __index__(self) -> int:
        return operator.index(self.primal)

    def item(self, *args: int) -> bool | int | float | complex:
        """The primal's element as a Python scalar (no derivative)."""
        return self.primal.item(*args)  # type: ignore[no-any-return]

    def tolist(self) -> Any:
        """The primal's elements as Python lists (no derivative)."""
        return self.primal.tolist()

    def __reduce__(self) -> NoReturn:
        raise TypeError(f"cannot pickle {self!r}: it is being differentiated")

    def __copy__(self) -> JVPTracer:
        return self

    def __deepcopy__(self, memo: Any) -> JVPTracer:
        return self


def _describe(aval: ShapedArray) -> str:
    return repr(aval)[12:-1]


# -- remembered linearizations -------------------------------------------------
#
# Reverse mode runs a namespace function's lowering primitive by primitive
# through the JVP rules: tens of microseconds of Python each, whatever the
# arrays' sizes. A call seen again with operands of the same abstract values
# and the same other arguments computes the same way, so its work is
# remembered: the primal computation as a program (compiled as jit compiles
# programs) and the linear equations it records, the values they need
# (residuals) being outputs of the program. Later calls run the program and
# append the equations. A lowering that reads its operands' values (Python
# control flow, a check of the values) cannot be remembered: it refuses the
# stand-ins, and its calls run as before.

#: The calls of one signature run directly before its linearization is
#: remembered (the first call of a signature is not slowed by recording);
#: None: nothing is remembered (tests compare both ways).
REMEMBER_AFTER: int | None = 1

# Per signature: the calls seen (an int), its linearization, or False when
# it cannot be remembered; dropped whole when full.
_REMEMBERED: dict[tuple[Any, ...], Any] = {}
_REMEMBERED_MAX: Final = 2048
# A computation that would keep arrays of more bytes than this as constants
# (zeros a rule made at the size of its operands, say) is not remembered:
# remembering must not hold memory that running directly frees.
_CONSTANTS_MAX: Final = 1 << 16
# Arguments other than arrays that are part of a signature as they are.
_STATIC_LEAVES: Final = frozenset({int, bool, str, type(None), type(Ellipsis), type})


# The bytes that all remembered computations hold: their constant arrays,
# their compiled programs (code, globals, per-equation structures) and
# their keys. Beyond _HELD_MAX, everything remembered is forgotten (to be
# remembered anew as calls come); one computation that would hold more is
# not remembered.
_held = 0
_HELD_MAX: Final = 1 << 25
# About the bytes of one remembered linear equation (its tuple, operands
# and parameters), and of one element of a key (a pointer, and an int).
_EQUATION_BYTES: Final = 256
_KEY_ITEM_BYTES: Final = 40
# A backward pass of more linear equations than this is not compiled as
# one program: compiling costs about 10 KB of memory and 0.1-0.2 ms per
# equation at once, its program would hold about 0.5 KB per equation, and
# it runs only about 10 us per equation faster than the blocks' own
# remembered transposes, which run instead.
_BACKWARD_MAX: Final = 4096


def _sighted(
    table: dict[tuple[Any, ...], Any], key: tuple[Any, ...], found: Any
) -> bool:
    """Count a sighting of a signature (``found``: its entry, the calls seen
    so far or False or None); whether to remember it now."""
    if found is False:
        return False
    seen = found or 0
    if seen >= REMEMBER_AFTER:  # type: ignore[operator]
        return True
    if len(table) >= _REMEMBERED_MAX:
        table.clear()
    if found is None:
        _hold(_key_bytes(key))
    table[key] = seen + 1
    return False


def _key_bytes(key: tuple[Any, ...]) -> int:
    """About the bytes a table's key holds."""
    return 64 + _KEY_ITEM_BYTES * len(key)


def _keep(
    table: dict[tuple[Any, ...], Any], key: tuple[Any, ...], made: Any, held: int
) -> None:
    """Remember ``made`` (a linearization or a program), which with its key
    holds ``held`` bytes, or that the signature cannot be remembered (None)."""
    if made is None or held > _HELD_MAX:
        table[key] = False
        return
    _hold(held)
    table[key] = made


def _hold(n: int) -> None:
    """Count ``n`` more bytes held, forgetting everything first if that
    would pass the limit."""
    global _held
    if _held + n > _HELD_MAX:
        _REMEMBERED.clear()
        _BACKWARDS.clear()
        _held = 0
    _held += n


class _Linearized:
    """A namespace call's linearization at one signature, run on values.

    ``run(*values)`` computes the residuals from the primal values of the
    array arguments (the leaves at ``dynamic``); the call's value is the
    function's own (:meth:`JVPTrace.process_lowering`), so the program
    computes nothing else.
    ``eqns`` are the linear equations, their variables numbered from the
    tangents of the arguments at ``tangent_of`` (then the call's own), their
    operands ``(0, var, aval)``, ``(1, residual, None)`` or
    ``(2, constant, None)``. ``results`` gives each output leaf's
    tangent, ``(tangent var, aval)``, or None (its value is the function's:
    the program computes no primal output).
    ``transposes`` remembers the programs of the transposed equations
    (:class:`_Transposed`), per cotangents given.
    """

    __slots__ = (
        "apply",
        "dynamic",
        "eqns",
        "held",
        "keys",
        "lowered",
        "n_internal",
        "out_tree",
        "residual_avals",
        "residuals",
        "results",
        "run",
        "tangent_of",
        "tangent_outs",
        "transposes",
    )

    def __init__(self) -> None:
        self.dynamic: list[int] = []
        self.tangent_of: list[int] = []
        self.keys: list[_core.Aval] = []
        self.residuals: list[int] = []
        self.residual_avals: list[tuple[_core.Aval, tuple[int, ...]]] = []
        self.eqns: list[tuple[Primitive, dict[str, Any], list[Any], list[int]]] = []
        self.results: list[tuple[int, ShapedArray] | None] = []
        self.tangent_outs: list[tuple[int, ShapedArray]] | None = []
        self.n_internal = 0
        self.held = 0
        self.out_tree: tree.PyTreeDef | None = None
        self.run: Callable[..., tuple[Any, ...]] = _no_program
        self.apply: Callable[[JVPTrace, LinearTrace, list[Any], Any], Any] = _no_program
        # The avals of the stand-ins' results (None for other leaves).
        self.lowered: list[tuple[Any, ...] | None] = []
        self.transposes: dict[Hashable, _Transposed | None] = {}

    @classmethod
    def make(
        cls,
        trace: JVPTrace,
        record: LinearTrace,
        run: Callable[[list[Any]], Any],
        leaves: list[Any],
        sig_key: tuple[Any, ...],
    ) -> _Linearized | None:
        """Run the lowering on stand-ins: a jit trace's tracers for the
        primal values, a fresh linear record for the tangents (None when it
        cannot be remembered); ``sig_key`` is its key, counted in what it
        holds."""
        self = cls()
        primal_trace, token = _tracer.start(f"{trace.name} (remembered)")
        primal_trace.stands_in = True
        inner = JVPTrace(trace.name)  # (forward mode: nothing nested is kept)
        lin = LinearTrace(trace.name)
        ins: list[int] = []
        try:
            with _Level((inner, lin)):
                inner.level, lin.level = trace.level, record.level
                stand_ins: list[Any] = []
                for i, leaf in enumerate(leaves):
                    t = type(cast(object, leaf))
                    if t is JVPTracer or t is ArrayImpl:
                        value = leaf.primal if t is JVPTracer else leaf
                        s = primal_trace.new_tracer(value._key, value._value.shape)
                        ins.append(s._var)
                        self.dynamic.append(i)
                        if t is JVPTracer:
                            self.tangent_of.append(i)
                            stand_ins.append(JVPTracer(inner, s, lin.new(aval_of(s))))
                        else:
                            stand_ins.append(s)
                    else:
                        stand_ins.append(leaf)
                out = run(stand_ins)
                out_leaves, self.out_tree = tree.flatten(out)
        except Exception:  # (run directly, it raises or computes as it does)
            return None
        finally:
            _tracer.stop(primal_trace, token)
        outs: list[int] = []
        at: dict[int, int] = {}

        def output(x: Any) -> int | None:
            """The program output for a stand-in (None: not one)."""
            if not isinstance(x, JitTracer) or x._trace is not primal_trace:
                return None
            pos = at.get(x._var)
            if pos is None:
                pos = at[x._var] = len(outs)
                outs.append(x._var)
            return pos

        tangent_outs: list[tuple[int, ShapedArray]] = []
        for leaf in out_leaves:
            if type(leaf) is JVPTracer and leaf._trace is inner:
                tangent = leaf.tangent
                if type(tangent) is not LinearTracer or tangent._trace is not lin:
                    return None
                self.results.append((tangent.ref, tangent.aval))
                tangent_outs.append((tangent.ref, tangent.aval))
            elif isinstance(leaf, Tracer) and leaf._trace.differentiates:
                return None
            else:
                self.results.append(None)
        # Outputs sharing a tangent are transposed equation by equation.
        distinct = len({v for v, _ in tangent_outs}) == len(tangent_outs)
        self.tangent_outs = tangent_outs if distinct else None
        residual_at: dict[int, int] = {}
        for eqn in lin.eqns:
            if any(isinstance(v, Array) for v in eqn.params.values()):
                return None
            ops: list[Any] = []
            for v, a in eqn.ins:
                if v is not None:
                    ops.append((0, v, a))
                elif type(a) is ArrayImpl:
                    ops.append((2, a, None))
                else:
                    pos = output(a)
                    if pos is None:
                        return None
                    if pos not in residual_at:
                        residual_at[pos] = len(self.residuals)
                        self.residuals.append(pos)
                    ops.append((1, residual_at[pos], None))
            self.eqns.append((eqn.prim, eqn.params, ops, eqn.outs))
        self.n_internal = lin.nvars - len(self.tangent_of)
        self.keys = [primal_trace.avals[outs[p]][0] for p in self.residuals]
        self.residual_avals = [primal_trace.avals[outs[p]] for p in self.residuals]
        program = Program(primal_trace, ins, [outs[p] for p in self.residuals])
        held = program.constant_bytes + _bytes_of(
            [a for _, _, ops, _ in self.eqns for k, a, _ in ops if k == 2]
        )
        if held > _CONSTANTS_MAX:
            return None
        self.run = program.run
        self.apply, source = self._compile()
        self.lowered = [
            _aval_key(o) if isinstance(o, Array) else None for o in out_leaves
        ]
        self.held = (
            held
            + program.code_bytes
            + code_bytes(source)
            + _EQUATION_BYTES * len(self.eqns)
            + _key_bytes(sig_key)
        )
        return self

    def _compile(
        self,
    ) -> tuple[Callable[[JVPTrace, LinearTrace, list[Any], Any], Any], str]:
        """``apply(trace, record, leaves, value)``: the call's result on
        ``leaves``, of value ``value`` (the function's), its equations added
        to ``record`` as one :class:`_Block`; written out for this
        linearization (it runs on every call); and its source."""
        scope: dict[str, Any] = {
            "run": self.run,
            "lin": self,
            "_wrap": wrap,
            "_Block": _Block,
            "_JVPTracer": JVPTracer,
            "_LinearTracer": LinearTracer,
            "out_tree": self.out_tree,
            "_flatten": tree.flatten,
        }
        lines = ["def apply(trace, record, leaves, value):"]
        values: list[str] = []
        for i in self.dynamic:
            lines.append(f"    l{i} = leaves[{i}]")
            traced = i in self.tangent_of
            values.append(f"l{i}.primal._value" if traced else f"l{i}._value")
        refs = [f"l{i}.tangent.ref" for i in self.tangent_of]
        n = len(refs)

        def var(v: int) -> str:
            return refs[v] if v < n else f"base + {v}"

        lines.append(f"    base = record.nvars - {n}")
        lines.append(f"    record.nvars = base + {n + self.n_internal}")
        if self.keys:
            lines.append(f"    o = run({''.join(v + ', ' for v in values)})")
        for k, key in enumerate(self.keys):
            scope[f"k{k}"] = key
            lines.append(f"    a{k} = _wrap(o[{k}], k{k})")
        if self.eqns:
            residuals = "".join(f"a{k}, " for k in range(len(self.residuals)))
            block = f"_Block(lin, [{', '.join(refs)}], base, [{residuals}])"
            lines.append(f"    record.eqns.append({block})")
        assert self.out_tree is not None
        if not self.out_tree.is_leaf:
            lines.append("    v = _flatten(value)[0]")
        results: list[str] = []
        for j, tangent in enumerate(self.results):
            primal = "value" if self.out_tree.is_leaf else f"v[{j}]"
            if tangent is None:
                results.append(primal)
            else:
                v, aval = tangent
                scope[f"t{j}"] = aval
                results.append(
                    f"_JVPTracer(trace, {primal}, "
                    f"_LinearTracer(record, {var(v)}, t{j}))"
                )
        if self.out_tree.is_leaf:
            lines.append(f"    return {results[0]}")
        else:
            lines.append(f"    return out_tree.unflatten([{', '.join(results)}])")
        source = "\n".join(lines) + "\n"
        exec(compile(source, "<typelattice.grad call>", "exec"), scope)
        apply: Callable[[JVPTrace, LinearTrace, list[Any], Any], Any] = scope["apply"]
        return apply, source


def _bytes_of(values: list[Any]) -> int:
    """The bytes of the arrays among ``values``."""
    return sum(v._value.nbytes for v in values if type(v) is ArrayImpl)


def _no_program(*values: Any) -> tuple[Any, ...]:
    raise AssertionError("a linearization is used before it is made")


class _Block:
    """The linear equations of one remembered call in a record: its
    linearization's, with the variables of this call (the arguments'
    tangents ``refs``, its own from ``base + n``) and its residuals."""

    __slots__ = ("base", "lin", "refs", "residuals")

    def __init__(
        self, lin: _Linearized, refs: list[int], base: int, residuals: list[Any]
    ) -> None:
        self.lin = lin
        self.refs = refs
        self.base = base
        self.residuals = residuals

    def var(self, v: int) -> int:
        """The record's variable for the linearization's ``v``."""
        return self.refs[v] if v < len(self.refs) else self.base + v

    def equations(self) -> list[PrimitiveEquation]:
        """The equations as the record holds them, one by one."""
        var, residuals = self.var, self.residuals
        return [
            PrimitiveEquation(
                prim,
                params,
                [
                    (var(a), b)
                    if kind == 0
                    else (None, residuals[a] if kind == 1 else a)
                    for kind, a, b in ops
                ],
                [var(v) for v in outs],
            )
            for prim, params, ops, outs in self.lin.eqns
        ]

    def transpose(self, cts: dict[int, Any]) -> None:
        """Move the cotangents of the outputs in ``cts`` to the arguments':
        by the remembered program of the transposed equations when they
        are arrays, else equation by equation.

        The program adds to what the arguments' cotangents hold already, in
        the order of the equations, as transposing them one by one does:
        float addition is not associative, and a remembered gradient has
        the bits of a direct one."""
        outs = self.lin.tangent_outs
        if outs is not None:
            var, refs = self.var, self.refs
            targets = [var(v) for v, _ in outs]
            got = [cts.get(t) for t in targets]
            if all(c is None for c in got):
                return
            # Per argument, the position of its first occurrence (an
            # argument passed twice is one variable), and its cotangent so
            # far (None for a repeat, or an output's: given as that).
            first = tuple(refs.index(r) for r in refs)
            held = [
                cts.get(r) if first[k] == k and r not in targets else None
                for k, r in enumerate(refs)
            ]
            if len(set(targets)) == len(targets) and all(
                c is None or type(c) is ArrayImpl for c in got + held
            ):
                pattern = (
                    _config.current(),
                    first,
                    *(None if c is None else c._key for c in got + held),
                )
                transposes = self.lin.transposes
                if pattern not in transposes:
                    shaped = [None if c is None else (c._key, c.shape) for c in held]
                    made = _Transposed.of(
                        self.lin, pattern[2 : 2 + len(got)], shaped, first
                    )
                    transposes[pattern] = made
                    if made is not None:
                        _hold(made.held)
                program = transposes[pattern]
                if program is not None:
                    for t in targets:
                        cts.pop(t, None)
                    values = [c._value for c in got + held if c is not None]
                    values += [r._value for r in self.residuals]
                    for k, c in enumerate(program.cotangents(values)):
                        if c is not None:  # (it holds what was there)
                            cts[refs[k]] = c
                    return
        for eqn in reversed(self.equations()):
            _transpose(eqn, cts)


class _Transposed:
    """Transposed linear equations as a program of the cotangents given
    and the residuals; ``results`` gives each input's cotangent as None
    (none), ``(output, key)`` or ``(None, constant)``."""

    __slots__ = ("held", "results", "run")

    def __init__(self, run: Callable[..., Any], results: list[Any], held: int) -> None:
        self.run = run
        self.results = results
        self.held = held  # (bytes of its constant arrays and its program)

    @classmethod
    def of(
        cls,
        lin: _Linearized,
        keys: tuple[Any, ...],
        held: list[tuple[_core.Aval, tuple[int, ...]] | None],
        first: tuple[int, ...],
    ) -> _Transposed | None:
        """A linearization's, for the cotangents of the outputs whose key
        is given (None: no cotangent), added to those its arguments hold
        (``held``: key and shape, or None), the arguments at ``first``
        being the same variable. Inputs: the outputs' cotangents, the
        arguments', then the residuals."""
        outs = lin.tangent_outs
        assert outs is not None
        trace, token = _tracer.start("transpose (remembered)")
        try:
            n = len(lin.tangent_of)

            def var(v: int) -> int:
                return first[v] if v < n else v

            ins: list[int] = []
            given: dict[int, Any] = {}
            for (v, aval), key in zip(outs, keys, strict=True):
                if key is not None:
                    ct = trace.new_tracer(key, aval.shape)
                    ins.append(ct._var)
                    given[var(v)] = ct
            for k, key_shape in enumerate(held):
                if key_shape is not None:
                    ct = trace.new_tracer(*key_shape)
                    ins.append(ct._var)
                    given[k] = ct
            residuals = [trace.new_tracer(*aval) for aval in lin.residual_avals]
            ins += [r._var for r in residuals]
            record = LinearTrace(trace.name)
            record.eqns = _Block(lin, list(first), 0, residuals).equations()
            cts = backward_pass(record, range(n), given)
        except Exception:  # (transposed equation by equation instead)
            return None
        finally:
            _tracer.stop(trace, token)
        return cls.compiled(trace, ins, cts)

    @classmethod
    def compiled(
        cls, trace: _tracer.RecordingTrace, ins: list[int], cts: list[Any]
    ) -> _Transposed | None:
        """The program computing ``cts`` (tracers of ``trace``, constants or
        None) from the values of ``ins``; None when it cannot be kept."""
        results: list[Any] = []
        outs: list[int] = []
        for c in cts:
            if c is None:
                results.append(None)
            elif isinstance(c, JitTracer) and c._trace is trace:
                results.append((len(outs), c._key))
                outs.append(c._var)
            elif type(c) is ArrayImpl:
                results.append((None, c))
            else:
                return None
        program = Program(trace, ins, outs)
        consts = [r[1] for r in results if r is not None and r[0] is None]
        held = program.constant_bytes + _bytes_of(consts)
        if held > _CONSTANTS_MAX:
            return None
        return cls(program.run, results, held + program.code_bytes)

    def cotangents(self, values: list[Any]) -> list[Any]:
        """The inputs' cotangents (None for none) from the values of the
        cotangents given and of the residuals."""
        computed = self.run(*values)
        return [
            None
            if result is None
            else result[1]
            if result[0] is None
            else wrap(computed[result[0]], result[1])
            for result in self.results
        ]


# -- reverse mode: the linear record --------------------------------------------


class LinearTrace(Trace):
    """The record of the linear map from input tangents to output tangents."""

    __slots__ = ("eqns", "nvars")

    differentiates = True

    def __init__(self, name: str) -> None:
        super().__init__(name, _depth.get() + 1)  # (above its JVPTrace)
        self.nvars = 0
        # The primitives applied to tangents, as jit records them
        # (PrimitiveEquation: an operand is (var, aval) for a linear input,
        # (None, value) otherwise); a remembered call's equations are one
        # _Block.
        self.eqns: list[Any] = []

    def new(self, aval: ShapedArray) -> LinearTracer:
        tracer = LinearTracer(self, self.nvars, aval)
        self.nvars += 1
        return tracer

    # (process_lowering: the base's, a namespace function's lowering
    # applied to tangents is recorded)

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        if not self.alive:
            _dead(self)
        if prim.abstract_eval is None:
            raise NotImplementedError(f"primitive {prim.name} has no rules")
        avals: list[ShapedArray] = []
        operands: list[tuple[int, ShapedArray] | tuple[None, Any]] = []
        for x in args:
            if type(x) is LinearTracer:
                avals.append(x.aval)
                operands.append((x.ref, x.aval) if x._trace is self else (None, x))
            else:
                avals.append(aval_of(x))
                operands.append((None, x))
        out = prim.evaluate(avals, params)
        if not prim.multiple_results:
            v = self.nvars
            self.nvars = v + 1
            self.eqns.append(PrimitiveEquation(prim, params, operands, [v]))
            return LinearTracer(self, v, out)
        tracers = [self.new(a) for a in out]
        self.eqns.append(
            PrimitiveEquation(prim, params, operands, [t.ref for t in tracers])
        )
        return tuple(tracers)


class LinearTracer(Tracer):
    """A tangent in reverse mode: a variable of the linear record."""

    __slots__ = ("aval", "ref")

    def __init__(self, trace: LinearTrace, var: int, aval: ShapedArray) -> None:
        self._trace = trace
        self.ref = var
        self.aval = aval

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.aval.dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def __repr__(self) -> str:
        return f"LinearTracer<{_describe(self.aval)}>"

    def __array__(
        self, dtype: Any = None, copy: bool | None = None
    ) -> np.ndarray[Any, Any]:
        raise NotDifferentiableError(f"{self!r} is a tangent and has no value")


class RecordedCall:
    """A call recorded whole in a linear record, in the place of a primitive
    (a custom_vjp call, a checkpointed function): its operands are the
    tangents of the call's differentiated inputs, its outputs the tangents
    of its floating results. Subclasses hold what their ``transpose``
    needs; they are not primitives of lax and exist only in that record."""

    multiple_results = True
    out_avals: list[ShapedArray]
    #: Per output, whether it has a tangent (floating and complex ones).
    floating: list[bool]

    def _outputs(self, out_avals: list[ShapedArray]) -> None:
        self.out_avals = out_avals
        self.floating = [_dtypes.kind_of(a.dtype) in "fc" for a in out_avals]

    def record(self, record: LinearTrace, tangents: list[LinearTracer]) -> list[Any]:
        """Append this call to ``record``: the outputs' tangents (None for
        those of bool and integer outputs)."""
        if not record.alive:
            _dead(record)
        outs: list[Any] = []
        refs: list[int] = []
        for aval, floating in zip(self.out_avals, self.floating, strict=True):
            if floating:
                t = record.new(aval)
                outs.append(t)
                refs.append(t.ref)
            else:
                outs.append(None)
        operands: list[tuple[int, ShapedArray] | tuple[None, Any]] = [
            (t.ref, t.aval) for t in tangents
        ]
        record.eqns.append(PrimitiveEquation(cast(Any, self), {}, operands, refs))
        return outs

    # What the record's readers use of a primitive:

    def abstract_eval(self, *avals: Any) -> list[ShapedArray]:
        return [a for a, f in zip(self.out_avals, self.floating, strict=True) if f]

    def evaluate(self, avals: Any, params: Any) -> list[ShapedArray]:
        return self.abstract_eval()


def backward_pass(
    record: LinearTrace,
    in_vars: Sequence[int | None],
    out_cts: dict[int, Any],
    consume: bool = False,
) -> list[Any]:
    """The transposed linear map: the cotangents of the variables
    ``in_vars`` (None for inputs without tangent) from those of the outputs
    (by variable), through the transpose rules, last equation first.

    With ``consume``, each equation is dropped from the record once
    transposed, and its residuals with it: their memory serves the
    cotangents that follow (``grad``, which transposes once)."""
    fused = _remembered_backward(record, in_vars, out_cts)
    if fused is not None:
        if consume:
            record.eqns.clear()
        return fused
    cts = dict(out_cts)
    eqns = record.eqns
    for eqn in _consumed(eqns) if consume else reversed(eqns):
        if type(eqn) is _Block:
            eqn.transpose(cts)
        else:
            _transpose(eqn, cts)
    return [None if v is None else cts.get(v) for v in in_vars]


def _remembered_backward(
    record: LinearTrace, in_vars: Sequence[int | None], out_cts: dict[int, Any]
) -> list[Any] | None:
    """A whole backward pass by one remembered program (None when there is
    none, yet): for a record made of the same remembered calls and
    primitives wired alike (each step of a training loop), of the output
    cotangents and the residuals (a primitive's constants among them). It
    does what the transposes do, without the Python between them, and
    reuses its temporaries across the calls."""
    eqns = record.eqns
    if REMEMBER_AFTER is None or not eqns:
        return None
    sig: list[Any] = [_config.current(), tuple(in_vars)]
    for v, c in out_cts.items():
        if type(c) is not ArrayImpl:
            return None
        sig += (v, c._key, c._value.shape)
    n = 0
    for b in eqns:
        if type(b) is _Block:
            n += len(b.lin.eqns)
            sig += (b.lin, b.base, *b.refs)
            continue
        if type(b.prim) is not Primitive:
            # A custom rule's or a checkpoint's entry: it holds its own
            # values, which a remembered program must not keep.
            return None
        # A primitive bound directly: its constants (residuals) become
        # inputs of the program, known here by their type and shape.
        n += 1
        sig += (b.prim, *b.params.items(), *b.outs)
        for v, a in b.ins:
            if v is not None:
                sig += (v, a)
            elif type(a) is ArrayImpl:
                sig += (None, a._key, a._value.shape)
            else:  # (a scalar, or a value of an enclosing transformation)
                return None
    if n > _BACKWARD_MAX:  # (transposed block by block)
        return None
    key = tuple(sig)
    try:
        found = _BACKWARDS.get(key)
    except TypeError:  # an unhashable parameter: not remembered
        return None
    if type(found) is not _Transposed:
        if not _sighted(_BACKWARDS, key, found):
            return None
        found = _backward_program(record, in_vars, out_cts)
        # (its key holds the linearizations, whatever becomes of them)
        lins = {id(b.lin): b.lin.held for b in eqns if type(b) is _Block}
        held = 0 if found is None else found.held + sum(lins.values())
        held += _key_bytes(key)
        _keep(_BACKWARDS, key, found, held)
        if found is None:
            return None
    program: _Transposed = found
    values = [c._value for c in out_cts.values()]
    for b in eqns:
        if type(b) is _Block:
            values += [r._value for r in b.residuals]
        else:
            values += [a._value for v, a in b.ins if v is None]
    return program.cotangents(values)


def _backward_program(
    record: LinearTrace, in_vars: Sequence[int | None], out_cts: dict[int, Any]
) -> _Transposed | None:
    """The program of a record's backward pass, of the output cotangents,
    then each block's residuals and each primitive's constants, in the
    record's order."""
    trace, token = _tracer.start("backward (remembered)")
    try:
        ins: list[int] = []
        given: dict[int, Any] = {}
        for v, c in out_cts.items():
            ct = trace.new_tracer(c._key, c._value.shape)
            ins.append(ct._var)
            given[v] = ct
        stand_in = LinearTrace(trace.name)
        for b in record.eqns:
            if type(b) is not _Block:
                stood: list[tuple[int, ShapedArray] | tuple[None, Any]] = []
                for v, a in b.ins:
                    if v is None:
                        a = trace.new_tracer(a._key, a._value.shape)
                        ins.append(a._var)
                    stood.append((v, a))
                stand_in.eqns.append(PrimitiveEquation(b.prim, b.params, stood, b.outs))
                continue
            residuals = [trace.new_tracer(r._key, r._value.shape) for r in b.residuals]
            ins += [r._var for r in residuals]
            stand_in.eqns += _Block(b.lin, b.refs, b.base, residuals).equations()
        cts = backward_pass(stand_in, in_vars, given)
    except Exception:  # (transposed block by block instead)
        return None
    finally:
        _tracer.stop(trace, token)
    return _Transposed.compiled(trace, ins, cts)


# Per record signature: the backward passes seen (an int), the remembered
# program, or False when it cannot be made; dropped whole when full.
_BACKWARDS: dict[tuple[Any, ...], Any] = {}


def _consumed(eqns: list[Any]) -> Iterator[Any]:
    """The equations, last first, each removed as it is given."""
    while eqns:
        yield eqns.pop()


def _transpose(eqn: PrimitiveEquation, cts: dict[int, Any]) -> None:
    """Move the cotangents of an equation's outputs in ``cts`` to its
    linear operands', by its primitive's transpose rule."""
    prim, params, operands, outs = eqn.prim, eqn.params, eqn.ins, eqn.outs
    got = [cts.pop(v, None) for v in outs]
    if all(c is None for c in got):
        return
    if prim.transpose is None:
        raise NotImplementedError(
            f"Transpose rule (for reverse-mode differentiation) for "
            f"'{prim.name}' not implemented"
        )
    args = [UndefinedPrimal(a) if v is not None else a for v, a in operands]
    if prim.multiple_results:
        ct: Any = [
            Zero(aval) if c is None else c
            for c, aval in zip(
                got,
                prim.abstract_eval(*map(aval_of, args), **params),  # type: ignore[misc]  # pyright: ignore[reportOptionalCall]
                strict=True,
            )
        ]
    else:
        ct = got[0]
    for (v, _), c in zip(operands, prim.transpose(ct, *args, **params), strict=True):
        if v is None or c is None or type(c) is Zero:
            continue
        _add_cotangent(cts, v, c)


def _add_cotangent(cts: dict[int, Any], v: int, c: Any) -> None:
    """Add ``c`` to the cotangent of variable ``v`` in ``cts``."""
    cts[v] = c if v not in cts else add_tangents(cts[v], c)


# -- the transformations --------------------------------------------------------


def _flat_inputs(args: Sequence[Any], where: str) -> tuple[list[Any], tree.PyTreeDef]:
    leaves, treedef = tree.flatten(list(args))
    x64 = _config.current().enable_x64
    return [
        argument_value(leaf, where, i, x64) for i, leaf in enumerate(leaves)
    ], treedef


def _linearize(
    fun: Callable[..., Any], primals: list[Any], name: str
) -> tuple[Any, list[Any], LinearTrace, list[int | None]]:
    """Run ``fun`` on ``primals`` with linear tangents: its output (a
    pytree of JVPTracers or values), the record and the inputs' variables."""
    record = LinearTrace(name)
    trace = JVPTrace(name, record)
    with _Level((trace, record)):
        tracers: list[Any] = []
        in_vars: list[int | None] = []
        for p in primals:
            aval = aval_of(p)
            if _dtypes.kind_of(aval.dtype) in "fc":
                lin = record.new(aval)
                tracers.append(JVPTracer(trace, p, lin))
                in_vars.append(lin.ref)
            else:
                tracers.append(p)
                in_vars.append(None)
        out = fun(tracers)
        out_leaves, out_tree = tree.flatten(out)
        pairs = [_unpack(trace, record, leaf, name) for leaf in out_leaves]
    return (out_leaves, out_tree, pairs), tracers, record, in_vars


def _unpack(
    trace: JVPTrace, record: LinearTrace, leaf: Any, where: str
) -> tuple[Any, Any]:
    """An output's primal and its tangent (a LinearTracer or a Zero)."""
    if isinstance(leaf, JVPTracer) and leaf._trace is trace:
        return leaf.primal, leaf.tangent
    if isinstance(leaf, Array):
        return leaf, Zero.of(leaf)
    value = argument_value(leaf, where, 0, _config.current().enable_x64)
    return value, Zero.of(value)


def _ct_like(ct: Any, aval: ShapedArray, where: str) -> Any:
    """A cotangent given by the caller, checked against its output.

    A bool or integer output's cotangent is float0 zeros of its shape, as
    in JAX (an array of the output's own dtype is accepted too); nothing
    flows back from it."""
    if getattr(ct, "dtype", None) == float0:
        if _dtypes.kind_of(aval.dtype) in "fc":
            raise ValueError(
                f"{where}: a float0 cotangent was given for an output of dtype "
                f"{aval.dtype}; float0 is the cotangent of bool and integer "
                f"outputs only: pass an array of dtype {aval.dtype} and shape "
                f"{aval.shape}"
            )
        if tuple(ct.shape) != aval.shape:
            raise ValueError(
                f"{where}: a float0 cotangent of shape {tuple(ct.shape)} was "
                f"given for an output of shape {aval.shape}; pass "
                f"np.zeros({aval.shape}, typelattice.float0)"
            )
        return Zero(ShapedArray(aval.shape, float0, aval.weak_type))
    value = ct
    if not isinstance(value, Array):
        value = argument_value(ct, where, 0, _config.current().enable_x64)
    if tuple(value.shape) != aval.shape or value.dtype != aval.dtype:
        or_float0 = (
            ""
            if _dtypes.kind_of(aval.dtype) in "fc"
            else f" (or pass np.zeros({aval.shape}, typelattice.float0))"
        )
        raise ValueError(
            f"{where}: a cotangent of shape {tuple(value.shape)} and dtype "
            f"{value.dtype} was given for an output of shape {aval.shape} and "
            f"dtype {aval.dtype}; they must be equal{or_float0}"
        )
    return value


def _like_primal(ct: Any, primal: Any, primals: Sequence[Any]) -> Any:
    """A cotangent on its primal's backend and device (a Python scalar's:
    the first primal of another library's): one computed from the seed
    and constants alone (a linear function's) is NumPy-held."""
    if type(ct) is not ArrayImpl:
        return ct
    home = primal
    if type(home) is not BackendArray:
        home = next((p for p in primals if type(p) is BackendArray), None)
        if home is None:
            return ct
    return placed(ct, home._backend, home._device)


def _zeros_for(aval: ShapedArray) -> Any:
    """The zero cotangent of an input, as an array (float0 for integers)."""
    if _dtypes.kind_of(aval.dtype) in "fc":
        return zeros(aval)
    return np.zeros(aval.shape, float0)


def _equations(record: LinearTrace) -> Iterator[PrimitiveEquation]:
    """The record's equations, one by one (blocks expanded)."""
    for eqn in record.eqns:
        if type(eqn) is _Block:
            yield from eqn.equations()
        else:
            yield eqn


def forward_pass(
    record: LinearTrace, in_vars: Sequence[int | None], tangents: Sequence[Any]
) -> dict[int, Any]:
    """The linear map itself: the record's equations run in order on the
    inputs' tangents (a :class:`Zero` for inputs without one); the value of
    every variable reached."""
    env: dict[int, Any] = {
        v: t for v, t in zip(in_vars, tangents, strict=True) if v is not None
    }
    for eqn in _equations(record):
        prim, params, operands, outs = eqn.prim, eqn.params, eqn.ins, eqn.outs
        if not any(v in env for v, _ in operands if v is not None):
            continue  # no tangent reaches it
        args = [
            a if v is None else env[v] if v in env else zeros(a) for v, a in operands
        ]
        out = prim.bind(*args, **params)
        results = out if prim.multiple_results else (out,)
        env.update(zip(outs, results, strict=True))
    return env


def linearize(fun: Callable[..., Any], *primals: Any) -> tuple[Any, Any]:
    """``fun``'s value at ``primals`` and its linear map there: the JVP
    with the primal computation done once.

    Args:
      fun: a function of arrays.
      *primals: its arguments.

    Returns:
      ``(output, jvp_fn)``: ``jvp_fn(*tangents)`` (one per argument, of its
      structure, shapes and dtype) gives the output's tangent, as
      ``jvp(fun, primals, tangents)[1]`` would.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> y, f_jvp = tl.linearize(tnp.sin, tnp.float32(0.0))
    >>> f_jvp(tnp.float32(3.0))
    Array(3., dtype=float32)
    """
    name = f"linearize({getattr(fun, '__name__', 'fun')})"
    flat, in_tree = _flat_inputs(primals, name)

    def flat_fun(leaves: list[Any]) -> Any:
        return fun(*in_tree.unflatten(leaves))

    (_, out_tree, pairs), _, record, in_vars = _linearize(flat_fun, flat, name)
    value = out_tree.unflatten([p for p, _ in pairs])

    def jvp_fun(*tangents: Any) -> Any:
        t_leaves, t_tree = tree.flatten(list(tangents))
        if t_tree != in_tree:
            raise ValueError(
                f"{name}: the tangents have structure {t_tree}, the arguments "
                f"{in_tree}; they must be equal"
            )
        given: list[Any] = []
        for i, (p, t) in enumerate(zip(flat, t_leaves, strict=True)):
            aval = aval_of(p)
            if _dtypes.kind_of(aval.dtype) not in "fc":
                given.append(Zero(ShapedArray(aval.shape, float0, aval.weak_type)))
                continue
            tv = t if isinstance(t, Array) else argument_value(t, name, i, False)
            if tuple(tv.shape) != aval.shape or tv.dtype != aval.dtype:
                raise ValueError(
                    f"{name}: the tangent {_describe(aval_of(tv))} of argument "
                    f"{i} must have its primal's shape and dtype ({_describe(aval)})"
                )
            given.append(tv)
        env = forward_pass(record, in_vars, given)
        out: list[Any] = []
        for p, t in pairs:
            if isinstance(t, LinearTracer) and t.ref in env:
                out.append(env[t.ref])
            else:
                out.append(_zeros_for(aval_of(p)))
        return out_tree.unflatten(out)

    return value, jvp_fun


def vjp(
    fun: Callable[..., Any], *primals: Any, has_aux: bool = False
) -> tuple[Any, ...]:
    """The value of ``fun(*primals)`` and the function that maps cotangents
    of its output to cotangents of its arguments (reverse mode).

    Args:
      fun: a function of arrays (pytrees of arrays and scalars).
      *primals: its arguments.
      has_aux: ``fun`` returns ``(output, aux)``; aux is returned as is.

    Returns:
      ``(output, vjp_fn)``, or ``(output, vjp_fn, aux)``. ``vjp_fn(ct)``
      takes a cotangent of the output's structure, shapes and dtypes and
      returns a tuple with one cotangent per argument, each with its
      argument's dtype and weak flag (float0 zeros for integer arguments).

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> y, f_vjp = tl.vjp(tnp.sin, tnp.float32(0.0))
    >>> f_vjp(tnp.float32(1.0))
    (Array(1., dtype=float32),)
    """
    name = f"vjp({getattr(fun, '__name__', 'fun')})"
    flat, in_tree = _flat_inputs(primals, name)
    aux_fun = _Aux(fun)
    if has_aux:
        fun = aux_fun

    def flat_fun(leaves: list[Any]) -> Any:
        return fun(*in_tree.unflatten(leaves))

    (out_leaves, out_tree, pairs), _, record, in_vars = _linearize(flat_fun, flat, name)
    aux: Any = None
    if has_aux:
        out_tree, out_leaves, pairs, aux = _split_aux(out_tree, out_leaves, pairs, name)
        aux = aux_fun.rebuild(aux)
    value = out_tree.unflatten([p for p, _ in pairs])

    def vjp_fun(ct: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree.flatten(ct)
        if ct_tree != out_tree:
            raise ValueError(
                f"{name}: the cotangent has structure {ct_tree}, the output "
                f"{out_tree}; they must be equal"
            )
        out_cts: dict[int, Any] = {}
        for c, (p, t) in zip(ct_leaves, pairs, strict=True):
            c = _ct_like(c, aval_of(p), name)
            if isinstance(t, LinearTracer):
                out_cts[t.ref] = (
                    c if t.ref not in out_cts else add_tangents(out_cts[t.ref], c)
                )
        cts = backward_pass(record, in_vars, out_cts)
        result = [
            _like_primal(_zeros_for(aval_of(p)) if c is None else c, p, flat)
            for c, p in zip(cts, flat, strict=True)
        ]
        return tuple(in_tree.unflatten(result))

    if has_aux:
        return value, vjp_fun, aux
    return value, vjp_fun


def _is_pair(x: object) -> bool:
    return isinstance(x, tuple) and len(cast("tuple[object, ...]", x)) == 2


class _Aux:
    """``fun`` returning ``(output, aux)``, seen by a transformation as
    returning ``(output, traced leaves of aux)``: only aux's traced leaves
    go through it, and :meth:`rebuild` puts them back among the others,
    which come back as they were (Python and NumPy scalars, text, None,
    arrays made outside), as JAX returns aux."""

    def __init__(self, fun: Callable[..., Any]) -> None:
        self.fun = fun
        self.parts: tuple[list[Any], tree.PyTreeDef, list[bool]] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        result: Any = self.fun(*args, **kwargs)
        if not _is_pair(result):
            return result  # _split_aux reports it
        out, aux = result[0], result[1]
        leaves, aux_tree = tree.flatten(aux)
        traced = [isinstance(x, Tracer) for x in leaves]
        self.parts = (leaves, aux_tree, traced)
        return out, [x for x, t in zip(leaves, traced, strict=True) if t]

    def rebuild(self, values: list[Any]) -> Any:
        assert self.parts is not None
        leaves, aux_tree, traced = self.parts
        it = iter(values)
        return aux_tree.unflatten(
            [next(it) if t else x for x, t in zip(leaves, traced, strict=True)]
        )


def _split_aux(
    out_tree: tree.PyTreeDef, out_leaves: list[Any], pairs: list[Any], where: str
) -> tuple[tree.PyTreeDef, list[Any], list[Any], Any]:
    """``(output, aux)`` taken apart: aux's tracers become their primals."""
    both: Any = out_tree.unflatten(list(range(len(out_leaves))))
    if not isinstance(both, tuple) or len(both) != 2:  # pyright: ignore[reportUnknownArgumentType]
        raise TypeError(
            f"{where}: with has_aux=True the function must return a pair "
            f"(output, auxiliary data), got {out_tree}"
        )
    main_pos, main_tree = tree.flatten(both[0])
    aux_pos, aux_tree = tree.flatten(both[1])
    aux = aux_tree.unflatten([pairs[i][0] for i in aux_pos])
    return (
        main_tree,
        [out_leaves[i] for i in main_pos],
        [pairs[i] for i in main_pos],
        aux,
    )


def jvp(
    fun: Callable[..., Any],
    primals: Sequence[Any],
    tangents: Sequence[Any],
    has_aux: bool = False,
) -> tuple[Any, ...]:
    """``fun``'s value at ``primals`` and its derivative along ``tangents``
    (forward mode).

    Args:
      fun: a function of arrays.
      primals: its arguments, a tuple or list.
      tangents: one per argument, of its structure, shapes and dtype
        (``float0`` arrays for bool and integer arguments; ``None`` is
        not accepted, as in JAX).
      has_aux: ``fun`` returns ``(output, aux)``.

    Returns:
      ``(output, output_tangent)`` (or with aux appended); the tangent of
      an integer output is an array of float0 zeros.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> tl.jvp(tnp.sin, (tnp.float32(0.0),), (tnp.float32(2.0),))
    (Array(0., dtype=float32), Array(2., dtype=float32))
    """
    name = f"jvp({getattr(fun, '__name__', 'fun')})"
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError(
            f"{name}: primal and tangent arguments must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}"
        )
    flat, in_tree = _flat_inputs(primals, name)
    aux_fun = _Aux(fun)
    if has_aux:
        fun = aux_fun
    t_leaves, t_tree = tree.flatten(list(tangents))
    if t_tree != in_tree:
        raise ValueError(
            f"{name}: primal and tangent arguments must have the same tree "
            f"structure; got {in_tree} and {t_tree}"
        )
    trace = JVPTrace(name)
    with _Level((trace,)):
        tracers: list[Any] = []
        for i, (p, t) in enumerate(zip(flat, t_leaves, strict=True)):
            aval = aval_of(p)
            if _dtypes.kind_of(aval.dtype) not in "fc":
                got: Any = getattr(t, "dtype", None) or type(t).__name__
                if got != float0:
                    raise TypeError(
                        f"{name}: the tangent of an argument of dtype {aval.dtype} "
                        "must be an array of dtype float0 (np.zeros(shape, "
                        f"typelattice.float0)), got {got}"
                    )
                tracers.append(p)
                continue
            tv = t if isinstance(t, Array) else argument_value(t, name, i, False)
            if tuple(tv.shape) != aval.shape or tv.dtype != aval.dtype:
                raise ValueError(
                    f"{name}: the tangent {_describe(aval_of(tv))} of argument "
                    f"{i} must have its primal's shape and dtype "
                    f"({_describe(aval)})"
                )
            tracers.append(JVPTracer(trace, p, tv))
        out = fun(*in_tree.unflatten(tracers))
        out_leaves, out_tree = tree.flatten(out)
        pairs = [_unpack_forward(trace, leaf, name) for leaf in out_leaves]
    aux: Any = None
    if has_aux:
        out_tree, out_leaves, pairs, aux = _split_aux(out_tree, out_leaves, pairs, name)
        aux = aux_fun.rebuild(aux)
    value = out_tree.unflatten([p for p, _ in pairs])
    tangent = out_tree.unflatten(
        [_zeros_for(t.aval) if type(t) is Zero else t for _, t in pairs]
    )
    return (value, tangent, aux) if has_aux else (value, tangent)


def _unpack_forward(trace: JVPTrace, leaf: Any, where: str) -> tuple[Any, Any]:
    if isinstance(leaf, JVPTracer) and leaf._trace is trace:
        return leaf.primal, leaf.tangent
    if not isinstance(leaf, Array):
        leaf = argument_value(leaf, where, 0, _config.current().enable_x64)
    return leaf, Zero.of(leaf)


def _argnums(argnums: int | Sequence[int], nargs: int, where: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not -nargs <= n < nargs:
            raise ValueError(
                f"{where}: argnums={argnums!r} names no positional argument of a "
                f"call with {nargs}; pass the arguments to differentiate "
                "positionally"
            )
    positions = tuple(n % nargs for n in nums)
    for k, n in enumerate(positions):
        if n in positions[:k]:
            # Each position is one input of the differentiated function: a
            # repeat would get a gradient of zero next to the real one.
            raise ValueError(
                f"{where}: argnums={argnums!r} names positional argument {n} "
                f"more than once; each argument is differentiated once: pass "
                f"argnums={tuple(dict.fromkeys(positions))!r}"
            )
    return positions


def _check_inputs(
    leaves: Sequence[Any], holomorphic: bool, allow_int: bool, where: str
) -> None:
    for leaf in leaves:
        dt = aval_of(leaf).dtype
        kind = _dtypes.kind_of(dt)
        if holomorphic and kind != "c":
            raise TypeError(
                f"{where}: holomorphic=True requires inputs with complex dtype, "
                f"but got {dt.name}."
            )
        if kind not in "fc" and not allow_int:
            raise TypeError(
                f"{where} requires real- or complex-valued inputs (input dtype "
                f"that is a sub-dtype of np.inexact), but got {dt.name}. If you "
                "want to use Boolean- or integer-valued inputs, use vjp or set "
                "allow_int to True."
            )


def _check_output(out: Any, holomorphic: bool, where: str) -> None:
    aval = aval_of(out)
    if aval.shape != ():
        raise TypeError(
            f"{where}: gradient only defined for scalar-output functions. Output "
            f"had shape: {aval.shape}. Use vjp (or jacrev) for other outputs, "
            "or reduce the output to a scalar (sum, mean)."
        )
    kind = _dtypes.kind_of(aval.dtype)
    if holomorphic:
        if kind != "c":
            raise TypeError(
                f"{where} with holomorphic=True requires outputs with complex "
                f"dtype, but got {aval.dtype.name}."
            )
    elif kind != "f":
        raise TypeError(
            f"{where} requires real-valued outputs (output dtype that is a "
            f"sub-dtype of np.floating), but got {aval.dtype.name}. For "
            "holomorphic differentiation, pass holomorphic=True. For "
            "differentiating non-holomorphic functions involving complex "
            "outputs, use vjp directly."
        )


def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """A function computing ``fun``'s value and its gradient.

    Args:
      fun: a function returning a scalar of a floating dtype (complex with
        ``holomorphic=True``), or ``(scalar, aux)`` with ``has_aux``.
      argnums: the position of the argument to differentiate, or a
        sequence of positions.
      has_aux: ``fun`` returns ``(output, aux)``.
      holomorphic: ``fun`` is holomorphic: complex inputs and output.
      allow_int: accept bool and integer arguments (their gradient is an
        array of float0 zeros).

    Returns:
      A function of ``fun``'s arguments returning ``(value, gradient)``
      (``((value, aux), gradient)`` with ``has_aux``); the gradient has the
      argument's structure, each leaf its dtype and weak flag (a tuple of
      them for a sequence ``argnums``).

    Raises:
      TypeError: (when called) a non-scalar or non-real output, an integer
        argument without ``allow_int``.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> tl.value_and_grad(lambda x: (x * x).sum())(tnp.asarray([1.0, 2.0]))
    (Array(5., dtype=float32), Array([2., 4.], dtype=float32))
    """
    where = f"grad({getattr(fun, '__name__', 'fun')})"

    @functools.wraps(fun)
    def value_and_grad_fun(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), where)
        dyn = [args[i] for i in nums]
        flat, dyn_tree = _flat_inputs(dyn, where)
        _check_inputs(flat, holomorphic, allow_int, where)
        aux_fun = _Aux(fun)
        target = aux_fun if has_aux else fun

        def flat_fun(leaves: list[Any]) -> Any:
            call = list(args)
            for i, a in zip(nums, dyn_tree.unflatten(leaves), strict=True):
                call[i] = a
            return target(*call, **kwargs)

        (out_leaves, out_tree, pairs), _, record, in_vars = _linearize(
            flat_fun, flat, where
        )
        aux: Any = None
        if has_aux:
            out_tree, out_leaves, pairs, aux = _split_aux(
                out_tree, out_leaves, pairs, where
            )
            aux = aux_fun.rebuild(aux)
        if not out_tree.is_leaf:
            raise TypeError(
                f"{where}: gradient only defined for scalar-output functions; the "
                f"function returned {out_tree}"
                + ("" if has_aux else " (pass has_aux=True to return auxiliary data)")
            )
        primal, tangent = pairs[0]
        _check_output(primal, holomorphic, where)
        out_cts: dict[int, Any] = {}
        if isinstance(tangent, LinearTracer):
            aval = aval_of(primal)
            # (On the output's backend: what the rules make of it is too.)
            out_cts[tangent.ref] = _like_primal(_one(aval), primal, flat)
        cts = backward_pass(record, in_vars, out_cts, consume=True)
        grads = [
            _like_primal(_zeros_for(aval_of(p)) if c is None else c, p, flat)
            for c, p in zip(cts, flat, strict=True)
        ]
        g = dyn_tree.unflatten(grads)
        result = g[0] if isinstance(argnums, int) else tuple(g)
        return ((primal, aux) if has_aux else primal), result

    return value_and_grad_fun


def _one(aval: ShapedArray) -> Any:
    """A one of ``aval``'s dtype and weak flag (the seed of ``grad``): under
    jit or eval_shape, made by the program, so that what the transpose
    rules make of it (a broadcast to the argument's shape...) is too."""
    return full(aval, 1)


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The gradient of a scalar function.

    Args:
      fun: a function returning a scalar of a floating dtype (complex with
        ``holomorphic=True``), or ``(scalar, aux)`` with ``has_aux``.
      argnums: the position of the argument to differentiate, or a
        sequence of positions.
      has_aux: ``fun`` returns ``(output, aux)``.
      holomorphic: ``fun`` is holomorphic: complex inputs and output.
      allow_int: accept bool and integer arguments (their gradient is an
        array of float0 zeros).

    Returns:
      A function of ``fun``'s arguments returning the gradient with
      respect to the arguments at ``argnums`` (with ``has_aux``:
      ``(gradient, aux)``). Each leaf has its argument's dtype and weak
      flag: float32 parameters used in bfloat16 get float32 gradients.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> tl.grad(lambda x: tnp.sin(x) * x)(tnp.float32(0.0))
    Array(0., dtype=float32)
    >>> tl.grad(lambda z: abs(z) ** 2)(1 + 2j)
    Array(2.-4.j, dtype=complex64, weak_type=True)
    """
    value_and_grad_fun = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_fun(*args: Any, **kwargs: Any) -> Any:
        (_, aux), g = (
            value_and_grad_fun(*args, **kwargs)
            if has_aux
            else ((None, None), value_and_grad_fun(*args, **kwargs)[1])
        )
        return (g, aux) if has_aux else g

    return grad_fun


def stop_gradient(x: Any) -> Any:
    """``x`` with no derivative: its value, treated as a constant by every
    transformation running (a pytree is taken leaf by leaf).

    Args:
      x: an array, or a pytree of arrays.

    Returns:
      ``x`` with the same structure, dtypes and weak flags, its leaves
      constants to ``grad``, ``vjp`` and ``jvp``.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> tl.grad(lambda x: x * tl.stop_gradient(x))(tnp.float32(3.0))
    Array(3., dtype=float32)
    """

    if type(x) is ArrayImpl:  # (the common call: nothing to strip)
        return x

    def strip(leaf: Any) -> Any:
        while isinstance(leaf, JVPTracer):
            leaf = leaf.primal
        return leaf

    return tree.tree_map(strip, x)


for _cls in (JVPTracer, LinearTracer):
    _cls.__module__ = "typelattice"
del _cls
