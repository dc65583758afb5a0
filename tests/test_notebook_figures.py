"""Executed notebooks show their stored figures as they are on disk (notebook_figures)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import nbformat
import pytest

from construct_eval.paper.captions import Caption
from construct_eval.studies.notebook_figures import main, shown_figures, stale_figures, stored_figure

ROOT = Path(__file__).resolve().parents[1]
EXECUTED = sorted((ROOT / "results" / "notebooks").glob("0*.ipynb"))


def _figure(path: Path, colour: str) -> None:
    fig, ax = plt.subplots(figsize=(2, 1))
    ax.plot([0, 1], [0, 1], color=colour)
    fig.savefig(path)
    plt.close(fig)


def _executed_with(image, path: Path) -> None:
    """A notebook as papermill leaves it: one code cell whose output is ``image``'s display data."""
    data, meta = image._repr_png_()  # IPython gives the PNG already base64-encoded, as a notebook stores it
    output = nbformat.v4.new_output("display_data", data={"image/png": data})
    output.metadata = {"image/png": meta}
    cell = nbformat.v4.new_code_cell("display(stored_figure(...))", outputs=[output])
    path.write_text(nbformat.writes(nbformat.v4.new_notebook(cells=[cell])))


def test_a_figure_redrawn_after_the_notebook_ran_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "figures").mkdir()
    png = tmp_path / "figures" / "one.png"
    _figure(png, "black")
    notebook = tmp_path / "run.ipynb"
    _executed_with(stored_figure(png.resolve(), width=500), notebook)
    assert shown_figures(notebook) == ["figures/one.png"]  # from the working folder, no machine's path
    assert stale_figures(notebook) == []
    _figure(png, "red")
    assert stale_figures(notebook) == [
        "run.ipynb, cell 0: figures/one.png: the file was redrawn after the notebook ran; execute the notebook again"
    ]
    png.unlink()
    assert stale_figures(notebook)[0].endswith("the file is gone")
    assert main([str(notebook)]) == 1


@pytest.mark.skipif(not EXECUTED, reason="no executed notebooks under results/notebooks (run make reproduce)")
def test_every_executed_notebook_shows_its_figures_as_they_are_stored(monkeypatch):
    monkeypatch.chdir(ROOT)
    problems = [line for path in EXECUTED for line in stale_figures(path)]
    assert problems == []
    shown = {path.name: shown_figures(path) for path in EXECUTED}
    assert sum(map(len, shown.values())) >= 8, shown  # every notebook's figures go through stored_figure


def test_the_notebooks_display_stored_figures_only_through_the_check():
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert "Image(filename" not in json.dumps(json.loads(path.read_text())), path.name


def _figure_set(folder: Path, message: Caption) -> None:
    """A figure set of one figure whose manifest entry stores ``message`` and its parts, as the set does."""
    folder.mkdir()
    _figure(folder / "detect_document.png", "C0")
    manifest = {"files": {"detect_document.png": {"message": message, **message.parts(), "appendix": False}}}
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_an_answered_figure_shows_as_much_of_its_message_as_asked_and_links_the_whole_caption(tmp_path, monkeypatch):
    from construct_eval.studies.notebook_figures import answered_figure

    monkeypatch.chdir(tmp_path)
    caption = Caption(
        "the checks find most; the judge is flat (2 values).", ["The interval is wide."], "the checks find most"
    )
    _figure_set(tmp_path / "figures", caption)
    (tmp_path / "notebooks").mkdir()
    image, whole = answered_figure("figures", "detect_document", answer="whole", notebook_dir="notebooks")
    assert image.metadata["construct_eval_figure"]["file"] == "figures/detect_document.png"
    # the first sentence whole (not cut at its semicolon into half-sentence bullets), each further one a bullet
    assert whole.data == "**Answer.** The checks find most; the judge is flat (2 values).\n- The interval is wide."
    _, first = answered_figure("figures", "detect_document", notebook_dir="notebooks")
    assert first.data == (
        "**Answer.** The checks find most; the judge is flat (2 values). ([The whole caption](../figures/figures.md).)"
    )
    _, head = answered_figure("figures", "detect_document", answer="headline", notebook_dir="notebooks")
    assert head.data == "**Answer.** The checks find most. ([The whole caption](../figures/figures.md).)"
    with pytest.raises(ValueError, match="answer must be one of"):
        answered_figure("figures", "detect_document", answer="all")
