"""The stored-numbers guard (construct_eval.studies.diff_tables): issue 58's tolerance rule and the old
exact rule, on small pairs of analysed trees."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


dt = importlib.import_module("construct_eval.studies.diff_tables")

METRICS = "results/runs/r/metrics"
RELIABILITY = """level,scorer,method,bin,low,high,n,mean_predicted,observed
field,s@leaf,isotonic,0,0.0,0.0425531914893617,54,0.011943509213704927,0.12962962962962962
field,s@leaf,isotonic,1,0.0425531914893617,0.25,65,0.04495188012775088,0.015384615384615385
field,s@leaf,beta,0,0.0,0.3444374071045606,60,0.1321652197517549,0.1
"""
RELIABILITY_MD = """## Reliability bins, out of fold (r)

| level | scorer | method | bin | low | high | n | mean_predicted | observed |
|---|---|---|---|---|---|---|---|---|
| field | s@leaf | isotonic | 0 | 0.000 | 0.043 | 54 | 0.012 | 0.130 |
| field | s@leaf | isotonic | 1 | 0.043 | 0.250 | 65 | 0.045 | 0.015 |
| field | s@leaf | beta | 0 | 0.000 | 0.344 | 60 | 0.132 | 0.100 |
"""
DETECTION = """level,scorer,n,prevalence,auroc,note
document,s,40,0.425,0.8101,
field,s@leaf,593,0.2496,0.833,one class only
"""
DETECTION_MD = """## Error detection (r)

| level | scorer | n | prevalence | auroc | note |
|---|---|---|---|---|---|
| document | s | 40 | 0.425 | 0.810 |  |
| field | s@leaf | 593 | 0.250 | 0.833 | one class only |

A note under the table.
"""
VALUES = """value,n,error_rate,isotonic,beta
1,10,0.5,0.4873,0.49876543210987654
2,12,0.25,0.2512,0.2487654321098765
"""
README = """# Project

<!-- findings: written by construct_eval/studies/findings.py from the stored tables; do not edit -->
- **A finding** AUROC 0.810 (n = 40).
<!-- findings: end -->

