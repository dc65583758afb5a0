"""Paper figures: drawn from stored tables, in a venue's size, with embeddable TrueType fonts."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tueplots", reason="tueplots is the figures extra (make venv installs it)")

from construct_eval.cli import main
from construct_eval.data.runs import RunDir
from construct_eval.display.plots import labels_for
from construct_eval.display.style import OKABE_ITO, colour, display_name, venue_style
from construct_eval.paper import figure_set
from construct_eval.paper.figure_data import Estimate, read_detection, review_rows
from construct_eval.paper.forest_plot import forest_figure
from construct_eval.paper.meaning_plot import meaning_figure
from construct_eval.paper.order_plot import order_figure
from construct_eval.paper.paper_plots import title_row
from construct_eval.paper.reliability_plot import reliability_grid
from construct_eval.paper.review_plot import perfect_review, review_figure


@pytest.fixture(scope="module")
def evaluated_runs(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("runs")
    runs = []
    for seed in (0, 1):
        run_dir = tmp_path / f"synthetic-{seed}"
        assert (
            main(["inject", "--run", str(run_dir), "--dataset", "synthetic", "--n", "60", "--error-seed", str(seed)])
            == 0
        )
        assert main(["label", "--run", str(run_dir)]) == 0
        run = RunDir(run_dir)
        rng = np.random.default_rng(seed)
        labels = {r["id"]: r for r in run.read("labels")}
        rows = []
        for doc_id, lab in labels.items():
            wrong = any(f["wrong"] for f in lab["fields"])
            rows.append(
                {"id": doc_id, "scorer": "token_logprob", "field": "__doc__", "score": float(rng.random() - wrong)}
            )
            rows.append({"id": doc_id, "scorer": "reflection", "field": "__doc__", "score": float(rng.random())})
        run.append("scores", rows)
        assert main(["evaluate", "--run", str(run_dir), "--n-boot", "100"]) == 0
        assert main(["calibrate", "--run", str(run_dir)]) == 0
        runs.append(run_dir)
    return runs


def test_figures_command_writes_pdf_svg_png_with_truetype_fonts(evaluated_runs, tmp_path):
    pypdf = pytest.importorskip("pypdf", reason="pypdf is a dev dependency (make venv installs it)")
    from PIL import Image

    out = tmp_path / "figs"
    assert main(["figures", "--runs", *map(str, evaluated_runs), "--out", str(out), "--venue", "icml"]) == 0
    pdf = out / "detect_document.pdf"
    assert pdf.exists() and (out / "detect_document.svg").exists()
    with Image.open(out / "detect_document.png") as img:
        assert round(img.info["dpi"][0]) == 300
    reader = pypdf.PdfReader(pdf)
    page = reader.pages[0]
    width_in = float(page.mediabox.width) / 72
    assert width_in == pytest.approx(6.75, abs=0.05)  # ICML's full text width
    fonts = {}
    for font in page["/Resources"]["/Font"].values():
        font = font.get_object()
        fonts[str(font["/BaseFont"])] = str(font["/Subtype"])
    assert fonts and "/Type3" not in fonts.values(), fonts
    assert any("DejaVuSerif" in name for name in fonts), fonts
    text = (out / "figures.md").read_text()
    assert "construct-eval figures" in text and all(str(r) in text for r in evaluated_runs)


def test_the_one_column_set_holds_the_main_figures_only_at_one_columns_width(evaluated_runs, tmp_path):
    from PIL import Image

    out = tmp_path / "one_column"
    args = ["figures", "--runs", *map(str, evaluated_runs), "--out", str(out), "--venue", "icml", "--column", "half"]
    assert main([*args, "--main-only"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())["files"]
    assert manifest and not any(entry["appendix"] for entry in manifest.values())
    assert not list(out.glob("table_*")) and not list(out.glob("appx_*"))
    with Image.open(out / "detect_document.png") as img:
        assert img.size[0] / img.info["dpi"][0] == pytest.approx(3.25, abs=0.05)  # ICML's column


def test_a_paper_set_from_a_runs_folder_leaves_out_the_runs_a_file_names_and_says_why(evaluated_runs, tmp_path):
    root = evaluated_runs[0].parent
    listed = tmp_path / "left_out.txt"
    listed.write_text(f"# kept out, with why\n\n{evaluated_runs[1].name}  # its judging is not complete\n")
    assert figure_set.read_left_out(listed) == {evaluated_runs[1].name: "its judging is not complete"}
    assert figure_set.paper_set(root, figure_set.read_left_out(listed)) == [evaluated_runs[0]]
    assert figure_set.paper_set(root) == sorted(evaluated_runs)
    out = tmp_path / "set"
    assert main(["figures", "--runs-root", str(root), "--left-out", str(listed), "--out", str(out), "--main-only"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["runs"] == [str(evaluated_runs[0])]
    assert manifest["left_out"] == {evaluated_runs[1].name: "its judging is not complete"}
    text = (out / "figures.md").read_text()
    assert f"- `{evaluated_runs[1].name}`: its judging is not complete" in text


def test_a_left_out_list_with_a_typo_or_no_reason_or_beside_an_explicit_run_list_is_refused(
    evaluated_runs, tmp_path, capsys
):
    root = evaluated_runs[0].parent
    listed = tmp_path / "left_out.txt"
    listed.write_text("synthetic-O  # a typo for synthetic-0\n")
    with pytest.raises(ValueError, match=r"no run folder under .*synthetic-O"):
        figure_set.paper_set(root, figure_set.read_left_out(listed))
    listed.write_text(f"{evaluated_runs[1].name}\n")
    with pytest.raises(ValueError, match=r"line 1: .* without a reason"):
        figure_set.read_left_out(listed)
    listed.write_text(f"{evaluated_runs[1].name}  # why\n")
    args = ["figures", "--runs", str(evaluated_runs[0]), "--left-out", str(listed), "--out", str(tmp_path / "o")]
    assert main(args) == 2
    assert "--left-out names runs to leave out of --runs-root" in capsys.readouterr().err


def test_figures_are_drawn_from_the_stored_tables(evaluated_runs):
    with (evaluated_runs[0] / "metrics" / "detection.csv").open() as fh:
        stored = {r["scorer"]: float(r["auroc"]) for r in csv.DictReader(fh) if r["level"] == "document"}
    read = {e.scorer: e.value for e in read_detection(evaluated_runs[0]) if e.level == "document"}
    assert read == stored


def test_venue_widths_and_colours():
    assert venue_style("neurips", "full")["figure.figsize"][0] == pytest.approx(5.5, abs=0.01)
    assert venue_style("icml", "half")["figure.figsize"][0] == pytest.approx(3.25, abs=0.01)
    assert venue_style("acl", "half")["figure.figsize"][0] == pytest.approx(3.03, abs=0.01)
    assert venue_style("iclr", "full")["pdf.fonttype"] == 42
    # a colour says what a score is: the forced rating is one colour at either level, its
    # expected rating another, whatever the prompt order; baselines that use labels are grey
    assert (
        colour("judge-doc") == colour("judge-field") == colour("judge-doc[sec:o-s-r|fields:original]") == OKABE_ITO[4]
    )
    assert colour("judge-doc:expected") == colour("judge-field:expected") != colour("judge-doc")
    assert colour("field-prior-uses-labels@leaf") == "#999999"
    with pytest.raises(ValueError):
        venue_style("cvpr")


def _csv(path):
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def paper_set(evaluated_runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("paper") / "figs"
    argv = ["figures", "--runs", *map(str, evaluated_runs), "--out", str(out), "--command-line", "test"]
    assert main(argv) == 0
    return out


def test_table_numbers_equal_what_evaluate_stored(evaluated_runs, paper_set):
    table = _csv(paper_set / "table_auroc_document.csv")
    assert table
    for run_dir in evaluated_runs:
        stored = {r["scorer"]: r for r in _csv(run_dir / "metrics" / "detection.csv") if r["level"] == "document"}
        mine = [r for r in table if r["dataset"] == run_dir.name]
        assert {r["scorer"] for r in mine} == set(stored)
        for r in mine:
            for ours, theirs in (("value", "auroc"), ("low", "auroc_low"), ("high", "auroc_high"), ("n", "n")):
                assert float(r[ours]) == pytest.approx(float(stored[r["scorer"]][theirs]))
    review = _csv(paper_set / "table_review_document.csv")
    assert {int(r["budget"]) for r in review} == {5, 10, 20, 30}
    for r in review:
        stored = next(
            s
            for s in _csv(next(d for d in evaluated_runs if d.name == r["dataset"]) / "metrics" / "detection.csv")
            if s["scorer"] == r["scorer"] and s["level"] == "document"
        )
        for what in ("precision", "recall"):
            for bound in ("", "_low", "_high"):
                assert float(r[what + bound]) == pytest.approx(float(stored[f"{what}@{r['budget']}%{bound}"]))
    tex = (paper_set / "table_auroc_document.tex").read_text()
    assert "\\toprule" in tex and "\\bottomrule" in tex
    first = next(r for r in table if r["scorer"] == "token_logprob")
    assert first["cell"] in tex or f"\\textbf{{{first['cell']}}}" in tex


def test_bold_is_the_best_label_free_score_only_where_separated_from_chance_and_the_runner_up(paper_set):
    table = _csv(paper_set / "table_auroc_document.csv")
    best = [r for r in table if r["best"] == "True"]
    assert best and len({r["dataset"] for r in best}) == len(best)  # at most one a column
    for r in best:
        rivals = [o for o in table if o["dataset"] == r["dataset"] and o["uses_labels"] != "True"
                  and o["underpowered"] != "True" and o["flat"] != "True"]  # fmt: skip
        assert r["uses_labels"] != "True" and float(r["low"]) > 0.5  # its interval clears chance
        assert float(r["value"]) == max(float(o["value"]) for o in rivals)
        assert r["separated_from_runner_up"] == "True"  # and the runner-up, paired, after Holm
    # token_logprob sees the labels' signal, reflection is noise: the paired bootstrap separates them
    separated = [r for r in table if r["separated_from_runner_up"] == "True"]
    assert {r["scorer"] for r in separated} == {"token_logprob"}
    for r in separated:  # the runner-up is the next AUROC of its run (the plausibility checks since issue 34)
        others = sorted((float(o["value"]), o["scorer"]) for o in table if o["dataset"] == r["dataset"] and o is not r)
        assert float(r["difference_low"]) > 0 and float(r["p_holm"]) < 0.05 and r["runner_up"] == others[-1][1]
    assert "\\textbf{" in (paper_set / "table_auroc_document.tex").read_text()


def test_two_runs_of_the_command_give_identical_files(evaluated_runs, paper_set, tmp_path):
    again = tmp_path / "again"
    assert main(["figures", "--runs", *map(str, evaluated_runs), "--out", str(again), "--command-line", "test"]) == 0
    first = sorted(p.name for p in paper_set.iterdir())
    assert first == sorted(p.name for p in again.iterdir())
    assert {"review_document.pdf", "appx_reliability_document.pdf", "manifest.json"} <= set(first)
    for name in first:
        assert (paper_set / name).read_bytes() == (again / name).read_bytes(), name


def test_manifest_names_each_file_with_the_run_files_it_read(evaluated_runs, paper_set):
    import hashlib

    manifest = json.loads((paper_set / "manifest.json").read_text())
    assert manifest["command"] == "test"
    entry = manifest["files"]["table_auroc_document.csv"]
    assert any(p.endswith("labels.jsonl") for p in entry["inputs"])
    for path, digest in entry["inputs"].items():
        assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == digest
    for name, e in manifest["files"].items():
        assert hashlib.sha256((paper_set / name).read_bytes()).hexdigest() == e["sha256"]


def test_manifest_maps_each_scorer_to_the_label_a_reader_sees(paper_set):
    """The manifest's scorer map gives the label a figure shows, never the internal name again."""
    manifest = json.loads((paper_set / "manifest.json").read_text())
    mapped = {k: v for e in manifest["files"].values() for k, v in e.get("scorers", {}).items()}
    assert mapped
    internal = {k: v for k, v in mapped.items() if any(c in v for c in "[]@|_") or v.startswith(("judge-", "combo"))}
    assert not internal, internal


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_legends_sit_outside_every_axes(evaluated_runs):
    import matplotlib

    from construct_eval.paper.figure_data import ValueTable

    style = venue_style("neurips", "full", ncols=2)
    estimates = [e for r in evaluated_runs for e in read_detection(r) if e.level == "document"]
    review = review_rows(evaluated_runs, "document")
    bins = [{**b, "dataset": r.name} for r in evaluated_runs for b in _csv(r / "metrics" / "reliability.csv")]
    meaning = [
        {"value": v, "n": 30, "wrong": 30 * e, "error_rate": e, "error_low": e / 2, "error_high": e + 0.1,
         "few_items": False, "naive": (10 - v) / 9} for v, e in ((1, 0.6), (5, 0.3), (9, 0.1))
    ]  # fmt: skip
    drawn = [
        forest_figure(estimates, style=style),
        review_figure(review, level="document", style=style),
        reliability_grid(bins, style=style),
        meaning_figure(
            [ValueTable("a", "document", "judge-doc", meaning, Path("a"))], style=venue_style("neurips", "half")
        ),
    ]
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    for fig in drawn:
        canvas = FigureCanvasAgg(fig)
        with matplotlib.rc_context(style):
            canvas.draw()
        renderer = canvas.get_renderer()
        legends = fig.legends
        assert legends, "every paper figure explains its colours"
        for legend in legends:
            box = legend.get_window_extent(renderer)
            for ax in fig.axes:
                assert not _overlaps(box, ax.get_window_extent(renderer))


