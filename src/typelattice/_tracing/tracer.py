"""Tracers, the traces that own them, and their errors.

Every transformation runs a function on :class:`Tracer` objects, arrays
that belong to one :class:`Trace`: one run of the transformation. The two
base classes are the whole protocol. A trace has a ``name``, a ``level``
(see :func:`innermost_trace`), ``alive`` (False once it has ended) and
``process_primitive(prim, args, params)``: what binding a primitive to
operands among which its tracers are the innermost does. ``Primitive.bind``
has that one dispatch.

- :class:`RecordingTrace` (``jit``, ``eval_shape``) records each primitive
  as an equation; its :class:`JitTracer` objects have a shape, a dtype and
  a weak flag but no values: anything that needs a value (``bool(t)``,
  ``float(t)``, ``np.asarray(t)``, a Python ``if``) raises
  :class:`ConcretizationTypeError`.
- The differentiation traces of :mod:`typelattice._tracing.ad` apply the
  primitives' JVP rules, or record the linear map for transposition, in
  the same equations.

A jitted function called inside another trace runs there on its concrete
arguments as :class:`Placeholder` objects: ordinary arrays that compute
(binding a primitive on one computes it) but refuse every conversion to a
Python value, so that the function takes the code paths it takes when
traced by itself, as in JAX, not those of concrete values.
"""

# Package-internal: reads the arrays' and tracers' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import contextvars
from collections.abc import Callable, Hashable, Sequence
from typing import Any, ClassVar, NoReturn

import numpy as np

from typelattice import _core
from typelattice._array import ArrayImpl
from typelattice._basearray import Array

__all__ = [
    "ConcretizationTypeError",
    "JitTracer",
    "NoValues",
    "Placeholder",
    "RecordingTrace",
    "Trace",
    "Tracer",
    "UnexpectedTracerError",
    "current_trace",
    "innermost_trace",
]


class ConcretizationTypeError(TypeError):
    """A traced array's value was needed, and it is not known while tracing.

    Raised by ``bool``, ``int``, ``float``, ``complex``, ``operator.index``,
    ``np.asarray``, ``.item()`` and ``.tolist()`` on a :class:`Tracer`, and
    by operations whose result shape would depend on values (``nonzero``
    without ``size=``, boolean indexing). The message says what needed the
    value and how to avoid it.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> def positive_part(x):
    ...     return x if x > 0 else 0 * x
    >>> tl.eval_shape(positive_part, 1.0)
    Traceback (most recent call last):
    typelattice.ConcretizationTypeError: bool() (a Python `if`, ...
    >>> tl.eval_shape(lambda x: tnp.where(x > 0, x, 0 * x), 1.0)
    ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)
    """


class UnexpectedTracerError(Exception):
    """A tracer was used after the trace that made it had ended, or outside
    the trace running it (another thread).

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> kept = []
    >>> _ = tl.eval_shape(lambda x: kept.append(x) or x, tnp.zeros(2))
    >>> kept[0] + 1
    Traceback (most recent call last):
    typelattice.UnexpectedTracerError: Traced<float32[2]> was used ...
    """


_FIX = (
    "If the value comes from an argument, mark that argument static "
    "(jit(f, static_argnums=...) or static_argnames=...); to choose between "
    "values, use typelattice.numpy.where instead of Python control flow."
)


def describe(key: _core.Aval, shape: tuple[int, ...]) -> str:
    """``int32[3]`` (or ``int32[3] weak``): an abstract value, for messages."""
    dims = ",".join(str(d) for d in shape)
    weak = " weak" if key[1] else ""
    return f"{key[0]}[{dims}]{weak}"


def _concrete_error(key: _core.Aval, shape: tuple[int, ...], what: str) -> NoReturn:
    raise ConcretizationTypeError(
        f"{what} needs the value of a traced array ({describe(key, shape)}), "
        f"which is not known while tracing (jit, eval_shape). {_FIX}"
    )


