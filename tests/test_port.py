"""The Flax -> typelattice import mapping: rewrite_source, the ``port``
command, and Flax-style programs that run once rewritten."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
import textwrap
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from support import recorder
from typelattice import optim
from typelattice._cli import main
from typelattice._port import MAPPING, map_module, missing_modules, rewrite_source

ROOT = Path(__file__).resolve().parents[1]

HAS_OPTAX = importlib.util.find_spec("typelattice.optax") is not None


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("import jax", "import typelattice as jax"),
        ("import jax.numpy as jnp", "import typelattice.numpy as jnp"),
        ("import jax.numpy", "import typelattice.numpy, typelattice as jax"),
        ("from jax import lax, random", "from typelattice import lax, random"),
        ("from jax import numpy as jnp", "from typelattice import numpy as jnp"),
        ("from flax import linen as nn", "from typelattice.flax import linen as nn"),
        ("import flax.linen as nn", "import typelattice.flax.linen as nn"),
        (
            "from flax.training import train_state",
            "from typelattice.flax.training import train_state",
        ),
        ("import optax", "import typelattice.optax as optax"),
        ("from flax import struct", "from typelattice.flax import struct"),
        ("import flax", "import typelattice.flax as flax"),
        ("import jax, os", "import typelattice as jax, os"),
        ("import jax.tree_util as jtu", "import typelattice.tree_util as jtu"),
        ("from jax.nn import initializers", "from typelattice.nn import initializers"),
        (
            "from flax.core.frozen_dict import FrozenDict",
            "from typelattice.flax.core.frozen_dict import FrozenDict",
        ),
        ("import jaxlib", "import jaxlib"),  # another package
        ("import flaxformer as ff", "import flaxformer as ff"),
        ("from . import jax", "from . import jax"),  # a relative import
        ("import numpy as np", "import numpy as np"),
    ],
)
def test_rewrite_one_statement(before: str, after: str) -> None:
    assert rewrite_source(before + "\n") == after + "\n"


def test_only_imports_change() -> None:
    source = textwrap.dedent(
        '''\
        """Uses jax.numpy; import jax is in this docstring."""
        import jax  # a comment after
        from flax import (
            linen as nn,  # a comment inside
            struct,
        )
        x = "import optax"

        def f():
            import optax; import jax.random as jr
            return jax.jit, nn.Dense, optax, jr
        '''
    )
    expected = textwrap.dedent(
        '''\
        """Uses jax.numpy; import jax is in this docstring."""
        import typelattice as jax  # a comment after
        from typelattice.flax import (
            linen as nn,  # a comment inside
            struct,
        )
        x = "import optax"

        def f():
            import typelattice.optax as optax; import typelattice.random as jr
            return jax.jit, nn.Dense, optax, jr
        '''
    )
    assert rewrite_source(source) == expected
    assert rewrite_source(expected) == expected  # a second rewrite changes nothing


def test_non_ascii_text_before_an_import_on_its_line() -> None:
    source = "s = 'é'; import jax\nfrom flax import struct  # ü\n"
    assert rewrite_source(source) == (
        "s = 'é'; import typelattice as jax\nfrom typelattice.flax import struct  # ü\n"
    )


def test_the_rows_are_prefix_rewrites_of_their_roots() -> None:
    # `import jax` then `jax.numpy` must name what `import jax.numpy` names.
    for module, target in MAPPING.items():
        root, _, rest = module.partition(".")
        assert target == ".".join(p for p in (MAPPING[root], rest) if p)
        assert map_module(module) == target


@pytest.mark.parametrize("target", sorted(set(MAPPING.values())))
def test_every_target_module_exists(target: str) -> None:
    if target == "typelattice.optax" and not HAS_OPTAX:
        pytest.skip("typelattice.optax is not in this build")
    importlib.import_module(target)


def test_the_docs_table_is_the_mapping() -> None:
    text = (ROOT / "docs" / "flax.md").read_text()
    rows = re.findall(r"^\| `([\w.]+)` \| `([\w.]+)` \|", text, re.M)
    assert dict(rows) == MAPPING


# -- the command ---------------------------------------------------------------


# A Flax program (the recorder runs it with Flax and keeps its initial
# parameters and losses).
FLAX_PROGRAM: str = recorder("make_flax_serialization_golden.py").FLAX_PROGRAM
PROGRAM = json.loads(
    (ROOT / "tests" / "golden" / "flax_serialization.json").read_text()
)["program"]


def _run(source: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Run ``source`` as the module ``ported`` (dataclasses look their
    module up)."""
    module = types.ModuleType("ported")
    monkeypatch.setitem(sys.modules, "ported", module)
    exec(compile(source, "<ported>", "exec"), module.__dict__)
    return module.__dict__


