"""Record optax's optimisers and learning-rate schedules on small fixed
inputs.

Run with a Python that has JAX and optax installed, from anywhere::

    python tests/golden/make_optim_golden.py

It writes ``optim.json`` beside this file; ``tests/test_optim.py`` runs the
same cases with ``typelattice.optim`` and compares. The cases live here,
written once for both libraries: :func:`run` takes a namespace ``ns`` with

- ``ns.np``: ``jax.numpy`` or ``typelattice.numpy``;
- ``ns.optim``: ``optax`` or ``typelattice.optim`` (the same names);
- ``ns.enable_x64``: a context manager;
- ``ns.leaves``: a pytree's leaves;
- ``ns.state``: the optimiser state as ``{name: array}`` (``count``,
  ``trace`` or ``mu`` and ``nu``, each of those a list of leaves);
- ``ns.grads``: what is done to the gradients before ``update``. For
  optax: converted to the parameters' dtype, which is what typelattice's
  dtype rule does (a bfloat16 gradient of a float32 parameter is
  accumulated in float32; optax would square it in bfloat16 first). For
  typelattice: nothing.

Importing this module needs only NumPy and ml_dtypes (JAX and optax are
imported by ``main``).

Sections of the file:

- ``inputs``: the parameters and the gradients of each step, per
  (parameter dtype, gradient dtype) pair, encoded as below;
- ``cases``: per case (optimiser ``|`` parameter dtype ``|`` gradient
  dtype), per step, the updates, the new parameters and the state;
- ``schedules``: each schedule's values at the counts 0 to ``COUNTS - 1``;
- ``dtypes``: the dtype codes of optax's updates, state and new parameters
  when it is given gradients of another dtype than the parameters, as they
  are (not converted).

An array is ``[dtype name, shape, values]``, the values a flat list
(complex values as ``[real, imag]`` pairs).
"""

from __future__ import annotations

import json
import platform
import re
import zlib
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

OUT = Path(__file__).with_name("optim.json")

STEPS = 4
COUNTS = 14

# The parameters' structure: name -> shape (a nested dict, sorted as both
# libraries flatten it).
SHAPES: dict[str, Any] = {"dense": {"bias": (2,), "kernel": (3, 2)}, "scale": ()}

# name -> (optimiser, keyword arguments). A learning rate (or weight decay)
# given as a dict is a schedule: {"schedule": function name, **arguments}.
OPTIMISERS: dict[str, tuple[str, dict[str, Any]]] = {
    "sgd": ("sgd", {"learning_rate": 0.1}),
    "sgd_momentum": ("sgd", {"learning_rate": 0.05, "momentum": 0.9}),
    "sgd_nesterov": (
        "sgd",
        {"learning_rate": 0.05, "momentum": 0.8, "nesterov": True},
    ),
    "sgd_exponential": (
        "sgd",
        {
            "learning_rate": {
                "schedule": "exponential_decay",
                "init_value": 0.1,
                "transition_steps": 2,
                "decay_rate": 0.5,
            },
            "momentum": 0.9,
        },
    ),
    "adam": ("adam", {"learning_rate": 0.01}),
    "adam_settings": (
        "adam",
        {"learning_rate": 0.03, "b1": 0.8, "b2": 0.99, "eps": 1e-6, "eps_root": 1e-8},
    ),
    "adam_nesterov": ("adam", {"learning_rate": 0.01, "nesterov": True}),
    "adam_cosine": (
        "adam",
        {
            "learning_rate": {
                "schedule": "cosine_decay_schedule",
                "init_value": 0.1,
                "decay_steps": 3,
                "alpha": 0.1,
            },
        },
    ),
    "adamw": ("adamw", {"learning_rate": 0.01, "weight_decay": 0.1}),
    "adamw_defaults": ("adamw", {"learning_rate": 0.001}),
    "adamw_mask": (
        "adamw",
        {
            "learning_rate": {
                "schedule": "warmup_cosine_decay_schedule",
                "init_value": 0.0,
                "peak_value": 0.05,
                "warmup_steps": 2,
                "decay_steps": 5,
                "end_value": 0.01,
            },
            "weight_decay": 0.5,
            "mask": {"dense": {"bias": False, "kernel": True}, "scale": False},
        },
    ),
    "adamw_nesterov": (
        "adamw",
        {
            "learning_rate": {
                "schedule": "exponential_decay",
                "init_value": 0.02,
                "transition_steps": 1,
                "decay_rate": 0.7,
                "transition_begin": 1,
                "staircase": True,
                "end_value": 0.01,
            },
            "weight_decay": 0.05,
            "eps_root": 1e-10,
            "nesterov": True,
        },
    ),
}

