"""What made a run folder's files: every command that writes to a run appends one line to its
``provenance.jsonl`` (argv, package and key dependency versions, the git commit of the code and
whether it had uncommitted changes, a signature of the options, start and end time, exit code).

A reviewer can then tell which code and options produced a table without trusting a README.
The git fields are present only where the package runs from a git checkout.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata as md
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from construct_eval.digest import sha256_hex

KEY_PACKAGES = ("openai", "numpy", "scipy", "scikit-learn", "netcal", "matplotlib", "llama_cpp_python")
FILE = "provenance.jsonl"


def stage_model(meta: Mapping[str, Any], role: str) -> str | None:
    """The model a run's stage ``role`` (``generator``, ``judge``, ``construct``, ...) called, as the
    run's ``run.json`` (``meta``) records its endpoint; None where the run had no such stage.

    >>> stage_model({"judge": {"endpoint": {"model": "qwen2.5-coder-1.5b"}}}, "judge")
    'qwen2.5-coder-1.5b'
    >>> stage_model({}, "construct") is None
    True
    """
    model = ((meta.get(role) or {}).get("endpoint") or {}).get("model")
    return str(model) if model else None


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


def _version(name: str) -> str | None:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def git_state(where: Path | None = None) -> dict[str, Any]:
    """The commit of the checkout holding the package, and whether its code differs from it."""
    root = where or Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "."], cwd=root, capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    return {"commit": commit, "dirty": bool(dirty)}


def options_signature(options: Mapping[str, Any]) -> str:
    """A short hash of the options (their JSON, sorted): the same options, the same signature."""
    return sha256_hex(json.dumps(options, sort_keys=True, default=str))[:12]


class Record:
    """Started before a command runs; :meth:`finish` appends the line with its exit code."""

    def __init__(self, run_dir: Path, argv: list[str], command: str, options: Mapping[str, Any]):
        from construct_eval import __version__

        self.run_dir = run_dir
        self.line: dict[str, Any] = {
            "command": command,
            "argv": argv,
            "started": _now(),
            "construct_eval": __version__,
            "python": sys.version.split()[0],
            "packages": {p: v for p in KEY_PACKAGES if (v := _version(p))},
            "git": git_state(),
            "options": {k: v for k, v in options.items() if k != "func"},
            "options_signature": options_signature({k: v for k, v in options.items() if k != "func"}),
        }

    def finish(self, exit_code: int) -> None:
        if not self.run_dir.is_dir():
            return  # the command failed before the folder existed: nothing to annotate
        self.line.update(ended=_now(), exit_code=exit_code)
        with (self.run_dir / FILE).open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(self.line, default=str, ensure_ascii=False) + "\n")
