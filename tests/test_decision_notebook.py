"""Notebook 06's answer: how many labels a threshold and a calibration map take, read from the cells it quotes."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from construct_eval.decide.thresholds import quoted_need
from construct_eval.studies.decision_notebook import DecisionTables, pct

ROOT = Path(__file__).resolve().parents[1]
MAIN = "financial_ner-sample600-controlled30"
HEAD = "level,scorer,method,labelled_documents,repeats,brier,brier_low,brier_high,ece,ece_low,ece_high"


def _learning(tmp_path: Path, rows: list[str]) -> DecisionTables:
    metrics = tmp_path / "results" / "runs" / "r" / "metrics"
    metrics.mkdir(parents=True)
    (metrics / "decision_learning.csv").write_text("\n".join([HEAD, *rows]) + "\n")
    return DecisionTables(tmp_path / "results" / "runs", tmp_path / "results" / "notebooks" / "06")


def test_a_map_beats_the_base_rate_only_where_their_middle_95_percent_of_draws_are_apart(tmp_path):
    t = _learning(
        tmp_path,
        [
            "field,s,isotonic,25,30,0.060,0.050,0.071,0,0,0",  # overlaps the base rate's range at 25
            "field,s,base rate,25,30,0.075,0.070,0.080,0,0,0",
            "field,s,isotonic,50,30,0.050,0.045,0.069,0,0,0",  # apart at 50
            "field,s,platt,50,30,0.049,0.044,0.072,0,0,0",  # better on average, but its range overlaps
            "field,s,base rate,50,30,0.075,0.070,0.080,0,0,0",
            "field,flat,isotonic,25,30,0.075,0.070,0.080,0,0,0",
            "field,flat,base rate,25,30,0.075,0.070,0.080,0,0,0",
        ],
    )
    m, best, base = t.separated_from("r", "s")
    assert (m, best["method"], base["brier"]) == (50, "isotonic", "0.075")
    assert t.separated_from("r", "flat") is None


def test_the_answer_says_how_many_labels_with_the_cells_it_quotes():
    runs = ROOT / "results" / "runs"
    if not (runs / MAIN / "metrics" / "decision_thresholds.csv").exists():
        pytest.skip(f"{MAIN} has no stored decision tables here")
    t = DecisionTables(runs, ROOT / "results" / "notebooks" / "06_decisions")
    labels = t.answer(MAIN).split("**How many labels a threshold takes:**")[1]
    with (runs / MAIN / "metrics" / "decision_thresholds.csv").open(newline="") as f:
        rows = {(r["level"], r["scorer"], r["alpha"]): r for r in csv.DictReader(f)}
    checks = rows[("field", "plausibility@leaf", "0.05")]
    assert f"certified on {int(checks['n_documents']):,} labelled documents" in labels
    judge = rows[("field", "judge-field", "0.1")]
    if judge["more_labels"] == "would help":  # the test's own replay: the count and what it would accept
        assert (
            f"about {quoted_need(float(judge['documents_needed'])):,} labelled documents" in labels
        )  # 2 significant figures
        assert f"to accept {pct(judge['coverage_if_enough'])} of fields" in labels
    if rows[("field", "judge-field", "0.05")]["more_labels"] == "would not help":
        assert "at alpha = 5% no number would" in labels
    found = t.separated_from(MAIN, "plausibility@leaf")
    if found is not None:
        m, best, base = found
        assert f"{m} labelled documents are enough for the checks" in labels
        assert (
            f"held-out Brier {float(best['brier']):.3f}" in labels
            and f"base rate's {float(base['brier']):.3f}" in labels
        )
    maps = labels.split("**How many labels a calibration map takes:**")[1]
    # the scores no map serves are named together, once for each largest number of documents drawn
    tops = {r["labelled_documents"] for r in t.table(MAIN, "learning") if r["level"] == "field"}
    assert maps.count("no number up to") <= len(tops)


def test_the_answer_gives_the_population_check_before_the_noisier_held_out_half():
    """Notebook 06 says a guarantee about the population held (the run as the population) and
    calls the held-out half's rate the noisier check, with the cells it quotes (issue 60)."""
    runs = ROOT / "results" / "runs"
    if not (runs / MAIN / "metrics" / "decision_validity.csv").exists():
        pytest.skip(f"{MAIN} has no stored decision tables here")
    t = DecisionTables(runs, ROOT / "results" / "notebooks" / "06_decisions")
    held = t.answer(MAIN).split("**Per document, at alpha = 10%:**")[1].split("\n")[0]
    with (runs / MAIN / "metrics" / "decision_validity.csv").open(newline="") as f:
        doc = next(
            r for r in csv.DictReader(f) if (r["level"], r["scorer"], r["alpha"]) == ("document", "plausibility", "0.1")
        )
    population, half = pct(doc["violation_rate_run_as_population"]), pct(doc["violation_rate"])
    assert (
        f"as the population the threshold went over alpha in {population} of draws; on held-out halves, in {half}"
        in held
    )
    if float(doc["violation_rate"]) > 0.1 >= float(doc["violation_rate_run_as_population"]):
        assert "Only the halves go over the 10% promised: a half is a small sample" in held
    assert "more than the 10% promised" not in held