# (parameter dtype, gradient dtype) -> the optimisers run with them. float64
# runs with enable_x64.
PRECISIONS: dict[tuple[str, str], list[str]] = {
    ("float32", "float32"): list(OPTIMISERS),
    ("float32", "bfloat16"): ["sgd", "sgd_nesterov", "adam", "adamw_mask"],
    ("bfloat16", "bfloat16"): ["sgd_momentum", "adam"],
    ("complex64", "complex64"): ["sgd_momentum", "adam", "adamw"],
    ("float64", "float64"): ["sgd_nesterov", "adam_settings"],
}

# name -> (function, keyword arguments)
SCHEDULES: dict[str, tuple[str, dict[str, Any]]] = {
    "constant": ("constant_schedule", {"value": 0.1}),
    "linear": (
        "linear_schedule",
        {
            "init_value": 1.0,
            "end_value": 0.1,
            "transition_steps": 5,
            "transition_begin": 2,
        },
    ),
    "linear_up": (
        "linear_schedule",
        {"init_value": 0.0, "end_value": 0.3, "transition_steps": 7},
    ),
    "linear_no_steps": (
        "linear_schedule",
        {"init_value": 0.5, "end_value": 1.0, "transition_steps": 0},
    ),
    "exponential": (
        "exponential_decay",
        {"init_value": 0.1, "transition_steps": 3, "decay_rate": 0.5},
    ),
    "exponential_staircase": (
        "exponential_decay",
        {
            "init_value": 1.0,
            "transition_steps": 2,
            "decay_rate": 0.7,
            "transition_begin": 3,
            "staircase": True,
        },
    ),
    "exponential_floor": (
        "exponential_decay",
        {
            "init_value": 0.1,
            "transition_steps": 4,
            "decay_rate": 0.5,
            "end_value": 0.03,
        },
    ),
    "exponential_growth_ceiling": (
        "exponential_decay",
        {
            "init_value": 0.01,
            "transition_steps": 2,
            "decay_rate": 1.5,
            "end_value": 0.02,
        },
    ),
    "cosine": ("cosine_decay_schedule", {"init_value": 0.1, "decay_steps": 10}),
    "cosine_alpha_exponent": (
        "cosine_decay_schedule",
        {"init_value": 1.0, "decay_steps": 8, "alpha": 0.2, "exponent": 2.0},
    ),
    "warmup_cosine": (
        "warmup_cosine_decay_schedule",
        {
            "init_value": 0.0,
            "peak_value": 1.0,
            "warmup_steps": 3,
            "decay_steps": 10,
            "end_value": 0.1,
        },
    ),
    "warmup_cosine_no_warmup": (
        "warmup_cosine_decay_schedule",
        {"init_value": 0.1, "peak_value": 0.5, "warmup_steps": 0, "decay_steps": 6},
    ),
}

# (parameter dtype, gradient dtype) given to optax as they are, for the
# ``dtypes`` section.
MIXED: list[tuple[str, str]] = [
    ("float32", "bfloat16"),
    ("float32", "float16"),
    ("bfloat16", "float32"),
]
MIXED_OPTIMISERS = ["sgd", "sgd_momentum", "adam", "adamw"]


# -- inputs -------------------------------------------------------------------------


def _shapes() -> list[tuple[str, tuple[int, ...]]]:
    """The parameters' paths and shapes, in flattening order."""
    return [
        ("dense/bias", SHAPES["dense"]["bias"]),
        ("dense/kernel", SHAPES["dense"]["kernel"]),
        ("scale", SHAPES["scale"]),
    ]


def _tree(leaves: list[Any]) -> dict[str, Any]:
    """The parameters' tree holding ``leaves`` (in flattening order)."""
    bias, kernel, scale = leaves
    return {"dense": {"bias": bias, "kernel": kernel}, "scale": scale}


