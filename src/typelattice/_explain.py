"""Explain a join step by step: nodes, upper bounds, the least common one.

The promotion of some types is their join on the lattice (docs/semantics.md,
"Lattices"): follow each input's edges upward, keep the nodes every input
reaches, and take the lowest of them. :func:`explain` returns each of those
steps as data, and for inputs with no join, why, the error ``result_type``
raises for them and the explicit cast that makes them promote.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from typelattice import _config, _dtypes, _promotion
from typelattice._lattice import JoinError, Lattice, LatticeError

__all__ = ["Explanation", "explain", "format_explanation"]

_WEAK_NAMES: Final[dict[str, type]] = {"int": builtins.int, "float": builtins.float}
_WEAK_NAMES["complex"] = builtins.complex
_WEAK_KIND: Final = {builtins.int: "i", builtins.float: "f", builtins.complex: "c"}


@dataclass(frozen=True)
class Explanation:
    """The steps of a join (see :func:`explain`).

    Attributes:
      inputs: the inputs as given.
      lattice: which lattice, e.g. ``'standard lattice, 64-bit mode'``.
      nodes: each input's lattice node (its code or label).
      upper_bounds: for each input, every node above it, lowest first.
      common: the nodes above every input, lowest first.
      minimal: the lowest of those (one node when the join exists).
      join: the least common upper bound, or ``None``.
      chains: for each input, a shortest chain of edges up to the join.
      result: the join as a type, e.g. ``'int16'`` (empty when none).
      error: when there is no join, the error ``result_type`` raises.
      cast: when there is no join, the explicit cast to use.
      notes: remarks on the inputs (32-bit narrowing, weak types).

    >>> e = explain('int8', 'uint8')
    >>> e.nodes, e.minimal, e.result
    (('i1', 'u1'), ('i2',), 'int16')
    """

    inputs: tuple[str, ...]
    lattice: str
    nodes: tuple[str, ...]
    upper_bounds: tuple[tuple[str, ...], ...]
    common: tuple[str, ...]
    minimal: tuple[str, ...]
    join: str | None
    chains: tuple[tuple[str, ...], ...]
    result: str
    error: str = ""
    cast: str = ""
    notes: tuple[str, ...] = ()


def _type_node(x: object) -> _promotion.Node:
    """The promotion node of a dtype name, code, ``int``/``float``/``complex``."""
    if isinstance(x, str):
        if x in _WEAK_NAMES:
            return _WEAK_NAMES[x]
        if x in _dtypes.codes():
            return _dtypes.code_to_dtype(x)
        return _dtypes.dtype(x, canonicalize=False)
    if type(x) is type and x in _WEAK_KIND:
        return x
    if type(x) in _WEAK_KIND:  # a Python scalar value: weak
        return type(x)
    return _dtypes.dtype(x, canonicalize=False)


def _show(x: object) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, type):
        return x.__name__
    return str(x)


def _type_name(node: object) -> str:
    return node.__name__ if isinstance(node, type) else str(node)


def explain(
    *inputs: Any,
    promotion: str | None = None,
    x64: bool | None = None,
    lattice: Lattice[Any] | None = None,
    lattice_name: str = "",
) -> Explanation:
    """Explain the promotion of ``inputs`` as a join on the lattice.

    Args:
      *inputs: two or more dtype names (``'int8'``), codes (``'i1'``,
        ``'f*'``), dtypes, or ``int``/``float``/``complex`` (the weak nodes,
        as the names ``'int'``, ``'float'``, ``'complex'`` too).
      promotion: ``'standard'``, ``'strict'`` or a registered name (the
        current mode by default).
      x64: 64-bit mode (the current mode by default).
      lattice: explain on this lattice instead (e.g. from
        :meth:`Lattice.from_file`); inputs are its node names, or types whose
        codes are its nodes.
      lattice_name: how to name ``lattice`` in the explanation.

    Returns:
      The :class:`Explanation`.

    Raises:
      ValueError: fewer than two inputs, or an input that is not a node.
      TypeError: an input that is not a type of the universe.

    >>> e = explain('int8', 'uint8', x64=True)
    >>> e.nodes, e.join, e.chains, e.result
    (('i1', 'u1'), 'i2', (('i1', 'i2'), ('u1', 'i2')), 'int16')
    >>> e = explain('float32', 'int32', promotion='strict')
    >>> e.join, e.cast
    (None, "x.astype('float32') on the int32 input (the join is then float32)")
    """
    if len(inputs) < 2:
        raise ValueError("explain() needs at least two inputs")
    state = _config.current()
    names = tuple(_show(x) for x in inputs)
    notes: list[str] = []
    if lattice is None:
        promotion = state.dtype_promotion if promotion is None else promotion
        x64 = state.enable_x64 if x64 is None else x64
        _config.validate("dtype_promotion", promotion)
        lat: Lattice[Any] = _promotion.get_lattice(promotion, x64)
        nodes: list[Any] = [_type_node(x) for x in inputs]
        where = f"{promotion} lattice, {'64' if x64 else '32'}-bit mode"
        for n in nodes:
            if n not in set(lat.nodes):
                raise ValueError(
                    f"{_type_name(n)} is not a type of the {promotion!r} lattice; "
                    f"its nodes are {', '.join(lat.label(m) for m in lat.nodes)}"
                )
        notes += _notes(nodes, x64)
    else:
        lat = lattice
        nodes = [_file_node(lat, x) for x in inputs]
        where = f"lattice {lattice_name}" if lattice_name else "the given lattice"
    label = lat.label
    position = {n: i for i, n in enumerate(lat.nodes)}

    def ordered(found: Any) -> tuple[str, ...]:
        return tuple(
            label(n) for n in sorted(found, key=lambda n: (lat.rank(n), position[n]))
        )

    bounds = [lat.upper_bounds(n) for n in nodes]
    # frozenset.intersection, unbound, is of unknown type for pyright.
    common: frozenset[Any] = frozenset.intersection(*bounds)  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    # A Lattice has a least common upper bound whenever it has any.
    try:
        minimal = [lat.join(*nodes)]
    except JoinError:
        minimal = []
    if len(minimal) == 1:
        (top,) = minimal
        return Explanation(
            names,
            where,
            tuple(label(n) for n in nodes),
            tuple(ordered(b) for b in bounds),
            ordered(common),
            ordered(minimal),
            label(top),
            tuple(tuple(label(m) for m in lat.chain(n, top)) for n in nodes),
            _result(top, x64) if lattice is None else label(top),
            notes=tuple(notes),
        )
    if lattice is None:
        assert promotion is not None and x64 is not None
        error = str(_promotion._no_join_error(nodes, promotion))  # pyright: ignore[reportPrivateUsage]
        cast = _cast(lat, nodes, promotion, x64)
    else:
        error = (
            f"{', '.join(label(n) for n in nodes)} have no common upper bound "
            "on this lattice"
        )
        cast = "convert the inputs explicitly to one common type"
    return Explanation(
        names,
        where,
        tuple(label(n) for n in nodes),
        tuple(ordered(b) for b in bounds),
        ordered(common),
        ordered(minimal),
        None,
        (),
        "",
        error,
        cast,
        tuple(notes),
    )


def _file_node(lat: Lattice[Any], x: object) -> Any:
    known = set(lat.nodes)
    if x in known:
        return x
    try:
        code = _dtypes.dtype_code(_type_node(x))
    except TypeError:
        code = None
    if code in known:
        return code
    raise ValueError(
        f"{_show(x)!r} is not a node of the lattice; its nodes are "
        f"{', '.join(str(n) for n in lat.nodes)}"
    )


def _notes(nodes: Sequence[Any], x64: bool) -> list[str]:
    notes: list[str] = []
    for n in nodes:
        if isinstance(n, type):
            code = _promotion.node_label(n)
            notes.append(
                f"{n.__name__} is the weak node {code}: a Python {n.__name__}, "
                "or an array of weak type"
            )
    wide = [n for n in nodes if not isinstance(n, type) and n in _dtypes.TO_32]
    if wide and not x64:
        names = ", ".join(str(n) for n in dict.fromkeys(wide))
        notes.append(
            f"32-bit mode: result_type first narrows {names} to 32 bits "
            "(see explicit_x64_dtypes); the join here takes the types as given"
        )
    return notes


def _result(node: object, x64: bool | None) -> str:
    if isinstance(node, type):
        default = _dtypes.default_dtype(_WEAK_KIND[node], bool(x64))
        return (
            f"weak {node.__name__} ({_promotion.node_label(node)}): {default} "
            "when no operand has a type of that kind"
        )
    return str(node)


def _cast(lat: Lattice[Any], nodes: Sequence[Any], promotion: str, x64: bool) -> str:
    """The explicit cast to suggest, as the error messages do.

    In standard mode the inputs with no join are small floats or narrow ints:
    cast those to float32 / int32. In another mode, cast to the join the
    standard lattice would give, the inputs that are not below it already.
    """
    casts: dict[Any, np.dtype[Any]] = {}
    if promotion == "standard":
        small = set(_dtypes.SMALL_FLOATS.values())
        narrow = set(_dtypes.NARROW_INTS.values())
        for n in nodes:
            if n in small:
                casts[n] = np.dtype("float32")
            elif n in narrow:
                casts[n] = np.dtype("int32")
    else:
        try:
            target: Any = _promotion.get_lattice("standard", x64).join(*nodes)
        except JoinError:
            target = None
        if isinstance(target, type):
            target = _dtypes.default_dtype(_WEAK_KIND[target], x64)
        if target is not None:
            known = set(lat.nodes)
            for n in nodes:
                if not (n in known and target in known and lat.leq(n, target)):
                    casts[n] = target
    after = [casts.get(n, n) for n in nodes]
    try:
        join = lat.join(*after)
    except (JoinError, LatticeError):
        join = None
    if not casts or join is None:
        return "convert the inputs explicitly to one common type"
    steps = ", ".join(
        f"x.astype({dt.name!r}) on the {_type_name(n)} input" for n, dt in casts.items()
    )
    return f"{steps} (the join is then {_result(join, x64)})"


def _brief(codes: Sequence[str]) -> str:
    """Codes joined by spaces, the 8/6/4-bit floats counted rather than listed
    when there are several (they all sit just above ``f*``)."""
    small = {_dtypes.dtype_code(d) for d in _dtypes.SMALL_FLOATS.values()}
    found = [c for c in codes if c in small]
    if len(found) < 3:
        return " ".join(codes)
    shown: list[str] = []
    for c in codes:
        if c not in small:
            shown.append(c)
        elif c == found[0]:
            shown.append(f"({len(found)} small floats)")
    return " ".join(shown)


def format_explanation(e: Explanation) -> str:
    """The explanation as numbered lines of text.

    Args:
      e: from :func:`explain`.

    Returns:
      The lines, without a final newline; the 8/6/4-bit floats among upper
      bounds are counted rather than listed.

    >>> print(format_explanation(explain('i1', 'u2', x64=True)))
    join of i1, u2 on the standard lattice, 64-bit mode
    1. lattice nodes
         i1 -> i1
         u2 -> u2
    2. upper bounds, lowest first
         i1: i1 i2 i4 i8 f* bf f2 c* (11 small floats) f4 f8 c8 c16
         u2: u2 u4 i4 u8 i8 f* bf f2 c* (11 small floats) f4 f8 c8 c16
    3. common upper bounds: i4 i8 f* bf f2 c* (11 small floats) f4 f8 c8 c16
    4. the least of them, the join: i4
    5. chains of edges up to it
         i1 -> i2 -> i4
         u2 -> i4
    result: int32
    """
    lines = [f"join of {', '.join(e.inputs)} on the {e.lattice}"]
    width = max(len(x) for x in e.inputs)
    lines.append("1. lattice nodes")
    lines += [
        f"     {x.ljust(width)} -> {n}" for x, n in zip(e.inputs, e.nodes, strict=True)
    ]
    lines.append("2. upper bounds, lowest first")
    node_width = max(len(n) for n in e.nodes)
    lines += [
        f"     {(n + ':').ljust(node_width + 1)} {_brief(b)}"
        for n, b in zip(e.nodes, e.upper_bounds, strict=True)
    ]
    lines.append(f"3. common upper bounds: {_brief(e.common) or '(none)'}")
    if e.join is not None:
        lines.append(f"4. the least of them, the join: {e.join}")
        lines.append("5. chains of edges up to it")
        lines += [f"     {' -> '.join(c)}" for c in e.chains]
        lines.append(f"result: {e.result}")
    else:
        if e.minimal:
            lines.append(
                f"4. no least one: {', '.join(e.minimal)} are all minimal, so no join"
            )
        else:
            lines.append("4. no common upper bound, so no join")
        lines.append(f"error: {e.error}")
        lines.append(f"explicit cast: {e.cast}")
    lines += [f"note: {n}" for n in e.notes]
    return "\n".join(lines)
