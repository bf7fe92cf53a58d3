"""The summary table, the new layers, the captured intermediates and the
partition specs against Flax linen's.

``golden/nn_api.json`` was recorded from Flax by
``golden/make_nn_api_golden.py``, whose model builders take the ``nn``
module: the same code builds the models here with ``typelattice.nn``.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice import nn, random

GOLDEN_DIR = Path(__file__).parent / "golden"
GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "nn_api.json").read_text())


def _recorder() -> ModuleType:
    path = GOLDEN_DIR / "make_nn_api_golden.py"
    spec = importlib.util.spec_from_file_location("make_nn_api_golden", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # (dataclasses read their string annotations through sys.modules)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


RECORDER = _recorder()


def _array(record: dict[str, Any]) -> Any:
    return tnp.asarray(np.asarray(record["values"]), dtype=record["dtype"])


def _tree(record: Any) -> Any:
    if isinstance(record, dict) and "values" not in record:
        return {k: _tree(v) for k, v in record.items()}
    if isinstance(record, list):
        return [_tree(v) for v in record]
    return _array(record)


def _columns_by_name(lines: list[str]) -> list[str]:
    """The table with its variable collections' columns in name order:
    Flax orders them as a set of their names iterates, which changes from
    one process to the next (typelattice: by name)."""
    header = next(i for i, line in enumerate(lines) if line.startswith("┃"))
    cuts = [i for i, ch in enumerate(lines[header]) if ch == "┃"]
    names = [lines[header][a + 1 : b].strip() for a, b in itertools.pairwise(cuts)]
    order = [*range(4), *sorted(range(4, len(names)), key=lambda i: names[i])]
    out = []
    for line in lines:
        if len(line) != cuts[-1] + 1 or line[0] not in "┏┃┡│├└":
            out.append(line)  # (the title, the caption, blank lines)
            continue
        cells = [line[a + 1 : b] for a, b in itertools.pairwise(cuts)]
        seps = [line[c] for c in cuts]
        out.append(
            seps[0] + "".join(cells[i] + seps[k + 1] for k, i in enumerate(order))
        )
    return out


@pytest.mark.parametrize("name", sorted(GOLDEN["tabulate"]))
def test_tabulate_prints_flax_table(name: str) -> None:
    model, specs, kwargs = RECORDER.tabulate_models(nn)[name]
    xs = [tnp.ones(shape, dtype) for shape, dtype in specs]
    text = model.tabulate(random.key(0), *xs, **kwargs)
    got = [line.rstrip() for line in text.split("\n")]
    want = _columns_by_name(GOLDEN["tabulate"][name])
    assert got == want, "\n".join(["got:", *got, "flax:", *want])


def test_tabulate_function_form_and_refusals() -> None:
    model, specs, _ = RECORDER.tabulate_models(nn)["deep"]
    xs = [tnp.ones(shape, dtype) for shape, dtype in specs]
    via_function = nn.tabulate(model, random.key(0))(*xs)
    assert via_function == model.tabulate(random.key(0), *xs)
    encode = nn.tabulate(model, random.key(0), method="encode")(*xs)
    assert "Deep (encode)" in encode
    with pytest.raises(NotImplementedError, match="compute_flops"):
        model.tabulate(random.key(0), *xs, compute_flops=True)


def _layer(name: str) -> tuple[Any, dict[str, Any]]:
    layer, _, _ = RECORDER.layer_cases(nn)[name]
    return layer, GOLDEN["layers"][name]


def _apply(layer: Any, variables: Any, xs: list[Any], kwargs: dict[str, Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (SelfAttention)
        if "update_stats" in kwargs:
            return layer.apply(variables, *xs, mutable=["batch_stats"], **kwargs)
        return layer.apply(variables, *xs, **kwargs), None


@pytest.mark.parametrize("name", sorted(GOLDEN["layers"]))
def test_layer_values_match_flax_on_the_same_variables(name: str) -> None:
    layer, case = _layer(name)
    xs = [_array(x) for x in case["inputs"]]
    variables = _tree(case["variables"])
    y, updated = _apply(layer, variables, xs, case["kwargs"])
    want = case["output"]
    assert str(y.dtype) == want["dtype"] and list(y.shape) == want["shape"]
    tol = 2e-2 if want["dtype"] == "bfloat16" else 2e-5
    np.testing.assert_allclose(
        np.asarray(y, dtype=np.float64), want["values"], rtol=tol, atol=tol
    )
    if updated is not None:
        for key, record in case["updated"]["batch_stats"].items():
            got = updated["batch_stats"][key]
            np.testing.assert_allclose(
                np.asarray(got, dtype=np.float64),
                record["values"],
                rtol=2e-5,
                atol=2e-6,
            )

    # jit gives the same answer.
    def run(v: Any, *a: Any) -> Any:
        return _apply(layer, v, list(a), case["kwargs"])[0]

    np.testing.assert_allclose(
        np.asarray(tl.jit(run)(variables, *xs), dtype=np.float64),
        np.asarray(y, dtype=np.float64),
        rtol=1e-6,
        atol=1e-6,
    )


@pytest.mark.parametrize("name", sorted(GOLDEN["layers"]))
def test_layer_variables_have_flax_names_shapes_and_dtypes(name: str) -> None:
    layer, case = _layer(name)
    xs = [_array(x) for x in case["inputs"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        variables = layer.init(random.key(0), *xs, **case["kwargs"])

    def describe(t: Any) -> Any:
        if isinstance(t, dict) and "values" not in t:
            return {k: describe(v) for k, v in t.items()}
        if isinstance(t, dict):
            return (t["dtype"], tuple(t["shape"]))
        return (str(t.dtype), tuple(t.shape))

    assert describe(variables) == describe(case["variables"])


# Where typelattice answers otherwise than Flax, on purpose (docs/nn.md).
DIFFERENCES: dict[str, Any] = {}


@pytest.mark.parametrize("key", sorted(GOLDEN["dtypes"]))
def test_layer_dtypes_match_flax(key: str) -> None:
    name, x_dtype, dtype, param_dtype = key.split("|")
    build, shape, kwargs = RECORDER.dtype_layers(nn)[name]
    layer = build(dtype=None if dtype == "None" else dtype, param_dtype=param_dtype)
    x = tnp.ones(shape, x_dtype)
    try:
        v = layer.init(random.key(0), x, **kwargs)
        y, _ = layer.apply(v, x, mutable=True, **kwargs)
    except Exception as e:  # noqa: BLE001  (compared with Flax's)
        got: Any = "!" + type(e).__name__
    else:
        leaves = tl.tree_util.tree_flatten_with_path(v)[0]
        got = {
            "out": str(y.dtype),
            "variables": {
                tl.tree_util.keystr(p, simple=True, separator="/"): str(a.dtype)
                for p, a in leaves
            },
        }
    assert got == DIFFERENCES.get(key, GOLDEN["dtypes"][key])


def test_capture_intermediates_keeps_what_flax_keeps() -> None:
    model = RECORDER.intermediates_model(nn)
    x = tnp.ones((4, 2))
    v = model.init(random.key(0), x)
    _, state = model.apply(v, x, capture_intermediates=True)
    shapes = tl.tree_util.tree_map(lambda a: list(a.shape), state)
    assert shapes == {
        c: {k: _as_lists(t) for k, t in tree.items()}
        for c, tree in GOLDEN["intermediates"].items()
    }


def _as_lists(t: Any) -> Any:
    if isinstance(t, dict):
        return {k: _as_lists(v) for k, v in t.items()}
    return tuple(t) if isinstance(t, list) and t and isinstance(t[0], list) else t


def test_partition_specs_match_flax() -> None:
    model = RECORDER.tabulate_models(nn)["sharded"][0]
    v = model.init(random.key(0), tnp.ones((2, 3)))
    specs = tl.tree_util.tree_map(
        list, nn.get_partition_spec(v), is_leaf=lambda s: isinstance(s, tuple)
    )
    assert specs == GOLDEN["partitioning"]["spec"]
    for names, rules, want in GOLDEN["partitioning"]["logical"]:
        got = nn.logical_to_mesh_axes(
            names, [(a, tuple(b) if isinstance(b, list) else b) for a, b in rules]
        )
        assert [list(g) if isinstance(g, tuple) else g for g in got] == want


@pytest.mark.parametrize("name", sorted(GOLDEN["share_scope"]))
def test_share_scope_puts_variables_where_flax_does(name: str) -> None:
    model = RECORDER.share_scope_models(nn)[name]
    x = tnp.ones((1, 3))
    v = model.init(random.key(0), x)
    shapes = tl.tree_util.tree_map(lambda a: list(a.shape), v)
    assert shapes == GOLDEN["share_scope"][name]["shapes"]
    y = model.apply(v, x)
    assert list(y.shape) == GOLDEN["share_scope"][name]["output_shape"]
    # The shared parameters are the ones used: the low-rank term adds
    # x @ A @ B (all ones here: 3 per output) to the base layer's output.
    params = v["params"][next(iter(v["params"]))]
    base = x @ params["kernel"] + params["bias"]
    np.testing.assert_allclose(y, base + 3.0, rtol=1e-6)
    with pytest.raises(ValueError, match="share_scope"):
        nn.share_scope(nn.Dense(1), nn.Dense(1))
