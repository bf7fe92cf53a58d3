"""Functions with derivatives of their own: :class:`custom_jvp` and
:class:`custom_vjp`, with JAX's API.

Called with no differentiation tracer among its arguments, such a function
runs as written: eagerly, or recorded primitive by primitive under ``jit``
and ``eval_shape``. When the innermost transformation among its arguments
is a differentiation (:mod:`typelattice._tracing.ad`'s ``JVPTrace``), the
rule given is used instead of differentiating the function's code:

- ``custom_jvp``: the rule ``jvp(primals, tangents) -> (primal_out,
  tangent_out)`` runs on the primal values and their tangents (in reverse
  mode the tangents are the linear record's variables, so the rule must be
  linear in them, as in JAX); its results become the outputs' primals and
  tangents.
- ``custom_vjp``: ``fwd(*args) -> (out, residuals)`` runs on the primal
  values; the outputs' tangents are made by one entry of the linear record
  whose transpose calls ``bwd(residuals, cotangents)``. Only reverse mode
  (``vjp``, ``grad``) can use it: forward mode (``jvp``) raises, as in JAX.

Since the rules run on whatever the primal values are (arrays, jit's
tracers, an outer differentiation's tracers), ``jit(grad(f))``,
``grad(jit(f))`` and derivatives of higher order need nothing more: an
outer differentiation differentiates what the rules compute.
"""

# Package-internal: reads the tracers' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Generic, ParamSpec, TypeVar, cast

import numpy as np

from typelattice import _config, _core
from typelattice._array import ArrayImpl, wrap
from typelattice._basearray import Array
from typelattice._tracing import batching, tree
from typelattice._tracing.ad import (
    JVPTrace,
    JVPTracer,
    LinearTrace,
    LinearTracer,
    RecordedCall,
    _dead,
)
from typelattice._tracing.jit import argument_value
from typelattice._tracing.primitive import (
    ShapedArray,
    UndefinedPrimal,
    Zero,
    aval_of,
    float0,
    instantiate,
    moveaxis,
    tangent_aval,
    zeros,
)
from typelattice._tracing.tracer import ACTIVE, innermost_trace

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "custom_jvp",
    "custom_vjp",
    "zero_from_primal",
]

P = ParamSpec("P")
R = TypeVar("R")


def _name(fun: Any) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _positional(
    fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], what: str
) -> tuple[Any, ...]:
    """The call's arguments as positional ones (keywords resolved by
    ``fun``'s signature, as JAX does)."""
    if not kwargs:
        return args
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as err:
        raise TypeError(f"{what} {_name(fun)}: {err}") from None
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(
            f"{what} {_name(fun)}: keyword-only arguments {sorted(bound.kwargs)} "
            "cannot be differentiated; pass them positionally"
        )
    return tuple(bound.args)


def _differentiation(leaves: Sequence[Any]) -> JVPTrace | None:
    """The differentiation that processes a call on ``leaves``: the
    innermost trace, when it is a JVPTrace."""
    trace = innermost_trace(leaves)
    if type(trace) is not JVPTrace:  # none, jit, eval_shape, or a tangent's record
        return None
    if not trace.alive:
        _dead(trace)
    return trace


def _split(trace: JVPTrace, leaf: Any) -> tuple[Any, Any]:
    """A leaf's primal (for ``trace``) and its tangent (a Zero when the
    leaf is a constant to it)."""
    if type(leaf) is JVPTracer and leaf._trace is trace:
        return leaf.primal, leaf.tangent
    if not isinstance(leaf, Array):  # a Python scalar: a weak array, as JAX
        leaf = argument_value(leaf, "custom derivative", 0, _x64())
    return leaf, Zero.of(leaf)


def _x64() -> bool:
    return _config.current().enable_x64


def _nondiff(nums: Sequence[int], n: int, what: str) -> tuple[int, ...]:
    positions = tuple(sorted({i % n if -n <= i < n else i for i in nums}))
    bad = [i for i in positions if not 0 <= i < n]
    if bad:
        raise ValueError(
            f"{what}: nondiff_argnums {tuple(nums)} name no argument of a call "
            f"with {n}; give positions of the arguments"
        )
    return positions


