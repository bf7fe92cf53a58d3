"""The package's layers: what each import loads.

``import typelattice.typing`` loads no array code (the ``Array`` base class
lives in a leaf module), and Array's methods, which are the namespace's
functions, work even on an array made before the namespace was imported.
"""

from __future__ import annotations

import ast
import concurrent.futures
import importlib.util
import json
import pathlib
import subprocess
import sys
from typing import NamedTuple

import typelattice


def _loaded_after(code: str) -> list[str]:
    """The typelattice modules loaded in a fresh interpreter after ``code``."""
    script = (
        f"{code}\nimport json, sys\n"
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] == 'typelattice')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    loaded: list[str] = json.loads(out.stdout.splitlines()[-1])
    return loaded


# The array layer, tracing and the namespace.
ARRAY_CODE = ("typelattice._array", "typelattice._core", "typelattice._tracing")


def _array_code(loaded: list[str]) -> list[str]:
    return [
        m
        for m in loaded
        if m.startswith(ARRAY_CODE) or m.split(".")[:2] == ["typelattice", "numpy"]
    ]


def test_typing_loads_no_array_code() -> None:
    loaded = _loaded_after("import typelattice.typing")
    assert "typelattice.typing" in loaded
    assert _array_code(loaded) == []


def test_the_array_class_loads_no_array_code() -> None:
    code = (
        "import typelattice as tl, typelattice.typing as t\n"
        "assert tl.Array is t.Array and t.Array.sum.__doc__"
    )
    assert _array_code(_loaded_after(code)) == []


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_arrays_have_their_methods_whichever_module_made_them() -> None:
    """Arrays made without importing typelattice.numpy (by typelattice.lax,
    jit, grad, eval_shape) have their operators and methods: the namespace
    that sets them loads first."""
    made = {
        "from typelattice import lax\nx = lax.add(np.int8([0, 1, 2]), 1)": (
            "Array([2, 3, 4], dtype=int8) Array(6, dtype=int32) "
            "Array([2, 3], dtype=int8)"
        ),
        "import typelattice as tl\nx = tl.jit(lambda a: a + 1)(np.int8([0, 1, 2]))": (
            "Array([2, 3, 4], dtype=int8) Array(6, dtype=int32) "
            "Array([2, 3], dtype=int8)"
        ),
        "import typelattice as tl\n"
        "x = tl.grad(lambda a: (a * a).sum())(np.float32([0, 1, 2]))": (
            "Array([1., 3., 5.], dtype=float32) Array(6., dtype=float32) "
            "Array([2., 4.], dtype=float32)"
        ),
    }
    for code, want in made.items():
        got = _run(
            f"import numpy as np\n{code}\n"
            "print(repr(x + 1), repr(x.sum()), repr(x.T[1:]))"
        )
        assert got == want, code


def test_tracing_loads_the_namespace() -> None:
    """typelattice.eval_shape's tracers have their methods: the traced
    function uses them without importing typelattice.numpy."""
    code = (
        "import typelattice as tl\n"
        "s = tl.ShapeDtypeStruct((2,), 'int8')\n"
        "print(tl.eval_shape(lambda x: (x * 2).sum(), s))"
    )
    assert _run(code) == "ShapeDtypeStruct(shape=(), dtype=int32)"


# -- the import graph ---------------------------------------------------------------

PACKAGE = pathlib.Path(typelattice.__file__).parent

# The layers, lowest first: a module may import (at any level, functions
# included) modules of its own layer and of the layers below, never above.
# Modules in no layer (the command line, the tools) are only kept acyclic.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "promotion",
        (
            "typelattice._config",
            "typelattice._dtypes",
            "typelattice._lattice",
            "typelattice._promotion",
        ),
    ),
    (
        "array base",
        (
            "typelattice._basearray",
            "typelattice._devices",
            "typelattice._typing",
            "typelattice.typing",
        ),
    ),
    # What computes the primitives (the tracing layer's bind asks it), and
    # the libraries whose arrays the array layer holds (an Array of another
    # library keeps its backend): a table that needs no array code.
    ("backends", ("typelattice._backends",)),
    ("arrays", ("typelattice._core", "typelattice._array")),
    ("tracing", ("typelattice._tracing",)),
    ("primitives", ("typelattice._lax",)),
    # The public lax re-exports the primitives' functions and loads the
    # namespace, which sets the methods of the arrays they return.
    ("namespaces", ("typelattice.numpy", "typelattice.lax")),
    (
        "keys, layers, optimisers",
        ("typelattice.random", "typelattice.nn", "typelattice.optim"),
    ),
    # The backends of other array libraries register their implementations
    # of the primitives from the side: loaded by name when first needed
    # (the backends' table imports them, dynamically), they import anything.
    (
        "other libraries' backends",
        (
            "typelattice._backends._xp",
            "typelattice._backends.cupy",
            "typelattice._backends.dask",
            "typelattice._backends.torch",
        ),
    ),
]


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, pathlib.Path] = {
    _module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
}