def test_a_scorer_missing_on_one_dataset_leaves_a_gap_and_keeps_its_colour():
    def est(dataset, scorer, value):
        return Estimate(dataset, "document", scorer, value, value - 0.1, value + 0.1, 50, 0.3, False, False, 15, 50)

    estimates = [est("a", "judge-doc", 0.6), est("a", "reflection", 0.7), est("a", "tlm", 0.8)]
    estimates += [est("b", "judge-doc", 0.55), est("b", "tlm", 0.75)]  # no reflection on b
    fig = forest_figure(estimates, style=venue_style("neurips", "full", ncols=2))
    ax_a, ax_b = fig.axes[:2]

    def markers(ax):
        return {round(line.get_ydata()[0]): line.get_color() for line in ax.lines if len(line.get_xdata()) == 1}

    a, b = markers(ax_a), markers(ax_b)
    assert set(a) == {0, 1, 2} and set(b) == {0, 2}  # reflection's row stays, empty, on b
    assert a[0] == b[0] == colour("judge-doc") and a[2] == b[2] == colour("tlm")
    assert not math.isnan(estimates[0].value)


def test_display_names_read_as_a_reader_reads_them():
    assert display_name("judge-doc[sec:r-s-o|fields:original]") == "judge rating (forced)"
    assert display_name("judge-doc[sec:r-s-o|fields:original|ask:free]") == "judge rating (free)"
    assert display_name("judge-doc[sec:r-s-o|fields:original]:expected") == "expected rating"
    assert display_name("judge-doc[sec:o-s-r|fields:original]:expected") == "expected rating, output first"
    assert display_name("judge-field:expected:min") == "lowest field expected rating"
    assert display_name("p-correct@top") == "P(correct)"
    assert display_name("token_logprob@leaf", granularity=True) == "token log-probs, per leaf"
    assert display_name("consistency@leaf") == "self-consistency"
    assert display_name("field-prior-uses-labels@top") == "field prior (uses labels)"
    assert display_name("combo:rank-mean[judge-field+judge-field:expected]@top") == "rank mean of 2 scores"
    assert "uses labels" in display_name("fitted-oof-uses-labels[a+b]")


