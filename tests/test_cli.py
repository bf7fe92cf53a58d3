from __future__ import annotations

import subprocess
import sys

import pytest

from typelattice._cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_default_table_is_32_bit_standard(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(["table"], capsys)
    assert status == 0
    lines = out.splitlines()
    assert (
        lines[0].split()
        == ("b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c8 c16 i* f* c*").split()
    )
    u4 = next(line.split() for line in lines if line.split()[0] == "u4")
    assert u4[lines[0].split().index("i4") + 1] == "i4"  # not i8 in 32-bit mode


def test_markdown_and_strict(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(
        ["table", "--mode", "strict", "--format", "markdown", "--types", "i1,f4,f*"],
        capsys,
    )
    assert status == 0
    assert out.splitlines() == [
        "|  | i1 | f4 | f* |",
        "| --- | --- | --- | --- |",
        "| i1 | i1 | - | - |",
        "| f4 | - | f4 | f4 |",
        "| f* | - | f4 | f* |",
    ]


def test_all_types_include_the_extended_codes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(["table", "--types", "all", "--format", "csv"], capsys)
    header = out.splitlines()[0].split(",")
    assert status == 0 and "f8e4m3fn" in header and "i4b" in header


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["table", "--mode", "loose"], "dtype_promotion must be one of"),
        (["table", "--types", "i1,zz"], "unknown dtype code 'zz'"),
    ],
)
def test_errors_are_one_line_with_status_2(
    argv: list[str], match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(argv, capsys)
    assert status == 2 and out == ""
    assert err.startswith("typelattice: error:") and match in err
    assert err.count("\n") == 1


def test_bad_option_exits_nonzero(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["table", "--format", "xml"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_module_entry_point_in_a_subprocess() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "typelattice", "table", "--x64", "--format", "csv"],
        capture_output=True,
    )
    assert out.returncode == 0
    assert out.stdout.startswith(
        b",b1,u1,u2,u4,u8,i1,i2,i4,i8,bf,f2,f4,f8,c8,c16,i*,f*,c*\r\n"
    )
    assert b"u4,u4,u4,u4,u4,u8,i8,i8,i8,i8," in out.stdout