def test_the_ppi_table_counts_the_labels_only_intervals_own_marks_as_the_marks_false_alarm_rate():
    """The labels-only interval is the same for every score; where it is marked below 95% too, the
    table says how often, so a reader does not read one mark on PPI++ as a finding (reader 11)."""
    runs = ROOT / "results" / "runs"
    run = "financial_ner-sample200"
    if not (runs / run / "metrics" / "decision_ppi.csv").exists():
        pytest.skip(f"{run} has no stored PPI table here")
    with (runs / run / "metrics" / "decision_ppi.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    cells = {(r["level"], r["n_labelled"]): float(r["classical_coverage"]) for r in rows}
    draws = int(rows[0]["draws"])
    low = sum(c < 0.95 - 2 * (0.95 * 0.05 / draws) ** 0.5 for c in cells.values())
    text = DecisionTables(runs, ROOT / "results" / "notebooks" / "06_decisions").ppi_table(run)
    assert low > 0 and f"is itself marked at {low} of its {len(cells)} (level, n) cells" in text


def _answer() -> str:
    runs = ROOT / "results" / "runs"
    if not (runs / MAIN / "metrics" / "decision_validity.csv").exists():
        pytest.skip(f"{MAIN} has no stored decision tables here")
    return DecisionTables(runs, ROOT / "results" / "notebooks" / "06_decisions").answer(MAIN)


def test_the_answer_calls_the_two_validity_tests_tests_not_checks():
    """N06-1: "the two checks disagree" read as the plausibility checks; the answer names the two
    tests of the bound (the run as the population, held-out halves) before it says they disagree."""
    answer = _answer()
    assert "the two checks" not in answer
    held = answer.split("**Whether the bound held, per field:**")[1].split("\n")[0]
    assert held.startswith(" it was tested two ways, with the run as the population and on held-out halves.")
    with (ROOT / "results" / "runs" / MAIN / "metrics" / "decision_validity.csv").open(newline="") as f:
        doc = next(
            r for r in csv.DictReader(f) if (r["level"], r["scorer"], r["alpha"]) == ("document", "plausibility", "0.1")
        )
    split = (float(doc["violation_rate"]) > 0.1) != (float(doc["violation_rate_run_as_population"]) > 0.1)
    verb = "disagree" if split else "agree"
    assert f"**Per document, at alpha = 10%:** the two tests of the bound {verb}." in answer


def test_how_many_labels_is_one_finding_a_bullet():
    """N06-2: the threshold's labels, the judge's forced rating and the calibration map's labels are
    bullets of their own, each short, not four findings in one."""
    answer = _answer()
    bullets = [line for line in answer.splitlines() if line.startswith("- **")]
    heads = [b.split(":**")[0].removeprefix("- **") for b in bullets]
    assert "How many labels" not in heads and "How many labels a threshold takes" in heads
    assert "How many labels a calibration map takes" in heads
    assert max(len(b.split()) for b in bullets) < 80
    judge = next(b for b in bullets if b.startswith("- **The judge's forced rating:**"))
    assert "per field it earns no threshold. At alpha = " in judge


def test_a_long_combination_is_shortened_in_the_aurc_table_and_kept_whole_in_its_csv():
    """N06-3: the rank mean of four judge scores (170 characters) is named by its members' short
    names in the notebook's table; the stored table keeps the full name."""
    from construct_eval.studies.decision_notebook import LABEL_LIMIT, name, row_label

    combo = "combo:rank-mean[judge-doc[sec:r-s-o|fields:original]+judge-doc[sec:r-s-o|fields:original]:expected+judge-field:expected:min+judge-field:min]"
    assert len(name(combo)) > LABEL_LIMIT
    label = row_label(combo)
    assert (
        label
        == "rank mean of judge rating (forced), expected rating, lowest field expected rating and lowest field rating"
    )
    assert row_label("judge-field") == name("judge-field")  # a short name stays as it is
    runs = ROOT / "results" / "runs"
    if not (runs / MAIN / "metrics" / "decision_aurc.csv").exists():
        pytest.skip(f"{MAIN} has no stored decision tables here")
    table = DecisionTables(runs, ROOT / "results" / "notebooks" / "06_decisions").aurc_table(MAIN)
    labels = [line.split(" | ")[0].removeprefix("| ") for line in table.splitlines()[2:]]
    assert label in labels and max(len(x) for x in labels) <= len(label)
    assert combo in (runs / MAIN / "metrics" / "decision_aurc.csv").read_text()


def test_the_learning_curve_figure_has_its_answer_under_it_the_answers_calibration_bullet():
    """N06 (reader 13): the learning-curve figure stood with no answer beside it; under it now is
    the answer's bullet on calibration maps, the same words as the notebook's answer."""
    if not (ROOT / "results" / "runs" / MAIN / "metrics" / "decision_learning.csv").exists():
        pytest.skip(f"{MAIN} has no stored learning table here")
    t = DecisionTables(ROOT / "results" / "runs", ROOT / "results" / "notebooks" / "06_decisions")
    *_, answer = t.learning_figure(MAIN)
    bullet = dict(t.labels_answer(MAIN))["How many labels a calibration map takes"]
    assert answer.data.startswith("**How many labels a calibration map takes?** ")
    assert answer.data.endswith(bullet[1:]) and "labelled documents" in answer.data


def test_a_score_with_fewer_learning_draws_is_said_with_its_own_largest_number(tmp_path):
    """N06 (reader 14): "no number up to 400" named P(correct), whose draws stop at 100: each score
    that never separates from the base rate is said with its own largest number of documents."""
    t = _learning(tmp_path, [
        f"field,{s},{m},{n},30,0.10,0.09,0.11,0.05,0.01,0.09"
        for s, top in (("judge-field:expected", 400), ("p-correct@top", 100))
        for n in (25, top) for m in ("isotonic", "base rate")
    ])  # fmt: skip
    metrics = tmp_path / "results" / "runs" / "r" / "metrics"
    (metrics / "decision_thresholds.csv").write_text(
        "level,scorer,alpha,coverage,n_documents,more_labels,documents_needed,coverage_if_enough\n"
        "field,plausibility@leaf,0.05,0.5,600,,,\n"
    )
    (metrics / "policy_split.csv").write_text("scorer,fit_documents,realised\nplausibility@leaf,300,\n")
    said = dict(t.labels_answer("r"))["How many labels a calibration map takes"]
    assert "no number up to 400" in said and "no number up to 100" in said
    assert said.index("up to 400") < said.index("P(correct)") and said.rindex("up to 100") > said.index("P(correct)")


def test_a_risk_coverage_curve_on_other_items_says_its_own_count_and_random_order():
    import numpy as np

    from construct_eval.decide.selective import RiskCoverage, _own_items

    def curve(n, base):
        x = np.linspace(0, 1, 5)
        return RiskCoverage("s", "field", n, 10, base, x, x, x, 0.1, 0.09, 0.11, 0.01, 0.0, 0.1)

    ref = curve(4200, 0.081)
    assert _own_items(curve(4200, 0.081), ref) == ""
    assert _own_items(curve(1400, 0.0893), ref) == "; on 1,400 items, random 0.089"
