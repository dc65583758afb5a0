"""The package's shape: one import path per module, the import layers hold.

The subpackages group modules by job (see README "Layout"); the flat layout's module paths are
gone (notebooks and scripts import the package's public API or the new paths);
``lint-imports`` (in ``make lint``) checks the layer contract of pyproject.toml.
"""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_old_module_paths_are_gone_and_nothing_imports_them():
    """The flat layout's module paths (``construct_eval.judge``, ``.runs``, ...) no longer
    resolve, and no notebook, script or module of the repository imports one."""
    old = ["judge", "runs", "evaluation", "local_llm", "llama_server", "scripted_server", "figures", "datasets"]
    for name in old:
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(f"construct_eval.{name}")
    pattern = re.compile(rf"(?:from|import) construct_eval\.({'|'.join(old)})\b")
    files = [*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("results/**/*.py"), *ROOT.glob("construct_eval/**/*.py")]
    files += [*ROOT.glob("benchmarks/*.py"), *ROOT.glob("tests/*.py")]
    hits = [f"{p.relative_to(ROOT)}: {m[0]}" for p in files for m in pattern.finditer(p.read_text(errors="ignore"))]
    assert not hits, hits


def test_notebooks_and_scripts_import_no_private_name():
    private = re.compile(r"from construct_eval[\w.]* import [^\n]*\b_[a-z]\w*")
    files = [
        *ROOT.glob("notebooks/*.ipynb"),
        *ROOT.glob("results/tlm_anchor/*.py"),
        *ROOT.glob("construct_eval/cli/*.py"),
        *ROOT.glob("construct_eval/studies/*.py"),
    ]
    hits = [str(p.relative_to(ROOT)) for p in files if private.search(p.read_text())]
    assert not hits, hits


def test_results_holds_outputs_and_the_studies_are_modules_with_a_main():
    """The study scripts live in construct_eval.studies (issue 56), not among the run data: each
    Python one imports without a sys.path edit, and each that runs as a script has a ``main()``
    (``python -m construct_eval.studies.NAME``; the notebooks' helper modules are libraries); no
    notebook puts ``results/`` on the path."""
    assert not [*ROOT.glob("results/*.py"), *ROOT.glob("results/runs/*.py"), *ROOT.glob("results/runs/*.sh")]
    names = sorted(p.stem for p in (ROOT / "construct_eval" / "studies").glob("*.py") if p.stem != "__init__")
    assert "diff_tables" in names and (ROOT / "construct_eval/studies/findings/__main__.py").exists()
    assert callable(importlib.import_module("construct_eval.studies.findings").main)  # a package since issue 78
    scripts = [n for n in names if "__main__" in (ROOT / "construct_eval" / "studies" / f"{n}.py").read_text()]
    assert len(scripts) >= 10, scripts
    for name in names:
        module = importlib.import_module(f"construct_eval.studies.{name}")
        assert name not in scripts or callable(module.main), name
    hits = [p.name for p in ROOT.glob("notebooks/*.ipynb") if "sys.path.insert" in p.read_text()]
    assert not hits, hits


def test_the_layer_contract_is_checked():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = config["contracts"][0]["layers"]
    # on top the project's studies (nothing imports them), then the interfaces; the base: the package's kinds, no imports
    assert layers[:2] == ["studies", "cli"] and layers[-1].startswith("kinds")
    tops = {p.name.removesuffix(".py") for p in (ROOT / "construct_eval").iterdir() if not p.name.startswith("_")}
    named = {name.strip() for layer in layers for name in re.split(r"[:|]", layer)}
    assert tops - {"py.typed"} <= named, f"modules outside every layer: {sorted(tops - named)}"
    if shutil.which("lint-imports") is None and not (Path(sys.executable).parent / "lint-imports").exists():
        pytest.skip("import-linter is not installed (make venv installs it)")
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    out = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:]


def test_the_public_api_resolves_and_stays_light():
    import construct_eval

    for name in construct_eval.__all__:
        assert getattr(construct_eval, name) is not None, name
    from construct_eval import score_trustworthiness

    assert callable(score_trustworthiness)
    with pytest.raises(ImportError):  # the names exported before the subpackages are gone, not shimmed
        from construct_eval import parse_rating  # noqa: F401
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, construct_eval; print('sklearn' in sys.modules, 'matplotlib' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.stdout.split() == ["False", "False"], "import construct_eval loads the analysis stack"
