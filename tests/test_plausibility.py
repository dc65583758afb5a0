"""The label-free plausibility checks: each check on a value made to fail it, and the scorer
beside the field prior in a run's collected items."""

from __future__ import annotations

from construct_eval.cli import main
from construct_eval.data.runs import RunDir
from construct_eval.reports.collect import FIELD_PRIOR, collect
from construct_eval.reports.tables import detection_table
from construct_eval.scorers.plausibility import FAMILY, document_scores, plausibility_rows

TEXT = (
    "Daiichi Sankyo and AstraZeneca agreed on February 21 , 2019 to pay $ 6.9 billion for the rights to "
    "Enhertu , chief executive Sunao Manabe said in Tokyo ."
)
SCHEMA = {
    "type": "object",
    "properties": {
        k: {"type": ["array", "null"], "items": {"type": "string"}}
        for k in ("Company", "Date", "Location", "Money", "Person", "Product", "Quantity")
    },
}
TRUTH = {
    "Company": ["Daiichi Sankyo", "AstraZeneca"],
    "Date": ["February 21 , 2019"],
    "Location": ["Tokyo"],
    "Money": ["$ 6.9 billion"],
    "Person": ["Sunao Manabe"],
    "Product": ["Enhertu"],
    "Quantity": None,
}


def _checks(**changes):
    out = {**TRUTH, **changes}
    return document_scores(TEXT, SCHEMA, out)


def test_the_true_output_passes_every_check():
    scores = _checks()
    assert all(score == 1.0 and not fails for score, fails in scores.values()), scores


def test_each_planted_error_fails_the_check_made_for_it():
    cases = {
        "Date": (["Willamette"], "shape"),  # a company name as a Date
        "Quantity": (["InVivo Therapeutics Corporation"], "shape"),
        "Money": (["$ 6.4 billion"], "partly_in_document"),  # a digit slip
        "Company": (["Daiichi", "AstraZeneca"], "capitalised_neighbour"),  # a span cut short
        "Person": (["Sunao Manabe said"], "function_word_edge"),  # a span that takes in a neighbour
        "Location": (["Enhertu"], "other_fields_item"),  # another field's item
        "Product": (["Enhertu", "Enhertu"], "repeated_item"),
    }
    for field, (value, check) in cases.items():
        score, fails = _checks(**{field: value})[field]
        assert check in fails and score < 1.0, (field, value, fails)


def test_schema_checks_enum_type_and_range():
    schema = {
        "type": "object",
        "properties": {
            "channel": {"enum": ["Phone", "Email"]},
            "count": {"type": "integer", "minimum": 0, "maximum": 10},
            "issue_date": {"type": "string", "description": "YYYY-MM-DD"},
        },
    }
    text = "Reported by phone on 28.10.2024: 12 items, and 3 more."
    good = document_scores(text, schema, {"channel": "Phone", "count": 3, "issue_date": "2024-10-28"})
    assert all(not fails for _, fails in good.values()), good
    bad = document_scores(text, schema, {"channel": "Fax", "count": 12, "issue_date": "28 Oct"})
    assert "enum" in bad["channel"][1] and "range" in bad["count"][1]
    assert "shape" in bad["issue_date"][1]
    typed = document_scores(text, schema, {"channel": "Phone", "count": "3", "issue_date": None})
    assert "json_type" in typed["count"][1] and typed["issue_date"] == (1.0, [])


def test_rows_per_leaf_top_and_document_take_the_least_plausible_leaf():
    output = {"a": {"x": "Acme", "y": "nowhere"}, "b": None}
    rows = plausibility_rows([("d1", "Acme sells", None, output), ("d2", "x", None, None)])
    by = {(r["field"], r.get("granularity")): r["score"] for r in rows}
    assert by[("a.x", "leaf")] == 1.0 and by[("a.y", "leaf")] < 1.0
    assert by[("a", "top")] == by[("a.y", "leaf")] and by[("b", "top")] == 1.0
    assert by[("__doc__", None)] == by[("a.y", "leaf")]
    assert {r["id"] for r in rows} == {"d1"}  # an output that did not parse has no rows
    assert all(r["scorer"] == FAMILY for r in rows)


def test_label_writes_the_checks_and_they_stand_beside_the_field_prior(tmp_path):
    run_dir = tmp_path / "run"
    assert (
        main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "40", "--doc-error-rate", "0.4"]) == 0
    )
    assert main(["label", "--run", str(run_dir)]) == 0
    run = RunDir(run_dir, create=False)
    assert run.file("plausibility").exists()
    items = {it.scorer: it for it in collect(run)}
    assert {f"{FAMILY}@leaf", f"{FAMILY}@top", FAMILY} <= set(items)
    assert {f"{FIELD_PRIOR}@leaf", f"{FIELD_PRIOR}@top"} <= set(items)
    rows = {r["scorer"]: r for r in detection_table(list(items.values()), n_boot=50)}
    assert rows[f"{FAMILY}@leaf"]["calls"] == 0 and rows[f"{FAMILY}@leaf"]["n"] > 100
    assert rows[f"{FAMILY}@leaf"]["auroc"] > 0.5  # planted errors are less plausible than the truth
    assert not rows[f"{FAMILY}@leaf"].get("uses_labels")
