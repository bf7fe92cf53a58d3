"""Record optax's transformations, optimisers, wrappers, schedules and losses
on small fixed inputs, with float32, bfloat16 and float16 parameters.

Run with a Python that has JAX and optax installed, from anywhere::

    python tests/golden/make_optax_golden.py

It writes ``optax.json`` beside this file; ``tests/test_optax_golden.py``
runs the same cases with ``typelattice.optax`` and compares. The cases
live here, written once for both libraries: :func:`run` takes a namespace
``ns`` with ``ns.np`` (``jax.numpy`` or ``typelattice.numpy``), ``ns.optax``
(``optax`` or ``typelattice.optax``) and ``ns.leaves`` (a pytree's leaves).

Each optimiser case makes 3 steps on the parameters ``{'b': (3,), 'w':
(2, 3)}`` with gradients of the parameters' dtype (the dtype rules of the
two libraries agree there; see docs/optim.md), recording per step the
updates, the state's leaves and the new parameters. An array is ``[dtype
name, shape, values]`` (the values a flat list of floats, NaN as null).

Importing this module needs only NumPy and ml_dtypes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

OUT = Path(__file__).with_name("optax.json")

DTYPES = ("float32", "bfloat16", "float16")
STEPS = 3
COUNTS = 12


def _param_values() -> dict[str, np.ndarray[Any, Any]]:
    return {
        "b": np.array([0.5, -1.25, 2.0]),
        "w": np.array([[1.0, -0.5, 0.25], [-2.0, 0.75, 1.5]]),
    }


def _grad_values(step: int) -> dict[str, np.ndarray[Any, Any]]:
    """Gradients at ``step``; step 1 of the "nan" cases holds a NaN."""
    b = np.array([0.3, -0.7, 1.1]) * (step + 1) - 0.2 * step
    w = np.array([[0.9, -1.3, 0.05], [-0.4, 2.2, -0.6]]) / (step + 1) + 0.1 * step
    return {"b": b, "w": w}


# name -> (a function of the optax namespace making the transformation,
# whether the state's leaves are compared (sgd, adam and adamw keep
# optax's values but their own state types: docs/optim.md), whether step 1
# gets a NaN gradient).
def _cases() -> dict[str, tuple[Any, bool, bool]]:
    def sched(o: Any) -> Any:
        return o.linear_schedule(0.1, 0.01, 3)

    return {
        "identity": (lambda o: o.identity(), True, False),
        "set_to_zero": (lambda o: o.set_to_zero(), True, False),
        "scale": (lambda o: o.scale(-0.3), True, False),
        "clip": (lambda o: o.clip(0.5), True, False),
        "clip_by_global_norm": (lambda o: o.clip_by_global_norm(1.0), True, False),
        "clip_by_block_rms": (lambda o: o.clip_by_block_rms(0.5), True, False),
        "scale_by_adam": (lambda o: o.scale_by_adam(), True, False),
        "scale_by_adam_nesterov": (
            lambda o: o.scale_by_adam(b1=0.8, nesterov=True),
            True,
            False,
        ),
        "scale_by_schedule": (lambda o: o.scale_by_schedule(sched(o)), True, False),
        "scale_by_learning_rate": (
            lambda o: o.scale_by_learning_rate(0.05),
            True,
            False,
        ),
        "trace": (lambda o: o.trace(0.9), True, False),
        "trace_nesterov": (lambda o: o.trace(0.5, nesterov=True), True, False),
        "add_decayed_weights": (lambda o: o.add_decayed_weights(0.1), True, False),
        "masked": (
            lambda o: o.masked(o.trace(0.9), {"b": False, "w": True}),
            True,
            False,
        ),
        "multi_transform": (
            lambda o: o.multi_transform(
                {"a": o.adam(0.1), "z": o.set_to_zero()}, {"b": "z", "w": "a"}
            ),
            True,
            False,
        ),
        "chain": (
            lambda o: o.chain(
                o.clip_by_global_norm(1.5),
                o.scale_by_adam(),
                o.add_decayed_weights(0.01),
                o.scale_by_learning_rate(sched(o)),
            ),
            True,
            False,
        ),
        "apply_if_finite": (
            lambda o: o.apply_if_finite(o.adam(0.1), 2),
            True,
            True,
        ),
        "inject_hyperparams": (
            lambda o: o.inject_hyperparams(o.adam)(learning_rate=0.1, b1=0.8),
            True,
            False,
        ),
        # (float32 parameters only, as adamw_scheduled_decay: with 16-bit
        # ones, optax's updates take the float32 of the schedule's value;
        # typelattice's keep the parameters' dtype, docs/optim.md.)
        "inject_hyperparams_schedule": (
            lambda o: o.inject_hyperparams(o.rmsprop)(
                learning_rate=sched(o), decay=0.5
            ),
            True,
            False,
        ),
        "multi_steps": (
            lambda o: o.MultiSteps(
                o.adam(0.1), every_k_schedule=2
            ).gradient_transformation(),
            True,
            False,
        ),
        "sgd": (lambda o: o.sgd(0.1), False, False),
        "sgd_momentum": (
            lambda o: o.sgd(0.1, momentum=0.9, nesterov=True),
            False,
            False,
        ),
        "adam": (lambda o: o.adam(0.1), True, False),
        "adam_mu_dtype": (lambda o: o.adam(0.1, mu_dtype="bfloat16"), True, False),
        "sgd_accumulator_dtype": (
            lambda o: o.sgd(0.1, momentum=0.9, accumulator_dtype="bfloat16"),
            False,
            False,
        ),
        "adamw": (lambda o: o.adamw(0.1, weight_decay=0.1), False, False),
        "adamw_scheduled_decay": (
            lambda o: o.adamw(0.1, weight_decay=o.linear_schedule(0.2, 0.0, 2)),
            False,
            False,
        ),
        "rmsprop": (lambda o: o.rmsprop(0.1), True, False),
        "rmsprop_centered_momentum": (
            lambda o: o.rmsprop(0.1, centered=True, momentum=0.9),
            True,
            False,
        ),
        "adagrad": (lambda o: o.adagrad(0.1), True, False),
        "adafactor": (
            lambda o: o.adafactor(0.1, min_dim_size_to_factor=2),
            True,
            False,
        ),
        "adafactor_unfactored_momentum": (
            lambda o: o.adafactor(0.1, factored=False, momentum=0.9),
            True,
            False,
        ),
        "lamb": (lambda o: o.lamb(0.1, weight_decay=0.01), True, False),
        "lion": (lambda o: o.lion(0.1), True, False),
    }


CASES = _cases()
FLOAT32_ONLY = {"inject_hyperparams_schedule", "adamw_scheduled_decay"}


def _schedules(o: Any) -> dict[str, Any]:
    return {
        "join_schedules": o.join_schedules(
            [o.linear_schedule(0.0, 1.0, 4), o.cosine_decay_schedule(1.0, 6)], [4]
        ),
        "piecewise_constant_schedule": o.piecewise_constant_schedule(
            0.5, {3: 0.5, 7: 0.1}
        ),
        "polynomial_schedule": o.polynomial_schedule(1.0, 0.1, 2.0, 8, 2),
    }


def _loss_inputs(np_: Any, dtype: str) -> dict[str, Any]:
    logits = np_.asarray([[2.0, -1.0, 0.5], [0.0, 3.0, -2.0]], dtype=dtype)
    probs = np_.asarray([[0.7, 0.1, 0.2], [0.0, 1.0, 0.0]], dtype=dtype)
    preds = np_.asarray([0.5, -1.5, 3.0, 0.1], dtype=dtype)
    targets = np_.asarray([0.0, -1.0, 1.0, 0.3], dtype=dtype)
    return {
        "logits": logits,
        "probs": probs,
        "labels": np_.asarray([0, 1]),
        "binary": np_.asarray([1.0, 0.0, 1.0], dtype=dtype),
        "preds": preds,
        "targets": targets,
    }


def losses(ns: Any, dtype: str) -> dict[str, Any]:
    """Each loss on fixed inputs of ``dtype``."""
    o, x = ns.optax, _loss_inputs(ns.np, dtype)
    return {
        "softmax_cross_entropy": o.softmax_cross_entropy(x["logits"], x["probs"]),
        "softmax_cross_entropy_with_integer_labels": (
            o.softmax_cross_entropy_with_integer_labels(x["logits"], x["labels"])
        ),
        "sigmoid_binary_cross_entropy": o.sigmoid_binary_cross_entropy(
            x["logits"][0], x["binary"]
        ),
        "l2_loss": o.l2_loss(x["preds"], x["targets"]),
        "squared_error": o.squared_error(x["preds"], x["targets"]),
        "huber_loss": o.huber_loss(x["preds"], x["targets"], delta=0.6),
        "log_cosh": o.log_cosh(x["preds"], x["targets"]),
        "cosine_similarity": o.cosine_similarity(x["logits"], x["probs"]),
        **(_mixed_losses(ns) if dtype == "bfloat16" else {}),
    }


def _mixed_losses(ns: Any) -> dict[str, Any]:
    """bfloat16 predictions with float32 labels and targets: the dtype each
    loss gives (optax promotes, except for the sigmoid's labels)."""
    o, x, y = ns.optax, _loss_inputs(ns.np, "bfloat16"), _loss_inputs(ns.np, "float32")
    return {
        "softmax_cross_entropy_mixed": o.softmax_cross_entropy(x["logits"], y["probs"]),
        "sigmoid_binary_cross_entropy_mixed": o.sigmoid_binary_cross_entropy(
            x["logits"][0], y["binary"]
        ),
        "l2_loss_mixed": o.l2_loss(x["preds"], y["targets"]),
        "huber_loss_mixed": o.huber_loss(x["preds"], y["targets"], delta=0.6),
        "log_cosh_mixed": o.log_cosh(x["preds"], y["targets"]),
        "cosine_similarity_mixed": o.cosine_similarity(x["logits"], y["probs"]),
    }


def params_of(ns: Any, dtype: str) -> dict[str, Any]:
    return {k: ns.np.asarray(v, dtype=dtype) for k, v in _param_values().items()}


def grads_of(ns: Any, dtype: str, step: int, nan: bool) -> dict[str, Any]:
    g = _grad_values(step)
    if nan and step == 1:
        g["b"] = g["b"].copy()
        g["b"][1] = np.nan
    return {k: ns.np.asarray(v, dtype=dtype) for k, v in g.items()}


def run_case(ns: Any, name: str, dtype: str, update: Any = None) -> list[Any]:
    """The steps of case ``name``: per step ``(updates, state leaves, new
    params)``. ``update`` replaces the optimiser's update (a jitted one)."""
    make, _, nan = CASES[name]
    opt = make(ns.optax)
    params = params_of(ns, dtype)
    state = opt.init(params)
    step_fn = update or opt.update
    out = []
    for step in range(STEPS):
        grads = grads_of(ns, dtype, step, nan)
        updates, state = step_fn(grads, state, params)
        params = ns.optax.apply_updates(params, updates)
        out.append((ns.leaves(updates), ns.leaves(state), ns.leaves(params)))
    return out


def encode(x: Any) -> list[Any]:
    a = np.asarray(x)
    values = a.astype(np.float64).ravel().tolist()
    return [
        str(a.dtype),
        list(a.shape),
        [None if math.isnan(v) else v for v in values],
    ]


def decode(item: list[Any]) -> np.ndarray[Any, Any]:
    dtype, shape, values = item
    floats = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    dt = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    return floats.astype(dt).reshape(shape)


def record(ns: Any) -> dict[str, Any]:
    cases: dict[str, Any] = {}
    for name in CASES:
        for dtype in DTYPES:
            if name in FLOAT32_ONLY and dtype != "float32":
                continue
            cases[f"{name}|{dtype}"] = [
                {
                    "updates": [encode(u) for u in ups],
                    "state": [encode(s) for s in st],
                    "params": [encode(p) for p in ps],
                }
                for ups, st, ps in run_case(ns, name, dtype)
            ]
    schedules = {
        name: [encode(s(c)) for c in range(COUNTS)]
        for name, s in _schedules(ns.optax).items()
    }
    loss = {
        f"{name}|{dtype}": encode(v)
        for dtype in DTYPES
        for name, v in losses(ns, dtype).items()
    }
    return {"cases": cases, "schedules": schedules, "losses": loss}


def main() -> None:
    import jax
    import jax.numpy as jnp
    import optax

    class NS:
        np = jnp
        leaves = staticmethod(jax.tree_util.tree_leaves)

    NS.optax = optax  # type: ignore[attr-defined]
    data = record(NS)
    data["recorded_with"] = {"jax": jax.__version__, "optax": optax.__version__}
    OUT.write_text(json.dumps(data, sort_keys=True) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
