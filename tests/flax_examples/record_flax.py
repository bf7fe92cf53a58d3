"""Records the Flax examples' runs with real JAX, Flax and optax.

Run with an environment that has them, from the repository root:

    TYPELATTICE_FLAX_EXAMPLES=/path/to/flax/examples \
        python tests/flax_examples/record_flax.py

(the checkout at the commit in ``_harness.FLAX_COMMIT``); name examples
as arguments to record only those (each case is added to the files as it
is recorded, so recorders for different examples may run at once). For each example
and compute dtype it runs the driver (:mod:`drivers`) jitted and eagerly
(``jax.disable_jit``), both from the same initial parameters, and writes
``tests/golden/flax_examples.json`` (dtypes, losses of the jitted run, the
largest relative eager-vs-jit difference of each loss) and the initial
parameters to ``tests/golden/flax_examples_params.npz``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
GOLDEN = HERE.parent / "golden"


def _save(key: str, record: dict[str, Any], initial: list[np.ndarray]) -> None:
    """Adds one case to the recording (under a lock: several recorders may
    run at once, one per example)."""
    import fcntl

    import _harness
    import jax

    with open(
        Path(tempfile.gettempdir()) / "typelattice-flax-golden.lock", "w"
    ) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = GOLDEN / "flax_examples.json"
        out: dict[str, Any] = {"examples": {}}
        arrays: dict[str, np.ndarray] = {}
        if path.exists():
            out = json.loads(path.read_text())
            with np.load(GOLDEN / "flax_examples_params.npz") as saved:
                arrays = {k: saved[k] for k in saved.files}
        out["flax_commit"] = _harness.FLAX_COMMIT
        out["jax"] = jax.__version__
        out["examples"][key] = record
        out["examples"] = dict(sorted(out["examples"].items()))
        arrays = {k: v for k, v in arrays.items() if not k.startswith(key + "/")}
        arrays.update({f"{key}/{i}": a for i, a in enumerate(initial)})
        path.write_text(json.dumps(out, indent=1) + "\n")
        np.savez_compressed(GOLDEN / "flax_examples_params.npz", **arrays)


def main() -> None:
    sys.path.insert(0, str(HERE))
    import _harness
    import drivers
    import jax

    jax.config.update("jax_platforms", "cpu")
    examples = Path(os.environ["TYPELATTICE_FLAX_EXAMPLES"])
    for name in sys.argv[1:] or list(drivers.EXAMPLES):
        for dtype in drivers.DTYPES[name]:
            key = f"{name}/{dtype}"
            rec, initial = _harness.run_example(examples, name, "jax", dtype)
            try:
                eager, _ = _harness.run_example(
                    examples, name, "jax", dtype, jit=False, saved=initial
                )
            except Exception as exc:
                # lm1b's rsqrt schedule raises on a Python 0 step, which only
                # disable_jit passes it: no spread then (the floor applies).
                rec["eager_error"] = f"{type(exc).__name__}: {exc}"
                eager = {"losses": rec["losses"]}
            spread = [
                abs(a - b) / max(abs(a), 1e-30)
                for a, b in zip(rec["losses"], eager["losses"], strict=True)
            ]
            rec["eager_losses"] = eager["losses"]
            rec["eager_jit_spread"] = max(spread)
            _save(key, rec, initial)
            print(key, rec["losses"], f"spread {max(spread):.2e}", flush=True)


if __name__ == "__main__":
    main()
