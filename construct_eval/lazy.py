"""Names a package offers from its submodules, imported on first use (PEP 562).

``import construct_eval`` must stay quick (the CLI's ``--help``, a notebook's first cell): the
public names and the notebook helpers live in modules that import numpy, scikit-learn and
matplotlib, so a package lists where each name lives and loads it when it is first asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` for ``where`` (name -> module it lives in); a name
    once loaded is kept in the package's namespace, an unknown one is an AttributeError."""
    module = importlib.import_module(package)

    def __getattr__(name: str) -> Any:
        home = where.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *where})

    return __getattr__, __dir__