def test_a_ported_flax_program_trains(monkeypatch: pytest.MonkeyPatch) -> None:
    ported = rewrite_source(FLAX_PROGRAM)
    assert "import typelattice.flax.linen as nn" in ported
    state, losses = _run(ported, monkeypatch)["train"](optim.sgd(0.1))
    assert int(state.step) == 5
    assert all(np.isfinite(losses)) and losses[-1] < losses[0]


def test_a_ported_program_trains_as_in_flax_from_flax_parameters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The parameters Flax initialised, read from its bytes by the program.
    params_bytes = ROOT / "tests" / "golden" / "flax_bytes" / "program_params.msgpack"
    train = _run(rewrite_source(FLAX_PROGRAM), monkeypatch)["train"]
    _, losses = train(
        optim.sgd(PROGRAM["learning_rate"]), PROGRAM["steps"], params_bytes.read_bytes()
    )
    np.testing.assert_allclose(losses, PROGRAM["losses"], rtol=2e-6)


@pytest.mark.skipif(not HAS_OPTAX, reason="typelattice.optax is not in this build")
def test_a_ported_program_with_optax_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    source = FLAX_PROGRAM + "\nimport optax\nRESULT = train(optax.adam(1e-2), 3)\n"
    _, losses = _run(rewrite_source(source), monkeypatch)["RESULT"]
    assert losses[-1] < losses[0]


def test_port_prints_checks_and_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "train.py"
    program.write_text(FLAX_PROGRAM)
    done = tmp_path / "done.py"
    done.write_text("import numpy as np\n")

    assert main(["port", str(program)]) == 0
    assert capsys.readouterr().out == rewrite_source(FLAX_PROGRAM)
    assert program.read_text() == FLAX_PROGRAM  # printing changes nothing

    assert main(["port", "--check", str(program), str(done)]) == 1
    assert capsys.readouterr().out == f"would rewrite {program}\n"

    assert main(["port", "--write", str(program), str(done)]) == 0
    assert capsys.readouterr().out == f"rewrote {program}\n"
    assert program.read_text() == rewrite_source(FLAX_PROGRAM)
    assert done.read_text() == "import numpy as np\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["done.py", "train.py"]

    assert main(["port", "--check", str(program)]) == 0
    assert main(["port", str(program), str(done)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"==> {program} <==\n") and f"==> {done} <==\n" in out


def test_port_errors_name_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import jax\ndef f(:\n")
    assert main(["port", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2: not Python source" in err
    assert main(["port", str(tmp_path / "missing.py")]) == 2
    assert "missing.py" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["port", "--write", "--check", str(bad)])


def test_the_readme_table_is_the_mapping() -> None:
    text = (ROOT / "README.md").read_text()
    if "## Porting from Flax" not in text:
        pytest.skip("the README has no porting section in this build")
    section = text.split("## Porting from Flax", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([\w.]+)` \| `([\w.]+)` \|", section, re.M)
    assert dict(rows) == MAPPING


def test_imports_of_modules_typelattice_lacks_are_noted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = "import jax\nimport numpy\nfrom jax.experimental.pjit import pjit\n"
    assert missing_modules(source) == [
        (3, "jax.experimental.pjit", "typelattice.experimental.pjit")
    ]
    # (mesh_utils and sharding exist)
    have = "from jax.experimental import mesh_utils\nfrom jax.sharding import Mesh\n"
    assert missing_modules(have) == []
    assert missing_modules(rewrite_source(source)) == []  # (already rewritten)
    program = tmp_path / "p.py"
    program.write_text(source)
    assert main(["port", "--check", str(program)]) == 1
    err = capsys.readouterr().err
    assert (
        f"{program}:3: jax.experimental.pjit maps to typelattice.experimental.pjit"
        in err
    )
