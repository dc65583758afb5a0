"""Detection per planted error kind: each kind's wrong fields against the correct ones."""

from __future__ import annotations

import csv

from construct_eval.cli import main
from construct_eval.data.runs import RunDir
from construct_eval.reports.by_kind import kind_table, kinds_of, planted_errors
from construct_eval.reports.collect import ScoredItems


def test_a_kind_is_found_at_the_field_it_was_planted_in_or_above_or_below():
    planted = {"d": [(("a", "b"), "digit_slip"), (("items",), "item_dropped")]}
    assert kinds_of(planted, "d", "a") == {"digit_slip"}  # a top-level field holds its leaf's error
    assert kinds_of(planted, "d", "a.b") == {"digit_slip"}
    assert kinds_of(planted, "d", "items[0].x") == {"item_dropped"}
    assert kinds_of(planted, "d", "c") == set() and kinds_of(planted, "e", "a") == set()


def test_each_kind_is_ranked_against_every_correct_field():
    # a scorer that finds digit slips (score 0) and misses dropped items (score 1, as correct fields)
    it = ScoredItems("s@leaf", "field", granularity="leaf")
    planted = {}
    for i in range(20):
        d = f"d{i}"
        kind = "digit_slip" if i % 2 else "item_dropped"
        planted[d] = [(("x",), kind)]
        for f, wrong in (("x", 1), ("y", 0), ("z", 0)):
            it.doc_ids.append(d)
            it.fields.append(f)
            it.wrong.append(wrong)
            it.scores.append(0.0 if wrong and kind == "digit_slip" else 1.0 - 0.01 * i * (not wrong))
    rows = {r["kind"]: r for r in kind_table([it], planted, n_boot=50)}
    assert rows["digit_slip"]["n_wrong"] == 10 and rows["digit_slip"]["n_correct"] == 40
    assert rows["digit_slip"]["auroc"] == 1.0 and rows["digit_slip"]["recall_at_10pct"] > 0.5
    assert rows["item_dropped"]["auroc"] < 0.2 and rows["item_dropped"]["recall_at_10pct"] == 0.0


def test_evaluate_writes_the_per_kind_table_for_a_run_with_planted_errors(tmp_path):
    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "40", "--doc-error-rate", "0.5",
                 "--near-miss-share", "0.5"]) == 0  # fmt: skip
    assert main(["label", "--run", str(run_dir)]) == 0
    assert main(["evaluate", "--run", str(run_dir), "--n-boot", "50"]) == 0
    planted = planted_errors(RunDir(run_dir, create=False))
    with (run_dir / "metrics" / "detection_by_planted_kind.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    kinds = {k for ops in planted.values() for _, k in ops}
    assert {r["kind"] for r in rows if r["scorer"] == "plausibility@leaf"} <= kinds | {"unplanted"}
    assert {r["scorer"] for r in rows} >= {"plausibility@leaf", "field-prior-uses-labels@leaf"}
    assert (run_dir / "figures" / "detection_by_planted_kind_leaf.png").exists()


def test_within_output_kinds_a_score_that_only_tells_filled_from_empty_finds_nothing(tmp_path):
    """An invented value fills a field whose truth is empty. Ranked against every correct field, a
    score that rates every filled field low "finds" it (most correct fields are empty); ranked
    against the correct filled fields, as the within-output-kind table does, it finds nothing."""
    import json

    from construct_eval.fields import get_at, parse_path
    from construct_eval.reports.output_kinds import output_kind
    from construct_eval.reports.run_analyses import _planted_within_output_kind

    run_dir = tmp_path / "run"
    assert main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "60", "--doc-error-rate", "0.6",
                 "--near-miss-share", "0.5"]) == 0  # fmt: skip
    assert main(["label", "--run", str(run_dir)]) == 0
    run = RunDir(run_dir, create=False)
    outputs = {r["id"]: r["output"] for r in run.outputs()}
    labels = [json.loads(line) for line in (run_dir / "labels.jsonl").read_text().splitlines()]
    it = ScoredItems("filled-low@leaf", "field", granularity="leaf")
    for row in labels:
        for field in row["fields"]:
            path, wrong = field["path"], field["wrong"]
            filled = output_kind(get_at(outputs[row["id"]], parse_path(path))) == "value"
            it.doc_ids.append(row["id"])
            it.fields.append(path)
            it.wrong.append(int(wrong))
            it.scores.append(0.0 if filled else 1.0)  # no look at the value: filled or not
    planted = planted_errors(run)
    pooled = {r["kind"]: r for r in kind_table([it], planted, n_boot=50)}
    within = {(r["fields"], r["kind"]): r for r in _planted_within_output_kind(run, [it], planted, n_boot=50, seed=0)}
    assert pooled["invented_value"]["auroc"] > 0.52  # filled, so below every empty correct field
    assert within[("value", "invented_value")]["auroc"] == 0.5  # among filled fields: all alike
    assert within[("value", "invented_value")]["auroc_low"] == within[("value", "invented_value")]["auroc_high"]
    assert ("null or empty", "invented_value") not in within  # an invented value is never empty
    for r in within.values():
        assert r["docs_wrong"] <= r["n_wrong"] and r["docs_correct"] <= 60
