"""Record the dtypes, parameter names and shapes, and some values, of Flax
linen's recurrent layers (the cells, RNN and Bidirectional).

Run with a Python that has JAX and Flax installed, from anywhere::

    python tests/golden/make_rnn_golden.py

It writes ``rnn_layers.json`` beside this file; ``tests/test_rnn_golden.py``
builds the same layers with ``typelattice.nn`` and compares.

Two sections:

- ``dtypes``: for every layer of ``LAYERS``, every input dtype of
  ``make_nn_golden.INPUTS``, ``dtype`` in (None, bfloat16, float32) and
  ``param_dtype`` in (float32, bfloat16): the output's dtype code, the
  carry's leaves (``code[shape]``, in order) and every variable as
  ``collection/path/leaf -> code[shape]``; or ``!<Class>`` when Flax
  raises, and ``warned`` when it warns. With ``param_dtype=bfloat16`` the
  recurrent kernels are made orthogonal in float32 and cast (JAX has no
  bfloat16 QR; typelattice's ``orthogonal`` gives that). A cell runs one step from
  ``initialize_carry``; an RNN runs over the sequence with
  ``return_carry=True``.
- ``values``: float32 layers whose parameters (from Flax's init), input,
  initial carry (for cells), call keywords and outputs are stored, so that
  the same parameters can be applied elsewhere.
"""

from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np


