"""Loading a Flax example's own modules, with or without the import rewrite.

The example's files are read from its directory in a checkout of the Flax
repository and executed as modules (``models``, ``train``...). With
``backend="typelattice"`` each file's imports go through the rewrite first
(:mod:`_rewrite`); with ``backend="jax"`` (the recorder, real JAX and Flax)
they run as written. The heavy data and logging libraries the train files
import at their top (TensorFlow, TFDS, clu, ml_collections, absl, orbax...)
are replaced by stand-in modules: any name read from them is a placeholder
that raises when called, so a driver that touched one would fail loudly.
absl's ``flags`` is a small working stand-in (some train files define flags
at import time).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

# The harness's modules import each other by name, from this folder.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from typelattice._port import map_module, rewrite_source  # noqa: E402

#: The commit of github.com/google/flax the drivers and the recording use.
FLAX_COMMIT = "18f8f311c275d57f46d95e41b15aa97b454754c0"

#: Third-party modules replaced by stand-ins (with their submodules).
STAND_INS = (
    "tensorflow",
    "tensorflow_datasets",
    "tensorflow_text",
    "clu",
    "ml_collections",
    "absl",
    "orbax",
    "sentencepiece",
    "PIL",
    "gymnasium",
    "ale_py",
    "cv2",
    "tensorboard",
)


class Missing:
    """A placeholder for a name of a stand-in module: attribute access gives
    another placeholder, calling one raises."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Missing:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return Missing(f"{self._name}.{attr}")

    def __call__(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError(
            f"{self._name} is a stand-in in the Flax examples harness; the "
            "driver reached code the training step does not need"
        )

    def __getitem__(self, item: object) -> Missing:
        return self

    def __or__(self, other: object) -> Any:
        return Any

    __ror__ = __or__

    def __repr__(self) -> str:
        return f"<stand-in {self._name}>"


class _StandInModule(types.ModuleType):
    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        if f"{self.__name__}.{attr}" == "absl.flags":
            # (`from absl import flags` asks the package first: the working
            # stand-in, not a missing name)
            return importlib.import_module("absl.flags")
        return Missing(f"{self.__name__}.{attr}")


class _Flags:
    """absl.flags.FLAGS: DEFINE_* record the default as an attribute."""

    def __getattr__(self, attr: str) -> Any:
        raise AttributeError(f"flag {attr!r} is not defined")


def _flags_module() -> types.ModuleType:
    mod = _StandInModule("absl.flags")
    flags = _Flags()

    def define(name: str, default: object = None, *args: object, **kw: object) -> None:
        setattr(flags, name, default)

    mod.FLAGS = flags  # type: ignore[attr-defined]
    for kind in ("string", "integer", "float", "bool", "enum", "list", "multi_string"):
        setattr(mod, f"DEFINE_{kind}", define)
    mod.mark_flags_as_required = lambda *a, **k: None  # type: ignore[attr-defined]
    return mod


class _StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Stand-ins for the modules of ``STAND_INS`` that are not installed
    (an installed one, which JAX or Flax may import themselves, is kept)."""

    def __init__(self) -> None:
        self.absent = {
            top for top in STAND_INS if importlib.util.find_spec(top) is None
        }

    def find_spec(self, fullname: str, path: object, target: object = None) -> Any:
        if fullname.split(".")[0] not in self.absent:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name == "absl.flags":
            mod = _flags_module()
        else:
            mod = _StandInModule(spec.name)
        mod.__path__ = []  # type: ignore[attr-defined]
        return mod

    def exec_module(self, module: types.ModuleType) -> None:
        parent, _, child = module.__name__.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)


class _ExampleFinder(importlib.abc.MetaPathFinder, importlib.abc.SourceLoader):
    """Finds the example's own modules in its directory; rewrites their
    imports when asked."""

    def __init__(self, root: Path, rewrite: bool, stubbed: Sequence[str]) -> None:
        self.root = root
        self.rewrite = rewrite
        self.stubbed = set(stubbed)

    def _path(self, fullname: str) -> Path | None:
        rel = Path(*fullname.split("."))
        if (self.root / rel / "__init__.py").exists():
            return self.root / rel / "__init__.py"
        if (self.root / rel).is_dir():
            return self.root / rel
        if (self.root / rel).with_suffix(".py").exists():
            return (self.root / rel).with_suffix(".py")
        return None

    def find_spec(self, fullname: str, path: object, target: object = None) -> Any:
        if fullname in self.stubbed:
            return importlib.machinery.ModuleSpec(fullname, _StandInFinder())
        found = self._path(fullname)
        if found is None:
            return None
        spec = importlib.util.spec_from_file_location(
            fullname,
            found if found.suffix == ".py" else None,
            loader=self,
            submodule_search_locations=[str(found.parent)]
            if found.name == "__init__.py" or found.is_dir()
            else None,
        )
        return spec

    def get_filename(self, fullname: str) -> str:
        found = self._path(fullname)
        assert found is not None
        return str(found)

    def get_data(self, path: str) -> bytes:
        p = Path(path)
        if p.is_dir():
            return b""
        return p.read_bytes()

    def source_to_code(self, data: Any, path: Any, *, _optimize: int = -1) -> Any:
        source = bytes(data).decode()
        if self.rewrite:
            source = rewrite_source(source)
        return compile(source, path, "exec", dont_inherit=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__spec__ is not None and module.__spec__.origin is None:
            return  # a directory without __init__.py: a namespace package
        super().exec_module(module)


@contextlib.contextmanager
def example_modules(
    examples_dir: Path, name: str, backend: str, stubbed: Sequence[str] = ()
) -> Iterator[types.SimpleNamespace]:
    """The example's modules, importable by their plain names while inside.

    Yields a namespace whose ``load(module)`` imports one of them. On exit
    the example's modules are removed from ``sys.modules`` (the examples
    share names such as ``models`` and ``train``).
    """
    root = examples_dir / name
    finder = _ExampleFinder(root, rewrite=backend == "typelattice", stubbed=stubbed)
    stand_ins = _StandInFinder()
    before = set(sys.modules)
    sys.meta_path[:0] = [finder, stand_ins]
    try:
        yield types.SimpleNamespace(load=importlib.import_module, root=root)
    finally:
        sys.meta_path.remove(finder)
        sys.meta_path.remove(stand_ins)
        for mod in set(sys.modules) - before:
            origin = getattr(sys.modules[mod], "__file__", None) or ""
            top = mod.split(".")[0]
            if (
                top in stand_ins.absent
                or origin.startswith(str(root))
                or mod in stubbed
            ):
                del sys.modules[mod]


def library(backend: str) -> types.SimpleNamespace:
    """The jax/flax/optax modules a driver uses, for a backend."""

    def load(name: str) -> Any:
        if backend == "typelattice":
            name = map_module(name)
        return importlib.import_module(name)

    return types.SimpleNamespace(
        jax=load("jax"),
        jnp=load("jax.numpy"),
        lax=load("jax.lax"),
        random=load("jax.random"),
        tree_util=load("jax.tree_util"),
        optax=load("optax"),
        load=load,
        backend=backend,
    )


def run_example(
    examples_dir: Path,
    name: str,
    backend: str,
    dtype: str,
    *,
    jit: bool = True,
    saved: list[Any] | None = None,
) -> tuple[dict[str, Any], list[Any]]:
    """Runs one driver; returns its record and the initial parameters."""
    import drivers

    lib = library(backend)
    with contextlib.suppress(ImportError):
        from absl import flags  # the real absl: flags defined, not parsed

        if not isinstance(flags, _StandInModule):
            flags.FLAGS.mark_as_parsed()
    with example_modules(examples_dir, name, backend, drivers.STUBBED[name]) as ex:
        run = drivers.Run(lib, dtype, jit, saved)
        record = drivers.DRIVERS[name](ex, run)
    return record, run.initial
