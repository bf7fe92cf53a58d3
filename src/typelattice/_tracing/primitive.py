"""The :class:`Primitive` type, the abstract values it computes with, and what
every primitive shares: operand conversion and the checks whose messages
follow ``jax.lax``.

A primitive is a named operation with rules registered at its definition::

    neg_p = Primitive("neg")

    @neg_p.def_abstract_eval
    def _neg_abstract(x: ShapedArray) -> ShapedArray: ...

    @neg_p.def_impl
    def _neg_impl(x: np.ndarray) -> np.ndarray: ...

:meth:`Primitive.bind` runs the abstract evaluation first (it checks dtypes
and shapes and raises ``jax.lax``'s errors), then the implementation on the
operands' NumPy values; the result has the implementation's dtype and shape
and the abstract evaluation's weak flag. The implementation is the one of
the backend in force (:mod:`typelattice._backends`): ``def_impl`` and
``def_fast`` register the NumPy backend's, the default. The tests check,
for every recorded call, that the implementation's dtype and shape are the
ones the abstract evaluation announced.

Eagerly, what the abstract evaluation decides depends only on the operands'
dtypes, weak flags and shapes and on the parameters, so it is decided once
per such signature: an :class:`EagerPlan` (the function to call and the
result's abstract value), the NumPy backend's kept on the primitive (other
backends' are made per call). A call whose signature has
a plan runs the plan's function and wraps its result, nothing else; a call
whose checks fail has no plan and raises every time. When the C accelerator
is built, ``Primitive.bind`` and the public functions of :mod:`typelattice.lax`
whose arguments are all operands read the same plans in C
(``_speedups.FastPrimitive``): they call the plan's function and wrap its
result as :func:`_result_as` does, and hand every other call (a tracer or any
other operand, a signature without a plan, a jit or eval_shape trace
running in this context, another backend in force anywhere) to the Python
functions here.

An operand holding another library's array (``BackendArray``: a torch
tensor, a CuPy or Dask array) makes that library's backend compute, on the
native values, whatever backend :func:`use` puts in force; the results
stay on its device (:meth:`Primitive._bind_native`, docs/backends.md).

Binding dispatches on the operands: on arrays it computes; when an operand
is a tracer, the trace that owns the innermost one processes the primitive
instead (:class:`Trace`'s ``process_primitive``): a jit or eval_shape trace
records it in its program (:mod:`typelattice._tracing.trace`), a
differentiation trace applies its JVP rule or records it for transposition
(:mod:`typelattice._tracing.ad`). The concrete primitives, and how their
public functions convert arguments, are in ``typelattice._lax``.

Differentiation rules
---------------------

Every primitive has a JVP rule, and every primitive that is linear in some
of its operands a transpose rule, registered at its definition. The rules
are written with the primitives themselves (their public functions or
``bind``), never with NumPy on values, so that a transformation that traces
them records primitives again: second derivatives are JVPs of JVP rules.

- A JVP rule is ``jvp(primals, tangents, **params) -> (primal_out,
  tangent_out)``: ``primals`` are the operands, ``tangents`` one per
  operand, each an array of the operand's shape, dtype and weak flag or a
  symbolic :class:`Zero`; for ``multiple_results`` both outputs are tuples.
  The tangent out has exactly the primal out's shape, dtype and weak flag,
  or is a :class:`Zero` of :func:`tangent_aval` of it.
- The tangent of a bool or integer value is always a :class:`Zero` whose
  abstract value has the dtype :data:`float0` (as JAX's ``float0``: an
  empty structured dtype that holds no value), shape and weak flag kept.
  Integer-valued results of float operands (comparisons, ``floor``,
  ``argmax``...) have zero tangents too: :func:`defjvp_zero`.
- A transpose rule is ``transpose(ct, *args, **params) -> cotangents``, for
  a primitive linear in the operands given as :class:`UndefinedPrimal`
  (the other operands are arrays: constants of the linear map). ``ct`` is
  the output's cotangent, never a :class:`Zero` (a transformation skips
  such equations). It returns one entry per operand: for an
  ``UndefinedPrimal``, its cotangent, with exactly its shape, dtype and
  weak flag (or a :class:`Zero`); ``None`` for the others. A transpose is
  the *linear* transpose, never conjugated: ``sum(ct * L(t)) ==
  sum(T(ct) * t)``; for complex numbers ``grad`` follows JAX's convention
  (``grad(lambda z: abs(z)**2)(1+2j) == 2-4j``) from these rules alone.

Helpers register the common forms: :func:`defjvp` (a rule per operand for
elementwise primitives), :func:`defjvp2` (rules that also use the output),
:func:`deflinear` (linear in every operand: the JVP applies the primitive to
the tangents), :func:`defbilinear` (``mul``, ``dot_general``),
:func:`defjvp_zero` and :func:`defjvp_unsupported`. Tangents are summed with
the primitive ``add_any`` (defined here: it adds two tangents or cotangents
of one abstract value).
"""

# Package-internal: reads the arrays' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Final, NamedTuple, TypeVar

import numpy as np

from typelattice import _core, _dtypes
from typelattice._array import (
    ArrayImpl,
    BackendArray,
    _new_object,
    mixed_error,
    native_result,
    wrap,
)
from typelattice._backends import IN_USE, NUMPY, Backend
from typelattice._backends import current as current_backend
from typelattice._core import _EXTOBJ, _IGNORE
from typelattice._promotion import _speedups
from typelattice._tracing.trace import Equation, Source, shown
from typelattice._tracing.tracer import (
    ACTIVE,
    JitTracer,
    RecordingTrace,
    current_trace,
    innermost_trace,
)

__all__ = [
    "PRIMITIVES",
    "Primitive",
    "ShapedArray",
    "UndefinedPrimal",
    "Zero",
    "add_any_p",
    "add_tangents",
    "aval_of",
    "batch_by_looping",
    "bdim_at_front",
    "batch_size",
    "broadcast_batch",
    "defbatch_axes",
    "defbatch_elementwise",
    "example_aval",
    "moveaxis",
    "innermost_trace",
    "defbilinear",
    "defjvp",
    "defjvp2",
    "defjvp_unsupported",
    "defjvp_zero",
    "deflinear",
    "float0",
    "full",
    "instantiate",
    "is_undefined",
    "tangent_aval",
    "zeros",
]

DType = np.dtype[Any]
NDArray = np.ndarray[Any, Any]
Shape = tuple[int, ...]


class ShapedArray(NamedTuple):
    """An abstract value: what a primitive's rules know of an operand.

    >>> ShapedArray((2, 3), np.dtype('float32'), weak_type=True)
    ShapedArray(float32[2,3], weak_type=True)
    """

    shape: Shape
    dtype: DType
    weak_type: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def update(
        self,
        shape: Shape | None = None,
        dtype: DType | None = None,
        weak_type: bool | None = None,
    ) -> ShapedArray:
        """This value with some fields replaced."""
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        dims = ",".join(str(d) for d in self.shape)
        name = "float0" if self.dtype == float0 else self.dtype.name
        return f"ShapedArray({name}[{dims}]{weak})"


AbstractEval = Callable[..., Any]
Impl = Callable[..., Any]