def test_labels_never_repeat_and_are_never_cut():
    names = ["combo:rank-mean[a+b]", "combo:rank-mean[c+d]", "token_logprob@leaf", "token_logprob@top"]
    labels = labels_for(names)
    assert len(set(labels)) == len(labels)  # two combinations of two scores: told apart by name
    assert labels[2:] == ["token log-probs, per leaf", "token log-probs, per top field"]
    long = "judge-doc[sec:o-s-r|fields:reversed|ask:free]:expected"
    assert "..." not in labels_for([long])[0]


def test_one_score_under_two_internal_names_on_two_datasets_is_one_label():
    """An older run names its judge ``judge-doc``, the study run (beside other prompt orders)
    ``judge-doc[sec:r-s-o|fields:original]``: the figure draws them as one row, and the manifest
    says so (it used to fall back to both internal names)."""
    from construct_eval.paper.figure_parts import shown_scorers as _scorers

    rows = [
        {"dataset": "old", "scorer": "judge-doc"},
        {"dataset": "study", "scorer": "judge-doc[sec:r-s-o|fields:original]"},
        {"dataset": "study", "scorer": "judge-doc[sec:o-s-r|fields:original]"},
    ]
    assert _scorers(rows) == {
        "judge-doc": "judge rating (forced)",
        "judge-doc[sec:r-s-o|fields:original]": "judge rating (forced)",
        "judge-doc[sec:o-s-r|fields:original]": "judge rating (forced), output first",
    }


