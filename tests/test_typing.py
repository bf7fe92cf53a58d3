"""typelattice.typing at run time, and the type-test files under tests/typing.

The files in tests/typing/pass must type-check cleanly (they use
``assert_type`` on the results of the public API); each file in
tests/typing/fail marks every line a checker must reject with a comment
``# E: code, ...``, where codes starting with ``report`` are pyright rules and
the others mypy error codes. A fail file must give exactly those (line, code)
pairs, for each checker. mypy runs with the project's configuration (strict),
pyright in strict mode; pyright's checks are skipped when it is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import typelattice as tl
import typelattice.numpy as tnp
from typelattice.typing import (
    ArrayLike,
    ArrayLikeTypes,
    DTypeLike,
    SupportsDType,
    is_array_like,
    is_dtype_like,
    is_shape_like,
)

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "typing"
PASS = sorted((CASES / "pass").glob("*.py"))
FAIL = sorted((CASES / "fail").glob("*.py"))
ALL = PASS + FAIL

# -- run time -----------------------------------------------------------------

ARRAY_LIKE = {
    "Array": tnp.asarray([1, 2], dtype="int8"),
    "weak Array": tnp.asarray(1.5),
    "ndarray": np.zeros(2, np.float16),
    "NumPy scalar": np.int8(3),
    "NumPy bool": np.bool_(True),
    "bfloat16 scalar": ml_dtypes.bfloat16(1.0),
    "int4 scalar": ml_dtypes.int4(1),
    "bool": True,
    "int": 1,
    "float": 1.5,
    "complex": 1j,
}
NOT_ARRAY_LIKE = {
    "list": [1, 2],
    "tuple": (1.0,),
    "str": "1",
    "None": None,
    "NumPy str": np.str_("a"),
    "datetime64": np.datetime64("2024-01-01"),
    "longdouble": np.longdouble(1),
    "dtype": np.dtype("int8"),
}


@pytest.mark.parametrize("value", ARRAY_LIKE.values(), ids=ARRAY_LIKE.keys())
def test_array_likes_pass_both_runtime_checks(value: object) -> None:
    assert isinstance(value, ArrayLikeTypes)
    assert is_array_like(value)
    # and the library takes them
    tl.result_type(value)


@pytest.mark.parametrize("value", NOT_ARRAY_LIKE.values(), ids=NOT_ARRAY_LIKE.keys())
def test_lists_and_non_numeric_values_are_not_array_like(value: object) -> None:
    assert not isinstance(value, ArrayLikeTypes)
    assert not is_array_like(value)


def test_the_array_like_alias_itself_fails_isinstance() -> None:
    # The pitfall the tuple form avoids: the alias holds np.ndarray[Any, Any].
    with pytest.raises(TypeError, match="parameterized generic"):
        isinstance(1.5, ArrayLike)


def test_the_dtype_like_alias_itself_fails_isinstance() -> None:
    with pytest.raises(TypeError):
        isinstance(None, DTypeLike)


DTYPE_LIKE = {
    "name": "int8",
    "code": "bf",
    "dtype": np.dtype("float32"),
    "NumPy type": np.uint16,
    "abstract NumPy type": np.floating,
    "ml_dtypes type": ml_dtypes.float8_e4m3fn,
    "bool": bool,
    "int": int,
    "float": float,
    "complex": complex,
    "DType class": type(np.dtype("int8")),
    "ScalarType": tnp.int8,
    "ndarray": np.zeros(2),
    "Array": tnp.zeros(2),
}
NOT_DTYPE_LIKE = {
    "None": None,
    "int value": 3,
    "float value": 1.5,
    "list": ["int8"],
    "list type": list,
    "int subclass": type("MyInt", (int,), {}),
}


@pytest.mark.parametrize("value", DTYPE_LIKE.values(), ids=DTYPE_LIKE.keys())
def test_dtype_likes(value: object) -> None:
    assert is_dtype_like(value)


@pytest.mark.parametrize("value", NOT_DTYPE_LIKE.values(), ids=NOT_DTYPE_LIKE.keys())
def test_not_dtype_likes(value: object) -> None:
    assert not is_dtype_like(value)


def test_supports_dtype_is_a_runtime_check() -> None:
    assert isinstance(tnp.bfloat16, SupportsDType)
    assert isinstance(np.float32(1), SupportsDType)
    assert not isinstance(1.5, SupportsDType)
    assert not isinstance("int8", SupportsDType)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, True),
        (0, True),
        ((2, 3), True),
        ([2, 3], True),
        ((), True),
        (range(3), True),
        (True, False),
        ((2, True), False),
        (2.0, False),
        ((2.0, 3), False),
        ("23", False),
        ("", False),
        (b"", False),
        (np.zeros(2, int), False),
        (None, False),
    ],
    ids=repr,
)
def test_shape_likes(value: object, expected: bool) -> None:
    assert is_shape_like(value) is expected


def test_top_level_array_is_the_namespace_base_class() -> None:
    assert tl.Array is tnp.Array
    assert isinstance(tnp.ones(2) + 1, tl.Array)
    assert "Array" in dir(tl) and "Array" in tl.__all__


def test_import_typelattice_does_not_load_the_array_namespace() -> None:
    code = "import sys, typelattice; print('typelattice.numpy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


# -- the type-test files ------------------------------------------------------

_EXPECTED = re.compile(r"#\s*E:\s*(?P<codes>[\w\-, ]+)$")
Findings = set[tuple[int, str]]


def expected(path: Path, checker: str) -> Findings:
    """The (line, code) pairs a fail file's ``# E:`` comments ask of a checker."""
    found: Findings = set()
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        m = _EXPECTED.search(line)
        if m is None:
            continue
        for code in (c.strip() for c in m["codes"].split(",")):
            if code.startswith("report") == (checker == "pyright"):
                found.add((number, code))
    return found


