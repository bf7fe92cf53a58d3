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

import operator
from collections.abc import Callable, Sequence
from typing import Any, Final, NamedTuple

import numpy as np

from typelattice import _config, _core, _dtypes
from typelattice._array import ArrayImpl, wrap
from typelattice._basearray import Array

__all__ = [
    "PRIMITIVES",
    "Primitive",
    "ShapedArray",
    "UndefinedPrimal",
    "Zero",
    "add_any_p",
    "add_tangents",
    "aval_of",
    "check_accepts",
    "check_same_dtypes",
    "defbilinear",
    "defjvp",
    "defjvp2",
    "defjvp_unsupported",
    "defjvp_zero",
    "deflinear",
    "float0",
    "instantiate",
    "ints_of",
    "is_undefined",
    "tangent_aval",
    "to_array",
    "to_arrays",
    "zeros",
]

DType = np.dtype[Any]
NDArray = np.ndarray[Any, Any]
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
        name = "float0" if self.dtype == float0 else self.dtype.name
        return f"ShapedArray({name}[{dims}]{weak})"


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
    - ``def_jvp`` and ``def_transpose``: the differentiation rules (see the
      module's notes for their signatures), stored for the transformations
      to use.

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

    def bind(self, *args: Any, **params: Any) -> Any:
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
    if type(x) is ShapedArray:
        return x
    if type(x) in (Zero, UndefinedPrimal):
        return x.aval  # type: ignore[no-any-return]
    return ShapedArray(tuple(x.shape), x.dtype, x.weak_type)


def zeros(aval: ShapedArray) -> ArrayImpl:
    """An array of zeros of ``aval``: a constant, made from the abstract
    value alone.

    Raises:
      TypeError: ``aval`` is of :data:`float0`, which holds no values.
    """
    if aval.dtype == float0:
        raise TypeError(
            "a tangent of a bool or integer value is symbolic (Zero) and has no "
            "array of zeros; rules must not instantiate it"
        )
    return wrap(
        np.zeros(aval.shape, aval.dtype), _core.aval(aval.dtype, aval.weak_type)
    )


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
