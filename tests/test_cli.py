from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from typelattice._cli import main

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
LATTICES = ROOT / "examples" / "lattices"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_default_table_is_32_bit_standard(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(["table"], capsys)
    assert status == 0
    caption, *lines = out.splitlines()
    assert caption == "dtype_promotion=standard, enable_x64=False (32-bit mode)"
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
        "### dtype_promotion=strict, enable_x64=False (32-bit mode)",
        "",
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


# -- help ---------------------------------------------------------------------------

COMMANDS = ["table", "compare", "draw", "explain", "check", "backends", "port"]


def test_help_lists_every_command_and_examples(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert f"\n    {command}" in out
        assert f"typelattice {command}" in out  # an example of each
    assert "i* f* c*" in out  # the codes are explained


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("table", ["--mode", "--lattice", "--x64", "--x32", "--types", "--format",
                   "--diff", "--color"]),
        ("compare", ["LIB", "--laws", "--examples", "--types", "--format", "--x32"]),
        ("draw", ["--output", "--mode", "--lattice", "--types", "--x64"]),
        ("explain", ["TYPE", "--mode", "--lattice", "--x64", "--format"]),
        ("check", ["FILE", "--partial", "--format"]),
        ("backends", ["BACKEND", "--primitives"]),
        ("port", ["FILE", "--write", "--check"]),
    ],
)  # fmt: skip
def test_each_command_documents_its_options(
    command: str, options: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for option in options:
        assert option in out, option


# -- table ----------------------------------------------------------------------------


def test_default_table_is_the_golden_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["table"]) == 0
    golden = (GOLDEN / "table_standard_x32.txt").read_text()
    caption, table = capsys.readouterr().out.split("\n", 1)
    assert caption == "dtype_promotion=standard, enable_x64=False (32-bit mode)"
    assert table == golden
    # ...and says what the x32 golden CSV says.
    with open(GOLDEN / "standard_x32.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert [line.split() for line in golden.splitlines()[1:]] == rows[1:]


def test_html_table_is_the_golden_html(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["table", "--x64", "--mode", "strict", "--format", "html"]
    assert main([*argv, "--types", "i1,u8,f2,bf,i*,f*,c*"]) == 0
    golden = (GOLDEN / "table_strict_x64_subset.html").read_text()
    assert capsys.readouterr().out == golden


def test_json_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["table", "--x64", "--types", "i1,u1", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "title": "typelattice standard lattice, 64-bit mode",
        "codes": ["i1", "u1"],
        "cells": [["i1", "i2"], ["i2", "u1"]],
    }


def test_diff_numpy_marks_the_cells_where_numpy_differs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["table", "--x64", "--diff", "numpy"]) == 0
    caption, out = capsys.readouterr().out.split("\n", 1)
    assert caption == "dtype_promotion=standard, enable_x64=True (64-bit mode)"
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[1:19]}
    header = out.splitlines()[0].split()
    cell = dict(zip(header, rows["i1"], strict=True))
    assert cell["u1"] == "i2"  # the same in NumPy: not marked
    assert cell["u8"] == "[f*]"  # NumPy: float64
    assert cell["bf"] == "[bf]"  # NumPy has no bfloat16
    assert cell["i*"] == "i1"  # a Python int defers to int8 in both
    assert "\x1b[" not in out  # not a terminal: no colours
    assert out.splitlines()[-1] == "[x]: the 118 cells where numpy differs"


def test_diff_in_colour_highlights_without_brackets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["table", "--x64", "--types", "i1,u8", "--diff", "numpy"]
    assert main([*argv, "--color", "always"]) == 0
    out = capsys.readouterr().out
    assert "\x1b[30;42mf*\x1b[0m" in out and "[f*]" not in out
    assert out.splitlines()[-1] == "green: the 2 cells where numpy differs"


