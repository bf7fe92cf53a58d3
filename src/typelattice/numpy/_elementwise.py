"""Elementwise functions: promotion of the operands, then one NumPy ufunc call.

Each function is described by an :class:`Op` (which dtypes it accepts, what
it computes in, what it returns); its plan for given operand types is built
once per configuration and cached, so the hot path is a dict lookup, the
conversion of the operands that need it, and the ufunc.
"""

# Package-internal: reads the arrays' underscored slots and the configuration's
# and _core's private state by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, cast

import numpy as np

from typelattice import _array, _config, _core, _dtypes
from typelattice import _lax as lax
from typelattice._array import ArrayImpl, wrap
from typelattice._basearray import Array
from typelattice._config import _scope
from typelattice._core import _EXTOBJ, _IGNORE, Conv, Conversion, Plan
from typelattice._lax._elementwise import _cast
from typelattice._promotion import _speedups
from typelattice._tracing import trace as _trace
from typelattice._tracing.ad import stop_gradient
from typelattice._tracing.tracer import Tracer, TransformTracer

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike

_new_object = object.__new__

DType = np.dtype[Any]


_KEEP: Final = Conversion.KEEP
_CAST: Final = Conversion.CAST
_INT: Final = Conversion.INT
_SCALAR: Final = Conversion.SCALAR
_WEAK: Final = Conversion.WEAK
_CHECK: Final = Conversion.CHECK


_KIND_WORDS: Final = {
    "b": "bool",
    "i": "signed integer",
    "u": "unsigned integer",
    "f": "floating",
    "c": "complex floating",
}
_BOOL: Final = np.dtype(bool)
_INT32: Final = np.dtype("int32")
_F32: Final = np.dtype("float32")
_F64: Final = np.dtype("float64")


class Op:
    """How one elementwise function treats dtypes.

    Args:
      name: the function's name, for messages.
      fn: the NumPy function, called on operands in the compute dtype.
      nin: the number of array operands.
      accept: the kinds (``b i u f c``) the compute dtype may have.
      to: ``None``, ``'inexact'`` (bool and integers become float32, 64-bit
        integers float64, the weak flag kept), ``'default_float'`` (they
        become the mode's default float) or ``'numeric'`` (bool becomes
        int32).
      out: ``'same'``, ``'bool'`` or ``'real'`` (complex gives its real type).
      identity_kinds: kinds for which the function returns its input as is
        (``floor`` of an integer array).
      fp_int: NumPy reports errors for integers too (division by zero).
      strong_kinds: input kinds for which the result is strong even from a
        weak operand (JAX's ``isnan`` of an integer is a constant).
      weak_if_all: the result is weak only if every operand is weak or a
        Python bool (JAX computes some functions from the unpromoted
        operands: ``hypot(bool_array, 1)`` is strong); ``"first"``: only the
        first operand counts; ``"complex"``: the rule applies to complex
        results only.
      error: the exception for a dtype the function refuses.
      lower: the function written with ``typelattice.lax`` primitives, on
        operands converted to the compute dtype and broadcast to one shape
        (what differentiation runs); :data:`ZERO_DERIVATIVE` for a function
        whose derivative is zero where it exists (``floor``, ``sign``):
        computed as it is, from the operands' values. Functions with bool or
        integer results need none; others without one cannot be
        differentiated.
    """

    __slots__ = (
        "accept",
        "function",
        "lowered",
        "fn",
        "fp_int",
        "identity_kinds",
        "name",
        "nin",
        "out",
        "error",
        "strong_kinds",
        "to",
        "weak_if_all",
    )

    def __init__(
        self,
        name: str,
        fn: Callable[..., Any],
        nin: int,
        accept: str = "biufc",
        to: str | None = None,
        out: str = "same",
        identity_kinds: str = "",
        fp_int: bool = False,
        strong_kinds: str = "",
        weak_if_all: bool | str = False,
        error: type[Exception] = TypeError,
        lower: Callable[..., Any] | None = None,
    ) -> None:
        self.name = name
        # The namespace function made of it (make_unary, make_binary).
        self.function: Callable[..., Array] | None = None
        self.lowered = lower
        self.fn = fn
        self.nin = nin
        self.accept = accept
        self.to = to
        self.out = out
        self.identity_kinds = identity_kinds
        self.fp_int = fp_int
        self.strong_kinds = strong_kinds
        self.weak_if_all = weak_if_all
        self.error = error

    def __repr__(self) -> str:
        return f"Op({self.name})"

    def plan(self, keys: tuple[object, ...], state: _config.State) -> Plan:
        """The plan for operands of these keys (uncached: :func:`build_plan`)."""
        return build_plan(self, keys, state)

    def lower(self, args: tuple[Any, ...]) -> Array:
        """The function on ``args`` (a differentiation tracer among them)
        computed with primitives: :func:`lower`."""
        return lower(self, args)

    def evaluate(self, args: tuple[Any, ...]) -> Array:
        """The function on ``args`` as computed without differentiation:
        the namespace function made of it, or :func:`apply` (both record
        the call when one of the arguments is a tracer)."""
        if self.function is not None:
            return self.function(*args)
        for a in args:
            if isinstance(a, Tracer | TransformTracer):
                return _trace.elementwise(self, args)
        return apply(self, args)


