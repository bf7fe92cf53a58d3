"""Rematerialisation: :func:`checkpoint` (``remat``), with JAX's API.

Reverse mode (``grad``, ``vjp``) keeps, in its linear record, the values the
backward pass needs (JAX's residuals): for a deep network, every layer's
activations at once. A checkpointed function keeps only its inputs: called
under a reverse-mode differentiation, it

- computes its outputs on the primal values, recording nothing (the
  residuals it makes are dropped as they are made, as eager code drops its
  temporaries);
- adds one entry to the linear record (in the place of a primitive), which
  holds the inputs' primal values, whose tangents are the outputs', and
  whose transpose runs ``vjp`` of the function at those inputs: the
  residuals are computed again during the backward pass, one checkpointed
  call at a time.

A ``policy`` names values worth keeping: each primitive the function binds
is shown to it (``policy(prim, *avals, **params)``), and the outputs of
those it accepts are kept from the first run and reused by the second
(:class:`_SavingTrace`), so that ``dots_saveable`` recomputes everything
but the matrix products.

Forward mode (``jvp``), ``jit`` and ``eval_shape`` alone, and eager calls
run the function as written: there is nothing to forget. Under
``jit(grad(f))`` the backward pass's second run is recorded in the same
program, and ``prevent_cse`` keeps the program from merging it with the
first (it reads its inputs under new names): the program drops the first
run's values after the forward pass, as it drops every temporary after its
last use.
"""

# Package-internal: reads the tracers' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence
from typing import Any, ClassVar, Final, NoReturn, cast

import numpy as np

from typelattice import _config, _dtypes
from typelattice._basearray import Array
from typelattice._tracing import tree
from typelattice._tracing.ad import (
    JVPTrace,
    JVPTracer,
    LinearTrace,
    LinearTracer,
    RecordedCall,
    _dead,
    _depth,
    _Level,
    _zeros_for,
    jvp,
    vjp,
)
from typelattice._tracing.jit import argument_value
from typelattice._tracing.primitive import (
    Primitive,
    UndefinedPrimal,
    Zero,
    aval_of,
    instantiate,
)
from typelattice._tracing.trace import Barrier
from typelattice._tracing.tracer import (
    ACTIVE,
    JitTracer,
    RecordingTrace,
    Trace,
    Tracer,
    innermost_trace,
)

__all__ = [
    "checkpoint",
    "checkpoint_name",
    "everything_saveable",
    "name_p",
    "nothing_saveable",
    "remat",
]

#: A policy: whether to keep the outputs of a primitive bound on operands
#: of these abstract values with these parameters.
Policy = Callable[..., bool]


def nothing_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Keep nothing: everything is computed again (the default).

    Args:
      prim: the primitive bound.
      *avals: its operands' abstract values.
      **params: its parameters.

    Returns:
      False.

    >>> import typelattice as tl
    >>> tl.checkpoint_policies.nothing_saveable(None)
    False
    """
    return False


def everything_saveable(prim: Any, *avals: Any, **params: Any) -> bool:
    """Keep everything: the function is differentiated as if it were not
    checkpointed.

    Args:
      prim: the primitive bound.
      *avals: its operands' abstract values.
      **params: its parameters.

    Returns:
      True.

    >>> import typelattice as tl
    >>> tl.checkpoint_policies.everything_saveable(None)
    True
    """
    return True


def checkpoint(
    fun: Callable[..., Any],
    *,
    prevent_cse: bool = True,
    policy: Policy | None = None,
    static_argnums: int | Sequence[int] = (),
) -> Callable[..., Any]:
    """``fun``, differentiated in reverse mode by computing its
    intermediate values again instead of keeping them.

    The values are ``fun``'s own. Under ``grad`` or ``vjp`` only the
    arguments (and what ``policy`` saves) are kept for the backward pass,
    which runs ``fun`` a second time: memory for time.

    Args:
      fun: a function of arrays (pytrees of them); the arrays it reads
        without being given them are constants to the checkpoint (a value
        being differentiated must be passed as an argument to be
        rematerialised).
      prevent_cse: under ``jit``, keep the second run apart from the first
        (without it the program may compute them once, keeping the values).
      policy: which intermediate values to keep, e.g.
        ``checkpoint_policies.dots_saveable``; None keeps none.
      static_argnums: positions of arguments that are not arrays (Python
        values): passed as they are.

    Returns:
      A function of ``fun``'s arguments, with its results.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> f = tl.checkpoint(lambda x: tnp.sin(tnp.sin(x)))
    >>> tl.grad(f)(tnp.float32(0.0))
    Array(1., dtype=float32)
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else static_argnums
    statics = tuple(nums)

    @functools.wraps(fun)
    def remat_fun(*args: Any, **kwargs: Any) -> Any:
        if not ACTIVE:  # no transformation runs anywhere: the function
            return fun(*args, **kwargs)
        n = len(args)
        fixed: set[int] = set()
        for i in statics:
            if not -n <= i < n:
                raise ValueError(
                    f"checkpoint of {_name(fun)}: static_argnums={statics!r} "
                    f"names no positional argument of a call with {n}; pass "
                    "the static arguments positionally"
                )
            fixed.add(i % n)
        dyn = [a for i, a in enumerate(args) if i not in fixed]
        leaves, in_tree = tree.flatten((dyn, kwargs))
        trace = innermost_trace(leaves)
        if (
            type(trace) is not JVPTrace
            or trace.record is None
            or policy is everything_saveable
        ):
            return fun(*args, **kwargs)
        if not trace.alive:
            _dead(trace)

        def call(given: Sequence[Any]) -> Any:
            d, kw = in_tree.unflatten(list(given))
            it = iter(d)
            full = [args[i] if i in fixed else next(it) for i in range(n)]
            return fun(*full, **kw)

        return _remat(trace, trace.record, call, leaves, prevent_cse, policy, fun)

    return remat_fun


