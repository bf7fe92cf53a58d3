"""Flax's own linen examples, run on typelattice, against their runs on JAX.

Run (one command; the checkout is github.com/google/flax at the commit in
``tests/flax_examples/_harness.py``, FLAX_COMMIT):

    TYPELATTICE_FLAX_EXAMPLES=/path/to/flax/examples \\
        .venv/bin/python -m pytest -q tests/test_flax_examples.py

Each example's own modules (``models.py``, ``train.py``...) are read from
the checkout and run with their imports rewritten (``jax`` → ``typelattice``,
``flax`` → ``typelattice.flax``, ``optax`` → ``typelattice.optax``), by the
driver in ``tests/flax_examples/drivers.py``: a small config, synthetic
batches, the example's own jitted training step for a few steps, in float32
and in bfloat16 where the example's config offers a compute dtype. The run
starts from the initial parameters of the Flax run
(``golden/flax_examples_params.npz``) and is compared with the Flax run
(``golden/flax_examples.json``, written by
``tests/flax_examples/record_flax.py`` with JAX, Flax and optax):

- the dtypes of the parameters (as initialised and after the steps), of
  the gradients the optimiser receives, of the optimiser state and of the
  step's outputs are JAX's;
- each step's loss is JAX's within the larger of JAX's own eager-vs-jit
  difference and a floor for the compute dtype, for the examples whose
  step draws no random numbers (typelattice's random bits are not JAX's).

Without ``TYPELATTICE_FLAX_EXAMPLES`` every case is skipped.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from support import GOLDEN_DIR

sys.path.insert(0, str(Path(__file__).parent / "flax_examples"))

import _harness  # noqa: E402
import drivers  # noqa: E402

EXAMPLES_DIR = os.environ.get("TYPELATTICE_FLAX_EXAMPLES")
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "flax_examples.json").read_text())
#: Relative loss differences allowed whatever JAX's own spread.
FLOOR = {"float32": 2e-5, "bfloat16": 2e-2}

CASES = [
    f"{name}/{dtype}" for name in drivers.EXAMPLES for dtype in drivers.DTYPES[name]
]


@pytest.fixture(scope="module")
def saved() -> dict[str, list[np.ndarray]]:
    with np.load(GOLDEN_DIR / "flax_examples_params.npz") as data:
        out: dict[str, list[np.ndarray]] = {}
        for key in data.files:
            case, _, i = key.rpartition("/")
            out.setdefault(case, []).append((int(i), data[key]))  # type: ignore[arg-type]
    return {k: [a for _, a in sorted(v, key=lambda t: t[0])] for k, v in out.items()}  # type: ignore[misc]


def test_recording_is_of_the_checkout_commit() -> None:
    assert GOLDEN["flax_commit"] == _harness.FLAX_COMMIT
    assert set(GOLDEN["examples"]) == set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_example(case: str, saved: dict[str, list[np.ndarray]]) -> None:
    if EXAMPLES_DIR is None:
        pytest.skip(
            "set TYPELATTICE_FLAX_EXAMPLES to the examples/ folder of a "
            f"checkout of github.com/google/flax at {_harness.FLAX_COMMIT}"
        )
    name, dtype = case.split("/")
    if case not in GOLDEN["examples"]:
        pytest.fail(f"{case} is not recorded: run record_flax.py {name}")
    expected = GOLDEN["examples"][case]
    got, _ = _harness.run_example(
        Path(EXAMPLES_DIR), name, "typelattice", dtype, saved=saved[case]
    )
    assert got["dtypes"] == expected["dtypes"]
    assert len(got["losses"]) == len(expected["losses"])
    assert all(math.isfinite(x) for x in got["losses"])
    if name in drivers.RANDOM_IN_STEP:
        return
    tol = max(expected["eager_jit_spread"], FLOOR[dtype])
    for step, (a, b) in enumerate(zip(got["losses"], expected["losses"], strict=True)):
        assert abs(a - b) <= tol * abs(b), f"step {step}: loss {a} vs JAX's {b}"