_PROMOTE_ONLY: dict[str, Op] = {}


def promotion_op(name: str) -> Op:
    """An Op that only promotes (for :func:`promote`), one per name, so its
    plans are cached like any other's."""
    op = _PROMOTE_ONLY.get(name)
    if op is None:
        op = _PROMOTE_ONLY.setdefault(name, Op(name, lambda *a: a, 0))
    return op


def _real_dtype(dt: DType) -> DType:
    if dt == np.complex64:
        return np.dtype("float32")
    if dt == np.complex128:
        return np.dtype("float64")
    return dt


def compute_dtype(
    op_name: str,
    accept: str,
    to: str | None,
    dt: DType,
    x64: bool,
    error: type[Exception] = TypeError,
) -> DType:
    """The dtype an operation computes in, from its operands' join."""
    kind = _dtypes.kind_of(dt)
    if to == "inexact" and kind in "biu":
        # As JAX: 64-bit integers become float64, narrower ones float32,
        # in either mode.
        dt = _F64 if dt.itemsize == 8 else _F32
        kind = "f"
    elif to == "default_float" and kind in "biu":
        dt = _dtypes.default_dtype("f", x64)
        kind = "f"
    elif to == "numeric" and kind == "b":
        dt = _INT32
        kind = "i"
    if kind not in accept:
        accepted = ", ".join(_KIND_WORDS[k] for k in accept)
        raise error(
            f"{op_name} does not accept dtype {dt}. Accepted dtypes: {accepted}. "
            "Cast explicitly with x.astype(...) if that is what you mean."
        )
    return dt


def _identity(x: Any) -> Any:
    return np.array(x, copy=True)


