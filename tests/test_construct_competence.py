"""The positive control (a scripted judge of known competence through CONSTRUCT's own code) and
the table of CONSTRUCT's parts, on the natural run's real outputs and labels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from construct_eval.data.runs import RunDir
from construct_eval.reports.construct_parts import parts_table
from construct_eval.scorers import construct as cs
from construct_eval.scorers import construct_method as cm
from construct_eval.studies import competence as comp
from construct_eval.studies.balanced_order import balanced_order

NATURAL = (
    Path(__file__).resolve().parents[1] / "results/runs/natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package"
)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    """The first 24 notices of the natural run's balanced order (12 wrong, 12 right), with what the
    generator made of them and no judge's rows."""
    run = RunDir(NATURAL, create=False)
    ids = balanced_order(list(run.iter_rows("labels")))[:24]
    return run.copy_subset(tmp_path_factory.mktemp("competence") / "run", ids, files=["records", "outputs", "labels"])


def test_a_fully_competent_judge_flags_exactly_the_wrong_fields_in_every_templates_own_format(small_run):
    items, truth = comp.judged_items(small_run)
    config = cm.Config("medium")
    calls = comp.scripted_calls(comp.ScriptedJudge(1.0, 0), items, truth, config)
    assert len(calls) == 5 * len(items) and all(c["status"] == "ok" for c in calls)
    for c in calls:
        wrong = truth[c["id"]]
        if c["template"] == "argument":
            assert "<score>" in c["raw_reply"] and c["score"] == (0.1 if any(wrong.values()) else 0.95)
            continue
        flagged = {k for k, (score, _) in c["fields"].items() if score < 0.5}
        assert flagged == {k for k, w in wrong.items() if w}, c["template"]
    # a judge of competence 0 believes the opposite of every label
    inverse = comp.scripted_calls(comp.ScriptedJudge(0.0, 0), items, truth, config)
    for c in inverse:
        if c["template"] != "argument":
            flagged = {k for k, (score, _) in c["fields"].items() if score < 0.5}
            assert flagged == {k for k, w in truth[c["id"]].items() if not w}


def test_beliefs_depend_on_the_document_competence_and_seed_alone():
    truth = {f"f{i}": i % 3 == 0 for i in range(40)}
    a = comp.ScriptedJudge(0.7, 1).believes_wrong("doc-1", truth)
    assert a == comp.ScriptedJudge(0.7, 1).believes_wrong("doc-1", dict(reversed(list(truth.items()))))
    assert a != comp.ScriptedJudge(0.7, 2).believes_wrong("doc-1", truth)
    right = np.mean(
        [comp.ScriptedJudge(0.7, s).believes_wrong("d", truth)[k] == truth[k] for s in range(50) for k in truth]
    )
    assert 0.65 < right < 0.75


def test_the_curve_runs_from_chance_to_one_through_constructs_code(small_run):
    rows = comp.competence_curve(small_run, competences=(0.5, 1.0), seeds=3, n_boot=100)
    got = {(r["score"], r["level"], r["competence"]): r for r in rows}
    for level in ("document", "field"):
        assert got[("CONSTRUCT", level, 1.0)]["auroc"] == 1.0
        assert 0.3 < got[("CONSTRUCT", level, 0.5)]["auroc"] < 0.7
        assert got[("CONSTRUCT", level, 0.5)]["auroc_low"] < 0.5 < got[("CONSTRUCT", level, 0.5)]["auroc_high"]
    assert got[("CONSTRUCT", "document", 1.0)]["n_wrong"] == 12


def test_where_on_curve_interpolates_and_bounds():
    curve = [{"competence": q, "auroc": a} for q, a in ((0.5, 0.5), (0.6, 0.6), (0.8, 0.8), (1.0, 1.0))]
    assert comp.where_on_curve(curve, 0.7) == "0.70"
    assert comp.where_on_curve(curve, 0.43) == "<= 0.50"
    assert comp.where_on_curve(curve, 1.0) == ">= 1.00"


def test_the_parts_table_credits_each_template_with_what_its_replies_found(small_run, tmp_path):
    """Written as ``construct`` would write them, the scripted replies of a judge right about
    every field make each template's own AUROC 1 with no right field flagged and no wrong one
    missed; a reply replaced by one without ``<score>`` tags is counted as TLM's fallback."""
    run = small_run.copy_subset(tmp_path / "run", [i.doc_id for i in comp.judged_items(small_run)[0]])
    items, truth = comp.judged_items(run)
    config = cm.Config("medium")
    calls = comp.scripted_calls(comp.ScriptedJudge(1.0, 0), items, truth, config)
    first_argument = next(c for c in calls if c["template"] == "argument")
    first_argument["raw_reply"] = "The answer looks right: 95"
    first_argument.update(cs.read_reply(cm.Request("argument", []), first_argument["raw_reply"], ""))
    run.append(cs.FILE, calls)
    run.replace_scorers(cs.score_rows(calls, items, config, model=None), {cs.FAMILY})
    run.write_meta("construct", {"preset": "medium"})
    rows = {(r["template"], r["level"]): r for r in parts_table(run, n_boot=50)}
    for t in cm.templates():
        if t.kind != "argument":
            field = rows[(t.id, "field")]
            assert (field["auroc"], field["flags_right"], field["misses_wrong"]) == (1.0, 0.0, 0.0), t.id
            assert rows[(t.id, "document")]["auroc"] == 1.0
    assert rows[("argument", "document")]["no_score_tag"] == 1
    assert rows[("CONSTRUCT (all five)", "field")]["auroc"] == 1.0
    assert rows[("CONSTRUCT (all five)", "document")]["n"] == len(items)


