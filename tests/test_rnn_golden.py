"""typelattice.nn's recurrent layers against Flax linen's: output, carry and
parameter dtypes, parameter names and shapes, and values on given
parameters (cells, RNN with seq_lengths/return_carry/reverse/keep_order,
Bidirectional).

``golden/rnn_layers.json`` was recorded from Flax by
``golden/make_rnn_golden.py``, which defines the cases and the encoding.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import nn, random
from typelattice._tracing import tree

GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "rnn_layers.json").read_text())
REC = recorder("make_rnn_golden.py")
CODES = {np.dtype(k): v for k, v in REC._NN._CODES.items()}


def code(x: Any) -> str:
    return f"{CODES[x.dtype]}{list(x.shape)}"


def describe(variables: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in variables.items():
        if isinstance(v, dict):
            out.update(describe(v, f"{prefix}{k}/"))
        else:
            out[f"{prefix}{k}"] = code(v)
    return out


def run_case(key: str) -> dict[str, Any]:
    """The case built with typelattice.nn, encoded as the recorder does."""
    name, mode, in_dtype, dtype, param_dtype = key.split("|")
    kind, kwargs, shape, rnn = REC.LAYERS[name]
    cell = getattr(nn, kind)(
        **kwargs, dtype=None if dtype == "None" else dtype, param_dtype=param_dtype
    )
    k = random.key(0)
    with tl.enable_x64(mode == "x64"):
        x = tnp.asarray(REC.layer_input(shape, in_dtype))
        try:
            if rnn is None:
                carry = cell.initialize_carry(k, x.shape)
                variables = cell.init(k, carry, x)
                carry, out = cell.apply(variables, carry, x)
            else:
                layer = nn.RNN(cell, return_carry=True, **rnn)
                variables = layer.init(k, x)
                carry, out = layer.apply(variables, x)
        except Exception as e:
            builtin = next(c for c in type(e).__mro__ if c.__module__ == "builtins")
            return {"out": "!" + builtin.__name__}
    return {
        "out": CODES[out.dtype],
        "carry": [code(c) for c in tree.leaves(carry)],
        "variables": describe(variables),
    }


def expected(key: str) -> tuple[dict[str, Any], str | None]:
    """Flax's answer with the deliberate difference applied, and its reason."""
    flax = GOLDEN["dtypes"][key]
    if "warned" in flax:
        # Flax warns and drops the imaginary part; no layer may drop a
        # component (docs/semantics.md, "Data safety").
        return {"out": "!TypeError"}, "complex input with a real dtype raises"
    return {k: v for k, v in flax.items() if k in ("out", "carry", "variables")}, None


CASES = sorted(GOLDEN["dtypes"])


@pytest.mark.parametrize("key", CASES)
def test_recurrent_dtypes_match_flax(key: str) -> None:
    want, _reason = expected(key)
    assert run_case(key) == want


def test_the_recorded_cases_cover_every_layer_input_and_dtype() -> None:
    for name in REC.LAYERS:
        keys = [k for k in CASES if k.split("|")[0] == name]
        assert len(keys) == len(REC.INPUTS) * len(REC.DTYPES) * len(REC.PARAM_DTYPES)


def test_a_carry_that_changes_dtype_raises_as_a_scan_does() -> None:
    # SimpleCell's carry is its output: computed in bfloat16, it cannot
    # follow a float32 initial carry (Flax's scan raises a TypeError too).
    layer = nn.RNN(nn.SimpleCell(3, dtype="bfloat16"))
    x = tnp.ones((2, 4, 3))
    with pytest.raises(TypeError, match="param_dtype equal to its dtype"):
        layer.init(random.key(0), x)
    same = nn.RNN(nn.SimpleCell(3, dtype="bfloat16", param_dtype="bfloat16"))
    assert same.apply(same.init(random.key(0), x), x).dtype == tnp.bfloat16


VALUE_CASES = sorted(GOLDEN["values"])


def _tree(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _tree(v) for k, v in value.items()}
    return tnp.asarray(np.asarray(value, dtype=np.float32))


def _layer(case: dict[str, Any], name: str) -> nn.Module:
    def cell() -> nn.Module:
        return getattr(nn, case["kind"])(**case["kwargs"])

    if name.startswith("RNN"):
        return nn.RNN(cell())
    if name.startswith("Bidirectional"):
        return nn.Bidirectional(nn.RNN(cell()), nn.RNN(cell()))
    return cell()


def _close(ours: Any, flax: Any) -> None:
    np.testing.assert_allclose(
        np.asarray(ours), np.asarray(flax, dtype=np.float32), rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("name", VALUE_CASES)
def test_recurrent_values_match_flax_on_the_same_parameters(name: str) -> None:
    case = GOLDEN["values"][name]
    layer = _layer(case, name)
    variables = _tree(case["variables"])
    x = tnp.asarray(np.asarray(case["x"], dtype=np.float32))
    call = {
        k: (tnp.asarray(v) if k == "seq_lengths" else v)
        for k, v in case["call"].items()
    }
    if "carry" in case:  # a cell: one step from the recorded carry
        assert isinstance(layer, nn.RNNCellBase)
        _, treedef = tree.flatten(layer.initialize_carry(random.key(0), x.shape))
        carry = tree.unflatten(treedef, [_tree(c) for c in case["carry"]])
        ours = layer.init(random.key(0), carry, x)
        result = layer.apply(variables, carry, x)
    else:
        ours = layer.init(random.key(0), x, **call)
        result = layer.apply(variables, x, **call)
    # Our parameter names and shapes are Flax's.
    assert describe(ours) == describe(variables)
    if "new_carry" in case:
        new_carry, out = result
        leaves = tree.leaves(new_carry)
        assert len(leaves) == len(case["new_carry"])
        for mine, theirs in zip(leaves, case["new_carry"], strict=True):
            _close(mine, theirs)
    else:
        out = result
    _close(out, case["out"])
