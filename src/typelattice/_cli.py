"""The ``typelattice`` command line: see, explain and compare promotion lattices.

Each subcommand prints what a function of the Python API returns: ``table``
(:func:`~typelattice.promotion_table`), ``compare``
(:func:`~typelattice.compare_libraries`, :func:`~typelattice.check_laws`),
``draw`` (:func:`~typelattice.lattice_svg` and friends), ``explain``
(:func:`~typelattice.explain`) and ``check``
(:meth:`~typelattice.Lattice.problems`); ``port`` rewrites the imports of a
Flax program to typelattice's modules (``typelattice._port``).

Exit status: 0 when the command did what was asked; 1 when the answer is
"no" (``check``: not a lattice; ``explain``: the types have no join;
``port --check``: a file would change), with the answer printed as usual;
2 for an error, one line on stderr saying what to change (a bad option or
value, a file that cannot be read). A reader that closes the pipe early
(``| head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import dataclasses
import html
import itertools
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

from typelattice import __version__, _config, _dtypes, _explain, _tables
from typelattice import _draw as draw
from typelattice._lattice import Lattice, LatticeError, ProblemScan

__all__ = ["main", "progress_on", "run_main"]

# _compare.LIBRARIES, written out so that building the parser (every run,
# even 'table') does not import the comparison code.
_LIBRARIES = (
    "numpy",
    "torch",
    "dask",
    "cupy",
    "tensorflow",
    "jax",
    "jax.lax",
    "array_api_strict",
    "typelattice",
    "typelattice:torch",
    "typelattice:dask",
    "typelattice:cupy",
)

# What the help says of the library names (no import needed to build it).
_LIBRARIES_HELP = (
    "torch, dask and cupy are measured with their own rules; typelattice "
    "is typelattice's namespace on NumPy, and typelattice:torch, "
    "typelattice:dask, typelattice:cupy the same on that library's arrays "
    "(each result checked to be on that backend). Install torch, Dask or "
    "CuPy with their extra: pip install 'typelattice[torch]', "
    "'typelattice[dask]', 'typelattice[cupy]'."
)


class _Fail(Exception):
    """A user error: printed as one line, exit status 2."""


#: The status of a command whose reader went away, as for a tool stopped by
#: SIGPIPE (128 + 13), which is what a shell reports for ``yes | head -1``.
_CLOSED_PIPE = 141

#: How many counterexamples ``check`` and ``compare --laws`` show unless told
#: otherwise.
_SHOWN = 10


# -- shared option handling -------------------------------------------------------


def _load(path: str) -> Lattice[str]:
    try:
        return Lattice.from_file(path)
    except LatticeError as err:
        raise _Fail(
            f"{path}: {err}; 'typelattice check {path}' lists every problem"
        ) from None


def _bits(args: argparse.Namespace) -> bool:
    """The 64-bit mode asked for, or the configured one."""
    return _config.current().enable_x64 if args.x64 is None else bool(args.x64)


def _codes(args: argparse.Namespace, lattice: Lattice[str] | None) -> list[str]:
    """The types ``--types`` selects (codes, or node names with a lattice)."""
    spec = args.types
    if lattice is not None:
        if spec in (None, "all", "default"):
            return list(lattice.nodes)
        names = _listed(spec)
        known = set(lattice.nodes)
        for name in names:
            if name not in known:
                raise _Fail(
                    f"{name!r} is not a node of the lattice; its nodes are "
                    f"{', '.join(lattice.nodes)}"
                )
        return names
    if spec is None or spec == "default":
        return list(_tables.DEFAULT_CODES)
    if spec == "all":
        return list(_tables.all_codes())
    codes = _listed(spec)
    for code in codes:
        _dtypes.code_to_dtype(code)  # unknown codes fail with the list
    return codes


def _listed(spec: str) -> list[str]:
    """The names of a ``--types`` list, each once."""
    names = [c.strip() for c in spec.split(",") if c.strip()]
    if not names:
        raise _Fail(
            f"--types {spec!r} names no type: give comma-separated codes "
            "(e.g. --types i1,u1,f4), 'default' or 'all'"
        )
    twice = [n for n in dict.fromkeys(names) if names.count(n) > 1]
    if twice:
        raise _Fail(f"--types names {', '.join(twice)} more than once")
    return names


def _use_color(args: argparse.Namespace) -> bool:
    if args.color == "always":
        return True
    if args.color == "never":
        return False
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def _out(text: str) -> None:
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


class _Progress:
    """Reports a measurement on stderr, once it has run for ``delay`` seconds.

    On a terminal one line is redrawn; otherwise a line per library."""

    def __init__(self, stream: IO[str], delay: float = 1.0) -> None:
        self.stream = stream
        self.tty = progress_on(stream)
        self.start = time.monotonic()
        self.state = ("", 0, 0)
        self.shown = False
        self.last_drawn = 0.0
        self.announced = ""
        self.lock = threading.Lock()
        self.timer = threading.Timer(delay, self._begin)
        self.timer.daemon = True
        self.timer.start()

    def __call__(self, library: str, done: int, total: int) -> None:
        with self.lock:
            self.state = (library, done, total)
            now = time.monotonic()
            if self.shown and (not self.tty or now - self.last_drawn > 0.1):
                self._draw(now)

    def _begin(self) -> None:
        with self.lock:
            self.shown = True
            self._draw(time.monotonic())

    def _draw(self, now: float) -> None:
        library, done, total = self.state
        if not library:
            return
        if self.tty:
            what = (
                f"importing {library}"
                if done == 0
                else f"measuring {library}: {done}/{total} pairs"
            )
            self.stream.write(f"\r{what} ({now - self.start:.0f} s)".ljust(60))
        elif library != self.announced:
            self.stream.write(f"typelattice: measuring {library} ({total} pairs)\n")
            self.announced = library
        self.stream.flush()
        self.last_drawn = now

    def close(self) -> None:
        self.timer.cancel()
        with self.lock:
            if self.shown and self.tty:
                self.stream.write("\r" + " " * 60 + "\r")
                self.stream.flush()
            self.shown = False


def _measure(fn: Any, *args: Any, **kwargs: Any) -> Any:
    progress = _Progress(sys.stderr)
    try:
        return fn(*args, progress=progress, **kwargs)
    finally:
        progress.close()


# -- subcommands ----------------------------------------------------------------------


def _table(args: argparse.Namespace) -> int:
    lattice = _load(args.lattice) if args.lattice else None
    if lattice is not None and args.x64 is not None:
        raise _Fail("--x32/--x64 do not apply to a --lattice file")
    codes = _codes(args, lattice)
    x64 = _bits(args)
    table = _tables.promotion_table(codes, args.mode, x64, lattice=lattice)
    color = _use_color(args) and args.format == "text"
    marked: tuple[tuple[str, str], ...] = ()
    misplaced = ""
    if args.diff:
        from typelattice import _compare

        if lattice is not None:
            for name in codes:
                if name not in _dtypes.codes():
                    raise _Fail(
                        f"--diff needs a lattice whose nodes are type codes; "
                        f"{name!r} is not one"
                    )
        other = _measure(_compare.measure_library, args.diff, codes, x64=x64)
        marked = _tables.differing_cells(table, other)
        misplaced = _compare.format_misplaced(other)
    text = _tables.format_table(table, args.format, marked=marked, color=color)
    if args.format in ("text", "markdown"):
        # Which table this is, above it. CSV keeps the layout of JAX's
        # documented table, which loaders read as data; HTML has it as the
        # table's caption and JSON as its title.
        if lattice is not None:
            caption = f"lattice {args.lattice}"
        else:
            mode = args.mode or _config.current().dtype_promotion
            bits = 64 if x64 else 32
            caption = f"dtype_promotion={mode}, enable_x64={x64} ({bits}-bit mode)"
        text = _heading(caption, args.format) + text
    _out(text)
    if args.diff and args.format in ("text", "markdown"):
        sign = "green" if color else "[x]" if args.format == "text" else "**x**"
        _out(f"{sign}: the {len(marked)} cells where {args.diff} differs")
        wide = ("u8", "i8", "f8", "c16")
        narrowed = any(set(cell) & set(wide) for cell in marked)
        if not x64 and narrowed and args.diff.startswith("typelattice"):
            # Not a difference of rules: no array of these types exists in
            # 32-bit mode to measure them.
            _out(
                f"note: in 32-bit mode an array of {', '.join(wide[:-1])} or "
                f"{wide[-1]} is made 32-bit (typelattice.numpy.zeros narrows "
                "it), so their rows and columns are measured as the 32-bit "
                "types; --x64 measures them"
            )
        if misplaced:
            _out(_preformatted(misplaced, args.format))
    return 0


def _compare_cmd(args: argparse.Namespace) -> int:
    from typelattice import _compare

    if args.laws and args.format == "csv":
        raise _Fail("--laws has no CSV form; use --format text, markdown, html or json")
    if args.examples is not None and not args.laws:
        raise _Fail("--examples counts the counterexamples of --laws: add --laws")
    twice = [n for n in dict.fromkeys(args.libraries) if args.libraries.count(n) > 1]
    if twice:
        raise _Fail(f"{', '.join(twice)} named more than once")
    codes = _codes(args, None)
    comparison = _measure(
        _compare.compare_libraries, args.libraries, codes, x64=args.x64 is not False
    )
    laws = [_compare.check_laws(t) for t in comparison.tables] if args.laws else []
    fmt = args.format
    if fmt == "json":
        _out(_compare.comparison_json(comparison, laws))
        return 0
    tables = comparison.tables
    several = len(tables) > 1
    if fmt == "csv":
        # One library: exactly the layout of 'table --format csv'. Several:
        # each table names its library in its corner, then the differences.
        parts = [
            (_csv_cell(t.title) if several else "") + _tables.format_table(t, "csv")
            for t in tables
        ]
        if several:
            parts.append(_compare.format_differences(comparison, "csv"))
        sys.stdout.write("\r\n".join(parts))
        return 0
    color = _use_color(args) and fmt == "text"
    blocks: list[str] = []
    for n, table in enumerate(tables):
        # On a terminal, each later table shows in green where it differs
        # from the first.
        marked = _tables.differing_cells(table, tables[0]) if n and color else ()
        text = _tables.format_table(table, fmt, marked=marked, color=color)
        blocks.append(_heading(table.title, fmt) + text)
    if several:
        count = len(comparison.differences)
        what = f"cells that differ: {count} of {len(tables[0].codes) ** 2}"
        diffs = _compare.format_differences(comparison, fmt) if count else ""
        blocks.append((_heading(what, fmt) + diffs).rstrip())
    for table in tables:
        # Results that left their backend are a fault of typelattice's, not
        # a promotion rule: said in words under the tables.
        note = _compare.format_misplaced(table)
        if note:
            blocks.append(_preformatted(note, fmt))
    for law in laws:
        text = _compare.format_laws(
            law, _SHOWN if args.examples is None else args.examples
        )
        blocks.append(_preformatted(text, fmt))
    _out("\n\n".join(blocks))
    return 0


def _preformatted(text: str, fmt: str) -> str:
    if fmt == "markdown":
        return f"```\n{text}\n```"
    if fmt == "html":
        return f"<pre>{html.escape(text)}</pre>"
    return text


def _csv_cell(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"') else text


def _heading(title: str, fmt: str) -> str:
    if fmt == "markdown":
        return f"### {title}\n\n"
    if fmt == "html":
        return f"<h3>{html.escape(title)}</h3>\n"
    return f"{title}\n"


def _draw(args: argparse.Namespace) -> int:
    suffix = Path(args.output).suffix.lower()
    if suffix not in (".svg", ".png", ".dot"):
        raise _Fail(f"{args.output}: the file name must end in .svg, .png or .dot")
    lattice = _load(args.lattice) if args.lattice else None
    if lattice is not None and args.x64 is not None:
        raise _Fail("--x32/--x64 do not apply to a --lattice file")
    codes = _codes(args, lattice)
    x64 = _bits(args)
    title = f"lattice {args.lattice}" if lattice is not None else ""
    kwargs: dict[str, Any] = {"lattice": lattice, "types": codes, "title": title}
    if suffix == ".png":
        try:
            data = draw.lattice_png(args.mode, x64, **kwargs)
        except ImportError as err:
            raise _Fail(str(err)) from None
        Path(args.output).write_bytes(data)
    else:
        render = draw.lattice_svg if suffix == ".svg" else draw.lattice_dot
        Path(args.output).write_text(render(args.mode, x64, **kwargs), encoding="utf-8")
    layout = draw.lattice_layout(args.mode, x64, **kwargs)
    _out(f"wrote {args.output}: {len(layout.nodes)} nodes, {len(layout.edges)} edges")
    return 0


def _explain_cmd(args: argparse.Namespace) -> int:
    if len(args.inputs) < 2:
        raise _Fail("explain needs at least two types, e.g. explain int8 uint8")
    lattice = _load(args.lattice) if args.lattice else None
    if lattice is not None and args.x64 is not None:
        raise _Fail("--x32/--x64 do not apply to a --lattice file")
    e = _explain.explain(
        *args.inputs,
        promotion=args.mode,
        x64=None if lattice is not None else _bits(args),
        lattice=lattice,
        lattice_name=args.lattice or "",
    )
    if args.format == "json":
        _out(json.dumps(dataclasses.asdict(e), indent=1, ensure_ascii=False))
    else:
        _out(_explain.format_explanation(e))
    # No join is an answer, printed above; the status says it, as check's does.
    return 0 if e.join is not None else 1


def _check(args: argparse.Namespace) -> int:
    edges, labels = Lattice.read_file(args.file)

    def show(node: str) -> str:
        return labels.get(node, node)

    scan = ProblemScan(edges, label=show if labels else str)
    counts = scan.counts
    nodes = set(edges) | {b for ups in edges.values() for b in ups}
    n_edges = sum(len(set(ups)) for ups in edges.values())
    kinds = {k for k, n in counts.items() if n}
    if not kinds:
        verdict, status = "a lattice", 0
    elif kinds == {"no upper bound"}:
        verdict = "a partial lattice (some pairs have no upper bound, so no join)"
        status = 0 if args.partial else 1
    else:
        verdict, status = "not a lattice", 1
    # Every problem is counted; only the first are described (cycles, then
    # ambiguous joins, then pairs with no upper bound): a graph of a
    # thousand nodes can have hundreds of thousands.
    limit = None if args.all else _SHOWN if args.max is None else args.max
    shown = itertools.islice(
        itertools.chain(
            scan.cycles, scan.pairs("ambiguous join"), scan.pairs("no upper bound")
        ),
        limit,
    )
    omitted = 0 if limit is None else max(0, len(scan) - limit)
    if args.format == "json":
        _out(
            json.dumps(
                {
                    "file": args.file,
                    "verdict": verdict.split(" (")[0],
                    "nodes": len(nodes),
                    "edges": n_edges,
                    "counts": counts,
                    "problems": [
                        {
                            "kind": p.kind,
                            "nodes": list(p.nodes),
                            "candidates": list(p.candidates),
                            "message": p.message,
                        }
                        for p in shown
                    ],
                    "omitted": omitted,
                },
                indent=1,
                ensure_ascii=False,
            )
        )
        return status
    _out(f"{args.file}: {verdict}: {len(nodes)} nodes, {n_edges} edges")
    if kinds:
        summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
        noun = "counterexample" if len(scan) == 1 else "counterexamples"
        _out(f"{len(scan)} {noun}: {summary}")
        # Line by line, as they are described: --all may print a million.
        for p in shown:
            _out(f"  {p}")
        if omitted:
            _out(
                f"  ... and {omitted} more (--max N shows the first N, --all every one)"
            )
        if kinds == {"no upper bound"}:
            _out(
                "promotion refuses those pairs, as JAX's strict mode does; "
                "--partial accepts this"
            )
    if status == 0 and nodes <= set(_dtypes.codes()):
        _out(
            "its nodes are type codes: typelattice.register_lattice(name, "
            f"typelattice.Lattice.from_file({args.file!r})) makes "
            "dtype_promotion(name) promote on it"
        )
    return status


def _backends(args: argparse.Namespace) -> int:
    from typelattice._backends import _support  # (loaded for this command only)

    names = args.names or ["torch", "dask", "cupy"]
    shown: list[str] = []
    tables: list[dict[str, dict[str, str]]] = []
    for name in names:
        try:
            tables.append(_support.table_of(name))
        except ImportError as err:
            if args.names:
                raise _Fail(str(err)) from None
            print(f"typelattice: note: {err}", file=sys.stderr)
            continue
        shown.append(name)
    if args.primitives:
        for name, table in zip(shown, tables, strict=True):
            print(f"## {name}\n")
            dtypes = list(next(iter(table.values())))
            print("| primitive | " + " | ".join(dtypes) + " |")
            print("| --- |" + " --- |" * len(dtypes))
            for prim, row in table.items():
                print(f"| {prim} | " + " | ".join(row[d] for d in dtypes) + " |")
            print()
        return 0
    print(_support.render(shown, [_support.summary(t) for t in tables]))
    return 0


def _port(args: argparse.Namespace) -> int:
    from typelattice import _port as port  # (loaded for this command only)

    changed: list[str] = []
    for name in args.files:
        path = Path(name)
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise _Fail(f"{name}: not UTF-8 text; port reads Python source") from None
        try:
            new = port.rewrite_source(source)
        except SyntaxError as err:
            raise _Fail(
                f"{name}:{err.lineno}: not Python source ({err.msg}); "
                "port rewrites the imports of Python files"
            ) from None
        if new != source:
            changed.append(name)
        for line, old, mapped in port.missing_modules(source):
            print(
                f"typelattice: note: {name}:{line}: {old} maps to {mapped}, "
                "which typelattice does not have; this import will fail",
                file=sys.stderr,
            )
        if args.check:
            continue
        if args.write:
            if new != source:
                # Written beside the file, then renamed over it: an
                # interrupted run leaves the old file whole.
                tmp = path.with_name(f".{path.name}.port-tmp")
                tmp.write_text(new, encoding="utf-8")
                os.replace(tmp, path)
                _out(f"rewrote {name}")
            continue
        if len(args.files) > 1:
            _out(f"==> {name} <==")
        sys.stdout.write(new)
    if args.check:
        for name in changed:
            _out(f"would rewrite {name}")
        return 1 if changed else 0
    return 0


# -- the parser -----------------------------------------------------------------------

_CODES_HELP = (
    "Types are written as the codes of JAX's promotion table: b1, u1 u2 u4 u8 "
    "(uint8..uint64), "
    "i1 i2 i4 i8 (int8..int64), bf f2 f4 f8 (bfloat16, float16..float64), c8 "
    "c16 (complex64, complex128), i* f* c* (weak: Python int, float, complex), "
    "and for the extended types f8e4m3fn-style small floats and i4b-style "
    "narrow ints ('b' for bits)."
)

_EPILOG = """\
examples:
  typelattice table --x64 --format csv     the layout of JAX's documented table
  typelattice table --diff numpy           mark where NumPy differs
  typelattice compare numpy torch --laws   measure both; find non-associative triples
  typelattice draw -o lattice.svg          a Hasse diagram of the lattice
  typelattice explain int8 uint8 float16   the join, step by step
  typelattice check my_lattice.toml        is it a lattice? the counterexamples
  typelattice backends                     what torch, Dask, CuPy compute, per dtype
  typelattice port train.py --write        run a Flax program on typelattice