def _tangent_str(aval: ShapedArray) -> str:
    dims = ",".join(str(d) for d in aval.shape)
    name = "float0" if aval.dtype == float0 else aval.dtype.name
    return f"{name}[{dims}]"


class SymbolicZero:
    """A zero tangent or cotangent known to be zero without its values: what
    a rule defined with ``symbolic_zeros=True`` is given for an argument
    that is not being differentiated (and may return for a zero result).

    Attributes:
      aval: its abstract value (the tangent's shape, dtype and weak flag).

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> from typelattice.custom_derivatives import SymbolicZero
    >>> f = tl.custom_jvp(lambda x, y: x * y)
    >>> def f_jvp(primals, tangents):
    ...     (x, y), (tx, ty) = primals, tangents
    ...     print(type(ty).__name__)
    ...     return f(x, y), tx * y
    >>> _ = f.defjvp(f_jvp, symbolic_zeros=True)
    >>> one = tnp.float32(1.0)
    >>> tl.jvp(lambda x: f(x, tnp.float32(2.0)), (one,), (one,))
    SymbolicZero
    (Array(2., dtype=float32), Array(2., dtype=float32))
    """

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    @property
    def shape(self) -> tuple[int, ...]:
        """The tangent's shape."""
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """The tangent's dtype (float0 for an integer value's)."""
        return self.aval.dtype

    @property
    def weak_type(self) -> bool:
        """The tangent's weak flag."""
        return self.aval.weak_type

    def __repr__(self) -> str:
        return f"SymbolicZero({_tangent_str(self.aval)})"


class CustomVJPPrimal:
    """An argument (a leaf of one) of a ``fwd`` rule defined with
    ``symbolic_zeros=True``: its value and whether it is being
    differentiated.

    Attributes:
      value: the value.
      perturbed: whether it is being differentiated (has a tangent).

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> f = tl.custom_vjp(lambda x, y: x * y)
    >>> def fwd(x, y):
    ...     print(x.perturbed, y.perturbed)
    ...     return x.value * y.value, y.value
    >>> f.defvjp(fwd, lambda y, g: (g * y, None), symbolic_zeros=True)
    >>> tl.grad(f)(tnp.float32(3.0), tnp.float32(2.0))
    True False
    Array(2., dtype=float32)
    """

    __slots__ = ("perturbed", "value")

    def __init__(self, value: Any, perturbed: bool) -> None:
        self.value = value
        self.perturbed = perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def zero_from_primal(value: Any, symbolic_zeros: bool = False) -> Any:
    """Zero tangents for ``value`` (a pytree of arrays): arrays of zeros of
    each leaf's tangent type, or :class:`SymbolicZero` objects.

    Args:
      value: a pytree of arrays (or Python scalars).
      symbolic_zeros: give SymbolicZero objects instead of arrays.

    Returns:
      A pytree of ``value``'s structure.

    >>> import typelattice.numpy as tnp
    >>> from typelattice.custom_derivatives import zero_from_primal
    >>> zero_from_primal((tnp.ones(2), 3.0))
    (Array([0., 0.], dtype=float32), Array(0., dtype=float32, weak_type=True))
    """

    def zero(leaf: Any) -> Any:
        if not isinstance(leaf, Array):
            leaf = argument_value(leaf, "zero_from_primal", 0, _x64())
        aval = tangent_aval(aval_of(leaf))
        if symbolic_zeros:
            return SymbolicZero(aval)
        return _instantiated(Zero(aval))

    return tree.tree_map(zero, value)