class Trace:
    """One run of a transformation: the owner of its tracers.

    Subclasses say what applying a primitive to their tracers does
    (:meth:`process_primitive`). ``level`` orders nested traces: a
    primitive goes to the trace of the highest level among its operands'
    tracers (:func:`innermost_trace`), the others being constants to it."""

    __slots__ = ("alive", "level", "name")

    #: Whether this trace differentiates (its tracers carry tangents, or
    #: are tangents): a namespace function given its tracers computes with
    #: its lowering, and Python control flow on their primal values works.
    differentiates: ClassVar[bool] = False

    def __init__(self, name: str, level: int) -> None:
        self.name = name
        self.level = level
        self.alive = True

    def process_primitive(
        self, prim: Any, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        """The result of binding ``prim`` (a ``Primitive``) to ``args``,
        among which this trace's tracers are the innermost."""
        raise NotImplementedError(f"{type(self).__name__} processes no primitive")

    def process_lowering(
        self,
        key: Hashable,
        run: Callable[[list[Any]], Any],
        leaves: list[Any],
        structure: Hashable,
        evaluate: Callable[[list[Any]], Any],
    ) -> Any:
        """A namespace function on the flattened arguments ``leaves``
        (``key`` names it, ``structure`` says how the leaves make its
        arguments): by default its lowering, ``run(leaves)``, whose
        primitives this trace processes. A differentiation takes the value
        from ``evaluate`` on the primal values instead (the function's
        own), and may remember the lowering's linearization."""
        return run(leaves)


class RecordingTrace(Trace):
    """A trace of :func:`typelattice.jit` or :func:`typelattice.eval_shape`:
    the variables it made (a :class:`JitTracer` is a variable number) and
    the equations recorded on them, which a program replays."""

    __slots__ = (
        "abstract_only",
        "avals",
        "eqns",
        "parent",
        "stands_in",
    )

    #: Whether the traces it runs inside may record while it runs (a
    #: function traced for a control flow primitive: what it computes from
    #: their values alone is computed there, once).
    encloses: ClassVar[bool] = False

    def __init__(
        self, name: str, parent: RecordingTrace | None, abstract_only: bool
    ) -> None:
        # Below every differentiation trace (see innermost_trace): a
        # transformation started inside jit works on jit's tracers.
        super().__init__(name, -1)
        # The trace running when this one started, and whether this one is
        # only evaluated (eval_shape: tracers of enclosing traces may enter,
        # since nothing recorded here is run).
        self.parent = parent
        self.abstract_only = abstract_only
        # Whether its tracers stand for values that exist (a differentiation
        # remembering how it computed them): code that would take a shortcut
        # or a check on known values must refuse them instead.
        self.stands_in = False
        # Per variable: its (key, shape); a JitTracer is a variable number.
        self.avals: list[tuple[_core.Aval, tuple[int, ...]]] = []
        self.eqns: list[Any] = []

    def process_primitive(
        self, prim: Any, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        """Record ``prim`` on ``args``: tracers of this trace for its
        results, by its abstract evaluation (``Primitive.record``)."""
        return prim.record(self, args, params)

    def new_tracer(
        self, key: _core.Aval, shape: tuple[int, ...], promotes_as: object = None
    ) -> JitTracer:
        """A tracer of this trace for a new variable of abstract value
        ``key`` and ``shape``."""
        tracer = JitTracer(self, len(self.avals), key, shape, promotes_as)
        self.avals.append((key, shape))
        return tracer

    def record(self, eqn: Any) -> None:
        """Append an equation (:class:`typelattice._tracing.trace.Equation`)
        whose outputs are variables made by :meth:`new_tracer`."""
        self.eqns.append(eqn)


_current: contextvars.ContextVar[RecordingTrace | None] = contextvars.ContextVar(
    "typelattice_trace", default=None
)
# Traces running in any thread: while it is empty, namespace functions skip
# looking for tracers among their arguments.
ACTIVE: list[Trace] = []


def current_trace() -> RecordingTrace | None:
    """The trace running in this context, if any."""
    return _current.get()


class NoValues:
    """Every conversion to a value raises (through ``_refuse``): a base of
    the tracers that have no single value (jit's, vmap's)."""

    __slots__ = ()

    def _refuse(self, what: str) -> NoReturn:
        raise NotImplementedError

    def __bool__(self) -> bool:
        self._refuse("bool() (a Python `if`, `while`, `and`, `or` or `not`)")

    def __int__(self) -> int:
        self._refuse("int()")

    def __float__(self) -> float:
        self._refuse("float()")

    def __complex__(self) -> complex:
        self._refuse("complex()")

    def __index__(self) -> int:
        self._refuse("Use as a Python integer (operator.index)")

    def __array__(
        self, dtype: Any = None, copy: bool | None = None
    ) -> np.ndarray[Any, Any]:
        self._refuse("Conversion to a NumPy array (np.asarray)")

    def __dlpack__(self, **kwargs: Any) -> NoReturn:
        self._refuse("DLPack export")

    def item(self, *args: int) -> NoReturn:
        """Refused: a tracer has no values (see ``Array.item``).

        Args:
          *args: as for ``Array.item``.

        Raises:
          ConcretizationTypeError: always.

        >>> import typelattice as tl, typelattice.numpy as tnp
        >>> tl.eval_shape(lambda x: x.item(), tnp.zeros(()))
        Traceback (most recent call last):
        typelattice.ConcretizationTypeError: .item() needs ...
        """
        self._refuse(".item()")

    def tolist(self) -> NoReturn:
        """Refused: a tracer has no values (see ``Array.tolist``).

        Raises:
          ConcretizationTypeError: always.

        >>> import typelattice as tl, typelattice.numpy as tnp
        >>> tl.eval_shape(lambda x: x.tolist(), tnp.zeros(2))
        Traceback (most recent call last):
        typelattice.ConcretizationTypeError: .tolist() needs ...
        """
        self._refuse(".tolist()")


class Tracer(Array):
    """The base class of every tracer: an array that belongs to a trace.

    Every transformation gives a function tracers for its array arguments:
    :func:`typelattice.jit` and :func:`typelattice.eval_shape` tracers with
    no values, :func:`typelattice.grad`, ``jvp``, ``vjp`` and ``linearize``
    tracers that carry a value and its derivative. ``isinstance(t, Array)``
    holds for all of them, and every function of ``typelattice.numpy``
    accepts them.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> kinds = []
    >>> def f(x):
    ...     kinds.append(isinstance(x, tl.Tracer))
    ...     return x * x
    >>> _ = tl.eval_shape(f, 1.0), tl.grad(f)(1.0), tl.jit(f)(1.0)
    >>> kinds
    [True, True, True]
    """

    __slots__ = ("_trace",)

    _trace: Trace


class JitTracer(NoValues, Tracer):
    """An abstract array: shape, dtype and weak flag, no values.

    Made by :func:`typelattice.jit` and :func:`typelattice.eval_shape` for
    the arguments of the function they trace; ``isinstance(t, Array)`` holds.
    Every function of ``typelattice.numpy`` accepts tracers and returns
    tracers; what needs values raises :class:`ConcretizationTypeError`.

    Attributes:
      dtype: the dtype.
      shape: the shape.
      weak_type: the weak flag.

    >>> import typelattice as tl
    >>> import typelattice.numpy as tnp
    >>> def f(x):
    ...     print(type(x).__name__, x)
    ...     return x * 2
    >>> tl.eval_shape(f, tnp.zeros(3, 'int8'))
    JitTracer Traced<int8[3]>
    ShapeDtypeStruct(shape=(3,), dtype=int8)
    """

    __slots__ = ("_key", "_promotes_as", "_shape", "_var")

    def __init__(
        self,
        trace: RecordingTrace,
        var: int,
        key: _core.Aval,
        shape: tuple[int, ...],
        promotes_as: object = None,
    ) -> None:
        self._trace = trace
        self._var = var
        self._key = key
        self._shape = shape
        # What elementwise plans see: the key, or ``bool`` for a Python bool
        # argument (which, unlike a bool array, lets JAX's "weak only if all
        # operands are weak" functions stay weak).
        self._promotes_as = key if promotes_as is None else promotes_as

    @property
    def dtype(self) -> np.dtype[Any]:
        """The dtype of the arrays this tracer stands for."""
        return self._key[0]

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the arrays this tracer stands for."""
        return self._shape

    @property
    def weak_type(self) -> bool:
        """Whether it is weak (a Python scalar argument, or a weak array)."""
        return self._key[1]

    @property
    def aval(self) -> _core.Aval:
        """The abstract value: ``(dtype, weak_type)``."""
        return self._key

    def check(self) -> RecordingTrace:
        """This tracer's trace, if it is the one running (or encloses a running
        eval_shape); else raise.

        Returns:
          The trace that records operations on this tracer.

        Raises:
          UnexpectedTracerError: the trace has ended, or runs elsewhere.

        >>> import typelattice as tl, typelattice.numpy as tnp
        >>> names = []
        >>> _ = tl.eval_shape(lambda x: names.append(x.check().name) or x, 1)
        >>> names
        ['eval_shape(<lambda>)']
        """
        trace = self._trace
        inner = _current.get()
        # The running trace, or one enclosing it through eval_shape traces.
        while trace.alive and inner is not None:
            if inner is trace:
                return inner
            if not (inner.abstract_only or inner.encloses):
                break
            inner = inner.parent
        if trace.alive:
            raise UnexpectedTracerError(
                f"{self!r} belongs to a trace of {trace.name} that is running "
                "elsewhere (another thread, or an enclosing trace); pass it as "
                "an argument instead of closing over it"
            )
        raise UnexpectedTracerError(
            f"{self!r} was used after the trace of {trace.name} that made it "
            "ended: a traced function must return its results rather than "
            "store them (in a global, an attribute or a list) for later use"
        )

    def _refuse(self, what: str) -> NoReturn:
        self.check()
        _concrete_error(self._key, self._shape, what)

    def __repr__(self) -> str:
        return f"Traced<{describe(self._key, self._shape)}>"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(repr(self), spec)

    def __reduce__(self) -> NoReturn:
        raise TypeError(f"cannot pickle {self!r}: it has no values")

    def __copy__(self) -> JitTracer:
        return self

    def __deepcopy__(self, memo: Any) -> JitTracer:
        return self


def innermost_trace(args: Sequence[Any]) -> Trace | None:
    """The trace that processes a primitive applied to ``args``: the one of
    the highest level among the tracers' (differentiation traces are
    numbered from 0 as they start, inside the others; jit and eval_shape
    traces are below them all), or None when there is no tracer."""
    top: Trace | None = None
    best = -2
    for x in args:
        if isinstance(x, Tracer):
            trace = x._trace
            if trace.level > best:
                top, best = trace, trace.level
    return top


class Placeholder(NoValues, ArrayImpl):
    """An array whose values must not decide anything: every conversion
    to a Python value raises :class:`ConcretizationTypeError` (a jitted
    function's concrete arguments when it runs inside another trace)."""

    __slots__ = ()

    def _refuse(self, what: str) -> NoReturn:
        _concrete_error(self._key, self._value.shape, what)

    def __repr__(self) -> str:
        return f"Traced<{describe(self._key, self._value.shape)}>"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(repr(self), spec)


def placeholder(value: np.ndarray[Any, Any], key: _core.Aval) -> Placeholder:
    out: Placeholder = object.__new__(Placeholder)
    out._value = value
    out._key = key
    return out


def start(
    name: str, abstract_only: bool = False
) -> tuple[RecordingTrace, contextvars.Token[RecordingTrace | None]]:
    trace = RecordingTrace(name, _current.get(), abstract_only)
    return trace, enter(trace)


def enter(trace: RecordingTrace) -> contextvars.Token[RecordingTrace | None]:
    """Make ``trace`` (made with :func:`current_trace` as its parent) the
    running one; :func:`stop` ends it."""
    ACTIVE.append(trace)
    return _current.set(trace)


def stop(
    trace: RecordingTrace, token: contextvars.Token[RecordingTrace | None]
) -> None:
    trace.alive = False
    _current.reset(token)
    ACTIVE.remove(trace)


# Tracebacks show the public names (typelattice.ConcretizationTypeError).
for _cls in (ConcretizationTypeError, Tracer, UnexpectedTracerError):
    _cls.__module__ = "typelattice"
del _cls
