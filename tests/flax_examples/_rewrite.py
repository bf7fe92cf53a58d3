"""The import rewrite the harness applies to the Flax examples.

``rewrite_source`` is typelattice's own (:mod:`typelattice._port`) when that
module exists. Until then a minimal stand-in applies the same prefix table
to ``import`` and ``from ... import`` lines; it is deleted once
``typelattice._port`` is present on the branch.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable

#: Module prefix -> typelattice module (the mapping typelattice documents).
FALLBACK_MAPPING: dict[str, str] = {
    "jax": "typelattice",
    "flax": "typelattice.flax",
    "optax": "typelattice.optax",
}

_IMPORT = re.compile(r"^(\s*)import\s+(.+?)\s*(#.*)?$")
_FROM = re.compile(r"^(\s*)from\s+([\w.]+)\s+import\s+(.*)$")


def _map(module: str, mapping: dict[str, str]) -> str | None:
    head, _, tail = module.partition(".")
    target = mapping.get(head)
    if target is None:
        return None
    return f"{target}.{tail}" if tail else target


def _fallback_rewrite(source: str) -> str:
    out: list[str] = []
    for line in source.splitlines(keepends=True):
        body = line.rstrip("\n")
        end = line[len(body) :]
        m = _FROM.match(body)
        if m:
            target = _map(m.group(2), FALLBACK_MAPPING)
            if target is not None:
                body = f"{m.group(1)}from {target} import {m.group(3)}"
            out.append(body + end)
            continue
        m = _IMPORT.match(body)
        if m:
            parts: list[str] = []
            for item in m.group(2).split(","):
                name, _, alias = item.strip().partition(" as ")
                target = _map(name.strip(), FALLBACK_MAPPING)
                if target is None:
                    parts.append(item.strip())
                elif alias:
                    parts.append(f"{target} as {alias.strip()}")
                elif "." in name:
                    # ``import jax.test_util`` binds ``jax``: import the
                    # submodule, then bind the top name to the mapped top.
                    top = name.split(".")[0]
                    parts.append(target)
                    parts.append(f"{FALLBACK_MAPPING[top]} as {top}")
                else:
                    parts.append(f"{target} as {name.strip()}")
            body = f"{m.group(1)}import {', '.join(parts)}"
        out.append(body + end)
    return "".join(out)


def _load() -> tuple[Callable[[str], str], dict[str, str], bool]:
    try:
        port = importlib.import_module("typelattice._port")
    except ImportError:
        return _fallback_rewrite, FALLBACK_MAPPING, False
    return port.rewrite_source, dict(port.MAPPING), True


rewrite_source, MAPPING, FROM_TYPELATTICE = _load()


def map_module(name: str) -> str:
    """The module ``name`` (a jax/flax/optax module) names after the rewrite."""
    best = max(
        (k for k in MAPPING if name == k or name.startswith(k + ".")),
        key=len,
        default=None,
    )
    if best is None:
        return name
    return MAPPING[best] + name[len(best) :]
