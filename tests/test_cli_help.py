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
    """The options of each (sub)command by its name (``batch import``; ``""``: the program's own),
    and ``"*"``: every option of any."""
    from construct_eval.cli import build_parser

    found: dict[str, set[str]] = {"*": set()}

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        found[name] = set()
        for action in parser._actions:
            found[name].update(action.option_strings)
            found["*"].update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                for part, sub in action.choices.items():
                    walk(sub, f"{name} {part}".strip())

    walk(build_parser(), "")
    return found


def _code(text: str) -> list[str]:
    """The code a Markdown text quotes: each inline span (one that wraps onto the next line
    joined), and each command of a fenced block (lines ending in a backslash joined)."""
    import re

    fenced = re.compile(r"^```[a-z]*\n(.*?)^```", flags=re.MULTILINE | re.DOTALL)
    commands = []
    for block in fenced.findall(text):
        joined = re.sub(r"\\\n\s*", " ", block)
        commands += [line for line in joined.splitlines() if not line.lstrip().startswith("#")]
    inline = [" ".join(span.split()) for span in re.findall(r"(?<!`)`([^`]+)`(?!`)", fenced.sub("", text))]
    return [*inline, *commands]


def _option_errors(options: dict[str, set[str]], command: str) -> list[str]:
    """What is wrong with one quoted command (or option) by the parser's ``options``."""
    words = [w.strip("[]") for w in command.split()]
    if "construct-eval" in words:
        rest = words[words.index("construct-eval") + 1 :]
    elif words and words[0] in options and words[0] not in ("", "*") and any(w.startswith("--") for w in words):
        rest = words  # a command quoted without the program's name: `evaluate --intervals delong`
    else:
        if command.startswith("--"):  # an option named alone
            flag = words[0].split("=")[0]
            if flag not in options["*"] and flag not in OTHER_SCRIPTS:
                return [f"`{command}` is no option of construct-eval"]
        return []
    named = [w for w in rest[:2] if w and not w.startswith("-")]
    name = " ".join(named) if " ".join(named) in options else " ".join(named[:1])
    if name not in options:
        return [] if name in PLUGIN_EXAMPLES else [f"`{command}`: no command {name!r}"]
    flags = [w.split("=")[0] for w in rest if w.startswith("--")]
    return [
        f"`{command}`: {flag} is no option of {name or 'the program'}" for flag in flags if flag not in options[name]
    ]


def test_every_option_the_prose_names_exists_and_a_quoted_command_takes_the_options_quoted_with_it():
    """Inline code and fenced blocks: a ``construct-eval`` command's options must be that
    command's; an option named alone must be some command's (or a listed script's)."""
    import re

    options = _options()
    wrong = []
    for pattern in PROSE:
        for file in sorted(ROOT.glob(pattern)):
            for span in _code(file.read_text()):
                for command in (c.strip() for c in re.split(r"&&|\||;", span)):
                    wrong += [f"{file.relative_to(ROOT)}: {e}" for e in _option_errors(options, command)]
    assert not wrong, "\n".join(wrong)
    for flag, script in OTHER_SCRIPTS.items():
        assert f'"{flag}"' in (ROOT / script).read_text(), f"{flag} is not an option of {script}"


def test_the_prose_check_finds_a_wrong_option_wherever_it_is_quoted():
    options = _options()
    text = (
        "Run `construct-eval evaluate --run r\n--no-such` then `--max-spend` or `evaluate --nope`.\n"
        "```bash\nconstruct-eval score --run r \\\n  --mode doc --bogus\nconstruct-eval --foo\n"
        "construct-eval calibrate [--methods m] [--wrong]\n```\n"
    )
    found = [e for span in _code(text) for e in _option_errors(options, span)]
    assert [e.split(": ")[-1] for e in found] == [
        "--no-such is no option of evaluate",
        "`--max-spend` is no option of construct-eval",
        "--nope is no option of evaluate",
        "--bogus is no option of score",
        "--foo is no option of the program",
        "--wrong is no option of calibrate",
    ], found
