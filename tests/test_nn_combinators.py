"""Sequential, ConvLocal, PReLU, combine_masks and the factory initialisers against
Flax linen's (``golden/nn_combinators.json``, recorded by
``golden/make_nn_combinators_golden.py``): parameter names, shapes and
dtypes, and outputs on Flax's parameter values."""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import nn, random

GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "nn_combinators.json").read_text())


def _recorder() -> ModuleType:
    return recorder("make_nn_combinators_golden.py")


REC = _recorder()
CASES = GOLDEN["cases"]


def _layout(tree: Any) -> Any:
    """Names, dtype codes and shapes (no values) of a tree."""
    if isinstance(tree, dict):
        return {k: _layout(v) for k, v in tree.items()}
    if isinstance(tree, list):  # an encoded array
        return tree[:2]
    return REC.encode(tree)[:2]


def _decode(tree: Any) -> Any:
    """Encoded parameters as strong arrays."""
    if isinstance(tree, dict):
        return {k: _decode(v) for k, v in tree.items()}
    code, shape, values = tree
    dt = REC.NP_DTYPES[code.removeprefix("w:")]
    return tnp.asarray(np.asarray(values, np.float64).astype(dt).reshape(shape))


def _same(got: Any, want: list[Any], narrow: bool) -> None:
    assert REC.encode(got)[:2] == want[:2], (REC.encode(got)[:2], want[:2])
    tol = 2e-2 if narrow else 1e-6
    np.testing.assert_allclose(
        np.asarray(got, np.float64).ravel(), want[2], rtol=tol, atol=tol
    )


def _model(kind: str, name: str, pd: str) -> Any:
    if kind in ("sequential", "conv_local"):
        factory, _ = {**REC.SEQUENTIAL, **REC.CONV_LOCAL}[name]
        return factory(nn, REC.NP_DTYPES[pd])
    return nn.PReLU(param_dtype=REC.NP_DTYPES[pd], negative_slope_init=float(name))


LAYER_CASES = [
    k for k in CASES if k.split("|")[0] in ("sequential", "conv_local", "prelu")
]


@pytest.mark.parametrize("key", LAYER_CASES)
def test_layer_matches_flax(key: str) -> None:
    kind, name, pd, code = key.split("|")
    layers = {**REC.SEQUENTIAL, **REC.CONV_LOCAL}
    shape = layers[name][1] if name in layers else (2, 3)
    x = tnp.asarray(REC.layer_input(code, shape))
    model = _model(kind, name, pd)
    want = CASES[key]
    variables = model.init(random.key(0), x)
    assert _layout(variables["params"]) == _layout(want["params"])
    params = {"params": _decode(want["params"])}
    narrow = "bf" in (pd, code)
    _same(model.apply(params, x), want["out"], narrow)
    _same(tl.jit(model.apply)(params, x), want["out"], narrow)


@pytest.mark.parametrize("key", [k for k in CASES if k.startswith("combine_masks")])
def test_combine_masks_matches_flax(key: str) -> None:
    _, name, code = key.split("|")
    masks = [None if m is None else tnp.asarray(m) for m in REC.MASKS[name]]
    _same(nn.combine_masks(*masks, dtype=REC.NP_DTYPES[code]), CASES[key]["out"], False)


@pytest.mark.parametrize("key", [k for k in CASES if k.startswith("init")])
def test_factory_initializers_match_flax(key: str) -> None:
    _, name, code = key.split("|")
    init = getattr(nn.initializers, name)()
    _same(init(random.key(0), (2, 3), REC.NP_DTYPES[code]), CASES[key]["out"], False)


def test_combine_masks_of_nothing_is_none_and_ranks_must_agree() -> None:
    assert nn.combine_masks(None, None) is None
    with pytest.raises(ValueError, match="same rank"):
        nn.combine_masks(tnp.ones((2,)), tnp.ones((1, 2)))


def test_sequential_refuses_no_layers() -> None:
    with pytest.raises(ValueError, match="no layers"):
        nn.Sequential([]).init(random.key(0), tnp.ones(2))
    with pytest.raises(ValueError, match="must be a sequence"):
        nn.Sequential(nn.relu)  # type: ignore[arg-type]


def test_sequential_passes_dicts_as_keywords_and_differentiates() -> None:
    model = nn.Sequential(
        [lambda x: {"a": x, "b": 3.0}, lambda a, b: a * b, nn.Dense(1)]
    )
    x = tnp.ones((2, 3))
    variables = model.init(random.key(0), x)

    def loss(v: Any) -> Any:
        return tnp.sum(model.apply(v, x))

    grads = tl.grad(loss)(variables)
    kernel = grads["params"]["layers_2"]["kernel"]
    np.testing.assert_allclose(np.asarray(kernel), np.full((3, 1), 6.0))


def test_prelu_slope_is_learned() -> None:
    layer = nn.PReLU()
    x = tnp.asarray([-2.0, 1.0, -3.0])
    variables = layer.init(random.key(0), x)
    g = tl.grad(lambda v: tnp.sum(layer.apply(v, x)))(variables)
    assert float(g["params"]["negative_slope"]) == -5.0