def test_diff_markdown_bolds_the_cells(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["table", "--x64", "--types", "i1,u8", "--diff", "numpy"]
    assert main([*argv, "--format", "markdown"]) == 0
    assert "| i1 | i1 | **f*** |" in capsys.readouterr().out.splitlines()


def test_table_of_a_lattice_file_shows_its_labels(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(LATTICES / "python_scalars.json")
    assert main(["table", "--lattice", path]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"lattice {path}",
        "                   Python int   Python float Python complex",
        "    Python int     Python int   Python float Python complex",
        "  Python float   Python float   Python float Python complex",
        "Python complex Python complex Python complex Python complex",
    ]


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["table", "--lattice", "examples/lattices/cycle.toml"],
         "cycle.toml: not a lattice: the edges contain a cycle"),
        (["table", "--lattice", "examples/lattices/jax_standard.toml", "--x64"],
         "--x32/--x64 do not apply to a --lattice file"),
        (["table", "--lattice", "no/such/file.toml"], "No such file"),
        (["table", "--lattice", "examples/lattices/python_scalars.json", "--diff",
          "numpy"], "--diff needs a lattice whose nodes are type codes"),
        (["table", "--lattice", "examples/lattices/python_scalars.json", "--types",
          "int,bool"], "'bool' is not a node of the lattice"),
        (["compare", "numpy", "--laws", "--format", "csv"], "--laws has no CSV form"),
        (["compare", "numpy", "--types", "i1,q2"], "unknown dtype code 'q2'"),
        (["draw", "-o", "lattice.gif"], "must end in .svg, .png or .dot"),
        (["explain", "int8"], "at least two types"),
        (["explain", "int8", "object"], "does not support"),
        (["explain", "int8", "string"], "unknown dtype 'string'"),
        (["explain", "--mode", "loose", "int8", "int8"], "dtype_promotion must be"),
        (["check", "examples/lattices/missing.toml"], "No such file"),
    ],
)  # fmt: skip
def test_more_errors_are_one_line_with_status_2(
    argv: list[str], match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(ROOT / a) if a.startswith("examples/") else a for a in argv]
    status, out, err = run(argv, capsys)
    assert status == 2 and out == ""
    assert err.startswith("typelattice: error:") and match in err
    assert err.count("\n") == 1


def test_unknown_library_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["compare", "mxnet"])
    assert info.value.code == 2
    assert "invalid choice: 'mxnet'" in capsys.readouterr().err


# -- compare --------------------------------------------------------------------------


def test_compare_numpy_csv_has_the_layout_of_table_csv(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compare", "numpy", "--format", "csv"]) == 0
    measured = capsys.readouterr().out
    assert main(["table", "--x64", "--format", "csv"]) == 0
    computed = capsys.readouterr().out
    m_lines, c_lines = measured.split("\r\n"), computed.split("\r\n")
    assert len(m_lines) == len(c_lines) == 20 and m_lines[-1] == ""
    assert (
        m_lines[0]
        == c_lines[0]
        == ",b1,u1,u2,u4,u8,i1,i2,i4,i8,bf,f2,f4,f8,c8,c16,i*,f*,c*"
    )
    assert [line.split(",")[0] for line in m_lines] == [
        line.split(",")[0] for line in c_lines
    ]
    assert "i1,i1,i2,i4,i8,f8,i1,i2,i4,i8,-,f2,f4,f8,c8,c16,i1,f8,c16" in m_lines


def test_compare_two_libraries_with_laws(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "numpy", "typelattice", "--laws", "--examples", "2"]) == 0
    out = capsys.readouterr().out
    blocks = out.split("\n\n")
    assert blocks[0].startswith("numpy ") and blocks[1].startswith("typelattice ")
    assert blocks[2].splitlines()[:2] == [
        "cells that differ: 118 of 324",
        "row col numpy typelattice",
    ]
    assert " i1  u8    f8          f*" in blocks[2].splitlines()
    assert blocks[3].splitlines()[1:] == [
        "  commutative: yes (153 pairs)",
        "  associative: no, 256 of 4913 triples differ (72 sets of types)",
        "    (u1 + i1) + f2 = f4, but u1 + (i1 + f2) = f2",
        "    (u2 + i1) + f2 = f8, but u2 + (i1 + f2) = f4",
        "    ... and 70 more sets",
    ]
    assert blocks[4].splitlines()[1:] == [
        "  commutative: yes (153 pairs)",
        "  associative: yes (5832 triples)",
    ]


