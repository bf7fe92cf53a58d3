"""Benchmark the lattice algorithms on graphs of a thousand nodes.

What it measures, for each graph:

- ``Lattice(edges)``: construction, which checks every pair (lattices only);
- ``lat.table()``: the full join table, N² cells (lattices only);
- ``ProblemScan(edges)``: every problem counted, none described;
- ``Lattice.problems(edges)``: every problem described;
- ``check``: ``typelattice check FILE`` run in this process (reading the
  file, counting, printing the first 10), output discarded;
- the previous algorithm of ``Lattice.problems``: upper-bound sets as
  frozensets, every pair's common upper bounds intersected and searched for
  a least one, each problem described the same way. It is timed once where
  it takes seconds (the graphs of a thousand nodes), like the others where
  it is fast, and its answers must equal the new ones, message for message;
  ``--no-previous`` skips it (a minute or two).

The graphs: a chain of 1000 nodes; a random graph of 1000 nodes, each with
0 to 3 edges to later nodes (not a lattice: hundreds of thousands of pairs
have no join, as in the graph that took ``check`` minutes); a random tree
hundreds of levels deep (a lattice whose joins are lowest common
ancestors); a 32×32 grid (a lattice with 246,016 incomparable pairs);
and the built-in promotion lattices.

Times are the best of a few runs, in milliseconds; the ratio is the previous
algorithm's time over that of ``Lattice.problems`` and of ``check``. It is a
report: the exit status is 1 only if an answer differs from the previous
algorithm's. Run it from the repository root::

    python benchmarks/bench_lattice.py [--no-previous]
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import typelattice
from typelattice import _promotion
from typelattice._cli import main as cli
from typelattice._lattice import Lattice, LatticeProblem, ProblemScan

ROUNDS = 3  # best of, for each measurement of the new algorithms

Edges = dict[Any, list[Any]]


def chain(n: int) -> Edges:
    return {f"n{i}": [f"n{i + 1}"] for i in range(n - 1)}


def random_dag(n: int, seed: int = 1) -> Edges:
    rng = random.Random(seed)
    edges: Edges = {}
    for i in range(n - 1):
        k = rng.choice([0, 1, 2, 2, 3])
        edges[f"n{i}"] = sorted({f"n{rng.randrange(i + 1, n)}" for _ in range(k)})
    return edges


def deep_tree(n: int, seed: int = 3) -> Edges:
    rng = random.Random(seed)
    return {f"n{i}": [f"n{rng.randrange(max(0, i - 4), i)}"] for i in range(1, n)}


def grid(side: int) -> Edges:
    def name(i: int, j: int) -> str:
        return f"g{i}_{j}"

    return {
        name(i, j): [
            name(a, b) for a, b in ((i + 1, j), (i, j + 1)) if max(a, b) < side
        ]
        for i in range(side)
        for j in range(side)
    }


def builtin(promotion: str, x64: bool) -> Edges:
    return {
        a: list(ups)
        for a, ups in _promotion.edges_literal(
            _promotion.get_lattice(promotion, x64)
        ).items()
    }


def previous_problems(edges: Edges) -> list[LatticeProblem]:
    """The previous algorithm's answers, described as ``Lattice.problems``
    describes them (with ``str`` for the labels).

    (Its cycles were found as now, by strongly connected components; the
    graphs here have none.) The upper bounds of each node are a frozenset,
    and each pair's common ones are intersected, then searched for a least
    element by subset tests.
    """
    succ: dict[Hashable, tuple[Hashable, ...]] = {}
    for node, ups in edges.items():
        succ[node] = tuple(dict.fromkeys(ups))
    for ups in list(succ.values()):
        for up in ups:
            succ.setdefault(up, ())
    ub: dict[Hashable, frozenset[Hashable]] = {}
    for root in succ:  # iterative post-order: every node after those above it
        stack = [(root, iter(succ[root]))]
        while stack:
            node, ups = stack[-1]
            for up in ups:
                if up not in ub:
                    stack.append((up, iter(succ[up])))
                    break
            else:
                stack.pop()
                if node not in ub:
                    bounds = {node}
                    for up in succ[node]:
                        bounds |= ub[up]
                    ub[node] = frozenset(bounds)
    found: list[LatticeProblem] = []
    for a, b in itertools.combinations(succ, 2):
        common = ub[a] & ub[b]
        if not common:
            found.append(
                LatticeProblem(
                    "no upper bound",
                    (a, b),
                    message=f"no upper bound: {a} and {b} have no common upper bound",
                )
            )
            continue
        if any(common <= ub[c] for c in common):
            continue
        minimal = [
            c
            for c in succ
            if c in common and not any(c in ub[d] and d not in ub[c] for d in common)
        ]
        found.append(
            LatticeProblem(
                "ambiguous join",
                (a, b),
                tuple(minimal),
                message=f"ambiguous join: {a} and {b} have no least upper bound, "
                "only minimal ones: " + ", ".join(str(c) for c in minimal),
            )
        )
    return found


def best_ms(fn: Callable[[], object], rounds: int = ROUNDS) -> float:
    """The best of ``rounds`` runs (each repeated to last 50 ms), in ms."""
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= 0.05:
            break
        number *= 4
    best = elapsed / number
    for _ in range(rounds - 1):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best * 1e3


def shown(ms: float) -> str:
    """Three significant digits, at most."""
    return f"{ms:.3g}" if ms < 1000 else f"{ms:.0f}"


def times(ratio: float) -> str:
    return f"{ratio:.0f}x" if ratio >= 100 else f"{ratio:.2g}x"


def check_ms(path: Path) -> float:
    def run() -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            cli(["check", str(path)])

    return best_ms(run)


def main() -> int:
    previous = "--no-previous" not in sys.argv[1:]
    graphs: list[tuple[str, Edges]] = [
        ("chain", chain(1000)),
        ("random DAG", random_dag(1000)),
        ("deep tree", deep_tree(1000)),
        ("grid 32x32", grid(32)),
        ("standard x64", builtin("standard", True)),
        ("standard x32", builtin("standard", False)),
        ("strict x64", builtin("strict", True)),
    ]
    print(
        f"typelattice {typelattice.__version__}, Python {platform.python_version()}"
        f", {platform.machine()}; times in ms, best of {ROUNDS}"
    )
    head = (
        f"{'graph':<13}{'nodes':>6}{'problems':>9}{'Lattice()':>10}{'table()':>9}"
        f"{'scan':>8}{'problems()':>11}{'check':>8}{'previous':>10}{'ratio':>14}"
    )
    print(head)
    status = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, edges in graphs:
            path = Path(tmp) / "graph.json"
            path.write_text(json.dumps({"edges": edges}))
            scan = ProblemScan(edges)
            nodes = len({*edges, *(b for ups in edges.values() for b in ups)})
            is_lattice = scan.counts["cycle"] == scan.counts["ambiguous join"] == 0
            build = table = "-"
            if is_lattice:
                build = shown(best_ms(lambda e=edges: Lattice(e)))
                table = shown(best_ms(Lattice(edges).table))
            scanned = best_ms(lambda e=edges: ProblemScan(e))
            described = best_ms(lambda e=edges: Lattice.problems(e, label=str))
            checked = check_ms(path)
            old = ratio = "-"
            if previous:
                start = time.perf_counter()
                answers = previous_problems(edges)
                old_ms = (time.perf_counter() - start) * 1e3
                if old_ms < 1000:  # fast enough to time like the others
                    old_ms = best_ms(lambda e=edges: previous_problems(e))
                if list(Lattice.problems(edges, label=str)) != answers:
                    print(f"{name}: the answers differ from the previous algorithm's")
                    status = 1
                old = shown(old_ms)
                ratio = f"{times(old_ms / described)}/{times(old_ms / checked)}"
            print(
                f"{name:<13}{nodes:>6}{len(scan):>9}{build:>10}{table:>9}"
                f"{shown(scanned):>8}{shown(described):>11}{shown(checked):>8}"
                f"{old:>10}{ratio:>14}"
            )
    print("ratio: the previous algorithm's time over that of problems() / of check")
    return status


if __name__ == "__main__":
    sys.exit(main())
