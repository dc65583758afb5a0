"""Decisions with a guarantee (construct_eval.decide): the bound holds where the truth is known,
PPI covers at its nominal level, small n says so, and the command answers on a recorded run."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from construct_eval.decide.bounds import binomial_pvalue, fixed_sequence, hb_pvalue, wsr_pvalue
from construct_eval.decide.selective import aurc, expected_errors, oracle_aurc, risk_coverage
from construct_eval.decide.thresholds import LossTable, choose_threshold, documents_needed, ltt_index, naive_index
from construct_eval.decide.validity import split_validity

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "results" / "runs"


def _synthetic(rng: np.random.Generator, docs: int, fields: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores uniform on [0, 1]; P(wrong | s) = 0.4 (1 - s)^2, so the risk of accepting s >= t is
    0.4 (1 - t)^2 / 3, known exactly."""
    doc = np.repeat(np.arange(docs), fields)
    s = rng.uniform(0, 1, docs * fields)
    y = (rng.uniform(size=s.size) < 0.4 * (1 - s) ** 2).astype(int)
    return s, y, doc


def _true_risk(t: float) -> float:
    return 0.4 * (1 - t) ** 2 / 3


@pytest.mark.parametrize(("level", "fields"), [("document", 1), ("field", 6)])
def test_the_bound_holds_on_a_score_with_known_error_rates(level, fields):
    """Over fresh calibration sets, the chosen threshold's true risk exceeds alpha in at most a
    share delta of them; the naive rule exceeds it far more often (so the check can fail)."""
    rng = np.random.default_rng(7)
    delta, reps = 0.1, 150
    for alpha in (0.05, 0.10):
        bounded = naive = found = 0
        for _ in range(reps):
            s, y, doc = _synthetic(rng, 300, fields)
            table = LossTable.build(s, y, doc, level)
            i, _ = ltt_index(table, alpha, delta)
            if i is not None:
                found += 1
                bounded += _true_risk(table.thresholds[i]) > alpha
            j = naive_index(table, alpha)
            naive += j is not None and _true_risk(table.thresholds[j]) > alpha
        assert bounded / reps <= delta, (level, alpha, bounded / reps)
        assert naive / reps > 2 * delta, (level, alpha, naive / reps)
        if alpha == 0.10:
            assert found / reps > 0.5, "the bound should find a threshold most of the time at alpha = 10%"


def test_no_threshold_at_small_n_says_how_many_documents_would_do():
    """50 documents, none wrong: alpha = 2% at delta = 0.1 needs 0.98^n <= 0.1, n >= 114."""
    s = np.linspace(0, 1, 50)
    table = LossTable.build(s, np.zeros(50, int), np.arange(50), "document")
    answer = choose_threshold(table, 0.02, 0.1)
    assert not answer.holds and answer.threshold is None
    assert "no threshold meets alpha = 2% at this n (50 labelled documents)" in answer.sentence()
    assert answer.documents_needed == math.ceil(math.log(0.1) / math.log(0.98)) == 114
    ok = choose_threshold(
        LossTable.build(np.linspace(0, 1, 200), np.zeros(200, int), np.arange(200), "document"), 0.02, 0.1
    )
    assert ok.holds and ok.coverage == 1.0 and ok.bound is not None and ok.bound <= 0.02


def test_labels_needed_at_field_level_is_what_the_test_itself_certifies():
    """Where no threshold holds, the estimate is the test run on the held documents repeated: above
    the labels held (never a count the test has already failed at), certified at it, not certified
    at a count well short of it; where every threshold's observed risk is >= alpha, none at all."""
    s, y, doc = _synthetic(np.random.default_rng(3), 40, 6)
    table = LossTable.build(s, y, doc, "field")
    answer = choose_threshold(table, 0.05, 0.1)
    assert not answer.holds and answer.more_labels == "would help"
    need = answer.documents_needed
    assert need is not None and need > table.n_documents
    order = table.default_order()
    assert ltt_index(table, 0.05, 0.1, np.resize(order, need))[0] is not None
    assert ltt_index(table, 0.05, 0.1, np.resize(order, int(need * 0.9)))[0] is None
    assert f"about {need} labelled documents would be needed" in answer.sentence()
    all_wrong = LossTable.build(s, np.ones_like(y), doc, "field")
    assert documents_needed(all_wrong, 0.05, 0.1) == (None, None, "would not help")
    assert "more labels alone will not help" in choose_threshold(all_wrong, 0.05, 0.1).sentence()


