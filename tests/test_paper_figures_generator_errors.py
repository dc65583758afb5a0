"""The main figures that ask which score finds errors rest on errors a generator made.

``detect_document``, ``detect_field_filled`` and ``review_document`` draw only the datasets whose
errors a generator made; their planted-error panels are appendix figures of the same form
(``appx_<name>_planted``) whose caption opens by saying the errors were planted; the meaning and
order figures may rest on planted errors, and then their caption's first clause says so (issue 76).
Each check here fails on a figure set that draws a planted panel in a main detection or review
figure, or a caption that leaves a planted setting unsaid.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tueplots", reason="tueplots is the figures extra (make venv installs it)")

from construct_eval.paper import figure_data as fd
from construct_eval.paper import messages
from construct_eval.paper.figure_data import Estimate
from construct_eval.paper.figure_set import paper_set, read_left_out
from construct_eval.paper.figures import PLANTED, build_figures, main_and_planted

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "results" / "figures"
ASKING = ("detect_document", "detect_field_filled", "review_document")
"""The main figures that ask which score finds errors."""
PLANTED_RUN = "financial_ner-sample600-controlled30"
NATURAL = "natural-synthetic-shipping_notice_v2-qwen2.5-coder-1.5b-package"


def _first_clause(message: Any) -> str:
    """A caption's first clause, its headline: a manifest entry's (a dict) or a Caption's."""
    return message["headline"] if isinstance(message, dict) else message.headline


def _manifest(folder: Path) -> dict[str, dict]:
    path = folder / "manifest.json"
    if not path.exists():
        pytest.skip(f"no committed figure set in {folder}")
    return {name.removesuffix(".png"): e for name, e in json.loads(path.read_text())["files"].items()
            if name.endswith(".png")}  # fmt: skip


def _assert_scoped(files: dict[str, dict], *, appendix_too: bool) -> None:
    """No main figure that asks which score finds errors draws a planted panel; each planted
    appendix figure draws planted panels only and says so first; a main caption resting on planted
    errors says so in its first clause."""
    for name in ASKING:
        entry = files.get(name)
        assert entry is not None and not entry["appendix"], name
        planted = [d for d in entry["datasets"] if not fd.generators_errors(d)]
        assert not planted, f"{name} draws planted-error panels: {planted}"
        if not appendix_too:
            continue
        twin = files.get(f"appx_{name}{PLANTED}")
        assert twin is not None and twin["appendix"], f"appx_{name}{PLANTED}"
        assert twin["datasets"] and not any(fd.generators_errors(d) for d in twin["datasets"]), twin["datasets"]
        assert _first_clause(twin).startswith("On errors the package planted"), twin["message"]
    for name, entry in files.items():
        if entry["appendix"] or not entry.get("message"):
            continue
        if any(not fd.generators_errors(d) for d in entry["datasets"]):
            assert "planted" in _first_clause(entry), (name, _first_clause(entry))


def test_the_committed_main_figures_that_ask_which_score_finds_errors_draw_no_planted_panel():
    _assert_scoped(_manifest(FIGURES), appendix_too=True)


def test_the_committed_one_column_main_figures_draw_no_planted_panel_either():
    _assert_scoped(_manifest(FIGURES / "one_column"), appendix_too=False)


def test_the_figure_index_gives_each_planted_appendix_figure_its_caption():
    files = _manifest(FIGURES)
    index = (FIGURES / "figures.md").read_text()
    for name in ASKING:
        twin = f"appx_{name}{PLANTED}"
        first = files[twin]["answer"]
        block = index[index.index(f"- `{twin}`") :].split("\n- `")[0]
        assert f"*{first}*" in block, twin


def test_a_main_figure_is_split_from_its_planted_panels_by_how_the_errors_arose():
    datasets = [PLANTED_RUN, "financial_ner-sample200-nearmiss30", "financial_ner-sample200", NATURAL]
    assert main_and_planted("detect_document", datasets) == [
        ("detect_document", ["financial_ner-sample200", NATURAL]),
        ("appx_detect_document_planted", [PLANTED_RUN, "financial_ner-sample200-nearmiss30"]),
    ]


RECORDED = paper_set(ROOT / "results" / "runs", read_left_out(FIGURES / "left_out.txt"))


@pytest.mark.skipif(not RECORDED, reason="no recorded runs with stored tables")
def test_a_runs_label_says_a_generator_made_its_errors_exactly_where_its_run_json_names_a_generator():
    """The split reads how a run's errors arose from its name (as every caption says it); each
    recorded run's ``run.json`` agrees: a generator's model where the label says so, none (errors
    planted by ``inject``) where it does not."""
    for run in RECORDED:
        if (run / "run.json").exists():
            assert fd.generators_errors(run.name) == ("generator" in fd.run_models(run)), run.name


@pytest.mark.skipif(not all((ROOT / "results/runs" / r).is_dir() for r in (PLANTED_RUN, NATURAL)),
                    reason="the recorded runs are not here")  # fmt: skip
