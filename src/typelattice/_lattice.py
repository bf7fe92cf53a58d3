"""A generic finite lattice given by its immediate upward edges.

The closure (every node's set of upper bounds) is computed once at
construction, and the structure is checked then: a cycle, or a pair of nodes
whose common upper bounds have more than one minimal element, means the edges
do not describe a lattice and construction fails with :class:`LatticeError`.

A pair with no common upper bound at all is allowed: the strict promotion
lattice is made of such pairs. Their join simply does not exist, and
:meth:`Lattice.join` raises :class:`JoinError` naming the inputs.
"""

from __future__ import annotations

import itertools
import json
import tomllib
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Generic, TypeVar

__all__ = ["JoinError", "Lattice", "LatticeError"]

N = TypeVar("N", bound=Hashable)


class LatticeError(ValueError):
    """The edges given do not describe a lattice.

    Attributes:
      kind: ``"cycle"``, ``"ambiguous join"`` or ``"unknown node"``.
      nodes: the nodes at fault (the cycle, in order, or the pair).
      candidates: for an ambiguous join, the minimal common upper bounds.
    """

    def __init__(
        self,
        kind: str,
        nodes: Sequence[object],
        candidates: Sequence[object] = (),
        message: str = "",
    ) -> None:
        self.kind = kind
        self.nodes = tuple(nodes)
        self.candidates = tuple(candidates)
        super().__init__(message or f"{kind}: {self.nodes}")


class JoinError(ValueError):
    """Nodes that have no common upper bound, so no join."""

    def __init__(self, nodes: Sequence[object], message: str = "") -> None:
        self.nodes = tuple(nodes)
        super().__init__(
            message
            or f"nodes {_show(self.nodes)} have no common upper bound on the lattice"
        )


def _show(nodes: Iterable[object]) -> str:
    return "(" + ", ".join(repr(n) for n in nodes) + ")"