Run 'typelattice COMMAND --help' for a command's options.
"""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, as the commands' are."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"typelattice: error: {message} (see '{self.prog} --help')\n")


def _count(text: str) -> int:
    """A number of things to show: a whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number such as 5, got {text!r}"
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected 0 or more, got {value}")
    return value


def _add_bits(p: argparse.ArgumentParser, default: str) -> None:
    x64_help = "64-bit mode (enable_x64=True)"
    x32_help = "32-bit mode"
    if default == "x64":
        x64_help += " (the default)"
    else:
        x32_help += " (the default unless TYPELATTICE_ENABLE_X64 is set)"
    bits = p.add_mutually_exclusive_group()
    bits.add_argument(
        "--x64", dest="x64", action="store_const", const=True, help=x64_help
    )
    bits.add_argument(
        "--x32", dest="x64", action="store_const", const=False, help=x32_help
    )


def _add_mode(p: argparse.ArgumentParser, lattice_help: str) -> None:
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--mode",
        default=None,
        metavar="MODE",
        help="dtype_promotion: standard (default), strict, or a registered name",
    )
    which.add_argument(
        "--lattice",
        default=None,
        metavar="FILE",
        help=lattice_help
        + " (a TOML or JSON regular file of at most 1 MiB, see 'typelattice check')",
    )