def test_the_set_clears_what_an_earlier_set_wrote(tmp_path):
    from construct_eval.paper.figure_set import clear_outputs

    stale = [
        tmp_path / n for n in ("forest_auroc_field.png", "forest_auroc_field.pdf", "table_old.tex", "manifest.json")
    ]
    kept = [tmp_path / "notes.txt", tmp_path / "sub" / "other.png"]
    for p in stale + kept:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    assert sorted(clear_outputs(tmp_path)) == sorted(stale)
    assert all(p.exists() for p in kept) and not any(p.exists() for p in stale)


@pytest.mark.parametrize(
    ("run_name", "label"),
    [
        ("financial_ner-sample600-controlled30", ("financial NER", "planted errors, 600 docs")),
        ("synthetic100-nearmiss30", ("synthetic", "planted near misses, 100 docs")),
        (
            "natural-data_table_rebuild-qwen2.5-coder-1.5b-benchmark",
            ("data tables (offline rebuild)", "generator's errors, Qwen2.5-Coder-1.5B, benchmark prompt"),
        ),
        (
            "natural-synthetic-shipping_notice-qwen2.5-coder-1.5b-package",
            ("synthetic shipping notices", "generator's errors, Qwen2.5-Coder-1.5B, package prompt"),
        ),
        (
            "natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package",
            ("synthetic shipping notices (version 2)", "generator's errors, Qwen2.5-Coder-1.5B, package prompt"),
        ),
        (
            "natural-pilot-financial_ner-qwen0.5b-benchmark",
            ("financial NER", "generator's errors, Qwen0.5B, benchmark prompt"),
        ),
    ],
)
def test_a_run_name_reads_as_its_dataset_and_how_its_errors_arose(run_name, label):
    from construct_eval.display.style import dataset_label

    assert dataset_label(run_name) == label


def test_a_panel_shows_the_granularity_the_judge_rated_where_it_rated_one():
    """The table rebuild's judge rated top-level fields while leaves hold more items of each class:
    its panel is per top-level field, so the judge's row is drawn rather than said "not run";
    a nested run without a judge's field ratings keeps the granularity with more of the smaller class."""
    from construct_eval.paper import figure_data as fd

    runs = Path(__file__).resolve().parents[1] / "results" / "runs"

    def chosen(name):
        return fd.panel_granularity(e for e in fd.read_detection(runs / name) if e.level == "field")

    assert chosen("natural-data_table_rebuild-qwen2.5-coder-1.5b-benchmark") == "top"
    assert chosen("insurance_claims") == "leaf"  # no judge per field: the leaves have more of each class
    assert chosen("financial_ner-sample600-controlled30") == "top"


def test_a_by_kind_figure_says_which_panels_it_leaves_out_as_too_few_to_judge():
    """The table rebuild's empty fields hold too few wrong ones for any row to be drawn: the appendix
    figure that shows its filled and empty fields says so in its description, with the counts,
    instead of dropping the panel in silence (the main figure shows filled fields only)."""
    import matplotlib.pyplot as plt

    from construct_eval.paper.figures import _by_kind_figures

    runs = Path(__file__).resolve().parents[1] / "results" / "runs"
    names = ["financial_ner-sample200", "insurance_claims", "natural-data_table_rebuild-qwen2.5-coder-1.5b-benchmark"]
    figures = _by_kind_figures([runs / n for n in names], "neurips", "full")
    try:
        said = [
            f.what
            for f in figures
            if f.appendix and "natural-data_table_rebuild-qwen2.5-coder-1.5b-benchmark" in f.datasets
        ]
        assert said and all("; left out, too few to judge: " in w for w in said)
        assert all("data tables (offline rebuild), empty fields (" in w for w in said)
        assert not any("filled fields (" in w for w in said)  # drawn, so not said to be left out
    finally:
        for f in figures:
            plt.close(f.figure)