class EagerPlan(NamedTuple):
    """How :meth:`Primitive.bind` computes on arrays of one signature
    (operands' dtypes, weak flags and shapes, and parameters) whose checks
    passed. ``_speedups.c`` reads it by position: keep the order.

    >>> from typelattice._lax._elementwise import add_p
    >>> import typelattice.numpy as tnp
    >>> x = tnp.zeros(3, 'float32')
    >>> add_p.eager_plan([x, x], {})
    EagerPlan(fn=<ufunc 'add'>, with_params=False, out_key=Aval(float32), \
out=ShapedArray(float32[3]))
    """

    #: The backend's plain function for these operands (see
    #: :meth:`Primitive.def_fast`), else its implementation.
    fn: Callable[..., Any]
    #: Whether ``fn`` takes the parameters (the implementation does).
    with_params: bool
    #: The result's interned (dtype, weak flag); None for several results.
    out_key: _core.Aval | None
    #: The abstract evaluation's result (a tuple for several results).
    out: Any


class NativePlan(NamedTuple):
    """How :meth:`Primitive.bind` computes on operands among which another
    library's arrays, of one backend, device and signature."""

    #: The backend's implementation.
    impl: Callable[..., Any]
    #: The abstract evaluation's result (a tuple for several results).
    out: Any
    #: The result's interned (dtype, weak flag); None for several results.
    out_key: _core.Aval | None
    #: Whether some operands are NumPy-held (converted to the device).
    host: bool


#: Every primitive, by name, in the order of definition.
PRIMITIVES: dict[str, Primitive] = {}