class custom_jvp(Generic[P, R]):  # noqa: N801 (JAX's name)
    """A function whose derivative is the rule given with :meth:`defjvp`.

    Args:
      fun: the function; its arguments and results are arrays (pytrees of
        them).
      nondiff_argnums: positions of arguments that are not differentiated
        (Python values, functions); the rule takes them first.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> @tl.custom_jvp
    ... def log1pexp(x):
    ...     return tnp.log(1.0 + tnp.exp(x))
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return log1pexp(x), t * (1.0 - 1.0 / (1.0 + tnp.exp(x)))
    >>> tl.grad(log1pexp)(tnp.float32(100.0))
    Array(1., dtype=float32)
    """

    def __init__(
        self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()
    ) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        # Whether the rule is defjvps' (its primal output the function's).
        self.summed = False
        self.symbolic_zeros = False

    def __repr__(self) -> str:
        return f"<custom_jvp {_name(self.fun)}>"

    def defjvp(
        self, jvp: Callable[..., Any], symbolic_zeros: bool = False
    ) -> Callable[..., Any]:
        """Set the derivative rule: ``jvp(*nondiff_args, primals, tangents)
        -> (primal_out, tangent_out)``, ``primals`` and ``tangents`` tuples
        of the differentiated arguments; usable as a decorator.

        Args:
          jvp: the rule. ``tangent_out`` has ``primal_out``'s structure,
            and each leaf the shape and dtype of its primal's tangents.
          symbolic_zeros: give the rule a :class:`SymbolicZero` (not an
            array of zeros) for each argument that is not differentiated;
            the rule may return SymbolicZero tangents too.

        Returns:
          ``jvp`` itself.

        >>> import typelattice as tl, typelattice.numpy as tnp
        >>> f = tl.custom_jvp(tnp.sin)
        >>> _ = f.defjvp(lambda p, t: (f(*p), 2.0 * t[0]))
        >>> tl.jvp(f, (tnp.float32(0.0),), (tnp.float32(1.0),))[1]
        Array(2., dtype=float32)
        """
        self.jvp = jvp
        self.summed = False
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """Set the rule from one function per differentiated argument:
        ``jvp_i(tangent_i, primal_out, *primals)`` is the output's tangent
        due to argument ``i``'s (None: no contribution); they are summed.

        Args:
          *jvps: one rule (or None) per differentiated argument.

        >>> import typelattice as tl, typelattice.numpy as tnp
        >>> f = tl.custom_jvp(lambda x, y: x * y)
        >>> f.defjvps(lambda t, out, x, y: t * y, None)
        >>> tl.grad(f, argnums=(0, 1))(tnp.float32(2.0), tnp.float32(3.0))
        (Array(3., dtype=float32), Array(0., dtype=float32))
        """

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            whole = cast("Callable[..., Any]", self)
            out = whole(*primals)
            total: Any = None
            for rule, t in zip(jvps, tangents, strict=True):
                if rule is None:
                    continue
                part = rule(t, out, *primals)
                total = part if total is None else _add_trees(total, part)
            if total is None:
                total = tree.tree_map(lambda o: zeros(tangent_aval(aval_of(o))), out)
            return out, total

        self.jvp = jvp
        self.summed = True
        self.symbolic_zeros = False

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if not ACTIVE:  # no transformation runs anywhere: the function
            return self.fun(*args, **kwargs)
        what = "custom_jvp"
        call = _positional(self.fun, args, kwargs, what)
        fixed = _nondiff(self.nondiff_argnums, len(call), f"{what} {_name(self.fun)}")
        diff = [a for i, a in enumerate(call) if i not in fixed]
        leaves, in_tree = tree.flatten(diff)
        trace = _differentiation(leaves)
        if trace is None:
            batch = innermost_trace(leaves)
            if type(batch) is batching.BatchTrace and self.jvp is not None:
                return _batched(self, batch, call, fixed)  # type: ignore[no-any-return]
            fun: Callable[..., R] = self.fun
            return fun(*call)
        if self.jvp is None:
            raise AttributeError(
                f"No JVP defined for custom_jvp function {_name(self.fun)} using "
                "defjvp."
            )
        if self.summed and not fixed and trace.record is not None:
            # Reverse mode, a rule of defjvps: its primal output is the
            # function's own on the primal values, so the call is one
            # namespace call to the differentiation (remembered per
            # signature as elementwise calls are: see process_lowering).
            def run(given: list[Any]) -> Any:
                return self._by_rule(given, in_tree, call, fixed)

            def evaluate(primals: list[Any]) -> Any:
                whole = cast("Callable[..., Any]", self)
                return whole(*in_tree.unflatten(primals))

            return trace.process_lowering(  # type: ignore[no-any-return]
                self, run, leaves, in_tree, evaluate
            )
        return self._by_rule(leaves, in_tree, call, fixed)

    def _by_rule(
        self,
        leaves: list[Any],
        in_tree: tree.PyTreeDef,
        call: Sequence[Any],
        fixed: tuple[int, ...],
    ) -> R:
        """The call on ``leaves`` (the differentiated arguments' leaves),
        through the rule, for the innermost differentiation among them."""
        trace = _differentiation(leaves)
        assert trace is not None and self.jvp is not None
        split = [_split(trace, leaf) for leaf in leaves]
        primals = in_tree.unflatten([p for p, _ in split])
        given = (
            (SymbolicZero(t.aval) if type(t) is Zero else t for _, t in split)
            if self.symbolic_zeros
            else (_instantiated(t) for _, t in split)
        )
        tangents = in_tree.unflatten(list(given))
        statics = [call[i] for i in fixed]
        pair = self.jvp(*statics, tuple(primals), tuple(tangents))
        return _jvp_outputs(trace, pair, _name(self.jvp), _name(self.fun))  # type: ignore[no-any-return]


