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
from construct_eval.decide.selective import RiskCoverage, aurc, oracle_aurc
from construct_eval.decide.thresholds import LossTable, choose_threshold, documents_needed, ltt_index, naive_index
from construct_eval.decide.validity import split_validity
from construct_eval.stats.metrics import expected_errors

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
    assert np.allclose(expected_errors(y, s), brute / orders)
    assert oracle_aurc(y) <= aurc(s, y)
    rc = RiskCoverage.measure("x", "document", s, y, np.arange(6), n_boot=50)
    assert rc.aurc_low <= rc.aurc <= rc.aurc_high and rc.base_rate == pytest.approx(0.5)


def test_split_validity_reports_both_rules():
    s, y, doc = _synthetic(np.random.default_rng(5), 300, 1)
    results = split_validity(LossTable.build(s, y, doc, "document"), (0.1,), splits=60)
    by_rule = {r.rule: r for r in results}
    assert set(by_rule) == {"bounded (LTT)", "naive"}
    assert by_rule["bounded (LTT)"].mean_coverage < by_rule["naive"].mean_coverage
    assert by_rule["naive"].violation_rate > by_rule["bounded (LTT)"].violation_rate


def _split_validity_by_loop(table: LossTable, alphas: tuple[float, ...], splits: int, seed: int) -> list[dict]:
    """The validity check as it was written before it was vectorised: one split at a time through
    :func:`ltt_index`, :func:`naive_index` and :func:`risk_and_coverage`, on the same draws."""
    from construct_eval.decide.thresholds import risk_and_coverage

    n = table.n_documents
    n_cal = round(0.5 * n)
    rng = np.random.default_rng(seed)
    perms = [rng.permutation(n) for _ in range(splits)]
    draws = [rng.integers(0, n, n_cal) for _ in range(splits)]
    out = []
    for alpha in alphas:
        tallies: dict[str, list[tuple[float, float, bool, bool]]] = {"bounded (LTT)": [], "naive": []}
        for perm, draw in zip(perms, draws, strict=True):
            cal, test = perm[:n_cal], perm[n_cal:]
            ltt, ltt_pop = ltt_index(table, alpha, 0.1, cal)[0], ltt_index(table, alpha, 0.1, draw)[0]
            naive, naive_pop = naive_index(table, alpha, cal), naive_index(table, alpha, draw)
            for rule, index, index_pop in (("bounded (LTT)", ltt, ltt_pop), ("naive", naive, naive_pop)):
                risk, cov = risk_and_coverage(table, index, test)
                pop_risk, _ = risk_and_coverage(table, index_pop)
                tallies[rule].append((risk, cov, index is not None, pop_risk > alpha + 1e-12))
        for rule, rows in tallies.items():
            risk = np.array([r[0] for r in rows])
            out.append(
                {
                    "rule": rule,
                    "alpha": alpha,
                    "violations": int(np.sum(risk > alpha + 1e-12)),
                    "population_violations": int(sum(r[3] for r in rows)),
                    "mean_coverage": float(np.array([r[1] for r in rows]).mean()),
                    "mean_test_risk": float(risk.mean()),
                    "share_with_threshold": float(np.mean([r[2] for r in rows])),
                }
            )
    return out


@pytest.mark.parametrize(
    ("level", "fields", "field_test", "grid"),
    [("document", 1, "wsr", None), ("field", 6, "wsr", None), ("field", 6, "wsr", 12), ("field", 4, "hb", None)],
)
def test_the_validity_check_computed_over_all_splits_at_once_equals_the_loop_over_splits(
    level, fields, field_test, grid
):
    """Every count and mean of the vectorised check is the loop's to the bit (same draws, same
    p-values), on continuous scores and on a rating's few values, at both levels and both field
    tests: the stored validity tables did not move when the loop went."""
    rng = np.random.default_rng(12)
    for docs in (41, 90):
        s, y, doc = _synthetic(rng, docs, fields)
        if grid:
            s = np.round(s * grid) / grid  # ties: a rating's few values
        table = LossTable.build(s, y, doc, level, field_test=field_test)
        got = split_validity(table, (0.02, 0.05, 0.1), splits=150, seed=docs)
        keys = ("rule", "alpha", "violations", "population_violations", "mean_coverage", "mean_test_risk")
        fast = [{k: getattr(r, k) for k in (*keys, "share_with_threshold")} for r in got]
        assert fast == _split_validity_by_loop(table, (0.02, 0.05, 0.1), 150, docs)
        assert any(r["violations"] for r in fast) and any(r["share_with_threshold"] for r in fast)


