"""Record the bytes Flax's serialization writes for a few trees.

Run with a Python that has JAX, Flax, optax and msgpack installed::

    python tests/golden/make_flax_serialization_golden.py

It writes ``flax_bytes/<name>.msgpack`` (the bytes of Flax's ``to_bytes``,
or ``msgpack_serialize`` for the ``sorted`` case; the ``chunked`` case with
``MAX_CHUNK_SIZE`` set to ``chunk_size``) and
``flax_serialization.json`` beside this file: per case, the tree in a JSON
form that ``tests/test_flax_serialization.py`` rebuilds with typelattice
(no JAX or Flax needed there), and the hash of the bytes. The test checks
that typelattice writes the same bytes for the same tree and reads Flax's
bytes back to the same values and dtypes.

A node of the JSON form is one of

- ``["array", dtype name, shape, hex of the C-order bytes]`` (a jax or NumPy
  array),
- ``["npscalar", dtype name, hex of the bytes]``,
- ``["dict", [[key, node], ...]]`` (in the dict's order),
- ``["list", [node, ...]]``, ``["tuple", [node, ...]]``,
- ``["namedtuple", class name, [[field, node], ...]]``,
- ``["struct", class name, [[field, node], ...]]`` (a ``TrainState``: its
  pytree fields; its static fields are functions, not saved),
- ``["complex", real, imag]``, or a JSON number, string, boolean or null.
"""

from __future__ import annotations

import hashlib
import json
import platform
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

HERE = Path(__file__).parent
OUT = HERE / "flax_serialization.json"
BYTES = HERE / "flax_bytes"

#: The chunk limit (bytes) the ``chunked`` case is written with.
CHUNK = 16


# A Flax program, as a user writes it: the recorder runs it with Flax (its
# initial parameters and the losses of a few SGD steps are recorded), and
# tests/test_port.py runs it rewritten by `typelattice port`, from Flax's
# parameters, and compares the losses.
FLAX_PROGRAM = """\
import jax
import jax.numpy as jnp
from jax import random
import flax.linen as nn
from flax import serialization, struct
from flax.core import freeze, unfreeze
from flax.training import train_state


class MLP(nn.Module):
    features: int = 4

    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Dense(self.features)(x))
        return nn.Dense(1, kernel_init=nn.initializers.lecun_normal())(x)


@struct.dataclass
class Batch:
    x: jax.Array
    y: jax.Array


def train(tx, steps=5, params_bytes=None):
    model = MLP()
    xs = jnp.linspace(-1.0, 1.0, 24).reshape(8, 3)
    batch = Batch(xs, jnp.sin(xs.sum(axis=1, keepdims=True)))
    params = freeze(model.init(random.key(0), batch.x)["params"])
    if params_bytes is not None:
        params = serialization.from_bytes(params, params_bytes)
    state = train_state.TrainState.create(
        apply_fn=model.apply, params=unfreeze(params), tx=tx
    )

    @jax.jit
    def step(state, batch):
        def loss_fn(p):
            return jnp.mean((state.apply_fn({"params": p}, batch.x) - batch.y) ** 2)

        loss, grads = jax.value_and_grad(loss_fn)(state.params)
        return state.apply_gradients(grads=grads), loss

    losses = []
    for _ in range(steps):
        state, loss = step(state, batch)
        losses.append(float(loss))
    return state, losses
"""

PROGRAM_STEPS = 5
PROGRAM_LEARNING_RATE = 0.1


def run_program() -> tuple[bytes, list[float]]:
    """Flax's initial parameters (bytes) and losses of FLAX_PROGRAM."""
    import sys
    import types

    import optax
    from flax import serialization

    module = types.ModuleType("flax_program")
    sys.modules["flax_program"] = module
    exec(compile(FLAX_PROGRAM, "<flax program>", "exec"), module.__dict__)
    state, _ = module.train(optax.sgd(PROGRAM_LEARNING_RATE), 0)
    params = serialization.to_bytes(state.params)
    _, losses = module.train(optax.sgd(PROGRAM_LEARNING_RATE), PROGRAM_STEPS, params)
    return params, losses


def values(shape: tuple[int, ...], dtype: Any, offset: float = 0.0) -> np.ndarray:
    """Fixed values of ``dtype`` with fractions and signs (exact in it)."""
    n = int(np.prod(shape))
    raw = (np.arange(n, dtype=np.float64) - n / 3 + offset) * 0.75
    if np.dtype(dtype).kind in "iub":
        raw = np.round(raw * 4)
    if np.dtype(dtype).kind == "b":
        return (np.arange(n) % 3 == 0).reshape(shape)
    if np.dtype(dtype).kind == "u":
        raw = np.abs(raw)
    return raw.astype(dtype).reshape(shape)