def _add_trees(x: Any, y: Any) -> Any:
    """Two tangents of one structure, summed leaf by leaf."""
    xs, structure = tree.flatten(x)
    ys, _ = tree.flatten(y)
    return structure.unflatten([a + b for a, b in zip(xs, ys, strict=True)])


def _instantiated(t: Any) -> Any:
    """A tangent for a rule: a Zero of a floating value becomes zeros, of
    an integer one float0 zeros (as JAX gives rules)."""
    if type(t) is not Zero:
        return t
    if t.aval.dtype == float0:
        return wrap_float0(t.aval)
    return instantiate(t)


def wrap_float0(aval: ShapedArray) -> Any:
    """float0 zeros of ``aval``'s shape (the tangent of an integer value,
    as a NumPy array: it holds no values)."""
    return np.zeros(aval.shape, float0)


def _jvp_outputs(trace: JVPTrace, pair: Any, rule: str, fun: str) -> Any:
    """The rule's ``(primal_out, tangent_out)``, checked, as the outputs of
    ``trace``."""
    if not isinstance(pair, tuple | list) or len(pair) != 2:  # pyright: ignore[reportUnknownArgumentType]
        raise TypeError(
            f"Custom JVP rule {rule} for function {fun} must produce a pair (list "
            "or tuple of length two) representing primal and tangent outputs, "
            f"but got {pair!r:.80}."
        )
    primal_out, tangent_out = cast("tuple[Any, Any]", pair)
    p_leaves, p_tree = tree.flatten(primal_out)
    t_leaves, t_tree = tree.flatten(tangent_out)
    if p_tree != t_tree:
        raise TypeError(
            f"Custom JVP rule {rule} for function {fun} must produce primal and "
            "tangent outputs with equal container (pytree) structures, but got "
            f"{p_tree} and {t_tree} respectively."
        )
    record = trace.record
    out: list[Any] = []
    for p, t in zip(p_leaves, t_leaves, strict=True):
        if not isinstance(p, Array):
            p = argument_value(p, f"custom_jvp {fun}", 0, _x64())
        if type(t) is SymbolicZero:  # (a rule of symbolic_zeros=True)
            t = Zero(t.aval)
        p_aval = aval_of(p)
        want = tangent_aval(p_aval)
        got = aval_of(t) if isinstance(t, Array | Zero) else None
        if got is None and getattr(t, "dtype", None) == float0:
            shape: tuple[int, ...] = tuple(getattr(t, "shape", ()))
            got = ShapedArray(shape, float0, want.weak_type)
        if got is None or got.shape != want.shape or got.dtype != want.dtype:
            shown = _tangent_str(got) if got is not None else type(t).__name__
            raise TypeError(
                "Custom JVP rule must produce primal and tangent outputs with "
                f"corresponding shapes and dtypes. Expected {_tangent_str(want)} "
                f"(tangent type of {_tangent_str(p_aval)}) but got {shown}."
            )
        if want.dtype == float0 or type(t) is Zero:
            out.append(p)
            continue
        if record is not None and not (
            isinstance(t, LinearTracer) and t._trace is record
        ):
            # Reverse mode: a tangent that is no variable of the record
            # does not depend on the inputs' tangents (zeros made of zeros).
            out.append(p)
            continue
        if got.weak_type != want.weak_type:
            t = _reweak(t, want.weak_type)
        out.append(trace.lift(p, t))
    return p_tree.unflatten(out)