@pytest.mark.parametrize(("level", "field_test"), [("document", "wsr"), ("field", "wsr"), ("field", "hb")])
def test_ltt_indices_give_each_set_of_documents_what_ltt_index_gives_it_alone(level, field_test):
    """Index and thresholds tested, set by set, with documents repeated (draws with replacement)
    and sets where no threshold holds."""
    from construct_eval.decide.thresholds import ltt_indices

    rng = np.random.default_rng(5)
    s, y, doc = _synthetic(rng, 120, 1 if level == "document" else 5)
    table = LossTable.build(s, y, doc, level, field_test=field_test)
    repeats = np.vstack([rng.integers(0, 120, 60) for _ in range(80)])
    halves = np.vstack([rng.permutation(120)[:30] for _ in range(40)])
    held = []
    for alpha, sets in itertools.product((0.02, 0.1, 0.25), (repeats, halves)):
        index, tested = ltt_indices(table, alpha, 0.1, sets)
        loop = [ltt_index(table, alpha, 0.1, rows) for rows in sets]
        assert [(None if i < 0 else int(i), int(k)) for i, k in zip(index, tested, strict=True)] == loop
        held.extend(index >= 0)
    assert any(held) and not all(held)  # sets with a threshold and sets without


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
    from construct_eval.reports.tables import write_table
    from construct_eval.studies.decision_findings import findings_markdown

    s, y, doc = _synthetic(np.random.default_rng(4), 300, 1)
    table = LossTable.build(s, y, doc, "document")
    run = tmp_path / "financial_ner-sample600-controlled30"
    head = {"level": "document", "scorer": "synthetic"}
    thresholds = [{**head, **choose_threshold(table, a, 0.1).to_row()} for a in (0.05, 0.1)]
    validity = [{"level": "document", **r} for r in _validity_rows(table)]
    aurc_row = RiskCoverage.measure("synthetic", "document", s, y, doc, n_boot=20).to_row()
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


def test_ppi_over_all_draws_at_once_is_ppi_python_draw_by_draw_to_the_bit():
    """Each draw's PPI++ and classical interval from the vectorised arithmetic equal ppi-python's
    ``ppi_mean_ci`` and ``classical_mean_ci`` on that draw alone: predictions continuous, on a
    rating's grid and of one value (lambda 0); labelled counts whose weights ppi-python rescales
    to not quite 1 (1/49 * 49 < 1); and a repeated-draws row equals the loop's."""
    from construct_eval.decide.few_labels import CoverageRow, intervals, intervals_of_draws, repeated_draws

    rng = np.random.default_rng(8)
    y = (rng.random(300) < 0.3).astype(float)
    predictions = {
        "continuous": np.clip(y * 0.3 + rng.random(300) * 0.7, 0, 1),
        "grid": rng.integers(0, 10, 300) / 9.0,
        "flat": np.full(300, 0.4) + rng.normal(scale=1e-13, size=300),
    }
    assert 1 / 49 * 49 != 1.0  # the rescaling the weights go through is not exact at n = 49
    for f in predictions.values():
        for n in (25, 49):
            lab = np.vstack([rng.integers(0, 300, n) for _ in range(30)])
            unl = np.vstack([rng.integers(0, 300, 300) for _ in range(30)])
            got = intervals_of_draws(y[lab], f[lab], f[unl])
            for d in range(30):
                want = intervals(y[lab[d]], f[lab[d]], f[unl[d]])
                assert {k: (float(lo[d]), float(hi[d])) for k, (lo, hi) in got.items()} == want
        rng_loop = np.random.default_rng(3)
        hit, width = {"ppi": 0, "classical": 0}, {"ppi": 0.0, "classical": 0.0}
        for _ in range(40):
            lab_d, unl_d = rng_loop.integers(0, 300, 49), rng_loop.integers(0, 300, 300)
            for name, (lo, hi) in intervals(y[lab_d], f[lab_d], f[unl_d]).items():
                hit[name] += int(lo <= y.mean() <= hi)
                width[name] += hi - lo
        loop = CoverageRow(49, 300, 40, float(y.mean()), hit["ppi"] / 40, hit["classical"] / 40,
                           width["ppi"] / 40, width["classical"] / 40)  # fmt: skip
        assert repeated_draws(y, f, ns=(49,), draws=40, seed=3) == [loop]


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