def test_the_competence_figure_draws_the_stored_curve_and_names_a_judge_too_small_to_draw(tmp_path):
    """Drawn from the stored table alone: the scripted curve per level, each model judge with
    enough items as a line, and one with too few named under the panels instead."""
    import csv

    import matplotlib

    matplotlib.use("Agg")
    from construct_eval.display.competence_plot import competence_figure

    table = NATURAL / "metrics" / "construct_competence.csv"
    with table.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    small = {**rows[-1], "judge": "tiny-judge", "level": "field", "n": "3", "underpowered": "3 wrong / 0 right"}
    extended = tmp_path / "construct_competence.csv"
    with extended.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows([*rows, small])
    fig = competence_figure(extended)
    from matplotlib.legend import Legend

    legends = [a for ax in fig.axes for a in ax.get_children() if isinstance(a, Legend)]
    texts = [t.get_text() for t in fig.texts] + [t.get_text() for leg in legends for t in leg.get_texts()]
    assert any(t.startswith("Qwen2.5-Coder-1.5B judge: 0.553") for t in texts)
    assert any("Not drawn, too few items to rank" in t and "Tiny-Judge (3 fields scored)" in t for t in texts)
    scripted = [
        r for r in rows if r["judge"].startswith("scripted") and r["level"] == "field" and r["score"] == "CONSTRUCT"
    ]
    line = fig.axes[0].lines[0]
    assert list(line.get_ydata()) == [float(r["auroc"]) for r in sorted(scripted, key=lambda r: float(r["competence"]))]


def test_a_judges_place_on_the_curve_carries_its_interval_through_the_curve():
    """The stored judge rows: ``competence_low`` and ``competence_high`` are where the scripted
    curve of the same level reaches the ends of the judge's AUROC interval, so the place reads
    with its uncertainty (and the interval's ends bracket the place)."""
    from construct_eval.csv_tables import read_rows

    rows = read_rows(NATURAL / "metrics" / "construct_competence.csv")
    judges = [r for r in rows if not r["judge"].startswith("scripted")]
    assert judges
    for r in judges:
        curve = [
            s
            for s in rows
            if s["judge"].startswith("scripted") and s["score"] == "CONSTRUCT" and s["level"] == r["level"]
        ]
        if float(r["auroc_low"]) != float(r["auroc_low"]):  # no interval: no ends to place
            assert r["competence_low"] == r["competence_high"] == ""
            continue
        assert r["competence_low"] == comp.where_on_curve(curve, float(r["auroc_low"]))
        assert r["competence_high"] == comp.where_on_curve(curve, float(r["auroc_high"]))
        numbers = [float(x.split()[-1]) for x in (r["competence_low"], r["competence"], r["competence_high"])]
        assert numbers == sorted(numbers)


def test_a_judges_row_is_its_runs_detection_row():
    """A model judge's CONSTRUCT in the competence table is read from its run's detection table
    (one bootstrap, one power rule): its AUROC, interval, counts and reasons are that row's."""
    from construct_eval.csv_tables import read_rows

    runs = {"qwen2.5-coder-1.5b": NATURAL}
    runs |= {p.name.rsplit("-judge-", 1)[1]: p for p in NATURAL.parent.glob(f"{NATURAL.name}-judge-*")}
    for r in read_rows(NATURAL / "metrics" / "construct_competence.csv"):
        if r["judge"].startswith("scripted"):
            continue
        scorer = "construct" if r["level"] == "document" else "construct@top"
        row = next(d for d in read_rows(runs[r["judge"]] / "metrics" / "detection.csv")
                   if d["level"] == r["level"] and d["scorer"] == scorer)  # fmt: skip
        assert [float(r[k]) for k in ("auroc", "auroc_low", "auroc_high")] == pytest.approx(
            [float(row[k]) for k in ("auroc", "auroc_low", "auroc_high")], nan_ok=True
        )
        assert (r["n"], r["n_wrong"], r["documents"], r["underpowered"]) == (
            row["n"],
            row["positives"],
            row["documents"],
            row["underpowered"],
        )