class Primitive:
    """A named operation of :mod:`typelattice.lax` and its rules.

    Rules are registered where the primitive is defined, with the ``def_*``
    methods (each returns its argument, so they serve as decorators):

    - ``def_impl`` (and ``def_fast``): the NumPy backend's implementation,
      on NumPy arrays (and the primitive's keyword parameters); other
      backends register theirs in their own table (see
      :mod:`typelattice._backends`);
    - ``def_abstract_eval``: :class:`ShapedArray` in, ``ShapedArray`` out
      (a tuple of them with ``multiple_results``), raising on invalid input;
    - ``def_jvp`` and ``def_transpose``: the differentiation rules (see the
      module's notes for their signatures), stored for the transformations
      to use;
    - ``def_batch``: the batching rule, for :func:`typelattice.vmap`.

    >>> from typelattice._lax._elementwise import neg_p
    >>> neg_p
    Primitive('neg')
    >>> neg_p.abstract_eval(ShapedArray((3,), np.dtype('int8')))
    ShapedArray(int8[3])
    """

    __slots__ = (
        "abstract_eval",
        "batch",
        "eager",
        "jvp",
        "multiple_results",
        "name",
        "native",
        "noop",
        "transpose",
    )

    name: str
    multiple_results: bool
    abstract_eval: AbstractEval | None
    jvp: Callable[..., Any] | None
    transpose: Callable[..., Any] | None
    batch: Callable[..., Any] | None
    noop: Callable[..., bool] | None
    #: The NumPy backend's eager plans by signature (see :meth:`eager_plan`);
    #: one dict for the primitive's life (the C accelerator holds it),
    #: emptied when full or when a rule changes.
    eager: dict[tuple[Any, ...], EagerPlan]
    #: The plans on other libraries' arrays, by backend, device and
    #: signature (see :meth:`_bind_native`); emptied as :attr:`eager` is.
    native: dict[tuple[Any, ...], NativePlan]

    def __init__(self, name: str, *, multiple_results: bool = False) -> None:
        if name in PRIMITIVES:
            raise ValueError(f"a primitive named {name!r} is defined already")
        self.name = name
        self.multiple_results = multiple_results
        self.abstract_eval = None
        self.jvp = None
        self.transpose = None
        self.batch = None
        self.noop = None
        self.eager = {}
        self.native = {}
        PRIMITIVES[name] = self

    def __repr__(self) -> str:
        return f"Primitive({self.name!r})"

    def def_impl(self, impl: Impl) -> Impl:
        """Register the NumPy backend's implementation."""
        return NUMPY.def_impl(self, impl)

    @property
    def impl(self) -> Impl | None:
        """The NumPy backend's implementation (None before one is
        registered)."""
        return NUMPY.impls.get(self)

    @property
    def fast(self) -> Callable[..., Callable[..., Any] | None] | None:
        """The NumPy backend's fast rule, if any (see :meth:`def_fast`)."""
        return NUMPY.fast.get(self)

    def def_abstract_eval(self, rule: AbstractEval) -> AbstractEval:
        self.abstract_eval = rule
        self.eager.clear()
        return rule

    def def_jvp(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.jvp = rule
        return rule

    def def_transpose(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.transpose = rule
        return rule

    def def_batch(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """Register the batching rule (see the module's notes): what
        :func:`typelattice.vmap` does with this primitive."""
        self.batch = rule
        return rule

    def evaluate(self, avals: list[ShapedArray], params: dict[str, Any]) -> Any:
        """The abstract evaluation, remembered per abstract values and
        parameters (it depends on nothing else): a differentiated or traced
        operation evaluates the same few again and again."""
        key = (self, *avals, *params.items())
        try:
            return _EVALUATED[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable parameter: not remembered
            return self.abstract_eval(*avals, **params)  # type: ignore[misc]
        out = self.abstract_eval(*avals, **params)  # type: ignore[misc]
        if len(_EVALUATED) >= _EVALUATED_MAX:
            _EVALUATED.clear()
        _EVALUATED[key] = out
        return out

    def eager_plan(
        self, args: Sequence[Any], params: dict[str, Any], backend: Backend = NUMPY
    ) -> EagerPlan:
        """The plan of this primitive on arrays (``ArrayImpl``) ``args`` and
        ``params`` computed by ``backend``: the abstract evaluation runs
        (and raises on invalid operands), then the NumPy backend's plan is
        remembered under :func:`eager_key`, unless a parameter is
        unhashable (other backends' plans are made per call)."""
        if self.abstract_eval is None:
            raise NotImplementedError(f"primitive {self.name} has no rules")
        impl = backend.impl(self)
        avals = [ShapedArray(x._value.shape, *x._key) for x in args]
        out = self.evaluate(avals, params)
        rule = backend.fast.get(self)
        fast = None if rule is None else rule(*avals, **params)
        out_key = None
        if not self.multiple_results:
            out_key = _core.aval(out.dtype, out.weak_type)
        if fast is None:
            plan = EagerPlan(impl, True, out_key, out)
        else:
            plan = EagerPlan(fast, False, out_key, out)
        if backend is not NUMPY:
            return plan
        try:
            key = eager_key(args, params)
            if len(self.eager) >= _EVALUATED_MAX:
                self.eager.clear()
            self.eager[key] = plan
        except TypeError:  # an unhashable parameter: not remembered
            pass
        return plan

    def def_fast(
        self, rule: Callable[..., Callable[..., Any] | None]
    ) -> Callable[..., Callable[..., Any] | None]:
        """``rule(*avals, **params)``: a plain NumPy function computing the
        primitive for operands of these abstract values (the same values
        as the implementation, without its checks and conversions), or None.
        Programs (jit) and eager calls call it instead of the
        implementation. It is the NumPy backend's."""
        return NUMPY.def_fast(self, rule)

    def def_noop(self, test: Callable[..., bool]) -> Callable[..., bool]:
        """``test(aval, **params)``: whether the primitive returns its first
        operand unchanged (a reshape to its own shape...): a tracer is then
        returned as it is, and nothing is recorded."""
        self.noop = test
        return test

    def record(
        self, trace: RecordingTrace, args: Sequence[Any], params: dict[str, Any]
    ) -> Any:
        """Record this primitive on ``args`` (tracers of ``trace`` among
        them) in ``trace`` (what its ``process_primitive`` does): tracers
        for its results, by its abstract evaluation."""
        if self.abstract_eval is None:
            raise NotImplementedError(f"primitive {self.name} has no rules")
        current_backend().impl(self)  # (raises when none computes it)
        for x in args:
            if isinstance(x, JitTracer) and x._trace is not current_trace():
                x.check()  # raises: a leaked tracer, or another trace's
        avals = [aval_of(x) for x in args]
        out = self.evaluate(avals, params)
        ins: list[tuple[int, ShapedArray] | tuple[None, Any]] = [
            (x._var, a) if isinstance(x, JitTracer) else (None, x._value)
            for x, a in zip(args, avals, strict=True)
        ]
        outs = out if self.multiple_results else (out,)
        tracers = [
            trace.new_tracer(_core.aval(a.dtype, a.weak_type), a.shape) for a in outs
        ]
        trace.record(PrimitiveEquation(self, params, ins, [t._var for t in tracers]))
        return tuple(tracers) if self.multiple_results else tracers[0]

    def bind(self, *args: Any, **params: Any) -> Any:
        """Apply the primitive to arrays (the result computed, an array
        that owns its data or views an operand's, as NumPy's result does,
        or a tuple of them with ``multiple_results``), or to tracers
        (processed by the innermost tracer's trace)."""
        for x in args:
            if type(x) is not ArrayImpl:
                if type(x) is BackendArray:
                    for a in args:
                        if type(a) is not BackendArray and type(a) is not ArrayImpl:
                            break
                    else:
                        return self._bind_native(args, params)
                trace = innermost_trace(args)
                if trace is None:
                    for a in args:
                        if type(a) is BackendArray:
                            return self._bind_native(args, params)
                    break
                noop = self.noop
                if noop is not None and noop(aval_of(args[0]), **params):
                    return args[0]  # (a tracer: nothing to record)
                return trace.process_primitive(self, args, params)
        backend = NUMPY
        if IN_USE:  # another backend is in force somewhere: which one here?
            backend = current_backend()
        if backend is NUMPY:
            try:
                plan = self.eager[eager_key(args, params)]
            except (KeyError, TypeError):  # (TypeError: an unhashable parameter)
                plan = self.eager_plan(args, params)
        else:
            plan = self.eager_plan(args, params, backend)
        values = [x._value for x in args]
        if ACTIVE:
            # Constants made larger (a broadcast, a pad) or made from
            # nothing (iota) while jit or eval_shape runs are made by the
            # program when it runs: tracing allocates nothing of their
            # size, and the program holds only the small operands (the
            # seed of jit(grad(f)), a Python scalar broadcast).
            # Not in a function traced for a control flow primitive: the
            # values computed there belong to the transformations it runs
            # inside (a gradient's primal), and its trace ends first.
            trace = current_trace()
            if (
                trace is not None
                and not trace.encloses
                and (not values or _grows(plan.out, values))
            ):
                return trace.process_primitive(self, args, params)
        if backend is not NUMPY:
            result = _compute_on(backend, plan, values, params)
        else:
            token = _EXTOBJ.set(_IGNORE)  # (as _core.ignore_fp_errors)
            try:
                if plan.with_params:
                    result = plan.fn(*values, **params)
                else:
                    result = plan.fn(*values)
            finally:
                _EXTOBJ.reset(token)
        if plan.out_key is None:
            return tuple(
                _result(v, a.weak_type) for v, a in zip(result, plan.out, strict=True)
            )
        return _result_as(result, plan.out_key)

    def _bind_native(self, args: Sequence[Any], params: dict[str, Any]) -> Any:
        """Apply the primitive to arrays among which another library's
        (:class:`BackendArray`): that library's backend computes it, on
        the native values, and the results stay on its device.

        The operands of another library must all be of one backend and
        device. NumPy-held operands join them, converted to the device:
        Python scalars arrive so, and the constants that the namespace's
        functions and the differentiation rules make (index arrays, masks,
        zeros, seeds). A caller's NumPy-held arrays larger than 0-d are
        refused before they get here, by the functions that take them
        (:func:`typelattice._array.check_mixed`).

        What the abstract evaluation decides is decided once per backend,
        device and signature (a :class:`NativePlan` in :attr:`native`), as
        the NumPy backend's eager plans are.

        Raises:
          TypeError: operands of several backends or devices.
        """
        if len(args) == 2 and not params:  # (most calls: spelled out)
            x, y = args
            if (
                type(x) is BackendArray
                and type(y) is BackendArray
                and y._backend is x._backend
                and y._device == x._device
            ):
                try:
                    plan = self.native[
                        (x._backend, x._device, x._key, x._shape, y._key, y._shape)
                    ]
                except KeyError:
                    pass
                else:
                    token = _EXTOBJ.set(_IGNORE)
                    try:
                        value = plan.impl(x._value, y._value)
                    finally:
                        _EXTOBJ.reset(token)
                    if CHECK_NATIVE or plan.out_key is None:
                        return self._native_result(value, plan, x._backend, x._device)
                    return native_result(
                        value, plan.out_key, plan.out.shape, x._backend, x._device
                    )
        first: BackendArray | None = None
        parts: list[Any] = []
        for x in args:
            if type(x) is BackendArray:
                if first is None:
                    first = x
                elif x._backend is not first._backend or x._device != first._device:
                    raise mixed_error(f"lax.{self.name}", first, x)
                parts.append(x._key)
                parts.append(x._shape)
            else:  # NumPy-held: converted below, once the device is known
                parts.append(x._key)
                parts.append(None)
                parts.append(x._value.shape)
        assert first is not None
        backend, device = first._backend, first._device
        key = (backend, device, *parts, *params.items())
        try:
            plan = self.native[key]
        except KeyError:
            plan = self._native_plan(args, params, backend)
            if len(self.native) >= _EVALUATED_MAX:
                self.native.clear()
            self.native[key] = plan
        except TypeError:  # (an unhashable parameter: not remembered)
            plan = self._native_plan(args, params, backend)
        if plan.host:
            ins = [
                x._value
                if type(x) is BackendArray
                else _on_device(x._value, backend, device)
                for x in args
            ]
        else:
            ins = [x._value for x in args]
        token = _EXTOBJ.set(_IGNORE)  # (a backend computing with NumPy)
        try:
            result = plan.impl(*ins, **params)
        finally:
            _EXTOBJ.reset(token)
        if CHECK_NATIVE or plan.out_key is None:
            return self._native_result(result, plan, backend, device)
        return native_result(result, plan.out_key, plan.out.shape, backend, device)

    def _native_result(
        self, result: Any, plan: NativePlan, backend: Backend, device: str
    ) -> Any:
        """The Array (or tuple of them) of ``plan``'s native result."""
        if self.multiple_results:
            return tuple(
                self._native_out(v, a, backend, device)
                for v, a in zip(result, plan.out, strict=True)
            )
        return self._native_out(result, plan.out, backend, device)

    def _native_plan(
        self, args: Sequence[Any], params: dict[str, Any], backend: Backend
    ) -> NativePlan:
        """The :class:`NativePlan` of operands ``args`` (the abstract
        evaluation run: it raises on invalid operands)."""
        if self.abstract_eval is None:
            raise NotImplementedError(f"primitive {self.name} has no rules")
        avals: list[ShapedArray] = []
        host = False
        for x in args:
            if type(x) is BackendArray:
                avals.append(ShapedArray(x._shape, *x._key))
            else:
                avals.append(ShapedArray(x._value.shape, *x._key))
                host = True
        out = self.evaluate(avals, params)
        impl = backend.impl(self)
        out_key = (
            None if self.multiple_results else _core.aval(out.dtype, out.weak_type)
        )
        return NativePlan(impl, out, out_key, host)

    def _native_out(
        self, value: Any, aval: ShapedArray, backend: Backend, device: str
    ) -> BackendArray:
        """A native result as an Array of the abstract evaluation's value
        (checked against the library's own dtype and shape when
        :data:`CHECK_NATIVE` is on: in the tests, not on the hot path)."""
        if CHECK_NATIVE:
            assert backend.dtype_of is not None and backend.shape_of is not None
            got = (backend.dtype_of(value), tuple(backend.shape_of(value)))
            if got != (aval.dtype, aval.shape):
                raise TypeError(
                    f"the {backend.name} backend's {self.name} gave "
                    f"{got[0]}{list(got[1])}, its abstract evaluation "
                    f"{aval.dtype}{list(aval.shape)}: the implementation must "
                    "compute the announced dtype and shape"
                )
        key = _core.aval(aval.dtype, aval.weak_type)
        return native_result(value, key, aval.shape, backend, device)


#: Constants put on another library's device, by (dtype, type, value,
#: backend, device): a loop's ``x * 2.0``, a mean's count, moved once.
#: Emptied when full.
_ON_DEVICE: dict[tuple[Any, ...], Any] = {}


def on_device(item: Any, dtype: np.dtype[Any], backend: Backend, device: str) -> Any:
    """``numpy.asarray(item, dtype)`` (a Python scalar) on ``backend``'s
    ``device``, remembered (not zeros, whose signs equal keys cannot tell
    apart, nor NaN, which no key finds)."""
    if not item or item != item:
        return backend.from_numpy(np.asarray(item, dtype), device)
    kind: type[Any] = type(item)  # pyright: ignore[reportUnknownVariableType]
    key = (dtype, kind, item, backend, device)
    found = _ON_DEVICE.get(key)
    if found is None:
        if len(_ON_DEVICE) >= _EVALUATED_MAX:
            _ON_DEVICE.clear()
        found = _ON_DEVICE[key] = backend.from_numpy(np.asarray(item, dtype), device)
    return found


def _on_device(value: Any, backend: Backend, device: str) -> Any:
    """NumPy-held operand ``value`` on ``backend``'s ``device`` (the 0-d
    ones by :func:`on_device`)."""
    if value.ndim:
        return backend.from_numpy(value, device)
    return on_device(value.item(), value.dtype, backend, device)


#: Whether each native result's dtype and shape are checked against the
#: abstract evaluation (switched on by the tests; a list, so that it is read
#: when used: ``CHECK_NATIVE[:] = [True]``).
CHECK_NATIVE: list[bool] = []


def _compute_on(
    backend: Backend, plan: EagerPlan, values: list[Any], params: dict[str, Any]
) -> Any:
    """``plan``'s function (``backend``'s) on NumPy ``values``: the operands
    converted to the backend's arrays and the results back to NumPy."""
    ins = [backend.from_numpy(v) for v in values]
    token = _EXTOBJ.set(_IGNORE)
    try:
        out = plan.fn(*ins, **params) if plan.with_params else plan.fn(*ins)
    finally:
        _EXTOBJ.reset(token)
    if plan.out_key is None:
        return tuple(backend.to_numpy(v) for v in out)
    return backend.to_numpy(out)


def eager_key(args: Sequence[Any], params: dict[str, Any]) -> tuple[Any, ...]:
    """The signature of arrays ``args`` (``ArrayImpl``) and ``params`` under
    which :class:`EagerPlan` s are remembered: the operands' interned
    (dtype, weak flag), then their shapes, then the parameters' items in
    the order given (``_speedups.c`` builds the same tuple). Raises
    TypeError when a parameter is unhashable (when it is looked up)."""
    # One and two operands are most calls: spelled out, they cost half.
    n = len(args)
    key: tuple[Any, ...]
    if n == 2:
        x, y = args
        key = (x._key, y._key, x._value.shape, y._value.shape)
    elif n == 1:
        key = (args[0]._key, args[0]._value.shape)
    else:
        key = (*[x._key for x in args], *[x._value.shape for x in args])
    return (*key, *params.items()) if params else key


def _grows(out: Any, values: list[Any]) -> bool:
    """Whether a result (or one of several) has more elements than every
    operand."""
    largest: int = max(v.size for v in values)
    if type(out) is ShapedArray:
        return math.prod(out.shape) > largest
    return any(math.prod(o.shape) > largest for o in out)


#: From this size a program's ufunc computes into a dying operand's buffer
#: (NumPy's threshold for reusing temporaries, and the C path's): below it,
#: a fresh allocation costs less than the check.
REUSE_MIN_BYTES: Final = 256 * 1024

#: Primitives whose NumPy function gives a view of its operand in another
#: memory order (a transposed matrix): a program copies the result into C
#: order, as the eager call does. Elementwise operations that read it with
#: C-ordered arrays (the optimiser's updates of a transposed gradient) then
#: run their contiguous loops: on two 256x256 float32 matrices of opposite
#: orders ``np.add`` took 35 times as long as on two of one order, some
#: two transposing copies' time.
REORDERING: Final = frozenset({"transpose"})

#: The constants that an equation's key holds by their bytes.
_NUMPY_VALUES: Final[tuple[type[Any], ...]] = (np.ndarray, np.generic)

# Primitive.evaluate's memory (dropped whole when full).
_EVALUATED: dict[tuple[Any, ...], Any] = {}
_EVALUATED_MAX: Final = 4096


class PrimitiveEquation(Equation):
    """A primitive applied to variables of a trace: recorded by jit or
    eval_shape (replayed by the implementation of the backend in force when
    the program is generated, on the values, in one call), and by reverse
    mode differentiation in its linear record (transposed).

    ``ins`` has per operand ``(var, aval)`` for a variable of the trace (a
    tracer of it, of that :class:`ShapedArray`), ``(None, constant)`` for
    another: in a program a NumPy value, in a linear record an array (or
    a tracer of an enclosing trace). ``outs`` are the results' variables."""

    __slots__ = ("ins", "outs", "params", "prim")

    def __init__(
        self,
        prim: Primitive,
        params: dict[str, Any],
        ins: list[tuple[int, ShapedArray] | tuple[None, Any]],
        outs: list[int],
    ) -> None:
        self.prim = prim
        self.params = params
        self.ins = ins
        self.outs = outs

    def __repr__(self) -> str:
        return f"PrimitiveEquation({self.pretty(lambda v: f'v{v}')})"

    def inputs(self) -> Sequence[int]:
        return [v for v, _ in self.ins if v is not None]

    def outputs(self) -> Sequence[int]:
        return self.outs

    def pretty(self, var: Callable[[int], str]) -> str:
        outs = ", ".join(var(v) for v in self.outs)
        operands = ", ".join(
            f"v{v}" if v is not None else shown(c) for v, c in self.ins
        )
        shown_params = [
            f"{k}={_param(v)}"
            for k, v in self.params.items()
            if v is not None or k != "check"
        ]
        parts = ", ".join([operands, *shown_params] if operands else shown_params)
        return f"{outs} = lax.{self.prim.name}({parts})"

    def key(self) -> Hashable | None:
        """The primitive, its parameters and its operands: every primitive
        computes its outputs from these alone. A constant counts by its
        bytes when small, else as itself."""
        operands: list[Hashable] = []
        for v, c in self.ins:
            if v is not None:
                operands.append(v)
                continue
            value: Any = c
            if isinstance(c, _NUMPY_VALUES):
                array: NDArray = np.asarray(value)
                if array.size <= 64:
                    operands.append((array.dtype, array.shape, array.tobytes()))
                    continue
            operands.append((id(value),))
        params: list[Hashable] = []
        for name, param in self.params.items():
            kind: Any = param.__class__
            params.append((name, kind, param))
        key = (self.prim, tuple(params), tuple(operands))
        try:
            hash(key)
        except TypeError:  # (a parameter that cannot be compared so)
            return None
        return key

    def renamed(self, names: Mapping[int, int]) -> PrimitiveEquation:
        ins: list[tuple[int, ShapedArray] | tuple[None, Any]] = [
            (names.get(v, v), c) if v is not None else (None, c) for v, c in self.ins
        ]
        return PrimitiveEquation(self.prim, self.params, ins, self.outs)

    def _function(self, src: Source) -> tuple[Any, list[ShapedArray]]:
        """The function the program calls (the backend's fast function for
        these operands, or its implementation; another backend's with its
        conversions from and to NumPy arrays) and the operands' abstract
        values."""
        native = src.native
        if native is not None:
            # Another library's program: its implementation on its arrays.
            impl = native[0].impl(self.prim)
            if self.params:
                return functools.partial(impl, **self.params), []
            return impl, []
        backend = current_backend()
        impl = backend.impl(self.prim)
        avals = [
            ShapedArray(src.avals[v][1], *src.avals[v][0])
            if v is not None
            else _constant_aval(c)
            for v, c in self.ins
        ]
        fn: Any = None
        rule = backend.fast.get(self.prim)
        if rule is not None:
            fn = rule(*avals, **self.params)
        if fn is None:
            fn = functools.partial(impl, **self.params) if self.params else impl
        if backend is not NUMPY:
            fn = _converting(backend, fn, self.prim.multiple_results)
        return fn, avals

    def source(self, src: Source) -> str:
        return self._source(src, self._function(src)[0])

    def _source(self, src: Source, fn: Any, into: int | None = None) -> str:
        name = src.constant(fn)
        operands = ", ".join(
            f"v{v}" if v is not None else src.constant(c) for v, c in self.ins
        )
        if self.prim.multiple_results:
            targets = "".join(f"v{v}, " for v in self.outs) or "_"
            return f"{targets} = {name}({operands})"
        out = self.outs[0]
        if into is None:
            if isinstance(fn, np.ufunc) and src.avals[out][1]:
                # (a ufunc gives an array, except of 0-d operands a scalar)
                return f"v{out} = {name}({operands})"
            if self.prim.name in REORDERING and len(src.avals[out][1]) > 1:
                return f"v{out} = _contiguous({name}({operands}))"
            return f"v{out} = _asarray({name}({operands}))"
        # (held by its name and the call's argument only: no view of it)
        free = f"_refs(v{into}) == _sole and v{into}.base is None"
        return (
            f"v{out} = {name}({operands}, out=v{into}) if {free} "
            f"else _asarray({name}({operands}))"
        )

    def source_reusing(self, src: Source, dying: Sequence[int]) -> str:
        """A ufunc whose operands and result share one dtype computes into
        a dying operand of the result's shape, when nothing else holds that
        array (as NumPy reuses temporaries in expressions): a program
        allocates less, as the eager code it replaces.

        Why nobody can see the buffer change: ``dying`` never holds the
        program's inputs or outputs (their names live to the end), and the
        line checks when it runs that the array's one reference is its name
        (so it is no input, constant or output under another name, and no
        view of it exists: a view references its base) and that it is no
        view itself (base None: its memory is nobody else's). The array was
        made by the program's own operations, whose calls have returned, so
        no code outside holds it without counting."""
        fn, avals = self._function(src)
        if not isinstance(fn, np.ufunc) or fn.nout != 1 or self.prim.multiple_results:
            return self._source(src, fn)
        out_key, shape = src.avals[self.outs[0]]
        if not shape or any(a.dtype != out_key[0] for a in avals):
            return self._source(src, fn)
        if math.prod(shape) * out_key[0].itemsize < REUSE_MIN_BYTES:
            return self._source(src, fn)  # (the check costs more than it saves)
        operands = self.inputs()
        for v in dying:
            if v in operands and src.avals[v][1] == shape:
                return self._source(src, fn, into=v)
        return self._source(src, fn)


def _converting(backend: Backend, fn: Any, several: bool) -> Callable[..., Any]:
    """``fn`` (of ``backend``'s arrays) as a function of NumPy arrays."""
    to_numpy, from_numpy = backend.to_numpy, backend.from_numpy

    def converted(*values: Any) -> Any:
        out = fn(*[from_numpy(v) for v in values])
        if several:
            return tuple(to_numpy(v) for v in out)
        return to_numpy(out)

    return converted


class Filled(Equation):
    """An array of one value, made by the program when it runs (the zeros
    and the seed of the differentiation rules, traced)."""

    __slots__ = ("out", "value")

    def __init__(self, value: Any, out: int) -> None:
        self.value = value
        self.out = out

    def inputs(self) -> Sequence[int]:
        return ()

    def outputs(self) -> Sequence[int]:
        return (self.out,)

    def pretty(self, var: Callable[[int], str]) -> str:
        return f"{var(self.out)} = full({self.value!r})"

    def source(self, src: Source) -> str:
        _, shape = src.avals[self.out]
        if src.native is not None:
            # On another library's device: the value put there once, when
            # the program is written, and broadcast by the backend's own
            # implementation each run (nothing made on the host, nothing
            # copied to the device per call).
            backend, _ = src.native
            impl = src.held(backend.impl(PRIMITIVES["broadcast_in_dim"]))
            value = src.constant(np.asarray(self.value))
            return (
                f"v{self.out} = {impl}({value}, shape={shape!r}, "
                "broadcast_dimensions=())"
            )
        value = src.held(self.value)  # (a NumPy scalar, for _full)
        return f"v{self.out} = _full({shape!r}, {value})"


def _param(value: Any) -> str:
    """A parameter as a program shows it (a dtype by its name)."""
    return value.name if isinstance(value, np.dtype) else repr(value)


def _constant_aval(value: Any) -> ShapedArray:
    """The abstract value of a recorded constant (a NumPy value)."""
    array = np.asarray(value)
    return ShapedArray(array.shape, array.dtype, False)


def _result(value: Any, weak: bool) -> ArrayImpl:
    """A result as an array of weak flag ``weak``: the implementation's
    ndarray as it is, even when it is an operand or views one's memory.
    Operands are Arrays, whose memory nobody writes to (a caller's NumPy
    array is copied when it is made an Array, :func:`_array.operand`), so
    a view of it is as immutable as the Array itself."""
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    return wrap(value, _core.aval(value.dtype, weak))


def _result_as(value: Any, key: _core.Aval) -> ArrayImpl:
    """:func:`_result` of ``key``'s weak flag, with ``key`` itself when the
    value has its dtype (the usual case: no lookup)."""
    if type(value) is not np.ndarray:
        value = np.asarray(value)
    dt = value.dtype
    if dt is not key[0] and dt != key[0]:
        key = _core.aval(dt, key[1])
    out: ArrayImpl = _new_object(ArrayImpl)
    out._value = value
    out._key = key
    return out


# With the C accelerator, Primitive.bind and the public functions marked by
# binds_operands read the eager plans in C (_speedups.FastPrimitive); it
# reads ArrayImpl's and Primitive's slots, runs the plan's function with
# NumPy's error state quiet (a NumPy ufunc in a context of its own holding
# that ContextVar's quiet value; anything else with the variable set and
# reset) and wraps results as _result_as does (calling it for any
# result it does not take as it is). It is the NumPy backend's fast path:
# while another backend is in force in any thread (IN_USE), it hands every
# call to the Python bind, which asks which backend computes there.
FAST_BIND: Final = _speedups is not None and isinstance(_EXTOBJ, ContextVar)
if _speedups is not None and FAST_BIND:
    _speedups.configure_bind(
        ArrayImpl,
        vars(ArrayImpl)["_value"],
        vars(ArrayImpl)["_key"],
        Primitive,
        vars(Primitive)["eager"],
        ACTIVE,
        IN_USE,
        _EXTOBJ,
        _IGNORE,
        _result_as,
        np.ndarray,
    )
    _bind = _speedups.FastPrimitive(Primitive.bind)
    functools.update_wrapper(_bind, Primitive.bind)
    setattr(Primitive, "bind", _bind)  # noqa: B010 (a method replaced)

_F = TypeVar("_F", bound=Callable[..., Any])


def binds_operands(prim: Primitive, fn: _F, *, scalars: bool = False) -> _F:
    """The public function ``fn``, whose positional arguments are exactly
    the operands of ``prim`` (keywords, if any, are options): on arrays
    (``ArrayImpl``) it returns ``prim.bind(*args)``. With the C
    accelerator, such calls bind in C without ``fn``'s frame (while
    ``Primitive.bind`` is the C one); every other call runs ``fn``.

    ``scalars``: ``fn`` converts its operands with ``typelattice._lax``'s
    ``to_arrays``; a call of two operands, an array and a Python int,
    float or complex, then binds in C too, the scalar converted as
    ``to_array`` remembered converting it."""
    if _speedups is None or not FAST_BIND:
        return fn
    fast = _speedups.FastPrimitive(fn, prim, fn.__code__.co_argcount, scalars=scalars)
    functools.update_wrapper(fast, fn)
    return fast  # type: ignore[no-any-return]


# -- differentiation: symbolic values and rule helpers ------------------------

#: The dtype of the tangents of bool and integer values, as JAX's
#: ``float0``: a structured dtype of no bytes, which holds no value.
float0: Final = np.dtype([("float0", np.void, 0)])


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """The abstract value of the tangents (and cotangents) of values of
    ``aval``: the same for floating and complex dtypes, :data:`float0` of
    the same shape and weak flag for bool and integers.

    >>> tangent_aval(ShapedArray((2,), np.dtype('int8')))
    ShapedArray(float0[2])
    """
    if _dtypes.kind_of(aval.dtype) in "fc":
        return aval
    return ShapedArray(aval.shape, float0, aval.weak_type)


class Zero:
    """A symbolic zero tangent or cotangent of abstract value ``aval``.

    Rules receive it for operands whose tangent is known to be zero (always
    for bool and integer operands) and skip their work; they return it for
    outputs whose tangent is zero whatever the inputs' are.

    >>> Zero(ShapedArray((3,), np.dtype('float32')))
    Zero(float32[3])
    """

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    @staticmethod
    def of(x: Any) -> Zero:
        """The zero tangent of a value (an array or an abstract value)."""
        return Zero(tangent_aval(aval_of(x)))

    def __repr__(self) -> str:
        return f"Zero({repr(self.aval)[12:-1]})"


class UndefinedPrimal:
    """An operand of a transpose rule in which the primitive is linear: only
    its abstract value is known.

    >>> UndefinedPrimal(ShapedArray((3,), np.dtype('float32')))
    UndefinedPrimal(float32[3])
    """

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"UndefinedPrimal({repr(self.aval)[12:-1]})"


def is_undefined(x: Any) -> bool:
    """Whether a transpose rule's operand is a linear input."""
    return type(x) is UndefinedPrimal


def aval_of(x: Any) -> ShapedArray:
    """The abstract value of an array, a :class:`ShapedArray`, a
    :class:`Zero` or an :class:`UndefinedPrimal`."""
    if type(x) is ArrayImpl:  # (the commonest: its slots, not its properties)
        dt, weak = x._key
        return ShapedArray(x._value.shape, dt, weak)
    if type(x) is BackendArray:
        return ShapedArray(x._shape, *x._key)
    if type(x) is ShapedArray:
        return x
    if type(x) is Zero or type(x) is UndefinedPrimal:
        return x.aval
    return ShapedArray(tuple(x.shape), x.dtype, x.weak_type)


def full(aval: ShapedArray, value: complex) -> Any:
    """An array of ``value`` of ``aval``, made from the abstract value alone:
    a constant, or while jit or eval_shape runs, a tracer that the program
    fills when it runs (tracing allocates nothing of its size).

    >>> full(ShapedArray((2,), np.dtype('float32')), 1)
    Array([1., 1.], dtype=float32)
    """
    fill = np.asarray(value, aval.dtype)[()]  # (a NumPy scalar)
    key = _core.aval(aval.dtype, aval.weak_type)
    trace = current_trace() if ACTIVE else None
    if trace is None:
        return wrap(np.full(aval.shape, fill), key)
    tracer = trace.new_tracer(key, aval.shape)
    trace.record(Filled(fill, tracer._var))
    return tracer


def zeros(aval: ShapedArray) -> Any:
    """An array of zeros of ``aval`` (see :func:`full`).

    Raises:
      TypeError: ``aval`` is of :data:`float0`, which holds no values.
    """
    if aval.dtype == float0:
        raise TypeError(
            "a tangent of a bool or integer value is symbolic (Zero) and has no "
            "array of zeros; rules must not instantiate it"
        )
    if not ACTIVE or current_trace() is None:
        return wrap(
            np.zeros(aval.shape, aval.dtype), _core.aval(aval.dtype, aval.weak_type)
        )
    return full(aval, 0)


def instantiate(t: Any) -> Any:
    """A tangent as an array: a :class:`Zero` becomes :func:`zeros`."""
    return zeros(t.aval) if type(t) is Zero else t


# A rule's signature by its number of positional parameters (the
# primitive's parameters come as keywords): lambdas get typed parameters.
Rule = (
    Callable[[Any], Any]
    | Callable[[Any, Any], Any]
    | Callable[[Any, Any, Any], Any]
    | Callable[[Any, Any, Any, Any], Any]
    | Callable[[Any, Any, Any, Any, Any], Any]
    | Callable[..., Any]
)


def _check_primitive(prim: Any) -> None:
    if not isinstance(prim, Primitive) or PRIMITIVES.get(prim.name) is not prim:
        raise TypeError(f"rules are registered on a defined Primitive, got {prim!r}")


# add_any adds tangents (and cotangents) of one value, whatever its dtype;
# unlike add it neither broadcasts nor accepts different abstract values.
add_any_p = Primitive("add_any")


@add_any_p.def_abstract_eval
def _add_any_abstract(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x != y:
        raise TypeError(
            f"add_any adds tangents of one abstract value, got {x} and {y}; a "
            "differentiation rule gave a tangent of the wrong shape, dtype or "
            "weak flag"
        )
    return x


@add_any_p.def_impl
def _add_any_impl(x: NDArray, y: NDArray) -> NDArray:
    return np.add(x, y)


def add_tangents(x: Any, y: Any) -> Any:
    """The sum of two tangents of one value; :class:`Zero` adds nothing."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    return add_any_p.bind(x, y)


def _zero_out(prim: Primitive, out: Any) -> Any:
    """The zero tangent(s) of a primitive's output(s)."""
    if prim.multiple_results:
        return tuple(Zero.of(o) for o in out)
    return Zero.of(out)


def defjvp(prim: Primitive, *rules: Rule | None) -> None:
    """Register the JVP of a primitive from one rule per operand:
    ``rule(t, *primals, **params)`` is the output's tangent due to that
    operand's tangent ``t`` (an array, never a :class:`Zero`), of the
    output's shape, dtype and weak flag; ``None`` for an operand that has no
    derivative (its tangent must be a :class:`Zero`). The contributions are
    summed, as JAX's ``ad.defjvp``."""
    _check_primitive(prim)

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        return out, _sum_rules(prim, rules, tangents, primals, params, out, ())

    prim.def_jvp(jvp)


def defjvp2(prim: Primitive, *rules: Rule | None) -> None:
    """As :func:`defjvp`, with rules that also take the output:
    ``rule(t, out, *primals, **params)``."""
    _check_primitive(prim)

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        return out, _sum_rules(prim, rules, tangents, primals, params, out, (out,))

    prim.def_jvp(jvp)


def _sum_rules(
    prim: Primitive,
    rules: Sequence[Rule | None],
    tangents: Sequence[Any],
    primals: Sequence[Any],
    params: dict[str, Any],
    out: Any,
    before: tuple[Any, ...],
) -> Any:
    """The sum of the rules' tangents for the operands whose tangent is not
    a Zero; ``before`` are the rules' arguments before the primals (the
    output, for :func:`defjvp2`)."""
    total: Any = None
    for rule, t in zip(rules, tangents, strict=True):
        if type(t) is Zero:
            continue
        if rule is None:
            raise TypeError(
                f"{prim.name} has no derivative with respect to an operand of "
                f"{aval_of(t)}; its tangent must be Zero"
            )
        part = rule(t, *before, *primals, **params)
        total = part if total is None else add_any_p.bind(total, part)
    return Zero.of(out) if total is None else total


def deflinear(prim: Primitive, transpose: Rule) -> None:
    """Register the rules of a primitive linear in all its operands: the
    JVP applies it to the tangents (zeros instantiated), ``transpose`` as
    in the module's notes."""
    _check_primitive(prim)

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, _zero_out(prim, out)
        return out, prim.bind(*(instantiate(t) for t in tangents), **params)

    prim.def_jvp(jvp)
    prim.def_transpose(transpose)


def defbilinear(prim: Primitive, lhs: Rule, rhs: Rule) -> None:
    """Register the rules of a primitive linear in each of its two operands
    (``mul``, ``dot_general``): the JVP is ``prim(tx, y) + prim(x, ty)``;
    ``lhs(ct, x, y, **params)`` is the cotangent of ``x`` when ``x`` is the
    :class:`UndefinedPrimal` (``y`` an array), ``rhs`` that of ``y``."""
    _check_primitive(prim)

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        (x, y), (tx, ty) = primals, tangents
        out = prim.bind(x, y, **params)
        total = Zero.of(out)
        if type(tx) is not Zero:
            total = add_tangents(total, prim.bind(tx, y, **params))
        if type(ty) is not Zero:
            total = add_tangents(total, prim.bind(x, ty, **params))
        return out, total

    def transpose(ct: Any, x: Any, y: Any, **params: Any) -> list[Any]:
        if is_undefined(x) and is_undefined(y):
            raise ValueError(
                f"{prim.name} is linear in each operand, not in both together: "
                "one of them must be a known value to transpose it"
            )
        rule: Callable[..., Any] = lhs if is_undefined(x) else rhs
        cotangent = rule(ct, x, y, **params)
        return [cotangent, None] if is_undefined(x) else [None, cotangent]

    prim.def_jvp(jvp)
    prim.def_transpose(transpose)


def defjvp_zero(prim: Primitive) -> None:
    """Register a zero JVP: for primitives whose outputs are piecewise
    constant (``floor``, comparisons, ``argmax``) or integers, whatever the
    tangents of the operands."""
    _check_primitive(prim)

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        return out, _zero_out(prim, out)

    prim.def_jvp(jvp)


def defjvp_unsupported(prim: Primitive, why: str) -> None:
    """Register a JVP that raises NotImplementedError saying ``why``, for a
    primitive that JAX does not differentiate either. Zero tangents of every
    operand are accepted (the output's tangent is zero)."""
    _check_primitive(prim)

    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, _zero_out(prim, out)
        raise NotImplementedError(
            f"Differentiation rule for '{prim.name}' not implemented: {why}"
        )

    prim.def_jvp(jvp)


deflinear(add_any_p, lambda ct, x, y: [ct, ct])


# -- batching: rule helpers ---------------------------------------------------
#
# A batching rule moves, broadcasts and reshapes batched operands with the
# structural primitives (transpose, broadcast_in_dim, slice, reshape,
# concatenate). They are defined, with their own batching rules, above this
# layer (typelattice._lax): the helpers bind them through the registry of
# primitives, as any rule binds a primitive.


def _bind_named(name: str, *args: Any, **params: Any) -> Any:
    return PRIMITIVES[name].bind(*args, **params)


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """``x`` with its axis ``src`` moved to position ``dst`` (a transpose;
    ``x`` itself when they are equal)."""
    if src == dst:
        return x
    perm = [i for i in range(len(x.shape)) if i != src]
    perm.insert(dst, src)
    return _bind_named("transpose", x, permutation=tuple(perm))


def broadcast_batch(x: Any, size: int, axis: int) -> Any:
    """``x`` repeated ``size`` times along a new axis at ``axis``."""
    shape = list(x.shape)
    shape.insert(axis, size)
    dims = tuple(i for i in range(len(shape)) if i != axis)
    return _bind_named(
        "broadcast_in_dim", x, shape=tuple(shape), broadcast_dimensions=dims
    )


def bdim_at_front(x: Any, dim: int | None, size: int) -> Any:
    """``x`` with its batch axis ``dim`` first (broadcast to ``size`` along
    a new first axis when ``dim`` is None: not batched)."""
    if dim is None:
        return broadcast_batch(x, size, 0)
    return moveaxis(x, dim, 0)


def batch_size(args: Sequence[Any], dims: Sequence[int | None]) -> int:
    """The batch size: the length of a batched operand's batch axis."""
    for x, d in zip(args, dims, strict=True):
        if d is not None:
            return int(x.shape[d])
    raise ValueError("a batching rule was called with no batched operand")


def example_aval(x: Any, dim: int | None) -> ShapedArray:
    """The abstract value of one example of ``x`` batched along ``dim``."""
    a = aval_of(x)
    if dim is None:
        return a
    return a.update(shape=a.shape[:dim] + a.shape[dim + 1 :])


def defbatch_elementwise(prim: Primitive, *, exact: bool = True) -> None:
    """Register the batching rule of an elementwise primitive (operands of
    one shape, or scalars): when every batched operand has the batch axis
    at one place and the unbatched ones are scalars, the primitive applies
    to the batched values as they are; otherwise the batched operands move
    their batch axis there (or first) and the others get one: broadcast,
    or with ``exact=False`` (a primitive that broadcasts axes of size 1,
    as ``add``) an axis of size 1, which costs no copy."""
    _check_primitive(prim)

    def rule(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        # The commonest calls first: one operand; two batched alike; a
        # batched operand and an unbatched scalar.
        if len(args) == 1:
            return prim.bind(*args, **params), dims[0]
        if len(args) == 2:
            (x, y), (dx, dy) = args, dims
            if dx == dy and len(x.shape) == len(y.shape):
                return prim.bind(x, y, **params), dx
            if dy is None and not y.shape:
                return prim.bind(x, y, **params), dx
            if dx is None and not x.shape:
                return prim.bind(x, y, **params), dy
        ranks = [
            len(x.shape) - (d is not None) for x, d in zip(args, dims, strict=True)
        ]
        out_rank = max(ranks)
        at = {
            d
            for d, r in zip(dims, ranks, strict=True)
            if d is not None and r == out_rank
        }
        if len(at) == 1 and all(
            r == out_rank if d is not None else r == 0
            for d, r in zip(dims, ranks, strict=True)
        ):
            return prim.bind(*args, **params), at.pop()
        target = at.pop() if len(at) == 1 else 0
        size = batch_size(args, dims)
        out_shape: Shape = ()
        for x, d, r in zip(args, dims, ranks, strict=True):
            if r == out_rank:
                out_shape = example_aval(x, d).shape
                break
        moved: list[Any] = []
        for x, d, r in zip(args, dims, ranks, strict=True):
            if d is None and r == 0:
                moved.append(x)
            elif d is None and exact:
                moved.append(broadcast_batch(x, size, target))
            elif d is None:
                shape = tuple(x.shape)
                sizes = (*shape[:target], 1, *shape[target:])
                moved.append(
                    _bind_named("reshape", x, new_sizes=sizes, dimensions=None)
                )
            elif r == out_rank:
                moved.append(moveaxis(x, d, target))
            elif exact:  # a batch of scalars among operands of a higher rank
                shape = (*out_shape[:target], size, *out_shape[target:])
                moved.append(
                    _bind_named(
                        "broadcast_in_dim",
                        x,
                        shape=shape,
                        broadcast_dimensions=(target,),
                    )
                )
            else:
                sizes = (1,) * target + (size,) + (1,) * (out_rank - target)
                moved.append(
                    _bind_named("reshape", x, new_sizes=sizes, dimensions=None)
                )
        return prim.bind(*moved, **params), target

    prim.def_batch(rule)


def defbatch_axes(prim: Primitive, param: str, *, kept: bool) -> None:
    """Register the batching rule of a primitive of one operand batched
    (the others unbatched) whose parameter ``param`` names axes of it (an
    int or a tuple of ints): they are renumbered around the batch axis.
    ``kept``: whether those axes stay in the result (a cumulative sum's,
    a reversal's) or are removed (a reduction's, a squeeze's). Any other
    operand batched: the rule of :func:`batch_by_looping`."""
    _check_primitive(prim)
    looping = batch_by_looping(prim, register=False)

    def rule(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        d = dims[0]
        if d is None or any(e is not None for e in dims[1:]):
            return looping(args, dims, **params)
        rank = len(args[0].shape) - 1
        value = params[param]
        axes = (value,) if isinstance(value, int) else tuple(value)
        axes = tuple(a % rank if rank else a for a in axes)
        moved = tuple(a + (a >= d) for a in axes)
        params[param] = moved[0] if isinstance(value, int) else moved
        out = prim.bind(*args, **params)
        out_dim = d if kept else d - sum(a < d for a in axes)
        if prim.multiple_results:
            return out, (out_dim,) * len(out)
        return out, out_dim

    prim.def_batch(rule)


def _take(x: Any, dim: int, i: int) -> Any:
    """Example ``i`` of ``x`` batched along ``dim``."""
    shape = tuple(x.shape)
    start = [0] * len(shape)
    start[dim] = i
    limit = list(shape)
    limit[dim] = i + 1
    part = _bind_named(
        "slice",
        x,
        start_indices=tuple(start),
        limit_indices=tuple(limit),
        strides=(1,) * len(shape),
    )
    return _bind_named(
        "reshape", part, new_sizes=shape[:dim] + shape[dim + 1 :], dimensions=None
    )


def batch_by_looping(prim: Primitive, *, register: bool = True) -> Callable[..., Any]:
    """The batching rule that applies ``prim`` to each example in turn and
    stacks the results along a new first axis (registered unless
    ``register`` is False; returned either way). Correct for any primitive,
    but a primitive call per example: for the primitives whose operands
    carry positions (gather and scatter with batched positions, the folds
    of ufunc methods) where a vectorised rule is future work."""
    _check_primitive(prim)

    def rule(args: Sequence[Any], dims: Sequence[int | None], **params: Any) -> Any:
        size = batch_size(args, dims)
        avals = [example_aval(x, d) for x, d in zip(args, dims, strict=True)]
        out = prim.evaluate(avals, params)
        out_avals = out if prim.multiple_results else (out,)
        results: list[tuple[Any, ...]] = []
        for i in range(size):
            example = [
                x if d is None else _take(x, d, i)
                for x, d in zip(args, dims, strict=True)
            ]
            o = prim.bind(*example, **params)
            results.append(tuple(o) if prim.multiple_results else (o,))
        stacked: list[Any] = []
        for k, a in enumerate(out_avals):
            if size == 0:
                stacked.append(full(a.update(shape=(0, *a.shape)), 0))
                continue
            parts = [broadcast_batch(r[k], 1, 0) for r in results]
            if len(parts) == 1:
                stacked.append(parts[0])
            else:
                stacked.append(_bind_named("concatenate", *parts, dimension=0))
        if prim.multiple_results:
            return tuple(stacked), (0,) * len(stacked)
        return stacked[0], 0

    if register:
        prim.def_batch(rule)
    return rule


# add_any's operands have one abstract value: an unbatched one is broadcast
# (never kept as a scalar, as an elementwise rule may).
@add_any_p.def_batch
def _add_any_batch(
    args: Sequence[Any], dims: Sequence[int | None], **params: Any
) -> tuple[Any, int]:
    (x, y), (dx, dy) = args, dims
    if dx is not None and dx == dy:
        return add_any_p.bind(x, y), dx
    size = batch_size(args, dims)
    return add_any_p.bind(bdim_at_front(x, dx, size), bdim_at_front(y, dy, size)), 0
