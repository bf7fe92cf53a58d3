"""Records the Flax examples' runs with real JAX, Flax and optax.

Run with an environment that has them, from the repository root:

    TYPELATTICE_FLAX_EXAMPLES=/path/to/flax/examples \
        python tests/flax_examples/record_flax.py

(the checkout at the commit in ``_harness.FLAX_COMMIT``); name examples
as arguments to re-record only those. For each example
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
import traceback
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
GOLDEN = HERE.parent / "golden"


def main() -> None:
    sys.path.insert(0, str(HERE))
    import _harness
    import drivers
    import jax

    jax.config.update("jax_platforms", "cpu")
    examples = Path(os.environ["TYPELATTICE_FLAX_EXAMPLES"])
    out: dict[str, Any] = {
        "flax_commit": _harness.FLAX_COMMIT,
        "jax": jax.__version__,
        "steps": drivers.STEPS,
        "examples": {},
    }
    arrays: dict[str, np.ndarray] = {}
    only = sys.argv[1:] or list(drivers.EXAMPLES)
    if sys.argv[1:] and (GOLDEN / "flax_examples.json").exists():
        # Re-recording some examples keeps the others' records.
        old = json.loads((GOLDEN / "flax_examples.json").read_text())
        out["examples"].update(old["examples"])
        with np.load(GOLDEN / "flax_examples_params.npz") as saved:
            arrays.update({k: saved[k] for k in saved.files})
    for name in only:
        for dtype in drivers.DTYPES[name]:
            key = f"{name}/{dtype}"
            try:
                rec, initial = _harness.run_example(examples, name, "jax", dtype)
                eager, _ = _harness.run_example(
                    examples, name, "jax", dtype, jit=False, saved=initial
                )
            except Exception:
                traceback.print_exc()
                raise
            spread = [
                abs(a - b) / max(abs(a), 1e-30)
                for a, b in zip(rec["losses"], eager["losses"], strict=True)
            ]
            rec["eager_losses"] = eager["losses"]
            rec["eager_jit_spread"] = max(spread)
            out["examples"][key] = rec
            for i, a in enumerate(initial):
                arrays[f"{key}/{i}"] = a
            print(key, rec["losses"], f"spread {max(spread):.2e}", flush=True)
    (GOLDEN / "flax_examples.json").write_text(json.dumps(out, indent=1) + "\n")
    np.savez_compressed(GOLDEN / "flax_examples_params.npz", **arrays)


if __name__ == "__main__":
    main()
