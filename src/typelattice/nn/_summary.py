"""``tabulate``: a model's summary as a plain-text table, as Flax linen's.

``Module.tabulate`` runs ``init`` once abstractly (``eval_shape``: shapes
and dtypes, no arithmetic) while a :class:`Recorder` notes each method call
of each module: its path,
class, method, inputs and outputs. One row per module path (its first call;
``show_repeated`` shows the others), with a column per variable collection
listing the module's own variables and their count and bytes, a footer of
totals per collection and a caption with the total of all collections.
Flax draws the table with ``rich``; typelattice draws the same columns,
rows and totals itself, with the same box characters, and never shortens a
cell to fit a console's width.
"""

# The recorder reads where a bound module sits.
# pyright: reportPrivateUsage=false

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from typelattice._tracing import tree
from typelattice.nn._meta import partitioned

if TYPE_CHECKING:
    from typelattice.nn._module import Module

__all__ = ["Recorder", "summary_table", "tabulate"]

# Method names the module column leaves out (Flax's): any other method is
# shown after the class, ``Encoder (encode)``.
_PLAIN_METHODS = frozenset({"__call__", "<lambda>"})


@dataclasses.dataclass
class _Call:
    """One recorded method call: where, what, and its inputs and outputs
    as rendered text trees."""

    path: tuple[str, ...]
    module: str
    method: str
    inputs: Any
    outputs: Any = None