def make_inputs(param_dtype: str, grad_dtype: str) -> dict[str, Any]:
    """Parameters and STEPS gradients, NumPy arrays, encoded."""
    rng = np.random.default_rng(zlib.crc32(f"{param_dtype}|{grad_dtype}".encode()))

    def draw(shape: tuple[int, ...], dtype: str, scale: float) -> Any:
        values = rng.normal(0, scale, shape)
        if dtype.startswith("complex"):
            values = values + 1j * rng.normal(0, scale, shape)
        return np.asarray(values).astype(np.dtype(dtype))

    params = [draw(s, param_dtype, 1.0) for _, s in _shapes()]
    grads = [[draw(s, grad_dtype, 0.5) for _, s in _shapes()] for _ in range(STEPS)]
    return {
        "params": [encode(p) for p in params],
        "grads": [[encode(g) for g in step] for step in grads],
    }


def _dtype(name: str) -> np.dtype[Any]:
    return np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)


def encode(x: Any) -> list[Any]:
    """``[dtype name, shape, flat values]`` of an array."""
    a = np.asarray(x)
    name = str(a.dtype)
    flat = a.reshape(-1)
    if np.issubdtype(flat.dtype, np.integer):
        return [name, list(a.shape), [int(v) for v in flat]]
    if np.iscomplexobj(flat):
        pairs = np.stack([flat.real, flat.imag], axis=-1)
        return [name, list(a.shape), [_numbers(p) for p in pairs]]
    return [name, list(a.shape), _numbers(flat)]


def _numbers(values: Any) -> list[float]:
    """Floats as the shortest decimals that read back as the same values:
    those of float32 (or narrower) values read back in float32."""
    if values.dtype == np.float64:
        return [float(v) for v in values]
    return [float(str(v)) for v in values.astype(np.float32)]


def decode(item: list[Any]) -> Any:
    """The NumPy array of :func:`encode`'s triple."""
    name, shape, values = item
    if name.startswith("complex"):
        values = [complex(re, im) for re, im in values]
    return np.asarray(values).astype(_dtype(name)).reshape(shape)


# -- the cases, for both libraries --------------------------------------------------


def _resolve(ns: Any, value: Any) -> Any:
    if isinstance(value, dict) and "schedule" in value:
        args = {k: v for k, v in value.items() if k != "schedule"}
        return getattr(ns.optim, value["schedule"])(**args)
    return value


def make_optimiser(ns: Any, name: str) -> Any:
    """The optimiser ``name`` of OPTIMISERS, from ``ns.optim``."""
    kind, kwargs = OPTIMISERS[name]
    args = {k: _resolve(ns, v) if k != "mask" else v for k, v in kwargs.items()}
    return getattr(ns.optim, kind)(**args)


def run(ns: Any, name: str, inputs: dict[str, Any], convert: bool = True) -> Any:
    """STEPS steps of optimiser ``name`` on ``inputs``: per step, the
    updates, the new parameters and the state, encoded. ``convert``: give
    the gradients to ``ns.grads`` first."""
    opt = make_optimiser(ns, name)
    params = _tree([ns.np.asarray(decode(p)) for p in inputs["params"]])
    state = opt.init(params)
    steps: list[dict[str, Any]] = []
    for step in inputs["grads"]:
        grads = _tree([ns.np.asarray(decode(g)) for g in step])
        if convert:
            grads = ns.grads(grads, params)
        updates, state = opt.update(grads, state, params)
        params = ns.optim.apply_updates(params, updates)
        steps.append(
            {
                "updates": [encode(u) for u in ns.leaves(updates)],
                "params": [encode(p) for p in ns.leaves(params)],
                "state": {
                    k: encode(v) if not isinstance(v, list) else [encode(x) for x in v]
                    for k, v in ns.state(state).items()
                },
            }
        )
    return steps


def schedule_values(ns: Any, name: str) -> list[float]:
    """Schedule ``name`` at the int32 counts 0 to COUNTS - 1."""
    function, kwargs = SCHEDULES[name]
    schedule = getattr(ns.optim, function)(**kwargs)
    return [float(schedule(ns.np.asarray(n, dtype=ns.np.int32))) for n in range(COUNTS)]