remat = checkpoint


def _name(fun: Any) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _remat(
    trace: JVPTrace,
    record: LinearTrace,
    call: Callable[[Sequence[Any]], Any],
    leaves: list[Any],
    prevent_cse: bool,
    policy: Policy | None,
    fun: Any,
) -> Any:
    """``call(leaves)`` under the reverse-mode differentiation ``trace``:
    its outputs on the primal values, their tangents one entry of
    ``record`` (:class:`_RematCall`)."""
    primals: list[Any] = []
    linear: list[tuple[int, LinearTracer]] = []
    for i, leaf in enumerate(leaves):
        if type(leaf) is JVPTracer and leaf._trace is trace:
            primals.append(leaf.primal)
            t = leaf.tangent
            if type(t) is LinearTracer and t._trace is record:
                linear.append((i, t))
        else:
            primals.append(leaf)
    if policy is None or policy is nothing_saveable:
        saving = None
        out = call(primals)
    else:
        saving = _SavingTrace(policy)
        with _Level((saving,)):
            saving.level = _depth.get() - 1
            out = _unwrapped(
                saving, call([saving.wrap(p, i) for i, p in enumerate(primals)])
            )
        saving.saving = False
    out_leaves, out_tree = tree.flatten(out)
    if any(
        isinstance(o, Tracer)
        and o._trace.differentiates
        and o._trace.level >= trace.level
        for o in out_leaves
    ):
        # The function reads a value of this differentiation that it is not
        # given (a closure): its tangent flows through the code, which is
        # differentiated as written.
        return call(leaves)
    if not linear:  # no input carries a tangent
        return out
    out_vals = [
        o if isinstance(o, Array) else argument_value(o, "checkpoint", 0, _x64())
        for o in out_leaves
    ]
    entry = _RematCall(
        _name(fun),
        call,
        primals,
        saving,
        [i for i, _ in linear],
        out_tree,
        out_vals,
        prevent_cse,
    )
    tangents = entry.record(record, [t for _, t in linear])
    return out_tree.unflatten(
        [
            o if t is None else trace.lift(o, t)
            for o, t in zip(out_vals, tangents, strict=True)
        ]
    )


def _x64() -> bool:
    return _config.current().enable_x64


