"""Can a reader read every paper figure? Nothing cut off, no text over text, no label cut with
an ellipsis, at most six series a panel: on the figures of the recorded runs and on a synthetic
many-scorer, many-dataset case; and each check fails on a figure that breaks it."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tueplots", reason="tueplots is the figures extra (make venv installs it)")

from matplotlib.figure import Figure

from construct_eval.display import readability
from construct_eval.display.style import MAX_SERIES, save_all
from construct_eval.paper.figure_data import MIN_CLASS
from construct_eval.paper.figure_parts import MAX_NAME
from construct_eval.paper.figure_set import paper_set, read_left_out
from construct_eval.paper.figures import MAIN_NAMES, MAX_MAIN, build_figures
from construct_eval.paper.paper_plots import MAX_HEIGHT_IN
from construct_eval.reports.tables import file_slug

ROOT = Path(__file__).resolve().parents[1]
RECORDED = paper_set(
    ROOT / "results" / "runs", read_left_out(ROOT / "results" / "figures" / "left_out.txt")
)  # the paper set: results/figures/make.sh's runs


def _check_all(figures, tmp_path):
    """Problems by figure name, on each figure and its PNG as the set writes it (300 dpi)."""
    found = {}
    for f in figures:
        png = save_all(f.figure, tmp_path / f.name, f.style, formats=("png",))[0]
        found[f.name] = readability.problems(f.figure, png)
        assert len(f.name) <= MAX_NAME, f.name
        assert max(readability.series_per_panel(f.figure), default=0) <= MAX_SERIES, f.name
        assert f.figure.get_figheight() <= MAX_HEIGHT_IN, f"{f.name}: taller than a page allows"
    return {name: p for name, p in found.items() if p}


@pytest.mark.slow
@pytest.mark.skipif(not RECORDED, reason="no recorded runs with stored tables")
@pytest.mark.parametrize("venue,column", [("neurips", "full"), ("icml", "half")])
def test_every_figure_of_the_recorded_runs_is_readable(tmp_path, venue, column):
    figures = build_figures(RECORDED, venue=venue, column=column)
    names = {f.name for f in figures}
    main = [f.name for f in figures if not f.appendix]
    assert main == list(MAIN_NAMES), main  # one figure a question, in the paper's order, at most six
    assert len(main) <= MAX_MAIN and all(f.message for f in figures if not f.appendix)
    assert {"appx_detect_document", "appx_detect_field_by_kind", "appx_planted_kind", "appx_review_field"} <= names
    if venue == "neurips":  # the main detection and review figures' planted-error panels, drawn apart
        planted = {"appx_detect_document_planted", "appx_detect_field_filled_planted", "appx_review_document_planted"}
        assert planted <= names, planted - names
    assert _check_all(figures, tmp_path) == {}
    _main_rows_are_powered(figures)
    _main_panels_are_mostly_drawn(figures)


def _document_classes(dataset: str) -> dict[tuple[str, str], tuple[int, int]]:
    """(level, scorer) -> (documents with a wrong item, documents with a right item), counted
    here from the run's labelled items, not through the figures' own reader."""
    from construct_eval.data.runs import RunDir, RunError
    from construct_eval.fields import MISSING, get_at, parse_path
    from construct_eval.reports.collect import collect

    def kind(value) -> str:  # the output kinds of output_kinds, spelled out here
        empty = value is MISSING or value is None or (isinstance(value, str | list | dict) and len(value) == 0)
        return "null or empty" if empty else "value"

    run = RunDir(ROOT / "results" / "runs" / dataset)
    try:
        outputs = {r["id"]: r["output"] for r in run.outputs() if "output" in r}
    except RunError:  # a controlled run whose source data is not here: no by-kind rows to check
        outputs = {}
    out = {}
    for it in collect(run):
        docs = list(zip(it.doc_ids, it.wrong, strict=True))
        out[(it.level.value, str(it.scorer))] = (len({d for d, w in docs if w}), len({d for d, w in docs if not w}))
        if it.level.value == "field" and outputs:
            kinds = [kind(get_at(outputs[d], parse_path(p))) if d in outputs else None
                     for d, p in zip(it.doc_ids, it.fields, strict=True)]  # fmt: skip
            for k in ("value", "null or empty"):
                mine = [(d, w) for (d, w), kk in zip(docs, kinds, strict=True) if kk == k]
                out[(f"field:{k}", str(it.scorer))] = (
                    len({d for d, w in mine if w}),
                    len({d for d, w in mine if not w}),
                )
    return out


def _main_panels_are_mostly_drawn(figures) -> None:
    """No panel of a main figure is mostly "not run" or "too few": at most half its rows say so,
    and no cell of its grid is empty (a spare cell holds the legend)."""
    for f in figures:
        if f.appendix:
            continue
        for ax in f.figure.axes:
            if not ax.get_visible() or not ax.axison:
                if ax.get_visible() and ax.get_gid() == "note":  # a cell said in a line (meaning: "not asked")
                    assert ax.texts, f"{f.name}: a note cell with no note"
                elif ax.get_visible():
                    assert ax.get_legend() is not None, f"{f.name}: a spare cell with no legend"
                continue
            said = [t.get_text() for t in ax.texts if t.get_text() in ("not run", "too few: appendix")]
            rows = len(ax.get_yticks()) if ax.get_yticklabels() else None
            if rows:
                assert 2 * len(said) <= rows, (f.name, ax.get_title(), said)
        hidden = [ax for ax in f.figure.axes if not ax.get_visible()]
        assert not hidden, f"{f.name}: {len(hidden)} empty cells in its grid"


def _main_rows_are_powered(figures) -> None:
    """Every (dataset, level, scorer) row a main figure draws has at least MIN_CLASS wrong and
    right items, MIN_CLASS documents with a wrong and with a right item, and an interval (the
    CONSTRUCT figure draws the paper's comparison whatever its power, hollow where underpowered)."""
    classes: dict[str, dict] = {}
    checked = 0
    for f in figures:
        if f.appendix or f.name == "construct_vs_baselines":
            continue
        assert f.rows, f"{f.name}: the figure does not say which rows it draws"
        for dataset, level, scorer in f.rows:
            metrics = ROOT / "results" / "runs" / dataset / "metrics"
            where = (f.name, dataset, level, scorer)
            if level.startswith("planted:"):  # a planted error kind, within one output kind of the fields
                _, kind, planted = level.split(":", 2)
                table = _csv(metrics / "detection_by_planted_kind_within_output_kind.csv")
                row = next(r for r in table if (r["fields"], r["kind"], r["scorer"]) == (kind, planted, scorer))
                wrong, right = int(row["n_wrong"]), int(row["n_correct"])
                assert wrong >= MIN_CLASS and right >= MIN_CLASS, (*where, wrong, right)
                assert int(row["docs_wrong"]) >= MIN_CLASS and int(row["docs_correct"]) >= MIN_CLASS, where
                assert row["auroc_low"] not in ("", "nan") and row["auroc_high"] not in ("", "nan"), where
                checked += 1
                continue
            if level.startswith("field:"):  # a row read within one output kind of the fields
                kind = level.split(":", 1)[1]
                table = _csv(metrics / "detection_by_output_kind.csv")
                row = next(r for r in table if (r["fields"], r["scorer"]) == (kind, scorer))
                n, wrong = int(row["n"]), int(row["wrong"])
            else:
                table = _csv(metrics / "detection.csv")
                row = next(r for r in table if (r["level"], r["scorer"]) == (level, scorer))
                n, wrong = int(float(row["n"])), int(float(row["positives"]))
            assert wrong >= MIN_CLASS and n - wrong >= MIN_CLASS, (*where, n, wrong)
            assert row["auroc_low"] not in ("", "nan") and row["auroc_high"] not in ("", "nan"), where
            if dataset not in classes:
                classes[dataset] = _document_classes(dataset)
            docs_wrong, docs_right = classes[dataset][(level, scorer)]
            assert docs_wrong >= MIN_CLASS and docs_right >= MIN_CLASS, (*where, docs_wrong, docs_right)
            checked += 1
    assert checked > 0


def _csv(path):
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


SCORERS = [
    "judge-doc[sec:r-s-o|fields:original]", "judge-doc[sec:r-s-o|fields:original]:expected",
    "judge-doc[sec:r-s-o|fields:original|ask:free]", "judge-doc[sec:r-s-o|fields:original|ask:free]:expected",
    "judge-doc[sec:o-s-r|fields:original]", "judge-doc[sec:o-s-r|fields:original]:expected",
    "judge-doc[sec:r-s-o|fields:reversed]", "judge-doc[sec:r-s-o|fields:reversed]:expected",
    "judge-doc[sec:r-s-o|fields:shuffled1]", "judge-doc[sec:r-s-o|fields:shuffled1]:expected",
    "judge-field:min", "judge-field:expected:min", "p-correct", "token_logprob", "reflection", "tlm",
    "combo:rank-mean[judge-doc[sec:r-s-o|fields:original]+judge-doc[sec:r-s-o|fields:original]:expected+tlm]",
    "fitted-oof-uses-labels[judge-doc[sec:r-s-o|fields:original]+p-correct+reflection+tlm]",
]  # fmt: skip
FIELD_SCORERS = [
    "judge-field", "judge-field:expected", "p-correct@top", "token_logprob@leaf", "token_logprob@top",
    "consistency@leaf", "consistency@top", "reflection@top", "tlm@top", "field-prior-uses-labels@top",
    "field-prior-uses-labels@leaf", "combo:rank-mean[consistency@leaf+token_logprob@leaf]@leaf",
]  # fmt: skip


def _synthetic_runs(root: Path, n_sets: int = 8) -> list[Path]:
    """Run folders holding only the stored tables the figures read, many scorers on many datasets
    (long names, every group), a few datasets too small to mean anything."""
    rng = np.random.default_rng(0)
    runs = []
    for k in range(n_sets):
        run = root / f"insurance_claims_and_more-sample{100 * (k + 1)}-controlled{10 + k}"
        n = 100 * (k + 1) if k < n_sets - 2 else 12  # the last two: too small
        wrong = max(2, n // 3) if k < n_sets - 2 else 3
        rows = []
        for level, names, items in (("document", SCORERS, n), ("field", FIELD_SCORERS, 7 * n)):
            for s in names:
                if rng.random() < 0.2:
                    continue  # a scorer missing on some datasets
                v = float(rng.uniform(0.3, 0.9))
                row = {"level": level, "scorer": s, "n": items, "documents": n, "positives": wrong * (7 if level == "field" else 1),
                       "prevalence": wrong / n, "auroc": v, "auroc_low": v - 0.1, "auroc_high": v + 0.1,
                       "auprc": v / 2, "auprc_low": v / 2 - 0.1, "auprc_high": v / 2 + 0.1,
                       "underpowered": "" if n > 20 else "few", "rating_use": "flat (5:96%)" if s.endswith("]") else "",
                       "uses_labels": "True" if "uses-labels" in s else ""}  # fmt: skip
                for b in (5, 10, 20, 30):
                    for w in ("precision", "recall"):
                        row |= {f"{w}@{b}%": b / 100, f"{w}@{b}%_low": b / 200, f"{w}@{b}%_high": b / 80}
                rows.append(row)
                if "judge" in s and ":expected" not in s and level == "document" and rng.random() < 0.5:
                    values = [{"value": float(r), "n": 10 + r, "wrong": 3, "error_rate": 0.3, "error_low": 0.1,
                               "error_high": 0.6, "few_items": "True" if r > 7 else "False", "naive": (10 - r) / 9,
                               "isotonic": 0.3, "platt": 0.25} for r in range(1, 11)]  # fmt: skip
                    _write(run / "metrics" / f"values_{file_slug(level + ':' + s)}.csv", values)
        _write(run / "metrics" / "detection.csv", rows)
        bins = [{"level": "document", "scorer": s, "method": m, "bin": b, "n": 10, "mean_predicted": b / 10,
                 "observed": b / 11, "observed_low": b / 15, "observed_high": min(1, b / 8)}
                for s in SCORERS[:4] for m in ("isotonic", "platt") for b in range(10)]  # fmt: skip
        _write(run / "metrics" / "reliability.csv", bins)
        for suffix in ("", "_expected_rating"):
            pairs = [{"variant_a": "sec:r-s-o|fields:original", "variant_b": v, "n": n, "mean_shift": 0.1,
                      "shift_low": -0.1, "shift_high": 0.3, "share_changed": 0.2, "wilcoxon_p_holm": 0.04,
                      "auroc_diff": 0.01, "auroc_diff_low": -0.05, "auroc_diff_high": 0.07}
                     for v in ("sec:r-s-o|fields:reversed", "sec:o-s-r|fields:original", "sec:r-s-o|fields:shuffled1")]  # fmt: skip
            _write(run / "metrics" / f"bias_pairs_doc{suffix}.csv", pairs)
        runs.append(run)
    return runs


@pytest.mark.slow
def test_a_many_scorer_many_dataset_set_is_readable(tmp_path):
    runs = _synthetic_runs(tmp_path / "runs")
    figures = build_figures(runs)
    assert len(figures) > 10
    assert _check_all(figures, tmp_path / "figs") == {}
    small = {r.name for r in runs[-2:]}
    for f in figures:
        if not f.appendix:
            assert not small & set(f.datasets), f.name  # too small: appendix only
    assert any(small & set(f.datasets) for f in figures if f.appendix)


# --------------------------------------------------------------------------- each check can fail


def _fig() -> Figure:
    return Figure(figsize=(3, 2), dpi=100)


def test_overlapping_texts_are_found():
    fig = _fig()
    fig.text(0.5, 0.5, "first label")
    fig.text(0.52, 0.5, "second label")
    assert any("overlap" in p for p in readability.text_problems(fig))


def test_text_off_the_canvas_is_found():
    fig = _fig()
    fig.text(0.9, 0.5, "a title that runs off the right edge")
    assert any("outside the canvas" in p for p in readability.text_problems(fig))


def test_a_label_cut_with_an_ellipsis_is_found():
    fig = _fig()
    ax = fig.add_subplot()
    ax.set_yticks([0], ["combo:rank-mean[ju...eld]"])
    assert any("ellipsis" in p for p in readability.text_problems(fig))


def test_a_note_on_a_panels_frame_is_found_and_one_inside_or_under_passes():
    fig = _fig()
    ax = fig.add_subplot()
    ax.set(xlim=(0, 1), ylim=(0, 1))
    ax.text(0.5, 0.5, "inside", ha="center", va="center")
    ax.text(0.5, -0.3, "under the panel", ha="center", va="top")
    assert readability.frame_problems(fig) == []
    ax.text(0.5, 0.01, "9% changed", ha="center", va="top", bbox={"facecolor": "white", "pad": 0.3})
    assert readability.frame_problems(fig) == ["a note on the frame of panel 'untitled': '9% changed'"]
    ax.set_axis_off()  # a cell without a frame (a legend's, a note's) has no line to touch
    assert readability.frame_problems(fig) == []


def test_a_value_and_its_share_stay_on_one_line():
    from construct_eval.display.style import keep_together, wrap

    text = "synthetic, planted errors (per output, forced): " + keep_together("10 for 90% of 200 outputs")
    assert wrap(text, 52).splitlines() == [
        "synthetic, planted errors (per output, forced):",
        "10 for 90% of 200 outputs",
    ]
    assert "10\nfor" in wrap(text.replace("\u00a0", " "), 52)  # without it, the value is left alone


def test_a_clean_figure_passes_and_border_ink_is_found(tmp_path):
    fig = Figure(figsize=(3, 2), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1])
    ax.set(xlabel="x", ylabel="y", title="fine")
    clean = tmp_path / "clean.png"
    fig.savefig(clean)
    assert readability.problems(fig, clean) == []
    edge = Figure(figsize=(3, 2), dpi=100)
    edge.add_artist(
        __import__("matplotlib").patches.Rectangle((0, 0), 1, 1, fill=False, lw=4, transform=edge.transFigure)
    )
    edged = tmp_path / "edge.png"
    edge.savefig(edged)
    assert readability.png_border_ink(edged) > 0


def test_too_many_series_are_found():
    from construct_eval.display import plots

    fig = _fig()
    ax = fig.add_subplot()
    for k in range(MAX_SERIES + 1):
        plots.tag(ax.plot([0, 1], [k, k])[0], f"s{k}")
    assert readability.series_per_panel(fig) == [MAX_SERIES + 1]
    assert readability.series_problems(fig)


# --------------------------------------------------------------------------- paper tables

TABLES = sorted((ROOT / "results" / "figures").glob("table_*.*"))
INTERNAL = ("[", "@", "|", "combo:", "textbar")


def _tex_score_cells(path: Path) -> list[str]:
    """The cells of a LaTeX table's score column ("score" or "rating"), header row excluded."""
    lines = path.read_text().splitlines()
    start = lines.index(r"\midrule")
    header = [c.strip() for c in lines[start - 1].removesuffix(r"\\").split(" & ")]
    col = next((k for k, c in enumerate(header) if c in ("score", "rating")), None)
    if col is None:
        return []
    body = [row for row in lines[start + 1 : lines.index(r"\bottomrule")] if not row.startswith("\\")]
    return [row.removesuffix(r"\\").split(" & ")[col].strip() for row in body]  # group title rows left out


@pytest.mark.skipif(not TABLES, reason="no paper tables written (bash results/figures/make.sh)")
@pytest.mark.parametrize("path", TABLES, ids=lambda p: p.name)
def test_paper_tables_name_scores_as_a_reader_does(path):
    if path.suffix == ".tex":
        cells = _tex_score_cells(path)
    else:
        rows = _csv(path)
        cells = [r["label"] for r in rows] if rows and "label" in rows[0] else []
    bad = [c for c in cells if any(mark in c for mark in INTERNAL)]
    assert not bad, f"{path.name}: internal names in the score column: {sorted(set(bad))[:5]}"


TEX_TABLES = [p for p in TABLES if p.suffix == ".tex"]


@pytest.mark.skipif(not TEX_TABLES, reason="no paper tables written (bash results/figures/make.sh)")
@pytest.mark.parametrize("path", TEX_TABLES, ids=lambda p: p.name)
def test_every_latex_table_fits_the_text_width(path):
    """Measured with Computer Modern's metrics (analysis.tex_width): at most 5.5 in typeset."""
    from construct_eval.display.tex_width import table_width_in
    from construct_eval.paper.figure_tables import MAX_TABLE_COLUMNS, SCORE_COLUMN
    from construct_eval.paper.paper_tables import TEXT_WIDTH_IN

    tex = path.read_text()
    assert table_width_in(tex) <= TEXT_WIDTH_IN, (path.name, round(table_width_in(tex), 2))
    if path.name.startswith(("table_auroc_", "table_auprc_")):
        spec = next(line for line in tex.splitlines() if line.startswith(r"\begin{tabular}{"))
        columns = spec.removeprefix(r"\begin{tabular}{").removesuffix("}")
        assert columns.startswith(SCORE_COLUMN), spec
        assert 1 <= len(columns.removeprefix(SCORE_COLUMN)) <= MAX_TABLE_COLUMNS, spec


def test_the_width_estimate_tells_a_table_that_runs_over_from_one_that_fits():
    from construct_eval.display.tex_width import table_width_in
    from construct_eval.paper.paper_tables import latex_table, wrapping

    cell = "0.82 [0.79, 0.85]"
    header = ["score", *(f"dataset {k} (planted errors, 600 docs) (n=4200, 339 wrong)" for k in range(9))]
    wide = latex_table(header, [["plausibility checks", *[cell] * 9]], caption="c", label="l")
    narrow = latex_table(["score", "a", "b"], [["plausibility checks", cell, cell]], caption="c", label="l",
                         align=wrapping(1.1) + "rr")  # fmt: skip
    assert table_width_in(wide) > 10 > 3 > table_width_in(narrow) > 2


def test_no_stored_run_figure_is_cut_at_its_edge():
    """Every figure a run, the demo, a notebook or the model comparison stored: no ink on its outer pixels
    (a legend wider than the figure, a title past its sides or a last tick label once were)."""
    stored = sorted((ROOT / "results").glob("**/figures/*.png"))
    assert len(stored) > 100, "the recorded runs' figures are missing"
    cut = [str(p.relative_to(ROOT)) for p in stored if readability.png_border_ink(p)]
    assert not cut, f"{len(cut)} stored figures touch their edge (redraw them with today's plots.save): {cut[:5]}"