def _add_types(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument(
        "--types",
        default=None,
        metavar="CODES",
        help=f"comma-separated codes to {what}, 'default' for the 18 of JAX's "
        "promotion table (the standard types and i* f* c*; the default) or "
        "'all' to add the extended types (small floats such as "
        "f8e4m3fn, narrow ints such as i4b); with --lattice, node names",
    )


def _add_format(p: argparse.ArgumentParser, choices: Sequence[str]) -> None:
    p.add_argument(
        "--format",
        choices=tuple(choices),
        default="text",
        help="output format (default: text; csv: the layout of promotion_table_x64.csv)"
        if "csv" in choices
        else "output format (default: text)",
    )


def _add_color(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="highlight differing cells in colour: auto (default: when writing "
        "to a terminal and NO_COLOR is unset), always or never",
    )


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="typelattice",
        description="See, explain and compare dtype promotion lattices: JAX's "
        "rules (standard and strict, 32- and 64-bit), the promotion tables of "
        "the array libraries you have installed, and lattices of your own. "
        + _CODES_HELP,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"typelattice {__version__}"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    table = sub.add_parser(
        "table",
        help="print the promotion table",
        description="Print the promotion table: the join of each pair of types. "
        "'-' marks pairs with no implicit promotion. " + _CODES_HELP,
    )
    _add_bits(table, "config")
    _add_mode(table, "tabulate this lattice instead")
    _add_types(table, "show")
    _add_format(table, _tables.FORMATS)
    table.add_argument(
        "--diff",
        choices=_LIBRARIES,
        metavar="LIB",
        help="measure library LIB live (as 'compare' does) and mark the cells "
        "where it differs: [x] in text and CSV, bold in Markdown, a 'differs' "
        f"class in HTML, green on a terminal. LIB: {', '.join(_LIBRARIES)}. "
        + _LIBRARIES_HELP,
    )
    _add_color(table)
    table.set_defaults(run=_table)

    compare = sub.add_parser(
        "compare",
        help="measure the promotion tables of array libraries and compare them",
        description="Measure each library's promotion table live, as the "
        "appendix of JAX's type promotion design note (JEP 9407) does: add "
        "zeros of each pair of types (Python int, float, "
        "complex for i*, f*, c*); '-' where the library lacks the type or "
        "refuses the addition. With several libraries, print each table, then "
        "the cells where they differ. JAX and typelattice are measured in "
        "64-bit mode unless --x32 is given. " + _LIBRARIES_HELP,
    )
    compare.add_argument(
        "libraries",
        nargs="+",
        choices=_LIBRARIES,
        metavar="LIB",
        help=f"one or more of: {', '.join(_LIBRARIES)}",
    )
    _add_bits(compare, "x64")
    _add_types(compare, "measure")
    _add_format(compare, _tables.FORMATS)
    compare.add_argument(
        "--laws",
        action="store_true",
        help="check each table for commutativity (all pairs) and associativity "
        "(all ordered triples): counts and counterexamples",
    )
    compare.add_argument(
        "--examples",
        type=_count,
        default=None,
        metavar="N",
        help=f"with --laws, show up to N counterexamples of each law "
        f"(default {_SHOWN})",
    )
    _add_color(compare)
    compare.set_defaults(run=_compare_cmd)

    draw = sub.add_parser(
        "draw",
        help="draw the lattice as a Hasse diagram (SVG, PNG or DOT)",
        description="Draw the lattice as a layered Hasse diagram: one node per "
        "type labelled with its code, one arrow per edge, types grouped by kind "
        "in bands, weak types dashed. SVG and DOT need nothing else; PNG needs "
        "matplotlib (pip install 'typelattice[draw]').",
    )
    draw.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="the file to write; its suffix (.svg, .png or .dot) picks the format",
    )
    _add_bits(draw, "config")
    _add_mode(draw, "draw this lattice instead")
    _add_types(draw, "draw")
    draw.set_defaults(run=_draw)

    explain = sub.add_parser(
        "explain",
        help="explain the promotion of some types, step by step",
        description="Explain the join of two or more types step by step: each "
        "input's lattice node, its upper bounds, the common upper bounds, the "
        "least one, and the chain of edges from each input up to it. With no "
        "join: why, the error result_type raises, and the explicit cast to use; "
        "the exit status is then 1.",
    )
    explain.add_argument(
        "inputs",
        nargs="+",
        metavar="TYPE",
        help="dtype names (int8, bfloat16), codes (i1, f*), or int, float, "
        "complex for the weak types; with --lattice, node names",
    )
    _add_bits(explain, "config")
    _add_mode(explain, "explain on this lattice instead")
    _add_format(explain, ("text", "json"))
    explain.set_defaults(run=_explain_cmd)

    check = sub.add_parser(
        "check",
        help="check that a lattice file is a lattice",
        description="Check a lattice written in TOML or JSON: a table 'edges' "
        "mapping each node to the nodes immediately above it, and optionally a "
        "table 'labels' of display names. Counts the counterexamples of each "
        "kind (cycles, pairs with several minimal common upper bounds, pairs "
        f"with none) and prints the first {_SHOWN}. Exit status 0 for a "
        "lattice, 1 otherwise. The same file works as --lattice in table, draw "
        "and explain. A lattice file is a regular file (a symbolic link to one "
        "is followed) of at most 1 MiB; anything else is an error (exit status "
        "2).",
    )
    check.add_argument(
        "file", metavar="FILE", help="the .toml or .json file (at most 1 MiB)"
    )
    check.add_argument(
        "--partial",
        action="store_true",
        help="accept pairs with no upper bound (promotion refuses them, as in "
        "JAX's strict mode): exit status 0 if that is the only problem",
    )
    shown = check.add_mutually_exclusive_group()
    shown.add_argument(
        "--max",
        type=_count,
        default=None,
        metavar="N",
        help=f"print the first N counterexamples (default {_SHOWN})",
    )
    shown.add_argument("--all", action="store_true", help="print every counterexample")
    _add_format(check, ("text", "json"))
    check.set_defaults(run=_check)

    backends = sub.add_parser(
        "backends",
        help="what each installed backend computes, per dtype",
        description="For each backend of another array library that is "
        "installed (torch, dask, cupy, or those named), how many primitives "
        "it computes itself for each dtype, how many it emulates exactly "
        "(another dtype, or NumPy on the host) and how many raise TypeError; "
        "derived from the backends' registrations.",
    )
    backends.add_argument(
        "names", nargs="*", metavar="BACKEND", help="torch, dask or cupy"
    )
    backends.add_argument(
        "--primitives",
        action="store_true",
        help="one row per primitive, saying how each dtype is computed",
    )
    backends.set_defaults(run=_backends)

    port = sub.add_parser(
        "port",
        help="rewrite the imports of Flax programs to typelattice's modules",
        description="Rewrite the import statements of Flax programs so that "
        "they run on typelattice: jax becomes typelattice, flax "
        "typelattice.flax and optax typelattice.optax, and each module under "
        "them the module at the same place (import jax.numpy as jnp -> import "
        "typelattice.numpy as jnp). Nothing else in the files changes. "
        "Prints the rewritten source unless --write or --check is given; "
        "notes on stderr the imports of modules typelattice does not have.",
    )
    port.add_argument("files", nargs="+", metavar="FILE", help="Python files")
    what = port.add_mutually_exclusive_group()
    what.add_argument("--write", action="store_true", help="rewrite the files in place")
    what.add_argument(
        "--check",
        action="store_true",
        help="print the files that would change; exit status 1 if any would",
    )
    port.set_defaults(run=_port)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    Args:
      argv: the arguments (``sys.argv[1:]`` by default).

    Returns:
      0 on success; 1 when the answer is no (``check``: not a lattice,
      ``explain``: no join, ``port --check``: a file would change); 2 on an
      error, printed as one line on stderr (a bad option or value raises
      ``SystemExit(2)``, as argparse does);
      141 when the reader of the output closes it early, as for a tool
      stopped by SIGPIPE; 130 on Ctrl-C.

    >>> main(['table', '--x64', '--types', 'i1,u1'])
    dtype_promotion=standard, enable_x64=True (64-bit mode)
       i1 u1
    i1 i1 i2
    u1 i2 u1
    0
    """
    parser = _parser()
    args = parser.parse_args(argv)

    def run() -> int:
        try:
            if getattr(args, "mode", None) is not None:
                _config.validate("dtype_promotion", args.mode)
            status: int = args.run(args)
        except BrokenPipeError:
            raise  # (an OSError, but no error of the user's: see run_main)
        except (_Fail, TypeError, ValueError, ImportError, OSError) as err:
            if isinstance(err, OSError) and err.filename is not None:
                message = f"{err.filename}: {err.strerror}"
            else:
                message = str(err).replace("\n", " ")
            print(f"typelattice: error: {message}", file=sys.stderr)
            return 2
        return status

    return run_main(run)


def run_main(run: Callable[[], int | None]) -> int:
    """``run()``'s exit status (0 for None), ended as a command-line tool
    ends: quietly with 141 when the reader of standard output goes away
    (``| head``), as for a tool stopped by SIGPIPE, and with 130 on Ctrl-C.
    The command line and the example scripts end this way.

    Args:
      run: the program; it writes to ``sys.stdout``.

    Returns:
      The exit status.

    >>> run_main(lambda: print('done'))
    done
    0
    """
    try:
        status = run()
        # Written out here, so that a closed pipe shows up below and not in
        # the interpreter's flush at exit.
        sys.stdout.flush()
    except BrokenPipeError:
        _detach_stdout()
        return _CLOSED_PIPE
    except KeyboardInterrupt:
        return 130
    return 0 if status is None else status


def progress_on(stream: IO[str]) -> bool:
    """Whether to draw progress on ``stream``: only on a terminal, where a
    line can be redrawn with ``\\r``; pipes and log files get whole lines.

    Args:
      stream: where the progress would go.

    Returns:
      True for a terminal.

    >>> import io
    >>> progress_on(io.StringIO())
    False
    """
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # (no isatty, or closed)
        return False


def _detach_stdout() -> None:
    """Point stdout at the null device: its reader is gone, and what is left
    in its buffer must not fail again when Python flushes it at exit."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (captured)
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)
