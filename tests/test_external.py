"""Scorers that run elsewhere (e.g. TLM): items out, score rows in, with errors that name the row."""

from __future__ import annotations

import csv
import json

import pytest

from construct_eval.cli import main
from construct_eval.data.runs import RunDir
from construct_eval.scorers.external import ExternalScoreError, read_external_scores
from tests.conftest import make_run


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_export_writes_what_an_outside_scorer_needs(tmp_path):
    run = make_run(tmp_path / "run", 3)
    run.append("outputs", [])
    out = tmp_path / "items.jsonl"
    assert main(["export", "--run", str(run.path), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["doc-000", "doc-001", "doc-002"]
    assert rows[1]["output"]["invoice_id"] == "INV-1" and "INV-1" in rows[1]["request"]
    assert rows[0]["schema"]["properties"]["total"] == {"type": "number"}
    assert len(rows[0]["output_hash"]) == 16


def test_imported_scores_are_evaluated_beside_the_others(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "20"]) == 0
    assert main(["label", "--run", str(run_dir)]) == 0
    labels = {r["id"]: r for r in RunDir(run_dir).read("labels")}
    rows = []
    for i, (doc_id, lab) in enumerate(labels.items()):
        # a scorer that sees the truth: the imported score must come out with AUROC 1
        rows.append(
            {"id": doc_id, "field": "__doc__", "score": 0.1 if lab["wrong"] else 0.9, "calls": 5, "seconds": 2.5}
        )
        if i == 0:
            rows.append({"id": doc_id, "field": "vendor", "score": None, "reason": "reflection failed"})
    scores = _write(tmp_path / "ext.jsonl", rows)
    assert main(["import-scores", "--run", str(run_dir), "--scores", str(scores), "--scorer", "tlm"]) == 0
    assert main(["import-scores", "--run", str(run_dir), "--scores", str(scores), "--scorer", "tlm"]) == 0  # replaces
    stored = [r for r in RunDir(run_dir).read("scores") if r["scorer"] == "tlm"]
    assert len(stored) == len(rows)
    assert main(["evaluate", "--run", str(run_dir), "--n-boot", "50"]) == 0
    with (run_dir / "metrics" / "detection.csv").open() as fh:
        table = {(r["level"], r["scorer"]): r for r in csv.DictReader(fh)}
    doc = table[("document", "tlm")]
    assert float(doc["auroc"]) == 1.0 and int(doc["calls"]) == 5 * len(labels)
    assert float(doc["seconds"]) == pytest.approx(2.5 * len(labels))


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "nope", "field": "__doc__", "score": 0.5}, "document 'nope' is not in the run"),
        ({"id": "doc-001", "field": "total", "score": 1.5}, "doc-001.*total.*outside \\[0, 1\\]"),
        ({"id": "doc-001", "field": "total", "score": "high"}, "not a finite number"),
        ({"id": "doc-001", "field": "total", "score": None}, "needs a 'reason'"),
        ({"id": "doc-001", "field": "total", "score": 0.2, "granularity": "deep"}, "granularity 'deep'"),
        ({"id": "doc-001", "field": "__doc__", "score": 0.2, "calls": -1}, "calls -1"),
        ({"id": "doc-001", "score": 0.2}, "'field' must be"),
    ],
)
def test_bad_score_rows_name_line_document_and_field(tmp_path, row, message):
    run = make_run(tmp_path / "run", 2)
    path = _write(tmp_path / "ext.jsonl", [{"id": "doc-000", "field": "__doc__", "score": 0.5}, row])
    with pytest.raises(ExternalScoreError, match=message) as info:
        read_external_scores(path, run, "tlm")
    assert "ext.jsonl:2" in str(info.value)


def test_duplicates_and_reserved_names_are_refused_and_nothing_is_written(tmp_path):
    run = make_run(tmp_path / "run", 2)
    row = {"id": "doc-000", "field": "__doc__", "score": 0.5}
    path = _write(tmp_path / "ext.jsonl", [row, row])
    with pytest.raises(ExternalScoreError, match="appears twice"):
        read_external_scores(path, run, "tlm")
    with pytest.raises(ExternalScoreError, match="own"):
        read_external_scores(_write(tmp_path / "one.jsonl", [row]), run, "reflection")
    assert main(["import-scores", "--run", str(run.path), "--scores", str(path), "--scorer", "tlm"]) == 2
    assert not run.file("scores").exists()