def build_plan(op: Op, keys: tuple[object, ...], state: _config.State) -> Plan:
    """The cached plan of ``op`` on operands with these keys."""
    x64 = state.enable_x64
    dt, weak = _core.result_of(keys, state)
    fn = op.fn
    kind = _dtypes.kind_of(dt)
    if kind in op.identity_kinds:
        cd = dt
        fn = _identity
    else:
        cd = compute_dtype(op.name, op.accept, op.to, dt, x64, op.error)
    convs: list[Conv] = []
    for key in keys:
        if isinstance(key, tuple):
            if key[0] == cd:
                convs.append(Conv(_KEEP, 0, 0))
            elif key[1]:
                # A weak array holds a Python scalar's value: like the scalar,
                # it must not change on its way to the narrower dtype.
                convs.append(Conv(_WEAK, 0, 0))
            elif _dtypes.can_lose_range(cast(DType, key[0]), cd):
                convs.append(Conv(_CHECK, 0, 0))
            else:
                convs.append(Conv(_CAST, 0, 0))
        elif key is int and cd.kind in "iu" and cd.isbuiltin:
            info = np.iinfo(cd)
            convs.append(Conv(_INT, int(info.min), int(info.max)))
        elif key is bool and cd == _BOOL:
            convs.append(Conv(_KEEP, 0, 0))
        elif (key is float or key is int) and _dtypes.rounds_every_float(cd):
            # The largest magnitude that converts without overflow: a fast
            # path may skip the checked conversion below it (inf and nan
            # stay, as the dtype holds them).
            convs.append(Conv(_SCALAR, 0, float(_dtypes.finfo(cd).max)))
        else:
            convs.append(Conv(_SCALAR, 0, 0))
    if op.out == "bool":
        out = _BOOL
    elif op.out == "real":
        out = _real_dtype(cd)
    else:
        out = cd
    # Comparisons of weak operands give weak bools, as in JAX.
    rule = op.weak_if_all
    if rule and (rule != "complex" or _dtypes.kind_of(cd) == "c"):
        counted = keys[:1] if rule == "first" else keys
        weak = weak and all(_core.key_weak(k) or k is bool for k in counted)
    out_key = _core.aval(out, weak and kind not in op.strong_kinds)
    fp = _dtypes.kind_of(cd) in "fc" or op.fp_int
    return Plan(fn, tuple(convs), out_key, fp, cd)


def _state() -> _config.State:
    scope = _scope.get()
    return _config._global if scope is None else scope.resolve()


def promote(op: Op, args: tuple[Any, ...]) -> tuple[list[Any], Plan]:
    """``args`` converted to ``op``'s compute dtype, and ``op``'s plan.

    The general path, for any number of operands; the converted values are
    ndarrays or, for Python scalars, 0-d arrays (ints in range may stay ints).
    """
    name = op.name
    values: list[Any] = []
    keys: list[object] = []
    for i, a in enumerate(args):
        v, k = _array.operand(a, name, i)
        values.append(v)
        keys.append(k)
    state = _state()
    tkeys = tuple(keys)
    plan = state.memo.get((op, tkeys))
    if plan is None:
        plan = build_plan(op, tkeys, state)
        state.memo[(op, tkeys)] = plan
    cd = plan.cd
    conv = [
        convert_value(v, how, lo, hi, cd, name, i)
        for i, (v, (how, lo, hi)) in enumerate(zip(values, plan.convs, strict=True))
    ]
    if state.rank_promotion != "allow":
        _core.check_rank(name, [np.shape(v) for v in values], state.rank_promotion)
    return conv, plan


def _zero_derivative(*args: Any) -> Any:
    raise AssertionError("a marker, never called")


#: ``Op(lower=ZERO_DERIVATIVE)``: the function is piecewise constant.
ZERO_DERIVATIVE: Final = _zero_derivative


def _key_of(a: Any, name: str, pos: int) -> tuple[Any, object]:
    """An operand of a lowering and its plan key: tracers as they are,
    other values as :func:`_array.operand` gives them."""
    if isinstance(a, Tracer | TransformTracer):
        return a, _core.aval(a.dtype, a.weak_type)
    if type(a) is ArrayImpl:
        return a, a._key
    return _array.operand(a, name, pos)


def _primal_value(a: Any) -> np.ndarray[Any, Any] | None:
    """The concrete value under a differentiation tracer, if known (a
    tracer standing in for known values refuses: its computation cannot
    be remembered without the value's check)."""
    while isinstance(a, TransformTracer):
        a = getattr(a, "primal", None)
    if type(a) is ArrayImpl:
        return a._value
    if isinstance(a, Tracer) and a._trace.stands_in:
        a._refuse("a check of its values")
    return None