class Lattice(Generic[N]):
    """A finite lattice (joins exist for every pair that has an upper bound).

    Args:
      edges: maps each node to the nodes immediately above it. Nodes that only
        appear as targets are added with no upward edge.
      label: optional function giving a display name for a node, used in
        tables and error messages (``repr`` by default).

    Raises:
      LatticeError: if the edges contain a cycle, or if two nodes have common
        upper bounds but no single least one.

    >>> lat = Lattice({"bottom": ["a", "b"], "a": ["top"], "b": ["top"]})
    >>> lat.join("a", "b")
    'top'
    >>> lat.leq("bottom", "top")
    True
    >>> sorted(lat.upper_bounds("a"))
    ['a', 'top']
    """

    def __init__(
        self,
        edges: Mapping[N, Iterable[N]],
        label: Callable[[N], str] | None = None,
    ) -> None:
        succ: dict[N, tuple[N, ...]] = {}
        for node, ups in edges.items():
            succ[node] = tuple(dict.fromkeys(ups))
        for ups in list(succ.values()):
            for up in ups:
                succ.setdefault(up, ())
        self._succ = succ
        self._label = label if label is not None else repr
        self._ub = self._closure()
        self._check_joins()
        self._joins: dict[tuple[N, ...], N] = {}

    # -- construction -------------------------------------------------------

    def _closure(self) -> dict[N, frozenset[N]]:
        """Upper-bound sets by depth-first search, detecting cycles."""
        ub: dict[N, frozenset[N]] = {}
        on_path: dict[N, int] = {}
        path: list[N] = []

        def visit(node: N) -> frozenset[N]:
            done = ub.get(node)
            if done is not None:
                return done
            if node in on_path:
                cycle = [*path[on_path[node] :], node]
                raise LatticeError(
                    "cycle",
                    cycle,
                    message="not a lattice: the edges contain a cycle "
                    + " -> ".join(self._label(n) for n in cycle),
                )
            on_path[node] = len(path)
            path.append(node)
            bounds = {node}
            for up in self._succ[node]:
                bounds |= visit(up)
            path.pop()
            del on_path[node]
            ub[node] = frozenset(bounds)
            return ub[node]

        for node in self._succ:
            visit(node)
        return ub

    def _minimal_common(self, nodes: Iterable[N]) -> set[N]:
        common = frozenset.intersection(*(self._ub[n] for n in nodes))
        # c is minimal among the common upper bounds iff every common upper
        # bound is above it.
        return {c for c in common if common <= self._ub[c]}

    def _check_joins(self) -> None:
        for a, b in itertools.combinations(self._succ, 2):
            common = self._ub[a] & self._ub[b]
            if not common:
                continue
            least = self._minimal_common((a, b))
            if len(least) != 1:
                minimal = sorted(
                    (c for c in common if not any(d in common for d in self.below(c))),
                    key=self._label,
                )
                raise LatticeError(
                    "ambiguous join",
                    (a, b),
                    minimal,
                    message=f"not a lattice: {self._label(a)} and {self._label(b)} "
                    "have no least upper bound; their minimal common upper "
                    f"bounds are {', '.join(self._label(c) for c in minimal)}",
                )

    # -- queries ------------------------------------------------------------

    @property
    def nodes(self) -> tuple[N, ...]:
        """Every node, in the order first given."""
        return tuple(self._succ)

    @property
    def edges(self) -> tuple[tuple[N, N], ...]:
        """Every immediate edge ``(lower, upper)``."""
        return tuple((a, b) for a, ups in self._succ.items() for b in ups)

    def successors(self, node: N) -> tuple[N, ...]:
        """The nodes immediately above ``node``."""
        return self._succ[self._known(node)]

    def below(self, node: N) -> tuple[N, ...]:
        """The nodes strictly below ``node``."""
        self._known(node)
        return tuple(n for n in self._succ if n != node and node in self._ub[n])

    def upper_bounds(self, node: N) -> frozenset[N]:
        """Every node ``u`` with ``node <= u`` (including ``node``)."""
        return self._ub[self._known(node)]

    def leq(self, a: N, b: N) -> bool:
        """Whether ``a <= b`` on the lattice."""
        return self._known(b) in self._ub[self._known(a)]

    def join(self, *nodes: N) -> N:
        """The least upper bound of ``nodes`` (cached).

        Raises:
          JoinError: if the nodes have no common upper bound.
          LatticeError: if a node is not on the lattice.
        """
        try:
            return self._joins[nodes]
        except (KeyError, TypeError):
            pass
        out = self._join(nodes)
        self._joins[nodes] = out
        return out

    def _join(self, nodes: tuple[N, ...]) -> N:
        if not nodes:
            raise ValueError("join() needs at least one node")
        for n in nodes:
            self._known(n)
        least = self._minimal_common(set(nodes))
        if not least:
            raise JoinError(
                nodes,
                f"nodes {', '.join(self._label(n) for n in nodes)} have no "
                "common upper bound on the lattice",
            )
        # _check_joins guarantees uniqueness for pairs, and pairwise joins
        # make every finite join unique.
        (out,) = least
        return out

    def table(self, nodes: Sequence[N] | None = None) -> list[list[N | None]]:
        """The join table: ``table[i][j]`` is ``join(nodes[i], nodes[j])``.

        A cell is ``None`` where the pair has no join.

        >>> Lattice({"a": ["b"]}).table()
        [['a', 'b'], ['b', 'b']]
        """
        order = self.nodes if nodes is None else tuple(nodes)
        rows: list[list[N | None]] = []
        for a in order:
            row: list[N | None] = []
            for b in order:
                try:
                    row.append(self.join(a, b))
                except JoinError:
                    row.append(None)
            rows.append(row)
        return rows

    def _known(self, node: N) -> N:
        try:
            if node in self._succ:
                return node
        except TypeError:  # unhashable
            pass
        raise LatticeError(
            "unknown node",
            (node,),
            message=f"{node!r} is not a node of this lattice; "
            f"its nodes are {', '.join(self._label(n) for n in self._succ)}",
        )

    # -- files --------------------------------------------------------------

    @classmethod
    def from_file(cls, path: str | PathLike[str]) -> Lattice[str]:
        """Read a lattice of string nodes from a TOML or JSON file.

        The file holds a table ``edges`` mapping each node to the list of
        nodes immediately above it, e.g. in TOML::

            [edges]
            bottom = ["a", "b"]
            a = ["top"]
            b = ["top"]

        Raises:
          LatticeError: if the edges do not describe a lattice.
          ValueError: if the file is not of that shape.
        """
        p = Path(path)
        text = p.read_text(encoding="utf-8")
        try:
            data = json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
        except (json.JSONDecodeError, tomllib.TOMLDecodeError) as err:
            raise ValueError(f"{p}: cannot parse lattice file: {err}") from None
        edges = data.get("edges") if isinstance(data, dict) else None
        if not isinstance(edges, dict) or not all(
            isinstance(k, str)
            and isinstance(v, list)
            and all(isinstance(x, str) for x in v)
            for k, v in edges.items()
        ):
            raise ValueError(
                f"{p}: expected a table 'edges' mapping each node name to a "
                'list of node names, e.g. edges = {a = ["b"]}'
            )
        return Lattice(edges, label=str)

    def __repr__(self) -> str:
        return f"Lattice({len(self._succ)} nodes, {len(self.edges)} edges)"
