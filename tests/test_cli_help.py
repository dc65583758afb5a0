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


ROOT = Path(__file__).resolve().parents[1]
PROSE = ("README.md", "docs/*.md", "results/FINDINGS.md", "results/runs/README.md")
OTHER_SCRIPTS = {
    "--profile": "benchmarks/bench_analysis_scale.py",
    "--exact": "construct_eval/studies/diff_tables.py",
    "--report-only": "construct_eval/demo/pipeline.py",
}
"""Options the prose names that belong to a script, not to ``construct-eval`` (each checked to be that script's)."""
PLUGIN_EXAMPLES = {"whole-check"}
"""Commands the prose shows a plugin adding (usage.md's scorer from another distribution): not in this parser."""


def _options() -> dict[str, set[str]]:
    """Every option of every (sub)command, by command name (``batch import``), and ``""``: all of them."""
    from construct_eval.cli import build_parser

    found: dict[str, set[str]] = {"": set()}

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        for action in parser._actions:
            found.setdefault(name, set()).update(action.option_strings)
            found[""].update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                for part, sub in action.choices.items():
                    walk(sub, f"{name} {part}".strip())

    walk(build_parser(), "")
    return found


def test_every_option_the_prose_names_exists_and_a_quoted_command_takes_the_options_quoted_with_it():
    """Inline code and the lines of fenced blocks: a ``construct-eval`` command's options must be
    that command's; an option named alone must be some command's (or a listed script's)."""
    import re

    options = _options()
    wrong = []
    for pattern in PROSE:
        for file in sorted(ROOT.glob(pattern)):
            text = file.read_text()
            blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
            code_lines = [line for block in blocks for line in block.splitlines() if not line.startswith("#")]
            for span in [*re.findall(r"`([^`\n]+)`", text), *code_lines]:
                for command in (c.strip() for c in re.split(r"&&|\||;", span)):
                    words = command.split()
                    if "construct-eval" in words:
                        rest = words[words.index("construct-eval") + 1 :]
                        named = [w for w in rest[:2] if not w.startswith("-")]
                        name = " ".join(named) if " ".join(named) in options else " ".join(named[:1])
                        if name not in options:
                            if name not in PLUGIN_EXAMPLES:
                                wrong.append(f"{file.name}: `{command}`: no command {name!r}")
                            continue
                        flags = [w.split("=")[0] for w in rest if w.startswith("--")]
                        wrong += [f"{file.name}: `{command}`: {f}" for f in flags if f not in options[name]]
                    elif command.startswith("--"):  # an option named alone in the prose
                        flag = words[0].split("=")[0]
                        if flag not in options[""] and flag not in OTHER_SCRIPTS:
                            wrong.append(f"{file.name}: `{command}` is no option of construct-eval")
    assert not wrong, "\n".join(wrong)
    for flag, script in OTHER_SCRIPTS.items():
        assert f'"{flag}"' in (ROOT / script).read_text(), f"{flag} is not an option of {script}"
