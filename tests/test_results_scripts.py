"""The scripts under results/runs that print published tables run, and print what is committed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "results" / "runs"


def _run(script: str) -> str:
    out = subprocess.run(
        [sys.executable, str(RUNS / script)], cwd=ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    return out.stdout


def test_null_split_prints_the_committed_table():
    assert _run("null_split.py") == (RUNS / "null_split.md").read_text()


def test_status_prints_a_row_for_every_recorded_run():
    table = _run("status.py")
    for run in sorted(p for p in RUNS.iterdir() if (p / "outputs.jsonl").exists()):
        assert f"`{run.name}`" in table, run.name


def test_the_judge_study_report_is_what_the_script_prints():
    assert _run("judge_study_report.py") == (RUNS / "judge_study.md").read_text()
