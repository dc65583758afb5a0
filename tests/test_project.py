"""The project's own files agree with each other: environment.yml, pyproject.toml, the lock."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _name(spec: str) -> str:
    return re.split(r"[<>=!~\[ ;]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _environment() -> dict[str, str]:
    """Packages in environment.yml (conda and pip parts) with their pinned versions."""
    out: dict[str, str] = {}
    for line in (ROOT / "environment.yml").read_text().splitlines():
        m = re.match(r"\s+-\s+([A-Za-z0-9_.\-]+)\s*==?\s*([^\s#]+)", line)
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def _pyproject() -> tuple[set[str], set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = {_name(d) for d in project["dependencies"]}
    extras = {_name(d) for deps in project["optional-dependencies"].values() for d in deps}
    return core, extras


def _lock() -> dict[str, str]:
    out = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==", 1)
            out[name.lower().replace("_", "-")] = version.strip()
    return out


CARD_PACKAGES = {"jupyterlab", "numpy", "scipy", "scikit-learn", "matplotlib", "netcal", "openai"}


def test_card_packages_are_core_dependencies():
    core, _ = _pyproject()
    assert core >= CARD_PACKAGES


def test_environment_and_pyproject_list_the_same_packages():
    env = _environment()
    env.pop("python", None)
    core, extras = _pyproject()
    assert core == set(env), f"only in pyproject: {core - set(env)}; only in environment.yml: {set(env) - core}"
    assert not (set(env) - core - extras)


def test_environment_versions_match_the_lock():
    lock = _lock()
    for name, version in _environment().items():
        if name == "python":
            assert version == "3.11"
            continue
        assert lock.get(name) == version, f"{name}: environment.yml {version}, requirements.lock {lock.get(name)}"


def test_every_declared_dependency_is_pinned_in_the_lock():
    core, extras = _pyproject()
    lock = _lock()
    assert not ((core | extras) - set(lock)), (core | extras) - set(lock)


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "make test" in ci
    assert "make test" in readme and "make demo" in readme