def _code(dtype: Any) -> str:
    return {
        "float32": "f4",
        "bfloat16": "bf",
        "float16": "f2",
        "float64": "f8",
        "int32": "i4",
        "complex64": "c8",
    }[str(dtype)]


def dtypes_of(ns: Any, name: str, param_dtype: str, grad_dtype: str) -> dict[str, str]:
    """One step of optimiser ``name`` with gradients of another dtype, given
    as they are: the dtype codes of the updates, the state's parts and the
    new parameters."""
    inputs = make_inputs(param_dtype, grad_dtype)
    steps = run(ns, name, {**inputs, "grads": inputs["grads"][:1]}, convert=False)
    first = steps[0]

    def codes(items: list[Any]) -> str:
        return ",".join(sorted({_code(_dtype(i[0])) for i in items}))

    out = {"updates": codes(first["updates"]), "params": codes(first["params"])}
    for k, v in first["state"].items():
        out[k] = codes(v if k != "count" else [v])
    return out


def case_name(name: str, param_dtype: str, grad_dtype: str) -> str:
    return f"{name}|{param_dtype}|{grad_dtype}"


# -- optax's side -------------------------------------------------------------------


def _optax_namespace() -> Any:
    import types

    import jax
    import jax.numpy as jnp
    import optax

    def state(s: Any) -> dict[str, Any]:
        # A chain's states: trace's or scale_by_adam's first; the count of
        # scale_by_adam, or of a schedule's scale_by_schedule.
        out: dict[str, Any] = {}
        for part in s:
            if isinstance(part, optax.TraceState):
                out["trace"] = jax.tree_util.tree_leaves(part.trace)
            elif isinstance(part, optax.ScaleByAdamState):
                out["mu"] = jax.tree_util.tree_leaves(part.mu)
                out["nu"] = jax.tree_util.tree_leaves(part.nu)
            count = getattr(part, "count", None)
            if isinstance(count, jax.Array):  # (not tuple.count)
                out.setdefault("count", count)
        return out

    def grads(g: Any, params: Any) -> Any:
        return jax.tree_util.tree_map(lambda x, p: x.astype(p.dtype), g, params)

    return types.SimpleNamespace(
        np=jnp,
        optim=optax,
        enable_x64=jax.enable_x64,
        leaves=jax.tree_util.tree_leaves,
        state=state,
        grads=grads,
    )


def main() -> None:
    import jax
    import optax

    ns = _optax_namespace()
    inputs: dict[str, Any] = {}
    cases: dict[str, Any] = {}
    for (param_dtype, grad_dtype), names in PRECISIONS.items():
        key = f"{param_dtype}|{grad_dtype}"
        inputs[key] = make_inputs(param_dtype, grad_dtype)
        with ns.enable_x64(param_dtype == "float64"):
            for name in names:
                cases[case_name(name, param_dtype, grad_dtype)] = run(
                    ns, name, inputs[key]
                )
    schedules = {name: schedule_values(ns, name) for name in SCHEDULES}
    dtypes = {
        case_name(name, p, g): dtypes_of(ns, name, p, g)
        for p, g in MIXED
        for name in MIXED_OPTIMISERS
    }
    data = {
        "description": (
            "optax's optimisers and schedules on fixed inputs, recorded by "
            "tests/golden/make_optim_golden.py"
        ),
        "versions": {
            "jax": jax.__version__,
            "optax": optax.__version__,
            "numpy": np.__version__,
            "ml_dtypes": ml_dtypes.__version__,
            "python": platform.python_version(),
        },
        "inputs": inputs,
        "cases": cases,
        "schedules": schedules,
        "dtypes": dtypes,
    }
    # One line per array: its dtype, shape and values.
    text = json.dumps(data, indent=1)
    for pattern in (
        r"\[\s+([^\[\]{}]*?)\s+\]",
        r"\[\s+(\"\w+\",\s+\[.*?\],\s+\[.*?\])\s+\]",
    ):
        text = re.sub(pattern, lambda m: "[" + " ".join(m.group(1).split()) + "]", text)
    OUT.write_text(text + "\n")
    print(f"wrote {len(cases)} cases, {len(schedules)} schedules to {OUT}")


if __name__ == "__main__":
    main()