class Import(NamedTuple):
    """One import statement of a module: what it names, and where it runs."""

    target: str  # the module named (or the module an imported name is in)
    line: int
    in_function: bool  # runs when the function is called, not at import


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str) -> list[Import]:
    """The imports of typelattice modules that ``module`` runs: those under
    ``if TYPE_CHECKING:`` are left out (type checkers read them; nothing
    runs them)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.orelse:
                    visit_stmt(stmt, in_function)
                continue
            visit_stmt(child, in_function)

    def visit_stmt(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.Import):
            found.extend(Import(a.name, node.lineno, in_function) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append(
                    Import(sub if sub in MODULES else base, node.lineno, in_function)
                )
        inner = in_function or isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
        )
        visit(node, inner)

    visit(ast.parse(path.read_text()), False)
    return [i for i in found if i.target.split(".")[0] == "typelattice"]


def _depends_on(module: str, target: str) -> list[str]:
    """The modules an import of ``target`` by ``module`` runs first: the
    target and the packages above it, except ``module``'s own packages
    (they have started already when ``module`` runs)."""
    parts = target.split(".")
    prefixes = [".".join(parts[: i + 1]) for i in range(len(parts))]
    own = {".".join(module.split(".")[: i + 1]) for i in range(module.count("."))}
    return [p for p in prefixes if p in MODULES and p not in own and p != module]


def import_graph(in_functions: bool) -> dict[str, set[str]]:
    """Module -> the modules importing it runs first (with the imports inside
    functions too, when asked)."""
    return {
        module: {
            dep
            for imp in _imports(module)
            if in_functions or not imp.in_function
            for dep in _depends_on(module, imp.target)
        }
        for module in MODULES
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """A cycle of ``graph`` (its modules in order, the first repeated last),
    or [] when there is none."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def _layer(module: str) -> int | None:
    """The layer of the longest prefix naming ``module``."""
    best: tuple[int, int] | None = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(f"{p}.")) and (
                best is None or len(p) > best[0]
            ):
                best = (len(p), rank)
    return None if best is None else best[1]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """The imports that go from a layer to one above it."""
    found = []
    for module, deps in sorted(graph.items()):
        low = _layer(module)
        for dep in sorted(deps):
            high = _layer(dep)
            if low is not None and high is not None and high > low:
                found.append(f"{module} -> {dep}")
    return found


def test_the_graph_sees_the_imports() -> None:
    # A parser that found nothing would pass every check below.
    graph = import_graph(in_functions=True)
    assert "typelattice._tracing.tracer" in graph["typelattice._tracing.trace"]
    assert "typelattice._array" in graph["typelattice.numpy._shape"]
    # An import from another package runs that package's __init__ first ...
    assert "typelattice._tracing" in graph["typelattice.numpy._shape"]
    # ... but a module's own packages have started before it runs.
    assert "typelattice._tracing" not in graph["typelattice._tracing.trace"]
    assert "typelattice" not in graph["typelattice._array"]
    # Imports for type checkers only run nothing.
    assert "typelattice.numpy" not in graph["typelattice._basearray"]
    # In a function of _cli: from typelattice import _compare
    assert "typelattice._compare" in graph["typelattice._cli"]
    loading = import_graph(in_functions=False)
    assert "typelattice._compare" not in loading["typelattice._cli"]


def test_imports_form_no_cycle() -> None:
    """The imports of typelattice's modules form no cycle, those inside
    functions included: every module loads fully before its importers use
    it, whichever is imported first, and none needs an import deferred to
    a call to dodge a cycle."""
    assert find_cycle(import_graph(in_functions=False)) == []
    graph = import_graph(in_functions=True)
    for module, target in CYCLES_LEFT:
        graph[module].discard(target)
    assert find_cycle(graph) == []


# The imports that still close a cycle, inside functions: none. (The
# primitives that rules of an earlier family of lax bind are declared
# before the families, in typelattice._lax._primitive.) An entry here
# lifts that import out of the cycle check; the check itself stays.
CYCLES_LEFT: set[tuple[str, str]] = set()


# The imports of typelattice modules inside functions, each with its reason.
# Nothing else defers an import: a module imports what it uses when it loads.
FUNCTION_IMPORTS: dict[tuple[str, str], str] = {
    ("typelattice._promotion", "typelattice._speedups"): (
        "the optional C extension: loaded unless TYPELATTICE_NO_SPEEDUPS says "
        "not to, and the package works without it"
    ),
    ("typelattice._cli", "typelattice._compare"): (
        "the commands that compare libraries load the comparison tool, and the "
        "array namespace with it; the other commands start without"
    ),
    ("typelattice._cli", "typelattice._backends._support"): (
        "the command that prints the backends' support loads them (and their "
        "libraries); the other commands start without"
    ),
    ("typelattice._cli", "typelattice._port"): (
        "the command that ports a Flax program loads the import mapping; the "
        "other commands start without it"
    ),
    **dict.fromkeys(CYCLES_LEFT, "a cycle of the primitives' families, to go"),
}

