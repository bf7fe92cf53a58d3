"""``make_jaxpr``: a traced function's record, printed as JAX prints a jaxpr.

:func:`make_jaxpr` traces a function exactly as :func:`~typelattice.jit`
does (the same tracers, the same recorded equations) and returns a
:class:`ClosedJaxpr`: the function's inputs, the equations in the order
they were recorded, its outputs, and the arrays it closes over. Printed,
it reads as JAX's ``jax.make_jaxpr`` output::

    { lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }

The layout is JAX's: variables named ``a`` ... ``z``, ``ba``, ``bb`` ... in
the order they appear (constants, inputs, then each equation's results),
an output that nothing reads named ``_``, dtypes abbreviated (``f32``,
``i8``, ``bf16``, ``c64``) with no weak flag (JAX shows none in a jaxpr:
``in_avals`` keep it), 0-d constants written in place as literals
(``1.0:f32[]``), larger ones bound in the ``lambda a b ;`` part, a
primitive's parameters sorted by name in brackets, and the whole on one
line when it fits in 80 columns, else one equation a line. The pretty
printer is the one JAX describes (Lindig's "Strictly Pretty", where a
group breaks when it alone does not fit).

Functions of ``typelattice.numpy`` that are not yet written with
primitives are recorded as one call each; they are printed under their
namespace name (``typelattice.numpy.reshape``), so that the record shows
what still bypasses the primitives.
"""

# Package-internal: reads the tracers' and jit's underscored names by design.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, cast, overload
from typing import Literal as Exactly

import numpy as np

from typelattice._array import ArrayImpl
from typelattice._tracing import tracer as _tr
from typelattice._tracing.closed import ClosedProgram, Held
from typelattice._tracing.jit import Jitted, ShapeDtypeStruct, _abstract, _run_traced
from typelattice._tracing.primitive import (
    PRIMITIVES,
    Filled,
    Primitive,
    PrimitiveEquation,
    ShapedArray,
    float0,
)
from typelattice._tracing.trace import Barrier

__all__ = [
    "ClosedJaxpr",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "Var",
    "def_pp_params",
    "make_jaxpr",
]


# -- the pretty printer ---------------------------------------------------------
#
# A document is a tree of text, concatenation, breaks (a newline, or their
# text when their group is laid out flat), nesting (the indentation after a
# newline) and groups. A group is laid out flat when all of it fits in the
# rest of the line, else its own breaks become newlines (and the groups
# inside it decide again). JAX's printer works so (jax/_src/pretty_printer.py
# and its C++ successor); the jaxpr's documents below are built as JAX's.


class _Text(NamedTuple):
    text: str


class _Break(NamedTuple):
    text: str


class _Nest(NamedTuple):
    n: int
    child: Doc


class _Group(NamedTuple):
    child: Doc


class _Concat(NamedTuple):
    children: tuple[Doc, ...]


Doc = _Text | _Break | _Nest | _Group | _Concat

_FLAT, _BREAK = False, True


def _concat(*docs: Doc) -> Doc:
    return _Concat(docs)


def _join(sep: Doc, docs: Sequence[Doc]) -> Doc:
    parts: list[Doc] = []
    for i, d in enumerate(docs):
        if i:
            parts.append(sep)
        parts.append(d)
    return _Concat(tuple(parts))


def _fits(width: int, doc: Doc, rest: list[tuple[int, bool, Doc]]) -> bool:
    """Whether ``doc`` laid out flat, and what follows it up to the next
    newline (``rest``, an agenda: its last entry comes first), take at
    most ``width`` columns (Lindig's test, as JAX's printer does it)."""
    agenda: list[tuple[bool, Doc]] = [(_FLAT, doc)]
    pending = len(rest)
    while width >= 0:
        if not agenda:
            if not pending:
                return True
            pending -= 1
            agenda.append(rest[pending][1:])
        mode, d = agenda.pop()
        if type(d) is _Text:
            width -= len(d.text)
        elif type(d) is _Break:
            if mode is _BREAK:
                return True
            width -= len(d.text)
        elif type(d) is _Concat:
            agenda.extend((mode, c) for c in reversed(d.children))
        elif type(d) is _Nest:
            agenda.append((mode, d.child))
        else:
            assert type(d) is _Group
            agenda.append((_FLAT, d.child))
    return False


