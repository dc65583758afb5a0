"""The project's prose about its recorded runs.

``results/runs/README.md`` is a catalogue: one row per run folder, whose counts are the run's own
(its ``run.json`` label summary), beside the status table ``construct_eval.studies.status`` prints. No tracked file
narrates the numbered sittings of work that made the project: each run's ``commands.log`` and
``provenance.jsonl`` keep its history, and prose says what a thing is, not which day it was done.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "results" / "runs"
README = RUNS / "README.md"
STUDIES = ROOT / "construct_eval" / "studies"  # the scripts the catalogue names

# "session 16", "sessions 12 and 13", "sitting 4", "session no. 3"; and "sitting" in any use (the
# project has no other). "this session" alone is left alone: code uses it for a process's calls.
NARRATION = re.compile(r"\b(?:session|sitting)s? (?:no\.? ?)?\d+|\bsittings?\b", re.IGNORECASE)
TEXT_SUFFIXES = {".md", ".txt", ".rst", ".sh", ".py", ".log", ".toml", ".cfg", ".ini", ".yml", ".yaml"}
# this file, which spells the pattern out
NOT_CHECKED = {"tests/test_docs.py"}
STATES = {"complete", "stopped", "under way"}
STATUS_HEADER = "| run | outputs | done |"  # status.py's table; the end-of-session refresh finds it by this
CATALOGUE_HEADER = "| run | what it is |"


def _tracked_text_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    paths = [p for p in listed.decode().split("\0") if p and p not in NOT_CHECKED]
    return [
        ROOT / p
        for p in paths
        if (Path(p).suffix in TEXT_SUFFIXES or Path(p).name == "Makefile") and (ROOT / p).is_file()
    ]


def _narration(text: str) -> list[str]:
    return [line.strip()[:120] for line in text.splitlines() if NARRATION.search(line)]


def test_the_pattern_finds_narrated_sittings_and_leaves_other_sessions_alone():
    for diary in (
        "On 2026-12-02 (session 16) part D went on",
        "calibrate took 61.2 CPU s in Session 12 and 104.9 this session",
        "(stopped at the end of session 3 after 20 documents; resumable)",
        "each numbered by the sitting of work it happened in",
        "results of sessions 12 and 13",
    ):
        assert NARRATION.search(diary), diary
    for fine in (
        "unscored rate (this session): 0.5%",
        "calls written this session, this configuration's rows",
        "The server runs in a session of its own so that a Ctrl-C does not reach it",
        "an HTTP session with 3 retries",
    ):
        assert not NARRATION.search(fine), fine


def test_no_tracked_file_narrates_numbered_sittings_of_work():
    found = {}
    for path in _tracked_text_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if lines := _narration(text):
            found[str(path.relative_to(ROOT))] = lines
    assert not found, f"say what was measured or done, not in which sitting: {found}"


def _split(line: str) -> list[str]:
    """A Markdown table row's cells (a ``\\|`` inside a cell is not a separator)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def _table(text: str, header_start: str) -> list[dict[str, str]]:
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(header_start)]
    assert len(starts) == 1, f"{len(starts)} tables start with {header_start!r}"
    header = _split(lines[starts[0]])
    rows = []
    for line in lines[starts[0] + 2 :]:
        if not line.startswith("|"):
            break
        cells = _split(line)
        assert len(cells) == len(header), line[:80]
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def _run_folders() -> list[Path]:
    return sorted(p for p in RUNS.iterdir() if (p / "outputs.jsonl").exists())


def test_the_catalogue_has_one_row_per_run_folder_with_the_runs_own_counts():
    rows = _table(README.read_text(), CATALOGUE_HEADER)
    names = [r["run"].strip("`") for r in rows]
    assert names == [p.name for p in _run_folders()]
    for row in rows:
        meta = json.loads((RUNS / row["run"].strip("`") / "run.json").read_text())
        labels = meta["labels"]
        labelled, _, planned = row["documents"].partition(" of ")
        assert int(labelled) == labels["documents"], row["run"]
        assert int(planned or labelled) == meta["dataset"]["documents"], row["run"]
        assert int(row["wrong"]) == labels["documents_wrong"], row["run"]
        assert row["state"] in STATES, row["run"]
        for script in re.findall(r"`(\w+\.(?:sh|py))", row["made by"]):
            assert (STUDIES / script).exists(), f"{row['run']}: {script}"


def test_the_status_table_is_kept_for_its_refresh_with_a_row_per_run():
    rows = _table(README.read_text(), STATUS_HEADER)
    assert [r["run"].strip("`") for r in rows] == [p.name for p in _run_folders()]


def test_the_runs_readme_holds_no_dated_diary():
    """Dates belong to each run's provenance.jsonl; the README says what each run is."""
    text = README.read_text()
    assert not re.findall(r"\b20\d\d-\d\d-\d\d\b", text)
    assert not _narration(text)