class _RematCall(RecordedCall):
    """One call of a checkpointed function in a linear record: an entry of
    it (in the place of a primitive) whose operands are the tangents of the
    call's differentiated inputs, whose outputs are its results' tangents,
    and whose rules differentiate the function again at the inputs' primal
    values, which it holds (with what a policy saved): nothing else."""

    def __init__(
        self,
        name: str,
        call: Callable[[Sequence[Any]], Any],
        primals: list[Any],
        saving: _SavingTrace | None,
        linear: list[int],
        out_tree: tree.PyTreeDef,
        outs: list[Any],
        prevent_cse: bool,
    ) -> None:
        self.name = f"checkpoint[{name}]"
        self.call = call
        self.primals = primals
        self.saving = saving
        self.linear = linear
        self.out_tree = out_tree
        self._outputs([aval_of(o) for o in outs])
        self.prevent_cse = prevent_cse

    def _inputs(self) -> list[Any]:
        """The primal inputs of the second run: under ``jit`` with
        ``prevent_cse``, under new names (see :class:`~.trace.Barrier`)."""
        if not self.prevent_cse:
            return list(self.primals)
        return [_renamed(p) if type(p) is JitTracer else p for p in self.primals]

    def bind(self, *tangents: Any) -> tuple[Any, ...]:
        """The outputs' tangents from the inputs' (``linearize``'s forward
        pass): the function's JVP at the held inputs."""
        primals = self._inputs()
        given = [
            _zeros_for(aval_of(p))
            if _dtypes.kind_of(aval_of(p).dtype) not in "fc"
            else instantiate(Zero(aval_of(p)))
            for p in primals
        ]
        for i, t in zip(self.linear, tangents, strict=True):
            given[i] = instantiate(t) if type(t) is Zero else t
        _, out = jvp(lambda *ls: self.call(ls), primals, given)
        leaves, _ = tree.flatten(out)
        return tuple(t for t, f in zip(leaves, self.floating, strict=True) if f)

    def transpose(self, cts: list[Any], *args: Any) -> list[Any]:
        """The cotangents of the linear operands, from ``vjp`` of the
        function at the held inputs (its residuals computed again)."""
        given = iter(cts)
        full: list[Any] = []
        for aval, floating in zip(self.out_avals, self.floating, strict=True):
            if floating:
                ct = next(given)
                full.append(instantiate(ct) if type(ct) is Zero else ct)
            else:
                full.append(_zeros_for(aval))
        primals = self._inputs()
        saving = self.saving
        if saving is None:
            _, f_vjp = vjp(lambda *ls: self.call(ls), *primals)
            got = f_vjp(self.out_tree.unflatten(full))
        else:
            replay = _SavingTrace(saving.policy, saving)
            if self.prevent_cse:  # (the kept values too: JAX's barrier takes both)
                replay.saved = {
                    k: _renamed(v) if type(v) is JitTracer else v
                    for k, v in saving.saved.items()
                }
            with _Level((replay,)):
                replay.level = _depth.get() - 1
                _, f_vjp = vjp(
                    lambda *ls: self.call(ls),
                    *[replay.wrap(p, i) for i, p in enumerate(primals)],
                )
                replay.saving = replay.replaying = False
                got = _unwrapped(replay, f_vjp(self.out_tree.unflatten(full)))
        assert len(args) == len(self.linear)
        assert all(type(a) is UndefinedPrimal for a in args)
        return [got[i] for i in self.linear]


def _renamed(x: JitTracer) -> JitTracer:
    """``x`` under a new name in its trace (:class:`~.trace.Barrier`)."""
    trace = cast(RecordingTrace, x._trace)
    if not trace.alive:
        _dead(trace)
    out = trace.new_tracer(x._key, x._shape, x._promotes_as)
    trace.record(Barrier(out._var, x._var))
    return out


# -- policies: the values kept ---------------------------------------------------