def _reweak(t: Any, weak: bool) -> Any:
    """A tangent given the weak flag of its primal's (JAX's rules ignore
    the flag; typelattice's tangents carry it)."""
    if type(t) is ArrayImpl:
        return wrap(t._value, _core.aval(t._value.dtype, weak))
    if type(t) is LinearTracer:
        record = cast(LinearTrace, t._trace)
        return LinearTracer(record, t.ref, t.aval.update(weak_type=weak))
    raise TypeError(
        f"a custom derivative rule gave a tangent {t!r} whose weak flag is not "
        f"its primal's ({'weak' if weak else 'not weak'}): compute it from the "
        "given tangent (t * ...) so that it keeps the tangent's type"
    )


# -- custom_vjp ------------------------------------------------------------------


class custom_vjp(Generic[P, R]):  # noqa: N801 (JAX's name)
    """A function whose reverse-mode derivative is given by :meth:`defvjp`.

    Args:
      fun: the function; its arguments and results are arrays (pytrees of
        them).
      nondiff_argnums: positions of arguments that are not differentiated;
        ``bwd`` takes them first.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> @tl.custom_vjp
    ... def clip_gradient(lo, hi, x):
    ...     return x
    >>> def fwd(lo, hi, x):
    ...     return x, (lo, hi)
    >>> def bwd(res, g):
    ...     lo, hi = res
    ...     return (None, None, tnp.clip(g, lo, hi))
    >>> clip_gradient.defvjp(fwd, bwd)
    >>> tl.grad(lambda x: 3.0 * clip_gradient(-0.75, 0.75, x))(tnp.float32(1.0))
    Array(0.75, dtype=float32)
    """

    def __init__(
        self, fun: Callable[P, R], nondiff_argnums: Sequence[int] = ()
    ) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False

    def __repr__(self) -> str:
        return f"<custom_vjp {_name(self.fun)}>"

    def defvjp(
        self,
        fwd: Callable[..., Any],
        bwd: Callable[..., Any],
        symbolic_zeros: bool = False,
    ) -> None:
        """Set the rules: ``fwd(*args) -> (out, residuals)`` computes the
        output and what the backward pass needs; ``bwd(*nondiff_args,
        residuals, cotangent) -> tuple`` gives one cotangent per
        differentiated argument (None for a zero one).

        Args:
          fwd: the forward rule, of ``fun``'s signature.
          bwd: the backward rule.
          symbolic_zeros: give ``fwd`` each differentiated argument as a
            :class:`CustomVJPPrimal` (its value, and whether it is being
            differentiated), and ``bwd`` a :class:`SymbolicZero` for each
            output cotangent that is zero; ``bwd`` may return
            SymbolicZero cotangents too.

        >>> import typelattice as tl, typelattice.numpy as tnp
        >>> f = tl.custom_vjp(tnp.sin)
        >>> f.defvjp(lambda x: (tnp.sin(x), tnp.cos(x)), lambda c, g: (c * g,))
        >>> tl.grad(f)(tnp.float32(0.0))
        Array(1., dtype=float32)
        """
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        if not ACTIVE:  # no transformation runs anywhere: the function
            return self.fun(*args, **kwargs)
        what = "custom_vjp"
        name = _name(self.fun)
        call = _positional(self.fun, args, kwargs, what)
        fixed = _nondiff(self.nondiff_argnums, len(call), f"{what} {name}")
        diff = [a for i, a in enumerate(call) if i not in fixed]
        leaves, in_tree = tree.flatten(diff)
        trace = _differentiation(leaves)
        if trace is None:
            batch = innermost_trace(leaves)
            if type(batch) is batching.BatchTrace and self.fwd is not None:
                return _batched(self, batch, call, fixed)  # type: ignore[no-any-return]
            fun: Callable[..., R] = self.fun
            return fun(*call)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(
                f"No VJP defined for custom_vjp function {name} using defvjp."
            )
        record = trace.record
        if record is None:
            raise TypeError(
                "can't apply forward-mode autodiff (jvp) to a custom_vjp function. "
                f"({name} has a reverse-mode rule only: differentiate it with vjp "
                "or grad, or define its derivative with custom_jvp)"
            )
        split = [_split(trace, leaf) for leaf in leaves]
        primals = [p for p, _ in split]
        # fwd takes the whole call, the static arguments in their places.
        it = iter(in_tree.unflatten(primals))
        full = [call[i] if i in fixed else next(it) for i in range(len(call))]
        if self.symbolic_zeros:  # each differentiated leaf, and whether it is
            wrapped = iter(
                in_tree.unflatten(
                    [
                        CustomVJPPrimal(
                            p, isinstance(t, LinearTracer) and t._trace is record
                        )
                        for p, t in split
                    ]
                )
            )
            full = [call[i] if i in fixed else next(wrapped) for i in range(len(call))]
        pair = self.fwd(*full)
        if not isinstance(pair, tuple | list) or len(pair) != 2:  # pyright: ignore[reportUnknownArgumentType]
            raise TypeError(
                f"Custom VJP fwd rule {_name(self.fwd)} for function {name} must "
                "produce a pair (list or tuple of length two) where the first "
                "element represents the primal output and the second the "
                f"residuals, but got {pair!r:.80}."
            )
        out, residuals = cast("tuple[Any, Any]", pair)
        out_leaves, out_tree = tree.flatten(out)
        linear = [
            (i, t)
            for i, (_, t) in enumerate(split)
            if isinstance(t, LinearTracer) and t._trace is record
        ]
        if not linear:  # no input carries a tangent
            return out  # type: ignore[no-any-return]
        statics = [call[i] for i in fixed]
        entry = _VJPCall(
            name,
            self.bwd,
            statics,
            residuals,
            in_tree,
            [aval_of(p) if isinstance(p, Array) else None for p in primals],
            [i for i, _ in linear],
            out_tree,
            [aval_of(o) for o in out_leaves],
            self.symbolic_zeros,
        )
        outs = entry.record(record, [t for _, t in linear])
        return out_tree.unflatten(  # type: ignore[no-any-return]
            [
                o if t is None else trace.lift(o, t)
                for o, t in zip(out_leaves, outs, strict=True)
            ]
        )


