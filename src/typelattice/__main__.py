"""``python -m typelattice``: the command line."""

from __future__ import annotations

import sys

from typelattice._cli import main

if __name__ == "__main__":
    sys.exit(main())
