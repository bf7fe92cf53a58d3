"""The public namespaces hold exactly their ``__all__``: no helper, no
imported module, no ``annotations`` left over from ``from __future__``."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import pytest

import typelattice

PUBLIC_MODULES = [
    "typelattice",
    "typelattice.ad_checkpoint",
    "typelattice.custom_derivatives",
    "typelattice.experimental",
    "typelattice.experimental.mesh_utils",
    "typelattice.flax",
    "typelattice.flax.core",
    "typelattice.flax.core.frozen_dict",
    "typelattice.flax.errors",
    "typelattice.flax.jax_utils",
    "typelattice.flax.linen",
    "typelattice.flax.linen.initializers",
    "typelattice.flax.linen.meta",
    "typelattice.flax.linen.module",
    "typelattice.flax.linen.partitioning",
    "typelattice.flax.linen.recurrent",
    "typelattice.flax.linen.spmd",
    "typelattice.flax.linen.transforms",
    "typelattice.flax.metrics",
    "typelattice.flax.metrics.tensorboard",
    "typelattice.flax.serialization",
    "typelattice.flax.struct",
    "typelattice.flax.training",
    "typelattice.flax.training.checkpoints",
    "typelattice.flax.training.common_utils",
    "typelattice.flax.training.dynamic_scale",
    "typelattice.flax.training.train_state",
    "typelattice.lax",
    "typelattice.lax.linalg",
    "typelattice.nn",
    "typelattice.nn.initializers",
    "typelattice.nn.meta",
    "typelattice.nn.recurrent",
    "typelattice.nn.transforms",
    "typelattice.numpy",
    "typelattice.optax",
    "typelattice.optim",
    "typelattice.random",
    "typelattice.sharding",
    "typelattice.tree",
    "typelattice.tree_util",
    "typelattice.typing",
]


def public_names(module: ModuleType, names: object) -> set[str]:
    """The names without a leading underscore, public submodules left out
    (``typelattice.numpy`` is an attribute of ``typelattice`` once imported,
    and stays out of ``__all__`` so that ``import *`` cannot shadow NumPy)."""
    assert isinstance(names, list | dict)
    return {
        name
        for name in names
        if not name.startswith("_")
        and not (
            isinstance(value := getattr(module, name), ModuleType)
            and value.__name__ == f"{module.__name__}.{name}"
        )
    }


def test_the_public_modules_are_the_ones_checked() -> None:
    found = {"typelattice"} | {
        info.name
        for info in pkgutil.walk_packages(typelattice.__path__, "typelattice.")
        if not any(part.startswith("_") for part in info.name.split("."))
    }
    assert found == set(PUBLIC_MODULES)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_all_lists_exactly_the_public_names(name: str) -> None:
    module = importlib.import_module(name)
    listed = module.__all__
    assert len(listed) == len(set(listed)), "a name is listed twice"
    missing = [n for n in listed if not hasattr(module, n)]
    assert missing == []
    for value in listed:
        getattr(module, value)  # loads the lazy names into the namespace
    public = {n for n in listed if not n.startswith("_")}
    assert public_names(module, dir(module)) == public
    assert public_names(module, vars(module)) == public


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_star_import_gives_all(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)
    namespace.pop("__builtins__")
    assert set(namespace) == set(importlib.import_module(name).__all__)


@pytest.mark.parametrize(
    ("name", "stray"),
    [
        ("typelattice", "annotations"),
        ("typelattice", "importlib"),
        ("typelattice", "TYPE_CHECKING"),
        ("typelattice.numpy", "Any"),
        ("typelattice.numpy", "builtins"),
        ("typelattice.numpy", "annotations"),
        ("typelattice.typing", "np"),
        ("typelattice.typing", "Any"),
        ("typelattice.typing", "ALL_DTYPES"),
        ("typelattice.lax", "annotations"),
        ("typelattice.lax", "Primitive"),
        ("typelattice.lax", "np"),
        ("typelattice.random", "annotations"),
        ("typelattice.random", "np"),
        ("typelattice.nn.initializers", "annotations"),
        ("typelattice.nn.initializers", "np"),
        ("typelattice.ad_checkpoint", "Primitive"),
        ("typelattice.custom_derivatives", "Zero"),
    ],
)
def test_no_stray_names(name: str, stray: str) -> None:
    module = importlib.import_module(name)
    assert not hasattr(module, stray)
    with pytest.raises(ImportError):
        exec(f"from {name} import {stray}", {})
