"""Typed keys (``random.key``, dtype ``key<fry>``) and raw keys
(``random.PRNGKey``, uint32[2]): their shapes, dtypes and errors through
``jit``, ``vmap``, ``grad`` and ``eval_shape`` against ``golden/keys.json``
(recorded from JAX by ``golden/make_key_golden.py``), and the same numbers
from both forms."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from support import GOLDEN_DIR, recorder
from typelattice import random, tree_util

GOLDEN: dict[str, Any] = json.loads((GOLDEN_DIR / "keys.json").read_text())["cases"]
rec = recorder("make_key_golden.py")
ENV = rec.names(tl, tnp, random)


@pytest.mark.parametrize("expr", rec.CASES)
def test_keys_look_as_in_jax(expr: str) -> None:
    assert rec.encode(rec.evaluate(expr, ENV)) == GOLDEN[expr]


def _words(x: Any) -> list[Any]:
    return np.asarray(random.key_data(x)).tolist()


def test_typed_and_raw_keys_give_the_same_numbers() -> None:
    k, r = random.key(7), random.PRNGKey(7)
    assert _words(k) == np.asarray(r).tolist()
    for draw in (
        lambda key: random.normal(key, (4,)),
        lambda key: random.uniform(key, (3,), "bfloat16"),
        lambda key: random.randint(key, (5,), 0, 100),
        lambda key: random.bernoulli(key, 0.5, (6,)),
        lambda key: random.permutation(key, 6),
    ):
        np.testing.assert_array_equal(np.asarray(draw(k)), np.asarray(draw(r)))
    assert _words(random.split(k, 3)) == np.asarray(random.split(r, 3)).tolist()
    assert _words(random.fold_in(k, 5)) == np.asarray(random.fold_in(r, 5)).tolist()


def test_transformations_give_the_eager_keys_and_numbers() -> None:
    ks = random.split(random.key(3), 4)
    eager = [np.asarray(random.normal(key, (2,))) for key in ks]
    batched = tl.vmap(lambda key: random.normal(key, (2,)))(ks)
    np.testing.assert_array_equal(np.asarray(batched), np.stack(eager))
    jitted = tl.jit(lambda key: random.split(key, 2))(ks[1])
    assert _words(jitted) == _words(random.split(ks[1], 2))
    g = tl.grad(lambda x, key: (x * random.normal(key, (2,))).sum())(tnp.ones(2), ks[0])
    np.testing.assert_array_equal(np.asarray(g), eager[0])


def test_indexing_and_iteration() -> None:
    ks = random.split(random.key(0), (2, 3))
    assert ks[1, 2].shape == () and ks[:, 0].shape == (2,) and ks[..., 1].shape == (2,)
    assert _words(ks[1, 2]) == _words(ks)[1][2]
    a, b = ks
    assert a.shape == (3,) and bool((b == ks[1]).all())
    with pytest.raises(IndexError, match="too many indices"):
        random.key(0)[0]
    with pytest.raises(TypeError, match="one key"):
        iter(random.key(0))
    assert ks.reshape(6).shape == (6,) and _words(ks.reshape(6)[4]) == _words(ks[1, 1])


def test_a_key_array_is_a_pytree_of_its_words() -> None:
    # The documented difference from JAX (where a key array is a leaf).
    k = random.key(4)
    leaves, structure = tree_util.tree_flatten({"rng": k})
    assert len(leaves) == 1 and leaves[0].dtype == np.uint32 and leaves[0].shape == (2,)
    rebuilt = tree_util.tree_unflatten(structure, leaves)["rng"]
    assert isinstance(rebuilt, random.KeyArray) and _words(rebuilt) == _words(k)


def test_wrap_key_data_checks_impl() -> None:
    data = random.key_data(random.key(1))
    assert random.wrap_key_data(data, impl="threefry2x32").shape == ()
    with pytest.raises(ValueError, match="impl='rbg'"):
        random.wrap_key_data(data, impl="rbg")
    with pytest.raises(TypeError, match="key"):
        random.key_impl(tnp.zeros(3))
