"""The package's shape: old module paths still work, the import layers hold.

The subpackages group modules by job (see README "Layout"); ``construct_eval/_compat.py`` keeps
every module path of the flat layout importable, as the same module object, and runnable with
``python -m``; ``lint-imports`` (in ``make lint``) checks the layer contract of pyproject.toml.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from construct_eval._compat import MOVED

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_path_is_the_same_module(old):
    before = importlib.import_module(f"construct_eval.{old}")
    after = importlib.import_module(f"construct_eval.{MOVED[old]}")
    assert before is after
    assert before.__spec__.name == f"construct_eval.{MOVED[old]}"  # the real spec, not the alias's


def test_the_old_llm_module_names_come_from_the_llm_package():
    from construct_eval.llm import Endpoint, LLMClient, make_client
    from construct_eval.llm.client import Endpoint as E2

    assert Endpoint is E2 and LLMClient and make_client


@pytest.mark.parametrize("old", ["llama_server", "scripted_server"])
def test_old_entry_points_run_with_python_m(old):
    out = subprocess.run(
        [sys.executable, "-m", f"construct_eval.{old}", "--help"], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("usage:")


def test_every_moved_name_points_to_a_module_that_exists():
    for new in MOVED.values():
        parts = new.split(".")
        path = ROOT / "construct_eval" / Path(*parts)
        assert path.with_suffix(".py").exists() or (path / "__init__.py").exists(), new


def test_the_layer_contract_is_checked():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = config["contracts"][0]["layers"]
    assert layers[0] == "cli" and layers[-1].startswith("parsing")
    tops = {p.name.removesuffix(".py") for p in (ROOT / "construct_eval").iterdir() if not p.name.startswith("_")}
    named = {name.strip() for layer in layers for name in layer.split(":")}
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
    from construct_eval import parse_rating, score_trustworthiness  # the names exported before

    assert callable(parse_rating) and callable(score_trustworthiness)
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
