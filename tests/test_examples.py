"""The example scripts run and print what they promise."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py"))
# The arguments each script is run with here: the shortest run.
ARGS = {
    "train_mixed_precision.py": ("--quick",),
    "sequence_model.py": ("--steps", "20"),
}


def run_example(name: str) -> str:
    """Run ``examples/<name>`` with this interpreter; its standard output."""
    done = subprocess.run(
        [sys.executable, "-W", "error", str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def rows(out: str, label: str) -> list[tuple[str, str]]:
    """The (NumPy, typelattice) cells of every table row for ``label``."""
    found = []
    for line in out.splitlines():
        parts = [part.strip() for part in line.split("|")]
        if len(parts) == 3 and parts[0] == label:
            found.append((parts[1], parts[2]))
    return found


def test_numpy_side_by_side() -> None:
    out = run_example("numpy_side_by_side.py")
    [(numpy, ours)] = rows(out, "int32 + float32")
    assert numpy.startswith("float64 ")
    assert ours.startswith("float32 ")
    [(numpy, ours)] = rows(out, "int8 * 2")
    assert numpy.startswith("int8 ") and ours.startswith("int8 ")
    [(numpy, ours)] = rows(out, "int8 * 2.0")
    assert numpy.startswith("float64 ") and ours.startswith("float32 weak ")
    [(numpy, ours)] = rows(out, "bfloat16 + 1.0")
    assert ours.startswith("bfloat16 ")
    # 32-bit mode narrows the inputs; 64-bit mode joins at the weak float.
    [(_, x32), (numpy, x64)] = rows(out, "uint64 + int64")
    assert x32 == "int32 [-2  6]"
    assert numpy.startswith("float64 ") and x64.startswith("float64 weak ")
    # NumPy's grouping changes the dtype; the lattice's does not.
    [(numpy_left, ours_left)] = rows(out, "(a + b) + c")
    [(numpy_right, ours_right)] = rows(out, "a + (b + c)")
    assert numpy_left.startswith("float32 ") and numpy_right.startswith("float16 ")
    assert ours_left.startswith("float16 ") and ours_right.startswith("float16 ")


def test_train_mixed_precision_quick() -> None:
    """A short run: both models train in bfloat16 with float32 parameters,
    gradients and optimiser state, and reach the float32 run's accuracy."""
    out = run_example_args("train_mixed_precision.py", "--quick")
    assert "parameters       float32" in out
    assert "gradients        float32" in out
    assert "optimiser state  float32, int32" in out
    assert "activations      bfloat16" in out
    for line in out.splitlines():
        if " vs float32 " in line:
            bf16 = float(line.split("bfloat16 ")[1].split("%")[0])
            f32 = float(line.split("vs float32 ")[1].split("%")[0])
            assert abs(bf16 - f32) <= 3.0, line  # a short run: within 3 points
            assert f32 > 40.0, line  # better than chance (25-33%)
    assert out.count(" vs float32 ") == 2


def test_sequence_model_short_run() -> None:
    """A short run: the LSTM language model's loss goes down from chance,
    computing in bfloat16 with float32 parameters, carry, gradients and
    optimiser state."""
    out = run_example_args("sequence_model.py", *ARGS["sequence_model.py"])
    [summary] = [line for line in out.splitlines() if line.startswith("loss ")]
    first, last = (float(v) for v in summary.split()[1:4:2])
    assert abs(first - np.log(16)) < 0.2  # starts near chance
    assert last < first - 0.1
    assert "activations      bfloat16" in out
    assert "lstm carry       float32" in out
    assert "parameters       float32" in out
    assert "gradients        float32" in out
    assert "optimiser state  float32, int32" in out


def run_example_args(name: str, *args: str) -> str:
    return run_piped(name, *args)[0]


@functools.cache
def run_piped(name: str, *args: str) -> tuple[str, str]:
    """Standard output and error of ``examples/<name>`` run with ``args``,
    both pipes, as written (no newline translation: a carriage return
    stays one)."""
    done = subprocess.run(
        [sys.executable, "-W", "error", str(EXAMPLES / name), *args],
        capture_output=True,
        timeout=300,
    )
    err = done.stderr.decode()
    assert done.returncode == 0, err
    return done.stdout.decode(), err


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_closed_pipe_ends_each_example_quietly(name: str) -> None:
    """As ``python examples/x.py | head -1`` once head has gone: the
    example ends as the typelattice command does, with 141 (a tool stopped
    by SIGPIPE) and nothing on stderr, not with a BrokenPipeError."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line is written
    try:
        done = subprocess.run(
            [sys.executable, "-W", "error", str(EXAMPLES / name), *ARGS.get(name, ())],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    assert done.stderr == ""


@pytest.mark.parametrize("name", SCRIPTS)
def test_output_into_a_pipe_has_no_carriage_returns(name: str) -> None:
    """Progress is drawn only on a terminal: a pipe or a log file gets
    whole lines."""
    out, err = run_piped(name, *ARGS.get(name, ()))
    assert out and "\r" not in out + err


@pytest.mark.skipif(sys.platform == "win32", reason="no pseudo-terminals")
def test_progress_is_drawn_on_a_terminal() -> None:
    import pty

    leader, follower = pty.openpty()
    name = "train_mixed_precision.py"
    try:
        proc = subprocess.Popen(
            [sys.executable, "-W", "error", str(EXAMPLES / name), "--quick"],
            stdout=follower,
            stderr=subprocess.DEVNULL,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # (the terminal closes when the script ends)
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.wait(timeout=300) == 0
    finally:
        os.close(leader)
    out = b"".join(chunks).decode()
    assert "\r  epoch  1/2 [" in out and "] loss " in out