def test_field_level_counts_documents_not_fields():
    """A wrong field makes its document's loss large; documents, not fields, are the sample size."""
    s, y, doc = _synthetic(np.random.default_rng(1), 200, 5)
    table = LossTable.build(s, y, doc, "field")
    assert table.n_documents == 200 and table.max_items == 5
    answer = choose_threshold(table, 0.1, 0.1)
    assert answer.n_documents == 200 and answer.n_items == 1000
    assert "the document is the sampling unit" in answer.guarantee
    with pytest.raises(ValueError, match="one item per document"):
        LossTable.build(s, y, doc, "document")


def test_pvalues_are_the_binomial_tail_and_valid_under_the_null():
    assert binomial_pvalue(3, 100, 0.05) == pytest.approx(stats.binom.cdf(3, 100, 0.05))
    assert binomial_pvalue(0, 0, 0.05) == 1.0
    # Hoeffding-Bentkus is never below the exact binomial tail on 0/1 losses
    for k in (0, 2, 5):
        assert hb_pvalue(k / 100, 100, 0.05) >= binomial_pvalue(k, 100, 0.05) - 1e-12
    rng = np.random.default_rng(3)
    alpha, delta = 0.1, 0.1
    x = (rng.uniform(size=(200, 2000)) < alpha).astype(float)  # mean alpha: the null's boundary
    assert np.mean(wsr_pvalue(x, alpha, delta=delta) <= delta) <= delta
    assert np.mean(wsr_pvalue(x * 0.3, alpha, delta=delta) <= delta) > 0.9  # mean 0.03: rejected
    assert fixed_sequence([0.01, 0.02, 0.5, 0.01], 0.1) == 2


def test_ties_count_as_the_average_over_random_orders():
    s = np.array([3, 3, 3, 2, 2, 1.0])
    y = np.array([1, 0, 0, 1, 1, 0])
    brute = np.zeros(len(s))
    orders = 0
    for p1 in itertools.permutations(range(3)):
        for p2 in itertools.permutations(range(3, 5)):
            order = list(p1) + list(p2) + [5]
            brute += np.cumsum(y[order])
            orders += 1
    assert np.allclose(expected_errors(s, y), brute / orders)
    assert oracle_aurc(y) <= aurc(s, y)
    rc = risk_coverage("x", "document", s, y, np.arange(6), n_boot=50)
    assert rc.aurc_low <= rc.aurc <= rc.aurc_high and rc.base_rate == pytest.approx(0.5)


def test_split_validity_reports_both_rules():
    s, y, doc = _synthetic(np.random.default_rng(5), 300, 1)
    results = split_validity(LossTable.build(s, y, doc, "document"), (0.1,), splits=60)
    by_rule = {r.rule: r for r in results}
    assert set(by_rule) == {"bounded (LTT)", "naive"}
    assert by_rule["bounded (LTT)"].mean_coverage < by_rule["naive"].mean_coverage
    assert by_rule["naive"].violation_rate > by_rule["bounded (LTT)"].violation_rate


