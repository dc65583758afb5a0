"""Every command's ``--help`` against a committed snapshot: a restructure must not change the CLI.

The snapshot is ``tests/snapshots/cli_help.txt``. A change on purpose rewrites it with
``CONSTRUCT_EVAL_UPDATE_SNAPSHOTS=1 pytest tests/test_cli_help.py`` and the diff is reviewed.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

SNAPSHOT = Path(__file__).parent / "snapshots" / "cli_help.txt"


def _helps() -> str:
    from construct_eval.cli import build_parser

    os.environ["COLUMNS"] = "100"  # argparse wraps to the terminal width
    parser = build_parser()
    parts = [f"$ construct-eval --help\n{parser.format_help()}"]
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sorted(sub.choices.items()):
        parts.append(f"$ construct-eval {name} --help\n{p.format_help()}")
    return "\n".join(parts)


def test_every_command_help_matches_the_snapshot(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("CONSTRUCT_EVAL_BASE_URL", raising=False)
    monkeypatch.delenv("CONSTRUCT_EVAL_MODEL", raising=False)
    monkeypatch.setenv("CONSTRUCT_EVAL_CACHE", "/home/user/.cache/construct-eval/responses.sqlite")
    text = _helps()
    if os.environ.get("CONSTRUCT_EVAL_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(text)
    assert SNAPSHOT.exists(), f"no snapshot: run with CONSTRUCT_EVAL_UPDATE_SNAPSHOTS=1 to write {SNAPSHOT}"
    assert text == SNAPSHOT.read_text(), "a command's --help changed: review and update the snapshot on purpose"