# The calls of importlib.import_module (or __import__) on typelattice's own
# modules, by the calling module: (module, the name imported, or None for a
# name computed at run time). Other libraries' optional modules (jax, torch,
# matplotlib) are imported this way too, and are not counted.
DYNAMIC_IMPORTS: dict[tuple[str, str | None], str] = {
    ("typelattice", None): (
        "the package's public attributes load their modules on first use, so "
        "that `import typelattice` costs only what promotion needs"
    ),
    ("typelattice", "typelattice.numpy"): (
        "the transformations' attributes load the array namespace first: it "
        "sets the methods of the arrays and tracers they make"
    ),
    ("typelattice._backends._backend", None): (
        "the backend of another array library (torch, CuPy, Dask) is imported "
        "when it is first named or one of its arrays is met, so that "
        "`import typelattice` never imports those libraries"
    ),
    ("typelattice.flax.metrics", None): (
        "the TensorBoard module loads on first use, as typelattice.flax's"
    ),
    ("typelattice.flax.metrics.tensorboard", None): (
        "the tensorboard package (its writer and protos) is imported when a "
        "SummaryWriter is made: the module imports without it"
    ),
    ("typelattice._compare", None): (
        "a library is imported when it is measured (`typelattice compare "
        "typelattice:torch` imports torch), never before"
    ),
    ("typelattice.flax", None): (
        "the Flax-named modules load on first use, so that a program importing "
        "one of them does not load the serialization's msgpack with the others"
    ),
}


def function_imports() -> set[tuple[str, str]]:
    """(module, imported module) for each import inside a function."""
    return {
        (module, imp.target)
        for module in MODULES
        for imp in _imports(module)
        if imp.in_function
    }


def dynamic_imports(module: str) -> set[tuple[str, str | None]]:
    """(module, name) for each call of ``import_module`` or ``__import__``
    in ``module`` that imports a typelattice module or a computed name."""
    found: set[tuple[str, str | None]] = set()
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        fn = node.func
        name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
        if name not in ("import_module", "__import__"):
            continue
        arg = node.args[0]
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            found.add((module, None))
        elif arg.value.split(".")[0] == "typelattice":
            found.add((module, arg.value))
    return found


def test_imports_inside_functions_are_the_listed_ones() -> None:
    assert function_imports() == set(FUNCTION_IMPORTS)


def test_importlib_imports_of_the_package_are_the_listed_ones() -> None:
    found = set().union(*(dynamic_imports(m) for m in MODULES))
    assert found == set(DYNAMIC_IMPORTS)


def test_layers_import_one_way() -> None:
    """The promotion engine, the array base class, the array layer, tracing
    and the namespace import one way, inside functions too: tracing never
    imports the namespace, the array layer neither."""
    graph = import_graph(in_functions=True)
    for _, prefixes in LAYERS:  # (a misspelt prefix would check nothing)
        for prefix in prefixes:
            assert any(m == prefix or m.startswith(f"{prefix}.") for m in MODULES)
    assert upward_imports(graph) == []


def test_the_checks_catch_cycles_and_upward_imports(tmp_path: pathlib.Path) -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []
    upward = {"typelattice._tracing.trace": {"typelattice.numpy._shape"}}
    assert upward_imports(upward) == [
        "typelattice._tracing.trace -> typelattice.numpy._shape"
    ]
    # Deferred imports, and importlib's, are found wherever they are.
    source = tmp_path / "deferred.py"
    source.write_text(
        "import importlib\n"
        "def f():\n"
        "    from typelattice import _core\n"
        "    return importlib.import_module('typelattice.numpy')\n"
    )
    MODULES["typelattice._deferred_example"] = source
    try:
        assert _imports("typelattice._deferred_example") == [
            Import("typelattice._core", 3, True)
        ]
        assert dynamic_imports("typelattice._deferred_example") == {
            ("typelattice._deferred_example", "typelattice.numpy")
        }
    finally:
        del MODULES["typelattice._deferred_example"]


def _import_alone(module: str) -> str:
    """The last line of the error of importing ``module`` first thing in a
    new interpreter ('' when it loads)."""
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True
    )
    return done.stderr.strip().splitlines()[-1] if done.returncode else ""


def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    """Each module imported alone, first thing in a new interpreter, loads:
    no import order is needed for any of them."""
    # (a backend of a library that is not installed cannot load)
    optional = {
        f"typelattice._backends.{lib}"
        for lib in ("torch", "cupy", "dask")
        if importlib.util.find_spec(lib) is None
    }
    modules = [m for m in MODULES if m not in optional]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        errors = dict(zip(modules, pool.map(_import_alone, modules), strict=True))
    assert len(errors) > 25
    assert {m: e for m, e in errors.items() if e} == {}
