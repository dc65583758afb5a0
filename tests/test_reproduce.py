"""`make reproduce`'s check: the committed tables, findings and figures hold against themselves,
and a changed stored number is caught (the remake itself is measured, not tested: it takes minutes)."""

from __future__ import annotations

import csv
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
STUDIES = Path("construct_eval") / "studies"
SCRIPT = ROOT / STUDIES / "reproduce.sh"


def _git(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def test_the_makefile_and_readme_name_the_script():
    assert f"bash {STUDIES}/reproduce.sh" in (ROOT / "Makefile").read_text()
    assert "`make reproduce`" in (ROOT / "README.md").read_text()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_check_holds_on_a_clone_and_names_a_changed_number(tmp_path):
    if _git("rev-parse", "HEAD").returncode != 0:
        pytest.skip("not a git checkout: the check compares the tree with its HEAD")
    clone = tmp_path / "clone"
    assert _git("clone", "--quiet", "--depth", "1", f"file://{ROOT}", str(clone)).returncode == 0
    for name in ("reproduce.sh", "diff_tables.py"):  # this tree's check, on the committed files
        shutil.copy(ROOT / STUDIES / name, clone / STUDIES / name)
    env_python = str(ROOT / ".venv" / "bin" / "python")
    run = lambda: subprocess.run(  # noqa: E731
        ["bash", str(STUDIES / "reproduce.sh"), "--check"],
        cwd=clone,
        capture_output=True,
        text=True,
        env={"PYTHON": env_python, "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    held = run()
    assert held.returncode == 0, held.stdout + held.stderr
    assert "tables and findings hold; figures hold" in held.stdout
    table = clone / "results/runs/financial_ner-sample600-controlled30/metrics/detection.csv"
    with table.open(newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0]["auroc"] = f"{float(rows[0]['auroc']) + 0.01:.4f}"
    with table.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    broken = run()
    assert broken.returncode == 1
    assert "DIFFER" in broken.stdout
    assert "detection.csv" in broken.stdout and "auroc" in broken.stdout, broken.stdout
