"""The examples of the guides in docs/ run and print what they show."""

from __future__ import annotations

import doctest
import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).parent.parent / "docs"
GUIDES = ["autodiff.md", "lax.md", "nn.md", "optim.md", "random.md", "tracing.md"]


@pytest.mark.parametrize("name", GUIDES)
def test_guide_examples(name: str) -> None:
    # Code fences end an example's expected output.
    text = re.sub(r"^```.*$", "", (DOCS / name).read_text(), flags=re.M)
    test = doctest.DocTestParser().get_doctest(text, {}, name, name, 0)
    assert test.examples, f"{name} has no examples"
    runner = doctest.DocTestRunner(
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
