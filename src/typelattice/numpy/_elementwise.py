"""Elementwise functions: the promotion plan, then ``typelattice.lax``.

Each function is described by an :class:`Op` (which dtypes it accepts, what
it computes in, what it returns, and its formulation with ``lax``
primitives); its plan for given operand types is built once per
configuration and cached. A call looks the plan up, converts the operands
that need it with ``convert_element_type`` (checked where values could
change: see docs/semantics.md, "Data safety"), broadcasts them, applies the
formulation and gives the result the plan's dtype and weak flag. That one
function runs eagerly, under ``jit`` and ``eval_shape`` (the primitives are
recorded) and under differentiation (the primitives' rules run).

When the C extension is built, ``FastElementwise`` runs the commonest
plans (arrays and Python scalars, a formulation of one primitive with a
plain NumPy function) in C: the plan's ``fn`` is that primitive's own
function for the compute dtype, so both give the same values.
"""

# Package-internal: reads the arrays' underscored slots and the configuration's
# and _core's private state by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

import numpy as np

from typelattice import _array, _config, _core, _dtypes
from typelattice._array import ArrayImpl, BackendArray, native_result, wrap
from typelattice._basearray import Array
from typelattice._config import _scope
from typelattice._core import _EXTOBJ, _IGNORE, Conv, Conversion, Plan
from typelattice._lax._elementwise import Check, _cast, convert_element_type_p
from typelattice._lax._primitive import ShapedArray, broadcast_in_dim_p, reshape_p
from typelattice._promotion import _speedups
from typelattice._tracing.primitive import CHECK_NATIVE, Primitive, on_device
from typelattice._tracing.tracer import JitTracer, Tracer, innermost_trace

if TYPE_CHECKING:
    from typelattice.typing import ArrayLike

DType = np.dtype[Any]
_F = TypeVar("_F", bound=Callable[..., Any])


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
#: The largest double below 2**1023 (see :func:`build_plan`).
_BELOW_INT_LIMIT: Final = float(np.nextafter(2.0**1023, 0.0))
_PY_SCALARS: Final = (int, float, complex, bool)

#: How an Op names its primitive: one for every compute dtype, or one per
#: compute dtype (None where the formulation is a composition).
PrimFor = Primitive | Callable[[DType], Primitive | None]


