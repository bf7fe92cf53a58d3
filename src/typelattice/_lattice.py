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
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any, Generic, TypeGuard, TypeVar, cast

__all__ = ["JoinError", "Lattice", "LatticeError", "LatticeProblem"]

N = TypeVar("N", bound=Hashable)


class LatticeError(ValueError):
    """The edges given do not describe a lattice, or a node is not on it.

    Attributes:
      kind: ``"cycle"``, ``"ambiguous join"`` or ``"unknown node"``.
      nodes: the nodes at fault (the cycle, in order, or the pair).
      candidates: for an ambiguous join, the minimal common upper bounds.

    >>> try:
    ...     Lattice({"a": ["b"], "b": ["a"]}, label=str)
    ... except LatticeError as err:
    ...     print(err.kind, err.nodes)
    cycle ('a', 'b', 'a')
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
    """Nodes that have no common upper bound, so no join.

    Attributes:
      nodes: the nodes given to :meth:`Lattice.join`.

    >>> try:
    ...     Lattice({"a": [], "b": []}).join("a", "b")
    ... except JoinError as err:
    ...     print(err.nodes)
    ('a', 'b')
    """

    def __init__(self, nodes: Sequence[object], message: str = "") -> None:
        self.nodes = tuple(nodes)
        super().__init__(
            message
            or f"nodes {_show(self.nodes)} have no common upper bound on the lattice"
        )


def _show(nodes: Iterable[object]) -> str:
    return "(" + ", ".join(repr(n) for n in nodes) + ")"


@dataclass(frozen=True)
class LatticeProblem:
    """One reason why some edges do not describe a lattice.

    Attributes:
      kind: ``"cycle"``, ``"no upper bound"`` or ``"ambiguous join"``.
      nodes: the cycle in order (its first node repeated at the end), or the
        pair of nodes at fault.
      candidates: for an ambiguous join, the minimal common upper bounds.
      message: one line saying what is wrong, naming the nodes.

    >>> (p,) = Lattice.problems({"a": ["b", "c"]}, label=str)
    >>> p.kind, p.nodes
    ('no upper bound', ('b', 'c'))
    >>> str(p)
    'no upper bound: b and c have no common upper bound'
    """

    kind: str
    nodes: tuple[Any, ...]
    candidates: tuple[Any, ...] = ()
    message: str = ""

    def __str__(self) -> str:
        return self.message


def _is_name_lists(value: object) -> TypeGuard[dict[str, list[str]]]:
    """Whether ``value`` maps strings to lists of strings."""
    return isinstance(value, dict) and all(
        isinstance(k, str)
        and isinstance(v, list)
        and all(isinstance(x, str) for x in cast("list[object]", v))
        for k, v in cast("dict[object, object]", value).items()
    )


def _is_names(value: object) -> TypeGuard[dict[str, str]]:
    """Whether ``value`` maps strings to strings."""
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str)
        for k, v in cast("dict[object, object]", value).items()
    )


def _successors(edges: Mapping[Any, Iterable[Any]]) -> dict[Any, tuple[Any, ...]]:
    """Each node's distinct upward edges; targets become nodes too."""
    succ: dict[Any, tuple[Any, ...]] = {}
    for node, ups in edges.items():
        succ[node] = tuple(dict.fromkeys(ups))
    for ups in list(succ.values()):
        for up in ups:
            succ.setdefault(up, ())
    return succ


def _components(succ: Mapping[Any, Sequence[Any]]) -> list[list[Any]]:
    """Strongly connected components, sources of the condensation first.

    Kosaraju's algorithm, written iteratively so that long chains do not hit
    the recursion limit: the first pass orders nodes by finishing time, the
    second collects components on the reversed graph in decreasing finishing
    time, which lists them in topological order.
    """
    order: list[Any] = []
    seen: set[Any] = set()
    for root in succ:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(succ[root]))]
        while stack:
            node, ups = stack[-1]
            for up in ups:
                if up not in seen:
                    seen.add(up)
                    stack.append((up, iter(succ[up])))
                    break
            else:
                stack.pop()
                order.append(node)
    pred: dict[Any, list[Any]] = {n: [] for n in succ}
    for node, targets in succ.items():
        for up in targets:
            pred[up].append(node)
    comps: list[list[Any]] = []
    assigned: set[Any] = set()
    for root in reversed(order):
        if root in assigned:
            continue
        assigned.add(root)
        comp: list[Any] = []
        todo = [root]
        while todo:
            node = todo.pop()
            comp.append(node)
            for down in pred[node]:
                if down not in assigned:
                    assigned.add(down)
                    todo.append(down)
        comps.append(comp)
    return comps


