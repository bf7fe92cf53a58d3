"""A generic finite lattice given by its immediate upward edges.

The closure (every node's set of upper bounds) is computed once at
construction, and the structure is checked then: a cycle, or a pair of nodes
whose common upper bounds have more than one minimal element, means the edges
do not describe a lattice and construction fails with :class:`LatticeError`.
Sets of nodes are bitsets (Python ints, see :class:`_Reach`) and every walk
is a loop, not a recursion: a lattice of thousands of nodes, or a chain of
them, is built and checked in a fraction of a second.

A pair with no common upper bound at all is allowed: the strict promotion
lattice is made of such pairs. Their join simply does not exist, and
:meth:`Lattice.join` raises :class:`JoinError` naming the inputs.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tomllib
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
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


#: The largest lattice file read, in bytes (1 MiB). Lattices are small (the
#: 25 types of the extended table take about 1 kB); the limit keeps a wrong
#: path (a disk image, a log) from being read into memory.
MAX_FILE_BYTES = 1 << 20

_NOT_REGULAR = (
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def _read_small_file(p: Path) -> bytes:
    """The bytes of the regular file ``p`` (a symbolic link is followed):
    ValueError for anything else, or for more than MAX_FILE_BYTES.

    Checked on the open file, not the path, so that nothing is read, nor
    waited for, before the check: a FIFO opens without blocking, and
    /dev/zero would never end. Files whose size the system does not know
    (/proc and /sys report 0 or 4096 bytes) are not regular files either:
    reading must give the size that fstat reports.
    """
    fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):  # (what reading it would say)
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(p))
        kind = next((what for test, what in _NOT_REGULAR if test(info.st_mode)), None)
        if kind is not None or not stat.S_ISREG(info.st_mode):
            raise ValueError(
                f"{p}: not a regular file ({kind or 'a special file'}); give the "
                "path of a .toml or .json lattice file"
            )
        limit = MAX_FILE_BYTES
        if info.st_size > limit:
            raise ValueError(
                f"{p}: {info.st_size} bytes, more than a lattice file may have "
                f"({limit} bytes, 1 MiB); is it the right file?"
            )
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 16):
            size += len(chunk)
            if size > limit:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    if size != info.st_size:
        raise ValueError(
            f"{p}: reading it gives {'more than ' if size > limit else ''}{size} "
            f"bytes where the file system reports {info.st_size}: not a regular "
            "file (such as those of /proc), or one that changed while read; "
            "give the path of a .toml or .json lattice file"
        )
    return b"".join(chunks)


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


def set_bits(bits: int) -> list[int]:
    """The positions of the bits set in ``bits`` (a bitset), lowest first.

    >>> set_bits(0b10110)
    [1, 2, 4]
    """
    count = bits.bit_count()
    if count > 64 and count * 5 > bits.bit_length():
        # Dense: reading the binary digits beats peeling bits off one by one,
        # each peel an operation on the whole int.
        return [p for p, digit in enumerate(f"{bits:b}"[::-1]) if digit == "1"]
    found: list[int] = []
    while bits:
        low = bits & -bits
        found.append(low.bit_length() - 1)
        bits ^= low
    return found


class _Reach:
    """Who is above whom in a directed graph, as bitsets.

    Nodes are numbered by their ``position`` in a topological order of the
    strongly connected components (sources first, the nodes of a component
    next to each other), and a set of nodes is a Python int whose bit ``p``
    stands for the node at position ``p``: intersecting two sets is one
    ``&`` on ints of N bits, whatever the shape of the graph.

    The order does the rest. A node comes after every node strictly below
    it, so the lowest bit of a set is a minimal element of it, and the set
    has a least element (up to a cycle) iff that element's upper bounds
    contain the whole set.
    """

    def __init__(self, succ: Mapping[Any, Sequence[Any]]) -> None:
        self.comps = _components(succ)
        self.order: list[Any] = [n for comp in self.comps for n in comp]
        self.position: dict[Any, int] = {n: p for p, n in enumerate(self.order)}
        pos = self.position
        size = len(self.order)
        # Each component's positions, and each position's component as a
        # bitset.
        spans: list[range] = []
        self.component = [0] * size
        for comp in self.comps:
            span = range(pos[comp[0]], pos[comp[0]] + len(comp))
            spans.append(span)
            self.component[span.start : span.stop] = [
                ((1 << len(span)) - 1) << span.start
            ] * len(span)
        succ_at = [[pos[s] for s in succ[n]] for n in self.order]
        pred_at: list[list[int]] = [[] for _ in range(size)]
        for p, ups in enumerate(succ_at):
            for q in ups:
                pred_at[q].append(p)
        # The closure, one component at a time: upward from the sinks of
        # the condensation, downward from its sources. A successor inside
        # the component is not done yet and adds nothing: its bits are the
        # component's own.
        self.up = [0] * size
        for span in reversed(spans):
            bits = self.component[span.start]
            for p in span:
                for q in succ_at[p]:
                    bits |= self.up[q]
            self.up[span.start : span.stop] = [bits] * len(span)
        self.down = [0] * size
        for span in spans:
            bits = self.component[span.start]
            for p in span:
                for q in pred_at[p]:
                    bits |= self.down[q]
            self.down[span.start : span.stop] = [bits] * len(span)
        # The nodes sharing an upper bound with a node: those below one of
        # its maximal upper bounds. A node below a successor's maximal upper
        # bounds is below its own, so the successors' sets are enough.
        self.meets = [0] * size
        for span in reversed(spans):
            outside = [q for p in span for q in succ_at[p] if q not in span]
            bits = 0 if outside else self.down[span.start]
            for q in outside:
                bits |= self.meets[q]
            self.meets[span.start : span.stop] = [bits] * len(span)
        self.not_up = [~bits for bits in self.up]

    def nodes(self, bits: int) -> list[Any]:
        """The nodes of a bitset, in positional order."""
        return [self.order[p] for p in set_bits(bits)]

    def minimal(self, common: int) -> list[int]:
        """The positions of the minimal elements of a set (whole components)."""
        found: list[int] = []
        while common:
            low = (common & -common).bit_length() - 1
            mine = self.component[low]
            found += [low] if mine >> low == 1 else set_bits(mine)
            common &= self.not_up[low]
        return found

    def pair_faults(self, nodes: Iterable[Any]) -> Iterator[tuple[int, int]]:
        """For each of ``nodes`` (all nodes, each once) in turn, the nodes that
        come after it and make a pair with no join: ``(no_bound, ambiguous)``,
        the pairs with no common upper bound and those with several minimal
        ones, as bitsets.

        Comparable pairs have a join (the higher one), and the pairs with no
        common upper bound are found as a set, so only the other pairs are
        looked at one by one, lowest first. When ``b`` joins the node at
        ``c``, so does every node between ``b`` and ``c`` (their common upper
        bounds with the node are among ``b``'s and include ``c``): those
        are settled with ``b``.
        """
        up, down, meets, not_up = self.up, self.down, self.meets, self.not_up
        later = (1 << len(self.order)) - 1
        for node in nodes:
            p = self.position[node]
            later ^= 1 << p
            rest = later & ~(up[p] | down[p])
            no_bound = rest & ~meets[p]
            rest &= meets[p]
            mine = up[p]
            ambiguous = 0
            while rest:
                low = rest & -rest
                b = low.bit_length() - 1
                common = mine & up[b]
                c = (common & -common).bit_length() - 1
                if common & not_up[c]:
                    ambiguous |= low
                    rest ^= low
                else:
                    rest &= ~(up[b] & down[c])
            yield no_bound, ambiguous


def _cycles(
    succ: Mapping[Any, Sequence[Any]], reach: _Reach, index: Mapping[Any, int]
) -> list[list[Any]]:
    """One shortest cycle per cyclic component, from its first node in
    ``index`` order, the cycles sorted by that node."""
    cycles: list[list[Any]] = []
    for comp in reach.comps:
        start = min(comp, key=index.__getitem__)
        if len(comp) > 1 or start in set(succ[start]):
            cycles.append(_cycle_from(succ, start, set(comp)))
    cycles.sort(key=lambda cycle: index[cycle[0]])
    return cycles


class ProblemScan:
    """Every reason why some edges do not describe a lattice: counted at
    once, described on demand.

    :meth:`Lattice.problems` lists them all; a report of a large graph,
    which may have hundreds of thousands, counts them and describes a few.

    Args:
      edges: maps each node to the nodes immediately above it.
      label: display name of a node in the messages (``repr`` by default).

    Attributes:
      counts: the number of problems of each kind: ``"cycle"``,
        ``"ambiguous join"`` and ``"no upper bound"``, zeros included.
      cycles: the cycles, in the order of their first node.

    >>> scan = ProblemScan({"a": ["c", "d"], "b": ["c", "d"]}, label=str)
    >>> scan.counts
    {'cycle': 0, 'ambiguous join': 1, 'no upper bound': 1}
    >>> [p.nodes for p in scan.pairs("no upper bound")]
    [('c', 'd')]
    """

    def __init__(
        self,
        edges: Mapping[Any, Iterable[Any]],
        label: Callable[[Any], str] | None = None,
    ) -> None:
        show: Callable[[Any], str] = label if label is not None else repr
        self._show = show
        succ = _successors(edges)
        self._nodes = tuple(succ)
        index = {n: i for i, n in enumerate(self._nodes)}
        self._reach = _Reach(succ)
        self.cycles = tuple(
            LatticeProblem(
                "cycle",
                tuple(cycle),
                message="cycle: " + " -> ".join(show(n) for n in cycle),
            )
            for cycle in _cycles(succ, self._reach, index)
        )
        self._faults = list(self._reach.pair_faults(self._nodes))
        self.counts = {
            "cycle": len(self.cycles),
            "ambiguous join": sum(a.bit_count() for _, a in self._faults),
            "no upper bound": sum(n.bit_count() for n, _ in self._faults),
        }

    def __len__(self) -> int:
        return sum(self.counts.values())

    def pairs(self, kind: str | None = None) -> Iterator[LatticeProblem]:
        """The problems of pairs of nodes, in the order of the nodes.

        Args:
          kind: only those of this kind (``"ambiguous join"`` or ``"no
            upper bound"``); both by default.

        Returns:
          An iterator: each problem is described when it is reached.

        Raises:
          ValueError: for another ``kind``.
        """
        if kind not in (None, "ambiguous join", "no upper bound"):
            raise ValueError(
                f"kind must be 'ambiguous join' or 'no upper bound', got {kind!r}"
            )
        return self._pairs(kind)

    def _pairs(self, kind: str | None) -> Iterator[LatticeProblem]:
        reach = self._reach
        # By position: each node, its place in the order given and its label.
        at = reach.order
        given = {n: i for i, n in enumerate(self._nodes)}
        place = [given[n] for n in at]
        names = [self._show(n) for n in at]
        # Many pairs share their common upper bounds: describe each set once.
        candidates: dict[int, tuple[tuple[Any, ...], str]] = {}
        for a, (no_bound, ambiguous) in zip(self._nodes, self._faults, strict=True):
            if kind == "ambiguous join":
                no_bound = 0
            elif kind == "no upper bound":
                ambiguous = 0
            if not no_bound | ambiguous:
                continue
            p = reach.position[a]
            for q in sorted(set_bits(no_bound | ambiguous), key=place.__getitem__):
                if no_bound >> q & 1:
                    yield LatticeProblem(
                        "no upper bound",
                        (a, at[q]),
                        message=f"no upper bound: {names[p]} and {names[q]} have "
                        "no common upper bound",
                    )
                    continue
                common = reach.up[p] & reach.up[q]
                found = candidates.get(common)
                if found is None:
                    minimal = sorted(reach.minimal(common), key=place.__getitem__)
                    found = candidates[common] = (
                        tuple(at[c] for c in minimal),
                        ", ".join(names[c] for c in minimal),
                    )
                yield LatticeProblem(
                    "ambiguous join",
                    (a, at[q]),
                    found[0],
                    message=f"ambiguous join: {names[p]} and {names[q]} have no "
                    f"least upper bound, only minimal ones: {found[1]}",
                )


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
        succ: dict[N, tuple[N, ...]] = _successors(edges)
        self._succ = succ
        self._label = label if label is not None else repr
        self._reach = _Reach(succ)
        self._order: list[N] = self._reach.order  # the nodes by position
        self._check()
        self._joins: dict[tuple[N, ...], N] = {}
        self._bounds: dict[N, frozenset[N]] = {}
        self._ranks: dict[N, int] | None = None

    # -- construction -------------------------------------------------------

    def _check(self) -> None:
        """Raise for the first cycle, or else the first ambiguous pair."""
        reach, show = self._reach, self._label
        index = {n: i for i, n in enumerate(self._succ)}
        for cycle in _cycles(self._succ, reach, index)[:1]:
            raise LatticeError(
                "cycle",
                cycle,
                message="not a lattice: the edges contain a cycle "
                + " -> ".join(show(n) for n in cycle),
            )
        for a, (_, ambiguous) in zip(
            self._succ, reach.pair_faults(self._succ), strict=True
        ):
            if not ambiguous:
                continue
            b = min(reach.nodes(ambiguous), key=index.__getitem__)
            common = reach.up[reach.position[a]] & reach.up[reach.position[b]]
            minimal = sorted((reach.order[c] for c in reach.minimal(common)), key=show)
            raise LatticeError(
                "ambiguous join",
                (a, b),
                minimal,
                message=f"not a lattice: {show(a)} and {show(b)} have no least "
                "upper bound; their minimal common upper bounds are "
                + ", ".join(show(c) for c in minimal),
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
        joins. (:class:`ProblemScan` counts them without describing each.)

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
        scan = ProblemScan(edges, label)
        return (*scan.cycles, *scan.pairs())

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
        p = self._reach.position[self._known(node)]
        below = self._reach.down[p] & ~(1 << p)
        pos = self._reach.position
        return tuple(n for n in self._succ if below >> pos[n] & 1)

    def upper_bounds(self, node: N) -> frozenset[N]:
        """Every node ``u`` with ``node <= u`` (including ``node``).

        Args:
          node: a node of the lattice.

        Returns:
          The set, computed on first use and kept.

        Raises:
          LatticeError: ``node`` is not on the lattice.

        >>> sorted(Lattice({"a": ["b"], "b": ["c"]}).upper_bounds("b"))
        ['b', 'c']
        """
        node = self._known(node)
        found = self._bounds.get(node)
        if found is None:
            bits = self._reach.up[self._reach.position[node]]
            found = self._bounds[node] = frozenset(self._reach.nodes(bits))
        return found

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
            ranks = dict.fromkeys(self._succ, 0)
            # In positional order, every node comes after the nodes below it.
            for n in self._reach.order:
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
        pos, up = self._reach.position, self._reach.up
        target = pos[high]
        # Compared as dict keys, not with ==: NumPy says dtype('int64') == int.
        is_low = {low: True}
        parent: dict[N, N] = {}
        queue = deque([low])
        while queue:
            node = queue.popleft()
            if pos[node] == target:
                break
            for n in self._succ[node]:
                if n not in parent and n not in is_low and up[pos[n]] >> target & 1:
                    parent[n] = node
                    queue.append(n)
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
        pos = self._reach.position
        return bool(self._reach.up[pos[self._known(a)]] >> pos[self._known(b)] & 1)

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
        pos, up = self._reach.position, self._reach.up
        common = -1
        for n in nodes:
            common &= up[pos[self._known(n)]]
        if not common:
            raise JoinError(
                nodes,
                f"nodes {', '.join(self._label(n) for n in nodes)} have no "
                "common upper bound on the lattice",
            )
        # The construction checked that every pair with a common upper bound
        # has a least one, and pairwise joins make every finite join unique:
        # it is the lowest common upper bound in positional order.
        return self._order[(common & -common).bit_length() - 1]

    def table(self, nodes: Sequence[N] | None = None) -> list[list[N | None]]:
        """The join table: ``table[i][j]`` is ``join(nodes[i], nodes[j])``.

        A cell is ``None`` where the pair has no join. The table is computed
        directly, without filling the cache of :meth:`join`, so that of a
        lattice of N nodes costs N² cells and nothing more.

        Args:
          nodes: the rows' and columns' nodes, in order (all, by default).

        Returns:
          A list of rows; a cell is ``None`` where the pair has no join.

        >>> Lattice({"a": ["b"]}).table()
        [['a', 'b'], ['b', 'b']]
        """
        order = self.nodes if nodes is None else tuple(nodes)
        pos, up, at = self._reach.position, self._reach.up, self._order
        bounds = [up[pos[self._known(n)]] for n in order]
        rows: list[list[N | None]] = []
        for mine in bounds:
            row: list[N | None] = []
            for other in bounds:
                common = mine & other
                row.append(at[(common & -common).bit_length() - 1] if common else None)
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
          ValueError: if the file cannot be parsed or is not of that shape,
            is not a regular file (a device such as ``/dev/zero``, a FIFO,
            a ``/proc`` file; a symbolic link to a regular file is
            followed), or is larger than 1 MiB.
          OSError: if it cannot be opened or is a directory.

        >>> import pathlib, tempfile
        >>> f = pathlib.Path(tempfile.mkdtemp()) / "chain.json"
        >>> _ = f.write_text('{"edges": {"int": ["float"]}, "labels": {"int": "i"}}')
        >>> Lattice.read_file(f)
        ({'int': ['float']}, {'int': 'i'})
        """
        p = Path(path)
        raw = _read_small_file(p)
        try:
            text = raw.decode("utf-8")
            data: object = (
                json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
            )
        except ValueError as err:  # not UTF-8, not JSON, not TOML
            raise ValueError(f"{p}: cannot parse lattice file: {err}") from None
        except RecursionError:  # (both parsers recurse per level of nesting)
            raise ValueError(
                f"{p}: cannot parse lattice file: it nests too deeply; a lattice "
                'file is a table of lists of names, e.g. edges = {a = ["b"]}'
            ) from None
        table = cast("dict[object, object]", data) if isinstance(data, dict) else {}
        edges = table.get("edges")
        if not _is_name_lists(edges):
            raise ValueError(
                f"{p}: expected a table 'edges' mapping each node name to a "
                'list of node names, e.g. edges = {a = ["b"]}'
            )
        if not edges:
            raise ValueError(
                f"{p}: the table 'edges' is empty; a lattice needs at least one "
                'node, e.g. edges = {a = ["b"]}'
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
