"""Golden promotion tables: the x64 one is seed 000's, copied by the spec."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import typelattice as tl
from typelattice import _tables
from typelattice._cli import main

GOLDEN = Path(__file__).parent / "golden"
SHARED_CSV = (
    Path(__file__).resolve().parents[2] / "shared" / "spec" / "promotion_table_x64.csv"
)


def read(name: str) -> list[list[str]]:
    with open(GOLDEN / name, newline="") as f:
        return list(csv.reader(f))


@pytest.mark.parametrize("promotion", ["standard", "strict"])
@pytest.mark.parametrize("x64", [True, False], ids=["x64", "x32"])
def test_lattice_table_matches_golden(promotion: str, x64: bool) -> None:
    golden = read(f"{promotion}_{'x64' if x64 else 'x32'}.csv")
    table = _tables.promotion_table(None, promotion, x64)
    assert golden[0] == ["", *_tables.DEFAULT_CODES]
    assert [row[0] for row in golden[1:]] == list(_tables.DEFAULT_CODES)
    assert [tuple(row[1:]) for row in golden[1:]] == list(table.cells)


def test_x64_golden_is_the_spec_file() -> None:
    if not SHARED_CSV.exists():
        pytest.skip("the spec's CSV is not beside this checkout")
    assert SHARED_CSV.read_bytes() == (GOLDEN / "standard_x64.csv").read_bytes()


def test_cli_csv_is_byte_identical_to_the_golden_file(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["table", "--x64", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.encode() == (GOLDEN / "standard_x64.csv").read_bytes()


@pytest.mark.parametrize("x64", [True, False], ids=["x64", "x32"])
def test_result_type_of_dtype_pairs_follows_the_table(x64: bool) -> None:
    """Every cell, through the public function: weak cells give the default
    dtype of their kind, and the rest the cell's type. (64-bit dtypes are
    allowed explicitly in 32-bit mode, or they would be narrowed first.)"""
    golden = read(f"standard_{'x64' if x64 else 'x32'}.csv")
    codes = golden[0][1:]
    defaults = {"i*": int, "f*": float, "c*": complex}
    with tl.enable_x64(x64), tl.explicit_x64_dtypes("allow"):
        for row in golden[1:]:
            for col, cell in zip(codes, row[1:], strict=True):
                a, b = tl.code_to_dtype(row[0]), tl.code_to_dtype(col)
                dt, weak = tl.result_type(a, b, return_weak_type_flag=True)
                expected = tl.code_to_dtype(cell)
                if isinstance(expected, type):
                    assert weak, (row[0], col)
                    assert dt == tl.dtype(defaults[cell]), (row[0], col)
                else:
                    assert not weak, (row[0], col)
                    assert dt == expected, (row[0], col)


def test_seed_examples() -> None:
    with tl.enable_x64():
        assert tl.result_type("int16", 1) == "int16"  # jnp.int16(1) + 1
        assert tl.result_type("int16", tl.dtype("int64")) == "int64"
    assert tl.result_type("bfloat16", "float16") == "float32"
    assert tl.result_type("int32", "float32") == "float32"
    # In 32-bit mode 64-bit inputs stand for their 32-bit forms first.
    u64, i64 = np.zeros(1, "uint64"), np.zeros(1, "int64")
    assert tl.result_type(u64, i64) == "int32"
    with tl.enable_x64():
        assert tl.result_type("uint64", "int64") == "float64"