def _format(doc: Doc, width: int) -> str:
    lines: list[str] = []
    line = ""
    agenda: list[tuple[int, bool, Doc]] = [(0, _BREAK, doc)]
    while agenda:
        indent, mode, d = agenda.pop()
        if type(d) is _Text:
            line += d.text
        elif type(d) is _Concat:
            agenda.extend((indent, mode, c) for c in reversed(d.children))
        elif type(d) is _Break:
            if mode is _BREAK:
                lines.append(line)
                line = " " * indent
            else:
                line += d.text
        elif type(d) is _Nest:
            agenda.append((indent + d.n, mode, d.child))
        else:
            assert type(d) is _Group
            flat = _fits(width - len(line), d.child, agenda)
            agenda.append((indent, _FLAT if flat else _BREAK, d.child))
    lines.append(line)
    return "\n".join(lines)


# -- the record's parts -------------------------------------------------------------


def _short_dtype(dt: np.dtype[Any]) -> str:
    """JAX's short names: float32 -> f32, uint8 -> u8, complex64 -> c64."""
    if dt == float0:
        return "float0"
    return (
        dt.name.replace("float", "f")
        .replace("uint", "u")
        .replace("int", "i")
        .replace("complex", "c")
    )


def _str_aval(aval: ShapedArray) -> str:
    return f"{_short_dtype(aval.dtype)}[{','.join(str(d) for d in aval.shape)}]"


class Var:
    """A variable of a :class:`Jaxpr`: an input, a result of an equation or
    a constant, of abstract value ``aval``.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> tl.make_jaxpr(tnp.sin)(1.0).jaxpr.invars[0].aval
    ShapedArray(float32[], weak_type=True)
    """

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    def __repr__(self) -> str:
        return f"Var(id={id(self)}):{_str_aval(self.aval)}"


class Literal:
    """A 0-d constant written in place in a :class:`Jaxpr` (``1.0:f32[]``).

    >>> Literal(np.float32(1.0))
    1.0:f32[]
    """

    __slots__ = ("aval", "val")

    def __init__(self, val: Any, aval: ShapedArray | None = None) -> None:
        self.val = val
        if aval is None:
            array = np.asarray(val)
            aval = ShapedArray(array.shape, array.dtype)
        self.aval = aval

    def __repr__(self) -> str:
        return f"{np.asarray(self.val).item()}:{_str_aval(self.aval)}"


Atom = Var | Literal


class JaxprEqn(NamedTuple):
    """One equation: ``outvars = primitive[params] invars``.

    ``primitive`` is a :class:`~typelattice._lax._primitive.Primitive`, or,
    for a function of ``typelattice.numpy`` recorded as one call, its
    namespace name (a string, ``"typelattice.numpy.reshape"``).

    >>> import typelattice as tl
    >>> from typelattice import lax
    >>> tl.make_jaxpr(lax.neg)(1.0).eqns
    [a:f32[] = neg b]
    """

    primitive: Primitive | str
    params: dict[str, Any]
    invars: list[Atom]
    outvars: list[Var]

    @property
    def name(self) -> str:
        """The primitive's name (or the namespace function's)."""
        p = self.primitive
        return p if isinstance(p, str) else p.name

    def __repr__(self) -> str:
        context = _Context({})
        return _format(_pp_eqn(self, context, True), 80)