class _VJPCall(RecordedCall):
    """One call of a custom_vjp function in the linear record: an entry of
    it (in the place of a primitive) whose outputs are the results'
    tangents and whose transpose is ``bwd``. Not a primitive of lax: it
    holds the call's residuals and exists only in that record."""

    def __init__(
        self,
        name: str,
        bwd: Callable[..., Any],
        statics: list[Any],
        residuals: Any,
        in_tree: tree.PyTreeDef,
        in_avals: list[ShapedArray | None],
        linear: list[int],
        out_tree: tree.PyTreeDef,
        out_avals: list[ShapedArray],
        symbolic_zeros: bool = False,
    ) -> None:
        self.name = f"custom_vjp_call[{name}]"
        self.symbolic_zeros = symbolic_zeros
        self.fun_name = name
        self.bwd = bwd
        self.statics = statics
        self.residuals = residuals
        self.in_tree = in_tree
        self.in_avals = in_avals
        self.linear = linear
        self.out_tree = out_tree
        self._outputs(out_avals)

    def bind(self, *args: Any, **params: Any) -> Any:
        raise TypeError(
            "can't apply forward-mode autodiff (jvp) to a custom_vjp function. "
            f"({self.fun_name} has a reverse-mode rule only: differentiate it "
            "with vjp or grad, or define its derivative with custom_jvp)"
        )

    def transpose(self, cts: list[Any], *args: Any) -> list[Any]:
        """The cotangents of the linear operands (the differentiated
        arguments that carry a tangent), from ``bwd``."""
        given = iter(cts)
        full: list[Any] = []
        for aval, floating in zip(self.out_avals, self.floating, strict=True):
            if floating:
                ct = next(given)
                if type(ct) is Zero:
                    ct = (
                        SymbolicZero(ct.aval) if self.symbolic_zeros else zeros(ct.aval)
                    )
                full.append(ct)
            else:
                full.append(wrap_float0(aval))
        got: Any = self.bwd(
            *self.statics, self.residuals, self.out_tree.unflatten(full)
        )
        if isinstance(got, list):  # (JAX accepts a list)
            got = tuple(cast("list[Any]", got))  # type: ignore[redundant-cast]
        structure = self.in_tree.unflatten(list(range(len(self.in_avals))))
        if not isinstance(got, tuple) or len(got) != len(structure):  # pyright: ignore[reportUnknownArgumentType]
            raise TypeError(
                "Custom VJP bwd rule must produce an output with the same "
                "container (pytree) structure as the args tuple of the primal "
                "function, and in particular must produce a tuple of length "
                "equal to the number of arguments to the primal function, but "
                f"got bwd output structure {tree.flatten(got)[1]} for primal "
                f"input structure {self.in_tree} (bwd of {self.fun_name} must "
                f"return a tuple of {len(structure)} cotangents, None for a "
                "zero one)."
            )
        cotangents: list[Any] = []
        labels: list[str] = []
        for k, (arg, ct) in enumerate(zip(structure, got, strict=True)):  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
            positions, arg_tree = tree.flatten(arg)
            if arg_tree.is_leaf:
                labels.append(f"output[{k}]")
            else:
                labels += [f"output[{k}] (leaf {j})" for j in range(len(positions))]
            if ct is None:
                cotangents += [None] * len(positions)
                continue
            leaves, _ = tree.flatten(ct)
            if len(leaves) != len(positions):
                raise TypeError(
                    "Custom VJP bwd rule must produce an output with the same "
                    "container (pytree) structure as the args tuple of the primal "
                    f"function, but for {self.fun_name} it gave {ct!r:.80} for an "
                    f"argument of {len(positions)} arrays."
                )
            cotangents += leaves
        results: list[Any] = []
        for i in self.linear:
            results.append(
                _cotangent(cotangents[i], self.in_avals[i], self.fun_name, labels[i])
            )
        assert len(args) == len(results)
        assert all(type(a) is UndefinedPrimal for a in args)
        return results


