"""Record optax's optimisers on small fixed inputs into optim.json.

Run with an interpreter that has jax and optax (CI reads the JSON only)::

    python tests/golden/make_optim_golden.py
"""

from __future__ import annotations

import json
import pathlib

import numpy as np

HERE = pathlib.Path(__file__).parent
STEPS = 4

# (name, constructor call): the same text builds optax's optimiser here and
# typelattice's in the tests.
CASES = [
    ("sgd", "sgd(0.1)"),
    ("sgd momentum", "sgd(0.05, momentum=0.9)"),
    ("sgd nesterov", "sgd(0.05, momentum=0.8, nesterov=True)"),
    ("adam", "adam(0.01)"),
    ("adam b1 b2 eps", "adam(0.02, b1=0.8, b2=0.95, eps=1e-6, eps_root=1e-8)"),
    ("adamw", "adamw(0.01, weight_decay=0.1)"),
    ("adam exponential decay", "adam(exponential_decay(0.05, 2, 0.5))"),
    (
        "sgd cosine decay",
        "sgd(cosine_decay_schedule(0.1, 3, alpha=0.1), momentum=0.5)",
    ),
]


def main() -> None:
    import jax
    import jax.numpy as jnp
    import optax

    rng = np.random.default_rng(7)
    params = {
        "w": rng.standard_normal((3, 2)).astype(np.float32),
        "b": rng.standard_normal(2).astype(np.float32),
    }
    grads = [
        {k: rng.standard_normal(v.shape).astype(np.float32) for k, v in params.items()}
        for _ in range(STEPS)
    ]
    records = []
    for name, call in CASES:
        opt = eval(call, vars(optax))  # noqa: S307 - the constructor calls above
        p = jax.tree.map(jnp.asarray, params)
        state = opt.init(p)
        trail = []
        for g in grads:
            updates, state = opt.update(jax.tree.map(jnp.asarray, g), state, p)
            p = optax.apply_updates(p, updates)
            trail.append({k: np.asarray(v).tolist() for k, v in p.items()})
        records.append({"name": name, "call": call, "params": trail})
    out = {
        "jax": jax.__version__,
        "optax": optax.__version__,
        "initial": {k: v.tolist() for k, v in params.items()},
        "grads": [{k: v.tolist() for k, v in g.items()} for g in grads],
        "cases": records,
    }
    (HERE / "optim.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
