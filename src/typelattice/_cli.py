"""The ``typelattice`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from typelattice import _config, _dtypes, _tables

__all__ = ["main"]


def _table(args: argparse.Namespace) -> int:
    if args.types is None:
        codes: Sequence[str] = _tables.SEED_CODES
    elif args.types == "all":
        codes = _tables.all_codes()
    else:
        codes = [c.strip() for c in args.types.split(",") if c.strip()]
        for code in codes:
            _dtypes.code_to_dtype(code)  # unknown codes fail with the list
    table = _tables.promotion_table(codes, args.mode, args.x64)
    text = _tables.format_table(table, args.format)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="typelattice",
        description="JAX-style dtype promotion lattices: print and inspect them.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    table = sub.add_parser(
        "table",
        help="print the promotion table",
        description="Print the promotion table (the join of each pair of types) "
        "in seed 000's codes: b1 u1..u8 i1..i8 bf f2 f4 f8 c8 c16, and the weak "
        "types i* f* c* (Python int, float, complex). '-' marks pairs with no "
        "implicit promotion.",
    )
    bits = table.add_mutually_exclusive_group()
    bits.add_argument(
        "--x64", dest="x64", action="store_const", const=True,
        help="64-bit mode (enable_x64=True)",
    )  # fmt: skip
    bits.add_argument(
        "--x32", dest="x64", action="store_const", const=False,
        help="32-bit mode, the default unless TYPELATTICE_ENABLE_X64 is set",
    )  # fmt: skip
    table.add_argument(
        "--mode",
        default=None,
        help="dtype_promotion: standard (default), strict, or a registered name",
    )
    table.add_argument(
        "--format",
        choices=("text", "csv", "markdown"),
        default="text",
        help="output format (csv: the layout of promotion_table_x64.csv)",
    )
    table.add_argument(
        "--types",
        default=None,
        metavar="CODES",
        help="comma-separated codes to show, or 'all' to add the extended types "
        "(small floats such as f8e4m3fn, narrow ints such as i4b)",
    )
    table.set_defaults(run=_table)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    >>> main(['table', '--x64', '--types', 'i1,u1'])
       i1 u1
    i1 i1 i2
    u1 i2 u1
    0
    """
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.mode is not None:
            _config.validate("dtype_promotion", args.mode)
        status: int = args.run(args)
    except (TypeError, ValueError) as err:
        print(f"typelattice: error: {err}", file=sys.stderr)
        return 2
    return status
