"""What the primitives of :mod:`typelattice.lax` share: operand conversion
and the checks whose messages follow ``jax.lax``. The :class:`Primitive`
type, abstract values and the conventions of the differentiation rules are
in :mod:`typelattice._tracing.primitive` (re-exported here).

Three primitives are declared here, before the families that give them
their rules: ``broadcast_in_dim`` and ``reshape`` (rules in ``_structural``)
and ``reduce_sum`` (rules in ``_reductions``). The elementwise rules
broadcast tangents and sum cotangents over broadcast axes with them, and
the structural transposes sum, while those families are built on the
elementwise one: declared below them all, every family imports only the
ones before it.

The public functions convert their arguments (:func:`to_arrays`) and bind.
There is no implicit promotion: operands of one primitive that must agree
must have one dtype. Only a Python scalar adapts: it takes the dtype of the
arrays it meets when that dtype holds its kind on the promotion lattice (an
int in any integer or floating type, a float in a floating type...), and the
default dtype of its kind otherwise. Either way it is weak and its value is
checked (``uint8`` with ``300`` raises OverflowError). Tracers (of jit,
eval_shape and the differentiation transformations) are taken as they are.
"""

# Package-internal: reads the arrays' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

from typelattice import _array, _config, _core, _dtypes
from typelattice._array import ArrayImpl, BackendArray, wrap
from typelattice._basearray import Array
from typelattice._tracing.primitive import (
    PRIMITIVES,
    Primitive,
    ShapedArray,
    UndefinedPrimal,
    Zero,
    add_any_p,
    add_tangents,
    aval_of,
    batch_by_looping,
    batch_size,
    bdim_at_front,
    binds_operands,
    broadcast_batch,
    defbatch_axes,
    defbatch_elementwise,
    defbilinear,
    defjvp,
    defjvp2,
    defjvp_unsupported,
    defjvp_zero,
    deflinear,
    example_aval,
    float0,
    instantiate,
    is_undefined,
    moveaxis,
    tangent_aval,
    zeros,
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
    "batch_size",
    "bdim_at_front",
    "binds_operands",
    "broadcast_batch",
    "broadcast_in_dim_p",
    "check_accepts",
    "check_same_dtypes",
    "defbatch_axes",
    "defbatch_elementwise",
    "defbilinear",
    "defjvp",
    "defjvp2",
    "defjvp_unsupported",
    "defjvp_zero",
    "deflinear",
    "example_aval",
    "float0",
    "instantiate",
    "ints_of",
    "is_undefined",
    "moveaxis",
    "reduce_sum_p",
    "reshape_p",
    "tangent_aval",
    "to_array",
    "to_arrays",
    "zeros",
]

DType = np.dtype[Any]
_PY_SCALARS: Final = (int, float, complex)
_STRONG_BOOL: Final = _core.aval(np.dtype(bool), False)

# The primitives that rules of an earlier family bind (see the module's
# notes): declared once here, their rules registered by their own family.
broadcast_in_dim_p: Final = Primitive("broadcast_in_dim")
reshape_p: Final = Primitive("reshape")
reduce_sum_p: Final = Primitive("reduce_sum")


# -- operands ---------------------------------------------------------------


def to_array(x: Any, fname: str, pos: int, like: DType | None = None) -> Any:
    """One argument as an array, or a tracer as it is.

    Arrays keep their dtype and weak flag; NumPy arrays and scalars are
    strong (64-bit ones narrowed in 32-bit mode, values checked); a Python
    ``bool`` is a strong bool. A Python ``int``/``float``/``complex`` is
    weak: of dtype ``like`` when that dtype holds its kind on the promotion
    lattice, else of the default dtype of its kind; its value must fit.

    Raises:
      TypeError: lists, strings, objects.
      OverflowError: a Python scalar that the dtype cannot hold.
    """
    t = type(x)  # pyright: ignore[reportUnknownVariableType]
    if t is ArrayImpl:
        return x
    if t in _PY_SCALARS:
        # How scalars of type t meet ``like``, remembered per configuration
        # as the namespace's plans are: the dtype, the interned key, and
        # the range in which the value converts exactly as
        # python_scalar_to would convert it, without its checks.
        state = _config.current()
        memo_key = ("lax.scalar", like, t)
        conv = state.memo.get(memo_key)
        if conv is None:
            conv = state.memo[memo_key] = _scalar_conversion(like, t, state)
        dt, key, lo, hi = conv
        if t is complex:
            fits = lo <= x.real <= hi and lo <= x.imag <= hi
        else:
            fits = lo <= x <= hi
        if fits:
            return wrap(np.asarray(x, dt), key)
        return wrap(_core.python_scalar_to(x, dt, f"lax.{fname}"), key)
    if t is bool:
        return wrap(np.asarray(x), _STRONG_BOOL)
    if isinstance(x, ArrayImpl):
        return x
    if isinstance(x, Array):  # a tracer: its trace processes the primitive
        return x
    value, key = _array.operand(x, f"lax.{fname}", pos)
    if key is bool:
        return wrap(np.asarray(value), _core.aval(np.dtype(bool), False))
    if not isinstance(key, _core.Aval):  # a Python scalar's subclass
        value = np.asarray(value)
        key = _core.aval(value.dtype, False)
    return wrap(value, key)


