"""Module paths from before the package was grouped into subpackages keep working.

``construct_eval.judge``, ``construct_eval.runs``, ``python -m construct_eval.llama_server`` and
the rest resolve to the module that now holds the code (the same module object, so state and
monkeypatches are shared). New code imports the new paths; notebooks, scripts under
``results/`` and users' code written against the old ones still run. ``construct_eval.llm`` is
a package now and re-exports the old module's names itself.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import CodeType, ModuleType

MOVED = {
    "logprobs": "llm.logprobs",
    "prompt_size": "llm.prompt_size",
    "engine": "llm.engine",
    "local_llm": "serving.models",
    "llama_server": "serving.server",
    "scripted_server": "serving.scripted_server",
    "datasets": "data.datasets",
    "datasets.base": "data.datasets.base",
    "datasets.cleanlab": "data.datasets.cleanlab",
    "datasets.custom": "data.datasets.custom",
    "datasets.synthetic": "data.datasets.synthetic",
    "runs": "data.runs",
    "generate": "data.generate",
    "inject": "data.inject",
    "labels": "data.labels",
    "prompts": "judging.prompts",
    "judge": "judging.judge",
    "scoring": "judging.scoring",
    "verdict": "judging.verdict",
    "token_confidence": "scorers.token_confidence",
    "consistency": "scorers.consistency",
    "reflection": "scorers.reflection",
    "combine": "scorers.combine",
    "external": "scorers.external",
    "evaluation": "analysis.evaluation",
    "metrics": "analysis.metrics",
    "calibration": "analysis.calibration",
    "bias": "analysis.bias",
    "plots": "analysis.plots",
    "figures": "analysis.figures",
    "paper_tables": "analysis.paper_tables",
}
"""Old name -> new name, both relative to ``construct_eval``."""

_PREFIX = "construct_eval."


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self._spec  # the import system set the alias's spec: keep the real one

    def get_code(self, fullname: str) -> CodeType | None:
        """The real module's code: what ``python -m construct_eval.<old name>`` runs."""
        spec = importlib.util.find_spec(self.target)
        if spec is None or spec.loader is None:
            raise ImportError(f"{fullname} moved to {self.target}, which cannot be found")
        return spec.loader.get_code(self.target)  # type: ignore[attr-defined]


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_PREFIX) or fullname[len(_PREFIX) :] not in MOVED:
            return None
        new = _PREFIX + MOVED[fullname[len(_PREFIX) :]]
        real = importlib.util.find_spec(new)
        if real is None:
            return None
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(new), origin=real.origin)
        if real.submodule_search_locations is not None:
            spec.submodule_search_locations = list(real.submodule_search_locations)
        return spec


def install() -> None:
    """Put the alias finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