class Jaxpr:
    """The equations of a traced function, between its input and output
    variables; ``constvars`` stand for the arrays it closes over (the
    :class:`ClosedJaxpr` holds their values).

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> print(tl.make_jaxpr(lambda x: lax.mul(x, 2))(tnp.zeros(2, 'int8')).jaxpr)
    { lambda ; a:i8[2]. let b:i8[2] = mul a 2:i8[] in (b,) }
    """

    __slots__ = ("constvars", "eqns", "invars", "outvars")

    def __init__(
        self,
        constvars: Sequence[Var],
        invars: Sequence[Var],
        outvars: Sequence[Atom],
        eqns: Sequence[JaxprEqn],
    ) -> None:
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)

    def pretty_print(
        self,
        *,
        print_shapes: bool = True,
        custom_pp_eqn_rules: bool = True,
        width: int = 80,
    ) -> str:
        """The text of the jaxpr, as ``str`` gives it.

        Args:
          print_shapes: show each variable's abstract value where it is
            bound (``a:f32[3]``).
          custom_pp_eqn_rules: show parameters as the primitives' own
            rules do (JAX's: a ``shape`` implied by the result left out...);
            otherwise every parameter.
          width: the line width within which a group is laid out flat.

        Returns:
          The text.

        >>> import typelattice as tl
        >>> from typelattice import lax
        >>> print(tl.make_jaxpr(lax.exp)(1.0).jaxpr.pretty_print(print_shapes=False))
        { lambda ; a. let b = exp a in (b,) }
        """
        context = _Context(_dropvars(self))
        doc = _pp_jaxpr(self, context, print_shapes, custom_pp_eqn_rules)
        return _format(doc, width)

    def __str__(self) -> str:
        return self.pretty_print()

    def __repr__(self) -> str:
        return self.pretty_print()