def _scalar_conversion(
    like: DType | None, t: type, state: _config.State
) -> tuple[DType, _core.Aval, int | float, int | float]:
    """How :func:`to_array` converts Python scalars of type ``t`` (int,
    float or complex) that meet arrays of dtype ``like``: their dtype, its
    weak key, and a range [lo, hi] (of each part of a complex) inside
    which ``numpy.asarray(value, dtype)`` gives exactly what
    :func:`_core.python_scalar_to` gives, with nothing to refuse. Values
    outside it (nan and inf among them) take the checked conversion; an
    empty range sends every value there."""
    dt = _core.key_dtype(t, state.enable_x64)
    if like is not None and _holds(like, t, state):
        dt = like
    lo: int | float = 1
    hi: int | float = 0
    kind = _dtypes.kind_of(dt)
    if kind in "iu" and t is int:
        lo, hi = _dtypes.value_range(dt)
    elif kind in "fc" and (t is not complex or kind == "c"):
        part = np.finfo(dt).dtype if kind == "c" else dt
        if _dtypes.rounds_every_float(part):
            # Below the largest finite value, converting only rounds; ints
            # beyond 2**1023 are refused whatever the dtype.
            top = float(_dtypes.finfo(part).max)
            if t is int:
                top = min(top, 2.0**1023)
            lo, hi = -top, top
    return dt, _core.aval(dt, True), lo, hi


def _holds(dt: DType, t: type, state: _config.State) -> bool:
    """Whether ``dt`` holds Python scalars of type ``t`` on the lattice in
    force: the join of its strong node and ``t``'s weak node is ``dt``."""
    try:
        joined = _core.result_of([t, _core.aval(dt, False)], state)
    except ValueError:  # no join (strict mode, bool): it does not
        return False
    return joined == (dt, False)


def to_arrays(fname: str, args: Sequence[Any], first: int = 0) -> list[Any]:
    """Arguments that must share one dtype, as arrays: Python scalars take
    the dtype of the first argument that is not one (see :func:`to_array`).
    ``first`` is the position of ``args[0]`` among the call's arguments."""
    if len(args) == 2:  # most calls: an array and a Python scalar, or two arrays
        x, y = args
        if type(x) is ArrayImpl:
            if type(y) is ArrayImpl:
                return [x, y]
            if type(y) in _PY_SCALARS:
                return [x, to_array(y, fname, first + 1, x._key[0])]
        elif type(y) is ArrayImpl and type(x) in _PY_SCALARS:
            return [to_array(x, fname, first, y._key[0]), y]
        elif type(x) is BackendArray and type(y) is BackendArray:
            return [x, y]  # (their backends and devices: compared by bind)
    elif all(type(x) is ArrayImpl for x in args):
        return list(args)
    # (A caller's NumPy arrays are refused beside another library's.)
    _array.check_mixed(f"lax.{fname}", args, held=False)
    arrays = [
        None if type(x) in _PY_SCALARS else to_array(x, fname, first + i)
        for i, x in enumerate(args)
    ]
    like = next((a.dtype for a in arrays if a is not None), None)
    return [
        to_array(x, fname, first + i, like) if a is None else a
        for i, (x, a) in enumerate(zip(args, arrays, strict=True))
    ]


# -- checks -----------------------------------------------------------------

# jax.lax's words for the kinds of dtypes (NumPy's abstract type names).
_KIND_WORDS: Final = (
    ("b", "bool"),
    ("iu", "integer"),
    ("f", "floating"),
    ("c", "complexfloating"),
)


def kinds_of(kinds: str) -> str:
    """The words for a set of kinds (``'iufc'``: integer, floating...)."""
    return ", ".join(w for ks, w in _KIND_WORDS if set(ks) & set(kinds))


def check_accepts(
    fname: str, aval: ShapedArray, kinds: str, pos: int | None = None
) -> None:
    """Raise jax.lax's TypeError when ``aval``'s dtype is not of ``kinds``
    (``'b'`` bool, ``'i'``/``'u'`` signed/unsigned, ``'f'``, ``'c'``)."""
    if _dtypes.kind_of(aval.dtype) in kinds:
        return
    at = "" if pos is None else f" at position {pos}"
    raise TypeError(
        f"{fname} does not accept dtype {aval.dtype.name}{at}. Accepted dtypes"
        f"{at} are subtypes of {kinds_of(kinds)}."
    )


def check_same_dtypes(
    fname: str,
    avals: Sequence[ShapedArray],
    names: Sequence[str],
    promoting: str | None = None,
) -> None:
    """Raise TypeError naming every dtype when ``avals`` do not share one.

    ``names`` are the arguments' names (for the suggested conversion) and
    ``promoting`` the typelattice.numpy function that promotes instead.
    """
    first = avals[0].dtype
    for aval, name in zip(avals, names, strict=True):
        if aval.dtype != first:
            got = ", ".join(a.dtype.name for a in avals)
            tip = f", or use typelattice.numpy.{promoting}, which promotes"
            raise TypeError(
                f"lax.{fname} requires arguments to have the same dtypes, got "
                f"{got}. Convert explicitly, e.g. "
                f"lax.convert_element_type({name}, '{first.name}')"
                f"{tip if promoting else ''}."
            )


def ints_of(fname: str, what: str, values: Any) -> tuple[int, ...]:
    """A sequence of Python ints (NumPy integers and 0-d integer arrays
    accepted), or TypeError naming the argument."""
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(
            f"lax.{fname}: {what} must be a sequence of integers, got {values!r}"
        ) from None