class _SavingTrace(Trace):
    """A checkpointed function's run on primal values that keeps the
    outputs of the primitives its policy accepts (first run), or gives them
    back instead of computing them (second run, under ``vjp``).

    An equation is known in both runs by what determines its value: its
    primitive, parameters and operands, each operand by the equation that
    made it (numbered in :attr:`ids`, shared by the runs) or, for a
    constant, by its identity (held, so that no other object takes it) or
    its value (a Python scalar)."""

    __slots__ = ("ids", "kept", "policy", "replaying", "saved", "saving")

    differentiates: ClassVar[bool] = False

    def __init__(self, policy: Policy, first: _SavingTrace | None = None) -> None:
        super().__init__("checkpoint", 0)
        self.policy = policy
        self.saving = first is None
        self.replaying = first is not None
        self.ids: dict[Hashable, int] = {} if first is None else first.ids
        self.saved: dict[int, Any] = {} if first is None else first.saved
        self.kept: list[Any] = [] if first is None else first.kept

    def wrap(self, value: Any, i: int) -> Any:
        """The function's input ``i``: a tracer of this trace."""
        if not isinstance(value, Array):
            return value
        return _SavedTracer(self, value, self._id(("in", i)))

    def _id(self, key: Hashable) -> int:
        found = self.ids.get(key)
        if found is None:
            found = self.ids[key] = len(self.ids)
        return found

    def _operand(self, x: Any) -> Hashable:
        if type(x) is _SavedTracer and x._trace is self:
            return x.ref
        t: type[object] = type(cast(object, x))
        if t is int or t is bool:
            return (t, x)
        if t is float:
            return (float, float.hex(cast(float, x)))
        self.kept.append(x)
        return ("const", id(x))

    def process_primitive(
        self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        if not self.alive:
            _dead(self)
        values = [
            a.value if type(a) is _SavedTracer and a._trace is self else a for a in args
        ]
        key: Hashable = (prim, tuple(params.items()), tuple(map(self._operand, args)))
        ref: int | None
        try:
            ref = self._id(key)
        except TypeError:  # an unhashable parameter: computed each time
            ref = None
        if ref is not None and self.replaying and ref in self.saved:
            out = self.saved[ref]
        else:
            out = prim.bind(*values, **params)
            if (
                ref is not None
                and self.saving
                and self.policy(prim, *(aval_of(v) for v in values), **params)
            ):
                self.saved[ref] = out
        if prim.multiple_results:
            return tuple(self._out(o, ref, k) for k, o in enumerate(out))
        return self._out(out, ref, None)

    def _out(self, value: Any, ref: int | None, k: int | None) -> Any:
        if ref is None:
            return value
        return _SavedTracer(self, value, ref if k is None else self._id((ref, k)))


class _SavedTracer(Tracer):
    """A value of a checkpointed function's run with a policy: the value
    and the number of the equation that made it."""

    __slots__ = ("ref", "value")

    def __init__(self, trace: _SavingTrace, value: Any, ref: int) -> None:
        self._trace = trace
        self.value = value
        self.ref = ref

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.value.dtype  # type: ignore[no-any-return]

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.value.shape)

    @property
    def weak_type(self) -> bool:
        return self.value.weak_type  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"Saved<{aval_of(self)!r}>"

    def __array__(
        self, dtype: Any = None, copy: bool | None = None
    ) -> np.ndarray[Any, Any]:
        return np.asarray(self.value, dtype)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __index__(self) -> int:
        return int(self.value.__index__())

    def __reduce__(self) -> NoReturn:
        raise TypeError(f"cannot pickle {self!r}: it is being checkpointed")


class _Name:
    """What a policy is shown for a value named by :func:`checkpoint_name`
    (with the parameter ``name``): naming computes nothing, so it is no
    primitive of lax; it matters only to a checkpoint's policy."""

    name = "name"

    def __repr__(self) -> str:
        return "name_p"


#: The marker shown to policies for named values (JAX's ``name_p``).
name_p: Final = _Name()


def checkpoint_name(x: Any, name: str) -> Any:
    """``x``, named for the policies of :func:`checkpoint`
    (``save_only_these_names``, ``save_any_names_but_these``): inside a
    checkpointed function, a named value that its policy accepts is kept
    for the backward pass rather than computed again.

    Args:
      x: an array, or a pytree of arrays.
      name: the name.

    Returns:
      ``x`` itself.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> from typelattice.ad_checkpoint import checkpoint_name
    >>> policy = tl.checkpoint_policies.save_only_these_names("h")
    >>> def f(x):
    ...     return tnp.sin(checkpoint_name(tnp.cos(x), "h"))
    >>> f = tl.checkpoint(f, policy=policy)
    >>> tl.grad(f)(tnp.float32(0.0))
    Array(-0., dtype=float32)
    """
    if not ACTIVE:
        return x
    for leaf in tree.flatten(x)[0]:
        if type(leaf) is _SavedTracer:
            trace = cast(_SavingTrace, leaf._trace)
            if trace.saving and trace.policy(name_p, aval_of(leaf), name=name):
                trace.saved[leaf.ref] = leaf.value
    return x


def _unwrapped(trace: _SavingTrace, x: Any) -> Any:
    """``x`` with the tracers of ``trace`` replaced by their values."""

    def strip(leaf: Any) -> Any:
        if type(leaf) is _SavedTracer and leaf._trace is trace:
            return leaf.value
        return leaf

    return tree.tree_map(strip, x)