def encode(x: Any) -> Any:
    import jax
    from flax import struct

    if isinstance(x, jax.Array | np.ndarray):
        a = np.asarray(x)
        return ["array", a.dtype.name, list(a.shape), a.tobytes("C").hex()]
    if isinstance(x, np.generic):
        return ["npscalar", np.asarray(x).dtype.name, np.asarray(x).tobytes().hex()]
    if isinstance(x, complex):
        return ["complex", x.real, x.imag]
    if isinstance(x, dict):
        return ["dict", [[k, encode(v)] for k, v in x.items()]]
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return [
            "namedtuple",
            type(x).__name__,
            [[f, encode(getattr(x, f))] for f in x._fields],
        ]
    if isinstance(x, tuple):
        return ["tuple", [encode(v) for v in x]]
    if isinstance(x, list):
        return ["list", [encode(v) for v in x]]
    if isinstance(x, struct.PyTreeNode):
        names = [
            f.name
            for f in x.__dataclass_fields__.values()
            if f.metadata.get("pytree_node", True)
        ]
        return ["struct", type(x).__name__, [[n, encode(getattr(x, n))] for n in names]]
    assert x is None or isinstance(x, bool | int | float | str), type(x)
    return x


def cases() -> dict[str, tuple[Any, str]]:
    """name -> (tree, how it is written: 'to_bytes' or 'msgpack_serialize')."""
    import jax
    import jax.numpy as jnp
    import optax
    from flax import linen as nn
    from flax.training import train_state

    params = {
        "Dense_0": {
            "kernel": jnp.asarray(values((2, 3), np.float32)),
            "bias": jnp.asarray(values((3,), np.float32, 1.0)),
        },
        "embedding": jnp.asarray(values((4, 2), jnp.bfloat16)),
        "half": jnp.asarray(values((3,), np.float16, 0.5)),
        "count": jnp.asarray(7, jnp.int32),
        "nested": {
            "deep": {
                "ids": jnp.asarray(values((2, 2), np.int32)),
                "flag": jnp.asarray(values((2,), np.bool_)),
            }
        },
    }

    model = nn.Dense(2)
    x = jnp.asarray(values((3, 2), np.float32))
    variables = model.init(jax.random.key(0), x)
    state = train_state.TrainState.create(
        apply_fn=model.apply, params=variables["params"], tx=optax.adam(1e-2)
    )

    @jax.jit
    def step(state: Any) -> Any:
        def loss(p: Any) -> Any:
            return jnp.mean(state.apply_fn({"params": p}, x) ** 2)

        return state.apply_gradients(grads=jax.grad(loss)(state.params))

    state = step(step(state))

    mixed = {
        "tuple": (1, 2.5),
        "list": [True, None, "text"],
        "complex": 1.5 - 2j,
        "np_scalar": np.float32(1.25),
        "float64": values((2,), np.float64),
        "uint8": values((3,), np.uint8),
        "f8e4m3": values((3,), ml_dtypes.float8_e4m3fn),
        "int64_big": -(2**40),
        "empty": {},
    }
    # msgpack_serialize without in_place rebuilds the tree with jax's
    # tree_map first: the dicts come out with sorted keys.
    unsorted = {"b": jnp.asarray([1.0, 2.0]), "a": {"z": 1, "y": 2.0}}
    # Arrays over MAX_CHUNK_SIZE bytes are written in chunks (recorded with a
    # limit of CHUNK bytes: the test sets the same).
    chunked = {"big": jnp.asarray(values((3, 5), np.float32)), "small": 1}
    return {
        "params": (params, "to_bytes"),
        "train_state": (state, "to_bytes"),
        "mixed": (mixed, "to_bytes"),
        "sorted": (unsorted, "msgpack_serialize"),
        "chunked": (chunked, "to_bytes"),
    }


def main() -> None:
    import flax
    import jax
    import msgpack
    import optax
    from flax import serialization

    BYTES.mkdir(exist_ok=True)
    record: dict[str, Any] = {
        "versions": {
            "flax": flax.__version__,
            "jax": jax.__version__,
            "optax": optax.__version__,
            "msgpack": ".".join(map(str, msgpack.version)),
            "python": platform.python_version(),
        },
        "cases": {},
    }
    for name, (tree, how) in cases().items():
        limit = serialization.MAX_CHUNK_SIZE
        if name == "chunked":
            serialization.MAX_CHUNK_SIZE = CHUNK
        try:
            if how == "to_bytes":
                data = serialization.to_bytes(tree)
            else:
                data = serialization.msgpack_serialize(tree)
        finally:
            serialization.MAX_CHUNK_SIZE = limit
        (BYTES / f"{name}.msgpack").write_bytes(data)
        record["cases"][name] = {
            "written_by": how,
            "tree": encode(tree),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    params, losses = run_program()
    (BYTES / "program_params.msgpack").write_bytes(params)
    record["program"] = {
        "steps": PROGRAM_STEPS,
        "learning_rate": PROGRAM_LEARNING_RATE,
        "losses": losses,
    }
    record["chunk_size"] = CHUNK
    OUT.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {OUT} and {len(record['cases'])} files in {BYTES}")


if __name__ == "__main__":
    main()
