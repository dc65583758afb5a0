"""Notebook 07's sections, read from the recorded natural-error run's stored tables."""

from __future__ import annotations

import csv
from pathlib import Path

from construct_eval.studies import natural_notebook as nn

ROOT = Path(__file__).resolve().parents[1]
RUN = ROOT / "results" / "runs" / "natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package"


def _detection(scorer: str) -> dict[str, str]:
    with (RUN / "metrics" / "detection.csv").open() as f:
        return next(r for r in csv.DictReader(f) if r["level"] == "document" and r["scorer"] == scorer)


def test_the_sections_quote_the_stored_cells_and_link_tables_from_where_the_notebook_lives():
    link = nn.linker(RUN, ROOT / "results" / "notebooks" / "07_natural_errors")
    assert link("detection", "stored table") == (f"[stored table](../runs/{RUN.name}/metrics/detection.md)")
    contact = nn.contact_section(RUN, link)
    rule, logprob = _detection("contact_rule"), _detection("token_logprob")
    assert f"{float(rule['auroc']):.3f} [{float(rule['auroc_low']):.3f}, {float(rule['auroc_high']):.3f}]" in contact
    assert f"of the {int(float(logprob['positives']))} wrong notices" in contact
    every = nn.every_score_section(RUN, link)
    # the every-score tables pair each score with the judge on the items both rated: said before them,
    # since a score's n there differs from the paper comparison's common items (a reader saw 58 and 59 wrong)
    lead, tables = every.split("\n\n", 1)
    assert "more than the items every method scored" in lead
    assert tables.startswith("**Per notice** ([stored table](../runs/") and "**Per top-level field**" in every
    worse, of = nn.calibration_summary(RUN)
    cost = nn.cost_section(RUN, link)
    assert f"On {worse} of {of} scores both calibration maps" in cost and "this is a count, not a test" in cost


def test_a_threshold_that_more_labels_would_earn_only_by_accepting_everything_says_it_decides_nothing(tmp_path):
    """A score whose threshold, given enough labels, would accept every item is not offered as a
    policy worth its labels: the table says it decides nothing (a reader saw 'about 362 (at 100.0%
    accepted)' beside a note that accepting everything decides nothing)."""
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    cols = ["level", "alpha", "scorer", "uses_labels", "coverage", "risk_bound", "n_documents", "n_items",
            "documents_needed", "coverage_if_enough", "more_labels"]  # fmt: skip
    rows = [
        ["document", "0.1", "token_logprob", "False", "0", "", "100", "100", "362", "1.0", ""],
        ["document", "0.05", "token_logprob", "False", "0", "", "100", "100", "768", "0.62", ""],
    ]
    with (metrics / "decision_thresholds.csv").open("w", newline="") as f:
        csv.writer(f).writerows([cols, *rows])
    table, _ = nn.thresholds_table(tmp_path)
    assert "| about 360, to accept every item (deciding nothing) |" in table
    assert "| about 770 (at 62.0% accepted) |" in table  # an extrapolation: 2 significant figures


def test_a_difference_whose_interval_excludes_0_but_is_not_ranked_says_so():
    """A paired difference whose unadjusted interval excludes 0 but that Holm (or the power rule)
    does not rank carries a verdict, not a bare p (reader 11 saw 'Holm p 0.095' and nothing else)."""
    row = {"auroc_diff": "-0.025", "auroc_diff_low": "-0.044", "auroc_diff_high": "-0.008", "auroc_p_holm": "0.095",
           "auroc_ranking": "none after Holm (the unadjusted interval excludes 0)"}  # fmt: skip
    assert nn._difference(row, "auroc").endswith("(Holm p 0.095, not ranked after Holm)")
    weak = {**row, "auroc_ranking": "none: underpowered (CONSTRUCT: 12 wrong)"}
    assert nn._difference(weak, "auroc").endswith(", not ranked: underpowered)")
    held = {**row, "auroc_diff_high": "0.010", "auroc_ranking": "none: the interval holds 0"}
    assert nn._difference(held, "auroc").endswith("(Holm p 0.095)")


def test_a_notice_stopped_in_the_middle_of_its_calls_is_counted_partial_in_the_cost_table():
    """N07-1: the answer said CONSTRUCT ran on 165 notices, the cost table 166: one notice had 3 of
    its 5 calls when the run stopped. The cost table now says so."""
    from collections import Counter

    from construct_eval.studies.natural_judging import partial

    assert partial(Counter({"a": 5, "b": 5, "c": 3, "d": 5})) == 1
    assert partial(Counter({"a": 1, "b": 1})) == 0
    assert partial(Counter()) == 0


def test_the_settings_table_quotes_every_setting_and_never_ranks_an_underpowered_row(tmp_path):
    with (RUN.parent / "construct_settings.csv").open() as f:
        stored = list(csv.DictReader(f))
    shown = nn.settings_table(RUN.parent).splitlines()[2:]
    assert len(shown) == len(stored)
    for row, line in zip(stored, shown, strict=True):
        assert f"| {row['judge']} |" in line
        if not row["level"]:
            assert row["state"] in line
            continue
        assert f"{float(row['construct_auroc']):.3f}" in line and f"{float(row['logprob_auroc']):.3f}" in line
        ranking, why = [c.strip() for c in line.strip().removeprefix("|").removesuffix("|").split("|")][-2:]
        assert (ranking, why) == (
            ("none: underpowered", row["underpowered"]) if row["underpowered"] else (row["ranking"], "")
        )
    # a row whose ranking column says lower but whose items are too few is shown unranked
    fields = [*stored[0]]
    made = {**stored[0], "ranking": "CONSTRUCT lower", "underpowered": "9 wrong items (< 10 of a class)"}
    with (tmp_path / "construct_settings.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fields)
        w.writeheader()
        w.writerow(made)
    assert (
        nn.settings_table(tmp_path)
        .splitlines()[2]
        .rstrip(" |")
        .endswith("none: underpowered | 9 wrong items (< 10 of a class)")
    )