def lower(op: Op, args: tuple[Any, ...]) -> Array:
    """``op`` on ``args`` with primitives: the operands are promoted by the
    function's plan (conversions range-checked as eagerly, when the values
    are known) and broadcast, then ``op.lowered`` computes, and the result
    takes the plan's dtype and weak flag."""
    name = op.name
    items: list[Any] = []
    keys: list[object] = []
    for i, a in enumerate(args):
        v, k = _key_of(a, name, i)
        items.append(v)
        keys.append(k)
    state = _state()
    tkeys = tuple(keys)
    plan = state.memo.get((op, tkeys))
    if plan is None:
        plan = state.memo[(op, tkeys)] = build_plan(op, tkeys, state)
    out_dt, out_weak = plan.out_key
    fn = op.lowered
    if fn is ZERO_DERIVATIVE or (fn is None and _dtypes.kind_of(out_dt) not in "fc"):
        # Piecewise constant (or integer valued): the value, computed as it
        # is eagerly or under jit, has no derivative.
        values = tuple(stop_gradient(list(args)))
        if any(isinstance(a, Tracer) for a in values):
            return _trace.elementwise(op, values)
        return apply(op, values)
    if fn is None:
        raise NotImplementedError(
            f"typelattice.numpy.{name} cannot be differentiated (it has no "
            "lowering to primitives; docs/autodiff.md lists those that do)"
        )
    cd = plan.cd
    shapes = [np.shape(v) if not hasattr(v, "shape") else tuple(v.shape) for v in items]
    if state.rank_promotion != "allow":
        _core.check_rank(name, shapes, state.rank_promotion)
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        _core.broadcast_error(name, shapes)
    # A primitive takes scalars beside arrays; compositions (select...) need
    # every operand at the full shape.
    composite = not getattr(fn, "__module__", "").startswith("typelattice._lax")
    operands: list[Any] = []
    for i, (v, (how, lo, hi)) in enumerate(zip(items, plan.convs, strict=True)):
        if isinstance(v, Array):
            if how == _CHECK or how == _WEAK:
                known = _primal_value(v)
                if known is not None:
                    convert_value(known, how, lo, hi, cd, name, i)  # raises
            if v.dtype != cd:
                v = lax.convert_element_type(v, cd)
        else:
            v = wrap(
                np.asarray(convert_value(v, how, lo, hi, cd, name, i), cd),
                _core.aval(cd, False),
            )
        if v.shape != shape and (v.ndim or composite):
            n = len(shape)
            v = lax.broadcast_in_dim(v, shape, tuple(range(n - v.ndim, n)))
        operands.append(v)
    out = fn(*operands)
    if out.dtype != out_dt or out.weak_type != out_weak:
        out = _cast(out, out_dt, out_weak)
    return out  # type: ignore[no-any-return]


def convert_value(
    v: Any, how: int, lo: int | float, hi: int | float, cd: DType, name: str, i: int
) -> Any:
    """One operand's value in the compute dtype, by its conversion code
    (range checked where values could change)."""
    if how == _KEEP:
        return v
    if how == _CAST:
        return _core.ignore_fp_errors(v.astype, cd)
    if how == _CHECK:
        checked = _core.check_operand(v, cd, name, i)
        return _core.ignore_fp_errors(checked.astype, cd, copy=False)
    if how == _WEAK:
        return _core.weak_to(v, cd, name)
    if how == _INT:
        if not lo <= v <= hi:
            _core.python_scalar_to(v, cd, name)  # raises
        return v
    return _core.python_scalar_to(v, cd, name)


def apply(op: Op, args: tuple[Any, ...]) -> Array:
    """Run ``op`` on ``args`` (the general path, any number of operands)."""
    conv, plan = promote(op, args)
    return finish(run(op.name, plan.fn, conv, plan.fp), plan.out_key)


def run(name: str, fn: Callable[..., Any], conv: list[Any], fp: bool) -> Any:
    try:
        if fp:
            return _core.ignore_fp_errors(fn, *conv)
        return fn(*conv)
    except ValueError as err:
        if "broadcast" in str(err):
            _core.broadcast_error(name, [np.shape(v) for v in conv])
        raise


def finish(out: Any, out_key: _core.Aval) -> Array:
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if out.dtype != out_key[0]:
        out = _core.ignore_fp_errors(out.astype, out_key[0])
    return wrap(out, out_key)


