"""The README's Python examples run and print what it says."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(
        optionflags=doctest.IGNORE_EXCEPTION_DETAIL | doctest.NORMALIZE_WHITESPACE
    )
    # One doctest, so later blocks see the names earlier ones defined.
    runner.run(parser.get_doctest("\n".join(blocks), {}, "README", None, 0))
    result = runner.summarize(verbose=False)
    assert result.attempted > 5
    assert result.failed == 0