class ClosedJaxpr:
    """A :class:`Jaxpr` with the values of its constants: what
    :func:`make_jaxpr` returns. ``str`` gives JAX's text.

    Attributes:
      jaxpr: the :class:`Jaxpr`.
      consts: the values of its ``constvars``, in order.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> f = lambda x: lax.reduce_sum(lax.add(x, 1.0), (0,))
    >>> closed = tl.make_jaxpr(f)(tnp.zeros(3))
    >>> closed.in_avals, closed.out_avals
    ([ShapedArray(float32[3])], [ShapedArray(float32[])])
    >>> [eqn.name for eqn in closed.eqns]
    ['add', 'reduce_sum']
    """

    __slots__ = ("consts", "jaxpr")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]) -> None:
        self.jaxpr = jaxpr
        self.consts = list(consts)

    @property
    def eqns(self) -> list[JaxprEqn]:
        """The equations, in the order they were recorded."""
        return self.jaxpr.eqns

    @property
    def in_avals(self) -> list[ShapedArray]:
        """The abstract values of the inputs (weak flags included)."""
        return [v.aval for v in self.jaxpr.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        """The abstract values of the outputs (weak flags included)."""
        return [v.aval for v in self.jaxpr.outvars]

    def pretty_print(
        self,
        *,
        print_shapes: bool = True,
        custom_pp_eqn_rules: bool = True,
        width: int = 80,
    ) -> str:
        """The text of the jaxpr (see :meth:`Jaxpr.pretty_print`).

        Args:
          print_shapes: show each variable's abstract value where it is bound.
          custom_pp_eqn_rules: show parameters as the primitives' rules do.
          width: the line width within which a group is laid out flat.

        Returns:
          The text.

        >>> import typelattice as tl
        >>> from typelattice import lax
        >>> print(tl.make_jaxpr(lax.sin)(1.0).pretty_print(width=20))
        { lambda ; a:f32[]. let
            b:f32[] = sin a
          in (b,) }
        """
        return self.jaxpr.pretty_print(
            print_shapes=print_shapes,
            custom_pp_eqn_rules=custom_pp_eqn_rules,
            width=width,
        )

    def __str__(self) -> str:
        return self.jaxpr.pretty_print()

    def __repr__(self) -> str:
        return self.jaxpr.pretty_print()


# -- printing ----------------------------------------------------------------------

#: Per primitive, how its parameters are shown (JAX's ``pp_eqn_rules``):
#: registered where the primitive is defined, with :func:`def_pp_params`.
PP_PARAMS: dict[Primitive, Callable[..., dict[str, Any]]] = {}


def def_pp_params(
    prim: Primitive,
) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Register how ``prim``'s parameters are printed: a decorator on
    ``rule(params, out_avals) -> params shown`` (parameters implied by the
    results' types left out, others written as JAX writes them)."""

    def register(rule: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        PP_PARAMS[prim] = rule
        return rule

    return register


def _alphabetic(n: int) -> str:
    """0 -> a, 25 -> z, 26 -> ba: JAX's variable names."""
    s = ""
    while not s or n:
        n, i = divmod(n, 26)
        s = chr(97 + i) + s
    return s


class _Context:
    """The names given so far: a variable is named when first shown."""

    def __init__(self, names: dict[Var, str]) -> None:
        self.names = names
        self.fresh: Iterator[str] = (_alphabetic(i) for i in itertools.count())

    def name(self, v: Atom) -> str:
        if isinstance(v, Literal):
            return repr(v)
        found = self.names.get(v)
        if found is None:
            found = self.names[v] = next(self.fresh)
        return found


def _dropvars(jaxpr: Jaxpr) -> dict[Var, str]:
    """The results that nothing reads, shown ``_``."""
    names: dict[Var, str] = {}
    used = {v for v in jaxpr.outvars if isinstance(v, Var)}
    for eqn in reversed(jaxpr.eqns):
        for v in eqn.outvars:
            if v not in used:
                names[v] = "_"
        used.update(v for v in eqn.invars if isinstance(v, Var))
    return names


def _pp_vars(
    vs: Sequence[Atom], context: _Context, print_shapes: bool, separator: str = ""
) -> Doc:
    docs: list[Doc] = []
    for v in vs:
        name = context.name(v)
        if print_shapes and isinstance(v, Var):
            name += ":" + _str_aval(v.aval)
        docs.append(_Text(name))
    return _Nest(2, _Group(_join(_concat(_Text(separator), _Group(_Break(" "))), docs)))


def _pp_params(
    params: dict[str, Any], context: _Context | None = None, print_shapes: bool = True
) -> Doc:
    if not params:
        return _Concat(())
    pairs: list[Doc] = []
    for k in sorted(params):
        value = params[k]
        if (
            isinstance(value, tuple)
            and value
            and all(
                isinstance(v, ClosedJaxpr)
                for v in value  # pyright: ignore[reportUnknownVariableType]
            )
        ):
            subs: list[ClosedJaxpr] = list(value)  # pyright: ignore[reportUnknownArgumentType]
            docs = [_pp_closed(c, context, print_shapes) for c in subs]
            inner = _join(_concat(_Text(","), _Break(" ")), docs)
            pairs.append(_concat(_Text(f"{k}=("), inner, _Text(")")))
        elif isinstance(value, ClosedJaxpr):
            pairs.append(
                _concat(_Text(f"{k}="), _pp_closed(value, context, print_shapes))
            )
        else:
            pairs.append(_Text(f"{k}={value}"))
    return _Group(
        _concat(
            _Nest(2, _concat(_Text("["), _Break(""), _join(_Break(" "), pairs))),
            _Break(""),
            _Text("]"),
        )
    )


def _pp_eqn(
    eqn: JaxprEqn, context: _Context, print_shapes: bool, custom: bool = True
) -> Doc:
    params = eqn.params
    rule = None
    if custom and isinstance(eqn.primitive, Primitive):
        rule = PP_PARAMS.get(eqn.primitive)
    if rule is not None:
        params = rule(params, [v.aval for v in eqn.outvars])
    lhs = _pp_vars(eqn.outvars, context, print_shapes)
    if any(_holds_jaxpr(v) for v in params.values()):
        # (the results on one line before the sub-records, as JAX shows them)
        lhs = _Text(_format(lhs, 1 << 30))
    rhs = [
        _Text(eqn.name),
        _pp_params(params, context, print_shapes),
        _concat(_Text(" "), _pp_vars(eqn.invars, context, False)),
    ]
    if eqn.outvars:
        return _concat(lhs, _Text(" = "), *rhs)
    return _concat(*rhs)


def _holds_jaxpr(value: Any) -> bool:
    if isinstance(value, tuple):
        return any(isinstance(v, ClosedJaxpr) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return isinstance(value, ClosedJaxpr)


def _pp_closed(
    closed: ClosedJaxpr, context: _Context | None, print_shapes: bool
) -> Doc:
    """A sub-record (a control flow primitive's function), its names going
    on from the enclosing record's."""
    if context is None:
        context = _Context(_dropvars(closed.jaxpr))
    else:
        context.names.update(
            (v, n) for v, n in _dropvars(closed.jaxpr).items() if v not in context.names
        )
    return _pp_jaxpr(closed.jaxpr, context, print_shapes, True)


def _pp_jaxpr(jaxpr: Jaxpr, context: _Context, print_shapes: bool, custom: bool) -> Doc:
    constvars = _pp_vars(jaxpr.constvars, context, print_shapes)
    invars = _pp_vars(jaxpr.invars, context, print_shapes)
    eqns = _join(
        _Break("; "), [_pp_eqn(e, context, print_shapes, custom) for e in jaxpr.eqns]
    )
    n = len(jaxpr.outvars)
    outvars = _concat(
        _Text("("),
        _pp_vars(jaxpr.outvars, context, False, separator=","),
        _Text(")" if n != 1 else ",)"),
    )
    body = _concat(
        _Text("{ lambda "),
        constvars,
        _Text("; "),
        invars,
        _Text(". let"),
        _Nest(2, _concat(_Break(" "), eqns)),
        _Break(" "),
        _Text("in "),
        outvars,
    )
    return _concat(_Group(_Nest(2, body)), _Text(" }"))


# -- from a trace ----------------------------------------------------------------


class _Builder:
    """The jaxpr's variables, made from a trace's variable numbers and its
    constants."""

    def __init__(self, trace: _tr.RecordingTrace) -> None:
        self.avals = trace.avals
        self.vars: dict[int, Atom] = {}
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self._by_id: dict[int, Var] = {}

    def var(self, n: int) -> Atom:
        found = self.vars.get(n)
        if found is None:
            (dt, weak), shape = self.avals[n]
            found = self.vars[n] = Var(ShapedArray(shape, dt, weak))
        return found

    def new(self, n: int) -> Var:
        v = self.var(n)
        assert isinstance(v, Var)
        return v

    def constant(self, value: Any, dtype: np.dtype[Any] | None = None) -> Atom:
        """A constant operand: a literal when 0-d, else a constant variable
        (one per array)."""
        array = np.asarray(value) if dtype is None else np.asarray(value, dtype)
        if array.ndim == 0:
            return Literal(array[()], ShapedArray((), array.dtype))
        found = self._by_id.get(id(value))
        if found is None:
            found = self._by_id[id(value)] = Var(ShapedArray(array.shape, array.dtype))
            self.constvars.append(found)
            self.consts.append(value)
        return found


def _sub_record(closed: ClosedProgram) -> ClosedJaxpr:
    """A closed program (a control flow primitive's parameter) as a record."""
    b = _Builder(closed.trace)
    invars = [b.new(v) for v in closed.in_vars]
    eqns = _equations(closed.trace, b, closed.eqns)
    outvars = [b.var(v) for v in closed.out_vars]
    return ClosedJaxpr(Jaxpr(b.constvars, invars, outvars, eqns), b.consts)


def _shown_param(value: object) -> object:
    if isinstance(value, ClosedProgram):
        return _sub_record(value)
    if not isinstance(value, tuple):
        return value
    items = cast(tuple[object, ...], value)
    if items and all(isinstance(v, ClosedProgram) for v in items):
        return tuple(_sub_record(cast(ClosedProgram, v)) for v in items)
    return items


def _equations(
    trace: _tr.RecordingTrace, b: _Builder, recorded: Sequence[Any] | None = None
) -> list[JaxprEqn]:
    eqns: list[JaxprEqn] = []
    for eqn in trace.eqns if recorded is None else recorded:
        if type(eqn) is PrimitiveEquation:
            invars = [b.var(v) if v is not None else b.constant(c) for v, c in eqn.ins]
            outs = [b.new(v) for v in eqn.outs]
            params = {k: _shown_param(v) for k, v in eqn.params.items()}
            eqns.append(JaxprEqn(eqn.prim, params, invars, outs))
        elif type(eqn) is Held:
            b.vars[eqn.out] = b.constant(eqn.value)
        elif type(eqn) is Filled:
            (out,) = eqn.outputs()
            value = b.constant(eqn.value)
            shape = b.avals[out][1]
            if not shape:  # a scalar constant: a literal, as JAX records it
                b.vars[out] = value
                continue
            # JAX's full: a broadcast of the scalar.
            prim = _primitive("broadcast_in_dim")
            params = {"shape": shape, "broadcast_dimensions": ()}
            eqns.append(JaxprEqn(prim, params, [value], [b.new(out)]))
        elif type(eqn) is Barrier:  # (a checkpoint's second run reads it)
            invars = [b.var(eqn.old)]
            eqns.append(JaxprEqn("optimization_barrier", {}, invars, [b.new(eqn.new)]))
        else:
            eqns.append(_namespace_call(eqn, b))
    return eqns


def _primitive(name: str) -> Primitive | str:
    # (By name: the primitives are defined in the layer above this one.)
    return PRIMITIVES.get(name, name)


def _namespace_call(eqn: Any, b: _Builder) -> JaxprEqn:
    """A function of the namespace recorded as one call (not yet written
    with primitives): shown under its name, with its traced operands (and
    the constant operands of an elementwise function)."""
    invars: list[Atom] = []
    ins = getattr(eqn, "ins", None)
    cd = getattr(eqn, "cd", None)
    if cd is not None and ins is not None:  # an elementwise function
        for v, c in ins:
            invars.append(b.var(v) if v is not None else b.constant(c, cd))
    else:
        invars = [b.var(v) for v in eqn.inputs()]
    outs = [b.new(v) for v in eqn.outputs()]
    return JaxprEqn(f"typelattice.numpy.{eqn.name}", {}, invars, outs)


# -- make_jaxpr ------------------------------------------------------------------


@overload
def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    return_shape: Exactly[False] = False,
) -> Callable[..., ClosedJaxpr]: ...
@overload
def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    *,
    return_shape: Exactly[True],
) -> Callable[..., tuple[ClosedJaxpr, Any]]: ...


def make_jaxpr(
    fun: Callable[..., Any],
    static_argnums: int | Sequence[int] = (),
    return_shape: bool = False,
) -> Callable[..., Any]:
    """A function that traces ``fun`` as :func:`~typelattice.jit` does and
    returns its record, a :class:`ClosedJaxpr`, printed as JAX prints one.

    Args:
      fun: the function to trace.
      static_argnums: positions of the arguments passed to ``fun`` as they
        are (not traced), as for ``jit``.
      return_shape: also return the result's structure with a
        :class:`~typelattice.ShapeDtypeStruct` for each array.

    Returns:
      A function of ``fun``'s arguments (arrays, Python scalars,
      ``ShapeDtypeStruct`` objects, in pytrees) returning the
      :class:`ClosedJaxpr` (and the result's shapes with ``return_shape``).

    Raises:
      Whatever tracing ``fun`` raises, as ``jit`` would.

    >>> import typelattice as tl, typelattice.numpy as tnp
    >>> from typelattice import lax
    >>> print(tl.make_jaxpr(lambda x: lax.add(lax.sin(x), 1.0))(tnp.zeros(3)))
    { lambda ; a:f32[3]. let b:f32[3] = sin a; c:f32[3] = add b 1.0:f32[] in (c,) }
    """
    nums = (static_argnums,) if isinstance(static_argnums, int) else static_argnums
    jitted = Jitted(fun, tuple(nums), (), 0)
    name = getattr(fun, "__qualname__", getattr(fun, "__name__", "fun"))
    where = f"make_jaxpr({name})"

    def make_jaxpr_fun(*args: Any, **kwargs: Any) -> Any:
        tree, leaves, _ = jitted._dynamic(args, kwargs)
        sig = [_abstract(leaf, where) for leaf in leaves]

        def call(dyn_args: Any, dyn_kwargs: Any) -> Any:
            call_args, call_kwargs = jitted._merge(args, kwargs, dyn_args, dyn_kwargs)
            return fun(*call_args, **call_kwargs)

        trace, tracers, results, out_tree = _run_traced(call, tree, sig, where)
        b = _Builder(trace)
        invars = [b.new(t._var) for t in tracers]
        eqns = _equations(trace, b)
        outvars: list[Atom] = []
        for r in results:
            if isinstance(r, _tr.JitTracer):
                outvars.append(b.var(r._var))
            else:
                assert isinstance(r, ArrayImpl)
                outvars.append(b.constant(r._value))
        closed = ClosedJaxpr(Jaxpr(b.constvars, invars, outvars, eqns), b.consts)
        if not return_shape:
            return closed
        shapes = [ShapeDtypeStruct(r.shape, r.dtype, r.weak_type) for r in results]
        return closed, out_tree.unflatten(shapes)

    make_jaxpr_fun.__name__ = f"make_jaxpr({name})"
    return make_jaxpr_fun