def _cast_call(fn: Callable[..., Any], x: Any, y: Any, cd: DType) -> Any:
    """``fn(x, y)`` with array operands converted to ``cd``.

    A ufunc converts them chunk by chunk inside its loop: no full-size
    temporary copy (half the peak memory of converting first).
    """
    if type(fn) is np.ufunc:
        try:
            return fn(x, y, signature=(cd, cd, None), casting="unsafe")
        except TypeError:  # no loop for cd (ml_dtypes types, complex...)
            pass
    if type(x) is np.ndarray:
        x = x.astype(cd)
    if type(y) is np.ndarray:
        y = y.astype(cd)
    return fn(x, y)


# -- function factories -----------------------------------------------------


def make_unary(op: Op) -> Callable[[ArrayLike], Array]:
    name = op.name

    def unary(x: Any, /) -> Array:
        if type(x) is ArrayImpl:
            v = x._value
            k: object = x._key
        elif isinstance(x, Tracer | TransformTracer):
            return _trace.elementwise(op, (x,))
        else:
            v, k = _array.operand(x, name, 0)
        scope = _scope.get()
        state = _config._global if scope is None else scope.resolve()
        memo = state.memo
        plan = memo.get((op, k))
        if plan is None:
            plan = memo[(op, k)] = build_plan(op, (k,), state)
        fn, convs, out_key, fp, cd = plan
        how = convs[0].how
        if how == _CAST:
            v = _core.ignore_fp_errors(v.astype, cd)
        elif how == _CHECK:
            v = _core.check_operand(v, cd, name, 0)
            v = _core.ignore_fp_errors(v.astype, cd, copy=False)
        elif how == _WEAK:
            v = _core.weak_to(v, cd, name)
        elif how != _KEEP:
            v = _core.python_scalar_to(v, cd, name)
        out = _core.ignore_fp_errors(fn, v) if fp else fn(v)
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        if out.dtype != out_key[0]:
            out = _core.ignore_fp_errors(out.astype, out_key[0])
        # real and imag give views of NumPy input: they must not be its.
        return wrap(_core.unshared(out, x), out_key)

    unary.__name__ = unary.__qualname__ = name
    unary.__module__ = "typelattice.numpy"  # where users find it (and pickle)
    unary._op = op  # type: ignore[attr-defined]
    return cast("Callable[[ArrayLike], Array]", _fast(op, unary))


def make_binary(op: Op) -> Callable[[ArrayLike, ArrayLike], Array]:
    name = op.name

    def binary(x: Any, y: Any, /) -> Array:
        # The hot path of every operator: written out, no helper calls for
        # arrays and Python scalars once the plan is cached.
        tx = type(x)  # pyright: ignore[reportUnknownVariableType]
        if tx is ArrayImpl:
            vx = x._value
            kx: object = x._key
        elif tx is int or tx is float or tx is complex or tx is bool:
            vx = x
            kx = tx
        elif isinstance(x, Tracer | TransformTracer):
            return _trace.elementwise(op, (x, y))
        else:
            vx, kx = _array.operand(x, name, 0)
        ty = type(y)  # pyright: ignore[reportUnknownVariableType]
        if ty is ArrayImpl:
            vy = y._value
            ky: object = y._key
        elif ty is int or ty is float or ty is complex or ty is bool:
            vy = y
            ky = ty
        elif isinstance(y, Tracer | TransformTracer):
            return _trace.elementwise(op, (x, y))
        else:
            vy, ky = _array.operand(y, name, 1)
        scope = _scope.get()
        state = _config._global if scope is None else scope.resolve()
        memo = state.memo
        plan = memo.get((op, kx, ky))
        if plan is None:
            plan = memo[(op, kx, ky)] = build_plan(op, (kx, ky), state)
        fn, (cx, cy), out_key, fp, cd = plan
        cast_in_ufunc = False
        how = cx[0]
        if how:
            if how == _CAST:
                cast_in_ufunc = True
            elif how == _CHECK:
                vx = _core.check_operand(vx, cd, name, 0)
                cast_in_ufunc = True
            elif how == _INT:
                if not cx[1] <= vx <= cx[2]:
                    _core.python_scalar_to(vx, cd, name)
            elif how == _WEAK:
                vx = _core.weak_to(vx, cd, name)
            else:
                vx = _core.python_scalar_to(vx, cd, name)
        how = cy[0]
        if how:
            if how == _CAST:
                cast_in_ufunc = True
            elif how == _CHECK:
                vy = _core.check_operand(vy, cd, name, 1)
                cast_in_ufunc = True
            elif how == _INT:
                if not cy[1] <= vy <= cy[2]:
                    _core.python_scalar_to(vy, cd, name)
            elif how == _WEAK:
                vy = _core.weak_to(vy, cd, name)
            else:
                vy = _core.python_scalar_to(vy, cd, name)
        if state.rank_promotion != "allow":
            _core.check_rank(name, [np.shape(vx), np.shape(vy)], state.rank_promotion)
        token = _EXTOBJ.set(_IGNORE) if fp else None
        try:
            if cast_in_ufunc:
                out = _cast_call(fn, vx, vy, cd)
            else:
                out = fn(vx, vy)
        except ValueError as err:
            if "broadcast" in str(err):
                _core.broadcast_error(name, [np.shape(vx), np.shape(vy)])
            raise
        finally:
            if token is not None:
                _EXTOBJ.reset(token)
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        odt = out.dtype
        if odt is not out_key[0] and odt != out_key[0]:
            out = _core.ignore_fp_errors(out.astype, out_key[0])
        result: ArrayImpl = _new_object(ArrayImpl)
        result._value = out
        result._key = out_key
        return result

    binary.__name__ = binary.__qualname__ = name
    binary.__module__ = "typelattice.numpy"  # where users find it (and pickle)
    binary._op = op  # type: ignore[attr-defined]
    return cast("Callable[[ArrayLike, ArrayLike], Array]", _fast(op, binary))