def _nn_recorder() -> Any:
    """make_nn_golden.py beside this file: the dtype grid and the codes."""
    spec = importlib.util.spec_from_file_location(
        "_make_nn_golden", Path(__file__).with_name("make_nn_golden.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_NN = _nn_recorder()
INPUTS, DTYPES, PARAM_DTYPES, code = (
    _NN.INPUTS,
    _NN.DTYPES,
    _NN.PARAM_DTYPES,
    _NN.code,
)

OUT = Path(__file__).with_name("rnn_layers.json")

# name -> (cell class, cell arguments, input shape, RNN arguments or None
# for the cell alone). The input is (batch, features) for a cell and
# (batch, time, features) for an RNN; ConvLSTMCell's has spatial axes.
LAYERS: dict[str, tuple[str, dict[str, Any], list[int], dict[str, Any] | None]] = {
    "LSTMCell": ("LSTMCell", {"features": 3}, [2, 4], None),
    "OptimizedLSTMCell": ("OptimizedLSTMCell", {"features": 3}, [2, 4], None),
    "GRUCell": ("GRUCell", {"features": 3}, [2, 4], None),
    "MGUCell": ("MGUCell", {"features": 3}, [2, 4], None),
    "SimpleCell": ("SimpleCell", {"features": 3}, [2, 4], None),
    "ConvLSTMCell": (
        "ConvLSTMCell",
        {"features": 2, "kernel_size": [3, 3]},
        [1, 4, 4, 2],
        None,
    ),
    "RNN.LSTMCell": ("LSTMCell", {"features": 3}, [2, 3, 4], {}),
    "RNN.GRUCell": ("GRUCell", {"features": 3}, [2, 3, 4], {}),
    "RNN.SimpleCell": ("SimpleCell", {"features": 3}, [2, 3, 4], {}),
}

# name -> (cell class, cell arguments, input shape, call keywords); a name
# starting with "RNN" runs nn.RNN(cell, **rnn) with the call keywords, one
# starting with "Bidirectional" two RNNs of the cell. Values in float32.
VALUES: dict[str, tuple[str, dict[str, Any], list[int], dict[str, Any]]] = {
    "LSTMCell": ("LSTMCell", {"features": 3}, [2, 4], {}),
    "OptimizedLSTMCell": ("OptimizedLSTMCell", {"features": 3}, [2, 4], {}),
    "GRUCell": ("GRUCell", {"features": 3}, [2, 4], {}),
    "MGUCell": ("MGUCell", {"features": 3}, [2, 4], {}),
    "MGUCell.no_reset": ("MGUCell", {"features": 3, "reset_gate": False}, [2, 4], {}),
    "SimpleCell": ("SimpleCell", {"features": 3}, [2, 4], {}),
    "SimpleCell.residual": (
        "SimpleCell",
        {"features": 3, "residual": True},
        [2, 3],
        {},
    ),
    "ConvLSTMCell": (
        "ConvLSTMCell",
        {"features": 2, "kernel_size": [3, 3]},
        [1, 4, 5, 2],
        {},
    ),
    "RNN.LSTMCell": ("LSTMCell", {"features": 3}, [2, 5, 2], {}),
    "RNN.GRUCell.return_carry": (
        "GRUCell",
        {"features": 3},
        [2, 5, 2],
        {"return_carry": True},
    ),
    "RNN.LSTMCell.seq_lengths": (
        "LSTMCell",
        {"features": 3},
        [3, 5, 2],
        {"return_carry": True, "seq_lengths": [5, 2, 1]},
    ),
    "RNN.GRUCell.reverse": (
        "GRUCell",
        {"features": 3},
        [2, 5, 2],
        {"return_carry": True, "reverse": True},
    ),
    "RNN.GRUCell.reverse_keep_order_seq_lengths": (
        "GRUCell",
        {"features": 3},
        [3, 5, 2],
        {
            "return_carry": True,
            "reverse": True,
            "keep_order": True,
            "seq_lengths": [3, 5, 1],
        },
    ),
    "RNN.SimpleCell.time_major": (
        "SimpleCell",
        {"features": 3},
        [5, 2, 2],
        {"return_carry": True, "time_major": True},
    ),
    "RNN.ConvLSTMCell": (
        "ConvLSTMCell",
        {"features": 2, "kernel_size": [3]},
        [2, 3, 4, 1],
        {"return_carry": True},
    ),
    "Bidirectional.LSTMCell": (
        "LSTMCell",
        {"features": 2},
        [3, 4, 2],
        {"return_carry": True, "seq_lengths": [4, 2, 3]},
    ),
    "Bidirectional.GRUCell": ("GRUCell", {"features": 2}, [2, 4, 3], {}),
}


def layer_input(shape: list[int], dtype: str, phase: float = 0.3) -> np.ndarray:
    """A deterministic input: a smooth ramp (as make_nn_golden's)."""
    n = int(np.prod(shape))
    ramp = np.sin(np.arange(n, dtype=np.float64) * 0.7 + phase).reshape(shape) * 2
    if dtype == "int32":
        return np.round(ramp * 3).astype(np.int32)
    if dtype == "complex64":
        return (ramp + 1j * np.cos(np.arange(n) * 0.4).reshape(shape)).astype(dtype)
    return ramp.astype(dtype)


def main() -> None:
    import jax
    import jax.numpy as jnp
    from flax import linen as nn

    key = jax.random.PRNGKey(0)

    def describe(tree: Any) -> dict[str, str]:
        flat = jax.tree_util.tree_flatten_with_path(tree)[0]
        return {
            "/".join(str(k.key) for k in path): f"{code(leaf.dtype)}{list(leaf.shape)}"
            for path, leaf in flat
        }

    def leaves(tree: Any) -> list[str]:
        return [
            f"{code(x.dtype)}{list(x.shape)}" for x in jax.tree_util.tree_leaves(tree)
        ]

    def as_lists(tree: Any) -> Any:
        return jax.tree_util.tree_map(lambda a: np.asarray(a).tolist(), tree)

    def leaf_lists(tree: Any) -> list[Any]:
        # A carry as its leaves in order: (c, h), or ((c, h), (c, h)).
        return [np.asarray(a).tolist() for a in jax.tree_util.tree_leaves(tree)]

    def orthogonal_cast(key: Any, shape: Any, dtype: Any) -> Any:
        return nn.initializers.orthogonal()(key, shape, jnp.float32).astype(dtype)

    dtypes: dict[str, Any] = {}
    for name, (kind, kwargs, shape, rnn) in LAYERS.items():
        for mode, in_dtype in INPUTS:
            jax.config.update("jax_enable_x64", mode == "x64")
            for dtype in DTYPES:
                for param_dtype in PARAM_DTYPES:
                    cell_kwargs = dict(kwargs, dtype=dtype, param_dtype=param_dtype)
                    if param_dtype == "bfloat16" and kind != "ConvLSTMCell":
                        # JAX's QR has no bfloat16: the orthogonal default
                        # raises. Recorded with the orthogonal matrix made
                        # in float32 and cast, which is what typelattice's
                        # orthogonal gives in bfloat16.
                        cell_kwargs["recurrent_kernel_init"] = orthogonal_cast
                    cell = getattr(nn, kind)(**cell_kwargs)
                    x = jnp.asarray(layer_input(shape, in_dtype))
                    entry: dict[str, Any] = {}
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        try:
                            if rnn is None:
                                carry = cell.initialize_carry(key, x.shape)
                                variables = cell.init(key, carry, x)
                                carry, out = cell.apply(variables, carry, x)
                            else:
                                layer = nn.RNN(cell, return_carry=True, **rnn)
                                variables = layer.init(key, x)
                                carry, out = layer.apply(variables, x)
                        except Exception as e:
                            entry["out"] = "!" + next(
                                c.__name__
                                for c in type(e).__mro__
                                if c.__module__ == "builtins"
                            )
                            entry["message"] = str(e)[:200]
                        else:
                            entry["out"] = code(out.dtype)
                            entry["carry"] = leaves(carry)
                            entry["variables"] = describe(variables)
                    if caught:
                        entry["warned"] = str(caught[0].message)[:200]
                    dtypes[f"{name}|{mode}|{in_dtype}|{dtype}|{param_dtype}"] = entry
    jax.config.update("jax_enable_x64", False)

    values: dict[str, Any] = {}
    for name, (kind, kwargs, shape, call) in VALUES.items():
        x = layer_input(shape, "float32")
        call_args = {
            k: (jnp.asarray(v) if k == "seq_lengths" else v) for k, v in call.items()
        }
        entry = {"kind": kind, "kwargs": kwargs, "call": call, "x": x.tolist()}
        if name.startswith("RNN"):
            layer = nn.RNN(getattr(nn, kind)(**kwargs))
            variables = layer.init(key, x, **call_args)
            result = layer.apply(variables, x, **call_args)
        elif name.startswith("Bidirectional"):
            layer = nn.Bidirectional(
                nn.RNN(getattr(nn, kind)(**kwargs)), nn.RNN(getattr(nn, kind)(**kwargs))
            )
            variables = layer.init(key, x, **call_args)
            result = layer.apply(variables, x, **call_args)
        else:
            cell = getattr(nn, kind)(**kwargs)
            # A carry that is not zeros, so that the recurrent kernels count.
            carry = jax.tree_util.tree_map(
                lambda c: jnp.asarray(layer_input(list(c.shape), "float32", 1.1) / 2),
                cell.initialize_carry(key, x.shape),
            )
            variables = cell.init(key, carry, x)
            result = cell.apply(variables, carry, x)
            entry["carry"] = leaf_lists(carry)
        if call.get("return_carry") or not (name.startswith(("RNN", "Bidirectional"))):
            new_carry, out = result
            entry["new_carry"] = leaf_lists(new_carry)
        else:
            out = result
        entry["variables"] = as_lists(variables)
        entry["out"] = np.asarray(out).tolist()
        values[name] = entry

    record = {
        "jax": jax.__version__,
        "flax": __import__("flax").__version__,
        "dtypes": dtypes,
        "values": values,
    }
    OUT.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({len(dtypes)} layer cases, {len(values)} value cases)")


if __name__ == "__main__":
    main()
