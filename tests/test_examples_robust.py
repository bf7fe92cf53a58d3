"""The examples print what they say on every machine.

NumPy computes ``exp``, ``log``, ``sin``, ``cbrt``, ``power`` and their kin
with code chosen for the CPU, and the last bits of the results differ from
one machine to another (``cbrt(27)`` is ``3.`` on one, ``2.9999998`` on an
AVX-512 one). An example must not print those bits: it rounds, or shows a
value that every correct result prints the same way.

Every example of the docstrings, of README.md and of docs/*.md runs here
again with those results moved a few ulps up, then down (the plugin
tests/last_bit.py, in a fresh interpreter: it must replace NumPy's
functions before typelattice captures them), and must still print what it
says.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# What runs the examples: the docstrings' (the namespace's, wherever they
# are written, and --doctest-modules over the sources) and the pages'.
EXAMPLES = (
    "tests/test_docstrings.py::test_examples_run",
    "tests/test_readme.py::test_examples",
    "src/typelattice",
)


def run_moved(direction: str, *targets: str | Path) -> tuple[int, str]:
    """Run pytest on ``targets`` with transcendental results moved in
    ``direction``; its exit status and output."""
    env = dict(os.environ, TYPELATTICE_LAST_BIT=direction)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "tests"), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "last_bit", *map(str, targets)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.returncode, done.stdout + done.stderr


def moved_counts(output: str) -> dict[str, int]:
    """The plugin's report: how many results it moved, by function."""
    [line] = re.findall(r"^last bit moved \w+: (.*)$", output, flags=re.M)
    return {name: int(n) for name, n in re.findall(r"([\w.]+)=(\d+)", line)}


@pytest.mark.parametrize("direction", ["up", "down"])
def test_examples_do_not_print_last_bits(direction: str) -> None:
    status, output = run_moved(direction, *EXAMPLES)
    assert status == 0, output[-20_000:]
    [passed] = re.findall(r"(\d+) passed", output)
    assert int(passed) > 500
    # The examples did reach the moved functions.
    moved = moved_counts(output)
    for name in ("exp", "log", "sin", "tanh", "cbrt", "arctan2", "power"):
        assert moved.get(name, 0) > 0, (name, moved)


FRAGILE = """
>>> import typelattice.numpy as tnp
>>> tnp.cbrt(tnp.asarray([-8.0, 27.0], dtype='float32'))
Array([-2.,  3.], dtype=float32)
>>> tnp.log10(tnp.asarray([1.0, 100.0], dtype='float32'))
Array([0., 2.], dtype=float32)
"""

ROBUST = """
>>> import typelattice.numpy as tnp
>>> tnp.cbrt(tnp.asarray([-8.0, 27.0], dtype='float32')).round(4)
Array([-2.,  3.], dtype=float32)
>>> tnp.log10(tnp.asarray([1.0, 100.0], dtype='float32')).round(4)
Array([0., 2.], dtype=float32)
>>> tnp.exp(tnp.asarray([0.0], dtype='float32'))
Array([1.], dtype=float32)
"""


@pytest.mark.parametrize("direction", ["up", "down"])
def test_an_example_that_prints_last_bits_fails(direction: str, tmp_path: Path) -> None:
    # Examples that pass on a machine whose cbrt(27) is 3 exactly; one that
    # rounds passes everywhere, as does exp(0), which is exactly 1.
    (tmp_path / "test_fragile.txt").write_text(FRAGILE)
    (tmp_path / "test_robust.txt").write_text(ROBUST)
    status, output = run_moved(direction, tmp_path, f"--rootdir={tmp_path}")
    assert status == 1, output
    assert re.search(r"FAILED .*test_fragile\.txt", output), output
    assert "test_robust.txt" not in output.split("short test summary")[-1], output
    assert "1 failed, 1 passed" in output, output
