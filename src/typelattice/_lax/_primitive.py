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
and the abstract evaluation's weak flag. The tests check, for every recorded
call, that the implementation's dtype and shape are the ones the abstract
evaluation announced.

The public functions convert their arguments (:func:`to_arrays`) and bind.
There is no implicit promotion: operands of one primitive that must agree
must have one dtype. Only a Python scalar adapts: it takes the dtype of the
arrays it meets when that dtype holds its kind on the promotion lattice (an
int in any integer or floating type, a float in a floating type...), and the
default dtype of its kind otherwise. Either way it is weak and its value is
checked (``uint8`` with ``300`` raises OverflowError).
"""

# Package-internal: reads the arrays' underscored slots by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

import numpy as np

from typelattice import _config, _dtypes
from typelattice.numpy import _core
from typelattice.numpy._array import Array, ArrayImpl, wrap

__all__ = [
    "PRIMITIVES",
    "Primitive",
    "ShapedArray",
    "check_accepts",
    "check_same_dtypes",
    "ints_of",
    "to_array",
    "to_arrays",
]

DType = np.dtype[Any]
Shape = tuple[int, ...]
_PY_SCALARS: Final = (int, float, complex)


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
        return f"ShapedArray({self.dtype.name}[{dims}]{weak})"


AbstractEval = Callable[..., Any]
Impl = Callable[..., Any]

#: Every primitive, by name, in the order of definition.
PRIMITIVES: dict[str, Primitive] = {}


class Primitive:
    """A named operation of :mod:`typelattice.lax` and its rules.

    Rules are registered where the primitive is defined, with the ``def_*``
    methods (each returns its argument, so they serve as decorators):

    - ``def_impl``: the eager evaluation, on NumPy arrays (and the
      primitive's keyword parameters);
    - ``def_abstract_eval``: :class:`ShapedArray` in, ``ShapedArray`` out
      (a tuple of them with ``multiple_results``), raising on invalid input;
    - ``def_jvp`` and ``def_transpose``: differentiation rules, stored for
      the transformations to use (none is registered yet).

    >>> from typelattice._lax._elementwise import neg_p
    >>> neg_p
    Primitive('neg')
    >>> neg_p.abstract_eval(ShapedArray((3,), np.dtype('int8')))
    ShapedArray(int8[3])
    """

    __slots__ = (
        "abstract_eval",
        "impl",
        "jvp",
        "multiple_results",
        "name",
        "transpose",
    )

    name: str
    multiple_results: bool
    impl: Impl | None
    abstract_eval: AbstractEval | None
    jvp: Callable[..., Any] | None
    transpose: Callable[..., Any] | None

    def __init__(self, name: str, *, multiple_results: bool = False) -> None:
        if name in PRIMITIVES:
            raise ValueError(f"a primitive named {name!r} is defined already")
        self.name = name
        self.multiple_results = multiple_results
        self.impl = None
        self.abstract_eval = None
        self.jvp = None
        self.transpose = None
        PRIMITIVES[name] = self

    def __repr__(self) -> str:
        return f"Primitive({self.name!r})"

    def def_impl(self, impl: Impl) -> Impl:
        self.impl = impl
        return impl

    def def_abstract_eval(self, rule: AbstractEval) -> AbstractEval:
        self.abstract_eval = rule
        return rule

    def def_jvp(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.jvp = rule
        return rule

    def def_transpose(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        self.transpose = rule
        return rule

    def bind(self, *args: ArrayImpl, **params: Any) -> Any:
        """Evaluate on arrays: check with the abstract evaluation, compute
        with the implementation. Returns an array (a tuple of arrays with
        ``multiple_results``) that owns its data."""
        if self.impl is None or self.abstract_eval is None:
            raise NotImplementedError(f"primitive {self.name} has no rules")
        avals = [ShapedArray(x.shape, x.dtype, x.weak_type) for x in args]
        out = self.abstract_eval(*avals, **params)
        values = [x._value for x in args]
        result = _core.ignore_fp_errors(self.impl, *values, **params)
        if self.multiple_results:
            return tuple(
                _owned(v, a.weak_type, values) for v, a in zip(result, out, strict=True)
            )
        return _owned(result, out.weak_type, values)


def _owned(value: Any, weak: bool, inputs: list[Any]) -> ArrayImpl:
    """A result as an array that owns its buffer: never a view of an
    operand, which may be a NumPy array the caller can still write to."""
    value = np.asarray(value)
    if not value.flags.owndata or any(value is x for x in inputs):
        value = value.copy()
    return wrap(value, _core.aval(value.dtype, weak))


# -- operands ---------------------------------------------------------------


def _not_traceable(fname: str, pos: int, x: Array) -> TypeError:
    return TypeError(
        f"lax.{fname}: argument at position {pos} is a traced value ({x!r}); "
        "typelattice.lax is evaluated eagerly for now. Inside jit or "
        "eval_shape, use the typelattice.numpy functions."
    )


def to_array(x: Any, fname: str, pos: int, like: DType | None = None) -> ArrayImpl:
    """One argument as an array.

    Arrays keep their dtype and weak flag; NumPy arrays and scalars are
    strong (64-bit ones narrowed in 32-bit mode, values checked); a Python
    ``bool`` is a strong bool. A Python ``int``/``float``/``complex`` is
    weak: of dtype ``like`` when that dtype holds its kind on the promotion
    lattice, else of the default dtype of its kind; its value must fit.

    Raises:
      TypeError: lists, strings, objects, traced values.
      OverflowError: a Python scalar that the dtype cannot hold.
    """
    t = type(x)  # pyright: ignore[reportUnknownVariableType]
    if t is ArrayImpl:
        return x  # type: ignore[no-any-return]
    if t in _PY_SCALARS:
        state = _config.current()
        dt = _core.key_dtype(t, state.enable_x64)
        if like is not None and _holds(like, t, state):
            dt = like
        return wrap(_core.python_scalar_to(x, dt, f"lax.{fname}"), _core.aval(dt, True))
    if isinstance(x, ArrayImpl):
        return x
    if isinstance(x, Array):
        raise _not_traceable(fname, pos, x)
    value, key = _core.operand(x, f"lax.{fname}", pos)
    if key is bool:
        return wrap(np.asarray(value), _core.aval(np.dtype(bool), False))
    if not isinstance(key, _core.Aval):  # a Python scalar's subclass
        value = np.asarray(value)
        key = _core.aval(value.dtype, False)
    return wrap(value, key)


def _holds(dt: DType, t: type, state: _config.State) -> bool:
    """Whether ``dt`` holds Python scalars of type ``t`` on the lattice in
    force: the join of its strong node and ``t``'s weak node is ``dt``."""
    try:
        joined = _core.result_of([t, _core.aval(dt, False)], state)
    except ValueError:  # no join (strict mode, bool): it does not
        return False
    return joined == (dt, False)


def to_arrays(fname: str, args: Sequence[Any], first: int = 0) -> list[ArrayImpl]:
    """Arguments that must share one dtype, as arrays: Python scalars take
    the dtype of the first argument that is not one (see :func:`to_array`).
    ``first`` is the position of ``args[0]`` among the call's arguments."""
    if all(type(x) is ArrayImpl for x in args):  # the common case
        return list(args)
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