def _cotangent(ct: Any, aval: ShapedArray | None, name: str, at: str) -> Any:
    """A cotangent from ``bwd`` (at ``at`` in its output), checked against
    its input's abstract value (None: a zero one).

    Note: JAX returns a cotangent of another floating dtype as it is (a
    float16 gradient for a float32 argument); typelattice refuses it, since
    a gradient has its argument's dtype."""
    if ct is None or aval is None or type(ct) is SymbolicZero:
        return None
    if not isinstance(ct, Array):
        ct = argument_value(ct, f"custom_vjp {name}", 0, False)
    got = aval_of(ct)
    if got.shape != aval.shape or got.dtype != aval.dtype:
        what = "shapes" if got.shape != aval.shape else "dtypes"
        raise ValueError(
            "Custom VJP bwd rule must produce an output with the same type as "
            f"the args tuple of the primal function, but at {at} the bwd rule "
            f"produced an output of type {_tangent_str(got)} corresponding to "
            f"an input of type {_tangent_str(aval)}, so the {what} do not match "
            f"(the bwd rule of {name} must give each cotangent its argument's "
            "shape and dtype: convert it with .astype or reshape it)"
        )
    if got.weak_type != aval.weak_type:
        ct = _reweak(ct, aval.weak_type)
    return ct