@pytest.mark.parametrize("name", ["detect_document", "review_document"])
def test_given_planted_and_generator_runs_a_main_figure_draws_the_generators_and_the_appendix_the_planted(name):
    runs = [ROOT / "results/runs" / r for r in (PLANTED_RUN, NATURAL)]
    (main,) = build_figures(runs, only=name)
    (twin,) = build_figures(runs, only=f"appx_{name}{PLANTED}")
    assert not main.appendix and main.datasets == [NATURAL]
    assert {d for d, _, _ in main.rows} == {NATURAL}
    assert twin.appendix and twin.datasets == [PLANTED_RUN] and {d for d, _, _ in twin.rows} == {PLANTED_RUN}
    assert _first_clause(twin.message).startswith("On errors the package planted (the one dataset drawn;")
    assert "planted" not in _first_clause(main.message)


def _estimate(dataset: str, scorer: str, value: float, low: float, high: float) -> Estimate:
    return Estimate(dataset, "document", scorer, value, low, high, 200, 0.3, False, "uses-labels" in scorer, 60, 200,
                    docs_wrong=60, docs_right=140)  # fmt: skip


def test_a_detection_caption_on_planted_errors_opens_with_them_and_the_checks_written_knowing_them():
    planted = ["synthetic200-controlled30", PLANTED_RUN]
    drawn = [
        _estimate(planted[0], "judge-doc", 0.60, 0.55, 0.65),
        _estimate(planted[0], "plausibility", 0.85, 0.80, 0.90),  # apart from the judge's best
        _estimate(planted[1], "judge-doc", 0.70, 0.60, 0.80),
        _estimate(planted[1], "plausibility", 0.75, 0.70, 0.80),  # overlapping it
    ]
    first = messages.detection(drawn, "wrong outputs").answer
    assert first.startswith(
        "On errors the package planted (the 2 datasets drawn; no generator wrote their outputs), the plausibility "
        "checks, written knowing the planted kinds and so a ceiling there, find wrong outputs better than the "
        "judge's best score on 1 of them (their 95% intervals apart)"
    ), first
    assert "on both panels, the judge's best reaches AUROC 0.600-0.700" in first
    # a generator's errors beside them: the caption says how many of each first, no planted opening
    assert messages.planted_scope([planted[0], NATURAL]) == (
        "On 1 dataset with errors the package planted and 1 with a generator's errors"
    )
    assert messages.planted_scope([NATURAL]) == ""


def test_a_review_caption_on_one_dataset_names_it_and_on_planted_errors_opens_with_them():
    def rows(dataset: str, high: float) -> list[dict]:
        return [{"dataset": dataset, "scorer": "judge-doc", "n": 200, "positives": 60, "budget": b, "recall": b / 100,
                 "recall_low": b / 200, "recall_high": high if b == 20 else b / 80, "uses_labels": False}
                for b in (10, 20, 30)]  # fmt: skip

    one = messages.review(rows(NATURAL, 0.29), "outputs").answer
    assert one.startswith("Reviewing the 20% of outputs a score trusts least, the judge's best score there (ringed) "
                          "cannot be told from a random review on synthetic shipping notices with the generator's "
                          "errors (its 95% interval includes 20%; upper end 29%)")  # fmt: skip
    planted = messages.review(rows(PLANTED_RUN, 0.27), "outputs").answer
    assert planted.startswith("On errors the package planted (the one dataset drawn; no generator wrote their "
                              "outputs), reviewing the 20% of outputs")  # fmt: skip


def _rename_some_to_generators(runs: list[Path], k: int) -> tuple[list[Path], list[str], list[str]]:
    """The first ``k`` run folders renamed without their ``-controlledN`` part (read as a
    generator's errors), the others kept planted: (runs, generators' names, planted names)."""
    out = []
    for i, run in enumerate(runs):
        if i < k:
            target = run.with_name(run.name.rsplit("-controlled", 1)[0])
            shutil.move(run, target)
            run = target
        out.append(run)
    made = [r.name for r in out[:k]]
    return out, made, [r.name for r in out[k:]]


@pytest.mark.slow
def test_on_stored_tables_of_many_datasets_no_main_detection_or_review_figure_draws_a_planted_one(tmp_path):
    """On many synthetic datasets (two read as a generator's, the others planted), the main
    detection and review figures draw the generators' alone, their planted twins the planted alone,
    and a lone review panel at the text width keeps its height (its legend in a cell beside it)."""
    from tests.test_figure_readability import _synthetic_runs

    runs, made, planted = _rename_some_to_generators(_synthetic_runs(tmp_path / "runs", n_sets=6), 1)
    figures = {f.name: f for f in build_figures(runs)}
    for name in ("detect_document", "review_document"):
        assert set(figures[name].datasets) <= set(made), name
        twin = figures[f"appx_{name}{PLANTED}"]
        assert twin.appendix and twin.datasets and set(twin.datasets) <= set(planted)
        assert _first_clause(twin.message).startswith("On errors the package planted")
    review = figures["review_document"].figure
    review.canvas.draw()
    panels = [ax for ax in review.axes if ax.axison]
    assert len(panels) == 1 and not review.legends  # the legend in the grid's spare cell, not under the panel
    assert panels[0].get_position().height * review.get_figheight() >= 1.0, "the lone panel was squeezed"