def _cycle_from(
    succ: Mapping[Any, Sequence[Any]], start: Any, within: set[Any]
) -> list[Any]:
    """A shortest cycle through ``start`` using only nodes of ``within``."""
    # Nodes are compared as dict keys (hash, then ==), never by == alone:
    # NumPy says dtype('int64') == int, yet both are promotion nodes.
    is_start = {start: True}
    parent: dict[Any, Any] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for up in succ[node]:
            if up in is_start:
                path = [node]
                while path[-1] not in is_start:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if up in within and up not in parent:
                parent[up] = node
                queue.append(up)
    raise AssertionError("no cycle through a node of a cyclic component")


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
        self._ranks: dict[N, int] | None = None

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
        # frozenset.intersection, unbound, is of unknown type for pyright.
        common: frozenset[N] = frozenset.intersection(  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            *(self._ub[n] for n in nodes)
        )
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

    @staticmethod
    def problems(
        edges: Mapping[N, Iterable[N]], label: Callable[[N], str] | None = None
    ) -> tuple[LatticeProblem, ...]:
        """Every reason why ``edges`` do not describe a lattice, without raising.

        Unlike the constructor, which stops at the first problem and allows
        pairs with no upper bound at all, this lists them all: each cycle
        (once per strongly connected component), each pair of nodes with no
        common upper bound, and each pair whose common upper bounds have
        several minimal elements. Nodes on a cycle are treated as one node
        when looking for joins, so a cycle is not also reported as ambiguous
        joins.

        Args:
          edges: maps each node to the nodes immediately above it.
          label: display name of a node in the messages (``repr`` by default).

        Returns:
          The problems, cycles first, then pairs, in the order of the nodes;
          empty if the edges describe a lattice.

        >>> for p in Lattice.problems({"a": ["c", "d"], "b": ["c", "d"]}, str):
        ...     print(p)
        ambiguous join: a and b have no least upper bound, only minimal ones: c, d
        no upper bound: c and d have no common upper bound
        """
        show: Callable[[Any], str] = label if label is not None else repr
        succ = _successors(edges)
        found: list[LatticeProblem] = []
        comps = _components(succ)
        comp_of = {n: i for i, comp in enumerate(comps) for n in comp}
        position = {n: i for i, n in enumerate(succ)}
        for comp in comps:
            start = min(comp, key=position.__getitem__)
            if len(comp) > 1 or start in set(succ[start]):
                cycle = _cycle_from(succ, start, set(comp))
                found.append(
                    LatticeProblem(
                        "cycle",
                        tuple(cycle),
                        message="cycle: " + " -> ".join(show(n) for n in cycle),
                    )
                )
        found.sort(key=lambda p: position[p.nodes[0]])
        # Upper-bound sets, sinks of the condensation first.
        ub: dict[Any, frozenset[Any]] = {}
        for comp in reversed(comps):
            bounds = set(comp)
            for node in comp:
                for up in succ[node]:
                    if comp_of[up] != comp_of[node]:
                        bounds |= ub[up]
            frozen = frozenset(bounds)
            for node in comp:
                ub[node] = frozen
        pairs: list[LatticeProblem] = []
        for a, b in itertools.combinations(succ, 2):
            common = ub[a] & ub[b]
            if not common:
                pairs.append(
                    LatticeProblem(
                        "no upper bound",
                        (a, b),
                        message=f"no upper bound: {show(a)} and {show(b)} have no "
                        "common upper bound",
                    )
                )
                continue
            if any(common <= ub[c] for c in common):
                continue  # a least one (or one cycle of least ones)
            minimal = [
                c
                for c in succ
                if c in common
                and not any(c in ub[d] and d not in ub[c] for d in common)
            ]
            if len({comp_of[c] for c in minimal}) > 1:
                pairs.append(
                    LatticeProblem(
                        "ambiguous join",
                        (a, b),
                        tuple(minimal),
                        message=f"ambiguous join: {show(a)} and {show(b)} have no "
                        "least upper bound, only minimal ones: "
                        + ", ".join(show(c) for c in minimal),
                    )
                )
        return (*found, *pairs)

    # -- queries ------------------------------------------------------------

    @property
    def nodes(self) -> tuple[N, ...]:
        """Every node, in the order first given."""
        return tuple(self._succ)

    @property
    def edges(self) -> tuple[tuple[N, N], ...]:
        """Every immediate edge ``(lower, upper)``."""
        return tuple((a, b) for a, ups in self._succ.items() for b in ups)

    def label(self, node: N) -> str:
        """The display name of ``node`` (the ``label`` function given).

        Args:
          node: a node of the lattice (any hashable; it need not be one).

        Returns:
          The name, ``repr(node)`` when no ``label`` was given.

        >>> Lattice({"a": ["b"]}, label=str.upper).label("a")
        'A'
        """
        return self._label(node)

    def successors(self, node: N) -> tuple[N, ...]:
        """The nodes immediately above ``node``.

        Args:
          node: a node of the lattice.

        Returns:
          The targets of its upward edges, in the order given.

        Raises:
          LatticeError: ``node`` is not on the lattice.

        >>> Lattice({"bottom": ["a", "b"], "a": ["top"]}).successors("bottom")
        ('a', 'b')
        """
        return self._succ[self._known(node)]

    def below(self, node: N) -> tuple[N, ...]:
        """The nodes strictly below ``node``.

        Args:
          node: a node of the lattice.

        Returns:
          Every node ``n`` with ``n < node``, in the order of :attr:`nodes`.

        Raises:
          LatticeError: ``node`` is not on the lattice.

        >>> Lattice({"bottom": ["a", "b"], "a": ["top"], "b": ["top"]}).below("top")
        ('bottom', 'a', 'b')
        """
        self._known(node)
        # Not ``n != node``: NumPy says dtype('int64') == int, both nodes.
        mine = self._ub[node]
        return tuple(n for n in self._succ if node in self._ub[n] and n not in mine)

    def upper_bounds(self, node: N) -> frozenset[N]:
        """Every node ``u`` with ``node <= u`` (including ``node``).

        Args:
          node: a node of the lattice.

        Returns:
          The set, computed once when the lattice was built.

        Raises:
          LatticeError: ``node`` is not on the lattice.

        >>> sorted(Lattice({"a": ["b"], "b": ["c"]}).upper_bounds("b"))
        ['b', 'c']
        """
        return self._ub[self._known(node)]

    def rank(self, node: N) -> int:
        """The length of the longest chain of edges from a minimal node up to
        ``node`` (0 for a minimal node): the layer a drawing puts it in.

        Args:
          node: a node of the lattice.

        Returns:
          The rank, an int.

        Raises:
          LatticeError: ``node`` is not on the lattice.

        >>> lat = Lattice({"bottom": ["a", "b"], "a": ["top"], "b": ["top"]})
        >>> [lat.rank(n) for n in lat.nodes]
        [0, 1, 1, 2]
        """
        if self._ranks is None:
            ranks = {n: 0 for n in self._succ}
            # A node strictly below another has strictly more upper bounds,
            # so this order lists every node after all the nodes below it.
            for n in sorted(self._succ, key=lambda n: -len(self._ub[n])):
                for up in self._succ[n]:
                    ranks[up] = max(ranks[up], ranks[n] + 1)
            self._ranks = ranks
        return self._ranks[self._known(node)]

    def chain(self, low: N, high: N) -> tuple[N, ...]:
        """A shortest chain of immediate edges from ``low`` up to ``high``.

        Args:
          low: the node to start from.
          high: a node above (or equal to) ``low``.

        Returns:
          The nodes of the chain, ``low`` first and ``high`` last (just
          ``(low,)`` when they are equal).

        Raises:
          ValueError: if ``low`` is not below ``high``.

        >>> lat = Lattice({"bottom": ["a", "b"], "a": ["top"], "b": ["top"]})
        >>> lat.chain("bottom", "top")
        ('bottom', 'a', 'top')
        """
        if not self.leq(low, high):
            raise ValueError(
                f"{self._label(low)} is not below {self._label(high)} on the lattice"
            )
        # Compared as dict keys, not with ==: NumPy says dtype('int64') == int.
        is_low = {low: True}
        parent: dict[N, N] = {}
        queue = deque([low])
        while queue:
            node = queue.popleft()
            if high in {node: True}:
                break
            for up in self._succ[node]:
                if up not in parent and up not in is_low and high in self._ub[up]:
                    parent[up] = node
                    queue.append(up)
        path = [high]
        while path[-1] not in is_low:
            path.append(parent[path[-1]])
        return tuple(reversed(path))

    def leq(self, a: N, b: N) -> bool:
        """Whether ``a <= b`` on the lattice.

        Args:
          a: a node of the lattice.
          b: a node of the lattice.

        Returns:
          True when ``b`` is an upper bound of ``a`` (or ``a`` itself).

        Raises:
          LatticeError: a node is not on the lattice.

        >>> lat = Lattice({"a": ["b"], "c": ["b"]})
        >>> lat.leq("a", "b"), lat.leq("a", "c")
        (True, False)
        """
        return self._known(b) in self._ub[self._known(a)]

    def join(self, *nodes: N) -> N:
        """The least upper bound of ``nodes`` (cached).

        The join is associative and commutative, so the order and grouping of
        ``nodes`` never changes the answer.

        Args:
          *nodes: one or more nodes of the lattice.

        Returns:
          The least node above all of them.

        Raises:
          JoinError: if the nodes have no common upper bound.
          LatticeError: if a node is not on the lattice.
          ValueError: no node.

        >>> lat = Lattice({"bottom": ["a", "b"], "a": ["top"], "b": ["top"]})
        >>> lat.join("a", "b"), lat.join("bottom", "a"), lat.join("a")
        ('top', 'a', 'a')
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

        Args:
          nodes: the rows' and columns' nodes, in order (all, by default).

        Returns:
          A list of rows; a cell is ``None`` where the pair has no join.

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

    @staticmethod
    def read_file(
        path: str | PathLike[str],
    ) -> tuple[dict[str, list[str]], dict[str, str]]:
        """Read the edges and labels of a lattice file without checking them.

        The file, TOML or JSON (by its ``.json`` suffix), holds a table
        ``edges`` mapping each node to the list of nodes immediately above
        it, and optionally a table ``labels`` giving nodes a display name.
        In TOML::

            [edges]
            bottom = ["a", "b"]
            a = ["top"]
            b = ["top"]

            [labels]
            bottom = "⊥"

        Args:
          path: the file.

        Returns:
          ``(edges, labels)``, as in the file.

        Raises:
          ValueError: if the file cannot be parsed or is not of that shape
            (also when it cannot be read, an ``OSError``).

        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "chain.json"
        >>> _ = f.write_text('{"edges": {"int": ["float"]}, "labels": {"int": "i"}}')
        >>> Lattice.read_file(f)
        ({'int': ['float']}, {'int': 'i'})
        """
        p = Path(path)
        text = p.read_text(encoding="utf-8")
        try:
            data: object = (
                json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
            )
        except (json.JSONDecodeError, tomllib.TOMLDecodeError) as err:
            raise ValueError(f"{p}: cannot parse lattice file: {err}") from None
        table = cast("dict[object, object]", data) if isinstance(data, dict) else {}
        edges = table.get("edges")
        if not _is_name_lists(edges):
            raise ValueError(
                f"{p}: expected a table 'edges' mapping each node name to a "
                'list of node names, e.g. edges = {a = ["b"]}'
            )
        labels = table.get("labels", {})
        if not _is_names(labels):
            raise ValueError(
                f"{p}: expected 'labels' to map node names to display names, "
                'e.g. labels = {a = "A"}'
            )
        known = set(_successors(edges))
        unknown = [k for k in labels if k not in known]
        if unknown:
            raise ValueError(
                f"{p}: labels name nodes that no edge mentions: {', '.join(unknown)}"
            )
        return edges, labels

    @classmethod
    def from_file(cls, path: str | PathLike[str]) -> Lattice[str]:
        """Read a lattice of string nodes from a TOML or JSON file.

        The file holds a table ``edges`` mapping each node to the list of
        nodes immediately above it, and optionally a table ``labels`` of
        display names (see :meth:`read_file`), e.g. in TOML::

            [edges]
            bottom = ["a", "b"]
            a = ["top"]
            b = ["top"]

        Args:
          path: the file (``.json`` for JSON, anything else is TOML).

        Returns:
          The lattice; its ``label`` gives each node's display name.

        Raises:
          LatticeError: if the edges do not describe a lattice
            (:meth:`problems` lists every reason).
          ValueError: if the file is not of that shape.

        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "d.toml"
        >>> text = '[edges]\\nbottom = ["a", "b"]\\na = ["top"]\\nb = ["top"]'
        >>> _ = f.write_text(text)
        >>> Lattice.from_file(f).join("a", "b")
        'top'
        """
        edges, labels = cls.read_file(path)
        if labels:
            return Lattice(edges, label=lambda n: labels.get(n, n))
        return Lattice(edges, label=str)

    def __repr__(self) -> str:
        return f"Lattice({len(self._succ)} nodes, {len(self.edges)} edges)"