More text.
"""
FILES = {
    f"{METRICS}/reliability.csv": RELIABILITY,
    f"{METRICS}/reliability.md": RELIABILITY_MD,
    f"{METRICS}/detection.csv": DETECTION,
    f"{METRICS}/detection.md": DETECTION_MD,
    f"{METRICS}/values_field_s.csv": VALUES,
    "results/runs/null_split.md": "| a | b |\n|---|---|\n| x | 0.500 |\n",
    "results/FINDINGS.md": "# Findings\n\n- **A finding** AUROC 0.810 (n = 40).\n",
    "results/FINDINGS.cells.csv": "table,where,column,format,quoted\nx,y,auroc,3f,0.810\n",
    "README.md": README,
}


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _pair(tmp_path: Path, **changes: str) -> tuple[Path, Path]:
    """BEFORE with FILES; AFTER with FILES and ``changes`` (file key -> new text, "" to drop)."""
    after = dict(FILES)
    for name, text in changes.items():
        rel = {
            "reliability": f"{METRICS}/reliability.csv",
            "reliability_md": f"{METRICS}/reliability.md",
            "detection": f"{METRICS}/detection.csv",
            "detection_md": f"{METRICS}/detection.md",
            "values": f"{METRICS}/values_field_s.csv",
            "findings": "results/FINDINGS.md",
            "readme": "README.md",
        }[name]
        if text:
            after[rel] = text
        else:
            del after[rel]
    return _tree(tmp_path / "before", FILES), _tree(tmp_path / "after", after)


def test_identical_trees_pass_in_both_modes(tmp_path):
    before, after = _pair(tmp_path)
    for rule in (dt.TOLERANCE, dt.EXACT):
        report = dt.compare_trees(before, after, rule)
        assert report.passed and report.differences == []
        assert report.files == len(FILES) and report.cells > 50
    assert dt.main([str(before), str(after)]) == 0
    assert dt.main(["--exact", str(before), str(after)]) == 0


def test_a_fitted_value_moved_by_1e8_passes_the_tolerance_and_fails_the_exact_rule(tmp_path, capsys):
    moved = RELIABILITY.replace("0.04495188012775088", "0.04495189012775088")
    before, after = _pair(tmp_path, reliability=moved)
    report = dt.compare_trees(before, after)
    assert report.passed, report.text()
    assert report.moved["fitted"].count == 1 and report.moved["fitted"].largest == pytest.approx(1e-8)
    exact = dt.compare_trees(before, after, dt.EXACT)
    [diff] = exact.failing
    assert (diff.kind, diff.file, diff.row, diff.column) == (
        dt.Kind.BEYOND,
        f"{METRICS}/reliability.csv",
        2,
        "mean_predicted",
    )
    assert dt.main([str(before), str(after)]) == 0
    assert dt.main(["--exact", str(before), str(after)]) == 1
    assert "the stored numbers do not stand" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "old", "new", "column"),
    [
        ("reliability", "0.1321652197517549", "0.1322152197517549", "mean_predicted"),  # a row whose method is beta
        ("values", "0.2487654321098765", "0.2488154321098765", "beta"),  # a column named beta
    ],
)
def test_a_beta_calibration_value_moved_by_5e5_passes(tmp_path, name, old, new, column):
    text = {"reliability": RELIABILITY, "values": VALUES}[name]
    before, after = _pair(tmp_path, **{name: text.replace(old, new)})
    report = dt.compare_trees(before, after)
    assert report.passed, report.text()
    assert report.moved["beta"].count == 1 and report.moved["beta"].largest == pytest.approx(5e-5)
    assert column in report.moved["beta"].where
    assert not dt.compare_trees(before, after, dt.EXACT).passed


def test_a_probability_not_of_beta_moved_by_1e5_fails(tmp_path):
    moved = RELIABILITY.replace("0.12962962962962962", "0.12963962962962962")
    before, after = _pair(tmp_path, reliability=moved)
    report = dt.compare_trees(before, after)
    assert not report.passed
    [diff] = report.failing
    assert (diff.kind, diff.file, diff.row, diff.column) == (
        dt.Kind.BEYOND,
        f"{METRICS}/reliability.csv",
        1,
        "observed",
    )
    assert "method=isotonic" in diff.key and "1e-05 > 1e-06" in diff.detail


def test_a_changed_markdown_cell_fails_with_its_table_row_and_column(tmp_path, capsys):
    changed = DETECTION_MD.replace("| 593 | 0.250 | 0.833 |", "| 593 | 0.250 | 0.834 |")
    before, after = _pair(tmp_path, detection_md=changed)
    report = dt.compare_trees(before, after)
    assert not report.passed
    [diff] = report.failing
    assert (diff.kind, diff.file, diff.row, diff.column, diff.before, diff.after) == (
        dt.Kind.UNEXPLAINED,
        f"{METRICS}/detection.md",
        2,
        "auroc",
        "0.833",
        "0.834",
    )
    assert diff.key == "level=field, scorer=s@leaf"
    assert "CSV twin '0.833' -> '0.833'" in diff.detail  # what a person judges it by
    assert dt.main([str(before), str(after)]) == 1
    out = capsys.readouterr().out
    assert (
        "unexplained (1):" in out and f"{METRICS}/detection.md row 2 (level=field, scorer=s@leaf) column 'auroc'" in out
    )


def test_a_rounded_csv_cell_or_a_line_of_text_that_changed_is_unexplained(tmp_path):
    """Printed cells are held to their printed precision, whatever the tolerance: a 4-decimal
    CSV number that moved by 1e-4, and text outside a Markdown table."""
    before, after = _pair(
        tmp_path,
        detection=DETECTION.replace("0.2496", "0.2497"),
        detection_md=DETECTION_MD.replace("A note under", "A changed note under"),
    )
    report = dt.compare_trees(before, after)
    found = {(d.kind, d.file, d.row, d.column) for d in report.failing}
    assert found == {
        (dt.Kind.UNEXPLAINED, f"{METRICS}/detection.csv", 2, "prevalence"),
        (dt.Kind.UNEXPLAINED, f"{METRICS}/detection.md", 8, ""),
    }
    equal_as_numbers = DETECTION.replace("0.425", "0.4250")
    assert dt.compare_trees(*_pair(tmp_path / "again", detection=equal_as_numbers)).passed


def test_a_printed_change_lists_the_full_precision_values_of_its_row_that_moved(tmp_path):
    """Two bins that exchanged an item: the counts are unexplained, and each names the bin edge
    that moved within tolerance (the trace of an item near it)."""
    moved = RELIABILITY.replace("0.25,65,", "0.2500003,66,")
    before, after = _pair(tmp_path, reliability=moved, reliability_md=RELIABILITY_MD.replace("| 65 |", "| 66 |"))
    report = dt.compare_trees(before, after)
    assert {(d.file, d.row, d.column) for d in report.failing} == {
        (f"{METRICS}/reliability.csv", 2, "n"),
        (f"{METRICS}/reliability.md", 2, "n"),
    }
    assert all("high 0.25 -> 0.2500003" in d.detail for d in report.failing)


def test_an_explainer_that_names_items_lets_a_printed_change_stand(tmp_path):
    before, after = _pair(tmp_path, detection_md=DETECTION_MD.replace("0.833 |", "0.834 |"))
    report = dt.compare_trees(
        before, after, explain=lambda d: ["doc-007/total at 0.5000004"] if d.column == "auroc" else []
    )
    assert report.passed
    [diff] = report.differences
    assert diff.kind is dt.Kind.EXPLAINED and diff.items == ("doc-007/total at 0.5000004",)
    assert "items: doc-007/total at 0.5000004" in report.text()


@pytest.mark.parametrize("side", ["before", "after"])
def test_a_table_on_one_side_only_fails(tmp_path, side):
    before, after = _pair(tmp_path)
    extra = (before if side == "before" else after) / METRICS / "calibration.csv"
    extra.write_text("level,scorer,method,brier\nfield,s@leaf,beta,0.1647\n")
    report = dt.compare_trees(before, after)
    [diff] = report.failing
    assert diff.kind is dt.Kind.STRUCTURE and diff.file == f"{METRICS}/calibration.csv"
    assert diff.detail == f"{side.upper()} only"
    assert not dt.compare_trees(before, after, dt.EXACT).passed


def test_a_missing_table_a_new_column_or_a_lost_row_fails(tmp_path):
    before, after = _pair(
        tmp_path,
        values="",
        detection=DETECTION.replace("auroc,note", "auroc,note,extra").replace("1,\n", "1,,x\n"),
        reliability_md=RELIABILITY_MD.rsplit("| field | s@leaf | beta", 1)[0],
    )
    report = dt.compare_trees(before, after)
    assert {(d.kind, d.file) for d in report.failing} == {
        (dt.Kind.STRUCTURE, f"{METRICS}/values_field_s.csv"),
        (dt.Kind.STRUCTURE, f"{METRICS}/detection.csv"),
        (dt.Kind.STRUCTURE, f"{METRICS}/reliability.md"),
    }


def test_findings_and_the_readme_block_must_be_byte_identical(tmp_path):
    before, after = _pair(tmp_path, findings=FILES["results/FINDINGS.md"].replace("0.810", "0.811"))
    [diff] = dt.compare_trees(before, after).failing
    assert (diff.kind, diff.file, diff.row) == (dt.Kind.VERBATIM, "results/FINDINGS.md", 3)
    before, after = _pair(tmp_path / "readme", readme=README.replace("(n = 40)", "(n = 40) "))
    [diff] = dt.compare_trees(before, after).failing
    assert (diff.kind, diff.file) == (dt.Kind.VERBATIM, "README.md findings block")
    outside = _pair(tmp_path / "outside", readme=README.replace("More text.", "Other text."))
    assert dt.compare_trees(*outside).passed  # the rest of the README is not the guard's


def test_the_cli_refuses_a_folder_without_results(tmp_path):
    before, _ = _pair(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        dt.main([str(before), str(tmp_path / "nowhere")])
    assert exit_.value.code == 2


def test_the_shell_guard_documents_its_modes_and_refuses_bad_arguments():
    script = ROOT / "construct_eval" / "studies" / "diff_tables.sh"
    env = {**os.environ, "PYTHON": sys.executable}
    shown = subprocess.run(
        ["bash", str(script), "--help"], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env
    )
    assert shown.returncode == 0
    for words in ("--exact", "--keep", "1e-6", "1e-4", "unexplained", "Not checked", "Exit status"):
        assert words in shown.stdout, words
    for args in ([], ["--bogus", "HEAD"], ["a", "b", "c"]):
        refused = subprocess.run(
            ["bash", str(script), *args], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env
        )
        assert refused.returncode == 2, args