def test_ppi_covers_at_its_nominal_level_and_is_narrower_with_a_good_prediction():
    from construct_eval.decide.few_labels import repeated_draws

    rng = np.random.default_rng(11)
    p = rng.beta(1, 4, 3000)
    y = (rng.uniform(size=p.size) < p).astype(float)
    good = repeated_draws(y, p, ns=(100,), draws=300, seed=1)[0]
    assert 0.92 <= good.ppi_coverage <= 0.98, good
    assert good.ppi_width < good.classical_width and good.effective_labels > 100
    useless = repeated_draws(y, rng.uniform(size=p.size), ns=(100,), draws=200, seed=2)[0]
    assert useless.ppi_width == pytest.approx(useless.classical_width, rel=0.1)


def test_the_report_saves_its_table_and_figure(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.decide.report import decide_items
    from construct_eval.reports.collect import ScoredItems

    s, y, doc = _synthetic(np.random.default_rng(2), 400, 1)
    items = ScoredItems("synthetic", "document", doc_ids=[str(d) for d in doc], scores=list(s), wrong=list(y))
    report = decide_items(items, run_name="synthetic", alpha=0.1, n_boot=50)
    assert report.answer.holds and report.tables()["threshold"][0]["guarantee"]
    paths = report.save(tmp_path)
    assert all(p.exists() and p.stat().st_size for p in paths)


def test_the_command_answers_on_a_recorded_run_and_writes_nothing_there(capsys):
    from construct_eval.cli import main

    run = RUNS / "synthetic200-controlled30"
    before = {p.name: p.stat().st_mtime_ns for p in run.iterdir() if p.is_file()}
    code = main(["decide", "--run", str(run), "--scorer", "judge-doc", "--alpha", "0.1", "--n-boot", "50"])
    out = capsys.readouterr().out
    assert code == 0
    assert "judge rating (document level, alpha = 0.1, delta = 0.1)" in out  # the scorer as a reader names it
    assert ("no threshold meets alpha = 10% at this n (200 labelled documents)" in out) or ("auto-accepted" in out)
    assert "guarantee: P(risk <= alpha) >= 1 - delta" in out and "AURC" in out
    assert {p.name: p.stat().st_mtime_ns for p in run.iterdir() if p.is_file()} == before
    assert main(["decide", "--run", str(run), "--scorer", "no-such-scorer", "--n-boot", "10"]) == 2
    assert "the run has: judge-doc" in capsys.readouterr().err


def test_the_findings_paragraph_quotes_the_stored_tables(tmp_path):
    """Numbers in the paragraph come from the CSVs: change a stored coverage and the text follows."""
    from construct_eval.decide.few_labels import document_targets, repeated_draws
    from construct_eval.decide.findings import findings_markdown
    from construct_eval.reports.tables import write_table

    s, y, doc = _synthetic(np.random.default_rng(4), 300, 1)
    table = LossTable.build(s, y, doc, "document")
    run = tmp_path / "financial_ner-sample600-controlled30"
    head = {"level": "document", "scorer": "synthetic"}
    thresholds = [{**head, **choose_threshold(table, a, 0.1).to_row()} for a in (0.05, 0.1)]
    validity = [{"level": "document", **r} for r in _validity_rows(table)]
    aurc_row = risk_coverage("synthetic", "document", s, y, doc, n_boot=20).to_row()
    yd, fd, _ = document_targets(s, y, doc)
    ppi = [{**head, **r.to_row()} for r in repeated_draws(yd, fd, ns=(50, 100), draws=20)]
    for name, rows in (("thresholds", thresholds), ("validity", validity), ("aurc", [aurc_row]), ("ppi", ppi)):
        write_table(rows, run / "metrics" / f"decision_{name}")
    text = findings_markdown(tmp_path)
    best = max(thresholds, key=lambda r: r["coverage"])
    assert f"{100 * best['coverage']:.1f}% auto-accepted by synthetic" in text
    assert f"{aurc_row['aurc']:.3f}" in text and "n = 50: width" in text
    assert "financial_ner-sample200**: decision tables not written yet" in text
    assert "ExtractConf" in text and "Trust or Escalate" in text


def _validity_rows(table: LossTable) -> list[dict]:
    from construct_eval.decide.validity import validity_rows

    return validity_rows("synthetic", split_validity(table, (0.05, 0.1), splits=20))


def test_decide_takes_the_scorers_own_level_by_default():
    """``decide(run, "plausibility@leaf")`` decides for fields (it used to look at documents and fail)."""
    from construct_eval.decide.report import decide

    run = Path(__file__).resolve().parents[1] / "results" / "runs" / "synthetic200-controlled30"
    report = decide(run, "plausibility@leaf", alpha=0.1, n_boot=20)
    assert report.curve.level == "field" and report.curve.n > report.curve.documents
    assert report.text().startswith("synthetic200-controlled30: ")  # the run's folder, as a CLI user named it
    assert report.text(title="synthetic (planted errors)").startswith("synthetic (planted errors): ")


def test_the_smooth_reliability_diagram_is_the_same_picture_for_the_same_inputs():
    """relplot's bootstrap band reads numpy's global random state: seeded for the call, and the
    caller's state put back (a second draw after it is what it would have been)."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from construct_eval.decide.learning import plot_smooth_reliability

    rng = np.random.default_rng(1)
    p = rng.random(300)
    y = (rng.random(300) < p).astype(int)
    pictures = []
    for seed in (5, 6):
        np.random.seed(seed)
        fig, ax = plt.subplots()
        plot_smooth_reliability(p, y, ax)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", metadata={"Software": None})
        plt.close(fig)
        pictures.append(buf.getvalue())
        after = np.random.random()
        np.random.seed(seed)
        assert after == np.random.random()  # the global state as the caller left it
    assert pictures[0] == pictures[1]


def test_the_learning_figure_draws_deployable_scores_one_per_family_best_first():
    """A score that uses labels is never drawn; of one family only its best; the lowest held-out Brier
    at a score's most labelled documents first, so the plausibility checks are not crowded out."""
    from construct_eval.decide.stored import learning_scorers

    def row(scorer, m, brier, method="platt"):
        return {"level": "field", "scorer": scorer, "method": method, "labelled_documents": str(m), "brier": str(brier)}

    rows = [
        row("judge-field:expected", 25, 0.070), row("judge-field:expected", 400, 0.075),
        row("p-correct@top", 100, 0.078),
        row("fitted-oof-uses-labels[judge-field+judge-field:expected]@top", 400, 0.069),
        row("field-prior-uses-labels@leaf", 400, 0.010),
        row("plausibility@top", 400, 0.050), row("plausibility@leaf", 400, 0.044),
        row("plausibility@leaf", 400, 0.046, "isotonic"), row("plausibility@leaf", 400, "", "base rate"),
        row("combo:rank-mean[judge-field+judge-field:expected]@top", 400, 0.073),
    ]  # fmt: skip
    chosen = learning_scorers(rows)
    assert chosen == [
        "plausibility@leaf",
        "combo:rank-mean[judge-field+judge-field:expected]@top",
        "judge-field:expected",
        "p-correct@top",
    ]
    assert learning_scorers(rows, limit=2) == chosen[:2]


def test_a_platt_map_kept_by_a_policy_predicts_what_the_fitted_map_predicts():
    """The policy file keeps Platt scaling as four numbers; read back, they give the fitted map's
    P(wrong) at every score (the calibrator's own fit, not scikit-learn's object, since issue 58)."""
    import numpy as np

    from construct_eval.decide.calibration_map import calibrated, platt_parameters
    from construct_eval.stats.calibrators import make_calibrator

    rng = np.random.default_rng(0)
    score = rng.uniform(0, 10, 400)
    wrong = (rng.uniform(size=400) < 1 / (1 + np.exp(score - 5))).astype(float)
    model = make_calibrator("platt").fit(score, wrong)
    kept = {"method": "platt", **platt_parameters(model)}
    grid = np.linspace(-1, 11, 50)
    np.testing.assert_allclose(calibrated(kept, grid), model.predict(grid), rtol=1e-12, atol=1e-15)
    assert calibrated(kept, np.array([0.0]))[0] > 0.8 > 0.2 > calibrated(kept, np.array([10.0]))[0]


def test_decision_figures_name_the_judge_rating_as_the_run_asked_for_it(tmp_path):
    """The stored decision figures say "judge rating (forced)" where the run's judge was forced,
    as the notebooks' tables and the paper figures do; a run without a judge names none."""
    from construct_eval.data.runs import RunDir
    from construct_eval.decide.selective import scorer_label
    from construct_eval.decide.stored import judge_elicitation

    run = RunDir(tmp_path / "run")
    assert judge_elicitation(run) is None
    run.append("judgments", [{"doc_id": f"d{k}", "constrained": "grammar:rating-only"} for k in range(3)])
    run.append("judgments", [{"doc_id": "d9", "constrained": "none"}])
    assert (run.path / "judgments.jsonl").exists()  # the file a judge run writes, under its own name
    asked = judge_elicitation(run)
    assert asked == "grammar:rating-only"
    assert scorer_label("judge-field", asked) == "judge rating (forced), per field"
    assert scorer_label("judge-field") == "judge rating, per field"
    assert scorer_label("an imported score", asked) == "an imported score"
    combo = "combo:rank-mean[judge-field+judge-field:expected]@top"  # a combination lists what it combines
    assert scorer_label(combo, asked) == (
        "rank-mean combination of 2 scores, per field: judge rating (forced); expected rating (forced)"
    )
    recorded = RunDir(ROOT / "results/runs/financial_ner-sample600-controlled30", create=False)
    if recorded.file("judgments").exists():  # the recorded judge study was forced
        assert judge_elicitation(recorded) == "grammar:rating-only"


def test_the_reports_plot_keeps_its_legend_off_the_axes_label_and_says_the_level_once():
    """In a figure that lays itself out, the legend is the figure's, under the x label (it used to sit
    on it); a title whose score already says "leaf fields" does not add ": fields"."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from construct_eval.decide.report import decide

    run = Path(__file__).resolve().parents[1] / "results" / "runs" / "synthetic200-controlled30"
    report = decide(run, "plausibility@leaf", alpha=0.1, n_boot=20)
    fig, ax = plt.subplots(figsize=(6.4, 3.2), layout="constrained")
    report.plot(ax=ax)
    fig.canvas.draw()
    assert ax.get_legend() is None and len(fig.legends) == 1
    renderer = fig.canvas.get_renderer()
    legend, xlabel = fig.legends[0].get_window_extent(renderer), ax.xaxis.label.get_window_extent(renderer)
    assert legend.y1 <= xlabel.y0 + 1
    assert ax.get_title().endswith("leaf fields") and ": fields" not in ax.get_title()
    plt.close(fig)


def test_ppi_with_predictions_of_one_value_is_the_classical_interval_on_any_cpu():
    """A score with one value (or values apart by rounding alone) carries nothing for PPI++ to use:
    its tuned lambda would be a ratio of rounding errors (NaN, or any value, by the CPU's
    arithmetic). The rule makes it 0, the classical interval, so the simulated coverage and width
    are the same on every machine."""
    from construct_eval.decide.few_labels import intervals, repeated_draws

    rng = np.random.default_rng(0)
    y = (rng.random(120) < 0.3).astype(float)
    for f in (np.full(120, 0.5), 0.1 + np.full(120, 0.2) + rng.normal(scale=1e-13, size=120)):
        got = intervals(y[:40], f[:40], f[40:])
        assert got["ppi"] == got["classical"] and not np.isnan(got["ppi"]).any()
        row = repeated_draws(y, f, ns=(25,), draws=50)[0]
        assert (row.ppi_coverage, row.ppi_width) == (row.classical_coverage, row.classical_width)