@pytest.mark.parametrize("fmt", ["markdown", "html", "json"])
def test_compare_in_other_formats(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", "numpy", "typelattice", "--types", "i4,f4", "--laws"]
    assert main([*argv, "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        assert json.loads(out)["differences"][0] == {
            "row": "i4",
            "col": "f4",
            "values": {"numpy": "f8", "typelattice": "f4"},
        }
    elif fmt == "markdown":
        assert "### cells that differ: 2 of 4" in out
        assert "| i4 | f4 | f8 | f4 |" in out
    else:
        assert "<h3>cells that differ: 2 of 4</h3>" in out
        assert "<tr><td>i4</td><td>f4</td><td>f8</td><td>f4</td></tr>" in out


def test_progress_goes_to_stderr_once_a_measurement_is_slow() -> None:
    from typelattice._cli import _Progress

    stream = io.StringIO()
    progress = _Progress(stream, delay=0.0)
    for _ in range(100):  # the timer fires on its own thread
        if progress.shown:
            break
        time.sleep(0.01)
    progress("torch", 0, 324)
    progress("torch", 1, 324)
    progress("jax", 0, 324)
    progress.close()
    assert stream.getvalue().splitlines() == [
        "typelattice: measuring torch (324 pairs)",
        "typelattice: measuring jax (324 pairs)",
    ]


def test_a_fast_measurement_shows_no_progress(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compare", "numpy"]) == 0
    assert capsys.readouterr().err == ""


# -- explain and draw -----------------------------------------------------------------


def test_explain_prints_the_steps(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "int8", "uint8", "--x64"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "join of int8, uint8 on the standard lattice, 64-bit mode"
    assert "4. the least of them, the join: i2" in lines
    assert lines[-1] == "result: int16"


def test_explain_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explain", "float32", "int32", "--mode", "strict", "--format", "json"]
    assert main(argv) == 1  # printed, and no join: status 1
    data = json.loads(capsys.readouterr().out)
    assert data["join"] is None and data["common"] == []
    assert data["cast"].startswith("x.astype('float32') on the int32 input")


def test_draw_writes_each_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    svg, dot = tmp_path / "l.svg", tmp_path / "l.dot"
    assert main(["draw", "--x64", "-o", str(svg)]) == 0
    assert capsys.readouterr().out == f"wrote {svg}: 18 nodes, 24 edges\n"
    assert svg.read_text().startswith("<svg")
    assert main(["draw", "--types", "all", "--mode", "strict", "-o", str(dot)]) == 0
    assert dot.read_text().startswith("digraph typelattice {")
    path = str(LATTICES / "two_minimal_bounds.json")
    assert main(["draw", "--lattice", path, "-o", str(svg)]) == 2
    assert "not a lattice" in capsys.readouterr().err


# -- check ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "status", "first"),
    [
        ("jax_standard.toml", 0, "a lattice: 18 nodes, 24 edges"),
        ("python_scalars.json", 0, "a lattice: 3 nodes, 2 edges"),
        ("cycle.toml", 1, "not a lattice: 3 nodes, 3 edges"),
        ("no_upper_bound.toml", 1, "a partial lattice"),
        ("no_mixed_int_float.toml", 1, "a partial lattice"),
        ("two_minimal_bounds.json", 1, "not a lattice: 4 nodes, 4 edges"),
        ("numpy_int_float.toml", 1, "not a lattice: 16 nodes, 26 edges"),
    ],
)
def test_check_the_example_lattices(
    name: str, status: int, first: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = LATTICES / name
    assert main(["check", str(path)]) == status
    assert capsys.readouterr().out.startswith(f"{path}: {first}")


def test_check_prints_each_counterexample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(LATTICES / "two_minimal_bounds.json")]) == 1
    assert capsys.readouterr().out.splitlines()[1:] == [
        "2 counterexamples: 1 ambiguous join, 1 no upper bound",
        "  ambiguous join: A and B have no least upper bound, only minimal ones: C, D",
        "  no upper bound: C and D have no common upper bound",
    ]


def test_check_partial_accepts_pairs_without_upper_bound(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(LATTICES / "no_mixed_int_float.toml")
    assert main(["check", "--partial", path]) == 0
    out = capsys.readouterr().out
    assert "no upper bound: f* and u1 have no common upper bound" in out
    assert "register_lattice(name" in out
    assert main(["check", "--partial", str(LATTICES / "cycle.toml")]) == 1


def test_check_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(LATTICES / "cycle.toml"), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"] == "not a lattice"
    assert data["problems"] == [
        {
            "kind": "cycle",
            "nodes": ["float", "complex", "float"],
            "candidates": [],
            "message": "cycle: float -> complex -> float",
        }
    ]


def test_check_through_the_installed_command(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text('[edges]\nA = ["B", "C"]\n')
    out = subprocess.run(
        [sys.executable, "-m", "typelattice", "check", str(broken)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 1
    assert "no upper bound: B and C have no common upper bound" in out.stdout


def test_colour_follows_the_terminal_and_no_color(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["table", "--x64", "--types", "i1,u8", "--diff", "numpy"]
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert main(argv) == 0
    assert "\x1b[30;42mf*" in capsys.readouterr().out
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "\x1b[" not in out and "[f*]" in out
    assert main([*argv, "--color", "never"]) == 0
    assert "\x1b[" not in capsys.readouterr().out


def test_compare_several_libraries_as_csv(capsys: pytest.CaptureFixture[str]) -> None:
    from typelattice import _cli, _compare

    assert _cli._LIBRARIES == _compare.LIBRARIES
    argv = ["compare", "numpy", "typelattice", "--types", "i4,f4", "--format", "csv"]
    assert main(argv) == 0
    blocks = capsys.readouterr().out.split("\r\n\r\n")
    assert blocks[0].split("\r\n")[0].startswith("numpy ")
    assert blocks[0].split("\r\n")[0].endswith(",i4,f4")
    assert blocks[1].split("\r\n")[0] == "typelattice 0.1.0 (64-bit),i4,f4"
    assert blocks[2].split("\r\n")[:2] == ["row,col,numpy,typelattice", "i4,f4,f8,f4"]


# -- large lattices, exit statuses, bad values, closed pipes ------------------------


def broken_file(tmp_path: Path, k: int, m: int) -> Path:
    """``k`` nodes each below both ``x`` and ``y``, which have no upper
    bound, and ``m`` isolated nodes: many problems of both kinds."""
    edges: dict[str, list[str]] = {f"l{i}": ["x", "y"] for i in range(k)}
    edges |= {f"s{i}": [] for i in range(m)}
    path = tmp_path / "broken.json"
    path.write_text(json.dumps({"edges": edges}))
    return path


def expected_counts(k: int, m: int) -> tuple[int, int]:
    """Ambiguous joins: each pair of the k nodes (x and y are both minimal).
    No upper bound: an isolated node with anything else, and x with y."""
    return k * (k - 1) // 2, m * (k + 2) + m * (m - 1) // 2 + 1


def test_check_counts_everything_and_shows_the_first_ten(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = broken_file(tmp_path, 300, 20)
    ambiguous, no_bound = expected_counts(300, 20)
    status, out, err = run(["check", str(path)], capsys)
    assert status == 1 and err == ""
    lines = out.splitlines()
    assert lines[:2] == [
        f"{path}: not a lattice: 322 nodes, 600 edges",
        f"{ambiguous + no_bound} counterexamples: {ambiguous} ambiguous join, "
        f"{no_bound} no upper bound",
    ]
    assert lines[2:12] == [
        f"  ambiguous join: l0 and l{i} have no least upper bound, only minimal "
        "ones: x, y"
        for i in range(1, 11)
    ]
    assert lines[12:] == [
        f"  ... and {ambiguous + no_bound - 10} more (--max N shows the first N, "
        "--all every one)"
    ]


def test_check_max_and_all(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = broken_file(tmp_path, 20, 5)
    ambiguous, no_bound = expected_counts(20, 5)
    total = ambiguous + no_bound
    status, out, _ = run(["check", str(path), "--max", "0"], capsys)
    assert status == 1
    assert out.splitlines()[2:] == [
        f"  ... and {total} more (--max N shows the first N, --all every one)"
    ]
    _, out, _ = run(["check", str(path), "--all"], capsys)
    problems = [line for line in out.splitlines() if line.startswith("  ")]
    assert len(problems) == total and "..." not in out
    # Ambiguous joins first, then the pairs with no upper bound, each in
    # the order of the nodes.
    assert problems[0].startswith("  ambiguous join: l0 and l1 ")
    assert problems[ambiguous] == (
        "  no upper bound: l0 and s0 have no common upper bound"
    )
    assert problems[-1] == "  no upper bound: x and y have no common upper bound"
    _, out, _ = run(["check", str(path), "--max", "250", "--format", "json"], capsys)
    data = json.loads(out)
    assert data["counts"] == {
        "cycle": 0,
        "ambiguous join": ambiguous,
        "no upper bound": no_bound,
    }
    assert len(data["problems"]) == 250 and data["omitted"] == total - 250
    assert [p["kind"] for p in data["problems"][ambiguous - 1 : ambiguous + 1]] == [
        "ambiguous join",
        "no upper bound",
    ]


def test_explain_without_a_join_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(["explain", "float32", "int32", "--mode", "strict"], capsys)
    assert status == 1 and err == ""
    assert "4. no common upper bound, so no join" in out.splitlines()
    assert out.splitlines()[-1].startswith("explicit cast: x.astype('float32')")


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["compare", "numpy", "--laws", "--examples", "-1"],
         "argument --examples: expected 0 or more, got -1"),
        (["compare", "numpy", "--laws", "--examples", "two"],
         "argument --examples: expected a whole number such as 5, got 'two'"),
        (["check", "examples/lattices/cycle.toml", "--max", "-3"],
         "argument --max: expected 0 or more, got -3"),
        (["check", "examples/lattices/cycle.toml", "--max", "3", "--all"],
         "argument --all: not allowed with argument --max"),
        (["table", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
        (["table", "--x32", "--x64"], "not allowed with argument --x32"),
        (["draw"], "the following arguments are required: -o/--output"),
        ([], "the following arguments are required: COMMAND"),
    ],
)  # fmt: skip
def test_bad_options_are_one_line_with_status_2(
    argv: list[str], match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(ROOT / a) if a.startswith("examples/") else a for a in argv]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("typelattice: error: ") and match in err
    assert err.count("\n") == 1 and err.endswith("--help')\n")


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["table", "--types", ""], "--types '' names no type"),
        (["table", "--types", " , "], "--types ' , ' names no type"),
        (["draw", "-o", "x.svg", "--types", ","], "--types ',' names no type"),
        (["table", "--types", "i1,u1,i1"], "--types names i1 more than once"),
        (["compare", "numpy", "--types", "f4,f4"], "--types names f4 more than once"),
        (["compare", "numpy", "typelattice", "numpy"], "numpy named more than once"),
        (["compare", "numpy", "--examples", "3"], "add --laws"),
        (["explain", "int8", "int9"], "unknown dtype 'int9'"),
        (["explain", "int8", ""], "unknown dtype ''"),
        (["table", "--lattice", "examples/lattices"], "lattices: Is a directory"),
    ],
)  # fmt: skip
def test_bad_values_are_one_line_with_status_2(
    argv: list[str], match: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [str(ROOT / a) if a.startswith("examples/") else a for a in argv]
    status, out, err = run(argv, capsys)
    assert status == 2 and out == ""
    assert err.startswith("typelattice: error: ") and match in err
    assert err.count("\n") == 1


def test_unreadable_and_empty_lattice_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe[edges]")
    empty = tmp_path / "empty.toml"
    empty.write_text("[edges]\n")
    for path, match in [
        (binary, "binary.toml: cannot parse lattice file: 'utf-8' codec"),
        (empty, "empty.toml: the table 'edges' is empty"),
    ]:
        for argv in (["check", str(path)], ["table", "--lattice", str(path)]):
            status, out, err = run(argv, capsys)
            assert status == 2 and out == "" and match in err
            assert err.count("\n") == 1


def _deep(tmp_path: Path, name: str) -> Path:
    """A file nested deeper than a parser's recursion goes."""
    path = tmp_path / name
    nested = "[" * 100_000 + "]" * 100_000
    if name.endswith(".json"):
        path.write_text('{"edges": {"a": ' + nested + "}}")
    else:
        path.write_text("[edges]\na = " + nested + "\n")
    return path


def _link(tmp_path: Path, target: str) -> Path:
    if not Path(target).exists():
        pytest.skip(f"no {target} here")
    path = tmp_path / "link.toml"
    try:
        path.symlink_to(target)
    except OSError:
        pytest.skip("no symbolic links here")
    return path


def _fifo(tmp_path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = tmp_path / "fifo.toml"
    os.mkfifo(path)
    return path


def _directory(tmp_path: Path) -> Path:
    path = tmp_path / "dir.toml"
    path.mkdir()
    return path


def _large(tmp_path: Path) -> Path:
    path = tmp_path / "large.toml"
    path.write_text("# comment\n" * 200_000)  # 2 MB
    return path


# What is not a lattice file, and what the one line says.
NOT_LATTICE_FILES = {
    "deep_json": (lambda t: _deep(t, "deep.json"), "it nests too deeply"),
    "deep_toml": (lambda t: _deep(t, "deep.toml"), "it nests too deeply"),
    "directory": (_directory, "Is a directory"),
    "fifo": (_fifo, "not a regular file (a FIFO)"),
    "dev_zero": (lambda t: _link(t, "/dev/zero"), "(a character device)"),
    "proc": (lambda t: _link(t, "/proc/self/status"), "not a regular file (such"),
    "large": (_large, "2000000 bytes, more than a lattice file may have (1048576"),
}


@pytest.mark.parametrize("command", ["check", "table"])
@pytest.mark.parametrize("kind", list(NOT_LATTICE_FILES))
def test_what_is_not_a_lattice_file_is_one_line_with_status_2(
    kind: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Status 1 would mean 'not a lattice'; a file that cannot be one is an
    error, found without reading more than the size limit (a FIFO is not
    waited for, /dev/zero not read until memory runs out)."""
    make, match = NOT_LATTICE_FILES[kind]
    path = make(tmp_path)
    argv = (
        ["check", str(path)]
        if command == "check"
        else ["table", "--lattice", str(path)]
    )
    status, out, err = run(argv, capsys)
    assert status == 2 and out == ""
    assert err.startswith(f"typelattice: error: {path}: ") and match in err
    assert err.count("\n") == 1


def test_a_symbolic_link_to_a_lattice_file_is_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _link(tmp_path, str(LATTICES / "jax_standard.toml"))
    status, out, _ = run(["check", str(path)], capsys)
    assert status == 0 and out.startswith(f"{path}: a lattice")


def test_a_closed_pipe_ends_the_command_quietly(tmp_path: Path) -> None:
    """As ``typelattice check --all FILE | head -1``: megabytes of output,
    whose reader goes away after the first line."""
    path = broken_file(tmp_path, 400, 0)
    proc = subprocess.Popen(
        [sys.executable, "-m", "typelattice", "check", "--all", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 141  # as for a tool stopped by SIGPIPE
    assert first.startswith(str(path).encode() + b": not a lattice")
    assert err == b""


@pytest.mark.parametrize(
    ("argv", "caption"),
    [
        (["--x64", "--mode", "strict"],
         "dtype_promotion=strict, enable_x64=True (64-bit mode)"),
        (["--x32"], "dtype_promotion=standard, enable_x64=False (32-bit mode)"),
    ],
)  # fmt: skip
def test_every_table_says_which_lattice_it_shows(
    argv: list[str], caption: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["table", *argv, "--types", "i1,u4"]
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[0] == caption
    assert main([*argv, "--format", "markdown"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"### {caption}"
    bits = caption.split("(")[1].rstrip(")")
    assert main([*argv, "--format", "html"]) == 0
    assert f"lattice, {bits}</caption>" in capsys.readouterr().out
    assert main([*argv, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["title"].endswith(bits)
    # CSV stays the layout of JAX's table, for the programs that read it.
    assert main([*argv, "--format", "csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["", "i1", "u4"]


def test_the_current_mode_is_the_one_shown(capsys: pytest.CaptureFixture[str]) -> None:
    import typelattice as tl

    with tl.dtype_promotion("strict"), tl.enable_x64():
        assert main(["table", "--types", "i1,u4"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "dtype_promotion=strict, enable_x64=True (64-bit mode)",
        "   i1 u4",
    ]


def test_the_readme_shows_the_backends_support_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("dask")
    status, table, _ = run(["backends", "torch", "dask"], capsys)
    assert status == 0 and table.startswith("| dtype | torch | dask |")
    assert "| uint32 | yes 5, emulated " in table  # (torch's gap)
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    assert table.strip() in readme


def test_backends_names_the_extra_of_a_missing_library(
    capsys: pytest.CaptureFixture[str],
) -> None:
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed")
    status, _, err = run(["backends", "cupy"], capsys)
    assert status == 2 and "pip install 'typelattice[cupy]'" in err
