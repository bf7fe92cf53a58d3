"""The Python examples of the README and of docs/*.md run and print what they
say."""

from __future__ import annotations

import doctest
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_the_pages_are_found() -> None:
    names = [page.relative_to(ROOT).as_posix() for page in PAGES]
    assert "README.md" in names
    assert "docs/semantics.md" in names


class ErrorsAsWritten(doctest.OutputChecker):
    """Compares an error's message as the pages write it: the class without
    its module (``TypePromotionError: ...``), the message in full or cut with
    ``...``. The message is what a reader learns from, so it is checked."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        got = re.sub(r"^(?:\w+\.)+(\w+(?:Error|Warning|Exception)): ", r"\1: ", got)
        return super().check_output(want, got, optionflags)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_examples(page: Path) -> None:
    text = page.read_text()
    # A page whose examples need an optional library says so in a comment,
    # <!-- requires: torch -->; without it installed they cannot run.
    for name in re.findall(r"<!-- requires: ([\w.]+) -->", text):
        pytest.importorskip(name)
        if name == "dask" and os.environ.get("TYPELATTICE_LAST_BIT"):
            # (tests/last_bit.py replaces NumPy's functions, and dask.array
            # refuses anything but NumPy's own ufuncs when it loads)
            pytest.skip("Dask cannot load where NumPy's functions are replaced")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(
        checker=ErrorsAsWritten(),
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    # One doctest per page, so later blocks see the names earlier ones defined.
    runner.run(parser.get_doctest("\n".join(blocks), {}, page.name, None, 0))
    result = runner.summarize(verbose=False)
    assert result.attempted > 5
    assert result.failed == 0