def _fast(op: Op, fn: Callable[..., Array]) -> Callable[..., Array]:
    """``fn``, or when the extension is built the same function in C for
    arrays and Python scalars with a cached plan (it calls ``fn`` for
    everything else)."""
    if _speedups is None or not _FAST:
        op.function = fn
        return fn
    fast = _speedups.FastElementwise(op, fn)
    functools.update_wrapper(fast, fn)
    fast._op = op  # pyright: ignore[reportAttributeAccessIssue]
    op.function = cast("Callable[..., Array]", fast)
    return op.function


def fast_operator(
    fn: Callable[..., Any], fallback: Callable[..., Any], reflected: bool
) -> Callable[..., Any] | None:
    """An operator of ArrayImpl computing ``fn`` in C, when the extension is
    built and ``fn`` is one of its elementwise functions; else None.

    It runs ``fn``'s plans directly (no Python frame for ``x + 2``) and calls
    ``fallback``, the Python operator, with the same arguments for anything
    else; so every answer and error is the Python one. ``reflected``: the
    operator applies ``fn`` to ``(other, self)`` (``__radd__``).
    """
    if _speedups is None or not _FAST:
        return None
    if not isinstance(fn, _speedups.FastElementwise):
        return None
    fast = _speedups.FastElementwise(cast(Any, fn).op, fallback, reflected)
    functools.update_wrapper(fast, fallback)
    return cast("Callable[..., Any]", fast)


# FastElementwise reads ArrayImpl's slots and sets NumPy's error state through its
# ContextVar (not np.errstate), reads plans by their conversion codes (which
# must be this module's), and calls these helpers for the conversions that
# can raise.
_FAST: Final = (
    _speedups is not None
    and isinstance(_EXTOBJ, ContextVar)
    and getattr(_speedups, "CONVERSIONS", None) == {c.name: c.value for c in Conversion}
)
if _speedups is not None and _FAST:
    _speedups.configure_binary(
        ArrayImpl,
        vars(ArrayImpl)["_value"],
        vars(ArrayImpl)["_key"],
        _EXTOBJ,
        _IGNORE,
        _core.python_scalar_to,
        _core.weak_to,
        _cast_call,
        finish,
        np.asarray,
        _core.check_operand,
    )