class _Shown:
    """A leaf already written as text (``float32[16,3]``)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _show_leaf(x: Any) -> _Shown:
    box = partitioned(x)
    if box is not None:
        inner = _show_leaf(box.value).text
        return _Shown(f"{inner} P{box.names}")
    if isinstance(x, bool | int | float | complex | str) or x is None:
        return _Shown(repr(x))
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        shape = ",".join(str(d) for d in x.shape)
        return _Shown(f"{x.dtype}[{shape}]")
    return _Shown(repr(x))


def _shown(value: Any) -> Any:
    """``value`` with its leaves as text; tuples, lists, dicts and
    dataclasses kept as the nesting (as Flax's YAML rendering)."""
    if partitioned(value) is not None:
        return _show_leaf(value)
    if isinstance(value, tuple | list):
        items = cast(Sequence[Any], value)
        return tuple(_shown(v) for v in items)
    if isinstance(value, Mapping):
        mapping: Mapping[Any, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {str(k): _shown(v) for k, v in mapping.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _shown(getattr(value, f.name)) for f in dataclasses.fields(value)
        }
    return _show_leaf(value)


def _inputs(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    """The inputs column's value: the one argument, else the arguments (and
    the keywords as a last dict), as Flax shows them."""
    if args and kwargs:
        return _shown((*args, dict(kwargs)))
    if args:
        return _shown(args[0] if len(args) == 1 else args)
    if kwargs:
        return _shown(dict(kwargs))
    return ()


def _yaml_lines(value: Any) -> list[str]:
    """``value`` as the lines of a block-style YAML document (PyYAML's
    layout: list items ``- x``, not indented under a key)."""
    if isinstance(value, _Shown):
        return [value.text]
    if isinstance(value, tuple):
        items: tuple[Any, ...] = value  # pyright: ignore[reportUnknownVariableType]
        if not items:
            return ["[]"]
        lines: list[str] = []
        for item in items:
            sub = _yaml_lines(item)
            lines.append(f"- {sub[0]}")
            lines.extend(f"  {line}" for line in sub[1:])
        return lines
    mapping: dict[str, Any] = value
    if not mapping:
        return ["{}"]
    lines = []
    for key, item in mapping.items():
        if isinstance(item, _Shown) or (not item and isinstance(item, tuple | dict)):
            lines.append(f"{key}: {_yaml_lines(item)[0]}")
        elif isinstance(item, tuple):
            lines.append(f"{key}:")
            lines.extend(_yaml_lines(item))
        else:
            lines.append(f"{key}:")
            lines.extend(f"  {line}" for line in _yaml_lines(item))
    return lines


def _yaml(value: Any) -> str:
    if value is None or (isinstance(value, tuple | dict) and not value):
        return ""
    return "\n".join(_yaml_lines(value)).replace("'", "")


def _bytes_repr(num_bytes: int) -> str:
    if num_bytes > 1e9:
        return f"{num_bytes / 1e9:,.1f} GB"
    if num_bytes > 1e6:
        return f"{num_bytes / 1e6:,.1f} MB"
    if num_bytes > 1e3:
        return f"{num_bytes / 1e3:,.1f} KB"
    return f"{num_bytes:,} B"


def _size_repr(size: int, num_bytes: int) -> str:
    return f"{size:,} ({_bytes_repr(num_bytes)})" if size else ""


def _size_and_bytes(variables: Any) -> tuple[int, int]:
    size = num_bytes = 0
    for leaf in tree.leaves(variables):
        if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
            n = 1
            for d in leaf.shape:
                n *= int(d)
            size += n
            num_bytes += n * leaf.dtype.itemsize
    return size, num_bytes


def _at(variables: Mapping[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """Each collection's subtree at ``path`` (collections without one left
    out)."""
    found: dict[str, Any] = {}
    for collection, node in variables.items():
        for name in path:
            if not isinstance(node, Mapping) or name not in node:
                node = None
                break
            node = node[name]  # pyright: ignore[reportUnknownVariableType]
        if node is not None:
            found[collection] = node
    return found


def _own(
    variables: Mapping[str, Any], path: tuple[str, ...], paths: set[tuple[str, ...]]
) -> dict[str, Any]:
    """The variables at ``path`` without those of its submodules."""
    own: dict[str, Any] = {}
    for collection, node in _at(variables, path).items():
        if isinstance(node, Mapping):
            mapping: Mapping[str, Any] = node  # pyright: ignore[reportUnknownVariableType]
            own[collection] = {
                k: v for k, v in mapping.items() if (*path, k) not in paths
            }
        else:
            own[collection] = node
    return own


def _collections_of(variables: Mapping[str, Any]) -> list[str]:
    """The variable collections, by name (Flax's order follows a set of
    the names, and changes from one process to the next)."""
    return sorted(variables)


def _sorted_tree(value: Any) -> Any:
    if isinstance(value, Mapping):
        mapping: Mapping[str, Any] = value  # pyright: ignore[reportUnknownVariableType]
        return {k: _sorted_tree(mapping[k]) for k in sorted(mapping)}
    return value


class Recorder:
    """Records the method calls of a run (given to the run as its
    ``observe``): where each ran, its class and method, and its inputs
    and outputs as text."""

    def __init__(self) -> None:
        self.calls: list[_Call] = []

    def __call__(
        self, module: Module, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Callable[[Any], None]:
        scope = module._bound_scope()
        assert scope is not None
        call = _Call(scope.path, type(module).__name__, name, _inputs(args, kwargs))
        self.calls.append(call)

        def done(out: Any) -> None:
            call.outputs = _shown(out)

        return done


def _rows(
    calls: list[_Call],
    variables: Mapping[str, Any],
    depth: int | None,
    show_repeated: bool,
) -> list[tuple[_Call, dict[str, Any], dict[str, Any]]]:
    """``(call, the module's own variables, the variables counted)`` per
    row shown."""
    paths = {c.path for c in calls}
    seen: set[tuple[str, ...]] = set()
    rows: list[tuple[_Call, dict[str, Any], dict[str, Any]]] = []
    for call in calls:
        if call.path in seen:
            if not show_repeated:
                continue
            own: dict[str, Any] = {}
            counted: dict[str, Any] = {}
        elif depth is not None:
            if len(call.path) > depth:
                continue
            own = _own(variables, call.path, paths)
            # At the depth limit a row counts its submodules' variables too.
            counted = _at(variables, call.path) if len(call.path) == depth else own
        else:
            own = counted = _own(variables, call.path, paths)
        seen.add(call.path)
        rows.append((call, own, counted))
    return rows


def _render(
    title: str,
    header: list[str],
    body: list[list[str]],
    footer: list[str],
    caption: str,
) -> str:
    """The table with box-drawing lines (heavy header, a line between rows,
    the footer after a line), the title above and the caption below, both
    centred."""
    table = [header, *body, footer]
    widths = [
        max(len(line) for row in table for line in (row[i].split("\n") or [""]))
        for i in range(len(header))
    ]

    def line(left: str, fill: str, mid: str, end: str) -> str:
        return left + mid.join(fill * (w + 2) for w in widths) + end

    def cells(row: list[str], edge: str, justify: list[str]) -> list[str]:
        split = [cell.split("\n") for cell in row]
        height = max(len(s) for s in split)
        out: list[str] = []
        for k in range(height):
            parts: list[str] = []
            for i, s in enumerate(split):
                text = s[k] if k < len(s) else ""
                just = text.rjust if justify[i] == "right" else text.ljust
                parts.append(f" {just(widths[i])} ")
            out.append(edge + edge.join(parts) + edge)
        return out

    left = ["left"] * len(header)
    footer_justify = list(left)
    footer_justify[len(header) - len(footer) + footer.index("Total")] = "right"
    lines = [line("┏", "━", "┳", "┓"), *cells(header, "┃", left)]
    lines.append(line("┡", "━", "╇", "┩"))
    for i, row in enumerate(body):
        if i:
            lines.append(line("├", "─", "┼", "┤"))
        lines.extend(cells(row, "│", left))
    lines.append(line("├", "─", "┼", "┤"))
    lines.extend(cells(footer, "│", footer_justify))
    lines.append(line("└", "─", "┴", "┘"))
    width = len(lines[0])

    def centred(text: str) -> str:  # (an odd space goes right, as rich's)
        return " " * max(0, (width - len(text)) // 2) + text

    return "\n".join(["", centred(title), *lines, "", centred(caption)]) + "\n\n"


def summary_table(
    title: str,
    calls: list[_Call],
    variables: Mapping[str, Any],
    depth: int | None,
    show_repeated: bool,
) -> str:
    """The table of the recorded ``calls`` of a model whose variables
    (shapes and dtypes suffice) are ``variables``."""
    collections = _collections_of(variables)
    header = ["path", "module", "inputs", "outputs", *collections]
    body: list[list[str]] = []
    totals: dict[str, tuple[int, int]] = dict.fromkeys(collections, (0, 0))
    for call, own, counted in _rows(calls, variables, depth, show_repeated):
        method = "" if call.method in _PLAIN_METHODS else f" ({call.method})"
        cols: list[str] = []
        for collection in collections:
            text = (
                _yaml(_shown(_sorted_tree(own[collection])))
                if collection in own
                else ""
            )
            size = _size_and_bytes(counted.get(collection))
            t_size, t_bytes = totals[collection]
            totals[collection] = (t_size + size[0], t_bytes + size[1])
            cols.append(text + ("\n\n" if text else "") + _size_repr(*size))
        body.append(
            [
                "/".join(call.path),
                call.module + method,
                _yaml(call.inputs),
                _yaml(call.outputs),
                *cols,
            ]
        )
    footer = ["", "", "", "Total", *(_size_repr(*totals[c]) for c in collections)]
    everything = (
        sum(s for s, _ in totals.values()),
        sum(b for _, b in totals.values()),
    )
    caption = f"Total Parameters: {_size_repr(*everything)}"
    return _render(f"{title} Summary", header, body, footer, caption)


def tabulate(
    module: Module,
    rngs: Any,
    depth: int | None = None,
    show_repeated: bool = False,
    mutable: Any = None,
    console_kwargs: Mapping[str, Any] | None = None,
    table_kwargs: Mapping[str, Any] | None = None,
    column_kwargs: Mapping[str, Any] | None = None,
    compute_flops: bool = False,
    compute_vjp_flops: bool = False,
    **kwargs: Any,
) -> Callable[..., str]:
    """A function of a model's inputs returning its summary table (Flax's
    ``nn.tabulate``); see :meth:`Module.tabulate`.

    Args:
      module: the model.
      rngs: as ``init``'s.
      depth, show_repeated, console_kwargs, table_kwargs, column_kwargs,
        compute_flops, compute_vjp_flops: as :meth:`Module.tabulate`.
      mutable: as :meth:`Module.tabulate` (None: its default).
      **kwargs: further keywords of ``init`` (``method=...``).

    Returns:
      ``f(*args, **kwargs) -> str``.

    >>> from typelattice import nn, random
    >>> import typelattice.numpy as tnp
    >>> summary = nn.tabulate(nn.Dense(2), random.key(0))(tnp.ones((1, 3)))
    >>> summary.splitlines()[-2].strip()
    'Total Parameters: 8 (32 B)'
    """
    options: dict[str, Any] = {
        "depth": depth,
        "show_repeated": show_repeated,
        "console_kwargs": console_kwargs,
        "table_kwargs": table_kwargs,
        "column_kwargs": column_kwargs,
        "compute_flops": compute_flops,
        "compute_vjp_flops": compute_vjp_flops,
    }
    if mutable is not None:
        options["mutable"] = mutable

    def summarize(*args: Any, **call_kwargs: Any) -> str:
        return module.tabulate(rngs, *args, **options, **call_kwargs, **kwargs)

    return summarize