@pytest.mark.parametrize(
    "counts,titled",
    [
        # the judge and most scores on a part (72 notices), the generator's log-probs on all 350
        ({"judge-doc": 72, "judge-doc:expected": 72, "verdict": 72, "reflection": 72, "token_logprob": 350}, 72),
        # order variants run on a part (200) of the set (600): the reference is on the whole set
        (
            {
                "judge-doc": 600,
                "judge-doc:expected": 600,
                "judge-doc[sec:o-r-s]": 200,
                "judge-doc[fields:rev]": 200,
                "judge-doc[fields:shuf]": 200,
            },
            600,
        ),
        # a label-using baseline first in the order is not the reference
        ({"field_prior": 3076, "plausibility": 3087}, 3087),
    ],
)
def test_a_panel_is_titled_by_the_count_its_reference_score_shares_with_most_rows(counts, titled):
    rows = [{"scorer": s, "n": n, "positives": n // 3, "uses_labels": s == "field_prior"} for s, n in counts.items()]
    row = title_row(rows, lambda r: r["scorer"], lambda r: (r["n"], r["positives"]), lambda r: r["uses_labels"])
    assert row["n"] == titled


@pytest.mark.parametrize(
    "n,wrong,ends",
    [
        (100, 42, 0.3 / 0.42),  # many wrong: even a perfect score finds only 71% at 30% reviewed
        (200, 20, 1.0),  # few wrong: a perfect score has found them all at 10% reviewed
        (50, 0, 0.0),  # nothing wrong: nothing to find
    ],
)
def test_a_perfect_score_finds_every_wrong_item_first(n, wrong, ends):
    x, y = perfect_review(n, wrong, 30)
    assert x[0] == y[0] == 0 and x[-1] == 30
    assert y[-1] == pytest.approx(ends)
    if wrong and 100 * wrong / n < 30:
        assert x[1] == pytest.approx(100 * wrong / n) and y[1] == 1.0  # the knee: every wrong item found


def _review_rows(scorers: dict[str, tuple[int, int]]) -> list[dict]:
    """Rows of one review panel: each score on (n, wrong) items, recall a little under perfect."""
    rows = []
    for scorer, (n, wrong) in scorers.items():
        for budget in (10, 20, 30):
            recall = 0.9 * min(1.0, budget / (100 * wrong / n))
            rows.append({"dataset": "synthetic", "scorer": scorer, "n": n, "positives": wrong, "budget": budget,
                         "recall": recall, "recall_low": recall - 0.05, "recall_high": min(1.0, recall + 0.05),
                         "uses_labels": False})  # fmt: skip
    return rows


@pytest.mark.parametrize("subset", [False, True])
def test_a_review_panel_whose_scores_rate_different_items_draws_a_perfect_score_band(subset):
    """A judge on 50 of the items (10 wrong) beside log-probs on all 100 (40 wrong): each has its own
    perfect curve, so the panel draws a band from the lower to the higher one, and says so; scores on
    the same items keep the one line."""
    from construct_eval.paper.review_plot import PERFECT, PERFECT_BANDED

    judge = (50, 10) if subset else (100, 40)
    rows = _review_rows({"judge-doc": judge, "logprob-doc-mean": (100, 40)})
    fig = review_figure(rows, level="document", style=venue_style("neurips", "half", ncols=1))
    ax = fig.axes[0]
    bands = [c for c in ax.collections if c.get_gid() == PERFECT]
    lines = [line for line in ax.lines if line.get_gid() == PERFECT]
    legend = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    if not subset:
        assert len(lines) == 1 and not bands and PERFECT in legend
        return
    assert len(bands) == 1 and not lines and PERFECT_BANDED in legend and PERFECT not in legend
    path = bands[0].get_paths()[0].vertices
    xs = sorted({round(float(x), 9) for x, _ in path})
    upper = [max(y for x, y in path if abs(x - v) < 1e-9) for v in xs]
    lower = [min(y for x, y in path if abs(x - v) < 1e-9) for v in xs]
    # at 30% reviewed the judge's perfect score has found every wrong item (knee 20%), log-probs' 30/40
    assert np.interp(30, xs, upper) == pytest.approx(1.0) and np.interp(30, xs, lower) == pytest.approx(30 / 40)
    for r in rows:  # the band's top is a ceiling for every score's curve
        assert r["recall"] <= np.interp(r["budget"], xs, upper) + 1e-9


def test_a_review_panel_draws_a_perfect_score_above_every_curve(evaluated_runs):
    review = review_rows(evaluated_runs, "document")
    fig = review_figure(review, level="document", style=venue_style("neurips", "full", ncols=2))
    datasets = list(dict.fromkeys(r["dataset"] for r in review))  # one panel each, in this order
    assert len(fig.axes) == len(datasets) == 2
    for ax, dataset in zip(fig.axes, datasets, strict=True):
        dotted = [line for line in ax.lines if line.get_gid() == "a perfect score"]
        assert len(dotted) == 1, "one perfect-score line a panel (these scores rate the same items)"
        largest = max(r["budget"] for r in review)
        ceiling = np.interp(largest, dotted[0].get_xdata(), dotted[0].get_ydata())
        mine = [r for r in review if r["budget"] == largest and r["dataset"] == dataset]
        assert mine and all(r["recall"] <= ceiling + 1e-9 for r in mine)
        n, wrong = mine[0]["n"], mine[0]["positives"]
        assert ceiling == pytest.approx(min(1.0, largest / 100 * n / wrong))
    assert "a perfect score" in [t.get_text() for t in fig.legends[0].get_texts()]


def test_a_perfect_auroc_is_drawn_inside_the_frame_not_on_it():
    def est(scorer, value):
        return Estimate(
            "a", "document", scorer, value, value - 0.05, min(value + 0.05, 1.0), 50, 0.3, False, False, 15, 50
        )

    fig = forest_figure([est("judge-doc", 1.0), est("tlm", 0.0)], style=venue_style("neurips", "full", ncols=2))
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    frame = ax.get_window_extent()
    for line in ax.lines:
        if len(line.get_xdata()) == 1:  # a marker
            x, _ = ax.transData.transform((line.get_xdata()[0], 0))
            radius = line.get_markersize() / 72 * fig.dpi / 2
            assert frame.x0 < x - radius and x + radius < frame.x1, "a marker half outside its panel"


@pytest.mark.parametrize(
    "text,width,lines",
    [
        ("synthetic shipping notices (version 2)", 20, ["synthetic shipping", "notices (version 2)"]),
        ("plausibility checks (no labels)", 26, ["plausibility checks", "(no labels)"]),
        ("a (phrase too long to keep on one line) b", 12, ["a (phrase", "too long to", "keep on one", "line) b"]),
        ("first line\nsecond (kept whole)", 12, ["first line", "second", "(kept whole)"]),
    ],
)
def test_a_label_wraps_between_words_and_never_inside_a_short_parenthesised_phrase(text, width, lines):
    from construct_eval.display.style import wrap

    assert wrap(text, width).split("\n") == lines


@pytest.mark.parametrize(
    "text,width,lines",
    [
        ("Qwen2.5-Coder-1.5B generates and scores for every method;", 52,
         ["Qwen2.5-Coder-1.5B generates", "and scores for every method;"]),
        ("short enough\nalso short", 30, ["short enough", "also short"]),
        ("a b c d e f g h i j k l m n o p", 20, ["a b c d e f g h", "i j k l m n o p"]),
    ],
)  # fmt: skip
def test_an_even_wrap_keeps_the_line_count_and_leaves_no_word_alone_on_a_line(text, width, lines):
    from construct_eval.display.style import wrap, wrap_even

    assert wrap_even(text, width).split("\n") == lines
    assert wrap_even(text, width).count("\n") == wrap(text, width).count("\n")


def _order_rows(runs_variants):
    row = {"n": 200, "mean_shift": 0.2, "shift_low": 0.1, "shift_high": 0.3}
    row |= {"auroc_diff": 0.01, "auroc_diff_low": -0.02, "auroc_diff_high": 0.04}
    rows = [{**row, "run": run, "variant_b": variant} for run, variant in runs_variants]
    return {"rating": rows, "expected_rating": rows}


def test_an_order_figure_on_one_dataset_names_it_once_in_its_title_not_on_every_row():
    style = venue_style("neurips", "full", ncols=2)
    one = order_figure(_order_rows([("financial_ner-judge", "fields:rev"), ("financial_ner-judge", "sec:o-r-s")]),
                       style=style)  # fmt: skip
    rows = [t.get_text() for t in one.axes[0].get_yticklabels()]
    title = one.get_suptitle()
    assert title and "financial NER" in title
    assert len(rows) == 2 and not any("financial NER" in r for r in rows)
    two = order_figure(_order_rows([("financial_ner-judge", "fields:rev"), ("pii-judge", "fields:rev")]), style=style)
    rows = [t.get_text() for t in two.axes[0].get_yticklabels()]
    assert not two.get_suptitle() and "financial NER" in rows[0] and "PII" in rows[1]


@pytest.mark.parametrize(
    "constant,common,top,every,words",
    [
        (True, 1, "100%", True, "constant"),
        (False, 1, "100%", True, ">99% one value"),  # rounds to 100%, but it is not one value
        (False, 1, "96%", True, "96% one value"),
        (False, 2, "90%", True, "2 values"),
        (False, 2, "90%", False, "mostly 2 values"),  # a few items hold a third value
        (False, 0, "", True, "flat"),
    ],
)
def test_a_flat_rating_says_how_flat_it_is(constant, common, top, every, words):
    from construct_eval.paper.figure_data import flat_words

    assert flat_words(constant, common, top, every) == words


def test_a_review_panel_says_under_it_which_curve_is_a_rating_that_orders_nothing(evaluated_runs):
    review = review_rows(evaluated_runs, "document")
    assert not any(r["flat_note"] for r in review)  # the fixture's scores vary
    first = review[0]["dataset"]
    flat = [
        {**r, "flat_note": "constant"} if r["dataset"] == first and r["scorer"] == "reflection" else r for r in review
    ]
    style = venue_style("neurips", "full", ncols=2)
    notes = [t.get_text() for t in review_figure(flat, level="document", style=style).axes[0].texts]
    assert any("constant" in t for t in notes), notes
    plain = [t.get_text() for t in review_figure(review, level="document", style=style).axes[0].texts]
    assert not any("constant" in t for t in plain)


def test_the_review_figure_rings_the_curve_its_caption_calls_the_judges_best_and_never_a_constant():
    """The caption's "the judge's best" is the judge's score that finds the most at 20% reviewed
    (not by AUROC, as the detection figures choose): the figure rings that point, says so in its
    legend, and a constant rating (not drawn) is never the best."""
    from construct_eval.paper.messages import judge_best_review

    rows = _review_rows({"judge-doc": (100, 40), "judge-doc:expected": (100, 40), "logprob-doc-mean": (100, 40)})
    for r in rows:  # the expected rating finds less than the forced rating at every budget
        r["recall"] -= 0.1 * (r["scorer"] == "judge-doc:expected")
    best = judge_best_review(rows)
    assert best["synthetic"]["scorer"] == "judge-doc" and best["synthetic"]["budget"] == 20
    label = "the ring: the judge's best"
    fig = review_figure(rows, level="document", style=venue_style("neurips", "half", ncols=1), ringed=best,
                        ringed_label=label)  # fmt: skip
    rings = [ln for ln in fig.axes[0].lines if (ln.get_gid() or "").endswith("ringed judge-doc")]
    assert len(rings) == 1 and list(rings[0].get_xdata()) == [20]
    assert rings[0].get_ydata()[0] == pytest.approx(best["synthetic"]["recall"])
    on_top = [ln for ln in fig.axes[0].lines if ln.get_zorder() == 5.5]  # its marker again, inside the ring
    assert len(on_top) == 1 and on_top[0].get_color() == rings[0].get_markeredgecolor()
    assert label in [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    flat = [{**r, "flat_note": "constant"} if r["scorer"] == "judge-doc" else r for r in rows]
    assert judge_best_review(flat)["synthetic"]["scorer"] == "judge-doc:expected"


def test_a_review_note_names_the_constant_ratings_once_and_a_score_without_its_legend_parenthesis():
    from construct_eval.paper.review_plot import _note_names, _together

    assert _together(["judge rating (forced)", "judge rating (free)"]) == "judge rating (forced, free)"
    assert _together(["judge rating (forced)", "token log-probs"]) == "judge rating (forced); token log-probs"
    named = _note_names(["judge rating (forced)", "judge rating (free)", "plausibility checks (built for it)"])
    assert named == {"judge rating (forced)": "judge rating (forced)", "judge rating (free)": "judge rating (free)",
                     "plausibility checks (built for it)": "plausibility checks"}  # fmt: skip


def test_a_run_figure_draws_a_score_per_leaf_thinner_and_lighter_than_the_same_score_per_top_field():
    from construct_eval.display import plots
    from construct_eval.display.style import SERIES_GID

    x = np.array([0.0, 0.5, 1.0])
    curves = {name: (x, x, 0.5) for name in ("token_logprob@leaf", "token_logprob@top", "a user's own curve")}
    for fig in (plots.roc_figure(curves), plots.review_budget_figure({k: v[:2] for k, v in curves.items()})):
        ax = fig.axes[0]
        line = {
            ln.get_gid().removeprefix(SERIES_GID): ln for ln in ax.lines if (ln.get_gid() or "").startswith(SERIES_GID)
        }
        leaf, top = line["token_logprob@leaf"], line["token_logprob@top"]
        assert leaf.get_color() == top.get_color()  # one score, one colour
        assert leaf.get_linewidth() < top.get_linewidth() and leaf.get_alpha() < top.get_alpha()
        assert line["a user's own curve"].get_alpha() == 1.0  # a name outside the grammar: drawn as top-level


def test_a_datasets_scores_stay_in_one_figure_and_a_dataset_with_too_many_continues_alone():
    from construct_eval.paper.figure_data import figure_pieces

    how = {"big": "generator's errors", "planted": "planted errors", "near": "planted near misses"}
    many = {f"s{k}" for k in range(8)}
    present = {"big": many, "planted": {"s0", "s1", "x"}, "near": {"s0", "y"}}
    scorers = sorted(many | {"x", "y"})
    pieces = figure_pieces(["big", "near", "planted"], present, scorers, how, limit=4)
    # planted errors first; the near misses join them (4 scores together); the big one is alone, in two parts
    assert pieces[0] == (["planted", "near"], ["s0", "s1", "x", "y"])
    assert [d for d, _ in pieces[1:]] == [["big"], ["big"]]
    assert sorted(s for _, part in pieces[1:] for s in part) == sorted(many)
    # one score under two internal names on two datasets is one row, counted once
    two = {"planted": {"s0", "s1"}, "near": {"s0", "y"}}
    assert [d for d, _ in figure_pieces(["near", "planted"], two, scorers, how, limit=2)] == [["planted"], ["near"]]
    together = figure_pieces(["near", "planted"], two, scorers, how, {"y": "s1"}, limit=2)
    assert [d for d, _ in together] == [["planted", "near"]]


def test_a_flat_ratings_note_sits_on_its_row_inside_the_panel_clear_of_the_row_aboves_count():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def est(scorer, value, n, flat=False):  # a long dataset name: its title takes five lines of the panel's room
        low, high = (value, value) if flat else (value - 0.05, value + 0.05)
        return Estimate(natural, "document", scorer, value, low, high, n, 0.3, False, False, n // 2, n, flat=flat)

    natural = "natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package"
    names = ["judge-doc", "verdict-doc", "tlm", "reflection", "consistency", "plausibility"]
    rows = [est(names[0], 0.6, 300), *(est(s, 0.5, 246, flat=True) for s in names[1:])]  # a count under each
    fig = forest_figure(rows, style=venue_style("icml", "half", ncols=1))
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    frame = ax.get_window_extent()
    notes = [(t.get_text(), t.get_window_extent()) for t in ax.texts]
    flat = [box for text, box in notes if text == "constant"]
    counts = [box for text, box in notes if text.startswith("n=246")]
    assert len(flat) == len(counts) == 5, notes
    for box in flat:
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, "a flat note outside its panel"
        assert not any(box.overlaps(c) for c in counts), "a flat note over another row's count"


def test_a_one_column_review_panel_keeps_its_height_under_a_long_title_notes_and_a_long_legend(evaluated_runs):
    """Six scores each on its own items (a note line each), a dataset name on two title lines and
    a legend of one entry a line: the figure grows for them, the panel is not squeezed."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    review = review_rows(evaluated_runs, "document")
    first = review[0]["dataset"]
    mine = [r for r in review if r["dataset"] == first]
    extra = dict(
        zip(dict.fromkeys(r["scorer"] for r in mine), ["judge-doc", "verdict-doc", "consistency"], strict=True)
    )
    mine += [{**r, "scorer": extra[r["scorer"]]} for r in mine if r["scorer"] in extra]  # six scores
    scorers = list(dict.fromkeys(r["scorer"] for r in mine))
    natural = "natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package"
    rows = [{**r, "dataset": natural, "n": r["n"] - 1 - scorers.index(r["scorer"])} for r in mine]  # own counts
    fig = review_figure(rows, level="document", style=venue_style("icml", "half", ncols=1))
    FigureCanvasAgg(fig).draw()
    height_in = fig.axes[0].get_window_extent().height / fig.dpi
    assert len(scorers) == 6 and height_in >= 1.1, (len(scorers), round(height_in, 2))


def test_a_panel_of_one_output_kind_counts_leaves_where_its_scores_rate_leaves():
    from construct_eval.paper.paper_plots import panel_title

    leaves = panel_title("synthetic200-controlled30", 2866, 125, "leaves", kind="filled fields")
    fields = panel_title("synthetic200-controlled30", 2866, 125, "fields", kind="filled fields")
    assert "filled leaves: 125 of 2,866 wrong" in leaves.replace("\n", " ")
    assert "filled fields: 125 of 2,866 wrong" in fields.replace("\n", " ")


def test_the_readme_figure_is_a_main_figure_of_the_committed_set():
    """The README shows one figure: a main figure the committed set (make.sh) holds, not an appendix
    one or one the set no longer makes."""
    import re

    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text()
    shown = re.findall(r"<!-- figure:[^>]*-->\n!\[[^\]]*\]\(results/figures/([^)/]+\.png)\)", readme)
    assert len(shown) == 1, shown
    manifest = json.loads((root / "results" / "figures" / "manifest.json").read_text())["files"]
    assert shown[0] in manifest and not manifest[shown[0]]["appendix"] and manifest[shown[0]].get("message")


def test_only_makes_one_figure_and_scorers_chooses_its_rows(evaluated_runs, tmp_path, capsys):
    out = tmp_path / "one"
    args = ["figures", "--runs", *map(str, evaluated_runs), "--out", str(out)]
    assert main([*args, "--only", "detect_document", "--scorers", "token_logprob"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "detect_document.pdf",
        "detect_document.png",
        "detect_document.svg",
    ]
    from construct_eval.paper.figures import build_figures

    (fig,) = build_figures(evaluated_runs, only="detect_document", scorers=["token log-probs"])
    assert set(fig.scorers) == {"token_logprob"} and fig.message
    assert main([*args, "--only", "no_such_figure"]) == 2
    assert "detect_document" in capsys.readouterr().err


def test_the_committed_tables_bold_no_score_whose_interval_holds_chance():
    """table_auroc_field.tex once bolded 0.52 [0.49, 0.55]: a bold cell's interval is above 0.5."""
    import re

    root = Path(__file__).resolve().parents[1] / "results" / "figures"
    bold = [m for p in root.glob("table_auroc_*.tex") for m in re.findall(r"\\textbf\{([^}]*)\}", p.read_text())]
    for cell in bold:
        low = float(re.search(r"\[(-?[\d.]+),", cell)[1])
        assert low > 0.5, cell


def test_a_main_figure_too_tall_for_one_column_names_the_panel_it_leaves_out(monkeypatch):
    """A one-column filled-field figure that cannot hold every dataset of the recorded runs names the
    one it leaves out for room in its message, not dropped silently (a reviewer found it gone). Its
    three datasets with a generator's errors fit a page today; a page a little shorter than the figure
    is made to need room."""
    from construct_eval.display.style import paper_dataset_label
    from construct_eval.paper import figures
    from construct_eval.paper import paper_plots as pp
    from construct_eval.paper.figure_set import paper_set, read_left_out

    root = Path(__file__).resolve().parents[1] / "results"
    runs = [Path(r) for r in paper_set(root / "runs", read_left_out(root / "figures" / "left_out.txt"))]

    def filled(venue: str, column: str):
        return next(f for f in figures._by_kind_figures(runs, venue, column) if f.name == "detect_field_filled")

    full, whole = filled("neurips", "full"), filled("icml", "half")
    assert whole.datasets == full.datasets and "leaves out" not in whole.message  # it fits: nothing said
    monkeypatch.setattr(pp, "MAX_HEIGHT_IN", whole.figure.get_figheight() - 0.01)
    half = filled("icml", "half")
    gone = [d for d in full.datasets if d not in half.datasets]
    assert gone and "leaves out" not in full.message
    name, how = paper_dataset_label(gone[0])
    assert f"At this width the figure leaves out {name} ({how.split(',')[0]}) for room" in half.message