class Op:
    """How one elementwise function treats dtypes, and what it computes.

    Args:
      name: the function's name, for messages.
      fn: the NumPy function computing the same (the ufunc methods' loops).
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
      prim: the primitive that computes the function on operands of the
        compute dtype, or a function of the compute dtype giving it or None
        (then ``lower`` computes).
      lower: the function written with ``typelattice.lax`` on operands in
        the compute dtype, of one rank with axes of size 1 where they
        broadcast, or of rank 0 (``full=True``: all of the result's shape).
      full: ``lower`` needs every operand at the result's shape.
      params: the parameters ``prim`` is bound with.
    """

    __slots__ = (
        "accept",
        "error",
        "fn",
        "fp_int",
        "full",
        "function",
        "identity_kinds",
        "lowered",
        "name",
        "nin",
        "out",
        "params",
        "prim",
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
        prim: PrimFor | None = None,
        lower: Callable[..., Any] | None = None,
        full: bool = False,
        params: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        # The namespace function made of it (make_unary, make_binary).
        self.function: Callable[..., Array] | None = None
        self.fn = fn
        self.prim = prim
        self.params = params or {}
        self.lowered = lower
        self.full = full
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

    def primitive(self, cd: DType) -> Primitive | None:
        """The one primitive computing the function in ``cd``, if it is one
        (else ``lower`` composes the function)."""
        prim = self.prim
        if prim is None or isinstance(prim, Primitive):
            return prim
        return prim(cd)


_PROMOTE_ONLY: dict[str, Op] = {}


def promotion_op(name: str) -> Op:
    """An Op that only promotes (for :func:`promoted`), one per name, so its
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


def _fast_function(op: Op, cd: DType) -> Callable[..., Any] | None:
    """The plain NumPy function of ``op``'s primitive for operands of ``cd``
    (what binding it runs), when its formulation is that primitive alone."""
    prim = op.primitive(cd)
    if prim is None or prim.fast is None:
        return None
    aval = ShapedArray((), cd, False)
    fn = prim.fast(*[aval] * op.nin, **op.params)
    return fn if type(fn) is np.ufunc else None


def build_plan(op: Op, keys: tuple[object, ...], state: _config.State) -> Plan:
    """The cached plan of ``op`` on operands with these keys."""
    x64 = state.enable_x64
    dt, weak = _core.result_of(keys, state)
    kind = _dtypes.kind_of(dt)
    fn: Any
    if kind in op.identity_kinds:
        cd = dt
        fn = None
    else:
        cd = compute_dtype(op.name, op.accept, op.to, dt, x64, op.error)
        fn = _fast_function(op, cd) if op.nin else None
    if state.default_backend != "numpy" and not any(isinstance(k, tuple) for k in keys):
        # Python scalars alone under another default backend: the result is
        # a new array, made there by compute(); the C path, which runs the
        # plans that have an fn and makes NumPy arrays, must not take it.
        # (Such states have a memo of their own: see _config.State.)
        fn = None
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
            top = float(_dtypes.finfo(cd).max)
            if key is int:
                # (Ints beyond 2**1023 are refused whatever the dtype: the
                # bound is the float below it, which the C path compares
                # with the int rounded to a double.)
                top = min(top, _BELOW_INT_LIMIT)
            convs.append(Conv(_SCALAR, 0, top))
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


def promoted(
    name: str, args: Sequence[Any], *, keep_weak: bool
) -> tuple[list[Any], Plan]:
    """``args`` joined as a binary operation joins its operands (the plan
    of ``promotion_op(name)``), converted to the plan's dtype: arrays and
    tracers by ``convert_element_type`` (with a :class:`Check` where the
    plan says values could change, so they are checked where it runs),
    NumPy values and Python scalars now. The results are strong, or with
    ``keep_weak`` take the plan's weak flag. For the functions that join
    or contract arrays (``concatenate``, ``matmul``...)."""
    keys: list[object] = []
    given: list[Any] = []
    # Another library's arrays are joined by Python scalars and 0-d
    # arrays only: a caller's larger NumPy arrays are refused.
    _array.check_mixed(name, tuple(args))
    for i, a in enumerate(args):
        if isinstance(a, Array):
            keys.append(_core.aval(a.dtype, a.weak_type))
            given.append(a)
        else:
            v, k = _array.operand(a, name, i)
            keys.append(k)
            given.append(v)
    state = _state()
    op = promotion_op(name)
    tkeys = tuple(keys)
    plan = state.memo.get((op, tkeys))
    if plan is None:
        plan = state.memo[(op, tkeys)] = build_plan(op, tkeys, state)
    if state.rank_promotion != "allow":
        _core.check_rank(
            name, [tuple(np.shape(v)) for v in given], state.rank_promotion
        )
    cd = plan.cd
    weak = keep_weak and plan.out_key[1]
    out: list[Any] = []
    for i, (x, (how, lo, hi)) in enumerate(zip(given, plan.convs, strict=True)):
        if not isinstance(x, Array):  # a NumPy value or a Python scalar
            value = np.asarray(convert_value(x, how, lo, hi, cd, name, i), cd)
            out.append(wrap(value, _core.aval(cd, weak)))
        elif how == _CHECK:
            out.append(_convert_to(x, cd, weak, Check("operand", name, i)))
        elif how == _WEAK:
            out.append(_convert_to(x, cd, weak, Check("weak", name, i)))
        elif x.dtype != cd or x.weak_type != weak:
            out.append(convert_element_type_p.bind(x, new_dtype=cd, weak_type=weak))
        else:
            out.append(x)
    return out, plan


def _convert_to(x: Any, dt: DType, weak: bool, check: Check) -> Any:
    """``x`` in ``dt`` with the weak flag ``weak``, its values checked by
    ``check`` (nothing to do, or check, when it has them already)."""
    if x.dtype == dt and x.weak_type == weak:
        return x
    return convert_element_type_p.bind(x, new_dtype=dt, weak_type=weak, check=check)


def convert_value(
    v: Any, how: int, lo: int | float, hi: int | float, cd: DType, name: str, i: int
) -> Any:
    """One operand's NumPy value in the compute dtype (for :func:`promoted`)."""
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


# -- the one implementation -------------------------------------------------


def _scalar_operand(
    v: Any, how: int, lo: int | float, hi: int | float, cd: DType, name: str
) -> ArrayImpl:
    """A Python scalar operand in the compute dtype: its value is known
    now, so it is checked now (in every mode), and made a weak 0-d array."""
    if how == _INT:
        if not lo <= v <= hi:
            _core.python_scalar_to(v, cd, name)  # raises
        value = np.asarray(v, cd)
    elif how == _KEEP:
        value = np.asarray(v, cd)
    else:
        value = np.asarray(_core.python_scalar_to(v, cd, name), cd)
    return wrap(value, _core.aval(cd, True))


def _convert(x: Any, how: int, cd: DType, name: str, pos: int) -> Any:
    """An array operand (or tracer) in the compute dtype, its weak flag
    kept: checked by the conversion itself where the plan says values
    could change."""
    if how == _CHECK:
        check = Check("operand", name, pos)
    elif how == _WEAK:
        check = Check("weak", name, pos)
    else:  # a plain conversion (a Python bool traced as an argument too)
        return convert_element_type_p.bind(x, new_dtype=cd, weak_type=x.weak_type)
    return convert_element_type_p.bind(
        x, new_dtype=cd, weak_type=x.weak_type, check=check
    )


def broadcast(
    name: str,
    operands: list[Any],
    shapes: list[tuple[int, ...]],
    state: _config.State,
    full: bool,
) -> None:
    """Give ``operands`` (in place) the shapes the formulation takes:
    lower ranks get leading axes of size 1 (or, for a formulation that
    needs them, every operand the result's shape); rank promotion and
    broadcasting errors name the function ``name``."""
    if state.rank_promotion != "allow":
        _core.check_rank(name, shapes, state.rank_promotion)
    first = shapes[0]
    if all(s == first for s in shapes):
        return
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        _core.broadcast_error(name, shapes)
    n = len(shape)
    for i, s in enumerate(shapes):
        if s == shape:
            continue
        x = operands[i]
        if full:
            dims = tuple(range(n - len(s), n))
            operands[i] = broadcast_in_dim_p.bind(
                x, shape=shape, broadcast_dimensions=dims
            )
        elif 0 < len(s) < n:
            sizes = (1,) * (n - len(s)) + s
            operands[i] = reshape_p.bind(x, new_sizes=sizes, dimensions=None)


def operands(
    op: Op, args: tuple[Any, ...]
) -> tuple[list[Any], list[tuple[int, ...]], Plan, list[ArrayImpl]]:
    """``args`` as ``op``'s plan makes them: arrays or tracers in the
    compute dtype (Python scalars converted and checked now, arrays by
    ``convert_element_type``, checked as the plan says), their shapes, the
    plan, and the arrays made around NumPy memory of the caller's (which
    a result must not be)."""
    name = op.name
    n = len(args)
    items = list(args)
    keys: list[object] = []
    borrowed: list[ArrayImpl] = []
    native = False
    for i, a in enumerate(args):
        t = type(a)  # pyright: ignore[reportUnknownVariableType]
        if t is ArrayImpl:
            keys.append(a._key)
        elif t in _PY_SCALARS:
            keys.append(t)
        elif isinstance(a, JitTracer):
            keys.append(a._promotes_as)
        elif isinstance(a, Tracer | BackendArray):
            keys.append(_core.aval(a.dtype, a.weak_type))
            native = native or t is BackendArray
        else:
            v, k = _array.operand(a, name, i, borrow=True)
            keys.append(k)
            if isinstance(k, tuple):
                # Possibly the caller's NumPy memory: computed from, never
                # returned nor viewed by the result (see result()).
                items[i] = wrap(v, cast(_core.Aval, k))
                borrowed.append(items[i])
            else:
                items[i] = v
    if native:
        _array.check_mixed(name, args)
    state = _state()
    memo = state.memo
    if n == 1:
        mkey: tuple[Any, ...] = (op, keys[0])
    elif n == 2:
        mkey = (op, keys[0], keys[1])
    else:
        mkey = (op, tuple(keys))
    plan = memo.get(mkey)
    if plan is None:
        plan = memo[mkey] = build_plan(op, tuple(keys), state)
    cd = plan.cd
    converted: list[Any] = []
    shapes: list[tuple[int, ...]] = []
    for i, (x, (how, lo, hi)) in enumerate(zip(items, plan.convs, strict=True)):
        if type(x) in _PY_SCALARS:
            x = _scalar_operand(x, how, lo, hi, cd, name)
        elif how != _KEEP:
            x = _convert(x, how, cd, name, i)
        converted.append(x)
        shapes.append(tuple(x.shape))
    return converted, shapes, plan, borrowed


def call(op: Op, args: tuple[Any, ...]) -> Array:
    """``op`` on ``args``: the elementwise function itself, on arrays,
    NumPy values, Python scalars and tracers of every kind alike
    (:func:`compute`).

    With a differentiation's tracer among ``args``, the call is handed to
    the innermost tracer's trace as one namespace call
    (``process_lowering``), computed by :func:`compute` both on the
    tracers and, for the value, on the primal values: in reverse mode a
    call seen before then runs from its remembered linearization, and a
    training loop's backward pass from one remembered program. (jit's and
    eval_shape's traces would run :func:`compute` on their tracers: it is
    called directly.)"""
    if type(args[0]) is BackendArray or (
        len(args) > 1 and type(args[1]) is BackendArray
    ):
        done = native_call(op, args)
        if done is not None:
            return done
    for a in args:
        if isinstance(a, Tracer) and a._trace.differentiates:

            def run(leaves: list[Any]) -> Any:
                return compute(op, tuple(leaves))

            def evaluate(leaves: list[Any]) -> Any:
                # (the namespace function itself: on arrays, its C plans)
                function = op.function
                if function is None:
                    return call(op, tuple(leaves))
                return function(*leaves)

            trace = innermost_trace(args)
            assert trace is not None
            out: Array = trace.process_lowering(
                op, run, list(args), len(args), evaluate
            )
            return out
    return compute(op, args)


# -- another library's arrays: the plans of one backend and device ----------
#
# What compute() decides from the operands' dtypes, weak flags and shapes is
# decided once per signature, backend and device for the calls whose
# operands are another library's arrays (of one backend and device) and
# Python scalars: a NativeCall runs the same primitives' implementations on
# the native values (the conversions, then the primitive) and nothing else.
# Calls it does not cover (checked conversions, compositions, broadcasting
# across ranks, a result to convert) take compute(), whose answers these are.


class NativeCall:
    """:func:`compute`'s work on operands of one signature, backend and
    device, as a function of the operands (:func:`native_call`)."""

    __slots__ = (
        "backend",
        "convs",
        "device",
        "fused",
        "out",
        "out_key",
        "params",
        "prim",
        "scalars",
    )

    def __init__(
        self,
        prim: Primitive,
        params: dict[str, Any],
        convs: list[dict[str, Any] | None],
        scalars: list[tuple[int, int | float, int | float, DType] | None],
        out: ShapedArray,
        backend: Any,
        device: str,
        fused: Callable[..., Any] | None,
    ) -> None:
        self.prim = prim
        self.params = params
        self.backend = backend
        self.device = device
        backend.impl(prim)  # (raises now where the backend has none)
        self.scalars = scalars
        self.out = out
        self.out_key = _core.aval(out.dtype, out.weak_type)
        self.fused = fused
        self.convs = None if fused is not None or not any(convs) else convs

    def __call__(self, args: tuple[Any, ...]) -> Array | None:
        backend, device = self.backend, self.device
        values: list[Any] = []
        for i, a in enumerate(args):
            scalar = self.scalars[i]
            if scalar is None:
                values.append(a._value)
                continue
            value = _native_scalar(a, scalar, backend, device)
            if value is None:
                return None  # (out of the plain range: compute() checks it)
            values.append(value)
        if self.convs is not None:
            convert = backend.impl(convert_element_type_p)
            for i, c in enumerate(self.convs):
                if c is not None:
                    values[i] = convert(values[i], **c)
        token = _EXTOBJ.set(_IGNORE)  # (a backend computing with NumPy)
        try:
            if self.fused is not None:
                out = self.fused(*values)
            else:  # (looked up each time: an implementation may be replaced)
                out = backend.impl(self.prim)(*values, **self.params)
        finally:
            _EXTOBJ.reset(token)
        if CHECK_NATIVE:
            return self.prim._native_out(out, self.out, backend, device)
        return native_result(out, self.out_key, self.out.shape, backend, device)


#: The largest Python int converted to a floating dtype
#: (:func:`typelattice._core.python_scalar_to`).
_INT_LIMIT: Final = 2**1023


def _native_scalar(
    v: Any,
    conv: tuple[int, int | float, int | float, DType],
    backend: Any,
    device: str,
) -> Any:
    """A Python scalar operand as :func:`_scalar_operand` makes it, on
    ``backend`` and ``device``; None when its value is outside the range
    converted without checks."""
    how, lo, hi, cd = conv
    t = type(v)  # pyright: ignore[reportUnknownVariableType]
    if how == _SCALAR:
        # (As the C path: below the dtype's largest value, and inf and nan,
        # which it holds, the checked conversion cannot fail.)
        if t is complex or not (abs(v) <= hi or (t is float and not v - v == 0)):
            return None
        if t is int and abs(v) > _INT_LIMIT:
            return None  # (refused by python_scalar_to, below float64's max)
    elif how == _INT and not lo <= v <= hi:
        return None
    return on_device(v, cd, backend, device)


_NUMBERS: Final = (int, float, complex)


def native_call(op: Op, args: tuple[Any, ...]) -> Array | None:
    """``op`` on operands that are another library's arrays, all of one
    backend and device, and Python scalars, by the :class:`NativeCall` of
    their signature; None for every other call (:func:`compute` then)."""
    # The signature: each array's (key, shape), each scalar's type, then
    # the backend and device (one and two operands spelled out: most calls).
    n = len(args)
    key: tuple[Any, ...]
    if n == 2:
        x, y = args
        if type(x) is BackendArray:
            first = x
            if type(y) is BackendArray:
                if y._backend is not x._backend or y._device != x._device:
                    return None
                key = (op, x._key, x._shape, y._key, y._shape, x._backend, x._device)
            elif type(y) in _NUMBERS:
                ty = type(y)  # pyright: ignore[reportUnknownVariableType]
                key = (op, x._key, x._shape, ty, x._backend, x._device)  # pyright: ignore[reportUnknownVariableType]
            else:
                return None
        elif type(x) in _NUMBERS and type(y) is BackendArray:
            first = y
            tx = type(x)  # pyright: ignore[reportUnknownVariableType]
            key = (op, tx, y._key, y._shape, y._backend, y._device)  # pyright: ignore[reportUnknownVariableType]
        else:
            return None
    elif n == 1:
        first = args[0]
        key = (op, first._key, first._shape, first._backend, first._device)
    else:
        found: BackendArray | None = None
        parts: list[Any] = [op]
        for a in args:
            t = type(a)  # pyright: ignore[reportUnknownVariableType]
            if t is BackendArray:
                if found is None:
                    found = a
                elif a._backend is not found._backend or a._device != found._device:
                    return None
                parts += (a._key, a._shape)
            elif t in _NUMBERS:
                parts.append(t)
            else:
                return None
        assert found is not None
        first = found
        key = (*parts, first._backend, first._device)
    memo = _state().memo
    run = memo.get(key)
    if run is None:
        run = memo[key] = _native_plan(op, args, first, _state())
    return run(args)


def _not_native(args: tuple[Any, ...]) -> None:
    """The :func:`native_call` of signatures :func:`compute` computes."""
    return None


def _native_plan(
    op: Op, args: tuple[Any, ...], first: BackendArray, state: _config.State
) -> Callable[[tuple[Any, ...]], Array | None]:
    """The function computing ``op`` on operands of ``args``'s signature
    (:func:`native_call`), or :func:`_not_native` where :func:`compute`
    does more than convert without checks and bind one primitive whose
    result needs nothing."""
    keys: list[object] = []
    for a in args:
        keys.append(a._key if type(a) is BackendArray else type(a))  # pyright: ignore[reportUnknownArgumentType]
    plan = build_plan(op, tuple(keys), state)
    cd = plan.cd
    if _dtypes.kind_of(cd) in op.identity_kinds:
        return _not_native
    prim = op.primitive(cd)
    if prim is None or prim.multiple_results or prim.abstract_eval is None:
        return _not_native
    ranks = {len(a._shape) for a in args if type(a) is BackendArray}
    if len(ranks) > 1 and (0 not in ranks or len(ranks) > 2):
        return _not_native  # (compute() gives them one rank first)
    if state.rank_promotion != "allow" and len(ranks) > 1:
        return _not_native
    convs: list[dict[str, Any] | None] = []
    scalars: list[tuple[int, int | float, int | float, DType] | None] = []
    avals: list[ShapedArray] = []
    for a, (how, lo, hi) in zip(args, plan.convs, strict=True):
        if type(a) is not BackendArray:
            if how not in (_INT, _KEEP) and not (how == _SCALAR and hi > 0):
                return _not_native  # (converted by python_scalar_to's checks)
            convs.append(None)
            scalars.append((how, lo, hi, cd))
            avals.append(ShapedArray((), cd, True))
            continue
        scalars.append(None)
        if how == _KEEP:
            convs.append(None)
        elif how in (_CHECK, _WEAK):
            return _not_native  # (checked where the conversion runs)
        else:
            convs.append({"new_dtype": cd, "weak_type": a.weak_type})
        avals.append(ShapedArray(a._shape, cd, a.weak_type))
    try:
        out = prim.evaluate(avals, op.params)
    except Exception:  # (compute() raises it, with its own message)
        return _not_native
    if (out.dtype, out.weak_type) != tuple(plan.out_key):
        return _not_native  # (the result is converted)
    backend = first._backend
    # Conversions inside the primitive's kernel where the backend has one
    # (the same values as convert_element_type without checks, then the
    # primitive), for arrays of one rank: a library's own promotion may
    # treat a 0-d operand otherwise.
    fused = None
    arrays_only = all(s is None for s in scalars)
    if any(convs) and not op.params and len(ranks) == 1 and arrays_only:
        dtypes = [a._key[0] if c else None for a, c in zip(args, convs, strict=True)]
        fused = backend.promoting(prim, dtypes, cd)
    call = NativeCall(
        prim, dict(op.params), convs, scalars, out, backend, first._device, fused
    )
    if arrays_only and not op.params and (call.convs is None or fused is not None):
        return _direct(call)
    return call


def _direct(call: NativeCall) -> Callable[[tuple[Any, ...]], Array | None]:
    """:class:`NativeCall` ``call`` where it calls one function on the
    arrays' values (no scalars, no parameters, no separate conversions),
    spelled out for one and two operands: the hot path of small
    operations."""
    prim, out, out_key, fused = call.prim, call.out, call.out_key, call.fused
    backend, device, shape = call.backend, call.device, call.out.shape
    impls = backend.impls

    def run(args: tuple[Any, ...]) -> Array | None:
        # (The implementation looked up each time: it may be replaced.)
        fn = fused if fused is not None else impls[prim]
        token = _EXTOBJ.set(_IGNORE)  # (a backend computing with NumPy)
        try:
            if len(args) == 2:
                value = fn(args[0]._value, args[1]._value)
            else:
                value = fn(*[a._value for a in args])
        finally:
            _EXTOBJ.reset(token)
        if CHECK_NATIVE:
            return prim._native_out(value, out, backend, device)
        return native_result(value, out_key, shape, backend, device)

    return run


def compute(op: Op, args: tuple[Any, ...]) -> Array:
    """``op`` on ``args``: the operands converted by the plan
    (:func:`operands`), given one rank, computed by the formulation, and
    the result converted to the plan's dtype and weak flag."""
    ops, shapes, plan, borrowed = operands(op, args)
    cd = plan.cd
    identity = _dtypes.kind_of(cd) in op.identity_kinds
    prim = None if identity else op.primitive(cd)
    if len(ops) > 1:
        broadcast(op.name, ops, shapes, _state(), op.full and prim is None)
    if identity:
        out = ops[0]
    elif prim is not None:
        out = prim.bind(*ops, **op.params)
    else:
        assert op.lowered is not None, f"{op} has no formulation for {cd}"
        out = op.lowered(*ops)
    if type(out) is ArrayImpl:
        # Computed from constants alone (the zeros of imag of a real
        # array, a power by a concrete exponent): on the operands' backend.
        for a in args:
            if type(a) is BackendArray:
                out = _array.placed(out, a._backend, a._device)
                break
            if type(a) not in _PY_SCALARS:
                break
        else:  # from Python scalars alone: a new array, made where they are
            out = _array.place(out, _array.placement(None, None))
    return result(out, plan.out_key, borrowed)


def result(out: Any, out_key: _core.Aval, borrowed: list[ArrayImpl]) -> Array:
    """``out`` with the dtype and weak flag ``out_key``, never sharing the
    memory of the ``borrowed`` arrays (the caller's)."""
    out_dt, out_weak = out_key
    if out.dtype != out_dt or out.weak_type != out_weak:
        out = _cast(out, out_dt, out_weak)
    for b in borrowed:
        # (An identity, a conversion to the same dtype, a broadcast: the
        # caller's memory or a view of it, which the caller can change.)
        if type(out) is ArrayImpl and np.may_share_memory(out._value, b._value):
            return wrap(out._value.copy(), out._key)
    return out  # type: ignore[no-any-return]


def finish(out: Any, out_key: _core.Aval) -> Array:
    """A NumPy result as an Array of ``out_key`` (the C path's)."""
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if out.dtype != out_key[0]:
        out = _core.ignore_fp_errors(out.astype, out_key[0])
    return wrap(out, out_key)


def _cast_call(fn: Callable[..., Any], x: Any, y: Any, cd: DType) -> Any:
    """``fn(x, y)`` with array operands converted to ``cd`` (the C path's).

    A ufunc converts them chunk by chunk inside its loop: no full-size
    temporary copy (half the peak memory of converting first), the same
    values as converting first.
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


def lax_function(fn: _F) -> _F:
    """Mark a namespace function written with ``typelattice.lax`` and other
    such functions only (no NumPy on the values): it takes tracers of
    every kind as they are, with no shape rule (a decorator)."""
    fn._lax = True  # type: ignore[attr-defined]
    return fn


def make_unary(op: Op) -> Callable[[ArrayLike], Array]:
    def unary(x: Any, /) -> Array:
        return call(op, (x,))

    unary.__name__ = unary.__qualname__ = op.name
    unary.__module__ = "typelattice.numpy"  # where users find it (and pickle)
    unary._op = op  # type: ignore[attr-defined]
    return cast("Callable[[ArrayLike], Array]", _fast(op, unary))


def make_binary(op: Op) -> Callable[[ArrayLike, ArrayLike], Array]:
    def binary(x: Any, y: Any, /) -> Array:
        return call(op, (x, y))

    binary.__name__ = binary.__qualname__ = op.name
    binary.__module__ = "typelattice.numpy"  # where users find it (and pickle)
    binary._op = op  # type: ignore[attr-defined]
    return cast("Callable[[ArrayLike, ArrayLike], Array]", _fast(op, binary))


def _fast(op: Op, fn: Callable[..., Array]) -> Callable[..., Array]:
    """``fn``, or when the extension is built the same function in C for
    arrays and Python scalars with a cached plan whose ``fn`` is set (it
    calls ``fn`` for everything else)."""
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


# FastElementwise reads ArrayImpl's slots, keeps NumPy's error state quiet
# through its ContextVar (not np.errstate: a ufunc runs in a context of its
# own holding the quiet value), reads plans by their conversion codes (which
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