# -- under vmap ---------------------------------------------------------------------


def _batched(
    obj: custom_jvp[Any, Any] | custom_vjp[Any, Any],
    trace: batching.BatchTrace,
    call: Sequence[Any],
    fixed: tuple[int, ...],
) -> Any:
    """A call of ``obj`` whose innermost argument is batched by ``trace``
    (a vmap): the same call on the batched values of a custom function
    whose function and rules are ``obj``'s vmapped, so that a
    differentiation outside the vmap still uses the rules."""
    statics = [call[i] for i in fixed]
    diff = [a for i, a in enumerate(call) if i not in fixed]
    leaves, in_tree = tree.flatten(diff)
    values: list[Any] = []
    dims: list[int | None] = []
    for leaf in leaves:
        if type(leaf) is batching.BatchTracer and leaf._trace is trace:
            values.append(leaf.value)
            dims.append(leaf.batch_dim)
        else:
            values.append(leaf)
            dims.append(None)
    axes = tuple(in_tree.unflatten(dims))
    size = trace.size

    def whole(diff_args: Sequence[Any]) -> list[Any]:
        it = iter(diff_args)
        return [call[i] if i in fixed else next(it) for i in range(len(call))]

    def fun(*diff_args: Any) -> Any:
        return obj.fun(*whole(diff_args))

    new: Any
    if isinstance(obj, custom_jvp):
        rule = obj.jvp
        assert rule is not None
        new = custom_jvp(batching.vmap(fun, in_axes=axes, axis_size=size))

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            def one(p: Any, t: Any) -> Any:
                return rule(*statics, p, t)

            return batching.vmap(one, in_axes=(axes, axes), axis_size=size)(
                primals, tangents
            )

        new.defjvp(jvp)
    else:
        fwd, bwd = obj.fwd, obj.bwd
        assert fwd is not None and bwd is not None
        new = custom_vjp(batching.vmap(fun, in_axes=axes, axis_size=size))

        def fwd_batched(*diff_args: Any) -> Any:
            def one(*a: Any) -> Any:
                return fwd(*whole(a))

            return batching.vmap(one, in_axes=axes, axis_size=size)(*diff_args)

        def bwd_batched(residuals: Any, g: Any) -> Any:
            def one(r: Any, c: Any) -> Any:
                return tuple(bwd(*statics, r, c))

            cts = batching.vmap(one, axis_size=size)(residuals, g)
            # An argument the same for every example gets the sum of the
            # examples' cotangents; a batched one its own, along its axis.
            return tuple(_unbatched_ct(ct, d) for ct, d in zip(cts, axes, strict=True))

        new.defvjp(fwd_batched, bwd_batched)
    out = new(*in_tree.unflatten(values))
    return tree.tree_map(lambda o: batching.BatchTracer(trace, o, 0), out)


def _unbatched_ct(ct: Any, axis: Any) -> Any:
    """A cotangent batched along 0, for an argument of in_axes ``axis``
    (a prefix of its structure)."""
    if ct is None:
        return None
    if axis is None:
        return tree.tree_map(batching.sum_batch, ct)
    if isinstance(axis, int):
        return tree.tree_map(lambda c: moveaxis(c, 0, axis), ct)
    if isinstance(axis, dict):
        return {k: _unbatched_ct(ct[k], axis[k]) for k in ct}
    return type(ct)(_unbatched_ct(c, a) for c, a in zip(ct, axis, strict=True))
