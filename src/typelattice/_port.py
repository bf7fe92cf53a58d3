"""Porting a Flax program: the import mapping and the rewrite of imports.

A Flax linen program runs on typelattice after one mechanical change: each
import of ``jax``, ``flax`` or ``optax`` (or a module under them) names the
typelattice module at the same place under a new root (:data:`MAPPING`).
Nothing but import statements changes: ``jnp.zeros``, ``nn.Dense``,
``jax.grad`` and ``optax.adam`` keep their spelling, because the names they
are bound to now refer to typelattice's modules. The command line's ``port``
subcommand applies :func:`rewrite_source` to files (see docs/flax.md).
"""

from __future__ import annotations

import ast
import importlib.util
import re

__all__ = ["MAPPING", "map_module", "missing_modules", "rewrite_source"]

# The one table of the mapping: a module of a Flax program (and everything
# under it) -> the typelattice module that takes its place. The roots (jax,
# flax, optax) decide the rewrite; the other rows spell out the modules a
# program usually imports, and each is its root's prefix rewrite (tested), so
# that `jax.numpy` reached as an attribute of `import jax` and `import
# jax.numpy` name the same module. jax.nn's activations and initialisers
# live in typelattice.nn beside Flax's layers.
MAPPING: dict[str, str] = {
    "jax": "typelattice",
    "jax.numpy": "typelattice.numpy",
    "jax.lax": "typelattice.lax",
    "jax.random": "typelattice.random",
    "jax.tree_util": "typelattice.tree_util",
    "jax.nn": "typelattice.nn",
    "flax": "typelattice.flax",
    "flax.linen": "typelattice.flax.linen",
    "flax.struct": "typelattice.flax.struct",
    "flax.core": "typelattice.flax.core",
    "flax.training": "typelattice.flax.training",
    "flax.serialization": "typelattice.flax.serialization",
    "flax.errors": "typelattice.flax.errors",
    "optax": "typelattice.optax",
}


def map_module(name: str) -> str | None:
    """The typelattice module that takes the place of module ``name``.

    The longest row of :data:`MAPPING` that is ``name`` or a dotted prefix
    of it decides; the rest of the name is kept (``jax.scipy.special`` ->
    ``typelattice.scipy.special``). ``jaxlib`` is not under ``jax``.

    Args:
      name: a dotted module name, as written in an import statement.

    Returns:
      The new module name, or None where the mapping leaves ``name`` alone.

    >>> map_module('jax.numpy'), map_module('flax.training.train_state')
    ('typelattice.numpy', 'typelattice.flax.training.train_state')
    >>> map_module('jaxlib') is None
    True
    """
    parts = name.split(".")
    for n in range(len(parts), 0, -1):
        target = MAPPING.get(".".join(parts[:n]))
        if target is not None:
            return ".".join([target, *parts[n:]])
    return None


def _import_text(node: ast.Import) -> str | None:
    """The rewritten ``import`` statement, or None if it names no mapped
    module."""
    if not any(map_module(alias.name) for alias in node.names):
        return None
    parts: list[str] = []
    for alias in node.names:
        new = map_module(alias.name)
        if new is None:
            parts.append(
                alias.name
                if alias.asname is None
                else f"{alias.name} as {alias.asname}"
            )
        elif alias.asname is not None:
            parts.append(f"{new} as {alias.asname}")
        elif "." not in alias.name:
            # `import jax` binds `jax`: the typelattice module under that name.
            parts.append(f"{new} as {alias.name}")
        else:
            # `import jax.numpy` binds `jax` and loads jax.numpy, reached as
            # `jax.numpy`: load the new submodule, then bind the new root.
            root = alias.name.split(".")[0]
            parts.append(f"{new}, {map_module(root)} as {root}")
    return "import " + ", ".join(parts)


# The module of a `from ... import` statement: a dotted name, written with
# any spacing and line continuations between its parts.
_FROM = re.compile(
    rb"from(?:\s|\\\n)+(?P<module>[A-Za-z_]\w*(?:(?:\s|\\\n)*\.(?:\s|\\\n)*[A-Za-z_]\w*)*)"
)


def rewrite_source(source: str) -> str:
    """Rewrite the imports of a Flax program's source by :data:`MAPPING`.

    Only import statements change (anywhere: at the top, in functions, in
    ``try`` blocks); comments, strings and the rest of the text stay as they
    are. ``import jax`` becomes ``import typelattice as jax``, ``import
    jax.numpy as jnp`` becomes ``import typelattice.numpy as jnp``, ``from
    flax import linen as nn`` becomes ``from typelattice.flax import linen
    as nn``; relative imports and modules outside the mapping are kept.

    Args:
      source: the text of a Python module.

    Returns:
      The rewritten text (``source`` itself where nothing is mapped).

    Raises:
      SyntaxError: ``source`` is not Python.

    >>> print(rewrite_source('import jax.numpy as jnp\\nfrom jax import lax'))
    import typelattice.numpy as jnp
    from typelattice import lax
    >>> rewrite_source('import jax, optax')
    'import typelattice as jax, typelattice.optax as optax'
    """
    tree = ast.parse(source)
    data = source.encode("utf-8")
    # Byte offsets of the line starts: the nodes' columns count UTF-8 bytes.
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    edits: list[tuple[int, int, bytes]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            text = _import_text(node)
            if text is None:
                continue
            assert node.end_lineno is not None and node.end_col_offset is not None
            begin = starts[node.lineno - 1] + node.col_offset
            end = starts[node.end_lineno - 1] + node.end_col_offset
            edits.append((begin, end, text.encode("utf-8")))
        elif isinstance(node, ast.ImportFrom):
            if node.level or node.module is None:
                continue  # a relative import stays in its package
            new = map_module(node.module)
            if new is None:
                continue
            begin = starts[node.lineno - 1] + node.col_offset
            match = _FROM.match(data, begin)
            assert match is not None, "an ImportFrom node starts with its module"
            edits.append(
                (match.start("module"), match.end("module"), new.encode("utf-8"))
            )
    if not edits:
        return source
    out = bytearray(data)
    for start, stop, replacement in sorted(edits, reverse=True):
        out[start:stop] = replacement
    return out.decode("utf-8")


def _exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # (a parent package is missing)
        return False


def missing_modules(source: str) -> list[tuple[int, str, str]]:
    """The imports of ``source`` that the rewrite maps to modules typelattice
    does not have (``jax.experimental.pjit``, say): the program would
    fail there.

    Args:
      source: the text of a Python module (before or after the rewrite:
        only imports of mapped modules are looked at).

    Returns:
      ``(line, module, new module)`` for each, in the order of the source.

    Raises:
      SyntaxError: ``source`` is not Python.

    >>> missing_modules('import jax.numpy as jnp\\nimport jax.experimental.pjit')
    [(2, 'jax.experimental.pjit', 'typelattice.experimental.pjit')]
    """
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            new = map_module(name)
            if new is not None and not _exists(new):
                found.append((node.lineno, name, new))
    return sorted(found)