def test_every_fail_file_marks_lines_for_both_checkers() -> None:
    assert PASS and FAIL
    for path in FAIL:
        assert expected(path, "mypy"), path.name
        assert expected(path, "pyright"), path.name
    for path in PASS:
        assert "# E:" not in path.read_text(), path.name


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def mypy_findings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Findings]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed")
    cache = tmp_path_factory.mktemp("mypy-cache")
    cmd = [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml"]
    cmd += ["--strict", "--cache-dir", str(cache), "--output", "json"]
    proc = _run(cmd + [str(p.relative_to(ROOT)) for p in ALL], cwd=ROOT)
    findings: dict[str, Findings] = {p.name: set() for p in ALL}
    for line in proc.stdout.splitlines():
        item = json.loads(line)
        if item["severity"] == "error":
            findings[Path(item["file"]).name].add((item["line"], item["code"]))
    if proc.returncode not in (0, 1):  # 2: mypy itself failed
        pytest.fail(f"mypy failed to run:\n{proc.stdout}\n{proc.stderr}")
    return findings


@pytest.fixture(scope="module")
def pyright_findings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Findings]:
    if importlib.util.find_spec("pyright") is None:
        pytest.skip("pyright is not installed")
    # The files are copied beside a configuration that makes them strict.
    work = tmp_path_factory.mktemp("pyright")
    for kind in ("pass", "fail"):
        shutil.copytree(CASES / kind, work / kind)
    config = {
        "include": ["pass", "fail"],
        "strict": ["pass", "fail"],
        "pythonVersion": "3.11",
    }
    (work / "pyrightconfig.json").write_text(json.dumps(config))
    cmd = [sys.executable, "-m", "pyright", "--outputjson"]
    proc = _run(cmd + ["--pythonpath", sys.executable], cwd=work)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright failed to run:\n{proc.stdout}\n{proc.stderr}")
    findings: dict[str, Findings] = {p.name: set() for p in ALL}
    for item in report["generalDiagnostics"]:
        if item["severity"] == "error":
            line = item["range"]["start"]["line"] + 1
            rule = item.get("rule", "(no rule) " + item["message"])
            findings[Path(item["file"]).name].add((line, rule))
    return findings


CHECKERS = ["mypy", "pyright"]


def _findings(request: pytest.FixtureRequest, checker: str) -> dict[str, Findings]:
    found: dict[str, Findings] = request.getfixturevalue(f"{checker}_findings")
    return found


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("path", PASS, ids=lambda p: p.name)
def test_pass_file_type_checks(
    request: pytest.FixtureRequest, checker: str, path: Path
) -> None:
    assert _findings(request, checker)[path.name] == set()


@pytest.mark.parametrize("checker", CHECKERS)
@pytest.mark.parametrize("path", FAIL, ids=lambda p: p.name)
def test_fail_file_is_rejected_where_marked(
    request: pytest.FixtureRequest, checker: str, path: Path
) -> None:
    assert _findings(request, checker)[path.name] == expected(path, checker)
